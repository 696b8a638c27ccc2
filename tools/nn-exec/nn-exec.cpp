//===- nn-exec.cpp - run a compiled artifact with the runtime alone -------===//
//
// Loads an artifact that `nn-run --emit-artifact` wrote and runs it on a
// seeded synthetic batch. It links libNNRuntime only (no MLIR, no LLVM), so
// it runs where the compiler is not installed: scripts/gpu-check.sh ships
// it with prebuilt GPU artifacts to a machine with a GPU.
//
//   nn-exec ARTIFACT.so [--batch N] [--max-len T] [--min-len T]
//           [--lengths L1,L2,...] [--seed S] [--repeat N] [--json]
//
// Every root sequence dim takes the same lengths. --repeat N runs N more
// times after the first and prints the median wall time per run (ms) and,
// for GPU artifacts, the kernels' device time per run.
//
//===----------------------------------------------------------------------===//

#include "nn/Runtime.h"
#include "nn/Synthetic.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <sstream>

namespace {

int usage() {
  std::fprintf(stderr,
               "usage: nn-exec ARTIFACT.so [--batch N] [--min-len T] "
               "[--max-len T] [--lengths L1,L2,...] [--seed S] [--repeat N] "
               "[--json]\n");
  return 2;
}

std::string number(double value) {
  if (std::isnan(value))
    return "NaN";
  char buffer[64];
  std::snprintf(buffer, sizeof(buffer), "%.9g", value);
  return buffer;
}

/// Sum and sum of squares of an output over its valid positions.
std::pair<double, double> moments(const nn::Manifest &manifest,
                                  const nn::DimValues &dims,
                                  const nn::TensorInfo &info,
                                  const nn::Tensor &tensor) {
  double sum = 0, squares = 0;
  int64_t flat = 0;
  nn::forEachIndex(tensor.shape(), [&](const std::vector<int64_t> &index) {
    double value = tensor.at(flat++);
    if (dims.isValid(info.axes, index)) {
      sum += value;
      squares += value * value;
    }
  });
  (void)manifest;
  return {sum, squares};
}

} // namespace

int main(int argc, char **argv) {
  if (argc < 2)
    return usage();
  std::string path = argv[1];
  int64_t batch = 8, minLength = 1, maxLength = 50, repeat = 0;
  unsigned seed = 1;
  bool json = false;
  std::vector<int32_t> fixed;
  for (int i = 2; i < argc; ++i) {
    auto value = [&]() -> const char * {
      if (i + 1 >= argc) {
        std::fprintf(stderr, "nn-exec: %s needs a value\n", argv[i]);
        std::exit(2);
      }
      return argv[++i];
    };
    if (!std::strcmp(argv[i], "--batch"))
      batch = std::atoll(value());
    else if (!std::strcmp(argv[i], "--min-len"))
      minLength = std::atoll(value());
    else if (!std::strcmp(argv[i], "--max-len"))
      maxLength = std::atoll(value());
    else if (!std::strcmp(argv[i], "--seed"))
      seed = std::atoi(value());
    else if (!std::strcmp(argv[i], "--repeat"))
      repeat = std::atoll(value());
    else if (!std::strcmp(argv[i], "--json"))
      json = true;
    else if (!std::strcmp(argv[i], "--lengths")) {
      std::stringstream list(value());
      for (std::string item; std::getline(list, item, ',');)
        fixed.push_back(std::atoi(item.c_str()));
    } else
      return usage();
  }

  nn::Executable exe;
  nn::Status status = nn::Executable::load(path, exe);
  if (!status.ok()) {
    std::fprintf(stderr, "nn-exec: %s\n", status.message().c_str());
    return 1;
  }
  const nn::Manifest &manifest = exe.manifest();
  std::mt19937 rng(seed);
  std::map<std::string, std::vector<int32_t>> lengths;
  if (!fixed.empty())
    batch = (int64_t)fixed.size();
  for (const std::string &root : manifest.rootDims) {
    if (manifest.findDim(root)->kind != nn::DimInfo::Kind::seq)
      continue;
    std::vector<int32_t> &values = lengths[root];
    values = fixed;
    std::uniform_int_distribution<int32_t> pick(minLength, maxLength);
    while ((int64_t)values.size() < batch)
      values.push_back(pick(rng));
  }
  nn::RunInputs inputs = nn::syntheticBatch(manifest, batch, lengths, rng);
  nn::syntheticParameters(manifest, rng, inputs);

  nn::RunResult result;
  status = exe.run(inputs, result);
  if (!status.ok()) {
    std::fprintf(stderr, "nn-exec: %s\n", status.message().c_str());
    return 1;
  }
  std::vector<double> times;
  double deviceMs = 0;
  if (repeat > 0) {
    bool gpu = manifest.target == "cuda";
    if (gpu)
      nn::cudaSetProfiling(true);
    for (int64_t r = 0; r < repeat; ++r) {
      auto start = std::chrono::steady_clock::now();
      status = exe.run(inputs, result);
      auto stop = std::chrono::steady_clock::now();
      if (!status.ok()) {
        std::fprintf(stderr, "nn-exec: %s\n", status.message().c_str());
        return 1;
      }
      times.push_back(
          std::chrono::duration<double, std::milli>(stop - start).count());
    }
    if (gpu) {
      for (const nn::KernelTime &time : nn::cudaTakeProfile())
        deviceMs += time.milliseconds;
      nn::cudaSetProfiling(false);
    }
    std::sort(times.begin(), times.end());
  }

  nn::DimValues dims;
  exe.validate(inputs, dims);
  std::printf(json ? "{\"graph\": \"%s\", \"target\": \"%s\", \"losses\": ["
                   : "graph @%s on %s\n",
              manifest.graph.c_str(), manifest.target.c_str());
  for (size_t i = 0; i < result.losses.size(); ++i) {
    const nn::LossValue &loss = result.losses[i];
    std::printf(json ? "%s{\"name\": \"%s\", \"sum\": %s, \"normalized\": %s}"
                     : "%sloss %s: sum %s, normalized %s\n",
                json && i ? ", " : "", loss.name.c_str(),
                number(loss.sum).c_str(), number(loss.normalized).c_str());
  }
  std::printf(json ? "], \"outputs\": [" : "");
  for (size_t i = 0; i < result.outputs.size(); ++i) {
    const auto &[name, tensor] = result.outputs[i];
    auto [sum, squares] = moments(manifest, dims, manifest.outputs[i], tensor);
    std::printf(json ? "%s{\"name\": \"%s\", \"sum\": %s, \"sum_squares\": %s}"
                     : "%soutput %s: valid sum %s, sum of squares %s\n",
                json && i ? ", " : "", name.c_str(), number(sum).c_str(),
                number(squares).c_str());
  }
  if (json)
    std::printf("]");
  if (!times.empty())
    std::printf(json ? ", \"median_ms\": %s, \"device_ms\": %s"
                     : "median %s ms per run, kernels %s ms per run\n",
                number(times[times.size() / 2]).c_str(),
                number(deviceMs / times.size()).c_str());
  std::printf(json ? "}\n" : "");
  return 0;
}
