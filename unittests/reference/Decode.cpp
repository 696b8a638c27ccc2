//===- Decode.cpp - reference evaluation of the decoding ops --------------===//
//
// Written from the op descriptions in NNDecodeOps.td, sharing nothing with
// the lowering: a decoder sets the sizes and lengths of the computed dim
// it produces, then the frame derives the dims that follow from it.
//
//===----------------------------------------------------------------------===//

#include "Evaluators.h"

#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/SymbolTable.h"

#include "llvm/ADT/TypeSwitch.h"

#include <algorithm>
#include <functional>
#include <map>
#include <optional>

using namespace nn::reference;

namespace {

void evalCtcGreedyDecodeOp(Frame &f, ir::CtcGreedyDecodeOp op) {
  ir::NNTensorType scoresType = typeOf(op.getScores());
  const Array &scores = f.operand(op, 0);
  bool packed = scoresType.getRank() == 2;
  std::string sequence =
      packed ? f.table.lookup(scoresType.getDimName(0)).getSource().str()
             : scoresType.getDimName(1).str();
  const std::vector<int64_t> &frames = f.lengths.at(sequence);
  int64_t batch = frames.size(), classes = scores.shape.back();
  int64_t blank = op.getBlank();
  bool logits = op.getInputKind() == ir::LossInput::logits;

  std::vector<std::vector<int64_t>> hypotheses(batch);
  Array score = zeros({batch});
  int64_t row = 0; // packed: the next sequence's first row
  for (int64_t b = 0; b < batch; ++b) {
    int64_t previous = -1;
    for (int64_t t = 0; t < frames[b]; ++t) {
      const double *x =
          &scores
               .data[((packed ? row + t : b * scores.shape[1] + t)) * classes];
      // The first strict maximum: later equal values lose, NaN never wins.
      int64_t best = 0;
      double bestValue = -kInf;
      for (int64_t c = 0; c < classes; ++c)
        if (x[c] > bestValue) {
          best = c;
          bestValue = x[c];
        }
      double logProb = bestValue;
      if (logits) {
        double sum = 0;
        for (int64_t c = 0; c < classes; ++c)
          sum += std::exp(x[c] - bestValue);
        logProb = -std::log(sum);
      }
      score.data[b] += logProb;
      if (best != blank && best != previous)
        hypotheses[b].push_back(best);
      previous = best;
    }
    row += frames[b];
  }

  setHypotheses(f, op, typeOf(op.getLabels()).getDimName(1).str(), hypotheses);
  f.setResult(op, score, 1);
}

/// log(exp(a) + exp(b)), -inf when both are.
double logAdd(double a, double b) {
  if (a == -kInf)
    return b;
  if (b == -kInf)
    return a;
  double high = std::max(a, b);
  return high + std::log(std::exp(a - high) + std::exp(b - high));
}

/// The CTC prefix beam search of one sequence, from the op's description:
/// each prefix keeps (ends in blank, ends in its last label); per frame a
/// blank keeps a prefix, its last label repeated collapses into it, any
/// allowed other label (or the same after a blank) extends it; the `beam`
/// best by score, then fewer labels, then lexicographically smaller, stay.
/// Returns the surviving hypotheses and their scores, best first (none
/// when no path exists).
/// Shallow fusion: `next` gives log p_lm(c | prefix) for every class c;
/// extending a prefix by c adds weight times that to its LM score, and a
/// prefix ranks by its acoustic score + LM score + bonus per label; `end`
/// (unless -1) adds weight · log p_lm(end | y) to each final hypothesis.
struct LmFusion {
  std::function<absl::Status(const std::vector<int64_t> &,
                             std::vector<double> &)>
      next;
  double weight = 0, bonus = 0;
  int64_t end = -1;
};

std::vector<std::pair<std::vector<int64_t>, double>>
prefixSearch(const std::vector<std::vector<double>> &frames, int64_t blank,
             int64_t beam, bool mergeMax, int64_t tokenBeam,
             double tokenThreshold, double scoreBeam,
             const LmFusion *lm = nullptr, absl::Status *status = nullptr) {
  using Prefix = std::vector<int64_t>;
  // The LM's part of each prefix's rank (0 without a language model).
  std::map<Prefix, double> lmScore{{Prefix(), 0.0}};
  auto lmRow = [&](const Prefix &prefix, std::vector<double> &row) {
    absl::Status s = lm->next(prefix, row);
    if (!s.ok() && status && status->ok())
      *status = s;
    for (double &v : row)
      v = std::isnan(v) ? -kInf : lm->weight * v;
  };
  auto rankOf = [&](const Prefix &prefix, double acoustic) {
    if (!lm)
      return acoustic;
    return acoustic + (lmScore.at(prefix) + lm->bonus * prefix.size());
  };
  bool fused = lm && lm->weight > 0;
  struct Scores {
    double blank = -kInf, label = -kInf;
  };
  auto combine = [&](double a, double b) {
    return mergeMax ? std::max(a, b) : logAdd(a, b);
  };
  // Higher score first, then fewer labels, then the smaller sequence.
  auto better = [](const std::pair<Prefix, double> &a,
                   const std::pair<Prefix, double> &b) {
    if (a.second != b.second)
      return a.second > b.second;
    if (a.first.size() != b.first.size())
      return a.first.size() < b.first.size();
    return a.first < b.first;
  };
  std::map<Prefix, Scores> prefixes;
  prefixes[{}] = Scores{0.0, -kInf};
  for (const std::vector<double> &raw : frames) {
    std::vector<double> x = raw;
    for (double &v : x)
      if (std::isnan(v))
        v = -kInf;
    int64_t classes = x.size();
    // The classes extensions may use: the `tokenBeam` best (blank
    // counted, lower index first among equal scores), within the
    // threshold of the best.
    std::vector<int64_t> order(classes);
    for (int64_t c = 0; c < classes; ++c)
      order[c] = c;
    std::stable_sort(order.begin(), order.end(),
                     [&](int64_t a, int64_t b) { return x[a] > x[b]; });
    if (tokenBeam > 0 && tokenBeam < classes)
      order.resize(tokenBeam);
    double top = x[order.front()];
    std::vector<int64_t> allowed;
    for (int64_t c : order)
      if (c != blank && x[c] >= top - tokenThreshold)
        allowed.push_back(c);

    std::map<Prefix, Scores> next;
    std::vector<double> row;
    for (const auto &[prefix, scores] : prefixes) {
      double total = combine(scores.blank, scores.label);
      if (fused && !allowed.empty())
        lmRow(prefix, row);
      Scores &same = next[prefix];
      same.blank = combine(same.blank, total + x[blank]);
      if (!prefix.empty())
        same.label = combine(same.label, scores.label + x[prefix.back()]);
      for (int64_t c : allowed) {
        Prefix longer = prefix;
        longer.push_back(c);
        double from =
            !prefix.empty() && prefix.back() == c ? scores.blank : total;
        Scores &extended = next[longer];
        extended.label = combine(extended.label, from + x[c]);
        if (lm)
          lmScore[longer] = lmScore.at(prefix) + (fused ? row[c] : 0.0);
      }
    }
    std::vector<std::pair<Prefix, double>> ranked;
    double best = -kInf;
    for (const auto &[prefix, scores] : next) {
      double score = rankOf(prefix, combine(scores.blank, scores.label));
      if (score > -kInf)
        ranked.push_back({prefix, score});
      best = std::max(best, score);
    }
    std::sort(ranked.begin(), ranked.end(), better);
    prefixes.clear();
    for (const auto &[prefix, score] : ranked) {
      if ((int64_t)prefixes.size() == beam || score < best - scoreBeam)
        break;
      prefixes[prefix] = next[prefix];
    }
  }
  std::vector<std::pair<Prefix, double>> final;
  for (const auto &[prefix, scores] : prefixes) {
    double score = rankOf(prefix, combine(scores.blank, scores.label));
    if (fused && lm->end >= 0) {
      std::vector<double> row;
      lmRow(prefix, row);
      score += row[lm->end];
    }
    if (score > -kInf)
      final.push_back({prefix, score});
  }
  std::sort(final.begin(), final.end(), better);
  return final;
}

/// log p_lm(· | prefix) of LM graph `op.getLm()` for one sequence: the
/// graph run on one row per prefix, from `start` on zero states, each
/// prefix's run continuing its parent's state; memoized per prefix.
class ReferenceLm {
public:
  ReferenceLm(ir::CtcBeamSearchOp op, const RowGraphRunner &runRows)
      : op(op), runRows(runRows) {}

