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

LogicalResult GlobalNormOp::verify() {
  return requireStaticInputs(*this, getInputs());
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
