//===- StageFile.cpp - what a stage file declares -------------------------===//

#include "training/StageFile.h"

#include "nn/File.h"
#include "nn/Train.h"
#include "training/JsonFile.h"

#include "support/JsonOptionReader.h"

#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/JSON.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/raw_ostream.h"

#include <algorithm>
#include <cmath>
#include <cstdio>

using namespace nn;
using namespace nn::training;
namespace json = llvm::json;

namespace {

const char *kindName(Entity::Kind kind) {
  return kind == Entity::Kind::dataset ? "a dataset" : "parameters";
}

std::string canonical(const json::Value &value) {
  std::string text;
  llvm::raw_string_ostream stream(text);
  stream << value;
  return text;
}

/// Typed access to a JSON object with errors naming the file and key
/// (`FILE: stages[2] ('ce').optimizer.kind: unknown optimizer 'lion' ...`).
/// Not llvm::json::ObjectMapper and json::Path: Path::report takes only
/// string literals (these messages name values and ranges), a Path's
/// segments are private and Root::getError writes "MESSAGE at a.b.c" with
/// no room for a stage's name, and ObjectMapper neither refuses unknown
/// keys nor checks more than a value's type.
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
  absl::Status onlyKeys(llvm::ArrayRef<std::string> allowed) const {
    for (const auto &entry : object) {
      llvm::StringRef key = entry.first;
      if (llvm::is_contained(allowed, key.str()))
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
      for (const std::string &candidate : allowed)
        list += (list.empty() ? "" : ", ") + candidate;
      return error(key.str(), "unknown key" +
                                  (closest.empty()
                                       ? std::string()
                                       : " (did you mean '" + closest + "'?)") +
                                  "; expected " + list);
    }
    return absl::OkStatus();
  }

  absl::Status onlyKeys(std::initializer_list<const char *> allowed) const {
    return onlyKeys(std::vector<std::string>(allowed.begin(), allowed.end()));
  }

