//===- Stages.cpp - multi-stage training from a stage file ----------------===//
//
// Three parts: reading the file (keys, types, names, reads and writes in
// order), preparing (compiling every graph and checking what stages hand
// each other), and running (synthesizing declared data, then each stage
// unless its done.json matches its fingerprint).
//
//===----------------------------------------------------------------------===//

#include "training/Stages.h"

#include "nn/Npy.h"
#include "tools/common/Json.h"

#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Format.h"
#include "llvm/Support/JSON.h"
#include "llvm/Support/MemoryBuffer.h"
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

//===----------------------------------------------------------------------===//
// What a stage file declares
//===----------------------------------------------------------------------===//

/// A dataset named under "data": on disk, or synthesized into the work
/// directory on the first run.
struct DataDecl {
  std::string name;
  std::string path;
  bool synthesize = false;
  SegmentTask task;
  int64_t utterances = 0;
  uint32_t seed = 0;
  /// The declaration as canonical JSON (part of fingerprints).
  std::string spec;
};

enum class StageKind { train, align };

struct Stage {
  std::string name, where;
  StageKind kind = StageKind::train;
  std::string graphPath, entry;
  /// The stage's object as canonical JSON (part of its fingerprint).
  std::string spec;
  unsigned batchSize = 16, maxFrames = 0;

  // Train stages.
  std::vector<TrainedLoss> losses;
  int64_t epochs = 0, steps = 0;
  bool bucket = true, shuffle = true, pack = true;
  OptimizerOptions optimizer;
  LearningRateSchedule schedule;
  uint64_t seed = 0;
  std::string onNonFinite = "stop";
  std::string readTrain, readDev, readInit, writeParameters;

  // Align stages.
  std::string readParameters;
  std::vector<std::string> readData, writeData;
  std::string array = "alignment";
  std::string priorParameter;
  double priorScale = 0;
  /// Utterances no path fits: an error, or left out of the written
  /// dataset (its nn.keep says 0).
  bool skipInfeasible = false;

  // Prepared.
  std::string dir;
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

/// A name stages pass: a dataset or a set of parameters.
struct Entity {
  enum class Kind { dataset, parameters } kind = Kind::dataset;
  /// The stage that writes it; -1 for data declared under "data".
  int producer = -1;
  /// Datasets: the files (the dataset, then its overlays).
  std::vector<std::string> paths;
  /// Datasets: the arrays each utterance will have (known in prepare()).
  std::set<std::string> arrays;
  /// Parameters: the file the producer writes and the producer's model
  /// parameters (its evaluation graph's).
  std::string parametersPath;
  const std::vector<TensorInfo> *parameters = nullptr;
  /// What `parameters` points to when the producer was done before (read
  /// from its parameters file, not compiled).
  std::vector<TensorInfo> savedParameters;
  uint64_t fingerprint = 0;
};

const char *kindName(Entity::Kind kind) {
  return kind == Entity::Kind::dataset ? "a dataset" : "parameters";
}

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

std::string canonical(const json::Value &value) {
  std::string text;
  llvm::raw_string_ostream stream(text);
  stream << value;
  return text;
}

//===----------------------------------------------------------------------===//
// Reading the file
//===----------------------------------------------------------------------===//

/// Typed access to a JSON object with errors naming the file and key.
class ObjectReader {
public:
  ObjectReader(const std::string &file, std::string where,
               const json::Object &object)
      : file(file), where(std::move(where)), object(object) {}

  absl::Status error(const std::string &key, const std::string &why) const {
    std::string at = where;
    if (!key.empty())
      at += (at.empty() ? "" : ".") + key;
    return absl::InvalidArgumentError(file + ": " + at + ": " + why);
  }

