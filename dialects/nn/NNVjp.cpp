//===- NNVjp.cpp - vector-Jacobian products of the nn ops -----------------===//
//
// Each differentiable op states its VJP (VjpOpInterface) as nn ops: existing
// ones where they say it (mul for products, pack/unpack for each other,
// the identity for dropout in evaluation), else gradient ops (those of
// NNGradientOps.td, and the gradients that the sequence-mixing, CTC,
// transducer and loss-tail families define next to their forward ops).
// docs/autodiff.md has the rules.
//
//===----------------------------------------------------------------------===//

#include "dialects/nn/NNOps.h"

#include "dialects/nn/Dims.h"
#include "mlir/IR/Builders.h"

using namespace mlir;
using namespace mlir::nn;

static NNTensorType tensorOf(Value value) {
  return cast<NNTensorType>(value.getType());
}

//===----------------------------------------------------------------------===//
// VJPs of the forward ops
//===----------------------------------------------------------------------===//

/// Elementwise activations: dx = dy f'(x).
template <typename OpTy>
static LogicalResult activationVjp(OpTy op, OpBuilder &b, Activation kind,
                                   ValueRange resultGradients,
                                   SmallVectorImpl<Value> &operandGradients) {
  Value dy = resultGradients[0];
  operandGradients.push_back(
      dy ? b.create<ActivationGradOp>(op.getLoc(), kind, dy, op.getInput())
               .getResult()
         : Value());
  return success();
}

LogicalResult ReluOp::buildVjp(OpBuilder &b, ValueRange resultGradients,
                               SmallVectorImpl<Value> &operandGradients) {
  return activationVjp(*this, b, Activation::relu, resultGradients,
                       operandGradients);
}
LogicalResult TanhOp::buildVjp(OpBuilder &b, ValueRange resultGradients,
                               SmallVectorImpl<Value> &operandGradients) {
  return activationVjp(*this, b, Activation::tanh, resultGradients,
                       operandGradients);
}
LogicalResult SigmoidOp::buildVjp(OpBuilder &b, ValueRange resultGradients,
                                  SmallVectorImpl<Value> &operandGradients) {
  return activationVjp(*this, b, Activation::sigmoid, resultGradients,
                       operandGradients);
}
LogicalResult GeluOp::buildVjp(OpBuilder &b, ValueRange resultGradients,
                               SmallVectorImpl<Value> &operandGradients) {
  return activationVjp(*this, b, Activation::gelu, resultGradients,
                       operandGradients);
}

LogicalResult SiluOp::buildVjp(OpBuilder &b, ValueRange resultGradients,
                               SmallVectorImpl<Value> &operandGradients) {
  return activationVjp(*this, b, Activation::silu, resultGradients,
                       operandGradients);
}

/// A constant factor scales the gradient alike.
LogicalResult ScaleOp::buildVjp(OpBuilder &b, ValueRange resultGradients,
                                SmallVectorImpl<Value> &operandGradients) {
  Value dy = resultGradients[0];
  operandGradients.push_back(
      dy ? b.create<ScaleOp>(getLoc(), dy.getType(), dy, getFactorAttr())
               .getResult()
         : Value());
  return success();
}

LogicalResult GluOp::buildVjp(OpBuilder &b, ValueRange resultGradients,
                              SmallVectorImpl<Value> &operandGradients) {
  Value dy = resultGradients[0];
  operandGradients.push_back(
      dy ? b.create<GluGradOp>(getLoc(), getInput().getType(), dy, getInput())
               .getResult()
         : Value());
  return success();
}

LogicalResult SoftmaxOp::buildVjp(OpBuilder &b, ValueRange resultGradients,
                                  SmallVectorImpl<Value> &operandGradients) {
  Value dy = resultGradients[0];
  operandGradients.push_back(
      dy ? b.create<SoftmaxGradOp>(getLoc(), dy, getResult()).getResult()
         : Value());
  return success();
}

