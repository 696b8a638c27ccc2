//===- Train.cpp - train steps, their state and checkpoints ---------------===//

#include "nn/Train.h"

#include "nn/DataParallel.h"
#include "nn/Npy.h"
#include "runtime/SplitMix64.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <limits>
#include <set>
#include <unistd.h>

using namespace nn;

namespace {

uint64_t nameHash(const std::string &name) {
  uint64_t hash = 0xcbf29ce484222325ull;
  for (unsigned char c : name)
    hash = (hash ^ c) * 0x100000001b3ull;
  return hash;
}

} // namespace

absl::Status nn::initializeParameters(const Manifest &manifest, uint64_t seed,
                                      std::map<std::string, Tensor> &out) {
  for (const TensorInfo &info : manifest.parameters) {
    std::vector<int64_t> shape;
    for (const Axis &axis : info.axes)
      shape.push_back(axis.size);
    if (info.dtype != DType::f32 && info.dtype != DType::f64)
      return absl::InvalidArgumentError("parameter '" + info.name +
                                        "' is not a float tensor");
    Tensor tensor(info.dtype, shape);
    runtime::SplitMix64 rng{seed ^ nameHash(info.name)};
    int64_t count = tensor.numElements();
    auto set = [&](int64_t i, double value) {
      if (info.dtype == DType::f32)
        tensor.data<float>()[i] = (float)value;
      else
        tensor.data<double>()[i] = value;
    };
    for (int64_t i = 0; i < count; ++i) {
      double value = 0;
      if (info.init == "ones") {
        value = 1;
      } else if (info.init == "uniform") {
        value = info.initScale * (2 * rng.uniform() - 1);
      } else if (info.init == "normal") {
        double u = rng.uniform(), v = rng.uniform();
        value = info.initScale * std::sqrt(-2 * std::log(u)) *
                std::cos(2 * M_PI * v);
      }
      set(i, value);
    }
    out[info.name] = std::move(tensor);
  }
  return absl::OkStatus();
}

absl::Status nn::checkTrainStep(const Manifest &manifest) {
  bool hasNorm = false, hasUpdate = false;
  for (const TensorInfo &output : manifest.outputs) {
    hasNorm |= output.name == "grad_norm";
    hasUpdate |= output.name.rfind("update:", 0) == 0;
  }
  bool hasRate = std::any_of(
      manifest.inputs.begin(), manifest.inputs.end(),
      [](const TensorInfo &input) { return input.name == "learning_rate"; });
  if (!hasNorm || !hasUpdate || !hasRate)
    return absl::InvalidArgumentError(
        "graph @" + manifest.graph +
        " is not a train step (compile it with CompileOptions::trainStep)");
  return absl::OkStatus();
}

double nn::lossValue(const Manifest &manifest, const LossValue &loss) {
  for (const LossInfo &info : manifest.losses)
    if (info.name == loss.name)
      return info.useNormalizedLoss ? loss.normalized : loss.sum;
  return loss.normalized;
}

