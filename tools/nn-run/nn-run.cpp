//===- nn-run.cpp - compile an nn graph and run it ------------------------===//
//
//   nn-run model.mlir                        seeded synthetic batch
//   nn-run model.mlir --no-pack --json
//   nn-run model.mlir --inputs batch.npz --params weights.npz
//   nn-run model.mlir --input x=x.npy --input lengths.T=len.npy --param w=w.npy
//
// Prints one line per loss (name, normalized value, normalization) and,
// for packed loss tails, the frames computed vs the padded frames.
//
//===----------------------------------------------------------------------===//

#include "nn/Compiler.h"
#include "nn/File.h"
#include "nn/Npy.h"
#include "nn/Runtime.h"
#include "nn/Synthetic.h"
#include "support/JsonLine.h"
#include "tools/common/CompileFlags.h"

#include "llvm/Support/CommandLine.h"
#include "llvm/Support/Format.h"
#include "llvm/Support/InitLLVM.h"
#include "llvm/Support/raw_ostream.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <limits>
#include <random>
#include <sstream>

namespace cl = llvm::cl;

// --help shows these categories only; LLVM's own options (code generation
// for every backend) stay behind --help-hidden.
static cl::OptionCategory modelCategory("Model and compilation");
static cl::OptionCategory dataCategory("Inputs and parameters from files");
static cl::OptionCategory syntheticCategory("Synthetic batch");
static cl::OptionCategory outputCategory("Output");
static cl::OptionCategory gpuCategory("GPU target (--target=cuda)");

static cl::opt<std::string> modelPath(cl::Positional, cl::Required,
                                      cl::desc("<model.mlir>"),
                                      cl::cat(modelCategory));
static cl::opt<bool>
    training("training",
             cl::desc("Training mode: dropout drops units, its mask seeded by "
                      "the input 'dropout_seed' the compiler adds"),
             cl::cat(modelCategory));
static cl::opt<bool> json("json", cl::desc("Print results as JSON"),
                          cl::cat(outputCategory));
// --entry, --target, --num-threads, --emit-gpu-code and every option of
// the compilation phases (nn/Options.h).
static nn::tools::CompileFlags compileFlags(modelCategory, gpuCategory);
static cl::opt<bool>
    compileOnly("compile-only",
                cl::desc("Compile and load, print the kernels (cuda) and "
                         "stop without running"),
                cl::cat(outputCategory));
static cl::opt<std::string>
    inputsPath("inputs",
               cl::desc(".npz with one array per graph input, plus "
                        "'lengths.<dim>' (int32) per sequence dim"),
               cl::cat(dataCategory));
static cl::opt<std::string>
    paramsPath("params",
               cl::desc(".npz with one array per parameter (by name)"),
               cl::cat(dataCategory));
static cl::list<std::string>
    inputFiles("input",
               cl::desc("NAME=FILE.npy: one input (or lengths.<dim>) from a "
                        ".npy file; repeatable, overrides --inputs"),
               cl::cat(dataCategory));
static cl::list<std::string>
    paramFiles("param",
               cl::desc("NAME=FILE.npy: one parameter from a .npy file; "
                        "repeatable, overrides --params"),
               cl::cat(dataCategory));
static cl::opt<std::string>
    gradsOut("grads",
             cl::desc("Also compute the gradient of the training objective "
                      "and write one float32 array per parameter, keyed by "
                      "its name, to this .npz (--json adds their L2 norms)"),
             cl::cat(outputCategory));
static cl::list<std::string>
    inputGrads("input-grads", cl::CommaSeparated,
               cl::desc("With --grads: also the gradients with respect to "
                        "these float inputs, keyed input:<name>"),
               cl::cat(outputCategory));
static cl::opt<std::string>
    outputsOut("outputs",
               cl::desc("Write every graph result to this .npz: output<i> in "
                        "result order, with lengths.<dim> for its sequence "
                        "dims"),
               cl::cat(outputCategory));
static cl::opt<std::string> artifactOut("emit-artifact",
                                        cl::desc("Keep the compiled .so here"),
                                        cl::cat(outputCategory));
static cl::opt<unsigned> seed("seed", cl::init(1),
                              cl::desc("Seed for synthetic data"),
                              cl::cat(syntheticCategory));
