//===- LearningRate.cpp - learning-rate schedules -------------------------===//

#include "nn/LearningRate.h"

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <limits>
#include <sstream>

using namespace nn;

/// What is wrong with `s`, or "".
static std::string problem(const LearningRateSchedule &s) {
  using Decay = LearningRateSchedule::Decay;
  // The train step reads its learning rate as f32: a larger value would
  // arrive as infinity.
  constexpr double kMaxRate = std::numeric_limits<float>::max();
  if (!(s.peak > 0) || !(s.peak <= kMaxRate))
    return "peak must be a positive number at most 3.4e38 (the train "
           "step's learning rate is f32)";
  if (!(s.final >= 0) || !(s.final <= kMaxRate))
    return "final must be a number in [0, 3.4e38] (the train step's "
           "learning rate is f32)";
  if (s.warmup < 0)
    return "warmup must be >= 0 steps";
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

double LearningRateSchedule::at(int64_t step) const {
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
  }
  return peak;
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
  else
    return bad("unknown decay '" + name +
               "' (constant, linear, cosine, inverse_sqrt)");
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
      if (key == "peak" || key == "final") {
        double number = std::strtod(begin, &end);
        if (value.empty() || *end || errno)
          return bad("'" + value + "' is not a number (" + key + ")");
        (key == "peak" ? schedule.peak : schedule.final) = number;
      } else if (key == "warmup" || key == "total") {
        long long number = std::strtoll(begin, &end, 10);
        if (value.empty() || *end || errno)
          return bad("'" + value + "' is not an integer (" + key + ")");
        (key == "warmup" ? schedule.warmup : schedule.total) = number;
      } else {
        return bad("unknown key '" + key + "' (peak, final, warmup, total)");
      }
    }
  }
  if (std::string what = problem(schedule); !what.empty())
    return bad(what);
  return schedule;
}