absl::Status nn::runTrainStep(const Executable &executable, RunInputs batch,
                              double learningRate, uint32_t dropoutSeed,
                              TrainState &state, StepReport &report,
                              int64_t firstSequence) {
  const Manifest &manifest = executable.manifest();
  if (absl::Status status = checkTrainStep(manifest); !status.ok())
    return status;
  if (state.step < 0 || state.step >= kMaxTrainSteps)
    return absl::OutOfRangeError(
        "the update counter is at " + std::to_string(state.step) +
        "; a train step counts at most " + std::to_string(kMaxTrainSteps) +
        " updates (Adam's step input is i32)");
  if (state.batches < state.step || state.batches >= kMaxTrainSteps)
    return absl::OutOfRangeError(
        "the batch counter is at " + std::to_string(state.batches) + " with " +
        std::to_string(state.step) + " updates; a step needs it in [updates, " +
        std::to_string(kMaxTrainSteps) + ")");
  // A NaN rate is what a newbob schedule gives without its epoch's rate
  // (LearningRateSchedule::at).
  if (!(learningRate >= 0) ||
      !(learningRate <= std::numeric_limits<float>::max()))
    return absl::InvalidArgumentError(
        "the learning rate is " + std::to_string(learningRate) +
        "; a train step takes a number in [0, 3.4e38] (a newbob schedule's "
        "rate comes from LearningRateSchedule::at(step, epochRate))");
  if (Communicator *ranks = currentCommunicator(); ranks && ranks->size() > 1) {
    // Each rank would train on its part alone, the others' never summed in.
    if (!manifest.dataParallel)
      return absl::FailedPreconditionError(
          ranks->describe() + ": train step @" + manifest.graph +
          " was not compiled data-parallel (the optimizer's data-parallel "
          "option), but runs on " +
          std::to_string(ranks->size()) + " ranks");
    // The step hands its buffers to the communicator: the memory must be
    // the one it sums.
    if (executable.runsOnHost() == ranks->sumsDeviceMemory())
      return absl::FailedPreconditionError(
          ranks->describe() + ": train step @" + manifest.graph + " runs on " +
          executable.deviceName() + ", but its ranks' communicator (" +
          ranks->backend() + ") sums " +
          (ranks->sumsDeviceMemory() ? "GPU" : "host") +
          " memory (a GPU step sums with NCCL: nn::makeNcclCommunicator)");
  }
  report = StepReport();
  report.step = state.step + 1;
  report.learningRate = learningRate;
  for (const TensorInfo &input : manifest.inputs) {
    if (input.name == "learning_rate")
      batch.inputs[input.name] =
          Tensor::of<float>(DType::f32, {}, {(float)learningRate});
    else if (input.name == "step")
      batch.inputs[input.name] =
          Tensor::of<int32_t>(DType::i32, {}, {(int32_t)report.step});
    else if (input.name == "dropout_seed" && input.axes.empty())
      batch.inputs[input.name] =
          Tensor::of<int32_t>(DType::i32, {}, {(int32_t)dropoutSeed});
    else if (input.name == "dropout_seed")
      batch.inputs[input.name] = Tensor::of<int32_t>(
          DType::i32, {2}, {(int32_t)dropoutSeed, (int32_t)firstSequence});
  }
  // The state is resident where the step runs. On the host it moves in
  // for this step and back (no copies); on another device it stays there
  // from the first step on (syncToHost brings it back).
  bool onHost = executable.runsOnHost();
  ResidentTensors stepLocal;
  ResidentTensors *resident = &stepLocal;
  if (!onHost && state.resident)
    resident = state.resident.get();
  if (onHost || !state.resident) {
    std::map<std::string, Tensor> tensors;
    for (const TensorInfo &info : manifest.parameters) {
      auto found = state.parameters.find(info.name);
      if (found == state.parameters.end())
        return absl::InvalidArgumentError("the train state has no parameter '" +
                                          info.name + "'");
      tensors[info.name] =
          onHost ? std::move(found->second) : Tensor(found->second);
    }
    if (!onHost) {
      state.resident = std::make_shared<ResidentTensors>();
      resident = state.resident.get();
    }
    absl::Status status = resident->place(executable, std::move(tensors));
    if (!status.ok()) {
      if (onHost)
        (void)stepLocal.fetch(state.parameters);
      state.resident.reset();
      return status;
    }
  }
  // The update is applied only when the objective, the gradient norm and
  // the norm of the updated values are finite: finite gradients can still
  // give non-finite parameters (a huge learning rate, an Adam moment past
  // the float range), which must never replace the state.
  // A data-parallel step (nn-all-reduce-gradients) ran on this rank's part
  // of the batch: the whole batch's losses decide for every rank alike,
  // so that no rank applies an update another one skips.
  Communicator *communicator = currentCommunicator();
  if (communicator && communicator->size() < 2)
    communicator = nullptr;

  absl::Status reduced;
  auto accept = [&](const RunResult &result) {
    report.losses = result.losses;
    if (communicator) {
      reduced = allReduceLosses(communicator->host(), manifest, report.losses);
      if (!reduced.ok())
        return report.applied = false;
    }
    for (const LossValue &loss : report.losses)
      if (!loss.asError)
        report.objective += loss.scale * lossValue(manifest, loss);
    bool updatedFinite = true;
    for (const auto &[name, tensor] : result.outputs) {
      if (name == "grad_norm")
        report.gradNorm = tensor.at(0);
      else if (name == "updated_norm")
        updatedFinite = std::isfinite(report.updatedNorm = tensor.at(0));
    }
    report.applied = std::isfinite(report.objective) &&
                     std::isfinite(report.gradNorm) && updatedFinite;
    return report.applied;
  };
  RunResult result;
  absl::Status status =
      executable.runResident(batch, *resident, result, accept);
  if (onHost) {
    absl::Status back = stepLocal.fetch(state.parameters);
    if (status.ok())
      status = back;
  }
  if (status.ok())
    status = reduced;
  if (!status.ok())
    return status;
  ++state.batches;
  if (report.applied)
    state.step = report.step;
  return absl::OkStatus();
}

