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
// for GPU artifacts, the kernels' device time per run. --train N runs a
// train step artifact (nn-train --emit-artifacts) for N steps on the
// synthetic segment task from fresh parameters (--seed), printing each
// step's losses and gradient norm: how scripts/gpu-check.sh trains on a
// GPU where no compiler is installed.
//
//===----------------------------------------------------------------------===//

#include "nn/Runtime.h"
#include "nn/Synthetic.h"
#include "nn/Train.h"
#include "tools/common/Json.h"

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <map>
#include <sstream>

namespace {

const char *kUsage =
    "usage: nn-exec ARTIFACT.so [options]\n"
    "\n"
    "Runs an artifact that nn-run --emit-artifact wrote on a seeded synthetic\n"
    "batch, with the runtime alone.\n"
    "\n"
    "  --batch N          sequences per batch (default 8)\n"
    "  --min-len T        shortest synthetic length (default 1)\n"
    "  --max-len T        longest synthetic length (default 50)\n"
    "  --lengths L1,L2,.. these lengths for every root sequence dim\n"
    "  --dim-len D=A:B    lengths of sequence dim D in [A, B] (overrides\n"
    "                     --min-len/--max-len for it; repeatable)\n"
    "  --seed S           seed of the synthetic batch (default 1)\n"
    "  --repeat N         N more runs; print the median time per run\n"
    "  --train N          a train step artifact: N steps on the synthetic\n"
    "                     segment task (--batch sequences each) from fresh\n"
    "                     parameters, Adam's learning rate --lr (1e-3)\n"
    "  --lr X             the learning rate of --train\n"
    "  --num-threads N    threads for generated loops and BLAS together\n"
    "                     (default 0: each library's default, all cores)\n"
    "  --json             print results as JSON (non-finite numbers as the\n"
    "                     strings \"Infinity\", \"-Infinity\", \"NaN\")\n"
    "  --help             this text\n";

int usage(const std::string &why) {
  std::fprintf(stderr, "nn-exec: %s\n%s", why.c_str(), kUsage);
  return 2;
}

std::string number(double value) {
  char buffer[64];
  std::snprintf(buffer, sizeof(buffer), "%.9g", value);
  return buffer;
}

/// A decimal integer in [min, max], all of `text`.
bool parseInteger(const char *text, int64_t min, int64_t max, int64_t &value) {
  errno = 0;
  char *end = nullptr;
  long long parsed = std::strtoll(text, &end, 10);
  if (errno != 0 || end == text || *end != '\0' || parsed < min || parsed > max)
    return false;
  value = parsed;
  return true;
}

/// --train: `steps` train steps from parameters drawn with `seed`, batch
/// n of the segment task drawn from seed and n; one line (or JSON object)
/// per step.
int train(const nn::Executable &exe, int64_t steps, int64_t batch, int64_t seed,
          double lr, bool json) {
  const nn::Manifest &manifest = exe.manifest();
  absl::StatusOr<nn::SegmentBinding> binding = nn::bindSegmentTask(manifest);
  absl::Status status = binding.status();
  nn::TrainState state;
  if (status.ok())
    status = nn::initializeParameters(manifest, seed, state.parameters);
  if (status.ok())
    binding->task.seed = (uint32_t)seed;
  for (int64_t n = 0; status.ok() && n < steps; ++n) {
    std::mt19937 rng((uint32_t)(seed * 7919 + n));
    nn::StepReport report;
    status = nn::runTrainStep(exe, nn::segmentBatchFor(*binding, batch, rng),
                              lr, (uint32_t)(seed + n), state, report);
    if (!status.ok())
      break;
    if (json) {
      std::printf("{\"step\": %lld, \"grad_norm\": %s, \"losses\": {",
                  (long long)report.step,
                  nn::tools::jsonNumber(report.gradNorm).c_str());
      for (size_t i = 0; i < report.losses.size(); ++i)
        std::printf(
            "%s%s: %s", i ? ", " : "",
            nn::tools::jsonString(report.losses[i].name).c_str(),
            nn::tools::jsonNumber(nn::lossValue(manifest, report.losses[i]))
                .c_str());
      std::printf("}}\n");
    } else {
      std::printf("step %lld grad_norm %s", (long long)report.step,
                  number(report.gradNorm).c_str());
      for (const nn::LossValue &loss : report.losses)
        std::printf(" %s %s", loss.name.c_str(),
                    number(nn::lossValue(manifest, loss)).c_str());
      std::printf("\n");
    }
  }
  if (!status.ok()) {
    std::fprintf(stderr, "nn-exec: %s\n",
                 std::string(status.message()).c_str());
    return 1;
  }
  return 0;
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
  std::string path;
  int64_t batch = 8, minLength = 1, maxLength = 50, repeat = 0, seed = 1;
  int64_t trainSteps = 0;
  double lr = 1e-3;
  bool json = false;
  std::vector<int32_t> fixed;
  std::map<std::string, std::pair<int64_t, int64_t>> dimRanges;
  constexpr int64_t kMaxLength = std::numeric_limits<int32_t>::max();
  for (int i = 1; i < argc; ++i) {
    std::string flag = argv[i];
    if (flag == "--help" || flag == "-h") {
      std::fputs(kUsage, stdout);
      return 0;
    }
    if (flag.rfind("-", 0) != 0) {
      if (!path.empty())
        return usage("more than one artifact given");
      path = flag;
      continue;
    }
    if (flag == "--json") {
      json = true;
      continue;
    }
    if (i + 1 >= argc)
      return usage(flag + " needs a value");
    const char *value = argv[++i];
    auto integer = [&](int64_t min, int64_t max, int64_t &out) {
      return parseInteger(value, min, max, out);
    };
    bool ok = true;
    if (flag == "--batch")
      ok = integer(1, 1 << 20, batch);
    else if (flag == "--min-len")
      ok = integer(0, kMaxLength, minLength);
    else if (flag == "--max-len")
      ok = integer(0, kMaxLength, maxLength);
    else if (flag == "--seed")
      ok = integer(0, std::numeric_limits<uint32_t>::max(), seed);
    else if (flag == "--repeat")
      ok = integer(0, 1 << 20, repeat);
    else if (flag == "--train")
      ok = integer(1, 1 << 20, trainSteps);
    else if (flag == "--num-threads") {
      int64_t threads = 0;
      ok = integer(0, 1 << 12, threads);
      nn::setNumThreads((int)threads);
    } else if (flag == "--lr") {
      char *end = nullptr;
      lr = std::strtod(value, &end);
      ok = end != value && *end == '\0' && std::isfinite(lr) && lr >= 0;
    } else if (flag == "--dim-len") {
      std::string text = value;
      size_t equals = text.find('='), colon = text.find(':', equals);
      int64_t low = 0, high = 0;
      ok = equals != std::string::npos && equals > 0 &&
           colon != std::string::npos &&
           parseInteger(text.substr(equals + 1, colon - equals - 1).c_str(), 0,
                        kMaxLength, low) &&
           parseInteger(text.substr(colon + 1).c_str(), 0, kMaxLength, high) &&
           low <= high;
      if (ok)
        dimRanges[text.substr(0, equals)] = {low, high};
    } else if (flag == "--lengths") {
      std::stringstream list(value);
      for (std::string item; ok && std::getline(list, item, ',');) {
        int64_t length;
        ok = parseInteger(item.c_str(), 0, kMaxLength, length);
        fixed.push_back((int32_t)length);
      }
      ok = ok && !fixed.empty();
    } else
      return usage("unknown option " + flag);
    if (!ok)
      return usage("bad value '" + std::string(value) + "' for " + flag);
  }
  if (path.empty())
    return usage("no artifact given");
  if (minLength > maxLength)
    return usage("--min-len " + std::to_string(minLength) +
                 " is above --max-len " + std::to_string(maxLength));

  nn::Executable exe;
  absl::Status status = nn::Executable::load(path, exe);
  if (!status.ok()) {
    std::fprintf(stderr, "nn-exec: %s\n",
                 std::string(status.message()).c_str());
    return 1;
  }
  const nn::Manifest &manifest = exe.manifest();
  if (trainSteps > 0)
    return train(exe, trainSteps, batch, seed, lr, json);
  for (const auto &[name, range] : dimRanges) {
    const nn::DimInfo *dim = manifest.findDim(name);
    if (!dim || dim->kind != nn::DimInfo::Kind::seq || !dim->source.empty())
      return usage("--dim-len " + name +
                   ": the artifact has no root "
                   "sequence dim named '" +
                   name + "'");
  }
  std::mt19937 rng((unsigned)seed);
  std::map<std::string, std::vector<int32_t>> lengths;
  if (!fixed.empty())
    batch = (int64_t)fixed.size();
  for (const std::string &root : manifest.rootDims) {
    if (manifest.findDim(root)->kind != nn::DimInfo::Kind::seq)
      continue;
    std::vector<int32_t> &values = lengths[root];
    values = fixed;
    auto range = dimRanges.find(root);
    std::uniform_int_distribution<int32_t> pick(
        range != dimRanges.end() ? range->second.first : minLength,
        range != dimRanges.end() ? range->second.second : maxLength);
    while ((int64_t)values.size() < batch)
      values.push_back(pick(rng));
  }
  nn::RunInputs inputs = nn::syntheticBatch(manifest, batch, lengths, rng);
  nn::syntheticParameters(manifest, rng, inputs);

  nn::RunResult result;
  status = exe.run(inputs, result);
  if (!status.ok()) {
    std::fprintf(stderr, "nn-exec: %s\n",
                 std::string(status.message()).c_str());
    return 1;
  }
  std::vector<double> times;
  double deviceMs = 0;
  if (repeat > 0) {
    // Devices that record no profile (the host) report no device time.
    exe.setProfiling(true);
    for (int64_t r = 0; r < repeat; ++r) {
      auto start = std::chrono::steady_clock::now();
      status = exe.run(inputs, result);
      auto stop = std::chrono::steady_clock::now();
      if (!status.ok()) {
        std::fprintf(stderr, "nn-exec: %s\n",
                     std::string(status.message()).c_str());
        return 1;
      }
      times.push_back(
          std::chrono::duration<double, std::milli>(stop - start).count());
    }
    for (const nn::KernelTime &time : exe.takeProfile())
      deviceMs += time.milliseconds;
    exe.setProfiling(false);
    std::sort(times.begin(), times.end());
  }

  // The runs above validated these inputs already.
  nn::DimValues dims;
  (void)exe.validate(inputs, dims);
  if (json)
    std::printf("{\"graph\": %s, \"target\": %s, \"losses\": [",
                nn::tools::jsonString(manifest.graph).c_str(),
                nn::tools::jsonString(manifest.target).c_str());
  else
    std::printf("graph @%s on %s\n", manifest.graph.c_str(),
                manifest.target.c_str());
  auto show = [&](double value) {
    return json ? nn::tools::jsonNumber(value) : number(value);
  };
  for (size_t i = 0; i < result.losses.size(); ++i) {
    const nn::LossValue &loss = result.losses[i];
    std::printf(json ? "%s{\"name\": %s, \"sum\": %s, \"normalized\": %s}"
                     : "%sloss %s: sum %s, normalized %s\n",
                json && i ? ", " : "",
                json ? nn::tools::jsonString(loss.name).c_str()
                     : loss.name.c_str(),
                show(loss.sum).c_str(), show(loss.normalized).c_str());
  }
  std::printf(json ? "], \"outputs\": [" : "");
  for (size_t i = 0; i < result.outputs.size(); ++i) {
    const auto &[name, tensor] = result.outputs[i];
    auto [sum, squares] = moments(manifest, dims, manifest.outputs[i], tensor);
    std::printf(json ? "%s{\"name\": %s, \"sum\": %s, \"sum_squares\": %s}"
                     : "%soutput %s: valid sum %s, sum of squares %s\n",
                json && i ? ", " : "",
                json ? nn::tools::jsonString(name).c_str() : name.c_str(),
                show(sum).c_str(), show(squares).c_str());
  }
  if (json)
    std::printf("]");
  if (!times.empty())
    std::printf(json ? ", \"median_ms\": %s, \"device_ms\": %s"
                     : "median %s ms per run, kernels %s ms per run\n",
                show(times[times.size() / 2]).c_str(),
                show(deviceMs / times.size()).c_str());
  std::printf(json ? "}\n" : "");
  return 0;
}
