//===- Stages.cpp - multi-stage training from a stage file ----------------===//
//
// Two parts after reading the file (training/StageFile.h): preparing
// (compiling every graph and checking what stages hand each other) and
// running (synthesizing declared data, then each stage unless its
// done.json matches its fingerprint).
//
//===----------------------------------------------------------------------===//

#include "training/Stages.h"

#include "nn/File.h"
#include "nn/Npy.h"
#include "tools/common/Json.h"
#include "training/StageFile.h"
#include "training/WorkDir.h"

#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Format.h"
#include "llvm/Support/JSON.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/raw_ostream.h"

#include <chrono>
#include <cmath>
#include <map>
#include <random>
#include <set>

using namespace nn;
using namespace nn::training;
namespace json = llvm::json;

namespace {

/// A stage as the file gives it, and what preparing it made.
struct Stage : StageSpec {
  explicit Stage(StageSpec spec) : StageSpec(std::move(spec)) {}
  std::unique_ptr<Trainer> trainer;
  std::unique_ptr<Artifact> alignArtifact;
  Executable alignGraph;
  /// Align stages: the frame dim of the alignment and the class count.
  std::string alignDim;
  int64_t classes = 0;
  uint64_t fingerprint = 0;
  /// Done in an earlier run with this fingerprint, its outputs there: not
  /// compiled, not run.
  bool done = false;
};

/// FNV-1a over several strings, each closed by a 0 byte.
uint64_t fingerprintOf(std::initializer_list<std::string> parts) {
  std::string all;
  for (const std::string &part : parts) {
    all += part;
    all.push_back('\0');
  }
  return Manifest::hash(all);
}

std::string hex(uint64_t value) { return llvm::utohexstr(value, true, 16); }

/// The most a done.json or fingerprint file is read of (nn-train writes
/// one short line).
constexpr uint64_t kMaxRecordBytes = 1 << 20;

/// The fingerprint a done.json (or a fingerprint file) records, or "".
std::string recordedFingerprint(const std::string &path) {
  // Written by nn-train (a line); anything else, a FIFO or /dev/zero put
  // there included, is no record and must not block or exhaust memory.
  absl::StatusOr<std::string> text = readRegularFile(path, kMaxRecordBytes);
  if (!text.ok())
    return "";
  llvm::Expected<json::Value> value = json::parse(*text);
  if (!value) {
    llvm::consumeError(value.takeError());
    return "";
  }
  const json::Object *object = value->getAsObject();
  std::optional<llvm::StringRef> found =
      object ? object->getString("fingerprint") : std::nullopt;
  return found ? found->str() : "";
}

} // namespace

//===----------------------------------------------------------------------===//
// The pipeline
//===----------------------------------------------------------------------===//

struct StagePipeline::Impl {
  std::string file, baseDir, workDir;
  uint64_t seed = 0;
  std::vector<DataDecl> data;
  std::vector<Stage> stages;
  std::map<std::string, Entity> entities;
  std::vector<StageReport> reports;
  bool prepared = false;
  /// The work directory, and the overlay directories outside it: every
  /// file a stage writes is recorded in the one that holds it first.
  std::unique_ptr<WorkDir> work;
  std::map<std::string, std::unique_ptr<WorkDir>> overlays;

  absl::Status openDirectories();
  /// The owner of `path`: the work directory or an overlay directory.
  WorkDir &ownerOf(const std::string &path);
  /// Writes a file (arrays, or text) after recording it with its owner.
  absl::Status writeArrays(const std::string &path,
                           const std::map<std::string, Tensor> &arrays);
  absl::Status writeText(const std::string &path, const std::string &text);
  /// Removes a file a stage wrote, if it is there.
  absl::Status removeIfThere(const std::string &path);

  absl::Status prepareData();
  uint64_t fingerprintOfStage(const Stage &stage) const;
  bool adoptDoneStage(Stage &stage);
  absl::Status prepareTrain(Stage &stage, const OutputOptions &output);
  absl::Status prepareAlign(Stage &stage);
  absl::Status requireArrays(const Stage &stage, const std::string &dataName,
                             const Manifest &manifest) const;

  absl::Status synthesize(const DataDecl &decl, const OutputOptions &output);
  absl::Status runTrain(Stage &stage, const OutputOptions &output,
                        StageReport &report, bool &finished);
  absl::Status runAlign(Stage &stage, const OutputOptions &output,
                        StageReport &report);
  struct Alignment;
  absl::Status align(Stage &stage, const std::string &dataName,
                     const std::map<std::string, Tensor> &parameters,
                     Alignment &out);

  std::string doneMarker(const std::string &dir) const {
    return dir + "/done.json";
  }
};

StagePipeline::StagePipeline(std::unique_ptr<Impl> impl)
    : impl(std::move(impl)) {}
StagePipeline::~StagePipeline() = default;

const std::string &StagePipeline::workDir() const { return impl->workDir; }
const std::vector<StageReport> &StagePipeline::reports() const {
  return impl->reports;
}