  absl::Status next(const std::vector<int64_t> &prefix,
                    std::vector<double> &logProbs) {
    auto it = memo.find(prefix);
    if (it == memo.end()) {
      std::vector<Array> arguments{zeros({1})};
      if (prefix.empty()) {
        arguments[0].data[0] = (double)*op.getLmStart();
        mlir::SymbolTable symbols(op->getParentOfType<mlir::ModuleOp>());
        auto graph = symbols.lookup<ir::GraphOp>(*op.getLm());
        for (mlir::Type type : graph.getArgumentTypes().drop_front()) {
          auto state = mlir::cast<ir::NNTensorType>(type);
          std::vector<int64_t> shape{1};
          for (unsigned i = 1; i < state.getRank(); ++i)
            shape.push_back(state.getStaticSize(i));
          arguments.push_back(zeros(shape));
        }
      } else {
        std::vector<int64_t> parent(prefix.begin(), prefix.end() - 1);
        std::vector<double> unused;
        if (absl::Status s = next(parent, unused); !s.ok())
          return s;
        arguments[0].data[0] = (double)prefix.back();
        const std::vector<Array> &state = memo.at(parent).state;
        arguments.insert(arguments.end(), state.begin(), state.end());
      }
      std::vector<Array> results;
      if (absl::Status s = runRows(*op.getLm(), 1, arguments, results); !s.ok())
        return s;
      Entry entry;
      entry.logProbs = results[0].data;
      if (op.getLmInput() == ir::LossInput::logits) {
        double top = -kInf, sum = 0;
        for (double v : entry.logProbs)
          top = std::max(top, v);
        for (double v : entry.logProbs)
          sum += std::exp(v - top);
        for (double &v : entry.logProbs)
          v = v - top - std::log(sum);
      }
      entry.state.assign(results.begin() + 1, results.end());
      it = memo.emplace(prefix, std::move(entry)).first;
    }
    logProbs = it->second.logProbs;
    return absl::OkStatus();
  }

private:
  struct Entry {
    std::vector<double> logProbs;
    std::vector<Array> state;
  };
  ir::CtcBeamSearchOp op;
  const RowGraphRunner &runRows;
  std::map<std::vector<int64_t>, Entry> memo;
};

/// `runRows` evaluates the LM graph; null when the op has none.
absl::Status evalCtcBeamSearchOp(Frame &f, ir::CtcBeamSearchOp op,
                                 const RowGraphRunner *runRows = nullptr) {
  if (op.getLm() && !runRows)
    return absl::InvalidArgumentError(
        "reference: nn.ctc_beam_search with an lm needs a graph runner");
  ir::NNTensorType scoresType = typeOf(op.getScores());
  bool packed = scoresType.getRank() == 2;
  Array lp = op.getInputKind() == ir::LossInput::logits
                 ? logSoftmax(f.operand(op, 0))
                 : f.operand(op, 0);
  std::string sequence =
      packed ? f.table.lookup(scoresType.getDimName(0)).getSource().str()
             : scoresType.getDimName(1).str();
  const std::vector<int64_t> &lengths = f.lengths.at(sequence);
  int64_t batch = lengths.size(), classes = lp.shape.back();
  double inf = kInf;
  int64_t tokenBeam = op.getTokenBeam() ? (int64_t)*op.getTokenBeam() : 0;
  double tokenThreshold =
      op.getTokenThreshold() ? op.getTokenThreshold()->convertToDouble() : inf;
  double scoreBeam =
      op.getScoreBeam() ? op.getScoreBeam()->convertToDouble() : inf;

  std::vector<std::vector<std::pair<std::vector<int64_t>, double>>> lists;
  int64_t row = 0;
  for (int64_t b = 0; b < batch; ++b) {
    std::vector<std::vector<double>> frames;
    for (int64_t t = 0; t < lengths[b]; ++t) {
      int64_t at = packed ? row + t : b * lp.shape[1] + t;
      frames.emplace_back(lp.data.begin() + at * classes,
                          lp.data.begin() + (at + 1) * classes);
    }
    row += lengths[b];
    std::optional<ReferenceLm> model;
    LmFusion fusion;
    if (op.getLm()) {
      model.emplace(op, *runRows);
      fusion.next = [&](const std::vector<int64_t> &prefix,
                        std::vector<double> &logProbs) {
        return model->next(prefix, logProbs);
      };
      fusion.weight = op.getLmWeight()->convertToDouble();
      fusion.bonus =
          op.getLengthBonus() ? op.getLengthBonus()->convertToDouble() : 0.0;
      fusion.end = op.getLmEnd() ? (int64_t)*op.getLmEnd() : -1;
    }
    absl::Status status;
    lists.push_back(prefixSearch(frames, op.getBlank(), op.getBeam(),
                                 op.getMerge() == ir::CtcMerge::max, tokenBeam,
                                 tokenThreshold, scoreBeam,
                                 op.getLm() ? &fusion : nullptr, &status));
    if (!status.ok())
      return status;
  }
  setBeamResults(f, op, typeOf(op.getLabels()), lists);
  return absl::OkStatus();
}

} // namespace