DimValues nn::dimsOfBatch(const Manifest &manifest, const RunInputs &inputs) {
  DimValues dims;
  dims.lengths = inputs.lengths;
  for (const TensorInfo &input : manifest.inputs) {
    auto found = inputs.inputs.find(input.name);
    if (found == inputs.inputs.end())
      continue;
    const std::vector<int64_t> &shape = found->second.shape();
    for (size_t i = 0; i < input.axes.size() && i < shape.size(); ++i)
      if (input.axes[i].isNamed())
        dims.sizes[input.axes[i].dim] = shape[i];
  }
  deriveDims(manifest, dims);
  return dims;
}

absl::StatusOr<MemoryFloor> nn::trainStepFloor(const Manifest &manifest,
                                               const RunInputs &batch) {
  DimValues dims = dimsOfBatch(manifest, batch);
  auto bytesOf = [&](const TensorInfo &info,
                     const std::string &what) -> absl::StatusOr<int64_t> {
    std::vector<int64_t> shape;
    for (const Axis &axis : info.axes) {
      if (!axis.isNamed()) {
        shape.push_back(axis.size);
        continue;
      }
      auto size = dims.sizes.find(axis.dim);
      if (size == dims.sizes.end())
        return absl::InvalidArgumentError(what + " '" + info.name +
                                          "': the batch does not size dim '" +
                                          axis.dim + "'");
      shape.push_back(size->second);
    }
    int64_t bytes;
    if (!checkedByteSize(info.dtype, shape, bytes))
      return absl::InvalidArgumentError(what + " '" + info.name +
                                        "' of shape " + shapeText(shape) +
                                        " overflows 64 bits");
    return bytes;
  };

  MemoryFloor floor;
  // Each term fits in 64 bits (bytesOf); their sums are checked too.
  bool overflow = false;
  auto add = [&](int64_t &sum, int64_t bytes) {
    overflow |= __builtin_add_overflow(sum, bytes, &sum);
  };
  std::map<std::string, int64_t> parameterBytes;
  for (const TensorInfo &parameter : manifest.parameters) {
    absl::StatusOr<int64_t> bytes = bytesOf(parameter, "parameter");
    if (!bytes.ok())
      return bytes.status();
    parameterBytes[parameter.name] = *bytes;
    add(isOptimizerState(parameter.name) ? floor.optimizerState
                                         : floor.parameters,
        *bytes);
  }
  std::set<std::string> differentiated;
  for (const TensorInfo &output : manifest.outputs) {
    for (const char *prefix : {"grad:", "update:"}) {
      std::string name = output.name;
      if (name.rfind(prefix, 0) != 0)
        continue;
      name = name.substr(std::strlen(prefix));
      auto found = parameterBytes.find(name);
      if (found != parameterBytes.end() && !isOptimizerState(name) &&
          differentiated.insert(name).second)
        add(floor.gradients, found->second);
    }
  }
  for (const TensorInfo &input : manifest.inputs) {
    auto found = batch.inputs.find(input.name);
    if (found != batch.inputs.end()) {
      add(floor.inputs, (int64_t)found->second.sizeInBytes());
      continue;
    }
    // The scalars runTrainStep fills in (learning_rate, step, ...).
    absl::StatusOr<int64_t> bytes = bytesOf(input, "input");
    if (!bytes.ok())
      return absl::InvalidArgumentError("the batch has no input '" +
                                        input.name + "'");
    add(floor.inputs, *bytes);
  }
  std::map<std::string, int64_t> byOrigin;
  for (const TensorInfo &value : manifest.saved) {
    absl::StatusOr<int64_t> bytes = bytesOf(value, "saved value");
    if (!bytes.ok())
      return bytes.status();
    add(floor.saved, *bytes);
    add(byOrigin[value.name], *bytes);
  }
  int64_t total = 0;
  for (int64_t part : {floor.parameters, floor.optimizerState, floor.gradients,
                       floor.inputs, floor.saved})
    add(total, part);
  if (overflow)
    return absl::InvalidArgumentError(
        "the memory floor of @" + manifest.graph +
        " overflows 64 bits (its saved values or parameters are too large)");
  floor.savedByOrigin.assign(byOrigin.begin(), byOrigin.end());
  std::stable_sort(
      floor.savedByOrigin.begin(), floor.savedByOrigin.end(),
      [](const auto &a, const auto &b) { return a.second > b.second; });
  return floor;
}

