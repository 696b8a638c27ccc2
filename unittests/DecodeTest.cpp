//===- DecodeTest.cpp - CTC decoding against plain loops and enumeration -===//
//
// nn.ctc_greedy_decode compiled and run: hand-made frames (repeats, blanks
// between repeats, ties, a frame of NaN), random frames against a plain
// argmax-collapse written here in float64, padded and packed scores,
// sequences without frames or labels, NaN in every padded frame, and batch
// invariance: each utterance decoded alone gives what it gives in a batch
// of very different lengths. The hypotheses' lengths come back as the
// output `lengths:Y` of the computed dim. nn.ctc_beam_search: a wide beam
// against the most probable label sequence by enumeration of every frame
// labelling, beam 1 with merge max against greedy, batch invariance; its
// N-best list against every label sequence by enumeration, each
// hypothesis rescored by ctc_loss over the flattened batch.
//
//===----------------------------------------------------------------------===//

#include "ExecutionUtil.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>
#include <random>

using namespace nn;
using namespace nn::testing;

namespace {

constexpr int64_t kClasses = 5, kBlank = 0;
constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

// Padded logits decoded directly; their log-softmax packed and decoded
// again, with another blank.
const char *kSource = R"(
nn.graph @g(%x: !nn.tensor<[B, T, 5], f32>)
    -> (!nn.tensor<[B, Y], i32>, !nn.tensor<[B], f32>,
        !nn.tensor<[B, Z], i32>, !nn.tensor<[B], f32>)
    dims [B: batch, T: seq(B), N: packed(B, T), Y: seq(B) computed,
          Z: seq(B) computed] {
  %y, %s = nn.ctc_greedy_decode %x from logits blank 0 : !nn.tensor<[B, T, 5], f32> -> !nn.tensor<[B, Y], i32>, !nn.tensor<[B], f32>
  %lp = nn.log_softmax %x : !nn.tensor<[B, T, 5], f32>
  %p = nn.pack %lp : !nn.tensor<[B, T, 5], f32> -> !nn.tensor<[N, 5], f32>
  %z, %zs = nn.ctc_greedy_decode %p from log_probs blank 3 : !nn.tensor<[N, 5], f32> -> !nn.tensor<[B, Z], i32>, !nn.tensor<[B], f32>
  nn.return %y, %s, %z, %zs : !nn.tensor<[B, Y], i32>, !nn.tensor<[B], f32>, !nn.tensor<[B, Z], i32>, !nn.tensor<[B], f32>
}
)";

/// One utterance: its frames' logits, kClasses per frame.
using Frames = std::vector<double>;

/// What a plain best-path decoder gives: per frame the first class with
/// the largest logit (NaN never wins), repeats merged, blanks dropped; the
/// score sums each frame's log-softmax at that class (the frames here
/// have finite maxima).
struct Decoded {
  std::vector<int32_t> labels;
  double score = 0;
};

Decoded plainGreedy(const Frames &logits, int64_t blank) {
  Decoded out;
  int64_t previous = -1;
  for (size_t t = 0; t < logits.size() / kClasses; ++t) {
    const double *x = &logits[t * kClasses];
    // The first of the largest numbers; class 0 when there is none above
    // -inf (the op's rule).
    int64_t best = -1;
    for (int64_t c = 0; c < kClasses; ++c)
      if (!std::isnan(x[c]) && (best < 0 || x[c] > x[best]))
        best = c;
    if (best < 0 || std::isinf(x[best]))
      best = 0;
    double max = x[best], sum = 0;
    for (int64_t c = 0; c < kClasses; ++c)
      sum += std::exp(x[c] - max);
    out.score += -std::log(sum);
    if (best != blank && best != previous)
      out.labels.push_back((int32_t)best);
    previous = best;
  }
  return out;
}

/// A batch of `utterances`, padded to the longest (at least `padded`
/// frames) with NaN.
RunInputs batchOf(const std::vector<Frames> &utterances, int64_t padded = 1) {
  int64_t batch = utterances.size();
  for (const Frames &u : utterances)
    padded = std::max<int64_t>(padded, u.size() / kClasses);
  RunInputs inputs;
  Tensor x(DType::f32, {batch, padded, kClasses});
  for (int64_t i = 0; i < x.numElements(); ++i)
    x.data<float>()[i] = (float)kNaN;
  for (int64_t b = 0; b < batch; ++b) {
    inputs.lengths["T"].push_back(utterances[b].size() / kClasses);
    for (size_t i = 0; i < utterances[b].size(); ++i)
      x.data<float>()[b * padded * kClasses + i] = (float)utterances[b][i];
  }
  inputs.inputs["x"] = x;
  return inputs;
}

const Tensor &output(const RunResult &result, const std::string &name) {
  for (const auto &[n, t] : result.outputs)
    if (n == name)
      return t;
  ADD_FAILURE() << "no output " << name;
  static Tensor none;
  return none;
}

/// Sequence b's hypothesis from a labels output and its lengths output.
std::vector<int32_t> hypothesis(const RunResult &result,
                                const std::string &labels,
                                const std::string &dim, int64_t b) {
  const Tensor &y = output(result, labels);
  int32_t length = output(result, "lengths:" + dim).data<int32_t>()[b];
  const int32_t *row = y.data<int32_t>() + b * y.shape()[1];
  return std::vector<int32_t>(row, row + length);
}