void nn::reference::setBeamResults(
    Frame &f, Operation *op, ir::NNTensorType labelsType,
    const std::vector<std::vector<std::pair<std::vector<int64_t>, double>>>
        &lists) {
  int64_t batch = lists.size();
  if (labelsType.getRank() == 2) {
    // The best of each list; the empty hypothesis and -inf without one.
    std::vector<std::vector<int64_t>> hypotheses(batch);
    Array score = zeros({batch});
    for (int64_t b = 0; b < batch; ++b) {
      score.data[b] = lists[b].empty() ? -kInf : lists[b].front().second;
      if (!lists[b].empty())
        hypotheses[b] = lists[b].front().first;
    }
    setHypotheses(f, op, labelsType.getDimName(1).str(), hypotheses);
    f.setResult(op, score, 1);
    return;
  }
  // N-best: K counts each list, H = flatten(B, K) follows, Y holds each
  // hypothesis's length at its flat entry.
  std::string beamDim = labelsType.getDimName(1).str();
  std::string labelDim = labelsType.getDimName(2).str();
  int64_t longestList = 1, longest = 1;
  std::vector<int64_t> counts, hypothesisLengths;
  for (const auto &list : lists) {
    counts.push_back(list.size());
    longestList = std::max<int64_t>(longestList, list.size());
    for (const auto &[labels, value] : list) {
      hypothesisLengths.push_back(labels.size());
      longest = std::max<int64_t>(longest, labels.size());
    }
  }
  f.sizes[beamDim] = longestList;
  f.lengths[beamDim] = counts;
  f.deriveDims();
  f.sizes[labelDim] = longest;
  f.lengths[labelDim] = hypothesisLengths;
  f.deriveDims();
  Array labels = zeros({batch, longestList, longest});
  Array score = zeros({batch, longestList});
  for (int64_t b = 0; b < batch; ++b)
    for (size_t k = 0; k < lists[b].size(); ++k) {
      score.data[b * longestList + k] = lists[b][k].second;
      for (size_t u = 0; u < lists[b][k].first.size(); ++u)
        labels.data[(b * longestList + k) * longest + u] = lists[b][k].first[u];
    }
  f.setResult(op, labels, 0);
  f.setResult(op, score, 1);
}

