//===- TransducerSearchTest.cpp - transducer beam search vs references ----===//
//
// The runtime's transducer beam search, driven through its C entry points
// the way compiled code drives it (a joint function stands in for the
// networks: it scores a slot from the labels the slot holds, which the
// driver moves as the steps report), against references written here and
// sharing no code with it: every alignment of a tiny problem enumerated
// and summed per label sequence, the RNN-T forward recursion, a plain
// greedy loop.
//
//===----------------------------------------------------------------------===//

#include "runtime/search/TransducerSearch.h"
#include "runtime/search/SearchAbi.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <functional>
#include <limits>
#include <map>
#include <vector>

using namespace nn::runtime;

namespace {

using Labels = std::vector<int32_t>;
constexpr double kInf = std::numeric_limits<double>::infinity();
constexpr double kTolerance = 1e-9;

/// log p(c | sequence, frame t, labels y) for c < vocab, a made-up joint
/// network: log-softmax of pseudo-random logits in [-2, 2] fixed by
/// (sequence, t, y, c).
std::vector<double> joint(int64_t sequence, int64_t t, const Labels &y,
                          int64_t vocab) {
  std::vector<double> logits(vocab);
  for (int64_t c = 0; c < vocab; ++c) {
    uint64_t h = 1469598103934665603ULL ^ (sequence * 7919 + t * 104729);
    for (int32_t label : y)
      h = (h ^ static_cast<uint64_t>(label + 11)) * 1099511628211ULL;
    h = (h ^ static_cast<uint64_t>(c + 3)) * 1099511628211ULL;
    h ^= h >> 29;
    h *= 0xbf58476d1ce4e5b9ULL;
    h ^= h >> 32;
    logits[c] = -2.0 + 4.0 * static_cast<double>(h >> 11) * 0x1.0p-53;
  }
  double top = *std::max_element(logits.begin(), logits.end());
  double sum = 0;
  for (double x : logits)
    sum += std::exp(x - top);
  for (double &x : logits)
    x -= top + std::log(sum);
  return logits;
}

double logAdd(double a, double b) {
  if (a == -kInf)
    return b;
  if (b == -kInf)
    return a;
  double m = std::max(a, b);
  return m + std::log(std::exp(a - m) + std::exp(b - m));
}

struct Problem {
  bool rnnt = false;
  int32_t beam = 4;
  int32_t maxSymbols = 1;
  int64_t vocab = 3;
  int32_t blank = 0;
  std::vector<int32_t> lengths;
  /// Which joint each batch entry uses (its sequence id).
  std::vector<int64_t> ids;
};

/// Runs the search through the C entry points as compiled code does:
/// slot rows hold label sequences; NaN rows for sequences past their
/// frames. Checks that each returned hypothesis is its slot's sequence.
std::vector<std::vector<CtcHypothesis>> search(const Problem &p) {
  auto batch = static_cast<int64_t>(p.lengths.size());
  int32_t frames = 0;
  for (int32_t length : p.lengths)
    frames = std::max(frames, length);
  int64_t capacity = std::max<int64_t>(1, static_cast<int64_t>(frames) *
                                              (p.rnnt ? p.maxSymbols : 1));
  int32_t topology = p.rnnt ? 1 : 0;
  int64_t bytes = nn_search_transducer_workspace_bytes_v1(
      batch, p.beam, capacity, topology, p.maxSymbols);
  EXPECT_GT(bytes, 0);
  std::vector<uint64_t> workspace((bytes + 7) / 8);
  auto at = [](const void *pointer) {
    return static_cast<int64_t>(reinterpret_cast<intptr_t>(pointer));
  };
  nn_search_transducer_start_v1("test", at(workspace.data()), bytes, batch,
                                p.beam, capacity, topology, p.maxSymbols);
  int64_t rows = batch * p.beam;
  int32_t rounds = p.rnnt ? p.maxSymbols + 1 : 1;
  std::vector<Labels> slots(rows);
  std::vector<double> logProbs(rows * p.vocab);
  std::vector<int32_t> parents(rows), labels(rows);
  for (int32_t t = 0; t < frames; ++t) {
    std::vector<Labels> stash;
    for (int32_t r = 0; r < rounds; ++r) {
      for (int64_t row = 0; row < rows; ++row) {
        int64_t b = row / p.beam;
        std::vector<double> x =
            t < p.lengths[b] ? joint(p.ids[b], t, slots[row], p.vocab)
                             : std::vector<double>(p.vocab, std::nan(""));
        std::copy(x.begin(), x.end(), logProbs.begin() + row * p.vocab);
      }
      stash.insert(stash.end(), slots.begin(), slots.end());
      int32_t any = -7;
      nn_search_transducer_step_v1(
          "test", at(workspace.data()), bytes, at(logProbs.data()), 64, p.vocab,
          p.vocab, 1, p.blank, at(p.lengths.data()), t, r, at(parents.data()),
          at(labels.data()), at(&any));
      EXPECT_TRUE(any == 0 || any == 1);
      std::vector<Labels> next(rows);
      for (int64_t row = 0; row < rows; ++row) {
        EXPECT_EQ(parents[row] / p.beam, row / p.beam) << "row " << row;
        next[row] = slots[parents[row]];
        if (labels[row] >= 0)
          next[row].push_back(labels[row]);
      }
      slots = next;
      if (!any)
        break;
    }
    if (p.rnnt) {
      nn_search_transducer_end_frame_v1("test", at(workspace.data()), bytes,
                                        at(p.lengths.data()), t,
                                        at(parents.data()));
      for (int64_t row = 0; row < rows; ++row) {
        EXPECT_LT(parents[row], static_cast<int64_t>(stash.size()));
        EXPECT_EQ(parents[row] % rows / p.beam, row / p.beam);
        slots[row] = stash[parents[row]];
      }
    }
  }
  // The N-best buffers, then the same read back as vectors.
  std::vector<int32_t> nLabels(rows * capacity, -5), nLengths(rows, -5),
      counts(batch, -5);
  std::vector<double> nScores(rows);
  nn_search_transducer_finish_v1(
      "test", at(workspace.data()), bytes, 64, at(nLabels.data()), capacity,
      at(nLengths.data()), at(nScores.data()), at(counts.data()));
  auto all = transducerBeamFinish(workspace.data(), bytes);
  EXPECT_TRUE(all.ok());
  for (int64_t b = 0; b < batch; ++b) {
    EXPECT_EQ(counts[b], static_cast<int32_t>((*all)[b].size()));
    for (int32_t k = 0; k < p.beam; ++k) {
      int64_t row = b * p.beam + k;
      if (k >= counts[b]) {
        EXPECT_EQ(nLengths[row], 0);
        EXPECT_EQ(nScores[row], -kInf);
        continue;
      }
      const CtcHypothesis &h = (*all)[b][k];
      EXPECT_EQ(slots[row], h.labels) << "slot " << row;
      EXPECT_EQ(nScores[row], h.score);
      EXPECT_EQ(Labels(nLabels.begin() + row * capacity,
                       nLabels.begin() + row * capacity + nLengths[row]),
                h.labels);
    }
  }
  return *all;
}

/// RNA: every alignment (one class per frame), summed per label sequence.
std::map<Labels, double> enumerateRna(int64_t id, int32_t frames, int64_t vocab,
                                      int32_t blank) {
  std::map<Labels, double> sums;
  std::function<void(int32_t, Labels, double)> walk = [&](int32_t t, Labels y,
                                                          double score) {
    if (t == frames) {
      auto [it, fresh] = sums.try_emplace(y, score);
      if (!fresh)
        it->second = logAdd(it->second, score);
      return;
    }
    std::vector<double> x = joint(id, t, y, vocab);
    for (int32_t c = 0; c < vocab; ++c) {
      Labels next = y;
      if (c != blank)
        next.push_back(c);
      walk(t + 1, next, score + x[c]);
    }
  };
  walk(0, {}, 0.0);
  return sums;
}

/// RNN-T: every alignment with at most `maxSymbols` labels per frame, each
/// frame ended by the blank, summed per label sequence.
std::map<Labels, double> enumerateRnnt(int64_t id, int32_t frames,
                                       int64_t vocab, int32_t blank,
                                       int32_t maxSymbols) {
  std::map<Labels, double> sums;
  std::function<void(int32_t, int32_t, Labels, double)> walk =
      [&](int32_t t, int32_t emitted, Labels y, double score) {
        std::vector<double> x = joint(id, t, y, vocab);
        if (t + 1 == frames) {
          auto [it, fresh] = sums.try_emplace(y, score + x[blank]);
          if (!fresh)
            it->second = logAdd(it->second, score + x[blank]);
        } else {
          walk(t + 1, 0, y, score + x[blank]);
        }
        if (emitted == maxSymbols)
          return;
        for (int32_t c = 0; c < vocab; ++c) {
          if (c == blank)
            continue;
          Labels next = y;
          next.push_back(c);
          walk(t, emitted + 1, next, score + x[c]);
        }
      };
  if (frames == 0)
    sums[{}] = 0.0;
  else
    walk(0, 0, {}, 0.0);
  return sums;
}

/// log P(y | x) of RNN-T, the forward recursion over (frame, labels
/// emitted): -transducer_loss.
double rnntForward(int64_t id, int32_t frames, int64_t vocab, int32_t blank,
                   const Labels &y) {
  auto u = static_cast<int32_t>(y.size());
  std::vector<std::vector<double>> alpha(frames,
                                         std::vector<double>(u + 1, -kInf));
  auto lp = [&](int32_t t, int32_t n, int32_t c) {
    return joint(id, t, Labels(y.begin(), y.begin() + n), vocab)[c];
  };
  for (int32_t t = 0; t < frames; ++t)
    for (int32_t n = 0; n <= u; ++n) {
      double a = t == 0 && n == 0 ? 0.0 : -kInf;
      if (t > 0)
        a = logAdd(a, alpha[t - 1][n] + lp(t - 1, n, blank));
      if (n > 0)
        a = logAdd(a, alpha[t][n - 1] + lp(t, n - 1, y[n - 1]));
      alpha[t][n] = a;
    }
  return alpha[frames - 1][u] + lp(frames - 1, u, blank);
}

/// Checks that `got` is best first: higher score, then shorter, then
/// lexicographically smaller.
void expectRanked(const std::vector<CtcHypothesis> &got) {
  for (size_t k = 1; k < got.size(); ++k) {
    const CtcHypothesis &a = got[k - 1], &b = got[k];
    bool before =
        a.score > b.score ||
        (a.score == b.score &&
         (a.labels.size() < b.labels.size() ||
          (a.labels.size() == b.labels.size() && a.labels < b.labels)));
    EXPECT_TRUE(before) << "hypothesis " << k << " out of order";
  }
}

/// With a beam wider than the number of label sequences, the search
/// returns every sequence with its exact summed score.
void expectAll(const std::vector<CtcHypothesis> &got,
               const std::map<Labels, double> &want) {
  ASSERT_EQ(got.size(), want.size());
  expectRanked(got);
  for (const CtcHypothesis &h : got) {
    auto it = want.find(h.labels);
    ASSERT_NE(it, want.end());
    EXPECT_NEAR(h.score, it->second, kTolerance);
  }
}

TEST(TransducerSearch, RnaWideBeamIsExact) {
  for (int32_t blank : {0, 2}) {
    Problem p;
    p.beam = 200;
    p.vocab = 3;
    p.blank = blank;
    p.lengths = {4};
    p.ids = {blank + 1};
    expectAll(search(p)[0], enumerateRna(p.ids[0], 4, p.vocab, blank));
  }
}

TEST(TransducerSearch, RnntWideBeamSumsAlignmentsWithinMaxSymbols) {
  for (int32_t maxSymbols : {1, 2}) {
    Problem p;
    p.rnnt = true;
    p.beam = 500;
    p.maxSymbols = maxSymbols;
    p.vocab = 3;
    p.lengths = {3};
    p.ids = {5};
    std::vector<CtcHypothesis> got = search(p)[0];
    expectAll(got, enumerateRnnt(5, 3, p.vocab, 0, maxSymbols));
    // A sequence no longer than max_symbols has all its alignments: its
    // score is the exact log P(y | x).
    int checked = 0;
    for (const CtcHypothesis &h : got)
      if (static_cast<int32_t>(h.labels.size()) <= maxSymbols) {
        EXPECT_NEAR(h.score, rnntForward(5, 3, p.vocab, 0, h.labels),
                    kTolerance);
        ++checked;
      }
    EXPECT_GE(checked, 3);
  }
}

TEST(TransducerSearch, RnntExactWhenMaxSymbolsCoversEverySequence) {
  // max_symbols 4 over 2 frames: every sequence of up to 4 labels is exact.
  Problem p;
  p.rnnt = true;
  p.beam = 2000;
  p.maxSymbols = 4;
  p.vocab = 3;
  p.blank = 1;
  p.lengths = {2};
  p.ids = {9};
  std::vector<CtcHypothesis> got = search(p)[0];
  EXPECT_GT(got.size(), 30u);
  for (const CtcHypothesis &h : got) {
    if (h.labels.size() <= 4) {
      EXPECT_NEAR(h.score, rnntForward(9, 2, p.vocab, 1, h.labels), kTolerance);
    }
  }
}

TEST(TransducerSearch, NarrowBeamKeepsTheBestOfItsCandidates) {
  // Beam 3 returns 3 ranked hypotheses whose scores do not exceed the
  // exact ones (pruning only loses paths).
  for (bool rnnt : {false, true}) {
    Problem p;
    p.rnnt = rnnt;
    p.beam = 3;
    p.maxSymbols = 2;
    p.vocab = 4;
    p.lengths = {5};
    p.ids = {3};
    std::vector<CtcHypothesis> got = search(p)[0];
    ASSERT_EQ(got.size(), 3u);
    expectRanked(got);
    std::map<Labels, double> exact = rnnt ? enumerateRnnt(3, 5, p.vocab, 0, 2)
                                          : enumerateRna(3, 5, p.vocab, 0);
    for (const CtcHypothesis &h : got)
      EXPECT_LE(h.score, exact.at(h.labels) + kTolerance);
  }
}

TEST(TransducerSearch, RnaBeamOneIsGreedy) {
  for (int64_t id = 0; id < 5; ++id) {
    Problem p;
    p.beam = 1;
    p.vocab = 5;
    p.lengths = {7};
    p.ids = {id};
    std::vector<CtcHypothesis> got = search(p)[0];
    Labels y;
    double score = 0;
    for (int32_t t = 0; t < 7; ++t) {
      std::vector<double> x = joint(id, t, y, p.vocab);
      auto best = static_cast<int32_t>(std::max_element(x.begin(), x.end()) -
                                       x.begin());
      score += x[best];
      if (best != p.blank)
        y.push_back(best);
    }
    ASSERT_EQ(got.size(), 1u);
    EXPECT_EQ(got[0].labels, y);
    EXPECT_NEAR(got[0].score, score, kTolerance);
  }
}

TEST(TransducerSearch, BatchInvariance) {
  // Very different lengths (one without frames) and NaN in padded frames:
  // each sequence's result equals its search alone.
  for (bool rnnt : {false, true}) {
    Problem batch;
    batch.rnnt = rnnt;
    batch.beam = 3;
    batch.maxSymbols = 2;
    batch.vocab = 4;
    batch.lengths = {6, 0, 2, 4};
    batch.ids = {11, 12, 13, 14};
    std::vector<std::vector<CtcHypothesis>> together = search(batch);
    for (size_t b = 0; b < batch.lengths.size(); ++b) {
      Problem alone = batch;
      alone.lengths = {batch.lengths[b]};
      alone.ids = {batch.ids[b]};
      std::vector<CtcHypothesis> single = search(alone)[0];
      ASSERT_EQ(single.size(), together[b].size()) << "sequence " << b;
      for (size_t k = 0; k < single.size(); ++k) {
        EXPECT_EQ(single[k].labels, together[b][k].labels);
        EXPECT_EQ(single[k].score, together[b][k].score);
      }
    }
    // No frames: the empty hypothesis, score 0.
    ASSERT_EQ(together[1].size(), 1u);
    EXPECT_TRUE(together[1][0].labels.empty());
    EXPECT_EQ(together[1][0].score, 0.0);
  }
}

TEST(TransducerSearch, ExactTiesGoShorterThenLexicographic) {
  // Uniform log-probabilities over one frame: rna's candidates (the empty
  // sequence and each label alone) all score -log V; rnnt's labels then
  // end with the blank at twice that. Ties go to the shorter, then the
  // lexicographically smaller sequence.
  std::vector<double> uniform(5, -std::log(5.0));
  for (bool rnnt : {false, true}) {
    TransducerBeamShape shape;
    shape.batch = 1;
    shape.beam = 3;
    shape.capacity = 2;
    shape.kind = rnnt ? TransducerKind::rnnt : TransducerKind::rna;
    shape.maxSymbols = 1;
    std::vector<uint64_t> workspace(4096);
    int64_t bytes = transducerWorkspaceBytes(shape);
    ASSERT_LE(bytes, 8 * 4096);
    ASSERT_TRUE(transducerBeamStart(shape, workspace.data(), bytes).ok());
    std::vector<double> rows;
    for (int32_t r = 0; r < shape.beam; ++r)
      rows.insert(rows.end(), uniform.begin(), uniform.end());
    TransducerLogProbs view{rows.data(), ScoreType::f64, 5, 5, 1};
    int32_t length = 1, any = 0;
    std::vector<int32_t> parents(3), labels(3);
    for (int32_t round = 0; round < shape.rounds(); ++round) {
      ASSERT_TRUE(transducerBeamStep(workspace.data(), bytes, view,
                                     /*blank=*/2, &length, 0, round,
                                     parents.data(), labels.data(), &any)
                      .ok());
    }
    if (rnnt) {
      ASSERT_TRUE(transducerBeamEndFrame(workspace.data(), bytes, &length, 0,
                                         parents.data())
                      .ok());
    }
    auto all = transducerBeamFinish(workspace.data(), bytes);
    ASSERT_TRUE(all.ok());
    const std::vector<CtcHypothesis> &got = (*all)[0];
    ASSERT_EQ(got.size(), 3u);
    EXPECT_EQ(got[0].labels, Labels{});
    EXPECT_EQ(got[1].labels, Labels{0});
    EXPECT_EQ(got[2].labels, Labels{1});
    EXPECT_EQ(got[1].score, got[2].score);
  }
}

TEST(TransducerSearch, RefusesBadWorkspaceAndOverflow) {
  std::vector<uint64_t> workspace(64, 0);
  std::vector<double> x(3, -1.0);
  TransducerLogProbs view{x.data(), ScoreType::f64, 3, 3, 1};
  int32_t length = 1, parent = 0, label = 0, any = 0;
  EXPECT_FALSE(transducerBeamStep(workspace.data(), 512, view, 0, &length, 0, 0,
                                  &parent, &label, &any)
                   .ok());
  // Capacity 0 cannot hold a label.
  TransducerBeamShape shape;
  shape.batch = 1;
  shape.capacity = 0;
  int64_t bytes = transducerWorkspaceBytes(shape);
  ASSERT_LE(bytes, 512);
  ASSERT_TRUE(transducerBeamStart(shape, workspace.data(), bytes).ok());
  absl::Status status = transducerBeamStep(
      workspace.data(), bytes, view, 0, &length, 0, 0, &parent, &label, &any);
  EXPECT_FALSE(status.ok());
  EXPECT_NE(status.message().find("capacity"), std::string::npos);
  shape.beam = 0;
  EXPECT_EQ(transducerWorkspaceBytes(shape), 0);
}

} // namespace
