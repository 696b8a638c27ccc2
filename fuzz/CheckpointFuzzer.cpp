//===- CheckpointFuzzer.cpp - libFuzzer target: checkpoints for a model ---===//
//
// A .npz as nn-train's --resume and --init-from read it: the archive,
// the counters, the finiteness of every value, then restoring it into a
// model's state, fresh (--init-from: model parameters only) and resumed
// (every parameter, counters continued). A crash, a sanitizer report, an
// error without a message, an accepted checkpoint with counters out of
// range or a non-finite value, or a restored state that does not match
// the model is a finding.
//
//===----------------------------------------------------------------------===//

#include "nn/Npy.h"
#include "nn/Train.h"

#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>

namespace {

/// A train step's parameters: a weight and a bias with Adam's state.
nn::Manifest model() {
  using nn::Axis;
  using nn::DType;
  nn::Manifest m;
  m.graph = "g";
  auto parameter = [&](const std::string &name, DType dtype,
                       std::vector<int64_t> sizes) {
    nn::TensorInfo info;
    info.name = name;
    info.dtype = dtype;
    for (int64_t size : sizes)
      info.axes.push_back(Axis{"", size});
    m.parameters.push_back(info);
  };
  for (const char *prefix : {"", "optimizer/adam_m/", "optimizer/adam_v/"}) {
    parameter(std::string(prefix) + "out.w", DType::f32, {4, 3});
    parameter(std::string(prefix) + "out.b", DType::f64, {4});
  }
  return m;
}

bool allFinite(const nn::Tensor &tensor) {
  for (int64_t i = 0; i < tensor.numElements(); ++i)
    if (!std::isfinite(tensor.at(i)))
      return false;
  return true;
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  static const nn::Manifest manifest = model();
  std::map<std::string, nn::Tensor> arrays;
  if (!nn::parseNpz(std::string(reinterpret_cast<const char *>(data), size),
                    "'fuzz.npz'", arrays)
           .ok())
    return 0;
  nn::TrainState checkpoint;
  absl::Status status =
      nn::checkpointFromArrays(std::move(arrays), "'fuzz.npz'", checkpoint);
  // With NN_FUZZ_VERBOSE set, what happened (to check the seeds, and to
  // read a reproduced input).
  bool verbose = std::getenv("NN_FUZZ_VERBOSE") != nullptr;
  if (!status.ok()) {
    if (status.message().empty())
      __builtin_trap();
    if (verbose)
      std::fprintf(stderr, "refused: %s\n",
                   std::string(status.message()).c_str());
    return 0;
  }
  if (checkpoint.step < 0 || checkpoint.batches < checkpoint.step ||
      checkpoint.batches > nn::kMaxTrainSteps)
    __builtin_trap();
  for (const auto &[name, tensor] : checkpoint.parameters)
    if ((tensor.dtype() == nn::DType::f32 ||
         tensor.dtype() == nn::DType::f64) &&
        !allFinite(tensor))
      __builtin_trap();
  for (bool resume : {false, true}) {
    nn::TrainState state;
    if (!nn::initializeParameters(manifest, 1, state.parameters).ok())
      __builtin_trap();
    status = nn::restoreParameters(manifest, checkpoint, resume, "'fuzz.npz'",
                                   state);
    if (verbose)
      std::fprintf(stderr, "%s: %s\n", resume ? "resume" : "init",
                   status.ok() ? "restored"
                               : std::string(status.message()).c_str());
    if (!status.ok()) {
      if (status.message().empty())
        __builtin_trap();
      continue;
    }
    // The state is the model's, tensor for tensor.
    if (state.parameters.size() != manifest.parameters.size())
      __builtin_trap();
    for (const nn::TensorInfo &info : manifest.parameters) {
      const nn::Tensor &tensor = state.parameters.at(info.name);
      if (tensor.dtype() != info.dtype ||
          tensor.rank() != (int64_t)info.axes.size())
        __builtin_trap();
      // Starting from a file takes no optimizer state.
      if (!resume && nn::isOptimizerState(info.name))
        for (int64_t i = 0; i < tensor.numElements(); ++i)
          if (tensor.at(i) != 0)
            __builtin_trap();
    }
    if (!resume && (state.step != 0 || state.batches != 0))
      __builtin_trap();
  }
  return 0;
}
