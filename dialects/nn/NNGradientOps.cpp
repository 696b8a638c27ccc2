//===- NNGradientOps.cpp - gradient ops -----------------------------------===//
//
// Verifiers, result type inference and the folder of the gradient ops in
// NNGradientOps.td.
//
//===----------------------------------------------------------------------===//

#include "dialects/nn/NNOps.h"

#include "dialects/nn/NNOpsUtils.h"
#include "mlir/IR/Builders.h"

using namespace mlir;
using namespace mlir::nn;
using namespace mlir::nn::detail;

LogicalResult LossSeedOp::verify() {
  if (getWeights() && getWeights().getType() != getLoss().getType())
    return emitOpError() << "weights must have the loss's type "
                         << getLoss().getType() << ", got "
                         << getWeights().getType();
  return success();
}

/// Operand `index` of an op being built or parsed as an nn tensor, or null
/// (type inference runs before verification).
static NNTensorType operandType(ValueRange operands, unsigned index) {
  return index < operands.size()
             ? dyn_cast<NNTensorType>(operands[index].getType())
             : NNTensorType();
}

LogicalResult LinearGradInputOp::inferReturnTypes(
    MLIRContext *context, std::optional<Location> location, ValueRange operands,
    DictionaryAttr, OpaqueProperties, RegionRange,
    SmallVectorImpl<Type> &inferred) {
  NNTensorType grad = operandType(operands, 0),
               weight = operandType(operands, 1);
  if (!grad || !weight || grad.getRank() == 0 || weight.getRank() != 2 ||
      weight.getStaticSize(1) < 0)
    return emitOptionalError(location,
                             "linear_grad_input needs a gradient [P..., O] "
                             "and a static weight [O, I]");
  SmallVector<Attribute> dims(grad.getDims().drop_back());
  dims.push_back(weight.getDims()[1]);
  inferred.push_back(NNTensorType::get(dims, grad.getElementType()));
  return success();
}

LogicalResult LinearGradInputOp::verify() {
  NNTensorType grad = tensorOf(getGrad()), weight = tensorOf(getWeight());
  if (!weight.hasStaticShape() ||
      weight.getStaticSize(0) != grad.getStaticSize(grad.getRank() - 1))
    return emitOpError() << "weight must be static ["
                         << grad.getStaticSize(grad.getRank() - 1)
                         << ", in], got " << weight;
  return success();
}

LogicalResult LinearGradWeightOp::inferReturnTypes(
    MLIRContext *context, std::optional<Location> location, ValueRange operands,
    DictionaryAttr, OpaqueProperties, RegionRange,
    SmallVectorImpl<Type> &inferred) {
  NNTensorType grad = operandType(operands, 0),
               input = operandType(operands, 1);
  if (!grad || !input || grad.getRank() == 0 || input.getRank() == 0)
    return emitOptionalError(location, "linear_grad_weight needs a gradient "
                                       "[P..., O] and an input [P..., I]");
  inferred.push_back(NNTensorType::get(
      ArrayRef<Attribute>{grad.getDims().back(), input.getDims().back()},
      grad.getElementType()));
  return success();
}

LogicalResult LinearGradWeightOp::verify() {
  NNTensorType grad = tensorOf(getGrad()), input = tensorOf(getInput());
  if (grad.getDims().drop_back() != input.getDims().drop_back() ||
      grad.getNumPositionDims() != grad.getRank() - 1 ||
      grad.getStaticSize(grad.getRank() - 1) < 0 ||
      input.getStaticSize(input.getRank() - 1) < 0)
    return emitOpError() << "gradient " << grad << " and input " << input
                         << " must be [P..., O] and [P..., I] on the same "
                            "positions with static features";
  return success();
}

LogicalResult SumPositionsOp::inferReturnTypes(
    MLIRContext *, std::optional<Location> location, ValueRange operands,
    DictionaryAttr, OpaqueProperties, RegionRange,
    SmallVectorImpl<Type> &inferred) {
  NNTensorType input = operandType(operands, 0);
  if (!input)
    return emitOptionalError(location, "sum_positions needs an nn tensor");
  inferred.push_back(
      input.withDims(input.getDims().drop_front(input.getNumPositionDims())));
  return success();
}

