//===- InlineCallsTest.cpp - a model behind nn.call, inlined or not -------===//
//
// nn-inline-calls copies a called model into its caller so that packing
// sees the whole model. Inlined or called, a train step computes the same
// thing: the same losses and gradients, dropout masks included.
//
//===----------------------------------------------------------------------===//

#include "ExecutionUtil.h"

#include "gtest/gtest.h"

#include <algorithm>

using namespace nn;
using namespace nn::testing;

namespace {

/// A BLSTM acoustic model with dropout, called by a training graph that
/// masks its input with SpecAugment and puts CE and CTC on the logits: the
/// shape of examples/speech/ctc.mlir.
constexpr const char *kCalledModel = R"(
nn.parameter @wi : !nn.tensor<[2, 16, 5], f32>
nn.parameter @wh : !nn.tensor<[2, 16, 4], f32>
nn.parameter @b : !nn.tensor<[2, 16], f32>
nn.parameter @wo : !nn.tensor<[6, 8], f32>
nn.parameter @bo : !nn.tensor<[6], f32>
nn.graph @acoustic(%x: !nn.tensor<[B, T, 5], f32>) -> !nn.tensor<[B, T, 6], f32>
    dims [B: batch, T: seq(B)] {
  %wi = nn.param_ref @wi : !nn.tensor<[2, 16, 5], f32>
  %wh = nn.param_ref @wh : !nn.tensor<[2, 16, 4], f32>
  %b = nn.param_ref @b : !nn.tensor<[2, 16], f32>
  %h = nn.lstm bidirectional %x, %wi, %wh, %b : !nn.tensor<[B, T, 5], f32>, !nn.tensor<[2, 16, 5], f32>, !nn.tensor<[2, 16, 4], f32>, !nn.tensor<[2, 16], f32>
  %d = nn.dropout %h rate 2.000000e-01 : !nn.tensor<[B, T, 8], f32>
  %wo = nn.param_ref @wo : !nn.tensor<[6, 8], f32>
  %bo = nn.param_ref @bo : !nn.tensor<[6], f32>
  %l = nn.linear %d, %wo, %bo : !nn.tensor<[B, T, 8], f32>, !nn.tensor<[6, 8], f32>, !nn.tensor<[6], f32>
  nn.return %l : !nn.tensor<[B, T, 6], f32>
}
nn.graph @train(%x: !nn.tensor<[B, T, 5], f32>, %y: !nn.tensor<[B, T], i32>,
                %labels: !nn.tensor<[B, U], i32>)
    dims [B: batch, T: seq(B), U: seq(B)] {
  %m = nn.spec_augment %x freq_masks 1 freq_width 2 time_masks 1 time_width 2 time_ratio 2.000000e-01 : !nn.tensor<[B, T, 5], f32>
  %l = nn.call @acoustic(%m) : (!nn.tensor<[B, T, 5], f32>) -> !nn.tensor<[B, T, 6], f32>
  %ce = nn.cross_entropy %l, %y from logits : !nn.tensor<[B, T, 6], f32>, !nn.tensor<[B, T], i32>
  nn.mark_loss %ce as "ce" normalize per_frame : !nn.tensor<[B, T], f32>
  %ctc = nn.ctc_loss %l, %labels from logits blank 0 : !nn.tensor<[B, T, 6], f32>, !nn.tensor<[B, U], i32>
  nn.mark_loss %ctc as "ctc" normalize per_sequence : !nn.tensor<[B], f32>
  nn.return
}
)";

Executable compileTraining(const std::string &source, const std::string &entry,
                           bool inlineCalls, bool pack) {
  CompileOptions options;
  options.entry = entry;
  options.grads = true;
  options.training = true;
  options.optimize.inlineCalls = inlineCalls;
  options.optimize.pack = pack;
  return compileOrDie(source, options);
}

/// Whether the entry saves an activation of an op named `op` (the
/// saved-value analysis does not look into calls: the op is in the entry
/// itself), one indexed by a packed dim when `packed` (the op ran on
/// packed frames).
bool savesValuesOf(const Manifest &manifest, const std::string &op,
                   bool packed) {
  return std::any_of(
      manifest.saved.begin(), manifest.saved.end(), [&](const TensorInfo &t) {
        return !t.axes.empty() && t.name.find(op) != std::string::npos &&
               (!packed ||
                std::any_of(manifest.dims.begin(), manifest.dims.end(),
                            [&](const DimInfo &dim) {
                              return dim.kind == DimInfo::Kind::packed &&
                                     dim.name == t.axes.front().dim;
                            }));
      });
}

