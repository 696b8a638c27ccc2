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

/// Transducer beam search (nn::runtime::transducerBeam*), driven one
/// round at a time by compiled code that runs the networks. `topology` 0
/// is rna, 1 rnnt (with `maxSymbols` ≥ 1). The workspace, `workspaceBytes`
/// at address `workspace`, holds the whole search state between calls:
/// the caller allocates it (this size; 0 for an invalid shape) and frees
/// it, nothing else is allocated across calls.
int64_t nn_search_transducer_workspace_bytes_v1(int64_t batch, int32_t beam,
                                                int64_t capacity,
                                                int32_t topology,
                                                int32_t maxSymbols);

/// Starts a search in the workspace: every sequence holds the empty
/// hypothesis in slot 0.
void nn_search_transducer_start_v1(const char *origin, int64_t workspace,
                                   int64_t workspaceBytes, int64_t batch,
                                   int32_t beam, int64_t capacity,
                                   int32_t topology, int32_t maxSymbols);

/// One round of frame `frame`: log-probabilities of `scoreBits`-bit floats,
/// slot row r's class c at element r·rowStride + c·classStride (rows:
/// batch·beam); `lengths` i32 [batch]. Writes i32 [batch·beam] `parents`
/// and `labels` (-1: none) and i32 `anyLabel`.
void nn_search_transducer_step_v1(const char *origin, int64_t workspace,
                                  int64_t workspaceBytes, int64_t logProbs,
                                  int32_t scoreBits, int64_t vocab,
                                  int64_t rowStride, int64_t classStride,
                                  int32_t blank, int64_t lengths, int64_t frame,
                                  int32_t round, int64_t parents,
                                  int64_t labels, int64_t anyLabel);

/// rnnt, after a frame's rounds: i32 [batch·beam] `parents` index the
/// rows stashed per round ([rounds·batch·beam]).
void nn_search_transducer_end_frame_v1(const char *origin, int64_t workspace,
                                       int64_t workspaceBytes, int64_t lengths,
                                       int64_t frame, int64_t parents);

/// The N-best lists, laid out as nn_search_ctc_prefix_v1 writes them
/// (labels [batch, beam, labelCapacity], labelLengths and
/// hypothesisScores [batch, beam], counts [batch]).
void nn_search_transducer_finish_v1(const char *origin, int64_t workspace,
                                    int64_t workspaceBytes, int32_t scoreBits,
                                    int64_t labels, int64_t labelCapacity,
                                    int64_t labelLengths,
                                    int64_t hypothesisScores, int64_t counts);

// NOLINTEND(readability-identifier-naming)
}

#endif // NN_RUNTIME_SEARCH_SEARCHABI_H
