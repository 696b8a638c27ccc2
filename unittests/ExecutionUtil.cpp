//===- ExecutionUtil.cpp - shared helpers of the execution tests ----------===//

#include "ExecutionUtil.h"

#include "lowering/Pipelines.h"
#include "lowering/Registration.h"
#include "nn/Synthetic.h"
#include "passes/Passes.h"

#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/Parser/Parser.h"
#include "mlir/Pass/PassManager.h"

#include <algorithm>

using namespace nn;
using namespace nn::testing;

RunInputs nn::testing::makeInputs(const Manifest &manifest, uint32_t seed,
                                  LengthPattern pattern, int64_t batch,
                                  int64_t padded, double pad) {
  std::mt19937 rng(seed);
  std::map<std::string, std::vector<int32_t>> lengths;
  for (const std::string &root : manifest.rootDims) {
    if (manifest.findDim(root)->kind != DimInfo::Kind::seq)
      continue;
    std::vector<int32_t> &values = lengths[root];
    std::uniform_int_distribution<int32_t> length(
        pattern == LengthPattern::WithEmpty ? 0 : 1, (int32_t)padded);
    for (int64_t b = 0; b < batch; ++b)
      values.push_back(pattern == LengthPattern::AllEqual ? (int32_t)padded
                                                          : length(rng));
    if (pattern != LengthPattern::AllEqual && batch >= 2) {
      values[0] = pattern == LengthPattern::Mixed ? 1 : 0;
      values[batch - 1] = (int32_t)padded;
    }
  }
  RunInputs inputs = syntheticBatch(manifest, batch, lengths, rng, pad);
  syntheticParameters(manifest, rng, inputs);
  return inputs;
}

Executable nn::testing::compileOrDie(const std::string &source, bool pack,
                                     const std::string &entry,
                                     const std::string &target,
                                     const LoadOptions &load) {
  CompileOptions options;
  options.optimize.pack = pack;
  options.entry = entry;
  options.target = target;
  return compileOrDie(source, options, load);
}

Executable nn::testing::compileOrDie(const std::string &source,
                                     const CompileOptions &options,
                                     const LoadOptions &load) {
  Executable exe;
  absl::StatusOr<Artifact> artifact =
      compileSource(source, "test.mlir", options);
  EXPECT_TRUE(artifact.ok()) << artifact.status().message() << "\n" << source;
  if (!artifact.ok())
    return exe;
  absl::Status status = Executable::load(artifact->path(), exe, load);
  EXPECT_TRUE(status.ok()) << status.message();
  return exe;
}

bool nn::testing::haveCudaToolkit() {
  return !mlir::nn::findCudaToolkit().empty();
}

DimValues nn::testing::dimValues(const Manifest &manifest,
                                 const RunInputs &inputs) {
  return dimsOfBatch(manifest, inputs);
}

void nn::testing::addComputedDims(const Manifest &manifest,
                                  const RunResult &result, DimValues &dims) {
  for (const DimInfo &dim : manifest.dims) {
    if (!dim.computed)
      continue;
    for (const auto &[name, tensor] : result.outputs) {
      if (name != lengthsOutputName(dim.name))
        continue;
      std::vector<int32_t> &lengths = dims.lengths[dim.name];
      lengths.assign(tensor.data<int32_t>(),
                     tensor.data<int32_t>() + tensor.numElements());
      dims.sizes[dim.name] = 1;
      for (int32_t length : lengths)
        dims.sizes[dim.name] = std::max<int64_t>(dims.sizes[dim.name], length);
    }
    // A flattened batch over this dim may be the next computed dim's batch.
    deriveDims(manifest, dims);
  }
}

namespace {
/// Calls fn(flat, valid) for each element of an output with `axes`.
template <typename Fn>
void forEachFlat(const std::vector<Axis> &axes,
                 const std::vector<int64_t> &shape, const DimValues &dims,
                 Fn fn) {
  int64_t flat = 0;
  forEachIndex(shape, [&](const std::vector<int64_t> &index) {
    fn(flat++, dims.isValid(axes, index));
  });
}
} // namespace

