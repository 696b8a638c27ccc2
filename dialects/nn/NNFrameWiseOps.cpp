//===- NNFrameWiseOps.cpp - frame-wise layers -----------------------------===//
//
// Verifiers, result type inference, folders, parameter initialization and
// class indices of the layers that act on each position independently.
//
//===----------------------------------------------------------------------===//

#include "dialects/nn/NNOps.h"

#include "dialects/nn/NNOpsUtils.h"
#include "mlir/IR/Builders.h"

using namespace mlir;
using namespace mlir::nn;
using namespace mlir::nn::detail;

//===----------------------------------------------------------------------===//
// LinearOp
//===----------------------------------------------------------------------===//

LogicalResult LinearOp::verify() {
  if (failed(requireOneFeatureAxis(*this, getInput(), "input")))
    return failure();
  NNTensorType weight = tensorOf(getWeight());
  int64_t inFeatures = featureSize(tensorOf(getInput()));
  if (!weight.hasStaticShape() || weight.getRank() != 2 ||
      weight.getStaticSize(1) != inFeatures)
    return emitOpError() << "weight must be static [out, " << inFeatures
                         << "], got " << weight;
  int64_t outFeatures = weight.getStaticSize(0);
  if (getBias() &&
      failed(requireStaticShape(*this, getBias(), "bias", {outFeatures})))
    return failure();
  for (Value value : getOperands())
    if (tensorOf(value).getElementType() !=
        tensorOf(getInput()).getElementType())
      return emitOpError("operands must have one element type");
  SmallVector<Attribute> dims(dropFeatureAxis(tensorOf(getInput())));
  dims.push_back(Builder(getContext()).getI64IntegerAttr(outFeatures));
  return requireResultDims(*this, dims, tensorOf(getInput()).getElementType());
}

LogicalResult LinearOp::inferReturnTypes(MLIRContext *context,
                                         std::optional<Location> location,
                                         ValueRange operands, DictionaryAttr,
                                         OpaqueProperties, RegionRange,
                                         SmallVectorImpl<Type> &inferred) {
  FailureOr<NNTensorType> input =
      inferenceOperand(location, operands, 0, "input");
  FailureOr<NNTensorType> weight =
      inferenceOperand(location, operands, 1, "weight");
  if (failed(input) || failed(weight))
    return failure();
  FailureOr<int64_t> out = inferenceStaticSize(
      location, *weight, 0, "weight must be static [out, in]");
  if (failed(out))
    return failure();
  inferred.push_back(inferredType(context, input->getDims(), true, *out,
                                  input->getElementType()));
  return success();
}

// Parameter initialization: Glorot/Xavier uniform for linear weights (fans
// counted PyTorch's way), N(0, 1) for embedding tables, zero biases, unit
// layer-norm scales.
ParameterInit LinearOp::getParameterInit(OpOperand &operand) {
  if (operand.get() == getWeight()) {
    NNTensorType weight = tensorOf(getWeight());
    return ParameterInit::glorot(weight.getStaticSize(1),
                                 weight.getStaticSize(0));
  }
  return operand.get() == getBias() ? ParameterInit::zeros() : ParameterInit();
}

//===----------------------------------------------------------------------===//
// ConcatOp
//===----------------------------------------------------------------------===//

LogicalResult ConcatOp::verify() {
  if (getInputs().empty())
    return emitOpError("needs at least one input");
  NNTensorType first = tensorOf(getInputs().front());
  int64_t total = 0;
  for (auto [index, input] : llvm::enumerate(getInputs())) {
    NNTensorType type = tensorOf(input);
    std::string what = "input " + std::to_string(index);
    if (failed(requireOneFeatureAxis(*this, input, what)))
      return failure();
    if (dropFeatureAxis(type) != dropFeatureAxis(first) ||
        type.getElementType() != first.getElementType())
      return emitOpError() << what << " has positions "
                           << formatDims(dropFeatureAxis(type)) << " and "
                           << type.getElementType() << ", but input 0 has "
                           << formatDims(dropFeatureAxis(first)) << " and "
                           << first.getElementType()
                           << "; concat needs the same positions";
    total += featureSize(type);
  }
  SmallVector<Attribute> dims(dropFeatureAxis(first));
  dims.push_back(Builder(getContext()).getI64IntegerAttr(total));
  return requireResultDims(*this, dims, first.getElementType());
}

