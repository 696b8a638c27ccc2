//===- NewbobTest.cpp - newbob against RETURNN's rules in float64 ---------===//
//
// newbobNextRate against a reference written out here from RETURNN's
// newbob_multi_epoch rules (hold for minEpochsPerRate, update interval,
// mean relative error of the last `epochs` + 1 scores, decay/grow against
// the thresholds), in plain float64 and independent of the implementation:
//
//   - a driver runs a training of N epochs the way the trainer does, each
//     epoch's rate from newbobNextRate over the epochs before it, and
//     checks every decision (rate, kind, mean relative error) against the
//     reference on the same history;
//   - random score curves (falling, noisy, with plateaus, exact repeats and
//     unscored epochs) over a grid of every option, so that each rule meets
//     each other one;
//   - edge cases whose rates are written out by hand, so that the test does
//     not only trust its own reference (which follows the same five rules
//     in the same order, so the random sweep mainly guards the rules'
//     interplay; the hand-written values carry the independent check): the
//     first epochs, ties with the threshold, the clamp at `min`, the hold, the
//     interval, NaN and infinite scores, unscored epochs, rates relative to the
//     initial one;
//   - the parser's newbob keys, their defaults and errors, and warmup;
//   - the epochs' rates and scores (NaN and infinite ones too) through a
//     checkpoint, and the checkpoints that are refused.
//
//===----------------------------------------------------------------------===//

#include "nn/LearningRate.h"
#include "nn/Npy.h"
#include "nn/Train.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <limits>
#include <map>
#include <optional>
#include <random>
#include <sstream>
#include <string>
#include <unistd.h>
#include <vector>

using namespace nn;

