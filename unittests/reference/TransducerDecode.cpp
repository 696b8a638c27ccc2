//===- TransducerDecode.cpp - reference transducer decoding ---------------===//
//
// Written from the descriptions of nn.transducer_greedy_decode and
// nn.transducer_beam_search, sharing nothing with the lowering or the
// runtime's search: one sequence at a time, one row per callee call, the
// callee graphs evaluated by the reference's own graph walker, hypotheses
// kept in std::maps keyed by their labels. A predictor in the sequence
// form (the training network) runs again on each whole label prefix, so
// no step graph derived from it is involved.
//
//===----------------------------------------------------------------------===//

#include "Evaluators.h"

#include "mlir/IR/BuiltinOps.h"

#include <algorithm>
#include <cmath>
#include <map>

using namespace nn::reference;

namespace {

/// The predictor one label at a time, in either of its forms
/// (nn.transducer_greedy_decode's description). A hypothesis's predictor
/// state is a list of arrays whose first is the output `[1, D]` after its
/// labels. The step form keeps its state tensors after it. The sequence
/// form (the network as training runs it) keeps the labels so far, the
/// start symbol first, and runs on the whole prefix again for each label,
/// its output at the last position taken: what training computes there,
/// by the reference's own nn.lstm and frame-wise ops.
class PredictorSteps {
public:
  PredictorSteps(mlir::SymbolTable &symbols, llvm::StringRef name,
                 const RowGraphRunner &runRows)
      : name(name), runRows(runRows) {
    auto graph = symbols.lookup<ir::GraphOp>(name);
    sequenceForm = ir::DimTable(graph.getDims()).getDecls().size() == 2;
    if (sequenceForm)
      return;
    // The step form's states, one row each.
    for (mlir::Type type : graph.getArgumentTypes().drop_front()) {
      auto state = mlir::cast<ir::NNTensorType>(type);
      std::vector<int64_t> shape{1};
      for (unsigned i = 1; i < state.getRank(); ++i)
        shape.push_back(state.getStaticSize(i));
      stateShapes.push_back(shape);
    }
  }

  /// The state after the start symbol: zero states in the step form.
  absl::Status begin(int64_t start, std::vector<Array> &out) const {
    if (sequenceForm)
      return runPrefix({(double)start}, out);
    std::vector<Array> step{zeros({1})};
    step[0].data[0] = (double)start;
    for (const std::vector<int64_t> &shape : stateShapes)
      step.push_back(zeros(shape));
    return runRows(name, 1, step, out);
  }

  /// The state after `label` from `from`.
  absl::Status advance(const std::vector<Array> &from, int64_t label,
                       std::vector<Array> &out) const {
    if (sequenceForm) {
      std::vector<double> prefix = from[1].data;
      prefix.push_back((double)label);
      return runPrefix(prefix, out);
    }
    std::vector<Array> step{zeros({1})};
    step[0].data[0] = (double)label;
    step.insert(step.end(), from.begin() + 1, from.end());
    return runRows(name, 1, step, out);
  }

private:
  /// The sequence form on one row of labels `prefix`: {its output at the
  /// last position [1, D], the prefix [1, L]}.
  absl::Status runPrefix(const std::vector<double> &prefix,
                         std::vector<Array> &out) const {
    auto length = (int64_t)prefix.size();
    Array labels = zeros({1, length});
    labels.data = prefix;
    std::vector<Array> results;
    if (absl::Status s = runRows(name, 1, {labels}, results); !s.ok())
      return s;
    const Array &all = results[0]; // [1, L, D]
    int64_t width = all.shape[2];
    Array last = zeros({1, width});
    for (int64_t d = 0; d < width; ++d)
      last.data[d] = all.data[(length - 1) * width + d];
    out = {last, labels};
    return absl::OkStatus();
  }