LogicalResult LogSoftmaxOp::buildVjp(OpBuilder &b, ValueRange resultGradients,
                                     SmallVectorImpl<Value> &operandGradients) {
  Value dy = resultGradients[0];
  operandGradients.push_back(
      dy ? b.create<LogSoftmaxGradOp>(getLoc(), dy, getResult()).getResult()
         : Value());
  return success();
}

/// Evaluation: the identity, and so is its VJP. Training: dy through the
/// same mask, which the same op on dy regenerates from seed, key and
/// position. The seed gets no gradient.
LogicalResult DropoutOp::buildVjp(OpBuilder &b, ValueRange resultGradients,
                                  SmallVectorImpl<Value> &operandGradients) {
  Value dy = resultGradients[0];
  if (!getSeed() || !dy) {
    operandGradients.push_back(dy);
  } else {
    operandGradients.push_back(b.create<DropoutOp>(
        getLoc(), dy.getType(), dy, getSeed(), getRateAttr(), getKeyAttr()));
  }
  if (getSeed())
    operandGradients.push_back(Value());
  return success();
}

/// Evaluation: the identity. Training: dy through the same masks, which
/// the same op on dy regenerates. The seed gets no gradient.
LogicalResult
SpecAugmentOp::buildVjp(OpBuilder &b, ValueRange resultGradients,
                        SmallVectorImpl<Value> &operandGradients) {
  Value dy = resultGradients[0];
  if (!getSeed() || !dy) {
    operandGradients.push_back(dy);
  } else {
    auto masked = b.create<SpecAugmentOp>(
        getLoc(), dy.getType(), dy, getSeed(), getFreqMasksAttr(),
        getFreqWidthAttr(), getTimeMasksAttr(), getTimeWidthAttr(),
        getTimeRatioAttr(), getKeyAttr());
    operandGradients.push_back(masked);
  }
  if (getSeed())
    operandGradients.push_back(Value());
  return success();
}

LogicalResult AddOp::buildVjp(OpBuilder &, ValueRange resultGradients,
                              SmallVectorImpl<Value> &operandGradients) {
  operandGradients.append({resultGradients[0], resultGradients[0]});
  return success();
}

LogicalResult MulOp::buildVjp(OpBuilder &b, ValueRange resultGradients,
                              SmallVectorImpl<Value> &operandGradients) {
  Value dy = resultGradients[0];
  if (!dy) {
    operandGradients.append({Value(), Value()});
    return success();
  }
  operandGradients.push_back(b.create<MulOp>(getLoc(), dy, getRhs()));
  operandGradients.push_back(b.create<MulOp>(getLoc(), dy, getLhs()));
  return success();
}

LogicalResult LinearOp::buildVjp(OpBuilder &b, ValueRange resultGradients,
                                 SmallVectorImpl<Value> &operandGradients) {
  Value dy = resultGradients[0];
  if (!dy) {
    operandGradients.append(getNumOperands(), Value());
    return success();
  }
  Location loc = getLoc();
  operandGradients.push_back(b.create<LinearGradInputOp>(loc, dy, getWeight()));
  operandGradients.push_back(b.create<LinearGradWeightOp>(loc, dy, getInput()));
  if (getBias())
    operandGradients.push_back(b.create<SumPositionsOp>(loc, dy));
  return success();
}

LogicalResult
CrossEntropyOp::buildVjp(OpBuilder &b, ValueRange resultGradients,
                         SmallVectorImpl<Value> &operandGradients) {
  Value dl = resultGradients[0];
  operandGradients.push_back(
      dl ? b.create<CrossEntropyGradOp>(getLoc(), dl, getLogits(), getTargets(),
                                        getInputKind(), getLabelSmoothing())
               .getResult()
         : Value());
  // Targets are class indices: not differentiable.
  operandGradients.push_back(Value());
  return success();
}

