//===- SearchAbi.cpp - the search entry points artifacts call -------------===//
//
// Thin wrappers over CtcSearch.h: unpack the addresses, run the search,
// and end the run with the search's message when it refuses the arguments.
//
//===----------------------------------------------------------------------===//

#include "runtime/search/SearchAbi.h"

#include "runtime/Allocator.h"
#include "runtime/search/CtcSearch.h"
#include "runtime/search/TransducerSearch.h"

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

using namespace nn::runtime;

namespace {

template <typename T> T *address(int64_t value) {
  return reinterpret_cast<T *>(static_cast<intptr_t>(value));
}

/// The arguments every CTC prefix-search entry takes, unpacked.
struct CtcCall {
  CtcScores view;
  CtcBeamOptions options;
  std::vector<int64_t> offsets;
  CtcLmRows lm;
};

/// Unpacks the scores and search settings into `call`; false, with the
/// message in `message`, when a flag is out of range (the search checks
/// the rest).
bool unpackCtcCall(const char *what, int64_t scores, int32_t scoreBits,
                   int64_t batch, int64_t frames, int64_t vocab,
                   int64_t lengths, int32_t packed, int64_t sequenceStride,
                   int64_t frameStride, int64_t classStride, int32_t blank,
                   int32_t beam, int32_t merge, int32_t tokenBeam,
                   double tokenThreshold, double scoreBeam, CtcCall &call,
                   char *message, size_t size) {
  std::string error;
  if (scoreBits != 32 && scoreBits != 64)
    error = "scores of " + std::to_string(scoreBits) + "-bit floats";
  else if (merge != 0 && merge != 1)
    error = "merge mode " + std::to_string(merge);
  else if (packed != 0 && packed != 1)
    error = "packed flag " + std::to_string(packed);
  else if (batch < 0)
    error = "batch " + std::to_string(batch);
  if (!error.empty()) {
    std::snprintf(message, size, "%s: unsupported %s", what, error.c_str());
    return false;
  }
  ScoreType type = scoreBits == 32 ? ScoreType::f32 : ScoreType::f64;
  const int32_t *sequenceLengths = address<const int32_t>(lengths);
  if (packed && batch > 0 && sequenceLengths)
    call.offsets = packedOffsets(sequenceLengths, batch);

  CtcScores &view = call.view;
  view.data = address<const void>(scores);
  view.type = type;
  view.batch = batch;
  view.frames = frames;
  view.vocab = vocab;
  view.lengths = sequenceLengths;
  view.offsets = packed ? call.offsets.data() : nullptr;
  view.sequenceStride = sequenceStride;
  view.frameStride = frameStride;
  view.classStride = classStride;

  CtcBeamOptions &options = call.options;
  options.blank = blank;
  options.beam = beam;
  options.merge = merge == 0 ? CtcMerge::sum : CtcMerge::max;
  options.tokenBeam = tokenBeam;
  options.tokenThreshold = tokenThreshold;
  options.scoreBeam = scoreBeam;
  return true;
}

/// Unpacks the language-model rows and settings of a step-wise call.
bool unpackLm(const char *what, double lengthBonus, int64_t lm, int32_t lmBits,
              int64_t lmRowStride, int64_t lmClassStride, double weight,
              CtcCall &call, char *message, size_t size) {
  if (lm && lmBits != 32 && lmBits != 64) {
    std::snprintf(message, size,
                  "%s: unsupported language model of %d-bit floats", what,
                  lmBits);
    return false;
  }
  call.options.lengthBonus = lengthBonus;
  call.options.scorerWeight = weight;
  call.lm.data = address<const void>(lm);
  call.lm.type = lmBits == 64 ? ScoreType::f64 : ScoreType::f32;
  call.lm.rowStride = lmRowStride;
  call.lm.classStride = lmClassStride;
  return true;
}

bool report(const char *what, const absl::Status &status, char *message,
            size_t size) {
  if (status.ok())
    return true;
  std::snprintf(message, size, "%s: %s", what,
                std::string(status.message()).c_str());
  return false;
}

/// Writes `extents` (i64 [2], unless 0): the most hypotheses of a
/// sequence and the most labels of a hypothesis.
void writeExtents(int64_t extents, int64_t batch, int32_t beam,
                  const CtcNBestBuffers &output) {
  if (!extents)
    return;
  int64_t *out = address<int64_t>(extents);
  out[0] = out[1] = 0;
  for (int64_t b = 0; b < batch; ++b) {
    int32_t *first = output.counts + b;
    out[0] = std::max<int64_t>(out[0], *first);
    for (int64_t k = 0; k < *first; ++k)
      out[1] = std::max<int64_t>(out[1], output.labelLengths[b * beam + k]);
  }
}

/// Runs nn_search_ctc_prefix_v1's call; false, with the message in
/// `message`, when it fails. Nothing it creates outlives it: the caller may
/// end the run with a longjmp.
bool runCtcPrefixSearch(const char *origin, int64_t scores, int32_t scoreBits,
                        int64_t batch, int64_t frames, int64_t vocab,
                        int64_t lengths, int32_t packed, int64_t sequenceStride,
                        int64_t frameStride, int64_t classStride, int32_t blank,
                        int32_t beam, int32_t merge, int32_t tokenBeam,
                        double tokenThreshold, double scoreBeam, int64_t labels,
                        int64_t labelCapacity, int64_t labelLengths,
                        int64_t hypothesisScores, int64_t counts,
                        int64_t extents, char *message, size_t size) {
  const char *what = origin ? origin : "a CTC beam search";
  CtcCall call;
  if (!unpackCtcCall(what, scores, scoreBits, batch, frames, vocab, lengths,
                     packed, sequenceStride, frameStride, classStride, blank,
                     beam, merge, tokenBeam, tokenThreshold, scoreBeam, call,
                     message, size))
    return false;
  CtcNBestBuffers output{address<int32_t>(labels),
                         labelCapacity,
                         address<int32_t>(labelLengths),
                         address<void>(hypothesisScores),
                         call.view.type,
                         address<int32_t>(counts)};
  if (!report(what, ctcPrefixSearch(call.view, call.options, output), message,
              size))
    return false;
  writeExtents(extents, batch, beam, output);
  return true;
}

bool runCtcBegin(const char *origin, int64_t workspace, int64_t workspaceBytes,
                 int64_t batch, int32_t beam, int64_t capacity, char *message,
                 size_t size) {
  const char *what = origin ? origin : "a CTC beam search";
  return report(what,
                ctcStepBegin(address<void>(workspace), workspaceBytes, batch,
                             beam, capacity),
                message, size);
}

bool runCtcStep(const char *origin, int64_t workspace, int64_t workspaceBytes,
                int64_t scores, int32_t scoreBits, int64_t batch,
                int64_t frames, int64_t vocab, int64_t lengths, int32_t packed,
                int64_t sequenceStride, int64_t frameStride,
                int64_t classStride, int32_t blank, int32_t beam, int32_t merge,
                int32_t tokenBeam, double tokenThreshold, double scoreBeam,
                double lengthBonus, int64_t lm, int32_t lmBits,
                int64_t lmRowStride, int64_t lmClassStride, double weight,
                int64_t t, int64_t parents, int64_t appended, int64_t newLabels,
                char *message, size_t size) {
  const char *what = origin ? origin : "a CTC beam search";
  CtcCall call;
  if (!unpackCtcCall(what, scores, scoreBits, batch, frames, vocab, lengths,
                     packed, sequenceStride, frameStride, classStride, blank,
                     beam, merge, tokenBeam, tokenThreshold, scoreBeam, call,
                     message, size) ||
      !unpackLm(what, lengthBonus, lm, lmBits, lmRowStride, lmClassStride,
                weight, call, message, size))
    return false;
  CtcStepBuffers output{address<int32_t>(parents), address<int32_t>(appended),
                        address<int32_t>(newLabels)};
  return report(what,
                ctcStepFrame(address<void>(workspace), workspaceBytes,
                             call.view, call.options, t, call.lm, output),
                message, size);
}

bool runCtcFinish(const char *origin, int64_t workspace, int64_t workspaceBytes,
                  int64_t scores, int32_t scoreBits, int64_t batch,
                  int64_t frames, int64_t vocab, int64_t lengths,
                  int32_t packed, int64_t sequenceStride, int64_t frameStride,
                  int64_t classStride, int32_t blank, int32_t beam,
                  int32_t merge, int32_t tokenBeam, double tokenThreshold,
                  double scoreBeam, double lengthBonus, int64_t lm,
                  int32_t lmBits, int64_t lmRowStride, int64_t lmClassStride,
                  double weight, int32_t endClass, int64_t labels,
                  int64_t labelCapacity, int64_t labelLengths,
                  int64_t hypothesisScores, int64_t counts, int64_t extents,
                  char *message, size_t size) {
  const char *what = origin ? origin : "a CTC beam search";
  CtcCall call;
  if (!unpackCtcCall(what, scores, scoreBits, batch, frames, vocab, lengths,
                     packed, sequenceStride, frameStride, classStride, blank,
                     beam, merge, tokenBeam, tokenThreshold, scoreBeam, call,
                     message, size) ||
      !unpackLm(what, lengthBonus, lm, lmBits, lmRowStride, lmClassStride,
                weight, call, message, size))
    return false;
  CtcNBestBuffers output{address<int32_t>(labels),
                         labelCapacity,
                         address<int32_t>(labelLengths),
                         address<void>(hypothesisScores),
                         call.view.type,
                         address<int32_t>(counts)};
  if (!report(what,
              ctcStepFinish(address<void>(workspace), workspaceBytes, call.view,
                            call.options, call.lm, endClass, output),
              message, size))
    return false;
  writeExtents(extents, batch, beam, output);
  return true;
}

/// Ends the run with `message` (which must outlive the unwinding: a
/// thread-local buffer); outside a guarded run there is no caller to
/// report to, so it prints and aborts.
[[noreturn]] void fail(const char *message) {
  failGuardedCall(message);
  std::fprintf(stderr, "nn runtime: %s\n", message);
  std::abort();
}

} // namespace

