//===- CtcSearchTest.cpp - CTC greedy and prefix beam search vs references ===//
//
// The runtime's CTC searches against references written here, sharing no
// code with them: every frame-level path of a tiny problem enumerated,
// collapsed and summed (or maximized) per label sequence; the CTC forward
// recursion for longer ones; a plain argmax-collapse loop for greedy.

#include "runtime/search/CtcSearch.h"
#include "runtime/search/SearchAbi.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstdint>
#include <functional>
#include <limits>
#include <map>
#include <random>
#include <vector>

using namespace nn::runtime;

namespace {

using Labels = std::vector<int32_t>;
constexpr double kInf = std::numeric_limits<double>::infinity();
constexpr double kTolerance = 1e-9;

/// Uniform in [0, 1) from the engine's raw output (fixed by the standard,
/// unlike the distributions).
double uniform(std::mt19937_64 &rng) { return (rng() >> 11) * 0x1.0p-53; }

/// `frames` log-softmax rows of `vocab` classes, logits uniform in
/// [-spread, spread].
std::vector<double> randomLogProbs(std::mt19937_64 &rng, int64_t frames,
                                   int64_t vocab, double spread = 2.0) {
  std::vector<double> x(frames * vocab);
  for (int64_t t = 0; t < frames; ++t) {
    double *row = &x[t * vocab];
    double total = 0;
    for (int64_t c = 0; c < vocab; ++c) {
      row[c] = spread * (2 * uniform(rng) - 1);
      total += std::exp(row[c]);
    }
    double norm = std::log(total);
    for (int64_t c = 0; c < vocab; ++c)
      row[c] -= norm;
  }
  return x;
}

/// The values as f32 and back, so a reference can read what an f32 search
/// reads.
std::vector<double> roundedToFloat(const std::vector<double> &x) {
  std::vector<double> rounded(x.size());
  for (size_t i = 0; i < x.size(); ++i)
    rounded[i] = static_cast<float>(x[i]);
  return rounded;
}

/// log Σ exp, written out.
double logSumExp(const std::vector<double> &values) {
  double top = -kInf;
  for (double v : values)
    top = std::max(top, v);
  if (top == -kInf)
    return -kInf;
  double total = 0;
  for (double v : values)
    total += std::exp(v - top);
  return top + std::log(total);
}

/// Whether a path may emit a new label of class c at frame t.
using EmissionFilter = std::function<bool(int t, int c)>;

/// Every frame-level path of x [frames, vocab], collapsed (repeats merged,
/// then blanks dropped), its score Σ_t x[t][path_t]; per label sequence the
/// log-sum of its paths' probabilities (`sum`) or the best one. With a
/// filter, only paths whose every new label (a class other than blank and
/// than the previous frame's) it allows.
std::map<Labels, double>
enumerateLabelSequences(const std::vector<double> &x, int frames, int vocab,
                        int blank, bool sum,
                        const EmissionFilter &allowed = nullptr) {
  std::map<Labels, std::vector<double>> paths;
  std::vector<int> path(frames, 0);
  while (true) {
    double score = 0;
    Labels labels;
    int previous = -1;
    bool kept = true;
    for (int t = 0; t < frames; ++t) {
      score += x[t * vocab + path[t]];
      if (path[t] != blank && path[t] != previous) {
        labels.push_back(path[t]);
        kept = kept && (!allowed || allowed(t, path[t]));
      }
      previous = path[t];
    }
    if (kept)
      paths[labels].push_back(score);
    int t = frames - 1;
    while (t >= 0 && ++path[t] == vocab) {
      path[t] = 0;
      --t;
    }
    if (t < 0)
      break;
  }
  std::map<Labels, double> result;
  for (auto &[labels, scores] : paths)
    result[labels] = sum ? logSumExp(scores)
                         : *std::max_element(scores.begin(), scores.end());
  return result;
}

/// log p(labels | x) by the CTC forward recursion over the labels with
/// blanks around and between them.
double ctcLogProbability(const std::vector<double> &x, int frames, int vocab,
                         int blank, const Labels &labels) {
  int states = 2 * static_cast<int>(labels.size()) + 1;
  if (frames == 0)
    return labels.empty() ? 0 : -kInf;
  auto symbol = [&](int s) { return s % 2 == 0 ? blank : labels[s / 2]; };
  std::vector<double> alpha(states, -kInf), next(states);
  alpha[0] = x[blank];
  if (states > 1)
    alpha[1] = x[symbol(1)];
  for (int t = 1; t < frames; ++t) {
    for (int s = 0; s < states; ++s) {
      std::vector<double> from = {alpha[s]};
      if (s >= 1)
        from.push_back(alpha[s - 1]);
      if (s >= 2 && symbol(s) != blank && symbol(s) != symbol(s - 2))
        from.push_back(alpha[s - 2]);
      next[s] = logSumExp(from) + x[t * vocab + symbol(s)];
    }
    alpha.swap(next);
  }
  return states > 1 ? logSumExp({alpha[states - 1], alpha[states - 2]})
                    : alpha[0];
}

/// Best path: the first maximal class per frame, repeats collapsed, blanks
/// dropped; score Σ of the maxima.
CtcHypothesis plainGreedy(const std::vector<double> &x, int frames, int vocab,
                          int blank) {
  CtcHypothesis result;
  int previous = -1;
  for (int t = 0; t < frames; ++t) {
    int best = 0;
    for (int c = 0; c < vocab; ++c)
      if (x[t * vocab + c] > x[t * vocab + best])
        best = c;
    result.score += x[t * vocab + best];
    if (best != blank && best != previous)
      result.labels.push_back(best);
    previous = best;
  }
  return result;
}

/// Whether a comes before b under the documented rule (score, length,
/// labels).
bool rankedBefore(const Labels &a, double scoreA, const Labels &b,
                  double scoreB) {
  if (scoreA != scoreB)
    return scoreA > scoreB;
  if (a.size() != b.size())
    return a.size() < b.size();
  return a < b;
}

/// A batch of sequences of their own lengths, as padded f32 [B, T, V]
/// with NaN in every padded frame.
struct PaddedBatch {
  std::vector<float> scores;
  std::vector<int32_t> lengths;
  int64_t frames = 0;
};

PaddedBatch paddedBatch(const std::vector<std::vector<double>> &sequences,
                        int64_t vocab) {
  PaddedBatch batch;
  for (const auto &x : sequences) {
    batch.lengths.push_back(static_cast<int32_t>(x.size() / vocab));
    batch.frames = std::max<int64_t>(batch.frames, batch.lengths.back());
  }
  batch.frames = std::max<int64_t>(batch.frames, 1);
  batch.scores.assign(sequences.size() * batch.frames * vocab,
                      std::numeric_limits<float>::quiet_NaN());
  for (size_t b = 0; b < sequences.size(); ++b)
    for (size_t i = 0; i < sequences[b].size(); ++i)
      batch.scores[b * batch.frames * vocab + i] =
          static_cast<float>(sequences[b][i]);
  return batch;
}

std::vector<std::vector<CtcHypothesis>>
beamSearch(const CtcScores &scores, const CtcBeamOptions &options) {
  auto result = ctcPrefixSearch(scores, options);
  EXPECT_TRUE(result.ok()) << result.status();
  return result.ok() ? *result : std::vector<std::vector<CtcHypothesis>>();
}

/// One sequence of f64 scores [frames, vocab] searched alone.
std::vector<CtcHypothesis> searchOne(const std::vector<double> &x,
                                     int64_t vocab,
                                     const CtcBeamOptions &options) {
  int32_t length = static_cast<int32_t>(x.size() / vocab);
  auto result = beamSearch(
      CtcScores::padded(x.data(), 1, length, vocab, &length), options);
  return result.empty() ? std::vector<CtcHypothesis>() : result[0];
}

void expectSame(const std::vector<CtcHypothesis> &actual,
                const std::vector<CtcHypothesis> &expected) {
  ASSERT_EQ(actual.size(), expected.size());
  for (size_t k = 0; k < actual.size(); ++k) {
    EXPECT_EQ(actual[k].labels, expected[k].labels) << "hypothesis " << k;
    EXPECT_EQ(actual[k].score, expected[k].score) << "hypothesis " << k;
  }
}

/// The beam's hypotheses are exactly the reference's label sequences, with
/// its scores, in the documented order.
void expectMatchesReference(const std::vector<CtcHypothesis> &hypotheses,
                            const std::map<Labels, double> &reference) {
  EXPECT_EQ(hypotheses.size(), reference.size());
  for (size_t k = 0; k < hypotheses.size(); ++k) {
    const CtcHypothesis &h = hypotheses[k];
    auto it = reference.find(h.labels);
    ASSERT_NE(it, reference.end()) << "hypothesis " << k << " not a label "
                                   << "sequence of any path";
    EXPECT_NEAR(h.score, it->second, kTolerance) << "hypothesis " << k;
    if (k > 0) {
      const CtcHypothesis &p = hypotheses[k - 1];
      EXPECT_TRUE(rankedBefore(p.labels, p.score, h.labels, h.score))
          << "hypotheses " << k - 1 << " and " << k << " out of order";
    }
  }
}

TEST(CtcSearchTest, GreedyMatchesPlainArgmaxCollapse) {
  std::mt19937_64 rng(1);
  const int vocab = 5;
  for (int blank : {0, 3}) {
    std::vector<std::vector<double>> sequences;
    for (int frames : {7, 0, 30, 1, 12})
      sequences.push_back(
          roundedToFloat(randomLogProbs(rng, frames, vocab, 1.0)));
    PaddedBatch batch = paddedBatch(sequences, vocab);
    auto greedy = ctcGreedySearch(
        CtcScores::padded(batch.scores.data(), sequences.size(), batch.frames,
                          vocab, batch.lengths.data()),
        blank, 2);
    ASSERT_TRUE(greedy.ok()) << greedy.status();
    for (size_t b = 0; b < sequences.size(); ++b) {
      CtcHypothesis expected =
          plainGreedy(sequences[b], batch.lengths[b], vocab, blank);
      EXPECT_EQ((*greedy)[b].labels, expected.labels) << "sequence " << b;
      EXPECT_NEAR((*greedy)[b].score, expected.score, 1e-12);
    }
  }
}

TEST(CtcSearchTest, GreedyTiesGoToTheLowestClassAndNaNNeverWins) {
  // Uniform frames: class 0 wins everywhere, so with blank 2 the result is
  // one label 0. Then a frame whose first class is NaN: class 1 wins.
  const int vocab = 4, frames = 5;
  std::vector<double> x(frames * vocab, std::log(0.25));
  auto uniform = ctcGreedySearch(
      CtcScores::padded(x.data(), 1, frames, vocab, &frames), /*blank=*/2);
  ASSERT_TRUE(uniform.ok());
  EXPECT_EQ((*uniform)[0].labels, Labels({0}));
  EXPECT_NEAR((*uniform)[0].score, frames * std::log(0.25), 1e-12);

  std::vector<double> y = {std::nan(""),   -3, -1, -1,
                           /*frame 1*/ -2, -2, -9, -9};
  int32_t two = 2;
  auto nan = ctcGreedySearch(CtcScores::padded(y.data(), 1, 2, vocab, &two),
                             /*blank=*/0);
  ASSERT_TRUE(nan.ok());
  EXPECT_EQ((*nan)[0].labels, Labels({2}));
  EXPECT_EQ((*nan)[0].score, -3);
}

TEST(CtcSearchTest, ForwardReferenceAgreesWithEnumeration) {
  // The two references check each other before they check the search.
  std::mt19937_64 rng(2);
  std::vector<double> x = randomLogProbs(rng, 5, 3);
  for (const auto &[labels, score] :
       enumerateLabelSequences(x, 5, 3, 0, /*sum=*/true))
    EXPECT_NEAR(ctcLogProbability(x, 5, 3, 0, labels), score, 1e-12);
}

TEST(CtcSearchTest, WideBeamFindsEveryLabelSequenceWithItsExactScore) {
  std::mt19937_64 rng(3);
  for (CtcMerge merge : {CtcMerge::sum, CtcMerge::max}) {
    for (int vocab : {3, 4}) {
      for (int frames = 0; frames <= (vocab == 3 ? 6 : 5); ++frames) {
        for (int blank : {0, vocab - 1}) {
          SCOPED_TRACE(testing::Message()
                       << (merge == CtcMerge::sum ? "sum" : "max") << " V "
                       << vocab << " T " << frames << " blank " << blank);
          std::vector<double> x = randomLogProbs(rng, frames, vocab);
          auto reference = enumerateLabelSequences(x, frames, vocab, blank,
                                                   merge == CtcMerge::sum);
          CtcBeamOptions options;
          options.blank = blank;
          options.merge = merge;
          // Every prefix alive at some frame can still end the sequence
          // (blanks after it), so this beam never has to drop one.
          options.beam = static_cast<int32_t>(reference.size());
          expectMatchesReference(searchOne(x, vocab, options), reference);
          // A wider beam finds no more: the rest have no path.
          options.beam += 5;
          expectMatchesReference(searchOne(x, vocab, options), reference);
        }
      }
    }
  }
}

TEST(CtcSearchTest, NarrowBeamKeepsTheBestOfWhatItScores) {
  // Pruning only removes paths: no prefix is scored above its exact
  // probability, and the returned list is ordered by the rule.
  std::mt19937_64 rng(4);
  const int vocab = 6, frames = 30;
  for (int trial = 0; trial < 5; ++trial) {
    std::vector<double> x = randomLogProbs(rng, frames, vocab, 3.0);
    for (int tokenBeam : {0, 3})
      for (double threshold : {kInf, 4.0}) {
        CtcBeamOptions options;
        options.beam = 8;
        options.tokenBeam = tokenBeam;
        options.tokenThreshold = threshold;
        options.scoreBeam = threshold;
        auto hypotheses = searchOne(x, vocab, options);
        ASSERT_FALSE(hypotheses.empty());
        EXPECT_LE(hypotheses.size(), 8u);
        for (size_t k = 0; k < hypotheses.size(); ++k) {
          double exact =
              ctcLogProbability(x, frames, vocab, 0, hypotheses[k].labels);
          EXPECT_LE(hypotheses[k].score, exact + kTolerance);
          if (k > 0) {
            EXPECT_TRUE(
                rankedBefore(hypotheses[k - 1].labels, hypotheses[k - 1].score,
                             hypotheses[k].labels, hypotheses[k].score));
          }
          EXPECT_GE(hypotheses[k].score, hypotheses[0].score - threshold);
        }
      }
  }
}

TEST(CtcSearchTest, PruningSwitchedOffIsNoPruning) {
  std::mt19937_64 rng(5);
  const int vocab = 7;
  std::vector<double> x = randomLogProbs(rng, 25, vocab, 3.0);
  for (CtcMerge merge : {CtcMerge::sum, CtcMerge::max}) {
    CtcBeamOptions plain;
    plain.beam = 5;
    plain.merge = merge;
    CtcBeamOptions off = plain;
    off.tokenBeam = vocab;
    off.tokenThreshold = kInf;
    off.scoreBeam = kInf;
    expectSame(searchOne(x, vocab, off), searchOne(x, vocab, plain));
    // A token threshold wider than any frame's spread changes nothing.
    off.tokenThreshold = 1e6;
    off.scoreBeam = 1e6;
    expectSame(searchOne(x, vocab, off), searchOne(x, vocab, plain));
  }
}

TEST(CtcSearchTest, TighterPruningKeepsFewerPaths) {
  // The exact best label sequence (enumerated) keeps its score with no
  // pruning, and loses probability mass (never gains) as the token
  // threshold tightens; with threshold 0 only argmax classes extend.
  std::mt19937_64 rng(6);
  const int vocab = 3, frames = 6;
  std::vector<double> x = randomLogProbs(rng, frames, vocab);
  auto reference = enumerateLabelSequences(x, frames, vocab, 0, true);
  CtcBeamOptions options;
  options.beam = static_cast<int32_t>(reference.size());
  double previous = kInf;
  Labels best = searchOne(x, vocab, options)[0].labels;
  for (double threshold : {kInf, 3.0, 1.0, 0.3, 0.0}) {
    options.tokenThreshold = threshold;
    double score = -kInf;
    for (const CtcHypothesis &h : searchOne(x, vocab, options))
      if (h.labels == best)
        score = h.score;
    EXPECT_LE(score, previous + kTolerance) << "threshold " << threshold;
    if (threshold == kInf) {
      EXPECT_NEAR(score, reference[best], kTolerance);
    }
    previous = score;
  }
}

TEST(CtcSearchTest, TokenPruningScoresExactlyTheAllowedPaths) {
  // With a beam that drops nothing, token pruning leaves each label
  // sequence the paths whose every new label is among its frame's allowed
  // classes: the `tokenBeam` best (blank counted, lower index first among
  // equals) within `tokenThreshold` of the frame's best.
  std::mt19937_64 rng(14);
  const int vocab = 4, frames = 5;
  for (int trial = 0; trial < 4; ++trial) {
    std::vector<double> x = randomLogProbs(rng, frames, vocab, 2.0);
    if (trial == 3) // equal scores: the lower class is among the best
      for (int t = 0; t < frames; ++t)
        x[t * vocab + 3] = x[t * vocab + 2];
    for (CtcMerge merge : {CtcMerge::sum, CtcMerge::max})
      for (int tokenBeam : {0, 1, 2, 3})
        for (double threshold : {kInf, 1.5, 0.5}) {
          SCOPED_TRACE(testing::Message()
                       << "trial " << trial << " token beam " << tokenBeam
                       << " threshold " << threshold);
          auto allowed = [&](int t, int c) {
            const double *row = &x[t * vocab];
            int better = 0;
            for (int d = 0; d < vocab; ++d)
              better += row[d] > row[c] || (row[d] == row[c] && d < c);
            double best = *std::max_element(row, row + vocab);
            return (tokenBeam == 0 || better < tokenBeam) &&
                   row[c] >= best - threshold;
          };
          auto reference = enumerateLabelSequences(
              x, frames, vocab, 0, merge == CtcMerge::sum, allowed);
          CtcBeamOptions options;
          options.merge = merge;
          options.tokenBeam = tokenBeam;
          options.tokenThreshold = threshold;
          options.beam = static_cast<int32_t>(reference.size());
          expectMatchesReference(searchOne(x, vocab, options), reference);
        }
  }
}

TEST(CtcSearchTest, ScoreBeamDropsPrefixesFarBelowTheBest) {
  // Frame 0 makes "1" likely, frame 1 "2": with a score beam of 1 only
  // "1" survives frame 0 (ε and "2" are 2.9 below), and after frame 1 only
  // "1 2" ("1" kept by the blank or the repeat is 3.9 below it).
  std::vector<double> x = {std::log(0.05), std::log(0.9),  std::log(0.05),
                           std::log(0.01), std::log(0.01), std::log(0.98)};
  CtcBeamOptions options;
  options.beam = 10;
  options.scoreBeam = 1;
  auto pruned = searchOne(x, 3, options);
  ASSERT_EQ(pruned.size(), 1u);
  EXPECT_EQ(pruned[0].labels, Labels({1, 2}));
  EXPECT_NEAR(pruned[0].score, std::log(0.9) + std::log(0.98), kTolerance);
  // Without it, every label sequence of the two frames.
  options.scoreBeam = kInf;
  expectMatchesReference(searchOne(x, 3, options),
                         enumerateLabelSequences(x, 2, 3, 0, true));
}

TEST(CtcSearchTest, MaxMergeBeamOneIsGreedy) {
  std::mt19937_64 rng(7);
  const int vocab = 7;
  for (int blank : {0, 4}) {
    std::vector<std::vector<double>> sequences;
    for (int b = 0; b < 40; ++b)
      sequences.push_back(roundedToFloat(
          randomLogProbs(rng, 1 + rng() % 50, vocab, b % 2 ? 1.0 : 4.0)));
    PaddedBatch batch = paddedBatch(sequences, vocab);
    CtcScores scores =
        CtcScores::padded(batch.scores.data(), sequences.size(), batch.frames,
                          vocab, batch.lengths.data());
    auto greedy = ctcGreedySearch(scores, blank, 1);
    ASSERT_TRUE(greedy.ok());
    for (int tokenBeam : {0, 1}) {
      CtcBeamOptions options;
      options.blank = blank;
      options.beam = 1;
      options.merge = CtcMerge::max;
      options.tokenBeam = tokenBeam;
      auto beam = beamSearch(scores, options);
      ASSERT_EQ(beam.size(), sequences.size());
      for (size_t b = 0; b < sequences.size(); ++b) {
        ASSERT_EQ(beam[b].size(), 1u);
        EXPECT_EQ(beam[b][0].labels, (*greedy)[b].labels) << "sequence " << b;
        // The same path, its scores added in the same order.
        EXPECT_EQ(beam[b][0].score, (*greedy)[b].score) << "sequence " << b;
      }
    }
  }
}

TEST(CtcSearchTest, SequenceDecodesAloneAsInAnyBatch) {
  std::mt19937_64 rng(8);
  const int vocab = 6;
  std::vector<std::vector<double>> sequences;
  for (int frames : {0, 1, 40, 3, 17, 0, 25, 2})
    sequences.push_back(roundedToFloat(randomLogProbs(rng, frames, vocab)));

  PaddedBatch padded = paddedBatch(sequences, vocab);
  // Packed with a NaN row before each sequence.
  std::vector<float> packed;
  std::vector<int64_t> offsets;
  for (size_t b = 0; b < sequences.size(); ++b) {
    packed.resize(packed.size() + vocab,
                  std::numeric_limits<float>::quiet_NaN());
    offsets.push_back(static_cast<int64_t>(packed.size() / vocab));
    for (double v : sequences[b])
      packed.push_back(static_cast<float>(v));
  }
  int64_t rows = static_cast<int64_t>(packed.size() / vocab);
  // Back to back, as nn packs.
  std::vector<float> dense;
  for (const auto &x : sequences)
    for (double v : x)
      dense.push_back(static_cast<float>(v));
  std::vector<int64_t> denseOffsets =
      packedOffsets(padded.lengths.data(), sequences.size());

  for (CtcMerge merge : {CtcMerge::sum, CtcMerge::max}) {
    for (int threads : {1, 3}) {
      SCOPED_TRACE(testing::Message() << "threads " << threads);
      CtcBeamOptions options;
      options.beam = 4;
      options.merge = merge;
      options.threads = threads;
      options.tokenBeam = 4;
      options.scoreBeam = 8;
      auto fromPadded = beamSearch(
          CtcScores::padded(padded.scores.data(), sequences.size(),
                            padded.frames, vocab, padded.lengths.data()),
          options);
      auto fromPacked = beamSearch(
          CtcScores::packed(packed.data(), rows, vocab, sequences.size(),
                            padded.lengths.data(), offsets.data()),
          options);
      auto fromDense = beamSearch(
          CtcScores::packed(dense.data(), dense.size() / vocab, vocab,
                            sequences.size(), padded.lengths.data(),
                            denseOffsets.data()),
          options);
      ASSERT_EQ(fromPadded.size(), sequences.size());
      ASSERT_EQ(fromPacked.size(), sequences.size());
      ASSERT_EQ(fromDense.size(), sequences.size());
      for (size_t b = 0; b < sequences.size(); ++b) {
        SCOPED_TRACE(testing::Message() << "sequence " << b);
        std::vector<float> alone(sequences[b].begin(), sequences[b].end());
        int32_t length = padded.lengths[b];
        auto single = beamSearch(
            CtcScores::padded(alone.data(), 1, length, vocab, &length),
            options);
        ASSERT_EQ(single.size(), 1u);
        expectSame(fromPadded[b], single[0]);
        expectSame(fromPacked[b], single[0]);
        expectSame(fromDense[b], single[0]);
      }
    }
  }
}

TEST(CtcSearchTest, ResultsDoNotDependOnTheThreadCount) {
  std::mt19937_64 rng(9);
  const int vocab = 10;
  std::vector<std::vector<double>> sequences;
  for (int b = 0; b < 23; ++b)
    sequences.push_back(randomLogProbs(rng, rng() % 60, vocab, 3.0));
  PaddedBatch batch = paddedBatch(sequences, vocab);
  CtcScores scores =
      CtcScores::padded(batch.scores.data(), sequences.size(), batch.frames,
                        vocab, batch.lengths.data());
  CtcBeamOptions options;
  options.beam = 6;
  options.threads = 1;
  auto one = beamSearch(scores, options);
  auto greedyOne = ctcGreedySearch(scores, 0, 1);
  ASSERT_TRUE(greedyOne.ok());
  for (int threads : {2, 3, 8}) {
    options.threads = threads;
    auto many = beamSearch(scores, options);
    ASSERT_EQ(many.size(), one.size());
    for (size_t b = 0; b < one.size(); ++b)
      expectSame(many[b], one[b]);
    auto greedyMany = ctcGreedySearch(scores, 0, threads);
    ASSERT_TRUE(greedyMany.ok());
    expectSame(*greedyMany, *greedyOne);
  }
}

TEST(CtcSearchTest, NoFramesGiveOneEmptyHypothesis) {
  int32_t lengths[] = {0, 0};
  float unused = std::numeric_limits<float>::quiet_NaN();
  CtcScores scores = CtcScores::padded(&unused, 2, 0, 3, lengths);
  for (CtcMerge merge : {CtcMerge::sum, CtcMerge::max}) {
    CtcBeamOptions options;
    options.beam = 4;
    options.merge = merge;
    auto beam = beamSearch(scores, options);
    ASSERT_EQ(beam.size(), 2u);
    for (const auto &hypotheses : beam) {
      ASSERT_EQ(hypotheses.size(), 1u);
      EXPECT_TRUE(hypotheses[0].labels.empty());
      EXPECT_EQ(hypotheses[0].score, 0);
    }
  }
  auto greedy = ctcGreedySearch(scores, 0);
  ASSERT_TRUE(greedy.ok());
  EXPECT_TRUE((*greedy)[0].labels.empty());
  EXPECT_EQ((*greedy)[0].score, 0);

  // An empty batch.
  auto none = ctcPrefixSearch(CtcScores::padded(&unused, 0, 0, 3, nullptr),
                              CtcBeamOptions());
  ASSERT_TRUE(none.ok());
  EXPECT_TRUE(none->empty());
}

TEST(CtcSearchTest, AllBlankFrames) {
  // Blank certain: the empty sequence is the only one with a path.
  const int vocab = 4, frames = 6;
  std::vector<double> certain(frames * vocab, -kInf);
  for (int t = 0; t < frames; ++t)
    certain[t * vocab + 1] = 0;
  CtcBeamOptions options;
  options.blank = 1;
  options.beam = 5;
  auto hypotheses = searchOne(certain, vocab, options);
  ASSERT_EQ(hypotheses.size(), 1u);
  EXPECT_TRUE(hypotheses[0].labels.empty());
  EXPECT_EQ(hypotheses[0].score, 0);
  int32_t length = frames;
  auto greedy = ctcGreedySearch(
      CtcScores::padded(certain.data(), 1, frames, vocab, &length), 1);
  ASSERT_TRUE(greedy.ok());
  EXPECT_TRUE((*greedy)[0].labels.empty());
  EXPECT_EQ((*greedy)[0].score, 0);

  // Blank likely but not certain: the empty sequence first, every other
  // one still found with its probability.
  std::mt19937_64 rng(10);
  std::vector<double> likely = randomLogProbs(rng, 5, 3, 0.5);
  for (int t = 0; t < 5; ++t) {
    double *row = &likely[t * 3];
    row[0] = std::log(0.96);
    row[1] = std::log(0.01 + 0.01 * uniform(rng));
    row[2] = std::log(1 - 0.96 - std::exp(row[1]));
  }
  auto reference = enumerateLabelSequences(likely, 5, 3, 0, true);
  options.blank = 0;
  options.beam = static_cast<int32_t>(reference.size());
  auto found = searchOne(likely, 3, options);
  expectMatchesReference(found, reference);
  ASSERT_FALSE(found.empty());
  EXPECT_TRUE(found[0].labels.empty());
}

TEST(CtcSearchTest, TiesAreBrokenByLengthThenLabels) {
  // Uniform frames and merge max: every path scores the same, so the
  // N-best is every label sequence by length, then lexicographically.
  const int vocab = 3, frames = 3;
  std::vector<double> x(frames * vocab, std::log(1.0 / 3));
  auto reference = enumerateLabelSequences(x, frames, vocab, 0, false);
  std::vector<Labels> expected;
  for (const auto &[labels, score] : reference)
    expected.push_back(labels);
  std::stable_sort(
      expected.begin(), expected.end(),
      [](const Labels &a, const Labels &b) { return a.size() < b.size(); });
  CtcBeamOptions options;
  options.merge = CtcMerge::max;
  options.beam = static_cast<int32_t>(reference.size());
  auto all = searchOne(x, vocab, options);
  ASSERT_EQ(all.size(), expected.size());
  for (size_t k = 0; k < all.size(); ++k) {
    EXPECT_EQ(all[k].labels, expected[k]) << "hypothesis " << k;
    EXPECT_EQ(all[k].score, all[0].score);
  }
  // A narrow beam keeps the first ones under the same rule at every frame.
  options.beam = 3;
  auto few = searchOne(x, vocab, options);
  ASSERT_EQ(few.size(), 3u);
  EXPECT_EQ(few[0].labels, Labels());
  EXPECT_EQ(few[1].labels, Labels({1}));
  EXPECT_EQ(few[2].labels, Labels({2}));

  // Merge sum with classes 1 and 2 equally likely in every frame: label
  // sequences that swap 1 and 2 are scored alike, and the smaller comes
  // first.
  std::mt19937_64 rng(11);
  std::vector<double> y = randomLogProbs(rng, 4, 3);
  for (int t = 0; t < 4; ++t) {
    double *row = &y[t * 3];
    double label = std::log((1 - std::exp(row[0])) / 2);
    row[1] = row[2] = label;
  }
  options.merge = CtcMerge::sum;
  options.beam = 50;
  auto swapped = searchOne(y, 3, options);
  auto position = [&](const Labels &labels) {
    for (size_t k = 0; k < swapped.size(); ++k)
      if (swapped[k].labels == labels)
        return static_cast<int>(k);
    return -1;
  };
  for (auto [a, b] :
       std::vector<std::pair<Labels, Labels>>{{{1}, {2}},
                                              {{1, 2}, {2, 1}},
                                              {{1, 1}, {2, 2}},
                                              {{1, 2, 1}, {2, 1, 2}}}) {
    int first = position(a), second = position(b);
    ASSERT_GE(first, 0);
    ASSERT_GE(second, 0);
    EXPECT_EQ(swapped[first].score, swapped[second].score);
    EXPECT_LT(first, second);
  }
  expectMatchesReference(swapped, enumerateLabelSequences(y, 4, 3, 0, true));
}

/// A bigram language model over labels 1..3 (class 0 is the blank): row
/// `previous` (0 at the start) holds log p(c | previous) for c = 1..3 and
/// log p(end | previous) in column 0.
class BigramScorer : public CtcLabelScorer {
public:
  explicit BigramScorer(std::mt19937_64 &rng) {
    for (auto &row : table) {
      double total = 0;
      for (double &p : row)
        total += (p = 0.2 + uniform(rng));
      for (double &p : row)
        p = std::log(p / total);
    }
  }
  void scoreNext(int64_t, const int32_t *prefix, int64_t length,
                 double *logProbs) override {
    ++calls;
    const auto &row = table[length ? prefix[length - 1] : 0];
    // The blank's entry is ignored by the search.
    logProbs[0] = std::nan("");
    for (int c = 1; c < 4; ++c)
      logProbs[c] = row[c];
  }
  double scoreEnd(int64_t, const int32_t *prefix, int64_t length) override {
    return table[length ? prefix[length - 1] : 0][0];
  }
  /// Σ log p(label | previous) + log p(end | last), written out.
  double sentence(const Labels &labels) const {
    double total = 0;
    int previous = 0;
    for (int32_t label : labels) {
      total += table[previous][label];
      previous = label;
    }
    return total + table[previous][0];
  }
  double table[4][4];
  std::atomic<int64_t> calls{0};
};

TEST(CtcSearchTest, ShallowFusionAddsWeightedLanguageModelScores) {
  std::mt19937_64 rng(12);
  BigramScorer lm(rng);
  const int vocab = 4, frames = 5;
  std::vector<double> x = randomLogProbs(rng, frames, vocab);
  auto acoustic = enumerateLabelSequences(x, frames, vocab, 0, true);
  const double weight = 0.7, bonus = 0.3;
  std::map<Labels, double> reference;
  for (const auto &[labels, score] : acoustic)
    reference[labels] =
        score + weight * lm.sentence(labels) + bonus * labels.size();
  CtcBeamOptions options;
  options.beam = static_cast<int32_t>(reference.size());
  options.scorer = &lm;
  options.scorerWeight = weight;
  options.lengthBonus = bonus;
  options.scoreEnd = true;
  expectMatchesReference(searchOne(x, vocab, options), reference);
  EXPECT_GT(lm.calls.load(), 0);

  // Weight 0: the scorer is never asked, and nothing changes.
  lm.calls = 0;
  options.beam = 3;
  options.scorerWeight = 0;
  options.lengthBonus = 0;
  auto fused = searchOne(x, vocab, options);
  EXPECT_EQ(lm.calls.load(), 0);
  options.scorer = nullptr;
  expectSame(fused, searchOne(x, vocab, options));
}

TEST(CtcSearchTest, CEntryPointMatchesTheCppApi) {
  std::mt19937_64 rng(13);
  const int vocab = 5, beam = 3;
  std::vector<std::vector<double>> sequences;
  for (int frames : {9, 0, 4, 1})
    sequences.push_back(roundedToFloat(randomLogProbs(rng, frames, vocab)));
  PaddedBatch batch = paddedBatch(sequences, vocab);
  int64_t size = static_cast<int64_t>(sequences.size());
  CtcBeamOptions options;
  options.beam = beam;
  options.blank = 2;
  options.merge = CtcMerge::max;
  options.tokenBeam = 3;
  auto expected =
      beamSearch(CtcScores::padded(batch.scores.data(), size, batch.frames,
                                   vocab, batch.lengths.data()),
                 options);

  const int64_t capacity = batch.frames + 2;
  std::vector<int32_t> labels(size * beam * capacity, -7),
      labelLengths(size * beam, -7), counts(size, -7);
  std::vector<float> scores(size * beam);
  int64_t extents[2] = {-7, -7};
  auto address = [](const void *p) {
    return static_cast<int64_t>(reinterpret_cast<intptr_t>(p));
  };
  nn_search_ctc_prefix_v1(
      "nn.ctc_beam_search at test", address(batch.scores.data()), 32, size,
      batch.frames, vocab, address(batch.lengths.data()), 0,
      batch.frames * vocab, vocab, 1, options.blank, beam, 1, 3, kInf, kInf,
      address(labels.data()), capacity, address(labelLengths.data()),
      address(scores.data()), address(counts.data()), address(extents));

  int64_t mostHypotheses = 0, mostLabels = 0;
  for (int64_t b = 0; b < size; ++b) {
    SCOPED_TRACE(testing::Message() << "sequence " << b);
    ASSERT_EQ(counts[b], static_cast<int32_t>(expected[b].size()));
    mostHypotheses = std::max<int64_t>(mostHypotheses, counts[b]);
    for (int k = 0; k < beam; ++k) {
      int64_t row = b * beam + k;
      const int32_t *first = &labels[row * capacity];
      if (k < counts[b]) {
        const CtcHypothesis &h = expected[b][k];
        EXPECT_EQ(Labels(first, first + labelLengths[row]), h.labels);
        EXPECT_EQ(scores[row], static_cast<float>(h.score));
        mostLabels = std::max<int64_t>(mostLabels, labelLengths[row]);
      } else {
        EXPECT_EQ(labelLengths[row], 0);
        EXPECT_EQ(scores[row], -std::numeric_limits<float>::infinity());
      }
      for (int64_t i = labelLengths[row]; i < capacity; ++i)
        EXPECT_EQ(first[i], 0) << "padding at " << i;
    }
  }
  EXPECT_EQ(extents[0], mostHypotheses);
  EXPECT_EQ(extents[1], mostLabels);
  EXPECT_GT(mostLabels, 0);

  // Packed f64, sequences back to back.
  std::vector<double> dense;
  for (const auto &x : sequences)
    dense.insert(dense.end(), x.begin(), x.end());
  std::vector<double> denseScores(size * beam);
  nn_search_ctc_prefix_v1(
      nullptr, address(dense.data()), 64, size, dense.size() / vocab, vocab,
      address(batch.lengths.data()), 1, 0, vocab, 1, options.blank, beam, 1, 3,
      kInf, kInf, address(labels.data()), capacity,
      address(labelLengths.data()), address(denseScores.data()),
      address(counts.data()), 0);
  for (int64_t b = 0; b < size; ++b) {
    ASSERT_EQ(counts[b], static_cast<int32_t>(expected[b].size()));
    for (int k = 0; k < counts[b]; ++k) {
      const int32_t *first = &labels[(b * beam + k) * capacity];
      EXPECT_EQ(Labels(first, first + labelLengths[b * beam + k]),
                expected[b][k].labels);
      EXPECT_EQ(denseScores[b * beam + k], expected[b][k].score);
    }
  }
}

/// A bigram language model over `vocab` classes with class 0 the blank:
/// row `previous` (0 at the start) holds log p(c | previous) for c ≥ 1 and
/// log p(end | previous) in column 0, so a step-wise search reads the end
/// score from the blank's column.
class TableBigram : public CtcLabelScorer {
public:
  TableBigram(std::mt19937_64 &rng, int vocab)
      : vocab(vocab), table(vocab * vocab) {
    for (int p = 0; p < vocab; ++p) {
      double total = 0;
      for (int c = 0; c < vocab; ++c)
        total += (table[p * vocab + c] = 0.2 + uniform(rng));
      for (int c = 0; c < vocab; ++c)
        table[p * vocab + c] = std::log(table[p * vocab + c] / total);
    }
  }
  const double *row(int32_t previous) const { return &table[previous * vocab]; }
  void scoreNext(int64_t, const int32_t *prefix, int64_t length,
                 double *logProbs) override {
    std::copy_n(row(length ? prefix[length - 1] : 0), vocab, logProbs);
  }
  double scoreEnd(int64_t, const int32_t *prefix, int64_t length) override {
    return row(length ? prefix[length - 1] : 0)[0];
  }
  int vocab;
  std::vector<double> table;
};

/// What compiled code does around a step-wise search: each slot's
/// language-model state (here the last label; 0 at the start) and output
/// row, gathered by parent after every frame and advanced where a label
/// was appended. `step` and `finish` run one frame and the end.
struct StepDriver {
  int64_t batch, beam, vocab;
  const TableBigram *lm;
  std::vector<int32_t> state, parents, appended;
  std::vector<double> rows;
  int32_t newLabels = -1;

