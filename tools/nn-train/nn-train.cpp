//===- nn-train.cpp - train an nn model -----------------------------------===//
//
//   nn-train model.mlir --synthetic segments --steps 200 --seed 1 --json
//   nn-train model.mlir --synthetic segments --epochs 5 --save ckpt/
//   nn-train model.mlir --synthetic segments --steps 500 --resume ckpt/
//   nn-train model.mlir --data train/ --dev dev.npz --epochs 10 \
//            --batch-size 32 --max-frames 20000
//
// Compiles the model twice: one train step (forward, backward and the
// optimizer update in one artifact, CompileOptions::trainStep) and one
// evaluation graph for the dev set. Each step's batch and dropout seed
// follow from (--seed, batch number) alone, so a resumed run continues
// exactly where the checkpoint left off. docs/training.md.
//
//===----------------------------------------------------------------------===//

#include "nn/Compiler.h"
#include "nn/Dataset.h"
#include "nn/LearningRate.h"
#include "nn/Runtime.h"
#include "nn/Train.h"
#include "tools/common/Json.h"

#include "llvm/Support/CommandLine.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Format.h"
#include "llvm/Support/InitLLVM.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/raw_ostream.h"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <csignal>
#include <ctime>
#include <random>
#include <unistd.h>

namespace cl = llvm::cl;

static cl::OptionCategory modelCategory("Model and compilation");
static cl::OptionCategory dataCategory("Data");
static cl::OptionCategory trainCategory("Training");
static cl::OptionCategory checkpointCategory("Checkpoints");
static cl::OptionCategory outputCategory("Output");

static cl::opt<std::string> modelPath(cl::Positional, cl::Required,
                                      cl::desc("<model.mlir>"),
                                      cl::cat(modelCategory));
static cl::opt<std::string> entry("entry",
                                  cl::desc("Graph to train (default: the one "
                                           "graph no other graph calls)"),
                                  cl::cat(modelCategory));
static cl::opt<bool> noPack("no-pack",
                            cl::desc("Do not pack loss tails (padded run)"),
                            cl::cat(modelCategory));
static cl::opt<unsigned> numThreads(
    "num-threads", cl::init(0),
    cl::desc("Threads for generated loops and BLAS together (0: each "
             "library's default, all cores)"),
    cl::cat(modelCategory));
static cl::opt<bool> noFuseLossTail(
    "no-fuse-loss-tail",
    cl::desc("Do not fuse linear -> (log_softmax ->) cross_entropy into one "
             "op (which never holds the logits)"),
    cl::cat(modelCategory));
static cl::opt<std::string> lossTailBackward(
    "loss-tail-backward", cl::init("sweep"),
    cl::desc("The fused loss tail's gradient: sweep (with the forward) or "
             "recompute (the logits again)"),
    cl::cat(modelCategory));
static cl::opt<std::string> target("target", cl::init("cpu"),
                                   cl::desc("Target: cpu, or cuda"),
                                   cl::cat(modelCategory));
static cl::opt<std::string> gpuChip("gpu-chip", cl::init("sm_90"),
                                    cl::desc("cuda: SM architecture"),
                                    cl::cat(modelCategory));
static cl::opt<std::string>
    emitArtifacts("emit-artifacts",
                  cl::desc("Keep the compiled train step and evaluation "
                           "graph as DIR/train-step.so and DIR/eval.so "
                           "(nn-exec --train runs the first)"),
                  cl::cat(modelCategory));
static cl::opt<std::string>
    gpuCodeDir("emit-gpu-code",
               cl::desc("cuda: write each kernel of the train step to this "
                        "directory"),
               cl::cat(modelCategory));
static cl::opt<bool>
    compileOnly("compile-only",
                cl::desc("Compile, list the train step's kernels (cuda) and "
                         "stop"),
                cl::cat(modelCategory));

static cl::opt<std::string>
    dataPath("data",
             cl::desc("Training data: a dataset shard (.npz) or a directory "
                      "of shards (nn-data writes them)"),
             cl::cat(dataCategory));
static cl::opt<std::string>
    devPath("dev", cl::desc("Dev data, evaluated after each epoch"),
            cl::cat(dataCategory));
static cl::opt<std::string>
    synthetic("synthetic",
              cl::desc("Train on a synthetic task: 'segments' (random label "
                       "sequences rendered as noisy segments; the model's "
                       "inputs must be features, frame_labels and/or labels)"),
              cl::cat(dataCategory));
