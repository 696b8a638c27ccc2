//===- nn/SegmentTask.h - a learnable synthetic sequence task ---*- C++ -*-===//
//
// The synthetic task training runs on when there is no data (nn-train's
// `--synthetic segments`), and that every sequence loss can learn: each
// utterance is a random label sequence, each label rendered as a segment
// of random duration, with silence (class 0) around the segments. A
// frame's features are its class's prototype plus noise strong enough
// that one frame is ambiguous while a segment is not, so a model gains
// from looking across frames.
//
// It yields what an ASR user has per utterance: features [T, F], frame
// targets [T] (0 = silence), the label sequence [U] (classes 1..C-1, the
// CTC blank being 0), and the true segment boundaries (for checking
// alignments).
//
//===----------------------------------------------------------------------===//

#ifndef NN_SEGMENTTASK_H
#define NN_SEGMENTTASK_H

#include "nn/Runtime.h"

#include <map>
#include <random>
#include <string>
#include <utility>
#include <vector>

namespace nn {

struct SegmentTask {
  /// F, the features per frame, and C, the frame classes: 0 is silence,
  /// 1..C-1 are labels. C >= 2.
  int64_t features = 0, classes = 0;
  /// Labels per utterance, uniform in [minLabels, maxLabels].
  int64_t minLabels = 1, maxLabels = 8;
  /// Frames per label segment, uniform in [minFrames, maxFrames].
  int64_t minFrames = 3, maxFrames = 6;
  /// Silence frames before each segment and after the last, uniform in
  /// [0, maxSilence]; at least 1 between two equal labels (so every label
  /// sequence is one CTC can align: T >= U + repeats).
  int64_t maxSilence = 2;
  /// The per-frame Gaussian noise: its standard deviation per feature is
  /// noise x sqrt(features), prototypes having unit variance per feature.
  /// Two prototypes lie about sqrt(2 features) apart and the noise along
  /// the line between them has standard deviation noise x sqrt(features),
  /// so how hard a frame is barely depends on the feature count once it
  /// is large (few features spread the prototypes unevenly). At 0.5 and
  /// 40 to 80 features, a frame's nearest prototype is wrong a fifth to a
  /// quarter of the time, its segment mean's about 1% of the time
  /// (unittests/SegmentTaskTest.cpp).
  double noise = 0.5;
  /// Seeds the class prototypes (the task itself; batches draw from their
  /// own generator).
  uint32_t seed = 0;

  /// An error naming the first invalid field, or OK. Besides the ranges
  /// above: classes fit i32 labels and noise is at most kMaxNoise.
  absl::Status validate() const;
  /// An error when `utterances` utterances of the task (at their longest)
  /// and its prototypes would take more than half of this machine's
  /// memory, naming the sizes; OK otherwise.
  absl::Status checkSize(int64_t utterances) const;
  /// Beyond this the features are noise alone, and their squares come
  /// near float32's range.
  static constexpr double kMaxNoise = 1e6;
  /// The class prototypes, [classes, features] row-major.
  std::vector<float> prototypes() const;
};

struct SegmentUtterance {
  int32_t frames = 0;
  /// [frames, features] row-major.
  std::vector<float> features;
  /// [frames]: the class of each frame, 0 on silence.
  std::vector<int32_t> frameLabels;
  /// [U]: the label of each segment, in order.
  std::vector<int32_t> labels;
  /// [U]: each segment's frames [begin, end).
  std::vector<std::pair<int32_t, int32_t>> segments;
};

/// One utterance of the task (`prototypes` from `task.prototypes()`).
SegmentUtterance sampleSegmentUtterance(const SegmentTask &task,
                                        const std::vector<float> &prototypes,
                                        std::mt19937 &rng);

/// An utterance as a dataset stores it (nn/Dataset.h): "features" [T, F]
/// f32, "frame_labels" [T] i32, "labels" [U] i32 and "segments" [U, 2]
/// i32 (each segment's first frame and the frame after its last).
std::map<std::string, Tensor> segmentArrays(const SegmentTask &task,
                                            const SegmentUtterance &utterance);

/// A padded batch of `batch` utterances as graph inputs: "features"
/// [B, T, F] f32, "frame_labels" [B, T] i32 and "labels" [B, U] i32,
/// with the lengths of `frameDim` and `labelDim` (none when it is empty);
/// padding holds 0 and -1.
/// `utterances`, when given, receives the utterances themselves.
RunInputs segmentBatch(const SegmentTask &task, int64_t batch,
                       std::mt19937 &rng, const std::string &frameDim,
                       const std::string &labelDim,
                       std::vector<SegmentUtterance> *utterances = nullptr);

} // namespace nn

#endif // NN_SEGMENTTASK_H
