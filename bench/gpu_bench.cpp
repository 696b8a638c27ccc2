//===- gpu_bench.cpp - the GPU target: loss tail and kernel bandwidth -----===//
//
// On an NVIDIA GPU (the runtime's CUDA backend):
//  * the loss tail of nn-bench (linear 512 -> V, log_softmax, cross
//    entropy; B = 32, LibriSpeech lengths) padded vs packed, V in {1000,
//    10000}: wall time per run (input copies included, the same for both)
//    and the device time of its kernels and cuBLAS GEMM (events);
//  * achieved memory bandwidth of generated kernels, from their event
//    times, as a percentage of the device's peak (memory clock x bus width
//    from the driver): an elementwise add on [B, T, 512] (reads 2, writes 1
//    tensor), log_softmax on [B, T, V] (its three kernels move 4 B T V
//    floats: max reads x, sum-exp reads x, the last reads x and writes the
//    result) and a sum over time on [B, T, 512] (reads x, writes [B, 512]).
//
//   build/bin/nn-gpu-bench [--lengths FILE] [--benchmark_*]
//
// Without a GPU it says why and exits 1. docs/performance.md records the
// figures and the command.
//
//===----------------------------------------------------------------------===//

#include "BenchData.h"
#include "nn/Compiler.h"
#include "nn/Cuda.h"
#include "nn/Runtime.h"

#include <benchmark/benchmark.h>

#include <cstdio>
#include <cstring>
#include <sstream>

using namespace nn::bench;

namespace {

nn::Executable compileForGpu(const std::string &source, bool pack) {
  nn::CompileOptions options;
  options.optimize.pack = pack;
  options.target = "cuda";
  nn::Executable exe;
  absl::StatusOr<nn::Artifact> artifact =
      nn::compileSource(source, "bench.mlir", options);
  absl::Status status = artifact.status();
  if (status.ok())
    status = nn::Executable::load(artifact->path(), exe);
  if (!status.ok()) {
    std::fprintf(stderr, "nn-gpu-bench: %s\n",
                 std::string(status.message()).c_str());
    std::exit(1);
  }
  return exe;
}

/// Runs `exe` in the benchmark loop with kernel profiling on; returns the
/// device milliseconds per run of the kernels whose name contains `filter`
/// (all when empty).
double runProfiled(benchmark::State &state, const nn::Executable &exe,
                   const nn::RunInputs &inputs, const std::string &filter) {
  nn::RunResult result;
  // Warm-up: loads (JIT-compiles) the modules and fills the buffer cache.
  absl::Status status = exe.run(inputs, result);
  if (!status.ok()) {
    state.SkipWithError(std::string(status.message()).c_str());
    return 0;
  }
  nn::cudaSetProfiling(true);
  for (auto _ : state) {
    status = exe.run(inputs, result);
    if (!status.ok())
      state.SkipWithError(std::string(status.message()).c_str());
  }
  double milliseconds = 0;
  for (const nn::KernelTime &time : nn::cudaTakeProfile())
    if (filter.empty() || time.name.find(filter) != std::string::npos)
      milliseconds += time.milliseconds;
  nn::cudaSetProfiling(false);
  return state.iterations() ? milliseconds / state.iterations() : 0;
}

void bandwidthCounters(benchmark::State &state, double bytes,
                       double kernelMilliseconds) {
  // Benchmarks run only where the device is available (main checks).
  nn::CudaDeviceInfo info;
  (void)nn::cudaDeviceInfo(info);
  double gbs = kernelMilliseconds > 0 ? bytes / (kernelMilliseconds * 1e6) : 0;
  state.counters["kernel_ms"] = kernelMilliseconds;
  state.counters["GB/s"] = gbs;
  state.counters["pct_of_peak"] =
      info.peakBandwidthGBs > 0 ? 100.0 * gbs / info.peakBandwidthGBs : 0;
}

void benchGpuLossTail(benchmark::State &state) {
  int vocabulary = state.range(0);
  bool pack = state.range(1);
  nn::Executable exe = compileForGpu(tailSource(vocabulary), pack);
  nn::RunInputs inputs = tailInputs(vocabulary);
  // Kernels and the cuBLAS GEMM.
  double kernels = runProfiled(state, exe, inputs, "");
  nn::RunResult result;
  if (exe.run(inputs, result).ok()) {
    state.counters["frames_computed"] = result.losses.at(0).framesComputed;
    state.counters["frames_padded"] = result.losses.at(0).framesPadded;
    state.counters["loss"] = result.losses.at(0).normalized;
  }
  state.counters["kernel_ms"] = kernels;
  state.SetLabel(pack ? "packed" : "padded");
}

std::string tensor(int features) {
  return "!nn.tensor<[B, T, " + std::to_string(features) + "], f32>";
}

nn::RunInputs paddedInputs(const std::vector<std::string> &names,
                           int features) {
  std::mt19937 rng(3);
  nn::RunInputs inputs;
  inputs.lengths["T"] = gLengths;
  for (const std::string &name : names)
    inputs.inputs[name] =
        randomTensor(nn::DType::f32, {kBatch, gPadded, features}, rng, 1.0);
  return inputs;
}

void benchElementwiseBandwidth(benchmark::State &state) {
  std::string t = tensor(kHidden);
  std::string source =
      "nn.graph @g(%x: " + t + ", %y: " + t + ") -> " + t +
      " dims [B: batch, T: seq(B)] {\n  %a = nn.add %x, %y : " + t +
      "\n  nn.return %a : " + t + "\n}\n";
  nn::Executable exe = compileForGpu(source, false);
  double ms = runProfiled(state, exe, paddedInputs({"x", "y"}, kHidden), "add");
  bandwidthCounters(state, 3.0 * kBatch * gPadded * kHidden * 4, ms);
  state.SetLabel("add [B, T, 512]");
}

void benchLogSoftmaxBandwidth(benchmark::State &state) {
  int vocabulary = state.range(0);
  std::string t = tensor(vocabulary);
  std::string source = "nn.graph @g(%x: " + t + ") -> " + t +
                       " dims [B: batch, T: seq(B)] {\n  %l = nn.log_softmax "
                       "%x : " +
                       t + "\n  nn.return %l : " + t + "\n}\n";
  nn::Executable exe = compileForGpu(source, false);
  double ms =
      runProfiled(state, exe, paddedInputs({"x"}, vocabulary), "log_softmax");
  bandwidthCounters(state, 4.0 * kBatch * gPadded * vocabulary * 4, ms);
  state.SetLabel("log_softmax [B, T, V] (row reductions)");
}

void benchSumOverTimeBandwidth(benchmark::State &state) {
  std::string t = tensor(kHidden);
  std::string r = "!nn.tensor<[B, " + std::to_string(kHidden) + "], f32>";
  std::string source = "nn.graph @g(%x: " + t + ") -> " + r +
                       " dims [B: batch, T: seq(B)] {\n  %s = nn.reduce sum "
                       "%x over 1 : " +
                       t + "\n  nn.return %s : " + r + "\n}\n";
  nn::Executable exe = compileForGpu(source, false);
  double ms = runProfiled(state, exe, paddedInputs({"x"}, kHidden), "reduce");
  bandwidthCounters(state, (double)kBatch * (gPadded + 1) * kHidden * 4, ms);
  state.SetLabel("reduce sum over time [B, T, 512]");
}

} // namespace

