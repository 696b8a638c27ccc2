//===- NNInterfaces.h - op interfaces of the nn dialect ---------*- C++ -*-===//
//
// FrameWiseOpInterface, SequenceMixingOpInterface and LossOpInterface; see
// NNInterfaces.td.
//
//===----------------------------------------------------------------------===//

#ifndef NN_DIALECTS_NN_NNINTERFACES_H
#define NN_DIALECTS_NN_NNINTERFACES_H

#include "dialects/nn/NNDialect.h"
#include "mlir/IR/OpDefinition.h"

#include "dialects/nn/NNInterfaces.h.inc"

#endif // NN_DIALECTS_NN_NNINTERFACES_H
