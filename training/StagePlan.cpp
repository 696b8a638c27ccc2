//===- StagePlan.cpp - preparing a stage file's stages --------------------===//
//
// Everything before a stage runs: each stage's fingerprint (its settings,
// graph and inputs) and whether an earlier run left it done, the
// directories stages write, and compiling the graphs of the stages left to
// run with every check of what stages hand each other. StageRun.cpp runs
// what this prepared.
//
//===----------------------------------------------------------------------===//

#include "training/StagesImpl.h"

#include "nn/DataParallel.h"
#include "nn/File.h"
#include "nn/Npy.h"
#include "support/JsonLine.h"

#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/JSON.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/raw_ostream.h"

using namespace nn;
using namespace nn::training;
namespace json = llvm::json;

//===----------------------------------------------------------------------===//
// Fingerprints
//===----------------------------------------------------------------------===//

uint64_t nn::training::fingerprintOf(std::initializer_list<std::string> parts) {
  std::string all;
  for (const std::string &part : parts) {
    all += part;
    all.push_back('\0');
  }
  return Manifest::hash(all);
}

std::string nn::training::hex(uint64_t value) {
  return llvm::utohexstr(value, true, 16);
}

namespace {

/// The most a done.json or fingerprint file is read of (nn-train writes
/// one short line).
constexpr uint64_t kMaxRecordBytes = 1 << 20;

} // namespace

std::string nn::training::recordedFingerprint(const std::string &path) {
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

//===----------------------------------------------------------------------===//
// The pipeline
//===----------------------------------------------------------------------===//

StagePipeline::StagePipeline(std::unique_ptr<Impl> impl)
    : impl(std::move(impl)) {}
StagePipeline::~StagePipeline() = default;

const std::string &StagePipeline::workDir() const { return impl->workDir; }
const std::vector<StageReport> &StagePipeline::reports() const {
  return impl->reports;
}

absl::StatusOr<std::unique_ptr<StagePipeline>>
StagePipeline::load(const std::string &path, const std::string &workDir,
                    Communicator *communicator) {
  absl::StatusOr<StageFile> read = StageFile::read(path, workDir);
  if (!read.ok())
    return read.status();
  auto impl = std::make_unique<Impl>();
  impl->file = read->file;
  impl->baseDir = read->baseDir;
  impl->workDir = read->workDir;
  impl->seed = read->seed;
  if (communicator && communicator->size() > 1)
    impl->communicator = communicator;
  impl->data = std::move(read->data);
  impl->entities = std::move(read->entities);
  for (StageSpec &spec : read->stages)
    impl->stages.emplace_back(std::move(spec));
  return std::unique_ptr<StagePipeline>(new StagePipeline(std::move(impl)));
}

//===----------------------------------------------------------------------===//
// Preparing: compile and check what stages hand each other
//===----------------------------------------------------------------------===//

namespace {

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

} // namespace

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
    // Batches compute the chunk weights (Dataset::batch).
    if (isTrainStepScalar(input.name) || input.name == kChunkWeightsInput ||
        entity.arrays.count(input.name))
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
  options.compile.optimize = stage.optimize;
  options.compile.codegen = stage.codegen;
  options.compile.cpu = stage.cpu;
  options.compile.optimizer = stage.optimizer;
  options.compile.trainedLosses = stage.losses;
  options.data.train = entities.at(stage.readTrain).paths;
  if (!stage.readDev.empty())
    options.data.dev = entities.at(stage.readDev).paths;
  options.data.batchSize = stage.batchSize;
  options.data.maxFrames = stage.maxFrames;
  options.data.bucket = stage.bucket;
  options.data.shuffle = stage.shuffle;
  options.data.chunking = stage.chunking;
  options.steps = stage.steps;
  options.epochs = stage.epochs;
  options.seed = stage.seed;
  options.schedule = stage.schedule;
  options.onNonFinite = stage.onNonFinite;
  options.saveDir = stage.dir + "/checkpoints";
  options.keep = 2;
  options.evaluateAtStart = !stage.readInit.empty() && !stage.readDev.empty();
  options.output = output;
  options.output.jsonFields = support::JsonObject().add("stage", stage.name);
  options.output.linePrefix = "[" + stage.name + "] ";
  options.output.jsonEvents = true;
  options.communicator = communicator;
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
  // The chunking against the graph's inputs, on a dataset without
  // utterances: the checks that loading the data would make later.
  if (stage.chunking.enabled()) {
    absl::StatusOr<Dataset> empty = Dataset::forModel(train);
    absl::Status status =
        empty.ok() ? empty->chunked(stage.chunking).status() : empty.status();
    if (!status.ok())
      return absl::InvalidArgumentError(file + ": " + stage.where + ": " +
                                        std::string(status.message()));
  }
  if (absl::Status status =
          checkNewbob(stage.schedule, eval, !stage.readDev.empty());
      !status.ok())
    return absl::InvalidArgumentError(file + ": " + stage.where +
                                      ": lr: " + std::string(status.message()));
  // Parameters shared by name have one shape; with copy_param_mode
  // "subset", one that grew (no size smaller) is fine too.
  if (!stage.readInit.empty()) {
    const Entity &init = entities.at(stage.readInit);
    for (const TensorInfo &mine : eval.parameters)
      for (const TensorInfo &theirs : *init.parameters) {
        if (mine.name != theirs.name)
          continue;
        std::vector<int64_t> to = staticShape(mine), from = staticShape(theirs);
        if (mine.dtype == theirs.dtype &&
            (to == from || (stage.growInit && growsInto(from, to))))
          continue;
        return absl::InvalidArgumentError(
            file + ": " + stage.where + ": parameter '" + mine.name + "' is " +
            describe(mine) + " in graph @" + eval.graph + ", but " +
            describe(theirs) + " in '" + stage.readInit + "' (from " +
            stages[init.producer].where + ")" +
            (stage.growInit ? "; copy_param_mode \"subset\" only grows "
                              "sizes (the same dtype and rank, no size "
                              "smaller)"
                            : ""));
      }
  }
  Entity &written = entities.at(stage.writeParameters);
  written.parameters = &eval.parameters;
  return absl::OkStatus();
}

