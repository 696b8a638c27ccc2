//===- TransducerSearch.h - transducer beam search, one step at a time ----===//
//
// The data-dependent part of transducer beam search (RNA frame-synchronous,
// RNN-T time-synchronous), in plain C++ on host memory. Compiled code owns
// the networks: it runs the joiner on one row per beam slot, hands the
// log-probabilities to a step, and moves each slot's predictor output and
// state as the step reports (the parent slot each new slot continues and
// the label it appends). Everything the search keeps between steps lives
// in a workspace the caller allocates (transducerWorkspaceBytes), so an
// aborted run leaks nothing. Scores are log-space f64; every order is a
// property of label sequences (higher score, then shorter, then
// lexicographically smaller), so a sequence's result never depends on its
// batch-mates. docs/decoding.md describes the searches.
//
//===----------------------------------------------------------------------===//

#ifndef NN_RUNTIME_SEARCH_TRANSDUCERSEARCH_H
#define NN_RUNTIME_SEARCH_TRANSDUCERSEARCH_H

#include "runtime/search/CtcSearch.h"

#include "absl/status/status.h"

#include <cstdint>
#include <vector>

namespace nn::runtime {

/// Which transducer's lattice the search walks.
enum class TransducerKind {
  /// One emission per frame, a label or the blank.
  rna,
  /// Labels stay at their frame; the blank moves to the next one.
  rnnt,
};

/// The fixed shape of one search; the workspace records it.
struct TransducerBeamShape {
  int64_t batch = 0;
  /// Slots per sequence (≥ 1): the hypotheses kept, and the rows per
  /// sequence the caller's networks run on (row b·beam + k is slot k of
  /// sequence b).
  int32_t beam = 1;
  /// Labels a hypothesis may hold at most (≥ frames for rna, ≥ frames ·
  /// maxSymbols for rnnt).
  int64_t capacity = 0;
  TransducerKind kind = TransducerKind::rna;
  /// rnnt: labels per frame at most (≥ 1): a frame runs maxSymbols + 1
  /// rounds, the last of which only ends hypotheses with the blank.
  int32_t maxSymbols = 1;

  /// Joiner rounds per frame: 1 for rna, maxSymbols + 1 for rnnt.
  int32_t rounds() const {
    return kind == TransducerKind::rnnt ? maxSymbols + 1 : 1;
  }
};

/// Bytes of the workspace a search of `shape` needs (0 when the shape is
/// invalid).
int64_t transducerWorkspaceBytes(const TransducerBeamShape &shape);

/// Starts a search: every sequence holds the empty hypothesis (score 0) in
/// slot 0, whose rows the caller fills with the predictor's first step.
absl::Status transducerBeamStart(const TransducerBeamShape &shape,
                                 void *workspace, int64_t bytes);

/// Log-probabilities of one round: slot row r's class c at element
/// r · rowStride + c · classStride (rows = batch · beam). Rows of slots a
/// sequence does not use, and of sequences past their frames, are never
/// read (they may hold NaN). A NaN log-probability reads as -inf.
struct TransducerLogProbs {
  const void *data = nullptr;
  ScoreType type = ScoreType::f32;
  int64_t vocab = 0;
  int64_t rowStride = 0, classStride = 1;
};

/// One round of frame `frame` (rounds 0, 1, ... of a frame in order; rnnt
/// may stop early once no slot appended a label). Sequences with
/// `lengths[b] <= frame` keep their slots. Writes, per slot row j
/// ([batch · beam]), the slot it continues (`parents`, a row of the same
/// sequence; j itself for slots that stay) and the label it appends
/// (`labels`, -1 for none); `anyLabel` is 1 when some row appends one.
///
/// rna: each hypothesis extends by the blank (same labels) or a label c
/// (labels + c), scored score + log p(c); equal label sequences merge by
/// log-sum-exp; the best `beam` survive.
/// rnnt: each hypothesis's blank ends it for this frame into the frame's
/// result set (merged by labels, log-sum-exp); its labels form the next
/// round's hypotheses (merged, best `beam`; none after round maxSymbols).
absl::Status transducerBeamStep(void *workspace, int64_t bytes,
                                const TransducerLogProbs &logProbs,
                                int32_t blank, const int32_t *lengths,
                                int64_t frame, int32_t round, int32_t *parents,
                                int32_t *labels, int32_t *anyLabel);

/// rnnt, after the last round of frame `frame`: the best `beam` of each
/// active sequence's result set become its slots. `parents[j]` names the
/// stashed row slot j takes its predictor output and state from: row
/// round · batch · beam + r, where the caller stashed the slot rows it
/// scored in each round (slots of inactive sequences point at round 0).
absl::Status transducerBeamEndFrame(void *workspace, int64_t bytes,
                                    const int32_t *lengths, int64_t frame,
                                    int32_t *parents);

/// Writes each sequence's hypotheses, best first, into `output` (as the
/// CTC prefix search does: padding rows of length 0 and score -inf). A
/// sequence whose every path has probability 0 gets none.
absl::Status transducerBeamFinish(const void *workspace, int64_t bytes,
                                  const CtcNBestBuffers &output);

/// The same, returning each sequence's hypotheses.
absl::StatusOr<std::vector<std::vector<CtcHypothesis>>>
transducerBeamFinish(const void *workspace, int64_t bytes);

} // namespace nn::runtime

#endif // NN_RUNTIME_SEARCH_TRANSDUCERSEARCH_H
