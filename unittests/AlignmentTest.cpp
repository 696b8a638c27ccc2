//===- AlignmentTest.cpp - Viterbi forced alignment against brute force ---===//
//
// nn.viterbi_align, CTC and RNA topologies, compiled and run on chosen
// sequences: repeated labels, U = T (one path), too few frames (flagged),
// no labels, no frames, NaN in every padded frame. Checked against every
// frame labelling enumerated by brute force (random scores, so the best
// path is unique), and, on scores drawn from a few exact values (many
// ties), against the float64 reference, whose dynamic programme is
// written from the op's tie rule.
//
//===----------------------------------------------------------------------===//

#include "ExecutionUtil.h"
#include "reference/Reference.h"

#include <cmath>
#include <limits>
#include <random>

using namespace nn;
using namespace nn::testing;

namespace {

constexpr int64_t kClasses = 3, kBlank = 0, kTime = 6, kLabels = 3;
constexpr double kNegInf = -std::numeric_limits<double>::infinity();

const char *kSource = R"(
nn.graph @g(%x: !nn.tensor<[B, T, 3], f32>, %y: !nn.tensor<[B, U], i32>)
    -> (!nn.tensor<[B, T], i32>, !nn.tensor<[B], f32>,
        !nn.tensor<[B, T], i32>, !nn.tensor<[B], f32>,
        !nn.tensor<[B, T], i32>, !nn.tensor<[B], f32>,
        !nn.tensor<[B, T], i32>, !nn.tensor<[B], f32>)
    dims [B: batch, T: seq(B), U: seq(B)] {
  %ca, %cs = nn.viterbi_align %x, %y from log_probs topology ctc blank 0 : !nn.tensor<[B, T, 3], f32>, !nn.tensor<[B, U], i32>
  %ra, %rs = nn.viterbi_align %x, %y from log_probs topology rna blank 0 : !nn.tensor<[B, T, 3], f32>, !nn.tensor<[B, U], i32>
  %la, %ls = nn.viterbi_align %x, %y from logits topology ctc blank 0 : !nn.tensor<[B, T, 3], f32>, !nn.tensor<[B, U], i32>
  %ma, %ms = nn.viterbi_align %x, %y from logits topology rna blank 0 : !nn.tensor<[B, T, 3], f32>, !nn.tensor<[B, U], i32>
  nn.return %ca, %cs, %ra, %rs, %la, %ls, %ma, %ms : !nn.tensor<[B, T], i32>, !nn.tensor<[B], f32>, !nn.tensor<[B, T], i32>, !nn.tensor<[B], f32>, !nn.tensor<[B, T], i32>, !nn.tensor<[B], f32>, !nn.tensor<[B, T], i32>, !nn.tensor<[B], f32>
}
)";

struct Sequence {
  int32_t frames;
  std::vector<int32_t> labels;
};

/// Sequences that reach every boundary of both topologies.
const std::vector<Sequence> kSequences{
    {6, {1, 2, 1}}, // room for blanks
    {5, {1, 1}},    // a repeat: CTC needs a blank between
    {2, {1, 1}},    // CTC: too few frames for the repeat; RNA: U = T
    {3, {1, 2, 1}}, // U = T: one path in both
    {2, {2, 1, 2}}, // too few frames for both
    {0, {}},        // nothing: score 0, no frames
    {4, {}},        // blanks only
    {1, {2}},       // one frame, one label
    {6, {2, 2, 2}}, // CTC: exactly 2U - 1 = 5 frames needed
};

