//===- Trainer.cpp - one model's training run
//------------------------------===//

#include "training/Trainer.h"

#include "training/TensorBoard.h"

#include "nn/DataParallel.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/StringExtras.h"
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

/// The batch count a checkpoint's name gives (step-<N>.npz), or -1 for
/// any other name.
int64_t checkpointNumber(llvm::StringRef name) {
  if (!name.consume_front("step-") || !name.consume_back(".npz") ||
      name.empty() || !llvm::all_of(name, llvm::isDigit))
    return -1;
  uint64_t number = 0;
  if (name.getAsInteger(10, number) || number > (uint64_t)kMaxTrainSteps)
    return -1;
  return (int64_t)number;
}

/// The step-<N>.npz files of `dir` (regular files, not links), oldest
/// first by N as a number: names sort as strings only while N has eight
/// digits.
std::vector<std::string> checkpointsIn(const std::string &dir) {
  std::vector<std::pair<int64_t, std::string>> found;
  std::error_code ec;
  for (llvm::sys::fs::directory_iterator it(dir, ec, /*follow=*/false), end;
       it != end && !ec; it.increment(ec)) {
    int64_t number = checkpointNumber(llvm::sys::path::filename(it->path()));
    if (number >= 0 && it->type() == llvm::sys::fs::file_type::regular_file)
      found.emplace_back(number, it->path());
  }
  std::sort(found.begin(), found.end());
  std::vector<std::string> paths;
  for (auto &[number, path] : found)
    paths.push_back(std::move(path));
  return paths;
}

} // namespace

bool nn::training::interrupted() { return interruptRequested; }