absl::Status nn::syncToHost(TrainState &state) {
  if (!state.resident)
    return absl::OkStatus();
  return state.resident->fetch(state.parameters);
}

absl::Status nn::saveCheckpoint(const std::string &path,
                                const TrainState &state) {
  for (const char *key :
       {kCheckpointStepKey, kCheckpointBatchesKey, kCheckpointEpochRatesKey})
    if (state.parameters.count(key))
      return absl::InvalidArgumentError(
          std::string("a parameter is named '") + key +
          "', a key checkpoints keep their counters under");
  // On a GPU the current values are the resident ones.
  std::map<std::string, Tensor> arrays = state.parameters;
  if (state.resident)
    if (absl::Status status = state.resident->fetch(arrays); !status.ok())
      return status;
  // Training never applies a non-finite update, so a non-finite value
  // here came from elsewhere (a caller's state); a checkpoint holding it
  // would poison every run that starts from it.
  if (absl::Status status = checkFinite(arrays, "cannot save '" + path + "'");
      !status.ok())
    return status;
  arrays[kCheckpointStepKey] =
      Tensor::of<int64_t>(DType::i64, {}, {state.step});
  arrays[kCheckpointBatchesKey] =
      Tensor::of<int64_t>(DType::i64, {}, {state.batches});
  if (!state.epochRates.empty()) {
    std::vector<double> rows;
    for (const EpochRate &epoch : state.epochRates)
      rows.insert(rows.end(),
                  {epoch.rate, epoch.scored ? 1.0 : 0.0, epoch.score});
    arrays[kCheckpointEpochRatesKey] = Tensor::of<double>(
        DType::f64, {(int64_t)state.epochRates.size(), 3}, rows);
  }
  // writeNpz writes `path`.partial and renames it when it is complete: a
  // crash or a full disk never leaves half a checkpoint under its name.
  return writeNpz(path, arrays);
}

absl::Status nn::loadCheckpoint(const std::string &path, TrainState &state) {
  state = TrainState();
  std::map<std::string, Tensor> arrays;
  if (absl::Status status = readNpz(path, arrays); !status.ok())
    return status;
  return checkpointFromArrays(std::move(arrays), "checkpoint '" + path + "'",
                              state);
}

