//===- Trainer.cpp - one model's training run
//------------------------------===//

#include "training/Trainer.h"

#include "tools/common/Json.h"

#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Format.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/raw_ostream.h"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <csignal>
#include <ctime>
#include <random>

using namespace nn;
using namespace nn::training;

namespace {

std::atomic<bool> interruptRequested{false};
std::atomic<long> firstInterrupt{0};

/// Ctrl-C: finish the step, save, return. A second Ctrl-C at least two
/// seconds later ends the process at once; one sooner is the same request
/// delivered twice (timeout(1) signals the command and its process group).
void onInterrupt(int) {
  timespec now;
  clock_gettime(CLOCK_MONOTONIC, &now);
  if (!interruptRequested.exchange(true)) {
    firstInterrupt = now.tv_sec;
  } else if (now.tv_sec - firstInterrupt >= 2) {
    signal(SIGINT, SIG_DFL);
    raise(SIGINT);
  }
}

constexpr uint64_t kTrainData = 1, kDropout = 2, kDevData = 3;

std::string checkpointName(int64_t batches) {
  char name[32];
  std::snprintf(name, sizeof(name), "step-%08lld.npz", (long long)batches);
  return name;
}

/// The step-<N>.npz files of `dir`, oldest first.
std::vector<std::string> checkpointsIn(const std::string &dir) {
  std::vector<std::string> found;
  std::error_code ec;
  for (llvm::sys::fs::directory_iterator it(dir, ec), end; it != end && !ec;
       it.increment(ec)) {
    llvm::StringRef name = llvm::sys::path::filename(it->path());
    if (name.starts_with("step-") && name.ends_with(".npz"))
      found.push_back(it->path());
  }
  std::sort(found.begin(), found.end());
  return found;
}

} // namespace

bool nn::training::interrupted() { return interruptRequested; }

void nn::training::installInterruptHandler() {
  struct sigaction action = {};
  action.sa_handler = onInterrupt;
  sigemptyset(&action.sa_mask);
  sigaction(SIGINT, &action, nullptr);
}

uint64_t nn::training::streamSeed(uint64_t seed, uint64_t tag,
                                  uint64_t counter) {
  uint64_t z = seed * 0x9e3779b97f4a7c15ull + tag * 0xbf58476d1ce4e5b9ull +
               counter * 0x94d049bb133111ebull;
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  return z ^ (z >> 31);
}

std::string nn::training::lossesJson(const Manifest &manifest,
                                     const std::vector<LossValue> &losses) {
  std::string out = "{";
  for (size_t i = 0; i < losses.size(); ++i)
    out += (i ? ", " : "") + tools::jsonString(losses[i].name) + ": " +
           tools::jsonNumber(lossValue(manifest, losses[i]));
  return out + "}";
}

std::string nn::training::lossesText(const Manifest &manifest,
                                     const std::vector<LossValue> &losses) {
  std::string out;
  for (const LossValue &loss : losses) {
    char value[64];
    std::snprintf(value, sizeof(value), "%s%s %.4f", out.empty() ? "" : " ",
                  loss.name.c_str(), lossValue(manifest, loss));
    out += value;
  }
  return out;
}

//===----------------------------------------------------------------------===//
// Batches
//===----------------------------------------------------------------------===//

/// Where batches come from: the synthetic task, or a dataset in epochs.
/// Batch `n` (from 0) is always the same batch, whatever ran before.
class Trainer::BatchSource {
public:
  BatchSource(const DataOptions &data, uint64_t seed)
      : data(data), seed(seed) {}
  absl::Status setUp(const Manifest &train, const Manifest &eval);
  /// Batch `n` and whether it is the last of its epoch.
  RunInputs batch(int64_t n, bool &epochEnd);
  /// The batches of `epochs` epochs.
  int64_t batchesIn(int64_t epochs);
  /// The dev set's batches.
  std::vector<RunInputs> devSet();
  /// The utterances nn.keep left out of the training and dev data.
  int64_t leftOut() const {
    return (dataset ? dataset->leftOut() : 0) + (dev ? dev->leftOut() : 0);
  }
  int64_t frames(const RunInputs &batch) const {
    int64_t total = 0;
    auto found = batch.lengths.find(frameDim);
    if (found != batch.lengths.end())
      for (int32_t length : found->second)
        total += length;
    return total;
  }
  std::string describe(int64_t n) const {
    return dataset ? "batch " + std::to_string(n) + " of '" +
                         data.train.front() + "'"
                   : "batch " + std::to_string(n) +
                         " of the synthetic task (seed " +
                         std::to_string(seed) + ")";
  }

private:
  /// The batches of epoch `epoch` (cached: one epoch at a time).
  const std::vector<std::vector<int64_t>> &epochList(int64_t epoch);

