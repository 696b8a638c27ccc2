//===- training/Trainer.h - one model's training run -------------*- C++
//-*-===//
//
// The training loop behind `nn-train MODEL.mlir` and behind each train
// stage of a stage file (training/Stages.h): compile the model into a
// train step and an evaluation graph, draw batches (a dataset on disk or
// the synthetic segment task), run the steps, evaluate the dev set,
// checkpoint, and report progress (JSON lines, plain lines or a progress
// bar). Batch `n` and its dropout seed follow from (seed, n) alone, so a
// resumed run continues exactly where its checkpoint left off
// (docs/training.md).
//
//===----------------------------------------------------------------------===//

#ifndef NN_TRAINING_TRAINER_H
#define NN_TRAINING_TRAINER_H

#include "nn/Communicator.h"
#include "nn/Compiler.h"
#include "nn/Dataset.h"
#include "nn/LearningRate.h"
#include "nn/Runtime.h"
#include "nn/Train.h"
#include "support/JsonLine.h"

#include <memory>
#include <string>
#include <vector>

namespace nn::training {

/// Where a run's batches come from: dataset paths, or the synthetic task.
struct DataOptions {
  /// A dataset: its shards (a file or a directory of .npz files), then
  /// any overlays whose shards add arrays to the same utterances
  /// (Dataset::load). Empty with `synthetic`.
  std::vector<std::string> train;
  /// Dev data, evaluated after each epoch (optional).
  std::vector<std::string> dev;
  /// "segments", or empty.
  std::string synthetic;
  /// The synthetic task: per-feature noise, classes (0: all the model's
  /// targets index), dev batches, batches per epoch.
  double noise = 0.5;
  unsigned classes = 0;
  unsigned devBatches = 4;
  unsigned epochSteps = 100;
  /// Batching: sequences per batch (at most, with a dataset), padded
  /// frames per batch (0: no budget), bucketing and shuffling.
  unsigned batchSize = 16;
  unsigned maxFrames = 0;
  bool bucket = true;
  bool shuffle = true;
  /// --data: cut the training utterances into chunks (dev data stays
  /// whole); see nn::ChunkingOptions.
  ChunkingOptions chunking;
};

/// How a run reports: one JSON object per step and dev evaluation, plain
/// lines, or (on a terminal, neither asked for) a progress bar.
struct OutputOptions {
  bool json = false;
  bool verbose = false;
  unsigned logEvery = 1;
  bool bar = false;
  /// Put first in every JSON object (`"stage": "ctc"`) and before every
  /// plain line (`[ctc] `); empty for a plain run.
  support::JsonObject jsonFields;
  std::string linePrefix;
  /// JSON: also an object when the run resumes from a checkpoint
  /// (`"event": "resumed"`), as stage runs report events; a plain run's
  /// JSON holds steps and dev evaluations only (its contract), and under
  /// --lr newbob each epoch's learning-rate decision.
  bool jsonEvents = false;
  /// Stage runs: each train stage writes its TensorBoard scalars
  /// (TrainOptions::tensorboardDir) to <tensorboardDir>/<stage name>, one
  /// TensorBoard run per stage. Empty: none.
  std::string tensorboardDir;
};

/// The owner of a directory a run writes into (a stage's work directory,
/// training/WorkDir.h): each file is recorded before it is written and
/// removed through the owner, so that the owner knows every file the
/// directory holds and never removes one it did not write.
class FileRecorder {
public:
  virtual ~FileRecorder();
  /// `path` is about to be written (with `path`.partial first).
  virtual absl::Status record(const std::string &path) = 0;
  /// Removes `path`, a file recorded before.
  virtual absl::Status remove(const std::string &path) = 0;
};

struct TrainOptions {
  std::string modelPath;
  /// The train step's compile options (grads, training and trainStep are
  /// set by the trainer); the evaluation graph takes the same without
  /// them.
  CompileOptions compile;
  /// Keep both artifacts in this directory (train-step.so, eval.so; rank
  /// 0's in a data-parallel run).
  std::string emitArtifacts;
  DataOptions data;
  /// Batches to train on; 0: `epochs` epochs.
  int64_t steps = 0;
  int64_t epochs = 1;
  uint64_t seed = 0;
  LearningRateSchedule schedule;
  /// A non-finite loss or gradient norm: "stop" or "skip" the batch.
  std::string onNonFinite = "stop";
  /// Checkpoints: step-<N>.npz in `saveDir` every `saveEvery` batches
  /// (0: each epoch) and at the end, the last `keep` (>= 1) kept by N.
  /// A run that does not resume from `saveDir` refuses one that holds
  /// checkpoints already (another run's).
  std::string saveDir;
  unsigned saveEvery = 0;
  unsigned keep = 3;
  /// Set when another owns `saveDir` (not owned by the options).
  FileRecorder *files = nullptr;
  /// Continue from a checkpoint (a file, or the latest of a directory).
  std::string resume;
  /// Start from the parameters of this .npz (by name; every one must be a
  /// parameter of the model).
  std::string initFrom;
  /// Start from these parameters (by name; the caller keeps only those the
  /// model has, with its shapes, or with `growInitial` shapes that grow
  /// into its). Applied before `initFrom` and `resume`.
  std::map<std::string, Tensor> initialParameters;
  /// copy_param_mode "subset": an initial parameter smaller than the
  /// model's keeps its values in the leading slice of the parameter as the
  /// model initializes it (nn::growInto).
  bool growInitial = false;
  /// Evaluate the dev set before the first step too (what the starting
  /// parameters score).
  bool evaluateAtStart = false;
  OutputOptions output;
  /// The ranks of a data-parallel run (nn/Communicator.h; not owned).
  /// With more than one, compile() builds a data-parallel step and run()
  /// trains each rank on its part of every batch (nn/DataParallel.h):
  /// rank 0 sets up the state (fresh, initial, --init-from, resumed) and
  /// broadcasts it, reports, and writes checkpoints and TensorBoard
  /// events; the dev batches are shared out and their losses summed. Null
  /// or one rank: a single process. docs/distributed.md.
  Communicator *communicator = nullptr;
  /// What the compiled step sums over when it is not `communicator`: on
  /// GPUs, the NCCL communicator of the same ranks (nn/Cuda.h), whose
  /// buffers are the device's (not owned).
  Communicator *stepCommunicator = nullptr;
  /// TensorBoard: an event file in this directory with each step's losses
  /// (`train/<name>`), `train/lr`, `train/grad_norm` and
  /// `train/frames_per_second`, and each dev evaluation's losses and error
  /// rates (`dev/<name>`), by batch count. Empty: none.
  std::string tensorboardDir;
};

/// Set by Ctrl-C (installInterruptHandler): the trainer finishes its step,
/// saves a checkpoint and returns.
bool interrupted();
/// Ctrl-C sets interrupted(); a second one at least two seconds later ends
/// the process at once. Installing clears an earlier request.
void installInterruptHandler();

/// The 64-bit mix of a run's seed, a stream tag and a counter: the seed of
/// one batch's data or dropout mask.
uint64_t streamSeed(uint64_t seed, uint64_t tag, uint64_t counter);

/// "ce 1.2345 fer 0.0312": each loss's value as training uses it.
std::string lossesText(const Manifest &manifest,
                       const std::vector<LossValue> &losses);
/// {"ce": 1.2345, ...}
support::JsonObject lossesJson(const Manifest &manifest,
                               const std::vector<LossValue> &losses);

/// A newbob schedule needs dev data and a `score` that names one of the
/// evaluation graph's losses; OK for the other schedules.
absl::Status checkNewbob(const LearningRateSchedule &schedule,
                         const Manifest &eval, bool hasDev);

class EventFileWriter;

class Trainer {
public:
  explicit Trainer(TrainOptions options);
  ~Trainer();

