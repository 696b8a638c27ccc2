//===- nn/Train.h - train steps, their state and checkpoints ----*- C++ -*-===//
//
// Training on top of the runtime: fresh parameters from the manifest's
// init records, one compiled train step (CompileOptions::trainStep) run
// per batch with its state kept between steps, checkpoints, and the
// binding of the synthetic segment task to a model's inputs.
//
//   nn::TrainState state;
//   nn::initializeParameters(exe.manifest(), seed, state.parameters);
//   for (...) {
//     nn::StepReport report;
//     nn::runTrainStep(exe, batch, schedule.at(state.step), dropoutSeed,
//                      state, report);
//   }
//   nn::saveCheckpoint("ckpt.npz", state);
//
// docs/training.md describes the formats and the determinism rules.
//
//===----------------------------------------------------------------------===//

#ifndef NN_TRAIN_H
#define NN_TRAIN_H

#include "nn/LearningRate.h"
#include "nn/Runtime.h"
#include "nn/SegmentTask.h"

#include "absl/status/statusor.h"

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

namespace nn {

/// Fresh values for every parameter of `manifest`, as its init records say
/// (zeros where there is none). Each parameter draws from its own stream,
/// seeded by `seed` and its name, so its initial value does not depend on
/// which other parameters the model has; the generator (SplitMix64, 24-bit
/// uniforms, Box-Muller) gives the same values on every platform.
absl::Status initializeParameters(const Manifest &manifest, uint64_t seed,
                                  std::map<std::string, Tensor> &parameters);

/// What training carries from step to step: every parameter a train step
/// reads (model parameters and optimizer state) by name, the number of
/// updates applied so far, and the position in the data: the batches
/// drawn so far, skipped ones (a non-finite loss) included.
///
/// On a GPU the first step takes the parameters to device memory
/// (`resident`), where later steps read and update them; `parameters` then
/// holds the values of before that step until syncToHost() brings the
/// current ones back (before evaluating or saving). Copies of a TrainState
/// share the resident tensors. On the CPU `parameters` is always current.
/// The most updates (and batches) a run counts: Adam's `step` input is
/// i32. Checkpoints with larger counters are refused, and a step at the
/// limit is an error rather than a wrapped counter.
constexpr int64_t kMaxTrainSteps = 2147483647;

struct TrainState {
  std::map<std::string, Tensor> parameters;
  int64_t step = 0;
  int64_t batches = 0;
  /// A newbob run's epochs so far, 1 ... n: each one's rate and dev score
  /// (nn/LearningRate.h), saved with the checkpoint so that a resumed run
  /// decides as the uninterrupted one would. Empty for other schedules.
  std::vector<EpochRate> epochRates;
  std::shared_ptr<ResidentTensors> resident;
};

/// Brings the resident parameters (on a GPU) back into state.parameters;
/// nothing to do on the CPU.
absl::Status syncToHost(TrainState &state);

struct StepReport {
  /// The number of the update this step computed (state.step + 1 before
  /// it ran).
  int64_t step = 0;
  double learningRate = 0;
  /// The global L2 norm of the gradients, before clipping.
  double gradNorm = 0;
  /// The global L2 norm of every value the step computed to write back
  /// (parameters and optimizer state); 0 for steps compiled without it.
  double updatedNorm = 0;
  std::vector<LossValue> losses;
  /// The trained objective: the sum of scale x value over the losses that
  /// are not as_error, value being normalized or summed as marked.
  double objective = 0;
  /// Whether the update was applied: the objective, the gradient norm and
  /// the updated values' norm were finite. Otherwise the state is as
  /// before the step.
  bool applied = false;
};

/// Checks that `manifest` is a train step's (CompileOptions::trainStep).
absl::Status checkTrainStep(const Manifest &manifest);

/// The value of `loss` that training uses: normalized or summed as the
/// manifest marks it.
double lossValue(const Manifest &manifest, const LossValue &loss);

/// Runs one train step of `executable` on `batch` (its inputs and lengths;
/// parameters come from `state`): fills in the inputs learning_rate, step
/// and dropout_seed the step declares, counts the batch in state.batches
/// and applies the update to `state` (state.step counts it) when the
/// objective, the gradient norm and the updated values are finite
/// (report.applied). Counters at kMaxTrainSteps are an error.
///
/// A data-parallel step (OptimizerOptions::dataParallel) run while a
/// communicator of several ranks is current (nn/Communicator.h) trains on
/// this rank's part of a batch, whose first sequence is `firstSequence`
/// of the whole batch (its dropout masks are the whole batch's): the
/// report's losses are the whole batch's, and every rank applies or skips
/// the update alike.
absl::Status runTrainStep(const Executable &executable, RunInputs batch,
                          double learningRate, uint32_t dropoutSeed,
                          TrainState &state, StepReport &report,
                          int64_t firstSequence = 0);

/// What a train step (or a gradient graph) must keep for one batch, in
/// bytes, by part: the reference point its measured peak is compared with
/// (docs/performance.md, "Memory of a train step"). Not a strict bound
/// either way: the backward frees activations while gradients form, so no
/// single moment needs the sum, and values that share a buffer (views, a
/// fused loss's gradients) are counted once each.
struct MemoryFloor {
  /// Model parameters and optimizer state ("optimizer/..."), by the
  /// manifest's static shapes.
  int64_t parameters = 0, optimizerState = 0;
  /// One gradient per parameter the step updates or differentiates.
  int64_t gradients = 0;
  /// The batch's inputs as given (padded), and the scalars of a step.
  int64_t inputs = 0;
  /// The values the backward reads from the forward (the manifest's
  /// `saved` activations), sized with the batch's dims.
  int64_t saved = 0;
  /// The saved values by the nn op that computes them, largest first.
  std::vector<std::pair<std::string, int64_t>> savedByOrigin;
  /// The sum of the parts.
  int64_t total() const {
    return parameters + optimizerState + gradients + inputs + saved;
  }
};

/// The floor of `manifest`'s step on `batch` (its inputs and lengths; the
/// dims are read from the inputs' shapes). An input the batch lacks is
/// counted by its manifest shape when that is known (the scalars a train
/// step fills in); otherwise the error names it, as it names a dim a saved
/// value needs that the batch does not size, and sums past 64 bits.
absl::StatusOr<MemoryFloor> trainStepFloor(const Manifest &manifest,
                                           const RunInputs &batch);

/// Writes `state` (its resident values on a GPU) as a .npz archive numpy
/// reads: each parameter under its name, the update count under
/// kCheckpointStepKey and the batch count under kCheckpointBatchesKey
/// (int64, shape []), and a newbob run's epochs under
/// kCheckpointEpochRatesKey (float64 [epochs, 3]: rate, scored 0 or 1,
/// score; absent when there are none). It writes a temporary file next to
/// `path` and renames it, so a crash never leaves a torn checkpoint. A state
/// with a NaN or infinite value is an error naming the parameter (nothing is
/// written).
absl::Status saveCheckpoint(const std::string &path, const TrainState &state);
/// Reads a checkpoint; any .npz of float parameters is one (the counts are
/// 0 when it has none; the batches equal the steps when only those are
/// there). Errors: counters that are not integer scalars in
/// [0, kMaxTrainSteps], fewer batches than updates, and any NaN or
/// infinite value (naming the array).
absl::Status loadCheckpoint(const std::string &path, TrainState &state);
/// loadCheckpoint's checks on arrays already read; `what` names them in
/// errors ("checkpoint 'ckpt/step-00000100.npz'").
absl::Status checkpointFromArrays(std::map<std::string, Tensor> arrays,
                                  const std::string &what, TrainState &state);
constexpr const char *kCheckpointStepKey = "nn.train.step";
constexpr const char *kCheckpointBatchesKey = "nn.train.batches";
constexpr const char *kCheckpointEpochRatesKey = "nn.train.epoch_rates";

/// Whether `name` is optimizer state ("optimizer/<slot>/<parameter>",
/// CompileOptions::trainStep) rather than a model parameter.
bool isOptimizerState(const std::string &name);

/// An error naming the first float array of `arrays` that holds a NaN or
/// an infinity (and how many), prefixed by `what`; OK otherwise.
absl::Status checkFinite(const std::map<std::string, Tensor> &arrays,
                         const std::string &what);

/// Whether a parameter of shape `from` grows into `to`: the same rank, no
/// size smaller (copy_param_mode "subset").
bool growsInto(const std::vector<int64_t> &from,
               const std::vector<int64_t> &to);

/// RETURNN's copy_param_mode "subset" for one parameter whose shape grew:
/// `trained`'s values into the leading slice of `fresh` (the parameter as
/// its op's scheme initializes it in the larger model), the rest of
/// `fresh` kept. Stacked blocks along one axis (an LSTM's four gates in
/// [4 H, ...]) are one axis here, as in RETURNN. Not growth (another
/// dtype or rank, or a smaller size) is an error naming `name`.
absl::Status growInto(const std::string &name, const Tensor &trained,
                      Tensor &fresh);

/// Overrides the parameters in `state` that `checkpoint` holds, checking
/// each one's dtype and shape against `manifest`. With `resume`, every
/// parameter of the manifest and nothing else must be there (an exact
/// continuation: the counters and a newbob run's epochs come along too);
/// otherwise only model parameters are taken (optimizer
/// state in the file is ignored and starts from `state`'s, zero when
/// fresh), parameters it lacks keep their values and names the manifest
/// does not know are errors. `what` names the checkpoint in errors.
absl::Status restoreParameters(const Manifest &manifest,
                               const TrainState &checkpoint, bool resume,
                               const std::string &what, TrainState &state);

/// How the synthetic segment task fills a model's inputs: "features"
/// [B, T, F] f32, "frame_labels" [B, T] i32 and "labels" [B, U] i32 (any
/// subset; another float or integer input is an error), the train step's
/// own scalar inputs aside.
struct SegmentBinding {
  SegmentTask task;
  /// The sequence dims of the frames and of the labels ("" when the model
  /// reads no such input).
  std::string frameDim, labelDim;
  std::vector<std::string> inputs;
};
absl::StatusOr<SegmentBinding> bindSegmentTask(const Manifest &manifest);
/// A batch of `batch` utterances for a bound model, drawn from `rng`.
RunInputs segmentBatchFor(const SegmentBinding &binding, int64_t batch,
                          std::mt19937 &rng,
                          std::vector<SegmentUtterance> *utterances = nullptr);

/// Losses summed over several runs (a dev set): the sums and normalization
/// factors add up, and the normalized value is their quotient.
struct LossTotals {
  std::vector<LossValue> losses;
  void add(const std::vector<LossValue> &batch);
};

} // namespace nn

#endif // NN_TRAIN_H
