//===- nn-decode.cpp - recognize a dataset with a trained model -----------===//
//
//   nn-decode model.mlir --params ckpt/step-00001000.npz --data dev/
//   nn-decode model.mlir --params p.npz --data dev/ --vocab tokens.txt --json
//
// Compiles the decoding graph, runs it over the dataset in file order with
// the trained parameters, and writes one hypothesis per utterance under
// its id (plain lines or JSON lines, docs/decoding.md). With references
// (the dataset's `labels`, or --ref NAME) each hypothesis is scored and
// the corpus error rate reported, in labels or, with --vocab, in words;
// the graph's marked losses are summed over the dataset as nn-train's dev
// evaluation sums them.
//
//===----------------------------------------------------------------------===//

#include "training/Decoding.h"
#include "training/Trainer.h"

#include "nn/Dataset.h"
#include "nn/ErrorRate.h"
#include "nn/Train.h"
#include "support/JsonLine.h"
#include "tools/common/CompileFlags.h"
#include "tools/common/Flags.h"

#include "llvm/Support/CommandLine.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Format.h"
#include "llvm/Support/InitLLVM.h"
#include "llvm/Support/raw_ostream.h"

#include <algorithm>
#include <map>
#include <memory>
#include <optional>

namespace cl = llvm::cl;

static cl::OptionCategory modelCategory("Model and compilation");
static cl::OptionCategory dataCategory("Data");
static cl::OptionCategory outputCategory("Output");
static cl::OptionCategory gpuCategory("GPU target (--target=cuda)");

static cl::opt<std::string> modelPath(cl::Positional, cl::desc("<model.mlir>"),
                                      cl::cat(modelCategory));
// --entry, --target, --num-threads, --emit-gpu-code and every option of the
// compilation phases (nn/Options.h).
static nn::tools::CompileFlags compileFlags(modelCategory, gpuCategory);
static cl::opt<unsigned>
    beam("beam",
         cl::desc("The beam of the graph's CTC beam search "
                  "(nn.ctc_beam_search), in place of the written one; an "
                  "error when the graph runs none or several"),
         cl::cat(modelCategory));
static cl::opt<std::string>
    paramsPath("params",
               cl::desc("The trained parameters: an .npz of every parameter "
                        "of the graph by name (an nn-train checkpoint; its "
                        "optimizer state is ignored)"),
               cl::cat(modelCategory));

static cl::opt<std::string>
    dataPath("data",
             cl::desc("The data to decode: a dataset shard (.npz) or a "
                      "directory of shards (nn-data writes them)"),
             cl::cat(dataCategory));
static cl::opt<std::string> referenceArray(
    "ref",
    cl::desc("The dataset's array of reference labels (default: 'labels' "
             "when the dataset holds it; --ref= for none)"),
    cl::cat(dataCategory));
static cl::opt<unsigned> batchSize("batch-size", cl::init(16),
                                   cl::desc("Sequences per batch"),
                                   cl::cat(dataCategory));

static cl::opt<std::string>
    vocabularyPath("vocab",
                   cl::desc("Token per label, one per line: write the "
                            "hypotheses as text and count word errors"),
                   cl::cat(outputCategory));
static cl::opt<bool>
    json("json",
         cl::desc("Write one JSON object per utterance and a final summary "
                  "object"),
         cl::cat(outputCategory));
static cl::opt<std::string>
    outPath("out", cl::desc("Write the hypotheses to this file, not stdout"),
            cl::cat(outputCategory));

