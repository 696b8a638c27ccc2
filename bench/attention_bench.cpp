//===- attention_bench.cpp - self-attention over a speech batch -----------===//
//
// nn.attention as a Conformer encoder runs it: the benchmark's batch
// (B = 32 LibriSpeech lengths, in frames after 4x subsampling), d_model 256 in
// 4 heads, no mask, under an MSE loss so that the backward (the gradients of
// queries, keys and values) can be measured. Padded inputs, or packed ones
// (pack=earliest moves the attention behind the pack). Counters: frames (real
// query frames) per second, and GFLOP/s of the score and weighted-sum GEMMs the
// batch needs (each sequence against itself: 4 sum_b T_b^2 d flops forward;
// the backward adds five more, and two more when it recomputes the forward's
// log normalizers and output instead of reading them: range(0) = 2, with
// nn-save-attention-stats off). `padded_work` is
// how much more a dense padded attention would do: B T_max^2 / sum_b T_b^2.
// The relative variants add Conformer relative positions (position queries
// and a table of the distances -511 ... 511, so nothing clips; their
// gradients too); GFLOP/s counts the same content GEMMs, so the ratio of
// times is the cost of the position terms.
//
//   build/bin/nn-bench --benchmark_filter=benchAttention [--threads N]
//
//===----------------------------------------------------------------------===//

#include "BenchCompile.h"
#include "BenchData.h"
#include "nn/Synthetic.h"

#include <sstream>

using namespace nn::bench;

namespace {

constexpr int kModel = 256, kHeads = 4;

/// The relative positions' table: distances -511 ... 511.
constexpr int kTableRows = 1023;

std::string attentionSource(bool relative) {
  std::string t = "!nn.tensor<[B, T, " + std::to_string(kModel) + "], f32>";
  std::string table = "!nn.tensor<[" + std::to_string(kTableRows) + ", " +
                      std::to_string(kModel) + "], f32>";
  std::ostringstream s;
  s << "nn.graph @attention(%q: " << t << ", %k: " << t << ", %v: " << t
    << ", %target: " << t;
  if (relative)
    s << ", %r: " << t << ", %p: " << table;
  s << ") dims [B: batch, T: seq(B)] {\n"
    << "  %y = nn.attention %q, %k, %v " << (relative ? "relative %r, %p " : "")
    << "heads " << kHeads << " : " << t << ", " << t << ", " << t;
  if (relative)
    s << ", " << t << ", " << table;
  s << "\n"
    << "  %e = nn.mse %y, %target : " << t << ", " << t << "\n"
    << "  nn.mark_loss %e as \"mse\" normalize per_frame : "
    << "!nn.tensor<[B, T], f32>\n  nn.return\n}\n";
  return s.str();
}

/// range(0) = 1: forward and backward (2: the backward recomputing the
/// forward's stats); range(1) = 1: packed; range(2) = 1: relative
/// positions.
void benchAttention(benchmark::State &state) {
  bool backward = state.range(0) != 0, recompute = state.range(0) == 2,
       packed = state.range(1), relative = state.range(2);
  double frames = 0, squares = 0;
  int64_t longest = 0;
  for (int32_t t : gLengths) {
    frames += t;
    squares += double(t) * t;
    longest = std::max<int64_t>(longest, t);
  }
  std::vector<std::string> inputGradients;
  if (backward)
    inputGradients = {"q", "k", "v"};
  if (backward && relative)
    inputGradients.insert(inputGradients.end(), {"r", "p"});
  nn::CompileOptions options;
  options.optimize.pack = packed;
  options.optimize.packFrontier = nn::PackFrontier::earliest;
  options.optimize.saveAttentionStats = !recompute;
  options.grads = backward;
  options.inputGradients = std::move(inputGradients);
  nn::Executable exe = compile(attentionSource(relative), options);
  std::mt19937 rng(11);
  nn::RunInputs inputs =
      nn::syntheticBatch(exe.manifest(), kBatch, {{"T", gLengths}}, rng, 0.0);
  nn::RunResult result;
  runMeasured(state, exe, inputs, result);
  double gemms = !backward ? 2 : recompute ? 9 : 7;
  state.counters["frames_per_s"] =
      benchmark::Counter(frames, benchmark::Counter::kIsIterationInvariantRate);
  state.counters["GFLOPS"] =
      benchmark::Counter(gemms * 2 * squares * kModel * 1e-9,
                         benchmark::Counter::kIsIterationInvariantRate);
  state.counters["padded_work"] = kBatch * double(longest) * longest / squares;
  state.SetLabel(std::string(backward ? "forward+backward" : "forward") +
                 (packed ? ", packed" : ", padded") +
                 (relative ? ", relative" : "") +
                 (recompute ? ", stats recomputed" : ""));
}

} // namespace

BENCHMARK(benchAttention)
    ->ArgsProduct({{0, 1, 2}, {0, 1}, {0, 1}})
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime();
