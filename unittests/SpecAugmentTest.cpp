//===- SpecAugmentTest.cpp - nn.spec_augment masks ------------------------===//
//
// nn.spec_augment with an explicit seed, compiled: against the reference
// evaluator (same elements zeroed, padded frames untouched), packed rows
// against the padded batch, and the shape of what it masks checked from
// its output alone: frequency masks are the same features in every
// unmasked frame of a sequence, time masks whole frames, both in at most
// the given number of bands no wider than their bounds. Without a seed it
// is the identity. (Gradients: GradientTest's spec_augment_training.)
//
//===----------------------------------------------------------------------===//

#include "ExecutionUtil.h"

#include <algorithm>
#include <cmath>
#include <random>
#include <set>

using namespace nn;
using namespace nn::testing;

namespace {

constexpr int64_t kFeatures = 8, kFreqMasks = 2, kFreqWidth = 3, kTimeMasks = 2,
                  kTimeWidth = 4;
constexpr double kTimeRatio = 0.5;

/// The op on padded features and on the same features packed, with one
/// seed (and so one key: the same masks).
const char *kSource = R"(
nn.graph @g(%x: !nn.tensor<[B, T, 8], f32>, %seed: !nn.tensor<[], i32>)
    -> (!nn.tensor<[B, T, 8], f32>, !nn.tensor<[B, T, 8], f32>, !nn.tensor<[B, T, 8], f32>)
    dims [B: batch, T: seq(B), N: packed(B, T)] {
  %a = nn.spec_augment %x seed %seed freq_masks 2 freq_width 3 time_masks 2 time_width 4 time_ratio 5.000000e-01 : !nn.tensor<[B, T, 8], f32>, !nn.tensor<[], i32>
  %p = nn.pack %x : !nn.tensor<[B, T, 8], f32> -> !nn.tensor<[N, 8], f32>
  %pa = nn.spec_augment %p seed %seed freq_masks 2 freq_width 3 time_masks 2 time_width 4 time_ratio 5.000000e-01 : !nn.tensor<[N, 8], f32>, !nn.tensor<[], i32>
  %u = nn.unpack %pa : !nn.tensor<[N, 8], f32> -> !nn.tensor<[B, T, 8], f32>
  %e = nn.spec_augment %x freq_masks 2 freq_width 3 time_masks 2 time_width 4 : !nn.tensor<[B, T, 8], f32>
  nn.return %a, %u, %e : !nn.tensor<[B, T, 8], f32>, !nn.tensor<[B, T, 8], f32>, !nn.tensor<[B, T, 8], f32>
})";

/// Features that are never 0 (so a 0 is a mask) in real frames, NaN in
/// padded ones (which must come out as they went in).
RunInputs batch(const std::vector<int32_t> &lengths, int32_t seed,
                std::mt19937 &rng) {
  int64_t padded = 1;
  for (int32_t length : lengths)
    padded = std::max<int64_t>(padded, length);
  int64_t rows = lengths.size();
  Tensor x(DType::f32, {rows, padded, kFeatures});
  std::uniform_real_distribution<float> value(0.5f, 2.0f);
  for (int64_t b = 0; b < rows; ++b)
    for (int64_t t = 0; t < padded; ++t)
      for (int64_t k = 0; k < kFeatures; ++k)
        x.data<float>()[(b * padded + t) * kFeatures + k] =
            t < lengths[b] ? value(rng) : std::nanf("");
  Tensor s(DType::i32, {});
  s.data<int32_t>()[0] = seed;
  RunInputs inputs;
  inputs.inputs["x"] = x;
  inputs.inputs["seed"] = s;
  inputs.lengths["T"] = lengths;
  return inputs;
}

/// The maximal runs [start, end) of `covered` that are true.
std::vector<std::pair<int64_t, int64_t>> runsOf(const std::vector<bool> &c) {
  std::vector<std::pair<int64_t, int64_t>> runs;
  for (int64_t i = 0; i < (int64_t)c.size(); ++i)
    if (c[i] && (i == 0 || !c[i - 1])) {
      int64_t end = i;
      while (end < (int64_t)c.size() && c[end])
        ++end;
      runs.emplace_back(i, end);
    }
  return runs;
}

/// Widths of the bands actually seen, over all sequences (coverage).
struct Seen {
  std::set<int64_t> featureRunWidths, frameRunWidths;
  int64_t maskedSequences = 0;
};

