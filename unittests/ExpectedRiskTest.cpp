//===- ExpectedRiskTest.cpp - nn.expected_risk on hand-made N-best lists --===//
//
// nn.expected_risk and its gradient on N-best lists whose values are
// worked out here from the op's description: two hypotheses with nll 0
// and ln 3 (P = 0.75 and 0.25), one the model cannot produce (nll = +inf),
// none, all infeasible, a single one, scores near 1000 (whose plain
// exponentials underflow); NaN in every padded position. Checked in the
// reference evaluator and compiled, with the gradient of a graph that
// marks the risk as a loss (nn-autodiff's input gradient) against the
// same numbers; the reference's gradient against central differences of
// its own risk; and a NaN score, which must reach the result.
//
//===----------------------------------------------------------------------===//

#include "ExecutionUtil.h"

#include <cmath>
#include <limits>

using namespace nn;
using namespace nn::testing;

namespace {

const char *kSource = R"(
nn.graph @g(%nll: !nn.tensor<[B, K], f32>, %err: !nn.tensor<[B, K], f32>, %g: !nn.tensor<[B], f32>)
    -> (!nn.tensor<[B], f32>, !nn.tensor<[B], f32>, !nn.tensor<[B, K], f32>)
    dims [B: batch, K: seq(B)] {
  %r = nn.expected_risk %nll, %err baseline mean : !nn.tensor<[B, K], f32>, !nn.tensor<[B, K], f32>
  nn.mark_loss %r as "mwer" normalize per_sequence : !nn.tensor<[B], f32>
  %n = nn.expected_risk %nll, %err baseline none : !nn.tensor<[B, K], f32>, !nn.tensor<[B, K], f32>
  %d = nn.expected_risk_grad %g, %nll, %err : !nn.tensor<[B], f32>, !nn.tensor<[B, K], f32>, !nn.tensor<[B, K], f32>
  nn.return %r, %n, %d : !nn.tensor<[B], f32>, !nn.tensor<[B], f32>, !nn.tensor<[B, K], f32>
}
)";

/// The risk trained as a summed loss: its gradient with respect to `nll`
/// is the gradient op's with an incoming gradient of 1.
const char *kTrainedSource = R"(
nn.graph @g(%nll: !nn.tensor<[B, K], f32>, %err: !nn.tensor<[B, K], f32>)
    dims [B: batch, K: seq(B)] {
  %r = nn.expected_risk %nll, %err baseline mean : !nn.tensor<[B, K], f32>, !nn.tensor<[B, K], f32>
  nn.mark_loss %r as "mwer" normalize sum : !nn.tensor<[B], f32>
  nn.return
}
)";

constexpr double kInf = std::numeric_limits<double>::infinity();
constexpr int64_t kPadded = 3;

/// One sequence's N-best list, the incoming gradient of its risk, and
/// what the description gives for it.
struct HandCase {
  std::vector<double> nll, err;
  double grad;
  double meanRisk, risk;
  /// d risk / d nll_k, times `grad`.
  std::vector<double> nllGrad;
};

/// P = (1, e^-1) / (1 + e^-1) for nll 1000 and 1001.
const double kP0 = 1 / (1 + std::exp(-1.0)), kP1 = 1 - kP0;

const std::vector<HandCase> kCases{
    // P = 0.75, 0.25; mean error 1: 0.75 (0 - 1) + 0.25 (2 - 1) = -0.5.
    // Expected error 0.5: d/dnll_0 = -0.75 (0 - 0.5), d/dnll_1 = -0.25 (2
    // - 0.5).
    {{0, std::log(3.0)}, {0, 2}, 1, -0.5, 0.5, {0.375, -0.375}},
    // The same with an infeasible third hypothesis (P = 0) of error 7,
    // which still counts in the mean error 3: 0.75 (-3) + 0.25 (-1).
    {{0, std::log(3.0), kInf}, {0, 2, 7}, 2, -2.5, 0.5, {0.75, -0.75, 0}},
    // No hypotheses.
    {{}, {}, 1, 0, 0, {}},
    // Every hypothesis infeasible.
    {{kInf, kInf}, {1, 3}, 1, 0, 0, {0, 0}},
    // One hypothesis: P = 1, its own error is the mean.
    {{5}, {4}, 1, 0, 4, {0}},
    // Scores near 1000: exp(-1000) is 0 in f64, exp(-(1000 - 1000)) is
    // not. Expected error 2 P1; incoming gradient -1.
    {{1000, 1001},
     {0, 2},
     -1,
     kP0 * -1 + kP1 * 1,
     2 * kP1,
     {kP0 * (0 - 2 * kP1), kP1 *(2 - 2 * kP1)}},
};

