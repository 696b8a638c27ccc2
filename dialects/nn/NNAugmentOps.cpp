//===- NNAugmentOps.cpp - data augmentation in training -------------------===//
//
// The verifier and folder of nn.spec_augment.
//
//===----------------------------------------------------------------------===//

#include "dialects/nn/NNOps.h"

#include "dialects/nn/NNOpsUtils.h"

#include <algorithm>
#include <limits>

using namespace mlir;
using namespace mlir::nn;
using namespace mlir::nn::detail;

OpFoldResult SpecAugmentOp::fold(FoldAdaptor) {
  return masksAnything() ? nullptr : getInput();
}

LogicalResult SpecAugmentOp::verify() {
  if (Value seed = getSeed())
    if (failed(requireMaskSeed(*this, seed)))
      return failure();
  FailureOr<DimContext> context = DimContext::get(*this);
  if (failed(context))
    return failure();
  FailureOr<Positions> positions = context->positions(getInput());
  if (failed(positions))
    return failure();
  NNTensorType type = tensorOf(getInput());
  // One sequence dim (padded [B, T, F], or [N, F] packing one), then one
  // static feature axis.
  bool oneSequence = positions->sequences.size() == 1 &&
                     !positions->isNested() &&
                     type.getRank() == positions->getNumAxes() + 1 &&
                     (positions->kind == PositionKind::Padded ||
                      positions->kind == PositionKind::Packed);
  int64_t features = featureSize(type);
  if (!oneSequence || features < 0)
    return emitOpError() << "input must be features over one sequence dim, "
                            "[B, T, F] or packed [N, F] with a static F, got "
                         << type;
  // The attributes' signed values (the getters return them unsigned).
  int64_t freqMasks = getFreqMasksAttr().getInt();
  int64_t freqWidth = getFreqWidthAttr().getInt();
  int64_t timeMasks = getTimeMasksAttr().getInt();
  int64_t timeWidth = getTimeWidthAttr().getInt();
  for (auto [name, value] :
       {std::pair("freq_masks", freqMasks), std::pair("freq_width", freqWidth),
        std::pair("time_masks", timeMasks), std::pair("time_width", timeWidth)})
    if (value < 0)
      return emitOpError() << name << " must be >= 0, got " << value;
  if (timeWidth > std::numeric_limits<int32_t>::max() - 1)
    return emitOpError() << "time_width " << timeWidth
                         << " does not fit the 32-bit mask arithmetic";
  if (freqWidth > features)
    return emitOpError() << "freq_width " << freqWidth << " exceeds the "
                         << features << " features";
  // The hash counters are 32-bit; the masks are few.
  if (freqMasks > 1024 || timeMasks > 1024)
    return emitOpError() << "at most 1024 masks of a kind, got "
                         << std::max(freqMasks, timeMasks);
  double ratio = getTimeRatio().convertToDouble();
  if (!(ratio > 0.0 && ratio <= 1.0))
    return emitOpError() << "time_ratio must be in (0, 1], got " << ratio;
  return success();
}