absl::StatusOr<std::unique_ptr<StagePipeline>>
StagePipeline::load(const std::string &path, const std::string &workDir) {
  absl::StatusOr<StageFile> read = StageFile::read(path, workDir);
  if (!read.ok())
    return read.status();
  auto impl = std::make_unique<Impl>();
  impl->file = read->file;
  impl->baseDir = read->baseDir;
  impl->workDir = read->workDir;
  impl->seed = read->seed;
  impl->data = std::move(read->data);
  impl->entities = std::move(read->entities);
  for (StageSpec &spec : read->stages)
    impl->stages.emplace_back(std::move(spec));
  return std::unique_ptr<StagePipeline>(new StagePipeline(std::move(impl)));
}

//===----------------------------------------------------------------------===//
// Preparing: compile and check what stages hand each other
//===----------------------------------------------------------------------===//

bool isTrainStepScalar(const std::string &name) {
  return name == "learning_rate" || name == "step" || name == "dropout_seed";
}

/// The shape of a manifest tensor with static sizes (parameters).
std::vector<int64_t> staticShape(const TensorInfo &info) {
  std::vector<int64_t> shape;
  for (const Axis &axis : info.axes)
    shape.push_back(axis.size);
  return shape;
}

std::string describe(const TensorInfo &info) {
  return shapeText(staticShape(info)) + " " + toString(info.dtype);
}

absl::Status StagePipeline::Impl::prepareData() {
  for (const DataDecl &decl : data) {
    Entity &entity = entities.at(decl.name);
    if (decl.synthesize) {
      entity.arrays = {"features", "frame_labels", "labels", "segments"};
      entity.fingerprint = fingerprintOf({"synthesize", decl.spec});
      continue;
    }
    absl::StatusOr<std::vector<std::string>> shards =
        Dataset::shardPaths(decl.path);
    if (!shards.ok())
      return withContext(shards.status(), file + ": data." + decl.name + ": ");
    std::map<std::string, Tensor> first;
    if (absl::Status status = readNpz(shards->front(), first); !status.ok())
      return withContext(status, file + ": data." + decl.name + ": ");
    for (const auto &[name, tensor] : first)
      if (!llvm::StringRef(name).ends_with(".lengths"))
        entity.arrays.insert(name);
    // The files' sizes and times stand for their contents.
    std::string stamp = decl.path;
    for (const std::string &shard : *shards) {
      llvm::sys::fs::file_status status;
      llvm::sys::fs::status(shard, status);
      stamp += "\n" + shard + " " + std::to_string(status.getSize()) + " " +
               std::to_string(
                   status.getLastModificationTime().time_since_epoch().count());
    }
    entity.fingerprint = fingerprintOf({"path", stamp});
  }
  return absl::OkStatus();
}

/// Every input of `manifest` (the train step's own scalars aside) is an
/// array of dataset `dataName`.
absl::Status
StagePipeline::Impl::requireArrays(const Stage &stage,
                                   const std::string &dataName,
                                   const Manifest &manifest) const {
  const Entity &entity = entities.at(dataName);
  for (const TensorInfo &input : manifest.inputs) {
    if (isTrainStepScalar(input.name) || entity.arrays.count(input.name))
      continue;
    std::string list;
    for (const std::string &name : entity.arrays)
      list += (list.empty() ? "" : ", ") + name;
    return absl::InvalidArgumentError(
        file + ": " + stage.where + ": graph @" + manifest.graph +
        " reads input '" + input.name + "', which dataset '" + dataName +
        "' does not hold (it holds " + list + ")");
  }
  return absl::OkStatus();
}

absl::Status StagePipeline::Impl::prepareTrain(Stage &stage,
                                               const OutputOptions &output) {
  TrainOptions options;
  options.modelPath = stage.graphPath;
  options.compile.entry = stage.entry;
  options.compile.optimize.pack = stage.pack;
  options.compile.optimizer = stage.optimizer;
  options.compile.trainedLosses = stage.losses;
  options.data.train = entities.at(stage.readTrain).paths;
  if (!stage.readDev.empty())
    options.data.dev = entities.at(stage.readDev).paths;
  options.data.batchSize = stage.batchSize;
  options.data.maxFrames = stage.maxFrames;
  options.data.bucket = stage.bucket;
  options.data.shuffle = stage.shuffle;
  options.steps = stage.steps;
  options.epochs = stage.epochs;
  options.seed = stage.seed;
  options.schedule = stage.schedule;
  options.onNonFinite = stage.onNonFinite;
  options.saveDir = stage.dir + "/checkpoints";
  options.keep = 2;
  options.evaluateAtStart = !stage.readInit.empty() && !stage.readDev.empty();
  options.output = output;
  options.output.jsonPrefix =
      "\"stage\": " + tools::jsonString(stage.name) + ", ";
  options.output.linePrefix = "[" + stage.name + "] ";
  options.output.jsonEvents = true;
  stage.trainer = std::make_unique<Trainer>(std::move(options));
  if (absl::Status status = stage.trainer->compile(); !status.ok())
    return withContext(status, file + ": " + stage.where + ": ");
  const Manifest &train = stage.trainer->trainManifest();
  const Manifest &eval = stage.trainer->evalManifest();
  if (absl::Status status = requireArrays(stage, stage.readTrain, train);
      !status.ok())
    return status;
  if (!stage.readDev.empty())
    if (absl::Status status = requireArrays(stage, stage.readDev, eval);
        !status.ok())
      return status;
  // Parameters shared by name have one shape.
  if (!stage.readInit.empty()) {
    const Entity &init = entities.at(stage.readInit);
    for (const TensorInfo &mine : eval.parameters)
      for (const TensorInfo &theirs : *init.parameters)
        if (mine.name == theirs.name &&
            (mine.dtype != theirs.dtype ||
             staticShape(mine) != staticShape(theirs)))
          return absl::InvalidArgumentError(
              file + ": " + stage.where + ": parameter '" + mine.name +
              "' is " + describe(mine) + " in graph @" + eval.graph + ", but " +
              describe(theirs) + " in '" + stage.readInit + "' (from " +
              stages[init.producer].where + ")");
  }
  Entity &written = entities.at(stage.writeParameters);
  written.parameters = &eval.parameters;
  return absl::OkStatus();
}

