//===- Transducer.cpp - reference evaluation of the transducer ops --------===//
//
// The transducer joint on packed or padded grids, the RNN-T / RNA lattice
// (loss, gradient, best path) and the state gathering of RNA alignments
// (dialects/nn/NNTransducerOps.td).
//
//===----------------------------------------------------------------------===//

#include "Evaluators.h"

#include "llvm/ADT/TypeSwitch.h"

#include <algorithm>
#include <cmath>
#include <functional>
#include <limits>

using namespace nn::reference;

namespace {

/// For each frame of an RNA alignment [B, T], the prediction state it is
/// in: the labels emitted on the frames before it (classes neither blank
/// nor negative), at most U1_b - 1; -1 on padded frames. With `byBlanks`,
/// the blanks before it: the frame a position of an RNN-T path is on. -1
/// where there are no states to gather.
std::vector<int64_t> gatheredStates(const Frame &f, Value states,
                                    Value alignmentValue,
                                    const Array &alignment, int64_t blank,
                                    bool byBlanks) {
  const auto &frames = f.lengths.at(typeOf(alignmentValue).getDimName(1).str());
  const auto &counts = f.lengths.at(typeOf(states).getDimName(1).str());
  int64_t batch = alignment.shape[0], time = alignment.shape[1];
  std::vector<int64_t> positions(batch * time, -1);
  for (int64_t b = 0; b < batch; ++b) {
    int64_t emitted = 0;
    for (int64_t t = 0; t < frames[b]; ++t) {
      // -1 (nothing gathered) when there are no states.
      positions[b * time + t] = std::min(emitted, counts[b] - 1);
      auto cls = (int64_t)alignment.data[b * time + t];
      if (byBlanks ? cls == blank : cls != blank && cls >= 0)
        ++emitted;
    }
  }
  return positions;
}

/// The (t, u) rows of a transducer joint: packed (sequence by sequence,
/// t-major) or padded [B, T, U1, ...].
struct TransducerGrid {
  /// The joint's own dims name T and U1.
  TransducerGrid(const Frame &f, ir::NNTensorType joint, int64_t batch)
      : packed(joint.getNumPositionDims() == 1), batch(batch) {
    std::string t, u1;
    if (packed) {
      ir::DimDeclAttr decl = f.table.lookup(joint.getDimName(0));
      t = decl.getSource().str();
      u1 = decl.getInner().str();
    } else {
      t = joint.getDimName(1).str();
      u1 = joint.getDimName(2).str();
    }
    frames = f.lengths.at(t);
    columns = f.lengths.at(u1);
    time = f.sizes.at(t);
    states = f.sizes.at(u1);
  }

  std::vector<int64_t> shape(int64_t width) const {
    if (!packed)
      return {batch, time, states, width};
    int64_t rows = 0;
    for (int64_t b = 0; b < batch; ++b)
      rows += frames[b] * columns[b];
    return {rows, width};
  }

  /// fn(b, t, u, row) for every valid (t, u) of every sequence.
  void forEachRow(
      const std::function<void(int64_t, int64_t, int64_t, int64_t)> &fn) const {
    int64_t row = 0;
    for (int64_t b = 0; b < batch; ++b)
      for (int64_t t = 0; t < frames[b]; ++t)
        for (int64_t u = 0; u < columns[b]; ++u)
          fn(b, t, u, packed ? row++ : (b * time + t) * states + u);
  }

  std::vector<int64_t> frames, columns;
  bool packed;
  int64_t batch, time = 0, states = 0;
};

/// The transducer lattice of a joint's log-probs, solved per sequence by
/// the forward and backward recursions in float64.
struct TransducerLattice {
  TransducerLattice(const Frame &f, Value jointValue, Value labelsValue,
                    const Array &joint, const Array &labelArray,
                    ir::LossInput kind, ir::TransducerTopology topology,
                    int64_t blank)
      : grid(f, typeOf(jointValue), labelArray.shape[0]),
        logProbs(kind == ir::LossInput::logits ? logSoftmax(joint) : joint),
        labelArray(labelArray), classes(joint.shape.back()), blank(blank),
        batch(labelArray.shape[0]),
        rna(topology == ir::TransducerTopology::rna) {
    rowOf.resize(batch);
    for (int64_t b = 0; b < batch; ++b)
      rowOf[b].assign(grid.frames[b],
                      std::vector<int64_t>(grid.columns[b], -1));
    grid.forEachRow([&](int64_t b, int64_t t, int64_t u, int64_t row) {
      rowOf[b][t][u] = row;
    });
  }

