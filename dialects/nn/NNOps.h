//===- NNOps.h - ops and interfaces of the nn dialect -----------*- C++ -*-===//
//
// Include this header to use the nn dialect: it brings the dialect, its
// types and attributes, its op interfaces and its ops.
//
//===----------------------------------------------------------------------===//

#ifndef NN_DIALECTS_NN_NNOPS_H
#define NN_DIALECTS_NN_NNOPS_H

#include "dialects/nn/NNDialect.h"
#include "dialects/nn/NNInterfaces.h"
#include "dialects/nn/NNTraits.h"

#include "mlir/Bytecode/BytecodeOpInterface.h"
#include "mlir/IR/OpImplementation.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/IR/SymbolTable.h"
#include "mlir/Interfaces/CallInterfaces.h"
#include "mlir/Interfaces/ControlFlowInterfaces.h"
#include "mlir/Interfaces/FunctionInterfaces.h"
#include "mlir/Interfaces/InferTypeOpInterface.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"

#define GET_OP_CLASSES
#include "dialects/nn/NNOps.h.inc"

#endif // NN_DIALECTS_NN_NNOPS_H
