//===- LearningRate.cpp - learning-rate schedules -------------------------===//

#include "nn/LearningRate.h"

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <limits>
#include <sstream>

using namespace nn;

/// The most epochs a newbob window, interval or hold counts.
constexpr int64_t kMaxEpochs = 1000000;

/// What is wrong with `s`, or "".
static std::string problem(const LearningRateSchedule &s) {
  using Decay = LearningRateSchedule::Decay;
  // The train step reads its learning rate as f32: a larger value would
  // arrive as infinity.
  constexpr double kMaxRate = std::numeric_limits<float>::max();
  // newbob calls its initial rate `lr`.
  const char *peak = s.decay == Decay::newbob ? "lr" : "peak";
  if (!(s.peak > 0) || !(s.peak <= kMaxRate))
    return std::string(peak) +
           " must be a positive number at most 3.4e38 (the train step's "
           "learning rate is f32)";
  if (!(s.final >= 0) || !(s.final <= kMaxRate))
    return "final must be a number in [0, 3.4e38] (the train step's "
           "learning rate is f32)";
  if (s.warmup < 0)
    return "warmup must be >= 0 steps";
  if (s.decay == Decay::newbob) {
    const NewbobOptions &n = s.newbob;
    if (!(n.decay > 0) || !(n.growth > 0) || !std::isfinite(n.decay) ||
        !std::isfinite(n.growth))
      return "newbob's decay and growth must be positive numbers";
    if (!(n.min >= 0) || !(n.min <= kMaxRate))
      return "newbob's min must be a number in [0, 3.4e38]";
    if (std::isnan(n.threshold) || std::isnan(n.growThreshold))
      return "newbob's thresholds must be numbers";
    // Decaying and growing at once has no meaning (RETURNN asserts it).
    if (n.growThreshold > n.threshold)
      return "newbob's grow-threshold (" + std::to_string(n.growThreshold) +
             ") is above its threshold (" + std::to_string(n.threshold) +
             "): an epoch would both decay and grow";
    // Bounded as a stage's epochs are: a window or interval past every
    // run's epochs means nothing, and epochs + 1 must not overflow.
    if (n.epochs < 1 || n.interval < 1 || n.epochs > kMaxEpochs ||
        n.interval > kMaxEpochs)
      return "newbob's epochs and interval must be in [1, 1000000]";
    if (n.minEpochsPerRate < 0 || n.minEpochsPerRate > kMaxEpochs)
      return "newbob's min-epochs-per-lr must be in [0, 1000000]";
  }
  if ((s.decay == Decay::linear || s.decay == Decay::cosine) &&
      s.total <= s.warmup)
    return "linear and cosine decay need total (" + std::to_string(s.total) +
           ") above warmup (" + std::to_string(s.warmup) + ")";
  return "";
}

absl::Status LearningRateSchedule::validate() const {
  std::string what = problem(*this);
  return what.empty()
             ? absl::OkStatus()
             : absl::InvalidArgumentError("learning-rate schedule: " + what);
}

double LearningRateSchedule::at(int64_t step, double epochRate) const {
  if (decay != Decay::newbob)
    return at(step);
  if (step < warmup)
    return epochRate * static_cast<double>(step + 1) /
           static_cast<double>(warmup);
  return epochRate;
}

double LearningRateSchedule::at(int64_t step) const {
  if (decay == Decay::newbob)
    return std::numeric_limits<double>::quiet_NaN();
  if (step < warmup)
    return peak * static_cast<double>(step + 1) / static_cast<double>(warmup);
  double done = static_cast<double>(step - warmup),
         span = static_cast<double>(total - warmup);
  switch (decay) {
  case Decay::constant:
    return peak;
  case Decay::linear:
    return final + (peak - final) * std::max(0.0, 1.0 - done / span);
  case Decay::cosine:
    return final + (peak - final) *
                       (1.0 + std::cos(M_PI * std::min(done, span) / span)) /
                       2.0;
  case Decay::inverse_sqrt:
    return peak * std::sqrt(static_cast<double>(std::max<int64_t>(warmup, 1)) /
                            static_cast<double>(step + 1));
  case Decay::newbob:
    break;
  }
  return peak;
}

const char *nn::toString(NewbobDecision::Kind kind) {
  switch (kind) {
  case NewbobDecision::Kind::initial:
    return "initial";
  case NewbobDecision::Kind::kept:
    return "kept";
  case NewbobDecision::Kind::decayed:
    return "decayed";
  case NewbobDecision::Kind::grown:
    return "grown";
  }
  return "kept";
}