  double lp(int64_t row, int64_t k) const {
    return logProbs.data[row * classes + k];
  }
  int64_t label(int64_t b, int64_t u) const {
    return (int64_t)labelArray.data[b * labelArray.shape[1] + u];
  }

  struct Solution {
    /// rnnt: alpha[t][u] for t < T; rna: alpha[t][u] after t frames
    /// (t <= T). beta likewise: the log-prob of finishing from there.
    std::vector<std::vector<double>> alpha, beta;
    int64_t frames, labels;
    bool rna;
    double logP;
    /// beta of where the blank (label) at (t, u) leads.
    double afterBlank(int64_t t, int64_t u) const {
      if (rna)
        return beta[t + 1][u];
      if (t + 1 < frames)
        return beta[t + 1][u];
      return u == labels ? 0.0 : -kInf;
    }
    double afterLabel(int64_t t, int64_t u) const {
      return rna ? beta[t + 1][u + 1] : beta[t][u + 1];
    }
  };

  static double logAdd(double a, double b) {
    double m = std::max(a, b);
    return m == -kInf ? -kInf : m + std::log(std::exp(a - m) + std::exp(b - m));
  }

  /// The best RNA path of sequence b (written from nn.transducer_align's
  /// description: ties to the blank): each frame's class, and its
  /// log-probability; -inf and no classes when no path fits.
  std::pair<std::vector<int64_t>, double> bestPath(int64_t b) const {
    int64_t T = grid.frames[b], U = grid.columns[b] - 1;
    // best[t][u]: the best score of emitting u labels in t frames.
    std::vector<std::vector<double>> best(T + 1,
                                          std::vector<double>(U + 1, -kInf));
    best[0][0] = 0;
    auto stay = [&](int64_t t, int64_t u) {
      return best[t - 1][u] + lp(rowOf[b][t - 1][u], blank);
    };
    auto move = [&](int64_t t, int64_t u) {
      return u == 0 ? -kInf
                    : best[t - 1][u - 1] +
                          lp(rowOf[b][t - 1][u - 1], label(b, u - 1));
    };
    for (int64_t t = 1; t <= T; ++t)
      for (int64_t u = 0; u <= U; ++u)
        best[t][u] = std::max(stay(t, u), move(t, u));
    if (best[T][U] == -kInf)
      return {{}, -kInf};
    std::vector<int64_t> path(T);
    for (int64_t t = T, u = U; t >= 1; --t) {
      bool emits = move(t, u) > stay(t, u);
      path[t - 1] = emits ? label(b, u - 1) : blank;
      u -= emits;
    }
    return {path, best[T][U]};
  }

  /// The best RNN-T path of sequence b (from nn.transducer_align's
  /// description: the blank moves to the next frame, a label stays on
  /// its frame, the path ends with the last frame's blank; ties to the
  /// blank): its T + U classes in order and its log-probability; -1
  /// throughout and -inf when no path has a probability, nothing without
  /// frames.
  std::pair<std::vector<int64_t>, double> bestRnntPath(int64_t b) const {
    int64_t T = grid.frames[b], U = grid.columns[b] - 1;
    if (T == 0)
      return {{}, -kInf};
    // best[t][u]: the best score of reaching node (t, u), row T being
    // past the last frame.
    std::vector<std::vector<double>> best(T + 1,
                                          std::vector<double>(U + 1, -kInf));
    auto stay = [&](int64_t t, int64_t u) {
      return t == 0 ? -kInf : best[t - 1][u] + lp(rowOf[b][t - 1][u], blank);
    };
    auto up = [&](int64_t t, int64_t u) {
      return u == 0 || t == T
                 ? -kInf
                 : best[t][u - 1] + lp(rowOf[b][t][u - 1], label(b, u - 1));
    };
    for (int64_t t = 0; t <= T; ++t)
      for (int64_t u = 0; u <= U; ++u)
        best[t][u] = t == 0 && u == 0 ? 0.0 : std::max(stay(t, u), up(t, u));
    std::vector<int64_t> path(T + U, -1);
    if (best[T][U] == -kInf)
      return {path, -kInf};
    for (int64_t t = T, u = U; t + u > 0;) {
      bool emits = up(t, u) > stay(t, u);
      path[t + u - 1] = emits ? label(b, u - 1) : blank;
      (emits ? u : t) -= 1;
    }
    return {path, best[T][U]};
  }

