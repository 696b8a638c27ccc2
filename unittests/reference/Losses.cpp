//===- Losses.cpp - reference evaluation of the losses --------------------===//
//
// Cross entropy (plain and fused with its linear layer), frame error,
// MSE, the parameter norm, and the nn.mark_loss / nn.loss_terms sums and
// normalizations (dialects/nn/NNLossOps.td).
//
//===----------------------------------------------------------------------===//

#include "Evaluators.h"

#include "llvm/ADT/TypeSwitch.h"

#include <algorithm>
#include <cmath>
#include <limits>

using namespace nn::reference;
using mlir::FailureOr;

namespace {

/// The sum of a loss over its valid positions and its normalization, as
/// nn.mark_loss describes them.
nn::reference::Loss lossTerms(Frame &f, Value lossValue, const Array &loss,
                              ir::LossNormalization normalization,
                              const Array *custom, const Array *weights) {
  ir::NNTensorType type = typeOf(lossValue);
  nn::reference::Loss value;
  auto weightAt = [&](const std::vector<int64_t> &index) {
    return weights ? weights->data[offsetOf(loss.shape, index)] : 1.0;
  };
  // Weight 0 takes a position out, whatever its loss holds.
  forEach(loss.shape, [&](const std::vector<int64_t> &index) {
    double weight = weightAt(index);
    if (f.valid(type, index) && weight != 0)
      value.sum += weight * loss.data[offsetOf(loss.shape, index)];
  });
  FailureOr<ir::Positions> positions = ir::classifyPositions(
      type, f.table, [&] { return mlir::emitError(lossValue.getLoc()); });
  switch (normalization) {
  case ir::LossNormalization::sum:
    value.normalization = 1;
    break;
  case ir::LossNormalization::per_sequence:
    value.normalization = f.sizes.at(positions->batch.str());
    break;
  case ir::LossNormalization::per_frame:
    forEach(loss.shape, [&](const std::vector<int64_t> &index) {
      if (f.valid(type, index))
        value.normalization += weightAt(index);
    });
    break;
  case ir::LossNormalization::custom:
    for (double v : custom->data)
      value.normalization += v;
    break;
  }
  return value;
}

/// A rank-0 array.
Array scalar(double value) {
  Array a;
  a.data.push_back(value);
  return a;
}

void evalCrossEntropyOp(Frame &f, ir::CrossEntropyOp ce) {
  Array lp = ce.getInputKind() == ir::LossInput::logits
                 ? logSoftmax(f.operand(ce, 0))
                 : f.operand(ce, 0);
  const Array &targets = f.operand(ce, 1);
  int64_t classes = lp.shape.back();
  double eps = ce.getLabelSmoothing().convertToDouble();
  Array y = zeros(targets.shape);
  ir::NNTensorType type = typeOf(ce.getTargets());
  forEach(targets.shape, [&](const std::vector<int64_t> &index) {
    int64_t row = offsetOf(targets.shape, index);
    int64_t target = (int64_t)targets.data[row];
    if (!f.valid(type, index) || target < 0 || target >= classes)
      return;
    double all = 0;
    for (int64_t c = 0; c < classes; ++c)
      all += lp.data[row * classes + c];
    double picked = lp.data[row * classes + target];
    y.data[row] = -((1 - eps) * picked +
                    (eps > 0 ? eps / (classes - 1) * (all - picked) : 0));
  });
  f.setResult(ce, y);
}

void evalLinearCrossEntropyOp(Frame &f, ir::LinearCrossEntropyOp ce) {
  // The logits of each valid row, then the smoothed cross entropy
  // of their log-softmax, as the op's description says.
  const Array &x = f.operand(ce, 0), &w = f.operand(ce, 1);
  const Array &targets = f.operand(ce, ce.getBias() ? 3 : 2);
  int64_t classes = w.shape[0], width = w.shape[1];
  double eps = ce.getLabelSmoothing().convertToDouble();
  Array y = zeros(targets.shape);
  ir::NNTensorType type = typeOf(ce.getTargets());
  forEach(targets.shape, [&](const std::vector<int64_t> &index) {
    int64_t row = offsetOf(targets.shape, index);
    auto target = (int64_t)targets.data[row];
    if (!f.valid(type, index) || target < 0 || target >= classes)
      return;
    std::vector<double> z(classes);
    double max = -std::numeric_limits<double>::infinity();
    for (int64_t c = 0; c < classes; ++c) {
      double sum = ce.getBias() ? f.operand(ce, 2).data[c] : 0.0;
      for (int64_t i = 0; i < width; ++i)
        sum += x.data[row * width + i] * w.data[c * width + i];
      z[c] = sum;
      max = std::max(max, sum);
    }
    double total = 0;
    for (double v : z)
      total += std::exp(v - max);
    double lse = max + std::log(total);
    double all = 0;
    for (double v : z)
      all += v - lse;
    double picked = z[target] - lse;
    y.data[row] = -((1 - eps) * picked +
                    (eps > 0 ? eps / (classes - 1) * (all - picked) : 0));
  });
  f.setResult(ce, y);
}

void evalFrameErrorOp(Frame &f, ir::FrameErrorOp op) {
  // Written from the op's description: 1 when some class scores
  // strictly higher than the target or a score is NaN.
  const Array &scores = f.operand(op, 0), &targets = f.operand(op, 1);
  int64_t classes = scores.shape.back();
  Array y = zeros(targets.shape);
  for (int64_t row = 0; row < count(targets.shape); ++row) {
    auto target = (int64_t)targets.data[row];
    target = std::min<int64_t>(std::max<int64_t>(target, 0), classes - 1);
    double picked = scores.data[row * classes + target];
    bool wrong = std::isnan(picked);
    for (int64_t c = 0; c < classes; ++c) {
      double v = scores.data[row * classes + c];
      wrong = wrong || std::isnan(v) || v > picked;
    }
    y.data[row] = wrong ? 1.0 : 0.0;
  }
  f.setResult(op, y);
}

void evalMseOp(Frame &f, ir::MseOp op) {
  const Array &a = f.operand(op, 0), &b = f.operand(op, 1);
  std::vector<int64_t> shape = a.shape;
  int64_t width = shape.back();
  shape.pop_back();
  Array y = zeros(shape);
  for (int64_t r = 0; r < count(shape); ++r)
    for (int64_t c = 0; c < width; ++c) {
      double d = a.data[r * width + c] - b.data[r * width + c];
      y.data[r] += d * d;
    }
  f.setResult(op, y);
}

void evalParamNormOp(Frame &f, ir::ParamNormOp op) {
  double total = 0;
  for (unsigned i = 0; i < op->getNumOperands(); ++i)
    for (double x : f.operand(op, i).data)
      total += x * x;
  f.setResult(op, scalar(total));
}

/// The array of an optional operand, or null.
const Array *optional(Frame &f, Value value) {
  return value ? &f.values.at(value) : nullptr;
}

void evalMarkLossOp(Frame &f, ir::MarkLossOp mark, LossList &losses) {
  losses.emplace_back(mark.getName().str(),
                      lossTerms(f, mark.getLoss(), f.values.at(mark.getLoss()),
                                mark.getNormalization(),
                                optional(f, mark.getCustomInvNormFactor()),
                                optional(f, mark.getWeights())));
}

void evalLossTermsOp(Frame &f, ir::LossTermsOp terms) {
  nn::reference::Loss value = lossTerms(
      f, terms.getLoss(), f.values.at(terms.getLoss()),
      terms.getNormalization(), optional(f, terms.getCustomInvNormFactor()),
      optional(f, terms.getWeights()));
  f.values[terms.getSum()] = scalar(value.sum);
  f.values[terms.getInvNorm()] = scalar(value.normalization);
}

} // namespace

bool nn::reference::evaluateLossOp(Frame &f, Operation *op, LossList &losses) {
  bool handled = true;
  llvm::TypeSwitch<Operation *>(op)
      .Case([&](ir::CrossEntropyOp o) { evalCrossEntropyOp(f, o); })
      .Case([&](ir::LinearCrossEntropyOp o) { evalLinearCrossEntropyOp(f, o); })
      .Case([&](ir::FrameErrorOp o) { evalFrameErrorOp(f, o); })
      .Case([&](ir::MseOp o) { evalMseOp(f, o); })
      .Case([&](ir::ParamNormOp o) { evalParamNormOp(f, o); })
      .Case([&](ir::MarkLossOp o) { evalMarkLossOp(f, o, losses); })
      .Case([&](ir::LossTermsOp o) { evalLossTermsOp(f, o); })
      .Default([&](Operation *) { handled = false; });
  return handled;
}