/// The best path by enumeration of all kClasses^T frame labellings; the
/// frames' classes and the score, or -inf (no path). With a prior, the
/// best path by log-probability minus the prior of each frame's class,
/// scored by its log-probability.
std::pair<std::vector<int64_t>, double>
bruteForce(const std::vector<double> &logProbs, const Sequence &sequence,
           bool rna, const std::vector<double> &prior = {}) {
  int64_t frames = sequence.frames;
  int64_t paths = 1;
  for (int64_t t = 0; t < frames; ++t)
    paths *= kClasses;
  std::vector<int64_t> best;
  double bestScore = kNegInf, bestSearched = kNegInf;
  std::vector<int64_t> path(frames);
  for (int64_t code = 0; code < paths; ++code) {
    int64_t rest = code;
    for (int64_t t = 0; t < frames; ++t, rest /= kClasses)
      path[t] = rest % kClasses;
    // What the path emits: RNA drops blanks; CTC first merges repeats.
    std::vector<int32_t> emitted;
    for (int64_t t = 0; t < frames; ++t) {
      if (path[t] == kBlank)
        continue;
      if (!rna && t > 0 && path[t - 1] == path[t])
        continue;
      emitted.push_back((int32_t)path[t]);
    }
    if (emitted != sequence.labels)
      continue;
    double score = 0, searched = 0;
    for (int64_t t = 0; t < frames; ++t) {
      score += logProbs[t * kClasses + path[t]];
      searched += logProbs[t * kClasses + path[t]] -
                  (prior.empty() ? 0.0 : prior[path[t]]);
    }
    if (searched > bestSearched) {
      bestSearched = searched;
      bestScore = score;
      best = path;
    }
  }
  return {best, bestScore};
}

RunInputs inputsFor(const std::vector<std::vector<double>> &scores) {
  int64_t batch = kSequences.size();
  RunInputs inputs;
  Tensor x(DType::f32, {batch, kTime, kClasses});
  Tensor y(DType::i32, {batch, kLabels});
  for (int64_t b = 0; b < batch; ++b) {
    inputs.lengths["T"].push_back(kSequences[b].frames);
    inputs.lengths["U"].push_back(kSequences[b].labels.size());
    for (int64_t i = 0; i < kTime * kClasses; ++i)
      x.data<float>()[b * kTime * kClasses + i] =
          i < kSequences[b].frames * kClasses
              ? (float)scores[b][i]
              : std::numeric_limits<float>::quiet_NaN();
    for (int64_t u = 0; u < kLabels; ++u)
      y.data<int32_t>()[b * kLabels + u] =
          u < (int64_t)kSequences[b].labels.size() ? kSequences[b].labels[u]
                                                   : 1;
  }
  inputs.inputs["x"] = x;
  inputs.inputs["y"] = y;
  return inputs;
}

/// Log-softmax over the classes of each frame, in float64.
std::vector<double> logSoftmax(const std::vector<double> &logits) {
  std::vector<double> out(logits.size());
  for (size_t row = 0; row < logits.size() / kClasses; ++row) {
    double max = kNegInf, sum = 0;
    for (int64_t c = 0; c < kClasses; ++c)
      max = std::max(max, logits[row * kClasses + c]);
    for (int64_t c = 0; c < kClasses; ++c)
      sum += std::exp(logits[row * kClasses + c] - max);
    for (int64_t c = 0; c < kClasses; ++c)
      out[row * kClasses + c] =
          logits[row * kClasses + c] - max - std::log(sum);
  }
  return out;
}

/// Compares result pair (alignment, score) `first` of `got` for sequence
/// b with a path and its score.
void expectPath(const RunResult &got, int first, int64_t b,
                const std::vector<int64_t> &path, double score,
                double tolerance) {
  const Tensor &alignment = got.outputs[first].second;
  const Tensor &scores = got.outputs[first + 1].second;
  SCOPED_TRACE("result " + std::to_string(first) + ", sequence " +
               std::to_string(b));
  if (score == kNegInf) {
    EXPECT_EQ(scores.at(b), kNegInf);
  } else {
    EXPECT_NEAR(scores.at(b), score, tolerance * std::max(1.0, -score));
  }
  for (int64_t t = 0; t < kTime; ++t) {
    int64_t want = t < (int64_t)path.size() ? path[t] : -1;
    EXPECT_EQ(alignment.data<int32_t>()[b * kTime + t], want) << "frame " << t;
  }
}

/// Scores for every sequence, uniform in [-3, 0) and rounded to what the
/// f32 input holds.
std::vector<std::vector<double>> randomScores(std::mt19937 &rng) {
  std::uniform_real_distribution<double> uniform(-3.0, 0.0);
  std::vector<std::vector<double>> scores(kSequences.size());
  for (auto &s : scores) {
    s.resize(kTime * kClasses);
    for (double &v : s)
      v = (float)uniform(rng);
  }
  return scores;
}