  const DataOptions &data;
  uint64_t seed;
  SegmentBinding binding;
  std::unique_ptr<Dataset> dataset, dev;
  BatchingOptions batching;
  std::string frameDim;
  int64_t cachedEpoch = -1;
  std::vector<std::vector<int64_t>> cached;
};

absl::Status Trainer::BatchSource::setUp(const Manifest &train,
                                         const Manifest &eval) {
  if (!data.train.empty() && !data.synthetic.empty())
    return absl::InvalidArgumentError("give --data or --synthetic, not both");
  if (data.train.empty()) {
    if (data.synthetic.empty())
      return absl::InvalidArgumentError(
          "no data: give --data DIR (nn-data writes datasets) or --synthetic "
          "segments");
    if (data.synthetic != "segments")
      return absl::InvalidArgumentError("unknown synthetic task '" +
                                        data.synthetic +
                                        "' (expected segments)");
    if (!data.dev.empty())
      return absl::InvalidArgumentError(
          "--dev goes with --data; the synthetic task draws its own dev set");
    absl::StatusOr<SegmentBinding> bound = bindSegmentTask(train);
    if (!bound.ok())
      return bound.status();
    binding = *bound;
    binding.task.noise = data.noise;
    binding.task.seed = (uint32_t)seed;
    if (data.classes) {
      if (data.classes > binding.task.classes)
        return absl::InvalidArgumentError(
            "--classes " + std::to_string(data.classes) +
            " is more than the model's targets index (" +
            std::to_string(binding.task.classes) + ")");
      binding.task.classes = data.classes;
    }
    frameDim = binding.frameDim;
    return binding.task.validate();
  }
  absl::StatusOr<Dataset> loaded = Dataset::load(data.train, train);
  if (!loaded.ok())
    return loaded.status();
  dataset = std::make_unique<Dataset>(std::move(*loaded));
  frameDim = dataset->lengthDim();
  if (!data.dev.empty()) {
    absl::StatusOr<Dataset> devLoaded = Dataset::load(data.dev, eval);
    if (!devLoaded.ok())
      return devLoaded.status();
    dev = std::make_unique<Dataset>(std::move(*devLoaded));
  }
  batching.maxSequences = data.batchSize;
  batching.maxFrames = data.maxFrames;
  batching.bucket = data.bucket;
  batching.shuffle = data.shuffle;
  batching.seed = seed;
  return absl::OkStatus();
}

const std::vector<std::vector<int64_t>> &
Trainer::BatchSource::epochList(int64_t epoch) {
  if (epoch != cachedEpoch) {
    cached = nn::epochBatches(*dataset, batching, epoch);
    cachedEpoch = epoch;
  }
  return cached;
}

int64_t Trainer::BatchSource::batchesIn(int64_t epochCount) {
  if (!dataset)
    return epochCount * data.epochSteps;
  int64_t total = 0;
  for (int64_t e = 0; e < epochCount; ++e)
    total += (int64_t)epochList(e).size();
  return total;
}

RunInputs Trainer::BatchSource::batch(int64_t n, bool &epochEnd) {
  if (!dataset) {
    epochEnd = (n + 1) % data.epochSteps == 0;
    std::mt19937 rng((uint32_t)streamSeed(seed, kTrainData, n));
    return segmentBatchFor(binding, data.batchSize, rng);
  }
  // Epochs differ in their batch count (budgets cut them differently):
  // walk them from the first.
  int64_t epoch = 0, first = 0;
  while (n >= first + (int64_t)epochList(epoch).size())
    first += (int64_t)epochList(epoch++).size();
  const std::vector<std::vector<int64_t>> &list = epochList(epoch);
  epochEnd = n - first + 1 == (int64_t)list.size();
  return dataset->batch(list[n - first]);
}

