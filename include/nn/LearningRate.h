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
// `newbob` sets one learning rate per epoch from the dev scores of the
// epochs before, with the rules of RETURNN's `newbob_multi_epoch`
// learning-rate control (newbobNextRate below; docs/training.md has the
// option names side by side); warmup, if any, ramps up to each epoch's
// rate by step as above.
//
//===----------------------------------------------------------------------===//

#ifndef NN_LEARNINGRATE_H
#define NN_LEARNINGRATE_H

#include "absl/status/statusor.h"

#include <cstdint>
#include <string>
#include <vector>

namespace nn {

/// RETURNN's newbob_multi_epoch options (its config names in brackets).
struct NewbobOptions {
  /// The factor a decay multiplies the rate by (newbob_learning_rate_decay).
  double decay = 0.5;
  /// A decay happens when the mean relative error of the window is above
  /// this (newbob_relative_error_threshold).
  double threshold = -0.01;
  /// A decay never takes the rate below this (min_learning_rate).
  double min = 0.0;
  /// The factor a growth multiplies the rate by, at most up to the f32
  /// maximum the train step takes (newbob_learning_rate_growth).
  double growth = 1.0;
  /// A growth happens when that mean is below this, at most `threshold`
  /// (newbob_relative_error_grow_threshold; default: `threshold`).
  double growThreshold = -0.01;
  /// The mean covers the last `epochs` + 1 epochs' scores
  /// (newbob_multi_num_epochs).
  int64_t epochs = 5;
  /// The rate may change at epochs 1, 1 + interval, 1 + 2 interval, ...
  /// (newbob_multi_update_interval; default: `epochs`).
  int64_t interval = 5;
  /// A rate holds for at least this many epochs before the next change
  /// (learning_rate_control_min_num_epochs_per_new_lr; 0 and 1: no hold).
  int64_t minEpochsPerRate = 0;
  /// Divide each relative error by the newer epoch's rate over the initial
  /// one (learning_rate_control_relative_error_relative_lr).
  bool relativeToRate = false;
  /// Relative errors as (new - old) / |old| instead of / |new|
  /// (newbob_relative_error_div_by_old).
  bool divideByOld = false;
  /// The dev loss whose value is the epoch's score, by name
  /// (learning_rate_control_error_measure); empty: the dev objective, the
  /// sum of scale x value over the losses that train (the evaluation graph
  /// marks the others as_error; RETURNN's dev_score).
  std::string score;
};

/// One epoch of a newbob run: the rate it trained with and, once its dev
/// evaluation ran, its score (which may be NaN or infinite: the rules
/// below say what that does).
struct EpochRate {
  double rate = 0;
  bool scored = false;
  double score = 0;
};

/// What newbobNextRate decided, and why.
struct NewbobDecision {
  enum class Kind {
    /// Epoch 1: the initial rate.
    initial,
    /// The previous epoch's rate, unchanged: not an update epoch, too few
    /// scored epochs, a rate held for minEpochsPerRate, or the mean
    /// relative error between the thresholds (or NaN).
    kept,
    /// Times `decay` (clamped to `min`).
    decayed,
    /// Times `growth` (a growth of 1 changes nothing and reports kept).
    grown,
  };
  Kind kind = Kind::initial;
  double rate = 0;
  /// The mean relative error the decision compared, NaN where none was
  /// computed.
  double meanRelativeError = 0;
};

/// "initial", "kept", "decayed", "grown".
const char *toString(NewbobDecision::Kind kind);

/// The rate of epoch history.size() + 1 (epochs count from 1; `history`
/// holds epochs 1 ... n in order) under RETURNN's newbob_multi_epoch rules:
///   1. Epoch 1 takes `initial`.
///   2. With minEpochsPerRate M > 1: while the last M epochs (fewer at the
///      start) do not all share one rate, or fewer than M epochs ran, the
///      last epoch's rate holds.
///   3. Only epochs e with (e - 1) % interval == 0 may change the rate.
///   4. The relative errors of consecutive pairs among the last
///      `epochs` + 1 epochs, (s_new - s_old) / |s_new| (or / |s_old|),
///      each divided by rate_new / initial with relativeToRate (when
///      rate_new > 0); needs two epochs, every one of them scored. Their
///      mean m, in IEEE arithmetic: a NaN score or two zero scores (0 / 0)
///      make m NaN, which changes nothing; a score rising to infinity makes
///      it NaN dividing by |new| (kept) and +inf dividing by |old|
///      (decayed); one falling from infinity -inf (grown) and NaN.
///   5. m > threshold: decay (not below `min`); m < growThreshold: grow
///      (not past the f32 maximum). Ties keep the rate.
NewbobDecision newbobNextRate(const NewbobOptions &options, double initial,
                              const std::vector<EpochRate> &history);

struct LearningRateSchedule {
  enum class Decay { constant, linear, cosine, inverse_sqrt, newbob };
  Decay decay = Decay::constant;
  /// The rate warmup reaches; newbob's initial rate.
  double peak = 1e-3;
  /// The learning rate linear and cosine decay reach at `total`.
  double final = 0.0;
  int64_t warmup = 0;
  /// The step linear and cosine decay end at; unused by the others.
  int64_t total = 0;

  /// newbob's options (with Decay::newbob).
  NewbobOptions newbob;

  /// An error naming the first invalid field, or OK.
  absl::Status validate() const;

  /// The learning rate of step `step` (>= 0). newbob has none without its
  /// epoch's rate: NaN, which runTrainStep refuses.
  double at(int64_t step) const;
  /// newbob's rate of step `step` in an epoch whose rate (newbobNextRate)
  /// is `epochRate`: warmup ramps up to it. The other decays are at(step).
  double at(int64_t step, double epochRate) const;

  /// Parses `DECAY[:key=value,...]` with keys peak, final, warmup and
  /// total, e.g. "cosine:peak=1e-3,warmup=500,total=20000,final=1e-5", or
  /// `newbob:key=value,...` with keys lr (the initial rate), decay,
  /// threshold, min, growth, grow-threshold, epochs, interval,
  /// min-epochs-per-lr, relative-lr, div-by-old (0 or 1), score and
  /// warmup; the result is validated.
  static absl::StatusOr<LearningRateSchedule> parse(const std::string &text);
};

} // namespace nn

#endif // NN_LEARNINGRATE_H
