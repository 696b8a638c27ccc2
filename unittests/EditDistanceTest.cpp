//===- EditDistanceTest.cpp - nn.edit_distance and eval_only losses -------===//
//
// nn.edit_distance on hand-made sequences whose counts are worked out
// here (the tie rule of the op's description decides the split), in the
// reference evaluator and compiled; on random sequences over a small
// alphabet (many ties) with garbage in the padding, compiled against the
// reference and the totals against the host scorer nn::editDistance (an
// independent implementation with another tie rule: only the totals must
// agree). The same with `words`: hand-made sentences, and random ones
// against the word error rate of the host scorer over a character
// vocabulary's words. Then a greedy CTC decoding scored by a loss marked
// eval_only: decoder and scoring gone from the train step, which still trains
// CTC, and the label error rate reported by the evaluation graph.
//
//===----------------------------------------------------------------------===//

#include "ExecutionUtil.h"

#include "nn/ErrorRate.h"
#include "nn/Train.h"

#include <random>

using namespace nn;
using namespace nn::testing;

namespace {

const char *kSource = R"(
nn.graph @g(%hyp: !nn.tensor<[B, Y], i32>, %ref: !nn.tensor<[B, U], i32>)
    -> (!nn.tensor<[B], f32>, !nn.tensor<[B], f32>, !nn.tensor<[B, 3], i32>)
    dims [B: batch, Y: seq(B), U: seq(B)] {
  %e, %n, %c = nn.edit_distance %hyp, %ref : !nn.tensor<[B, Y], i32>, !nn.tensor<[B, U], i32>
  nn.mark_loss %e, %n as "ler" normalize custom as_error : !nn.tensor<[B], f32>, !nn.tensor<[B], f32>
  nn.return %e, %n, %c : !nn.tensor<[B], f32>, !nn.tensor<[B], f32>, !nn.tensor<[B, 3], i32>
}
)";

/// A hypothesis, its reference, and the counts the op's tie rule gives
/// (worked out by hand from the description).
struct HandCase {
  std::string hyp, ref;
  int64_t substitutions, insertions, deletions;
};

const std::vector<HandCase> kHandCases{
    // k -> s and e -> i substituted, g inserted.
    {"sitting", "kitten", 2, 1, 0},
    {"abc", "abc", 0, 0, 0},
    {"", "abc", 0, 0, 3}, // an empty hypothesis: all deleted
    {"ab", "", 0, 2, 0},  // an empty reference: all inserted
    {"", "", 0, 0, 0},
    // Two substitutions or a deletion, a match and an insertion: the
    // diagonal goes first.
    {"ab", "ba", 2, 0, 0},
    // Minimal alignments (2, 0, 1) and (0, 1, 2): at the cells where
    // they part, the deletion goes before the insertion.
    {"aba", "bcab", 2, 0, 1},
    {"a", "aa", 0, 0, 1},
    {"aa", "a", 0, 1, 0},
};

/// The padded batch of `cases` (labels are the letters' codes); every
/// padded position holds `garbage(b, i)`.
template <typename Garbage>
RunInputs batchOf(const std::vector<HandCase> &cases, Garbage garbage) {
  int64_t batch = cases.size(), hypPad = 1, refPad = 1;
  for (const HandCase &c : cases) {
    hypPad = std::max<int64_t>(hypPad, c.hyp.size());
    refPad = std::max<int64_t>(refPad, c.ref.size());
  }
  Tensor hyp(DType::i32, {batch, hypPad}), ref(DType::i32, {batch, refPad});
  RunInputs inputs;
  for (int64_t b = 0; b < batch; ++b) {
    const HandCase &c = cases[b];
    for (int64_t i = 0; i < hypPad; ++i)
      hyp.data<int32_t>()[b * hypPad + i] =
          i < (int64_t)c.hyp.size() ? c.hyp[i] : garbage(b, i);
    for (int64_t j = 0; j < refPad; ++j)
      ref.data<int32_t>()[b * refPad + j] =
          j < (int64_t)c.ref.size() ? c.ref[j] : garbage(b, j);
    inputs.lengths["Y"].push_back((int32_t)c.hyp.size());
    inputs.lengths["U"].push_back((int32_t)c.ref.size());
  }
  inputs.inputs["hyp"] = hyp;
  inputs.inputs["ref"] = ref;
  return inputs;
}

