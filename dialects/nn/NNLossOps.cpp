//===- NNLossOps.cpp - losses and marked losses ---------------------------===//
//
// Verifiers, result type inference and interfaces (loss, class index,
// parameter initialization) of the per-position losses and the fused
// loss tail, and the normalization checks of nn.mark_loss and
// nn.loss_terms.
//
//===----------------------------------------------------------------------===//

#include "dialects/nn/NNOps.h"

#include "dialects/nn/NNOpsUtils.h"
#include "mlir/IR/Builders.h"

#include <cmath>

using namespace mlir;
using namespace mlir::nn;
using namespace mlir::nn::detail;

// LossOpInterface: these losses have one value per position.
bool CrossEntropyOp::isPerFrameLoss() { return true; }
bool LinearCrossEntropyOp::isPerFrameLoss() { return true; }
bool LinearCrossEntropyTrainOp::isPerFrameLoss() { return true; }
bool FrameErrorOp::isPerFrameLoss() { return true; }
bool MseOp::isPerFrameLoss() { return true; }
bool ParamNormOp::isPerFrameLoss() { return false; }

/// Losses per position: the positions of their first operand.
static LogicalResult inferPerPositionLoss(std::optional<Location> location,
                                          ValueRange operands,
                                          SmallVectorImpl<Type> &inferred) {
  FailureOr<NNTensorType> input =
      inferenceOperand(location, operands, 0, "the first operand");
  if (failed(input))
    return failure();
  if (input->getRank() == 0)
    return emitOptionalError(location,
                             "the first operand needs a feature "
                             "axis, got ",
                             *input);
  inferred.push_back(
      NNTensorType::get(input->getDims().drop_back(), input->getElementType()));
  return success();
}

//===----------------------------------------------------------------------===//
// Per-position losses
//===----------------------------------------------------------------------===//

LogicalResult CrossEntropyOp::verify() {
  if (failed(requireOneFeatureAxis(*this, getLogits(), "logits")))
    return failure();
  double smoothing = getLabelSmoothing().convertToDouble();
  NNTensorType logits = tensorOf(getLogits());
  if (smoothing > 0.0 && featureSize(logits) < 2)
    return emitOpError("label smoothing needs at least 2 classes");
  NNTensorType targets = tensorOf(getTargets());
  if (targets.getDims() != dropFeatureAxis(logits))
    return emitOpError() << "targets " << formatDims(targets.getDims())
                         << " must be on the positions of the logits "
                         << formatDims(dropFeatureAxis(logits))
                         << " (same batch and sequence dims)";
  return requireResultDims(*this, dropFeatureAxis(logits),
                           logits.getElementType());
}

LogicalResult CrossEntropyOp::inferReturnTypes(
    MLIRContext *, std::optional<Location> location, ValueRange operands,
    DictionaryAttr, OpaqueProperties, RegionRange,
    SmallVectorImpl<Type> &inferred) {
  return inferPerPositionLoss(location, operands, inferred);
}

int64_t CrossEntropyOp::getNumClasses(OpOperand &operand) {
  return operand.get() == getTargets() ? featureSize(tensorOf(getLogits())) : 0;
}

LogicalResult FrameErrorOp::verify() {
  if (failed(requireOneFeatureAxis(*this, getScores(), "scores")))
    return failure();
  NNTensorType scores = tensorOf(getScores());
  NNTensorType targets = tensorOf(getTargets());
  if (targets.getDims() != dropFeatureAxis(scores))
    return emitOpError() << "targets " << formatDims(targets.getDims())
                         << " must be on the positions of the scores "
                         << formatDims(dropFeatureAxis(scores))
                         << " (same batch and sequence dims)";
  return requireResultDims(*this, dropFeatureAxis(scores),
                           scores.getElementType());
}

LogicalResult FrameErrorOp::inferReturnTypes(MLIRContext *,
                                             std::optional<Location> location,
                                             ValueRange operands,
                                             DictionaryAttr, OpaqueProperties,
                                             RegionRange,
                                             SmallVectorImpl<Type> &inferred) {
  return inferPerPositionLoss(location, operands, inferred);
}

int64_t FrameErrorOp::getNumClasses(OpOperand &operand) {
  return operand.get() == getTargets() ? featureSize(tensorOf(getScores())) : 0;
}