  Solution solve(int64_t b) const {
    Solution s;
    s.frames = grid.frames[b];
    s.labels = grid.columns[b] - 1;
    s.rna = rna;
    int64_t T = s.frames, U = s.labels;
    auto blankAt = [&](int64_t t, int64_t u) {
      return lp(rowOf[b][t][u], blank);
    };
    auto labelAt = [&](int64_t t, int64_t u) {
      return lp(rowOf[b][t][u], label(b, u));
    };
    int64_t rows = rna ? T + 1 : T;
    s.alpha.assign(rows, std::vector<double>(U + 1, -kInf));
    s.beta = s.alpha;
    if (!rna) {
      for (int64_t t = 0; t < T; ++t)
        for (int64_t u = 0; u <= U; ++u) {
          double a = t == 0 && u == 0 ? 0.0 : -kInf;
          if (t > 0)
            a = logAdd(a, s.alpha[t - 1][u] + blankAt(t - 1, u));
          if (u > 0)
            a = logAdd(a, s.alpha[t][u - 1] + labelAt(t, u - 1));
          s.alpha[t][u] = a;
        }
      for (int64_t t = T - 1; t >= 0; --t)
        for (int64_t u = U; u >= 0; --u) {
          double v = blankAt(t, u) + s.afterBlank(t, u);
          if (u < U)
            v = logAdd(v, labelAt(t, u) + s.beta[t][u + 1]);
          s.beta[t][u] = v;
        }
      s.logP = T == 0 ? -kInf : s.beta[0][0];
      return s;
    }
    s.alpha[0][0] = 0;
    for (int64_t t = 1; t <= T; ++t)
      for (int64_t u = 0; u <= U; ++u) {
        double a = s.alpha[t - 1][u] + blankAt(t - 1, u);
        if (u > 0)
          a = logAdd(a, s.alpha[t - 1][u - 1] + labelAt(t - 1, u - 1));
        s.alpha[t][u] = a;
      }
    s.beta[T][U] = 0;
    for (int64_t t = T - 1; t >= 0; --t)
      for (int64_t u = 0; u <= U; ++u) {
        double v = blankAt(t, u) + s.beta[t + 1][u];
        if (u < U)
          v = logAdd(v, labelAt(t, u) + s.beta[t + 1][u + 1]);
        s.beta[t][u] = v;
      }
    s.logP = s.alpha[T][U];
    return s;
  }