void nn::training::installInterruptHandler() {
  // A new run starts uninterrupted (a host such as the Python binding runs
  // several in one process).
  interruptRequested = false;
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

support::JsonObject
nn::training::lossesJson(const Manifest &manifest,
                         const std::vector<LossValue> &losses) {
  support::JsonObject out;
  for (const LossValue &loss : losses)
    out.add(loss.name, lossValue(manifest, loss));
  return out;
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
  /// `minSequences`: the fewest sequences a batch may have (one per rank
  /// of a data-parallel run).
  BatchSource(const DataOptions &data, uint64_t seed, int64_t minSequences)
      : data(data), seed(seed), minSequences(minSequences) {}
  absl::Status setUp(const Manifest &train, const Manifest &eval);
  /// Batch `n` and whether it is the last of its epoch.
  RunInputs batch(int64_t n, bool &epochEnd);
  /// The epoch (from 0) batch `n` belongs to.
  int64_t epochOf(int64_t n);
  /// The batches of the first epoch (epochs of a dataset differ a little:
  /// budgets cut them differently).
  int64_t firstEpochBatches();
  /// The dev set's batches.
  std::vector<RunInputs> devSet();
  /// The utterances nn.keep left out of the training and dev data.
  int64_t leftOut() const {
    return (dataset ? dataset->leftOut() : 0) + (dev ? dev->leftOut() : 0);
  }
  /// The utterances left out for having no frames.
  int64_t withoutFrames() const {
    return (dataset ? dataset->withoutFrames() : 0) +
           (dev ? dev->withoutFrames() : 0);
  }
  int64_t frames(const RunInputs &batch) const {
    int64_t total = 0;
    for (int32_t length : frameLengths(batch))
      total += length;
    return total;
  }
  /// Each sequence's frames (none when the model reads no frames).
  std::vector<int32_t> frameLengths(const RunInputs &batch) const {
    auto found = batch.lengths.find(frameDim);
    return found == batch.lengths.end() ? std::vector<int32_t>()
                                        : found->second;
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
  /// Extends epochStarts until it covers batch `n`.
  void coverBatch(int64_t n);

  const DataOptions &data;
  uint64_t seed;
  int64_t minSequences;
  SegmentBinding binding;
  std::unique_ptr<Dataset> dataset, dev;
  BatchingOptions batching;
  std::string frameDim;
  int64_t cachedEpoch = -1;
  std::vector<std::vector<int64_t>> cached;
  /// epochStarts[e]: the number of the first batch of epoch e, for the
  /// epochs seen so far (and one past the last of them), so that a batch
  /// is found without walking every epoch before it again.
  std::vector<int64_t> epochStarts{0};
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
    if (data.chunking.enabled())
      return absl::InvalidArgumentError(
          "chunking goes with --data; the synthetic task draws whole "
          "utterances");
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
  absl::StatusOr<Dataset> chunked = std::move(*loaded).chunked(data.chunking);
  if (!chunked.ok())
    return withContext(chunked.status(), "'" + data.train.front() + "': ");
  dataset = std::make_unique<Dataset>(std::move(*chunked));
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
  batching.minSequences = minSequences;
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

void Trainer::BatchSource::coverBatch(int64_t n) {
  while (n >= epochStarts.back()) {
    int64_t epoch = (int64_t)epochStarts.size() - 1;
    epochStarts.push_back(epochStarts.back() +
                          (int64_t)epochList(epoch).size());
  }
}

int64_t Trainer::BatchSource::epochOf(int64_t n) {
  if (!dataset)
    return n / data.epochSteps;
  coverBatch(n);
  return std::upper_bound(epochStarts.begin(), epochStarts.end(), n) -
         epochStarts.begin() - 1;
}

int64_t Trainer::BatchSource::firstEpochBatches() {
  return dataset ? (int64_t)epochList(0).size() : (int64_t)data.epochSteps;
}

RunInputs Trainer::BatchSource::batch(int64_t n, bool &epochEnd) {
  if (!dataset) {
    epochEnd = (n + 1) % data.epochSteps == 0;
    std::mt19937 rng((uint32_t)streamSeed(seed, kTrainData, n));
    return segmentBatchFor(binding, data.batchSize, rng);
  }
  int64_t epoch = epochOf(n), first = epochStarts[epoch];
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
FileRecorder::~FileRecorder() = default;

const Manifest &Trainer::trainManifest() const { return trainStep.manifest(); }
const Manifest &Trainer::evalManifest() const { return evalGraph.manifest(); }

absl::Status Trainer::compile() {
  CompileOptions step = options.compile;
  CompileOptions evaluation = options.compile;
  evaluation.grads = false;
  evaluation.training = false;
  evaluation.trainStep = false;
  evaluation.gpuCodeDir.clear();
  // Every rank compiles; rank 0 alone keeps the artifacts (the others
  // would write the same files while it loads them).
  bool keep = !options.emitArtifacts.empty() && reportsForRun();
  if (keep) {
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
  if (options.communicator && options.communicator->size() > 1)
    step.optimizer.dataParallel = true;
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
  // The other ranks take rank 0's state: only rank 0 reads the files
  // (another machine need not see them).
  if (!reportsForRun())
    return broadcastState(*options.communicator, manifest, trainState);
  for (const auto &[name, tensor] : options.initialParameters) {
    Tensor &parameter = trainState.parameters[name];
    if (options.growInitial && parameter.shape() != tensor.shape()) {
      if (absl::Status status = growInto(name, tensor, parameter); !status.ok())
        return status;
      continue;
    }
    parameter = tensor;
  }
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
      llvm::outs() << support::JsonObject(out.jsonFields)
                          .add("event", "resumed")
                          .add("step", trainState.batches)
                          .add("from", path)
                   << "\n";
  }
  if (rankCount > 1)
    return broadcastState(*options.communicator, manifest, trainState);
  return absl::OkStatus();
}

absl::Status Trainer::evaluate(int64_t atBatch, bool atStart) {
  const Manifest &manifest = evalGraph.manifest();
  if (devSet.empty())
    return absl::OkStatus();
  if (absl::Status status = syncToHost(trainState); !status.ok())
    return status;
  LossTotals totals;
  // A data-parallel run shares the dev batches out by number and sums
  // their losses.
  for (size_t b = rank; b < devSet.size(); b += rankCount) {
    RunInputs inputs = devSet[b];
    for (const TensorInfo &info : manifest.parameters)
      inputs.parameters[info.name] = trainState.parameters.at(info.name);
    RunResult result;
    if (absl::Status status = evalGraph.run(inputs, result); !status.ok())
      return withContext(status, "dev batch " + std::to_string(b + 1) + ": ");
    totals.add(result.losses);
  }
  if (rankCount > 1)
    if (absl::Status status =
            allReduceLosses(*options.communicator, manifest, totals.losses);
        !status.ok())
      return status;
  (atStart ? startLosses : lastLosses) = totals.losses;
  if (!reportsForRun())
    return absl::OkStatus();
  if (events) {
    std::vector<std::pair<std::string, double>> values;
    for (const LossValue &loss : totals.losses)
      values.emplace_back("dev/" + loss.name, lossValue(manifest, loss));
    if (absl::Status status = events->scalars(atBatch, values); !status.ok())
      return status;
  }
  const OutputOptions &out = options.output;
  if (out.json) {
    llvm::outs() << support::JsonObject(out.jsonFields)
                        .add("eval", "dev")
                        .add("step", atBatch)
                        .add("losses", lossesJson(manifest, totals.losses))
                 << "\n";
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
  if (dir.empty() || !reportsForRun())
    return absl::OkStatus();
  if (std::error_code ec = llvm::sys::fs::create_directories(dir))
    return absl::InternalError("cannot create '" + dir + "': " + ec.message());
  if (absl::Status status = syncToHost(trainState); !status.ok())
    return status;
  llvm::SmallString<256> path(dir);
  llvm::sys::path::append(path, checkpointName(trainState.batches));
  if (options.files)
    if (absl::Status status = options.files->record(path.str().str());
        !status.ok())
      return status;
  if (absl::Status status = saveCheckpoint(path.str().str(), trainState);
      !status.ok())
    return status;
  // The directory holds this run's checkpoints only (checkSaveDir), so
  // the oldest by batch count go; the newest, just written, always stays.
  std::vector<std::string> found = checkpointsIn(dir);
  for (size_t i = 0; i + std::max(options.keep, 1u) < found.size(); ++i)
    if (absl::Status status = removeFile(found[i]); !status.ok())
      return status;
  return absl::OkStatus();
}

absl::Status Trainer::removeFile(const std::string &path) {
  if (options.files)
    return options.files->remove(path);
  if (std::error_code ec = llvm::sys::fs::remove(path))
    return absl::InternalError("cannot remove '" + path + "': " + ec.message());
  return absl::OkStatus();
}

absl::Status Trainer::checkSaveDir() {
  const std::string &dir = options.saveDir;
  if (options.keep == 0)
    return absl::InvalidArgumentError(
        "--keep 0 would delete every checkpoint, the last one too; keep at "
        "least 1");
  for (const char *key :
       {kCheckpointStepKey, kCheckpointBatchesKey, kCheckpointEpochRatesKey})
    for (const TensorInfo &info : trainStep.manifest().parameters)
      if (info.name == key)
        return absl::InvalidArgumentError(
            "graph @" + trainStep.manifest().graph +
            " has a parameter named '" + key +
            "', the key checkpoints keep their counters under; rename it");
  // Rank 0 alone writes checkpoints, so it alone looks at the directory.
  if (dir.empty() || !reportsForRun())
    return absl::OkStatus();
  llvm::sys::fs::file_status status;
  if (!llvm::sys::fs::status(dir, status, /*follow=*/true)) {
    if (status.type() != llvm::sys::fs::file_type::directory_file)
      return absl::InvalidArgumentError("--save '" + dir +
                                        "' exists and is not a directory");
  }
  std::vector<std::string> found = checkpointsIn(dir);
  if (found.empty())
    return absl::OkStatus();
  // Checkpoints of another run: a fresh run must neither delete them
  // (retention) nor leave them for a later --resume to continue.
  bool resumingHere = false;
  if (!options.resume.empty()) {
    std::string from = options.resume;
    if (!llvm::sys::fs::is_directory(from))
      from = llvm::sys::path::parent_path(from).str();
    if (from.empty())
      from = ".";
    resumingHere = llvm::sys::fs::equivalent(from, dir);
  }
  if (!resumingHere)
    return absl::FailedPreconditionError(
        "--save '" + dir + "' holds checkpoints of another run (" +
        llvm::sys::path::filename(found.back()).str() +
        (found.size() > 1 ? " and " + std::to_string(found.size() - 1) + " more"
                          : std::string()) +
        "): --resume " + dir +
        " continues that run; or save to another directory");
  return absl::OkStatus();
}

absl::Status Trainer::logScalars(const StepReport &report, int64_t frames,
                                 double seconds) {
  if (!events)
    return absl::OkStatus();
  std::vector<std::pair<std::string, double>> values;
  for (const LossValue &loss : report.losses)
    values.emplace_back("train/" + loss.name,
                        lossValue(trainStep.manifest(), loss));
  values.emplace_back("train/lr", report.learningRate);
  values.emplace_back("train/grad_norm", report.gradNorm);
  if (seconds > 0)
    values.emplace_back("train/frames_per_second", frames / seconds);
  return events->scalars(trainState.batches, values);
}

void Trainer::progress(const StepReport &report, int64_t frames,
                       double seconds) {
  const Manifest &manifest = trainStep.manifest();
  const OutputOptions &out = options.output;
  if (out.json) {
    llvm::outs() << support::JsonObject(out.jsonFields)
                        .add("step", trainState.batches)
                        .add("lr", report.learningRate)
                        .add("grad_norm", report.gradNorm)
                        .add("losses", lossesJson(manifest, report.losses))
                        .add("frames", frames)
                        .add("applied", report.applied)
                 << "\n";
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
  int filled = (int)std::min<int64_t>(
      kWidth, kWidth * trainState.batches / std::max<int64_t>(totalSteps, 1));
  llvm::errs() << "\r" << out.linePrefix << "[" << std::string(filled, '=')
               << std::string(kWidth - filled, ' ') << "] "
               << trainState.batches << "/" << totalSteps << averages
               << llvm::format(" | %.0f frames/s  ",
                               epochFrames / std::max(epochSeconds, 1e-9));
}

absl::Status nn::training::checkNewbob(const LearningRateSchedule &schedule,
                                       const Manifest &eval, bool hasDev) {
  if (schedule.decay != LearningRateSchedule::Decay::newbob)
    return absl::OkStatus();
  if (!hasDev)
    return absl::InvalidArgumentError(
        "newbob decides each epoch's rate from the dev score: give dev "
        "data (--dev, --dev-batches with --synthetic, a stage's reads.dev)");
  const std::string &score = schedule.newbob.score;
  if (score.empty())
    return absl::OkStatus();
  std::string names;
  for (const LossInfo &loss : eval.losses) {
    if (loss.name == score)
      return absl::OkStatus();
    names += (names.empty() ? "" : ", ") + loss.name;
  }
  return absl::InvalidArgumentError("newbob: score '" + score +
                                    "' is not a dev loss of graph @" +
                                    eval.graph + " (" + names + ")");
}

double Trainer::epochRate(int64_t epoch) {
  std::vector<EpochRate> &history = trainState.epochRates;
  // A checkpoint of another schedule has no epochs: those before this one
  // count as unscored (and are not reported), so newbob starts at its
  // initial rate.
  while ((int64_t)history.size() <= epoch) {
    NewbobDecision decision =
        newbobNextRate(options.schedule.newbob, options.schedule.peak, history);
    history.push_back({decision.rate, false, 0.0});
    if ((int64_t)history.size() <= epoch || !reportsForRun())
      continue;
    const OutputOptions &out = options.output;
    int64_t number = (int64_t)history.size();
    if (out.json) {
      support::JsonObject line(out.jsonFields);
      line.add("event", "learning_rate")
          .add("epoch", number)
          .add("lr", decision.rate)
          .add("decision", toString(decision.kind));
      if (!std::isnan(decision.meanRelativeError))
        line.add("mean_relative_error", decision.meanRelativeError);
      llvm::outs() << line << "\n";
    } else {
      llvm::errs() << (out.bar ? "\n" : "") << out.linePrefix
                   << "nn-train: epoch " << number << ": learning rate "
                   << decision.rate << " (" << toString(decision.kind);
      if (!std::isnan(decision.meanRelativeError))
        llvm::errs() << ", mean relative error " << decision.meanRelativeError;
      llvm::errs() << ")\n";
    }
  }
  return history[epoch].rate;
}

void Trainer::scoreEpoch(int64_t epoch) {
  const Manifest &manifest = evalGraph.manifest();
  const std::string &name = options.schedule.newbob.score;
  double score = 0;
  for (const LossValue &loss : lastLosses)
    if (name.empty() ? !loss.asError : loss.name == name)
      score += (name.empty() ? loss.scale : 1.0) * lossValue(manifest, loss);
  EpochRate &entry = trainState.epochRates.at(epoch);
  entry.scored = true;
  entry.score = score;
}

absl::StatusOr<RunInputs> Trainer::ownPart(RunInputs batch, int64_t &first) {
  first = 0;
  if (rankCount < 2)
    return batch;
  std::vector<int32_t> lengths = source->frameLengths(batch);
  if (lengths.empty()) {
    // No frames to balance: the sequences alike.
    for (const auto &[name, tensor] : batch.inputs)
      for (const TensorInfo &info : trainStep.manifest().inputs)
        if (info.name == name && !info.axes.empty() &&
            info.axes.front().dim == batchDim && lengths.empty())
          lengths.assign(tensor.shape().front(), 1);
  }
  auto [begin, end] = splitBatch(lengths, rankCount)[rank];
  if (begin == end)
    return absl::InvalidArgumentError(
        "it has " + std::to_string(lengths.size()) + " sequences for " +
        std::to_string(rankCount) +
        " ranks; every rank trains on a part of each batch (the training "
        "data needs at least one sequence per rank)");
  first = begin;
  return sliceBatch(trainStep.manifest(), batch, batchDim, begin, end);
}

absl::Status Trainer::stopRequested(bool &stop) {
  stop = interrupted();
  if (rankCount < 2)
    return absl::OkStatus();
  double any = stop ? 1.0 : 0.0;
  if (absl::Status status =
          options.communicator->allReduceSum(&any, &any, 1, DType::f64);
      !status.ok())
    return status;
  stop = any > 0;
  return absl::OkStatus();
}

absl::Status Trainer::run(bool &finished) {
  finished = false;
  rankCount = options.communicator ? options.communicator->size() : 1;
  rank = options.communicator ? options.communicator->rank() : 0;
  if (Communicator *step = stepCommunicator())
    collectivesBefore = step->stats();
  // The compiled step sums over these ranks (nn.all_reduce).
  CurrentCommunicator scope(rankCount > 1 ? stepCommunicator() : nullptr);
  if (!reportsForRun()) {
    // Rank 0 reports for the run.
    options.output.json = options.output.verbose = options.output.bar = false;
    options.tensorboardDir.clear();
  }
  if (rankCount > 1) {
    absl::StatusOr<std::string> dim = inputBatchDim(trainStep.manifest());
    if (!dim.ok())
      return dim.status();
    batchDim = *dim;
  }
  const OutputOptions &out = options.output;
  if (options.onNonFinite != "stop" && options.onNonFinite != "skip")
    return absl::InvalidArgumentError("--on-nonfinite must be stop or skip, "
                                      "got '" +
                                      options.onNonFinite + "'");
  if (options.data.batchSize == 0 || options.data.epochSteps == 0)
    return absl::InvalidArgumentError(
        "--batch-size and --epoch-steps must be positive");
  if (options.data.batchSize < (unsigned)rankCount)
    return absl::InvalidArgumentError(
        "--batch-size " + std::to_string(options.data.batchSize) + " for " +
        std::to_string(rankCount) +
        " ranks: every rank trains on a part of each batch, at least one "
        "sequence");
  source = std::make_unique<BatchSource>(options.data, options.seed, rankCount);
  if (absl::Status status =
          source->setUp(trainStep.manifest(), evalGraph.manifest());
      !status.ok())
    return status;
  devSet = source->devSet();
  if (source->leftOut() && !out.json && reportsForRun())
    llvm::errs() << out.linePrefix << "nn-train: " << source->leftOut()
                 << " utterances left out of the data (their '" << kKeepArray
                 << "' is 0)\n";
  if (source->withoutFrames() && !out.json && reportsForRun())
    llvm::errs() << out.linePrefix << "nn-train: " << source->withoutFrames()
                 << " utterances without frames left out of the data\n";
  if (options.steps < 0 || options.steps > kMaxTrainSteps)
    return absl::InvalidArgumentError(
        "--steps " + std::to_string(options.steps) + " is outside [0, " +
        std::to_string(kMaxTrainSteps) + "], the batches a run counts");
  // An epoch count whose batches no run can count is an error now, not
  // after a first epoch (or, walking the epochs, never).
  int64_t perEpoch = source->firstEpochBatches();
  if (!options.steps &&
      (options.epochs < 1 ||
       options.epochs > kMaxTrainSteps / std::max<int64_t>(perEpoch, 1)))
    return absl::InvalidArgumentError(
        "--epochs " + std::to_string(options.epochs) + " of " +
        std::to_string(perEpoch) + " batches each is outside [1, " +
        std::to_string(kMaxTrainSteps) + "] batches, what a run counts");
  if (absl::Status status = checkSaveDir(); !status.ok())
    return status;
  if (absl::Status status =
          checkNewbob(options.schedule, evalGraph.manifest(), !devSet.empty());
      !status.ok())
    return withContext(status, "--lr: ");
  if (absl::Status status = setUpState(); !status.ok())
    return status;
  const bool newbob =
      options.schedule.decay == LearningRateSchedule::Decay::newbob;

  // Epochs differ a little in their batch count: the bar's total is the
  // first epoch's count times the epochs.
  totalSteps = options.steps ? options.steps : options.epochs * perEpoch;
  auto finishedAt = [&](int64_t batches) {
    return options.steps ? batches >= options.steps
                         : source->epochOf(batches) >= options.epochs;
  };
  const int64_t firstBatch = trainState.batches;
  if (!options.tensorboardDir.empty()) {
    absl::StatusOr<std::unique_ptr<EventFileWriter>> writer =
        EventFileWriter::create(options.tensorboardDir);
    if (!writer.ok())
      return writer.status();
    events = std::move(*writer);
  }
  if (options.evaluateAtStart && trainState.batches == 0)
    if (absl::Status status = evaluate(0, /*atStart=*/true); !status.ok())
      return status;
  const Manifest &manifest = trainStep.manifest();
  bool stop = false;
  while (!finishedAt(trainState.batches)) {
    if (absl::Status status = stopRequested(stop); !status.ok())
      return status;
    if (stop)
      break;
    uint64_t batchNumber = trainState.batches;
    bool epochEnd = false;
    RunInputs whole = source->batch((int64_t)batchNumber, epochEnd);
    int64_t frames = source->frames(whole);
    int64_t firstSequence = 0;
    absl::StatusOr<RunInputs> batch = ownPart(std::move(whole), firstSequence);
    if (!batch.ok())
      return withContext(batch.status(),
                         source->describe((int64_t)batchNumber) + ": ");
    int64_t epoch = source->epochOf((int64_t)batchNumber);
    double rate = newbob ? epochRate(epoch) : 0.0;
    auto start = std::chrono::steady_clock::now();
    StepReport report;
    absl::Status status =
        runTrainStep(trainStep, std::move(*batch),
                     options.schedule.at(trainState.step, rate),
                     (uint32_t)streamSeed(options.seed, kDropout, batchNumber),
                     trainState, report, firstSequence);
    double seconds =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start)
            .count();
    if (!status.ok())
      return withContext(
          status, "step " + std::to_string(trainState.batches + 1) + ": ");
    if (!report.applied) {
      std::string what =
          "step " + std::to_string(trainState.batches) +
          ": the training loss, the gradient norm or the updated "
          "parameters are not finite (objective " +
          std::to_string(report.objective) + ", grad_norm " +
          std::to_string(report.gradNorm) + ", updated_norm " +
          std::to_string(report.updatedNorm) + ") on " +
          source->describe((int64_t)batchNumber);
      if (options.onNonFinite == "stop") {
        progress(report, frames, seconds);
        return absl::InvalidArgumentError(
            what + "; stopping (--on-nonfinite=skip skips such batches)");
      }
      ++skipped;
      if (!out.json && reportsForRun())
        llvm::errs() << (out.bar ? "\n" : "") << out.linePrefix
                     << "nn-train: " << what << "; skipped\n";
    }
    ++epochBatches;
    epochFrames += frames;
    epochSeconds += seconds;
    totalStepSeconds += seconds;
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
    if (absl::Status status = logScalars(report, frames, seconds); !status.ok())
      return status;
    bool last = finishedAt(trainState.batches);
    if (epochEnd || last) {
      if (absl::Status status = evaluate(trainState.batches, false);
          !status.ok())
        return status;
      // A run that ends inside an epoch scores it too; resumed, the
      // epoch's end scores it again.
      if (newbob)
        scoreEpoch(epoch);
    }
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
  // A single process also stops for Ctrl-C during its last step, as it
  // always did; ranks stop on the request they agreed on.
  if (stop || (rankCount < 2 && interrupted())) {
    // Without --save, a directory of its own: never one holding another
    // run's checkpoints, which retention would delete.
    for (int k = 1; options.saveDir.empty(); ++k) {
      std::string dir = "nn-train-interrupted" +
                        (k == 1 ? std::string() : "-" + std::to_string(k));
      if (checkpointsIn(dir).empty() && !llvm::sys::fs::is_regular_file(dir))
        options.saveDir = dir;
    }
    return save();
  }
  if (absl::Status status = syncToHost(trainState); !status.ok())
    return status;
  if (rankCount > 1 && reportsForRun() && !out.json) {
    // What the steps spent in collectives, waiting for the slowest rank
    // included: the cost of running data-parallel (docs/distributed.md).
    // This run's: a stage file's train stages share one communicator.
    CollectiveStats spent = stepCommunicator()->stats();
    spent.calls -= collectivesBefore.calls;
    spent.bytes -= collectivesBefore.bytes;
    spent.seconds -= collectivesBefore.seconds;
    spent.overlappedSeconds -= collectivesBefore.overlappedSeconds;
    llvm::errs() << out.linePrefix
                 << llvm::format("nn-train: %d ranks; rank 0 spent %.3f s of "
                                 "%.3f s of steps in %lld all-reduces of "
                                 "%.1f MB (%.1f%%)\n",
                                 rankCount, spent.seconds, totalStepSeconds,
                                 (long long)spent.calls, spent.bytes / 1e6,
                                 100 * spent.seconds /
                                     std::max(totalStepSeconds, 1e-9));
    // Sums that overlapped the backward (--all-reduce-overlap) ran longer
    // than the step waited for them.
    if (spent.overlappedSeconds > 0)
      llvm::errs() << out.linePrefix
                   << llvm::format("nn-train: the all-reduces ran %.3f s more "
                                   "beside the steps' own work\n",
                                   spent.overlappedSeconds);
  }
  if (skipped && !out.json && reportsForRun())
    llvm::errs() << out.linePrefix << "nn-train: skipped " << skipped
                 << " batches with a non-finite loss\n";
  // A run that skipped every batch trained nothing: saying "done" would
  // hand the next stage (or the user) an untrained model.
  if (skipped > 0 && skipped == trainState.batches - firstBatch)
    return absl::InvalidArgumentError(
        "every one of the " + std::to_string(skipped) +
        " batches of this run was skipped (a non-finite loss, gradient norm "
        "or update), so the parameters did not change; lower the learning "
        "rate or check the data");
  finished = true;
  return absl::OkStatus();
}
