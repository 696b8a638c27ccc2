//===- training/Stages.h - multi-stage training from a stage file -*- C++
//-*-===//
//
// The speech recipe in one command (`nn-train --stages FILE`): full-sum
// training, Viterbi alignment of the data with its parameters, frame-wise
// training on the alignments, decoding held-out data with the trained
// model, each a stage of a JSON file that states its graph, losses,
// epochs, optimizer and schedule, and what it reads and writes.
// docs/sequence-training.md has the format and an example.
//
//   absl::StatusOr<std::unique_ptr<StagePipeline>> pipeline =
//       StagePipeline::load("recipe.json");
//   (*pipeline)->prepare(output);   // everything checked, nothing run
//   (*pipeline)->run(output, finished);
//
// Things pass between stages by name: datasets (declared under "data", or
// written by an align or decode stage: the dataset with an overlay of
// alignments or hypotheses next to it) and parameters (written by a train
// stage, read by later train stages to start from and by align and decode
// stages). Each stage's outputs live in
// the work directory, with a `done.json` written last that holds the
// stage's fingerprint (its settings, its graph's text and the
// fingerprints of what it reads): a rerun skips a stage whose outputs
// match, and redoes one whose inputs or settings changed.
//
// Under mpirun every rank runs the pipeline with the run's communicator:
// train stages train data-parallel (nn/DataParallel.h), align and decode
// stages share out their batches by rank and gather the results, and rank
// 0 alone writes files and reports, the others waiting for it after each
// stage. Every rank must see the same work directory and data (one
// machine, or a shared filesystem). docs/distributed.md.
//
//===----------------------------------------------------------------------===//

#ifndef NN_TRAINING_STAGES_H
#define NN_TRAINING_STAGES_H

#include "training/Trainer.h"

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace nn::training {

/// What one stage did, for callers and tests.
struct StageReport {
  std::string name, kind;
  /// Done in an earlier run (its outputs kept).
  bool skipped = false;
  /// Train stages: the dev losses before the first step (when the stage
  /// starts from another stage's parameters) and after the last one, as
  /// training uses them (normalized or summed as marked); empty without a
  /// dev set or when skipped.
  std::vector<std::pair<std::string, double>> devAtStart, devAtEnd;
  /// Align stages: per dataset aligned, the overlay written, the
  /// utterances and frames aligned and the utterances no path fits (left
  /// out with "infeasible": "skip").
  struct Aligned {
    std::string data, writes, overlay;
    int64_t utterances = 0, frames = 0, leftOut = 0;
  };
  std::vector<Aligned> aligned;
  /// Align stages with a prior: log p(class) as estimated.
  std::vector<double> logPrior;
  /// Decode stages: per dataset decoded, the overlay and hypothesis file
  /// written, the utterances decoded and left out, and with references
  /// the edits and reference length (in labels, or words with a
  /// vocabulary) and the error rate (absent when undefined); the graph's
  /// losses summed over the dataset.
  struct Decoded {
    std::string data, writes, overlay, hypotheses;
    /// Utterances decoded (those without frames included, as the empty
    /// hypothesis), those nn.keep left out, and those without frames.
    int64_t utterances = 0, leftOut = 0, withoutFrames = 0;
    bool scored = false;
    std::string unit;
    int64_t errors = 0, referenceLength = 0;
    std::optional<double> errorRate;
    std::vector<std::pair<std::string, double>> losses;
  };
  std::vector<Decoded> decoded;
};

class StagePipeline {
public:
  /// Reads and checks a stage file: JSON syntax, known keys and their
  /// types, stage names, reads and writes in order, graph files present.
  /// Errors name the file and the key (`stages[2].reads.init`).
  /// `workDir`, when given, replaces the file's work_dir (default: the
  /// file's path with the extension .work). `communicator`, when given
  /// with several ranks, is the data-parallel run every rank of which
  /// loads the same file (not owned).
  static absl::StatusOr<std::unique_ptr<StagePipeline>>
  load(const std::string &path, const std::string &workDir = "",
       Communicator *communicator = nullptr);
  ~StagePipeline();

  /// Compiles every stage's graph and checks what the stages hand each
  /// other before anything runs: every graph input is an array of the
  /// dataset it reads, shared parameters have one shape, an align graph
  /// returns [B, T] i32 alignments and a decode graph [B, Y] i32
  /// hypotheses, and each finds all its parameters in what it reads.
  absl::Status prepare(const OutputOptions &output);
  /// Runs the stages in order, skipping those done before. `finished` is
  /// false when Ctrl-C stopped a train stage (its checkpoint saved; the
  /// same command continues it).
  absl::Status run(const OutputOptions &output, bool &finished);

  const std::string &workDir() const;
  const std::vector<StageReport> &reports() const;

  struct Impl;

private:
  explicit StagePipeline(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl;
};

} // namespace nn::training

#endif // NN_TRAINING_STAGES_H
