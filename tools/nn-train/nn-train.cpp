//===- nn-train.cpp - train an nn model -----------------------------------===//
//
//   nn-train model.mlir --synthetic segments --steps 200 --seed 1 --json
//   nn-train model.mlir --synthetic segments --epochs 5 --save ckpt/
//   nn-train model.mlir --synthetic segments --steps 500 --resume ckpt/
//   nn-train model.mlir --data train/ --dev dev.npz --epochs 10 \
//            --batch-size 32 --max-frames 20000
//   nn-train --stages recipe.json
//
// A thin main over training/: Trainer compiles the model twice (one train
// step: forward, backward and the optimizer update in one artifact; one
// evaluation graph for the dev set) and trains; each step's batch and
// dropout seed follow from (--seed, batch number) alone, so a resumed run
// continues exactly where the checkpoint left off (docs/training.md).
// --stages runs a stage file's stages in order (training/Stages.h,
// docs/sequence-training.md).
//
//===----------------------------------------------------------------------===//

#include "training/Ranks.h"
#include "training/Stages.h"
#include "training/Trainer.h"

#include "tools/common/CompileFlags.h"
#include "tools/common/Flags.h"

#include "llvm/Support/CommandLine.h"
#include "llvm/Support/InitLLVM.h"
#include "llvm/Support/raw_ostream.h"

#include <cmath>
#include <unistd.h>

namespace cl = llvm::cl;

static cl::OptionCategory modelCategory("Model and compilation");
static cl::OptionCategory dataCategory("Data");
static cl::OptionCategory trainCategory("Training");
static cl::OptionCategory checkpointCategory("Checkpoints");
static cl::OptionCategory outputCategory("Output");
static cl::OptionCategory gpuCategory("GPU target (--target=cuda)");

static cl::opt<std::string> modelPath(cl::Positional, cl::desc("<model.mlir>"),
                                      cl::cat(modelCategory));
static cl::opt<std::string>
    stagesPath("stages",
               cl::desc("Run the stages of this JSON stage file in order "
                        "(full-sum training, alignment, frame-wise "
                        "training; docs/sequence-training.md) instead of "
                        "training one model"),
               cl::cat(modelCategory));
static cl::opt<std::string>
    workDir("work-dir",
            cl::desc("--stages: keep the stages' outputs here instead of the "
                     "stage file's work_dir"),
            cl::cat(modelCategory));
// --entry, --target, --num-threads, --emit-gpu-code, every option of the
// compilation phases and the optimizer's (nn/Options.h).
static nn::tools::CompileFlags compileFlags(modelCategory, gpuCategory,
                                            &trainCategory);