/// Checks the masks of sequence b of `out` (input `x`) from the output
/// alone, and records what it saw.
void checkMaskShape(const Tensor &x, const Tensor &out, int64_t b,
                    int64_t length, int64_t padded, Seen &seen) {
  auto at = [&](const Tensor &t, int64_t frame, int64_t k) {
    return t.data<float>()[(b * padded + frame) * kFeatures + k];
  };
  // A frame is time-masked when all its features are 0.
  std::vector<bool> frameMasked(length);
  for (int64_t t = 0; t < length; ++t) {
    bool all = true;
    for (int64_t k = 0; k < kFeatures; ++k)
      all &= at(out, t, k) == 0.0f;
    frameMasked[t] = all;
  }
  // Every other frame: the same zeroed features, the others unchanged.
  std::vector<bool> featureMasked(kFeatures);
  bool first = true;
  for (int64_t t = 0; t < length; ++t) {
    if (frameMasked[t])
      continue;
    for (int64_t k = 0; k < kFeatures; ++k) {
      bool zero = at(out, t, k) == 0.0f;
      if (!zero) {
        EXPECT_EQ(at(out, t, k), at(x, t, k)) << "frame " << t << " k " << k;
      }
      if (first) {
        featureMasked[k] = zero;
      } else {
        EXPECT_EQ(zero, featureMasked[k]) << "frame " << t << " feature " << k;
      }
    }
    first = false;
  }
  // At most kFreqMasks bands, each at most kFreqWidth wide (overlapping
  // masks make one band no wider than their sum).
  auto featureRuns = runsOf(featureMasked);
  EXPECT_LE(featureRuns.size(), (size_t)kFreqMasks);
  int64_t featureZeros = 0;
  for (auto [start, end] : featureRuns) {
    featureZeros += end - start;
    seen.featureRunWidths.insert(end - start);
  }
  EXPECT_LE(featureZeros, kFreqMasks * kFreqWidth);
  int64_t bound = std::min<int64_t>(kTimeWidth, (int64_t)(kTimeRatio * length));
  auto frameRuns = runsOf(frameMasked);
  int64_t frameZeros = 0;
  for (auto [start, end] : frameRuns) {
    frameZeros += end - start;
    seen.frameRunWidths.insert(end - start);
  }
  // All features masked makes every frame look time-masked.
  if (featureZeros < kFeatures) {
    EXPECT_LE(frameRuns.size(), (size_t)kTimeMasks);
    EXPECT_LE(frameZeros, kTimeMasks * bound) << "length " << length;
  }
  seen.maskedSequences += featureZeros > 0 || frameZeros > 0;
  // Padded frames: as they went in (NaN).
  for (int64_t t = length; t < padded; ++t)
    for (int64_t k = 0; k < kFeatures; ++k)
      EXPECT_TRUE(std::isnan(at(out, t, k))) << "padded frame " << t;
}

TEST(SpecAugmentTest, MatchesReferencePackedEqualsPaddedAndMasksBands) {
  Executable exe = compileOrDie(kSource, /*pack=*/false);
  std::mt19937 rng(11);
  Seen seen;
  int64_t sequences = 0;
  for (int round = 0; round < 40; ++round) {
    SCOPED_TRACE("round " + std::to_string(round));
    std::vector<int32_t> lengths(1 + rng() % 5);
    for (int32_t &length : lengths)
      length = rng() % 24; // empty sequences too
    RunInputs inputs = batch(lengths, (int32_t)rng(), rng);
    RunResult result;
    absl::Status status = exe.run(inputs, result);
    ASSERT_TRUE(status.ok()) << status.message();
    reference::Result want;
    status = reference::evaluate(kSource, "g", inputs, want);
    ASSERT_TRUE(status.ok()) << status.message();
    const Tensor &x = inputs.inputs["x"];
    const Tensor &padded = result.outputs.at(0).second;
    const Tensor &packed = result.outputs.at(1).second;
    const Tensor &evaluation = result.outputs.at(2).second;
    int64_t pad = x.shape()[1];
    for (int64_t b = 0; b < (int64_t)lengths.size(); ++b) {
      for (int64_t i = b * pad * kFeatures;
           i < (b * pad + lengths[b]) * kFeatures; ++i) {
        float v = padded.data<float>()[i];
        ASSERT_EQ(v, (float)want.outputs.at(0).data[i]) << "element " << i;
        ASSERT_EQ(packed.data<float>()[i], v) << "element " << i;
        ASSERT_EQ(evaluation.data<float>()[i], x.data<float>()[i]);
      }
      checkMaskShape(x, padded, b, lengths[b], pad, seen);
      ++sequences;
    }
  }
  // The draws reach every width: bands of 1 .. kFreqWidth features (and
  // wider where two overlap or touch), and frames likewise.
  for (int64_t w = 1; w <= kFreqWidth; ++w)
    EXPECT_TRUE(seen.featureRunWidths.count(w)) << "feature band width " << w;
  for (int64_t w = 1; w <= kTimeWidth; ++w)
    EXPECT_TRUE(seen.frameRunWidths.count(w)) << "frame band width " << w;
  // A sequence is left alone only when all four widths come out 0.
  EXPECT_GT(seen.maskedSequences, sequences * 3 / 4);
}

TEST(SpecAugmentTest, SeedsAndSequencesDrawTheirOwnMasks) {
  Executable exe = compileOrDie(kSource, /*pack=*/false);
  std::mt19937 rng(5);
  // Four equal sequences under two seeds: their masks differ across the
  // batch and across seeds.
  std::vector<int32_t> lengths(4, 20);
  RunInputs inputs = batch(lengths, 1, rng);
  RunResult first, second, other;
  ASSERT_TRUE(exe.run(inputs, first).ok());
  ASSERT_TRUE(exe.run(inputs, second).ok());
  inputs.inputs["seed"].data<int32_t>()[0] = 2;
  ASSERT_TRUE(exe.run(inputs, other).ok());
  auto zeros = [&](const RunResult &r, int64_t b) {
    std::vector<bool> z;
    for (int64_t i = 0; i < 20 * kFeatures; ++i)
      z.push_back(
          r.outputs.at(0).second.data<float>()[b * 20 * kFeatures + i] == 0.0f);
    return z;
  };
  std::set<std::vector<bool>> distinct;
  for (int64_t b = 0; b < 4; ++b) {
    EXPECT_EQ(zeros(first, b), zeros(second, b)) << "not deterministic";
    distinct.insert(zeros(first, b));
    distinct.insert(zeros(other, b));
  }
  EXPECT_GE(distinct.size(), 6u);
}

} // namespace
