//===- FrameWise.cpp - reference evaluation of frame-wise layers ----------===//
//
// Linear layers, element-wise arithmetic, activations, softmax, dropout,
// layer norm, embeddings and concatenation, from their descriptions in
// dialects/nn/NNFrameWiseOps.td.
//
//===----------------------------------------------------------------------===//

#include "Evaluators.h"

#include "llvm/ADT/TypeSwitch.h"

#include <cmath>

using namespace nn::reference;
using mlir::FailureOr;
using mlir::isa;

namespace {

void evalLinearOp(Frame &f, ir::LinearOp linear) {
  const Array &x = f.operand(linear, 0), &w = f.operand(linear, 1);
  int64_t out = w.shape[0], width = w.shape[1];
  std::vector<int64_t> shape = x.shape;
  shape.back() = out;
  Array y = zeros(shape);
  int64_t rows = count(x.shape) / width;
  for (int64_t r = 0; r < rows; ++r)
    for (int64_t o = 0; o < out; ++o) {
      double sum = linear.getBias() ? f.operand(linear, 2).data[o] : 0.0;
      for (int64_t i = 0; i < width; ++i)
        sum += x.data[r * width + i] * w.data[o * width + i];
      y.data[r * out + o] = sum;
    }
  f.setResult(linear, y);
}

void evalAddOrMulOp(Frame &f, Operation *binary) {
  Array y = f.operand(binary, 0);
  for (size_t i = 0; i < y.data.size(); ++i)
    y.data[i] = isa<ir::AddOp>(binary)
                    ? y.data[i] + f.operand(binary, 1).data[i]
                    : y.data[i] * f.operand(binary, 1).data[i];
  f.setResult(binary, y);
}

void evalDropoutOp(Frame &f, ir::DropoutOp dropout) {
  Array y = f.operand(dropout, 0);
  if (!dropout.getSeed()) {
    f.setResult(dropout, y);
    return;
  }
  // The mask as the op's description states it.
  double rate = dropout.getRate().convertToDouble();
  auto threshold = static_cast<uint32_t>(std::ceil(rate * 16777216.0));
  uint32_t seed = static_cast<uint32_t>(
      static_cast<int64_t>(f.operand(dropout, 1).data[0]));
  uint32_t base = keyedSeed(seed, dropout.getKey());
  ir::NNTensorType type = typeOf(dropout.getResult());
  FailureOr<ir::Positions> positions = ir::classifyPositions(
      type, f.table, [&] { return mlir::emitError(dropout.getLoc()); });
  // Packed rows: the (sequence, frame) each holds.
  std::vector<std::pair<int64_t, int64_t>> rows;
  bool packed = positions->kind == ir::PositionKind::Packed;
  if (packed)
    for (auto [b, length] :
         llvm::enumerate(f.lengths.at(positions->sequences[0].str())))
      for (int64_t t = 0; t < length; ++t)
        rows.emplace_back(b, t);
  int64_t flat = 0;
  forEach(y.shape, [&](const std::vector<int64_t> &index) {
    std::vector<int64_t> logical;
    if (packed) {
      logical = {rows[index[0]].first, rows[index[0]].second};
      logical.insert(logical.end(), index.begin() + 1, index.end());
    } else {
      logical = index;
    }
    uint32_t h = base;
    for (int64_t c : logical)
      h = mix(h ^ static_cast<uint32_t>(c));
    bool keep = (h >> 8) >= threshold;
    y.data[flat] = keep ? y.data[flat] / (1.0 - rate) : 0.0;
    ++flat;
  });
  f.setResult(dropout, y);
}

/// nn.spec_augment as its description states it: each sequence's masks
/// drawn first, as bands, then every real frame's features zeroed where a
/// band covers them.
void evalSpecAugmentOp(Frame &f, ir::SpecAugmentOp op) {
  Array y = f.operand(op, 0);
  if (!op.getSeed()) {
    f.setResult(op, y);
    return;
  }
  uint32_t seed =
      static_cast<uint32_t>(static_cast<int64_t>(f.operand(op, 1).data[0]));
  uint32_t base = keyedSeed(seed, op.getKey());
  ir::NNTensorType type = typeOf(op.getResult());
  FailureOr<ir::Positions> positions = ir::classifyPositions(
      type, f.table, [&] { return mlir::emitError(op.getLoc()); });
  const std::vector<int64_t> &lengths =
      f.lengths.at(positions->sequences[0].str());
  bool packed = positions->kind == ir::PositionKind::Packed;
  int64_t features = y.shape.back();
  int64_t padded = packed ? 0 : y.shape[1];
  int64_t row = 0; // packed: the first row of sequence b
  for (int64_t b = 0; b < (int64_t)lengths.size(); ++b) {
    int64_t length = lengths[b];
    uint32_t hb = mix(base ^ static_cast<uint32_t>(b));
    // The bands [start, start + width) over features, then over frames.
    std::vector<std::pair<int64_t, int64_t>> featureBands, frameBands;
    int64_t masks = op.getFreqMasks() + op.getTimeMasks();
    int64_t timeBound = std::min<int64_t>(
        op.getTimeWidth(),
        (int64_t)std::floor(op.getTimeRatio().convertToDouble() *
                            (double)length));
    for (int64_t m = 0; m < masks; ++m) {
      uint32_t u = mix(hb ^ static_cast<uint32_t>(2 * m)) >> 8;
      uint32_t v = mix(hb ^ static_cast<uint32_t>(2 * m + 1)) >> 8;
      bool frequency = m < (int64_t)op.getFreqMasks();
      int64_t extent = frequency ? features : length;
      int64_t maxWidth = frequency ? op.getFreqWidth() : timeBound;
      int64_t width = u % (uint32_t)(maxWidth + 1);
      int64_t start = v % (uint32_t)(extent - width + 1);
      (frequency ? featureBands : frameBands).emplace_back(start, width);
    }
    auto covered = [](const std::vector<std::pair<int64_t, int64_t>> &bands,
                      int64_t at) {
      for (auto [start, width] : bands)
        if (at >= start && at < start + width)
          return true;
      return false;
    };
    for (int64_t t = 0; t < length; ++t) {
      int64_t at = packed ? (row + t) * features : (b * padded + t) * features;
      for (int64_t k = 0; k < features; ++k)
        if (covered(frameBands, t) || covered(featureBands, k))
          y.data[at + k] = 0.0;
    }
    row += length;
  }
  f.setResult(op, y);
}

/// result[p, c] = x[p, c] sigmoid(x[p, C + c]).
void evalGluOp(Frame &f, ir::GluOp op) {
  const Array &x = f.operand(op, 0);
  int64_t width = x.shape.back(), half = width / 2;
  std::vector<int64_t> shape = x.shape;
  shape.back() = half;
  Array y = zeros(shape);
  for (int64_t p = 0; p < count(x.shape) / width; ++p)
    for (int64_t c = 0; c < half; ++c)
      y.data[p * half + c] =
          x.data[p * width + c] * sigmoid(x.data[p * width + half + c]);
  f.setResult(op, y);
}

void evalScaleOp(Frame &f, ir::ScaleOp op) {
  Array y = f.operand(op, 0);
  for (double &v : y.data)
    v *= op.getFactor().convertToDouble();
  f.setResult(op, y);
}

void evalActivationOp(Frame &f, Operation *unary) {
  Array y = f.operand(unary, 0);
  for (double &v : y.data) {
    if (isa<ir::ReluOp>(unary))
      v = v > 0 ? v : 0.0;
    else if (isa<ir::TanhOp>(unary))
      v = std::tanh(v);
    else if (isa<ir::SigmoidOp>(unary))
      v = sigmoid(v);
    else if (isa<ir::GeluOp>(unary))
      v = 0.5 * v * (1.0 + std::erf(v / std::sqrt(2.0)));
    else if (isa<ir::SiluOp>(unary))
      v = v * sigmoid(v);
  }
  f.setResult(unary, y);
}

void evalLogSoftmaxOp(Frame &f, ir::LogSoftmaxOp op) {
  f.setResult(op, logSoftmax(f.operand(op, 0)));
}

void evalSoftmaxOp(Frame &f, ir::SoftmaxOp op) {
  Array y = logSoftmax(f.operand(op, 0));
  for (double &v : y.data)
    v = std::exp(v);
  f.setResult(op, y);
}

void evalLayerNormOp(Frame &f, ir::LayerNormOp norm) {
  Array y = f.operand(norm, 0);
  int64_t width = y.shape.back(), rows = count(y.shape) / width;
  double eps = norm.getEpsilon().convertToDouble();
  for (int64_t r = 0; r < rows; ++r) {
    double mean = 0, var = 0;
    for (int64_t c = 0; c < width; ++c)
      mean += y.data[r * width + c] / width;
    for (int64_t c = 0; c < width; ++c) {
      double d = y.data[r * width + c] - mean;
      var += d * d / width;
    }
    for (int64_t c = 0; c < width; ++c)
      y.data[r * width + c] = (y.data[r * width + c] - mean) /
                                  std::sqrt(var + eps) *
                                  f.operand(norm, 1).data[c] +
                              f.operand(norm, 2).data[c];
  }
  f.setResult(norm, y);
}

void evalEmbeddingOp(Frame &f, ir::EmbeddingOp embedding) {
  const Array &ids = f.operand(embedding, 0), &table = f.operand(embedding, 1);
  int64_t width = table.shape[1], vocabulary = table.shape[0];
  std::vector<int64_t> shape = ids.shape;
  shape.push_back(width);
  Array y = zeros(shape);
  ir::NNTensorType idsType = typeOf(embedding.getIndices());
  forEach(ids.shape, [&](const std::vector<int64_t> &index) {
    int64_t id = (int64_t)ids.data[offsetOf(ids.shape, index)];
    if (!f.valid(idsType, index) || id < 0 || id >= vocabulary)
      return;
    for (int64_t d = 0; d < width; ++d)
      y.data[offsetOf(ids.shape, index) * width + d] =
          table.data[id * width + d];
  });
  f.setResult(embedding, y);
}

void evalConcatOp(Frame &f, ir::ConcatOp concat) {
  std::vector<int64_t> shape = f.shape(typeOf(concat.getResult()));
  Array y = zeros(shape);
  int64_t total = shape.back(), rows = count(shape) / total, at = 0;
  for (unsigned i = 0; i < concat->getNumOperands(); ++i) {
    int64_t width = f.operand(concat, i).shape.back();
    for (int64_t r = 0; r < rows; ++r)
      for (int64_t c = 0; c < width; ++c)
        y.data[r * total + at + c] = f.operand(concat, i).data[r * width + c];
    at += width;
  }
  f.setResult(concat, y);
}

} // namespace