  llvm::StringRef name;
  const RowGraphRunner &runRows;
  bool sequenceForm;
  std::vector<std::vector<int64_t>> stateShapes;
};

/// Greedy decoding of each sequence on its own: the predictor starts from
/// `start` on zero states; per frame, up to `rounds` decisions, each the
/// first class with the largest logit of joiner(encoder frame + predictor
/// output), scored with its log-softmax; a label advances the predictor,
/// the blank ends the frame.
absl::Status evalTransducerGreedyDecodeOp(Frame &f,
                                          ir::TransducerGreedyDecodeOp op,
                                          const RowGraphRunner &runRows) {
  ir::NNTensorType encoderType = typeOf(op.getEncoder());
  const Array &encoder = f.operand(op, 0);
  const std::vector<int64_t> &frames =
      f.lengths.at(encoderType.getDimName(1).str());
  int64_t batch = frames.size(), padded = encoder.shape[1],
          width = encoder.shape[2];
  int64_t blank = op.getBlank(), start = op.getStart();
  int64_t rounds = op.getRoundsPerFrame();
  mlir::SymbolTable symbols(op->getParentOfType<mlir::ModuleOp>());
  PredictorSteps predictor(symbols, op.getPredictor(), runRows);

  std::vector<std::vector<int64_t>> hypotheses(batch);
  Array score = zeros({batch});
  for (int64_t b = 0; b < batch; ++b) {
    std::vector<Array> predicted;
    if (absl::Status s = predictor.begin(start, predicted); !s.ok())
      return s;
    for (int64_t t = 0; t < frames[b]; ++t)
      for (int64_t r = 0; r < rounds; ++r) {
        Array joined = zeros({1, width});
        for (int64_t d = 0; d < width; ++d)
          joined.data[d] =
              encoder.data[(b * padded + t) * width + d] + predicted[0].data[d];
        std::vector<Array> logits;
        if (absl::Status s = runRows(op.getJoiner(), 1, {joined}, logits);
            !s.ok())
          return s;
        const std::vector<double> &z = logits[0].data;
        // The first strict maximum: later equal values lose, NaN never
        // wins; none above -inf gives class 0.
        int64_t best = 0;
        double bestValue = -kInf;
        for (size_t c = 0; c < z.size(); ++c)
          if (z[c] > bestValue) {
            best = c;
            bestValue = z[c];
          }
        double sum = 0;
        for (double v : z)
          sum += std::exp(v - bestValue);
        score.data[b] += -std::log(sum);
        if (best == blank)
          break;
        hypotheses[b].push_back(best);
        std::vector<Array> before = std::move(predicted);
        if (absl::Status s = predictor.advance(before, best, predicted);
            !s.ok())
          return s;
      }
  }

  setHypotheses(f, op, typeOf(op.getLabels()).getDimName(1).str(), hypotheses);
  f.setResult(op, score, 1);
  return absl::OkStatus();
}

/// A hypothesis of the reference beam search: its score and the
/// predictor's output and states after its labels.
struct Beam {
  double score = 0;
  std::vector<Array> predicted;
};
using Beams = std::map<std::vector<int64_t>, Beam>;

double logSum(double a, double b) {
  if (a == -kInf)
    return b;
  if (b == -kInf)
    return a;
  double m = std::max(a, b);
  return m + std::log(std::exp(a - m) + std::exp(b - m));
}

/// The `beam` best of `all`: higher score, then shorter, then
/// lexicographically smaller labels; -inf scores dropped.
std::vector<std::vector<int64_t>> bestOf(const Beams &all, int64_t beam) {
  std::vector<std::vector<int64_t>> keys;
  for (const auto &[labels, hypothesis] : all)
    if (hypothesis.score > -kInf)
      keys.push_back(labels);
  std::stable_sort(keys.begin(), keys.end(), [&](const auto &a, const auto &b) {
    double sa = all.at(a).score, sb = all.at(b).score;
    if (sa != sb)
      return sa > sb;
    return a.size() < b.size(); // the map order is lexicographic
  });
  if ((int64_t)keys.size() > beam)
    keys.resize(beam);
  return keys;
}

/// Beam search of each sequence on its own, as the description of
/// nn.transducer_beam_search states it: rna frame-synchronous, rnnt
/// time-synchronous with max_symbols + 1 rounds per frame.
absl::Status evalTransducerBeamSearchOp(Frame &f, ir::TransducerBeamSearchOp op,
                                        const RowGraphRunner &runRows) {
  ir::NNTensorType encoderType = typeOf(op.getEncoder());
  const Array &encoder = f.operand(op, 0);
  const std::vector<int64_t> &frames =
      f.lengths.at(encoderType.getDimName(1).str());
  int64_t batch = frames.size(), padded = encoder.shape[1],
          width = encoder.shape[2];
  int64_t blank = op.getBlank(), start = op.getStart();
  auto beam = static_cast<int64_t>(op.getBeam());
  bool rnnt = op.getTopology() == ir::TransducerTopology::rnnt;
  int64_t maxSymbols = rnnt ? static_cast<int64_t>(*op.getMaxSymbols()) : 0;
  mlir::SymbolTable symbols(op->getParentOfType<mlir::ModuleOp>());
  PredictorSteps predictor(symbols, op.getPredictor(), runRows);
  // log p(c | t, y) for every class.
  auto logProbs = [&](int64_t b, int64_t t, const Beam &h,
                      std::vector<double> &out) -> absl::Status {
    Array joined = zeros({1, width});
    for (int64_t d = 0; d < width; ++d)
      joined.data[d] =
          encoder.data[(b * padded + t) * width + d] + h.predicted[0].data[d];
    std::vector<Array> logits;
    if (absl::Status s = runRows(op.getJoiner(), 1, {joined}, logits); !s.ok())
      return s;
    out = logits[0].data;
    double top = -kInf;
    for (double z : out)
      top = std::max(top, z);
    double sum = 0;
    for (double z : out)
      sum += std::exp(z - top);
    for (double &z : out)
      z = std::isnan(z) ? -kInf : z - top - std::log(sum);
    return absl::OkStatus();
  };

  std::vector<std::vector<std::pair<std::vector<int64_t>, double>>> lists(
      batch);
  for (int64_t b = 0; b < batch; ++b) {
    Beam empty;
    if (absl::Status s = predictor.begin(start, empty.predicted); !s.ok())
      return s;
    Beams current{{{}, empty}};
    for (int64_t t = 0; t < frames[b]; ++t) {
      // Candidates: labels -> (score, the hypothesis extended, label or -1).
      struct Candidate {
        double score = -kInf;
        std::vector<int64_t> parent;
        int64_t label = -1;
        bool set = false;
      };
      if (!rnnt) {
        std::map<std::vector<int64_t>, Candidate> next;
        for (const auto &[labels, h] : current) {
          std::vector<double> x;
          if (absl::Status s = logProbs(b, t, h, x); !s.ok())
            return s;
          for (int64_t c = 0; c < (int64_t)x.size(); ++c) {
            std::vector<int64_t> y = labels;
            if (c != blank)
              y.push_back(c);
            Candidate &into = next[y];
            into.score = logSum(into.score, h.score + x[c]);
            // Any contributor's predictor state is the state after y;
            // prefer the one already computed (the blank's).
            if (!into.set || c == blank) {
              into.parent = labels;
              into.label = c == blank ? -1 : c;
              into.set = true;
            }
          }
        }
        Beams scored;
        for (const auto &[labels, c] : next)
          scored[labels].score = c.score;
        Beams kept;
        for (const auto &labels : bestOf(scored, beam)) {
          const Candidate &c = next.at(labels);
          Beam h;
          h.score = c.score;
          if (c.label < 0)
            h.predicted = current.at(c.parent).predicted;
          else if (absl::Status s = predictor.advance(
                       current.at(c.parent).predicted, c.label, h.predicted);
                   !s.ok())
            return s;
          kept[labels] = h;
        }
        current = kept;
        continue;
      }
      // rnnt: the frame's result set, and rounds of label expansions.
      Beams ended;
      Beams round = current;
      for (int64_t r = 0; r <= maxSymbols && !round.empty(); ++r) {
        Beams expanded;
        std::map<std::vector<int64_t>, Candidate> origin;
        for (const auto &[labels, h] : round) {
          std::vector<double> x;
          if (absl::Status s = logProbs(b, t, h, x); !s.ok())
            return s;
          double score = h.score + x[blank];
          auto found = ended.find(labels);
          if (found != ended.end())
            found->second.score = logSum(found->second.score, score);
          else if (score > -kInf)
            ended[labels] = {score, h.predicted};
          if (r == maxSymbols)
            continue;
          for (int64_t c = 0; c < (int64_t)x.size(); ++c) {
            if (c == blank)
              continue;
            std::vector<int64_t> y = labels;
            y.push_back(c);
            expanded[y].score = logSum(
                expanded.count(y) ? expanded[y].score : -kInf, h.score + x[c]);
            origin[y] = {0, labels, c, true};
          }
        }
        Beams next;
        for (const auto &labels : bestOf(expanded, beam)) {
          Beam h;
          h.score = expanded.at(labels).score;
          const Candidate &c = origin.at(labels);
          if (absl::Status s = predictor.advance(round.at(c.parent).predicted,
                                                 c.label, h.predicted);
              !s.ok())
            return s;
          next[labels] = h;
        }
        round = next;
      }
      Beams kept;
      for (const auto &labels : bestOf(ended, beam))
        kept[labels] = ended.at(labels);
      current = kept;
    }
    for (const auto &labels : bestOf(current, beam))
      lists[b].push_back({labels, current.at(labels).score});
  }

  setBeamResults(f, op, typeOf(op.getLabels()), lists);
  return absl::OkStatus();
}

} // namespace

bool nn::reference::evaluateCalleeDecodeOp(Frame &f, Operation *op,
                                           const RowGraphRunner &runRows,
                                           absl::Status &status) {
  if (auto decode = mlir::dyn_cast<ir::TransducerGreedyDecodeOp>(op)) {
    status = evalTransducerGreedyDecodeOp(f, decode, runRows);
    return true;
  }
  if (auto search = mlir::dyn_cast<ir::TransducerBeamSearchOp>(op)) {
    status = evalTransducerBeamSearchOp(f, search, runRows);
    return true;
  }
  return false;
}