LogicalResult ParamNormOp::verify() {
  return requireStaticInputs(*this, getInputs());
}

LogicalResult MseOp::verify() {
  if (failed(requireOneFeatureAxis(*this, getPrediction(), "prediction")))
    return failure();
  if (getPrediction().getType() != getTarget().getType())
    return emitOpError() << "target type " << getTarget().getType()
                         << " must equal the prediction type "
                         << getPrediction().getType();
  NNTensorType prediction = tensorOf(getPrediction());
  return requireResultDims(*this, dropFeatureAxis(prediction),
                           prediction.getElementType());
}

LogicalResult MseOp::inferReturnTypes(MLIRContext *,
                                      std::optional<Location> location,
                                      ValueRange operands, DictionaryAttr,
                                      OpaqueProperties, RegionRange,
                                      SmallVectorImpl<Type> &inferred) {
  return inferPerPositionLoss(location, operands, inferred);
}

//===----------------------------------------------------------------------===//
// Fused loss tail
//===----------------------------------------------------------------------===//

/// The operands of a fused loss tail: `input` [P..., I], `weight` [V, I],
/// `bias` [V] (optional), `targets` [P...], one float element type.
static LogicalResult verifyLossTail(Operation *op, Value input, Value weight,
                                    Value bias, Value targets,
                                    double smoothing) {
  if (failed(requireOneFeatureAxis(op, input, "input")))
    return failure();
  NNTensorType inputType = tensorOf(input);
  NNTensorType weightType = tensorOf(weight);
  int64_t inFeatures = featureSize(inputType);
  if (!weightType.hasStaticShape() || weightType.getRank() != 2 ||
      weightType.getStaticSize(1) != inFeatures)
    return op->emitOpError() << "weight must be static [classes, " << inFeatures
                             << "], got " << weightType;
  int64_t classes = weightType.getStaticSize(0);
  if (bias && failed(requireStaticShape(op, bias, "bias", {classes})))
    return failure();
  for (Value value : {weight, bias})
    if (value && tensorOf(value).getElementType() != inputType.getElementType())
      return op->emitOpError("input, weight and bias must have one element "
                             "type");
  if (smoothing > 0.0 && classes < 2)
    return op->emitOpError("label smoothing needs at least 2 classes");
  NNTensorType targetsType = tensorOf(targets);
  if (targetsType.getDims() != dropFeatureAxis(inputType))
    return op->emitOpError() << "targets " << formatDims(targetsType.getDims())
                             << " must be on the positions of the input "
                             << formatDims(dropFeatureAxis(inputType))
                             << " (same batch and sequence dims)";
  return success();
}

/// The gradients of a fused loss tail: the input's type, the weight's, and
/// the bias's ([V], the weight's element type).
static LogicalResult inferLossTailGradients(std::optional<Location> location,
                                            ValueRange operands,
                                            unsigned inputIndex,
                                            SmallVectorImpl<Type> &inferred) {
  FailureOr<NNTensorType> input =
      inferenceOperand(location, operands, inputIndex, "input");
  FailureOr<NNTensorType> weight =
      inferenceOperand(location, operands, inputIndex + 1, "weight");
  if (failed(input) || failed(weight))
    return failure();
  FailureOr<int64_t> classes = inferenceStaticSize(
      location, *weight, 0, "weight must be static [classes, in]");
  if (failed(classes))
    return failure();
  inferred.push_back(*input);
  inferred.push_back(*weight);
  SmallVector<Attribute> biasDims{
      Builder(input->getContext()).getI64IntegerAttr(*classes)};
  inferred.push_back(NNTensorType::get(biasDims, weight->getElementType()));
  return success();
}

/// A fused loss tail's weight and bias, initialized as the linear's.
static ParameterInit lossTailParameterInit(OpOperand &operand, Value weight,
                                           Value bias) {
  if (operand.get() == weight) {
    NNTensorType type = tensorOf(weight);
    return ParameterInit::glorot(type.getStaticSize(1), type.getStaticSize(0));
  }
  return operand.get() == bias ? ParameterInit::zeros() : ParameterInit();
}

