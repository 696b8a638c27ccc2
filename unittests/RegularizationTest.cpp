//===- RegularizationTest.cpp - parameter-norm losses in training ---------===//
//
// nn.param_norm marked as a loss is an L2 regularizer trained like any
// other loss. Its value against a float64 sum written here, and the
// identity that makes it checkable end to end: SGD on loss + s * |w|^2 is
// SGD with weight decay 2 s on the loss alone, step for step.
//
//===----------------------------------------------------------------------===//

#include "ExecutionUtil.h"

#include "nn/Train.h"

#include <cmath>

using namespace nn;
using namespace nn::testing;

namespace {

/// A linear CE model; `regularizer` is spliced in before nn.return.
std::string linearModel(const std::string &regularizer) {
  return R"(
nn.parameter @w : !nn.tensor<[4, 3], f32>
nn.parameter @b : !nn.tensor<[4], f32>
nn.graph @g(%features: !nn.tensor<[B, T, 3], f32>, %frame_labels: !nn.tensor<[B, T], i32>)
    dims [B: batch, T: seq(B)] {
  %w = nn.param_ref @w : !nn.tensor<[4, 3], f32>
  %b = nn.param_ref @b : !nn.tensor<[4], f32>
  %l = nn.linear %features, %w, %b : !nn.tensor<[B, T, 3], f32>, !nn.tensor<[4, 3], f32>, !nn.tensor<[4], f32>
  %ce = nn.cross_entropy %l, %frame_labels from logits : !nn.tensor<[B, T, 4], f32>, !nn.tensor<[B, T], i32>
  nn.mark_loss %ce as "ce" normalize per_frame : !nn.tensor<[B, T], f32>
)" + regularizer +
         R"(  nn.return
})";
}

const char *const kL2 = R"(
  %n = nn.param_norm %w, %b : !nn.tensor<[4, 3], f32>, !nn.tensor<[4], f32>
  nn.mark_loss %n as "l2" normalize sum scale 5.000000e-02 : !nn.tensor<[], f32>
)";

/// The decoupled form: the model graph marks nothing; a criterion graph
/// calls it and marks both the CE loss and the L2 regularizer over the
/// model's parameters.
const char *const kDecoupled = R"(
nn.parameter @w : !nn.tensor<[4, 3], f32>
nn.parameter @b : !nn.tensor<[4], f32>
nn.graph @model(%features: !nn.tensor<[B, T, 3], f32>) -> !nn.tensor<[B, T, 4], f32>
    dims [B: batch, T: seq(B)] {
  %w = nn.param_ref @w : !nn.tensor<[4, 3], f32>
  %b = nn.param_ref @b : !nn.tensor<[4], f32>
  %l = nn.linear %features, %w, %b : !nn.tensor<[B, T, 3], f32>, !nn.tensor<[4, 3], f32>, !nn.tensor<[4], f32>
  nn.return %l : !nn.tensor<[B, T, 4], f32>
}
nn.graph @criterion(%features: !nn.tensor<[B, T, 3], f32>, %frame_labels: !nn.tensor<[B, T], i32>)
    dims [B: batch, T: seq(B)] {
  %l = nn.call @model(%features) : (!nn.tensor<[B, T, 3], f32>) -> !nn.tensor<[B, T, 4], f32>
  %ce = nn.cross_entropy %l, %frame_labels from logits : !nn.tensor<[B, T, 4], f32>, !nn.tensor<[B, T], i32>
  nn.mark_loss %ce as "ce" normalize per_frame : !nn.tensor<[B, T], f32>
  %w = nn.param_ref @w : !nn.tensor<[4, 3], f32>
  %b = nn.param_ref @b : !nn.tensor<[4], f32>
  %n = nn.param_norm %w, %b : !nn.tensor<[4, 3], f32>, !nn.tensor<[4], f32>
  nn.mark_loss %n as "l2" normalize sum scale 5.000000e-02 : !nn.tensor<[], f32>
  nn.return
}
)";

Executable compileSgdStep(const std::string &source, double weightDecay,
                          const std::string &entry = "") {
  CompileOptions options;
  options.grads = true;
  options.training = true;
  options.trainStep = true;
  options.optimizer.kind = OptimizerKind::sgd;
  options.optimizer.weightDecay = weightDecay;
  options.entry = entry;
  return compileOrDie(source, options);
}

RunInputs batch(int step) {
  RunInputs inputs;
  float s = 0.25f * (float)step;
  inputs.inputs["features"] = Tensor::of<float>(
      DType::f32, {2, 3, 3},
      {1, 2, 3, -1, 0.5f + s, 2, 0, 1, -2, 0.5f, -s, 1, 3, 1, 0, -1, -1, 2});
  inputs.inputs["frame_labels"] =
      Tensor::of<int32_t>(DType::i32, {2, 3}, {1, 3, 0, 2, 2, 1});
  inputs.lengths["T"] = {3, 2};
  return inputs;
}