  /// Every key is one of `allowed`.
  absl::Status onlyKeys(std::initializer_list<llvm::StringRef> allowed) const {
    for (const auto &entry : object) {
      llvm::StringRef key = entry.first;
      if (llvm::is_contained(allowed, key))
        continue;
      std::string closest;
      unsigned best = 3;
      for (llvm::StringRef candidate : allowed) {
        unsigned distance = key.edit_distance(candidate);
        if (distance < best) {
          best = distance;
          closest = candidate.str();
        }
      }
      std::string list;
      for (llvm::StringRef candidate : allowed)
        list += (list.empty() ? "" : ", ") + candidate.str();
      return error(key.str(), "unknown key" +
                                  (closest.empty()
                                       ? std::string()
                                       : " (did you mean '" + closest + "'?)") +
                                  "; expected " + list);
    }
    return absl::OkStatus();
  }

  bool has(llvm::StringRef key) const { return object.get(key) != nullptr; }

  absl::Status string(llvm::StringRef key, std::string &value,
                      bool required = false) const {
    const json::Value *found = object.get(key);
    if (!found)
      return required ? error(key.str(), "missing") : absl::OkStatus();
    std::optional<llvm::StringRef> text = found->getAsString();
    if (!text || text->empty())
      return error(key.str(), "must be a non-empty string");
    value = text->str();
    return absl::OkStatus();
  }

  absl::Status integer(llvm::StringRef key, int64_t &value, int64_t minimum,
                       bool required = false) const {
    const json::Value *found = object.get(key);
    if (!found)
      return required ? error(key.str(), "missing") : absl::OkStatus();
    std::optional<int64_t> number = found->getAsInteger();
    if (!number || *number < minimum)
      return error(key.str(),
                   "must be an integer >= " + std::to_string(minimum));
    value = *number;
    return absl::OkStatus();
  }

  absl::Status unsignedInt(llvm::StringRef key, unsigned &value,
                           int64_t minimum) const {
    int64_t wide = value;
    if (absl::Status status = integer(key, wide, minimum); !status.ok())
      return status;
    if (wide > std::numeric_limits<int32_t>::max())
      return error(key.str(), "is too large");
    value = (unsigned)wide;
    return absl::OkStatus();
  }

  absl::Status number(llvm::StringRef key, double &value) const {
    const json::Value *found = object.get(key);
    if (!found)
      return absl::OkStatus();
    std::optional<double> parsed = found->getAsNumber();
    if (!parsed || !std::isfinite(*parsed))
      return error(key.str(), "must be a finite number");
    value = *parsed;
    return absl::OkStatus();
  }

  absl::Status boolean(llvm::StringRef key, bool &value) const {
    const json::Value *found = object.get(key);
    if (!found)
      return absl::OkStatus();
    std::optional<bool> parsed = found->getAsBoolean();
    if (!parsed)
      return error(key.str(), "must be true or false");
    value = *parsed;
    return absl::OkStatus();
  }

  /// The object under `key` (null, and OK, when absent).
  absl::Status child(llvm::StringRef key, const json::Object *&value,
                     bool required = false) const {
    value = nullptr;
    const json::Value *found = object.get(key);
    if (!found)
      return required ? error(key.str(), "missing") : absl::OkStatus();
    value = found->getAsObject();
    if (!value)
      return error(key.str(), "must be an object");
    return absl::OkStatus();
  }

  /// A list of non-empty strings.
  absl::Status strings(llvm::StringRef key, std::vector<std::string> &value,
                       bool required = false) const {
    const json::Value *found = object.get(key);
    if (!found)
      return required ? error(key.str(), "missing") : absl::OkStatus();
    const json::Array *list = found->getAsArray();
    if (!list || list->empty())
      return error(key.str(), "must be a non-empty list of names");
    value.clear();
    for (const json::Value &item : *list) {
      std::optional<llvm::StringRef> text = item.getAsString();
      if (!text || text->empty())
        return error(key.str(), "must be a non-empty list of names");
      value.push_back(text->str());
    }
    return absl::OkStatus();
  }

  std::string at(llvm::StringRef key) const {
    return where.empty() ? key.str() : where + "." + key.str();
  }

