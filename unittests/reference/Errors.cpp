//===- Errors.cpp - reference evaluation of edit distances and risks ------===//
//
// nn.edit_distance written from its description: each sequence's tokens
// (its labels, or with `words` the label lists between separators), the
// whole Levenshtein table, then a backtrace from its last cell that takes
// the diagonal, then the deletion, then the insertion, whichever first
// explains the cell's value (dialects/nn/NNErrorOps.td). nn.expected_risk
// and its gradient: each sequence's softmax over its hypotheses, then the
// sums of the description, one hypothesis at a time.
//
//===----------------------------------------------------------------------===//

#include "Evaluators.h"

#include "llvm/ADT/TypeSwitch.h"

#include <algorithm>

using namespace nn::reference;

namespace {

/// A token of nn.edit_distance: one label, or with `words` the labels of
/// one word.
using Token = std::vector<double>;

/// The tokens of the first `length` labels of row b of `labels`: each
/// label, or with `words` the words between labels equal to `separator`.
std::vector<Token> tokensOf(const Array &labels, int64_t b, int64_t length,
                            bool words, double separator) {
  std::vector<Token> tokens;
  Token word;
  for (int64_t i = 0; i < length; ++i) {
    double label = labels.data[b * labels.shape[1] + i];
    if (!words) {
      tokens.push_back({label});
    } else if (label == separator) {
      if (!word.empty())
        tokens.push_back(word);
      word.clear();
    } else {
      word.push_back(label);
    }
  }
  if (!word.empty())
    tokens.push_back(word);
  return tokens;
}

void evalEditDistanceOp(Frame &f, ir::EditDistanceOp op) {
  const Array &hyp = f.operand(op, 0), &ref = f.operand(op, 1);
  const std::vector<int64_t> &hypLengths =
      f.lengths.at(typeOf(op.getHyp()).getDimName(1).str());
  const std::vector<int64_t> &refLengths =
      f.lengths.at(typeOf(op.getRef()).getDimName(1).str());
  bool words = op.getSeparator().has_value();
  double separator = words ? (double)*op.getSeparator() : 0;
  int64_t batch = hyp.shape[0];
  Array errors = zeros({batch}), lengths = zeros({batch}),
        counts = zeros({batch, 3});
  for (int64_t b = 0; b < batch; ++b) {
    std::vector<Token> h = tokensOf(hyp, b, hypLengths[b], words, separator);
    std::vector<Token> r = tokensOf(ref, b, refLengths[b], words, separator);
    int64_t rows = h.size(), columns = r.size();
    // d[i][j]: the distance between the first i hypothesis tokens and the
    // first j reference tokens.
    std::vector<std::vector<int64_t>> d(rows + 1,
                                        std::vector<int64_t>(columns + 1));
    for (int64_t i = 0; i <= rows; ++i)
      for (int64_t j = 0; j <= columns; ++j) {
        if (i == 0 || j == 0) {
          d[i][j] = i + j;
          continue;
        }
        d[i][j] = std::min({d[i - 1][j - 1] + (h[i - 1] != r[j - 1]),
                            d[i][j - 1] + 1, d[i - 1][j] + 1});
      }
    int64_t substitutions = 0, insertions = 0, deletions = 0;
    for (int64_t i = rows, j = columns; i > 0 || j > 0;) {
      if (i > 0 && j > 0) {
        int64_t mismatch = h[i - 1] != r[j - 1];
        if (d[i][j] == d[i - 1][j - 1] + mismatch) {
          substitutions += mismatch;
          --i, --j;
          continue;
        }
      }
      if (j > 0 && d[i][j] == d[i][j - 1] + 1) {
        ++deletions;
        --j;
      } else {
        ++insertions;
        --i;
      }
    }
    errors.data[b] = (double)d[rows][columns];
    lengths.data[b] = (double)columns;
    counts.data[b * 3] = (double)substitutions;
    counts.data[b * 3 + 1] = (double)insertions;
    counts.data[b * 3 + 2] = (double)deletions;
  }
  f.setResult(op, errors, 0);
  f.setResult(op, lengths, 1);
  f.setResult(op, counts, 2);
}

/// The renormalized scores P_k of sequence b's first `n` hypotheses, from
/// nll[b, k] at `nll(k)`; empty when the rule makes the sequence's result 0
/// (no hypotheses, or every nll +inf). NaN in, NaN out.
template <typename Nll>
std::vector<double> hypothesisPosteriors(int64_t n, Nll nll) {
  double smallest = kInf;
  bool nan = false;
  for (int64_t k = 0; k < n; ++k) {
    nan = nan || std::isnan(nll(k));
    smallest = std::min(smallest, nll(k));
  }
  if (nan)
    return std::vector<double>(n, std::nan(""));
  if (smallest == kInf)
    return {};
  std::vector<double> p(n);
  double total = 0;
  for (int64_t k = 0; k < n; ++k) {
    p[k] = std::exp(-(nll(k) - smallest));
    total += p[k];
  }
  for (int64_t k = 0; k < n; ++k)
    p[k] /= total;
  return p;
}

void evalExpectedRiskOp(Frame &f, ir::ExpectedRiskOp op) {
  const Array &nll = f.operand(op, 0), &err = f.operand(op, 1);
  const std::vector<int64_t> &counts =
      f.lengths.at(typeOf(op.getNll()).getDimName(1).str());
  int64_t batch = nll.shape[0], width = nll.shape[1];
  Array risk = zeros({batch});
  for (int64_t b = 0; b < batch; ++b) {
    int64_t n = counts[b];
    auto e = [&](int64_t k) { return err.data[b * width + k]; };
    std::vector<double> p = hypothesisPosteriors(
        n, [&](int64_t k) { return nll.data[b * width + k]; });
    if (p.empty())
      continue;
    double baseline = 0;
    if (op.getBaseline() == ir::RiskBaseline::mean) {
      for (int64_t k = 0; k < n; ++k)
        baseline += e(k);
      baseline /= (double)n;
    }
    for (int64_t k = 0; k < n; ++k)
      risk.data[b] += p[k] * (e(k) - baseline);
  }
  f.setResult(op, risk);
}

void evalExpectedRiskGradOp(Frame &f, ir::ExpectedRiskGradOp op) {
  const Array &grad = f.operand(op, 0), &nll = f.operand(op, 1),
              &err = f.operand(op, 2);
  const std::vector<int64_t> &counts =
      f.lengths.at(typeOf(op.getNll()).getDimName(1).str());
  int64_t batch = nll.shape[0], width = nll.shape[1];
  Array result = zeros(nll.shape);
  for (int64_t b = 0; b < batch; ++b) {
    int64_t n = counts[b];
    auto e = [&](int64_t k) { return err.data[b * width + k]; };
    std::vector<double> p = hypothesisPosteriors(
        n, [&](int64_t k) { return nll.data[b * width + k]; });
    if (p.empty())
      continue;
    double expected = 0;
    for (int64_t k = 0; k < n; ++k)
      expected += p[k] * e(k);
    for (int64_t j = 0; j < n; ++j)
      result.data[b * width + j] = -grad.data[b] * p[j] * (e(j) - expected);
  }
  f.setResult(op, result);
}

} // namespace

bool nn::reference::evaluateErrorOp(Frame &f, Operation *op) {
  bool handled = true;
  llvm::TypeSwitch<Operation *>(op)
      .Case([&](ir::EditDistanceOp o) { evalEditDistanceOp(f, o); })
      .Case([&](ir::ExpectedRiskOp o) { evalExpectedRiskOp(f, o); })
      .Case([&](ir::ExpectedRiskGradOp o) { evalExpectedRiskGradOp(f, o); })
      .Default([&](Operation *) { handled = false; });
  return handled;
}