  /// Compiles the train step and the evaluation graph and loads them.
  absl::Status compile();
  const Manifest &trainManifest() const;
  const Manifest &evalManifest() const;

  /// The options run() uses; a caller may still change what the run
  /// starts from (initialParameters, initFrom, resume) after compile().
  TrainOptions &mutableOptions() { return options; }

  /// Binds the data, sets up the parameters (fresh, initial, --init-from,
  /// resumed) and trains. `finished` is false when Ctrl-C stopped the run
  /// (a checkpoint was saved).
  absl::Status run(bool &finished);

  /// The dev losses before the first step (with evaluateAtStart) and after
  /// the last evaluation; empty without a dev set.
  const std::vector<LossValue> &devAtStart() const { return startLosses; }
  const std::vector<LossValue> &devAtEnd() const { return lastLosses; }
  /// Where checkpoints went (`saveDir`; after Ctrl-C without one,
  /// nn-train-interrupted).
  const std::string &checkpointDir() const { return options.saveDir; }
  /// Whether this process reports and writes files (checkpoints,
  /// artifacts, events): rank 0 of a data-parallel run, or a single
  /// process.
  bool reportsForRun() const {
    return !options.communicator || options.communicator->rank() == 0;
  }
  /// The batches skipped for a non-finite loss.
  int64_t skippedBatches() const { return skipped; }
  /// The state after run(): every parameter (model and optimizer state),
  /// current on the host.
  const TrainState &state() const { return trainState; }

private:
  class BatchSource;
  absl::Status setUpState();
  absl::Status evaluate(int64_t atBatch, bool atStart);
  /// Before training: --keep, --save and the names checkpoints reserve.
  absl::Status checkSaveDir();
  absl::Status save();
  absl::Status removeFile(const std::string &path);
  void progress(const StepReport &report, int64_t frames, double seconds);
  /// The step's scalars to the TensorBoard event file, if there is one.
  absl::Status logScalars(const StepReport &report, int64_t frames,
                          double seconds);
  /// newbob: the rate of epoch `epoch` (from 0), decided (and reported)
  /// when the epoch starts and kept in trainState.epochRates.
  double epochRate(int64_t epoch);
  /// newbob: the dev score of lastLosses, recorded for epoch `epoch`.
  void scoreEpoch(int64_t epoch);
  /// Ctrl-C on any rank stops every rank after the same step.
  absl::Status stopRequested(bool &stop);
  /// This rank's part of a batch of the run (the whole batch in a single
  /// process) and the index of its first sequence in the batch.
  absl::StatusOr<RunInputs> ownPart(RunInputs batch, int64_t &first);

  TrainOptions options;
  std::unique_ptr<Artifact> trainCompiled, evalCompiled;
  Executable trainStep, evalGraph;
  std::unique_ptr<BatchSource> source;
  std::unique_ptr<EventFileWriter> events;
  std::vector<RunInputs> devSet;
  TrainState trainState;
  int64_t totalSteps = 0, skipped = 0;
  std::vector<LossValue> epochLosses, startLosses, lastLosses;
  int64_t epochFrames = 0, epochBatches = 0;
  double epochSeconds = 0, totalStepSeconds = 0;
  /// What the compiled step sums over: the step communicator, or the
  /// run's (null for a single process).
  Communicator *stepCommunicator() const {
    return options.stepCommunicator ? options.stepCommunicator
                                    : options.communicator;
  }
  /// The step communicator's collectives before this run began.
  CollectiveStats collectivesBefore;
  /// A data-parallel run: this process's rank, the number of ranks, and
  /// the batch dim whose sequences they share out.
  int rank = 0, rankCount = 1;
  std::string batchDim;
};

} // namespace nn::training

#endif // NN_TRAINING_TRAINER_H
