//===- LearningRateTest.cpp - schedules against their formulas ------------===//
//
// Each schedule against its formula written out here in float64, at the
// boundaries (first step, end of warmup, end of decay, past it), and the
// parser's errors.
//
//===----------------------------------------------------------------------===//

#include "nn/LearningRate.h"

#include <gtest/gtest.h>

#include <cmath>

using namespace nn;

namespace {

LearningRateSchedule parsed(const std::string &text) {
  absl::StatusOr<LearningRateSchedule> schedule =
      LearningRateSchedule::parse(text);
  EXPECT_TRUE(schedule.ok()) << schedule.status().message();
  return schedule.ok() ? *schedule : LearningRateSchedule();
}

TEST(LearningRateTest, WarmupRisesToPeakAtItsLastStep) {
  LearningRateSchedule s = parsed("constant:peak=0.01,warmup=4");
  EXPECT_DOUBLE_EQ(s.at(0), 0.0025);
  EXPECT_DOUBLE_EQ(s.at(1), 0.005);
  EXPECT_DOUBLE_EQ(s.at(3), 0.01);
  EXPECT_DOUBLE_EQ(s.at(4), 0.01);
  EXPECT_DOUBLE_EQ(s.at(1000000), 0.01);
}

TEST(LearningRateTest, LinearAndCosineDecayToFinalAtTotal) {
  LearningRateSchedule linear =
      parsed("linear:peak=1e-3,final=1e-5,warmup=10,total=110");
  LearningRateSchedule cosine =
      parsed("cosine:peak=1e-3,final=1e-5,warmup=10,total=110");
  for (int64_t step : {10, 11, 35, 60, 109, 110, 111, 5000}) {
    double done = std::min<double>(step - 10, 100) / 100;
    EXPECT_NEAR(linear.at(step), 1e-5 + (1e-3 - 1e-5) * (1 - done), 1e-15)
        << step;
    EXPECT_NEAR(cosine.at(step),
                1e-5 + (1e-3 - 1e-5) * 0.5 * (1 + std::cos(M_PI * done)), 1e-15)
        << step;
  }
  EXPECT_DOUBLE_EQ(linear.at(10), 1e-3);
  EXPECT_DOUBLE_EQ(cosine.at(10), 1e-3);
  EXPECT_DOUBLE_EQ(linear.at(110), 1e-5);
  EXPECT_NEAR(cosine.at(60), (1e-3 + 1e-5) / 2, 1e-15);
}

TEST(LearningRateTest, InverseSquareRootAfterWarmup) {
  LearningRateSchedule s = parsed("inverse_sqrt:peak=2e-3,warmup=100");
  EXPECT_DOUBLE_EQ(s.at(99), 2e-3);
  EXPECT_DOUBLE_EQ(s.at(399), 2e-3 * std::sqrt(100.0 / 400.0));
  LearningRateSchedule noWarmup = parsed("inverse_sqrt:peak=1");
  EXPECT_DOUBLE_EQ(noWarmup.at(0), 1.0);
  EXPECT_DOUBLE_EQ(noWarmup.at(3), 0.5);
}

TEST(LearningRateTest, BadSchedulesAreClearErrors) {
  auto error = [](const std::string &text) {
    return std::string(LearningRateSchedule::parse(text).status().message());
  };
  EXPECT_EQ(error("step"),
            "learning-rate schedule 'step': unknown decay "
            "'step' (constant, linear, cosine, inverse_sqrt, newbob)");
  EXPECT_EQ(error("linear:peak=1e-3"),
            "learning-rate schedule 'linear:peak=1e-3': linear and cosine "
            "decay need total (0) above warmup (0)");
  EXPECT_EQ(error("cosine:peak=x,total=5"),
            "learning-rate schedule 'cosine:peak=x,total=5': 'x' is not a "
            "number (peak)");
  EXPECT_EQ(error("constant:warmup=2.5"),
            "learning-rate schedule 'constant:warmup=2.5': '2.5' is not an "
            "integer (warmup)");
  EXPECT_EQ(error("constant:lr=1"),
            "learning-rate schedule 'constant:lr=1': unknown key 'lr' (peak, "
            "final, warmup, total)");
  EXPECT_EQ(error("constant:peak"),
            "learning-rate schedule 'constant:peak': expected key=value, got "
            "'peak'");
  const std::string peakRange =
      "peak must be a positive number at most 3.4e38 (the train step's "
      "learning rate is f32)";
  EXPECT_EQ(error("constant:peak=0"),
            "learning-rate schedule 'constant:peak=0': " + peakRange);
  EXPECT_EQ(error("constant:peak=nan"),
            "learning-rate schedule 'constant:peak=nan': " + peakRange);
  // Finite doubles that would reach the train step as f32 infinity.
  EXPECT_EQ(error("constant:peak=1e39"),
            "learning-rate schedule 'constant:peak=1e39': " + peakRange);
  EXPECT_EQ(error("cosine:peak=1e-3,total=10,final=1e300"),
            "learning-rate schedule 'cosine:peak=1e-3,total=10,final=1e300': "
            "final must be a number in [0, 3.4e38] (the train step's "
            "learning rate is f32)");
  EXPECT_TRUE(LearningRateSchedule::parse("constant:peak=3e38").ok());
  EXPECT_EQ(error("constant:warmup=-1"), "learning-rate schedule "
                                         "'constant:warmup=-1': warmup must "
                                         "be >= 0 steps");
  LearningRateSchedule direct;
  direct.final = -1;
  EXPECT_EQ(direct.validate().message(),
            "learning-rate schedule: final must be a number in [0, 3.4e38] "
            "(the train step's learning rate is f32)");
}

} // namespace
