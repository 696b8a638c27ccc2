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

LogicalResult AllReduceOp::verify() {
  if (failed(requireStaticInputs(*this, getInputs())))
    return failure();
  Type element = tensorOf(getInputs().front()).getElementType();
  // The runtime sums 32- and 64-bit floats (runtime/comm/CommAbi.h).
  if (!element.isF32() && !element.isF64())
    return emitOpError("sums f32 or f64 tensors, got ") << element;
  for (Value input : getInputs())
    if (tensorOf(input).getElementType() != element)
      return emitOpError("inputs travel as one buffer and must share one "
                         "element type, got ")
             << element << " and " << tensorOf(input).getElementType();
  return success();
}

LogicalResult AllReduceOp::inferReturnTypes(MLIRContext *,
                                            std::optional<Location>,
                                            ValueRange operands, DictionaryAttr,
                                            OpaqueProperties, RegionRange,
                                            SmallVectorImpl<Type> &inferred) {
  for (Value operand : operands)
    inferred.push_back(operand.getType());
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