/// Labels that occur in the cases: read by mistake, they would match.
int32_t letterGarbage(int64_t b, int64_t i) { return "abk"[(b + i) % 3]; }

/// The outputs of one run as arrays of doubles: errors, reference lengths,
/// counts.
struct Outputs {
  std::vector<double> errors, lengths, counts;
};

Outputs fromRun(const RunResult &result) {
  Outputs out;
  std::vector<double> *to[] = {&out.errors, &out.lengths, &out.counts};
  for (size_t k = 0; k < 3; ++k) {
    const Tensor &tensor = result.outputs.at(k).second;
    for (int64_t i = 0; i < tensor.numElements(); ++i)
      to[k]->push_back(tensor.at(i));
  }
  return out;
}

Outputs fromReference(const reference::Result &result) {
  return {result.outputs.at(0).data, result.outputs.at(1).data,
          result.outputs.at(2).data};
}

void expectHandCounts(const Outputs &out) {
  ASSERT_EQ(out.errors.size(), kHandCases.size());
  ASSERT_EQ(out.counts.size(), 3 * kHandCases.size());
  for (size_t b = 0; b < kHandCases.size(); ++b) {
    const HandCase &c = kHandCases[b];
    SCOPED_TRACE("hyp '" + c.hyp + "', ref '" + c.ref + "'");
    EXPECT_EQ(out.errors[b], c.substitutions + c.insertions + c.deletions);
    EXPECT_EQ(out.lengths[b], (double)c.ref.size());
    EXPECT_EQ(out.counts[3 * b], c.substitutions);
    EXPECT_EQ(out.counts[3 * b + 1], c.insertions);
    EXPECT_EQ(out.counts[3 * b + 2], c.deletions);
  }
}

/// 3 + 0 + 3 + 2 + 0 + 2 + 3 + 1 + 1 errors over 6 + 3 + 3 + 0 + 0 + 2 +
/// 4 + 2 + 1 reference labels.
constexpr double kHandErrors = 15, kHandReferenceLabels = 21;

TEST(EditDistanceTest, ReferenceGivesTheHandCounts) {
  RunInputs inputs = batchOf(kHandCases, letterGarbage);
  reference::Result result;
  absl::Status status = reference::evaluate(kSource, "g", inputs, result);
  ASSERT_TRUE(status.ok()) << status.message();
  expectHandCounts(fromReference(result));
  const reference::Loss &ler = result.losses.at("ler");
  EXPECT_EQ(ler.sum, kHandErrors);
  EXPECT_EQ(ler.normalization, kHandReferenceLabels);
}

TEST(EditDistanceTest, CompiledGivesTheHandCountsAndTheErrorRate) {
  for (bool pack : {false, true}) {
    SCOPED_TRACE(pack ? "packed" : "padded");
    Executable exe = compileOrDie(kSource, pack);
    RunResult result;
    absl::Status status = exe.run(batchOf(kHandCases, letterGarbage), result);
    ASSERT_TRUE(status.ok()) << status.message();
    expectHandCounts(fromRun(result));
    ASSERT_EQ(result.losses.size(), 1u);
    const LossValue &ler = result.losses[0];
    EXPECT_EQ(ler.name, "ler");
    EXPECT_TRUE(ler.asError);
    EXPECT_EQ(ler.sum, kHandErrors);
    EXPECT_EQ(ler.normalization, kHandReferenceLabels);
    // mark_loss %e, %n ... normalize custom: sum errors / sum ref lengths.
    EXPECT_NEAR(ler.normalized, kHandErrors / kHandReferenceLabels, 1e-12);
  }
}