absl::Status StagePipeline::Impl::prepareAlign(Stage &stage) {
  CompileOptions options;
  options.entry = stage.entry;
  absl::StatusOr<Artifact> compiled = compileFile(stage.graphPath, options);
  if (!compiled.ok())
    return withContext(compiled.status(), file + ": " + stage.where + ": ");
  stage.alignArtifact = std::make_unique<Artifact>(std::move(*compiled));
  if (absl::Status status =
          Executable::load(stage.alignArtifact->path(), stage.alignGraph);
      !status.ok())
    return status;
  const Manifest &manifest = stage.alignGraph.manifest();
  auto fail = [&](const std::string &why) {
    return absl::InvalidArgumentError(file + ": " + stage.where + ": graph @" +
                                      manifest.graph + " " + why);
  };
  // The alignment: the first result, [B, T] i32 over a sequence dim.
  const TensorInfo *result =
      manifest.outputs.empty() ? nullptr : &manifest.outputs.front();
  const DimInfo *batch =
      result && result->axes.size() == 2 && result->axes[0].isNamed()
          ? manifest.findDim(result->axes[0].dim)
          : nullptr;
  const DimInfo *frames =
      result && result->axes.size() == 2 && result->axes[1].isNamed()
          ? manifest.findDim(result->axes[1].dim)
          : nullptr;
  if (!result || result->dtype != DType::i32 || !batch ||
      batch->kind != DimInfo::Kind::batch || !frames ||
      frames->kind != DimInfo::Kind::seq)
    return fail("must return the alignment first, [B, T] i32 over a "
                "sequence dim (nn.viterbi_align's or "
                "nn.transducer_align's alignment)");
  stage.alignDim = frames->name;
  if (manifest.outputs.size() > 1) {
    const TensorInfo &score = manifest.outputs[1];
    if (score.axes.size() != 1 || score.axes[0].dim != batch->name ||
        (score.dtype != DType::f32 && score.dtype != DType::f64))
      return fail("may return the best path's score second, [B] float, "
                  "and nothing else");
  }
  for (const std::string &name : stage.readData)
    if (absl::Status status = requireArrays(stage, name, manifest);
        !status.ok())
      return status;
  // Every parameter comes from what the stage reads, but the prior.
  const Entity &source = entities.at(stage.readParameters);
  bool priorFound = stage.priorParameter.empty();
  for (const TensorInfo &mine : manifest.parameters) {
    if (mine.name == stage.priorParameter) {
      if (mine.dtype != DType::f32 || mine.axes.size() != 1)
        return fail("has the prior parameter '" + mine.name + "' as " +
                    describe(mine) + "; it must be [V] f32");
      stage.classes = mine.axes[0].size;
      priorFound = true;
      continue;
    }
    const TensorInfo *theirs = nullptr;
    for (const TensorInfo &info : *source.parameters)
      if (info.name == mine.name)
        theirs = &info;
    if (!theirs)
      return fail("reads parameter '" + mine.name + "', which '" +
                  stage.readParameters + "' (from " +
                  stages[source.producer].where + ") does not hold");
    if (theirs->dtype != mine.dtype ||
        staticShape(*theirs) != staticShape(mine))
      return fail("has parameter '" + mine.name + "' as " + describe(mine) +
                  ", but '" + stage.readParameters + "' holds " +
                  describe(*theirs));
  }
  if (!priorFound)
    return fail("has no parameter '" + stage.priorParameter +
                "' (the stage's prior.parameter)");
  for (size_t d = 0; d < stage.readData.size(); ++d) {
    const Entity &read = entities.at(stage.readData[d]);
    if (read.arrays.count(stage.array))
      return absl::InvalidArgumentError(
          file + ": " + stage.where + ": dataset '" + stage.readData[d] +
          "' already holds an array '" + stage.array +
          "' (choose another \"array\")");
    Entity &written = entities.at(stage.writeData[d]);
    written.arrays = read.arrays;
    written.arrays.insert(stage.array);
  }
  return absl::OkStatus();
}

