//===- Decode.cpp - reference evaluation of the decoding ops --------------===//
//
// Written from the op descriptions in NNDecodeOps.td, sharing nothing with
// the lowering: a decoder sets the sizes and lengths of the computed dim
// it produces, then the frame derives the dims that follow from it.
//
//===----------------------------------------------------------------------===//

#include "Evaluators.h"

#include "llvm/ADT/TypeSwitch.h"

#include <algorithm>

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

  int64_t longest = 1;
  std::vector<int64_t> counts;
  for (const std::vector<int64_t> &h : hypotheses) {
    counts.push_back(h.size());
    longest = std::max<int64_t>(longest, h.size());
  }
  std::string dim = typeOf(op.getLabels()).getDimName(1).str();
  f.sizes[dim] = longest;
  f.lengths[dim] = counts;
  f.deriveDims();
  Array labels = zeros({batch, longest});
  for (int64_t b = 0; b < batch; ++b)
    for (size_t u = 0; u < hypotheses[b].size(); ++u)
      labels.data[b * longest + u] = hypotheses[b][u];
  f.setResult(op, labels, 0);
  f.setResult(op, score, 1);
}

} // namespace

bool nn::reference::evaluateDecodeOp(Frame &f, Operation *op) {
  bool handled = true;
  llvm::TypeSwitch<Operation *>(op)
      .Case([&](ir::CtcGreedyDecodeOp o) { evalCtcGreedyDecodeOp(f, o); })
      .Default([&](Operation *) { handled = false; });
  return handled;
}