LogicalResult ConcatOp::inferReturnTypes(MLIRContext *context,
                                         std::optional<Location> location,
                                         ValueRange operands, DictionaryAttr,
                                         OpaqueProperties, RegionRange,
                                         SmallVectorImpl<Type> &inferred) {
  if (operands.empty())
    return emitOptionalError(location, "concat needs at least one input");
  int64_t total = 0;
  NNTensorType first;
  for (unsigned i = 0; i < operands.size(); ++i) {
    std::string what = "input " + std::to_string(i);
    FailureOr<NNTensorType> input =
        inferenceOperand(location, operands, i, what);
    if (failed(input))
      return failure();
    FailureOr<int64_t> width = inferenceStaticSize(
        location, *input, -1, what + " must have a static feature axis");
    if (failed(width))
      return failure();
    first = first ? first : *input;
    total += *width;
  }
  inferred.push_back(inferredType(context, first.getDims(), true, total,
                                  first.getElementType()));
  return success();
}

//===----------------------------------------------------------------------===//
// Activations, softmax
//===----------------------------------------------------------------------===//

LogicalResult SoftmaxOp::verify() {
  return requireOneFeatureAxis(*this, getInput(), "input");
}

LogicalResult LogSoftmaxOp::verify() {
  return requireOneFeatureAxis(*this, getInput(), "input");
}

//===----------------------------------------------------------------------===//
// ScaleOp
//===----------------------------------------------------------------------===//

OpFoldResult ScaleOp::fold(FoldAdaptor) {
  return getFactor().isExactlyValue(1.0) ? getInput() : nullptr;
}

//===----------------------------------------------------------------------===//
// DropoutOp
//===----------------------------------------------------------------------===//

OpFoldResult DropoutOp::fold(FoldAdaptor) {
  return getRate().isZero() ? getInput() : nullptr;
}

LogicalResult DropoutOp::verify() {
  if (Value seed = getSeed())
    if (failed(requireMaskSeed(*this, seed)))
      return failure();
  // The mask is keyed by (sequence, frame); a row of a grid-packed joint
  // has two frame indices.
  FailureOr<DimTable> table = DimTable::forOp(*this);
  if (failed(table))
    return failure();
  FailureOr<Positions> positions = classifyPositions(
      tensorOf(getInput()), *table, [&] { return emitOpError(); });
  if (failed(positions))
    return failure();
  if (positions->kind == PositionKind::Packed &&
      positions->sequences.size() != 1)
    return emitOpError() << "input over the grid-packed dim '"
                         << positions->packed
                         << "' is not supported; apply dropout before "
                            "nn.transducer_join";
  return success();
}

//===----------------------------------------------------------------------===//
// LayerNormOp
//===----------------------------------------------------------------------===//

LogicalResult LayerNormOp::verify() {
  if (failed(requireOneFeatureAxis(*this, getInput(), "input")))
    return failure();
  int64_t features = featureSize(tensorOf(getInput()));
  if (failed(requireStaticShape(*this, getScale(), "scale", {features})) ||
      failed(requireStaticShape(*this, getBias(), "bias", {features})))
    return failure();
  return requireResultDims(*this, tensorOf(getInput()).getDims(),
                           tensorOf(getInput()).getElementType());
}

ParameterInit LayerNormOp::getParameterInit(OpOperand &operand) {
  if (operand.get() == getScale())
    return ParameterInit::ones();
  return operand.get() == getBias() ? ParameterInit::zeros() : ParameterInit();
}

//===----------------------------------------------------------------------===//
// EmbeddingOp
//===----------------------------------------------------------------------===//