/// Checks every sequence of `got` against plainGreedy, from logits with
/// blank 0 (Y) and from log-probs with blank 3 (Z).
void expectPlainGreedy(const std::vector<Frames> &utterances,
                       const RunResult &got) {
  int64_t longestY = 1, longestZ = 1;
  for (size_t b = 0; b < utterances.size(); ++b) {
    SCOPED_TRACE("sequence " + std::to_string(b));
    // Float32 frames, as the compiled graph read them.
    Frames frames = utterances[b];
    for (double &v : frames)
      v = (float)v;
    Decoded y = plainGreedy(frames, kBlank), z = plainGreedy(frames, 3);
    EXPECT_EQ(hypothesis(got, "result0", "Y", b), y.labels);
    EXPECT_EQ(hypothesis(got, "result2", "Z", b), z.labels);
    EXPECT_NEAR(output(got, "result1").at(b), y.score,
                1e-5 * std::max(1.0, -y.score));
    EXPECT_NEAR(output(got, "result3").at(b), z.score,
                1e-5 * std::max(1.0, -z.score));
    longestY = std::max<int64_t>(longestY, y.labels.size());
    longestZ = std::max<int64_t>(longestZ, z.labels.size());
  }
  // The padded size of a computed dim is its longest length, at least 1.
  int64_t batch = utterances.size();
  EXPECT_EQ(output(got, "result0").shape(),
            (std::vector<int64_t>{batch, longestY}));
  EXPECT_EQ(output(got, "result2").shape(),
            (std::vector<int64_t>{batch, longestZ}));
}

/// Logits whose best class per frame is `classes[t]` (2 above the rest).
Frames peaked(const std::vector<int> &classes) {
  Frames frames(classes.size() * kClasses, 0.0);
  for (size_t t = 0; t < classes.size(); ++t)
    frames[t * kClasses + classes[t]] = 2.0;
  return frames;
}

TEST(CtcGreedyDecodeTest, HandMadeFrames) {
  Executable exe = compileOrDie(kSource, /*pack=*/false);
  std::vector<Frames> utterances{
      peaked({1, 1, 0, 1, 2, 2, 0}), // repeats merge, a blank splits them
      peaked({0, 0, 0}),             // blanks only: no labels
      {},                            // no frames: no labels, score 0
      peaked({4}),                   // one frame
      // Ties: the lowest class wins (the blank here), then class 1 over
      // 2; a NaN never wins against a number.
      {1.0, 1.0, 1.0, 0.0, 0.0, 0.0, 3.0, 3.0, 0.0, 0.0, kNaN, 0.5, kNaN, 0.25,
       0.0},
  };
  RunResult got;
  absl::Status status = exe.run(batchOf(utterances, 9), got);
  ASSERT_TRUE(status.ok()) << status.message();
  EXPECT_EQ(hypothesis(got, "result0", "Y", 0),
            (std::vector<int32_t>{1, 1, 2}));
  EXPECT_EQ(hypothesis(got, "result0", "Y", 1), (std::vector<int32_t>{}));
  EXPECT_EQ(hypothesis(got, "result0", "Y", 2), (std::vector<int32_t>{}));
  EXPECT_EQ(output(got, "result1").at(2), 0.0);
  EXPECT_EQ(hypothesis(got, "result0", "Y", 3), (std::vector<int32_t>{4}));
  // Frame 0 ties blank and classes 1, 2; frame 1 ties 1 and 2; frame 2
  // holds NaN at classes 0 and 2: class 1 (0.5) wins.
  EXPECT_EQ(hypothesis(got, "result0", "Y", 4), (std::vector<int32_t>{1}));
  // The score of a frame with a NaN logit is NaN (its log-sum-exp is).
  EXPECT_TRUE(std::isnan(output(got, "result1").at(4)));
  // The losses over the computed dims count their frames from the lengths
  // the run computed.
  EXPECT_EQ(output(got, "lengths:Y").shape(), (std::vector<int64_t>{5}));
}

TEST(CtcGreedyDecodeTest, RandomFramesMatchAPlainDecoderPaddedAndPacked) {
  std::mt19937 rng(11);
  std::normal_distribution<double> logit(0.0, 2.0);
  std::uniform_int_distribution<int> length(0, 12);
  for (bool pack : {false, true}) {
    Executable exe = compileOrDie(kSource, pack);
    for (int round = 0; round < 8; ++round) {
      SCOPED_TRACE("pack " + std::to_string(pack) + ", round " +
                   std::to_string(round));
      std::vector<Frames> utterances(1 + round % 5);
      for (Frames &u : utterances) {
        u.resize(length(rng) * kClasses);
        for (double &v : u)
          v = logit(rng);
      }
      RunResult got;
      absl::Status status = exe.run(batchOf(utterances), got);
      ASSERT_TRUE(status.ok()) << status.message();
      expectPlainGreedy(utterances, got);
    }
  }
}

TEST(CtcGreedyDecodeTest, EachUtteranceAloneEqualsItInABatch) {
  // Very different lengths, NaN padding; alone, each has no padding.
  std::mt19937 rng(3);
  std::normal_distribution<double> logit(0.0, 1.5);
  std::vector<Frames> utterances;
  for (int frames : {40, 1, 0, 17, 3, 40, 9}) {
    Frames u(frames * kClasses);
    for (double &v : u)
      v = logit(rng);
    utterances.push_back(u);
  }
  for (bool pack : {false, true}) {
    SCOPED_TRACE("pack " + std::to_string(pack));
    Executable exe = compileOrDie(kSource, pack);
    RunResult batched;
    ASSERT_TRUE(exe.run(batchOf(utterances, 64), batched).ok());
    for (size_t b = 0; b < utterances.size(); ++b) {
      SCOPED_TRACE("utterance " + std::to_string(b));
      RunResult alone;
      ASSERT_TRUE(exe.run(batchOf({utterances[b]}), alone).ok());
      for (auto [labels, dim, score] :
           {std::tuple{"result0", "Y", "result1"},
            std::tuple{"result2", "Z", "result3"}}) {
        EXPECT_EQ(hypothesis(alone, labels, dim, 0),
                  hypothesis(batched, labels, dim, b));
        EXPECT_EQ(output(alone, score).at(0), output(batched, score).at(b));
      }
    }
  }
}

