//===- NNOps.td - ops of the nn dialect --------------------*- tablegen -*-===//
//
// All ops of the dialect, one file per op family; mlir-tblgen reads this
// file to generate NNOps.h.inc and NNOps.cpp.inc (and the dialect doc).
// Every op verifies its dims against the dims that the enclosing graph
// declares (see docs/dialect.md). The C++ of each family (verifiers, type
// inference, folders, custom syntax) is in the .cpp of the same name.
//
//===----------------------------------------------------------------------===//

#ifndef NN_OPS_TD
#define NN_OPS_TD

include "dialects/nn/NNOpBase.td"

include "dialects/nn/NNGraphOps.td"
include "dialects/nn/NNFrameWiseOps.td"
include "dialects/nn/NNSequenceOps.td"
include "dialects/nn/NNAttentionOps.td"
include "dialects/nn/NNAugmentOps.td"
include "dialects/nn/NNLossOps.td"
include "dialects/nn/NNCtcOps.td"
include "dialects/nn/NNErrorOps.td"
include "dialects/nn/NNTransducerOps.td"
include "dialects/nn/NNDecodeOps.td"
include "dialects/nn/NNBeamOps.td"
include "dialects/nn/NNPackOps.td"
include "dialects/nn/NNGradientOps.td"
include "dialects/nn/NNOptimizerOps.td"

#endif // NN_OPS_TD
