//===- LossTailTest.cpp - the fused loss tail against the unfused one -----===//
//
// nn-fuse-loss-tail replaces linear -> (log_softmax ->) cross_entropy by
// one op whose sweep never holds the logits. The same graphs compiled
// unfused, fused with the merged sweep, and fused with a recomputing
// backward must give the same losses and gradients (weight, bias, and the
// input's, which the test asks for) within rel 1e-5: with and without
// bias and label smoothing, from logits and from log-probabilities,
// packed and padded, NaN in the padding, rows that are not a multiple of
// the block, no rows and one row. A last test checks that no buffer the
// size of the logits is ever live.
//
//===----------------------------------------------------------------------===//

#include "ExecutionUtil.h"

#include "dialects/nn/NNDialect.h"
#include "dialects/nn/NNOps.h"
#include "lowering/Pipelines.h"
#include "lowering/Registration.h"
#include "runtime/Allocator.h"

#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/Parser/Parser.h"
#include "mlir/Pass/PassManager.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <sstream>

using namespace nn;
using namespace nn::testing;

namespace {

struct TailCase {
  bool bias;
  double smoothing;
  bool fromLogProbs;
};

// GoogleTest looks this name up. NOLINTNEXTLINE(readability-identifier-naming)
void PrintTo(const TailCase &c, std::ostream *os) {
  *os << (c.bias ? "bias" : "nobias") << "_eps" << c.smoothing
      << (c.fromLogProbs ? "_logprobs" : "_logits");
}

/// The tail at V classes over I features: x [B, T, I] -> linear (bias) ->
/// (log_softmax) -> cross_entropy, marked per frame.
std::string tailSource(const TailCase &c, int64_t features, int64_t classes) {
  std::string x = "!nn.tensor<[B, T, " + std::to_string(features) + "], f32>";
  std::string w = "!nn.tensor<[" + std::to_string(classes) + ", " +
                  std::to_string(features) + "], f32>";
  std::string bias = "!nn.tensor<[" + std::to_string(classes) + "], f32>";
  std::string z = "!nn.tensor<[B, T, " + std::to_string(classes) + "], f32>";
  std::ostringstream s;
  s << "nn.parameter @w : " << w << "\n";
  if (c.bias)
    s << "nn.parameter @b : " << bias << "\n";
  s << "nn.graph @g(%x: " << x << ", %y: !nn.tensor<[B, T], i32>)\n"
    << "    dims [B: batch, T: seq(B)] {\n"
    << "  %w = nn.param_ref @w : " << w << "\n";
  if (c.bias)
    s << "  %b = nn.param_ref @b : " << bias << "\n"
      << "  %z = nn.linear %x, %w, %b : " << x << ", " << w << ", " << bias
      << "\n";
  else
    s << "  %z = nn.linear %x, %w : " << x << ", " << w << "\n";
  std::string smoothing;
  if (c.smoothing != 0.0) {
    std::ostringstream eps;
    eps.precision(17);
    eps << " label_smoothing " << std::scientific << c.smoothing;
    smoothing = eps.str();
  }
  if (c.fromLogProbs)
    s << "  %lp = nn.log_softmax %z : " << z << "\n"
      << "  %ce = nn.cross_entropy %lp, %y from log_probs" << smoothing << " : "
      << z << ", !nn.tensor<[B, T], i32>\n";
  else
    s << "  %ce = nn.cross_entropy %z, %y from logits" << smoothing << " : "
      << z << ", !nn.tensor<[B, T], i32>\n";
  s << "  nn.mark_loss %ce as \"ce\" normalize per_frame : "
       "!nn.tensor<[B, T], f32>\n"
    << "  nn.return\n}\n";
  return s.str();
}

/// How the tail is compiled.
enum class Variant { Unfused, Sweep, Recompute };

CompileOptions optionsFor(Variant variant, bool pack) {
  CompileOptions options;
  options.optimize.pack = pack;
  options.grads = true;
  options.inputGradients = {"x"};
  options.optimize.fuseLossTail = variant != Variant::Unfused;
  options.optimize.lossTailBackward = variant == Variant::Recompute
                                          ? nn::LossTailBackward::recompute
                                          : nn::LossTailBackward::sweep;
  return options;
}

/// max |a - b| / max |b| over the tensor (0 for an all-zero b that a
/// matches exactly): a GEMM summed in blocks reassociates its sums, so
/// the bound is on the tensor's scale, not on each entry's.
double relativeError(const Tensor &a, const Tensor &b) {
  EXPECT_EQ(a.shape(), b.shape());
  const float *x = a.data<float>();
  const float *y = b.data<float>();
  double diff = 0, scale = 0;
  for (int64_t i = 0; i < b.numElements(); ++i) {
    if (std::isnan(x[i]) != std::isnan(y[i]))
      return std::numeric_limits<double>::infinity();
    diff = std::max(diff, (double)std::fabs(x[i] - y[i]));
    scale = std::max(scale, (double)std::fabs(y[i]));
  }
  return scale == 0 ? diff : diff / scale;
}

/// Counts the ops named `name` in `source` after the nn-level pipeline
/// with `options`' fusion settings and gradients.
int countAfterOptimize(const std::string &source, Variant variant,
                       llvm::StringRef name) {
  mlir::DialectRegistry registry;
  mlir::nn::registerPipelineDialects(registry);
  mlir::MLIRContext context(registry);
  context.loadAllAvailableDialects();
  mlir::OwningOpRef<mlir::ModuleOp> module =
      mlir::parseSourceString<mlir::ModuleOp>(source,
                                              mlir::ParserConfig(&context));
  if (!module)
    return -1;
  mlir::PassManager pm(&context);
  mlir::nn::PipelineSettings settings;
  settings.request.grads = true;
  settings.optimize.fuseLossTail = variant != Variant::Unfused;
  settings.optimize.lossTailBackward = variant == Variant::Recompute
                                           ? nn::LossTailBackward::recompute
                                           : nn::LossTailBackward::sweep;
  mlir::nn::buildOptimizePipeline(pm, settings);
  if (mlir::failed(pm.run(*module)))
    return -1;
  int count = 0;
  module->walk([&](mlir::Operation *op) {
    count += op->getName().getStringRef() == name;
  });
  return count;
}

class LossTailTest : public ::testing::TestWithParam<TailCase> {};

TEST_P(LossTailTest, FusedMatchesUnfusedPackedAndPadded) {
  const TailCase &c = GetParam();
  // 11 classes, 6 features: no size is a multiple of anything.
  std::string source = tailSource(c, 6, 11);
  ASSERT_EQ(countAfterOptimize(source, Variant::Sweep,
                               "nn.linear_cross_entropy_train"),
            1);
  ASSERT_EQ(countAfterOptimize(source, Variant::Recompute,
                               "nn.linear_cross_entropy_grad"),
            1);
  ASSERT_EQ(
      countAfterOptimize(source, Variant::Unfused, "nn.linear_cross_entropy"),
      0);
  // Rows: up to 3 x 300 padded (several blocks, the last one partial);
  // empty sequences; one row.
  std::vector<ShapeRun> runs{{LengthPattern::Mixed, 3, 300},
                             {LengthPattern::WithEmpty, 4, 5},
                             {LengthPattern::AllEqual, 1, 1}};
  for (bool pack : {false, true}) {
    Executable unfused =
        compileOrDie(source, optionsFor(Variant::Unfused, pack));
    Executable sweep = compileOrDie(source, optionsFor(Variant::Sweep, pack));
    Executable recompute =
        compileOrDie(source, optionsFor(Variant::Recompute, pack));
    for (const ShapeRun &run : runs) {
      SCOPED_TRACE(::testing::Message() << (pack ? "packed" : "padded") << " B="
                                        << run.batch << " T=" << run.padded);
      RunInputs inputs =
          makeInputs(unfused.manifest(), 7, run.pattern, run.batch, run.padded,
                     std::numeric_limits<double>::quiet_NaN());
      RunResult expected;
      ASSERT_TRUE(unfused.run(inputs, expected).ok());
      for (Executable *fused : {&sweep, &recompute}) {
        RunResult result;
        absl::Status status = fused->run(inputs, result);
        ASSERT_TRUE(status.ok()) << status.message();
        ASSERT_EQ(result.losses.size(), 1u);
        EXPECT_TRUE(close(result.losses[0].sum, expected.losses[0].sum, 1e-5))
            << result.losses[0].sum << " vs " << expected.losses[0].sum;
        EXPECT_TRUE(close(result.losses[0].normalized,
                          expected.losses[0].normalized, 1e-5));
        for (const char *parameter : {"w", "b"}) {
          if (!c.bias && std::string(parameter) == "b")
            continue;
          const Tensor *got = result.gradient(parameter);
          const Tensor *want = expected.gradient(parameter);
          ASSERT_TRUE(got && want) << parameter;
          EXPECT_LE(relativeError(*got, *want), 1e-5) << parameter;
        }
        const Tensor *got = result.inputGradient("x");
        const Tensor *want = expected.inputGradient("x");
        ASSERT_TRUE(got && want);
        // Padded frames: exactly 0 in every variant (NaN padding never
        // reaches them).
        const std::vector<int32_t> &lengths = inputs.lengths.at("T");
        int64_t padded = got->shape()[1], features = got->shape()[2];
        for (int64_t b = 0; b < run.batch; ++b)
          for (int64_t t = lengths[b]; t < padded; ++t)
            for (int64_t i = 0; i < features; ++i) {
              int64_t at = (b * padded + t) * features + i;
              ASSERT_EQ(got->data<float>()[at], 0.0f);
              ASSERT_EQ(want->data<float>()[at], 0.0f);
            }
        EXPECT_LE(relativeError(*got, *want), 1e-5) << "grad_input:x";
      }
    }
  }
}

INSTANTIATE_TEST_SUITE_P(Variants, LossTailTest,
                         ::testing::Values(TailCase{true, 0.0, false},
                                           TailCase{false, 0.0, false},
                                           TailCase{true, 0.1, false},
                                           TailCase{false, 0.2, true},
                                           TailCase{true, 0.0, true}),
                         [](const ::testing::TestParamInfo<TailCase> &info) {
                           std::ostringstream name;
                           PrintTo(info.param, &name);
                           std::string text = name.str();
                           std::replace(text.begin(), text.end(), '.', '_');
                           return text;
                         });

/// Every batch empty: the sweep runs no block, the loss is 0 over 0
/// frames and every gradient is 0.
TEST(LossTailEdgeTest, NoRows) {
  std::string source = tailSource({true, 0.1, false}, 6, 11);
  for (bool pack : {false, true}) {
    Executable exe = compileOrDie(source, optionsFor(Variant::Sweep, pack));
    RunInputs inputs =
        makeInputs(exe.manifest(), 3, LengthPattern::AllEqual, 2, 4);
    inputs.lengths["T"] = {0, 0};
    RunResult result;
    absl::Status status = exe.run(inputs, result);
    ASSERT_TRUE(status.ok()) << status.message();
    EXPECT_EQ(result.losses[0].sum, 0.0);
    EXPECT_EQ(result.losses[0].normalized, 0.0);
    for (const char *parameter : {"w", "b"}) {
      const Tensor *gradient = result.gradient(parameter);
      ASSERT_TRUE(gradient);
      for (int64_t i = 0; i < gradient->numElements(); ++i)
        ASSERT_EQ(gradient->data<float>()[i], 0.0f) << parameter;
    }
  }
}

/// The point of the fusion: at V = 4000 over 2000 packed rows the logits
/// alone would take 32 MB; the fused forward and backward never hold a
/// buffer that large, and the peak of all large buffers stays below the
/// logits' size (the unfused tail holds several).
TEST(LossTailEdgeTest, NeverHoldsTheLogits) {
  std::string source = tailSource({true, 0.0, false}, 64, 4000);
  Executable fused = compileOrDie(source, optionsFor(Variant::Sweep, true));
  Executable unfused = compileOrDie(source, optionsFor(Variant::Unfused, true));
  RunInputs inputs =
      makeInputs(fused.manifest(), 5, LengthPattern::AllEqual, 4, 500);
  double logitsBytes = 4.0 * 2000 * 4000;
  RunResult result;
  nn::runtime::resetPeakLiveBytes();
  ASSERT_TRUE(fused.run(inputs, result).ok());
  double fusedPeak = (double)nn::runtime::peakLiveBytes();
  nn::runtime::resetPeakLiveBytes();
  ASSERT_TRUE(unfused.run(inputs, result).ok());
  double unfusedPeak = (double)nn::runtime::peakLiveBytes();
  EXPECT_LT(fusedPeak, 0.5 * logitsBytes) << "fused peak " << fusedPeak;
  EXPECT_GT(unfusedPeak, logitsBytes) << "unfused peak " << unfusedPeak;
}

} // namespace
