//===- SearchAbi.h - the search entry points artifacts call -----*- C++ -*-===//
//
// The C signatures of the runtime's search helpers, which compiled code
// calls for the data-dependent part of a decoding op (the lowering emits
// the matching declarations). Names carry a version: a changed signature
// gets a new name, so an artifact built against another runtime fails to
// load (RTLD_NOW) instead of calling with the wrong arguments. Pointers
// travel as int64 addresses, as for nn_cpu_sgemm. Invalid arguments end
// the run with a message naming `origin` (the nn op and its location).
//
//===----------------------------------------------------------------------===//

#ifndef NN_RUNTIME_SEARCH_SEARCHABI_H
#define NN_RUNTIME_SEARCH_SEARCHABI_H

#include <cstdint>

extern "C" {

// NOLINTBEGIN(readability-identifier-naming): the names generated code
// calls.

/// The CTC prefix beam search of a batch (nn::runtime::ctcPrefixSearch).
///
/// Scores: log-probabilities of `scoreBits` (32 or 64) bit floats at
/// address `scores`; sequence b's class c at frame t is element
/// start(b) + t·frameStride + c·classStride, start(b) = b·sequenceStride
/// when `packed` is 0 (padded [B, frames, vocab]) and row·frameStride
/// when it is 1 (packed [frames, vocab], sequences back to back in batch
/// order, row = Σ lengths before b; sequenceStride unused). `lengths`:
/// i32 [batch].
///
/// Search: `blank`, `beam` ≥ 1, `merge` 0 (sum) or 1 (max), `tokenBeam`
/// (0: all classes), `tokenThreshold` and `scoreBeam` (≥ 0, +inf: off).
/// Threads: nn::numThreads(), or all cores when 0.
///
/// Results, dense row-major: `labels` i32 [batch, beam, labelCapacity]
/// (labelCapacity ≥ the longest length), `labelLengths` i32 [batch, beam],
/// `hypothesisScores` [batch, beam] of scoreBits floats, `counts` i32
/// [batch] (hypotheses of each sequence, best first; padding rows have
/// length 0 and score -inf). `extents`, unless 0: i64 [2], the most
/// hypotheses of a sequence and the most labels of a hypothesis.
void nn_search_ctc_prefix_v1(const char *origin, int64_t scores,
                             int32_t scoreBits, int64_t batch, int64_t frames,
                             int64_t vocab, int64_t lengths, int32_t packed,
                             int64_t sequenceStride, int64_t frameStride,
                             int64_t classStride, int32_t blank, int32_t beam,
                             int32_t merge, int32_t tokenBeam,
                             double tokenThreshold, double scoreBeam,
                             int64_t labels, int64_t labelCapacity,
                             int64_t labelLengths, int64_t hypothesisScores,
                             int64_t counts, int64_t extents);

// NOLINTEND(readability-identifier-naming)
}

#endif // NN_RUNTIME_SEARCH_SEARCHABI_H