absl::Status nn::checkpointFromArrays(std::map<std::string, Tensor> arrays,
                                      const std::string &what,
                                      TrainState &state) {
  state = TrainState();
  // The counters are read as integers (a double would round 2^63 - 1 up
  // past the range) and bounded by what a train step counts.
  auto count = [&](const char *key, int64_t &out) {
    auto found = arrays.find(key);
    if (found == arrays.end())
      return absl::OkStatus();
    const Tensor &value = found->second;
    int64_t number = -1;
    if (value.rank() == 0 && value.dtype() == DType::i64)
      number = value.data<int64_t>()[0];
    else if (value.rank() == 0 && value.dtype() == DType::i32)
      number = value.data<int32_t>()[0];
    else
      return absl::InvalidArgumentError(what + ": '" + key +
                                        "' is not an i64 or i32 scalar");
    if (number < 0 || number > kMaxTrainSteps)
      return absl::OutOfRangeError(what + ": '" + key + "' is " +
                                   std::to_string(number) + ", outside [0, " +
                                   std::to_string(kMaxTrainSteps) + "]");
    out = number;
    arrays.erase(found);
    return absl::OkStatus();
  };
  bool hasBatches = arrays.count(kCheckpointBatchesKey) > 0;
  if (absl::Status status = count(kCheckpointStepKey, state.step); !status.ok())
    return status;
  if (absl::Status status = count(kCheckpointBatchesKey, state.batches);
      !status.ok())
    return status;
  if (!hasBatches)
    state.batches = state.step;
  // A newbob run's epochs; their scores may be NaN or infinite (a diverged
  // dev evaluation), so they are taken out before the finiteness check.
  if (auto found = arrays.find(kCheckpointEpochRatesKey);
      found != arrays.end()) {
    const Tensor &rows = found->second;
    std::string where = what + ": '" + kCheckpointEpochRatesKey + "'";
    if (rows.dtype() != DType::f64 || rows.rank() != 2 || rows.shape()[1] != 3)
      return absl::InvalidArgumentError(
          where + " is not a float64 [epochs, 3] array (rate, scored, score)");
    const double *row = rows.data<double>();
    for (int64_t e = 0; e < rows.shape()[0]; ++e, row += 3) {
      if (!(row[0] >= 0) || !std::isfinite(row[0]) ||
          (row[1] != 0 && row[1] != 1))
        return absl::InvalidArgumentError(
            where + ": epoch " + std::to_string(e + 1) +
            " needs a finite rate >= 0 and scored 0 or 1");
      state.epochRates.push_back({row[0], row[1] == 1, row[2]});
    }
    arrays.erase(found);
  }
  if (state.batches < state.step)
    return absl::InvalidArgumentError(
        what + ": '" + kCheckpointBatchesKey + "' (" +
        std::to_string(state.batches) + ") is below '" + kCheckpointStepKey +
        "' (" + std::to_string(state.step) + "): every update used a batch");
  if (absl::Status status = checkFinite(arrays, what); !status.ok())
    return status;
  state.parameters = std::move(arrays);
  return absl::OkStatus();
}

bool nn::isOptimizerState(const std::string &name) {
  return name.rfind("optimizer/", 0) == 0;
}

absl::Status nn::checkFinite(const std::map<std::string, Tensor> &arrays,
                             const std::string &what) {
  for (const auto &[name, tensor] : arrays) {
    if (tensor.dtype() != DType::f32 && tensor.dtype() != DType::f64)
      continue;
    int64_t count = tensor.numElements(), bad = 0, first = -1;
    for (int64_t i = 0; i < count; ++i) {
      double value = tensor.dtype() == DType::f32
                         ? (double)tensor.data<float>()[i]
                         : tensor.data<double>()[i];
      if (!std::isfinite(value)) {
        if (bad++ == 0)
          first = i;
      }
    }
    if (bad)
      return absl::InvalidArgumentError(
          what + ": '" + name + "' holds " + std::to_string(bad) +
          " non-finite values (NaN or infinite; the first at flat index " +
          std::to_string(first) + ")");
  }
  return absl::OkStatus();
}