void nn::testing::expectMatchesReference(const std::string &source,
                                         const Executable &exe,
                                         const RunInputs &inputs,
                                         const RunResult &result, double rel,
                                         double abs) {
  const Manifest &manifest = exe.manifest();
  reference::Result expected;
  absl::Status status =
      reference::evaluate(source, manifest.graph, inputs, expected);
  ASSERT_TRUE(status.ok()) << status.message();
  DimValues dims = dimValues(manifest, inputs);
  // Computed lengths first, exactly: they decide which positions of the
  // other outputs are real.
  std::vector<size_t> valueOutputs;
  for (size_t o = 0; o < result.outputs.size(); ++o) {
    const std::string prefix = lengthsOutputName("");
    const std::string &name = result.outputs[o].first;
    if (name.rfind(prefix, 0) != 0) {
      valueOutputs.push_back(o);
      continue;
    }
    std::string dim = name.substr(prefix.size());
    const Tensor &got = result.outputs[o].second;
    std::vector<int64_t> lengths(got.data<int32_t>(),
                                 got.data<int32_t>() + got.numElements());
    ASSERT_TRUE(expected.lengths.count(dim)) << name;
    EXPECT_EQ(lengths, expected.lengths.at(dim)) << name;
  }
  addComputedDims(manifest, result, dims);
  ASSERT_EQ(expected.outputs.size(), valueOutputs.size());
  for (size_t k = 0; k < valueOutputs.size(); ++k) {
    size_t o = valueOutputs[k];
    const Tensor &got = result.outputs[o].second;
    const reference::Array &want = expected.outputs[k];
    ASSERT_EQ(got.shape(), want.shape) << "output " << o;
    int failures = 0;
    forEachFlat(manifest.outputs[o].axes, got.shape(), dims,
                [&](int64_t flat, bool valid) {
                  if (valid &&
                      !close(got.at(flat), want.data[flat], rel, abs) &&
                      failures++ < 5)
                    ADD_FAILURE() << "output " << o << " element " << flat
                                  << ": compiled " << got.at(flat)
                                  << ", reference " << want.data[flat];
                });
  }
  // The same losses both ways: a loss the compiled graph dropped would
  // otherwise pass unseen.
  for (const auto &entry : expected.losses) {
    const std::string &name = entry.first;
    if (std::none_of(result.losses.begin(), result.losses.end(),
                     [&](const LossValue &l) { return l.name == name; }))
      ADD_FAILURE() << "loss \"" << name
                    << "\": the reference computes it, the compiled run "
                       "returned none";
  }
  for (const LossValue &loss : result.losses) {
    if (!expected.losses.count(loss.name)) {
      ADD_FAILURE() << "loss \"" << loss.name
                    << "\": the compiled run returned it, the reference "
                       "computes none";
      continue;
    }
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
  DimValues dims = dimValues(manifest, inputs);
  addComputedDims(manifest, a, dims);
  for (size_t o = 0; o < a.outputs.size(); ++o) {
    const Tensor &x = a.outputs[o].second, &y = b.outputs[o].second;
    ASSERT_EQ(x.shape(), y.shape());
    int failures = 0;
    forEachFlat(manifest.outputs[o].axes, x.shape(), dims,
                [&](int64_t flat, bool valid) {
                  if (valid && !close(x.at(flat), y.at(flat), rel, 1e-7) &&
                      failures++ < 5)
                    ADD_FAILURE() << "output " << o << " element " << flat
                                  << ": " << x.at(flat) << " vs " << y.at(flat);
                });
  }
}

std::string
nn::testing::withPasses(const std::string &source,
                        llvm::function_ref<void(mlir::OpPassManager &)> build) {
  mlir::DialectRegistry registry;
  mlir::nn::registerPipelineDialects(registry);
  mlir::MLIRContext context(registry);
  context.loadAllAvailableDialects();
  mlir::OwningOpRef<mlir::ModuleOp> module =
      mlir::parseSourceString<mlir::ModuleOp>(source,
                                              mlir::ParserConfig(&context));
  if (!module)
    return "";
  mlir::PassManager pm(&context);
  build(pm);
  if (mlir::failed(pm.run(*module)))
    return "";
  std::string text;
  llvm::raw_string_ostream os(text);
  module->print(os);
  return text;
}

std::string
nn::testing::transform(const std::string &source, bool training, bool pack,
                       bool grads,
                       const std::vector<std::string> &inputGradients,
                       const std::string &graph, PackFrontier frontier) {
  return withPasses(source, [&](mlir::OpPassManager &pm) {
    if (training)
      pm.addPass(mlir::nn::createNNDropoutTraining());
    if (pack) {
      mlir::nn::NNPackBeforeLossOptions options;
      options.pack = frontier;
      pm.addPass(mlir::nn::createNNPackBeforeLoss(options));
    }
    if (grads) {
      mlir::nn::NNAutodiffOptions options;
      options.inputNames = inputGradients;
      options.graphName = graph;
      pm.addPass(mlir::nn::createNNAutodiff(options));
    }
  });
}