TEST(CtcGreedyDecodeTest, MatchesTheReferenceWithLossesOverComputedDims) {
  // The reference evaluator computes the dims too; a loss over the
  // hypotheses (CTC of the best path's labels) counts their lengths.
  const OpCase *greedy = nullptr;
  for (const OpCase &c : opCases())
    if (std::string(c.name) == "ctc_greedy_decode")
      greedy = &c;
  ASSERT_TRUE(greedy);
  Executable exe = compileOrDie(greedy->source, /*pack=*/false);
  RunInputs inputs =
      makeInputs(exe.manifest(), 5, LengthPattern::WithEmpty, 6, 8, kNaN);
  RunResult got;
  ASSERT_TRUE(exe.run(inputs, got).ok());
  expectMatchesReference(greedy->source, exe, inputs, got, 1e-5, 1e-6);
  ASSERT_EQ(got.losses.size(), 1u);
  // Per-sequence normalization: one frame per sequence.
  EXPECT_EQ(got.losses[0].framesComputed, 6);
}

//===----------------------------------------------------------------------===//
// Prefix beam search
//===----------------------------------------------------------------------===//

// Three classes (blank 0): a wide beam keeps every prefix of up to 6
// frames (at most 2^7 - 1 label sequences); beam 1 with merge max is the
// best path, on packed logits.
const char *kBeamSource = R"(
nn.graph @g(%x: !nn.tensor<[B, T, 3], f32>)
    -> (!nn.tensor<[B, Y], i32>, !nn.tensor<[B], f32>,
        !nn.tensor<[B, G], i32>, !nn.tensor<[B], f32>,
        !nn.tensor<[B, M], i32>, !nn.tensor<[B], f32>)
    dims [B: batch, T: seq(B), N: packed(B, T), Y: seq(B) computed,
          G: seq(B) computed, M: seq(B) computed] {
  %y, %s = nn.ctc_beam_search %x from logits blank 0 beam 128 merge sum : !nn.tensor<[B, T, 3], f32> -> !nn.tensor<[B, Y], i32>, !nn.tensor<[B], f32>
  %g, %gs = nn.ctc_greedy_decode %x from logits blank 0 : !nn.tensor<[B, T, 3], f32> -> !nn.tensor<[B, G], i32>, !nn.tensor<[B], f32>
  %p = nn.pack %x : !nn.tensor<[B, T, 3], f32> -> !nn.tensor<[N, 3], f32>
  %m, %ms = nn.ctc_beam_search %p from logits blank 0 beam 1 merge max : !nn.tensor<[N, 3], f32> -> !nn.tensor<[B, M], i32>, !nn.tensor<[B], f32>
  nn.return %y, %s, %g, %gs, %m, %ms : !nn.tensor<[B, Y], i32>, !nn.tensor<[B], f32>, !nn.tensor<[B, G], i32>, !nn.tensor<[B], f32>, !nn.tensor<[B, M], i32>, !nn.tensor<[B], f32>
}
)";

constexpr int64_t kBeamClasses = 3;

/// Every label sequence the frames can spell with its log probability, by
/// enumeration of every frame labelling (collapsed: repeats merged, blanks
/// dropped; the probabilities of labellings that spell the same sequence
/// summed), most probable first (then fewer labels, then the smaller
/// sequence).
std::vector<std::pair<std::vector<int32_t>, double>>
allLabelSequences(const std::vector<double> &logits) {
  int64_t frames = logits.size() / kBeamClasses;
  std::map<std::vector<int32_t>, double> probability;
  int64_t paths = 1;
  for (int64_t t = 0; t < frames; ++t)
    paths *= kBeamClasses;
  for (int64_t code = 0; code < paths; ++code) {
    std::vector<int32_t> labels;
    double logProb = 0;
    int64_t rest = code, previous = -1;
    for (int64_t t = 0; t < frames; ++t, rest /= kBeamClasses) {
      int64_t c = rest % kBeamClasses;
      double sum = 0;
      for (int64_t k = 0; k < kBeamClasses; ++k)
        sum += std::exp(logits[t * kBeamClasses + k]);
      logProb += logits[t * kBeamClasses + c] - std::log(sum);
      if (c != 0 && c != previous)
        labels.push_back((int32_t)c);
      previous = c;
    }
    probability[labels] += std::exp(logProb);
  }
  std::vector<std::pair<std::vector<int32_t>, double>> all;
  for (const auto &[labels, p] : probability)
    all.push_back({labels, std::log(p)});
  std::sort(all.begin(), all.end(), [](const auto &a, const auto &b) {
    if (a.second != b.second)
      return a.second > b.second;
    if (a.first.size() != b.first.size())
      return a.first.size() < b.first.size();
    return a.first < b.first;
  });
  return all;
}

/// The most probable label sequence of a few frames by enumeration (ties:
/// fewer labels, then the smaller sequence), with its log probability.
std::pair<std::vector<int32_t>, double>
mostProbable(const std::vector<double> &logits) {
  return allLabelSequences(logits).front();
}

