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

struct OpCase {
  const char *name;
  const char *source;
};

// GoogleTest looks this name up. NOLINTNEXTLINE(readability-identifier-naming)
void PrintTo(const OpCase &c, std::ostream *os) { *os << c.name; }

const OpCase kCases[] = {
    {"linear", R"(
nn.parameter @w : !nn.tensor<[5, 3], f32>
nn.parameter @b : !nn.tensor<[5], f32>
nn.graph @g(%x: !nn.tensor<[B, T, 3], f32>)
    -> (!nn.tensor<[B, T, 5], f32>, !nn.tensor<[B, T, 5], f32>)
    dims [B: batch, T: seq(B)] {
  %w = nn.param_ref @w : !nn.tensor<[5, 3], f32>
  %b = nn.param_ref @b : !nn.tensor<[5], f32>
  %y = nn.linear %x, %w, %b : (!nn.tensor<[B, T, 3], f32>, !nn.tensor<[5, 3], f32>, !nn.tensor<[5], f32>) -> !nn.tensor<[B, T, 5], f32>
  %z = nn.linear %x, %w : (!nn.tensor<[B, T, 3], f32>, !nn.tensor<[5, 3], f32>) -> !nn.tensor<[B, T, 5], f32>
  nn.return %y, %z : !nn.tensor<[B, T, 5], f32>, !nn.tensor<[B, T, 5], f32>
})"},
    {"linear_packed_input", R"(
nn.graph @g(%x: !nn.tensor<[N, 3], f32>, %w: !nn.tensor<[4, 3], f32>, %t: !nn.tensor<[B, T], f32>)
    -> !nn.tensor<[N, 4], f32>
    dims [B: batch, T: seq(B), N: packed(B, T)] {
  %y = nn.linear %x, %w : (!nn.tensor<[N, 3], f32>, !nn.tensor<[4, 3], f32>) -> !nn.tensor<[N, 4], f32>
  nn.return %y : !nn.tensor<[N, 4], f32>
})"},
    {"elementwise", R"(
nn.graph @g(%x: !nn.tensor<[B, T, 4], f32>, %y: !nn.tensor<[B, T, 4], f32>)
    -> (!nn.tensor<[B, T, 4], f32>, !nn.tensor<[B, T, 4], f32>, !nn.tensor<[B, T, 4], f32>,
        !nn.tensor<[B, T, 4], f32>, !nn.tensor<[B, T, 4], f32>, !nn.tensor<[B, T, 4], f32>,
        !nn.tensor<[B, T, 4], f32>)
    dims [B: batch, T: seq(B)] {
  %a = nn.add %x, %y : !nn.tensor<[B, T, 4], f32>
  %m = nn.mul %x, %y : !nn.tensor<[B, T, 4], f32>
  %r = nn.relu %x : !nn.tensor<[B, T, 4], f32>
  %t = nn.tanh %x : !nn.tensor<[B, T, 4], f32>
  %s = nn.sigmoid %x : !nn.tensor<[B, T, 4], f32>
  %g = nn.gelu %x : !nn.tensor<[B, T, 4], f32>
  %d = nn.dropout %x rate 5.000000e-01 : !nn.tensor<[B, T, 4], f32>
  nn.return %a, %m, %r, %t, %s, %g, %d : !nn.tensor<[B, T, 4], f32>, !nn.tensor<[B, T, 4], f32>,
      !nn.tensor<[B, T, 4], f32>, !nn.tensor<[B, T, 4], f32>, !nn.tensor<[B, T, 4], f32>,
      !nn.tensor<[B, T, 4], f32>, !nn.tensor<[B, T, 4], f32>
})"},
    {"normalizations", R"(
nn.parameter @gain : !nn.tensor<[6], f32>
nn.parameter @b : !nn.tensor<[6], f32>
nn.graph @g(%x: !nn.tensor<[B, T, 6], f32>)
    -> (!nn.tensor<[B, T, 6], f32>, !nn.tensor<[B, T, 6], f32>, !nn.tensor<[B, T, 6], f32>)
    dims [B: batch, T: seq(B)] {
  %gain = nn.param_ref @gain : !nn.tensor<[6], f32>
  %bias = nn.param_ref @b : !nn.tensor<[6], f32>
  %s = nn.softmax %x : !nn.tensor<[B, T, 6], f32>
  %l = nn.log_softmax %x : !nn.tensor<[B, T, 6], f32>
  %n = nn.layer_norm %x, %gain, %bias : (!nn.tensor<[B, T, 6], f32>, !nn.tensor<[6], f32>, !nn.tensor<[6], f32>) -> !nn.tensor<[B, T, 6], f32>
  nn.return %s, %l, %n : !nn.tensor<[B, T, 6], f32>, !nn.tensor<[B, T, 6], f32>, !nn.tensor<[B, T, 6], f32>
})"},
    {"embedding_concat", R"(
nn.parameter @table : !nn.tensor<[7, 3], f32>
nn.graph @g(%ids: !nn.tensor<[B, T], i32>, %x: !nn.tensor<[B, T, 2], f32>)
    -> !nn.tensor<[B, T, 5], f32>
    dims [B: batch, T: seq(B)] {
  %table = nn.param_ref @table : !nn.tensor<[7, 3], f32>
  %e = nn.embedding %ids, %table : (!nn.tensor<[B, T], i32>, !nn.tensor<[7, 3], f32>) -> !nn.tensor<[B, T, 3], f32>
  %c = nn.concat %e, %x : (!nn.tensor<[B, T, 3], f32>, !nn.tensor<[B, T, 2], f32>) -> !nn.tensor<[B, T, 5], f32>
  nn.return %c : !nn.tensor<[B, T, 5], f32>
})"},
    {"lstm", R"(
nn.parameter @wi : !nn.tensor<[12, 4], f32>
nn.parameter @wh : !nn.tensor<[12, 3], f32>
nn.parameter @b : !nn.tensor<[12], f32>
nn.parameter @bwi : !nn.tensor<[2, 8, 4], f32>
nn.parameter @bwh : !nn.tensor<[2, 8, 2], f32>
nn.parameter @bb : !nn.tensor<[2, 8], f32>
nn.graph @g(%x: !nn.tensor<[B, T, 4], f32>)
    -> (!nn.tensor<[B, T, 3], f32>, !nn.tensor<[B, T, 3], f32>, !nn.tensor<[B, T, 4], f32>)
    dims [B: batch, T: seq(B)] {
  %wi = nn.param_ref @wi : !nn.tensor<[12, 4], f32>
  %wh = nn.param_ref @wh : !nn.tensor<[12, 3], f32>
  %b = nn.param_ref @b : !nn.tensor<[12], f32>
  %f = nn.lstm forward %x, %wi, %wh, %b : (!nn.tensor<[B, T, 4], f32>, !nn.tensor<[12, 4], f32>, !nn.tensor<[12, 3], f32>, !nn.tensor<[12], f32>) -> !nn.tensor<[B, T, 3], f32>
  %r = nn.lstm backward %x, %wi, %wh, %b : (!nn.tensor<[B, T, 4], f32>, !nn.tensor<[12, 4], f32>, !nn.tensor<[12, 3], f32>, !nn.tensor<[12], f32>) -> !nn.tensor<[B, T, 3], f32>
  %bwi = nn.param_ref @bwi : !nn.tensor<[2, 8, 4], f32>
  %bwh = nn.param_ref @bwh : !nn.tensor<[2, 8, 2], f32>
  %bb = nn.param_ref @bb : !nn.tensor<[2, 8], f32>
  %bi = nn.lstm bidirectional %x, %bwi, %bwh, %bb : (!nn.tensor<[B, T, 4], f32>, !nn.tensor<[2, 8, 4], f32>, !nn.tensor<[2, 8, 2], f32>, !nn.tensor<[2, 8], f32>) -> !nn.tensor<[B, T, 4], f32>
  nn.return %f, %r, %bi : !nn.tensor<[B, T, 3], f32>, !nn.tensor<[B, T, 3], f32>, !nn.tensor<[B, T, 4], f32>
})"},
    {"conv_pool", R"(
nn.parameter @w1 : !nn.tensor<[3, 3, 2], f32>
nn.parameter @b1 : !nn.tensor<[3], f32>
nn.parameter @w2 : !nn.tensor<[2, 2, 2], f32>
nn.graph @g(%x: !nn.tensor<[B, T, 2], f32>)
    -> (!nn.tensor<[B, T, 3], f32>, !nn.tensor<[B, T2, 2], f32>, !nn.tensor<[B, T2, 2], f32>,
        !nn.tensor<[B, T, 2], f32>)
    dims [B: batch, T: seq(B), T2: seq(B) = ceildiv(T, 2)] {
  %w1 = nn.param_ref @w1 : !nn.tensor<[3, 3, 2], f32>
  %b1 = nn.param_ref @b1 : !nn.tensor<[3], f32>
  %w2 = nn.param_ref @w2 : !nn.tensor<[2, 2, 2], f32>
  %c1 = nn.conv1d %x, %w1, %b1 stride 1 : (!nn.tensor<[B, T, 2], f32>, !nn.tensor<[3, 3, 2], f32>, !nn.tensor<[3], f32>) -> !nn.tensor<[B, T, 3], f32>
  %c2 = nn.conv1d %x, %w2 stride 2 : (!nn.tensor<[B, T, 2], f32>, !nn.tensor<[2, 2, 2], f32>) -> !nn.tensor<[B, T2, 2], f32>
  %p1 = nn.pool max %x window 3 stride 2 : (!nn.tensor<[B, T, 2], f32>) -> !nn.tensor<[B, T2, 2], f32>
  %p2 = nn.pool avg %x window 2 stride 1 : (!nn.tensor<[B, T, 2], f32>) -> !nn.tensor<[B, T, 2], f32>
  nn.return %c1, %c2, %p1, %p2 : !nn.tensor<[B, T, 3], f32>, !nn.tensor<[B, T2, 2], f32>,
      !nn.tensor<[B, T2, 2], f32>, !nn.tensor<[B, T, 2], f32>
})"},
    {"reduce", R"(
nn.graph @g(%x: !nn.tensor<[B, T, 3], f32>)
    -> (!nn.tensor<[B, 3], f32>, !nn.tensor<[B, 3], f32>, !nn.tensor<[B, 3], f32>)
    dims [B: batch, T: seq(B)] {
  %s = nn.reduce sum %x over 1 : (!nn.tensor<[B, T, 3], f32>) -> !nn.tensor<[B, 3], f32>
  %m = nn.reduce mean %x over 1 : (!nn.tensor<[B, T, 3], f32>) -> !nn.tensor<[B, 3], f32>
  %x2 = nn.reduce max %x over 1 : (!nn.tensor<[B, T, 3], f32>) -> !nn.tensor<[B, 3], f32>
  nn.return %s, %m, %x2 : !nn.tensor<[B, 3], f32>, !nn.tensor<[B, 3], f32>, !nn.tensor<[B, 3], f32>
})"},
    {"frame_losses", R"(
nn.graph @g(%x: !nn.tensor<[B, T, 5], f32>, %y: !nn.tensor<[B, T], i32>, %r: !nn.tensor<[B, T, 5], f32>)
    dims [B: batch, T: seq(B)] {
  %ce = nn.cross_entropy %x, %y from logits label_smoothing 1.000000e-01 : (!nn.tensor<[B, T, 5], f32>, !nn.tensor<[B, T], i32>) -> !nn.tensor<[B, T], f32>
  nn.mark_loss %ce as "ce" normalize per_frame : !nn.tensor<[B, T], f32>
  %lp = nn.log_softmax %x : !nn.tensor<[B, T, 5], f32>
  %ce2 = nn.cross_entropy %lp, %y from log_probs : (!nn.tensor<[B, T, 5], f32>, !nn.tensor<[B, T], i32>) -> !nn.tensor<[B, T], f32>
  nn.mark_loss %ce2 as "ce_lp" normalize per_sequence scale 2.000000e+00 : !nn.tensor<[B, T], f32>
  %e = nn.mse %x, %r : (!nn.tensor<[B, T, 5], f32>, !nn.tensor<[B, T, 5], f32>) -> !nn.tensor<[B, T], f32>
  nn.mark_loss %e as "mse" normalize sum as_error : !nn.tensor<[B, T], f32>
  nn.return
})"},
    {"ctc", R"(
nn.graph @g(%x: !nn.tensor<[B, T, 4], f32>, %l: !nn.tensor<[B, U], i32>, %k: !nn.tensor<[B], f32>)
    dims [B: batch, T: seq(B), U: seq(B)] {
  %c = nn.ctc_loss %x, %l from logits blank 0 : (!nn.tensor<[B, T, 4], f32>, !nn.tensor<[B, U], i32>) -> !nn.tensor<[B], f32>
  nn.mark_loss %c as "ctc" normalize per_sequence : !nn.tensor<[B], f32>
  %lp = nn.log_softmax %x : !nn.tensor<[B, T, 4], f32>
  %z = nn.ctc_loss %lp, %l from log_probs blank 3 zero_infinity : (!nn.tensor<[B, T, 4], f32>, !nn.tensor<[B, U], i32>) -> !nn.tensor<[B], f32>
  nn.mark_loss %z, %k as "ctc_zi" normalize custom : !nn.tensor<[B], f32>, !nn.tensor<[B], f32>
  nn.return
})"},
    {"pack_unpack", R"(
nn.graph @g(%x: !nn.tensor<[B, T, 3], i32>, %y: !nn.tensor<[B, T, 2], f32>)
    -> (!nn.tensor<[N, 3], i32>, !nn.tensor<[B, T, 2], f32>)
    dims [B: batch, T: seq(B), N: packed(B, T)] {
  %p = nn.pack %x : !nn.tensor<[B, T, 3], i32> -> !nn.tensor<[N, 3], i32>
  %q = nn.pack %y : !nn.tensor<[B, T, 2], f32> -> !nn.tensor<[N, 2], f32>
  %u = nn.unpack %q : !nn.tensor<[N, 2], f32> -> !nn.tensor<[B, T, 2], f32>
  nn.return %p, %u : !nn.tensor<[N, 3], i32>, !nn.tensor<[B, T, 2], f32>
})"},
    {"scalar_norm_call", R"(
nn.graph @inner(%x: !nn.tensor<[Bi, Ti, 3], f32>, %y: !nn.tensor<[Bi, Ti], i32>)
    -> !nn.tensor<[Bi, Ti, 3], f32> dims [Bi: batch, Ti: seq(Bi)] {
  %ce = nn.cross_entropy %x, %y from logits : (!nn.tensor<[Bi, Ti, 3], f32>, !nn.tensor<[Bi, Ti], i32>) -> !nn.tensor<[Bi, Ti], f32>
  nn.mark_loss %ce as "inner_ce" normalize per_frame : !nn.tensor<[Bi, Ti], f32>
  %t = nn.tanh %x : !nn.tensor<[Bi, Ti, 3], f32>
  nn.return %t : !nn.tensor<[Bi, Ti, 3], f32>
}
nn.graph @g(%x: !nn.tensor<[B, T, 3], f32>, %y: !nn.tensor<[B, T], i32>, %k: !nn.tensor<[], f32>)
    -> !nn.tensor<[B, T, 3], f32> dims [B: batch, T: seq(B)] {
  %h = nn.call @inner(%x, %y) : (!nn.tensor<[B, T, 3], f32>, !nn.tensor<[B, T], i32>) -> !nn.tensor<[B, T, 3], f32>
  %e = nn.mse %h, %x : (!nn.tensor<[B, T, 3], f32>, !nn.tensor<[B, T, 3], f32>) -> !nn.tensor<[B, T], f32>
  nn.mark_loss %e, %k as "mse" normalize custom : !nn.tensor<[B, T], f32>, !nn.tensor<[], f32>
  nn.return %h : !nn.tensor<[B, T, 3], f32>
})"},
};

