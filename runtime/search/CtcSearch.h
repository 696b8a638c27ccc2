//===- CtcSearch.h - CTC decoding: best path and prefix beam search -------===//
//
// The searches behind the CTC decoding ops, in plain C++ on host memory:
// greedy (best path) decoding and the CTC prefix beam search over
// log-probabilities, batched over sequences of their own lengths, padded
// [B, T, V] or packed [N, V] scores. Scores are accumulated in f64 and
// every order is total (the tie rules below), so a sequence's result does
// not depend on the batch it came in, on its position there, or on the
// number of threads. docs/runtime.md ("CTC search") describes the
// algorithms; SearchAbi.h declares the C entry point artifacts call.
//
//===----------------------------------------------------------------------===//

#ifndef NN_RUNTIME_SEARCH_CTCSEARCH_H
#define NN_RUNTIME_SEARCH_CTCSEARCH_H

#include "absl/status/status.h"
#include "absl/status/statusor.h"

#include <cstdint>
#include <limits>
#include <vector>

namespace nn::runtime {

/// Element type of a score buffer.
enum class ScoreType { f32, f64 };

/// A strided view of per-frame class scores (log-probabilities) of a batch
/// of sequences. Sequence b's class c at frame t (t < lengths[b]) is element
///   start(b) + t * frameStride + c * classStride
/// of `data`, where start(b) = offsets[b] * frameStride for packed scores
/// (`offsets` set: the sequence's first row of [N, V]) and
/// b * sequenceStride for padded ones. Frames at or past a sequence's
/// length are never read: they may hold anything, NaN included.
struct CtcScores {
  const void *data = nullptr;
  ScoreType type = ScoreType::f32;
  int64_t batch = 0;
  /// Rows of the buffer: the padded T, or N when packed (for bounds checks).
  int64_t frames = 0;
  int64_t vocab = 0;
  /// Frames of each sequence, [batch].
  const int32_t *lengths = nullptr;
  /// Packed: first row of each sequence, [batch]; null when padded.
  const int64_t *offsets = nullptr;
  int64_t sequenceStride = 0, frameStride = 0, classStride = 1;