TEST(ViterbiAlignTest, MatchesBruteForceOnEveryBoundary) {
  Executable exe = compileOrDie(kSource, /*pack=*/false);
  std::mt19937 rng(5);
  for (int round = 0; round < 20; ++round) {
    SCOPED_TRACE("round " + std::to_string(round));
    std::vector<std::vector<double>> scores = randomScores(rng);
    RunResult got;
    absl::Status status = exe.run(inputsFor(scores), got);
    ASSERT_TRUE(status.ok()) << status.message();
    ASSERT_EQ(got.outputs.size(), 8u);
    for (size_t b = 0; b < kSequences.size(); ++b) {
      auto [ctc, ctcScore] = bruteForce(scores[b], kSequences[b], false);
      expectPath(got, 0, b, ctc, ctcScore, 1e-5);
      auto [rna, rnaScore] = bruteForce(scores[b], kSequences[b], true);
      expectPath(got, 2, b, rna, rnaScore, 1e-5);
      // From logits: the same path as from their log-softmax (each path
      // takes every frame's normalizer once), scored in log-probs.
      std::vector<double> normalized = logSoftmax(scores[b]);
      auto [fromLogits, logitsScore] =
          bruteForce(normalized, kSequences[b], false);
      EXPECT_EQ(fromLogits, ctc);
      expectPath(got, 4, b, fromLogits, logitsScore, 1e-5);
      auto [rnaFromLogits, rnaLogitsScore] =
          bruteForce(normalized, kSequences[b], true);
      EXPECT_EQ(rnaFromLogits, rna);
      expectPath(got, 6, b, rnaFromLogits, rnaLogitsScore, 1e-5);
    }
  }
  // The flagged sequences: too few frames.
  RunResult got;
  std::vector<std::vector<double>> zeros(kSequences.size(),
                                         std::vector<double>(kTime * kClasses));
  ASSERT_TRUE(exe.run(inputsFor(zeros), got).ok());
  EXPECT_EQ(got.outputs[1].second.at(2), kNegInf); // CTC [1, 1] in 2 frames
  EXPECT_EQ(got.outputs[1].second.at(4), kNegInf);
  EXPECT_EQ(got.outputs[3].second.at(4), kNegInf); // RNA 3 labels, 2 frames
  EXPECT_EQ(got.outputs[3].second.at(2), 0.0);     // RNA U = T: feasible
}

TEST(ViterbiAlignTest, TiesFollowTheRuleAsTheReferenceDoes) {
  Executable exe = compileOrDie(kSource, /*pack=*/false);
  std::mt19937 rng(9);
  // Exact in float32 and in every sum of a few of them: ties are exact.
  const double kLevels[] = {-0.5, -1.0, -1.5};
  for (int round = 0; round < 30; ++round) {
    SCOPED_TRACE("round " + std::to_string(round));
    std::vector<std::vector<double>> scores(kSequences.size());
    for (auto &s : scores) {
      s.resize(kTime * kClasses);
      for (double &v : s)
        v = kLevels[rng() % 3];
    }
    RunInputs inputs = inputsFor(scores);
    RunResult got;
    ASSERT_TRUE(exe.run(inputs, got).ok());
    reference::Result want;
    absl::Status status = reference::evaluate(kSource, "g", inputs, want);
    ASSERT_TRUE(status.ok()) << status.message();
    // From log-probs only: from logits, paths that tie exactly in
    // log-probs differ by the rounding of their normalized sums, in
    // float32 here and float64 in the reference, so ties are not exact.
    for (int result : {0, 2}) {
      const reference::Array &path = want.outputs[result];
      const reference::Array &score = want.outputs[result + 1];
      for (size_t b = 0; b < kSequences.size(); ++b) {
        std::vector<int64_t> wantPath;
        for (int64_t t = 0; t < kSequences[b].frames; ++t)
          wantPath.push_back((int64_t)path.data[b * kTime + t]);
        if (score.data[b] == kNegInf)
          wantPath.clear();
        expectPath(got, result, b, wantPath, score.data[b], 0.0);
        // The reference's score is the brute-force best.
        EXPECT_EQ(score.data[b],
                  bruteForce(scores[b], kSequences[b], result == 2).second);
      }
    }
  }
}

