//===- BenchData.h - the loss-tail model and its data for benchmarks -----===//
//
// The loss tail linear(512 -> V) -> log_softmax -> cross entropy at B = 32
// over sequence lengths sampled (fixed seed) from real LibriSpeech
// utterances: shared by nn-bench (CPU) and nn-gpu-bench.
//
//===----------------------------------------------------------------------===//

#ifndef NN_BENCH_BENCHDATA_H
#define NN_BENCH_BENCHDATA_H

#include "nn/Runtime.h"

#include <random>
#include <string>
#include <vector>

namespace nn::bench {

constexpr int kBatch = 32, kHidden = 512;

/// The batch: lengths, their maximum and their sum (set by loadLengths),
/// and the utterances' label counts (the file's second column, 0 where it
/// has none) with their maximum.
extern std::vector<int32_t> gLengths, gLabelLengths;
extern int64_t gPadded, gFrames, gLabelPadded;

/// Samples kBatch utterances from a file of lengths, `T [U]` per line.
bool loadLengths(const std::string &path);
/// The default lengths file: bench/data/librispeech-train-clean-100-lengths.txt
/// in the source tree (an absolute path fixed at configure time), so a
/// clone runs the benchmarks without --lengths.
std::string defaultLengthsPath();

/// The loss tail's model text (nn dialect) for a vocabulary of V classes.
std::string tailSource(int vocabulary);
/// The loss tail's inputs and parameters on the sampled batch (seeded).
nn::RunInputs tailInputs(int vocabulary);
/// A tensor of uniform values in [-scale, scale] drawn from rng.
nn::Tensor randomTensor(nn::DType dtype, std::vector<int64_t> shape,
                        std::mt19937 &rng, double scale);

} // namespace nn::bench

#endif // NN_BENCH_BENCHDATA_H