std::vector<Frames> randomUtterances(std::mt19937 &rng, int count,
                                     int longest) {
  std::normal_distribution<double> logit(0.0, 1.5);
  std::uniform_int_distribution<int> length(0, longest);
  std::vector<Frames> utterances(count);
  for (Frames &u : utterances) {
    u.resize(length(rng) * kBeamClasses);
    for (double &v : u)
      v = (float)logit(rng);
  }
  return utterances;
}

/// batchOf for three classes.
RunInputs beamBatchOf(const std::vector<Frames> &utterances,
                      int64_t padded = 1) {
  int64_t batch = utterances.size();
  for (const Frames &u : utterances)
    padded = std::max<int64_t>(padded, u.size() / kBeamClasses);
  RunInputs inputs;
  Tensor x(DType::f32, {batch, padded, kBeamClasses});
  for (int64_t i = 0; i < x.numElements(); ++i)
    x.data<float>()[i] = (float)kNaN;
  for (int64_t b = 0; b < batch; ++b) {
    inputs.lengths["T"].push_back(utterances[b].size() / kBeamClasses);
    for (size_t i = 0; i < utterances[b].size(); ++i)
      x.data<float>()[b * padded * kBeamClasses + i] = (float)utterances[b][i];
  }
  inputs.inputs["x"] = x;
  return inputs;
}

TEST(CtcBeamSearchTest, AWideBeamFindsTheMostProbableLabelSequence) {
  Executable exe = compileOrDie(kBeamSource, /*pack=*/false);
  std::mt19937 rng(21);
  for (int round = 0; round < 6; ++round) {
    SCOPED_TRACE("round " + std::to_string(round));
    std::vector<Frames> utterances = randomUtterances(rng, 5, 6);
    RunResult got;
    absl::Status status = exe.run(beamBatchOf(utterances), got);
    ASSERT_TRUE(status.ok()) << status.message();
    for (size_t b = 0; b < utterances.size(); ++b) {
      SCOPED_TRACE("sequence " + std::to_string(b));
      auto [labels, logProb] = mostProbable(utterances[b]);
      EXPECT_EQ(hypothesis(got, "result0", "Y", b), labels);
      EXPECT_NEAR(output(got, "result1").at(b), logProb,
                  1e-5 * std::max(1.0, -logProb));
    }
  }
}

TEST(CtcBeamSearchTest, TheSearchBeamOptionReplacesTheWrittenBeam) {
  // Written with beam 1 and called through another graph; compiled with
  // searchBeam 128 it finds the most probable sequences as above.
  const char *source = R"(
nn.graph @search(%x: !nn.tensor<[B, T, 3], f32>) -> !nn.tensor<[B], f32>
    dims [B: batch, T: seq(B), Y: seq(B) computed] {
  %y, %s = nn.ctc_beam_search %x from logits blank 0 beam 1 merge sum : !nn.tensor<[B, T, 3], f32> -> !nn.tensor<[B, Y], i32>, !nn.tensor<[B], f32>
  nn.return %s : !nn.tensor<[B], f32>
}
nn.graph @g(%x: !nn.tensor<[B, T, 3], f32>) -> !nn.tensor<[B], f32>
    dims [B: batch, T: seq(B)] {
  %s = nn.call @search(%x) : (!nn.tensor<[B, T, 3], f32>) -> !nn.tensor<[B], f32>
  nn.return %s : !nn.tensor<[B], f32>
}
)";
  CompileOptions options;
  options.entry = "g";
  options.searchBeam = 128;
  Executable exe = compileOrDie(source, options);
  std::mt19937 rng(21);
  std::vector<Frames> utterances = randomUtterances(rng, 6, 6);
  RunResult got;
  ASSERT_TRUE(exe.run(beamBatchOf(utterances), got).ok());
  int differ = 0;
  for (size_t b = 0; b < utterances.size(); ++b) {
    double logProb = mostProbable(utterances[b]).second;
    EXPECT_NEAR(output(got, "result0").at(b), logProb,
                1e-5 * std::max(1.0, -logProb));
  }
  // Beam 1 as written scores some sequence lower.
  Executable written = compileOrDie(source, /*pack=*/false, "g");
  RunResult narrow;
  ASSERT_TRUE(written.run(beamBatchOf(utterances), narrow).ok());
  for (size_t b = 0; b < utterances.size(); ++b)
    differ +=
        output(narrow, "result0").at(b) < output(got, "result0").at(b) - 1e-6;
  EXPECT_GT(differ, 0);

  // No search, or two: the option names the graph.
  absl::StatusOr<Artifact> none = compileSource(kSource, "test.mlir", [] {
    CompileOptions o;
    o.searchBeam = 4;
    return o;
  }());
  ASSERT_FALSE(none.ok());
  EXPECT_NE(none.status().message().find("graph @g runs no beam search"),
            std::string::npos)
      << none.status().message();
  CompileOptions two;
  two.searchBeam = 4;
  absl::StatusOr<Artifact> ambiguous =
      compileSource(kBeamSource, "test.mlir", two);
  ASSERT_FALSE(ambiguous.ok());
  EXPECT_NE(ambiguous.status().message().find("runs 2 beam searches"),
            std::string::npos)
      << ambiguous.status().message();
}