  StepDriver(int64_t batch, int64_t beam, int64_t vocab, const TableBigram *lm)
      : batch(batch), beam(beam), vocab(vocab), lm(lm), state(batch * beam, 0),
        parents(batch * beam, -7), appended(batch * beam, -7),
        rows(batch * beam * vocab) {
    fillRows();
  }
  CtcLmRows lmRows() const {
    CtcLmRows view;
    if (lm) {
      view.data = rows.data();
      view.type = ScoreType::f64;
      view.rowStride = vocab;
    }
    return view;
  }
  CtcStepBuffers buffers() {
    return CtcStepBuffers{parents.data(), appended.data(), &newLabels};
  }
  /// After a step: the gather by parent, and the language model on the
  /// slots that appended a label. Checks the step's outputs on the way.
  void advance() {
    std::vector<int32_t> next(state.size());
    int32_t appendedCount = 0;
    for (int64_t b = 0; b < batch; ++b) {
      for (int64_t k = 0; k < beam; ++k) {
        int64_t s = b * beam + k;
        ASSERT_GE(parents[s], 0);
        ASSERT_LT(parents[s], beam);
        ASSERT_GE(appended[s], -1);
        ASSERT_LT(appended[s], vocab);
        next[s] = appended[s] >= 0 ? appended[s] : state[b * beam + parents[s]];
        appendedCount += appended[s] >= 0;
      }
    }
    EXPECT_EQ(newLabels, appendedCount);
    state.swap(next);
    fillRows();
  }
  void fillRows() {
    if (!lm)
      return;
    for (size_t s = 0; s < state.size(); ++s)
      std::copy_n(lm->row(state[s]), vocab, &rows[s * vocab]);
  }
};

/// The step-wise search of `scores` (frames 0 .. capacity-1) through the
/// C++ API, as compiled code drives it.
std::vector<std::vector<CtcHypothesis>>
stepSearch(const CtcScores &scores, const CtcBeamOptions &options,
           const TableBigram *lm, int32_t endClass, int64_t capacity) {
  int64_t batch = scores.batch, beam = options.beam;
  int64_t bytes = ctcStepWorkspaceBytes(batch, beam, capacity);
  EXPECT_GT(bytes, 0);
  std::vector<uint64_t> workspace((bytes + 7) / 8, 0xabababababababab);
  EXPECT_TRUE(
      ctcStepBegin(workspace.data(), bytes, batch, options.beam, capacity)
          .ok());
  StepDriver driver(batch, beam, scores.vocab, lm);
  for (int64_t t = 0; t < capacity; ++t) {
    absl::Status status = ctcStepFrame(workspace.data(), bytes, scores, options,
                                       t, driver.lmRows(), driver.buffers());
    EXPECT_TRUE(status.ok()) << status;
    if (!status.ok())
      return {};
    driver.advance();
  }
  int64_t labelCapacity = std::max<int64_t>(capacity, 1);
  std::vector<int32_t> labels(batch * beam * labelCapacity),
      lengths(batch * beam), counts(batch);
  std::vector<double> hypothesisScores(batch * beam);
  CtcNBestBuffers output{labels.data(),  labelCapacity,
                         lengths.data(), hypothesisScores.data(),
                         ScoreType::f64, counts.data()};
  absl::Status status = ctcStepFinish(workspace.data(), bytes, scores, options,
                                      driver.lmRows(), endClass, output);
  EXPECT_TRUE(status.ok()) << status;
  std::vector<std::vector<CtcHypothesis>> result(batch);
  for (int64_t b = 0; b < batch; ++b)
    for (int64_t k = 0; k < counts[b]; ++k) {
      int64_t row = b * beam + k;
      const int32_t *first = &labels[row * labelCapacity];
      result[b].push_back(CtcHypothesis{Labels(first, first + lengths[row]),
                                        hypothesisScores[row]});
    }
  return result;
}

TEST(CtcSearchTest, StepwiseSearchIsTheSearchWithAScorer) {
  std::mt19937_64 rng(21);
  const int vocab = 6;
  TableBigram lm(rng, vocab);
  std::vector<std::vector<double>> sequences;
  for (int frames : {0, 1, 14, 3, 9, 6})
    sequences.push_back(roundedToFloat(randomLogProbs(rng, frames, vocab)));
  PaddedBatch batch = paddedBatch(sequences, vocab);
  int64_t size = static_cast<int64_t>(sequences.size());
  CtcScores scores = CtcScores::padded(batch.scores.data(), size, batch.frames,
                                       vocab, batch.lengths.data());
  for (CtcMerge merge : {CtcMerge::sum, CtcMerge::max})
    for (int32_t endClass : {-1, 0})
      for (int threads : {1, 3}) {
        SCOPED_TRACE(testing::Message()
                     << "merge " << static_cast<int>(merge) << " end "
                     << endClass << " threads " << threads);
        CtcBeamOptions options;
        options.beam = 4;
        options.merge = merge;
        options.tokenBeam = 4;
        options.scoreBeam = 12;
        options.lengthBonus = 0.25;
        options.scorerWeight = 0.6;
        options.threads = threads;
        auto stepped = stepSearch(scores, options, &lm, endClass, batch.frames);
        options.scorer = &lm;
        options.scoreEnd = endClass >= 0;
        auto whole = beamSearch(scores, options);
        ASSERT_EQ(stepped.size(), whole.size());
        for (int64_t b = 0; b < size; ++b) {
          SCOPED_TRACE(testing::Message() << "sequence " << b);
          expectSame(stepped[b], whole[b]);
        }
      }
}

TEST(CtcSearchTest, StepwiseSearchWithoutLanguageModelIsTheSearch) {
  std::mt19937_64 rng(22);
  const int vocab = 5;
  TableBigram lm(rng, vocab);
  std::vector<std::vector<double>> sequences;
  for (int frames : {11, 0, 4, 7})
    sequences.push_back(roundedToFloat(randomLogProbs(rng, frames, vocab)));
  PaddedBatch batch = paddedBatch(sequences, vocab);
  CtcScores scores =
      CtcScores::padded(batch.scores.data(), sequences.size(), batch.frames,
                        vocab, batch.lengths.data());
  CtcBeamOptions options;
  options.beam = 3;
  auto plain = beamSearch(scores, options);
  // No rows, and rows at weight 0 (with an end class): both the plain
  // search, bit for bit.
  auto noLm = stepSearch(scores, options, nullptr, 0, batch.frames);
  auto weightZero = stepSearch(scores, options, &lm, 0, batch.frames);
  ASSERT_EQ(noLm.size(), plain.size());
  ASSERT_EQ(weightZero.size(), plain.size());
  for (size_t b = 0; b < plain.size(); ++b) {
    SCOPED_TRACE(testing::Message() << "sequence " << b);
    expectSame(noLm[b], plain[b]);
    expectSame(weightZero[b], plain[b]);
  }
}

TEST(CtcSearchTest, StepwiseFusionMatchesEnumeration) {
  std::mt19937_64 rng(23);
  const int vocab = 4, frames = 5;
  TableBigram lm(rng, vocab);
  std::vector<double> x = randomLogProbs(rng, frames, vocab);
  auto acoustic = enumerateLabelSequences(x, frames, vocab, 0, true);
  const double weight = 0.8, bonus = -0.1;
  std::map<Labels, double> reference;
  for (const auto &[labels, score] : acoustic) {
    // log P_ctc(y) + λ (Σ log p(y_i | y_{i-1}) + log p(end | y_last)) + β|y|.
    double sentence = 0;
    int32_t previous = 0;
    for (int32_t label : labels) {
      sentence += lm.table[previous * vocab + label];
      previous = label;
    }
    sentence += lm.table[previous * vocab + 0];
    reference[labels] = score + weight * sentence + bonus * labels.size();
  }
  CtcBeamOptions options;
  options.beam = static_cast<int32_t>(reference.size());
  options.scorerWeight = weight;
  options.lengthBonus = bonus;
  int32_t length = frames;
  auto result =
      stepSearch(CtcScores::padded(x.data(), 1, frames, vocab, &length),
                 options, &lm, 0, frames);
  ASSERT_EQ(result.size(), 1u);
  expectMatchesReference(result[0], reference);
}

TEST(CtcSearchTest, StepwiseSequenceDecodesAloneAsInAnyBatch) {
  std::mt19937_64 rng(24);
  const int vocab = 6;
  TableBigram lm(rng, vocab);
  std::vector<std::vector<double>> sequences;
  for (int frames : {0, 13, 2, 30, 5})
    sequences.push_back(roundedToFloat(randomLogProbs(rng, frames, vocab)));
  PaddedBatch padded = paddedBatch(sequences, vocab);
  std::vector<float> dense;
  for (const auto &x : sequences)
    for (double v : x)
      dense.push_back(static_cast<float>(v));
  std::vector<int64_t> offsets =
      packedOffsets(padded.lengths.data(), sequences.size());
  CtcBeamOptions options;
  options.beam = 5;
  options.scorerWeight = 0.5;
  options.tokenThreshold = 6;
  auto fromPadded =
      stepSearch(CtcScores::padded(padded.scores.data(), sequences.size(),
                                   padded.frames, vocab, padded.lengths.data()),
                 options, &lm, 0, padded.frames);
  // Packed, with a longer workspace than needed.
  auto fromPacked =
      stepSearch(CtcScores::packed(dense.data(), dense.size() / vocab, vocab,
                                   sequences.size(), padded.lengths.data(),
                                   offsets.data()),
                 options, &lm, 0, padded.frames + 3);
  ASSERT_EQ(fromPadded.size(), sequences.size());
  ASSERT_EQ(fromPacked.size(), sequences.size());
  for (size_t b = 0; b < sequences.size(); ++b) {
    SCOPED_TRACE(testing::Message() << "sequence " << b);
    std::vector<float> alone(sequences[b].begin(), sequences[b].end());
    int32_t length = padded.lengths[b];
    auto single =
        stepSearch(CtcScores::padded(alone.data(), 1, length, vocab, &length),
                   options, &lm, 0, length);
    ASSERT_EQ(single.size(), 1u);
    expectSame(fromPadded[b], single[0]);
    expectSame(fromPacked[b], single[0]);
  }
}

TEST(CtcSearchTest, StepEntryPointsMatchTheCppApi) {
  std::mt19937_64 rng(25);
  const int vocab = 5, beam = 3;
  TableBigram lm(rng, vocab);
  std::vector<std::vector<double>> sequences;
  for (int frames : {8, 0, 5})
    sequences.push_back(roundedToFloat(randomLogProbs(rng, frames, vocab)));
  PaddedBatch batch = paddedBatch(sequences, vocab);
  int64_t size = static_cast<int64_t>(sequences.size());
  CtcScores view = CtcScores::padded(batch.scores.data(), size, batch.frames,
                                     vocab, batch.lengths.data());
  CtcBeamOptions options;
  options.beam = beam;
  options.merge = CtcMerge::max;
  options.lengthBonus = 0.5;
  options.scorerWeight = 0.3;
  auto expected = stepSearch(view, options, &lm, 0, batch.frames);

  auto address = [](const void *p) {
    return static_cast<int64_t>(reinterpret_cast<intptr_t>(p));
  };
  int64_t bytes = nn_search_ctc_workspace_bytes_v1(size, beam, batch.frames);
  EXPECT_EQ(bytes, ctcStepWorkspaceBytes(size, beam, batch.frames));
  EXPECT_EQ(nn_search_ctc_workspace_bytes_v1(size, 0, batch.frames), -1);
  std::vector<uint64_t> workspace((bytes + 7) / 8);
  nn_search_ctc_begin_v1("test", address(workspace.data()), bytes, size, beam,
                         batch.frames);
  StepDriver driver(size, beam, vocab, &lm);
  for (int64_t t = 0; t < batch.frames; ++t) {
    nn_search_ctc_step_v1(
        "test", address(workspace.data()), bytes, address(batch.scores.data()),
        32, size, batch.frames, vocab, address(batch.lengths.data()), 0,
        batch.frames * vocab, vocab, 1, 0, beam, 1, 0, kInf, kInf, 0.5,
        address(driver.rows.data()), 64, vocab, 1, 0.3, t,
        address(driver.parents.data()), address(driver.appended.data()),
        address(&driver.newLabels));
    driver.advance();
  }
  const int64_t capacity = batch.frames;
  std::vector<int32_t> labels(size * beam * capacity, -7),
      labelLengths(size * beam, -7), counts(size, -7);
  std::vector<float> scores(size * beam);
  int64_t extents[2] = {-7, -7};
  nn_search_ctc_finish_v1(
      "test", address(workspace.data()), bytes, address(batch.scores.data()),
      32, size, batch.frames, vocab, address(batch.lengths.data()), 0,
      batch.frames * vocab, vocab, 1, 0, beam, 1, 0, kInf, kInf, 0.5,
      address(driver.rows.data()), 64, vocab, 1, 0.3, 0, address(labels.data()),
      capacity, address(labelLengths.data()), address(scores.data()),
      address(counts.data()), address(extents));
  int64_t mostHypotheses = 0, mostLabels = 0;
  for (int64_t b = 0; b < size; ++b) {
    SCOPED_TRACE(testing::Message() << "sequence " << b);
    ASSERT_EQ(counts[b], static_cast<int32_t>(expected[b].size()));
    mostHypotheses = std::max<int64_t>(mostHypotheses, counts[b]);
    for (int k = 0; k < counts[b]; ++k) {
      int64_t row = b * beam + k;
      const int32_t *first = &labels[row * capacity];
      EXPECT_EQ(Labels(first, first + labelLengths[row]),
                expected[b][k].labels);
      EXPECT_EQ(scores[row], static_cast<float>(expected[b][k].score));
      mostLabels = std::max<int64_t>(mostLabels, labelLengths[row]);
    }
  }
  EXPECT_EQ(extents[0], mostHypotheses);
  EXPECT_EQ(extents[1], mostLabels);
}

TEST(CtcSearchTest, StepwiseSearchRejectsMisuse) {
  std::vector<float> x(2 * 3 * 4, -1.0f);
  int32_t lengths[] = {3, 2};
  CtcScores scores = CtcScores::padded(x.data(), 2, 3, 4, lengths);
  CtcBeamOptions options;
  options.beam = 2;
  int64_t bytes = ctcStepWorkspaceBytes(2, 2, 3);
  ASSERT_GT(bytes, 0);
  std::vector<uint64_t> workspace((bytes + 7) / 8, 0);
  std::vector<int32_t> parents(4), appended(4);
  CtcStepBuffers out{parents.data(), appended.data(), nullptr};
  auto expectRejected = [](const absl::Status &status, const char *what) {
    EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument) << what;
    EXPECT_NE(status.message().find(what), std::string::npos) << status;
  };
  expectRejected(
      ctcStepFrame(workspace.data(), bytes, scores, options, 0, {}, out),
      "not started");
  expectRejected(ctcStepBegin(workspace.data(), bytes - 8, 2, 2, 3),
                 "step workspace of");
  ASSERT_TRUE(ctcStepBegin(workspace.data(), bytes, 2, 2, 3).ok());
  expectRejected(
      ctcStepFrame(workspace.data(), bytes, scores, options, 1, {}, out),
      "frame 1 of sequence 0 out of order");
  CtcBeamOptions wider = options;
  wider.beam = 3;
  expectRejected(
      ctcStepFrame(workspace.data(), bytes, scores, wider, 0, {}, out),
      "used for batch 2 and beam 3");
  std::mt19937_64 rng(26);
  TableBigram lm(rng, 4);
  CtcBeamOptions withScorer = options;
  withScorer.scorer = &lm;
  expectRejected(
      ctcStepFrame(workspace.data(), bytes, scores, withScorer, 0, {}, out),
      "language model as rows");
  int32_t tooLong[] = {4, 2};
  std::vector<float> y(2 * 4 * 4, -1.0f);
  expectRejected(ctcStepFrame(workspace.data(), bytes,
                              CtcScores::padded(y.data(), 2, 4, 4, tooLong),
                              options, 0, {}, out),
                 "a sequence of 4 frames in a step workspace for 3");
  EXPECT_TRUE(
      ctcStepFrame(workspace.data(), bytes, scores, options, 0, {}, out).ok());
}

