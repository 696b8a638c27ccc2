//===- ChunkedLossTest.cpp - overlapping chunks count each frame once -----===//
//
// A frame-local model (each frame's loss reads that frame only) scores
// every frame alike whole or chunked, so the chunk weights must make the
// chunks of a dataset add up to the whole utterances: summed losses,
// frame counts and (unnormalized) gradients, packed and padded.
//
//===----------------------------------------------------------------------===//

#include "ExecutionUtil.h"

#include "nn/Dataset.h"

#include <gtest/gtest.h>

#include <random>

using namespace nn;
using namespace nn::testing;

namespace {

const char *kModel = R"(
nn.parameter @w : !nn.tensor<[5, 3], f32>
nn.parameter @b : !nn.tensor<[5], f32>
nn.graph @g(%features: !nn.tensor<[B, T, 3], f32>,
            %targets: !nn.tensor<[B, T], i32>,
            %chunk_weights: !nn.tensor<[B, T], f32>)
    dims [B: batch, T: seq(B)] {
  %w = nn.param_ref @w : !nn.tensor<[5, 3], f32>
  %b = nn.param_ref @b : !nn.tensor<[5], f32>
  %l = nn.linear %features, %w, %b : !nn.tensor<[B, T, 3], f32>, !nn.tensor<[5, 3], f32>, !nn.tensor<[5], f32>
  %ce = nn.cross_entropy %l, %targets from logits : !nn.tensor<[B, T, 5], f32>, !nn.tensor<[B, T], i32>
  nn.mark_loss %ce weights %chunk_weights as "ce" normalize per_frame : !nn.tensor<[B, T], f32> weights !nn.tensor<[B, T], f32>
  %e = nn.frame_error %l, %targets : !nn.tensor<[B, T, 5], f32>, !nn.tensor<[B, T], i32>
  nn.mark_loss %e weights %chunk_weights as "fer" normalize per_frame as_error : !nn.tensor<[B, T], f32> weights !nn.tensor<[B, T], f32>
  nn.return
}
)";

/// Utterances of these lengths with random features and targets.
Dataset randomData(const Manifest &manifest,
                   const std::vector<int32_t> &lengths) {
  int32_t total = 0;
  for (int32_t length : lengths)
    total += length;
  std::mt19937 rng(7);
  std::normal_distribution<float> normal;
  std::map<std::string, Tensor> a;
  a["features"] = Tensor(DType::f32, {total, 3});
  for (int64_t i = 0; i < total * 3; ++i)
    a["features"].data<float>()[i] = normal(rng);
  a["targets"] = Tensor(DType::i32, {total});
  for (int64_t i = 0; i < total; ++i)
    a["targets"].data<int32_t>()[i] = (int32_t)(rng() % 5);
  a["features.lengths"] =
      Tensor::of<int32_t>(DType::i32, {(int64_t)lengths.size()}, lengths);
  a["targets.lengths"] = a["features.lengths"];
  absl::StatusOr<Dataset> dataset = Dataset::forModel(manifest);
  EXPECT_TRUE(dataset.ok()) << dataset.status().message();
  absl::Status added = dataset->addShard({{"random.npz", a}}, manifest);
  EXPECT_TRUE(added.ok()) << added.message();
  return std::move(*dataset);
}

struct Totals {
  double ceSum = 0, ceFrames = 0, ferSum = 0, ferFrames = 0;
  /// Unnormalized gradients: each batch's times its frame count.
  std::map<std::string, std::vector<double>> gradients;
};

/// The dataset's utterances in batches of `batchSize`, in order, added up.
Totals runAll(const Executable &exe, const Dataset &dataset,
              const RunInputs &parameters, int64_t batchSize) {
  Totals totals;
  for (int64_t first = 0; first < dataset.size(); first += batchSize) {
    std::vector<int64_t> members;
    for (int64_t u = first; u < std::min(first + batchSize, dataset.size());
         ++u)
      members.push_back(u);
    RunInputs inputs = dataset.batch(members);
    inputs.parameters = parameters.parameters;
    RunResult result;
    absl::Status status = exe.run(inputs, result);
    EXPECT_TRUE(status.ok()) << status.message();
    double frames = 0;
    for (const LossValue &loss : result.losses) {
      if (loss.name == "ce") {
        totals.ceSum += loss.sum;
        totals.ceFrames += loss.normalization;
        frames = loss.normalization;
      } else {
        totals.ferSum += loss.sum;
        totals.ferFrames += loss.normalization;
      }
    }
    for (const std::string &name : result.gradientNames()) {
      const Tensor &g = *result.gradient(name);
      std::vector<double> &sum = totals.gradients[name];
      sum.resize(g.numElements(), 0.0);
      for (int64_t i = 0; i < g.numElements(); ++i)
        sum[i] += g.at(i) * frames;
    }
  }
  return totals;
}

class ChunkedLossTest : public ::testing::TestWithParam<bool> {};

TEST_P(ChunkedLossTest, OverlappingChunksAddUpToTheWholeUtterances) {
  CompileOptions options;
  options.optimize.pack = GetParam();
  options.grads = true;
  Executable exe = compileOrDie(kModel, options);
  const Manifest &manifest = exe.manifest();
  Dataset whole = randomData(manifest, {13, 1, 7, 20, 9, 4, 11});
  RunInputs parameters = makeInputs(manifest, 3, LengthPattern::AllEqual, 1, 1);
  Totals reference = runAll(exe, whole, parameters, 3);
  EXPECT_EQ(reference.ceFrames, 65);

  for (const char *spec : {"5:3", "4:1", "6:6", "8:5"}) {
    SCOPED_TRACE(spec);
    absl::StatusOr<Dataset> chunked = whole.chunked(*parseChunking(spec));
    ASSERT_TRUE(chunked.ok()) << chunked.status().message();
    EXPECT_GT(chunked->size(), whole.size());
    Totals got = runAll(exe, *chunked, parameters, 4);
    EXPECT_EQ(got.ceFrames, reference.ceFrames);
    EXPECT_EQ(got.ferFrames, reference.ferFrames);
    EXPECT_TRUE(close(got.ceSum, reference.ceSum, 1e-5))
        << got.ceSum << " vs " << reference.ceSum;
    EXPECT_EQ(got.ferSum, reference.ferSum);
    for (const auto &[name, want] : reference.gradients) {
      const std::vector<double> &have = got.gradients.at(name);
      ASSERT_EQ(have.size(), want.size());
      for (size_t i = 0; i < want.size(); ++i)
        EXPECT_TRUE(close(have[i], want[i], 1e-4, 1e-5))
            << name << "[" << i << "]: chunked " << have[i] << ", whole "
            << want[i];
    }
  }
}

INSTANTIATE_TEST_SUITE_P(Layout, ChunkedLossTest, ::testing::Bool(),
                         [](const ::testing::TestParamInfo<bool> &info) {
                           return info.param ? "packed" : "padded";
                         });

} // namespace
