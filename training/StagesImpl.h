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

#include "training/StageFile.h"
#include "training/Stages.h"
#include "training/WorkDir.h"

#include <cstdint>
#include <initializer_list>
#include <map>
#include <memory>
#include <string>
#include <vector>

namespace nn::training {

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

} // namespace nn::training

#endif // NN_TRAINING_STAGESIMPL_H
