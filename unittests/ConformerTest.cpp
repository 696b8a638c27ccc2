//===- ConformerTest.cpp - the Conformer example, whole -------------------===//
//
// examples/speech/conformer_ctc.mlir puts attention, depthwise convolution,
// glu, silu and layer norm into two Conformer blocks behind a strided
// subsampling convolution:
//   * the gradients of every parameter of its CTC entry, compiled padded
//     and packed (the encoder then runs on packed rows), match the float64
//     reference evaluating the differentiated graph, and NaN in the
//     padding changes nothing in either;
//   * batch invariance: an utterance's encoder output computed alone
//     equals its output in a batch of very different lengths whose padding
//     holds NaN, within rel 1e-5 (the layers' GEMMs may block a batch's
//     rows differently from one utterance's; attention and convolutions
//     read the same frames in the same order); so does the gradient of its
//     CTC loss with respect to its input features, padded and packed,
//     within 3e-5 of the gradient's largest magnitude (the backward's
//     GEMMs block a batch's rows differently from one utterance's; the
//     deviation measured was at most 4.6e-6 of it, on the longest
//     utterance).
//
//===----------------------------------------------------------------------===//

#include "ExecutionUtil.h"

#include "nn/Synthetic.h"

#include <cmath>
#include <limits>
#include <random>

using namespace nn;
using namespace nn::testing;