/// The padded batch of `cases`: NaN at every padded position.
RunInputs batchOf(const std::vector<HandCase> &cases) {
  int64_t batch = cases.size();
  const float nan = std::numeric_limits<float>::quiet_NaN();
  Tensor nll(DType::f32, {batch, kPadded}), err(DType::f32, {batch, kPadded}),
      grad(DType::f32, {batch});
  RunInputs inputs;
  for (int64_t b = 0; b < batch; ++b) {
    const HandCase &c = cases[b];
    for (int64_t k = 0; k < kPadded; ++k) {
      bool valid = k < (int64_t)c.nll.size();
      nll.data<float>()[b * kPadded + k] = valid ? (float)c.nll[k] : nan;
      err.data<float>()[b * kPadded + k] = valid ? (float)c.err[k] : nan;
    }
    grad.data<float>()[b] = (float)c.grad;
    inputs.lengths["K"].push_back((int32_t)c.nll.size());
  }
  inputs.inputs["nll"] = nll;
  inputs.inputs["err"] = err;
  inputs.inputs["g"] = grad;
  return inputs;
}

/// The three outputs of kSource, whichever evaluated them.
struct Outputs {
  std::vector<double> meanRisk, risk, nllGrad;
};

Outputs fromRun(const RunResult &result) {
  Outputs out;
  std::vector<double> *to[] = {&out.meanRisk, &out.risk, &out.nllGrad};
  for (size_t i = 0; i < 3; ++i) {
    const Tensor &tensor = result.outputs.at(i).second;
    for (int64_t j = 0; j < tensor.numElements(); ++j)
      to[i]->push_back(tensor.at(j));
  }
  return out;
}

Outputs fromReference(const reference::Result &result) {
  return {result.outputs.at(0).data, result.outputs.at(1).data,
          result.outputs.at(2).data};
}

/// Expects `out` to hold the hand values within `tolerance`, and exact
/// zeros where the rules say 0.
void expectHandValues(const Outputs &out, double tolerance) {
  ASSERT_EQ(out.meanRisk.size(), kCases.size());
  ASSERT_EQ(out.nllGrad.size(), kCases.size() * kPadded);
  for (size_t b = 0; b < kCases.size(); ++b) {
    const HandCase &c = kCases[b];
    SCOPED_TRACE("sequence " + std::to_string(b));
    EXPECT_NEAR(out.meanRisk[b], c.meanRisk, tolerance);
    EXPECT_NEAR(out.risk[b], c.risk, tolerance);
    for (int64_t k = 0; k < kPadded; ++k) {
      double got = out.nllGrad[b * kPadded + k];
      if (k >= (int64_t)c.nll.size() || c.nllGrad[k] == 0)
        EXPECT_EQ(got, 0.0) << "hypothesis " << k;
      else
        EXPECT_NEAR(got, c.nllGrad[k], tolerance) << "hypothesis " << k;
    }
  }
}

double handLossSum() {
  double sum = 0;
  for (const HandCase &c : kCases)
    sum += c.meanRisk;
  return sum;
}

TEST(ExpectedRiskTest, ReferenceGivesTheHandValues) {
  reference::Result result;
  absl::Status status =
      reference::evaluate(kSource, "g", batchOf(kCases), result);
  ASSERT_TRUE(status.ok()) << status.message();
  // The inputs went through f32: ln 3 is off by 3e-8 there.
  expectHandValues(fromReference(result), 1e-7);
  const reference::Loss &mwer = result.losses.at("mwer");
  EXPECT_NEAR(mwer.sum, handLossSum(), 1e-7);
  EXPECT_EQ(mwer.normalization, (double)kCases.size());
}

TEST(ExpectedRiskTest, CompiledGivesTheHandValues) {
  Executable exe = compileOrDie(kSource, /*pack=*/false);
  RunResult result;
  absl::Status status = exe.run(batchOf(kCases), result);
  ASSERT_TRUE(status.ok()) << status.message();
  expectHandValues(fromRun(result), 1e-6);
  ASSERT_EQ(result.losses.size(), 1u);
  EXPECT_EQ(result.losses[0].name, "mwer");
  EXPECT_NEAR(result.losses[0].sum, handLossSum(), 1e-6);
  EXPECT_EQ(result.losses[0].normalization, (double)kCases.size());
}

