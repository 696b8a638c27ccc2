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

/// Checks the N-best layout of a search's results: `labels`
/// `[batch, K, Y]` i32 with K a computed sequence dim of `batch` (the
/// hypotheses per sequence) and Y a computed sequence dim of
/// `flatten(batch, K)` (each hypothesis's length).
static LogicalResult verifyNBest(Operation *op, const DimContext &context,
                                 Value labels, StringRef batch) {
  NNTensorType type = tensorOf(labels);
  FailureOr<Positions> positions = context.positions(labels);
  if (failed(positions))
    return failure();
  if (!type.getElementType().isSignlessInteger(32) || !positions->isNested() ||
      positions->sequences.size() != 2 || type.getRank() != 3 ||
      positions->batch != batch)
    return op->emitOpError()
           << "labels must be [" << batch << ", Y] or the N-best layout ["
           << batch << ", K, Y] i32 (Y a sequence dim of flatten(" << batch
           << ", K)), got " << type;
  for (StringRef dim : positions->sequences)
    if (!context.getTable().lookup(dim).getComputed())
      return op->emitOpError()
             << "labels run over '" << dim
             << "', whose lengths the caller passes; the search computes the "
                "number of hypotheses and their lengths: declare 'K: seq("
             << batch << ") computed' and 'Y: seq(H) computed' with 'H: batch "
             << "= flatten(" << batch << ", K)'";
  return success();
}

/// The checks the CTC decoders share: padded `[B, T, V]` or packed `[N, V]`
/// scores, a blank class, `[B, Y]` hypotheses over a computed dim and a
/// `[B]` score of the scores' element type; with `allowNBest`, also the
/// N-best layout `[B, K, Y]` with `[B, K]` scores.
static LogicalResult verifyCtcDecoder(Operation *op, Value scores,
                                      int64_t blank, Value labels, Value score,
                                      bool allowNBest = false) {
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
  bool nBest = allowNBest && tensorOf(labels).getRank() == 3;
  if (nBest ? failed(verifyNBest(op, *context, labels, frames->batch))
            : failed(verifyHypotheses(op, *context, labels, frames->batch,
                                      "labels")))
    return failure();
  auto want =
      NNTensorType::get(tensorOf(labels).getDims().take_front(nBest ? 2 : 1),
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
                              getScore(), /*allowNBest=*/true)))
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
  NNTensorType labels = tensorOf(getLabels());
  if (labels.getRank() == 3)
    return {labels.getDimName(1), labels.getDimName(2)};
  return {labels.getDimName(1)};
}