static cl::opt<unsigned> batchSize("batch-size", cl::init(16),
                                   cl::desc("Sequences per batch (at most, "
                                            "with --data)"),
                                   cl::cat(dataCategory));
static cl::opt<unsigned>
    maxFrames("max-frames", cl::init(0),
              cl::desc("--data: at most this many padded frames (sequences x "
                       "longest) per batch; 0: no frame budget"),
              cl::cat(dataCategory));
static cl::opt<bool>
    noBucket("no-bucket",
             cl::desc("--data: do not batch utterances of similar length "
                      "together"),
             cl::cat(dataCategory));
static cl::opt<bool> noShuffle("no-shuffle",
                               cl::desc("--data: keep the file order"),
                               cl::cat(dataCategory));
static cl::opt<double>
    noise("noise", cl::init(0.5),
          cl::desc("segments: per-feature noise (relative to the class "
                   "prototypes' spread)"),
          cl::cat(dataCategory));
static cl::opt<unsigned> taskClasses(
    "classes", cl::init(0),
    cl::desc("--synthetic: use only classes 0..N-1 (0 silence) of those the "
             "model's targets index (default: all of them)"),
    cl::cat(dataCategory));
static cl::opt<unsigned>
    devBatches("dev-batches", cl::init(4),
               cl::desc("--synthetic: batches in the dev set"),
               cl::cat(dataCategory));

static cl::opt<unsigned>
    steps("steps", cl::init(0),
          cl::desc("Batches to train on (default: --epochs x --epoch-steps)"),
          cl::cat(trainCategory));
static cl::opt<unsigned> epochs("epochs", cl::init(1),
                                cl::desc("Epochs (with --epoch-steps)"),
                                cl::cat(trainCategory));
static cl::opt<unsigned>
    epochSteps("epoch-steps", cl::init(100),
               cl::desc("--synthetic: batches per epoch (synthetic data has "
                        "no natural epoch; the dev set is evaluated after "
                        "each)"),
               cl::cat(trainCategory));
static cl::opt<unsigned> seed("seed", cl::init(0),
                              cl::desc("Seeds the initial parameters, the "
                                       "data and dropout"),
                              cl::cat(trainCategory));
static cl::opt<std::string> optimizer("optimizer", cl::init("adam"),
                                      cl::desc("sgd, adam or adamw"),
                                      cl::cat(trainCategory));
static cl::opt<std::string> lr(
    "lr", cl::init("constant:peak=1e-3"),
    cl::desc("Learning-rate schedule DECAY[:key=value,...]: constant, "
             "linear, cosine or inverse_sqrt with peak, final, warmup, total "
             "(e.g. cosine:peak=1e-3,warmup=100,total=2000)"),
    cl::cat(trainCategory));
static cl::opt<double> momentum("momentum", cl::init(0.0),
                                cl::desc("sgd: momentum"),
                                cl::cat(trainCategory));
static cl::opt<bool> nesterov("nesterov", cl::desc("sgd: Nesterov momentum"),
                              cl::cat(trainCategory));
static cl::opt<double> beta1("beta1", cl::init(0.9), cl::desc("adam(w)"),
                             cl::cat(trainCategory));
static cl::opt<double> beta2("beta2", cl::init(0.999), cl::desc("adam(w)"),
                             cl::cat(trainCategory));
static cl::opt<double> epsilon("epsilon", cl::init(1e-8), cl::desc("adam(w)"),
                               cl::cat(trainCategory));
static cl::opt<double>
    weightDecay("weight-decay", cl::init(0.0),
                cl::desc("L2 coefficient (sgd, adam) or decoupled decay "
                         "(adamw)"),
                cl::cat(trainCategory));
static cl::opt<double>
    clipNorm("clip-norm", cl::init(0.0),
             cl::desc("Clip gradients to this global norm (0: off)"),
             cl::cat(trainCategory));
static cl::opt<std::string> onNonFinite(
    "on-nonfinite", cl::init("stop"),
    cl::desc("A NaN or infinite training loss or gradient norm: 'stop' "
             "(naming the step and batch) or 'skip' the batch (counted)"),
    cl::cat(trainCategory));

static cl::opt<std::string>
    saveDir("save",
            cl::desc("Write checkpoints (step-<N>.npz) to this directory"),
            cl::cat(checkpointCategory));
