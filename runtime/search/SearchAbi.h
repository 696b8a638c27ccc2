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

/// Step-wise CTC prefix search with shallow fusion (CtcSearch.h,
/// ctcStep*): the caller runs the language model on all batch·beam slots
/// between frames. The state lives in a workspace the caller allocates
/// (8-byte aligned) of nn_search_ctc_workspace_bytes_v1(batch, beam,
/// capacity) bytes, capacity ≥ the longest sequence's frames; -1 when
/// those are out of range.
int64_t nn_search_ctc_workspace_bytes_v1(int64_t batch, int32_t beam,
                                         int64_t capacity);

/// Starts every sequence of the workspace with the empty prefix in slot 0.
void nn_search_ctc_begin_v1(const char *origin, int64_t workspace,
                            int64_t workspaceBytes, int64_t batch, int32_t beam,
                            int64_t capacity);

/// Frame t of every sequence with t < length. Scores and search settings
/// as nn_search_ctc_prefix_v1, plus `lengthBonus` (β per label). `lm`,
/// unless 0: log-probabilities of `lmBits`-bit floats per slot, row
/// s = b·beam + k's class c at element s·lmRowStride + c·lmClassStride,
/// added times `weight` (λ ≥ 0) to the prefixes slot k extends. Writes i32
/// [batch·beam] `parents` (the slot each new slot came from) and
/// `appended` (the label it appended, -1: none) and, unless 0, i32 [1]
/// `newLabels` (how many slots appended one).
void nn_search_ctc_step_v1(
    const char *origin, int64_t workspace, int64_t workspaceBytes,
    int64_t scores, int32_t scoreBits, int64_t batch, int64_t frames,
    int64_t vocab, int64_t lengths, int32_t packed, int64_t sequenceStride,
    int64_t frameStride, int64_t classStride, int32_t blank, int32_t beam,
    int32_t merge, int32_t tokenBeam, double tokenThreshold, double scoreBeam,
    double lengthBonus, int64_t lm, int32_t lmBits, int64_t lmRowStride,
    int64_t lmClassStride, double weight, int64_t t, int64_t parents,
    int64_t appended, int64_t newLabels);

/// The N-best lists of the current slots, written as
/// nn_search_ctc_prefix_v1 writes them (scores of scoreBits floats). With
/// `endClass` ≥ 0 and an `lm`, λ·lm[s][endClass] is added to slot s's
/// final score. The arguments before `endClass` are nn_search_ctc_step_v1's.
void nn_search_ctc_finish_v1(
    const char *origin, int64_t workspace, int64_t workspaceBytes,
    int64_t scores, int32_t scoreBits, int64_t batch, int64_t frames,
    int64_t vocab, int64_t lengths, int32_t packed, int64_t sequenceStride,
    int64_t frameStride, int64_t classStride, int32_t blank, int32_t beam,
    int32_t merge, int32_t tokenBeam, double tokenThreshold, double scoreBeam,
    double lengthBonus, int64_t lm, int32_t lmBits, int64_t lmRowStride,
    int64_t lmClassStride, double weight, int32_t endClass, int64_t labels,
    int64_t labelCapacity, int64_t labelLengths, int64_t hypothesisScores,
    int64_t counts, int64_t extents);

// NOLINTEND(readability-identifier-naming)
}

#endif // NN_RUNTIME_SEARCH_SEARCHABI_H