static cl::opt<unsigned> batchSize("batch", cl::init(8),
                                   cl::desc("Synthetic batch size"),
                                   cl::cat(syntheticCategory));
static cl::opt<unsigned> minLength("min-len", cl::init(1),
                                   cl::desc("Synthetic lengths: minimum"),
                                   cl::cat(syntheticCategory));
static cl::opt<unsigned> maxLength("max-len", cl::init(50),
                                   cl::desc("Synthetic lengths: maximum "
                                            "(= the padded size)"),
                                   cl::cat(syntheticCategory));
static cl::list<std::string>
    dimLengths("dim-len",
               cl::desc("Synthetic lengths of one sequence dim: NAME=MIN:MAX "
                        "(overrides --min-len/--max-len for it; repeatable)"),
               cl::cat(syntheticCategory));
static cl::opt<std::string> lengthsFrom(
    "lengths-from",
    cl::desc("Sample synthetic lengths from a file of utterances, one per "
             "line; column k gives the k-th sequence dim"),
    cl::cat(syntheticCategory));
static cl::opt<bool> timing("timing",
                            cl::desc("Print compile and run times to stderr"),
                            cl::cat(outputCategory));
static cl::opt<std::string> padValue(
    "pad-value", cl::init("0"),
    cl::desc("What synthetic float inputs hold on padded frames: a number "
             "or nan"),
    cl::cat(syntheticCategory));