const LengthPattern kPatterns[] = {
    LengthPattern::Mixed, LengthPattern::AllEqual, LengthPattern::WithEmpty};

class LoweringTest : public ::testing::TestWithParam<OpCase> {};

TEST_P(LoweringTest, MatchesReferencePackedAndPadded) {
  const OpCase &c = GetParam();
  Executable padded = compileOrDie(c.source, /*pack=*/false, "g");
  Executable packed = compileOrDie(c.source, /*pack=*/true, "g");
  // Shapes vary with the pattern, and three more runs draw them at random.
  struct Run {
    LengthPattern pattern;
    int64_t batch, padded;
  };
  std::vector<Run> runs{{LengthPattern::Mixed, 4, 7},
                        {LengthPattern::AllEqual, 2, 5},
                        {LengthPattern::WithEmpty, 5, 6},
                        {LengthPattern::AllEqual, 1, 1}};
  std::mt19937 shapes(std::hash<std::string>()(c.name));
  for (int i = 0; i < 3; ++i)
    runs.push_back({kPatterns[i],
                    std::uniform_int_distribution<int64_t>(1, 6)(shapes),
                    std::uniform_int_distribution<int64_t>(1, 10)(shapes)});
  uint32_t seed = 17;
  for (const Run &run : runs) {
    SCOPED_TRACE("length pattern " + std::to_string((int)run.pattern) +
                 ", batch " + std::to_string(run.batch) + ", padded " +
                 std::to_string(run.padded));
    RunInputs inputs = makeInputs(padded.manifest(), seed++, run.pattern,
                                  run.batch, run.padded);
    RunResult a, b;
    Status status = padded.run(inputs, a);
    ASSERT_TRUE(status.ok()) << status.message();
    status = packed.run(inputs, b);
    ASSERT_TRUE(status.ok()) << status.message();
    expectMatchesReference(c.source, padded, inputs, a, 1e-4, 1e-5);
    expectSameResults(padded.manifest(), inputs, a, b, 1e-5);
  }
}

INSTANTIATE_TEST_SUITE_P(Ops, LoweringTest, ::testing::ValuesIn(kCases),
                         [](const auto &info) { return info.param.name; });

std::string readExample(const std::string &name) {
  std::ifstream file(std::string(NN_SOURCE_DIR) + "/examples/" + name);
  std::stringstream text;
  text << file.rdbuf();
  return text.str();
}

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
