//===- BenchCompile.h - how nn-bench compiles its models --------*- C++ -*-===//
//
// The compile options every nn-bench model shares (threads in generated
// code, the GEMM library, set from the command line) and the measured run
// that reports the peak of large buffers. Shared by the benchmark files of
// nn-bench.
//
//===----------------------------------------------------------------------===//

#ifndef NN_BENCH_BENCHCOMPILE_H
#define NN_BENCH_BENCHCOMPILE_H

#include "nn/Compiler.h"
#include "nn/Runtime.h"

#include <benchmark/benchmark.h>

#include <string>
#include <vector>

namespace nn::bench {

/// Whether generated loops are compiled for threads (--no-threaded-code
/// compiles every artifact without them, to compare in separate runs).
extern bool gThreadedCode;

/// The f32 GEMM library of every artifact (--gemm-library onednn|openblas).
extern nn::GemmLibrary gGemmLibrary;

/// How the loss tail is compiled: unfused, or fused (nn-fuse-loss-tail)
/// with its gradient in the forward's sweep or recomputed.
enum class Fusion { Unfused = 0, Sweep = 1, Recompute = 2 };

/// Compiles `source` for the CPU with these options, or exits with the
/// compiler's message.
nn::Executable compile(const std::string &source, bool pack, bool blas,
                       bool grads = false,
                       std::vector<std::string> inputGradients = {},
                       bool trainStep = false, bool training = false,
                       Fusion fusion = Fusion::Sweep, bool saveLstmTape = true,
                       nn::PackFrontier frontier = nn::PackFrontier::cost);

/// Compiles `source` for the CPU with `options` (the threads and GEMM
/// library set from the flags), or exits with the compiler's message.
nn::Executable compile(const std::string &source, nn::CompileOptions options);

/// Runs `exe` for the benchmark, then once more to measure the peak of
/// the large buffers live during a run (runtime/Allocator.h: blocks of
/// 1 MiB and more), reported in MiB.
void runMeasured(benchmark::State &state, nn::Executable &exe,
                 const nn::RunInputs &inputs, nn::RunResult &result);

} // namespace nn::bench

#endif // NN_BENCH_BENCHCOMPILE_H