namespace {

/// The largest --lengths-from file read (a short line per utterance).
constexpr uint64_t kMaxLengthsFileBytes = 64 << 20;

bool fail(const absl::Status &status) {
  llvm::errs() << "nn-run: " << std::string(status.message()) << "\n";
  return true;
}

/// Lengths of each root sequence dim for a synthetic batch.
absl::Status
syntheticLengths(const nn::Manifest &manifest, std::mt19937 &rng,
                 std::map<std::string, std::vector<int32_t>> &out) {
  std::vector<std::string> sequences;
  for (const std::string &root : manifest.rootDims)
    if (manifest.findDim(root)->kind == nn::DimInfo::Kind::seq)
      sequences.push_back(root);
  if (!lengthsFrom.empty()) {
    // A text file of a row per utterance; a FIFO or /dev/zero would block
    // or fill memory with one endless line.
    absl::StatusOr<std::string> text =
        nn::readRegularFile(lengthsFrom, kMaxLengthsFileBytes);
    if (!text.ok())
      return nn::withContext(text.status(), "--lengths-from: ");
    std::istringstream file(*text);
    std::vector<std::vector<int32_t>> rows;
    for (std::string line; std::getline(file, line);) {
      std::istringstream fields(line);
      std::vector<int32_t> row;
      for (long value; fields >> value;)
        row.push_back((int32_t)value);
      if (row.size() >= sequences.size() && !row.empty())
        rows.push_back(row);
    }
    if (rows.empty())
      return absl::InvalidArgumentError(
          "'" + lengthsFrom + "' has no rows with " +
          std::to_string(sequences.size()) + " columns");
    std::uniform_int_distribution<size_t> pick(0, rows.size() - 1);
    for (unsigned b = 0; b < batchSize; ++b) {
      const std::vector<int32_t> &row = rows[pick(rng)];
      for (size_t k = 0; k < sequences.size(); ++k)
        out[sequences[k]].push_back(row[k]);
    }
    return absl::OkStatus();
  }
  std::map<std::string, std::pair<long, long>> ranges;
  for (const std::string &spec : dimLengths) {
    size_t eq = spec.find('='), colon = spec.find(':');
    if (eq == std::string::npos || colon == std::string::npos || colon < eq)
      return absl::InvalidArgumentError(
          "--dim-len expects NAME=MIN:MAX, got '" + spec + "'");
    std::string name = spec.substr(0, eq);
    if (std::find(sequences.begin(), sequences.end(), name) == sequences.end())
      return absl::InvalidArgumentError(
          "--dim-len names '" + name +
          "', which is not a root sequence dim of @" + manifest.graph);
    long lo = 0, hi = 0;
    if (llvm::StringRef(spec)
            .substr(eq + 1, colon - eq - 1)
            .getAsInteger(10, lo) ||
        llvm::StringRef(spec).substr(colon + 1).getAsInteger(10, hi) ||
        hi > std::numeric_limits<int32_t>::max())
      return absl::InvalidArgumentError(
          "--dim-len expects NAME=MIN:MAX with lengths in [0, 2^31 - 1], got "
          "'" +
          spec + "'");
    ranges[name] = {lo, hi};
  }
  for (const std::string &sequence : sequences) {
    auto [lo, hi] = ranges.count(sequence)
                        ? ranges[sequence]
                        : std::make_pair((long)minLength, (long)maxLength);
    if (lo < 0 || lo > hi)
      return absl::InvalidArgumentError("synthetic lengths of '" + sequence +
                                        "': " + std::to_string(lo) + ":" +
                                        std::to_string(hi) +
                                        " is not a range (is --min-len above "
                                        "--max-len?)");
    std::uniform_int_distribution<int32_t> length(lo, hi);
    for (unsigned b = 0; b < batchSize; ++b)
      out[sequence].push_back(length(rng));
  }
  return absl::OkStatus();
}

/// A seeded batch over the synthetic lengths (nn/Synthetic.h).
absl::Status syntheticInputs(const nn::Manifest &manifest, std::mt19937 &rng,
                             nn::RunInputs &inputs) {
  std::map<std::string, std::vector<int32_t>> lengths;
  absl::Status status = syntheticLengths(manifest, rng, lengths);
  if (!status.ok())
    return status;
  double pad = padValue == "nan" ? std::numeric_limits<double>::quiet_NaN()
                                 : std::strtod(padValue.c_str(), nullptr);
  inputs =
      nn::syntheticBatch(manifest, batchSize, std::move(lengths), rng, pad);
  return absl::OkStatus();
}

/// NAME=FILE.npy pairs into `arrays`.
absl::Status readNpyList(const cl::list<std::string> &specs, const char *flag,
                         std::map<std::string, nn::Tensor> &arrays) {
  for (const std::string &spec : specs) {
    size_t eq = spec.find('=');
    if (eq == std::string::npos || eq == 0)
      return absl::InvalidArgumentError(std::string("--") + flag +
                                        " expects NAME=FILE.npy, got '" + spec +
                                        "'");
    absl::Status status =
        nn::readNpy(spec.substr(eq + 1), arrays[spec.substr(0, eq)]);
    if (!status.ok())
      return status;
  }
  return absl::OkStatus();
}

absl::Status loadInputs(nn::RunInputs &inputs) {
  std::map<std::string, nn::Tensor> arrays;
  absl::Status status;
  if (!inputsPath.empty())
    status = nn::readNpz(inputsPath, arrays);
  if (status.ok())
    status = readNpyList(inputFiles, "input", arrays);
  if (!status.ok())
    return status;
  for (auto &[key, tensor] : arrays) {
    if (key.rfind("lengths.", 0) == 0) {
      std::vector<int32_t> lengths;
      if (tensor.rank() != 1 || (tensor.dtype() != nn::DType::i32 &&
                                 tensor.dtype() != nn::DType::i64))
        return absl::InvalidArgumentError("'" + key + "' in '" + inputsPath +
                                          "' must be a 1-D integer array");
      for (int64_t i = 0; i < tensor.numElements(); ++i) {
        int64_t length = tensor.dtype() == nn::DType::i64
                             ? tensor.data<int64_t>()[i]
                             : tensor.data<int32_t>()[i];
        if (length < 0 || length > std::numeric_limits<int32_t>::max())
          return absl::InvalidArgumentError(
              "'" + key + "' holds length " + std::to_string(length) +
              " for sequence " + std::to_string(i) + ", outside [0, " +
              std::to_string(std::numeric_limits<int32_t>::max()) + "]");
        lengths.push_back((int32_t)length);
      }
      inputs.lengths[key.substr(8)] = lengths;
    } else {
      inputs.inputs[key] = std::move(tensor);
    }
  }
  return absl::OkStatus();
}

/// --outputs: the graph's own results (not gradients) as output<i>, and
/// the lengths of the sequence dims they name (computed ones as the run
/// returned them; those of an N-best list's hypotheses run over its
/// flattened batch).
absl::Status writeOutputs(const nn::Manifest &manifest,
                          const nn::Executable &executable,
                          const nn::RunInputs &inputs,
                          const nn::RunResult &result) {
  nn::DimValues dims;
  absl::Status status = executable.validate(inputs, dims);
  if (!status.ok())
    return status;
  std::map<std::string, nn::Tensor> arrays;
  for (size_t i = 0; i < result.outputs.size(); ++i) {
    const std::string &name = result.outputs[i].first;
    const std::string computed = nn::lengthsOutputName("");
    if (name.rfind(computed, 0) == 0)
      arrays["lengths." + name.substr(computed.size())] =
          result.outputs[i].second;
    if (name.rfind("result", 0) != 0)
      continue;
    arrays["output" + std::to_string(i)] = result.outputs[i].second;
    for (const nn::Axis &axis : manifest.outputs[i].axes) {
      auto lengths = dims.lengths.find(axis.dim);
      if (!axis.isNamed() || lengths == dims.lengths.end())
        continue;
      nn::Tensor tensor(nn::DType::i32,
                        {static_cast<int64_t>(lengths->second.size())});
      std::copy(lengths->second.begin(), lengths->second.end(),
                tensor.data<int32_t>());
      arrays["lengths." + axis.dim] = std::move(tensor);
    }
  }
  return nn::writeNpz(outputsOut, arrays);
}

std::string number(double value) {
  char buffer[64];
  std::snprintf(buffer, sizeof(buffer), "%.9g", value);
  return buffer;
}

/// Marks every option outside `shown` (and LLVM's generic --help,
/// --version) hidden: --help lists nn-run's own options by category,
/// --help-hidden everything, LLVM's code generation options included.
void hideOtherOptions(std::initializer_list<const cl::OptionCategory *> shown) {
  for (auto &entry : cl::getRegisteredOptions()) {
    cl::Option *option = entry.getValue();
    bool keep = llvm::any_of(option->Categories, [&](const auto *category) {
      return llvm::is_contained(shown, category) ||
             category->getName() == "Generic Options";
    });
    if (!keep && option->getOptionHiddenFlag() == cl::NotHidden)
      option->setHiddenFlag(cl::Hidden);
  }
}

} // namespace

