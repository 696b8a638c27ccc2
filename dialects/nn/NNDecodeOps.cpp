//===- NNDecodeOps.cpp - decoding: label sequences from scores ------------===//
//
// Verifiers and interfaces of the decoding ops, whose label results run
// over `computed` sequence dims.
//
//===----------------------------------------------------------------------===//

#include "dialects/nn/NNOps.h"

#include "dialects/nn/NNOpsUtils.h"

using namespace mlir;
using namespace mlir::nn;
using namespace mlir::nn::detail;

/// Checks that `labels` is `[batch, Y]` i32 with Y a computed sequence dim
/// of `batch`; `what` names it in diagnostics.
static LogicalResult verifyHypotheses(Operation *op, const DimContext &context,
                                      Value labels, StringRef batch,
                                      StringRef what) {
  NNTensorType type = tensorOf(labels);
  FailureOr<Positions> positions = context.positions(labels);
  if (failed(positions))
    return failure();
  if (!type.getElementType().isSignlessInteger(32) ||
      positions->kind != PositionKind::Padded ||
      positions->sequences.size() != 1 || type.getRank() != 2 ||
      positions->batch != batch)
    return op->emitOpError()
           << what << " must be [" << batch
           << ", Y] i32 over a computed sequence dim Y, got " << type;
  StringRef dim = positions->sequences.front();
  if (!context.getTable().lookup(dim).getComputed())
    return op->emitOpError()
           << what << " runs over '" << dim
           << "', whose lengths the caller passes; the hypotheses' lengths "
              "are computed here: declare a new dim such as 'Y: seq("
           << batch << ") computed'";
  return success();
}

//===----------------------------------------------------------------------===//
// CtcGreedyDecodeOp
//===----------------------------------------------------------------------===//

/// The checks the CTC decoders share: padded `[B, T, V]` or packed `[N, V]`
/// scores, a blank class, `[B, Y]` hypotheses over a computed dim and a
/// `[B]` score of the scores' element type.
static LogicalResult verifyCtcDecoder(Operation *op, Value scores,
                                      int64_t blank, Value labels,
                                      Value score) {
  FailureOr<DimContext> context = DimContext::get(op);
  if (failed(context))
    return failure();
  FailureOr<Positions> frames = context->positions(scores);
  if (failed(frames))
    return failure();
  if (frames->kind != PositionKind::Packed)
    frames = requirePaddedFrames(op, *context, scores, "scores");
  if (failed(frames) || failed(requireOneFeatureAxis(op, scores, "scores")))
    return failure();
  if (frames->kind == PositionKind::Packed && frames->sequences.size() != 1)
    return op->emitOpError()
           << "scores must pack one sequence dim, got " << scores.getType();
  int64_t classes = featureSize(tensorOf(scores));
  if (blank < 0 || blank >= classes)
    return op->emitOpError()
           << "blank " << blank << " is not a class in [0, " << classes << ")";
  if (failed(verifyHypotheses(op, *context, labels, frames->batch, "labels")))
    return failure();
  auto want = NNTensorType::get(tensorOf(labels).getDims().take_front(1),
                                tensorOf(scores).getElementType());
  if (tensorOf(score) != want)
    return op->emitOpError()
           << "score must be " << want << ", got " << score.getType();
  return success();
}

//===----------------------------------------------------------------------===//
// CtcGreedyDecodeOp
//===----------------------------------------------------------------------===//

LogicalResult CtcGreedyDecodeOp::verify() {
  return verifyCtcDecoder(*this, getScores(), static_cast<int64_t>(getBlank()),
                          getLabels(), getScore());
}

SmallVector<StringRef, 1> CtcGreedyDecodeOp::getProducedDims() {
  return {tensorOf(getLabels()).getDimName(1)};
}

//===----------------------------------------------------------------------===//
// CtcBeamSearchOp
//===----------------------------------------------------------------------===//

LogicalResult CtcBeamSearchOp::verify() {
  if (failed(verifyCtcDecoder(*this, getScores(),
                              static_cast<int64_t>(getBlank()), getLabels(),
                              getScore())))
    return failure();
  int64_t classes = featureSize(tensorOf(getScores()));
  if (std::optional<uint64_t> tokens = getTokenBeam();
      tokens && static_cast<int64_t>(*tokens) > classes)
    return emitOpError() << "token_beam " << *tokens << " exceeds the "
                         << classes << " classes";
  for (auto [name, value] : {std::pair{"token_threshold", getTokenThreshold()},
                             std::pair{"score_beam", getScoreBeam()}})
    if (value && !(value->convertToDouble() >= 0))
      return emitOpError() << name << " must be at least 0, got "
                           << value->convertToDouble();
  return success();
}

SmallVector<StringRef, 1> CtcBeamSearchOp::getProducedDims() {
  return {tensorOf(getLabels()).getDimName(1)};
}
