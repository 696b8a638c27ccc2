//===- DataParallel.cpp - one batch trained by several ranks --------------===//

#include "nn/DataParallel.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <functional>
#include <map>

using namespace nn;

std::vector<std::pair<int64_t, int64_t>>
nn::splitBatch(const std::vector<int32_t> &lengths, int parts) {
  std::vector<std::pair<int64_t, int64_t>> split;
  if (parts < 1)
    return split;
  int64_t count = (int64_t)lengths.size();
  // Fewer sequences than parts: one each, the last parts empty.
  int filled = (int)std::min<int64_t>(parts, count);
  int64_t total = 0;
  for (int32_t length : lengths)
    total += std::max<int32_t>(length, 0);
  int64_t begin = 0, running = 0;
  for (int part = 0; part < filled; ++part) {
    int64_t end = count;
    if (part + 1 < filled) {
      // The cut comes closest to this part's share of the frames; each
      // part keeps at least one sequence.
      double target = (double)total * (part + 1) / filled;
      int64_t latest = count - (filled - 1 - part);
      end = begin + 1;
      running += std::max<int32_t>(lengths[begin], 0);
      while (end < latest && std::abs(running + lengths[end] - target) <
                                 std::abs(running - target)) {
        running += std::max<int32_t>(lengths[end], 0);
        ++end;
      }
    }
    split.emplace_back(begin, end);
    begin = end;
  }
  while ((int)split.size() < parts)
    split.emplace_back(count, count);
  return split;
}

absl::StatusOr<std::string> nn::inputBatchDim(const Manifest &manifest) {
  std::map<std::string, const DimInfo *> dims;
  for (const DimInfo &dim : manifest.dims)
    dims[dim.name] = &dim;
  std::string batch;
  for (const TensorInfo &input : manifest.inputs) {
    for (size_t axis = 0; axis < input.axes.size(); ++axis) {
      auto found = dims.find(input.axes[axis].dim);
      if (found == dims.end())
        continue;
      const DimInfo &dim = *found->second;
      if (dim.kind == DimInfo::Kind::packed)
        return absl::InvalidArgumentError(
            "input '" + input.name + "' is packed rows of '" + dim.name +
            "'; a data-parallel run splits padded batches (pass the input "
            "padded and let the compiler pack it)");
      if (dim.kind != DimInfo::Kind::batch)
        continue;
      // sliceBatch cuts the leading axis only.
      if (axis > 0)
        return absl::InvalidArgumentError(
            "input '" + input.name + "' has batch dim '" + dim.name +
            "' on axis " + std::to_string(axis) +
            "; a data-parallel run splits inputs that lead with it");
      if (!batch.empty() && batch != dim.name)
        return absl::InvalidArgumentError(
            "the inputs of graph @" + manifest.graph +
            " lead with two batch dims, '" + batch + "' and '" + dim.name +
            "'; a data-parallel run splits one");
      batch = dim.name;
    }
  }
  if (batch.empty())
    return absl::InvalidArgumentError("no input of graph @" + manifest.graph +
                                      " leads with a batch dim; a "
                                      "data-parallel run splits one");
  return batch;
}

namespace {

/// Copies the block of `from` that starts at `offsets` and has `to`'s
/// shape into `to` (same dtype), rows of the last axis at a time.
void copyBlock(const Tensor &from, const std::vector<int64_t> &offsets,
               Tensor &to) {
  const std::vector<int64_t> &source = from.shape(), &target = to.shape();
  size_t rank = target.size(), element = byteSize(from.dtype());
  if (to.numElements() == 0)
    return;
  if (rank == 0) {
    std::memcpy(to.raw(), from.raw(), element);
    return;
  }
  std::vector<int64_t> sourceStrides(rank, 1), targetStrides(rank, 1);
  for (size_t axis = rank - 1; axis > 0; --axis) {
    sourceStrides[axis - 1] = sourceStrides[axis] * source[axis];
    targetStrides[axis - 1] = targetStrides[axis] * target[axis];
  }
  const char *in = static_cast<const char *>(from.raw());
  char *out = static_cast<char *>(to.raw());
  std::function<void(size_t, int64_t, int64_t)> copy =
      [&](size_t axis, int64_t sourceAt, int64_t targetAt) {
        if (axis + 1 == rank) {
          std::memcpy(out + targetAt * element,
                      in + (sourceAt + offsets[axis]) * element,
                      target[axis] * element);
          return;
        }
        for (int64_t i = 0; i < target[axis]; ++i)
          copy(axis + 1, sourceAt + (i + offsets[axis]) * sourceStrides[axis],
               targetAt + i * targetStrides[axis]);
      };
  copy(0, 0, 0);
}

} // namespace