/// nn-autodiff builds the gradient op for a marked risk: the gradient
/// with respect to the scores input, compiled, is the hand values at an
/// incoming gradient of 1 (a summed loss), 0 at padded positions.
TEST(ExpectedRiskTest, TrainedRiskHasTheHandGradient) {
  std::vector<HandCase> cases = kCases;
  for (HandCase &c : cases) {
    for (double &d : c.nllGrad)
      d /= c.grad;
    c.grad = 1;
  }
  for (bool pack : {false, true}) {
    SCOPED_TRACE(pack ? "packed" : "padded");
    CompileOptions options;
    options.grads = true;
    options.inputGradients = {"nll"};
    options.optimize.pack = pack;
    Executable exe = compileOrDie(kTrainedSource, options);
    RunInputs inputs = batchOf(cases);
    inputs.inputs.erase("g");
    RunResult result;
    absl::Status status = exe.run(inputs, result);
    ASSERT_TRUE(status.ok()) << status.message();
    const Tensor *grad = result.inputGradient("nll");
    ASSERT_NE(grad, nullptr);
    ASSERT_EQ(grad->numElements(), (int64_t)cases.size() * kPadded);
    for (size_t b = 0; b < cases.size(); ++b)
      for (int64_t k = 0; k < kPadded; ++k) {
        SCOPED_TRACE("sequence " + std::to_string(b) + ", hypothesis " +
                     std::to_string(k));
        double got = grad->at(b * kPadded + k);
        if (k >= (int64_t)cases[b].nll.size() || cases[b].nllGrad[k] == 0)
          EXPECT_EQ(got, 0.0);
        else
          EXPECT_NEAR(got, cases[b].nllGrad[k], 1e-6);
      }
  }
}

/// The reference's gradient op against central differences of its own
/// risk, g_b * risk_b, at every finite valid score of the hand batch.
TEST(ExpectedRiskTest, ReferenceGradientMatchesFiniteDifferences) {
  RunInputs inputs = batchOf(kCases);
  reference::Result analytic;
  absl::Status status = reference::evaluate(kSource, "g", inputs, analytic);
  ASSERT_TRUE(status.ok()) << status.message();
  RunInputs wide = inputs;
  Tensor nll64(DType::f64, inputs.inputs["nll"].shape());
  for (int64_t i = 0; i < nll64.numElements(); ++i)
    nll64.data<double>()[i] = inputs.inputs["nll"].at(i);
  auto weightedRisk = [&](int64_t b) {
    wide.inputs["nll"] = nll64;
    reference::Result result;
    absl::Status s = reference::evaluate(kSource, "g", wide, result);
    EXPECT_TRUE(s.ok()) << s.message();
    return kCases[b].grad * result.outputs[0].data[b];
  };
  int checked = 0;
  for (size_t b = 0; b < kCases.size(); ++b)
    for (size_t k = 0; k < kCases[b].nll.size(); ++k) {
      SCOPED_TRACE("sequence " + std::to_string(b) + ", hypothesis " +
                   std::to_string(k));
      int64_t i = b * kPadded + k;
      double want = analytic.outputs[2].data[i];
      if (std::isinf(kCases[b].nll[k])) {
        EXPECT_EQ(want, 0.0);
        continue;
      }
      double saved = nll64.at(i), h = 1e-5;
      nll64.data<double>()[i] = saved + h;
      double up = weightedRisk(b);
      nll64.data<double>()[i] = saved - h;
      double down = weightedRisk(b);
      nll64.data<double>()[i] = saved;
      double fd = (up - down) / (2 * h);
      EXPECT_TRUE(close(want, fd, 1e-6, 1e-9))
          << "reference " << want << ", finite differences " << fd;
      ++checked;
    }
  EXPECT_EQ(checked, 7);
}

/// A NaN score among a sequence's hypotheses makes its risk and its
/// gradient NaN (padded positions stay 0); the other sequences keep
/// their values.
TEST(ExpectedRiskTest, NanScorePropagates) {
  const double nan = std::numeric_limits<double>::quiet_NaN();
  std::vector<HandCase> cases{
      {{0.5, nan}, {1, 2}, 1, 0, 0, {0, 0}},
      kCases[0],
  };
  RunInputs inputs = batchOf(cases);
  Executable exe = compileOrDie(kSource, /*pack=*/false);
  RunResult result;
  absl::Status status = exe.run(inputs, result);
  ASSERT_TRUE(status.ok()) << status.message();
  reference::Result want;
  status = reference::evaluate(kSource, "g", inputs, want);
  ASSERT_TRUE(status.ok()) << status.message();
  for (const Outputs &out : {fromRun(result), fromReference(want)}) {
    EXPECT_TRUE(std::isnan(out.meanRisk[0])) << out.meanRisk[0];
    EXPECT_TRUE(std::isnan(out.risk[0])) << out.risk[0];
    EXPECT_TRUE(std::isnan(out.nllGrad[0])) << out.nllGrad[0];
    EXPECT_TRUE(std::isnan(out.nllGrad[1])) << out.nllGrad[1];
    EXPECT_EQ(out.nllGrad[2], 0.0);
    EXPECT_NEAR(out.meanRisk[1], -0.5, 1e-6);
    EXPECT_NEAR(out.risk[1], 0.5, 1e-6);
    EXPECT_NEAR(out.nllGrad[kPadded], 0.375, 1e-6);
    EXPECT_NEAR(out.nllGrad[kPadded + 1], -0.375, 1e-6);
    EXPECT_EQ(out.nllGrad[kPadded + 2], 0.0);
  }
}

} // namespace
