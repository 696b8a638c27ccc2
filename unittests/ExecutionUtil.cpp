//===- ExecutionUtil.cpp - shared helpers of the execution tests ----------===//

#include "ExecutionUtil.h"

using namespace nn;
using namespace nn::testing;

RunInputs nn::testing::makeInputs(const Manifest &manifest, uint32_t seed,
                                  LengthPattern pattern, int64_t batch,
                                  int64_t padded, double pad) {
  std::mt19937 rng(seed);
  RunInputs inputs;
  for (const std::string &root : manifest.rootDims) {
    if (manifest.findDim(root)->kind != DimInfo::Kind::seq)
      continue;
    std::vector<int32_t> &lengths = inputs.lengths[root];
    std::uniform_int_distribution<int32_t> length(
        pattern == LengthPattern::WithEmpty ? 0 : 1, (int32_t)padded);
    for (int64_t b = 0; b < batch; ++b)
      lengths.push_back(pattern == LengthPattern::AllEqual ? (int32_t)padded
                                                           : length(rng));
    if (pattern == LengthPattern::Mixed && batch >= 2) {
      lengths[0] = 1;
      lengths[batch - 1] = (int32_t)padded;
    }
    if (pattern == LengthPattern::WithEmpty && batch >= 2) {
      lengths[0] = 0;
      lengths[batch - 1] = (int32_t)padded;
    }
  }
  std::map<std::string, int64_t> sizes;
  std::map<std::string, std::vector<int64_t>> lengths;
  for (const DimInfo &dim : manifest.dims)
    if (dim.kind == DimInfo::Kind::batch)
      sizes[dim.name] = batch;
  dimValues(manifest, inputs, sizes, lengths);

  std::uniform_real_distribution<double> uniform(-1.0, 1.0);
  for (const TensorInfo &info : manifest.inputs) {
    std::vector<int64_t> shape;
    for (const Axis &axis : info.axes)
      shape.push_back(axis.isNamed() ? sizes[axis.dim] : axis.size);
    Tensor tensor(info.dtype, shape);
    std::uniform_int_distribution<int64_t> classes(
        0, info.classes > 0 ? info.classes - 1 : 3);
    std::vector<int64_t> index(shape.size(), 0);
    for (int64_t flat = 0; flat < tensor.numElements(); ++flat) {
      bool valid = true;
      for (size_t i = 1; i < index.size(); ++i)
        if (info.axes[i].isNamed() && lengths.count(info.axes[i].dim) &&
            index[i] >= lengths[info.axes[i].dim][index[0]])
          valid = false;
      if (info.dtype == DType::f32)
        tensor.data<float>()[flat] = valid ? uniform(rng) : pad;
      else if (info.dtype == DType::f64)
        tensor.data<double>()[flat] = valid ? uniform(rng) : pad;
      else if (info.dtype == DType::i32)
        tensor.data<int32_t>()[flat] = valid ? classes(rng) : -1;
      else
        tensor.data<int64_t>()[flat] = valid ? classes(rng) : -1;
      for (size_t i = index.size(); i-- > 0;) {
        if (++index[i] < shape[i])
          break;
        index[i] = 0;
      }
    }
    inputs.inputs[info.name] = std::move(tensor);
  }
  for (const TensorInfo &info : manifest.parameters) {
    std::vector<int64_t> shape;
    for (const Axis &axis : info.axes)
      shape.push_back(axis.size);
    Tensor tensor(info.dtype, shape);
    double bound = 1.0 / std::sqrt((double)std::max<int64_t>(1, shape.back()));
    std::uniform_real_distribution<double> weights(-bound, bound);
    for (int64_t i = 0; i < tensor.numElements(); ++i) {
      if (info.dtype == DType::f64)
        tensor.data<double>()[i] = weights(rng);
      else
        tensor.data<float>()[i] = weights(rng);
    }
    inputs.parameters[info.name] = std::move(tensor);
  }
  return inputs;
}

Executable nn::testing::compileOrDie(const std::string &source, bool pack,
                                     const std::string &entry) {
  CompileOptions options;
  options.pack = pack;
  options.entry = entry;
  Executable exe;
  Status status = compileSource(source, "test.mlir", options, exe);
  EXPECT_TRUE(status.ok()) << status.message() << "\n" << source;
  return exe;
}

void nn::testing::dimValues(
    const Manifest &manifest, const RunInputs &inputs,
    std::map<std::string, int64_t> &sizes,
    std::map<std::string, std::vector<int64_t>> &lengths) {
  for (const auto &[dim, values] : inputs.lengths)
    lengths[dim].assign(values.begin(), values.end());
  for (const TensorInfo &info : manifest.inputs) {
    auto it = inputs.inputs.find(info.name);
    if (it == inputs.inputs.end())
      continue;
    for (size_t i = 0; i < info.axes.size(); ++i)
      if (info.axes[i].isNamed())
        sizes[info.axes[i].dim] = it->second.shape()[i];
  }
  for (const DimInfo &dim : manifest.dims) {
    if (dim.kind == DimInfo::Kind::seq && dim.source.empty()) {
      if (!sizes.count(dim.name)) {
        int64_t longest = 1;
        for (int64_t l : lengths[dim.name])
          longest = std::max(longest, l);
        sizes[dim.name] = longest;
      }
      sizes[dim.batch] = (int64_t)lengths[dim.name].size();
    } else if (dim.kind == DimInfo::Kind::seq) {
      sizes[dim.name] = (sizes[dim.source] + dim.factor - 1) / dim.factor;
      lengths[dim.name].clear();
      for (int64_t l : lengths[dim.source])
        lengths[dim.name].push_back((l + dim.factor - 1) / dim.factor);
    } else if (dim.kind == DimInfo::Kind::packed) {
      int64_t total = 0;
      for (int64_t l : lengths[dim.sequence])
        total += l;
      sizes[dim.name] = total;
    }
  }
}