TEST(CtcBeamSearchTest, BeamOneWithMaxMergeIsGreedyPacked) {
  Executable exe = compileOrDie(kBeamSource, /*pack=*/false);
  std::mt19937 rng(8);
  std::vector<Frames> utterances = randomUtterances(rng, 7, 30);
  RunResult got;
  ASSERT_TRUE(exe.run(beamBatchOf(utterances), got).ok());
  for (size_t b = 0; b < utterances.size(); ++b) {
    SCOPED_TRACE("sequence " + std::to_string(b));
    EXPECT_EQ(hypothesis(got, "result4", "M", b),
              hypothesis(got, "result2", "G", b));
    double greedy = output(got, "result3").at(b);
    EXPECT_NEAR(output(got, "result5").at(b), greedy,
                1e-5 * std::max(1.0, -greedy));
  }
}

TEST(CtcBeamSearchTest, EachUtteranceAloneEqualsItInABatch) {
  std::mt19937 rng(4);
  std::vector<Frames> utterances = randomUtterances(rng, 6, 40);
  utterances.push_back({}); // no frames: the empty hypothesis, score 0
  for (bool pack : {false, true}) {
    SCOPED_TRACE("pack " + std::to_string(pack));
    Executable exe = compileOrDie(kBeamSource, pack);
    RunResult batched;
    ASSERT_TRUE(exe.run(beamBatchOf(utterances, 48), batched).ok());
    EXPECT_EQ(output(batched, "result1").at(utterances.size() - 1), 0.0);
    for (size_t b = 0; b < utterances.size(); ++b) {
      SCOPED_TRACE("utterance " + std::to_string(b));
      RunResult alone;
      ASSERT_TRUE(exe.run(beamBatchOf({utterances[b]}), alone).ok());
      for (auto [labels, dim, score] :
           {std::tuple{"result0", "Y", "result1"},
            std::tuple{"result4", "M", "result5"}}) {
        EXPECT_EQ(hypothesis(alone, labels, dim, 0),
                  hypothesis(batched, labels, dim, b));
        EXPECT_EQ(output(alone, score).at(0), output(batched, score).at(b));
      }
    }
  }
}

//===----------------------------------------------------------------------===//
// N-best lists
//===----------------------------------------------------------------------===//

// With a beam wider than the number of label sequences a few frames can
// spell, the N-best list is all of them, and ctc_loss of each against the
// scores repeated per hypothesis is minus its search score.
const char *kNBestSource = R"(
nn.graph @g(%x: !nn.tensor<[B, T, 3], f32>)
    -> (!nn.tensor<[B, K, Y], i32>, !nn.tensor<[B, K], f32>, !nn.tensor<[B, K], f32>)
    dims [B: batch, T: seq(B), K: seq(B) computed, H: batch = flatten(B, K),
          Y: seq(H) computed, TH: seq(H) = T] {
  %y, %s = nn.ctc_beam_search %x from logits blank 0 beam 128 merge sum : !nn.tensor<[B, T, 3], f32> -> !nn.tensor<[B, K, Y], i32>, !nn.tensor<[B, K], f32>
  %yh = nn.flatten_beam %y : !nn.tensor<[B, K, Y], i32> -> !nn.tensor<[H, Y], i32>
  %xh = nn.repeat_beam %x : !nn.tensor<[B, T, 3], f32> -> !nn.tensor<[H, TH, 3], f32>
  %c = nn.ctc_loss %xh, %yh from logits blank 0 : !nn.tensor<[H, TH, 3], f32>, !nn.tensor<[H, Y], i32>
  nn.mark_loss %c as "rescored" normalize per_sequence : !nn.tensor<[H], f32>
  %ck = nn.unflatten_beam %c : !nn.tensor<[H], f32> -> !nn.tensor<[B, K], f32>
  nn.return %y, %s, %ck : !nn.tensor<[B, K, Y], i32>, !nn.tensor<[B, K], f32>, !nn.tensor<[B, K], f32>
}
)";

/// Sequence b's N-best list from the [B, K, Y] labels output `labels`, the
/// [B, K] output `scores` and the lengths of K (`countDim`) and of Y
/// (`labelDim`, over H, b-major).
std::vector<std::pair<std::vector<int32_t>, double>>
nBestOf(const RunResult &result, const std::string &labels,
        const std::string &scores, int64_t b, const std::string &labelDim = "Y",
        const std::string &countDim = "K") {
  const Tensor &y = output(result, labels);
  const Tensor &s = output(result, scores);
  const Tensor &counts = output(result, "lengths:" + countDim);
  const Tensor &lengths = output(result, "lengths:" + labelDim);
  int64_t first = 0;
  for (int64_t i = 0; i < b; ++i)
    first += counts.data<int32_t>()[i];
  int64_t slots = y.shape()[1], longest = y.shape()[2];
  std::vector<std::pair<std::vector<int32_t>, double>> list;
  for (int64_t k = 0; k < counts.data<int32_t>()[b]; ++k) {
    const int32_t *row = y.data<int32_t>() + (b * slots + k) * longest;
    list.push_back(
        {std::vector<int32_t>(row, row + lengths.data<int32_t>()[first + k]),
         s.at(b * slots + k)});
  }
  return list;
}