/// The stage's settings and graph, and the fingerprints of what it reads.
uint64_t StagePipeline::Impl::fingerprintOfStage(const Stage &stage) const {
  // Unreadable (or not a regular file): compiling it reports why.
  absl::StatusOr<std::string> graph =
      readRegularFile(stage.graphPath, kMaxModelFileBytes);
  std::string reads;
  for (const std::string &name :
       {stage.readTrain, stage.readDev, stage.readInit, stage.readParameters})
    if (!name.empty())
      reads += name + "=" + hex(entities.at(name).fingerprint) + ";";
  for (const std::string &name : stage.readData)
    reads += name + "=" + hex(entities.at(name).fingerprint) + ";";
  return fingerprintOf({stage.spec, graph.ok() ? *graph : std::string(), reads,
                        std::to_string(seed)});
}

/// Whether an earlier run finished `stage` as it stands (its done.json
/// holds its fingerprint) and left its outputs; if so, what later stages
/// need to know of them comes from the outputs, and the stage is neither
/// compiled nor run. Its own checks passed when it ran: the same settings,
/// graph and inputs pass them again.
bool StagePipeline::Impl::adoptDoneStage(Stage &stage) {
  if (recordedFingerprint(doneMarker(stage.dir)) != hex(stage.fingerprint))
    return false;
  if (stage.kind == StageKind::train) {
    Entity &written = entities.at(stage.writeParameters);
    TrainState saved;
    if (!loadCheckpoint(written.parametersPath, saved).ok())
      return false;
    written.savedParameters.clear();
    for (const auto &[name, tensor] : saved.parameters) {
      TensorInfo info;
      info.name = name;
      info.dtype = tensor.dtype();
      for (int64_t size : tensor.shape())
        info.axes.push_back({"", size});
      written.savedParameters.push_back(std::move(info));
    }
    written.parameters = &written.savedParameters;
    return true;
  }
  for (size_t d = 0; d < stage.writeData.size(); ++d) {
    Entity &written = entities.at(stage.writeData[d]);
    if (!llvm::sys::fs::is_directory(written.paths.back()))
      return false;
    written.arrays = entities.at(stage.readData[d]).arrays;
    written.arrays.insert(stage.array);
  }
  return true;
}

absl::Status StagePipeline::Impl::openDirectories() {
  absl::StatusOr<std::unique_ptr<WorkDir>> opened =
      WorkDir::open(workDir, "work directory");
  if (!opened.ok())
    return withContext(opened.status(), file + ": ");
  work = std::move(*opened);
  // Overlays next to data outside the work directory are directories of
  // their own, with their own lists.
  for (const Stage &stage : stages)
    for (const std::string &name : stage.writeData) {
      const std::string &overlay = entities.at(name).paths.back();
      if (work->contains(overlay))
        continue;
      absl::StatusOr<std::unique_ptr<WorkDir>> own =
          WorkDir::open(overlay, "alignment overlay directory");
      if (!own.ok())
        return withContext(own.status(), file + ": " + stage.where + ": ");
      overlays[overlay] = std::move(*own);
    }
  return absl::OkStatus();
}

WorkDir &StagePipeline::Impl::ownerOf(const std::string &path) {
  for (auto &[root, owner] : overlays)
    if (path == root || owner->contains(path))
      return *owner;
  return *work;
}

absl::Status
StagePipeline::Impl::writeArrays(const std::string &path,
                                 const std::map<std::string, Tensor> &arrays) {
  if (absl::Status status = ownerOf(path).record(path); !status.ok())
    return status;
  // Through `path`.partial (which the list allows beside `path`).
  return writeNpz(path, arrays);
}

absl::Status StagePipeline::Impl::writeText(const std::string &path,
                                            const std::string &text) {
  if (absl::Status status = ownerOf(path).record(path); !status.ok())
    return status;
  return writeFileAtomically(path, text);
}

absl::Status StagePipeline::Impl::removeIfThere(const std::string &path) {
  if (!llvm::sys::fs::exists(path) && !llvm::sys::fs::exists(path + ".partial"))
    return absl::OkStatus();
  return ownerOf(path).remove(path);
}

absl::Status StagePipeline::prepare(const OutputOptions &output) {
  Impl &p = *impl;
  // Before anything is compiled: the directories stages write are
  // nn-train's own (training/WorkDir.h).
  if (absl::Status status = p.openDirectories(); !status.ok())
    return status;
  if (absl::Status status = p.prepareData(); !status.ok())
    return status;
  for (Stage &stage : p.stages) {
    stage.fingerprint = p.fingerprintOfStage(stage);
    for (auto &[name, entity] : p.entities)
      if (entity.producer >= 0 && &p.stages[entity.producer] == &stage)
        entity.fingerprint = fingerprintOf({hex(stage.fingerprint), name});
    stage.done = p.adoptDoneStage(stage);
    if (stage.done)
      continue;
    if (!output.json)
      llvm::errs() << "nn-train: compiling " << stage.where << ", "
                   << llvm::sys::path::filename(stage.graphPath) << "\n";
    absl::Status status = stage.kind == StageKind::train
                              ? p.prepareTrain(stage, output)
                              : p.prepareAlign(stage);
    if (!status.ok())
      return status;
  }
  p.prepared = true;
  return absl::OkStatus();
}