bool nn::growsInto(const std::vector<int64_t> &from,
                   const std::vector<int64_t> &to) {
  if (from.size() != to.size())
    return false;
  for (size_t d = 0; d < from.size(); ++d)
    if (from[d] > to[d])
      return false;
  return true;
}

absl::Status nn::growInto(const std::string &name, const Tensor &trained,
                          Tensor &fresh) {
  const std::vector<int64_t> &from = trained.shape(), &to = fresh.shape();
  if (trained.dtype() != fresh.dtype() || !growsInto(from, to))
    return absl::InvalidArgumentError(
        "parameter '" + name + "' is " + toString(trained.dtype()) + " " +
        shapeText(from) + " trained but " + toString(fresh.dtype()) + " " +
        shapeText(to) +
        " in this model: copy_param_mode \"subset\" only "
        "grows sizes (the same dtype and rank, no size smaller)");
  if (trained.numElements() == 0)
    return absl::OkStatus();
  // Row by row over the trained tensor's leading axes: each of its
  // innermost rows is contiguous in both.
  size_t element = byteSize(trained.dtype());
  int64_t rank = (int64_t)from.size();
  int64_t row = rank ? from.back() : 1;
  int64_t rows = trained.numElements() / row;
  const uint8_t *source = static_cast<const uint8_t *>(trained.raw());
  uint8_t *target = static_cast<uint8_t *>(fresh.raw());
  for (int64_t r = 0; r < rows; ++r) {
    // The row's index in `trained` as coordinates, then its offset in
    // `fresh`.
    int64_t rest = r, offset = 0, stride = rank ? to.back() : 1;
    for (int64_t d = rank - 2; d >= 0; --d) {
      offset += (rest % from[d]) * stride;
      rest /= from[d];
      stride *= to[d];
    }
    std::memcpy(target + offset * element, source + r * row * element,
                row * element);
  }
  return absl::OkStatus();
}

absl::Status nn::restoreParameters(const Manifest &manifest,
                                   const TrainState &checkpoint, bool resume,
                                   const std::string &what, TrainState &state) {
  std::map<std::string, const TensorInfo *> known;
  for (const TensorInfo &info : manifest.parameters)
    known[info.name] = &info;
  // Only a resumed run continues the optimizer's state; any other start
  // takes the model's parameters and the state starts at zero.
  auto taken = [&](const std::string &name) {
    return resume || !isOptimizerState(name);
  };
  for (const auto &[name, tensor] : checkpoint.parameters) {
    if (!taken(name))
      continue;
    auto found = known.find(name);
    if (found == known.end())
      return absl::InvalidArgumentError(what + " holds '" + name +
                                        "', which graph @" + manifest.graph +
                                        " has no parameter for");
    std::vector<int64_t> shape;
    for (const Axis &axis : found->second->axes)
      shape.push_back(axis.size);
    if (tensor.dtype() != found->second->dtype || tensor.shape() != shape)
      return absl::InvalidArgumentError(
          what + ": parameter '" + name + "' is " + toString(tensor.dtype()) +
          " " + shapeText(tensor.shape()) + ", the model's is " +
          toString(found->second->dtype) + " " + shapeText(shape));
  }
  if (resume)
    for (const TensorInfo &info : manifest.parameters)
      if (!checkpoint.parameters.count(info.name))
        return absl::InvalidArgumentError(what + " lacks parameter '" +
                                          info.name + "' of graph @" +
                                          manifest.graph);
  // The parameters change: a resident copy would be stale.
  state.resident.reset();
  for (const auto &[name, tensor] : checkpoint.parameters)
    if (taken(name))
      state.parameters[name] = tensor;
  if (resume) {
    state.step = checkpoint.step;
    state.batches = checkpoint.batches;
    state.epochRates = checkpoint.epochRates;
  }
  return absl::OkStatus();
}

