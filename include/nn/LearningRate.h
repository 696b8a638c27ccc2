//===- nn/LearningRate.h - learning-rate schedules --------------*- C++ -*-===//
//
// The learning rate of each training step, evaluated on the host and
// handed to the train step as its learning_rate input (nn/Train.h,
// nn-train). Steps count from 0.
//
//   lr(s) = peak * (s + 1) / warmup                 s < warmup
//   then, with d = s - warmup and D = total - warmup:
//     constant      peak
//     linear        final + (peak - final) * max(0, 1 - d / D)
//     cosine        final + (peak - final) * (1 + cos(pi * min(d, D) / D)) / 2
//     inverse_sqrt  peak * sqrt(max(warmup, 1) / (s + 1))
//
// Warmup reaches `peak` at its last step, never 0 at the first. Past
// `total` the linear and cosine schedules stay at `final`.
//
//===----------------------------------------------------------------------===//

#ifndef NN_LEARNINGRATE_H
#define NN_LEARNINGRATE_H

#include "absl/status/statusor.h"

#include <cstdint>
#include <string>

namespace nn {

struct LearningRateSchedule {
  enum class Decay { constant, linear, cosine, inverse_sqrt };
  Decay decay = Decay::constant;
  double peak = 1e-3;
  /// The learning rate linear and cosine decay reach at `total`.
  double final = 0.0;
  int64_t warmup = 0;
  /// The step linear and cosine decay end at; unused by the others.
  int64_t total = 0;

  /// An error naming the first invalid field, or OK.
  absl::Status validate() const;
  /// The learning rate of step `step` (>= 0).
  double at(int64_t step) const;

  /// Parses `DECAY[:key=value,...]` with keys peak, final, warmup and
  /// total, e.g. "cosine:peak=1e-3,warmup=500,total=20000,final=1e-5"; the
  /// result is validated.
  static absl::StatusOr<LearningRateSchedule> parse(const std::string &text);
};

} // namespace nn

#endif // NN_LEARNINGRATE_H
