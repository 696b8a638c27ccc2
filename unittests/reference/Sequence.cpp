//===- Sequence.cpp - reference evaluation of sequence layers -------------===//
//
// LSTM, 1-d convolution, pooling and reductions over a sequence dim, and
// their gradients (dialects/nn/NNSequenceOps.td): each reads only the
// first len(b) frames of sequence b.
//
//===----------------------------------------------------------------------===//

#include "Evaluators.h"

#include "llvm/ADT/TypeSwitch.h"

#include <algorithm>
#include <cmath>

using namespace nn::reference;

FrameRows nn::reference::frameRows(Frame &f, ir::NNTensorType type) {
  FrameRows rows;
  bool packed = type.getNumPositionDims() == 1;
  std::string sequence =
      packed ? f.table.lookup(type.getDimName(0)).getSource().str()
             : type.getDimName(1).str();
  rows.len = f.lengths.at(sequence);
  int64_t next = 0;
  for (int64_t length : rows.len) {
    rows.first.push_back(next);
    rows.rows.push_back(packed ? length : f.size(type, 1));
    next += rows.rows.back();
  }
  return rows;
}

namespace {

/// A forward LSTM over sequence b's first len(b) frames; zero elsewhere.
/// `reverse` walks each sequence from its own last frame.
void lstm(const Array &x, const FrameRows &rows, const double *wi,
          const double *wh, const double *bias, int64_t hidden, bool reverse,
          Array &y, int64_t featureOffset) {
  int64_t batch = rows.len.size(), in = x.shape.back();
  int64_t out = y.shape.back();
  const std::vector<int64_t> &len = rows.len;
  for (int64_t b = 0; b < batch; ++b) {
    std::vector<double> h(hidden, 0.0), c(hidden, 0.0), gates(4 * hidden);
    for (int64_t step = 0; step < len[b]; ++step) {
      int64_t t = reverse ? len[b] - 1 - step : step;
      for (int64_t g = 0; g < 4 * hidden; ++g) {
        double sum = bias[g];
        for (int64_t i = 0; i < in; ++i)
          sum += wi[g * in + i] * x.data[rows.row(b, t) * in + i];
        for (int64_t j = 0; j < hidden; ++j)
          sum += wh[g * hidden + j] * h[j];
        gates[g] = sum;
      }
      for (int64_t j = 0; j < hidden; ++j) {
        double i = sigmoid(gates[j]), f = sigmoid(gates[hidden + j]);
        double g = std::tanh(gates[2 * hidden + j]);
        double o = sigmoid(gates[3 * hidden + j]);
        c[j] = f * c[j] + i * g;
        h[j] = o * std::tanh(c[j]);
        y.data[rows.row(b, t) * out + featureOffset + j] = h[j];
      }
    }
  }
}

/// Backpropagation through time of `lstm` above, in the textbook order:
/// run the sequence forward keeping every step's state, then walk back
/// from its last step. dy is read at `featureOffset`; the gradients add
/// into dx, dwi, dwh and db.
void lstmGrad(const Array &x, const FrameRows &rows, const Array &dy,
              const double *wi, const double *wh, const double *bias,
              int64_t hidden, bool reverse, int64_t featureOffset, Array &dx,
              double *dwi, double *dwh, double *db) {
  int64_t batch = rows.len.size(), in = x.shape.back();
  int64_t out = dy.shape.back(), gates = 4 * hidden;
  for (int64_t b = 0; b < batch; ++b) {
    int64_t steps = rows.len[b];
    auto frame = [&](int64_t k) { return reverse ? steps - 1 - k : k; };
    // State after step k is at k + 1; index 0 is the zero initial state.
    std::vector<std::vector<double>> h(steps + 1,
                                       std::vector<double>(hidden, 0.0)),
        c = h, act(steps, std::vector<double>(gates));
    for (int64_t k = 0; k < steps; ++k) {
      const double *xt = &x.data[rows.row(b, frame(k)) * in];
      for (int64_t g = 0; g < gates; ++g) {
        double sum = bias[g];
        for (int64_t i = 0; i < in; ++i)
          sum += wi[g * in + i] * xt[i];
        for (int64_t j = 0; j < hidden; ++j)
          sum += wh[g * hidden + j] * h[k][j];
        act[k][g] = g / hidden == 2 ? std::tanh(sum) : sigmoid(sum);
      }
      for (int64_t j = 0; j < hidden; ++j) {
        c[k + 1][j] =
            act[k][hidden + j] * c[k][j] + act[k][j] * act[k][2 * hidden + j];
        h[k + 1][j] = act[k][3 * hidden + j] * std::tanh(c[k + 1][j]);
      }
    }
    std::vector<double> dhNext(hidden, 0.0), dcNext(hidden, 0.0), da(gates);
    for (int64_t k = steps - 1; k >= 0; --k) {
      int64_t t = frame(k);
      for (int64_t j = 0; j < hidden; ++j) {
        double i = act[k][j], f = act[k][hidden + j],
               g = act[k][2 * hidden + j], o = act[k][3 * hidden + j];
        double dh =
            dy.data[rows.row(b, t) * out + featureOffset + j] + dhNext[j];
        double tc = std::tanh(c[k + 1][j]);
        double dc = dcNext[j] + dh * o * (1 - tc * tc);
        da[j] = dc * g * i * (1 - i);
        da[hidden + j] = dc * c[k][j] * f * (1 - f);
        da[2 * hidden + j] = dc * i * (1 - g * g);
        da[3 * hidden + j] = dh * tc * o * (1 - o);
        dcNext[j] = dc * f;
      }
      const double *xt = &x.data[rows.row(b, t) * in];
      for (int64_t j = 0; j < hidden; ++j) {
        dhNext[j] = 0;
        for (int64_t g = 0; g < gates; ++g)
          dhNext[j] += da[g] * wh[g * hidden + j];
      }
      for (int64_t g = 0; g < gates; ++g) {
        db[g] += da[g];
        for (int64_t i = 0; i < in; ++i) {
          dwi[g * in + i] += da[g] * xt[i];
          dx.data[rows.row(b, t) * in + i] += da[g] * wi[g * in + i];
        }
        for (int64_t j = 0; j < hidden; ++j)
          dwh[g * hidden + j] += da[g] * h[k][j];
      }
    }
  }
}

void evalLstmOp(Frame &f, ir::LstmOp layer) {
  const Array &x = f.operand(layer, 0), &wi = f.operand(layer, 1),
              &wh = f.operand(layer, 2), &bias = f.operand(layer, 3);
  FrameRows rows = frameRows(f, typeOf(layer.getInput()));
  int64_t hidden = wh.shape.back();
  Array y = zeros(f.shape(typeOf(layer.getResult())));
  switch (layer.getDirection()) {
  case ir::LstmDirection::forward:
  case ir::LstmDirection::backward:
    lstm(x, rows, wi.data.data(), wh.data.data(), bias.data.data(), hidden,
         layer.getDirection() == ir::LstmDirection::backward, y, 0);
    break;
  case ir::LstmDirection::bidirectional: {
    int64_t wiSize = count(wi.shape) / 2, whSize = count(wh.shape) / 2;
    for (int d = 0; d < 2; ++d)
      lstm(x, rows, wi.data.data() + d * wiSize, wh.data.data() + d * whSize,
           bias.data.data() + d * 4 * hidden, hidden, d == 1, y, d * hidden);
    break;
  }
  }
  f.setResult(layer, y);
}

void evalConv1dOp(Frame &f, ir::Conv1dOp conv) {
  const Array &x = f.operand(conv, 0), &w = f.operand(conv, 1);
  FrameRows in = frameRows(f, typeOf(conv.getInput()));
  FrameRows out = frameRows(f, typeOf(conv.getResult()));
  const std::vector<int64_t> &len = in.len;
  Array y = zeros(f.shape(typeOf(conv.getResult())));
  // Weights [outC, K, groupC]: output channel o reads the groupC input
  // channels of its group, starting at (o / (outC / groups)) groupC.
  int64_t outC = w.shape[0], kernel = w.shape[1], groupC = w.shape[2];
  int64_t inC = x.shape.back(), groups = conv.getGroups();
  int64_t stride = conv.getStride();
  for (int64_t b = 0; b < (int64_t)len.size(); ++b)
    for (int64_t t = 0; t < out.rows[b]; ++t)
      for (int64_t o = 0; o < outC; ++o) {
        double sum = conv.getBias() ? f.operand(conv, 2).data[o] : 0.0;
        int64_t first = o / (outC / groups) * groupC;
        for (int64_t k = 0; k < kernel; ++k) {
          int64_t source = t * stride - (kernel - 1) / 2 + k;
          if (source < 0 || source >= len[b])
            continue;
          for (int64_t c = 0; c < groupC; ++c)
            sum += w.data[(o * kernel + k) * groupC + c] *
                   x.data[in.row(b, source) * inC + first + c];
        }
        y.data[out.row(b, t) * outC + o] = sum;
      }
  f.setResult(conv, y);
}

void evalPoolOp(Frame &f, ir::PoolOp pool) {
  const Array &x = f.operand(pool, 0);
  FrameRows in = frameRows(f, typeOf(pool.getInput()));
  FrameRows out = frameRows(f, typeOf(pool.getResult()));
  const std::vector<int64_t> &len = in.len;
  Array y = zeros(f.shape(typeOf(pool.getResult())));
  int64_t channels = y.shape.back();
  for (int64_t b = 0; b < (int64_t)len.size(); ++b)
    for (int64_t t = 0; t < out.rows[b]; ++t)
      for (int64_t c = 0; c < channels; ++c) {
        double max = -kInf, sum = 0;
        int64_t n = 0;
        for (int64_t k = 0; k < (int64_t)pool.getWindow(); ++k) {
          int64_t source = t * (int64_t)pool.getStride() + k;
          if (source >= len[b])
            break;
          double v = x.data[in.row(b, source) * channels + c];
          max = std::max(max, v);
          sum += v;
          ++n;
        }
        y.data[out.row(b, t) * channels + c] =
            pool.getKind() == ir::PoolKind::max ? max : (n ? sum / n : 0.0);
      }
  f.setResult(pool, y);
}

void evalReduceOp(Frame &f, ir::ReduceOp reduce) {
  const Array &x = f.operand(reduce, 0);
  unsigned axis = reduce.getAxis();
  ir::NNTensorType type = typeOf(reduce.getInput());
  const std::vector<int64_t> &len = f.lengths.at(type.getDimName(axis).str());
  Array y = zeros(f.shape(typeOf(reduce.getResult())));
  std::vector<double> counts(y.data.size(), 0.0);
  if (reduce.getKind() == ir::ReduceKind::max)
    std::fill(y.data.begin(), y.data.end(), -kInf);
  forEach(x.shape, [&](const std::vector<int64_t> &index) {
    if (index[axis] >= len[index[0]])
      return;
    std::vector<int64_t> outIndex = index;
    outIndex.erase(outIndex.begin() + axis);
    double &acc = y.data[offsetOf(y.shape, outIndex)];
    double v = x.data[offsetOf(x.shape, index)];
    acc = reduce.getKind() == ir::ReduceKind::max ? std::max(acc, v) : acc + v;
    counts[offsetOf(y.shape, outIndex)] += 1;
  });
  if (reduce.getKind() == ir::ReduceKind::mean)
    for (size_t i = 0; i < y.data.size(); ++i)
      y.data[i] = counts[i] ? y.data[i] / counts[i] : 0.0;
  f.setResult(reduce, y);
}

void evalLstmGradOp(Frame &f, ir::LstmGradOp grad) {
  const Array &dy = f.operand(grad, 0), &x = f.operand(grad, 1),
              &wi = f.operand(grad, 2), &wh = f.operand(grad, 3),
              &bias = f.operand(grad, 4);
  FrameRows rows = frameRows(f, typeOf(grad.getInput()));
  int64_t hidden = wh.shape.back();
  Array dx = zeros(x.shape), dwi = zeros(wi.shape), dwh = zeros(wh.shape),
        db = zeros(bias.shape);
  bool bidirectional = grad.getDirection() == ir::LstmDirection::bidirectional;
  int64_t wiSize = count(wi.shape) / (bidirectional ? 2 : 1),
          whSize = count(wh.shape) / (bidirectional ? 2 : 1);
  for (int d = 0; d < (bidirectional ? 2 : 1); ++d) {
    bool reverse = d == 1 || grad.getDirection() == ir::LstmDirection::backward;
    lstmGrad(x, rows, dy, wi.data.data() + d * wiSize,
             wh.data.data() + d * whSize, bias.data.data() + d * 4 * hidden,
             hidden, reverse, d * hidden, dx, dwi.data.data() + d * wiSize,
             dwh.data.data() + d * whSize, db.data.data() + d * 4 * hidden);
  }
  f.values[grad.getInputGrad()] = dx;
  f.values[grad.getInputWeightGrad()] = dwi;
  f.values[grad.getRecurrentWeightGrad()] = dwh;
  f.values[grad.getBiasGrad()] = db;
}

void evalConv1dGradOp(Frame &f, ir::Conv1dGradOp grad) {
  const Array &dy = f.operand(grad, 0), &x = f.operand(grad, 1),
              &w = f.operand(grad, 2);
  FrameRows in = frameRows(f, typeOf(grad.getInput()));
  FrameRows out = frameRows(f, typeOf(grad.getGrad()));
  const std::vector<int64_t> &len = in.len;
  int64_t outC = w.shape[0], kernel = w.shape[1], groupC = w.shape[2];
  int64_t inC = x.shape.back(), groups = grad.getGroups();
  int64_t stride = grad.getStride();
  Array dx = zeros(x.shape), dw = zeros(w.shape);
  for (int64_t b = 0; b < (int64_t)len.size(); ++b)
    for (int64_t t = 0; t < out.len[b]; ++t)
      for (int64_t k = 0; k < kernel; ++k) {
        int64_t source = t * stride - (kernel - 1) / 2 + k;
        if (source < 0 || source >= len[b])
          continue;
        for (int64_t o = 0; o < outC; ++o) {
          double g = dy.data[out.row(b, t) * outC + o];
          int64_t first = o / (outC / groups) * groupC;
          for (int64_t c = 0; c < groupC; ++c) {
            dx.data[in.row(b, source) * inC + first + c] +=
                g * w.data[(o * kernel + k) * groupC + c];
            dw.data[(o * kernel + k) * groupC + c] +=
                g * x.data[in.row(b, source) * inC + first + c];
          }
        }
      }
  f.values[grad.getInputGrad()] = dx;
  f.values[grad.getWeightGrad()] = dw;
}

void evalReduceGradOp(Frame &f, ir::ReduceGradOp op) {
  const Array &dy = f.operand(op, 0), &x = f.operand(op, 1),
              &y = f.operand(op, 2);
  ir::NNTensorType type = typeOf(op.getInput());
  unsigned axis = op.getAxis();
  const auto &len = f.lengths.at(type.getDimName(axis).str());
  Array dx = zeros(x.shape);
  std::vector<int64_t> reducedShape = dy.shape;
  std::vector<int64_t> firstMax(count(dy.shape), -1);
  forEach(x.shape, [&](const std::vector<int64_t> &index) {
    if (index[axis] >= len[index[0]])
      return;
    std::vector<int64_t> r = index;
    r.erase(r.begin() + axis);
    int64_t at = offsetOf(reducedShape, r);
    double g = dy.data[at];
    double &out = dx.data[offsetOf(x.shape, index)];
    switch (op.getKind()) {
    case ir::ReduceKind::sum:
      out = g;
      break;
    case ir::ReduceKind::mean:
      out = g / len[index[0]];
      break;
    case ir::ReduceKind::max:
      if (firstMax[at] < 0 && x.data[offsetOf(x.shape, index)] == y.data[at]) {
        firstMax[at] = index[axis];
        out = g;
      }
      break;
    }
  });
  f.setResult(op, dx);
}

void evalPoolGradOp(Frame &f, ir::PoolGradOp op) {
  const Array &dy = f.operand(op, 0), &x = f.operand(op, 1),
              &y = f.operand(op, 2);
  FrameRows in = frameRows(f, typeOf(op.getInput()));
  FrameRows out = frameRows(f, typeOf(op.getGrad()));
  const std::vector<int64_t> &len = in.len;
  int64_t window = op.getWindow(), stride = op.getStride();
  int64_t width = x.shape.back();
  bool isMax = op.getKind() == ir::PoolKind::max;
  Array dx = zeros(x.shape);
  for (int64_t b = 0; b < (int64_t)len.size(); ++b)
    for (int64_t o = 0; o < std::min(out.rows[b], out.len[b]); ++o)
      for (int64_t c = 0; c < width; ++c) {
        int64_t first = o * stride, last = std::min(first + window, len[b]);
        double g = dy.data[out.row(b, o) * width + c];
        if (!isMax) {
          int64_t count = std::max<int64_t>(1, last - first);
          for (int64_t t = first; t < last; ++t)
            dx.data[in.row(b, t) * width + c] += g / count;
          continue;
        }
        for (int64_t t = first; t < last; ++t)
          if (x.data[in.row(b, t) * width + c] ==
              y.data[out.row(b, o) * width + c]) {
            dx.data[in.row(b, t) * width + c] += g;
            break;
          }
      }
  f.setResult(op, dx);
}

} // namespace

bool nn::reference::evaluateSequenceOp(Frame &f, Operation *op) {
  bool handled = true;
  llvm::TypeSwitch<Operation *>(op)
      .Case([&](ir::LstmOp o) { evalLstmOp(f, o); })
      .Case([&](ir::Conv1dOp o) { evalConv1dOp(f, o); })
      .Case([&](ir::PoolOp o) { evalPoolOp(f, o); })
      .Case([&](ir::ReduceOp o) { evalReduceOp(f, o); })
      .Case([&](ir::LstmGradOp o) { evalLstmGradOp(f, o); })
      .Case([&](ir::Conv1dGradOp o) { evalConv1dGradOp(f, o); })
      .Case([&](ir::ReduceGradOp o) { evalReduceGradOp(f, o); })
      .Case([&](ir::PoolGradOp o) { evalPoolGradOp(f, o); })
      .Default([&](Operation *) { handled = false; });
  return handled;
}
