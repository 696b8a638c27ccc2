//===- Attention.cpp - reference evaluation of attention ------------------===//
//
// nn.attention (with its stats: nn.attention_with_stats) and
// nn.attention_grad (dialects/nn/NNAttentionOps.td) the textbook way: for
// each query frame, the full row of scores over its sequence's visible
// keys, a softmax, and the weighted sum; the gradient from the same rows
// (never from a saved output or stats). Nothing is blocked or rescaled as the
// lowering does. Relative positions add, for each pair, the position query
// times the table row of the pair's distance, read directly (no shifted
// matrix). nn.rotary turns each feature pair by its frame's angle;
// nn.relative_positions embeds each distance by sinusoids and multiplies.
//
//===----------------------------------------------------------------------===//

#include "Evaluators.h"

#include "llvm/ADT/TypeSwitch.h"

#include <algorithm>
#include <cmath>
#include <type_traits>

using namespace nn::reference;

namespace {

/// What both ops say about heads, scale and mask.
struct Attention {
  int64_t heads, keyWidth, valueWidth;
  double scale;
  bool causal;
  std::optional<int64_t> left, right, chunk, leftChunks;
  /// Relative positions: the table's middle row c, else unset.
  std::optional<int64_t> center;
  /// Dropout of the weights in training (with a seed): the rate and the
  /// hash of seed and key.
  std::optional<double> dropout;
  uint32_t dropoutBase = 0;

  template <typename OpTy> Attention(OpTy op) {
    heads = static_cast<int64_t>(op.getHeads());
    auto q = typeOf(op.getQuery()), v = typeOf(op.getValue());
    keyWidth = q.getStaticSize(q.getRank() - 1) / heads;
    valueWidth = v.getStaticSize(v.getRank() - 1) / heads;
    scale = op.getScale() ? op.getScale()->convertToDouble()
                          : 1.0 / std::sqrt(double(keyWidth));
    causal = op.getCausal();
    auto get = [](std::optional<uint64_t> x) -> std::optional<int64_t> {
      if (x)
        return int64_t(*x);
      return std::nullopt;
    };
    left = get(op.getLeftContext());
    right = get(op.getRightContext());
    chunk = get(op.getChunkSize());
    leftChunks = get(op.getLeftChunks());
    if (Value table = op.getPositions())
      center = typeOf(table).getStaticSize(0) / 2;
  }

  /// Reads the seed when the op drops.
  template <typename OpTy> void readSeed(Frame &f, OpTy op) {
    if (!op.getSeed() || !op.getDropout())
      return;
    dropout = op.getDropout()->convertToDouble();
    unsigned index = op.getSeedMutable()[0].getOperandNumber();
    auto seed = static_cast<uint32_t>(
        static_cast<int64_t>(f.operand(op, index).data[0]));
    dropoutBase = keyedSeed(seed, op.getDropoutKey());
  }

  /// The factor of weight (b, h, i, j): 1 / (1 - rate) if the hash keeps
  /// it, else 0; 1 without dropout.
  double keep(int64_t b, int64_t h, int64_t i, int64_t j) const {
    if (!dropout)
      return 1.0;
    uint32_t x = dropoutBase;
    for (int64_t c : {b, h, i, j})
      x = mix(x ^ static_cast<uint32_t>(c));
    auto threshold = static_cast<uint32_t>(std::ceil(*dropout * 16777216.0));
    return (x >> 8) >= threshold ? 1.0 / (1.0 - *dropout) : 0.0;
  }

  /// The table row of the distance i - j, clipped to [-c, c].
  int64_t tableRow(int64_t i, int64_t j) const {
    return *center + std::clamp(i - j, -*center, *center);
  }

  bool sees(int64_t i, int64_t j) const {
    if (causal && j > i)
      return false;
    if (left && j < i - *left)
      return false;
    if (right && j > i + *right)
      return false;
    if (chunk) {
      int64_t c = i / *chunk;
      if (j >= (c + 1) * *chunk)
        return false;
      if (leftChunks && j < (c - *leftChunks) * *chunk)
        return false;
    }
    return true;
  }