TEST(EditDistanceTest, RandomSequencesMatchReferenceAndHostScorer) {
  Executable exe = compileOrDie(kSource, false);
  std::mt19937 rng(29);
  // Sequences whose split the host scorer's rule (fewest substitutions)
  // gives differently: where the tie rule decides the counts.
  int splitByTies = 0;
  for (int round = 0; round < 100; ++round) {
    SCOPED_TRACE("round " + std::to_string(round));
    // Three labels: matches and ties everywhere. Lengths from 0, so empty
    // hypotheses and references occur.
    std::vector<HandCase> cases(1 + rng() % 16);
    for (HandCase &c : cases) {
      for (size_t n = rng() % 13; c.hyp.size() < n;)
        c.hyp.push_back("abc"[rng() % 3]);
      for (size_t n = rng() % 13; c.ref.size() < n;)
        c.ref.push_back("abc"[rng() % 3]);
    }
    RunInputs inputs = batchOf(
        cases, [&](int64_t, int64_t) { return (int32_t) "abc"[rng() % 3]; });
    RunResult result;
    absl::Status status = exe.run(inputs, result);
    ASSERT_TRUE(status.ok()) << status.message();
    reference::Result want;
    status = reference::evaluate(kSource, "g", inputs, want);
    ASSERT_TRUE(status.ok()) << status.message();
    Outputs got = fromRun(result), expected = fromReference(want);
    EXPECT_EQ(got.errors, expected.errors);
    EXPECT_EQ(got.lengths, expected.lengths);
    EXPECT_EQ(got.counts, expected.counts);
    for (size_t b = 0; b < cases.size(); ++b) {
      std::vector<int32_t> hyp(cases[b].hyp.begin(), cases[b].hyp.end());
      std::vector<int32_t> ref(cases[b].ref.begin(), cases[b].ref.end());
      EditCounts host = editDistance(hyp, ref);
      EXPECT_EQ(got.errors[b], (double)host.errors())
          << "hyp '" << cases[b].hyp << "', ref '" << cases[b].ref << "'";
      splitByTies += got.counts[3 * b] != host.substitutions;
    }
  }
  EXPECT_GT(splitByTies, 0);
}

// What the op's description says of the host scorer: the same total, the
// split with the fewest substitutions.
TEST(EditDistanceTest, HostScorerSplitsTiesByFewestSubstitutions) {
  std::vector<int32_t> hyp{'a', 'b', 'a'}, ref{'b', 'c', 'a', 'b'};
  EditCounts host = editDistance(hyp, ref);
  EXPECT_EQ(host.substitutions, 0);
  EXPECT_EQ(host.insertions, 1);
  EXPECT_EQ(host.deletions, 2);
}

//===----------------------------------------------------------------------===//
// Words
//===----------------------------------------------------------------------===//

/// The graph of kSource comparing words separated by spaces (label 32).
const char *kWordSource = R"(
nn.graph @g(%hyp: !nn.tensor<[B, Y], i32>, %ref: !nn.tensor<[B, U], i32>)
    -> (!nn.tensor<[B], f32>, !nn.tensor<[B], f32>, !nn.tensor<[B, 3], i32>)
    dims [B: batch, Y: seq(B), U: seq(B)] {
  %e, %n, %c = nn.edit_distance %hyp, %ref words separator 32 : !nn.tensor<[B, Y], i32>, !nn.tensor<[B, U], i32>
  nn.mark_loss %e, %n as "wer" normalize custom as_error : !nn.tensor<[B], f32>, !nn.tensor<[B], f32>
  nn.return %e, %n, %c : !nn.tensor<[B], f32>, !nn.tensor<[B], f32>, !nn.tensor<[B, 3], i32>
}
)";

/// Word counts worked out by hand; `words` is the number of reference
/// words.
struct WordCase {
  HandCase labels;
  int64_t words;
};

