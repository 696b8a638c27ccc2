//===- training/StagesImpl.h - what planning and running share --*- C++ -*-===//
//
// Private to the stage pipeline's two files: StagePlan.cpp prepares
// (fingerprints, which stages are done, the directories stages write,
// compiling and checking what stages hand each other) and StageRun.cpp
// runs what the plan left to do. training/Stages.h is the interface.
//
//===----------------------------------------------------------------------===//

#ifndef NN_TRAINING_STAGESIMPL_H
#define NN_TRAINING_STAGESIMPL_H

#include "training/Decoding.h"
#include "training/StageFile.h"
#include "training/Stages.h"
#include "training/WorkDir.h"

#include "llvm/Support/raw_ostream.h"

#include <cstdint>
#include <initializer_list>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace nn::training {

/// A stage as the file gives it, and what preparing it made.
struct Stage : StageSpec {
  explicit Stage(StageSpec spec) : StageSpec(std::move(spec)) {}
  std::unique_ptr<Trainer> trainer;
  /// Align and decode stages: the compiled graph.
  std::unique_ptr<Artifact> artifact;
  Executable graph;
  /// Align stages: the frame dim of the alignment and the class count.
  std::string alignDim;
  /// Whether the align graph returns the best paths' scores second.
  bool alignScored = false;
  int64_t classes = 0;
  /// Decode stages: where the graph's hypotheses are, and the vocabulary.
  HypothesisLayout hypotheses;
  std::optional<Vocabulary> vocabulary;
  uint64_t fingerprint = 0;
  /// Done in an earlier run with this fingerprint, its outputs there: not
  /// compiled, not run.
  bool done = false;
};

/// FNV-1a over several strings, each closed by a 0 byte.
uint64_t fingerprintOf(std::initializer_list<std::string> parts);

/// A fingerprint as records hold it: 16 hex digits.
std::string hex(uint64_t value);

/// The fingerprint a done.json (or a fingerprint file) records, or "".
std::string recordedFingerprint(const std::string &path);

struct StagePipeline::Impl {
  std::string file, baseDir, workDir;
  uint64_t seed = 0;
  std::vector<DataDecl> data;
  std::vector<Stage> stages;
  std::map<std::string, Entity> entities;
  std::vector<StageReport> reports;
  bool prepared = false;
  /// The ranks of a data-parallel run; null for a single process.
  Communicator *communicator = nullptr;
  /// Whether this process writes the files and reports: rank 0, or the
  /// single process. The other ranks write nothing and print nothing.
  bool leads() const { return !communicator || communicator->rank() == 0; }
  /// Where progress lines go: stderr on the leading process.
  llvm::raw_ostream &log() const {
    return leads() ? llvm::errs() : llvm::nulls();
  }
  /// What this process shows of `given`: all of it when it leads,
  /// nothing otherwise.
  OutputOptions shown(const OutputOptions &given) const {
    OutputOptions output = given;
    if (!leads())
      output.json = output.verbose = output.bar = false;
    return output;
  }
  /// The ranks wait for each other (rank 0's files written); `what` names
  /// the point in errors. Nothing for a single process.
  absl::Status waitForRanks(const std::string &what);
  /// Shares out work by rank: this process's part and the number of
  /// parts.
  int part() const { return communicator ? communicator->rank() : 0; }
  int parts() const { return communicator ? communicator->size() : 1; }
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
  /// Creates a directory, or removes what was written under one, through
  /// its owner.
  absl::Status createDirectory(const std::string &path);
  absl::Status removeUnder(const std::string &path);

  absl::Status prepareData();
  /// An error on every rank when some rank found other fingerprints or
  /// other stages done than rank 0 (it sees other files).
  absl::Status checkRanksAgree();
  uint64_t fingerprintOfStage(const Stage &stage) const;
  bool adoptDoneStage(Stage &stage);
  absl::Status prepareTrain(Stage &stage, const OutputOptions &output);
  absl::Status prepareAlign(Stage &stage);
  absl::Status prepareDecode(Stage &stage);
  /// An align or decode stage's graph compiled into `stage`.
  absl::Status compileGraph(Stage &stage);
  /// An align or decode stage's parameters (but `except`) are those it
  /// reads, by name, dtype and shape.
  absl::Status requireParameters(const Stage &stage,
                                 const std::string &except) const;
  /// The arrays of the datasets an align or decode stage writes; an error
  /// when a dataset it reads holds the stage's array already.
  absl::Status addWrittenArray(Stage &stage);
  absl::Status requireArrays(const Stage &stage, const std::string &dataName,
                             const Manifest &manifest) const;

  absl::Status synthesize(const DataDecl &decl, const OutputOptions &output);
  absl::Status runTrain(Stage &stage, const OutputOptions &output,
                        StageReport &report, bool &finished);
  absl::Status runAlign(Stage &stage, const OutputOptions &output,
                        StageReport &report);
  absl::Status runDecode(Stage &stage, const OutputOptions &output,
                         StageReport &report);
  /// The parameters of an align or decode stage's graph from the
  /// parameters it reads (but `except`, which the stage makes).
  absl::Status readParameters(const Stage &stage, const std::string &except,
                              std::map<std::string, Tensor> &parameters);
  struct Alignment;
  absl::Status align(Stage &stage, const std::string &dataName,
                     const std::map<std::string, Tensor> &parameters,
                     Alignment &out);

  std::string doneMarker(const std::string &dir) const {
    return dir + "/done.json";
  }
  /// A decode stage's outputs in its directory: the hypotheses of dataset
  /// `dataName` as nn-decode --json writes them, and every dataset's
  /// summary.
  std::string hypothesesFile(const Stage &stage,
                             const std::string &dataName) const {
    return stage.dir + "/" + dataName + ".jsonl";
  }
  std::string errorRateFile(const Stage &stage) const {
    return stage.dir + "/error-rate.json";
  }
};

} // namespace nn::training

#endif // NN_TRAINING_STAGESIMPL_H