absl::Status StagePipeline::Impl::compileGraph(Stage &stage) {
  CompileOptions options;
  options.entry = stage.entry;
  options.codegen = stage.codegen;
  options.cpu = stage.cpu;
  absl::StatusOr<Artifact> compiled = compileFile(stage.graphPath, options);
  if (!compiled.ok())
    return withContext(compiled.status(), file + ": " + stage.where + ": ");
  stage.artifact = std::make_unique<Artifact>(std::move(*compiled));
  return Executable::load(stage.artifact->path(), stage.graph);
}

absl::Status
StagePipeline::Impl::requireParameters(const Stage &stage,
                                       const std::string &except) const {
  const Manifest &manifest = stage.graph.manifest();
  const Entity &source = entities.at(stage.readParameters);
  for (const TensorInfo &mine : manifest.parameters) {
    if (mine.name == except)
      continue;
    const TensorInfo *theirs = nullptr;
    for (const TensorInfo &info : *source.parameters)
      if (info.name == mine.name)
        theirs = &info;
    auto fail = [&](const std::string &why) {
      return absl::InvalidArgumentError(
          file + ": " + stage.where + ": graph @" + manifest.graph + " " + why);
    };
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
  return absl::OkStatus();
}

absl::Status StagePipeline::Impl::prepareAlign(Stage &stage) {
  if (absl::Status status = compileGraph(stage); !status.ok())
    return status;
  const Manifest &manifest = stage.graph.manifest();
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
  // The graph's own results: a computed alignment dim (an RNN-T path's)
  // adds its lengths after them.
  std::vector<const TensorInfo *> results;
  for (const TensorInfo &output : manifest.outputs)
    if (llvm::StringRef(output.name).starts_with("result"))
      results.push_back(&output);
  stage.alignScored = results.size() > 1;
  if (results.size() > 1) {
    const TensorInfo &score = *results[1];
    if (score.axes.size() != 1 || score.axes[0].dim != batch->name ||
        (score.dtype != DType::f32 && score.dtype != DType::f64))
      return fail("may return the best path's score second, [B] float, "
                  "and nothing else");
    if (results.size() > 2)
      return fail("may return the best path's score second, [B] float, "
                  "and nothing else");
  }
  for (const std::string &name : stage.readData)
    if (absl::Status status = requireArrays(stage, name, manifest);
        !status.ok())
      return status;
  // Every parameter comes from what the stage reads, but the prior.
  if (absl::Status status = requireParameters(stage, stage.priorParameter);
      !status.ok())
    return status;
  bool priorFound = stage.priorParameter.empty();
  for (const TensorInfo &mine : manifest.parameters) {
    if (mine.name != stage.priorParameter)
      continue;
    if (mine.dtype != DType::f32 || mine.axes.size() != 1)
      return fail("has the prior parameter '" + mine.name + "' as " +
                  describe(mine) + "; it must be [V] f32");
    stage.classes = mine.axes[0].size;
    priorFound = true;
  }
  if (!priorFound)
    return fail("has no parameter '" + stage.priorParameter +
                "' (the stage's prior.parameter)");
  return addWrittenArray(stage);
}

/// Each dataset an align or decode stage writes holds what it reads and
/// the stage's array, which the dataset read must not hold already.
absl::Status StagePipeline::Impl::addWrittenArray(Stage &stage) {
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

absl::Status StagePipeline::Impl::prepareDecode(Stage &stage) {
  if (absl::Status status = compileGraph(stage); !status.ok())
    return status;
  const Manifest &manifest = stage.graph.manifest();
  absl::StatusOr<HypothesisLayout> layout = hypothesisLayout(manifest);
  if (!layout.ok())
    return withContext(layout.status(), file + ": " + stage.where + ": ");
  stage.hypotheses = std::move(*layout);
  for (const std::string &name : stage.readData)
    if (absl::Status status = requireArrays(stage, name, manifest);
        !status.ok())
      return status;
  // Every parameter comes from what the stage reads.
  if (absl::Status status = requireParameters(stage, ""); !status.ok())
    return status;
  // The references: "ref" names an array every dataset holds; by default
  // "labels" scores the datasets that hold it.
  if (stage.referenceGiven)
    for (const std::string &name : stage.readData) {
      const std::set<std::string> &arrays = entities.at(name).arrays;
      if (arrays.count(stage.reference))
        continue;
      std::string list;
      for (const std::string &array : arrays)
        list += (list.empty() ? "" : ", ") + array;
      return absl::InvalidArgumentError(
          file + ": " + stage.where + ".ref: dataset '" + name +
          "' holds no array '" + stage.reference + "' (it holds " + list + ")");
    }
  if (!stage.vocabularyPath.empty()) {
    absl::StatusOr<Vocabulary> vocabulary =
        Vocabulary::load(stage.vocabularyPath);
    if (!vocabulary.ok())
      return withContext(vocabulary.status(),
                         file + ": " + stage.where + ".vocab: ");
    stage.vocabulary = std::move(*vocabulary);
  }
  return addWrittenArray(stage);
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
  // The vocabulary's tokens, not its path, decide the words.
  if (!stage.vocabularyPath.empty()) {
    absl::StatusOr<std::string> vocabulary =
        readRegularFile(stage.vocabularyPath, kMaxVocabularyFileBytes);
    reads += "vocab=" + (vocabulary.ok() ? *vocabulary : std::string()) + ";";
  }
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
  if (stage.kind == StageKind::decode) {
    if (!llvm::sys::fs::is_regular_file(errorRateFile(stage)))
      return false;
    for (const std::string &name : stage.readData)
      if (!llvm::sys::fs::is_regular_file(hypothesesFile(stage, name)))
        return false;
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
          WorkDir::open(overlay, stage.kind == StageKind::decode
                                     ? "hypothesis overlay directory"
                                     : "alignment overlay directory");
      if (!own.ok())
        return withContext(own.status(), file + ": " + stage.where + ": ");
      overlays[overlay] = std::move(*own);
    }
  return absl::OkStatus();
}

absl::Status StagePipeline::Impl::checkRanksAgree() {
  if (!communicator)
    return absl::OkStatus();
  // What this rank found: every stage's fingerprint (its settings, graph
  // and inputs, the data's files among them) and whether it is done.
  std::string found;
  for (const Stage &stage : stages)
    found += hex(stage.fingerprint) + (stage.done ? " done\n" : "\n");
  absl::StatusOr<std::vector<std::string>> all =
      allGather(*communicator, found);
  if (!all.ok())
    return all.status();
  for (size_t r = 1; r < all->size(); ++r) {
    if ((*all)[r] == all->front())
      continue;
    // The first stage it sees otherwise (a line per stage).
    llvm::SmallVector<llvm::StringRef> mine, first;
    llvm::StringRef((*all)[r]).split(mine, '\n');
    llvm::StringRef(all->front()).split(first, '\n');
    size_t s = 0;
    while (s < stages.size() && s < mine.size() && s < first.size() &&
           mine[s] == first[s])
      ++s;
    std::string where = s < stages.size() ? stages[s].where : "the stages";
    return absl::FailedPreconditionError(
        file + ": rank " + std::to_string(r) + " of " +
        std::to_string(all->size()) + " finds other inputs for " + where +
        " than rank 0, or finds it done where rank 0 does not: every rank "
        "must see the same stage file, data and work directory '" +
        workDir + "' (one machine, or a shared filesystem)");
  }
  return absl::OkStatus();
}

absl::Status StagePipeline::prepare(const OutputOptions &given) {
  Impl &p = *impl;
  const OutputOptions output = p.shown(given);
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
  }
  if (absl::Status status = p.checkRanksAgree(); !status.ok())
    return status;
  for (Stage &stage : p.stages) {
    if (stage.done)
      continue;
    if (!output.json)
      p.log() << "nn-train: compiling " << stage.where << ", "
              << llvm::sys::path::filename(stage.graphPath) << "\n";
    absl::Status status =
        stage.kind == StageKind::train   ? p.prepareTrain(stage, output)
        : stage.kind == StageKind::align ? p.prepareAlign(stage)
                                         : p.prepareDecode(stage);
    if (!status.ok())
      return status;
  }
  p.prepared = true;
  return absl::OkStatus();
}
