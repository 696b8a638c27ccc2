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

LogicalResult CtcGreedyDecodeOp::verify() {
  FailureOr<DimContext> context = DimContext::get(*this);
  if (failed(context))
    return failure();
  FailureOr<Positions> frames = context->positions(getScores());
  if (failed(frames))
    return failure();
  if (frames->kind != PositionKind::Packed)
    frames = requirePaddedFrames(*this, *context, getScores(), "scores");
  if (failed(frames) ||
      failed(requireOneFeatureAxis(*this, getScores(), "scores")))
    return failure();
  if (frames->kind == PositionKind::Packed && frames->sequences.size() != 1)
    return emitOpError() << "scores must pack one sequence dim, got "
                         << getScores().getType();
  int64_t classes = featureSize(tensorOf(getScores()));
  if (getBlank() < 0 || static_cast<int64_t>(getBlank()) >= classes)
    return emitOpError() << "blank " << getBlank() << " is not a class in [0, "
                         << classes << ")";
  if (failed(verifyHypotheses(*this, *context, getLabels(), frames->batch,
                              "labels")))
    return failure();
  auto score = NNTensorType::get(tensorOf(getLabels()).getDims().take_front(1),
                                 tensorOf(getScores()).getElementType());
  if (tensorOf(getScore()) != score)
    return emitOpError() << "score must be " << score << ", got "
                         << getScore().getType();
  return success();
}

SmallVector<StringRef, 1> CtcGreedyDecodeOp::getProducedDims() {
  return {tensorOf(getLabels()).getDimName(1)};
}