const std::vector<WordCase> kWordCases{
    {{"the cat sat", "the cat sat", 0, 0, 0}, 3},
    // Runs of separators are one boundary; separators at the ends bound
    // nothing.
    {{"  the   cat ", "the cat", 0, 0, 0}, 2},
    {{"the bat sat", "the cat sat", 1, 0, 0}, 3},
    {{"the cat", " the cat sat", 0, 0, 1}, 3},
    {{"the cat sat on", "the cat sat", 0, 1, 0}, 3},
    {{"", "a b", 0, 0, 2}, 2},
    {{"   ", "", 0, 0, 0}, 0},
    {{"a b", "   ", 0, 2, 0}, 0},
    // One word against two: the diagonal first (a substitution), then the
    // deletion of "a".
    {{"ab", "a b", 1, 0, 1}, 2},
    // A prefix of a word is another word.
    {{"ca cat", "cat cat", 1, 0, 0}, 2},
};

std::vector<HandCase> labelsOf(const std::vector<WordCase> &cases) {
  std::vector<HandCase> labels;
  for (const WordCase &c : cases)
    labels.push_back(c.labels);
  return labels;
}

/// Separators and letters of the cases: read by mistake, they would
/// split or match words.
int32_t separatorGarbage(int64_t b, int64_t i) { return " at"[(b + i) % 3]; }

void expectWordCounts(const Outputs &out) {
  ASSERT_EQ(out.errors.size(), kWordCases.size());
  for (size_t b = 0; b < kWordCases.size(); ++b) {
    const HandCase &c = kWordCases[b].labels;
    SCOPED_TRACE("hyp '" + c.hyp + "', ref '" + c.ref + "'");
    EXPECT_EQ(out.errors[b], c.substitutions + c.insertions + c.deletions);
    EXPECT_EQ(out.lengths[b], (double)kWordCases[b].words);
    EXPECT_EQ(out.counts[3 * b], c.substitutions);
    EXPECT_EQ(out.counts[3 * b + 1], c.insertions);
    EXPECT_EQ(out.counts[3 * b + 2], c.deletions);
  }
}

TEST(EditDistanceTest, WordsReferenceGivesTheHandCounts) {
  reference::Result result;
  absl::Status status = reference::evaluate(
      kWordSource, "g", batchOf(labelsOf(kWordCases), separatorGarbage),
      result);
  ASSERT_TRUE(status.ok()) << status.message();
  expectWordCounts(fromReference(result));
}

TEST(EditDistanceTest, WordsCompiledGiveTheHandCountsAndTheWordErrorRate) {
  // 0 + 0 + 1 + 1 + 1 + 2 + 0 + 2 + 2 + 1 errors over 3 + 2 + 3 + 3 + 3 +
  // 2 + 0 + 0 + 2 + 2 reference words.
  constexpr double kErrors = 10, kWords = 20;
  for (bool pack : {false, true}) {
    SCOPED_TRACE(pack ? "packed" : "padded");
    Executable exe = compileOrDie(kWordSource, pack);
    RunResult result;
    absl::Status status =
        exe.run(batchOf(labelsOf(kWordCases), separatorGarbage), result);
    ASSERT_TRUE(status.ok()) << status.message();
    expectWordCounts(fromRun(result));
    ASSERT_EQ(result.losses.size(), 1u);
    EXPECT_EQ(result.losses[0].sum, kErrors);
    EXPECT_EQ(result.losses[0].normalization, kWords);
  }
}