extern "C" __attribute__((visibility("default"))) void nn_search_ctc_prefix_v1(
    const char *origin, int64_t scores, int32_t scoreBits, int64_t batch,
    int64_t frames, int64_t vocab, int64_t lengths, int32_t packed,
    int64_t sequenceStride, int64_t frameStride, int64_t classStride,
    int32_t blank, int32_t beam, int32_t merge, int32_t tokenBeam,
    double tokenThreshold, double scoreBeam, int64_t labels,
    int64_t labelCapacity, int64_t labelLengths, int64_t hypothesisScores,
    int64_t counts, int64_t extents) {
  // The run ends with a longjmp: nothing with a destructor may be live in
  // this frame when it fails.
  static thread_local char message[768];
  if (!runCtcPrefixSearch(origin, scores, scoreBits, batch, frames, vocab,
                          lengths, packed, sequenceStride, frameStride,
                          classStride, blank, beam, merge, tokenBeam,
                          tokenThreshold, scoreBeam, labels, labelCapacity,
                          labelLengths, hypothesisScores, counts, extents,
                          message, sizeof(message)))
    fail(message);
}

//===----------------------------------------------------------------------===//
// Transducer beam search
//===----------------------------------------------------------------------===//

namespace {

/// Formats a failed transducer call's message into `message`; true when
/// `status` is ok.
bool report(const absl::Status &status, const char *origin, char *message,
            size_t size) {
  if (status.ok())
    return true;
  std::snprintf(message, size, "%s: %s",
                origin ? origin : "a transducer beam search",
                std::string(status.message()).c_str());
  return false;
}

TransducerBeamShape transducerShape(int64_t batch, int32_t beam,
                                    int64_t capacity, int32_t topology,
                                    int32_t maxSymbols) {
  TransducerBeamShape shape;
  shape.batch = batch;
  shape.beam = beam;
  shape.capacity = capacity;
  shape.kind = topology == 1 ? TransducerKind::rnnt : TransducerKind::rna;
  shape.maxSymbols = topology == 1 ? maxSymbols : 1;
  if (topology != 0 && topology != 1)
    shape.beam = 0; // invalid
  return shape;
}

bool runTransducerStep(const char *origin, int64_t workspace, int64_t bytes,
                       int64_t logProbs, int32_t scoreBits, int64_t vocab,
                       int64_t rowStride, int64_t classStride, int32_t blank,
                       int64_t lengths, int64_t frame, int32_t round,
                       int64_t parents, int64_t labels, int64_t anyLabel,
                       char *message, size_t size) {
  if (scoreBits != 32 && scoreBits != 64)
    return report(absl::InvalidArgumentError(
                      "scores of " + std::to_string(scoreBits) + "-bit floats"),
                  origin, message, size);
  TransducerLogProbs x;
  x.data = address<const void>(logProbs);
  x.type = scoreBits == 32 ? ScoreType::f32 : ScoreType::f64;
  x.vocab = vocab;
  x.rowStride = rowStride;
  x.classStride = classStride;
  return report(transducerBeamStep(address<void>(workspace), bytes, x, blank,
                                   address<const int32_t>(lengths), frame,
                                   round, address<int32_t>(parents),
                                   address<int32_t>(labels),
                                   address<int32_t>(anyLabel)),
                origin, message, size);
}

bool runTransducerFinish(const char *origin, int64_t workspace, int64_t bytes,
                         int32_t scoreBits, int64_t labels,
                         int64_t labelCapacity, int64_t labelLengths,
                         int64_t hypothesisScores, int64_t counts,
                         char *message, size_t size) {
  if (scoreBits != 32 && scoreBits != 64)
    return report(absl::InvalidArgumentError(
                      "scores of " + std::to_string(scoreBits) + "-bit floats"),
                  origin, message, size);
  CtcNBestBuffers output{address<int32_t>(labels),
                         labelCapacity,
                         address<int32_t>(labelLengths),
                         address<void>(hypothesisScores),
                         scoreBits == 32 ? ScoreType::f32 : ScoreType::f64,
                         address<int32_t>(counts)};
  return report(
      transducerBeamFinish(address<const void>(workspace), bytes, output),
      origin, message, size);
}

} // namespace