/// Compiles `entry` of `source` for training with its calls kept and
/// inlined, padded and packed, and checks that inlining changes nothing
/// but what packs: `op` (the called model's sequence-mixing op) runs on
/// packed frames only once inlined; the losses and parameter gradients
/// of the called and inlined graphs are equal on padded frames, and
/// within float rounding packed.
void expectInlinedMatchesCalled(const std::string &source,
                                const std::string &entry, const std::string &op,
                                const std::vector<std::string> &parameters,
                                int64_t batch, int64_t padded) {
  Executable called = compileTraining(source, entry, false, false);
  Executable inlined = compileTraining(source, entry, true, false);
  Executable packed = compileTraining(source, entry, true, true);
  // Called, the op is not the entry's; inlined, it is (so the equality
  // below compares two different graphs), and it packs.
  EXPECT_FALSE(savesValuesOf(called.manifest(), op, false));
  EXPECT_TRUE(savesValuesOf(inlined.manifest(), op, false));
  EXPECT_TRUE(savesValuesOf(packed.manifest(), op, true));

  RunInputs inputs =
      makeInputs(called.manifest(), 17, LengthPattern::Mixed, batch, padded);
  // Labels no longer than CTC can fit into the shortest sequences.
  for (auto &[name, lengths] : inputs.lengths)
    if (name == "U" || name == "Uc")
      for (int32_t &u : lengths)
        u = std::min(u, 2);
  Tensor seed(DType::i32, {});
  seed.data<int32_t>()[0] = 23;
  const std::vector<TensorInfo> &declared = called.manifest().inputs;
  if (std::any_of(declared.begin(), declared.end(),
                  [](const TensorInfo &t) { return t.name == "dropout_seed"; }))
    inputs.inputs["dropout_seed"] = seed;

  RunResult want, same, got;
  absl::Status status = called.run(inputs, want);
  ASSERT_TRUE(status.ok()) << status.message();
  status = inlined.run(inputs, same);
  ASSERT_TRUE(status.ok()) << status.message();
  status = packed.run(inputs, got);
  ASSERT_TRUE(status.ok()) << status.message();

  ASSERT_FALSE(want.losses.empty());
  for (size_t i = 0; i < want.losses.size(); ++i) {
    SCOPED_TRACE(want.losses[i].name);
    ASSERT_EQ(same.losses.at(i).name, want.losses[i].name);
    // The same ops on the same padded frames, the same dropout masks.
    EXPECT_EQ(same.losses[i].sum, want.losses[i].sum);
    EXPECT_TRUE(close(got.losses.at(i).sum, want.losses[i].sum, 1e-5));
    EXPECT_TRUE(std::isfinite(want.losses[i].sum));
  }
  for (const std::string &parameter : parameters) {
    SCOPED_TRACE(parameter);
    const Tensor *w = want.gradient(parameter), *s = same.gradient(parameter),
                 *g = got.gradient(parameter);
    ASSERT_TRUE(w && s && g);
    ASSERT_EQ(w->numElements(), g->numElements());
    double largest = 0;
    for (int64_t i = 0; i < w->numElements(); ++i)
      largest = std::max(largest, std::fabs(w->at(i)));
    EXPECT_GT(largest, 0.0);
    for (int64_t i = 0; i < w->numElements(); ++i) {
      EXPECT_EQ(s->at(i), w->at(i)) << i;
      EXPECT_TRUE(close(g->at(i), w->at(i), 1e-4, 1e-6 * largest))
          << i << ": packed " << g->at(i) << ", called " << w->at(i);
    }
  }
}

TEST(InlineCallsTest, SameLossesAndGradientsAsTheCall) {
  expectInlinedMatchesCalled(kCalledModel, "train", "lstm",
                             {"wi", "wh", "b", "wo", "bo"}, 5, 9);
}

/// Example 2: the criterion's dims Bc, Tc, Tc6 stand for the encoder's B,
/// T, T6, and the encoder's own T2 is the criterion's Tc2. The packing
/// reaches through the former callee to its input: both convolutions
/// (T -> T2), the pool (T2 -> T6), the layer norm and the output layer
/// run packed.
TEST(InlineCallsTest, RenamedDimsInExample2) {
  expectInlinedMatchesCalled(
      readExample("conv_encoder_decoupled_loss.mlir"), "criterion",
      "layer_norm", {"conv1.w", "conv2.w", "norm.scale", "out.w"}, 3, 14);
}

} // namespace
