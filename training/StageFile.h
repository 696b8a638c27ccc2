//===- training/StageFile.h - what a stage file declares ---------*- C++
//-*-===//
//
// Reading a stage file (docs/sequence-training.md) into what it declares,
// with every check that needs no compiled graph: JSON syntax (repeated
// keys and deep nesting are errors, training/JsonFile.h), known keys and
// their types, every number within what a run can hold, stage names,
// reads and writes in order, graph files present, and the directories
// stages write never being another dataset's. Stages.h prepares and runs
// what this returns; the fuzz target reads stage files through it alone.
//
//===----------------------------------------------------------------------===//

#ifndef NN_TRAINING_STAGEFILE_H
#define NN_TRAINING_STAGEFILE_H

#include "nn/Compiler.h"
#include "nn/Dataset.h"
#include "nn/LearningRate.h"
#include "nn/Manifest.h"
#include "nn/SegmentTask.h"

#include "absl/status/statusor.h"
#include "llvm/ADT/StringRef.h"

#include <map>
#include <set>
#include <string>
#include <vector>

namespace nn::training {

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

enum class StageKind { train, align, decode };

/// "train", "align" or "decode".
const char *toString(StageKind kind);

/// One stage's settings as the file gives them.
struct StageSpec {
  std::string name, where;
  StageKind kind = StageKind::train;
  std::string graphPath, entry;
  /// The stage's object as canonical JSON (part of its fingerprint).
  std::string spec;
  unsigned batchSize = 16, maxFrames = 0;
  /// WORK/NAME: the stage's own outputs.
  std::string dir;
  /// Code generation (stage keys blas, threads, gemm_library).
  CodegenOptions codegen;
  CpuCodegenOptions cpu;

  // Train stages.
  std::vector<TrainedLoss> losses;
  int64_t epochs = 0, steps = 0;
  bool bucket = true, shuffle = true;
  /// Stage key "chunking" (nn-train --chunking).
  ChunkingOptions chunking;
  /// The nn-level passes' options (stage keys pack, fuse_loss_tail, ...).
  OptimizeOptions optimize;
  OptimizerOptions optimizer;
  LearningRateSchedule schedule;
  uint64_t seed = 0;
  std::string onNonFinite = "stop";
  std::string readTrain, readDev, readInit, writeParameters;
  /// copy_param_mode "subset": a parameter of `readInit` whose shape grew
  /// in this graph keeps its values in the leading slice (nn::growInto);
  /// otherwise shared parameters have one shape.
  bool growInit = false;

  // Align and decode stages: the parameters of the graph, the datasets it
  // aligns or decodes and the names of what it writes for each, one each
  // in order (the dataset with an overlay of `array` added).
  std::string readParameters;
  std::vector<std::string> readData, writeData;
  std::string array = "alignment";

  // Align stages.
  std::string priorParameter;
  double priorScale = 0;
  /// Utterances no path fits: an error, or left out of the written
  /// dataset (its nn.keep says 0).
  bool skipInfeasible = false;

  // Decode stages.
  /// A token per label (stage key "vocab"): errors counted in words.
  std::string vocabularyPath;
  /// The references' array, and whether the file names it ("ref"; by
  /// default "labels" where the dataset holds it).
  std::string reference = "labels";
  bool referenceGiven = false;
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

/// The most epochs a train stage may ask for (the run bounds them again by
/// the batches it counts, kMaxTrainSteps).
constexpr int64_t kMaxEpochs = 1000000;

/// The largest prior scale an align stage takes: the scaled log prior is
/// added on every frame of a path, and scales that help lie in [0, 1].
constexpr double kMaxPriorScale = 1000;

/// A stage file as read and checked.
struct StageFile {
  /// The file, the directory its relative paths start from, and the work
  /// directory (the caller's, the file's work_dir, or FILE.work).
  std::string file, baseDir, workDir;
  uint64_t seed = 0;
  std::vector<DataDecl> data;
  std::vector<StageSpec> stages;
  /// Every name declared or written, as the last stage sees them.
  std::map<std::string, Entity> entities;

  /// Reads the file at `path` (a regular file of at most kMaxStageFileBytes).
  static absl::StatusOr<StageFile> read(const std::string &path,
                                        const std::string &workDir = "");
  /// Parses `text` as the contents of the file `path` (whose directory
  /// relative paths start from; the file itself need not exist).
  static absl::StatusOr<StageFile> parse(llvm::StringRef text,
                                         const std::string &path,
                                         const std::string &workDir = "");
};

/// `path` absolute, without '.', '..' or a trailing '/', links not
/// resolved: how the directories stages write are compared (a path is
/// judged by how it is spelled, as the user spelled it).
std::string absolutePath(const std::string &path);

/// The largest stage file read (a stage file is a page or two).
constexpr int64_t kMaxStageFileBytes = 16 << 20;

} // namespace nn::training

#endif // NN_TRAINING_STAGEFILE_H
