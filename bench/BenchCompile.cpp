//===- BenchCompile.cpp - how nn-bench compiles and runs its models -------===//

#include "BenchCompile.h"

#include "runtime/Allocator.h"

#include <cstdio>
#include <cstdlib>

bool nn::bench::gThreadedCode = true;
nn::GemmLibrary nn::bench::gGemmLibrary = nn::GemmLibrary::onednn;

nn::Executable nn::bench::compile(const std::string &source, bool pack,
                                  bool blas, bool grads,
                                  std::vector<std::string> inputGradients,
                                  bool trainStep, bool training, Fusion fusion,
                                  bool saveLstmTape,
                                  nn::PackFrontier frontier) {
  nn::CompileOptions options;
  options.optimize.pack = pack;
  options.optimize.packFrontier = frontier;
  options.optimize.fuseLossTail = fusion != Fusion::Unfused;
  options.optimize.lossTailBackward = fusion == Fusion::Recompute
                                          ? nn::LossTailBackward::recompute
                                          : nn::LossTailBackward::sweep;
  options.codegen.blas = blas;
  options.grads = grads;
  options.inputGradients = std::move(inputGradients);
  options.training = training;
  options.trainStep = trainStep;
  options.optimize.saveLstmTape = saveLstmTape;
  return compile(source, std::move(options));
}

nn::Executable nn::bench::compile(const std::string &source,
                                  nn::CompileOptions options) {
  options.cpu.threads = gThreadedCode;
  options.cpu.gemmLibrary = gGemmLibrary;
  nn::Executable exe;
  absl::StatusOr<nn::Artifact> artifact =
      nn::compileSource(source, "bench.mlir", options);
  absl::Status status = artifact.status();
  if (status.ok())
    status = nn::Executable::load(artifact->path(), exe);
  if (!status.ok()) {
    std::fprintf(stderr, "nn-bench: %s\n",
                 std::string(status.message()).c_str());
    std::exit(1);
  }
  return exe;
}

void nn::bench::runMeasured(benchmark::State &state, nn::Executable &exe,
                            const nn::RunInputs &inputs,
                            nn::RunResult &result) {
  for (auto _ : state) {
    absl::Status status = exe.run(inputs, result);
    if (!status.ok())
      state.SkipWithError(std::string(status.message()).c_str());
  }
  result = nn::RunResult();
  nn::runtime::resetPeakLiveBytes();
  (void)exe.run(inputs, result);
  state.counters["peak_MiB"] =
      static_cast<double>(nn::runtime::peakLiveBytes()) / (1 << 20);
}
