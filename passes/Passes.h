//===- Passes.h - nn-level passes -------------------------------*- C++ -*-===//

#ifndef NN_PASSES_PASSES_H
#define NN_PASSES_PASSES_H

#include "dialects/nn/NNOps.h"
#include "nn/Options.h"
#include "support/OptionParsers.h"

#include "mlir/IR/BuiltinOps.h"
#include "mlir/Pass/Pass.h"

namespace mlir::nn {

#define GEN_PASS_DECL
#include "passes/Passes.h.inc"

/// nn-train-step for `optimizer` (the generated createNNTrainStep takes
/// the defaults).
std::unique_ptr<Pass>
createNNTrainStep(const NNTrainStepOptions &options,
                  const ::nn::OptimizerOptions &optimizer);

#define GEN_PASS_REGISTRATION
#include "passes/Passes.h.inc"

} // namespace mlir::nn

#endif // NN_PASSES_PASSES_H
