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

#include <fstream>
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

} // namespace
