//===- training/Decoding.h - hypotheses from a graph's results --*- C++ -*-===//
//
// What nn-decode and a stage file's decode stage read from a decoding
// graph: where its hypotheses, their lengths and their scores are among
// the manifest's outputs, each batch row's hypothesis out of a run's
// results, and how one hypothesis scores against its reference
// (nn/ErrorRate.h) in labels or, through a vocabulary, in words. Both
// decode a dataset through decodeDataset and write what it gives in one
// format (hypothesisJson, summaryJson, errorRateText), so they report the
// same numbers.
//
// A decoding graph returns result0, `[B, Y]` i32: one hypothesis per
// sequence (1-best), valid along Y up to each sequence's length, and
// optionally result1, `[B]` f32 or f64: each hypothesis's score. Y's
// lengths are the graph's output `lengths:Y` when it computes them (a dim
// whose lengths an op computes), else those the batch gives Y (an input's
// sequence dim, or one derived from it); a static Y is every row's full
// length. An N-best graph returns result0 `[B, K, Y]` i32 with K and Y
// computed (`lengths:K` over B, `lengths:Y` over H = flatten(B, K)) and
// optionally result1 `[B, K]`: each sequence's hypotheses, best first; the
// best is the one scored.
//
//===----------------------------------------------------------------------===//

#ifndef NN_TRAINING_DECODING_H
#define NN_TRAINING_DECODING_H

#include "nn/Dataset.h"
#include "nn/ErrorRate.h"
#include "nn/Runtime.h"
#include "nn/Train.h"
#include "support/JsonLine.h"

#include "absl/status/statusor.h"
#include "absl/types/span.h"

#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace nn::training {

/// Where a decoding graph's hypotheses are among its outputs.
struct HypothesisLayout {
  /// The graph, for messages.
  std::string graph;
  /// The output holding the labels: "result0", [B, Y] i32.
  std::string labels;
  /// Axis 1 of `labels`: its dim, or "" when it has a static size
  /// (`staticLength`).
  std::string lengthDim;
  int64_t staticLength = -1;
  /// "lengths:<lengthDim>" when the graph returns Y's lengths; "" when the
  /// batch gives them.
  std::string lengthsOutput;
  /// "result1" when the graph returns a score per hypothesis, else "".
  std::string score;
  /// N-best lists: "lengths:K", the number of hypotheses per sequence
  /// (`lengthsOutput` is then Y's lengths over the flattened batch); ""
  /// for one hypothesis per sequence.
  std::string listLengthsOutput;

  bool isNBest() const { return !listLengthsOutput.empty(); }
};

/// The layout of `manifest`'s results, or an error naming the graph and
/// the result that does not fit: no results, result0 neither `[B, Y]` nor
/// `[B, K, Y]` i32 (an N-best list whose K and Y the graph computes),
/// result1 not `[B]` (`[B, K]`) f32 or f64, more than two results, or a
/// `lengths:` output of another type.
absl::StatusOr<HypothesisLayout> hypothesisLayout(const Manifest &manifest);

/// One hypothesis: its labels and, when the graph returns one, its score.
struct Hypothesis {
  std::vector<int32_t> labels;
  std::optional<double> score;
};

/// The hypotheses of one run, one per batch row: `result` is what the
/// graph returned for a batch whose dims (Executable::validate) are
/// `dims`. Errors: an output the layout names is missing or has another
/// shape, or a length lies outside [0, the padded size of Y].
absl::StatusOr<std::vector<Hypothesis>>
readHypotheses(const HypothesisLayout &layout, const RunResult &result,
               const DimValues &dims);

/// The N-best lists of one run, one per batch row, best first (a
/// one-hypothesis layout gives lists of one). Errors as readHypotheses,
/// and list lengths outside [0, K's padded size].
absl::StatusOr<std::vector<std::vector<Hypothesis>>>
readNBest(const HypothesisLayout &layout, const RunResult &result,
          const DimValues &dims);

/// The units error rates count: labels, or words through a vocabulary.
enum class ErrorUnit { label, word };
const char *toString(ErrorUnit unit);

/// One hypothesis against its reference.
struct Scored {
  /// The edits in `unit`s (editDistance).
  EditCounts counts;
  /// With a vocabulary: the words of each, joined by spaces.
  std::string text, referenceText;
};

/// Scores `hypothesis` against `reference`: in labels without a
/// vocabulary, in words with one (Vocabulary::words). A label outside the
/// vocabulary is an error saying which sequence holds it.
absl::StatusOr<Scored> score(absl::Span<const int32_t> hypothesis,
                             absl::Span<const int32_t> reference,
                             const Vocabulary *vocabulary);