//===----------------------------------------------------------------------===//
// Running
//===----------------------------------------------------------------------===//

namespace {

/// The contents of a done.json or a checkpoint fingerprint file.
std::string fingerprintText(uint64_t fingerprint, const std::string &what) {
  return "{\"fingerprint\": \"" + hex(fingerprint) +
         "\", \"stage\": " + tools::jsonString(what) + "}\n";
}

void event(const OutputOptions &output, const std::string &stage,
           const std::string &what, const std::string &fields = "") {
  if (!output.json)
    return;
  llvm::outs() << "{\"stage\": " << tools::jsonString(stage)
               << ", \"event\": " << tools::jsonString(what) << fields << "}\n";
  llvm::outs().flush();
}

std::vector<std::pair<std::string, double>>
lossValues(const Manifest &manifest, const std::vector<LossValue> &losses) {
  std::vector<std::pair<std::string, double>> values;
  for (const LossValue &loss : losses)
    values.emplace_back(loss.name, lossValue(manifest, loss));
  return values;
}

} // namespace

absl::Status StagePipeline::Impl::synthesize(const DataDecl &decl,
                                             const OutputOptions &output) {
  const Entity &entity = entities.at(decl.name);
  std::string marker = decl.path + ".done.json";
  if (recordedFingerprint(marker) == hex(entity.fingerprint))
    return absl::OkStatus();
  if (!output.json)
    llvm::errs() << "nn-train: synthesizing data '" << decl.name << "' ("
                 << decl.utterances << " utterances of the segment task) in "
                 << decl.path << "\n";
  if (absl::Status status = work->createDirectory(decl.path); !status.ok())
    return status;
  std::vector<float> prototypes = decl.task.prototypes();
  std::mt19937 rng(decl.seed + 1);
  std::vector<UtteranceArrays> utterances;
  for (int64_t u = 0; u < decl.utterances; ++u)
    utterances.push_back(segmentArrays(
        decl.task, sampleSegmentUtterance(decl.task, prototypes, rng)));
  if (absl::Status status =
          writeArrays(decl.path + "/shard-00000.npz",
                      concatenateUtterances(utterances, 0, utterances.size()));
      !status.ok())
    return status;
  event(output, decl.name, "synthesized",
        ", \"utterances\": " + std::to_string(decl.utterances) +
            ", \"path\": " + tools::jsonString(decl.path));
  return writeText(marker,
                   fingerprintText(entity.fingerprint, "data." + decl.name));
}

absl::Status StagePipeline::Impl::runTrain(Stage &stage,
                                           const OutputOptions &output,
                                           StageReport &report,
                                           bool &finished) {
  Trainer &trainer = *stage.trainer;
  const Manifest &eval = trainer.evalManifest();
  // Checkpoints of a run with other settings or inputs are not resumed.
  std::string checkpoints = stage.dir + "/checkpoints";
  std::string stamp = checkpoints + "/fingerprint.json";
  bool resumable = recordedFingerprint(stamp) == hex(stage.fingerprint);
  bool hasCheckpoint = false;
  std::error_code ec;
  for (llvm::sys::fs::directory_iterator it(checkpoints, ec), end;
       it != end && !ec; it.increment(ec))
    hasCheckpoint |= llvm::StringRef(it->path()).ends_with(".npz");
  if (!resumable) {
    // What the stage wrote there before, and nothing else (WorkDir).
    if (absl::Status status = work->removeUnder(checkpoints); !status.ok())
      return status;
    hasCheckpoint = false;
  }
  if (absl::Status status = work->createDirectory(checkpoints); !status.ok())
    return status;
  if (absl::Status status =
          writeText(stamp, fingerprintText(stage.fingerprint, stage.name));
      !status.ok())
    return status;

  TrainOptions &options = trainer.mutableOptions();
  options.files = work.get();
  if (hasCheckpoint) {
    options.resume = checkpoints;
  } else if (!stage.readInit.empty()) {
    // Shared by name: the parameters this graph has (shapes were checked).
    const Entity &init = entities.at(stage.readInit);
    TrainState loaded;
    if (absl::Status status = loadCheckpoint(init.parametersPath, loaded);
        !status.ok())
      return status;
    int64_t shared = 0;
    for (const TensorInfo &info : eval.parameters) {
      auto found = loaded.parameters.find(info.name);
      if (found != loaded.parameters.end()) {
        options.initialParameters[info.name] = found->second;
        ++shared;
      }
    }
    if (!output.json)
      llvm::errs() << options.output.linePrefix << "starts from '"
                   << stage.readInit << "': " << shared << " of "
                   << eval.parameters.size() << " parameters shared, "
                   << eval.parameters.size() - shared << " new\n";
  }
  if (absl::Status status = trainer.run(finished); !status.ok())
    return withContext(status, stage.where + ": ");
  report.devAtStart = lossValues(eval, trainer.devAtStart());
  report.devAtEnd = lossValues(eval, trainer.devAtEnd());
  if (!finished)
    return absl::OkStatus();
  // The model's parameters, without optimizer state: what later stages
  // read.
  std::map<std::string, Tensor> parameters;
  for (const TensorInfo &info : eval.parameters)
    parameters[info.name] = trainer.state().parameters.at(info.name);
  const Entity &written = entities.at(stage.writeParameters);
  if (absl::Status status = writeArrays(written.parametersPath, parameters);
      !status.ok())
    return status;
  if (!output.json)
    llvm::errs() << options.output.linePrefix << "parameters '"
                 << stage.writeParameters << "' in " << written.parametersPath
                 << "\n";
  return absl::OkStatus();
}