BENCHMARK(benchGpuLossTail)
    ->ArgsProduct({{1000, 10000}, {0, 1}})
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime();
BENCHMARK(benchElementwiseBandwidth)
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime();
BENCHMARK(benchLogSoftmaxBandwidth)
    ->Arg(1000)
    ->Arg(10000)
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime();
BENCHMARK(benchSumOverTimeBandwidth)
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime();

int main(int argc, char **argv) {
  std::string lengths = defaultLengthsPath();
  std::vector<char *> rest{argv[0]};
  for (int i = 1; i < argc; ++i) {
    if (!std::strcmp(argv[i], "--lengths") && i + 1 < argc)
      lengths = argv[++i];
    else
      rest.push_back(argv[i]);
  }
  std::string why;
  if (!nn::cudaAvailable(&why)) {
    std::fprintf(stderr, "nn-gpu-bench: %s\n", why.c_str());
    return 1;
  }
  if (!loadLengths(lengths)) {
    std::fprintf(stderr,
                 "nn-gpu-bench: cannot read lengths from '%s' (--lengths)\n",
                 lengths.c_str());
    return 1;
  }
  nn::CudaDeviceInfo info;
  (void)nn::cudaDeviceInfo(info); // available: checked above
  std::printf("%s (sm_%d, %d SMs, peak %.0f GB/s); B = %d, T_max = %lld, "
              "N = %lld, N / (B * T_max) = %.4f\n",
              info.name.c_str(), info.computeCapability, info.multiprocessors,
              info.peakBandwidthGBs, kBatch, (long long)gPadded,
              (long long)gFrames, (double)gFrames / (kBatch * gPadded));
  int restCount = rest.size();
  benchmark::Initialize(&restCount, rest.data());
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
