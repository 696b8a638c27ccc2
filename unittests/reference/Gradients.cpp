//===- Gradients.cpp - reference evaluation of the gradient ops -----------===//
//
// The gradients of the frame-wise layers and losses and the generic pieces
// of a backward graph: the loss seed, sums over positions, zeroed padding
// (dialects/nn/NNGradientOps.td), as their descriptions read.
//
//===----------------------------------------------------------------------===//

#include "Evaluators.h"

#include "llvm/ADT/TypeSwitch.h"

#include <algorithm>
#include <cmath>

using namespace nn::reference;
using mlir::cast;
using mlir::isa;

namespace {

void evalLossSeedOp(Frame &f, ir::LossSeedOp seed) {
  ir::NNTensorType type = typeOf(seed.getLoss());
  double norm = f.operand(seed, 1).data[0],
         scale = seed.getScale().convertToDouble();
  double value = seed.getUnnormalized() ? scale
                 : norm == 0            ? 0.0
                                        : scale / norm;
  Array y = zeros(f.shape(type));
  const Array *weights =
      seed.getWeights() ? &f.values.at(seed.getWeights()) : nullptr;
  forEach(y.shape, [&](const std::vector<int64_t> &index) {
    int64_t at = offsetOf(y.shape, index);
    if (f.valid(type, index))
      y.data[at] = weights ? value * weights->data[at] : value;
  });
  f.setResult(seed, y);
}

void evalLinearGradInputOp(Frame &f, ir::LinearGradInputOp op) {
  const Array &dy = f.operand(op, 0), &w = f.operand(op, 1);
  int64_t out = w.shape[0], width = w.shape[1];
  std::vector<int64_t> shape = dy.shape;
  shape.back() = width;
  Array dx = zeros(shape);
  for (int64_t r = 0, rows = count(dy.shape) / out; r < rows; ++r)
    for (int64_t i = 0; i < width; ++i)
      for (int64_t o = 0; o < out; ++o)
        dx.data[r * width + i] += dy.data[r * out + o] * w.data[o * width + i];
  f.setResult(op, dx);
}

void evalLinearGradWeightOp(Frame &f, ir::LinearGradWeightOp op) {
  const Array &dy = f.operand(op, 0), &x = f.operand(op, 1);
  ir::NNTensorType type = typeOf(op.getGrad());
  int64_t out = dy.shape.back(), width = x.shape.back();
  Array dw = zeros({out, width});
  std::vector<int64_t> positions(dy.shape.begin(), dy.shape.end() - 1);
  forEach(positions, [&](const std::vector<int64_t> &index) {
    std::vector<int64_t> full = index;
    full.push_back(0);
    if (!f.valid(type, full))
      return;
    int64_t row = offsetOf(positions, index);
    for (int64_t o = 0; o < out; ++o)
      for (int64_t i = 0; i < width; ++i)
        dw.data[o * width + i] +=
            dy.data[row * out + o] * x.data[row * width + i];
  });
  f.setResult(op, dw);
}

void evalSumPositionsOp(Frame &f, ir::SumPositionsOp op) {
  const Array &x = f.operand(op, 0);
  ir::NNTensorType type = typeOf(op.getInput());
  unsigned positions = type.getNumPositionDims();
  std::vector<int64_t> features(x.shape.begin() + positions, x.shape.end());
  Array y = zeros(features);
  int64_t width = count(features);
  forEach(x.shape, [&](const std::vector<int64_t> &index) {
    if (f.valid(type, index))
      y.data[offsetOf(x.shape, index) % std::max<int64_t>(width, 1)] +=
          x.data[offsetOf(x.shape, index)];
  });
  f.setResult(op, y);
}

void evalActivationGradOp(Frame &f, ir::ActivationGradOp op) {
  Array dx = f.operand(op, 0);
  const Array &x = f.operand(op, 1);
  for (size_t i = 0; i < dx.data.size(); ++i) {
    double v = x.data[i], d = 0;
    switch (op.getKind()) {
    case ir::Activation::relu:
      d = v > 0 ? 1.0 : 0.0;
      break;
    case ir::Activation::tanh:
      d = 1.0 - std::tanh(v) * std::tanh(v);
      break;
    case ir::Activation::sigmoid:
      d = sigmoid(v) * (1.0 - sigmoid(v));
      break;
    case ir::Activation::gelu:
      d = 0.5 * (1.0 + std::erf(v / std::sqrt(2.0))) +
          v * std::exp(-0.5 * v * v) / std::sqrt(2.0 * M_PI);
      break;
    case ir::Activation::silu:
      // d/dx x s(x) = s(x) + x s'(x).
      d = sigmoid(v) + v * sigmoid(v) * (1.0 - sigmoid(v));
      break;
    }
    dx.data[i] *= d;
  }
  f.setResult(op, dx);
}

/// d/da a s(b) = s(b); d/db a s(b) = a s(b) (1 - s(b)).
void evalGluGradOp(Frame &f, ir::GluGradOp op) {
  const Array &dy = f.operand(op, 0), &x = f.operand(op, 1);
  int64_t width = x.shape.back(), half = width / 2;
  Array dx = zeros(x.shape);
  for (int64_t p = 0; p < count(x.shape) / width; ++p)
    for (int64_t c = 0; c < half; ++c) {
      double a = x.data[p * width + c],
             s = sigmoid(x.data[p * width + half + c]);
      double g = dy.data[p * half + c];
      dx.data[p * width + c] = g * s;
      dx.data[p * width + half + c] = g * a * s * (1.0 - s);
    }
  f.setResult(op, dx);
}

void evalSoftmaxGradOp(Frame &f, Operation *op) {
  const Array &dy = f.operand(op, 0), &y = f.operand(op, 1);
  Array dx = dy;
  int64_t width = dy.shape.back();
  bool log = isa<ir::LogSoftmaxGradOp>(op);
  for (int64_t r = 0, rows = count(dy.shape) / width; r < rows; ++r) {
    double sum = 0;
    for (int64_t c = 0; c < width; ++c)
      sum += dy.data[r * width + c] * (log ? 1.0 : y.data[r * width + c]);
    for (int64_t c = 0; c < width; ++c) {
      int64_t k = r * width + c;
      dx.data[k] = log ? dy.data[k] - std::exp(y.data[k]) * sum
                       : y.data[k] * (dy.data[k] - sum);
    }
  }
  f.setResult(op, dx);
}

void evalCrossEntropyGradOp(Frame &f, ir::CrossEntropyGradOp op) {
  const Array &g = f.operand(op, 0), &x = f.operand(op, 1),
              &targets = f.operand(op, 2);
  int64_t classes = x.shape.back();
  double eps = op.getLabelSmoothing().convertToDouble();
  bool fromLogits = op.getInputKind() == ir::LossInput::logits;
  Array probs = logSoftmax(x);
  Array dx = zeros(x.shape);
  for (int64_t r = 0, rows = count(g.shape); r < rows; ++r) {
    int64_t target =
        std::clamp<int64_t>((int64_t)targets.data[r], 0, classes - 1);
    for (int64_t c = 0; c < classes; ++c) {
      double q =
          c == target ? 1.0 - eps : (classes > 1 ? eps / (classes - 1) : 0);
      double p = std::exp(probs.data[r * classes + c]);
      dx.data[r * classes + c] = g.data[r] * (fromLogits ? p - q : -q);
    }
  }
  f.setResult(op, dx);
}

void evalZeroPaddingOp(Frame &f, ir::ZeroPaddingOp op) {
  Array y = f.operand(op, 0);
  ir::NNTensorType type = typeOf(op.getInput());
  unsigned positions = type.getNumPositionDims();
  std::vector<int64_t> positionShape(y.shape.begin(),
                                     y.shape.begin() + positions);
  int64_t features =
      count(y.shape) / std::max<int64_t>(1, count(positionShape));
  forEach(positionShape, [&](const std::vector<int64_t> &index) {
    if (f.valid(type, index))
      return;
    int64_t row = offsetOf(positionShape, index);
    for (int64_t i = 0; i < features; ++i)
      y.data[row * features + i] = 0.0;
  });
  f.setResult(op, y);
}

void evalSliceFeaturesOp(Frame &f, ir::SliceFeaturesOp slice) {
  const Array &x = f.operand(slice, 0);
  int64_t width = x.shape.back(), offset = slice.getOffset(),
          keep = slice.getWidth();
  std::vector<int64_t> shape = x.shape;
  shape.back() = keep;
  Array y = zeros(shape);
  for (int64_t r = 0, rows = count(x.shape) / width; r < rows; ++r)
    for (int64_t c = 0; c < keep; ++c)
      y.data[r * keep + c] = x.data[r * width + offset + c];
  f.setResult(slice, y);
}

void evalLayerNormGradOp(Frame &f, Operation *op) {
  // Per frame: xhat = (x - mean) / sqrt(var + eps) and
  // g = dy * scale (scale 1 for the scale gradient).
  const Array &dy = f.operand(op, 0), &x = f.operand(op, 1);
  bool input = isa<ir::LayerNormGradInputOp>(op);
  double eps =
      input ? cast<ir::LayerNormGradInputOp>(op).getEpsilon().convertToDouble()
            : cast<ir::LayerNormGradScaleOp>(op).getEpsilon().convertToDouble();
  ir::NNTensorType type = typeOf(op->getOperand(1));
  int64_t width = x.shape.back(), rows = count(x.shape) / width;
  Array dx = zeros(x.shape), dscale = zeros({width});
  std::vector<int64_t> positions(x.shape.begin(), x.shape.end() - 1);
  for (int64_t r = 0; r < rows; ++r) {
    const double *row = &x.data[r * width];
    double mean = 0, var = 0;
    for (int64_t c = 0; c < width; ++c)
      mean += row[c] / width;
    for (int64_t c = 0; c < width; ++c)
      var += (row[c] - mean) * (row[c] - mean) / width;
    double rstd = 1.0 / std::sqrt(var + eps);
    double meanG = 0, meanGx = 0;
    for (int64_t c = 0; c < width; ++c) {
      double g =
          dy.data[r * width + c] * (input ? f.operand(op, 2).data[c] : 1.0);
      meanG += g / width;
      meanGx += g * (row[c] - mean) * rstd / width;
    }
    std::vector<int64_t> index(positions.size());
    for (int64_t k = (int64_t)positions.size() - 1, rest = r; k >= 0; --k) {
      index[k] = rest % positions[k];
      rest /= positions[k];
    }
    index.push_back(0);
    bool valid = f.valid(type, index);
    for (int64_t c = 0; c < width; ++c) {
      double xhat = (row[c] - mean) * rstd;
      double g =
          dy.data[r * width + c] * (input ? f.operand(op, 2).data[c] : 1.0);
      dx.data[r * width + c] = rstd * (g - meanG - xhat * meanGx);
      if (valid)
        dscale.data[c] += dy.data[r * width + c] * xhat;
    }
  }
  f.setResult(op, input ? dx : dscale);
}

void evalEmbeddingGradOp(Frame &f, ir::EmbeddingGradOp op) {
  const Array &dy = f.operand(op, 0), &indices = f.operand(op, 1);
  ir::NNTensorType type = typeOf(op.getIndices());
  ir::NNTensorType tableType = typeOf(op.getResult());
  int64_t vocabulary = tableType.getStaticSize(0),
          width = tableType.getStaticSize(1);
  Array table = zeros({vocabulary, width});
  forEach(indices.shape, [&](const std::vector<int64_t> &index) {
    if (!f.valid(type, index))
      return;
    int64_t p = offsetOf(indices.shape, index);
    int64_t v =
        std::clamp<int64_t>((int64_t)indices.data[p], 0, vocabulary - 1);
    for (int64_t c = 0; c < width; ++c)
      table.data[v * width + c] += dy.data[p * width + c];
  });
  f.setResult(op, table);
}

void evalMseGradOp(Frame &f, ir::MseGradOp op) {
  const Array &g = f.operand(op, 0), &p = f.operand(op, 1),
              &t = f.operand(op, 2);
  Array dp = p;
  int64_t width = p.shape.back();
  for (size_t i = 0; i < dp.data.size(); ++i)
    dp.data[i] = 2.0 * g.data[i / width] * (p.data[i] - t.data[i]);
  f.setResult(op, dp);
}

void evalParamNormGradOp(Frame &f, ir::ParamNormGradOp op) {
  double g = f.operand(op, 0).data[0];
  Array dx = f.operand(op, 1);
  for (double &x : dx.data)
    x = 2.0 * g * x;
  f.setResult(op, dx);
}

} // namespace