int main(int argc, char **argv) {
  llvm::InitLLVM init(argc, argv);
  hideOtherOptions({&modelCategory, &dataCategory, &syntheticCategory,
                    &outputCategory, &gpuCategory});
  cl::ParseCommandLineOptions(argc, argv, "nn-run: compile and run a graph\n");
  nn::setNumThreads((int)compileFlags.threads());

  nn::CompileOptions options = compileFlags.compileOptions();
  options.grads = !gradsOut.empty();
  options.training = training;
  options.inputGradients.assign(inputGrads.begin(), inputGrads.end());
  if (!inputGrads.empty() && gradsOut.empty()) {
    llvm::errs() << "nn-run: --input-grads needs --grads FILE.npz\n";
    return 2;
  }
  options.artifactPath = artifactOut;
  auto start = std::chrono::steady_clock::now();
  absl::StatusOr<nn::Artifact> artifact = nn::compileFile(modelPath, options);
  if (!artifact.ok())
    return fail(artifact.status());
  nn::Executable executable;
  absl::Status status = nn::Executable::load(artifact->path(), executable);
  auto compiled = std::chrono::steady_clock::now();
  if (!status.ok())
    return fail(status);
  const nn::Manifest &manifest = executable.manifest();
  if (compileOnly) {
    llvm::outs() << "compiled @" << manifest.graph << " for " << manifest.target
                 << ": " << manifest.kernels.size() << " kernels\n";
    for (const nn::KernelInfo &kernel : manifest.kernels)
      llvm::outs() << "kernel " << kernel.name << " (" << kernel.origin
                   << ")\n";
    return 0;
  }

  std::mt19937 rng(seed);
  nn::RunInputs inputs;
  bool fromFiles = !inputsPath.empty() || !inputFiles.empty();
  status =
      fromFiles ? loadInputs(inputs) : syntheticInputs(manifest, rng, inputs);
  if (!status.ok())
    return fail(status);
  if (paramsPath.empty() && paramFiles.empty()) {
    nn::syntheticParameters(manifest, rng, inputs);
  } else {
    if (!paramsPath.empty())
      status = nn::readNpz(paramsPath, inputs.parameters);
    if (status.ok())
      status = readNpyList(paramFiles, "param", inputs.parameters);
    if (!status.ok())
      return fail(status);
  }

  nn::RunResult result;
  auto runStart = std::chrono::steady_clock::now();
  status = executable.run(inputs, result);
  auto ran = std::chrono::steady_clock::now();
  if (!status.ok())
    return fail(status);
  if (!outputsOut.empty()) {
    status = writeOutputs(manifest, executable, inputs, result);
    if (!status.ok())
      return fail(status);
  }
  // The gradients are moved out of the result, not copied: at V = 10000
  // the weight's alone is 20 MB, and the archive is written from them.
  // Their norms are taken first, in their own dtype.
  std::vector<std::pair<std::string, double>> gradientNorms;
  std::map<std::string, nn::Tensor> gradients;
  auto take = [&](const nn::Tensor *found, const std::string &key) {
    for (auto &[outputName, tensor] : result.outputs) {
      if (&tensor != found)
        continue;
      double squares = 0;
      for (int64_t j = 0; j < tensor.numElements(); ++j)
        squares += tensor.at(j) * tensor.at(j);
      gradientNorms.emplace_back(key, std::sqrt(squares));
      // The archive holds float32 (a no-op for the f32 gradients of an
      // f32 model).
      if (tensor.dtype() == nn::DType::f32) {
        gradients[key] = std::move(tensor);
      } else {
        nn::Tensor f32(nn::DType::f32, tensor.shape());
        for (int64_t i = 0; i < tensor.numElements(); ++i)
          f32.data<float>()[i] = static_cast<float>(tensor.at(i));
        gradients[key] = std::move(f32);
        tensor = nn::Tensor();
      }
      return;
    }
  };
  for (const std::string &name : result.gradientNames())
    take(result.gradient(name), name);
  for (const std::string &name : inputGrads)
    take(result.inputGradient(name), "input:" + name);
  if (!gradsOut.empty()) {
    status = nn::writeNpz(gradsOut, gradients);
    if (!status.ok())
      return fail(status);
  }
  if (timing) {
    using ms = std::chrono::duration<double, std::milli>;
    llvm::errs() << llvm::format("compile %.1f ms, run %.1f ms\n",
                                 ms(compiled - start).count(),
                                 ms(ran - runStart).count());
  }

  if (json) {
    using nn::support::JsonArray;
    using nn::support::JsonObject;
    JsonArray losses;
    for (const nn::LossValue &loss : result.losses)
      losses.push(JsonObject()
                      .add("name", loss.name)
                      .add("value", loss.normalized)
                      .add("sum", loss.sum)
                      .add("normalization", loss.normalization)
                      .add("scale", loss.scale)
                      .add("as_error", loss.asError)
                      .add("packed", loss.packed)
                      .add("frames_computed", loss.framesComputed)
                      .add("frames_padded", loss.framesPadded));
    JsonObject line;
    line.add("graph", manifest.graph)
        .add("pack", options.optimize.pack)
        .add("losses", losses);
    if (!gradsOut.empty()) {
      JsonArray norms;
      for (const auto &[name, norm] : gradientNorms)
        norms.push(JsonObject().add("name", name).add("l2_norm", norm));
      line.add("gradients", norms);
    }
    llvm::outs() << line << "\n";
    return 0;
  }
  for (const nn::LossValue &loss : result.losses) {
    llvm::outs() << "loss " << loss.name << " = " << number(loss.normalized)
                 << " (sum " << number(loss.sum) << " / "
                 << manifest.losses[&loss - result.losses.data()].normalization
                 << " " << number(loss.normalization) << ")";
    if (loss.packed)
      llvm::outs() << "  packed: " << loss.framesComputed << " of "
                   << loss.framesPadded << " padded frames computed";
    llvm::outs() << "\n";
  }
  return 0;
}