static cl::opt<unsigned>
    saveEvery("save-every", cl::init(0),
              cl::desc("Checkpoint every N batches (default: each epoch); "
                       "always at the end"),
              cl::cat(checkpointCategory));
static cl::opt<unsigned> keep("keep", cl::init(3),
                              cl::desc("Keep the last K checkpoints"),
                              cl::cat(checkpointCategory));
static cl::opt<std::string>
    resume("resume",
           cl::desc("Continue from a checkpoint: a file, or the latest "
                    "step-<N>.npz of a directory"),
           cl::cat(checkpointCategory));
static cl::opt<std::string>
    initFrom("init-from",
             cl::desc("Start from the parameters of this .npz (others are "
                      "initialized fresh; optimizer state starts at zero)"),
             cl::cat(checkpointCategory));

static cl::opt<bool>
    json("json",
         cl::desc("Print one JSON object per step (step, lr, grad_norm, "
                  "losses) and one per dev evaluation to stdout"),
         cl::cat(outputCategory));
static cl::opt<bool> verbose("verbose",
                             cl::desc("Print one plain line per step"),
                             cl::cat(outputCategory));
static cl::opt<unsigned>
    logEvery("log-every", cl::init(1),
             cl::desc("--verbose: a line every N steps (and the first)"),
             cl::cat(outputCategory));

