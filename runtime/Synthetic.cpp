//===- Synthetic.cpp - seeded batches and parameters ----------------------===//

#include "nn/Synthetic.h"

#include <algorithm>
#include <cmath>

using namespace nn;

RunInputs
nn::syntheticBatch(const Manifest &manifest, int64_t batch,
                   std::map<std::string, std::vector<int32_t>> lengths,
                   std::mt19937 &rng, double pad) {
  RunInputs inputs;
  inputs.lengths = std::move(lengths);
  DimValues dims;
  dims.lengths = inputs.lengths;
  for (const DimInfo &dim : manifest.dims) {
    if (dim.kind == DimInfo::Kind::batch) {
      dims.sizes[dim.name] = batch;
    } else if (dim.kind == DimInfo::Kind::seq && dim.source.empty()) {
      int64_t longest = 1;
      for (int32_t length : dims.lengths[dim.name])
        longest = std::max<int64_t>(longest, length);
      dims.sizes[dim.name] = longest;
    }
  }
  deriveDims(manifest, dims);

  std::uniform_real_distribution<double> uniform(-1.0, 1.0);
  for (const TensorInfo &info : manifest.inputs) {
    std::vector<int64_t> shape;
    for (const Axis &axis : info.axes)
      shape.push_back(axis.isNamed() ? dims.sizes[axis.dim] : axis.size);
    Tensor tensor(info.dtype, shape);
    // Class indices avoid a reserved class (CTC's blank) where another
    // class exists.
    bool skipReserved = info.reservedClass >= 0 && info.classes > 1;
    std::uniform_int_distribution<int64_t> pickClass(
        0, (info.classes > 0 ? info.classes - 1 : 9) - (skipReserved ? 1 : 0));
    auto classes = [&](std::mt19937 &rng) {
      int64_t value = pickClass(rng);
      return skipReserved && value >= info.reservedClass ? value + 1 : value;
    };
    int64_t flat = 0;
    forEachIndex(shape, [&](const std::vector<int64_t> &index) {
      bool valid = dims.isValid(info.axes, index);
      switch (info.dtype) {
      case DType::f32:
        tensor.data<float>()[flat] = valid ? uniform(rng) : pad;
        break;
      case DType::f64:
        tensor.data<double>()[flat] = valid ? uniform(rng) : pad;
        break;
      case DType::i32:
        tensor.data<int32_t>()[flat] = valid ? classes(rng) : -1;
        break;
      case DType::i64:
        tensor.data<int64_t>()[flat] = valid ? classes(rng) : -1;
        break;
      }
      ++flat;
    });
    inputs.inputs[info.name] = std::move(tensor);
  }
  return inputs;
}

void nn::syntheticParameters(const Manifest &manifest, std::mt19937 &rng,
                             RunInputs &inputs) {
  for (const TensorInfo &info : manifest.parameters) {
    std::vector<int64_t> shape;
    for (const Axis &axis : info.axes)
      shape.push_back(axis.size);
    Tensor tensor(info.dtype, shape);
    double bound = 1.0 / std::sqrt((double)std::max<int64_t>(
                             1, shape.empty() ? 1 : shape.back()));
    std::uniform_real_distribution<double> uniform(-bound, bound);
    for (int64_t i = 0; i < tensor.numElements(); ++i) {
      if (info.dtype == DType::f64)
        tensor.data<double>()[i] = uniform(rng);
      else if (info.dtype == DType::f32)
        tensor.data<float>()[i] = uniform(rng);
    }
    inputs.parameters[info.name] = std::move(tensor);
  }
}
