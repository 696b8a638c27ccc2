//===- ExecutionUtilTest.cpp - the execution tests' own checks ------------===//
//
// expectMatchesReference is what every execution test trusts to catch a
// wrong compiled result; these cases check that it does catch them: a
// compiled run that lacks a loss the reference computes, or returns one the
// reference does not, fails with the loss's name.
//
//===----------------------------------------------------------------------===//

#include "ExecutionUtil.h"

#include <gtest/gtest-spi.h>

#include <algorithm>

using namespace nn;
using namespace nn::testing;

namespace {

const char *const kTwoLosses = R"(
nn.graph @g(%x: !nn.tensor<[B, T, 3], f32>, %y: !nn.tensor<[B, T], i32>,
            %r: !nn.tensor<[B, T, 3], f32>)
    dims [B: batch, T: seq(B)] {
  %ce = nn.cross_entropy %x, %y from logits : !nn.tensor<[B, T, 3], f32>, !nn.tensor<[B, T], i32>
  nn.mark_loss %ce as "ce" normalize per_frame : !nn.tensor<[B, T], f32>
  %e = nn.mse %x, %r : !nn.tensor<[B, T, 3], f32>, !nn.tensor<[B, T, 3], f32>
  nn.mark_loss %e as "mse" normalize sum : !nn.tensor<[B, T], f32>
  nn.return
})";

/// A compiled run of kTwoLosses and the inputs it ran on.
struct TwoLossRun {
  Executable exe;
  RunInputs inputs;
  RunResult result;
};

void runTwoLosses(TwoLossRun &run) {
  run.exe = compileOrDie(kTwoLosses, /*pack=*/false, "g");
  run.inputs = makeInputs(run.exe.manifest(), /*seed=*/3, LengthPattern::Mixed,
                          /*batch=*/3, /*padded=*/4);
  absl::Status status = run.exe.run(run.inputs, run.result);
  ASSERT_TRUE(status.ok()) << status.message();
  ASSERT_EQ(run.result.losses.size(), 2u);
}

TEST(ExpectMatchesReference, PassesWhenTheLossesMatch) {
  TwoLossRun run;
  ASSERT_NO_FATAL_FAILURE(runTwoLosses(run));
  expectMatchesReference(kTwoLosses, run.exe, run.inputs, run.result, 1e-4,
                         1e-5);
}

TEST(ExpectMatchesReference, FailsWhenTheCompiledRunLacksALoss) {
  TwoLossRun run;
  ASSERT_NO_FATAL_FAILURE(runTwoLosses(run));
  auto &losses = run.result.losses;
  losses.erase(
      std::remove_if(losses.begin(), losses.end(),
                     [](const LossValue &l) { return l.name == "mse"; }),
      losses.end());
  ASSERT_EQ(losses.size(), 1u);
  EXPECT_NONFATAL_FAILURE(expectMatchesReference(kTwoLosses, run.exe,
                                                 run.inputs, run.result, 1e-4,
                                                 1e-5),
                          "loss \"mse\": the reference computes it");
}

TEST(ExpectMatchesReference, FailsWhenTheCompiledRunHasAnExtraLoss) {
  TwoLossRun run;
  ASSERT_NO_FATAL_FAILURE(runTwoLosses(run));
  LossValue extra;
  extra.name = "extra";
  run.result.losses.push_back(extra);
  EXPECT_NONFATAL_FAILURE(expectMatchesReference(kTwoLosses, run.exe,
                                                 run.inputs, run.result, 1e-4,
                                                 1e-5),
                          "loss \"extra\": the compiled run returned it");
}

} // namespace
