//===- SegmentTask.cpp - a learnable synthetic sequence task --------------===//

#include "nn/SegmentTask.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <limits>
#include <unistd.h>

using namespace nn;

absl::Status SegmentTask::validate() const {
  auto bad = [](const std::string &what) {
    return absl::InvalidArgumentError("segment task: " + what);
  };
  if (features < 1)
    return bad("features must be at least 1, got " + std::to_string(features));
  if (classes < 2)
    return bad("classes must be at least 2 (silence and one label), got " +
               std::to_string(classes));
  if (minLabels < 0 || minLabels > maxLabels)
    return bad("labels per utterance must be 0 <= min <= max, got [" +
               std::to_string(minLabels) + ", " + std::to_string(maxLabels) +
               "]");
  if (minFrames < 1 || minFrames > maxFrames)
    return bad("frames per segment must be 1 <= min <= max, got [" +
               std::to_string(minFrames) + ", " + std::to_string(maxFrames) +
               "]");
  if (maxSilence < 1)
    return bad("maxSilence must be at least 1 (equal neighbours need a "
               "silence between them), got " +
               std::to_string(maxSilence));
  if (!(noise >= 0) || !(noise <= kMaxNoise)) {
    char text[32];
    std::snprintf(text, sizeof(text), "%g", noise);
    return bad(std::string("noise must be a number in [0, 1e6], got ") + text);
  }
  if (classes > std::numeric_limits<int32_t>::max())
    return bad("classes must fit i32 labels, got " + std::to_string(classes));
  return absl::OkStatus();
}

absl::Status SegmentTask::checkSize(int64_t utterances) const {
  // Doubles: the products of hostile sizes overflow 64-bit integers.
  double frames = (double)maxLabels * (double)maxFrames +
                  (double)(maxLabels + 1) * (double)maxSilence;
  double perUtterance =
      frames * ((double)features * 4 + 8) + (double)maxLabels * 12;
  // Written from per-utterance arrays concatenated into shards: twice.
  double bytes = (double)classes * (double)features * 4 +
                 2 * (double)utterances * perUtterance;
  double memory = (double)sysconf(_SC_PHYS_PAGES) * sysconf(_SC_PAGESIZE);
  if (utterances < 0 || !(bytes <= memory / 2)) {
    char text[256];
    std::snprintf(text, sizeof(text),
                  "segment task: %lld utterances of up to %.0f frames of "
                  "%lld features (and %lld class prototypes) take up to "
                  "%.3g GiB, more than half of this machine's %.3g GiB",
                  (long long)utterances, frames, (long long)features,
                  (long long)classes, bytes / (1 << 30), memory / (1 << 30));
    return absl::InvalidArgumentError(text);
  }
  return absl::OkStatus();
}

std::vector<float> SegmentTask::prototypes() const {
  std::mt19937 rng(seed);
  std::normal_distribution<float> normal(0.0f, 1.0f);
  std::vector<float> result(classes * features);
  for (float &v : result)
    v = normal(rng);
  return result;
}

SegmentUtterance
nn::sampleSegmentUtterance(const SegmentTask &task,
                           const std::vector<float> &prototypes,
                           std::mt19937 &rng) {
  std::uniform_int_distribution<int64_t> labelCount(task.minLabels,
                                                    task.maxLabels);
  std::uniform_int_distribution<int32_t> label(
      1, static_cast<int32_t>(task.classes - 1));
  std::uniform_int_distribution<int64_t> duration(task.minFrames,
                                                  task.maxFrames);
  std::uniform_int_distribution<int64_t> silence(0, task.maxSilence);
  // Per feature noise x sqrt(F): see SegmentTask::noise.
  std::normal_distribution<float> noise(
      0.0f, static_cast<float>(task.noise *
                               std::sqrt(static_cast<double>(task.features))));
  SegmentUtterance u;
  auto emit = [&](int32_t cls, int64_t frames) {
    for (int64_t i = 0; i < frames; ++i) {
      u.frameLabels.push_back(cls);
      for (int64_t f = 0; f < task.features; ++f)
        u.features.push_back(prototypes[cls * task.features + f] + noise(rng));
    }
  };
  int64_t count = labelCount(rng);
  for (int64_t i = 0; i < count; ++i) {
    int32_t next = label(rng);
    int64_t gap = silence(rng);
    if (!u.labels.empty() && u.labels.back() == next)
      gap = std::max<int64_t>(gap, 1);
    emit(0, gap);
    auto begin = static_cast<int32_t>(u.frameLabels.size());
    emit(next, duration(rng));
    u.labels.push_back(next);
    u.segments.emplace_back(begin, static_cast<int32_t>(u.frameLabels.size()));
  }
  emit(0, silence(rng));
  u.frames = static_cast<int32_t>(u.frameLabels.size());
  return u;
}

std::map<std::string, Tensor>
nn::segmentArrays(const SegmentTask &task, const SegmentUtterance &utterance) {
  std::map<std::string, Tensor> arrays;
  arrays["features"] = Tensor::of<float>(
      DType::f32, {utterance.frames, task.features}, utterance.features);
  arrays["frame_labels"] = Tensor::of<int32_t>(DType::i32, {utterance.frames},
                                               utterance.frameLabels);
  auto count = (int64_t)utterance.labels.size();
  arrays["labels"] = Tensor::of<int32_t>(DType::i32, {count}, utterance.labels);
  std::vector<int32_t> bounds;
  for (auto [begin, end] : utterance.segments)
    bounds.insert(bounds.end(), {begin, end});
  arrays["segments"] = Tensor::of<int32_t>(DType::i32, {count, 2}, bounds);
  return arrays;
}

RunInputs nn::segmentBatch(const SegmentTask &task, int64_t batch,
                           std::mt19937 &rng, const std::string &frameDim,
                           const std::string &labelDim,
                           std::vector<SegmentUtterance> *utterances) {
  std::vector<float> prototypes = task.prototypes();
  std::vector<SegmentUtterance> sampled;
  int64_t maxFrames = 0, maxLabels = 0;
  for (int64_t b = 0; b < batch; ++b) {
    sampled.push_back(sampleSegmentUtterance(task, prototypes, rng));
    maxFrames = std::max<int64_t>(maxFrames, sampled.back().frames);
    maxLabels = std::max<int64_t>(maxLabels, sampled.back().labels.size());
  }
  RunInputs inputs;
  Tensor features(DType::f32, {batch, maxFrames, task.features});
  Tensor frameLabels(DType::i32, {batch, maxFrames});
  Tensor labels(DType::i32, {batch, maxLabels});
  std::fill_n(frameLabels.data<int32_t>(), batch * maxFrames, -1);
  std::fill_n(labels.data<int32_t>(), batch * maxLabels, -1);
  for (int64_t b = 0; b < batch; ++b) {
    const SegmentUtterance &u = sampled[b];
    std::copy(u.features.begin(), u.features.end(),
              features.data<float>() + b * maxFrames * task.features);
    std::copy(u.frameLabels.begin(), u.frameLabels.end(),
              frameLabels.data<int32_t>() + b * maxFrames);
    std::copy(u.labels.begin(), u.labels.end(),
              labels.data<int32_t>() + b * maxLabels);
    inputs.lengths[frameDim].push_back(u.frames);
    if (!labelDim.empty())
      inputs.lengths[labelDim].push_back(static_cast<int32_t>(u.labels.size()));
  }
  inputs.inputs["features"] = std::move(features);
  inputs.inputs["frame_labels"] = std::move(frameLabels);
  inputs.inputs["labels"] = std::move(labels);
  if (utterances)
    *utterances = std::move(sampled);
  return inputs;
}
