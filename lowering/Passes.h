//===- Passes.h - lowering passes for nn ------------------------*- C++ -*-===//

#ifndef NN_LOWERING_PASSES_H
#define NN_LOWERING_PASSES_H

#include "mlir/IR/BuiltinOps.h"
#include "mlir/Pass/Pass.h"

namespace mlir::nn {

#define GEN_PASS_DECL
#include "lowering/Passes.h.inc"

#define GEN_PASS_REGISTRATION
#include "lowering/Passes.h.inc"

} // namespace mlir::nn

#endif // NN_LOWERING_PASSES_H