void nn::reference::setHypotheses(
    Frame &f, Operation *op, const std::string &dim,
    const std::vector<std::vector<int64_t>> &hypotheses) {
  int64_t batch = hypotheses.size(), longest = 1;
  std::vector<int64_t> counts;
  for (const std::vector<int64_t> &h : hypotheses) {
    counts.push_back(h.size());
    longest = std::max<int64_t>(longest, h.size());
  }
  f.sizes[dim] = longest;
  f.lengths[dim] = counts;
  f.deriveDims();
  Array labels = zeros({batch, longest});
  for (int64_t b = 0; b < batch; ++b)
    for (size_t u = 0; u < hypotheses[b].size(); ++u)
      labels.data[b * longest + u] = hypotheses[b][u];
  f.setResult(op, labels, 0);
}

bool nn::reference::evaluateDecodeOp(Frame &f, Operation *op) {
  bool handled = true;
  llvm::TypeSwitch<Operation *>(op)
      .Case([&](ir::CtcGreedyDecodeOp o) { evalCtcGreedyDecodeOp(f, o); })
      .Case([&](ir::CtcBeamSearchOp o) {
        // Reference.cpp evaluates a search with an LM through
        // evaluateCtcBeamSearchOp.
        (void)evalCtcBeamSearchOp(f, o);
      })
      .Default([&](Operation *) { handled = false; });
  return handled;
}

absl::Status
nn::reference::evaluateCtcBeamSearchOp(Frame &f, Operation *op,
                                       const RowGraphRunner &runRows) {
  return evalCtcBeamSearchOp(f, mlir::cast<ir::CtcBeamSearchOp>(op), &runRows);
}
