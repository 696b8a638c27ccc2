//===- SegmentTaskTest.cpp - the synthetic segment task -------------------===//
//
// The task's utterances are what they claim (segments, frame targets and
// labels agree; every label sequence can be aligned by CTC), batches are
// reproducible from their seed, and the task needs context: classifying
// a segment by the mean of its frames beats classifying single frames.
//
//===----------------------------------------------------------------------===//

#include "nn/SegmentTask.h"

#include <gtest/gtest.h>

#include <cstring>
#include <limits>

using namespace nn;

namespace {

/// The task with its default difficulty.
SegmentTask task(int64_t features = 8) {
  SegmentTask t;
  t.features = features;
  t.classes = 6;
  t.seed = 7;
  return t;
}

TEST(SegmentTaskTest, InvalidFieldsAreNamed) {
  SegmentTask t = task();
  EXPECT_TRUE(t.validate().ok());
  t.classes = 1;
  EXPECT_EQ(t.validate().message(),
            "segment task: classes must be at least 2 (silence and one "
            "label), got 1");
  t = task();
  t.minFrames = 4;
  t.maxFrames = 3;
  EXPECT_EQ(t.validate().message(),
            "segment task: frames per segment must be 1 <= min <= max, got "
            "[4, 3]");
  t = task();
  t.maxSilence = 0;
  EXPECT_FALSE(t.validate().ok());
  t = task();
  t.noise = std::numeric_limits<double>::quiet_NaN();
  EXPECT_EQ(t.validate().message(),
            "segment task: noise must be a number in [0, 1e6], got nan");
  // Finite noise whose features would not be: float32 holds up to 3.4e38.
  t.noise = 1e308;
  EXPECT_EQ(t.validate().message(),
            "segment task: noise must be a number in [0, 1e6], got 1e+308");
  t.noise = std::numeric_limits<double>::infinity();
  EXPECT_FALSE(t.validate().ok());
  t = task();
  t.classes = int64_t(1) << 31;
  EXPECT_EQ(t.validate().message(),
            "segment task: classes must fit i32 labels, got 2147483648");
}

TEST(SegmentTaskTest, SizesBeyondTheMachineAreNamed) {
  SegmentTask t = task();
  EXPECT_TRUE(t.checkSize(1000).ok());
  absl::Status status = t.checkSize(int64_t(1) << 40);
  EXPECT_NE(status.message().find("segment task: 1099511627776 utterances of "
                                  "up to 66 frames of 8 features"),
            std::string::npos)
      << status.message();
  EXPECT_NE(status.message().find("more than half of this machine's"),
            std::string::npos);
  // Products that overflow 64-bit integers are still caught.
  t.features = int64_t(1) << 40;
  t.classes = int64_t(1) << 30;
  EXPECT_FALSE(t.checkSize(1).ok());
  EXPECT_FALSE(task().checkSize(-1).ok());
}

TEST(SegmentTaskTest, SegmentsFrameLabelsAndLabelsAgree) {
  SegmentTask t = task();
  std::vector<float> prototypes = t.prototypes();
  std::mt19937 rng(1);
  for (int n = 0; n < 300; ++n) {
    SegmentUtterance u = sampleSegmentUtterance(t, prototypes, rng);
    SCOPED_TRACE("utterance " + std::to_string(n));
    ASSERT_EQ((int64_t)u.frameLabels.size(), u.frames);
    ASSERT_EQ((int64_t)u.features.size(), u.frames * t.features);
    ASSERT_EQ(u.labels.size(), u.segments.size());
    EXPECT_GE((int64_t)u.labels.size(), t.minLabels);
    EXPECT_LE((int64_t)u.labels.size(), t.maxLabels);
    std::vector<int32_t> expected(u.frames, 0);
    int32_t previousEnd = 0, repeats = 0;
    for (size_t i = 0; i < u.labels.size(); ++i) {
      auto [begin, end] = u.segments[i];
      EXPECT_GE(begin, previousEnd);
      EXPECT_GE(end - begin, t.minFrames);
      EXPECT_LE(end - begin, t.maxFrames);
      EXPECT_GE(u.labels[i], 1);
      EXPECT_LT(u.labels[i], t.classes);
      if (i > 0 && u.labels[i] == u.labels[i - 1]) {
        EXPECT_GT(begin, previousEnd) << "equal labels need silence between";
        ++repeats;
      }
      for (int32_t f = begin; f < end; ++f)
        expected[f] = u.labels[i];
      previousEnd = end;
    }
    EXPECT_EQ(u.frameLabels, expected);
    // CTC can align it.
    EXPECT_GE(u.frames, (int32_t)u.labels.size() + repeats);
  }
}

TEST(SegmentTaskTest, BatchesArePaddedAndReproducible) {
  SegmentTask t = task();
  std::mt19937 a(5), b(5);
  std::vector<SegmentUtterance> utterances;
  RunInputs first = segmentBatch(t, 4, a, "T", "U", &utterances);
  RunInputs second = segmentBatch(t, 4, b, "T", "U");
  ASSERT_EQ(utterances.size(), 4u);
  const Tensor &features = first.inputs.at("features");
  const Tensor &frames = first.inputs.at("frame_labels");
  const Tensor &labels = first.inputs.at("labels");
  int64_t time = frames.shape()[1], width = labels.shape()[1];
  EXPECT_EQ(features.shape(), (std::vector<int64_t>{4, time, 8}));
  for (int64_t s = 0; s < 4; ++s) {
    const SegmentUtterance &u = utterances[s];
    EXPECT_EQ(first.lengths.at("T")[s], u.frames);
    EXPECT_EQ(first.lengths.at("U")[s], (int32_t)u.labels.size());
    for (int64_t f = 0; f < time; ++f)
      EXPECT_EQ(frames.data<int32_t>()[s * time + f],
                f < u.frames ? u.frameLabels[f] : -1);
    for (int64_t i = 0; i < width; ++i)
      EXPECT_EQ(labels.data<int32_t>()[s * width + i],
                i < (int64_t)u.labels.size() ? u.labels[i] : -1);
    for (int64_t f = 0; f < u.frames * 8; ++f)
      EXPECT_EQ(features.data<float>()[s * time * 8 + f], u.features[f]);
  }
  for (const char *name : {"features", "frame_labels", "labels"}) {
    const Tensor &x = first.inputs.at(name), &y = second.inputs.at(name);
    ASSERT_EQ(x.shape(), y.shape());
    EXPECT_EQ(0, std::memcmp(x.data<char>(), y.data<char>(), x.sizeInBytes()))
        << name;
  }
  EXPECT_EQ(first.lengths, second.lengths);
}

/// Nearest prototype by squared distance.
int32_t nearest(const std::vector<float> &prototypes, const float *x,
                int64_t classes, int64_t features) {
  int32_t best = 0;
  double bestDistance = std::numeric_limits<double>::infinity();
  for (int64_t c = 0; c < classes; ++c) {
    double d = 0;
    for (int64_t f = 0; f < features; ++f) {
      double e = x[f] - prototypes[c * features + f];
      d += e * e;
    }
    if (d < bestDistance) {
      bestDistance = d;
      best = static_cast<int32_t>(c);
    }
  }
  return best;
}

/// At the default difficulty, with acoustic feature counts.
class SegmentContextTest : public ::testing::TestWithParam<int64_t> {};

TEST_P(SegmentContextTest, SegmentsNeedContext) {
  SegmentTask t = task(GetParam());
  std::vector<float> prototypes = t.prototypes();
  std::mt19937 rng(3);
  int64_t frames = 0, frameHits = 0, segments = 0, segmentHits = 0;
  for (int n = 0; n < 500; ++n) {
    SegmentUtterance u = sampleSegmentUtterance(t, prototypes, rng);
    for (size_t i = 0; i < u.segments.size(); ++i) {
      const auto &segment = u.segments[i];
      std::vector<float> mean(t.features, 0.0f);
      for (int32_t f = segment.first; f < segment.second; ++f) {
        const float *x = &u.features[f * t.features];
        frameHits +=
            nearest(prototypes, x, t.classes, t.features) == u.labels[i];
        ++frames;
        for (int64_t k = 0; k < t.features; ++k)
          mean[k] += x[k] / (segment.second - segment.first);
      }
      segmentHits += nearest(prototypes, mean.data(), t.classes, t.features) ==
                     u.labels[i];
      ++segments;
    }
  }
  double frameAccuracy = (double)frameHits / frames,
         segmentAccuracy = (double)segmentHits / segments;
  RecordProperty("frame_accuracy", std::to_string(frameAccuracy));
  RecordProperty("segment_accuracy", std::to_string(segmentAccuracy));
  // One frame is often wrong; its segment's mean rarely is.
  EXPECT_LT(frameAccuracy, 0.85) << "frames alone are too easy";
  EXPECT_GT(segmentAccuracy, 0.95) << "segments are not learnable";
  EXPECT_GT(segmentAccuracy - frameAccuracy, 0.1);
}

INSTANTIATE_TEST_SUITE_P(Features, SegmentContextTest,
                         ::testing::Values(40, 80));

} // namespace