/// One dataset aligned: per utterance of the dataset (those an nn.keep
/// left out are not there), its classes per frame, the best path's score
/// (NaN when the graph returns none), whether a path fits and where the
/// utterance is (shard, position); the dataset's shards with every
/// utterance they hold.
struct StagePipeline::Impl::Alignment {
  std::vector<std::vector<int32_t>> paths;
  std::vector<float> scores;
  std::vector<bool> feasible;
  std::vector<std::pair<int64_t, int64_t>> origins;
  std::vector<std::pair<std::string, int64_t>> shards;
  int64_t frames = 0, infeasible = 0;
  /// The first few utterances no path fits, for messages.
  std::vector<std::string> examples;
};

absl::Status
StagePipeline::Impl::align(Stage &stage, const std::string &dataName,
                           const std::map<std::string, Tensor> &parameters,
                           Alignment &out) {
  const Manifest &manifest = stage.alignGraph.manifest();
  absl::StatusOr<Dataset> dataset =
      Dataset::load(entities.at(dataName).paths, manifest);
  if (!dataset.ok())
    return withContext(dataset.status(), stage.where + ": ");
  out = Alignment();
  for (int64_t k = 0; k < dataset->shardCount(); ++k)
    out.shards.emplace_back(dataset->shardPath(k), dataset->shardUtterances(k));
  out.paths.assign(dataset->size(), {});
  out.scores.assign(dataset->size(), NAN);
  out.feasible.assign(dataset->size(), true);
  for (int64_t u = 0; u < dataset->size(); ++u)
    out.origins.push_back(dataset->origin(u));
  BatchingOptions batching;
  batching.maxSequences = stage.batchSize;
  batching.maxFrames = stage.maxFrames;
  batching.shuffle = false;
  for (const std::vector<int64_t> &members :
       epochBatches(*dataset, batching, 0)) {
    RunInputs inputs = dataset->batch(members);
    inputs.parameters = parameters;
    DimValues dims;
    if (absl::Status status = stage.alignGraph.validate(inputs, dims);
        !status.ok())
      return withContext(status, stage.where + ": ");
    RunResult result;
    if (absl::Status status = stage.alignGraph.run(inputs, result);
        !status.ok())
      return withContext(status, stage.where + ": ");
    const Tensor &alignment = result.outputs.at(0).second;
    const std::vector<int32_t> &lengths = dims.lengths.at(stage.alignDim);
    int64_t time = alignment.shape()[1];
    for (size_t b = 0; b < members.size(); ++b) {
      int64_t u = members[b];
      const int32_t *row = alignment.data<int32_t>() + b * time;
      std::vector<int32_t> &path = out.paths[u];
      path.assign(row, row + lengths[b]);
      if (result.outputs.size() > 1)
        out.scores[u] = (float)result.outputs[1].second.at((int64_t)b);
      // An infeasible sequence's frames are all -1 and its score -inf
      // (which alone tells one without frames).
      out.feasible[u] = std::none_of(path.begin(), path.end(),
                                     [](int32_t c) { return c < 0; }) &&
                        !(std::isinf(out.scores[u]) && out.scores[u] < 0);
      if (out.feasible[u]) {
        out.frames += lengths[b];
        continue;
      }
      if (++out.infeasible <= 5) {
        auto [shard, index] = out.origins[u];
        out.examples.push_back("utterance " + std::to_string(index) + " of '" +
                               dataset->shardPath(shard) + "' (" +
                               std::to_string(lengths[b]) + " frames)");
      }
    }
  }
  if (out.infeasible && !stage.skipInfeasible) {
    std::string list;
    for (const std::string &what : out.examples)
      list += (list.empty() ? "" : "; ") + what;
    return absl::InvalidArgumentError(
        stage.where + ": no alignment path fits " +
        std::to_string(out.infeasible) + " utterances of '" + dataName +
        "' (too few frames for their labels): " + list +
        (out.infeasible > 5 ? "; ..." : "") +
        ". Fix the data, or set \"infeasible\": \"skip\" to leave them out "
        "of what the stage writes");
  }
  return absl::OkStatus();
}