  /// Row-major padded [batch, frames, vocab] scores.
  static CtcScores padded(const float *data, int64_t batch, int64_t frames,
                          int64_t vocab, const int32_t *lengths);
  static CtcScores padded(const double *data, int64_t batch, int64_t frames,
                          int64_t vocab, const int32_t *lengths);
  /// Row-major packed [rows, vocab] scores; `offsets` as above (see
  /// packedOffsets for sequences stored back to back in batch order).
  static CtcScores packed(const float *data, int64_t rows, int64_t vocab,
                          int64_t batch, const int32_t *lengths,
                          const int64_t *offsets);
  static CtcScores packed(const double *data, int64_t rows, int64_t vocab,
                          int64_t batch, const int32_t *lengths,
                          const int64_t *offsets);
};

/// First rows of sequences stored back to back in batch order (the
/// exclusive prefix sums of `lengths`), as nn's packed layout keeps them.
std::vector<int64_t> packedOffsets(const int32_t *lengths, int64_t batch);

/// How the scores of one label sequence's frame-level paths combine.
enum class CtcMerge {
  /// log Σ exp: the prefix probability (standard CTC prefix search).
  sum,
  /// max: the best path per prefix; with beam 1 this is greedy decoding.
  max,
};

/// One decoded label sequence.
struct CtcHypothesis {
  std::vector<int32_t> labels;
  double score = 0;
};

/// A label-level language model for shallow fusion (Hannun et al. 2014):
/// extending prefix y by label c adds weight · log p(c | y) to y + c's
/// ranking score. The search calls it from its worker threads, concurrently
/// for different sequences and in order for one sequence, once per prefix
/// it extends for as long as that prefix stays in the beam.
class CtcLabelScorer {
public:
  virtual ~CtcLabelScorer();
  /// Writes log p(c | prefix) for every class c < vocab to logProbs[c]
  /// (the blank's entry is ignored; NaN is read as -inf). `prefix` holds
  /// `length` labels, oldest first; `sequence` is the batch position.
  virtual void scoreNext(int64_t sequence, const int32_t *prefix,
                         int64_t length, double *logProbs) = 0;
  /// log p(end | prefix), added (times the weight) to each final
  /// hypothesis when CtcBeamOptions::scoreEnd is set.
  virtual double scoreEnd(int64_t sequence, const int32_t *prefix,
                          int64_t length) = 0;
};

/// Settings of the prefix beam search.
struct CtcBeamOptions {
  int32_t blank = 0;
  /// Prefixes kept per frame, and the most hypotheses returned (≥ 1).
  int32_t beam = 1;
  CtcMerge merge = CtcMerge::sum;
  /// Classes a prefix may be extended with at a frame: the `tokenBeam`
  /// best of the frame (blank counted; lower index first among equal
  /// scores); 0 means all.
  int32_t tokenBeam = 0;
  /// ... and of those only classes within this distance of the frame's best
  /// score (≥ 0; infinity: no limit).
  double tokenThreshold = std::numeric_limits<double>::infinity();
  /// Prefixes ranked below the frame's best minus this are dropped (≥ 0;
  /// infinity: none).
  double scoreBeam = std::numeric_limits<double>::infinity();
  /// Added per label to a prefix's ranking score (β·|y|).
  double lengthBonus = 0;
  /// Shallow fusion: a language model and its weight λ ≥ 0 (not called
  /// when the weight is 0 or the scorer null).
  CtcLabelScorer *scorer = nullptr;
  double scorerWeight = 0;
  /// Adds λ·log p(end | y) to each final hypothesis.
  bool scoreEnd = false;
  /// Worker threads over sequences; 0: nn::numThreads(), or the hardware's
  /// when that is 0 too. Results do not depend on it.
  int32_t threads = 0;
};

/// Where the N-best lists go: row-major labels [batch, beam, capacity],
/// labelLengths and scores [batch, beam], counts [batch]. Sequence b's
/// hypotheses k < counts[b] come best first; the rest of its rows are
/// padding (length 0, score -inf), as are labels past a hypothesis'
/// length (0). `capacity` must be at least the longest sequence's frames
/// (a hypothesis has at most one label per frame).
struct CtcNBestBuffers {
  int32_t *labels = nullptr;
  int64_t capacity = 0;
  int32_t *labelLengths = nullptr;
  void *scores = nullptr;
  ScoreType scoreType = ScoreType::f64;
  int32_t *counts = nullptr;
};

/// The CTC prefix beam search of every sequence of `scores` into `output`.
/// InvalidArgument (naming the field) when the options, lengths, offsets or
/// buffers are out of range; nothing is written then.
absl::Status ctcPrefixSearch(const CtcScores &scores,
                             const CtcBeamOptions &options,
                             const CtcNBestBuffers &output);

/// The same, returning each sequence's hypotheses, best first.
absl::StatusOr<std::vector<std::vector<CtcHypothesis>>>
ctcPrefixSearch(const CtcScores &scores, const CtcBeamOptions &options);

/// Step-wise prefix search, for compiled code that runs the language model
/// itself (a callee graph on all beam slots at once) between frames. The
/// search state lives in a caller-provided workspace of
/// ctcStepWorkspaceBytes bytes (no allocation outlives a call, so a run
/// that ends early leaks nothing): ctcStepBegin starts every sequence
/// with the empty prefix in slot 0; ctcStepFrame advances the sequences
/// with t < length by frame t, exactly as ctcPrefixSearch does with a
/// scorer whose log p(· | prefix of slot k) is row b·beam + k of `lm`;
/// ctcStepFinish writes the N-best lists as ctcPrefixSearch does. Slots
/// are numbered per sequence, 0 ≤ k < beam; row s = b·beam + k of the
/// [batch·beam, ...] buffers below belongs to slot k of sequence b.

/// The language model's log-probabilities per beam slot: row s's class c
/// is element s·rowStride + c·classStride (NaN is read as -inf; the
/// blank's column is ignored). Null data: no language model.
struct CtcLmRows {
  const void *data = nullptr;
  ScoreType type = ScoreType::f32;
  int64_t rowStride = 0, classStride = 1;
};

/// Where a step writes each new slot's origin: `parents` [batch·beam], the
/// slot of the same sequence it came from (before the step), and
/// `appended` [batch·beam], the label it appended to that slot's prefix or
/// -1 when its prefix is the parent's (then the language model's state and
/// row carry over unchanged). Sequences with t ≥ length, and unused slots,
/// get parents[s] = k and appended[s] = -1. `newLabels`, unless null: the
/// number of slots with appended ≥ 0 (0: no language-model call needed).
struct CtcStepBuffers {
  int32_t *parents = nullptr;
  int32_t *appended = nullptr;
  int32_t *newLabels = nullptr;
};

/// Bytes of a step-wise search's workspace for `batch` sequences of at
/// most `capacity` frames and `beam` slots; -1 when out of range.
int64_t ctcStepWorkspaceBytes(int64_t batch, int64_t beam, int64_t capacity);

/// Starts a step-wise search in `workspace` (8-byte aligned, `bytes` ≥
/// ctcStepWorkspaceBytes(batch, beam, capacity)).
absl::Status ctcStepBegin(void *workspace, int64_t bytes, int64_t batch,
                          int32_t beam, int64_t capacity);

/// Frame t of every sequence with t < length (frames are taken in order,
/// from 0). `scores.batch` and `options.beam` must be the workspace's;
/// `options.scorer` must be null (the language model comes as `lm`, times
/// options.scorerWeight).
absl::Status ctcStepFrame(void *workspace, int64_t bytes,
                          const CtcScores &scores,
                          const CtcBeamOptions &options, int64_t t,
                          const CtcLmRows &lm, const CtcStepBuffers &output);

/// The N-best lists of the current slots. With `endClass` ≥ 0 and a
/// language model, λ·lm[s][endClass] is added to slot s's final score
/// (CtcBeamOptions::scoreEnd).
absl::Status ctcStepFinish(void *workspace, int64_t bytes,
                           const CtcScores &scores,
                           const CtcBeamOptions &options, const CtcLmRows &lm,
                           int32_t endClass, const CtcNBestBuffers &output);

/// Where greedy results go: labels [batch, capacity] (capacity ≥ the
/// longest sequence's frames; 0 past each length), lengths and scores
/// [batch].
struct CtcGreedyBuffers {
  int32_t *labels = nullptr;
  int64_t capacity = 0;
  int32_t *lengths = nullptr;
  void *scores = nullptr;
  ScoreType scoreType = ScoreType::f64;
};

/// Best-path decoding: per frame the class with the highest score (the
/// lowest index among equal maxima; NaN is read as -inf), repeats
/// collapsed, blanks dropped; the score is the path's, Σ of the per-frame
/// maxima. `threads` as CtcBeamOptions::threads.
absl::Status ctcGreedySearch(const CtcScores &scores, int32_t blank,
                             int32_t threads, const CtcGreedyBuffers &output);

/// The same, returning one hypothesis per sequence.
absl::StatusOr<std::vector<CtcHypothesis>>
ctcGreedySearch(const CtcScores &scores, int32_t blank, int32_t threads = 0);

} // namespace nn::runtime

#endif // NN_RUNTIME_SEARCH_CTCSEARCH_H