// Labels 0, 1, 2 spelled by the character vocabulary "a", "▁", "b": the
// op with separator 1 against the word error rate nn-decode --vocab
// computes (the host scorer over the vocabulary's words), on random
// sequences full of separator runs, with garbage in the padding.
TEST(EditDistanceTest, WordsMatchReferenceAndTheVocabularyWordErrors) {
  const char *source = R"(
nn.graph @g(%hyp: !nn.tensor<[B, Y], i32>, %ref: !nn.tensor<[B, U], i32>)
    -> (!nn.tensor<[B], f32>, !nn.tensor<[B], f32>, !nn.tensor<[B, 3], i32>)
    dims [B: batch, Y: seq(B), U: seq(B)] {
  %e, %n, %c = nn.edit_distance %hyp, %ref words separator 1 : !nn.tensor<[B, Y], i32>, !nn.tensor<[B, U], i32>
  nn.return %e, %n, %c : !nn.tensor<[B], f32>, !nn.tensor<[B], f32>, !nn.tensor<[B, 3], i32>
})";
  absl::StatusOr<Vocabulary> vocabulary =
      Vocabulary::fromTokens({"a", "\u2581", "b"}, "test vocabulary");
  ASSERT_TRUE(vocabulary.ok()) << vocabulary.status().message();
  Executable exe = compileOrDie(source, false);
  std::mt19937 rng(31);
  for (int round = 0; round < 60; ++round) {
    SCOPED_TRACE("round " + std::to_string(round));
    std::vector<HandCase> cases(1 + rng() % 12);
    for (HandCase &c : cases) {
      for (size_t n = rng() % 17; c.hyp.size() < n;)
        c.hyp.push_back((char)(rng() % 3));
      for (size_t n = rng() % 17; c.ref.size() < n;)
        c.ref.push_back((char)(rng() % 3));
    }
    RunInputs inputs =
        batchOf(cases, [&](int64_t, int64_t) { return (int32_t)(rng() % 3); });
    RunResult result;
    absl::Status status = exe.run(inputs, result);
    ASSERT_TRUE(status.ok()) << status.message();
    reference::Result want;
    status = reference::evaluate(source, "g", inputs, want);
    ASSERT_TRUE(status.ok()) << status.message();
    Outputs got = fromRun(result), expected = fromReference(want);
    EXPECT_EQ(got.errors, expected.errors);
    EXPECT_EQ(got.lengths, expected.lengths);
    EXPECT_EQ(got.counts, expected.counts);
    auto wordsOf = [&](const std::string &labels) {
      std::vector<int32_t> ids(labels.begin(), labels.end());
      absl::StatusOr<std::vector<std::string>> words = vocabulary->words(ids);
      EXPECT_TRUE(words.ok()) << words.status().message();
      return words.value_or(std::vector<std::string>{});
    };
    for (size_t b = 0; b < cases.size(); ++b) {
      std::vector<std::string> hyp = wordsOf(cases[b].hyp);
      std::vector<std::string> ref = wordsOf(cases[b].ref);
      EXPECT_EQ(got.errors[b], (double)editDistance(hyp, ref).errors())
          << "batch row " << b;
      EXPECT_EQ(got.lengths[b], (double)ref.size()) << "batch row " << b;
    }
  }
}

/// A CTC model whose greedy decoding is scored against the labels,
/// eval_only.
const char *kEvalOnlyModel = R"(
nn.parameter @w : !nn.tensor<[4, 3], f32>
nn.graph @g(%x: !nn.tensor<[B, T, 3], f32>, %labels: !nn.tensor<[B, U], i32>)
    dims [B: batch, T: seq(B), U: seq(B), Y: seq(B) computed] {
  %w = nn.param_ref @w : !nn.tensor<[4, 3], f32>
  %l = nn.linear %x, %w : !nn.tensor<[B, T, 3], f32>, !nn.tensor<[4, 3], f32>
  %ctc = nn.ctc_loss %l, %labels from logits blank 0 : !nn.tensor<[B, T, 4], f32>, !nn.tensor<[B, U], i32>
  nn.mark_loss %ctc as "ctc" normalize per_sequence : !nn.tensor<[B], f32>
  %y, %s = nn.ctc_greedy_decode %l from logits blank 0 : !nn.tensor<[B, T, 4], f32> -> !nn.tensor<[B, Y], i32>, !nn.tensor<[B], f32>
  %e, %n, %c = nn.edit_distance %y, %labels : !nn.tensor<[B, Y], i32>, !nn.tensor<[B, U], i32>
  nn.mark_loss %e, %n as "ler" normalize custom as_error eval_only : !nn.tensor<[B], f32>, !nn.tensor<[B], f32>
  nn.return
})";