extern "C" __attribute__((visibility("default"))) int64_t
nn_search_transducer_workspace_bytes_v1(int64_t batch, int32_t beam,
                                        int64_t capacity, int32_t topology,
                                        int32_t maxSymbols) {
  return transducerWorkspaceBytes(
      transducerShape(batch, beam, capacity, topology, maxSymbols));
}

// As nn_search_ctc_prefix_v1, each entry point fails only after the
// helper that builds its message has returned (the run ends with a
// longjmp).
extern "C" __attribute__((visibility("default"))) void
nn_search_transducer_start_v1(const char *origin, int64_t workspace,
                              int64_t workspaceBytes, int64_t batch,
                              int32_t beam, int64_t capacity, int32_t topology,
                              int32_t maxSymbols) {
  static thread_local char message[768];
  if (!report(transducerBeamStart(
                  transducerShape(batch, beam, capacity, topology, maxSymbols),
                  address<void>(workspace), workspaceBytes),
              origin, message, sizeof(message)))
    fail(message);
}

extern "C" __attribute__((visibility("default"))) void
nn_search_transducer_step_v1(const char *origin, int64_t workspace,
                             int64_t workspaceBytes, int64_t logProbs,
                             int32_t scoreBits, int64_t vocab,
                             int64_t rowStride, int64_t classStride,
                             int32_t blank, int64_t lengths, int64_t frame,
                             int32_t round, int64_t parents, int64_t labels,
                             int64_t anyLabel) {
  static thread_local char message[768];
  if (!runTransducerStep(origin, workspace, workspaceBytes, logProbs, scoreBits,
                         vocab, rowStride, classStride, blank, lengths, frame,
                         round, parents, labels, anyLabel, message,
                         sizeof(message)))
    fail(message);
}