absl::Status StagePipeline::Impl::runAlign(Stage &stage,
                                           const OutputOptions &output,
                                           StageReport &report) {
  const Manifest &manifest = stage.alignGraph.manifest();
  const Entity &source = entities.at(stage.readParameters);
  TrainState loaded;
  if (absl::Status status = loadCheckpoint(source.parametersPath, loaded);
      !status.ok())
    return status;
  std::map<std::string, Tensor> parameters;
  for (const TensorInfo &info : manifest.parameters)
    if (info.name != stage.priorParameter)
      parameters[info.name] = loaded.parameters.at(info.name);
  std::string prefix = "[" + stage.name + "] ";

  if (!stage.priorParameter.empty()) {
    // The prior: how often each class is on the best paths of the first
    // dataset, without a prior (add-one smoothed). Aligning with
    // scale x log p(class) subtracted spreads labels over more of their
    // frames (docs/sequence-training.md).
    parameters[stage.priorParameter] = Tensor(DType::f32, {stage.classes});
    Alignment unscaled;
    if (absl::Status status =
            align(stage, stage.readData.front(), parameters, unscaled);
        !status.ok())
      return status;
    std::vector<double> counts(stage.classes, 1.0);
    for (size_t u = 0; u < unscaled.paths.size(); ++u)
      for (int32_t c : unscaled.paths[u])
        if (unscaled.feasible[u] && c >= 0 && c < stage.classes)
          counts[c] += 1;
    double total = (double)unscaled.frames + (double)stage.classes;
    Tensor &prior = parameters[stage.priorParameter];
    report.logPrior.clear();
    std::string text;
    for (int64_t c = 0; c < stage.classes; ++c) {
      double logPrior = std::log(counts[c] / total);
      report.logPrior.push_back(logPrior);
      prior.data<float>()[c] = (float)(stage.priorScale * logPrior);
      char value[32];
      std::snprintf(value, sizeof(value), "%s%.3f", c ? " " : "",
                    counts[c] / total);
      text += value;
    }
    if (absl::Status status = writeArrays(stage.dir + "/prior.npz",
                                          {{stage.priorParameter, prior}});
        !status.ok())
      return status;
    if (!output.json)
      llvm::errs() << prefix << "prior of '" << stage.readData.front()
                   << "' (class frequencies on its best paths): " << text
                   << "; scale " << llvm::format("%g", stage.priorScale)
                   << "\n";
  }

  for (size_t d = 0; d < stage.readData.size(); ++d) {
    auto start = std::chrono::steady_clock::now();
    Alignment aligned;
    if (absl::Status status =
            align(stage, stage.readData[d], parameters, aligned);
        !status.ok())
      return status;
    const Entity &written = entities.at(stage.writeData[d]);
    const std::string &overlay = written.paths.back();
    // The overlay holds this alignment's shards alone: what an earlier
    // run wrote there goes first (a dataset with fewer shards now).
    if (absl::Status status = ownerOf(overlay).removeUnder(overlay);
        !status.ok())
      return status;
    // One overlay shard per shard of the data, named like it, with every
    // utterance the shard holds: those left out (no path now, or an
    // nn.keep before) get no frames and nn.keep 0.
    std::vector<std::vector<UtteranceArrays>> shardUtterances;
    for (const auto &[path, count] : aligned.shards) {
      UtteranceArrays leftOut;
      leftOut[stage.array] = Tensor(DType::i32, {0});
      leftOut[stage.array + ".score"] =
          Tensor::of<float>(DType::f32, {}, {NAN});
      leftOut[kKeepArray] = Tensor::of<int32_t>(DType::i32, {}, {0});
      shardUtterances.emplace_back(count, leftOut);
    }
    int64_t kept = 0;
    for (size_t u = 0; u < aligned.paths.size(); ++u) {
      if (!aligned.feasible[u])
        continue;
      auto [shard, index] = aligned.origins[u];
      UtteranceArrays &arrays = shardUtterances[shard][index];
      arrays[stage.array] = Tensor::of<int32_t>(
          DType::i32, {(int64_t)aligned.paths[u].size()}, aligned.paths[u]);
      arrays[stage.array + ".score"] =
          Tensor::of<float>(DType::f32, {}, {aligned.scores[u]});
      arrays[kKeepArray] = Tensor::of<int32_t>(DType::i32, {}, {1});
      ++kept;
    }
    for (size_t k = 0; k < aligned.shards.size(); ++k) {
      const std::vector<UtteranceArrays> &utterances = shardUtterances[k];
      std::string path =
          overlay + "/" +
          llvm::sys::path::filename(aligned.shards[k].first).str();
      if (absl::Status status = writeArrays(
              path, concatenateUtterances(utterances, 0, utterances.size()));
          !status.ok())
        return status;
    }
    report.aligned.push_back({stage.readData[d], stage.writeData[d], overlay,
                              kept, aligned.frames, aligned.infeasible});
    double seconds =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start)
            .count();
    if (!output.json) {
      llvm::errs() << prefix << "aligned '" << stage.readData[d] << "' ("
                   << kept << " utterances, " << aligned.frames << " frames, "
                   << llvm::format("%.0f",
                                   aligned.frames / std::max(seconds, 1e-9))
                   << " frames/s): '" << stage.writeData[d] << "' in "
                   << overlay << "\n";
      if (aligned.infeasible) {
        std::string list;
        for (const std::string &what : aligned.examples)
          list += (list.empty() ? "" : "; ") + what;
        llvm::errs() << prefix << aligned.infeasible
                     << " utterances no path fits left out: " << list
                     << (aligned.infeasible > 5 ? "; ..." : "") << "\n";
      }
    }
    event(output, stage.name, "aligned",
          ", \"data\": " + tools::jsonString(stage.readData[d]) +
              ", \"writes\": " + tools::jsonString(stage.writeData[d]) +
              ", \"utterances\": " + std::to_string(kept) +
              ", \"left_out\": " + std::to_string(aligned.infeasible) +
              ", \"frames\": " + std::to_string(aligned.frames) +
              ", \"path\": " + tools::jsonString(overlay));
  }
  return absl::OkStatus();
}