TEST(CtcNBestTest, AWideBeamListsEveryLabelSequenceRescoredByCtcLoss) {
  std::mt19937 rng(33);
  for (bool pack : {false, true}) {
    SCOPED_TRACE("pack " + std::to_string(pack));
    Executable exe = compileOrDie(kNBestSource, pack);
    std::vector<Frames> utterances = randomUtterances(rng, 5, 4);
    utterances.push_back({}); // no frames: one empty hypothesis, score 0
    RunResult got;
    absl::Status status = exe.run(beamBatchOf(utterances), got);
    ASSERT_TRUE(status.ok()) << status.message();
    int64_t slots = output(got, "result1").shape()[1];
    for (size_t b = 0; b < utterances.size(); ++b) {
      SCOPED_TRACE("sequence " + std::to_string(b));
      auto want = allLabelSequences(utterances[b]);
      auto list = nBestOf(got, "result0", "result1", b);
      ASSERT_EQ(list.size(), want.size());
      for (size_t k = 0; k < want.size(); ++k) {
        SCOPED_TRACE("hypothesis " + std::to_string(k));
        EXPECT_EQ(list[k].first, want[k].first);
        double tolerance = 1e-5 * std::max(1.0, -want[k].second);
        EXPECT_NEAR(list[k].second, want[k].second, tolerance);
        // The same hypothesis rescored as one entry of the batch H.
        EXPECT_NEAR(-output(got, "result2").at(b * slots + k), want[k].second,
                    tolerance);
      }
    }
  }
}

TEST(CtcNBestTest, EachUtteranceAloneEqualsItInABatch) {
  const char *source = R"(
nn.graph @g(%x: !nn.tensor<[B, T, 3], f32>)
    -> (!nn.tensor<[B, K, Y], i32>, !nn.tensor<[B, K], f32>)
    dims [B: batch, T: seq(B), N: packed(B, T), K: seq(B) computed,
          H: batch = flatten(B, K), Y: seq(H) computed] {
  %p = nn.pack %x : !nn.tensor<[B, T, 3], f32> -> !nn.tensor<[N, 3], f32>
  %y, %s = nn.ctc_beam_search %p from logits blank 0 beam 6 merge sum token_beam 2 : !nn.tensor<[N, 3], f32> -> !nn.tensor<[B, K, Y], i32>, !nn.tensor<[B, K], f32>
  nn.return %y, %s : !nn.tensor<[B, K, Y], i32>, !nn.tensor<[B, K], f32>
}
)";
  std::mt19937 rng(5);
  std::vector<Frames> utterances = randomUtterances(rng, 6, 40);
  utterances.push_back({});
  Executable exe = compileOrDie(source, /*pack=*/false);
  RunResult batched;
  ASSERT_TRUE(exe.run(beamBatchOf(utterances, 48), batched).ok());
  for (size_t b = 0; b < utterances.size(); ++b) {
    SCOPED_TRACE("utterance " + std::to_string(b));
    RunResult alone;
    ASSERT_TRUE(exe.run(beamBatchOf({utterances[b]}), alone).ok());
    auto single = nBestOf(alone, "result0", "result1", 0);
    EXPECT_GE(single.size(), 1u);
    EXPECT_LE(single.size(), 6u);
    EXPECT_EQ(single, nBestOf(batched, "result0", "result1", b));
  }
}

} // namespace

//===----------------------------------------------------------------------===//
// Shallow fusion with a language-model graph
//===----------------------------------------------------------------------===//

namespace {

// An embedding + LSTM language model over the three classes (class 0, the
// blank, doubles as start and end symbol), written with the dialect's
// layers (it has no single-step LSTM op): gates from one linear each over
// [embedding, h], then c' = f·c + i·g and h' = o·tanh(c').
const char *kLmModel = R"(
nn.parameter @embed : !nn.tensor<[3, 3], f32>
nn.parameter @wi : !nn.tensor<[4, 7], f32>
nn.parameter @wf : !nn.tensor<[4, 7], f32>
nn.parameter @wg : !nn.tensor<[4, 7], f32>
nn.parameter @wo : !nn.tensor<[4, 7], f32>
nn.parameter @out : !nn.tensor<[3, 4], f32>
nn.graph @lm(%y: !nn.tensor<[S], i32>, %h: !nn.tensor<[S, 4], f32>, %c: !nn.tensor<[S, 4], f32>)
    -> (!nn.tensor<[S, 3], f32>, !nn.tensor<[S, 4], f32>, !nn.tensor<[S, 4], f32>) dims [S: batch] {
  %e = nn.param_ref @embed : !nn.tensor<[3, 3], f32>
  %x = nn.embedding %y, %e : !nn.tensor<[S], i32>, !nn.tensor<[3, 3], f32>
  %xh = nn.concat %x, %h : !nn.tensor<[S, 3], f32>, !nn.tensor<[S, 4], f32>
  %wi = nn.param_ref @wi : !nn.tensor<[4, 7], f32>
  %wf = nn.param_ref @wf : !nn.tensor<[4, 7], f32>
  %wg = nn.param_ref @wg : !nn.tensor<[4, 7], f32>
  %wo = nn.param_ref @wo : !nn.tensor<[4, 7], f32>
  %zi = nn.linear %xh, %wi : !nn.tensor<[S, 7], f32>, !nn.tensor<[4, 7], f32>
  %zf = nn.linear %xh, %wf : !nn.tensor<[S, 7], f32>, !nn.tensor<[4, 7], f32>
  %zg = nn.linear %xh, %wg : !nn.tensor<[S, 7], f32>, !nn.tensor<[4, 7], f32>
  %zo = nn.linear %xh, %wo : !nn.tensor<[S, 7], f32>, !nn.tensor<[4, 7], f32>
  %i = nn.sigmoid %zi : !nn.tensor<[S, 4], f32>
  %f = nn.sigmoid %zf : !nn.tensor<[S, 4], f32>
  %g = nn.tanh %zg : !nn.tensor<[S, 4], f32>
  %o = nn.sigmoid %zo : !nn.tensor<[S, 4], f32>
  %fc = nn.mul %f, %c : !nn.tensor<[S, 4], f32>
  %ig = nn.mul %i, %g : !nn.tensor<[S, 4], f32>
  %c1 = nn.add %fc, %ig : !nn.tensor<[S, 4], f32>
  %tc = nn.tanh %c1 : !nn.tensor<[S, 4], f32>
  %h1 = nn.mul %o, %tc : !nn.tensor<[S, 4], f32>
  %w = nn.param_ref @out : !nn.tensor<[3, 4], f32>
  %z = nn.linear %h1, %w : !nn.tensor<[S, 4], f32>, !nn.tensor<[3, 4], f32>
  nn.return %z, %h1, %c1 : !nn.tensor<[S, 3], f32>, !nn.tensor<[S, 4], f32>, !nn.tensor<[S, 4], f32>
}
)";