static cl::opt<std::string>
    emitArtifacts("emit-artifacts",
                  cl::desc("Keep the compiled train step and evaluation "
                           "graph as DIR/train-step.so and DIR/eval.so "
                           "(nn-exec --train runs the first)"),
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
static cl::opt<std::string> chunking(
    "chunking",
    cl::desc("--data: train on chunks of SIZE frames every STEP frames "
             "(SIZE:STEP, RETURNN's chunking; dev data stays whole). "
             "Overlapping chunks count each frame once, through the graph "
             "input chunk_weights; ',labels=L,alignment=A,blank=ID' gives "
             "each chunk the labels its frames of alignment A emit"),
    cl::value_desc("SIZE:STEP[,labels=L,alignment=A,blank=ID]"),
    cl::cat(dataCategory));
static cl::opt<bool>
    noBucket("no-bucket",
             cl::desc("--data: do not batch utterances of similar length "
                      "together"),
             cl::cat(dataCategory));
static cl::opt<bool> noShuffle("no-shuffle",
                               cl::desc("--data: keep the file order"),
                               cl::cat(dataCategory));
static nn::tools::FiniteDouble
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
static cl::opt<std::string> lr(
    "lr", cl::init("constant:peak=1e-3"),
    cl::desc("Learning-rate schedule DECAY[:key=value,...]: constant, "
             "linear, cosine or inverse_sqrt with peak, final, warmup, total "
             "(e.g. cosine:peak=1e-3,warmup=100,total=2000); or newbob, a "
             "rate per epoch from the dev score as RETURNN's "
             "newbob_multi_epoch sets it (e.g. newbob:lr=1e-3,decay=0.9,"
             "epochs=1,interval=1,relative-lr=1,min-epochs-per-lr=3; "
             "docs/training.md)"),
    cl::cat(trainCategory));
static cl::opt<std::string> trainedLosses(
    "losses",
    cl::desc("The marked losses that train, NAME[=SCALE],... (a scale "
             "replaces the marked one; losses not named are reported, not "
             "trained; default: every loss not marked as_error, as marked), "
             "e.g. --losses mwer=1,ctc=0.1"),
    cl::cat(trainCategory));
static cl::opt<double> collectiveTimeout(
    "collective-timeout", cl::init(600),
    cl::desc("Under mpirun: seconds a rank waits for the others in a "
             "collective before the run fails (a rank that stopped, failed "
             "or hangs)"),
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
static cl::opt<std::string> tensorboard(
    "tensorboard",
    cl::desc("Write TensorBoard scalars (train and dev losses, error rates, "
             "lr, grad_norm, frames/s) to an event file in this directory"),
    cl::cat(outputCategory));

namespace {

namespace training = nn::training;

/// The ranks of a run `mpirun` started (none in a single process): MPI,
/// and NCCL for a GPU step.
training::RunRanks ranks;
/// The host's communicator: null in a single process.
nn::Communicator *communicator = nullptr;

int fail(const absl::Status &status) {
  if (communicator && communicator->size() > 1) {
    // One failed rank ends every rank (MPI_Abort), saying which failed.
    // One write: the ranks share the terminal. The rank once, first.
    std::string rank = communicator->describe() + ": ";
    std::string message(status.message());
    if (message.rfind(rank, 0) == 0)
      message.erase(0, rank.size());
    llvm::errs() << "nn-train: " + rank + message + "\n";
    llvm::errs().flush();
    communicator->abort(1);
  }
  llvm::errs() << "nn-train: " << std::string(status.message()) << "\n";
  return 1;
}

training::OutputOptions outputOptions() {
  training::OutputOptions output;
  output.json = json;
  output.verbose = verbose;
  output.logEvery = logEvery;
  output.bar = !json && !verbose && isatty(STDERR_FILENO);
  return output;
}

/// --losses NAME[=SCALE],...: names once each, scales finite and >= 0 (a
/// negative scale would train the loss up).
absl::StatusOr<std::vector<nn::TrainedLoss>>
parseTrainedLosses(llvm::StringRef text) {
  std::vector<nn::TrainedLoss> losses;
  llvm::SmallVector<llvm::StringRef> items;
  text.split(items, ',');
  for (llvm::StringRef item : items) {
    auto [name, scale] = item.trim().split('=');
    nn::TrainedLoss loss;
    loss.name = name.trim().str();
    if (loss.name.empty())
      return absl::InvalidArgumentError("--losses: '" + item.str() +
                                        "' names no loss (NAME[=SCALE])");
    for (const nn::TrainedLoss &other : losses)
      if (other.name == loss.name)
        return absl::InvalidArgumentError("--losses: '" + loss.name +
                                          "' is named twice");
    if (item.contains('=')) {
      double value;
      if (scale.trim().getAsDouble(value) || !std::isfinite(value) || value < 0)
        return absl::InvalidArgumentError("--losses: the scale of '" +
                                          loss.name +
                                          "' must be a finite "
                                          "number >= 0, got '" +
                                          scale.str() + "'");
      loss.scale = value;
    }
    losses.push_back(loss);
  }
  return losses;
}

/// nn-train MODEL.mlir: one model, the command line's settings.
int trainModel() {
  training::TrainOptions options;
  options.modelPath = modelPath;
  options.compile = compileFlags.compileOptions();
  if (trainedLosses.getNumOccurrences()) {
    absl::StatusOr<std::vector<nn::TrainedLoss>> losses =
        parseTrainedLosses(trainedLosses);
    if (!losses.ok())
      return fail(losses.status());
    options.compile.trainedLosses = *losses;
  }
  options.emitArtifacts = emitArtifacts;
  training::DataOptions &data = options.data;
  if (!dataPath.empty())
    data.train = {dataPath};
  if (!devPath.empty())
    data.dev = {devPath};
  data.synthetic = synthetic;
  data.noise = noise;
  data.classes = taskClasses;
  data.devBatches = devBatches;
  data.epochSteps = epochSteps;
  data.batchSize = batchSize;
  data.maxFrames = maxFrames;
  data.bucket = !noBucket;
  data.shuffle = !noShuffle;
  absl::StatusOr<nn::ChunkingOptions> chunks = nn::parseChunking(chunking);
  if (!chunks.ok())
    return fail(nn::withContext(chunks.status(), "--chunking: "));
  data.chunking = *chunks;
  options.steps = steps;
  options.epochs = epochs;
  options.seed = seed;
  options.onNonFinite = onNonFinite;
  options.saveDir = saveDir;
  options.saveEvery = saveEvery;
  options.keep = keep;
  options.resume = resume;
  options.initFrom = initFrom;
  options.output = outputOptions();
  options.tensorboardDir = tensorboard;
  options.communicator = ranks.host.get();
  options.stepCommunicator = ranks.gpu.get();
  absl::StatusOr<nn::LearningRateSchedule> parsed =
      nn::LearningRateSchedule::parse(lr);
  if (!parsed.ok())
    return fail(nn::withContext(parsed.status(), "--lr: "));
  options.schedule = *parsed;

  training::Trainer trainer(std::move(options));
  if (absl::Status status = trainer.compile(); !status.ok())
    return fail(status);
  if (compileOnly) {
    if (!trainer.reportsForRun())
      return 0;
    const nn::Manifest &manifest = trainer.trainManifest();
    llvm::outs() << "compiled the train step of @" << manifest.graph << " for "
                 << manifest.target << ": " << manifest.kernels.size()
                 << " kernels\n";
    for (const nn::KernelInfo &kernel : manifest.kernels)
      llvm::outs() << "kernel " << kernel.name << " (" << kernel.origin
                   << ")\n";
    return 0;
  }
  training::installInterruptHandler();
  bool finished = false;
  if (absl::Status status = trainer.run(finished); !status.ok())
    return fail(status);
  if (!finished) {
    if (!trainer.reportsForRun())
      return 130;
    const std::string &dir = trainer.checkpointDir();
    llvm::errs() << "nn-train: interrupted after step "
                 << trainer.state().batches << "; checkpoint in " << dir
                 << " (--resume " << dir << " continues)\n";
    return 130;
  }
  return 0;
}

/// nn-train --stages FILE: the stage file says everything a model run
/// takes from the command line.
int runStages() {
  std::vector<std::string> conflicting = compileFlags.given();
  for (cl::Option *option : std::initializer_list<cl::Option *>{
           &modelPath,   &emitArtifacts, &compileOnly, &dataPath,
           &devPath,     &synthetic,     &batchSize,   &maxFrames,
           &noBucket,    &chunking,      &noShuffle,   &noise,
           &taskClasses, &devBatches,    &steps,       &epochs,
           &epochSteps,  &seed,          &lr,          &onNonFinite,
           &saveDir,     &saveEvery,     &keep,        &resume,
           &initFrom,    &trainedLosses})
    if (option->getNumOccurrences())
      conflicting.push_back(option->ArgStr.empty()
                                ? std::string("<model.mlir>")
                                : "--" + option->ArgStr.str());
  if (!conflicting.empty()) {
    std::string list;
    for (const std::string &name : conflicting)
      list += (list.empty() ? "" : ", ") + name;
    return fail(absl::InvalidArgumentError(
        "--stages takes every setting from the stage file; drop " + list));
  }
  absl::StatusOr<std::unique_ptr<training::StagePipeline>> pipeline =
      training::StagePipeline::load(stagesPath, workDir, communicator);
  if (!pipeline.ok())
    return fail(pipeline.status());
  training::OutputOptions output = outputOptions();
  output.tensorboardDir = tensorboard;
  if (absl::Status status = (*pipeline)->prepare(output); !status.ok())
    return fail(status);
  training::installInterruptHandler();
  bool finished = false;
  if (absl::Status status = (*pipeline)->run(output, finished); !status.ok())
    return fail(status);
  if (!finished) {
    if (!communicator || communicator->rank() == 0)
      llvm::errs() << "nn-train: interrupted; the same command continues "
                      "from the checkpoint\n";
    return 130;
  }
  return 0;
}

} // namespace

int main(int argc, char **argv) {
  llvm::InitLLVM init(argc, argv);
  cl::HideUnrelatedOptions({&modelCategory, &gpuCategory, &dataCategory,
                            &trainCategory, &checkpointCategory,
                            &outputCategory});
  cl::ParseCommandLineOptions(argc, argv, "nn-train: train an nn model\n");
  if (std::string flag = nn::tools::repeatedFlag(); !flag.empty())
    return fail(absl::InvalidArgumentError(
        flag + " is given more than once; give it once"));
  nn::setNumThreads((int)compileFlags.threads());
  {
    nn::CommunicatorOptions communication;
    communication.timeoutSeconds = collectiveTimeout;
    // Compiling alone needs no GPU; stage files train on the CPU.
    std::string target = stagesPath.empty() && !compileOnly
                             ? compileFlags.compileOptions().target
                             : "cpu";
    absl::Status joined = training::joinRanks(ranks, communication, target);
    communicator = ranks.host.get();
    if (!joined.ok())
      return fail(joined);
  }
  if (!stagesPath.empty()) {
    int code = runStages();
    communicator = nullptr;
    ranks = training::RunRanks();
    return code;
  }
  if (!workDir.empty())
    return fail(absl::InvalidArgumentError("--work-dir goes with --stages"));
  if (modelPath.empty())
    return fail(absl::InvalidArgumentError(
        "give a model (nn-train MODEL.mlir ...) or a stage file (--stages "
        "FILE)"));
  int code = trainModel();
  // MPI_Finalize now (NCCL's communicator first), before the exit handlers
  // Open MPI registered run.
  communicator = nullptr;
  ranks = training::RunRanks();
  return code;
}