namespace {

const char *kExample = "speech/conformer_ctc.mlir";

Executable compileEntry(const std::string &source, const std::string &entry,
                        bool grads, bool pack) {
  CompileOptions options;
  options.entry = entry;
  options.grads = grads;
  options.optimize.pack = pack;
  return compileOrDie(source, options);
}

TEST(ConformerTest, GradientsMatchReferencePackedAndPadded) {
  std::string source = readExample(kExample);
  ASSERT_FALSE(source.empty());
  std::string differentiated =
      transform(source, false, false, /*grads=*/true, {}, "ctc");
  ASSERT_FALSE(differentiated.empty());
  Executable padded = compileEntry(source, "ctc", true, false);
  Executable packed = compileEntry(source, "ctc", true, true);
  const Manifest &manifest = padded.manifest();
  // Frames 12, 5 and 9 (6, 3 and 5 after subsampling) for 3, 1 and 2
  // labels: every CTC loss is finite.
  std::map<std::string, std::vector<int32_t>> lengths{{"T", {12, 5, 9}},
                                                      {"U", {3, 1, 2}}};
  std::mt19937 rng(7), nanRng(7);
  RunInputs inputs = syntheticBatch(manifest, 3, lengths, rng);
  RunInputs nanInputs = syntheticBatch(
      manifest, 3, lengths, nanRng, std::numeric_limits<double>::quiet_NaN());
  syntheticParameters(manifest, rng, inputs);
  nanInputs.parameters = inputs.parameters;
  RunResult a, b, c, d;
  absl::Status status = padded.run(inputs, a);
  ASSERT_TRUE(status.ok()) << status.message();
  status = packed.run(inputs, b);
  ASSERT_TRUE(status.ok()) << status.message();
  status = packed.run(nanInputs, c);
  ASSERT_TRUE(status.ok()) << status.message();
  status = padded.run(nanInputs, d);
  ASSERT_TRUE(status.ok()) << status.message();
  reference::Result want;
  status = reference::evaluate(differentiated, "ctc", inputs, want);
  ASSERT_TRUE(status.ok()) << status.message();
  std::vector<std::string> names = a.gradientNames();
  ASSERT_EQ(names.size(), manifest.parameters.size());
  ASSERT_GE(want.outputs.size(), names.size());
  size_t first = want.outputs.size() - names.size();
  for (size_t g = 0; g < names.size(); ++g) {
    const std::string &name = names[g];
    const Tensor &pad = *a.gradient(name), &pack = *b.gradient(name),
                 &nan = *c.gradient(name), &nanPad = *d.gradient(name);
    const reference::Array &ref = want.outputs[first + g];
    ASSERT_EQ(pad.shape(), ref.shape) << name;
    int mismatches = 0;
    for (int64_t i = 0; i < pad.numElements() && mismatches < 5; ++i) {
      bool ok = close(pad.at(i), ref.data[i], 1e-3, 1e-5) &&
                close(pack.at(i), pad.at(i), 1e-4, 1e-6) &&
                close(nan.at(i), pack.at(i), 1e-6, 1e-8) &&
                close(nanPad.at(i), pad.at(i), 1e-6, 1e-8);
      mismatches += !ok;
      EXPECT_TRUE(ok) << name << "[" << i << "]: padded " << pad.at(i)
                      << ", packed " << pack.at(i) << ", reference "
                      << ref.data[i] << ", with NaN padding packed "
                      << nan.at(i) << " and padded " << nanPad.at(i);
    }
  }
}

TEST(ConformerTest, EncoderOutputDoesNotDependOnBatchMates) {
  std::string source = readExample(kExample);
  Executable exe = compileEntry(source, "acoustic", false, false);
  const Manifest &manifest = exe.manifest();
  // The longest: 100 frames after subsampling, past the attention's first
  // block of 64.
  const std::vector<int32_t> lengths = {70, 7, 33, 1, 200};
  std::mt19937 paramRng(3);
  RunInputs params;
  syntheticParameters(manifest, paramRng, params);
  // Each utterance's features: the same values whichever batch it is in.
  auto features = [&](const std::vector<int> &ids, float pad) {
    int32_t longest = 1;
    for (int id : ids)
      longest = std::max(longest, lengths[id]);
    RunInputs inputs;
    inputs.parameters = params.parameters;
    Tensor x(DType::f32, {int64_t(ids.size()), longest, 40});
    for (size_t b = 0; b < ids.size(); ++b) {
      inputs.lengths["T"].push_back(lengths[ids[b]]);
      std::mt19937 rng(100 + ids[b]);
      std::normal_distribution<float> normal;
      for (int32_t t = 0; t < longest; ++t)
        for (int f = 0; f < 40; ++f)
          x.data<float>()[(b * longest + t) * 40 + f] =
              t < lengths[ids[b]] ? normal(rng) : pad;
    }
    inputs.inputs["features"] = std::move(x);
    return inputs;
  };
  std::vector<int> all{0, 1, 2, 3, 4};
  RunResult batch;
  absl::Status status =
      exe.run(features(all, std::numeric_limits<float>::quiet_NaN()), batch);
  ASSERT_TRUE(status.ok()) << status.message();
  const Tensor &logits = batch.outputs.at(0).second; // [B, T2, 17]
  int64_t frames = logits.shape()[1];
  for (int id : all) {
    SCOPED_TRACE("utterance " + std::to_string(id));
    RunResult alone;
    status = exe.run(features({id}, 0.0f), alone);
    ASSERT_TRUE(status.ok()) << status.message();
    const Tensor &single = alone.outputs.at(0).second;
    int64_t valid = (lengths[id] + 1) / 2;
    ASSERT_EQ(single.shape()[1], valid);
    for (int64_t t = 0; t < valid; ++t)
      for (int64_t v = 0; v < 17; ++v) {
        float got = logits.data<float>()[(id * frames + t) * 17 + v];
        float want = single.data<float>()[t * 17 + v];
        ASSERT_TRUE(close(got, want, 1e-5, 1e-6))
            << "frame " << t << " class " << v << ": in the batch " << got
            << ", alone " << want;
      }
  }
}

/// The gradient of an utterance's CTC loss with respect to its own input
/// features reads nothing of its batch-mates: alone, or in a batch of very
/// different lengths with NaN in the padding, padded and packed.
TEST(ConformerTest, InputGradientDoesNotDependOnBatchMates) {
  std::string source = readExample(kExample);
  ASSERT_FALSE(source.empty());
  // 35, 4, 17, 1 and 100 frames after subsampling; labels short enough
  // for every CTC loss to be finite.
  const std::vector<int32_t> frames = {70, 7, 33, 1, 200};
  const std::vector<int32_t> labels = {12, 2, 6, 0, 40};
  for (bool pack : {false, true}) {
    SCOPED_TRACE(pack ? "packed" : "padded");
    CompileOptions options;
    options.entry = "ctc";
    options.grads = true;
    options.inputGradients = {"features"};
    options.optimize.pack = pack;
    Executable exe = compileOrDie(source, options);
    std::mt19937 paramRng(5);
    RunInputs params;
    syntheticParameters(exe.manifest(), paramRng, params);
    // Each utterance's features and labels: the same whichever batch it
    // is in.
    auto batchOf = [&](const std::vector<int> &ids, float pad) {
      int32_t longest = 1, most = 1;
      for (int id : ids) {
        longest = std::max(longest, frames[id]);
        most = std::max(most, labels[id]);
      }
      RunInputs inputs;
      inputs.parameters = params.parameters;
      Tensor x(DType::f32, {int64_t(ids.size()), longest, 40});
      Tensor y(DType::i32, {int64_t(ids.size()), most});
      for (size_t b = 0; b < ids.size(); ++b) {
        int id = ids[b];
        inputs.lengths["T"].push_back(frames[id]);
        inputs.lengths["U"].push_back(labels[id]);
        std::mt19937 rng(100 + id);
        std::normal_distribution<float> normal;
        for (int32_t t = 0; t < longest; ++t)
          for (int f = 0; f < 40; ++f)
            x.data<float>()[(b * longest + t) * 40 + f] =
                t < frames[id] ? normal(rng) : pad;
        std::uniform_int_distribution<int32_t> label(1, 16);
        for (int32_t u = 0; u < most; ++u)
          y.data<int32_t>()[b * most + u] = u < labels[id] ? label(rng) : 0;
      }
      inputs.inputs["features"] = std::move(x);
      inputs.inputs["labels"] = std::move(y);
      return inputs;
    };
    // The gradient of the loss's sum: the objective divides it by the
    // normalization (here the batch size).
    auto gradientOfSum = [](const RunResult &result, int64_t b,
                            int32_t length) {
      const Tensor &grad = *result.inputGradient("features");
      double normalization = result.losses.at(0).normalization;
      int64_t longest = grad.shape()[1];
      std::vector<double> sum(length * 40);
      for (int64_t i = 0; i < length * 40; ++i)
        sum[i] = grad.at(b * longest * 40 + i) * normalization;
      return sum;
    };
    std::vector<int> all{0, 1, 2, 3, 4};
    RunResult batch;
    absl::Status status =
        exe.run(batchOf(all, std::numeric_limits<float>::quiet_NaN()), batch);
    ASSERT_TRUE(status.ok()) << status.message();
    ASSERT_EQ(batch.losses.at(0).name, "ctc");
    ASSERT_NE(batch.inputGradient("features"), nullptr);
    for (int id : all) {
      SCOPED_TRACE("utterance " + std::to_string(id));
      RunResult alone;
      status = exe.run(batchOf({id}, 0.0f), alone);
      ASSERT_TRUE(status.ok()) << status.message();
      std::vector<double> want = gradientOfSum(alone, 0, frames[id]);
      std::vector<double> got = gradientOfSum(batch, id, frames[id]);
      double largest = 0;
      for (double g : want)
        largest = std::max(largest, std::fabs(g));
      // Not vacuous: every utterance with frames has a gradient.
      EXPECT_GT(largest, 0.0);
      for (size_t i = 0; i < want.size(); ++i)
        ASSERT_NEAR(got[i], want[i], 3e-5 * largest)
            << "frame " << i / 40 << " feature " << i % 40;
    }
  }
}

} // namespace