NewbobDecision nn::newbobNextRate(const NewbobOptions &options, double initial,
                                  const std::vector<EpochRate> &history) {
  using Kind = NewbobDecision::Kind;
  constexpr double kNone = std::numeric_limits<double>::quiet_NaN();
  size_t ran = history.size();
  if (ran == 0)
    return {Kind::initial, initial, kNone};
  double rate = history.back().rate;
  NewbobDecision keep{Kind::kept, rate, kNone};
  // A new rate holds for minEpochsPerRate epochs, the first one too.
  if (options.minEpochsPerRate > 1) {
    size_t window = std::min<size_t>(ran, options.minEpochsPerRate);
    bool same = std::all_of(history.end() - window, history.end(),
                            [&](const EpochRate &e) { return e.rate == rate; });
    if (!same || window < (size_t)options.minEpochsPerRate)
      return keep;
  }
  // Epochs count from 1: epoch ran + 1 is an update epoch when ran is a
  // multiple of the interval.
  if (options.interval > 1 && ran % options.interval != 0)
    return keep;
  size_t window = std::min<size_t>(ran, options.epochs + 1);
  if (window < 2)
    return keep;
  double sum = 0;
  for (size_t i = ran - window; i + 1 < ran; ++i) {
    const EpochRate &older = history[i], &newer = history[i + 1];
    if (!older.scored || !newer.scored)
      return keep;
    double relative = (newer.score - older.score) /
                      std::abs(options.divideByOld ? older.score : newer.score);
    // A smaller rate is expected to improve the score less.
    if (options.relativeToRate && newer.rate > 0)
      relative /= newer.rate / initial;
    sum += relative;
  }
  double mean = sum / static_cast<double>(window - 1);
  keep.meanRelativeError = mean;
  if (mean > options.threshold)
    return {Kind::decayed, std::max(rate * options.decay, options.min), mean};
  // A growth of 1 (the default) changes nothing: the rate is kept.
  // Growth stops at the f32 maximum the train step takes.
  if (mean < options.growThreshold && options.growth != 1.0)
    return {Kind::grown,
            std::min<double>(rate * options.growth,
                             std::numeric_limits<float>::max()),
            mean};
  return keep;
}

absl::StatusOr<LearningRateSchedule>
LearningRateSchedule::parse(const std::string &text) {
  auto bad = [&](const std::string &what) {
    return absl::InvalidArgumentError("learning-rate schedule '" + text +
                                      "': " + what);
  };
  LearningRateSchedule schedule;
  std::string name = text.substr(0, text.find(':'));
  if (name == "constant")
    schedule.decay = Decay::constant;
  else if (name == "linear")
    schedule.decay = Decay::linear;
  else if (name == "cosine")
    schedule.decay = Decay::cosine;
  else if (name == "inverse_sqrt")
    schedule.decay = Decay::inverse_sqrt;
  else if (name == "newbob")
    schedule.decay = Decay::newbob;
  else
    return bad("unknown decay '" + name +
               "' (constant, linear, cosine, inverse_sqrt, newbob)");
  bool newbob = schedule.decay == Decay::newbob;
  NewbobOptions &options = schedule.newbob;
  bool interval = false, growThreshold = false;
  if (name.size() < text.size()) {
    std::stringstream fields(text.substr(name.size() + 1));
    for (std::string field; std::getline(fields, field, ',');) {
      size_t equals = field.find('=');
      if (equals == std::string::npos)
        return bad("expected key=value, got '" + field + "'");
      std::string key = field.substr(0, equals),
                  value = field.substr(equals + 1);
      const char *begin = value.c_str();
      char *end = nullptr;
      errno = 0;
      auto number = [&](double &out) -> absl::Status {
        out = std::strtod(begin, &end);
        if (value.empty() || *end || errno)
          return bad("'" + value + "' is not a number (" + key + ")");
        return absl::OkStatus();
      };
      auto integer = [&](int64_t &out) -> absl::Status {
        long long parsed = std::strtoll(begin, &end, 10);
        if (value.empty() || *end || errno)
          return bad("'" + value + "' is not an integer (" + key + ")");
        out = parsed;
        return absl::OkStatus();
      };
      auto flag = [&](bool &out) -> absl::Status {
        if (value != "0" && value != "1")
          return bad("'" + value + "' is not 0 or 1 (" + key + ")");
        out = value == "1";
        return absl::OkStatus();
      };
      absl::Status status = absl::OkStatus();
      if (key == "warmup") {
        status = integer(schedule.warmup);
      } else if (!newbob && (key == "peak" || key == "final")) {
        status = number(key == "peak" ? schedule.peak : schedule.final);
      } else if (!newbob && key == "total") {
        status = integer(schedule.total);
      } else if (newbob && key == "lr") {
        status = number(schedule.peak);
      } else if (newbob && (key == "decay" || key == "growth" ||
                            key == "threshold" || key == "min")) {
        status = number(key == "decay"       ? options.decay
                        : key == "growth"    ? options.growth
                        : key == "threshold" ? options.threshold
                                             : options.min);
      } else if (newbob && key == "grow-threshold") {
        status = number(options.growThreshold);
        growThreshold = true;
      } else if (newbob && (key == "epochs" || key == "min-epochs-per-lr")) {
        status = integer(key == "epochs" ? options.epochs
                                         : options.minEpochsPerRate);
      } else if (newbob && key == "interval") {
        status = integer(options.interval);
        interval = true;
      } else if (newbob && (key == "relative-lr" || key == "div-by-old")) {
        status = flag(key == "relative-lr" ? options.relativeToRate
                                           : options.divideByOld);
      } else if (newbob && key == "score") {
        if (value.empty())
          return bad("score needs a loss name");
        options.score = value;
      } else {
        return bad("unknown key '" + key + "' (" +
                   (newbob ? "lr, decay, threshold, min, growth, "
                             "grow-threshold, epochs, interval, "
                             "min-epochs-per-lr, relative-lr, div-by-old, "
                             "score, warmup"
                           : "peak, final, warmup, total") +
                   ")");
      }
      if (!status.ok())
        return status;
    }
  }
  // RETURNN's defaults: the interval is the window, the growth threshold
  // the decay one.
  if (!interval)
    options.interval = options.epochs;
  if (!growThreshold)
    options.growThreshold = options.threshold;
  if (std::string what = problem(schedule); !what.empty())
    return bad(what);
  return schedule;
}