absl::Status StagePipeline::run(const OutputOptions &output, bool &finished) {
  Impl &p = *impl;
  finished = false;
  if (!p.prepared)
    if (absl::Status status = prepare(output); !status.ok())
      return status;
  for (const DataDecl &decl : p.data)
    if (decl.synthesize)
      if (absl::Status status = p.synthesize(decl, output); !status.ok())
        return status;
  p.reports.clear();
  size_t ran = 0;
  for (size_t i = 0; i < p.stages.size(); ++i) {
    Stage &stage = p.stages[i];
    StageReport report;
    report.name = stage.name;
    report.kind = stage.kind == StageKind::train ? "train" : "align";
    std::string marker = p.doneMarker(stage.dir);
    std::string position =
        std::to_string(i + 1) + "/" + std::to_string(p.stages.size());
    if (stage.done) {
      report.skipped = true;
      if (!output.json)
        llvm::errs() << "nn-train: stage " << position << " '" << stage.name
                     << "' (" << report.kind
                     << "): done in an earlier run, skipped\n";
      event(output, stage.name, "skipped");
      p.reports.push_back(std::move(report));
      continue;
    }
    // A stale marker (other settings or inputs) goes before the stage
    // runs again.
    if (absl::Status status = p.removeIfThere(marker); !status.ok())
      return status;
    if (!output.json) {
      llvm::errs() << "nn-train: stage " << position << " '" << stage.name
                   << "' (" << report.kind << ", "
                   << llvm::sys::path::filename(stage.graphPath) << ")";
      if (stage.kind == StageKind::train) {
        llvm::errs() << ": losses";
        for (const TrainedLoss &loss : stage.losses)
          llvm::errs() << " " << loss.name;
        llvm::errs() << ", "
                     << (stage.steps ? std::to_string(stage.steps) + " steps"
                                     : std::to_string(stage.epochs) + " epochs")
                     << " on '" << stage.readTrain << "'"
                     << (stage.readDev.empty()
                             ? std::string()
                             : ", dev '" + stage.readDev + "'")
                     << (stage.readInit.empty()
                             ? std::string()
                             : ", from '" + stage.readInit + "'");
      } else {
        llvm::errs() << ": " << stage.readData.size() << " datasets with '"
                     << stage.readParameters << "'";
      }
      llvm::errs() << "\n";
    }
    event(output, stage.name, "start",
          ", \"index\": " + std::to_string(i + 1) +
              ", \"of\": " + std::to_string(p.stages.size()) +
              ", \"kind\": " + tools::jsonString(report.kind));
    if (absl::Status status = p.work->createDirectory(stage.dir); !status.ok())
      return status;
    bool stageFinished = true;
    absl::Status status = stage.kind == StageKind::train
                              ? p.runTrain(stage, output, report, stageFinished)
                              : p.runAlign(stage, output, report);
    if (!status.ok())
      return status;
    p.reports.push_back(std::move(report));
    if (!stageFinished) {
      llvm::errs() << "nn-train: stage '" << stage.name
                   << "' interrupted after step "
                   << stage.trainer->state().batches << "; checkpoint in "
                   << stage.trainer->checkpointDir() << "\n";
      return absl::OkStatus();
    }
    if (absl::Status status =
            p.writeText(marker, fingerprintText(stage.fingerprint, stage.name));
        !status.ok())
      return status;
    event(output, stage.name, "done");
    ++ran;
  }
  if (!output.json)
    llvm::errs() << "nn-train: all " << p.stages.size() << " stages done ("
                 << ran << " ran, " << p.stages.size() - ran
                 << " done before); outputs in " << p.workDir << "\n";
  finished = true;
  return absl::OkStatus();
}