std::vector<RunInputs> Trainer::BatchSource::devSet() {
  std::vector<RunInputs> batches;
  if (!dataset) {
    std::mt19937 rng((uint32_t)streamSeed(seed, kDevData, 0));
    for (unsigned b = 0; b < data.devBatches; ++b)
      batches.push_back(segmentBatchFor(binding, data.batchSize, rng));
    return batches;
  }
  if (!dev)
    return batches;
  BatchingOptions fixed = batching;
  fixed.shuffle = false;
  for (const std::vector<int64_t> &members : nn::epochBatches(*dev, fixed, 0))
    batches.push_back(dev->batch(members));
  return batches;
}

//===----------------------------------------------------------------------===//
// The run
//===----------------------------------------------------------------------===//

Trainer::Trainer(TrainOptions options) : options(std::move(options)) {}
Trainer::~Trainer() = default;

const Manifest &Trainer::trainManifest() const { return trainStep.manifest(); }
const Manifest &Trainer::evalManifest() const { return evalGraph.manifest(); }

absl::Status Trainer::compile() {
  CompileOptions step = options.compile;
  CompileOptions evaluation = options.compile;
  evaluation.grads = false;
  evaluation.training = false;
  evaluation.trainStep = false;
  evaluation.gpuCodeDir.clear();
  if (!options.emitArtifacts.empty()) {
    if (std::error_code ec =
            llvm::sys::fs::create_directories(options.emitArtifacts))
      return absl::InternalError("cannot create '" + options.emitArtifacts +
                                 "': " + ec.message());
    step.artifactPath = options.emitArtifacts + "/train-step.so";
    evaluation.artifactPath = options.emitArtifacts + "/eval.so";
  }
  step.grads = true;
  step.training = true;
  step.trainStep = true;
  absl::StatusOr<Artifact> compiled = compileFile(options.modelPath, step);
  if (!compiled.ok())
    return compiled.status();
  trainCompiled = std::make_unique<Artifact>(std::move(*compiled));
  absl::StatusOr<Artifact> eval = compileFile(options.modelPath, evaluation);
  if (!eval.ok())
    return eval.status();
  evalCompiled = std::make_unique<Artifact>(std::move(*eval));
  if (absl::Status status = Executable::load(trainCompiled->path(), trainStep);
      !status.ok())
    return status;
  return Executable::load(evalCompiled->path(), evalGraph);
}

absl::Status Trainer::setUpState() {
  const Manifest &manifest = trainStep.manifest();
  if (absl::Status status =
          initializeParameters(manifest, options.seed, trainState.parameters);
      !status.ok())
    return status;
  for (const auto &[name, tensor] : options.initialParameters)
    trainState.parameters[name] = tensor;
  if (!options.initFrom.empty()) {
    TrainState loaded;
    if (absl::Status status = loadCheckpoint(options.initFrom, loaded);
        !status.ok())
      return status;
    if (absl::Status status =
            restoreParameters(manifest, loaded, /*resume=*/false,
                              "'" + options.initFrom + "'", trainState);
        !status.ok())
      return status;
  }
  if (!options.resume.empty()) {
    std::string path = options.resume;
    if (llvm::sys::fs::is_directory(path)) {
      std::vector<std::string> found = checkpointsIn(path);
      if (found.empty())
        return absl::NotFoundError("--resume: no step-<N>.npz in '" + path +
                                   "'");
      path = found.back();
    }
    TrainState loaded;
    if (absl::Status status = loadCheckpoint(path, loaded); !status.ok())
      return status;
    if (absl::Status status = restoreParameters(
            manifest, loaded, /*resume=*/true, "'" + path + "'", trainState);
        !status.ok())
      return status;
    const OutputOptions &out = options.output;
    if (!out.json)
      llvm::errs() << out.linePrefix << "nn-train: resumed from " << path
                   << " at batch " << trainState.batches << " ("
                   << trainState.step << " updates)\n";
    else if (out.jsonEvents)
      llvm::outs() << "{" << out.jsonPrefix
                   << "\"event\": \"resumed\", \"step\": " << trainState.batches
                   << ", \"from\": " << tools::jsonString(path) << "}\n";
  }
  return absl::OkStatus();
}