absl::StatusOr<RunInputs> nn::sliceBatch(const Manifest &manifest,
                                         const RunInputs &batch,
                                         const std::string &batchDim,
                                         int64_t begin, int64_t end) {
  if (begin < 0 || end < begin)
    return absl::InvalidArgumentError("sequences [" + std::to_string(begin) +
                                      ", " + std::to_string(end) +
                                      ") are not a part of a batch");
  RunInputs part;
  part.parameters = batch.parameters;
  // The sequence dims of the batch: their lengths and the part's padded
  // size.
  std::map<std::string, int64_t> padded;
  for (const DimInfo &dim : manifest.dims) {
    if (dim.kind != DimInfo::Kind::seq || dim.batch != batchDim)
      continue;
    auto found = batch.lengths.find(dim.name);
    if (found == batch.lengths.end())
      continue;
    const std::vector<int32_t> &lengths = found->second;
    if ((int64_t)lengths.size() < end)
      return absl::InvalidArgumentError(
          "the lengths of '" + dim.name + "' cover " +
          std::to_string(lengths.size()) + " sequences, not [" +
          std::to_string(begin) + ", " + std::to_string(end) + ")");
    std::vector<int32_t> own(lengths.begin() + begin, lengths.begin() + end);
    int32_t longest = 1;
    for (int32_t length : own)
      longest = std::max(longest, length);
    padded[dim.name] = longest;
    part.lengths[dim.name] = std::move(own);
  }
  for (const auto &[name, lengths] : batch.lengths)
    if (!part.lengths.count(name))
      part.lengths[name] = lengths;
  std::map<std::string, const TensorInfo *> infos;
  for (const TensorInfo &info : manifest.inputs)
    infos[info.name] = &info;
  for (const auto &[name, tensor] : batch.inputs) {
    auto info = infos.find(name);
    if (info == infos.end() || info->second->axes.empty() ||
        info->second->axes.front().dim != batchDim) {
      part.inputs[name] = tensor;
      continue;
    }
    const std::vector<Axis> &axes = info->second->axes;
    std::vector<int64_t> shape = tensor.shape();
    if (shape.size() != axes.size() || shape.front() < end)
      return absl::InvalidArgumentError(
          "input '" + name + "' has shape " + shapeText(shape) +
          ", which does not hold sequences [" + std::to_string(begin) + ", " +
          std::to_string(end) + ") of batch dim '" + batchDim + "'");
    std::vector<int64_t> offsets(shape.size(), 0);
    offsets[0] = begin;
    shape[0] = end - begin;
    for (size_t axis = 1; axis < axes.size(); ++axis) {
      auto cut = padded.find(axes[axis].dim);
      if (cut != padded.end())
        shape[axis] = std::min(shape[axis], cut->second);
    }
    Tensor own(tensor.dtype(), shape);
    copyBlock(tensor, offsets, own);
    part.inputs[name] = std::move(own);
  }
  return part;
}