TEST(CtcSearchTest, RejectsArgumentsOutOfRange) {
  std::vector<float> x(2 * 3 * 4, 0);
  int32_t lengths[] = {3, 2};
  CtcScores scores = CtcScores::padded(x.data(), 2, 3, 4, lengths);
  auto expectRejected = [](const CtcScores &scores,
                           const CtcBeamOptions &options, const char *what) {
    auto result = ctcPrefixSearch(scores, options);
    ASSERT_FALSE(result.ok()) << what;
    EXPECT_EQ(result.status().code(), absl::StatusCode::kInvalidArgument);
    EXPECT_NE(result.status().message().find(what), std::string::npos)
        << result.status();
  };
  CtcBeamOptions options;
  options.beam = 0;
  expectRejected(scores, options, "beam 0 < 1");
  options = CtcBeamOptions();
  options.blank = 4;
  expectRejected(scores, options, "blank 4 is not a class");
  options = CtcBeamOptions();
  options.tokenBeam = 5;
  expectRejected(scores, options, "token beam 5");
  options = CtcBeamOptions();
  options.tokenThreshold = -1;
  expectRejected(scores, options, "token threshold");
  options = CtcBeamOptions();
  options.scoreBeam = std::nan("");
  expectRejected(scores, options, "score beam");

  int32_t tooLong[] = {3, 4};
  expectRejected(CtcScores::padded(x.data(), 2, 3, 4, tooLong),
                 CtcBeamOptions(), "sequence 1 has length 4 > 3");
  int32_t negative[] = {-1, 0};
  expectRejected(CtcScores::padded(x.data(), 2, 3, 4, negative),
                 CtcBeamOptions(), "sequence 0 has length -1");
  int64_t offsets[] = {0, 5};
  expectRejected(CtcScores::packed(x.data(), 6, 4, 2, lengths, offsets),
                 CtcBeamOptions(), "sequence 1 (rows 5 to 7)");

  std::vector<int32_t> labels(2 * 2), labelLengths(2), counts(2);
  std::vector<double> out(2);
  CtcNBestBuffers small{labels.data(),       2,
                        labelLengths.data(), out.data(),
                        ScoreType::f64,      counts.data()};
  absl::Status status = ctcPrefixSearch(scores, CtcBeamOptions(), small);
  EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(status.message().find("label capacity 2 < 3"), std::string::npos)
      << status;
  auto greedy = ctcGreedySearch(scores, -1);
  EXPECT_EQ(greedy.status().code(), absl::StatusCode::kInvalidArgument);
}

} // namespace