extern "C" __attribute__((visibility("default"))) void
nn_search_transducer_end_frame_v1(const char *origin, int64_t workspace,
                                  int64_t workspaceBytes, int64_t lengths,
                                  int64_t frame, int64_t parents) {
  static thread_local char message[768];
  if (!report(transducerBeamEndFrame(address<void>(workspace), workspaceBytes,
                                     address<const int32_t>(lengths), frame,
                                     address<int32_t>(parents)),
              origin, message, sizeof(message)))
    fail(message);
}

extern "C" __attribute__((visibility("default"))) void
nn_search_transducer_finish_v1(const char *origin, int64_t workspace,
                               int64_t workspaceBytes, int32_t scoreBits,
                               int64_t labels, int64_t labelCapacity,
                               int64_t labelLengths, int64_t hypothesisScores,
                               int64_t counts) {
  static thread_local char message[768];
  if (!runTransducerFinish(origin, workspace, workspaceBytes, scoreBits, labels,
                           labelCapacity, labelLengths, hypothesisScores,
                           counts, message, sizeof(message)))
    fail(message);
}

extern "C" __attribute__((visibility("default"))) int64_t
nn_search_ctc_workspace_bytes_v1(int64_t batch, int32_t beam,
                                 int64_t capacity) {
  return ctcStepWorkspaceBytes(batch, beam, capacity);
}