absl::Status nn::allReduceLosses(Communicator &communicator,
                                 const Manifest &manifest,
                                 std::vector<LossValue> &losses) {
  // Four numbers per loss of the manifest, in its order, zero where this
  // rank has none: every rank sends the same count.
  std::vector<double> values(manifest.losses.size() * 4, 0.0);
  for (size_t l = 0; l < manifest.losses.size(); ++l)
    for (const LossValue &loss : losses)
      if (loss.name == manifest.losses[l].name) {
        values[4 * l] = loss.sum;
        values[4 * l + 1] = loss.normalization;
        values[4 * l + 2] = (double)loss.framesComputed;
        values[4 * l + 3] = (double)loss.framesPadded;
      }
  if (absl::Status status = communicator.allReduceSum(
          values.data(), values.data(), (int64_t)values.size(), DType::f64);
      !status.ok())
    return status;
  std::vector<LossValue> totals;
  for (size_t l = 0; l < manifest.losses.size(); ++l) {
    const LossInfo &info = manifest.losses[l];
    LossValue loss;
    for (const LossValue &own : losses)
      if (own.name == info.name)
        loss = own;
    loss.name = info.name;
    loss.scale = info.scale;
    loss.asError = info.asError;
    loss.packed = info.packed;
    loss.sum = values[4 * l];
    loss.normalization = values[4 * l + 1];
    loss.normalized =
        loss.normalization == 0 ? 0.0 : loss.sum / loss.normalization;
    loss.framesComputed = (int64_t)values[4 * l + 2];
    loss.framesPadded = (int64_t)values[4 * l + 3];
    totals.push_back(loss);
  }
  losses = std::move(totals);
  return absl::OkStatus();
}

absl::Status nn::broadcastState(Communicator &communicator,
                                const Manifest &manifest, TrainState &state) {
  std::vector<int64_t> counters{state.step, state.batches,
                                (int64_t)state.epochRates.size()};
  if (absl::Status status = communicator.broadcast(
          counters.data(), (int64_t)(counters.size() * sizeof(int64_t)), 0);
      !status.ok())
    return status;
  state.step = counters[0];
  state.batches = counters[1];
  state.epochRates.resize((size_t)counters[2]);
  std::vector<double> epochs;
  for (const EpochRate &epoch : state.epochRates)
    epochs.insert(epochs.end(),
                  {epoch.rate, epoch.scored ? 1.0 : 0.0, epoch.score});
  epochs.resize(state.epochRates.size() * 3);
  if (!epochs.empty())
    if (absl::Status status = communicator.broadcast(
            epochs.data(), (int64_t)(epochs.size() * sizeof(double)), 0);
        !status.ok())
      return status;
  for (size_t e = 0; e < state.epochRates.size(); ++e)
    state.epochRates[e] = {epochs[3 * e], epochs[3 * e + 1] != 0,
                           epochs[3 * e + 2]};
  for (const TensorInfo &info : manifest.parameters) {
    auto found = state.parameters.find(info.name);
    if (found == state.parameters.end())
      return absl::InvalidArgumentError(communicator.describe() +
                                        ": the train state has no parameter '" +
                                        info.name + "'");
    Tensor &tensor = found->second;
    if (absl::Status status = communicator.broadcast(
            tensor.raw(), (int64_t)tensor.sizeInBytes(), 0);
        !status.ok())
      return status;
  }
  return absl::OkStatus();
}

absl::StatusOr<std::vector<std::string>>
nn::allGather(Communicator &communicator, const std::string &mine) {
  std::vector<std::string> gathered(communicator.size());
  for (int root = 0; root < communicator.size(); ++root) {
    std::string &part = gathered[root];
    if (root == communicator.rank())
      part = mine;
    int64_t bytes = (int64_t)part.size();
    if (absl::Status status =
            communicator.broadcast(&bytes, sizeof(bytes), root);
        !status.ok())
      return status;
    part.resize((size_t)bytes);
    // Every rank knows the size now: none sends or waits for nothing.
    if (bytes > 0)
      if (absl::Status status =
              communicator.broadcast(part.data(), bytes, root);
          !status.ok())
        return status;
  }
  return gathered;
}
