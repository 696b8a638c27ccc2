//===- LoweringTest.cpp - every compiled op against the reference ---------===//
//
// Each case is a small graph around one op family. It is compiled with and
// without packing and run on seeded inputs of several batch and padded
// sizes (fixed ones, B = 1 and T = 1 included, and random ones) under three
// length patterns (mixed with a length-1 and a full-length sequence, all
// equal, and with empty sequences). Outputs on valid positions and every loss
// must match the double-precision reference within rel 1e-4 + abs 1e-5 (float32
// code against float64 loops), and packed vs padded within rel 1e-5.
//
//===----------------------------------------------------------------------===//

#include "ExecutionUtil.h"

#include <algorithm>
#include <fstream>
#include <limits>
#include <sstream>

using namespace nn;
using namespace nn::testing;

namespace {

const LengthPattern kPatterns[] = {
    LengthPattern::Mixed, LengthPattern::AllEqual, LengthPattern::WithEmpty};

/// The 64-bit FNV-1a hash of `text`. It seeds each case's random shapes:
/// std::hash differs between standard libraries, this is the same
/// everywhere.
uint64_t fnv1a64(const std::string &text) {
  uint64_t hash = 0xcbf29ce484222325ull; // the FNV-1a 64-bit offset basis
  for (unsigned char c : text) {
    hash ^= c;
    hash *= 0x100000001b3ull; // the FNV 64-bit prime
  }
  return hash;
}

/// A draw in [low, high] from the engine's raw output, which the standard
/// fixes (std::uniform_int_distribution's mapping differs between standard
/// libraries); the modulo bias is negligible for such small ranges.
int64_t drawIn(std::mt19937 &rng, int64_t low, int64_t high) {
  return low + (int64_t)(rng() % (uint64_t)(high - low + 1));
}

class LoweringTest : public ::testing::TestWithParam<OpCase> {};

TEST_P(LoweringTest, MatchesReferencePackedAndPadded) {
  const OpCase &c = GetParam();
  Executable padded = compileOrDie(c.source, /*pack=*/false, "g");
  Executable packed = compileOrDie(c.source, /*pack=*/true, "g");
  // Shapes vary with the pattern, and three more runs draw them at random.
  std::vector<ShapeRun> runs{{LengthPattern::Mixed, 4, 7},
                             {LengthPattern::AllEqual, 2, 5},
                             {LengthPattern::WithEmpty, 5, 6},
                             {LengthPattern::AllEqual, 1, 1}};
  // mt19937 keeps the seed modulo 2^32, whatever the width of its
  // result_type.
  std::mt19937 shapes(static_cast<uint32_t>(fnv1a64(c.name)));
  for (int i = 0; i < 3; ++i) {
    int64_t batch = drawIn(shapes, 1, 6);
    runs.push_back({kPatterns[i], batch, drawIn(shapes, 1, 10)});
  }
  uint32_t seed = 17;
  for (const ShapeRun &run : runs) {
    SCOPED_TRACE("length pattern " + std::to_string((int)run.pattern) +
                 ", batch " + std::to_string(run.batch) + ", padded " +
                 std::to_string(run.padded));
    RunInputs inputs = makeInputs(padded.manifest(), seed++, run.pattern,
                                  run.batch, run.padded);
    RunResult a, b;
    absl::Status status = padded.run(inputs, a);
    ASSERT_TRUE(status.ok()) << status.message();
    status = packed.run(inputs, b);
    ASSERT_TRUE(status.ok()) << status.message();
    expectMatchesReference(c.source, padded, inputs, a, 1e-4, 1e-5);
    expectSameResults(padded.manifest(), inputs, a, b, 1e-5);
  }
}

INSTANTIATE_TEST_SUITE_P(Ops, LoweringTest, ::testing::ValuesIn(opCases()),
                         [](const auto &info) { return info.param.name; });

class ExampleTest : public ::testing::TestWithParam<const char *> {};

/// The examples: compiled against the reference, pack on vs off (rel 1e-5),
/// and NaN in every padded input frame changes no loss.
TEST_P(ExampleTest, ReferencePackingAndNanPadding) {
  std::string source = readExample(GetParam());
  ASSERT_FALSE(source.empty());
  Executable padded = compileOrDie(source, false);
  Executable packed = compileOrDie(source, true);
  RunInputs inputs = makeInputs(padded.manifest(), 5, LengthPattern::Mixed,
                                /*batch=*/3, /*padded=*/12);
  RunInputs nanInputs =
      makeInputs(padded.manifest(), 5, LengthPattern::Mixed, 3, 12,
                 std::numeric_limits<double>::quiet_NaN());
  RunResult a, b, c, d;
  ASSERT_TRUE(padded.run(inputs, a).ok());
  ASSERT_TRUE(packed.run(inputs, b).ok());
  ASSERT_TRUE(padded.run(nanInputs, c).ok());
  ASSERT_TRUE(packed.run(nanInputs, d).ok());
  expectMatchesReference(source, padded, inputs, a, 1e-4, 1e-5);
  expectSameResults(padded.manifest(), inputs, a, b, 1e-5);
  ASSERT_FALSE(a.losses.empty());
  for (const RunResult *nan : {&c, &d})
    for (size_t i = 0; i < a.losses.size(); ++i) {
      EXPECT_FALSE(std::isnan(nan->losses[i].sum)) << a.losses[i].name;
      EXPECT_TRUE(close(a.losses[i].sum, nan->losses[i].sum, 1e-6))
          << a.losses[i].name << ": " << a.losses[i].sum << " vs "
          << nan->losses[i].sum;
    }
}

INSTANTIATE_TEST_SUITE_P(Examples, ExampleTest,
                         ::testing::Values("blstm_ce_ctc.mlir",
                                           "conv_encoder_decoupled_loss.mlir",
                                           "shared_tail_two_losses.mlir"),
                         [](const auto &info) {
                           std::string name = info.param;
                           return name.substr(0, name.find('.'));
                         });

/// nn.expected_risk (the "expected_risk" op case) on random N-best lists
/// with NaN in every padded position of nll and err, sequences without
/// hypotheses, one hypothesis the model cannot produce (nll = +inf)
/// beside finite ones, and a sequence whose every hypothesis is +inf:
/// compiled against the reference, and the values the rules fix exactly
/// (0 for the empty and the all-infeasible sequences, a zero gradient
/// there, at the infeasible hypothesis and at padded positions).
TEST(ExpectedRiskLoweringTest, NanPaddingEmptyAndInfeasibleHypotheses) {
  const OpCase *risk = nullptr;
  for (const OpCase &c : opCases())
    if (std::string(c.name) == "expected_risk")
      risk = &c;
  ASSERT_NE(risk, nullptr);
  Executable exe = compileOrDie(risk->source, /*pack=*/false, "g");
  const double nan = std::numeric_limits<double>::quiet_NaN();
  const float inf = std::numeric_limits<float>::infinity();
  uint32_t seed = 41;
  for (const ShapeRun &run : {ShapeRun{LengthPattern::WithEmpty, 6, 5},
                              ShapeRun{LengthPattern::WithEmpty, 4, 3},
                              ShapeRun{LengthPattern::Mixed, 5, 7}}) {
    SCOPED_TRACE("length pattern " + std::to_string((int)run.pattern) +
                 ", batch " + std::to_string(run.batch) + ", padded " +
                 std::to_string(run.padded));
    RunInputs inputs = makeInputs(exe.manifest(), seed++, run.pattern,
                                  run.batch, run.padded, nan);
    const std::vector<int32_t> &counts = inputs.lengths.at("K");
    // The second hypothesis of the first sequence with two or more is
    // infeasible; so is every hypothesis of the first other sequence with
    // one or more.
    int64_t partly = -1, wholly = -1;
    for (int64_t b = 0; b < run.batch; ++b) {
      if (partly < 0 && counts[b] >= 2)
        partly = b;
      else if (wholly < 0 && counts[b] >= 1)
        wholly = b;
    }
    ASSERT_GE(partly, 0);
    ASSERT_GE(wholly, 0);
    ASSERT_TRUE(std::find(counts.begin(), counts.end(), 0) != counts.end() ||
                run.pattern == LengthPattern::Mixed);
    float *nll = inputs.inputs.at("nll").data<float>();
    nll[partly * run.padded + 1] = inf;
    for (int64_t k = 0; k < counts[wholly]; ++k)
      nll[wholly * run.padded + k] = inf;

    RunResult result;
    absl::Status status = exe.run(inputs, result);
    ASSERT_TRUE(status.ok()) << status.message();
    expectMatchesReference(risk->source, exe, inputs, result, 1e-4, 1e-5);
    const Tensor &mean = result.outputs.at(0).second,
                 &none = result.outputs.at(1).second,
                 &grad = result.outputs.at(2).second;
    for (int64_t b = 0; b < run.batch; ++b) {
      SCOPED_TRACE("sequence " + std::to_string(b) + " of " +
                   std::to_string(counts[b]) + " hypotheses");
      EXPECT_TRUE(std::isfinite(mean.at(b))) << mean.at(b);
      EXPECT_TRUE(std::isfinite(none.at(b))) << none.at(b);
      if (counts[b] == 0 || b == wholly) {
        EXPECT_EQ(mean.at(b), 0.0);
        EXPECT_EQ(none.at(b), 0.0);
      }
      for (int64_t k = 0; k < run.padded; ++k) {
        double value = grad.at(b * run.padded + k);
        if (k >= counts[b] || b == wholly || (b == partly && k == 1))
          EXPECT_EQ(value, 0.0) << "hypothesis " << k;
        else
          EXPECT_TRUE(std::isfinite(value)) << "hypothesis " << k;
      }
    }
  }
}

} // namespace
