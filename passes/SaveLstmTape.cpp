//===- SaveLstmTape.cpp - the LSTM backward reads its forward's tape ------===//
//
// nn.lstm_grad recomputes its forward's cells and gates unless it is given
// them. When the forward is in the same graph (the usual case after
// nn-autodiff: a training graph), computing the tape there costs only the
// memory to keep it; recomputing costs the forward's recurrent GEMMs and
// gate math a second time. docs/autodiff.md, "LSTM".
//
//===----------------------------------------------------------------------===//

#include "passes/Passes.h"

#include "mlir/IR/Builders.h"

namespace mlir::nn {
#define DEBUG_TYPE "nn-save-lstm-tape"

#define GEN_PASS_DEF_NNSAVELSTMTAPE
#include "passes/Passes.h.inc"
} // namespace mlir::nn

using namespace mlir;
using namespace mlir::nn;

namespace {

/// The forward of `grad` in its block, an nn.lstm or nn.lstm_with_tape
/// of the same direction and operands, or null.
template <typename Forward> Forward forwardOf(LstmGradOp grad) {
  for (Operation *user : grad.getInput().getUsers()) {
    auto forward = dyn_cast<Forward>(user);
    if (forward && forward->getBlock() == grad->getBlock() &&
        forward->isBeforeInBlock(grad) &&
        forward.getDirection() == grad.getDirection() &&
        forward.getInputWeight() == grad.getInputWeight() &&
        forward.getRecurrentWeight() == grad.getRecurrentWeight() &&
        forward.getBias() == grad.getBias())
      return forward;
  }
  return {};
}

struct SaveLstmTapePass
    : public mlir::nn::impl::NNSaveLstmTapeBase<SaveLstmTapePass> {
  void runOnOperation() override {
    SmallVector<LstmGradOp> grads;
    getOperation().walk([&](LstmGradOp grad) {
      if (!grad.getTape())
        grads.push_back(grad);
    });
    for (LstmGradOp grad : grads) {
      // Two gradients of one lstm (its result marked twice) share a tape.
      Value tape;
      if (auto saved = forwardOf<LstmWithTapeOp>(grad)) {
        tape = saved.getTape();
      } else if (auto lstm = forwardOf<LstmOp>(grad)) {
        OpBuilder builder(lstm);
        auto resultType = cast<NNTensorType>(lstm.getType());
        auto saved = builder.create<LstmWithTapeOp>(
            lstm.getLoc(), resultType, LstmWithTapeOp::getTapeType(resultType),
            lstm.getDirection(), lstm.getInput(), lstm.getInputWeight(),
            lstm.getRecurrentWeight(), lstm.getBias());
        lstm.getResult().replaceAllUsesWith(saved.getResult());
        lstm.erase();
        tape = saved.getTape();
      } else {
        continue;
      }
      grad.getTapeMutable().assign(tape);
    }
  }
};

} // namespace