namespace {
/// Calls fn(flat, valid) for each element of an output with `axes`.
template <typename Fn>
void forEachValid(const std::vector<Axis> &axes,
                  const std::vector<int64_t> &shape,
                  const std::map<std::string, std::vector<int64_t>> &lengths,
                  Fn fn) {
  std::vector<int64_t> index(shape.size(), 0);
  int64_t n = 1;
  for (int64_t s : shape)
    n *= s;
  for (int64_t flat = 0; flat < n; ++flat) {
    bool valid = true;
    for (size_t i = 1; i < index.size(); ++i)
      if (axes[i].isNamed() && lengths.count(axes[i].dim) &&
          index[i] >= lengths.at(axes[i].dim)[index[0]])
        valid = false;
    fn(flat, valid);
    for (size_t i = index.size(); i-- > 0;) {
      if (++index[i] < shape[i])
        break;
      index[i] = 0;
    }
  }
}
} // namespace

void nn::testing::expectMatchesReference(const std::string &source,
                                         const Executable &exe,
                                         const RunInputs &inputs,
                                         const RunResult &result, double rel,
                                         double abs) {
  const Manifest &manifest = exe.manifest();
  reference::Result expected;
  Status status = reference::evaluate(source, manifest.graph, inputs, expected);
  ASSERT_TRUE(status.ok()) << status.message();
  ASSERT_EQ(expected.outputs.size(), result.outputs.size());
  std::map<std::string, int64_t> sizes;
  std::map<std::string, std::vector<int64_t>> lengths;
  dimValues(manifest, inputs, sizes, lengths);
  for (size_t o = 0; o < result.outputs.size(); ++o) {
    const Tensor &got = result.outputs[o].second;
    const reference::Array &want = expected.outputs[o];
    ASSERT_EQ(got.shape(), want.shape) << "output " << o;
    int failures = 0;
    forEachValid(manifest.outputs[o].axes, got.shape(), lengths,
                 [&](int64_t flat, bool valid) {
                   if (valid &&
                       !close(got.at(flat), want.data[flat], rel, abs) &&
                       failures++ < 5)
                     ADD_FAILURE() << "output " << o << " element " << flat
                                   << ": compiled " << got.at(flat)
                                   << ", reference " << want.data[flat];
                 });
  }
  for (const LossValue &loss : result.losses) {
    ASSERT_TRUE(expected.losses.count(loss.name)) << loss.name;
    const reference::Loss &want = expected.losses.at(loss.name);
    EXPECT_TRUE(close(loss.sum, want.sum, rel, abs))
        << loss.name << " sum: compiled " << loss.sum << ", reference "
        << want.sum;
    EXPECT_TRUE(close(loss.normalization, want.normalization, rel, abs))
        << loss.name << " normalization: compiled " << loss.normalization
        << ", reference " << want.normalization;
  }
}

void nn::testing::expectSameResults(const Manifest &manifest,
                                    const RunInputs &inputs, const RunResult &a,
                                    const RunResult &b, double rel) {
  ASSERT_EQ(a.losses.size(), b.losses.size());
  for (size_t i = 0; i < a.losses.size(); ++i) {
    EXPECT_EQ(a.losses[i].name, b.losses[i].name);
    EXPECT_TRUE(close(a.losses[i].sum, b.losses[i].sum, rel))
        << a.losses[i].name << ": " << a.losses[i].sum << " vs "
        << b.losses[i].sum;
    EXPECT_EQ(a.losses[i].normalization, b.losses[i].normalization)
        << a.losses[i].name;
  }
  ASSERT_EQ(a.outputs.size(), b.outputs.size());
  std::map<std::string, int64_t> sizes;
  std::map<std::string, std::vector<int64_t>> lengths;
  dimValues(manifest, inputs, sizes, lengths);
  for (size_t o = 0; o < a.outputs.size(); ++o) {
    const Tensor &x = a.outputs[o].second, &y = b.outputs[o].second;
    ASSERT_EQ(x.shape(), y.shape());
    int failures = 0;
    forEachValid(manifest.outputs[o].axes, x.shape(), lengths,
                 [&](int64_t flat, bool valid) {
                   if (valid && !close(x.at(flat), y.at(flat), rel, 1e-7) &&
                       failures++ < 5)
                     ADD_FAILURE()
                         << "output " << o << " element " << flat << ": "
                         << x.at(flat) << " vs " << y.at(flat);
                 });
  }
}