/// The logits are never formed: the gradient op recomputes them block by
/// block. nn-fuse-loss-tail may later merge it with the forward into one
/// sweep (nn.linear_cross_entropy_train).
LogicalResult
LinearCrossEntropyOp::buildVjp(OpBuilder &b, ValueRange resultGradients,
                               SmallVectorImpl<Value> &operandGradients) {
  Value dl = resultGradients[0];
  if (!dl) {
    operandGradients.append(getNumOperands(), Value());
    return success();
  }
  auto grad = b.create<LinearCrossEntropyGradOp>(
      getLoc(), dl, getInput(), getWeight(), getBias(), getTargets(),
      getLabelSmoothing());
  operandGradients.push_back(grad.getInputGrad());
  operandGradients.push_back(grad.getWeightGrad());
  if (getBias())
    operandGradients.push_back(grad.getBiasGrad());
  // Targets are class indices: not differentiable.
  operandGradients.push_back(Value());
  return success();
}

LogicalResult MseOp::buildVjp(OpBuilder &b, ValueRange resultGradients,
                              SmallVectorImpl<Value> &operandGradients) {
  Value dl = resultGradients[0];
  operandGradients.push_back(
      dl ? b.create<MseGradOp>(getLoc(), dl, getPrediction(), getTarget())
               .getResult()
         : Value());
  // The target is data; its gradient (the negation) is not built yet.
  operandGradients.push_back(Value());
  return success();
}

LogicalResult ParamNormOp::buildVjp(OpBuilder &b, ValueRange resultGradients,
                                    SmallVectorImpl<Value> &operandGradients) {
  Value dl = resultGradients[0];
  for (Value input : getInputs())
    operandGradients.push_back(
        dl ? b.create<ParamNormGradOp>(getLoc(), dl, input).getResult()
           : Value());
  return success();
}

LogicalResult CtcLossOp::buildVjp(OpBuilder &b, ValueRange resultGradients,
                                  SmallVectorImpl<Value> &operandGradients) {
  Value dl = resultGradients[0];
  operandGradients.push_back(
      dl ? b.create<CtcLossGradOp>(getLoc(), dl, getLogits(), getLabels(),
                                   getInputKind(), getBlank(),
                                   getZeroInfinity())
               .getResult()
         : Value());
  // Labels are class indices: not differentiable.
  operandGradients.push_back(Value());
  return success();
}

LogicalResult
TransducerLossOp::buildVjp(OpBuilder &b, ValueRange resultGradients,
                           SmallVectorImpl<Value> &operandGradients) {
  Value dl = resultGradients[0];
  operandGradients.push_back(
      dl ? b.create<TransducerLossGradOp>(
                getLoc(), getJoint().getType(), dl, getJoint(), getLabels(),
                getInputKind(), getTopology(), getBlank(), getZeroInfinity())
               .getResult()
         : Value());
  // Labels are class indices: not differentiable.
  operandGradients.push_back(Value());
  return success();
}

/// The encoder frame gets the sum over u, the prediction state the sum
/// over t: one op computes both.
LogicalResult
TransducerJoinOp::buildVjp(OpBuilder &b, ValueRange resultGradients,
                           SmallVectorImpl<Value> &operandGradients) {
  Value dj = resultGradients[0];
  if (!dj) {
    operandGradients.append(2, Value());
    return success();
  }
  auto grad = b.create<TransducerJoinGradOp>(getLoc(), getEncoder().getType(),
                                             getPrediction().getType(), dj);
  operandGradients.push_back(grad.getEncoder());
  operandGradients.push_back(grad.getPrediction());
  return success();
}

LogicalResult
GatherStatesOp::buildVjp(OpBuilder &b, ValueRange resultGradients,
                         SmallVectorImpl<Value> &operandGradients) {
  Value dy = resultGradients[0];
  operandGradients.push_back(
      dy ? b.create<GatherStatesGradOp>(getLoc(), getStates().getType(), dy,
                                        getAlignment(), getBlank(),
                                        getByBlanks())
               .getResult()
         : Value());
  // The alignment is integer: no gradient.
  operandGradients.push_back(Value());
  return success();
}

LogicalResult
PrependStartOp::buildVjp(OpBuilder &, ValueRange,
                         SmallVectorImpl<Value> &operandGradients) {
  // Integer labels: no gradient.
  operandGradients.push_back(Value());
  return success();
}

