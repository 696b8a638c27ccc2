//===- SaveAttentionStats.cpp - attention's backward reads its forward ----===//
//
// nn.attention_grad recomputes, for every query block, the forward's row
// maxima, normalizers and output (a first walk over the keys) unless it is
// given them. When the forward is in the same graph (a training graph
// after nn-autodiff), keeping one log normalizer per query and head costs
// [B, T, H] values; recomputing costs two block GEMMs (three with relative
// positions) and a softmax pass per block of scores. docs/autodiff.md,
// "Attention".
//
//===----------------------------------------------------------------------===//

#include "passes/Passes.h"

#include "mlir/IR/Builders.h"

namespace mlir::nn {
#define DEBUG_TYPE "nn-save-attention-stats"

#define GEN_PASS_DEF_NNSAVEATTENTIONSTATS
#include "passes/Passes.h.inc"
} // namespace mlir::nn

using namespace mlir;
using namespace mlir::nn;

namespace {

/// The forward of `grad` in its block, before it, or null.
template <typename Forward> Forward forwardOf(AttentionGradOp grad) {
  for (Operation *user : grad.getQuery().getUsers()) {
    auto forward = dyn_cast<Forward>(user);
    if (forward && forward->getBlock() == grad->getBlock() &&
        forward->isBeforeInBlock(grad) && forward.isForwardOf(grad))
      return forward;
  }
  return {};
}

struct SaveAttentionStatsPass
    : public mlir::nn::impl::NNSaveAttentionStatsBase<SaveAttentionStatsPass> {
  void runOnOperation() override {
    SmallVector<AttentionGradOp> grads;
    getOperation().walk([&](AttentionGradOp grad) {
      if (!grad.getSavedStats())
        grads.push_back(grad);
    });
    for (AttentionGradOp grad : grads) {
      // Two gradients of one attention (its result marked twice) share
      // the stats.
      auto saved = forwardOf<AttentionWithStatsOp>(grad);
      if (!saved) {
        auto attention = forwardOf<AttentionOp>(grad);
        if (!attention)
          continue;
        OpBuilder builder(attention);
        auto query = cast<NNTensorType>(attention.getQuery().getType());
        saved = builder.create<AttentionWithStatsOp>(
            attention.getLoc(), attention.getType(),
            AttentionWithStatsOp::getStatsType(query, attention.getHeads()),
            attention.getQuery(), attention.getKey(), attention.getValue(),
            attention.getRelative(), attention.getSeed(),
            attention.getHeadsAttr(), attention.getScaleAttr(),
            attention.getCausalAttr(), attention.getLeftContextAttr(),
            attention.getRightContextAttr(), attention.getChunkSizeAttr(),
            attention.getLeftChunksAttr(), attention.getDropoutAttr(),
            attention.getDropoutKeyAttr());
        attention.getResult().replaceAllUsesWith(saved.getResult());
        attention.erase();
      }
      grad.getSavedOutputMutable().assign(saved.getResult());
      grad.getSavedStatsMutable().assign(saved.getStats());
    }
  }
};

} // namespace