  TransducerGrid grid;
  Array logProbs;
  const Array &labelArray;
  int64_t classes, blank, batch;
  bool rna;
  std::vector<std::vector<std::vector<int64_t>>> rowOf;
};

void evalPrependStartOp(Frame &f, ir::PrependStartOp prepend) {
  const Array &labels = f.operand(prepend, 0);
  const auto &counts =
      f.lengths.at(typeOf(prepend.getLabels()).getDimName(1).str());
  int64_t batch = labels.shape[0], width = labels.shape[1];
  Array y = zeros({batch, width + 1});
  for (int64_t b = 0; b < batch; ++b)
    for (int64_t u = 0; u <= width; ++u)
      y.data[b * (width + 1) + u] = u >= 1 && u <= counts[b]
                                        ? labels.data[b * width + u - 1]
                                        : (double)prepend.getStart();
  f.setResult(prepend, y);
}

/// The join's operands may be padded or packed: frameRows finds each
/// frame's row either way.
void evalTransducerJoinOp(Frame &f, ir::TransducerJoinOp join) {
  const Array &e = f.operand(join, 0), &p = f.operand(join, 1);
  FrameRows encRows = frameRows(f, typeOf(join.getEncoder()));
  FrameRows predRows = frameRows(f, typeOf(join.getPrediction()));
  TransducerGrid grid(f, typeOf(join.getResult()),
                      static_cast<int64_t>(encRows.len.size()));
  int64_t width = e.shape.back();
  Array y = zeros(grid.shape(width));
  grid.forEachRow([&](int64_t b, int64_t t, int64_t u, int64_t row) {
    for (int64_t d = 0; d < width; ++d)
      y.data[row * width + d] = e.data[encRows.row(b, t) * width + d] +
                                p.data[predRows.row(b, u) * width + d];
  });
  f.setResult(join, y);
}

void evalTransducerJoinGradOp(Frame &f, ir::TransducerJoinGradOp grad) {
  const Array &g = f.operand(grad, 0);
  ir::NNTensorType encType = typeOf(grad.getEncoder()),
                   predType = typeOf(grad.getPrediction());
  FrameRows encRows = frameRows(f, encType), predRows = frameRows(f, predType);
  TransducerGrid grid(f, typeOf(grad.getGrad()),
                      static_cast<int64_t>(encRows.len.size()));
  int64_t width = g.shape.back();
  Array de = zeros(f.shape(encType)), dp = zeros(f.shape(predType));
  grid.forEachRow([&](int64_t b, int64_t t, int64_t u, int64_t row) {
    for (int64_t d = 0; d < width; ++d) {
      de.data[encRows.row(b, t) * width + d] += g.data[row * width + d];
      dp.data[predRows.row(b, u) * width + d] += g.data[row * width + d];
    }
  });
  f.setResult(grad, de, 0);
  f.setResult(grad, dp, 1);
}

void evalGatherStatesOp(Frame &f, ir::GatherStatesOp gather) {
  const Array &states = f.operand(gather, 0), &alignment = f.operand(gather, 1);
  std::vector<int64_t> positions =
      gatheredStates(f, gather.getStates(), gather.getAlignment(), alignment,
                     gather.getBlank(), gather.getByBlanks());
  int64_t batch = alignment.shape[0], time = alignment.shape[1],
          width = states.shape[2], rows = states.shape[1];
  Array y = zeros({batch, time, width});
  for (int64_t b = 0; b < batch; ++b)
    for (int64_t t = 0; t < time; ++t) {
      int64_t u = positions[b * time + t];
      for (int64_t d = 0; d < width && u >= 0; ++d)
        y.data[(b * time + t) * width + d] =
            states.data[(b * rows + u) * width + d];
    }
  f.setResult(gather, y);
}

void evalGatherStatesGradOp(Frame &f, ir::GatherStatesGradOp grad) {
  const Array &g = f.operand(grad, 0), &alignment = f.operand(grad, 1);
  std::vector<int64_t> positions =
      gatheredStates(f, grad.getResult(), grad.getAlignment(), alignment,
                     grad.getBlank(), grad.getByBlanks());
  ir::NNTensorType type = typeOf(grad.getResult());
  int64_t batch = alignment.shape[0], time = alignment.shape[1],
          width = g.shape[2], rows = f.sizes.at(type.getDimName(1).str());
  Array y = zeros({batch, rows, width});
  for (int64_t b = 0; b < batch; ++b)
    for (int64_t t = 0; t < time; ++t) {
      int64_t u = positions[b * time + t];
      for (int64_t d = 0; d < width && u >= 0; ++d)
        y.data[(b * rows + u) * width + d] +=
            g.data[(b * time + t) * width + d];
    }
  f.setResult(grad, y);
}

void evalTransducerLossOp(Frame &f, ir::TransducerLossOp loss) {
  TransducerLattice lattice(f, loss.getJoint(), loss.getLabels(),
                            f.operand(loss, 0), f.operand(loss, 1),
                            loss.getInputKind(), loss.getTopology(),
                            loss.getBlank());
  Array y = zeros({lattice.batch});
  for (int64_t b = 0; b < lattice.batch; ++b) {
    double logP = lattice.solve(b).logP;
    y.data[b] = logP == -kInf && loss.getZeroInfinity() ? 0.0 : -logP;
  }
  f.setResult(loss, y);
}

void evalTransducerAlignOp(Frame &f, ir::TransducerAlignOp align) {
  TransducerLattice lattice(f, align.getJoint(), align.getLabels(),
                            f.operand(align, 0), f.operand(align, 1),
                            align.getInputKind(), align.getTopology(),
                            align.getBlank());
  if (align.getTopology() == ir::TransducerTopology::rnnt) {
    // The computed dim A: each path's T + U positions.
    std::vector<std::vector<int64_t>> paths;
    Array score = zeros({lattice.batch});
    int64_t longest = 1;
    for (int64_t b = 0; b < lattice.batch; ++b) {
      auto [classes, best] = lattice.bestRnntPath(b);
      paths.push_back(classes);
      score.data[b] = best;
      longest = std::max<int64_t>(longest, classes.size());
    }
    std::string dim = typeOf(align.getAlignment()).getDimName(1).str();
    f.sizes[dim] = longest;
    f.lengths[dim].clear();
    Array path = zeros({lattice.batch, longest});
    std::fill(path.data.begin(), path.data.end(), -1.0);
    for (int64_t b = 0; b < lattice.batch; ++b) {
      f.lengths[dim].push_back((int64_t)paths[b].size());
      for (size_t k = 0; k < paths[b].size(); ++k)
        path.data[b * longest + k] = (double)paths[b][k];
    }
    f.deriveDims();
    f.setResult(align, path, 0);
    f.setResult(align, score, 1);
    return;
  }
  std::vector<int64_t> shape = f.shape(typeOf(align.getAlignment()));
  Array path = zeros(shape), score = zeros({lattice.batch});
  std::fill(path.data.begin(), path.data.end(), -1.0);
  for (int64_t b = 0; b < lattice.batch; ++b) {
    auto [classes, best] = lattice.bestPath(b);
    for (size_t t = 0; t < classes.size(); ++t)
      path.data[b * shape[1] + t] = (double)classes[t];
    score.data[b] = best;
  }
  f.setResult(align, path, 0);
  f.setResult(align, score, 1);
}

void evalTransducerLossGradOp(Frame &f, ir::TransducerLossGradOp grad) {
  const Array &g = f.operand(grad, 0);
  TransducerLattice lattice(f, grad.getJoint(), grad.getLabels(),
                            f.operand(grad, 1), f.operand(grad, 2),
                            grad.getInputKind(), grad.getTopology(),
                            grad.getBlank());
  bool fromLogits = grad.getInputKind() == ir::LossInput::logits;
  int64_t classes = lattice.classes;
  Array dx = zeros(f.operand(grad, 1).shape);
  for (int64_t b = 0; b < lattice.batch; ++b) {
    TransducerLattice::Solution s = lattice.solve(b);
    lattice.grid.forEachRow([&](int64_t rb, int64_t t, int64_t u, int64_t row) {
      if (rb != b)
        return;
      double *out = &dx.data[row * classes];
      if (s.logP == -kInf) {
        double v = grad.getZeroInfinity()
                       ? 0.0
                       : std::numeric_limits<double>::quiet_NaN();
        for (int64_t k = 0; k < classes; ++k)
          out[k] = v;
        return;
      }
      // gamma_k: the paths through (t, u) that emit k there.
      double gBlank = std::exp(s.alpha[t][u] + lattice.lp(row, lattice.blank) +
                               s.afterBlank(t, u) - s.logP);
      double gLabel =
          u < s.labels
              ? std::exp(s.alpha[t][u] + lattice.lp(row, lattice.label(b, u)) +
                         s.afterLabel(t, u) - s.logP)
              : 0.0;
      double occupancy = gBlank + gLabel;
      for (int64_t k = 0; k < classes; ++k) {
        double gamma =
            (k == lattice.blank ? gBlank : 0.0) +
            (u < s.labels && k == lattice.label(b, u) ? gLabel : 0.0);
        double soft = fromLogits ? occupancy * std::exp(lattice.lp(row, k)) : 0;
        out[k] = g.data[b] * (soft - gamma);
      }
    });
  }
  f.setResult(grad, dx);
}

} // namespace

bool nn::reference::evaluateTransducerOp(Frame &f, Operation *op) {
  bool handled = true;
  llvm::TypeSwitch<Operation *>(op)
      .Case([&](ir::PrependStartOp o) { evalPrependStartOp(f, o); })
      .Case([&](ir::TransducerJoinOp o) { evalTransducerJoinOp(f, o); })
      .Case([&](ir::TransducerJoinGradOp o) { evalTransducerJoinGradOp(f, o); })
      .Case([&](ir::GatherStatesOp o) { evalGatherStatesOp(f, o); })
      .Case([&](ir::GatherStatesGradOp o) { evalGatherStatesGradOp(f, o); })
      .Case([&](ir::TransducerLossOp o) { evalTransducerLossOp(f, o); })
      .Case([&](ir::TransducerAlignOp o) { evalTransducerAlignOp(f, o); })
      .Case([&](ir::TransducerLossGradOp o) { evalTransducerLossGradOp(f, o); })
      .Default([&](Operation *) { handled = false; });
  return handled;
}