/// A prior: each class's value is subtracted from its log-probability in
/// the search, and the score is the chosen path's log-probability. Here a
/// prior that favours the labels over the blank (as a scaled log prior
/// of a blank-heavy model does) against brute force, and on exact values
/// against the reference evaluator.
TEST(ViterbiAlignTest, PriorShiftsTheSearchNotTheScore) {
  const char *source = R"(
nn.parameter @prior : !nn.tensor<[3], f32>
nn.graph @g(%x: !nn.tensor<[B, T, 3], f32>, %y: !nn.tensor<[B, U], i32>)
    -> (!nn.tensor<[B, T], i32>, !nn.tensor<[B], f32>,
        !nn.tensor<[B, T], i32>, !nn.tensor<[B], f32>,
        !nn.tensor<[B, T], i32>, !nn.tensor<[B], f32>)
    dims [B: batch, T: seq(B), U: seq(B)] {
  %p = nn.param_ref @prior : !nn.tensor<[3], f32>
  %ca, %cs = nn.viterbi_align %x, %y from log_probs topology ctc blank 0 prior %p : !nn.tensor<[B, T, 3], f32>, !nn.tensor<[B, U], i32>, !nn.tensor<[3], f32>
  %ra, %rs = nn.viterbi_align %x, %y from log_probs topology rna blank 0 prior %p : !nn.tensor<[B, T, 3], f32>, !nn.tensor<[B, U], i32>, !nn.tensor<[3], f32>
  %la, %ls = nn.viterbi_align %x, %y from logits topology ctc blank 0 prior %p : !nn.tensor<[B, T, 3], f32>, !nn.tensor<[B, U], i32>, !nn.tensor<[3], f32>
  nn.return %ca, %cs, %ra, %rs, %la, %ls : !nn.tensor<[B, T], i32>, !nn.tensor<[B], f32>, !nn.tensor<[B, T], i32>, !nn.tensor<[B], f32>, !nn.tensor<[B, T], i32>, !nn.tensor<[B], f32>
}
)";
  Executable exe = compileOrDie(source, /*pack=*/false);
  std::mt19937 rng(21);
  const std::vector<double> prior = {-0.25, -2.0, -1.5};
  Tensor priorTensor = Tensor::of<float>(
      DType::f32, {3}, std::vector<float>(prior.begin(), prior.end()));
  int changed = 0;
  for (int round = 0; round < 20; ++round) {
    SCOPED_TRACE("round " + std::to_string(round));
    std::vector<std::vector<double>> scores = randomScores(rng);
    RunInputs inputs = inputsFor(scores);
    inputs.parameters["prior"] = priorTensor;
    RunResult got;
    absl::Status status = exe.run(inputs, got);
    ASSERT_TRUE(status.ok()) << status.message();
    for (size_t b = 0; b < kSequences.size(); ++b) {
      auto [ctc, ctcScore] = bruteForce(scores[b], kSequences[b], false, prior);
      expectPath(got, 0, b, ctc, ctcScore, 1e-5);
      changed += ctc != bruteForce(scores[b], kSequences[b], false).first;
      auto [rna, rnaScore] = bruteForce(scores[b], kSequences[b], true, prior);
      expectPath(got, 2, b, rna, rnaScore, 1e-5);
      auto [fromLogits, logitsScore] =
          bruteForce(logSoftmax(scores[b]), kSequences[b], false, prior);
      expectPath(got, 4, b, fromLogits, logitsScore, 1e-5);
    }
    // Exact values: the reference's programme, tie for tie.
    for (auto &s : scores)
      for (double &v : s)
        v = -0.5 * (1 + rng() % 3);
    inputs = inputsFor(scores);
    inputs.parameters["prior"] = priorTensor;
    ASSERT_TRUE(exe.run(inputs, got).ok());
    reference::Result want;
    status = reference::evaluate(source, "g", inputs, want);
    ASSERT_TRUE(status.ok()) << status.message();
    for (int result : {0, 2}) {
      for (size_t b = 0; b < kSequences.size(); ++b) {
        std::vector<int64_t> wantPath;
        for (int64_t t = 0; t < kSequences[b].frames; ++t)
          wantPath.push_back((int64_t)want.outputs[result].data[b * kTime + t]);
        double score = want.outputs[result + 1].data[b];
        if (score == kNegInf)
          wantPath.clear();
        expectPath(got, result, b, wantPath, score, 1e-6);
      }
    }
  }
  // The prior matters: it moved some CTC paths.
  EXPECT_GT(changed, 10);
}