  /// Reads the options of `values` (nn/Options.h) under their keys.
  template <typename S> absl::Status options(S &values) const {
    return support::readJsonOptions(
        object, values, [this](const std::string &key, const std::string &why) {
          return error(key, why);
        });
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

  /// An integer in [minimum, maximum]: every count a stage file gives is
  /// bounded by what the run that reads it can hold.
  absl::Status integer(llvm::StringRef key, int64_t &value, int64_t minimum,
                       bool required = false,
                       int64_t maximum = kMaxTrainSteps) const {
    const json::Value *found = object.get(key);
    if (!found)
      return required ? error(key.str(), "missing") : absl::OkStatus();
    std::optional<int64_t> number = found->getAsInteger();
    if (!number || *number < minimum || *number > maximum)
      return error(key.str(), "must be an integer in [" +
                                  std::to_string(minimum) + ", " +
                                  std::to_string(maximum) + "]");
    value = *number;
    return absl::OkStatus();
  }

  absl::Status unsignedInt(llvm::StringRef key, unsigned &value,
                           int64_t minimum) const {
    int64_t wide = value;
    if (absl::Status status = integer(key, wide, minimum, false,
                                      std::numeric_limits<int32_t>::max());
        !status.ok())
      return status;
    value = (unsigned)wide;
    return absl::OkStatus();
  }

  /// A finite number, in [minimum, maximum] when they are given.
  absl::Status number(llvm::StringRef key, double &value,
                      double minimum = -HUGE_VAL,
                      double maximum = HUGE_VAL) const {
    const json::Value *found = object.get(key);
    if (!found)
      return absl::OkStatus();
    std::optional<double> parsed = found->getAsNumber();
    if (!parsed || !std::isfinite(*parsed))
      return error(key.str(), "must be a finite number");
    if (*parsed < minimum || *parsed > maximum) {
      char range[64];
      if (maximum == HUGE_VAL)
        std::snprintf(range, sizeof(range), ">= %g", minimum);
      else
        std::snprintf(range, sizeof(range), "in [%g, %g]", minimum, maximum);
      return error(key.str(), std::string("must be a number ") + range);
    }
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

/// A train stage's "optimizer" object, if it has one, key by key.
absl::Status parseOptimizer(const ObjectReader &stage, OptimizerOptions &o) {
  const json::Object *optimizer = nullptr;
  if (absl::Status status = stage.child("optimizer", optimizer);
      !status.ok() || !optimizer)
    return status;
  ObjectReader opt(stage.file, stage.at("optimizer"), *optimizer);
  if (absl::Status status =
          opt.onlyKeys(support::jsonOptionKeys<OptimizerOptions>());
      !status.ok())
    return status;
  return opt.options(o);
}

/// The keys every stage that compiles takes for code generation, and
/// reading them.
std::vector<std::string> codegenKeys() {
  std::vector<std::string> keys = support::jsonOptionKeys<CodegenOptions>();
  for (std::string &key : support::jsonOptionKeys<CpuCodegenOptions>())
    keys.push_back(std::move(key));
  return keys;
}
absl::Status parseCodegen(const ObjectReader &reader, StageSpec &stage) {
  if (absl::Status status = reader.options(stage.codegen); !status.ok())
    return status;
  return reader.options(stage.cpu);
}

/// `keys` and then `more`.
std::vector<std::string> concat(std::vector<std::string> keys,
                                const std::vector<std::string> &more) {
  keys.insert(keys.end(), more.begin(), more.end());
  return keys;
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

/// Reads a stage file's objects into a StageFile.
struct Parser {
  StageFile &out;
  const std::string &file;
  std::string &workDir;
  uint64_t &seed;
  std::vector<DataDecl> &data;
  std::vector<StageSpec> &stages;
  std::map<std::string, Entity> &entities;

  explicit Parser(StageFile &out)
      : out(out), file(out.file), workDir(out.workDir), seed(out.seed),
        data(out.data), stages(out.stages), entities(out.entities) {}

  absl::Status parse(const json::Value &root);
  absl::Status parseData(const ObjectReader &top);
  absl::Status parseStage(const json::Object &object, size_t index);
  absl::Status parseTrainStage(const ObjectReader &reader, StageSpec &stage);
  absl::Status parseAlignStage(const ObjectReader &reader, StageSpec &stage);
  absl::Status parseDecodeStage(const ObjectReader &reader, StageSpec &stage);
  absl::Status parseDataStageIO(const ObjectReader &reader, StageSpec &stage,
                                const std::string &does);
  absl::Status resolveNames();
  absl::Status checkWrittenPaths() const;

  std::string resolve(const std::string &path) const {
    if (llvm::sys::path::is_absolute(path))
      return path;
    llvm::SmallString<256> joined(out.baseDir);
    llvm::sys::path::append(joined, path);
    return joined.str().str();
  }
};

} // namespace

absl::StatusOr<StageFile> StageFile::read(const std::string &path,
                                          const std::string &workDir) {
  // A FIFO or /dev/zero as the stage file would block or never end.
  absl::StatusOr<std::string> text = readRegularFile(path, kMaxStageFileBytes);
  if (!text.ok())
    return withContext(text.status(), "stage file: ");
  return parse(*text, path, workDir);
}

absl::StatusOr<StageFile> StageFile::parse(llvm::StringRef text,
                                           const std::string &path,
                                           const std::string &workDir) {
  absl::StatusOr<json::Value> root = parseJsonStrictly(text, path);
  if (!root.ok())
    return root.status();
  StageFile stageFile;
  stageFile.file = path;
  llvm::SmallString<256> dir(path);
  llvm::sys::path::remove_filename(dir);
  stageFile.baseDir = dir.empty() ? "." : dir.str().str();
  stageFile.workDir = workDir;
  Parser parser(stageFile);
  if (absl::Status status = parser.parse(*root); !status.ok())
    return status;
  return stageFile;
}

absl::Status Parser::parse(const json::Value &root) {
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
  if (absl::Status status = top.integer("seed", topSeed, 0, false,
                                        std::numeric_limits<int64_t>::max());
      !status.ok())
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
  if (absl::Status status = resolveNames(); !status.ok())
    return status;
  return checkWrittenPaths();
}

absl::Status Parser::parseData(const ObjectReader &top) {
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
      constexpr int64_t kMaxI32 = std::numeric_limits<int32_t>::max();
      if (status.ok())
        status = task.integer("utterances", utterances, 1, true, kMaxI32);
      if (status.ok())
        status = task.integer("features", features, 1, true, kMaxI32);
      if (status.ok())
        status = task.integer("classes", classes, 2, true, kMaxI32);
      if (status.ok())
        status =
            task.number("noise", decl.task.noise, 0, SegmentTask::kMaxNoise);
      if (status.ok())
        status = task.integer("task_seed", taskSeed, 0, false,
                              std::numeric_limits<uint32_t>::max());
      if (status.ok())
        status = task.integer("seed", dataSeed, 0, false,
                              std::numeric_limits<uint32_t>::max());
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
      if (absl::Status fits = decl.task.checkSize(decl.utterances); !fits.ok())
        return task.error("utterances", std::string(fits.message()));
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

absl::Status Parser::parseStage(const json::Object &object, size_t index) {
  StageSpec stage;
  stage.where = "stages[" + std::to_string(index) + "]";
  ObjectReader first(file, stage.where, object);
  if (absl::Status status = first.string("name", stage.name, true);
      !status.ok())
    return status;
  if (!validName(stage.name))
    return first.error("name", "a name is letters, digits, '_', '-' and '.' "
                               "(and not 'data'), got '" +
                                   stage.name + "'");
  for (const StageSpec &other : stages)
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
  else if (kind == "decode")
    stage.kind = StageKind::decode;
  else
    return reader.error("kind", "unknown kind '" + kind +
                                    "' (expected train, align or decode)");
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
  absl::Status status =
      stage.kind == StageKind::train   ? parseTrainStage(reader, stage)
      : stage.kind == StageKind::align ? parseAlignStage(reader, stage)
                                       : parseDecodeStage(reader, stage);
  if (!status.ok())
    return status;
  stages.push_back(std::move(stage));
  return absl::OkStatus();
}

absl::Status Parser::parseTrainStage(const ObjectReader &reader,
                                     StageSpec &stage) {
  // The nn-level options (pack, fuse_loss_tail, ...) and those of code
  // generation are keys of the stage, as nn/Options.h declares them.
  if (absl::Status status = reader.onlyKeys(
          concat(concat({"name", "kind", "graph", "entry", "losses", "epochs",
                         "steps", "batch_size", "max_frames", "bucket",
                         "shuffle", "chunking", "optimizer", "lr", "seed",
                         "on_nonfinite", "copy_param_mode", "reads", "writes"},
                        support::jsonOptionKeys<OptimizeOptions>()),
                 codegenKeys()));
      !status.ok())
    return status;
  // Losses: a list of names (scales as marked) or names with scales.
  const json::Value *losses = reader.object.get("losses");
  if (!losses)
    return reader.error("losses", "missing: name the losses that train");
  if (const json::Object *scaled = losses->getAsObject()) {
    for (const auto &entry : *scaled) {
      // A negative scale would train the loss up.
      std::optional<double> scale = entry.second.getAsNumber();
      if (!scale || !std::isfinite(*scale) || *scale < 0)
        return reader.error("losses." + entry.first.str(),
                            "must be a finite scale >= 0");
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
  if (absl::Status status =
          reader.integer("epochs", stage.epochs, 1, false, kMaxEpochs);
      !status.ok())
    return status;
  if (absl::Status status = reader.integer("steps", stage.steps, 1);
      !status.ok())
    return status;
  for (auto [key, flag] :
       {std::pair<const char *, bool *>{"bucket", &stage.bucket},
        {"shuffle", &stage.shuffle}})
    if (absl::Status status = reader.boolean(key, *flag); !status.ok())
      return status;
  std::string chunking;
  if (absl::Status status = reader.string("chunking", chunking); !status.ok())
    return status;
  absl::StatusOr<ChunkingOptions> chunks = parseChunking(chunking);
  if (!chunks.ok())
    return reader.error("chunking", std::string(chunks.status().message()));
  stage.chunking = *chunks;
  if (absl::Status status = reader.options(stage.optimize); !status.ok())
    return status;
  if (absl::Status status = parseCodegen(reader, stage); !status.ok())
    return status;
  int64_t stageSeed = (int64_t)seed;
  if (absl::Status status = reader.integer("seed", stageSeed, 0, false,
                                           std::numeric_limits<int64_t>::max());
      !status.ok())
    return status;
  stage.seed = (uint64_t)stageSeed;
  if (absl::Status status = reader.string("on_nonfinite", stage.onNonFinite);
      !status.ok())
    return status;
  if (stage.onNonFinite != "stop" && stage.onNonFinite != "skip")
    return reader.error("on_nonfinite", "must be stop or skip");
  std::string copyMode;
  if (absl::Status status = reader.string("copy_param_mode", copyMode);
      !status.ok())
    return status;
  if (!copyMode.empty() && copyMode != "subset")
    return reader.error("copy_param_mode",
                        "must be \"subset\" (parameters of the init that "
                        "grew keep their values in the leading slice), "
                        "got '" +
                            copyMode + "'");
  stage.growInit = copyMode == "subset";
  std::string lr = "constant:peak=1e-3";
  if (absl::Status status = reader.string("lr", lr); !status.ok())
    return status;
  absl::StatusOr<LearningRateSchedule> schedule =
      LearningRateSchedule::parse(lr);
  if (!schedule.ok())
    return reader.error("lr", std::string(schedule.status().message()));
  stage.schedule = *schedule;

  if (absl::Status status = parseOptimizer(reader, stage.optimizer);
      !status.ok())
    return status;

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
  if (status.ok() && stage.growInit && stage.readInit.empty())
    status = reader.error("copy_param_mode",
                          "\"subset\" grows the parameters of reads.init, "
                          "which this stage does not give");
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

absl::Status Parser::parseAlignStage(const ObjectReader &reader,
                                     StageSpec &stage) {
  if (absl::Status status = reader.onlyKeys(
          concat({"name", "kind", "graph", "entry", "batch_size", "max_frames",
                  "reads", "writes", "array", "prior", "infeasible"},
                 codegenKeys()));
      !status.ok())
    return status;
  if (absl::Status status = parseCodegen(reader, stage); !status.ok())
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
  const json::Object *prior = nullptr;
  if (absl::Status status = reader.child("prior", prior); !status.ok())
    return status;
  if (prior) {
    ObjectReader p(file, reader.at("prior"), *prior);
    absl::Status status = p.onlyKeys({"parameter", "scale"});
    if (status.ok())
      status = p.string("parameter", stage.priorParameter, true);
    if (status.ok() && !p.has("scale"))
      status = p.error("scale", "missing");
    // The scaled prior is summed over every frame of a path: bounded so
    // that no path score leaves float range (real scales lie in [0, 1]).
    if (status.ok())
      status = p.number("scale", stage.priorScale, 0, kMaxPriorScale);
    if (!status.ok())
      return status;
  }
  return parseDataStageIO(reader, stage, "aligns");
}

absl::Status Parser::parseDecodeStage(const ObjectReader &reader,
                                      StageSpec &stage) {
  if (absl::Status status = reader.onlyKeys(
          concat({"name", "kind", "graph", "entry", "batch_size", "max_frames",
                  "reads", "writes", "array", "vocab", "ref"},
                 codegenKeys()));
      !status.ok())
    return status;
  if (absl::Status status = parseCodegen(reader, stage); !status.ok())
    return status;
  stage.array = "hyp";
  if (absl::Status status = reader.string("array", stage.array); !status.ok())
    return status;
  stage.referenceGiven = reader.has("ref");
  if (absl::Status status = reader.string("ref", stage.reference); !status.ok())
    return status;
  std::string vocabulary;
  if (absl::Status status = reader.string("vocab", vocabulary); !status.ok())
    return status;
  if (!vocabulary.empty()) {
    stage.vocabularyPath = resolve(vocabulary);
    if (!llvm::sys::fs::is_regular_file(stage.vocabularyPath))
      return reader.error("vocab", "no file '" + stage.vocabularyPath + "'");
  }
  return parseDataStageIO(reader, stage, "decodes");
}

/// An align or decode stage's "reads" (parameters and a list of datasets)
/// and "writes" (a dataset name for each dataset read); `does` says what
/// the stage does to the data ("aligns").
absl::Status Parser::parseDataStageIO(const ObjectReader &reader,
                                      StageSpec &stage,
                                      const std::string &does) {
  const json::Object *reads = nullptr, *writes = nullptr;
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
                              std::to_string(stage.readData.size()) + " it " +
                              does + " (one each, in order)");
  return status;
}

/// Every read names what declared data or an earlier stage writes, of the
/// right kind; every name is written once.
absl::Status Parser::resolveNames() {
  for (const DataDecl &decl : data) {
    Entity &entity = entities[decl.name];
    entity.kind = Entity::Kind::dataset;
    entity.paths = {decl.path};
  }
  auto fail = [&](const StageSpec &stage, const std::string &key,
                  const std::string &why) {
    return absl::InvalidArgumentError(file + ": " + stage.where + "." + key +
                                      ": " + why);
  };
  for (size_t i = 0; i < stages.size(); ++i) {
    StageSpec &stage = stages[i];
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
      // The dataset it aligns or decodes with an overlay next to its own
      // files.
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

namespace {

/// How `path` relates to `other`: "" when apart.
std::string overlap(const std::string &path, const std::string &other) {
  if (path == other)
    return "is";
  if (llvm::StringRef(path).starts_with(other + "/"))
    return "lies inside";
  if (llvm::StringRef(other).starts_with(path + "/"))
    return "holds";
  return "";
}

} // namespace

const char *nn::training::toString(StageKind kind) {
  switch (kind) {
  case StageKind::train:
    return "train";
  case StageKind::align:
    return "align";
  case StageKind::decode:
    return "decode";
  }
  return "train";
}

std::string nn::training::absolutePath(const std::string &path) {
  llvm::SmallString<256> full(path);
  llvm::sys::fs::make_absolute(full);
  llvm::sys::path::remove_dots(full, /*remove_dot_dot=*/true);
  std::string text = full.str().str();
  while (text.size() > 1 && text.back() == '/')
    text.pop_back();
  return text;
}

/// The directories align and decode stages write their overlays to are
/// theirs alone: no dataset's files, no other overlay, and no declared
/// data inside the work directory (whose every file nn-train wrote;
/// training/WorkDir.h).
absl::Status Parser::checkWrittenPaths() const {
  std::string work = absolutePath(workDir);
  std::vector<std::pair<std::string, std::string>> datasets;
  for (const DataDecl &decl : data) {
    std::string path = absolutePath(decl.path);
    if (!decl.synthesize && !overlap(path, work).empty() &&
        overlap(path, work) != "holds")
      return absl::InvalidArgumentError(
          file + ": data." + decl.name + ": '" + decl.path + "' " +
          overlap(path, work) + " the work directory '" + workDir +
          "', whose files nn-train writes and removes; keep data outside it");
    datasets.emplace_back(path, "dataset '" + decl.name + "'");
  }
  std::vector<std::pair<std::string, std::string>> overlays;
  for (const StageSpec &stage : stages) {
    for (size_t d = 0; d < stage.writeData.size(); ++d) {
      const std::string &written = entities.at(stage.writeData[d]).paths.back();
      std::string path = absolutePath(written);
      auto clash = [&](const std::pair<std::string, std::string> &other) {
        return absl::InvalidArgumentError(
            file + ": " + stage.where + ".writes.data: the " +
            (stage.kind == StageKind::decode ? "hypotheses" : "alignments") +
            " of '" + stage.readData[d] + "' would be written to '" + written +
            "', which " + overlap(path, other.first) + " " + other.second +
            "; rename the stage or the dataset");
      };
      for (const auto &dataset : datasets)
        if (!overlap(path, dataset.first).empty())
          return clash(dataset);
      for (const auto &other : overlays)
        if (!overlap(path, other.first).empty())
          return clash(other);
      if (overlap(path, work) == "is" || overlap(path, work) == "holds")
        return clash({work, "the work directory"});
      overlays.emplace_back(path, "the overlay " + stage.where +
                                      " writes for '" + stage.readData[d] +
                                      "'");
    }
  }
  return absl::OkStatus();
}