namespace {

using Kind = NewbobDecision::Kind;

/// One score per epoch; nullopt: the epoch has no score (its dev evaluation
/// did not run).
using Scores = std::vector<std::optional<double>>;

const double kNaN = std::numeric_limits<double>::quiet_NaN();
const double kInf = std::numeric_limits<double>::infinity();

//===----------------------------------------------------------------------===//
// The reference
//===----------------------------------------------------------------------===//

/// The decision for epoch history.size() + 1, step by step as RETURNN's
/// NewbobMultiEpoch.calc_learning_rate_for_epoch takes it. Written for
/// clarity, not speed: each rule is one block, in RETURNN's order.
NewbobDecision referenceNextRate(const NewbobOptions &options, double initial,
                                 const std::vector<EpochRate> &history) {
  const int64_t epoch = static_cast<int64_t>(history.size()) + 1;
  auto decision = [](Kind kind, double rate, double mean) {
    NewbobDecision d;
    d.kind = kind;
    d.rate = rate;
    d.meanRelativeError = mean;
    return d;
  };
  // The last `count` epochs before `epoch`, fewer at the start.
  auto last = [&](int64_t count) {
    size_t first = history.size() > static_cast<size_t>(count)
                       ? history.size() - static_cast<size_t>(count)
                       : 0;
    return std::vector<EpochRate>(history.begin() + first, history.end());
  };

  // 1. The hold: the previous rate stays until the last M epochs all ran
  // with one rate (and M epochs have run at all).
  if (options.minEpochsPerRate > 1) {
    std::vector<EpochRate> window = last(options.minEpochsPerRate);
    if (!window.empty()) {
      bool allEqual = true;
      for (const EpochRate &e : window)
        allEqual = allEqual && e.rate == window.front().rate;
      if (!allEqual ||
          static_cast<int64_t>(window.size()) < options.minEpochsPerRate)
        return decision(Kind::kept, history.back().rate, kNaN);
    }
  }

  // 2. Epoch 1 takes the initial rate.
  if (history.empty())
    return decision(Kind::initial, initial, kNaN);
  double rate = history.back().rate;

  // 3. Only epochs 1, 1 + interval, 1 + 2 interval, ... change the rate.
  if (options.interval > 1 && epoch % options.interval != 1)
    return decision(Kind::kept, rate, kNaN);

  // 4. The mean relative error of consecutive pairs of the last epochs + 1.
  std::vector<EpochRate> window = last(options.epochs + 1);
  if (window.size() <= 1)
    return decision(Kind::kept, rate, kNaN);
  double sum = 0;
  for (size_t i = 0; i + 1 < window.size(); ++i) {
    const EpochRate &older = window[i], &newer = window[i + 1];
    if (!older.scored || !newer.scored)
      return decision(Kind::kept, rate, kNaN);
    double relative =
        (newer.score - older.score) /
        std::fabs(options.divideByOld ? older.score : newer.score);
    if (options.relativeToRate && newer.rate > 0)
      relative /= newer.rate / initial;
    sum += relative;
  }
  double mean = sum / static_cast<double>(window.size() - 1);

  // 5. Decay above the threshold (not below min), grow below growThreshold;
  // NaN compares false with both and keeps the rate.
  if (mean > options.threshold) {
    rate *= options.decay;
    if (rate < options.min)
      rate = options.min;
    return decision(Kind::decayed, rate, mean);
  }
  // A growth of 1 changes nothing: nn reports that as kept (RETURNN has
  // no kinds to report).
  if (mean < options.growThreshold && options.growth != 1.0)
    return decision(Kind::grown, rate * options.growth, mean);
  return decision(Kind::kept, rate, mean);
}

//===----------------------------------------------------------------------===//
// The driver
//===----------------------------------------------------------------------===//

/// Equal, both NaN, or within a few ulps (the arithmetic order is fixed, so
/// this is exact in practice; the slack only keeps a failure message about
/// the rule that differs rather than about the last bit).
bool same(double a, double b) {
  if (std::isnan(a) || std::isnan(b))
    return std::isnan(a) && std::isnan(b);
  if (a == b)
    return true;
  return std::fabs(a - b) <=
         4 * std::numeric_limits<double>::epsilon() * std::fabs(b);
}

std::string describe(const NewbobOptions &o, double initial) {
  std::ostringstream os;
  os << "initial=" << initial << " decay=" << o.decay
     << " threshold=" << o.threshold << " min=" << o.min
     << " growth=" << o.growth << " growThreshold=" << o.growThreshold
     << " epochs=" << o.epochs << " interval=" << o.interval
     << " minEpochsPerRate=" << o.minEpochsPerRate
     << " relativeToRate=" << o.relativeToRate
     << " divideByOld=" << o.divideByOld;
  return os.str();
}

std::string describe(const Scores &scores) {
  std::ostringstream os;
  os.precision(17);
  os << "scores:";
  for (const std::optional<double> &s : scores) {
    if (s)
      os << " " << *s;
    else
      os << " -";
  }
  return os.str();
}

std::string describe(const NewbobDecision &d) {
  std::ostringstream os;
  os.precision(17);
  os << toString(d.kind) << " rate " << d.rate << " mean "
     << d.meanRelativeError;
  return os.str();
}

/// Trains epochs 1 ... scores.size() + 1 as the trainer does: the rate of
/// each epoch from newbobNextRate over the epochs before it, then the epoch
/// with that rate and its score appended to the history (the last epoch's
/// decision is the one after the last score). Every decision is checked
/// against the reference on the same history; the first that differs ends
/// the run and fails it. `decisions` gets those taken up to there.
testing::AssertionResult simulate(const NewbobOptions &options, double initial,
                                  const Scores &scores,
                                  std::vector<NewbobDecision> &decisions) {
  decisions.clear();
  std::vector<EpochRate> history;
  for (size_t i = 0; i <= scores.size(); ++i) {
    NewbobDecision got = newbobNextRate(options, initial, history);
    NewbobDecision want = referenceNextRate(options, initial, history);
    decisions.push_back(got);
    if (got.kind != want.kind || !same(got.rate, want.rate) ||
        !same(got.meanRelativeError, want.meanRelativeError))
      return testing::AssertionFailure()
             << "epoch " << i + 1 << ": got " << describe(got)
             << ", the reference " << describe(want) << "\n  "
             << describe(options, initial) << "\n  " << describe(scores);
    if (i == scores.size())
      break;
    EpochRate epoch;
    epoch.rate = got.rate;
    epoch.scored = scores[i].has_value();
    epoch.score = scores[i].value_or(0.0);
    history.push_back(epoch);
  }
  return testing::AssertionSuccess();
}

std::vector<double> ratesOf(const std::vector<NewbobDecision> &decisions) {
  std::vector<double> rates;
  for (const NewbobDecision &d : decisions)
    rates.push_back(d.rate);
  return rates;
}

std::vector<std::string> kindsOf(const std::vector<NewbobDecision> &decisions) {
  std::vector<std::string> kinds;
  for (const NewbobDecision &d : decisions)
    kinds.push_back(toString(d.kind));
  return kinds;
}

/// The simplest options for hand-written cases: every epoch may change the
/// rate, from the one pair of the last two scores (so the mean is that
/// pair's relative error, easy to work out by hand).
NewbobOptions everyEpoch() {
  NewbobOptions o;
  o.epochs = 1;
  o.interval = 1;
  return o;
}

//===----------------------------------------------------------------------===//
// Random curves over the option grid
//===----------------------------------------------------------------------===//

/// A dev-score curve of 8-30 epochs like a training's: mostly falling by
/// up to 10% an epoch, with noisy plateaus (+-0.5%), small rises, exact
/// repeats (relative error exactly 0, which ties threshold 0) and a few
/// unscored epochs.
Scores randomScores(std::mt19937 &rng) {
  std::uniform_int_distribution<int> length(8, 30);
  std::uniform_real_distribution<double> unit(0.0, 1.0);
  int n = length(rng);
  double score = 1 + 4 * unit(rng);
  Scores scores;
  for (int i = 0; i < n; ++i) {
    double u = unit(rng);
    if (u < 0.05) {
      scores.push_back(std::nullopt);
      score *= 1 - 0.05 * unit(rng);
      continue;
    }
    if (u < 0.15) {
      // The same score again.
    } else if (u < 0.45) {
      score *= 1 + 0.01 * (unit(rng) - 0.5);
    } else if (u < 0.55) {
      score *= 1 + 0.05 * unit(rng);
    } else {
      score *= 1 - 0.1 * unit(rng);
    }
    scores.push_back(score);
  }
  return scores;
}

/// Every combination of the options the rules branch on.
std::vector<NewbobOptions> optionGrid() {
  std::vector<NewbobOptions> grid;
  for (double decay : {0.5, 0.9})
    for (double threshold : {-0.01, 0.0})
      for (double growth : {1.0, 1.1})
        for (double growBelow : {0.0, 0.05})
          for (int64_t epochs : {1, 3, 5})
            for (int64_t interval : {1, 2, 3})
              for (int64_t hold : {0, 3})
                for (bool relativeToRate : {false, true})
                  for (bool divideByOld : {false, true})
                    for (double min : {0.0, 1e-4}) {
                      NewbobOptions o;
                      o.decay = decay;
                      o.threshold = threshold;
                      o.growth = growth;
                      o.growThreshold = threshold - growBelow;
                      o.epochs = epochs;
                      o.interval = interval;
                      o.minEpochsPerRate = hold;
                      o.relativeToRate = relativeToRate;
                      o.divideByOld = divideByOld;
                      o.min = min;
                      grid.push_back(o);
                    }
  return grid;
}

TEST(NewbobTest, RandomCurvesMatchTheReferenceOverAllOptions) {
  std::mt19937 rng(20240611);
  std::vector<Scores> curves;
  for (int i = 0; i < 300; ++i)
    curves.push_back(randomScores(rng));
  std::vector<NewbobOptions> grid = optionGrid();
  ASSERT_EQ(grid.size(), 2304u);

  // What the runs went through, to show below that the curves reach every
  // rule (a test whose rates never change would pass vacuously).
  int decayed = 0, clamped = 0, grown = 0, tied = 0, keptWithMean = 0,
      keptNaN = 0, failures = 0;
  std::vector<NewbobDecision> decisions;
  for (size_t k = 0; k < grid.size(); ++k) {
    // Three curves per option set, so each curve meets many option sets.
    for (size_t j = 0; j < 3; ++j) {
      size_t c = (k + j * 101) % curves.size();
      // 3e-4 decays to min = 1e-4 within two halvings: the clamp is reached.
      double initial = c % 2 ? 1e-3 : 3e-4;
      testing::AssertionResult result =
          simulate(grid[k], initial, curves[c], decisions);
      if (!result) {
        // Report a few, not thousands, of the same mismatch.
        if (++failures <= 5)
          ADD_FAILURE() << result.message();
        continue;
      }
      for (size_t e = 1; e < decisions.size(); ++e) {
        const NewbobDecision &d = decisions[e];
        double before = decisions[e - 1].rate;
        if (d.kind == Kind::decayed) {
          ++decayed;
          if (before * grid[k].decay < grid[k].min)
            ++clamped;
        } else if (d.kind == Kind::grown) {
          ++grown;
        } else if (std::isnan(d.meanRelativeError)) {
          ++keptNaN;
        } else {
          ++keptWithMean;
          if (d.meanRelativeError == grid[k].threshold)
            ++tied;
        }
      }
    }
  }
  EXPECT_EQ(failures, 0);
  EXPECT_GT(decayed, 100);
  EXPECT_GT(clamped, 10);
  EXPECT_GT(grown, 100);
  EXPECT_GT(tied, 10);
  EXPECT_GT(keptWithMean, 100);
  EXPECT_GT(keptNaN, 100);
}

//===----------------------------------------------------------------------===//
// Hand-written cases
//===----------------------------------------------------------------------===//

TEST(NewbobTest, KindNames) {
  EXPECT_STREQ(toString(Kind::initial), "initial");
  EXPECT_STREQ(toString(Kind::kept), "kept");
  EXPECT_STREQ(toString(Kind::decayed), "decayed");
  EXPECT_STREQ(toString(Kind::grown), "grown");
}

TEST(NewbobTest, FirstEpochTakesTheInitialRate) {
  for (int64_t hold : {0, 3}) {
    NewbobOptions o;
    o.minEpochsPerRate = hold;
    NewbobDecision d = newbobNextRate(o, 0.25, {});
    EXPECT_EQ(d.kind, Kind::initial);
    EXPECT_EQ(d.rate, 0.25);
    EXPECT_TRUE(std::isnan(d.meanRelativeError));
  }
}

TEST(NewbobTest, SecondEpochKeepsWithOnlyOneScore) {
  // One scored epoch is no pair: nothing to compare, even with every epoch
  // an update epoch and a score that would decay any pair.
  NewbobOptions o = everyEpoch();
  NewbobDecision d = newbobNextRate(o, 0.25, {EpochRate{0.25, true, 2.0}});
  EXPECT_EQ(d.kind, Kind::kept);
  EXPECT_EQ(d.rate, 0.25);
  EXPECT_TRUE(std::isnan(d.meanRelativeError));
}

TEST(NewbobTest, DefaultOptionsChangeEveryFifthEpochOverSixScores) {
  // epochs = interval = 5: epochs 6, 11, ... may change the rate. A flat
  // curve (relative error 0 > -0.01) halves it each time; epoch 6 sees
  // only epochs 1-5 (four pairs), epoch 11 the six epochs 5-10.
  std::vector<NewbobDecision> d;
  ASSERT_TRUE(simulate(NewbobOptions(), 1.0, Scores(11, 3.0), d));
  EXPECT_EQ(ratesOf(d), (std::vector<double>{1, 1, 1, 1, 1, 0.5, 0.5, 0.5, 0.5,
                                             0.5, 0.25, 0.25}));
  EXPECT_EQ(d[5].kind, Kind::decayed);
  EXPECT_EQ(d[5].meanRelativeError, 0.0);
  EXPECT_EQ(d[10].kind, Kind::decayed);
}

TEST(NewbobTest, TiesWithTheThresholdsKeep) {
  // Equal scores: relative error exactly 0, equal to threshold 0 (and to
  // growThreshold 0): neither decays nor grows.
  NewbobOptions o = everyEpoch();
  o.threshold = 0;
  o.growThreshold = 0;
  o.growth = 2;
  std::vector<NewbobDecision> d;
  ASSERT_TRUE(simulate(o, 1.0, {3.0, 3.0}, d));
  EXPECT_EQ(kindsOf(d), (std::vector<std::string>{"initial", "kept", "kept"}));
  EXPECT_EQ(ratesOf(d), (std::vector<double>{1, 1, 1}));
  EXPECT_EQ(d[2].meanRelativeError, 0.0);

  // 3 -> 2 is (2 - 3) / 2 = -0.5 exactly: a tie with both thresholds at
  // -0.5 keeps; a threshold below it decays; one above with growThreshold
  // above it grows.
  o.threshold = -0.5;
  o.growThreshold = -0.5;
  ASSERT_TRUE(simulate(o, 1.0, {3.0, 2.0}, d));
  EXPECT_EQ(d[2].kind, Kind::kept);
  EXPECT_EQ(d[2].rate, 1.0);
  EXPECT_EQ(d[2].meanRelativeError, -0.5);
  o.threshold = -0.75;
  o.growThreshold = -0.75;
  ASSERT_TRUE(simulate(o, 1.0, {3.0, 2.0}, d));
  EXPECT_EQ(d[2].kind, Kind::decayed);
  EXPECT_EQ(d[2].rate, 0.5);
  o.threshold = -0.25;
  o.growThreshold = -0.25;
  ASSERT_TRUE(simulate(o, 1.0, {3.0, 2.0}, d));
  EXPECT_EQ(d[2].kind, Kind::grown);
  EXPECT_EQ(d[2].rate, 2.0);

  // Divided by the old score instead: 4 -> 2 is (2 - 4) / 4 = -0.5.
  o.threshold = -0.5;
  o.growThreshold = -0.5;
  o.divideByOld = true;
  ASSERT_TRUE(simulate(o, 1.0, {4.0, 2.0}, d));
  EXPECT_EQ(d[2].kind, Kind::kept);
  EXPECT_EQ(d[2].meanRelativeError, -0.5);
}

TEST(NewbobTest, DecayClampsAtMin) {
  // 1 -> 0.5 -> 0.25, clamped to 0.3, and it stays there (still "decayed":
  // the rule fired, the clamp held it).
  NewbobOptions o = everyEpoch();
  o.min = 0.3;
  std::vector<NewbobDecision> d;
  ASSERT_TRUE(simulate(o, 1.0, Scores(4, 1.0), d));
  EXPECT_EQ(ratesOf(d), (std::vector<double>{1, 1, 0.5, 0.3, 0.3}));
  EXPECT_EQ(kindsOf(d), (std::vector<std::string>{"initial", "kept", "decayed",
                                                  "decayed", "decayed"}));
}

TEST(NewbobTest, MinEpochsPerRateHoldsEachRate) {
  // A flat curve decays whenever it may. With a hold of 3, a rate runs at
  // least 3 epochs: epochs 2 and 3 hold (fewer than 3 epochs ran), epoch 4
  // decays, 5 and 6 hold (their last 3 epochs mix two rates), 7 decays...
  NewbobOptions o = everyEpoch();
  o.minEpochsPerRate = 3;
  std::vector<NewbobDecision> d;
  ASSERT_TRUE(simulate(o, 1.0, Scores(9, 2.0), d));
  EXPECT_EQ(ratesOf(d), (std::vector<double>{1, 1, 1, 0.5, 0.5, 0.5, 0.25, 0.25,
                                             0.25, 0.125}));
  // The held epochs compute no mean.
  EXPECT_EQ(d[4].kind, Kind::kept);
  EXPECT_TRUE(std::isnan(d[4].meanRelativeError));

  // 0 and 1 hold nothing: every epoch from 3 on decays.
  for (int64_t hold : {0, 1}) {
    o.minEpochsPerRate = hold;
    ASSERT_TRUE(simulate(o, 1.0, Scores(4, 2.0), d));
    EXPECT_EQ(ratesOf(d), (std::vector<double>{1, 1, 0.5, 0.25, 0.125}))
        << hold;
  }
}

TEST(NewbobTest, IntervalChangesOnlyAtItsEpochs) {
  // interval 2: epochs 1, 3, 5, 7 may change; the mean looks at the last
  // two epochs whichever they are.
  NewbobOptions o = everyEpoch();
  o.interval = 2;
  std::vector<NewbobDecision> d;
  ASSERT_TRUE(simulate(o, 1.0, Scores(6, 2.0), d));
  EXPECT_EQ(ratesOf(d),
            (std::vector<double>{1, 1, 0.5, 0.5, 0.25, 0.25, 0.125}));
  EXPECT_EQ(kindsOf(d),
            (std::vector<std::string>{"initial", "kept", "decayed", "kept",
                                      "decayed", "kept", "decayed"}));
  // interval 3: epochs 1, 4, 7.
  o.interval = 3;
  ASSERT_TRUE(simulate(o, 1.0, Scores(6, 2.0), d));
  EXPECT_EQ(ratesOf(d), (std::vector<double>{1, 1, 1, 0.5, 0.5, 0.5, 0.25}));
}

TEST(NewbobTest, NaNScoreKeeps) {
  // Any pair with the NaN score has a NaN relative error, so the mean is
  // NaN and neither rule fires; once the NaN leaves the window the flat
  // curve decays again.
  NewbobOptions o = everyEpoch();
  std::vector<NewbobDecision> d;
  ASSERT_TRUE(simulate(o, 1.0, {2.0, kNaN, 2.0, 2.0}, d));
  EXPECT_EQ(ratesOf(d), (std::vector<double>{1, 1, 1, 1, 0.5}));
  EXPECT_EQ(d[2].kind, Kind::kept);
  EXPECT_TRUE(std::isnan(d[2].meanRelativeError));
  EXPECT_EQ(d[3].kind, Kind::kept);
  EXPECT_EQ(d[4].kind, Kind::decayed);

  // With three pairs in the window, one NaN spoils the mean of all of them.
  o.epochs = 3;
  // Epoch 3 decays (1, 2 flat); epochs 4-7 hold epoch 3's NaN in their
  // windows of four; epoch 8 sees the flat epochs 4-7.
  ASSERT_TRUE(simulate(o, 1.0, {2.0, 2.0, kNaN, 2.0, 2.0, 2.0, 2.0}, d));
  EXPECT_EQ(ratesOf(d),
            (std::vector<double>{1, 1, 0.5, 0.5, 0.5, 0.5, 0.5, 0.25}));
}

TEST(NewbobTest, TwoZeroScoresKeep) {
  // 0 / 0 is NaN.
  std::vector<NewbobDecision> d;
  ASSERT_TRUE(simulate(everyEpoch(), 1.0, {0.0, 0.0}, d));
  EXPECT_EQ(d[2].kind, Kind::kept);
  EXPECT_EQ(d[2].rate, 1.0);
  EXPECT_TRUE(std::isnan(d[2].meanRelativeError));
}

TEST(NewbobTest, ScoreRisingToInfinityKeeps) {
  // (inf - 2) / |inf| is NaN: keep, however bad that looks.
  NewbobOptions o = everyEpoch();
  std::vector<NewbobDecision> d;
  ASSERT_TRUE(simulate(o, 1.0, {2.0, kInf}, d));
  EXPECT_EQ(d[2].kind, Kind::kept);
  EXPECT_EQ(d[2].rate, 1.0);
  EXPECT_TRUE(std::isnan(d[2].meanRelativeError));
  // Divided by the old score it is (inf - 2) / 2 = +inf: that decays.
  o.divideByOld = true;
  ASSERT_TRUE(simulate(o, 1.0, {2.0, kInf}, d));
  EXPECT_EQ(d[2].kind, Kind::decayed);
  EXPECT_EQ(d[2].rate, 0.5);
  EXPECT_EQ(d[2].meanRelativeError, kInf);
}

TEST(NewbobTest, ScoreFallingFromInfinityGrows) {
  // (2 - inf) / |2| = -inf, below any growThreshold.
  NewbobOptions o = everyEpoch();
  o.growth = 1.5;
  std::vector<NewbobDecision> d;
  ASSERT_TRUE(simulate(o, 1.0, {kInf, 2.0}, d));
  EXPECT_EQ(kindsOf(d), (std::vector<std::string>{"initial", "kept", "grown"}));
  EXPECT_EQ(ratesOf(d), (std::vector<double>{1, 1, 1.5}));
  EXPECT_EQ(d[2].meanRelativeError, -kInf);
  // Divided by the old score it is -inf / inf = NaN: keep.
  o.divideByOld = true;
  ASSERT_TRUE(simulate(o, 1.0, {kInf, 2.0}, d));
  EXPECT_EQ(d[2].kind, Kind::kept);
  EXPECT_EQ(d[2].rate, 1.0);
  EXPECT_TRUE(std::isnan(d[2].meanRelativeError));
}

TEST(NewbobTest, FiniteFallGrows) {
  // 2 -> 1 is (1 - 2) / 1 = -1 < -0.01: times growth 1.25, twice.
  NewbobOptions o = everyEpoch();
  o.growth = 1.25;
  std::vector<NewbobDecision> d;
  ASSERT_TRUE(simulate(o, 1.0, {2.0, 1.0, 0.5}, d));
  EXPECT_EQ(ratesOf(d), (std::vector<double>{1, 1, 1.25, 1.5625}));
  EXPECT_EQ(d[3].meanRelativeError, -1.0);

  // With the default growth 1 the rule fires but changes nothing: kept
  // (unlike "decayed" at the min clamp, where the decay rule did act).
  ASSERT_TRUE(simulate(everyEpoch(), 1.0, {2.0, 1.0}, d));
  EXPECT_EQ(d[2].kind, Kind::kept);
  EXPECT_EQ(d[2].rate, 1.0);
  EXPECT_EQ(d[2].meanRelativeError, -1.0);
}

TEST(NewbobTest, UnscoredEpochInTheWindowKeeps) {
  // epochs = 2: the window is the last three epochs. Epoch 2 has no score,
  // so epochs 3, 4 and 5 (whose windows hold it) keep without a mean; epoch
  // 6 sees the flat epochs 3-5 and decays.
  NewbobOptions o = everyEpoch();
  o.epochs = 2;
  std::vector<NewbobDecision> d;
  ASSERT_TRUE(simulate(o, 1.0, {3.0, std::nullopt, 1.0, 1.0, 1.0}, d));
  EXPECT_EQ(ratesOf(d), (std::vector<double>{1, 1, 1, 1, 1, 0.5}));
  for (int e : {3, 4, 5}) {
    EXPECT_EQ(d[e - 1].kind, Kind::kept) << e;
    EXPECT_TRUE(std::isnan(d[e - 1].meanRelativeError)) << e;
  }
  EXPECT_EQ(d[5].meanRelativeError, 0.0);
}

TEST(NewbobTest, RelativeToRateCountsADropAfterADecayAsLarger) {
  // Scores 5, 5, 4. Epoch 3 decays (flat: 0 > -0.3) to 0.5. Epoch 4's pair
  // is (5 -> 4) = -1/4; it ran with half the initial rate, so relative to
  // the rate it is -0.25 / 0.5 = -0.5, below the threshold: keep. Without
  // it, -0.25 is above -0.3: decay again.
  NewbobOptions o = everyEpoch();
  o.threshold = -0.3;
  o.growThreshold = -1.0;
  std::vector<NewbobDecision> d;
  ASSERT_TRUE(simulate(o, 1.0, {5.0, 5.0, 4.0}, d));
  EXPECT_EQ(ratesOf(d), (std::vector<double>{1, 1, 0.5, 0.25}));
  EXPECT_EQ(d[3].meanRelativeError, -0.25);
  o.relativeToRate = true;
  ASSERT_TRUE(simulate(o, 1.0, {5.0, 5.0, 4.0}, d));
  EXPECT_EQ(ratesOf(d), (std::vector<double>{1, 1, 0.5, 0.5}));
  EXPECT_EQ(d[3].kind, Kind::kept);
  EXPECT_EQ(d[3].meanRelativeError, -0.5);

  // Only the newer epoch's rate counts, and only when positive: a pair
  // whose newer epoch ran at rate 0 is left as it is.
  std::vector<EpochRate> history = {EpochRate{1.0, true, 5.0},
                                    EpochRate{0.0, true, 4.0}};
  NewbobDecision zero = newbobNextRate(o, 1.0, history);
  EXPECT_EQ(zero.meanRelativeError, -0.25);
  EXPECT_EQ(zero.kind, Kind::decayed);
  EXPECT_EQ(zero.rate, 0.0);
}

TEST(NewbobTest, MeanAveragesEveryPairOfTheWindow) {
  // epochs = 2, scores 4, 2, 2. Epoch 3's window is 4, 2 alone: -1 <
  // -0.75 grows to 2. Epoch 4's pairs are -1 and 0, mean -0.5: below
  // threshold -0.25 (no decay), above growThreshold -0.75 (no growth).
  NewbobOptions o = everyEpoch();
  o.epochs = 2;
  o.threshold = -0.25;
  o.growThreshold = -0.75;
  o.growth = 2;
  std::vector<NewbobDecision> d;
  ASSERT_TRUE(simulate(o, 1.0, {4.0, 2.0, 2.0}, d));
  EXPECT_EQ(d[3].kind, Kind::kept);
  EXPECT_EQ(d[3].meanRelativeError, -0.5);
  EXPECT_EQ(d[3].rate, 2.0);
  EXPECT_EQ(d[2].kind, Kind::grown);
  EXPECT_EQ(d[2].rate, 2.0);
  EXPECT_EQ(d[2].meanRelativeError, -1.0);
}

//===----------------------------------------------------------------------===//
// The parser
//===----------------------------------------------------------------------===//

LearningRateSchedule parsed(const std::string &text) {
  absl::StatusOr<LearningRateSchedule> schedule =
      LearningRateSchedule::parse(text);
  EXPECT_TRUE(schedule.ok()) << text << ": " << schedule.status().message();
  return schedule.ok() ? *schedule : LearningRateSchedule();
}

TEST(NewbobTest, ParsesEveryKey) {
  LearningRateSchedule s =
      parsed("newbob:lr=0.002,decay=0.7,threshold=-0.02,min=1e-5,growth=1.2,"
             "grow-threshold=-0.05,epochs=3,interval=2,min-epochs-per-lr=4,"
             "relative-lr=1,div-by-old=1,score=ctc,warmup=100");
  EXPECT_EQ(s.decay, LearningRateSchedule::Decay::newbob);
  EXPECT_EQ(s.peak, 0.002);
  EXPECT_EQ(s.warmup, 100);
  EXPECT_EQ(s.newbob.decay, 0.7);
  EXPECT_EQ(s.newbob.threshold, -0.02);
  EXPECT_EQ(s.newbob.min, 1e-5);
  EXPECT_EQ(s.newbob.growth, 1.2);
  EXPECT_EQ(s.newbob.growThreshold, -0.05);
  EXPECT_EQ(s.newbob.epochs, 3);
  EXPECT_EQ(s.newbob.interval, 2);
  EXPECT_EQ(s.newbob.minEpochsPerRate, 4);
  EXPECT_TRUE(s.newbob.relativeToRate);
  EXPECT_TRUE(s.newbob.divideByOld);
  EXPECT_EQ(s.newbob.score, "ctc");
}

TEST(NewbobTest, ParserDefaults) {
  // RETURNN's defaults; interval follows epochs and growThreshold follows
  // threshold unless given.
  LearningRateSchedule s = parsed("newbob:lr=0.001");
  EXPECT_EQ(s.decay, LearningRateSchedule::Decay::newbob);
  EXPECT_EQ(s.peak, 0.001);
  EXPECT_EQ(s.warmup, 0);
  EXPECT_EQ(s.newbob.decay, 0.5);
  EXPECT_EQ(s.newbob.threshold, -0.01);
  EXPECT_EQ(s.newbob.min, 0.0);
  EXPECT_EQ(s.newbob.growth, 1.0);
  EXPECT_EQ(s.newbob.growThreshold, -0.01);
  EXPECT_EQ(s.newbob.epochs, 5);
  EXPECT_EQ(s.newbob.interval, 5);
  EXPECT_EQ(s.newbob.minEpochsPerRate, 0);
  EXPECT_FALSE(s.newbob.relativeToRate);
  EXPECT_FALSE(s.newbob.divideByOld);
  EXPECT_EQ(s.newbob.score, "");

  s = parsed("newbob:lr=0.001,epochs=3,threshold=0");
  EXPECT_EQ(s.newbob.interval, 3);
  EXPECT_EQ(s.newbob.growThreshold, 0.0);
  s = parsed("newbob:lr=0.001,threshold=0,epochs=3,interval=1,"
             "grow-threshold=-0.1");
  EXPECT_EQ(s.newbob.epochs, 3);
  EXPECT_EQ(s.newbob.interval, 1);
  EXPECT_EQ(s.newbob.threshold, 0.0);
  EXPECT_EQ(s.newbob.growThreshold, -0.1);
  s = parsed("newbob:lr=0.001,relative-lr=0,div-by-old=0");
  EXPECT_FALSE(s.newbob.relativeToRate);
  EXPECT_FALSE(s.newbob.divideByOld);
}

TEST(NewbobTest, BadNewbobSchedulesAreErrors) {
  // Each with the key (or value) the message must name; the wording is the
  // implementation's.
  const std::pair<const char *, const char *> bad[] = {
      {"newbob:lr=0.001,decay=0", "decay"},
      {"newbob:lr=0.001,decay=-0.5", "decay"},
      {"newbob:lr=0.001,epochs=0", "epochs"},
      {"newbob:lr=0.001,interval=0", "interval"},
      {"newbob:lr=0.001,threshold=-0.01,grow-threshold=0", "grow-threshold"},
      {"newbob:lr=0.001,relative-lr=2", "relative-lr"},
      {"newbob:lr=0.001,div-by-old=2", "div-by-old"},
      {"newbob:lr=0.001,bogus=1", "bogus"},
      {"newbob:lr=0", "lr"},
      {"newbob:lr=-1", "lr"},
      {"newbob:lr=0.001,epochs=x", "x"},
      {"newbob:lr=0.001,epochs=1000001", "epochs"},
      {"newbob:lr=0.001,min-epochs-per-lr=-1", "min-epochs-per-lr"},
  };
  for (const auto &[text, key] : bad) {
    absl::StatusOr<LearningRateSchedule> s = LearningRateSchedule::parse(text);
    ASSERT_FALSE(s.ok()) << text;
    EXPECT_EQ(s.status().code(), absl::StatusCode::kInvalidArgument) << text;
    // The message repeats the schedule's text first; the key must be named
    // in what follows it.
    std::string message(s.status().message());
    std::string said = message.substr(message.find("': ") + 3);
    EXPECT_NE(said.find(key), std::string::npos) << text << ": " << message;
  }

  // validate() checks a schedule built in code the same way.
  LearningRateSchedule direct;
  direct.decay = LearningRateSchedule::Decay::newbob;
  EXPECT_TRUE(direct.validate().ok()) << direct.validate().message();
  direct.newbob.decay = 0;
  EXPECT_FALSE(direct.validate().ok());
  direct.newbob.decay = 0.5;
  direct.newbob.epochs = 0;
  EXPECT_FALSE(direct.validate().ok());
}

TEST(NewbobTest, WarmupRampsUpToTheEpochRate) {
  // Each step's rate is its epoch's (newbobNextRate) ramped up over the
  // first `warmup` steps as for the other schedules.
  LearningRateSchedule s = parsed("newbob:lr=0.01,warmup=4");
  EXPECT_DOUBLE_EQ(s.at(0, 0.008), 0.002);
  EXPECT_DOUBLE_EQ(s.at(1, 0.008), 0.004);
  EXPECT_DOUBLE_EQ(s.at(3, 0.008), 0.008);
  EXPECT_DOUBLE_EQ(s.at(4, 0.008), 0.008);
  EXPECT_DOUBLE_EQ(s.at(100000, 0.003), 0.003);
  LearningRateSchedule none = parsed("newbob:lr=0.01");
  EXPECT_DOUBLE_EQ(none.at(0, 0.005), 0.005);
  EXPECT_DOUBLE_EQ(none.at(7, 0.0025), 0.0025);
}

TEST(NewbobTest, EpochRatesTravelInTheCheckpoint) {
  std::string path =
      ::testing::TempDir() + "newbob-" + std::to_string(getpid()) + ".npz";
  TrainState state;
  state.parameters["w"] = Tensor::of<float>(DType::f32, {2}, {1.0f, 2.0f});
  state.step = state.batches = 6;
  constexpr double kNan = std::numeric_limits<double>::quiet_NaN();
  state.epochRates = {{1e-3, true, 2.5},
                      {1e-3, true, kNan},
                      {5e-4, true, std::numeric_limits<double>::infinity()},
                      {5e-4, false, 0.0}};
  ASSERT_TRUE(saveCheckpoint(path, state).ok());
  TrainState loaded;
  ASSERT_TRUE(loadCheckpoint(path, loaded).ok());
  ASSERT_EQ(loaded.epochRates.size(), 4u);
  for (size_t e = 0; e < 4; ++e) {
    const EpochRate &a = state.epochRates[e], &b = loaded.epochRates[e];
    EXPECT_EQ(a.rate, b.rate) << e;
    EXPECT_EQ(a.scored, b.scored) << e;
    EXPECT_TRUE(a.score == b.score ||
                (std::isnan(a.score) && std::isnan(b.score)))
        << e;
  }
  // The counters are not parameters.
  EXPECT_EQ(loaded.parameters.size(), 1u);

  // Refused: a wrong shape or dtype, a non-finite or negative rate, a
  // "scored" that is not 0 or 1.
  auto loadError = [&](Tensor rates) {
    std::map<std::string, Tensor> arrays{{"w", state.parameters.at("w")},
                                         {kCheckpointEpochRatesKey, rates}};
    EXPECT_TRUE(writeNpz(path, arrays).ok());
    TrainState refused;
    absl::Status status = loadCheckpoint(path, refused);
    return status.ok() ? std::string() : std::string(status.message());
  };
  std::string what = "checkpoint '" + path + "': 'nn.train.epoch_rates'";
  EXPECT_EQ(loadError(Tensor::of<double>(DType::f64, {2, 2}, {1, 1, 1, 1})),
            what + " is not a float64 [epochs, 3] array (rate, scored, score)");
  EXPECT_EQ(loadError(Tensor::of<float>(DType::f32, {1, 3}, {1, 1, 1})),
            what + " is not a float64 [epochs, 3] array (rate, scored, score)");
  for (std::vector<double> row :
       {std::vector<double>{kNan, 1, 1}, std::vector<double>{-1e-3, 1, 1},
        std::vector<double>{1e-3, 2, 1}})
    EXPECT_EQ(loadError(Tensor::of<double>(DType::f64, {1, 3}, row)),
              what + ": epoch 1 needs a finite rate >= 0 and scored 0 or 1");
  EXPECT_EQ(loadError(Tensor::of<double>(DType::f64, {1, 3}, {1e-3, 1, kNan})),
            "");
  std::remove(path.c_str());
}

} // namespace