RunInputs evalOnlyBatch() {
  RunInputs inputs;
  inputs.inputs["x"] = Tensor::of<float>(
      DType::f32, {2, 4, 3}, {1,    0,  -1, 2, 0.5f, 1, 0, -2, 2, 1, 1, 0,
                              0.5f, -1, 1,  3, 0,    2, 9, 9,  9, 9, 9, 9});
  inputs.inputs["labels"] =
      Tensor::of<int32_t>(DType::i32, {2, 2}, {1, 3, 2, 7});
  inputs.lengths["T"] = {4, 2};
  inputs.lengths["U"] = {2, 1};
  return inputs;
}

std::vector<std::string> lossNames(const Manifest &manifest) {
  std::vector<std::string> names;
  for (const LossInfo &loss : manifest.losses)
    names.push_back(loss.name);
  return names;
}

bool declaresComputedDim(const Manifest &manifest) {
  for (const DimInfo &dim : manifest.dims)
    if (dim.computed)
      return true;
  return false;
}

TEST(EditDistanceTest, EvalOnlyLossLeavesTheTrainStep) {
  CompileOptions options;
  options.grads = options.training = options.trainStep = true;
  // The decoder, its computed dim and the scoring are gone from the step.
  Executable step = compileOrDie(kEvalOnlyModel, options);
  EXPECT_EQ(lossNames(step.manifest()), std::vector<std::string>{"ctc"});
  EXPECT_FALSE(declaresComputedDim(step.manifest()));
  TrainState state;
  ASSERT_TRUE(initializeParameters(step.manifest(), 5, state.parameters).ok());
  StepReport report;
  absl::Status status =
      runTrainStep(step, evalOnlyBatch(), 0.1, 1, state, report);
  ASSERT_TRUE(status.ok()) << status.message();
  EXPECT_TRUE(report.applied);
  ASSERT_EQ(report.losses.size(), 1u);
  EXPECT_EQ(report.losses[0].name, "ctc");
  EXPECT_GT(report.gradNorm, 0);

  // The evaluation graph decodes and reports the label error rate over
  // the 2 + 1 reference labels, as the reference evaluator does.
  Executable eval = compileOrDie(kEvalOnlyModel, /*pack=*/true);
  EXPECT_EQ(lossNames(eval.manifest()),
            (std::vector<std::string>{"ctc", "ler"}));
  EXPECT_TRUE(declaresComputedDim(eval.manifest()));
  RunInputs inputs = evalOnlyBatch();
  for (const auto &[name, tensor] : state.parameters)
    if (!isOptimizerState(name))
      inputs.parameters[name] = tensor;
  RunResult result;
  status = eval.run(inputs, result);
  ASSERT_TRUE(status.ok()) << status.message();
  reference::Result want;
  status = reference::evaluate(kEvalOnlyModel, "g", inputs, want);
  ASSERT_TRUE(status.ok()) << status.message();
  ASSERT_EQ(result.losses.size(), 2u);
  const LossValue &ler = result.losses[1];
  EXPECT_EQ(ler.name, "ler");
  EXPECT_TRUE(ler.asError);
  EXPECT_EQ(ler.normalization, 3);
  EXPECT_EQ(ler.sum, want.losses.at("ler").sum);
  EXPECT_NEAR(ler.normalized, ler.sum / 3, 1e-12);

  // Asked to train it anyway: an error that says why.
  options.trainedLosses = {{"ctc"}, {"ler"}};
  absl::StatusOr<Artifact> trained =
      compileSource(kEvalOnlyModel, "model.mlir", options);
  ASSERT_FALSE(trained.ok());
  EXPECT_EQ(trained.status().message(),
            "loss 'ler' is marked eval_only: it is reported by evaluation, "
            "never trained");
}

} // namespace