// The searches: fused (single best and N-best), fused at weight 0 and the
// same search without a language model.
const std::string kLmSource = std::string(kLmModel) + R"(
nn.graph @g(%x: !nn.tensor<[B, T, 3], f32>)
    -> (!nn.tensor<[B, Y], i32>, !nn.tensor<[B], f32>,
        !nn.tensor<[B, K, Z], i32>, !nn.tensor<[B, K], f32>,
        !nn.tensor<[B, P], i32>, !nn.tensor<[B], f32>,
        !nn.tensor<[B, Q], i32>, !nn.tensor<[B], f32>)
    dims [B: batch, T: seq(B), Y: seq(B) computed, K: seq(B) computed,
          H: batch = flatten(B, K), Z: seq(H) computed, P: seq(B) computed,
          Q: seq(B) computed] {
  %y, %s = nn.ctc_beam_search %x from logits blank 0 beam 4 merge sum lm @lm from logits weight 0.7 start 0 end 0 length_bonus 0.3
      : !nn.tensor<[B, T, 3], f32> -> !nn.tensor<[B, Y], i32>, !nn.tensor<[B], f32>
  %n, %ns = nn.ctc_beam_search %x from logits blank 0 beam 3 merge max token_beam 2 lm @lm from logits weight 1.5 start 0
      : !nn.tensor<[B, T, 3], f32> -> !nn.tensor<[B, K, Z], i32>, !nn.tensor<[B, K], f32>
  %p, %ps = nn.ctc_beam_search %x from logits blank 0 beam 4 merge sum lm @lm from logits weight 0.0 start 0 end 0
      : !nn.tensor<[B, T, 3], f32> -> !nn.tensor<[B, P], i32>, !nn.tensor<[B], f32>
  %q, %qs = nn.ctc_beam_search %x from logits blank 0 beam 4 merge sum
      : !nn.tensor<[B, T, 3], f32> -> !nn.tensor<[B, Q], i32>, !nn.tensor<[B], f32>
  nn.return %y, %s, %n, %ns, %p, %ps, %q, %qs : !nn.tensor<[B, Y], i32>, !nn.tensor<[B], f32>, !nn.tensor<[B, K, Z], i32>, !nn.tensor<[B, K], f32>, !nn.tensor<[B, P], i32>, !nn.tensor<[B], f32>, !nn.tensor<[B, Q], i32>, !nn.tensor<[B], f32>
}
)";

// The fused searches (single best and N-best) on packed scores beside the
// same searches on the padded ones. The graph packs the scores itself:
// the pack pass would leave a graph argument's scores padded, so
// kLmSource compiled with it never reaches the packed lowering.
const std::string kLmPackedSource = std::string(kLmModel) + R"(
nn.graph @g(%x: !nn.tensor<[B, T, 3], f32>)
    -> (!nn.tensor<[B, Y], i32>, !nn.tensor<[B], f32>,
        !nn.tensor<[B, K, Z], i32>, !nn.tensor<[B, K], f32>,
        !nn.tensor<[B, P], i32>, !nn.tensor<[B], f32>,
        !nn.tensor<[B, L, Q], i32>, !nn.tensor<[B, L], f32>)
    dims [B: batch, T: seq(B), N: packed(B, T), Y: seq(B) computed,
          K: seq(B) computed, H: batch = flatten(B, K), Z: seq(H) computed,
          P: seq(B) computed, L: seq(B) computed,
          G: batch = flatten(B, L), Q: seq(G) computed] {
  %p = nn.pack %x : !nn.tensor<[B, T, 3], f32> -> !nn.tensor<[N, 3], f32>
  %y, %s = nn.ctc_beam_search %p from logits blank 0 beam 4 merge sum lm @lm from logits weight 0.7 start 0 end 0 length_bonus 0.3
      : !nn.tensor<[N, 3], f32> -> !nn.tensor<[B, Y], i32>, !nn.tensor<[B], f32>
  %n, %ns = nn.ctc_beam_search %p from logits blank 0 beam 3 merge max token_beam 2 lm @lm from logits weight 1.5 start 0
      : !nn.tensor<[N, 3], f32> -> !nn.tensor<[B, K, Z], i32>, !nn.tensor<[B, K], f32>
  %q, %qs = nn.ctc_beam_search %x from logits blank 0 beam 4 merge sum lm @lm from logits weight 0.7 start 0 end 0 length_bonus 0.3
      : !nn.tensor<[B, T, 3], f32> -> !nn.tensor<[B, P], i32>, !nn.tensor<[B], f32>
  %m, %ms = nn.ctc_beam_search %x from logits blank 0 beam 3 merge max token_beam 2 lm @lm from logits weight 1.5 start 0
      : !nn.tensor<[B, T, 3], f32> -> !nn.tensor<[B, L, Q], i32>, !nn.tensor<[B, L], f32>
  nn.return %y, %s, %n, %ns, %q, %qs, %m, %ms : !nn.tensor<[B, Y], i32>, !nn.tensor<[B], f32>, !nn.tensor<[B, K, Z], i32>, !nn.tensor<[B, K], f32>, !nn.tensor<[B, P], i32>, !nn.tensor<[B], f32>, !nn.tensor<[B, L, Q], i32>, !nn.tensor<[B, L], f32>
}
)";