/// Each input's gradient is its slice of the result's.
LogicalResult ConcatOp::buildVjp(OpBuilder &b, ValueRange resultGradients,
                                 SmallVectorImpl<Value> &operandGradients) {
  Value dy = resultGradients[0];
  int64_t offset = 0;
  for (Value input : getInputs()) {
    NNTensorType type = tensorOf(input);
    int64_t width = type.getStaticSize(type.getRank() - 1);
    operandGradients.push_back(
        dy ? b.create<SliceFeaturesOp>(getLoc(), dy, offset, width).getResult()
           : Value());
    offset += width;
  }
  return success();
}

LogicalResult LayerNormOp::buildVjp(OpBuilder &b, ValueRange resultGradients,
                                    SmallVectorImpl<Value> &operandGradients) {
  Value dy = resultGradients[0];
  if (!dy) {
    operandGradients.append(getNumOperands(), Value());
    return success();
  }
  Location loc = getLoc();
  operandGradients.push_back(b.create<LayerNormGradInputOp>(
      loc, dy, getInput(), getScale(), getEpsilonAttr()));
  operandGradients.push_back(
      b.create<LayerNormGradScaleOp>(loc, dy, getInput(), getEpsilonAttr()));
  operandGradients.push_back(b.create<SumPositionsOp>(loc, dy));
  return success();
}

LogicalResult EmbeddingOp::buildVjp(OpBuilder &b, ValueRange resultGradients,
                                    SmallVectorImpl<Value> &operandGradients) {
  Value dy = resultGradients[0];
  // Indices are integers: no gradient.
  operandGradients.push_back(Value());
  operandGradients.push_back(
      dy ? b.create<EmbeddingGradOp>(getLoc(), getTable().getType(), dy,
                                     getIndices())
               .getResult()
         : Value());
  return success();
}

LogicalResult ReduceOp::buildVjp(OpBuilder &b, ValueRange resultGradients,
                                 SmallVectorImpl<Value> &operandGradients) {
  Value dy = resultGradients[0];
  operandGradients.push_back(
      dy ? b.create<ReduceGradOp>(getLoc(), getInput().getType(), getKind(), dy,
                                  getInput(), getResult(), getAxis())
               .getResult()
         : Value());
  return success();
}

/// Backpropagation through time is one op (nn.lstm_grad): its four results
/// are the gradients of the input and the three weights.
LogicalResult LstmOp::buildVjp(OpBuilder &b, ValueRange resultGradients,
                               SmallVectorImpl<Value> &operandGradients) {
  Value dy = resultGradients[0];
  if (!dy) {
    operandGradients.append(getNumOperands(), Value());
    return success();
  }
  auto grad =
      b.create<LstmGradOp>(getLoc(), getDirection(), dy, getInput(),
                           getInputWeight(), getRecurrentWeight(), getBias(),
                           /*tape=*/Value());
  operandGradients.append(grad->result_begin(), grad->result_end());
  return success();
}

LogicalResult Conv1dOp::buildVjp(OpBuilder &b, ValueRange resultGradients,
                                 SmallVectorImpl<Value> &operandGradients) {
  Value dy = resultGradients[0];
  if (!dy) {
    operandGradients.append(getNumOperands(), Value());
    return success();
  }
  auto grad = b.create<Conv1dGradOp>(getLoc(), dy, getInput(), getWeight(),
                                     getStrideAttr(), getGroupsAttr());
  operandGradients.push_back(grad.getInputGrad());
  operandGradients.push_back(grad.getWeightGrad());
  if (getBias())
    operandGradients.push_back(b.create<SumPositionsOp>(getLoc(), dy));
  return success();
}

