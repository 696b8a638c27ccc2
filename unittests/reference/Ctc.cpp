//===- Ctc.cpp - reference evaluation of CTC ------------------------------===//
//
// The CTC loss and its gradient by the forward-backward recursions, and
// Viterbi forced alignment, in float64 (dialects/nn/NNCtcOps.td).
//
//===----------------------------------------------------------------------===//

#include "Evaluators.h"

#include "llvm/ADT/TypeSwitch.h"

#include <algorithm>
#include <cmath>
#include <limits>

using namespace nn::reference;

namespace {

void evalCtcLossOp(Frame &f, ir::CtcLossOp ctc) {
  Array lp = ctc.getInputKind() == ir::LossInput::logits
                 ? logSoftmax(f.operand(ctc, 0))
                 : f.operand(ctc, 0);
  const Array &labels = f.operand(ctc, 1);
  ir::NNTensorType labelsType = typeOf(ctc.getLabels());
  FrameRows rows = frameRows(f, typeOf(ctc.getLogits()));
  const auto &frames = rows.len;
  const auto &labelCounts = f.lengths.at(labelsType.getDimName(1).str());
  int64_t batch = frames.size(), classes = lp.shape.back();
  int64_t blank = ctc.getBlank();
  Array y = zeros({batch});
  auto logAdd = [](double a, double b) {
    double m = std::max(a, b);
    return m == -kInf ? -kInf : m + std::log(std::exp(a - m) + std::exp(b - m));
  };
  for (int64_t b = 0; b < batch; ++b) {
    int64_t u = labelCounts[b], states = 2 * u + 1;
    auto label = [&](int64_t s) {
      return s % 2 ? (int64_t)labels.data[b * labels.shape[1] + s / 2] : blank;
    };
    auto emit = [&](int64_t t, int64_t s) {
      return lp.data[rows.row(b, t) * classes + label(s)];
    };
    double loss;
    if (frames[b] == 0) {
      loss = u == 0 ? 0.0 : kInf;
    } else {
      std::vector<double> alpha(states, -kInf), next(states);
      alpha[0] = emit(0, 0);
      if (states > 1)
        alpha[1] = emit(0, 1);
      for (int64_t t = 1; t < frames[b]; ++t) {
        for (int64_t s = 0; s < states; ++s) {
          double sum = alpha[s];
          if (s >= 1)
            sum = logAdd(sum, alpha[s - 1]);
          if (s >= 2 && s % 2 && label(s) != label(s - 2))
            sum = logAdd(sum, alpha[s - 2]);
          next[s] = sum + emit(t, s);
        }
        alpha = next;
      }
      double ll = alpha[states - 1];
      if (states > 1)
        ll = logAdd(ll, alpha[states - 2]);
      loss = -ll;
    }
    if (ctc.getZeroInfinity() && std::isinf(loss))
      loss = 0.0;
    y.data[b] = loss;
  }
  f.setResult(ctc, y);
}

void evalViterbiAlignOp(Frame &f, ir::ViterbiAlignOp align) {
  // Written from the op's description: the best path, ties to the
  // predecessor with the higher state index, -1 and -inf when no
  // path fits; a prior's values subtracted in the search, the
  // score the path's log-probability.
  Array lp = align.getInputKind() == ir::LossInput::logits
                 ? logSoftmax(f.operand(align, 0))
                 : f.operand(align, 0);
  const Array &labels = f.operand(align, 1);
  bool hasPrior = (bool)align.getPrior();
  const auto &frames =
      f.lengths.at(typeOf(align.getScores()).getDimName(1).str());
  const auto &labelCounts =
      f.lengths.at(typeOf(align.getLabels()).getDimName(1).str());
  int64_t batch = lp.shape[0], time = lp.shape[1], classes = lp.shape[2],
          blank = align.getBlank();
  bool rna = align.getTopology() == ir::AlignTopology::rna;
  Array path = zeros({batch, time}), best = zeros({batch});
  std::fill(path.data.begin(), path.data.end(), -1.0);
  for (int64_t b = 0; b < batch; ++b) {
    int64_t u = labelCounts[b];
    auto label = [&](int64_t k) {
      return (int64_t)labels.data[b * labels.shape[1] + k];
    };
    auto pathLogProb = [&](int64_t t, int64_t c) {
      return lp.data[(b * time + t) * classes + c];
    };
    auto logProb = [&](int64_t t, int64_t c) {
      return pathLogProb(t, c) - (hasPrior ? f.operand(align, 2).data[c] : 0.0);
    };
    // CTC state s emits blank (even) or label s / 2 (odd); RNA
    // state k has emitted k labels.
    int64_t states = rna ? u + 1 : 2 * u + 1;
    auto ctcClass = [&](int64_t s) { return s % 2 ? label(s / 2) : blank; };
    std::vector<double> delta(states, -kInf);
    delta[0] = 0; // before frame 0
    std::vector<std::vector<int>> moves(frames[b], std::vector<int>(states));
    for (int64_t t = 0; t < frames[b]; ++t) {
      std::vector<double> next(states, -kInf);
      for (int64_t s = 0; s < states; ++s) {
        std::vector<double> from(3, -kInf);
        if (rna) {
          from[0] = delta[s] + logProb(t, blank);
          if (s >= 1)
            from[1] = delta[s - 1] + logProb(t, label(s - 1));
        } else {
          double e = logProb(t, ctcClass(s));
          from[0] = delta[s] + e;
          if (s >= 1)
            from[1] = delta[s - 1] + e;
          if (s >= 2 && s % 2 && label(s / 2) != label(s / 2 - 1))
            from[2] = delta[s - 2] + e;
        }
        int move = 0;
        for (int k = 1; k < 3; ++k)
          if (from[k] > from[move])
            move = k;
        next[s] = from[move];
        moves[t][s] = move;
      }
      delta = next;
    }
    int64_t last = states - 1;
    if (!rna && u > 0 && delta[last - 1] > delta[last])
      last = last - 1;
    best.data[b] = delta[last];
    if (delta[last] == -kInf)
      continue;
    double score = 0;
    for (int64_t t = frames[b] - 1; t >= 0; --t) {
      int move = moves[t][last];
      int64_t c = rna ? (move == 0 ? blank : label(last - 1)) : ctcClass(last);
      path.data[b * time + t] = (double)c;
      score += pathLogProb(t, c);
      last -= move;
    }
    if (hasPrior)
      best.data[b] = score;
  }
  f.setResult(align, path, 0);
  f.setResult(align, best, 1);
}

void evalCtcLossGradOp(Frame &f, ir::CtcLossGradOp grad) {
  const Array &g = f.operand(grad, 0), &labels = f.operand(grad, 2);
  bool fromLogits = grad.getInputKind() == ir::LossInput::logits;
  Array lp = fromLogits ? logSoftmax(f.operand(grad, 1)) : f.operand(grad, 1);
  FrameRows rows = frameRows(f, typeOf(grad.getLogits()));
  const auto &frames = rows.len;
  const auto &labelCounts =
      f.lengths.at(typeOf(grad.getLabels()).getDimName(1).str());
  int64_t batch = frames.size(), classes = lp.shape.back();
  int64_t blank = grad.getBlank();
  auto logAdd = [](double a, double b) {
    double m = std::max(a, b);
    return m == -kInf ? -kInf : m + std::log(std::exp(a - m) + std::exp(b - m));
  };
  Array dx = zeros(lp.shape);
  for (int64_t b = 0; b < batch; ++b) {
    int64_t n = frames[b], states = 2 * labelCounts[b] + 1;
    auto label = [&](int64_t st) {
      return st % 2 ? (int64_t)labels.data[b * labels.shape[1] + st / 2]
                    : blank;
    };
    auto emit = [&](int64_t t, int64_t st) {
      return lp.data[rows.row(b, t) * classes + label(st)];
    };
    // alpha[t][s] includes frame t's emission, beta[t][s] only the
    // frames after t: a state whose class has log-prob -inf at t
    // then has posterior exp(-inf) = 0 (no path passes there), not
    // the NaN of dividing its emission back out.
    std::vector<std::vector<double>> alpha(n,
                                           std::vector<double>(states, -kInf)),
        beta = alpha;
    for (int64_t t = 0; t < n; ++t)
      for (int64_t st = 0; st < states; ++st) {
        double sum;
        if (t == 0) {
          sum = st < 2 ? 0.0 : -kInf;
        } else {
          sum = alpha[t - 1][st];
          if (st >= 1)
            sum = logAdd(sum, alpha[t - 1][st - 1]);
          if (st >= 2 && st % 2 && label(st) != label(st - 2))
            sum = logAdd(sum, alpha[t - 1][st - 2]);
        }
        alpha[t][st] = sum + emit(t, st);
      }
    for (int64_t t = n - 1; t >= 0; --t)
      for (int64_t st = states - 1; st >= 0; --st) {
        double sum;
        if (t == n - 1) {
          sum = st >= states - 2 ? 0.0 : -kInf;
        } else {
          auto after = [&](int64_t to) {
            return beta[t + 1][to] + emit(t + 1, to);
          };
          sum = after(st);
          if (st + 1 < states)
            sum = logAdd(sum, after(st + 1));
          if (st + 2 < states && st % 2 && label(st) != label(st + 2))
            sum = logAdd(sum, after(st + 2));
        }
        beta[t][st] = sum;
      }
    double logP;
    if (n == 0)
      logP = states == 1 ? 0.0 : -kInf;
    else
      logP = states > 1
                 ? logAdd(alpha[n - 1][states - 1], alpha[n - 1][states - 2])
                 : alpha[n - 1][0];
    for (int64_t t = 0; t < n; ++t) {
      double *row = &dx.data[rows.row(b, t) * classes];
      if (logP == -kInf) {
        double v = grad.getZeroInfinity()
                       ? 0.0
                       : std::numeric_limits<double>::quiet_NaN();
        for (int64_t c = 0; c < classes; ++c)
          row[c] = v;
        continue;
      }
      std::vector<double> gamma(classes, 0.0);
      for (int64_t st = 0; st < states; ++st)
        gamma[label(st)] += std::exp(alpha[t][st] + beta[t][st] - logP);
      for (int64_t c = 0; c < classes; ++c) {
        double p = std::exp(lp.data[rows.row(b, t) * classes + c]);
        row[c] =
            fromLogits ? g.data[b] * (p - gamma[c]) : -g.data[b] * gamma[c];
      }
    }
  }
  f.setResult(grad, dx);
}

} // namespace

bool nn::reference::evaluateCtcOp(Frame &f, Operation *op) {
  bool handled = true;
  llvm::TypeSwitch<Operation *>(op)
      .Case([&](ir::CtcLossOp o) { evalCtcLossOp(f, o); })
      .Case([&](ir::ViterbiAlignOp o) { evalViterbiAlignOp(f, o); })
      .Case([&](ir::CtcLossGradOp o) { evalCtcLossGradOp(f, o); })
      .Default([&](Operation *) { handled = false; });
  return handled;
}