extern "C" __attribute__((visibility("default"))) void
nn_search_ctc_begin_v1(const char *origin, int64_t workspace,
                       int64_t workspaceBytes, int64_t batch, int32_t beam,
                       int64_t capacity) {
  static thread_local char message[768];
  if (!runCtcBegin(origin, workspace, workspaceBytes, batch, beam, capacity,
                   message, sizeof(message)))
    fail(message);
}

extern "C" __attribute__((visibility("default"))) void nn_search_ctc_step_v1(
    const char *origin, int64_t workspace, int64_t workspaceBytes,
    int64_t scores, int32_t scoreBits, int64_t batch, int64_t frames,
    int64_t vocab, int64_t lengths, int32_t packed, int64_t sequenceStride,
    int64_t frameStride, int64_t classStride, int32_t blank, int32_t beam,
    int32_t merge, int32_t tokenBeam, double tokenThreshold, double scoreBeam,
    double lengthBonus, int64_t lm, int32_t lmBits, int64_t lmRowStride,
    int64_t lmClassStride, double weight, int64_t t, int64_t parents,
    int64_t appended, int64_t newLabels) {
  static thread_local char message[768];
  if (!runCtcStep(origin, workspace, workspaceBytes, scores, scoreBits, batch,
                  frames, vocab, lengths, packed, sequenceStride, frameStride,
                  classStride, blank, beam, merge, tokenBeam, tokenThreshold,
                  scoreBeam, lengthBonus, lm, lmBits, lmRowStride,
                  lmClassStride, weight, t, parents, appended, newLabels,
                  message, sizeof(message)))
    fail(message);
}

extern "C" __attribute__((visibility("default"))) void nn_search_ctc_finish_v1(
    const char *origin, int64_t workspace, int64_t workspaceBytes,
    int64_t scores, int32_t scoreBits, int64_t batch, int64_t frames,
    int64_t vocab, int64_t lengths, int32_t packed, int64_t sequenceStride,
    int64_t frameStride, int64_t classStride, int32_t blank, int32_t beam,
    int32_t merge, int32_t tokenBeam, double tokenThreshold, double scoreBeam,
    double lengthBonus, int64_t lm, int32_t lmBits, int64_t lmRowStride,
    int64_t lmClassStride, double weight, int32_t endClass, int64_t labels,
    int64_t labelCapacity, int64_t labelLengths, int64_t hypothesisScores,
    int64_t counts, int64_t extents) {
  static thread_local char message[768];
  if (!runCtcFinish(origin, workspace, workspaceBytes, scores, scoreBits, batch,
                    frames, vocab, lengths, packed, sequenceStride, frameStride,
                    classStride, blank, beam, merge, tokenBeam, tokenThreshold,
                    scoreBeam, lengthBonus, lm, lmBits, lmRowStride,
                    lmClassStride, weight, endClass, labels, labelCapacity,
                    labelLengths, hypothesisScores, counts, extents, message,
                    sizeof(message)))
    fail(message);
}
