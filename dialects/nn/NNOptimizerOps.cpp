//===- NNOptimizerOps.cpp - optimizer updates -----------------------------===//
//
// Verifiers of the ops nn-train-step builds: they act on parameters and
// their gradients, which have static shapes.
//
//===----------------------------------------------------------------------===//

#include "dialects/nn/NNOps.h"

#include "dialects/nn/NNOpsUtils.h"

using namespace mlir;
using namespace mlir::nn;
using namespace mlir::nn::detail;

/// Optimizer ops act on parameters and their gradients: static shapes.
static LogicalResult requireStaticShape(Operation *op, Value value,
                                        StringRef role) {
  if (tensorOf(value).hasStaticShape())
    return success();
  return op->emitOpError() << role << " must have a static shape (a "
                           << "parameter or its gradient), got "
                           << value.getType();
}

LogicalResult GlobalNormOp::verify() {
  if (getInputs().empty())
    return emitOpError() << "needs at least one input";
  for (auto [i, input] : llvm::enumerate(getInputs()))
    if (failed(requireStaticShape(*this, input, "input " + std::to_string(i))))
      return failure();
  return success();
}

LogicalResult SgdUpdateOp::verify() {
  return requireStaticShape(*this, getParam(), "param");
}

LogicalResult MomentumUpdateOp::verify() {
  return requireStaticShape(*this, getParam(), "param");
}

LogicalResult AdamUpdateOp::verify() {
  return requireStaticShape(*this, getParam(), "param");
}