bool nn::reference::evaluateFrameWiseOp(Frame &f, Operation *op) {
  bool handled = true;
  llvm::TypeSwitch<Operation *>(op)
      .Case([&](ir::LinearOp o) { evalLinearOp(f, o); })
      .Case<ir::AddOp, ir::MulOp>([&](Operation *o) { evalAddOrMulOp(f, o); })
      .Case([&](ir::DropoutOp o) { evalDropoutOp(f, o); })
      .Case([&](ir::SpecAugmentOp o) { evalSpecAugmentOp(f, o); })
      .Case<ir::ReluOp, ir::TanhOp, ir::SigmoidOp, ir::GeluOp, ir::SiluOp>(
          [&](Operation *o) { evalActivationOp(f, o); })
      .Case([&](ir::GluOp o) { evalGluOp(f, o); })
      .Case([&](ir::ScaleOp o) { evalScaleOp(f, o); })
      .Case([&](ir::LogSoftmaxOp o) { evalLogSoftmaxOp(f, o); })
      .Case([&](ir::SoftmaxOp o) { evalSoftmaxOp(f, o); })
      .Case([&](ir::LayerNormOp o) { evalLayerNormOp(f, o); })
      .Case([&](ir::EmbeddingOp o) { evalEmbeddingOp(f, o); })
      .Case([&](ir::ConcatOp o) { evalConcatOp(f, o); })
      .Default([&](Operation *) { handled = false; });
  return handled;
}