/// One op computes the three gradients (nn.attention_grad; five with
/// relative positions), recomputing the attention weights (and redrawing
/// their dropout) rather than keeping them.
LogicalResult AttentionOp::buildVjp(OpBuilder &b, ValueRange resultGradients,
                                    SmallVectorImpl<Value> &operandGradients) {
  Value dy = resultGradients[0];
  if (!dy) {
    operandGradients.append(getNumOperands(), Value());
    return success();
  }
  // Without the forward's output and stats: nn-save-attention-stats adds
  // them where the forward stays in the graph.
  auto grad = b.create<AttentionGradOp>(
      getLoc(), dy, getQuery(), getKey(), getValue(), getRelative(), getSeed(),
      /*saved_output=*/Value(), /*saved_stats=*/Value(), getHeadsAttr(),
      getScaleAttr(), getCausalAttr(), getLeftContextAttr(),
      getRightContextAttr(), getChunkSizeAttr(), getLeftChunksAttr(),
      getDropoutAttr(), getDropoutKeyAttr());
  operandGradients.append(grad->result_begin(), grad->result_end());
  if (getSeed())
    operandGradients.push_back(Value()); // the seed has no gradient
  return success();
}

/// The table is linear in the weight: its gradient contracts the table's
/// gradient with the sinusoids.
LogicalResult
RelativePositionsOp::buildVjp(OpBuilder &b, ValueRange resultGradients,
                              SmallVectorImpl<Value> &operandGradients) {
  Value dp = resultGradients[0];
  operandGradients.push_back(
      dp ? b.create<RelativePositionsGradOp>(getLoc(), getWeight().getType(),
                                             dp, getWeight())
               .getResult()
         : Value());
  return success();
}

/// A rotation's transpose is the rotation by the opposite angle.
LogicalResult RotaryOp::buildVjp(OpBuilder &b, ValueRange resultGradients,
                                 SmallVectorImpl<Value> &operandGradients) {
  Value dy = resultGradients[0];
  operandGradients.push_back(
      dy ? b.create<RotaryOp>(
                getLoc(), dy.getType(), dy, getHeadsAttr(), getBaseAttr(),
                getInverse() ? UnitAttr() : UnitAttr::get(getContext()))
               .getResult()
         : Value());
  return success();
}

/// Each sequence's value reached every one of its frames: its gradient is
/// the masked sum over them.
LogicalResult
BroadcastSeqOp::buildVjp(OpBuilder &b, ValueRange resultGradients,
                         SmallVectorImpl<Value> &operandGradients) {
  Value dy = resultGradients[0];
  operandGradients.push_back(
      dy ? b.create<ReduceOp>(getLoc(), ReduceKind::sum, dy, /*axis=*/1)
               .getResult()
         : Value());
  return success();
}

LogicalResult PoolOp::buildVjp(OpBuilder &b, ValueRange resultGradients,
                               SmallVectorImpl<Value> &operandGradients) {
  Value dy = resultGradients[0];
  operandGradients.push_back(
      dy ? b.create<PoolGradOp>(getLoc(), getInput().getType(), getKind(), dy,
                                getInput(), getResult(), getWindow(),
                                getStride())
               .getResult()
         : Value());
  return success();
}

/// Pack and unpack are each other's VJP: the gradient of a packed value
/// unpacks into zeros at padded positions.
LogicalResult PackOp::buildVjp(OpBuilder &b, ValueRange resultGradients,
                               SmallVectorImpl<Value> &operandGradients) {
  Value dp = resultGradients[0];
  operandGradients.push_back(
      dp ? b.create<UnpackOp>(getLoc(), getInput().getType(), dp).getResult()
         : Value());
  return success();
}

LogicalResult UnpackOp::buildVjp(OpBuilder &b, ValueRange resultGradients,
                                 SmallVectorImpl<Value> &operandGradients) {
  Value du = resultGradients[0];
  operandGradients.push_back(
      du ? b.create<PackOp>(getLoc(), getInput().getType(), du).getResult()
         : Value());
  return success();
}

/// The gradient reaches the scores only: the errors are counts.
LogicalResult
ExpectedRiskOp::buildVjp(OpBuilder &b, ValueRange resultGradients,
                         SmallVectorImpl<Value> &operandGradients) {
  Value dl = resultGradients[0];
  operandGradients.push_back(
      dl ? b.create<ExpectedRiskGradOp>(getLoc(), dl, getNll(), getErr())
               .getResult()
         : Value());
  operandGradients.push_back(Value());
  return success();
}