LogicalResult EmbeddingOp::verify() {
  NNTensorType indices = tensorOf(getIndices());
  if (indices.getNumPositionDims() != indices.getRank())
    return emitOpError() << "indices must have position axes only, got "
                         << indices;
  NNTensorType table = tensorOf(getTable());
  if (!table.hasStaticShape() || table.getRank() != 2)
    return emitOpError() << "table must be static [vocabulary, features], got "
                         << table;
  SmallVector<Attribute> dims(indices.getDims());
  dims.push_back(
      Builder(getContext()).getI64IntegerAttr(table.getStaticSize(1)));
  return requireResultDims(*this, dims, table.getElementType());
}

/// The type of a glu's result for input `input` `[P..., 2C]`: `[P..., C]`,
/// or failure with an error from `emitError` when the input has no one
/// feature axis of even size.
static FailureOr<NNTensorType> gluResultType(NNTensorType input,
                                             EmitErrorFn emitError) {
  int64_t features = featureSize(input);
  if (input.getNumPositionDims() + 1 != input.getRank() || features < 2 ||
      features % 2 != 0)
    return emitError() << "input must have position axes then one feature "
                          "axis of even size, got "
                       << input;
  return inferredType(input.getContext(), input.getDims(), true, features / 2,
                      input.getElementType());
}

LogicalResult GluOp::verify() {
  FailureOr<NNTensorType> result =
      gluResultType(tensorOf(getInput()), [&] { return emitOpError(); });
  if (failed(result))
    return failure();
  if (tensorOf(getResult()) != *result)
    return emitOpError() << "result must be " << *result << ", got "
                         << getResult().getType();
  return success();
}

LogicalResult GluOp::inferReturnTypes(MLIRContext *context,
                                      std::optional<Location> location,
                                      ValueRange operands, DictionaryAttr,
                                      OpaqueProperties, RegionRange,
                                      SmallVectorImpl<Type> &inferred) {
  FailureOr<NNTensorType> input =
      inferenceOperand(location, operands, 0, "input");
  if (failed(input))
    return failure();
  FailureOr<int64_t> features = inferenceStaticSize(
      location, *input, -1, "input must have a static feature axis");
  if (failed(features))
    return failure();
  if (*features % 2 != 0)
    return emitOptionalError(location,
                             "input must have an even number of "
                             "features, got ",
                             *input);
  inferred.push_back(inferredType(context, input->getDims(), true,
                                  *features / 2, input->getElementType()));
  return success();
}

LogicalResult GluGradOp::verify() {
  FailureOr<NNTensorType> result =
      gluResultType(tensorOf(getInput()), [&] { return emitOpError(); });
  if (failed(result))
    return failure();
  if (tensorOf(getGrad()) != *result)
    return emitOpError() << "grad must be the glu's result type " << *result
                         << ", got " << getGrad().getType();
  return success();
}

LogicalResult EmbeddingOp::inferReturnTypes(MLIRContext *context,
                                            std::optional<Location> location,
                                            ValueRange operands, DictionaryAttr,
                                            OpaqueProperties, RegionRange,
                                            SmallVectorImpl<Type> &inferred) {
  FailureOr<NNTensorType> indices =
      inferenceOperand(location, operands, 0, "indices");
  FailureOr<NNTensorType> table =
      inferenceOperand(location, operands, 1, "table");
  if (failed(indices) || failed(table))
    return failure();
  FailureOr<int64_t> width = inferenceStaticSize(
      location, *table, 1, "table must be static [vocabulary, features]");
  if (failed(width))
    return failure();
  inferred.push_back(inferredType(context, indices->getDims(), false, *width,
                                  table->getElementType()));
  return success();
}

int64_t EmbeddingOp::getNumClasses(OpOperand &operand) {
  return operand.get() == getIndices() ? tensorOf(getTable()).getStaticSize(0)
                                       : 0;
}

ParameterInit EmbeddingOp::getParameterInit(OpOperand &operand) {
  return operand.get() == getTable() ? ParameterInit::normal(1.0)
                                     : ParameterInit();
}
