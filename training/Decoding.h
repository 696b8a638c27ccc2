//===- training/Decoding.h - hypotheses from a graph's results --*- C++ -*-===//
//
// What nn-decode (and, later, a decode stage) reads from a decoding graph:
// where its hypotheses, their lengths and their scores are among the
// manifest's outputs, each batch row's hypothesis out of a run's results,
// and how one hypothesis scores against its reference (nn/ErrorRate.h)
// in labels or, through a vocabulary, in words.
//
// A decoding graph returns result0, `[B, Y]` i32: one hypothesis per
// sequence (1-best), valid along Y up to each sequence's length, and
// optionally result1, `[B]` f32 or f64: each hypothesis's score. Y's
// lengths are the graph's output `lengths:Y` when it computes them (a dim
// whose lengths an op computes), else those the batch gives Y (an input's
// sequence dim, or one derived from it); a static Y is every row's full
// length. N-best results (`[B, K, Y]`) are refused for now: a layout of
// another kind will read them.
//
//===----------------------------------------------------------------------===//

#ifndef NN_TRAINING_DECODING_H
#define NN_TRAINING_DECODING_H

#include "nn/ErrorRate.h"
#include "nn/Runtime.h"

#include "absl/status/statusor.h"
#include "absl/types/span.h"

#include <cstdint>
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
};

/// The layout of `manifest`'s results, or an error naming the graph and
/// the result that does not fit: no results, result0 not `[B, Y]` i32
/// (N-best `[B, K, Y]` included, not read yet), result1 not `[B]` f32 or
/// f64, more than two results, or a `lengths:Y` output not `[B]` i32.
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

} // namespace nn::training

#endif // NN_TRAINING_DECODING_H