absl::StatusOr<SegmentBinding> nn::bindSegmentTask(const Manifest &manifest) {
  SegmentBinding binding;
  int64_t frameClasses = 0, labelClasses = 0;
  for (const TensorInfo &input : manifest.inputs) {
    const std::string &name = input.name;
    auto fail = [&](const std::string &why) {
      return absl::InvalidArgumentError("input '" + name + "' of graph @" +
                                        manifest.graph + " " + why);
    };
    auto positionAxes = [&](size_t rank, DType dtype) {
      return input.axes.size() == rank && input.dtype == dtype &&
             input.axes[0].isNamed() && input.axes[1].isNamed();
    };
    if (name == "learning_rate" || name == "step" || name == "dropout_seed")
      continue;
    if (name == "features") {
      if (!positionAxes(3, DType::f32) || input.axes[2].isNamed())
        return fail("must be [B, T, F] f32 for the segment task");
      binding.task.features = input.axes[2].size;
      binding.frameDim = input.axes[1].dim;
    } else if (name == "frame_labels") {
      if (!positionAxes(2, DType::i32))
        return fail("must be [B, T] i32 for the segment task");
      frameClasses = input.classes;
      if (!binding.frameDim.empty() && binding.frameDim != input.axes[1].dim)
        return fail("must share its frames dim with 'features'");
      binding.frameDim = input.axes[1].dim;
    } else if (name == "labels") {
      if (!positionAxes(2, DType::i32))
        return fail("must be [B, U] i32 for the segment task");
      // Labels are classes 1..C-1 of the task; a CTC blank must be class
      // 0 or the last one.
      labelClasses = input.classes;
      if (input.reservedClass > 0) {
        if (input.reservedClass != input.classes - 1)
          return fail("reserves class " + std::to_string(input.reservedClass) +
                      " (a blank); the segment task needs the blank to be "
                      "class 0 or the last class");
        labelClasses = input.classes - 1;
      }
      binding.labelDim = input.axes[1].dim;
    } else {
      return fail("is not one the segment task fills (features, "
                  "frame_labels, labels)");
    }
    binding.inputs.push_back(name);
  }
  if (binding.task.features == 0)
    return absl::InvalidArgumentError(
        "graph @" + manifest.graph +
        " has no input 'features' [B, T, F] for the segment task");
  int64_t classes = 0;
  for (int64_t bound : {frameClasses, labelClasses})
    if (bound > 0)
      classes = classes == 0 ? bound : std::min(classes, bound);
  if (classes < 2)
    return absl::InvalidArgumentError(
        "graph @" + manifest.graph +
        " names no class count of at least 2 for the segment task "
        "(frame_labels or labels must index classes)");
  binding.task.classes = classes;
  if (absl::Status status = binding.task.validate(); !status.ok())
    return status;
  return binding;
}

RunInputs nn::segmentBatchFor(const SegmentBinding &binding, int64_t batch,
                              std::mt19937 &rng,
                              std::vector<SegmentUtterance> *utterances) {
  RunInputs all = segmentBatch(binding.task, batch, rng, binding.frameDim,
                               binding.labelDim, utterances);
  RunInputs inputs;
  inputs.lengths = std::move(all.lengths);
  for (const std::string &name : binding.inputs)
    inputs.inputs[name] = std::move(all.inputs[name]);
  return inputs;
}

void LossTotals::add(const std::vector<LossValue> &batch) {
  for (const LossValue &loss : batch) {
    auto found =
        std::find_if(losses.begin(), losses.end(), [&](const LossValue &total) {
          return total.name == loss.name;
        });
    if (found == losses.end()) {
      losses.push_back(loss);
      continue;
    }
    found->sum += loss.sum;
    found->normalization += loss.normalization;
    found->framesComputed += loss.framesComputed;
    found->framesPadded += loss.framesPadded;
    found->normalized =
        found->normalization == 0 ? 0.0 : found->sum / found->normalization;
  }
}