namespace {

using nn::support::JsonObject;
namespace training = nn::training;

int fail(const absl::Status &status) {
  llvm::errs() << "nn-decode: " << std::string(status.message()) << "\n";
  return 1;
}

/// The parameters of `manifest` from `path`: every one there (a graph
/// that decodes with some parameters fresh decodes nothing meaningful),
/// each with the model's dtype and shape, optimizer state ignored, as
/// nn-train's --init-from takes them. Unlike --init-from, parameters the
/// graph does not read are no error: a decoding graph may leave out
/// parameters the training graph of its module trains (an auxiliary
/// loss's output layer); `ignored` lists them.
absl::Status loadParameters(const nn::Manifest &manifest,
                            const std::string &path,
                            std::map<std::string, nn::Tensor> &parameters,
                            std::vector<std::string> &ignored) {
  if (path.empty()) {
    if (manifest.parameters.empty())
      return absl::OkStatus();
    return absl::InvalidArgumentError(
        "graph @" + manifest.graph + " has " +
        std::to_string(manifest.parameters.size()) +
        " parameters (the first '" + manifest.parameters.front().name +
        "'): give their trained values with --params FILE.npz");
  }
  nn::TrainState loaded;
  if (absl::Status status = nn::loadCheckpoint(path, loaded); !status.ok())
    return status;
  for (const nn::TensorInfo &info : manifest.parameters)
    if (!loaded.parameters.count(info.name))
      return absl::InvalidArgumentError("'" + path + "' lacks parameter '" +
                                        info.name + "' of graph @" +
                                        manifest.graph);
  for (auto it = loaded.parameters.begin(); it != loaded.parameters.end();) {
    bool read = std::any_of(
        manifest.parameters.begin(), manifest.parameters.end(),
        [&](const nn::TensorInfo &info) { return info.name == it->first; });
    if (read) {
      ++it;
      continue;
    }
    if (!nn::isOptimizerState(it->first))
      ignored.push_back(it->first);
    it = loaded.parameters.erase(it);
  }
  nn::TrainState state;
  if (absl::Status status = nn::restoreParameters(
          manifest, loaded, /*resume=*/false, "'" + path + "'", state);
      !status.ok())
    return status;
  parameters = std::move(state.parameters);
  return absl::OkStatus();
}

/// The file hypotheses go to: stdout, or --out written as FILE.partial and
/// renamed once complete, so a failed run leaves no torn file.
class Output {
public:
  absl::Status open(const std::string &path) {
    this->path = path;
    if (path.empty())
      return absl::OkStatus();
    std::error_code ec;
    file = std::make_unique<llvm::raw_fd_ostream>(partial(), ec,
                                                  llvm::sys::fs::OF_Text);
    if (ec)
      return absl::InvalidArgumentError("cannot write '" + partial() +
                                        "': " + ec.message());
    return absl::OkStatus();
  }
  llvm::raw_ostream &stream() {
    return file ? static_cast<llvm::raw_ostream &>(*file) : llvm::outs();
  }
  absl::Status commit() {
    if (!file) {
      llvm::outs().flush();
      return absl::OkStatus();
    }
    file->close();
    if (file->has_error()) {
      std::string why = file->error().message();
      file->clear_error();
      llvm::sys::fs::remove(partial());
      return absl::InternalError("cannot write '" + partial() + "': " + why);
    }
    if (std::error_code ec = llvm::sys::fs::rename(partial(), path)) {
      llvm::sys::fs::remove(partial());
      return absl::InternalError("cannot rename '" + partial() + "' to '" +
                                 path + "': " + ec.message());
    }
    file.reset();
    return absl::OkStatus();
  }
  ~Output() {
    if (file) {
      file->close();
      file->clear_error();
      llvm::sys::fs::remove(partial());
    }
  }

private:
  std::string partial() const { return path + ".partial"; }
  std::string path;
  std::unique_ptr<llvm::raw_fd_ostream> file;
};

absl::Status decode() {
  if (modelPath.empty())
    return absl::InvalidArgumentError(
        "give a model: nn-decode MODEL.mlir --params P.npz --data DIR");
  if (dataPath.empty())
    return absl::InvalidArgumentError(
        "no data: give --data DIR (a dataset nn-data writes)");
  if (batchSize == 0)
    return absl::InvalidArgumentError("--batch-size must be positive");
  std::optional<nn::Vocabulary> vocabulary;
  if (!vocabularyPath.empty()) {
    absl::StatusOr<nn::Vocabulary> loaded =
        nn::Vocabulary::load(vocabularyPath);
    if (!loaded.ok())
      return nn::withContext(loaded.status(), "--vocab: ");
    vocabulary = std::move(*loaded);
  }

  nn::CompileOptions compileOptions = compileFlags.compileOptions();
  if (beam.getNumOccurrences()) {
    if (beam == 0)
      return absl::InvalidArgumentError("--beam must be at least 1");
    compileOptions.searchBeam = beam;
  }
  absl::StatusOr<nn::Artifact> artifact =
      nn::compileFile(modelPath, compileOptions);
  if (!artifact.ok())
    return artifact.status();
  nn::Executable executable;
  if (absl::Status status = nn::Executable::load(artifact->path(), executable);
      !status.ok())
    return status;
  const nn::Manifest &manifest = executable.manifest();
  absl::StatusOr<training::HypothesisLayout> layout =
      training::hypothesisLayout(manifest);
  if (!layout.ok())
    return nn::withContext(layout.status(), "'" + modelPath + "': ");
  std::map<std::string, nn::Tensor> parameters;
  std::vector<std::string> ignored;
  if (absl::Status status =
          loadParameters(manifest, paramsPath, parameters, ignored);
      !status.ok())
    return status;

  // The references: --ref NAME must be there; by default 'labels' may be.
  bool refGiven = referenceArray.getNumOccurrences() > 0;
  std::string refName = refGiven ? referenceArray : std::string("labels");
  std::vector<nn::Dataset::HostArray> hostArrays;
  if (!refName.empty())
    hostArrays.push_back({refName, /*optional=*/!refGiven});
  // An utterance without frames is decoded (the empty hypothesis), not
  // left out: its reference counts in the error rate.
  absl::StatusOr<nn::Dataset> dataset = nn::Dataset::load(
      {dataPath}, manifest, hostArrays, nn::Dataset::WithoutFrames::keep);
  if (!dataset.ok())
    return dataset.status();
  if (absl::Status status = training::checkUniqueIds(*dataset, "nn-decode");
      !status.ok())
    return status;

  Output output;
  if (absl::Status status = output.open(outPath); !status.ok())
    return status;
  llvm::raw_ostream &out = output.stream();
  training::DecodeOptions options;
  options.batchSize = batchSize;
  options.reference = refName;
  options.vocabulary = vocabulary ? &*vocabulary : nullptr;
  absl::StatusOr<training::DecodeTotals> totals = training::decodeDataset(
      executable, *layout, *dataset, parameters, options,
      [&](const training::DecodedUtterance &decoded) {
        if (json) {
          out << training::hypothesisJson(decoded, vocabulary.has_value())
              << "\n";
          return absl::OkStatus();
        }
        out << decoded.id;
        if (vocabulary) {
          if (!decoded.text.empty())
            out << " " << decoded.text;
        } else {
          for (int32_t label : decoded.hypothesis.labels)
            out << " " << label;
        }
        out << "\n";
        return absl::OkStatus();
      });
  if (!totals.ok())
    return totals.status();
  if (json)
    out << JsonObject().add("summary",
                            training::summaryJson(
                                *totals, training::lossesJson(
                                             manifest, totals->losses.losses)))
        << "\n";
  if (absl::Status status = output.commit(); !status.ok())
    return status;
  if (json)
    return absl::OkStatus();
  if (!ignored.empty()) {
    std::string names;
    for (const std::string &name : ignored)
      names += (names.empty() ? "'" : ", '") + name + "'";
    llvm::errs() << "nn-decode: graph @" << manifest.graph
                 << " reads no parameter " << names << " of '" << paramsPath
                 << "' (ignored)\n";
  }
  if (dataset->leftOut())
    llvm::errs() << "nn-decode: " << dataset->leftOut()
                 << " utterances left out (their '" << nn::kKeepArray
                 << "' is 0): no hypotheses\n";
  if (totals->withoutFrames)
    llvm::errs() << "nn-decode: " << totals->withoutFrames
                 << " utterances without frames along '" << dataset->lengthDim()
                 << "': the empty hypothesis (not run through the graph; "
                    "its losses do not count them)\n";
  if (!totals->losses.losses.empty())
    llvm::errs() << "losses: "
                 << training::lossesText(manifest, totals->losses.losses)
                 << "\n";
  llvm::errs() << training::errorRateText(*totals) << "\n";
  return absl::OkStatus();
}

} // namespace

int main(int argc, char **argv) {
  llvm::InitLLVM init(argc, argv);
  cl::HideUnrelatedOptions(
      {&modelCategory, &gpuCategory, &dataCategory, &outputCategory});
  cl::ParseCommandLineOptions(
      argc, argv, "nn-decode: recognize a dataset with a trained model\n");
  if (std::string flag = nn::tools::repeatedFlag(); !flag.empty())
    return fail(absl::InvalidArgumentError(
        flag + " is given more than once; give it once"));
  nn::setNumThreads((int)compileFlags.threads());
  absl::Status status = decode();
  return status.ok() ? 0 : fail(status);
}