  /// The attention weights of query row `qi` of sequence b over its keys
  /// (0 for keys it may not see; all 0 when it sees none); `r` and `table`
  /// are the relative positions' operands, null without them. `lse`, if
  /// given, gets log sum_j exp(score_j) over the keys it sees (+inf when
  /// there are none).
  std::vector<double> weights(const Array &q, const Array &k,
                              const FrameRows &qr, const FrameRows &kr,
                              int64_t b, int64_t i, int64_t h, const Array *r,
                              const Array *table, double *lse = nullptr) const {
    int64_t qWidth = q.shape.back();
    std::vector<double> p(kr.len[b], 0.0);
    double max = -kInf;
    for (int64_t j = 0; j < kr.len[b]; ++j) {
      if (!sees(i, j))
        continue;
      double dot = 0;
      for (int64_t d = 0; d < keyWidth; ++d)
        dot += q.data[qr.row(b, i) * qWidth + h * keyWidth + d] *
               k.data[kr.row(b, j) * qWidth + h * keyWidth + d];
      if (r)
        for (int64_t d = 0; d < keyWidth; ++d)
          dot += r->data[qr.row(b, i) * qWidth + h * keyWidth + d] *
                 table->data[tableRow(i, j) * qWidth + h * keyWidth + d];
      p[j] = scale * dot;
      max = std::max(max, p[j]);
    }
    double sum = 0;
    for (int64_t j = 0; j < kr.len[b]; ++j) {
      p[j] = sees(i, j) ? std::exp(p[j] - max) : 0.0;
      sum += p[j];
    }
    for (double &x : p)
      x = sum > 0 ? x / sum : 0.0;
    if (lse)
      *lse = sum > 0 ? max + std::log(sum) : kInf;
    return p;
  }
};

/// nn.attention, and nn.attention_with_stats, whose second result holds
/// each real query's log normalizer per head (padded frames 0).
template <typename OpTy> void evalAttentionOp(Frame &f, OpTy op) {
  Attention a(op);
  const Array &q = f.operand(op, 0), &k = f.operand(op, 1),
              &v = f.operand(op, 2);
  FrameRows qr = frameRows(f, typeOf(op.getQuery()));
  FrameRows kr = frameRows(f, typeOf(op.getKey()));
  const Array *r = a.center ? &f.operand(op, 3) : nullptr;
  const Array *table = a.center ? &f.operand(op, 4) : nullptr;
  a.readSeed(f, op);
  Array y = zeros(f.shape(typeOf(op.getResult())));
  std::vector<int64_t> statsShape(y.shape);
  statsShape.back() = a.heads;
  Array stats = zeros(statsShape);
  int64_t vWidth = v.shape.back();
  for (int64_t b = 0; b < (int64_t)qr.len.size(); ++b)
    for (int64_t i = 0; i < qr.len[b]; ++i)
      for (int64_t h = 0; h < a.heads; ++h) {
        std::vector<double> p =
            a.weights(q, k, qr, kr, b, i, h, r, table,
                      &stats.data[qr.row(b, i) * a.heads + h]);
        for (int64_t j = 0; j < kr.len[b]; ++j)
          for (int64_t d = 0; d < a.valueWidth; ++d)
            y.data[qr.row(b, i) * vWidth + h * a.valueWidth + d] +=
                p[j] * a.keep(b, h, i, j) *
                v.data[kr.row(b, j) * vWidth + h * a.valueWidth + d];
      }
  f.setResult(op, y);
  if constexpr (std::is_same_v<OpTy, ir::AttentionWithStatsOp>)
    f.setResult(op, stats, 1);
}

void evalAttentionGradOp(Frame &f, ir::AttentionGradOp op) {
  Attention a(op);
  const Array &dy = f.operand(op, 0), &q = f.operand(op, 1),
              &k = f.operand(op, 2), &v = f.operand(op, 3);
  FrameRows qr = frameRows(f, typeOf(op.getQuery()));
  FrameRows kr = frameRows(f, typeOf(op.getKey()));
  const Array *r = a.center ? &f.operand(op, 4) : nullptr;
  const Array *table = a.center ? &f.operand(op, 5) : nullptr;
  // The saved output and stats, if any, are not read: every gradient comes
  // from the operands alone.
  a.readSeed(f, op);
  Array dq = zeros(q.shape), dk = zeros(k.shape), dv = zeros(v.shape);
  Array dr = zeros(r ? r->shape : std::vector<int64_t>{0});
  Array dtable = zeros(table ? table->shape : std::vector<int64_t>{0});
  int64_t qWidth = q.shape.back(), vWidth = v.shape.back();
  for (int64_t b = 0; b < (int64_t)qr.len.size(); ++b)
    for (int64_t i = 0; i < qr.len[b]; ++i)
      for (int64_t h = 0; h < a.heads; ++h) {
        std::vector<double> p = a.weights(q, k, qr, kr, b, i, h, r, table);
        auto dyAt = [&](int64_t d) {
          return dy.data[qr.row(b, i) * vWidth + h * a.valueWidth + d];
        };
        // The output uses the kept weights p[j] keep[j]: dp[j] = keep[j]
        // dy[i] . v[j]; ds[j] = p[j] (dp[j] - sum_j' p[j'] dp[j']).
        std::vector<double> dp(kr.len[b], 0.0);
        double expected = 0;
        for (int64_t j = 0; j < kr.len[b]; ++j) {
          for (int64_t d = 0; d < a.valueWidth; ++d)
            dp[j] +=
                dyAt(d) * v.data[kr.row(b, j) * vWidth + h * a.valueWidth + d];
          dp[j] *= a.keep(b, h, i, j);
          expected += p[j] * dp[j];
        }
        for (int64_t j = 0; j < kr.len[b]; ++j) {
          double ds = p[j] * (dp[j] - expected);
          for (int64_t d = 0; d < a.keyWidth; ++d) {
            int64_t qAt = qr.row(b, i) * qWidth + h * a.keyWidth + d;
            int64_t kAt = kr.row(b, j) * qWidth + h * a.keyWidth + d;
            dq.data[qAt] += a.scale * ds * k.data[kAt];
            dk.data[kAt] += a.scale * ds * q.data[qAt];
            if (r) {
              int64_t tAt = a.tableRow(i, j) * qWidth + h * a.keyWidth + d;
              dr.data[qAt] += a.scale * ds * table->data[tAt];
              dtable.data[tAt] += a.scale * ds * r->data[qAt];
            }
          }
          for (int64_t d = 0; d < a.valueWidth; ++d)
            dv.data[kr.row(b, j) * vWidth + h * a.valueWidth + d] +=
                p[j] * a.keep(b, h, i, j) * dyAt(d);
        }
      }
  f.setResult(op, dq, 0);
  f.setResult(op, dk, 1);
  f.setResult(op, dv, 2);
  if (r) {
    f.setResult(op, dr, 3);
    f.setResult(op, dtable, 4);
  }
}

/// The sinusoids of distance d = row - c at `width` features: sin at even
/// features 2m, cos at odd ones, of d 10000^(-2m / width).
double distanceSinusoid(int64_t row, int64_t center, int64_t feature,
                        int64_t width) {
  double angle = static_cast<double>(row - center) *
                 std::pow(10000.0, -2.0 * static_cast<double>(feature / 2) /
                                       static_cast<double>(width));
  return feature % 2 ? std::cos(angle) : std::sin(angle);
}

/// p[row, o] = sum_e w[o, e] sinusoid(row, e).
void evalRelativePositionsOp(Frame &f, ir::RelativePositionsOp op) {
  const Array &w = f.operand(op, 0);
  int64_t out = w.shape[0], width = w.shape[1];
  int64_t rows = typeOf(op.getResult()).getStaticSize(0);
  Array p = zeros({rows, out});
  for (int64_t row = 0; row < rows; ++row)
    for (int64_t o = 0; o < out; ++o)
      for (int64_t e = 0; e < width; ++e)
        p.data[row * out + o] +=
            w.data[o * width + e] * distanceSinusoid(row, rows / 2, e, width);
  f.setResult(op, p);
}

/// dw[o, e] = sum_row grad[row, o] sinusoid(row, e).
void evalRelativePositionsGradOp(Frame &f, ir::RelativePositionsGradOp op) {
  const Array &grad = f.operand(op, 0), &w = f.operand(op, 1);
  int64_t out = w.shape[0], width = w.shape[1], rows = grad.shape[0];
  Array dw = zeros(w.shape);
  for (int64_t row = 0; row < rows; ++row)
    for (int64_t o = 0; o < out; ++o)
      for (int64_t e = 0; e < width; ++e)
        dw.data[o * width + e] += grad.data[row * out + o] *
                                  distanceSinusoid(row, rows / 2, e, width);
  f.setResult(op, dw);
}

/// Each pair (2i, 2i + 1) of each head turned by t base^(-2i / D), t the
/// frame's index in its sequence; padded frames 0.
void evalRotaryOp(Frame &f, ir::RotaryOp op) {
  const Array &x = f.operand(op, 0);
  FrameRows rows = frameRows(f, typeOf(op.getInput()));
  int64_t width = x.shape.back();
  int64_t head = width / static_cast<int64_t>(op.getHeads());
  double base = op.getBase().convertToDouble();
  double turn = op.getInverse() ? -1.0 : 1.0;
  Array y = zeros(x.shape);
  for (int64_t b = 0; b < (int64_t)rows.len.size(); ++b)
    for (int64_t t = 0; t < rows.len[b]; ++t) {
      const double *in = &x.data[rows.row(b, t) * width];
      double *out = &y.data[rows.row(b, t) * width];
      for (int64_t h = 0; h < width; h += head)
        for (int64_t i = 0; i < head / 2; ++i) {
          double angle =
              turn * t * std::pow(base, -2.0 * i / static_cast<double>(head));
          double even = in[h + 2 * i], odd = in[h + 2 * i + 1];
          out[h + 2 * i] = even * std::cos(angle) - odd * std::sin(angle);
          out[h + 2 * i + 1] = even * std::sin(angle) + odd * std::cos(angle);
        }
    }
  f.setResult(op, y);
}

} // namespace

bool nn::reference::evaluateAttentionOp(Frame &f, Operation *op) {
  bool handled = true;
  llvm::TypeSwitch<Operation *>(op)
      .Case([&](ir::AttentionOp o) { evalAttentionOp(f, o); })
      .Case([&](ir::AttentionWithStatsOp o) { evalAttentionOp(f, o); })
      .Case([&](ir::AttentionGradOp o) { evalAttentionGradOp(f, o); })
      .Case([&](ir::RotaryOp o) { evalRotaryOp(f, o); })
      .Case([&](ir::RelativePositionsOp o) { evalRelativePositionsOp(f, o); })
      .Case([&](ir::RelativePositionsGradOp o) {
        evalRelativePositionsGradOp(f, o);
      })
      .Default([&](Operation *) { handled = false; });
  return handled;
}