/// The plain float64 sum of squares of every parameter.
double sumOfSquares(const std::map<std::string, Tensor> &parameters) {
  double total = 0;
  for (const auto &[name, tensor] : parameters)
    for (int64_t i = 0; i < tensor.numElements(); ++i)
      total += tensor.at(i) * tensor.at(i);
  return total;
}

TEST(RegularizationTest, ParamNormIsTheSumOfSquares) {
  Executable exe = compileSgdStep(linearModel(kL2), 0);
  TrainState state;
  ASSERT_TRUE(initializeParameters(exe.manifest(), 7, state.parameters).ok());
  double want = sumOfSquares(state.parameters);
  ASSERT_GT(want, 0);
  StepReport report;
  ASSERT_TRUE(runTrainStep(exe, batch(0), 0.1, 1, state, report).ok());
  bool found = false;
  for (const LossValue &loss : report.losses)
    if (loss.name == "l2") {
      found = true;
      EXPECT_NEAR(loss.sum, want, 1e-6 * want);
      EXPECT_EQ(loss.normalization, 1);
    }
  EXPECT_TRUE(found);
}

TEST(RegularizationTest, L2LossTrainsAsSgdWeightDecay) {
  // d/dw (s |w|^2) = 2 s w: the same update as weight decay 2 s.
  Executable regularized = compileSgdStep(linearModel(kL2), 0);
  Executable decayed = compileSgdStep(linearModel(""), 2 * 5e-2);
  TrainState a, b;
  ASSERT_TRUE(
      initializeParameters(regularized.manifest(), 3, a.parameters).ok());
  b.parameters = a.parameters;
  for (int step = 0; step < 4; ++step) {
    StepReport ra, rb;
    ASSERT_TRUE(runTrainStep(regularized, batch(step), 0.5, 1, a, ra).ok());
    ASSERT_TRUE(runTrainStep(decayed, batch(step), 0.5, 1, b, rb).ok());
    ASSERT_TRUE(ra.applied && rb.applied);
  }
  double moved = 0;
  for (const auto &[name, want] : b.parameters) {
    const Tensor &got = a.parameters.at(name);
    ASSERT_EQ(got.numElements(), want.numElements()) << name;
    for (int64_t i = 0; i < want.numElements(); ++i) {
      EXPECT_NEAR(got.at(i), want.at(i), 1e-5 * (1 + std::fabs(want.at(i))))
          << name << "[" << i << "]";
      moved += std::fabs(got.at(i));
    }
  }
  EXPECT_GT(moved, 0);
  // The regularizer changes the trajectory: without it (no decay either)
  // the parameters end elsewhere.
  Executable plain = compileSgdStep(linearModel(""), 0);
  TrainState c;
  ASSERT_TRUE(initializeParameters(plain.manifest(), 3, c.parameters).ok());
  for (int step = 0; step < 4; ++step) {
    StepReport rc;
    ASSERT_TRUE(runTrainStep(plain, batch(step), 0.5, 1, c, rc).ok());
  }
  double apart = 0;
  for (const auto &[name, tensor] : c.parameters)
    for (int64_t i = 0; i < tensor.numElements(); ++i)
      apart += std::fabs(tensor.at(i) - b.parameters.at(name).at(i));
  EXPECT_GT(apart, 1e-3);
}

TEST(RegularizationTest, DecoupledCriterionTrainsLikeTheInModelLoss) {
  // The same losses marked by a criterion graph around the model: the same
  // report and the same parameters, step for step.
  Executable inModel = compileSgdStep(linearModel(kL2), 0);
  Executable decoupled = compileSgdStep(kDecoupled, 0, "criterion");
  TrainState a, b;
  ASSERT_TRUE(initializeParameters(inModel.manifest(), 5, a.parameters).ok());
  b.parameters = a.parameters;
  for (int step = 0; step < 3; ++step) {
    StepReport ra, rb;
    ASSERT_TRUE(runTrainStep(inModel, batch(step), 0.5, 1, a, ra).ok());
    ASSERT_TRUE(runTrainStep(decoupled, batch(step), 0.5, 1, b, rb).ok());
    ASSERT_EQ(ra.losses.size(), rb.losses.size());
    for (size_t l = 0; l < ra.losses.size(); ++l) {
      EXPECT_EQ(ra.losses[l].name, rb.losses[l].name);
      EXPECT_NEAR(ra.losses[l].sum, rb.losses[l].sum,
                  1e-6 * (1 + std::fabs(ra.losses[l].sum)));
    }
  }
  for (const auto &[name, want] : a.parameters)
    for (int64_t i = 0; i < want.numElements(); ++i)
      EXPECT_NEAR(b.parameters.at(name).at(i), want.at(i),
                  1e-6 * (1 + std::fabs(want.at(i))))
          << name << "[" << i << "]";
}

} // namespace