absl::Status Trainer::evaluate(int64_t atBatch, bool atStart) {
  const Manifest &manifest = evalGraph.manifest();
  if (devSet.empty())
    return absl::OkStatus();
  if (absl::Status status = syncToHost(trainState); !status.ok())
    return status;
  LossTotals totals;
  for (RunInputs inputs : devSet) {
    for (const TensorInfo &info : manifest.parameters)
      inputs.parameters[info.name] = trainState.parameters.at(info.name);
    RunResult result;
    if (absl::Status status = evalGraph.run(inputs, result); !status.ok())
      return status;
    totals.add(result.losses);
  }
  (atStart ? startLosses : lastLosses) = totals.losses;
  const OutputOptions &out = options.output;
  if (out.json) {
    llvm::outs() << "{" << out.jsonPrefix
                 << "\"eval\": \"dev\", \"step\": " << atBatch
                 << ", \"losses\": " << lossesJson(manifest, totals.losses)
                 << "}\n";
    llvm::outs().flush();
  } else {
    if (out.bar)
      llvm::errs() << "\n";
    llvm::errs() << out.linePrefix << "dev "
                 << (atStart ? "before step 1"
                             : "after step " + std::to_string(atBatch))
                 << ": " << lossesText(manifest, totals.losses) << "\n";
  }
  return absl::OkStatus();
}

absl::Status Trainer::save() {
  const std::string &dir = options.saveDir;
  if (dir.empty())
    return absl::OkStatus();
  if (std::error_code ec = llvm::sys::fs::create_directories(dir))
    return absl::InternalError("cannot create '" + dir + "': " + ec.message());
  if (absl::Status status = syncToHost(trainState); !status.ok())
    return status;
  llvm::SmallString<256> path(dir);
  llvm::sys::path::append(path, checkpointName(trainState.batches));
  if (absl::Status status = saveCheckpoint(path.str().str(), trainState);
      !status.ok())
    return status;
  std::vector<std::string> found = checkpointsIn(dir);
  for (size_t i = 0; i + options.keep < found.size(); ++i)
    llvm::sys::fs::remove(found[i]);
  return absl::OkStatus();
}

void Trainer::progress(const StepReport &report, int64_t frames,
                       double seconds) {
  const Manifest &manifest = trainStep.manifest();
  const OutputOptions &out = options.output;
  if (out.json) {
    llvm::outs() << "{" << out.jsonPrefix << "\"step\": " << trainState.batches
                 << ", \"lr\": " << tools::jsonNumber(report.learningRate)
                 << ", \"grad_norm\": " << tools::jsonNumber(report.gradNorm)
                 << ", \"losses\": " << lossesJson(manifest, report.losses)
                 << ", \"frames\": " << frames
                 << ", \"applied\": " << (report.applied ? "true" : "false")
                 << "}\n";
    llvm::outs().flush();
    return;
  }
  if (out.verbose) {
    bool due = out.logEvery <= 1 || trainState.batches == 1 ||
               trainState.batches % out.logEvery == 0 || !report.applied;
    if (!due)
      return;
    llvm::errs() << out.linePrefix << "step " << trainState.batches << " lr "
                 << llvm::format("%.3g", report.learningRate) << " grad_norm "
                 << llvm::format("%.4g", report.gradNorm) << " "
                 << lossesText(manifest, report.losses) << " frames " << frames
                 << llvm::format(" (%.3f s)", seconds)
                 << (report.applied ? "" : " skipped") << "\n";
    return;
  }
  if (!out.bar)
    return;
  // The running averages since the epoch began.
  std::string averages;
  for (const LossValue &loss : epochLosses) {
    char text[64];
    std::snprintf(text, sizeof(text), " %s %.4f", loss.name.c_str(),
                  loss.sum / (double)std::max<int64_t>(epochBatches, 1));
    averages += text;
  }
  constexpr int kWidth = 24;
  int filled =
      (int)(kWidth * trainState.batches / std::max<int64_t>(totalSteps, 1));
  llvm::errs() << "\r" << out.linePrefix << "[" << std::string(filled, '=')
               << std::string(kWidth - filled, ' ') << "] "
               << trainState.batches << "/" << totalSteps << averages
               << llvm::format(" | %.0f frames/s  ",
                               epochFrames / std::max(epochSeconds, 1e-9));
}