LogicalResult LinearCrossEntropyOp::verify() {
  if (failed(verifyLossTail(*this, getInput(), getWeight(), getBias(),
                            getTargets(),
                            getLabelSmoothing().convertToDouble())))
    return failure();
  NNTensorType input = tensorOf(getInput());
  return requireResultDims(*this, dropFeatureAxis(input),
                           input.getElementType());
}

LogicalResult LinearCrossEntropyOp::inferReturnTypes(
    MLIRContext *, std::optional<Location> location, ValueRange operands,
    DictionaryAttr, OpaqueProperties, RegionRange,
    SmallVectorImpl<Type> &inferred) {
  return inferPerPositionLoss(location, operands, inferred);
}

int64_t LinearCrossEntropyOp::getNumClasses(OpOperand &operand) {
  return operand.get() == getTargets() ? tensorOf(getWeight()).getStaticSize(0)
                                       : 0;
}

ParameterInit LinearCrossEntropyOp::getParameterInit(OpOperand &operand) {
  return lossTailParameterInit(operand, getWeight(), getBias());
}

LogicalResult LinearCrossEntropyGradOp::verify() {
  if (failed(verifyLossTail(*this, getInput(), getWeight(), getBias(),
                            getTargets(),
                            getLabelSmoothing().convertToDouble())))
    return failure();
  NNTensorType input = tensorOf(getInput());
  NNTensorType grad = tensorOf(getGrad());
  if (grad.getDims() != dropFeatureAxis(input) ||
      grad.getElementType() != input.getElementType())
    return emitOpError() << "grad must be "
                         << NNTensorType::get(dropFeatureAxis(input),
                                              input.getElementType())
                         << " (the loss's type), got " << grad;
  return success();
}

LogicalResult LinearCrossEntropyGradOp::inferReturnTypes(
    MLIRContext *, std::optional<Location> location, ValueRange operands,
    DictionaryAttr, OpaqueProperties, RegionRange,
    SmallVectorImpl<Type> &inferred) {
  return inferLossTailGradients(location, operands, 1, inferred);
}

int64_t LinearCrossEntropyGradOp::getNumClasses(OpOperand &operand) {
  return operand.get() == getTargets() ? tensorOf(getWeight()).getStaticSize(0)
                                       : 0;
}

LogicalResult LinearCrossEntropyTrainOp::verify() {
  if (failed(verifyLossTail(*this, getInput(), getWeight(), getBias(),
                            getTargets(),
                            getLabelSmoothing().convertToDouble())))
    return failure();
  if (getNormalization() == LossNormalization::custom)
    return emitOpError("custom normalization needs its factor, which this "
                       "op does not take");
  NNTensorType input = tensorOf(getInput());
  return requireResultDims(*this, dropFeatureAxis(input),
                           input.getElementType());
}

LogicalResult LinearCrossEntropyTrainOp::inferReturnTypes(
    MLIRContext *, std::optional<Location> location, ValueRange operands,
    DictionaryAttr, OpaqueProperties, RegionRange,
    SmallVectorImpl<Type> &inferred) {
  if (failed(inferPerPositionLoss(location, operands, inferred)))
    return failure();
  return inferLossTailGradients(location, operands, 0, inferred);
}

int64_t LinearCrossEntropyTrainOp::getNumClasses(OpOperand &operand) {
  return operand.get() == getTargets() ? tensorOf(getWeight()).getStaticSize(0)
                                       : 0;
}

ParameterInit LinearCrossEntropyTrainOp::getParameterInit(OpOperand &operand) {
  return lossTailParameterInit(operand, getWeight(), getBias());
}

//===----------------------------------------------------------------------===//
// Marked losses
//===----------------------------------------------------------------------===//

