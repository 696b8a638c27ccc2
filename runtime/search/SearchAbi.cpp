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
  std::vector<int64_t> offsets;
  if (packed && batch > 0 && sequenceLengths)
    offsets = packedOffsets(sequenceLengths, batch);

  CtcScores view;
  view.data = address<const void>(scores);
  view.type = type;
  view.batch = batch;
  view.frames = frames;
  view.vocab = vocab;
  view.lengths = sequenceLengths;
  view.offsets = packed ? offsets.data() : nullptr;
  view.sequenceStride = sequenceStride;
  view.frameStride = frameStride;
  view.classStride = classStride;

  CtcBeamOptions options;
  options.blank = blank;
  options.beam = beam;
  options.merge = merge == 0 ? CtcMerge::sum : CtcMerge::max;
  options.tokenBeam = tokenBeam;
  options.tokenThreshold = tokenThreshold;
  options.scoreBeam = scoreBeam;

  CtcNBestBuffers output{address<int32_t>(labels),
                         labelCapacity,
                         address<int32_t>(labelLengths),
                         address<void>(hypothesisScores),
                         type,
                         address<int32_t>(counts)};
  absl::Status status = ctcPrefixSearch(view, options, output);
  if (!status.ok()) {
    std::snprintf(message, size, "%s: %s", what,
                  std::string(status.message()).c_str());
    return false;
  }
  if (extents) {
    int64_t *out = address<int64_t>(extents);
    out[0] = out[1] = 0;
    for (int64_t b = 0; b < batch; ++b) {
      int32_t *first = output.counts + b;
      out[0] = std::max<int64_t>(out[0], *first);
      for (int64_t k = 0; k < *first; ++k)
        out[1] = std::max<int64_t>(out[1], output.labelLengths[b * beam + k]);
    }
  }
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
