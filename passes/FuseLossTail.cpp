//===- FuseLossTail.cpp - linear + cross entropy as one op ----------------===//
//
// Before nn-autodiff: `linear -> cross_entropy from logits` and
// `linear -> log_softmax -> cross_entropy from log_probs` become one
// nn.linear_cross_entropy, when nothing else reads the logits or the log
// probabilities (their [P..., V] buffer would exist anyway). After it: a
// fused loss and its gradient op, seeded by the loss's own nn.loss_seed,
// become one nn.linear_cross_entropy_train, whose sweep serves both.
// docs/loss-tail.md.
//
//===----------------------------------------------------------------------===//

#include "passes/Passes.h"

#include "mlir/IR/Builders.h"

namespace mlir::nn {
#define DEBUG_TYPE "nn-fuse-loss-tail"

#define GEN_PASS_DEF_NNFUSELOSSTAIL
#include "passes/Passes.h.inc"
} // namespace mlir::nn

using namespace mlir;
using namespace mlir::nn;

namespace {

/// Names the first user of `value` other than `except`, for remarks.
std::string otherUser(Value value, Operation *except) {
  for (Operation *user : value.getUsers())
    if (user != except)
      return "'" + user->getName().getStringRef().str() + "'";
  return "nothing";
}

/// Fuses the chain ending in `ce`, or says (as a remark) why not.
void fuseForward(CrossEntropyOp ce, bool emitRemarks) {
  Value logits = ce.getLogits();
  Operation *consumer = ce;
  auto decline = [&](const Twine &why) {
    if (emitRemarks)
      ce.emitRemark() << "loss tail not fused: " << why;
  };
  if (ce.getInputKind() == LossInput::log_probs) {
    auto logSoftmax = logits.getDefiningOp<LogSoftmaxOp>();
    if (!logSoftmax)
      return decline("the log probabilities do not come from nn.log_softmax");
    if (!logits.hasOneUse())
      return decline("the log probabilities are also used by " +
                     otherUser(logits, ce));
    consumer = logSoftmax;
    logits = logSoftmax.getInput();
  }
  auto linear = logits.getDefiningOp<LinearOp>();
  if (!linear)
    return decline("the logits do not come from nn.linear");
  if (!logits.hasOneUse())
    return decline("the logits are also used by " +
                   otherUser(logits, consumer));
  bool throughLogSoftmax = consumer != ce.getOperation();
  OpBuilder builder(ce);
  auto fused = builder.create<LinearCrossEntropyOp>(
      builder.getFusedLoc({ce.getLoc(), linear.getLoc()}), linear.getInput(),
      linear.getWeight(), linear.getBias(), ce.getTargets(),
      ce.getLabelSmoothingAttr());
  ce.getResult().replaceAllUsesWith(fused.getResult());
  ce.erase();
  if (throughLogSoftmax)
    consumer->erase();
  linear.erase();
  if (emitRemarks)
    fused.emitRemark() << "loss tail fused: linear -> "
                       << (throughLogSoftmax ? "log_softmax -> " : "")
                       << "cross_entropy";
}

/// Merges `grad` with its forward when its seed is the forward's own.
void mergeBackward(LinearCrossEntropyGradOp grad, bool emitRemarks) {
  auto decline = [&](const Twine &why) {
    if (emitRemarks)
      grad.emitRemark() << "loss tail gradient recomputes the logits: " << why;
  };
  auto seed = grad.getGrad().getDefiningOp<LossSeedOp>();
  if (!seed)
    return decline("its gradient is not one loss's seed (a loss marked "
                   "twice, or used in arithmetic)");
  auto forward = seed.getLoss().getDefiningOp<LinearCrossEntropyOp>();
  if (!forward || forward.getInput() != grad.getInput() ||
      forward.getWeight() != grad.getWeight() ||
      forward.getBias() != grad.getBias() ||
      forward.getTargets() != grad.getTargets() ||
      forward.getLabelSmoothing() != grad.getLabelSmoothing())
    return decline("its seed is not the fused loss's own");
  // A data-parallel step divides by the factor summed over every process
  // (nn-all-reduce-gradients), which the merged op takes as an operand:
  // that sum is counted from the loss's positions ahead of the loss.
  Value reducedInvNorm;
  LossTermsOp terms;
  LossNormalizationAttr normalization;
  auto reduce = seed.getInvNorm().getDefiningOp<AllReduceOp>();
  if (reduce) {
    auto count =
        reduce.getInputs()[cast<OpResult>(seed.getInvNorm()).getResultNumber()]
            .getDefiningOp<LossNormOp>();
    // The merged op replaces the forward, where it reads the sum.
    if (!count || count.getPositions() != forward.getResult().getType() ||
        reduce->getBlock() != forward->getBlock() ||
        !reduce->isBeforeInBlock(forward))
      return decline("its seed's normalization is not the loss's");
    reducedInvNorm = seed.getInvNorm();
    normalization = count.getNormalizationAttr();
  } else {
    terms = seed.getInvNorm().getDefiningOp<LossTermsOp>();
    if (!terms || terms.getLoss() != forward.getResult())
      return decline("its seed's normalization is not the loss's");
    if (terms.getCustomInvNormFactor())
      return decline("the loss has a custom normalization factor");
    normalization = terms.getNormalizationAttr();
  }
  // The merged op seeds every frame alike.
  if (seed.getWeights())
    return decline("the loss has weights");
  OpBuilder builder(forward);
  auto merged = builder.create<LinearCrossEntropyTrainOp>(
      forward.getLoc(), forward.getInput(), forward.getWeight(),
      forward.getBias(), forward.getTargets(), reducedInvNorm, normalization,
      seed.getScaleAttr(), seed.getUnnormalizedAttr(),
      forward.getLabelSmoothingAttr());
  forward.getResult().replaceAllUsesWith(merged.getResult());
  grad.getInputGrad().replaceAllUsesWith(merged.getInputGrad());
  grad.getWeightGrad().replaceAllUsesWith(merged.getWeightGrad());
  grad.getBiasGrad().replaceAllUsesWith(merged.getBiasGrad());
  grad.erase();
  forward.erase();
  if (seed->use_empty())
    seed.erase();
  if (terms && terms->use_empty())
    terms.erase();
  if (emitRemarks)
    merged.emitRemark() << "loss tail and its gradient in one sweep";
}

struct FuseLossTailPass
    : public mlir::nn::impl::NNFuseLossTailBase<FuseLossTailPass> {
  using NNFuseLossTailBase::NNFuseLossTailBase;

  void runOnOperation() override {
    SmallVector<CrossEntropyOp> losses;
    getOperation().walk([&](CrossEntropyOp ce) { losses.push_back(ce); });
    for (CrossEntropyOp ce : losses)
      fuseForward(ce, emitRemarks);
    if (backward != ::nn::LossTailBackward::sweep)
      return;
    SmallVector<LinearCrossEntropyGradOp> grads;
    getOperation().walk(
        [&](LinearCrossEntropyGradOp grad) { grads.push_back(grad); });
    for (LinearCrossEntropyGradOp grad : grads)
      mergeBackward(grad, emitRemarks);
  }
};

} // namespace