/// An error when two utterances of `dataset` share an id: hypotheses are
/// named by their utterance's id. `who` names the reader in the message
/// ("nn-decode").
absl::Status checkUniqueIds(const Dataset &dataset, const std::string &who);

/// How decodeDataset reads a dataset.
struct DecodeOptions {
  /// Sequences per batch, and padded frames per batch (0: no budget).
  int64_t batchSize = 16, maxFrames = 0;
  /// The dataset's host array of reference labels (loaded with the
  /// dataset, Dataset::HostArray); "" for none. Hypotheses are scored when
  /// the dataset holds it.
  std::string reference;
  /// Words through this vocabulary, or labels when null.
  const Vocabulary *vocabulary = nullptr;
  /// This process's share of the work when `parts` processes decode the
  /// dataset together (the ranks of a data-parallel run): batches i with
  /// i % parts == part, and with part 0 the utterances without frames.
  int part = 0, parts = 1;
};

/// One utterance decoded.
struct DecodedUtterance {
  /// Its index in the dataset, and its id.
  int64_t utterance = 0;
  std::string id;
  /// The best hypothesis (N-best: the first; none at all: empty, with
  /// score -inf when the graph returns scores).
  Hypothesis hypothesis;
  /// With a vocabulary: the hypothesis's words, joined by spaces.
  std::string text;
  /// N-best graphs: every hypothesis, best first, and with a vocabulary
  /// the words of each.
  bool isNBest = false;
  std::vector<Hypothesis> nBest;
  std::vector<std::string> nBestText;
  /// With references: the reference and how the hypothesis scores.
  absl::Span<const int32_t> reference;
  std::optional<Scored> scored;
  /// The utterance has no frames: the graph did not run it, and its
  /// hypothesis is the empty one (score 0 when the graph returns scores;
  /// an N-best list of that hypothesis alone).
  bool withoutFrames = false;
};

/// What a dataset decoded adds up to.
struct DecodeTotals {
  /// Utterances decoded (those without frames the dataset keeps included),
  /// and those the dataset leaves out (nn.keep 0, and without frames when
  /// it does not keep them): no hypothesis, not scored.
  int64_t utterances = 0, leftOut = 0;
  /// Utterances decoded without frames (Dataset::WithoutFrames::keep):
  /// the empty hypothesis, scored like any other (every reference unit a
  /// deletion), but not run through the graph, so the graph's losses do
  /// not count them.
  int64_t withoutFrames = 0;
  /// Whether hypotheses were scored (the dataset holds the references),
  /// and in which unit.
  bool scoring = false;
  ErrorUnit unit = ErrorUnit::label;
  ErrorRateAccumulator errors;
  /// The graph's marked losses summed over the dataset, as nn-train's dev
  /// evaluation sums them.
  LossTotals losses;
};

/// Decodes `dataset` with `executable` (whose results `layout` reads) and
/// `parameters`: in file order, without shuffling or bucketing, in batches
/// of `options`; each hypothesis cut at its length, scored against its
/// reference when there are references, and handed to `each` in dataset
/// order. With several parts, only this part's utterances are decoded and
/// handed on, and the totals' errors and losses are this part's (their
/// counts of utterances are the dataset's). Utterances without frames that the
/// dataset keeps (Dataset::WithoutFrames::keep) are handed on at their place
/// with the empty hypothesis, without running the graph. Errors name the batch
/// ("the batch of utterances 'a' .. 'd': ") or the utterance ("utterance 'a':
/// "); an error `each` returns ends the run.
absl::StatusOr<DecodeTotals> decodeDataset(
    const Executable &executable, const HypothesisLayout &layout,
    const Dataset &dataset, const std::map<std::string, Tensor> &parameters,
    const DecodeOptions &options,
    const std::function<absl::Status(const DecodedUtterance &)> &each);

/// One utterance as a line of nn-decode --json: utt, hyp, score (when the
/// graph gives one), text (with a vocabulary), ref, ref_text (with a
/// vocabulary), errors, ref_len (with references), and for N-best graphs
/// nbest: [{hyp, score, text}, ...], best first (hyp is nbest[0]'s).
support::JsonObject hypothesisJson(const DecodedUtterance &decoded,
                                   bool vocabulary);

/// A dataset's totals as nn-decode --json's summary object holds them:
/// utterances, left_out (when some were), without_frames (when some
/// were), errors, ref_len, error_rate
/// (when defined), unit (when scored), then `losses`.
support::JsonObject summaryJson(const DecodeTotals &totals,
                                const support::JsonObject &losses);

/// "label error rate 7.40% (41 errors / 554 labels, 128 utterances)", or
/// "decoded 128 utterances (no references)".
std::string errorRateText(const DecodeTotals &totals);

} // namespace nn::training

#endif // NN_TRAINING_DECODING_H