bool nn::reference::evaluateGradientOp(Frame &f, Operation *op) {
  bool handled = true;
  llvm::TypeSwitch<Operation *>(op)
      .Case([&](ir::LossSeedOp o) { evalLossSeedOp(f, o); })
      .Case([&](ir::LinearGradInputOp o) { evalLinearGradInputOp(f, o); })
      .Case([&](ir::LinearGradWeightOp o) { evalLinearGradWeightOp(f, o); })
      .Case([&](ir::SumPositionsOp o) { evalSumPositionsOp(f, o); })
      .Case([&](ir::ActivationGradOp o) { evalActivationGradOp(f, o); })
      .Case([&](ir::GluGradOp o) { evalGluGradOp(f, o); })
      .Case<ir::LogSoftmaxGradOp, ir::SoftmaxGradOp>(
          [&](Operation *o) { evalSoftmaxGradOp(f, o); })
      .Case([&](ir::CrossEntropyGradOp o) { evalCrossEntropyGradOp(f, o); })
      .Case([&](ir::ZeroPaddingOp o) { evalZeroPaddingOp(f, o); })
      .Case([&](ir::SliceFeaturesOp o) { evalSliceFeaturesOp(f, o); })
      .Case<ir::LayerNormGradInputOp, ir::LayerNormGradScaleOp>(
          [&](Operation *o) { evalLayerNormGradOp(f, o); })
      .Case([&](ir::EmbeddingGradOp o) { evalEmbeddingGradOp(f, o); })
      .Case([&](ir::MseGradOp o) { evalMseGradOp(f, o); })
      .Case([&](ir::ParamNormGradOp o) { evalParamNormGradOp(f, o); })
      .Default([&](Operation *) { handled = false; });
  return handled;
}