TEST(CtcLmFusionTest, MatchesTheReferenceEvaluator) {
  for (bool pack : {false, true}) {
    SCOPED_TRACE("pack " + std::to_string(pack));
    Executable exe = compileOrDie(kLmSource, pack);
    for (uint32_t seed : {3u, 4u}) {
      SCOPED_TRACE("seed " + std::to_string(seed));
      RunInputs inputs = makeInputs(exe.manifest(), seed,
                                    LengthPattern::WithEmpty, 5, 9, kNaN);
      RunResult got;
      ASSERT_TRUE(exe.run(inputs, got).ok());
      expectMatchesReference(kLmSource, exe, inputs, got, 1e-4, 1e-5);
    }
  }
}

TEST(CtcLmFusionTest, WeightZeroIsTheSearchWithoutLanguageModel) {
  Executable exe = compileOrDie(kLmSource, /*pack=*/false);
  RunInputs inputs =
      makeInputs(exe.manifest(), 7, LengthPattern::WithEmpty, 6, 12, kNaN);
  RunResult got;
  ASSERT_TRUE(exe.run(inputs, got).ok());
  bool fusionChangesSomething = false;
  for (int64_t b = 0; b < 6; ++b) {
    SCOPED_TRACE("utterance " + std::to_string(b));
    EXPECT_EQ(hypothesis(got, "result4", "P", b),
              hypothesis(got, "result6", "Q", b));
    EXPECT_EQ(output(got, "result5").at(b), output(got, "result7").at(b));
    fusionChangesSomething |=
        output(got, "result1").at(b) != output(got, "result7").at(b);
  }
  // The fused search's scores include the LM: the test is not vacuous.
  EXPECT_TRUE(fusionChangesSomething);
}

TEST(CtcLmFusionTest, EachUtteranceAloneEqualsItInABatch) {
  Executable exe = compileOrDie(kLmSource, /*pack=*/false);
  RunInputs batch =
      makeInputs(exe.manifest(), 9, LengthPattern::WithEmpty, 6, 14, kNaN);
  RunResult batched;
  ASSERT_TRUE(exe.run(batch, batched).ok());
  const Tensor &x = batch.inputs.at("x");
  int64_t padded = x.shape()[1];
  for (int64_t b = 0; b < 6; ++b) {
    SCOPED_TRACE("utterance " + std::to_string(b));
    int32_t length = batch.lengths.at("T")[b];
    RunInputs alone;
    alone.parameters = batch.parameters;
    alone.lengths["T"] = {length};
    Tensor one(DType::f32, {1, std::max<int64_t>(length, 1), kBeamClasses});
    for (int64_t i = 0; i < one.numElements(); ++i)
      one.data<float>()[i] =
          i < length * kBeamClasses
              ? x.data<float>()[b * padded * kBeamClasses + i]
              : (float)kNaN;
    alone.inputs["x"] = one;
    RunResult single;
    ASSERT_TRUE(exe.run(alone, single).ok());
    EXPECT_EQ(hypothesis(single, "result0", "Y", 0),
              hypothesis(batched, "result0", "Y", b));
    EXPECT_NEAR(output(single, "result1").at(0),
                output(batched, "result1").at(b), 1e-5);
    auto listAlone = nBestOf(single, "result2", "result3", 0, "Z");
    auto listBatched = nBestOf(batched, "result2", "result3", b, "Z");
    ASSERT_EQ(listAlone.size(), listBatched.size());
    for (size_t k = 0; k < listAlone.size(); ++k) {
      EXPECT_EQ(listAlone[k].first, listBatched[k].first) << "hypothesis " << k;
      EXPECT_NEAR(listAlone[k].second, listBatched[k].second, 1e-5);
    }
  }
}

TEST(CtcLmFusionTest, PackedScoresSearchLikePaddedOnes) {
  Executable exe = compileOrDie(kLmPackedSource, /*pack=*/false);
  for (uint32_t seed : {5u, 6u}) {
    SCOPED_TRACE("seed " + std::to_string(seed));
    RunInputs inputs =
        makeInputs(exe.manifest(), seed, LengthPattern::WithEmpty, 6, 11, kNaN);
    RunResult got;
    ASSERT_TRUE(exe.run(inputs, got).ok());
    // The reference evaluator searches the packed rows by its own code.
    expectMatchesReference(kLmPackedSource, exe, inputs, got, 1e-4, 1e-5);
    for (int64_t b = 0; b < 6; ++b) {
      SCOPED_TRACE("utterance " + std::to_string(b));
      // The same frames in the same order: the same search, bit for bit.
      EXPECT_EQ(hypothesis(got, "result0", "Y", b),
                hypothesis(got, "result4", "P", b));
      EXPECT_EQ(output(got, "result1").at(b), output(got, "result5").at(b));
      EXPECT_EQ(nBestOf(got, "result2", "result3", b, "Z"),
                nBestOf(got, "result6", "result7", b, "Q", "L"));
    }
  }
}

} // namespace