namespace {

std::atomic<bool> interrupted{false};
std::atomic<long> firstInterrupt{0};

/// Ctrl-C: finish the step, save, exit. A second Ctrl-C at least two
/// seconds later ends the process at once; one sooner is the same request
/// delivered twice (timeout(1) signals the command and its process group).
void onInterrupt(int) {
  timespec now;
  clock_gettime(CLOCK_MONOTONIC, &now);
  if (!interrupted.exchange(true)) {
    firstInterrupt = now.tv_sec;
  } else if (now.tv_sec - firstInterrupt >= 2) {
    signal(SIGINT, SIG_DFL);
    raise(SIGINT);
  }
}

int fail(const absl::Status &status) {
  llvm::errs() << "nn-train: " << std::string(status.message()) << "\n";
  return 1;
}

/// A 64-bit mix of the run's seed, a stream tag and a counter: the seed of
/// one batch's data or dropout mask.
uint64_t streamSeed(uint64_t seed, uint64_t tag, uint64_t counter) {
  uint64_t z = seed * 0x9e3779b97f4a7c15ull + tag * 0xbf58476d1ce4e5b9ull +
               counter * 0x94d049bb133111ebull;
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  return z ^ (z >> 31);
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

/// Loss name -> the value training used, as a JSON object.
std::string lossesJson(const nn::Manifest &manifest,
                       const std::vector<nn::LossValue> &losses) {
  std::string out = "{";
  for (size_t i = 0; i < losses.size(); ++i)
    out += (i ? ", " : "") + nn::tools::jsonString(losses[i].name) + ": " +
           nn::tools::jsonNumber(nn::lossValue(manifest, losses[i]));
  return out + "}";
}

std::string lossesText(const nn::Manifest &manifest,
                       const std::vector<nn::LossValue> &losses) {
  std::string out;
  for (const nn::LossValue &loss : losses) {
    char value[64];
    std::snprintf(value, sizeof(value), " %s %.4f", loss.name.c_str(),
                  nn::lossValue(manifest, loss));
    out += value;
  }
  return out;
}

/// Where batches come from: the synthetic task, or a dataset in epochs.
/// Batch `n` (from 0) is always the same batch, whatever ran before.
class BatchSource {
public:
  absl::Status setUp(const nn::Manifest &train, const nn::Manifest &eval);
  /// Batch `n` and whether it is the last of its epoch.
  nn::RunInputs batch(int64_t n, bool &epochEnd);
  /// The batches of `epochs` epochs.
  int64_t batchesIn(int64_t epochs);
  /// The dev set's batches.
  std::vector<nn::RunInputs> devSet();
  int64_t frames(const nn::RunInputs &batch) const {
    int64_t total = 0;
    auto found = batch.lengths.find(frameDim);
    if (found != batch.lengths.end())
      for (int32_t length : found->second)
        total += length;
    return total;
  }
  std::string describe(int64_t n) const {
    return dataset ? "batch " + std::to_string(n) + " of '" + dataPath + "'"
                   : "batch " + std::to_string(n) +
                         " of the synthetic task (seed " +
                         std::to_string(seed) + ")";
  }

private:
  /// The batches of epoch `epoch` (cached: one epoch at a time).
  const std::vector<std::vector<int64_t>> &epochList(int64_t epoch);

  nn::SegmentBinding binding;
  std::unique_ptr<nn::Dataset> dataset, dev;
  nn::BatchingOptions batching;
  std::string frameDim;
  int64_t cachedEpoch = -1;
  std::vector<std::vector<int64_t>> cached;
};

absl::Status BatchSource::setUp(const nn::Manifest &train,
                                const nn::Manifest &eval) {
  if (!dataPath.empty() && !synthetic.empty())
    return absl::InvalidArgumentError("give --data or --synthetic, not both");
  if (dataPath.empty()) {
    if (synthetic.empty())
      return absl::InvalidArgumentError(
          "no data: give --data DIR (nn-data writes datasets) or --synthetic "
          "segments");
    if (synthetic != "segments")
      return absl::InvalidArgumentError("unknown synthetic task '" + synthetic +
                                        "' (expected segments)");
    if (!devPath.empty())
      return absl::InvalidArgumentError(
          "--dev goes with --data; the synthetic task draws its own dev set");
    absl::StatusOr<nn::SegmentBinding> bound = nn::bindSegmentTask(train);
    if (!bound.ok())
      return bound.status();
    binding = *bound;
    binding.task.noise = noise;
    binding.task.seed = seed;
    if (taskClasses) {
      if (taskClasses > binding.task.classes)
        return absl::InvalidArgumentError(
            "--classes " + std::to_string(taskClasses) +
            " is more than the model's targets index (" +
            std::to_string(binding.task.classes) + ")");
      binding.task.classes = taskClasses;
    }
    frameDim = binding.frameDim;
    return binding.task.validate();
  }
  absl::StatusOr<nn::Dataset> loaded = nn::Dataset::load(dataPath, train);
  if (!loaded.ok())
    return loaded.status();
  dataset = std::make_unique<nn::Dataset>(std::move(*loaded));
  frameDim = dataset->lengthDim();
  if (!devPath.empty()) {
    absl::StatusOr<nn::Dataset> devLoaded = nn::Dataset::load(devPath, eval);
    if (!devLoaded.ok())
      return devLoaded.status();
    dev = std::make_unique<nn::Dataset>(std::move(*devLoaded));
  }
  batching.maxSequences = batchSize;
  batching.maxFrames = maxFrames;
  batching.bucket = !noBucket;
  batching.shuffle = !noShuffle;
  batching.seed = seed;
  return absl::OkStatus();
}

const std::vector<std::vector<int64_t>> &BatchSource::epochList(int64_t epoch) {
  if (epoch != cachedEpoch) {
    cached = nn::epochBatches(*dataset, batching, epoch);
    cachedEpoch = epoch;
  }
  return cached;
}

int64_t BatchSource::batchesIn(int64_t epochCount) {
  if (!dataset)
    return epochCount * epochSteps;
  int64_t total = 0;
  for (int64_t e = 0; e < epochCount; ++e)
    total += (int64_t)epochList(e).size();
  return total;
}

nn::RunInputs BatchSource::batch(int64_t n, bool &epochEnd) {
  if (!dataset) {
    epochEnd = (n + 1) % epochSteps == 0;
    std::mt19937 rng((uint32_t)streamSeed(seed, kTrainData, n));
    return nn::segmentBatchFor(binding, batchSize, rng);
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

std::vector<nn::RunInputs> BatchSource::devSet() {
  std::vector<nn::RunInputs> batches;
  if (!dataset) {
    std::mt19937 rng((uint32_t)streamSeed(seed, kDevData, 0));
    for (unsigned b = 0; b < devBatches; ++b)
      batches.push_back(nn::segmentBatchFor(binding, batchSize, rng));
    return batches;
  }
  if (!dev)
    return batches;
  nn::BatchingOptions fixed = batching;
  fixed.shuffle = false;
  for (const std::vector<int64_t> &members : nn::epochBatches(*dev, fixed, 0))
    batches.push_back(dev->batch(members));
  return batches;
}

class Session {
public:
  int run();

private:
  absl::Status compile();
  absl::Status setUpState();
  absl::Status evaluate(int64_t atBatch);
  absl::Status save();
  void progress(const nn::StepReport &report, int64_t frames, double seconds);

  std::unique_ptr<nn::Artifact> trainCompiled, evalCompiled;
  nn::Executable trainStep, evalGraph;
  BatchSource source;
  std::vector<nn::RunInputs> devSet;
  nn::LearningRateSchedule schedule;
  nn::TrainState state;
  int64_t totalSteps = 0, skipped = 0;
  std::vector<nn::LossValue> epochLosses;
  int64_t epochFrames = 0, epochBatches = 0;
  double epochSeconds = 0;
  bool bar = false;
};

absl::Status Session::compile() {
  nn::CompileOptions options;
  options.pack = !noPack;
  options.fuseLossTail = !noFuseLossTail;
  options.lossTailBackward = lossTailBackward;
  options.target = target;
  options.gpuChip = gpuChip;
  options.entry = entry;
  nn::CompileOptions evaluation = options;
  if (!emitArtifacts.empty()) {
    if (std::error_code ec = llvm::sys::fs::create_directories(emitArtifacts))
      return absl::InternalError("cannot create '" + emitArtifacts +
                                 "': " + ec.message());
    options.artifactPath = emitArtifacts + "/train-step.so";
    evaluation.artifactPath = emitArtifacts + "/eval.so";
  }
  options.gpuCodeDir = gpuCodeDir;
  options.grads = true;
  options.training = true;
  options.trainStep = true;
  options.optimizer.kind = optimizer;
  options.optimizer.momentum = momentum;
  options.optimizer.nesterov = nesterov;
  options.optimizer.beta1 = beta1;
  options.optimizer.beta2 = beta2;
  options.optimizer.epsilon = epsilon;
  options.optimizer.weightDecay = weightDecay;
  options.optimizer.clipNorm = clipNorm;
  absl::StatusOr<nn::Artifact> step = nn::compileFile(modelPath, options);
  if (!step.ok())
    return step.status();
  trainCompiled = std::make_unique<nn::Artifact>(std::move(*step));
  absl::StatusOr<nn::Artifact> eval = nn::compileFile(modelPath, evaluation);
  if (!eval.ok())
    return eval.status();
  evalCompiled = std::make_unique<nn::Artifact>(std::move(*eval));
  if (absl::Status status =
          nn::Executable::load(trainCompiled->path(), trainStep);
      !status.ok())
    return status;
  return nn::Executable::load(evalCompiled->path(), evalGraph);
}

absl::Status Session::setUpState() {
  const nn::Manifest &manifest = trainStep.manifest();
  if (absl::Status status =
          nn::initializeParameters(manifest, seed, state.parameters);
      !status.ok())
    return status;
  if (!initFrom.empty()) {
    nn::TrainState loaded;
    if (absl::Status status = nn::loadCheckpoint(initFrom, loaded);
        !status.ok())
      return status;
    if (absl::Status status = nn::restoreParameters(
            manifest, loaded, /*resume=*/false, "'" + initFrom + "'", state);
        !status.ok())
      return status;
  }
  if (!resume.empty()) {
    std::string path = resume;
    if (llvm::sys::fs::is_directory(path)) {
      std::vector<std::string> found = checkpointsIn(path);
      if (found.empty())
        return absl::NotFoundError("--resume: no step-<N>.npz in '" + path +
                                   "'");
      path = found.back();
    }
    nn::TrainState loaded;
    if (absl::Status status = nn::loadCheckpoint(path, loaded); !status.ok())
      return status;
    if (absl::Status status = nn::restoreParameters(
            manifest, loaded, /*resume=*/true, "'" + path + "'", state);
        !status.ok())
      return status;
    if (!json)
      llvm::errs() << "nn-train: resumed from " << path << " at batch "
                   << state.batches << " (" << state.step << " updates)\n";
  }
  return absl::OkStatus();
}

absl::Status Session::evaluate(int64_t atBatch) {
  const nn::Manifest &manifest = evalGraph.manifest();
  if (devSet.empty())
    return absl::OkStatus();
  if (absl::Status status = nn::syncToHost(state); !status.ok())
    return status;
  nn::LossTotals totals;
  for (nn::RunInputs inputs : devSet) {
    for (const nn::TensorInfo &info : manifest.parameters)
      inputs.parameters[info.name] = state.parameters.at(info.name);
    nn::RunResult result;
    if (absl::Status status = evalGraph.run(inputs, result); !status.ok())
      return status;
    totals.add(result.losses);
  }
  if (json) {
    llvm::outs() << "{\"eval\": \"dev\", \"step\": " << atBatch
                 << ", \"losses\": " << lossesJson(manifest, totals.losses)
                 << "}\n";
    llvm::outs().flush();
  } else {
    if (bar)
      llvm::errs() << "\n";
    llvm::errs() << "dev after step " << atBatch << ":"
                 << lossesText(manifest, totals.losses) << "\n";
  }
  return absl::OkStatus();
}

absl::Status Session::save() {
  std::string dir = saveDir;
  if (dir.empty())
    return absl::OkStatus();
  if (std::error_code ec = llvm::sys::fs::create_directories(dir))
    return absl::InternalError("cannot create '" + dir + "': " + ec.message());
  if (absl::Status status = nn::syncToHost(state); !status.ok())
    return status;
  llvm::SmallString<256> path(dir);
  llvm::sys::path::append(path, checkpointName(state.batches));
  if (absl::Status status = nn::saveCheckpoint(path.str().str(), state);
      !status.ok())
    return status;
  std::vector<std::string> found = checkpointsIn(dir);
  for (size_t i = 0; i + keep < found.size(); ++i)
    llvm::sys::fs::remove(found[i]);
  return absl::OkStatus();
}

void Session::progress(const nn::StepReport &report, int64_t frames,
                       double seconds) {
  const nn::Manifest &manifest = trainStep.manifest();
  if (json) {
    llvm::outs() << "{\"step\": " << state.batches
                 << ", \"lr\": " << nn::tools::jsonNumber(report.learningRate)
                 << ", \"grad_norm\": "
                 << nn::tools::jsonNumber(report.gradNorm)
                 << ", \"losses\": " << lossesJson(manifest, report.losses)
                 << ", \"frames\": " << frames
                 << ", \"applied\": " << (report.applied ? "true" : "false")
                 << "}\n";
    llvm::outs().flush();
    return;
  }
  if (verbose) {
    bool due = logEvery <= 1 || state.batches == 1 ||
               state.batches % logEvery == 0 || !report.applied;
    if (!due)
      return;
    llvm::errs() << "step " << state.batches << " lr "
                 << llvm::format("%.3g", report.learningRate) << " grad_norm "
                 << llvm::format("%.4g", report.gradNorm)
                 << lossesText(manifest, report.losses) << " frames " << frames
                 << llvm::format(" (%.3f s)", seconds)
                 << (report.applied ? "" : " skipped") << "\n";
    return;
  }
  if (!bar)
    return;
  // The running averages since the epoch began.
  std::string averages;
  for (const nn::LossValue &loss : epochLosses) {
    char text[64];
    std::snprintf(text, sizeof(text), " %s %.4f", loss.name.c_str(),
                  loss.sum / (double)std::max<int64_t>(epochBatches, 1));
    averages += text;
  }
  constexpr int kWidth = 24;
  int filled = (int)(kWidth * state.batches / std::max<int64_t>(totalSteps, 1));
  llvm::errs() << "\r[" << std::string(filled, '=')
               << std::string(kWidth - filled, ' ') << "] " << state.batches
               << "/" << totalSteps << averages
               << llvm::format(" | %.0f frames/s  ",
                               epochFrames / std::max(epochSeconds, 1e-9));
}

int Session::run() {
  if (onNonFinite != "stop" && onNonFinite != "skip")
    return fail(absl::InvalidArgumentError(
        "--on-nonfinite must be stop or skip, got '" + onNonFinite + "'"));
  if (batchSize == 0 || epochSteps == 0)
    return fail(absl::InvalidArgumentError(
        "--batch-size and --epoch-steps must be positive"));
  absl::StatusOr<nn::LearningRateSchedule> parsed =
      nn::LearningRateSchedule::parse(lr);
  if (!parsed.ok())
    return fail(nn::withContext(parsed.status(), "--lr: "));
  schedule = *parsed;
  if (absl::Status status = compile(); !status.ok())
    return fail(status);
  if (compileOnly) {
    const nn::Manifest &manifest = trainStep.manifest();
    llvm::outs() << "compiled the train step of @" << manifest.graph << " for "
                 << manifest.target << ": " << manifest.kernels.size()
                 << " kernels\n";
    for (const nn::KernelInfo &kernel : manifest.kernels)
      llvm::outs() << "kernel " << kernel.name << " (" << kernel.origin
                   << ")\n";
    return 0;
  }
  if (absl::Status status =
          source.setUp(trainStep.manifest(), evalGraph.manifest());
      !status.ok())
    return fail(status);
  devSet = source.devSet();
  if (absl::Status status = setUpState(); !status.ok())
    return fail(status);

  totalSteps = steps ? (int64_t)steps : source.batchesIn(epochs);
  bar = !json && !verbose && isatty(STDERR_FILENO);
  struct sigaction action = {};
  action.sa_handler = onInterrupt;
  sigemptyset(&action.sa_mask);
  sigaction(SIGINT, &action, nullptr);
  const nn::Manifest &manifest = trainStep.manifest();
  while (state.batches < totalSteps && !interrupted) {
    uint64_t batchNumber = state.batches;
    bool epochEnd = false;
    nn::RunInputs batch = source.batch((int64_t)batchNumber, epochEnd);
    int64_t frames = source.frames(batch);
    auto start = std::chrono::steady_clock::now();
    nn::StepReport report;
    absl::Status status = nn::runTrainStep(
        trainStep, std::move(batch), schedule.at(state.step),
        (uint32_t)streamSeed(seed, kDropout, batchNumber), state, report);
    double seconds =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start)
            .count();
    if (!status.ok())
      return fail(nn::withContext(
          status, "step " + std::to_string(state.batches + 1) + ": "));
    if (!report.applied) {
      std::string what = "step " + std::to_string(state.batches) +
                         ": the training loss or gradient norm is not "
                         "finite (objective " +
                         std::to_string(report.objective) + ", grad_norm " +
                         std::to_string(report.gradNorm) + ") on " +
                         source.describe((int64_t)batchNumber);
      if (onNonFinite == "stop") {
        progress(report, frames, seconds);
        return fail(absl::InvalidArgumentError(
            what + "; stopping (--on-nonfinite=skip skips such batches)"));
      }
      ++skipped;
      if (!json)
        llvm::errs() << (bar ? "\n" : "") << "nn-train: " << what
                     << "; skipped\n";
    }
    ++epochBatches;
    epochFrames += frames;
    epochSeconds += seconds;
    for (const nn::LossValue &loss : report.losses) {
      auto found = std::find_if(
          epochLosses.begin(), epochLosses.end(),
          [&](const nn::LossValue &total) { return total.name == loss.name; });
      if (found == epochLosses.end()) {
        epochLosses.push_back(loss);
        epochLosses.back().sum = 0;
        found = epochLosses.end() - 1;
      }
      found->sum += nn::lossValue(manifest, loss);
    }
    progress(report, frames, seconds);
    bool last = state.batches == totalSteps;
    if (epochEnd || last)
      if (absl::Status status = evaluate(state.batches); !status.ok())
        return fail(status);
    if (epochEnd) {
      epochLosses.clear();
      epochFrames = epochBatches = 0;
      epochSeconds = 0;
    }
    bool checkpoint = saveEvery ? state.batches % saveEvery == 0 : epochEnd;
    if (checkpoint || last)
      if (absl::Status status = save(); !status.ok())
        return fail(status);
  }
  if (interrupted) {
    if (saveDir.empty())
      saveDir = "nn-train-interrupted";
    if (absl::Status status = save(); !status.ok())
      return fail(status);
    llvm::errs() << (bar ? "\n" : "") << "nn-train: interrupted after step "
                 << state.batches << "; checkpoint in " << saveDir
                 << " (--resume " << saveDir << " continues)\n";
    return 130;
  }
  if (bar)
    llvm::errs() << "\n";
  if (skipped && !json)
    llvm::errs() << "nn-train: skipped " << skipped
                 << " batches with a non-finite loss\n";
  return 0;
}

} // namespace

int main(int argc, char **argv) {
  llvm::InitLLVM init(argc, argv);
  cl::HideUnrelatedOptions({&modelCategory, &dataCategory, &trainCategory,
                            &checkpointCategory, &outputCategory});
  cl::ParseCommandLineOptions(argc, argv, "nn-train: train an nn model\n");
  nn::setNumThreads((int)numThreads);
  Session session;
  return session.run();
}
