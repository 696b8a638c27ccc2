//===- TransducerDecode.cpp - reference transducer decoding ---------------===//
//
// Written from the description of nn.transducer_greedy_decode, sharing
// nothing with the lowering: one sequence at a time, one row per callee
// call, the callee graphs evaluated by the reference's own graph walker.
//
//===----------------------------------------------------------------------===//

#include "Evaluators.h"

#include "mlir/IR/BuiltinOps.h"

#include <algorithm>

using namespace nn::reference;

namespace {

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
  auto predictor = symbols.lookup<ir::GraphOp>(op.getPredictor());

  std::vector<std::vector<int64_t>> hypotheses(batch);
  Array score = zeros({batch});
  for (int64_t b = 0; b < batch; ++b) {
    // The predictor's first step: start on zero states.
    std::vector<Array> step{zeros({1})};
    step[0].data[0] = (double)start;
    for (mlir::Type type : predictor.getArgumentTypes().drop_front()) {
      auto state = mlir::cast<ir::NNTensorType>(type);
      std::vector<int64_t> shape{1};
      for (unsigned i = 1; i < state.getRank(); ++i)
        shape.push_back(state.getStaticSize(i));
      step.push_back(zeros(shape));
    }
    std::vector<Array> predicted;
    if (absl::Status s = runRows(op.getPredictor(), 1, step, predicted);
        !s.ok())
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
        step = {zeros({1})};
        step[0].data[0] = (double)best;
        step.insert(step.end(), predicted.begin() + 1, predicted.end());
        if (absl::Status s = runRows(op.getPredictor(), 1, step, predicted);
            !s.ok())
          return s;
      }
  }

  setHypotheses(f, op, typeOf(op.getLabels()).getDimName(1).str(), hypotheses);
  f.setResult(op, score, 1);
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
  return false;
}