/// The normalization of a loss value: what `nn.mark_loss` and
/// `nn.loss_terms` both require of `loss` and the custom factor.
static LogicalResult verifyLossNormalization(Operation *op, Value loss,
                                             LossNormalization normalization,
                                             Value factor, Value weights) {
  // Same positions and element type: a weight per loss value, read where
  // the loss is read.
  if (weights && weights.getType() != loss.getType())
    return op->emitOpError() << "weights must have the loss's type "
                             << loss.getType() << ", got " << weights.getType();
  FailureOr<DimContext> context = DimContext::get(op);
  if (failed(context))
    return failure();
  FailureOr<Positions> positions = context->positions(loss);
  if (failed(positions))
    return failure();
  switch (normalization) {
  case LossNormalization::sum:
    break;
  case LossNormalization::per_frame:
    if (!positions->hasSequenceAxis())
      return op->emitOpError() << "per_frame normalization needs a per-frame "
                                  "loss over a sequence axis, got "
                               << loss.getType();
    break;
  case LossNormalization::per_sequence:
    if (positions->kind == PositionKind::None)
      return op->emitOpError()
             << "per_sequence normalization needs a loss with "
                "a batch axis, got "
             << loss.getType();
    break;
  case LossNormalization::custom:
    if (!factor)
      return op->emitOpError("custom normalization needs a "
                             "custom_inv_norm_factor operand");
    break;
  }
  if (factor) {
    if (normalization != LossNormalization::custom)
      return op->emitOpError("custom_inv_norm_factor is only allowed with "
                             "custom normalization");
    NNTensorType factorType = tensorOf(factor);
    bool perBatch = factorType.getRank() == 1 && factorType.isNamedDim(0) &&
                    factorType.getDimName(0) == positions->batch;
    if (factorType.getRank() != 0 && !perBatch)
      return op->emitOpError()
             << "custom_inv_norm_factor must be a scalar [] or "
                "one value per sequence ["
             << positions->batch << "], got " << factorType;
  }
  return success();
}

LogicalResult MarkLossOp::verify() {
  auto producer = getLoss().getDefiningOp<LossOpInterface>();
  if (!producer)
    return emitOpError() << "marks a value that no loss op produced; mark "
                            "the result of a loss op (cross_entropy, mse, "
                            "ctc_loss, ...)";
  // A loss op's other results (an edit distance's reference lengths and
  // counts) are not losses.
  if (producer.getLossValue() != getLoss())
    return emitOpError()
           << "marks result #" << cast<OpResult>(getLoss()).getResultNumber()
           << " of '" << producer->getName()
           << "', which is not its loss value (result #"
           << cast<OpResult>(producer.getLossValue()).getResultNumber() << ")";
  if (getName().empty())
    return emitOpError("loss name must not be empty");
  double scale = getScale().convertToDouble();
  if (!std::isfinite(scale))
    return emitOpError() << "scale must be finite, got " << scale;
  // Training minimizes scale * loss: a negative scale would train the
  // loss up.
  if (scale < 0)
    return emitOpError() << "scale must be >= 0 (a negative scale trains '"
                         << getName() << "' up), got " << scale;
  // Train steps drop an eval_only mark: a trained loss would vanish from
  // the objective without a word.
  if (getEvalOnly() && !getAsError())
    return emitOpError() << "eval_only needs as_error: '" << getName()
                         << "' is left out of train steps, so it cannot "
                            "be trained";
  return verifyLossNormalization(*this, getLoss(), getNormalization(),
                                 getCustomInvNormFactor(), getWeights());
}

LogicalResult LossNormOp::verify() {
  if (getNormalization() != LossNormalization::per_frame &&
      getNormalization() != LossNormalization::per_sequence)
    return emitOpError("takes per_frame or per_sequence normalization, got ")
           << stringifyLossNormalization(getNormalization());
  FailureOr<DimContext> context = DimContext::get(*this);
  if (failed(context))
    return failure();
  auto type = cast<NNTensorType>(getPositions());
  FailureOr<Positions> positions = classifyPositions(
      type, context->getTable(), [&] { return emitOpError(); });
  if (failed(positions))
    return failure();
  if (getNormalization() == LossNormalization::per_frame
          ? !positions->hasSequenceAxis()
          : positions->kind == PositionKind::None)
    return emitOpError() << stringifyLossNormalization(getNormalization())
                         << " normalization needs positions over "
                         << (getNormalization() == LossNormalization::per_frame
                                 ? "a sequence axis"
                                 : "a batch")
                         << ", got " << type;
  return success();
}

LogicalResult LossTermsOp::verify() {
  return verifyLossNormalization(*this, getLoss(), getNormalization(),
                                 getCustomInvNormFactor(), getWeights());
}