  const std::string &file;
  std::string where;
  const json::Object &object;
};

/// The fingerprint a done.json (or a fingerprint file) records, or "".
std::string recordedFingerprint(const std::string &path) {
  auto buffer = llvm::MemoryBuffer::getFile(path);
  if (!buffer)
    return "";
  llvm::Expected<json::Value> value = json::parse((*buffer)->getBuffer());
  if (!value) {
    llvm::consumeError(value.takeError());
    return "";
  }
  const json::Object *object = value->getAsObject();
  std::optional<llvm::StringRef> found =
      object ? object->getString("fingerprint") : std::nullopt;
  return found ? found->str() : "";
}

/// A name things are known by: letters, digits, '_', '-' and '.', so that
/// it can name a directory.
bool validName(const std::string &name) {
  if (name.empty() || name == "." || name == ".." || name == "data")
    return false;
  for (char c : name)
    if (!llvm::isAlnum(c) && c != '_' && c != '-' && c != '.')
      return false;
  return true;
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

  absl::Status parse(const json::Value &root);
  absl::Status parseData(const ObjectReader &top);
  absl::Status parseStage(const json::Object &object, size_t index);
  absl::Status parseTrainStage(const ObjectReader &reader, Stage &stage);
  absl::Status parseAlignStage(const ObjectReader &reader, Stage &stage);
  absl::Status resolveNames();

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

  std::string resolve(const std::string &path) const {
    if (llvm::sys::path::is_absolute(path))
      return path;
    llvm::SmallString<256> joined(baseDir);
    llvm::sys::path::append(joined, path);
    return joined.str().str();
  }
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
  auto buffer = llvm::MemoryBuffer::getFile(path);
  if (!buffer)
    return absl::NotFoundError("cannot read stage file '" + path +
                               "': " + buffer.getError().message());
  llvm::Expected<json::Value> root = json::parse((*buffer)->getBuffer());
  if (!root)
    return absl::InvalidArgumentError(
        path + ": not valid JSON: " + llvm::toString(root.takeError()));
  auto impl = std::make_unique<Impl>();
  impl->file = path;
  llvm::SmallString<256> dir(path);
  llvm::sys::path::remove_filename(dir);
  impl->baseDir = dir.empty() ? "." : dir.str().str();
  impl->workDir = workDir;
  if (absl::Status status = impl->parse(*root); !status.ok())
    return status;
  return std::unique_ptr<StagePipeline>(new StagePipeline(std::move(impl)));
}

absl::Status StagePipeline::Impl::parse(const json::Value &root) {
  const json::Object *object = root.getAsObject();
  if (!object)
    return absl::InvalidArgumentError(
        file + ": the stage file must be a JSON object with \"stages\"");
  ObjectReader top(file, "", *object);
  if (absl::Status status =
          top.onlyKeys({"description", "seed", "work_dir", "data", "stages"});
      !status.ok())
    return status;
  int64_t topSeed = 0;
  if (absl::Status status = top.integer("seed", topSeed, 0); !status.ok())
    return status;
  seed = (uint64_t)topSeed;
  std::string work;
  if (absl::Status status = top.string("work_dir", work); !status.ok())
    return status;
  if (!workDir.empty()) {
    // The caller's choice wins.
  } else if (work.empty()) {
    llvm::SmallString<256> stem(file);
    llvm::sys::path::replace_extension(stem, "work");
    workDir = stem.str().str();
  } else {
    workDir = resolve(work);
  }
  if (absl::Status status = parseData(top); !status.ok())
    return status;
  const json::Value *list = object->get("stages");
  if (!list)
    return top.error("stages", "missing");
  const json::Array *array = list->getAsArray();
  if (!array || array->empty())
    return top.error("stages", "must be a non-empty list of stages");
  for (size_t i = 0; i < array->size(); ++i) {
    const json::Object *stage = (*array)[i].getAsObject();
    if (!stage)
      return top.error("stages[" + std::to_string(i) + "]",
                       "must be an object");
    if (absl::Status status = parseStage(*stage, i); !status.ok())
      return status;
  }
  return resolveNames();
}

absl::Status StagePipeline::Impl::parseData(const ObjectReader &top) {
  const json::Object *object = nullptr;
  if (absl::Status status = top.child("data", object); !status.ok())
    return status;
  if (!object)
    return absl::OkStatus();
  // Sorted by name, so that the order of the file does not matter.
  std::vector<std::string> names;
  for (const auto &entry : *object)
    names.push_back(entry.first.str());
  std::sort(names.begin(), names.end());
  for (const std::string &name : names) {
    ObjectReader holder(file, "data", *object);
    const json::Object *entry = nullptr;
    if (absl::Status status = holder.child(name, entry); !status.ok())
      return status;
    if (!validName(name))
      return holder.error(name, "a name is letters, digits, '_', '-' and "
                                "'.' (and not 'data')");
    ObjectReader reader(file, holder.at(name), *entry);
    if (absl::Status status = reader.onlyKeys({"path", "synthesize"});
        !status.ok())
      return status;
    DataDecl decl;
    decl.name = name;
    decl.spec = canonical(json::Value(json::Object(*entry)));
    const json::Object *synthetic = nullptr;
    if (absl::Status status = reader.child("synthesize", synthetic);
        !status.ok())
      return status;
    if (reader.has("path") == (synthetic != nullptr))
      return reader.error("", "give \"path\" (a dataset) or \"synthesize\" "
                              "(the segment task), one of them");
    if (synthetic) {
      ObjectReader task(file, reader.at("synthesize"), *synthetic);
      if (absl::Status status =
              task.onlyKeys({"task", "utterances", "features", "classes",
                             "noise", "task_seed", "seed"});
          !status.ok())
        return status;
      std::string kind = "segments";
      int64_t utterances = 0, features = 0, classes = 0, taskSeed = 0,
              dataSeed = 0;
      absl::Status status = task.string("task", kind);
      if (status.ok() && kind != "segments")
        status = task.error("task",
                            "unknown task '" + kind + "' (expected segments)");
      if (status.ok())
        status = task.integer("utterances", utterances, 1, true);
      if (status.ok())
        status = task.integer("features", features, 1, true);
      if (status.ok())
        status = task.integer("classes", classes, 2, true);
      if (status.ok())
        status = task.number("noise", decl.task.noise);
      if (status.ok())
        status = task.integer("task_seed", taskSeed, 0);
      if (status.ok())
        status = task.integer("seed", dataSeed, 0);
      if (!status.ok())
        return status;
      decl.synthesize = true;
      decl.utterances = utterances;
      decl.task.features = features;
      decl.task.classes = classes;
      decl.task.seed = (uint32_t)taskSeed;
      decl.seed = (uint32_t)dataSeed;
      if (absl::Status valid = decl.task.validate(); !valid.ok())
        return task.error("", std::string(valid.message()));
      decl.path = workDir + "/data/" + name;
    } else {
      std::string path;
      if (absl::Status status = reader.string("path", path); !status.ok())
        return status;
      decl.path = resolve(path);
    }
    data.push_back(std::move(decl));
  }
  return absl::OkStatus();
}

absl::Status StagePipeline::Impl::parseStage(const json::Object &object,
                                             size_t index) {
  Stage stage;
  stage.where = "stages[" + std::to_string(index) + "]";
  ObjectReader first(file, stage.where, object);
  if (absl::Status status = first.string("name", stage.name, true);
      !status.ok())
    return status;
  if (!validName(stage.name))
    return first.error("name", "a name is letters, digits, '_', '-' and '.' "
                               "(and not 'data'), got '" +
                                   stage.name + "'");
  for (const Stage &other : stages)
    if (other.name == stage.name)
      return first.error("name",
                         "'" + stage.name + "' names " + other.where + " too");
  stage.where += " ('" + stage.name + "')";
  ObjectReader reader(file, stage.where, object);
  std::string kind;
  if (absl::Status status = reader.string("kind", kind, true); !status.ok())
    return status;
  if (kind == "train")
    stage.kind = StageKind::train;
  else if (kind == "align")
    stage.kind = StageKind::align;
  else
    return reader.error("kind", "unknown kind '" + kind +
                                    "' (expected train or align)");
  std::string graph;
  if (absl::Status status = reader.string("graph", graph, true); !status.ok())
    return status;
  stage.graphPath = resolve(graph);
  if (!llvm::sys::fs::is_regular_file(stage.graphPath))
    return reader.error("graph", "no file '" + stage.graphPath + "'");
  if (absl::Status status = reader.string("entry", stage.entry); !status.ok())
    return status;
  if (absl::Status status =
          reader.unsignedInt("batch_size", stage.batchSize, 1);
      !status.ok())
    return status;
  if (absl::Status status =
          reader.unsignedInt("max_frames", stage.maxFrames, 0);
      !status.ok())
    return status;
  stage.spec = canonical(json::Value(json::Object(object)));
  stage.dir = workDir + "/" + stage.name;
  absl::Status status = stage.kind == StageKind::train
                            ? parseTrainStage(reader, stage)
                            : parseAlignStage(reader, stage);
  if (!status.ok())
    return status;
  stages.push_back(std::move(stage));
  return absl::OkStatus();
}

absl::Status StagePipeline::Impl::parseTrainStage(const ObjectReader &reader,
                                                  Stage &stage) {
  if (absl::Status status = reader.onlyKeys(
          {"name", "kind", "graph", "entry", "losses", "epochs", "steps",
           "batch_size", "max_frames", "bucket", "shuffle", "optimizer", "lr",
           "pack", "seed", "on_nonfinite", "reads", "writes"});
      !status.ok())
    return status;
  // Losses: a list of names (scales as marked) or names with scales.
  const json::Value *losses = reader.object.get("losses");
  if (!losses)
    return reader.error("losses", "missing: name the losses that train");
  if (const json::Object *scaled = losses->getAsObject()) {
    for (const auto &entry : *scaled) {
      std::optional<double> scale = entry.second.getAsNumber();
      if (!scale || !std::isfinite(*scale))
        return reader.error("losses." + entry.first.str(),
                            "must be a finite scale");
      stage.losses.push_back({entry.first.str(), *scale});
    }
    std::sort(stage.losses.begin(), stage.losses.end(),
              [](const TrainedLoss &a, const TrainedLoss &b) {
                return a.name < b.name;
              });
    if (stage.losses.empty())
      return reader.error("losses", "names no loss");
  } else {
    std::vector<std::string> names;
    if (absl::Status status = reader.strings("losses", names, true);
        !status.ok())
      return reader.error("losses", "must be a list of loss names or an "
                                    "object of loss names and scales");
    for (const std::string &name : names)
      stage.losses.push_back({name});
  }
  if (reader.has("epochs") == reader.has("steps"))
    return reader.error("", "give \"epochs\" or \"steps\", one of them");
  if (absl::Status status = reader.integer("epochs", stage.epochs, 1);
      !status.ok())
    return status;
  if (absl::Status status = reader.integer("steps", stage.steps, 1);
      !status.ok())
    return status;
  for (auto [key, flag] :
       {std::pair<const char *, bool *>{"bucket", &stage.bucket},
        {"shuffle", &stage.shuffle},
        {"pack", &stage.pack}})
    if (absl::Status status = reader.boolean(key, *flag); !status.ok())
      return status;
  int64_t stageSeed = (int64_t)seed;
  if (absl::Status status = reader.integer("seed", stageSeed, 0); !status.ok())
    return status;
  stage.seed = (uint64_t)stageSeed;
  if (absl::Status status = reader.string("on_nonfinite", stage.onNonFinite);
      !status.ok())
    return status;
  if (stage.onNonFinite != "stop" && stage.onNonFinite != "skip")
    return reader.error("on_nonfinite", "must be stop or skip");
  std::string lr = "constant:peak=1e-3";
  if (absl::Status status = reader.string("lr", lr); !status.ok())
    return status;
  absl::StatusOr<LearningRateSchedule> schedule =
      LearningRateSchedule::parse(lr);
  if (!schedule.ok())
    return reader.error("lr", std::string(schedule.status().message()));
  stage.schedule = *schedule;

  const json::Object *optimizer = nullptr;
  if (absl::Status status = reader.child("optimizer", optimizer); !status.ok())
    return status;
  if (optimizer) {
    ObjectReader opt(file, reader.at("optimizer"), *optimizer);
    OptimizerOptions &o = stage.optimizer;
    absl::Status status =
        opt.onlyKeys({"kind", "momentum", "nesterov", "beta1", "beta2",
                      "epsilon", "weight_decay", "clip_norm"});
    if (status.ok())
      status = opt.string("kind", o.kind);
    if (status.ok() && o.kind != "sgd" && o.kind != "adam" && o.kind != "adamw")
      status = opt.error("kind", "unknown optimizer '" + o.kind +
                                     "' (expected sgd, adam or adamw)");
    for (auto [key, value] :
         {std::pair<const char *, double *>{"momentum", &o.momentum},
          {"beta1", &o.beta1},
          {"beta2", &o.beta2},
          {"epsilon", &o.epsilon},
          {"weight_decay", &o.weightDecay},
          {"clip_norm", &o.clipNorm}})
      if (status.ok())
        status = opt.number(key, *value);
    if (status.ok())
      status = opt.boolean("nesterov", o.nesterov);
    if (!status.ok())
      return status;
  }

  const json::Object *reads = nullptr, *writes = nullptr;
  if (absl::Status status = reader.child("reads", reads, true); !status.ok())
    return status;
  ObjectReader in(file, reader.at("reads"), *reads);
  absl::Status status = in.onlyKeys({"train", "dev", "init"});
  if (status.ok())
    status = in.string("train", stage.readTrain, true);
  if (status.ok())
    status = in.string("dev", stage.readDev);
  if (status.ok())
    status = in.string("init", stage.readInit);
  if (status.ok())
    status = reader.child("writes", writes, true);
  if (!status.ok())
    return status;
  ObjectReader out(file, reader.at("writes"), *writes);
  status = out.onlyKeys({"parameters"});
  if (status.ok())
    status = out.string("parameters", stage.writeParameters, true);
  return status;
}

absl::Status StagePipeline::Impl::parseAlignStage(const ObjectReader &reader,
                                                  Stage &stage) {
  if (absl::Status status = reader.onlyKeys(
          {"name", "kind", "graph", "entry", "batch_size", "max_frames",
           "reads", "writes", "array", "prior", "infeasible"});
      !status.ok())
    return status;
  if (absl::Status status = reader.string("array", stage.array); !status.ok())
    return status;
  std::string infeasible = "error";
  if (absl::Status status = reader.string("infeasible", infeasible);
      !status.ok())
    return status;
  if (infeasible != "error" && infeasible != "skip")
    return reader.error("infeasible",
                        "must be error or skip, got '" + infeasible + "'");
  stage.skipInfeasible = infeasible == "skip";
  const json::Object *prior = nullptr, *reads = nullptr, *writes = nullptr;
  if (absl::Status status = reader.child("prior", prior); !status.ok())
    return status;
  if (prior) {
    ObjectReader p(file, reader.at("prior"), *prior);
    absl::Status status = p.onlyKeys({"parameter", "scale"});
    if (status.ok())
      status = p.string("parameter", stage.priorParameter, true);
    if (status.ok() && !p.has("scale"))
      status = p.error("scale", "missing");
    if (status.ok())
      status = p.number("scale", stage.priorScale);
    if (!status.ok())
      return status;
  }
  if (absl::Status status = reader.child("reads", reads, true); !status.ok())
    return status;
  ObjectReader in(file, reader.at("reads"), *reads);
  absl::Status status = in.onlyKeys({"parameters", "data"});
  if (status.ok())
    status = in.string("parameters", stage.readParameters, true);
  if (status.ok())
    status = in.strings("data", stage.readData, true);
  if (status.ok())
    status = reader.child("writes", writes, true);
  if (!status.ok())
    return status;
  ObjectReader out(file, reader.at("writes"), *writes);
  status = out.onlyKeys({"data"});
  if (status.ok())
    status = out.strings("data", stage.writeData, true);
  if (status.ok() && stage.writeData.size() != stage.readData.size())
    status =
        out.error("data", "names " + std::to_string(stage.writeData.size()) +
                              " datasets for the " +
                              std::to_string(stage.readData.size()) +
                              " it aligns (one each, in order)");
  return status;
}

/// Every read names what declared data or an earlier stage writes, of the
/// right kind; every name is written once.
absl::Status StagePipeline::Impl::resolveNames() {
  for (const DataDecl &decl : data) {
    Entity &entity = entities[decl.name];
    entity.kind = Entity::Kind::dataset;
    entity.paths = {decl.path};
  }
  auto fail = [&](const Stage &stage, const std::string &key,
                  const std::string &why) {
    return absl::InvalidArgumentError(file + ": " + stage.where + "." + key +
                                      ": " + why);
  };
  for (size_t i = 0; i < stages.size(); ++i) {
    Stage &stage = stages[i];
    auto read = [&](const std::string &key, const std::string &name,
                    Entity::Kind kind) -> absl::Status {
      if (name.empty())
        return absl::OkStatus();
      auto found = entities.find(name);
      if (found == entities.end()) {
        std::string known;
        for (const auto &[other, entity] : entities)
          known += (known.empty() ? "" : ", ") + other;
        return fail(stage, key,
                    "'" + name +
                        "' is written by no earlier stage and is not "
                        "declared data (known before this stage: " +
                        (known.empty() ? "nothing" : known) + ")");
      }
      if (found->second.kind != kind)
        return fail(stage, key,
                    "'" + name + "' is " + kindName(found->second.kind) +
                        ", not " + kindName(kind));
      return absl::OkStatus();
    };
    auto write = [&](const std::string &key,
                     const std::string &name) -> absl::StatusOr<Entity *> {
      if (!validName(name))
        return fail(stage, key,
                    "a name is letters, digits, '_', '-' and '.', got '" +
                        name + "'");
      auto found = entities.find(name);
      if (found != entities.end())
        return fail(
            stage, key,
            "'" + name + "' is already " +
                (found->second.producer < 0
                     ? std::string("declared data")
                     : "written by " + stages[found->second.producer].where));
      Entity &entity = entities[name];
      entity.producer = (int)i;
      return &entity;
    };
    absl::Status status = absl::OkStatus();
    if (stage.kind == StageKind::train) {
      status = read("reads.train", stage.readTrain, Entity::Kind::dataset);
      if (status.ok())
        status = read("reads.dev", stage.readDev, Entity::Kind::dataset);
      if (status.ok())
        status = read("reads.init", stage.readInit, Entity::Kind::parameters);
      if (!status.ok())
        return status;
      absl::StatusOr<Entity *> written =
          write("writes.parameters", stage.writeParameters);
      if (!written.ok())
        return written.status();
      (*written)->kind = Entity::Kind::parameters;
      (*written)->parametersPath = stage.dir + "/parameters.npz";
      continue;
    }
    status = read("reads.parameters", stage.readParameters,
                  Entity::Kind::parameters);
    for (size_t d = 0; status.ok() && d < stage.readData.size(); ++d)
      status = read("reads.data", stage.readData[d], Entity::Kind::dataset);
    if (!status.ok())
      return status;
    for (size_t d = 0; d < stage.writeData.size(); ++d) {
      absl::StatusOr<Entity *> written =
          write("writes.data", stage.writeData[d]);
      if (!written.ok())
        return written.status();
      // The dataset it aligns with an overlay next to its own files.
      const Entity &source = entities.at(stage.readData[d]);
      std::string base = source.paths.front();
      while (base.size() > 1 && base.back() == '/')
        base.pop_back();
      if (llvm::StringRef(base).ends_with(".npz"))
        base.resize(base.size() - 4);
      (*written)->kind = Entity::Kind::dataset;
      (*written)->paths = source.paths;
      (*written)->paths.push_back(base + "." + stage.name);
    }
  }
  return absl::OkStatus();
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
  options.compile.pack = stage.pack;
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
  auto buffer = llvm::MemoryBuffer::getFile(stage.graphPath);
  std::string reads;
  for (const std::string &name :
       {stage.readTrain, stage.readDev, stage.readInit, stage.readParameters})
    if (!name.empty())
      reads += name + "=" + hex(entities.at(name).fingerprint) + ";";
  for (const std::string &name : stage.readData)
    reads += name + "=" + hex(entities.at(name).fingerprint) + ";";
  return fingerprintOf({stage.spec,
                        buffer ? (*buffer)->getBuffer().str() : std::string(),
                        reads, std::to_string(seed)});
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

absl::Status StagePipeline::prepare(const OutputOptions &output) {
  Impl &p = *impl;
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

absl::Status writeFingerprint(const std::string &path, uint64_t fingerprint,
                              const std::string &what) {
  std::string partial = path + ".partial";
  {
    std::error_code ec;
    llvm::raw_fd_ostream out(partial, ec);
    if (ec)
      return absl::InternalError("cannot write '" + partial +
                                 "': " + ec.message());
    out << "{\"fingerprint\": \"" << hex(fingerprint)
        << "\", \"stage\": " << tools::jsonString(what) << "}\n";
  }
  if (std::error_code ec = llvm::sys::fs::rename(partial, path))
    return absl::InternalError("cannot write '" + path + "': " + ec.message());
  return absl::OkStatus();
}

absl::Status createDirectory(const std::string &dir) {
  if (std::error_code ec = llvm::sys::fs::create_directories(dir))
    return absl::InternalError("cannot create '" + dir + "': " + ec.message());
  return absl::OkStatus();
}

/// Writes `arrays` to `path` through a temporary file.
absl::Status writeNpzAtomically(const std::string &path,
                                const std::map<std::string, Tensor> &arrays) {
  std::string partial = path + ".partial";
  if (absl::Status status = writeNpz(partial, arrays); !status.ok())
    return status;
  if (std::error_code ec = llvm::sys::fs::rename(partial, path))
    return absl::InternalError("cannot write '" + path + "': " + ec.message());
  return absl::OkStatus();
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
  if (absl::Status status = createDirectory(decl.path); !status.ok())
    return status;
  std::vector<float> prototypes = decl.task.prototypes();
  std::mt19937 rng(decl.seed + 1);
  std::vector<UtteranceArrays> utterances;
  for (int64_t u = 0; u < decl.utterances; ++u)
    utterances.push_back(segmentArrays(
        decl.task, sampleSegmentUtterance(decl.task, prototypes, rng)));
  if (absl::Status status = writeNpzAtomically(
          decl.path + "/shard-00000.npz",
          concatenateUtterances(utterances, 0, utterances.size()));
      !status.ok())
    return status;
  event(output, decl.name, "synthesized",
        ", \"utterances\": " + std::to_string(decl.utterances) +
            ", \"path\": " + tools::jsonString(decl.path));
  return writeFingerprint(marker, entity.fingerprint, "data." + decl.name);
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
    llvm::sys::fs::remove_directories(checkpoints);
    hasCheckpoint = false;
  }
  if (absl::Status status = createDirectory(checkpoints); !status.ok())
    return status;
  if (absl::Status status =
          writeFingerprint(stamp, stage.fingerprint, stage.name);
      !status.ok())
    return status;

  TrainOptions &options = trainer.mutableOptions();
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
  if (absl::Status status =
          writeNpzAtomically(written.parametersPath, parameters);
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
    if (absl::Status status = createDirectory(stage.dir); !status.ok())
      return status;
    if (absl::Status status = writeNpzAtomically(
            stage.dir + "/prior.npz", {{stage.priorParameter, prior}});
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
    if (absl::Status status = createDirectory(overlay); !status.ok())
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
      if (absl::Status status = writeNpzAtomically(
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
    llvm::sys::fs::remove(marker);
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
    if (absl::Status status = createDirectory(stage.dir); !status.ok())
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
            writeFingerprint(marker, stage.fingerprint, stage.name);
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
