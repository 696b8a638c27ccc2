//===- NNCtcOps.cpp - CTC loss and forced alignment -----------------------===//
//
// Verifiers, result type inference and interfaces of nn.ctc_loss,
// nn.ctc_loss_grad and nn.viterbi_align, which share their checks.
//
//===----------------------------------------------------------------------===//

#include "dialects/nn/NNOps.h"

#include "dialects/nn/NNOpsUtils.h"

using namespace mlir;
using namespace mlir::nn;
using namespace mlir::nn::detail;

/// The checks nn.ctc_loss, nn.ctc_loss_grad and nn.viterbi_align share
/// (`name` names the score operand, which may be packed frames with
/// `allowPacked`); returns the dims of the per-sequence loss, `[B]`.
static FailureOr<ArrayRef<Attribute>>
verifyCtcOperands(Operation *op, Value logits, Value labels, int64_t blank,
                  StringRef name = "logits", bool allowPacked = false) {
  FailureOr<DimContext> context = DimContext::get(op);
  if (failed(context))
    return failure();
  FailureOr<Positions> frames =
      allowPacked ? requireSequenceFrames(op, *context, logits, name)
                  : requirePaddedFrames(op, *context, logits, name);
  if (failed(frames) || failed(requireOneFeatureAxis(op, logits, name)))
    return failure();
  FailureOr<Positions> labelPositions = context->positions(labels);
  if (failed(labelPositions))
    return failure();
  NNTensorType labelType = tensorOf(labels);
  if (labelPositions->kind != PositionKind::Padded ||
      labelPositions->sequences.size() != 1 || labelType.getRank() != 2)
    return op->emitOpError()
           << "labels must be [batch, label sequence], got " << labelType;
  if (labelPositions->batch != frames->batch)
    return op->emitOpError()
           << "labels batch '" << labelPositions->batch << "' differs from the "
           << name << " batch '" << frames->batch << "'";
  int64_t classes = featureSize(tensorOf(logits));
  if (blank < 0 || blank >= classes)
    return op->emitOpError()
           << "blank " << blank << " is not a class in [0, " << classes << ")";
  return labelType.getDims().take_front(1);
}

//===----------------------------------------------------------------------===//
// CtcLossOp, CtcLossGradOp
//===----------------------------------------------------------------------===//

bool CtcLossOp::isPerFrameLoss() { return false; }

bool CtcLossOp::hasPackedForm() { return true; }

bool CtcLossOp::isPackableOperand(unsigned index) {
  return index == getLogitsMutable().getOperandNumber();
}

/// The padded form normalizes every padded frame's V classes (from logits
/// only) and, in the gradient, reads and writes them; the recursion runs
/// on real frames.
double CtcLossOp::getPaddedFrameWork() {
  double passes = getInputKind() == LossInput::logits ? 3.0 : 2.0;
  return passes * featureSize(tensorOf(getLogits()));
}

LogicalResult CtcLossOp::verify() {
  FailureOr<ArrayRef<Attribute>> dims =
      verifyCtcOperands(*this, getLogits(), getLabels(),
                        static_cast<int64_t>(getBlank()), "logits",
                        /*allowPacked=*/true);
  if (failed(dims))
    return failure();
  return requireResultDims(*this, *dims,
                           tensorOf(getLogits()).getElementType());
}

LogicalResult CtcLossOp::inferReturnTypes(MLIRContext *,
                                          std::optional<Location> location,
                                          ValueRange operands, DictionaryAttr,
                                          OpaqueProperties, RegionRange,
                                          SmallVectorImpl<Type> &inferred) {
  // One value per sequence: the labels' batch (packed logits do not name
  // it).
  FailureOr<NNTensorType> logits =
      inferenceOperand(location, operands, 0, "logits");
  FailureOr<NNTensorType> labels =
      inferenceOperand(location, operands, 1, "labels");
  if (failed(logits) || failed(labels))
    return failure();
  if (labels->getRank() == 0)
    return emitOptionalError(location, "labels must be [B, U], got ", *labels);
  inferred.push_back(NNTensorType::get(labels->getDims().take_front(1),
                                       logits->getElementType()));
  return success();
}

int64_t CtcLossOp::getNumClasses(OpOperand &operand) {
  return operand.get() == getLabels() ? featureSize(tensorOf(getLogits())) : 0;
}

int64_t CtcLossOp::getReservedClass(OpOperand &operand) {
  return operand.get() == getLabels() ? (int64_t)getBlank() : -1;
}

LogicalResult CtcLossGradOp::verify() {
  FailureOr<ArrayRef<Attribute>> dims =
      verifyCtcOperands(*this, getLogits(), getLabels(),
                        static_cast<int64_t>(getBlank()), "logits",
                        /*allowPacked=*/true);
  if (failed(dims))
    return failure();
  return requireLossGradType(*this, getGrad(), *dims, getLogits());
}

//===----------------------------------------------------------------------===//
// ViterbiAlignOp
//===----------------------------------------------------------------------===//

LogicalResult ViterbiAlignOp::verify() {
  FailureOr<ArrayRef<Attribute>> batch = verifyCtcOperands(
      *this, getScores(), getLabels(), static_cast<int64_t>(getBlank()),
      "scores", /*allowPacked=*/true);
  if (failed(batch))
    return failure();
  NNTensorType scores = tensorOf(getScores());
  auto alignment = NNTensorType::get(scores.getDims().drop_back(),
                                     IntegerType::get(getContext(), 32));
  if (tensorOf(getAlignment()) != alignment)
    return emitOpError() << "alignment must be " << alignment << ", got "
                         << getAlignment().getType();
  auto score = NNTensorType::get(*batch, scores.getElementType());
  if (tensorOf(getScore()) != score)
    return emitOpError() << "score must be " << score << ", got "
                         << getScore().getType();
  if (Value prior = getPrior()) {
    auto classes = cast<IntegerAttr>(scores.getDims().back());
    auto want = NNTensorType::get({classes}, scores.getElementType());
    if (tensorOf(prior) != want)
      return emitOpError() << "prior must be " << want
                           << " (one value per class), got " << prior.getType();
  }
  return success();
}

LogicalResult ViterbiAlignOp::inferReturnTypes(
    MLIRContext *context, std::optional<Location> location, ValueRange operands,
    DictionaryAttr, OpaqueProperties, RegionRange,
    SmallVectorImpl<Type> &inferred) {
  // The alignment has the scores' positions ([B, T] or packed [N]), the
  // score one value per sequence of the labels' batch.
  FailureOr<NNTensorType> scores =
      inferenceOperand(location, operands, 0, "scores");
  FailureOr<NNTensorType> labels =
      inferenceOperand(location, operands, 1, "labels");
  if (failed(scores) || failed(labels))
    return failure();
  if (scores->getRank() < 2 || labels->getRank() == 0)
    return emitOptionalError(location, "scores must be [B, T, V] or [N, V] ",
                             "and labels [B, U], got ", *scores, " and ",
                             *labels);
  inferred.push_back(NNTensorType::get(scores->getDims().drop_back(),
                                       IntegerType::get(context, 32)));
  inferred.push_back(NNTensorType::get(labels->getDims().take_front(1),
                                       scores->getElementType()));
  return success();
}

int64_t ViterbiAlignOp::getNumClasses(OpOperand &operand) {
  return operand.get() == getLabels() ? featureSize(tensorOf(getScores())) : 0;
}

int64_t ViterbiAlignOp::getReservedClass(OpOperand &operand) {
  return operand.get() == getLabels() ? (int64_t)getBlank() : -1;
}