absl::Status Trainer::run(bool &finished) {
  finished = false;
  const OutputOptions &out = options.output;
  if (options.onNonFinite != "stop" && options.onNonFinite != "skip")
    return absl::InvalidArgumentError("--on-nonfinite must be stop or skip, "
                                      "got '" +
                                      options.onNonFinite + "'");
  if (options.data.batchSize == 0 || options.data.epochSteps == 0)
    return absl::InvalidArgumentError(
        "--batch-size and --epoch-steps must be positive");
  source = std::make_unique<BatchSource>(options.data, options.seed);
  if (absl::Status status =
          source->setUp(trainStep.manifest(), evalGraph.manifest());
      !status.ok())
    return status;
  devSet = source->devSet();
  if (source->leftOut() && !out.json)
    llvm::errs() << out.linePrefix << "nn-train: " << source->leftOut()
                 << " utterances left out of the data (their '" << kKeepArray
                 << "' is 0)\n";
  if (absl::Status status = setUpState(); !status.ok())
    return status;

  totalSteps =
      options.steps ? options.steps : source->batchesIn(options.epochs);
  if (options.evaluateAtStart && trainState.batches == 0)
    if (absl::Status status = evaluate(0, /*atStart=*/true); !status.ok())
      return status;
  const Manifest &manifest = trainStep.manifest();
  while (trainState.batches < totalSteps && !interrupted()) {
    uint64_t batchNumber = trainState.batches;
    bool epochEnd = false;
    RunInputs batch = source->batch((int64_t)batchNumber, epochEnd);
    int64_t frames = source->frames(batch);
    auto start = std::chrono::steady_clock::now();
    StepReport report;
    absl::Status status = runTrainStep(
        trainStep, std::move(batch), options.schedule.at(trainState.step),
        (uint32_t)streamSeed(options.seed, kDropout, batchNumber), trainState,
        report);
    double seconds =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start)
            .count();
    if (!status.ok())
      return withContext(
          status, "step " + std::to_string(trainState.batches + 1) + ": ");
    if (!report.applied) {
      std::string what = "step " + std::to_string(trainState.batches) +
                         ": the training loss or gradient norm is not "
                         "finite (objective " +
                         std::to_string(report.objective) + ", grad_norm " +
                         std::to_string(report.gradNorm) + ") on " +
                         source->describe((int64_t)batchNumber);
      if (options.onNonFinite == "stop") {
        progress(report, frames, seconds);
        return absl::InvalidArgumentError(
            what + "; stopping (--on-nonfinite=skip skips such batches)");
      }
      ++skipped;
      if (!out.json)
        llvm::errs() << (out.bar ? "\n" : "") << out.linePrefix
                     << "nn-train: " << what << "; skipped\n";
    }
    ++epochBatches;
    epochFrames += frames;
    epochSeconds += seconds;
    for (const LossValue &loss : report.losses) {
      auto found = std::find_if(
          epochLosses.begin(), epochLosses.end(),
          [&](const LossValue &total) { return total.name == loss.name; });
      if (found == epochLosses.end()) {
        epochLosses.push_back(loss);
        epochLosses.back().sum = 0;
        found = epochLosses.end() - 1;
      }
      found->sum += lossValue(manifest, loss);
    }
    progress(report, frames, seconds);
    bool last = trainState.batches == totalSteps;
    if (epochEnd || last)
      if (absl::Status status = evaluate(trainState.batches, false);
          !status.ok())
        return status;
    if (epochEnd) {
      epochLosses.clear();
      epochFrames = epochBatches = 0;
      epochSeconds = 0;
    }
    bool checkpoint = options.saveEvery
                          ? trainState.batches % options.saveEvery == 0
                          : epochEnd;
    if (checkpoint || last)
      if (absl::Status status = save(); !status.ok())
        return status;
  }
  if (out.bar)
    llvm::errs() << "\n";
  if (interrupted()) {
    if (options.saveDir.empty())
      options.saveDir = "nn-train-interrupted";
    return save();
  }
  if (absl::Status status = syncToHost(trainState); !status.ok())
    return status;
  if (skipped && !out.json)
    llvm::errs() << out.linePrefix << "nn-train: skipped " << skipped
                 << " batches with a non-finite loss\n";
  finished = true;
  return absl::OkStatus();
}