/// Packed scores [N, V] (frames of all sequences back to back) align as
/// the padded ones do: the packed alignment unpacked is the padded one,
/// bit for bit, and so are the scores.
TEST(ViterbiAlignTest, PackedMatchesPadded) {
  const char *source = R"(
nn.graph @g(%x: !nn.tensor<[B, T, 3], f32>, %y: !nn.tensor<[B, U], i32>)
    -> (!nn.tensor<[B, T], i32>, !nn.tensor<[B], f32>,
        !nn.tensor<[B, T], i32>, !nn.tensor<[B], f32>,
        !nn.tensor<[B, T], i32>, !nn.tensor<[B], f32>,
        !nn.tensor<[B, T], i32>, !nn.tensor<[B], f32>)
    dims [B: batch, T: seq(B), U: seq(B), N: packed(B, T)] {
  %p = nn.pack %x : !nn.tensor<[B, T, 3], f32> -> !nn.tensor<[N, 3], f32>
  %ca, %cs = nn.viterbi_align %p, %y from log_probs topology ctc blank 0 : !nn.tensor<[N, 3], f32>, !nn.tensor<[B, U], i32>
  %ra, %rs = nn.viterbi_align %p, %y from log_probs topology rna blank 0 : !nn.tensor<[N, 3], f32>, !nn.tensor<[B, U], i32>
  %la, %ls = nn.viterbi_align %p, %y from logits topology ctc blank 0 : !nn.tensor<[N, 3], f32>, !nn.tensor<[B, U], i32>
  %ma, %ms = nn.viterbi_align %p, %y from logits topology rna blank 0 : !nn.tensor<[N, 3], f32>, !nn.tensor<[B, U], i32>
  %uc = nn.unpack %ca : !nn.tensor<[N], i32> -> !nn.tensor<[B, T], i32>
  %ur = nn.unpack %ra : !nn.tensor<[N], i32> -> !nn.tensor<[B, T], i32>
  %ul = nn.unpack %la : !nn.tensor<[N], i32> -> !nn.tensor<[B, T], i32>
  %um = nn.unpack %ma : !nn.tensor<[N], i32> -> !nn.tensor<[B, T], i32>
  nn.return %uc, %cs, %ur, %rs, %ul, %ls, %um, %ms : !nn.tensor<[B, T], i32>, !nn.tensor<[B], f32>, !nn.tensor<[B, T], i32>, !nn.tensor<[B], f32>, !nn.tensor<[B, T], i32>, !nn.tensor<[B], f32>, !nn.tensor<[B, T], i32>, !nn.tensor<[B], f32>
}
)";
  Executable packed = compileOrDie(source, /*pack=*/false);
  Executable padded = compileOrDie(kSource, /*pack=*/false);
  std::mt19937 rng(13);
  std::uniform_real_distribution<double> uniform(-3.0, 0.0);
  for (int round = 0; round < 5; ++round) {
    std::vector<std::vector<double>> scores(kSequences.size());
    for (auto &s : scores) {
      s.resize(kTime * kClasses);
      for (double &v : s)
        v = round % 2 ? uniform(rng) : -0.5 * (1 + rng() % 3);
    }
    RunInputs inputs = inputsFor(scores);
    RunResult a, b;
    ASSERT_TRUE(packed.run(inputs, a).ok());
    ASSERT_TRUE(padded.run(inputs, b).ok());
    for (int result = 0; result < 8; ++result) {
      const Tensor &x = a.outputs[result].second, &y = b.outputs[result].second;
      ASSERT_EQ(x.shape(), y.shape());
      for (int64_t i = 0; i < x.numElements(); ++i) {
        // Unpack fills padded frames with 0, the padded op with -1.
        int64_t b = i / kTime, t = i % kTime;
        if (result % 2 == 0 && t >= kSequences[b].frames)
          continue;
        EXPECT_EQ(x.at(i), y.at(i)) << "result " << result << ", " << i;
      }
    }
  }
}