LogicalResult CrossEntropyGradOp::verify() {
  NNTensorType logits = tensorOf(getLogits());
  if (logits.getRank() == 0 || logits.getStaticSize(logits.getRank() - 1) < 1)
    return emitOpError() << "logits must have a static class axis, got "
                         << logits;
  if (tensorOf(getTargets()).getDims() != logits.getDims().drop_back())
    return emitOpError("targets must be on the positions of the logits");
  return success();
}

LogicalResult ParamNormGradOp::verify() {
  return requireStaticShape(*this, getInput(), "input");
}

LogicalResult MseGradOp::verify() {
  if (tensorOf(getPrediction()).getRank() == 0)
    return emitOpError("prediction must have a feature axis");
  return success();
}

LogicalResult SliceFeaturesOp::inferReturnTypes(
    MLIRContext *context, std::optional<Location> location, ValueRange operands,
    DictionaryAttr attributes, OpaqueProperties properties, RegionRange regions,
    SmallVectorImpl<Type> &inferred) {
  Adaptor adaptor(operands, attributes, properties, regions);
  NNTensorType input = operandType(operands, 0);
  if (!input || input.getRank() == 0)
    return emitOptionalError(location,
                             "slice_features needs a value with features");
  SmallVector<Attribute> dims(input.getDims().drop_back());
  dims.push_back(Builder(context).getI64IntegerAttr(
      static_cast<int64_t>(adaptor.getWidth())));
  inferred.push_back(NNTensorType::get(dims, input.getElementType()));
  return success();
}

LogicalResult SliceFeaturesOp::verify() {
  NNTensorType input = tensorOf(getInput());
  int64_t features = input.getStaticSize(input.getRank() - 1);
  if (features < 0 || static_cast<int64_t>(getOffset() + getWidth()) > features)
    return emitOpError() << "features [" << getOffset() << ", "
                         << getOffset() + getWidth() << ") are not within "
                         << input;
  return success();
}

LogicalResult LayerNormGradScaleOp::inferReturnTypes(
    MLIRContext *, std::optional<Location> location, ValueRange operands,
    DictionaryAttr, OpaqueProperties, RegionRange,
    SmallVectorImpl<Type> &inferred) {
  NNTensorType input = operandType(operands, 1);
  if (!input || input.getRank() == 0)
    return emitOptionalError(location,
                             "layer_norm_grad_scale needs an input [P..., F]");
  inferred.push_back(input.withDims(input.getDims().take_back()));
  return success();
}

LogicalResult LayerNormGradScaleOp::verify() {
  if (tensorOf(getInput()).getNumPositionDims() !=
      tensorOf(getInput()).getRank() - 1)
    return emitOpError("input must be [P..., F]: one feature axis");
  return success();
}

LogicalResult EmbeddingGradOp::verify() {
  NNTensorType grad = tensorOf(getGrad()), indices = tensorOf(getIndices());
  NNTensorType table = tensorOf(getResult());
  if (grad.getDims().drop_back() != indices.getDims())
    return emitOpError("grad must be on the positions of the indices");
  if (!table.hasStaticShape() || table.getRank() != 2 ||
      table.getStaticSize(1) != grad.getStaticSize(grad.getRank() - 1) ||
      table.getElementType() != grad.getElementType())
    return emitOpError() << "result must be a static table [vocabulary, "
                         << grad.getStaticSize(grad.getRank() - 1) << "] of "
                         << grad.getElementType() << ", got " << table;
  return success();
}

OpFoldResult ZeroPaddingOp::fold(FoldAdaptor) {
  // Same type in and out: the producer's padded positions are this op's.
  if (Operation *producer = getInput().getDefiningOp();
      isa_and_nonnull<UnpackOp, BroadcastSeqOp, ZeroPaddingOp>(producer))
    return getInput();
  return nullptr;
}
