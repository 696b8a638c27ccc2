//===- SearchAbi.cpp - the search entry points artifacts call -------------===//
//
// Thin wrappers over CtcSearch.h: unpack the addresses, run the search,
// and end the run with the search's message when it refuses the arguments.
//
//===----------------------------------------------------------------------===//

#include "runtime/search/SearchAbi.h"

#include "runtime/Allocator.h"
#include "runtime/search/CtcSearch.h"

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