/// A batch without any labels (U = 0 everywhere; the runtime still wants
/// a padded size of at least 1, so the state graphs always have a label
/// to read and select away). Every frame aligns to the blank, and the CTC
/// loss is minus the blanks' log-probabilities.
TEST(ViterbiAlignTest, ABatchWithoutLabelsAlignsToBlanks) {
  const char *source = R"(
nn.graph @g(%x: !nn.tensor<[B, T, 3], f32>, %y: !nn.tensor<[B, U], i32>)
    -> (!nn.tensor<[B, T], i32>, !nn.tensor<[B], f32>,
        !nn.tensor<[B, T], i32>, !nn.tensor<[B], f32>, !nn.tensor<[B], f32>)
    dims [B: batch, T: seq(B), U: seq(B)] {
  %ca, %cs = nn.viterbi_align %x, %y from log_probs topology ctc blank 0 : !nn.tensor<[B, T, 3], f32>, !nn.tensor<[B, U], i32>
  %ra, %rs = nn.viterbi_align %x, %y from log_probs topology rna blank 0 : !nn.tensor<[B, T, 3], f32>, !nn.tensor<[B, U], i32>
  %l = nn.ctc_loss %x, %y from log_probs blank 0 : !nn.tensor<[B, T, 3], f32>, !nn.tensor<[B, U], i32>
  nn.return %ca, %cs, %ra, %rs, %l : !nn.tensor<[B, T], i32>, !nn.tensor<[B], f32>, !nn.tensor<[B, T], i32>, !nn.tensor<[B], f32>, !nn.tensor<[B], f32>
}
)";
  Executable exe = compileOrDie(source, /*pack=*/false);
  RunInputs inputs;
  inputs.lengths["T"] = {3, 0};
  inputs.lengths["U"] = {0, 0};
  std::vector<float> x(2 * 3 * 3, -2.0f);
  for (int t = 0; t < 3; ++t)
    x[t * 3] = -0.25f * (t + 1); // the blanks of sequence 0
  inputs.inputs["x"] = Tensor::of<float>(DType::f32, {2, 3, 3}, x);
  inputs.inputs["y"] = Tensor::of<int32_t>(DType::i32, {2, 1}, {2, 1});
  RunResult got;
  absl::Status status = exe.run(inputs, got);
  ASSERT_TRUE(status.ok()) << status.message();
  for (int result : {0, 2}) {
    const Tensor &path = got.outputs[result].second;
    for (int t = 0; t < 3; ++t) {
      EXPECT_EQ(path.data<int32_t>()[t], 0) << result << ", frame " << t;
      EXPECT_EQ(path.data<int32_t>()[3 + t], -1) << result << ", frame " << t;
    }
    EXPECT_EQ(got.outputs[result + 1].second.at(0), -1.5);
    EXPECT_EQ(got.outputs[result + 1].second.at(1), 0.0);
  }
  EXPECT_NEAR(got.outputs[4].second.at(0), 1.5, 1e-6);
  EXPECT_EQ(got.outputs[4].second.at(1), 0.0);
}

/// The rule itself, on a case small enough to read: CTC, one label "1" in
/// three frames whose scores are all equal. Paths 1 - -, - 1 -, - - 1,
/// 1 1 -, - 1 1, 1 1 1 tie; emitting as early as possible picks 1 - -.
TEST(ViterbiAlignTest, TiesEmitEachLabelAsEarlyAsPossible) {
  const char *source = R"(
nn.graph @g(%x: !nn.tensor<[B, T, 3], f32>, %y: !nn.tensor<[B, U], i32>)
    -> (!nn.tensor<[B, T], i32>, !nn.tensor<[B], f32>)
    dims [B: batch, T: seq(B), U: seq(B)] {
  %a, %s = nn.viterbi_align %x, %y from log_probs topology ctc blank 0 : !nn.tensor<[B, T, 3], f32>, !nn.tensor<[B, U], i32>
  nn.return %a, %s : !nn.tensor<[B, T], i32>, !nn.tensor<[B], f32>
}
)";
  Executable exe = compileOrDie(source, /*pack=*/false);
  RunInputs inputs;
  inputs.lengths["T"] = {3};
  inputs.lengths["U"] = {1};
  inputs.inputs["x"] =
      Tensor::of<float>(DType::f32, {1, 3, 3}, std::vector<float>(9, -1.0f));
  inputs.inputs["y"] = Tensor::of<int32_t>(DType::i32, {1, 1}, {1});
  RunResult got;
  ASSERT_TRUE(exe.run(inputs, got).ok());
  const Tensor &path = got.outputs[0].second;
  EXPECT_EQ(path.data<int32_t>()[0], 1);
  EXPECT_EQ(path.data<int32_t>()[1], 0);
  EXPECT_EQ(path.data<int32_t>()[2], 0);
  EXPECT_EQ(got.outputs[1].second.at(0), -3.0);
}

} // namespace
