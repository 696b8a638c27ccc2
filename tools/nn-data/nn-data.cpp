//===- nn-data.cpp - write training data in nn's dataset format -----------===//
//
//   nn-data convert DIR OUT.npz       a folder of <utt>.<name>.npy files
//   nn-data convert DIR OUT/ --shard-utterances 1000
//   nn-data synthesize OUT.npz --features 80 --classes 500 --utterances 256
//   nn-data synthesize DEV.npz --features 80 --classes 500 --seed 1
//   nn-data synthesize speech DIR --vocabulary digits --seed 1
//   nn-data import KALDI_DIR|CUTS.jsonl[.gz] OUT.npz --num-mel-bins 80
//       [--vocab tokens.txt
//       | --bpe-vocab-size N | --bpe-model TRAIN.bpe.model]
//       [--cmvn global | --cmvn-stats TRAIN.cmvn.npz]
//
// The dataset format (nn/Dataset.h, docs/training.md): per array name,
// the utterances' arrays concatenated along axis 0 and NAME.lengths giving
// each one's length; arrays of rank 0 per utterance are stacked to [N].
// Each utterance's id goes into nn.id (its code points, with
// nn.id.lengths): the file names' <utterance> part, or seg-<index> for
// synthesized data. `synthesize speech` writes the spoken-word task
// instead: WAV files and Kaldi-style directories (SpeechTask.h).
//
//===----------------------------------------------------------------------===//

#include "nn/Audio.h"
#include "nn/Dataset.h"
#include "nn/ErrorRate.h"
#include "nn/File.h"
#include "nn/Npy.h"
#include "nn/SegmentTask.h"
#include "tools/common/Flags.h"
#include "tools/nn-data/Bpe.h"
#include "tools/nn-data/KaldiImport.h"
#include "tools/nn-data/LhotseImport.h"
#include "tools/nn-data/SpeechTask.h"

#include "llvm/Support/CommandLine.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/InitLLVM.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/Process.h"
#include "llvm/Support/raw_ostream.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <functional>
#include <map>
#include <optional>
#include <random>

namespace cl = llvm::cl;

static cl::SubCommand
    convertCommand("convert", "Pack a folder of per-utterance .npy files "
                              "(<utterance>.<array>.npy) into dataset shards");
static cl::SubCommand
    synthesizeCommand("synthesize",
                      "Write utterances of the synthetic segment task");

static cl::SubCommand
    importCommand("import",
                  "Import a Kaldi data directory (wav.scp, text, optional "
                  "segments) or a Lhotse cut manifest (.jsonl[.gz]): "
                  "log-mel features and character or BPE labels");

static cl::opt<std::string> sourceDir(cl::Positional, cl::desc("<folder>"),
                                      cl::Required, cl::sub(convertCommand),
                                      cl::sub(importCommand));
static cl::opt<std::string>
    output(cl::Positional,
           cl::desc("<out.npz, or a directory for several shards>"),
           cl::Required, cl::sub(convertCommand), cl::sub(synthesizeCommand),
           cl::sub(importCommand));
static cl::opt<std::string>
    speechDir(cl::Positional, cl::desc("[<directory> of the speech task]"),
              cl::sub(synthesizeCommand));
static cl::opt<unsigned> shardUtterances(
    "shard-utterances", cl::init(0),
    cl::desc("Utterances per shard (0: one shard); OUT is then a directory"),
    cl::sub(convertCommand), cl::sub(synthesizeCommand),
    cl::sub(importCommand));

static cl::opt<unsigned> features("features", cl::init(40),
                                  cl::desc("Features per frame"),
                                  cl::sub(synthesizeCommand));
static cl::opt<unsigned> classes("classes", cl::init(10),
                                 cl::desc("Frame classes (0 is silence)"),
                                 cl::sub(synthesizeCommand));
static cl::opt<unsigned> utterances("utterances", cl::init(64),
                                    cl::desc("Utterances to write"),
                                    cl::sub(synthesizeCommand));
static nn::tools::FiniteDouble noise("noise", cl::init(0.5),
                                     cl::desc("Per-feature noise"),
                                     cl::sub(synthesizeCommand));
static cl::opt<unsigned>
    taskSeed("task-seed", cl::init(0),
             cl::desc("Seeds the task (its class prototypes): a train and a "
                      "dev set share it"),
             cl::sub(synthesizeCommand));
static cl::opt<unsigned> seed("seed", cl::init(0),
                              cl::desc("Seeds the utterances"),
                              cl::sub(synthesizeCommand));

// Importing Kaldi data directories.
static cl::opt<unsigned> sampleRate("sample-rate", cl::init(16000),
                                    cl::desc("Audio is resampled to this "
                                             "rate (Hz)"),
                                    cl::sub(importCommand));
static cl::opt<unsigned> numMelBins("num-mel-bins", cl::init(80),
                                    cl::desc("Log-mel filterbank bins"),
                                    cl::sub(importCommand));
static cl::opt<std::string>
    vocabFile("vocab",
              cl::desc("Token file (line i = class i) to label "
                       "with; default: the transcripts' "
                       "characters, written beside the output"),
              cl::sub(importCommand));
static cl::list<double> speedPerturb(
    "speed-perturb", cl::CommaSeparated,
    cl::desc("Speed perturbation: each utterance once per factor (e.g. "
             "0.9,1.0,1.1; in [0.5, 2]), ids of factors other than 1 "
             "prefixed sp<factor>-"),
    cl::sub(importCommand));
static cl::opt<unsigned> bpeVocabSize(
    "bpe-vocab-size", cl::init(0),
    cl::desc("Label with a BPE vocabulary of N classes (blank 0 and <unk> 1 "
             "included) trained by SentencePiece on this set's transcripts; "
             "the model and tokens.txt are written beside the output"),
    cl::sub(importCommand));
static cl::opt<std::string> bpeModelFile(
    "bpe-model",
    cl::desc("Label with this BPE model (the training set's bpe.model); its "
             "tokens.txt is written beside the output"),
    cl::sub(importCommand));
static cl::opt<std::string>
    cmvnMode("cmvn",
             cl::desc("Feature normalization: 'global' computes the mean and "
                      "variance of this set's features, writes them beside the "
                      "output and normalizes with them; default: none"),
             cl::sub(importCommand));
static cl::opt<std::string> cmvnStatsFile(
    "cmvn-stats",
    cl::desc("Normalize with these statistics (the training set's "
             "cmvn.npz) instead, copied beside the output"),
    cl::sub(importCommand));
static cl::opt<unsigned> importThreads("threads", cl::init(1),
                                       cl::desc("Threads reading audio and "
                                                "computing features"),
                                       cl::sub(importCommand));

// The spoken-word task (synthesize speech DIR).
static cl::OptionCategory speechCategory("synthesize speech");
static cl::opt<std::string>
    vocabulary("vocabulary", cl::init("digits"),
               cl::desc("Words spoken: digits or words (a few hundred)"),
               cl::sub(synthesizeCommand), cl::cat(speechCategory));
static cl::opt<unsigned> trainUtterances("train-utterances", cl::init(400),
                                         cl::desc("Training utterances"),
                                         cl::sub(synthesizeCommand),
                                         cl::cat(speechCategory));
static cl::opt<unsigned> devUtterances("dev-utterances", cl::init(50),
                                       cl::desc("Dev utterances"),
                                       cl::sub(synthesizeCommand),
                                       cl::cat(speechCategory));
static cl::opt<unsigned> testUtterances("test-utterances", cl::init(50),
                                        cl::desc("Test utterances"),
                                        cl::sub(synthesizeCommand),
                                        cl::cat(speechCategory));
static cl::opt<unsigned>
    heldOutVoices("held-out-voices", cl::init(4),
                  cl::desc("Voice variants reserved for dev, and as many "
                           "for test (never heard in training)"),
                  cl::sub(synthesizeCommand), cl::cat(speechCategory));
static cl::opt<unsigned> minWords("min-words", cl::init(1),
                                  cl::desc("Fewest words per utterance"),
                                  cl::sub(synthesizeCommand),
                                  cl::cat(speechCategory));
static cl::opt<unsigned> maxWords("max-words", cl::init(5),
                                  cl::desc("Most words per utterance"),
                                  cl::sub(synthesizeCommand),
                                  cl::cat(speechCategory));
static nn::tools::FiniteDouble
    noiseSnr("noise-snr", cl::init(0),
             cl::desc("Add white noise at an SNR uniform in [this, this + "
                      "20] dB (0: no noise)"),
             cl::sub(synthesizeCommand), cl::cat(speechCategory));

namespace {

int fail(const absl::Status &status) {
  llvm::errs() << "nn-data: " << std::string(status.message()) << "\n";
  return 1;
}

/// The nn.id array of utterance `id` (checked before: a valid id).
nn::Tensor idArray(const std::string &id) {
  std::vector<int32_t> codePoints = *nn::utteranceIdCodePoints(id);
  return nn::Tensor::of<int32_t>(nn::DType::i32, {(int64_t)codePoints.size()},
                                 codePoints);
}

/// Writes utterances as they come as dataset shards: one file (held until
/// finish()), or shard-<k>.npz files of --shard-utterances utterances in a
/// directory, each written as soon as it is full.
class ShardWriter {
public:
  /// Adds an utterance (its arrays with nn.id).
  absl::Status add(const std::string &id, nn::UtteranceArrays arrays) {
    if (!written_ && pending_.empty())
      first_ = id;
    last_ = id;
    pending_.push_back(std::move(arrays));
    if (shardUtterances && pending_.size() == shardUtterances)
      return flush();
    return absl::OkStatus();
  }
  /// Writes what is left and says what was written.
  absl::Status finish() {
    if (!pending_.empty())
      if (absl::Status status = flush(); !status.ok())
        return status;
    llvm::outs() << "wrote " << written_ << " utterances ("
                 << (written_ ? first_ + " .. " + last_ : "") << ") to "
                 << output << "\n";
    return absl::OkStatus();
  }

private:
  absl::Status flush() {
    std::string path = output;
    if (shardUtterances) {
      if (std::error_code ec = llvm::sys::fs::create_directories(output))
        return absl::InternalError("cannot create '" + output +
                                   "': " + ec.message());
      char name[32];
      std::snprintf(name, sizeof(name), "shard-%05zu.npz", shards_++);
      llvm::SmallString<256> joined(output);
      llvm::sys::path::append(joined, name);
      path = joined.str().str();
    }
    if (absl::Status status = nn::writeNpz(
            path, nn::concatenateUtterances(pending_, 0, pending_.size()));
        !status.ok())
      return status;
    written_ += (int64_t)pending_.size();
    pending_.clear();
    return absl::OkStatus();
  }

  std::vector<nn::UtteranceArrays> pending_;
  size_t shards_ = 0;
  int64_t written_ = 0;
  std::string first_, last_;
};

/// Writes `items` (with their nn.id arrays) as shards (ShardWriter),
/// moving them out of `items`.
absl::Status writeShards(const std::vector<std::string> &ids,
                         std::vector<nn::UtteranceArrays> &items) {
  ShardWriter writer;
  for (size_t i = 0; i < items.size(); ++i)
    if (absl::Status status = writer.add(ids[i], std::move(items[i]));
        !status.ok())
      return status;
  return writer.finish();
}

/// Progress of a long step on stderr: one line rewritten in place on a
/// terminal, a line per tenth of the work in a log. The rate counts only
/// the work of this run (an import resumes with part of it done).
class ProgressLine {
public:
  explicit ProgressLine(std::string verb)
      : verb_(std::move(verb)),
        terminal_(llvm::sys::Process::StandardErrIsDisplayed()) {}

  void operator()(int64_t done, int64_t total) {
    auto now = std::chrono::steady_clock::now();
    if (!started_) {
      started_ = true;
      start_ = now;
      baseline_ = done;
    }
    bool last = done == total;
    if (!last) {
      if (terminal_ ? now - shown_ < std::chrono::milliseconds(200)
                    : done * 10 / total == shownTenth_)
        return;
    }
    shown_ = now;
    shownTenth_ = done * 10 / std::max<int64_t>(total, 1);
    double seconds = std::chrono::duration<double>(now - start_).count();
    double rate = seconds > 0 ? (double)(done - baseline_) / seconds : 0;
    char line[160];
    int at = std::snprintf(line, sizeof(line), "%s %lld / %lld (%d%%)",
                           verb_.c_str(), (long long)done, (long long)total,
                           (int)(100 * done / std::max<int64_t>(total, 1)));
    if (rate > 0) {
      at += std::snprintf(line + at, sizeof(line) - at, ", %.1f/s", rate);
      if (!last) {
        long left = std::lround((total - done) / rate);
        std::snprintf(line + at, sizeof(line) - at, ", %ldm%02lds left",
                      left / 60, left % 60);
      }
    }
    if (terminal_)
      llvm::errs() << "\r" << line << "\x1b[K" << (last ? "\n" : "");
    else
      llvm::errs() << line << "\n";
  }

private:
  std::string verb_;
  bool terminal_;
  bool started_ = false;
  std::chrono::steady_clock::time_point start_, shown_;
  // In a log, the first line comes after a tenth of the work.
  int64_t baseline_ = 0, shownTenth_ = 0;
};

absl::Status convert() {
  // <utterance>.<array>.npy, the utterance id up to the first dot.
  std::map<std::string, std::map<std::string, std::string>> files;
  std::error_code ec;
  for (llvm::sys::fs::directory_iterator it(sourceDir, ec), end;
       it != end && !ec; it.increment(ec)) {
    llvm::StringRef name = llvm::sys::path::filename(it->path());
    if (!name.ends_with(".npy"))
      continue;
    llvm::StringRef stem = name.drop_back(4);
    auto [id, array] = stem.split('.');
    if (array.empty())
      return absl::InvalidArgumentError(
          "'" + it->path() + "' is not named <utterance>.<array>.npy");
    // The format keeps NAME's lengths in NAME.lengths (and which
    // utterances a dataset keeps in nn.keep, a scalar per utterance): an
    // input array of such a name would replace the computed lengths.
    if (array.ends_with(".lengths"))
      return absl::InvalidArgumentError(
          "'" + it->path() + "': the array name '" + array.str() +
          "' ends in '.lengths', which the dataset format reserves for the "
          "lengths nn-data computes; rename the file");
    if (array == nn::kIdArray)
      return absl::InvalidArgumentError(
          "'" + it->path() + "': the array name '" + array.str() +
          "' is reserved for the utterance ids nn-data writes from the file "
          "names; rename the file");
    if (absl::StatusOr<std::vector<int32_t>> codePoints =
            nn::utteranceIdCodePoints(id.str());
        !codePoints.ok())
      return nn::withContext(codePoints.status(), "'" + it->path() + "': ");
    files[id.str()][array.str()] = it->path();
  }
  if (ec)
    return absl::NotFoundError("cannot read '" + sourceDir +
                               "': " + ec.message());
  if (files.empty())
    return absl::InvalidArgumentError("'" + sourceDir +
                                      "' holds no <utterance>.<array>.npy "
                                      "files");
  std::vector<std::string> ids;
  std::vector<nn::UtteranceArrays> items;
  const std::map<std::string, std::string> *first = nullptr;
  for (const auto &[id, arrays] : files) {
    if (!first)
      first = &arrays;
    nn::UtteranceArrays item;
    for (const auto &[name, path] : *first) {
      auto found = arrays.find(name);
      if (found == arrays.end())
        return absl::InvalidArgumentError("utterance '" + id + "' has no '" +
                                          name + "' (utterance '" +
                                          files.begin()->first + "' has)");
      nn::Tensor tensor;
      if (absl::Status status = nn::readNpy(found->second, tensor);
          !status.ok())
        return status;
      if (!items.empty()) {
        const nn::Tensor &model = items.front().at(name);
        bool sameRows =
            tensor.rank() == model.rank() && tensor.dtype() == model.dtype() &&
            std::equal(tensor.shape().begin() + (tensor.rank() ? 1 : 0),
                       tensor.shape().end(),
                       model.shape().begin() + (model.rank() ? 1 : 0));
        if (!sameRows)
          return absl::InvalidArgumentError(
              "'" + found->second + "' is " + nn::toString(tensor.dtype()) +
              " " + nn::shapeText(tensor.shape()) + ", but '" + name +
              "' of utterance '" + ids.front() + "' is " +
              nn::toString(model.dtype()) + " " + nn::shapeText(model.shape()) +
              " (only the first axis may differ)");
      }
      item[name] = std::move(tensor);
    }
    if (arrays.size() != first->size())
      return absl::InvalidArgumentError("utterance '" + id +
                                        "' has arrays utterance '" +
                                        files.begin()->first + "' lacks");
    item[nn::kIdArray] = idArray(id);
    ids.push_back(id);
    items.push_back(std::move(item));
  }
  return writeShards(ids, items);
}

absl::Status synthesize() {
  for (cl::Option *speechOnly : std::initializer_list<cl::Option *>{
           &vocabulary, &trainUtterances, &devUtterances, &testUtterances,
           &heldOutVoices, &minWords, &maxWords, &noiseSnr})
    if (speechOnly->getNumOccurrences())
      return absl::InvalidArgumentError(
          "--" + speechOnly->ArgStr.str() +
          " is a flag of 'synthesize speech DIR', not of the segment task");
  nn::SegmentTask task;
  task.features = features;
  task.classes = classes;
  task.noise = noise;
  task.seed = taskSeed;
  if (absl::Status status = task.validate(); !status.ok())
    return status;
  if (absl::Status status = task.checkSize(utterances); !status.ok())
    return status;
  std::vector<float> prototypes = task.prototypes();
  std::mt19937 rng(seed + 1);
  std::vector<std::string> ids;
  std::vector<nn::UtteranceArrays> items;
  // One width for every id of the set (at least 6 digits), so that ids
  // sort as their indices do.
  unsigned last = utterances ? utterances - 1 : 0;
  size_t width = std::max<size_t>(6, std::to_string(last).size());
  for (unsigned u = 0; u < utterances; ++u) {
    nn::SegmentUtterance sample =
        nn::sampleSegmentUtterance(task, prototypes, rng);
    nn::UtteranceArrays item = nn::segmentArrays(task, sample);
    std::string index = std::to_string(u);
    std::string id =
        "seg-" +
        std::string(width - std::min<size_t>(width, index.size()), '0') + index;
    item[nn::kIdArray] = idArray(id);
    ids.push_back(id);
    items.push_back(std::move(item));
  }
  return writeShards(ids, items);
}

absl::Status synthesizeSpeech() {
  for (cl::Option *segmentOnly :
       std::initializer_list<cl::Option *>{&features, &classes, &utterances,
                                           &noise, &taskSeed, &shardUtterances})
    if (segmentOnly->getNumOccurrences())
      return absl::InvalidArgumentError(
          "--" + segmentOnly->ArgStr.str() +
          " is a flag of the segment task, not of 'synthesize speech'");
  nn::data::SpeechTaskOptions options;
  options.vocabulary = vocabulary;
  options.trainUtterances = trainUtterances;
  options.devUtterances = devUtterances;
  options.testUtterances = testUtterances;
  options.devVariants = options.testVariants = heldOutVoices;
  options.minWords = minWords;
  options.maxWords = maxWords;
  options.noise = noiseSnr != 0;
  options.minSnrDb = noiseSnr;
  options.maxSnrDb = noiseSnr + 20;
  options.seed = seed;
  ProgressLine progress("synthesized");
  absl::StatusOr<std::vector<nn::data::SpeechUtterance>> made =
      nn::data::synthesizeSpeechTask(speechDir, options, std::ref(progress));
  if (!made.ok())
    return made.status();
  llvm::outs() << "wrote " << made->size() << " utterances to " << speechDir
               << " (train " << trainUtterances << ", dev " << devUtterances
               << ", test " << testUtterances << "; task.json lists the "
               << "voices of each split)\n";
  return absl::OkStatus();
}

/// A file beside the import's output: OUT/<name> for shards, OUT.<name>
/// (OUT without .npz) for one file.
std::string besideOutput(const std::string &name) {
  llvm::SmallString<256> path(output);
  if (shardUtterances) {
    llvm::sys::path::append(path, name);
  } else {
    llvm::sys::path::replace_extension(path, "");
    path += "." + name;
  }
  return path.str().str();
}

/// The normalization --cmvn / --cmvn-stats ask for, checked before any
/// audio is read: nullopt for none, statistics without frames for
/// --cmvn=global (this set's, accumulated after the import), or the
/// statistics of the --cmvn-stats file.
absl::StatusOr<std::optional<nn::FeatureStats>> cmvnFromFlags() {
  if (cmvnMode.empty() && cmvnStatsFile.empty())
    return std::nullopt;
  if (!cmvnMode.empty() && cmvnMode != "global")
    return absl::InvalidArgumentError("unknown --cmvn '" + cmvnMode +
                                      "' (known: global)");
  if (!cmvnMode.empty() && !cmvnStatsFile.empty())
    return absl::InvalidArgumentError(
        "--cmvn=global computes this set's statistics and --cmvn-stats "
        "reads another set's: give one");
  if (cmvnStatsFile.empty())
    return std::optional<nn::FeatureStats>(nn::FeatureStats(numMelBins));
  absl::StatusOr<nn::FeatureStats> read = nn::FeatureStats::read(cmvnStatsFile);
  if (!read.ok())
    return read.status();
  if (read->dim() != (int)numMelBins)
    return absl::InvalidArgumentError(
        cmvnStatsFile + ": statistics of " + std::to_string(read->dim()) +
        " features, but --num-mel-bins is " + std::to_string(numMelBins));
  return std::optional<nn::FeatureStats>(std::move(*read));
}

absl::Status import() {
  nn::data::KaldiImportOptions options;
  options.sampleRate = sampleRate;
  options.numMelBins = numMelBins;
  options.threads = std::max(1u, (unsigned)importThreads);
  if (!speedPerturb.empty()) {
    options.speeds.assign(speedPerturb.begin(), speedPerturb.end());
    if (absl::Status status = nn::data::checkSpeeds(options.speeds);
        !status.ok())
      return nn::withContext(status, "--speed-perturb: ");
  }
  absl::StatusOr<std::optional<nn::FeatureStats>> stats = cmvnFromFlags();
  if (!stats.ok())
    return stats.status();
  int labelings =
      !vocabFile.empty() + (bpeVocabSize > 0) + !bpeModelFile.empty();
  if (labelings > 1)
    return absl::InvalidArgumentError(
        "--vocab, --bpe-vocab-size and --bpe-model each choose the labels: "
        "give one");
  if (bpeVocabSize > 0 && bpeVocabSize < 3)
    return absl::InvalidArgumentError(
        "--bpe-vocab-size " + std::to_string(bpeVocabSize) +
        ": at least 3 (the blank, <unk> and one piece)");
  std::shared_ptr<nn::data::BpeModel> bpe;
  if (!bpeModelFile.empty()) {
    // Loaded (and checked) before any audio is read.
    absl::StatusOr<std::unique_ptr<nn::data::BpeModel>> loaded =
        nn::data::BpeModel::load(bpeModelFile);
    if (!loaded.ok())
      return loaded.status();
    bpe = std::move(*loaded);
  }
  if (bpe || bpeVocabSize > 0)
    options.coder = [&bpe](const std::vector<std::string> &transcripts)
        -> absl::StatusOr<nn::data::TranscriptCoder> {
      if (!bpe) {
        std::string path = besideOutput("bpe.model");
        if (absl::Status status =
                nn::data::BpeModel::train(transcripts, bpeVocabSize, path);
            !status.ok())
          return status;
        absl::StatusOr<std::unique_ptr<nn::data::BpeModel>> trained =
            nn::data::BpeModel::load(path);
        if (!trained.ok())
          return trained.status();
        bpe = std::move(*trained);
        llvm::outs() << "trained a BPE model of " << bpeVocabSize
                     << " classes on " << transcripts.size()
                     << " transcripts, written to " << path << "\n";
      }
      nn::data::TranscriptCoder coder;
      coder.tokens = bpe->tokens();
      coder.encode = [model = bpe](const std::string &transcript) {
        return model->encode(transcript);
      };
      return coder;
    };
  if (!vocabFile.empty()) {
    absl::StatusOr<nn::Vocabulary> vocabulary = nn::Vocabulary::load(vocabFile);
    if (!vocabulary.ok())
      return vocabulary.status();
    for (int64_t i = 0; i < vocabulary->size(); ++i)
      options.tokens.push_back(vocabulary->token(i));
  }
  // Finished chunks of features wait in a work folder beside the output
  // until the import is complete; a rerun of an interrupted import
  // resumes from them (ImportWork.h).
  options.workDir = besideOutput("import.partial");
  ProgressLine progress("imported");
  absl::StatusOr<nn::data::KaldiImport> imported =
      nn::data::isLhotseManifest(sourceDir)
          ? nn::data::importLhotseCuts(sourceDir, options, std::ref(progress))
          : nn::data::importKaldiDirectory(sourceDir, options,
                                           std::ref(progress));
  if (!imported.ok())
    return imported.status();
  if (imported->reused)
    llvm::outs() << "resumed an interrupted import: " << imported->reused
                 << " utterances from " << options.workDir << "\n";
  for (const std::string &problem : imported->problems)
    llvm::errs() << "nn-data: skipped: " << problem << "\n";
  int64_t skipped = 0;
  std::string reasons;
  for (const auto &[reason, count] : imported->skipped) {
    skipped += count;
    reasons +=
        (reasons.empty() ? "" : ", ") + std::to_string(count) + " " + reason;
  }
  if (!imported->imported)
    return absl::InvalidArgumentError(
        "no utterance of '" + sourceDir + "' could be imported" +
        (reasons.empty() ? std::string(" (its text lists none)")
                         : " (" + reasons + ")"));

  // The utterances stream from the work folder's chunks, in order.
  auto forEachUtterance =
      [&](const std::function<absl::Status(nn::data::ImportedUtterance &)>
              &visit) -> absl::Status {
    for (size_t c = 0; c < imported->chunkIds.size(); ++c) {
      absl::StatusOr<std::vector<nn::data::ImportedUtterance>> chunk =
          imported->work->read(c, imported->chunkIds[c]);
      if (!chunk.ok())
        return chunk.status();
      for (nn::data::ImportedUtterance &u : *chunk)
        if (absl::Status status = visit(u); !status.ok())
          return status;
    }
    return absl::OkStatus();
  };
  // --cmvn=global: this set's statistics first, over every frame.
  if (*stats && cmvnStatsFile.empty())
    if (absl::Status status =
            forEachUtterance([&](nn::data::ImportedUtterance &u) {
              return (*stats)->accumulate(u.arrays.at("features"));
            });
        !status.ok())
      return status;
  ShardWriter writer;
  if (absl::Status status =
          forEachUtterance([&](nn::data::ImportedUtterance &u) {
            if (*stats)
              if (absl::Status status =
                      (*stats)->apply(u.arrays.at("features"));
                  !status.ok())
                return status;
            u.arrays[nn::kIdArray] = idArray(u.id);
            return writer.add(u.id, std::move(u.arrays));
          });
      !status.ok())
    return status;
  if (absl::Status status = writer.finish(); !status.ok())
    return status;
  if (*stats) {
    std::string path = besideOutput("cmvn.npz");
    if (absl::Status status = (*stats)->write(path); !status.ok())
      return status;
    llvm::outs() << "normalized the features with the global mean and "
                    "variance of "
                 << (cmvnStatsFile.empty() ? std::string("this set")
                                           : "'" + cmvnStatsFile + "'")
                 << " (" << (*stats)->frames() << " frames), written to "
                 << path << "\n";
  }
  if (vocabFile.empty()) {
    // The vocabulary goes beside the data.
    std::string path = besideOutput("tokens.txt");
    std::string tokens;
    for (const std::string &token : imported->tokens)
      tokens += token + "\n";
    if (absl::Status status = nn::writeFileAtomically(path, tokens);
        !status.ok())
      return status;
    llvm::outs() << "wrote the vocabulary (" << imported->tokens.size()
                 << " classes, blank 0) to " << path << "\n";
  }
  if (skipped)
    llvm::outs() << "skipped " << skipped << " utterances (" << reasons
                 << ")\n";
  // The output is complete: its work is no longer needed.
  return imported->work->remove();
}

} // namespace

int main(int argc, char **argv) {
  llvm::InitLLVM init(argc, argv);
  cl::ParseCommandLineOptions(argc, argv,
                              "nn-data: write datasets for nn-train\n");
  for (cl::SubCommand *command :
       {&convertCommand, &synthesizeCommand, &importCommand})
    if (*command)
      if (std::string flag = nn::tools::repeatedFlag(*command); !flag.empty())
        return fail(absl::InvalidArgumentError(
            flag + " is given more than once; give it once"));
  absl::Status status;
  if (convertCommand)
    status = convert();
  else if (importCommand)
    status = import();
  else if (synthesizeCommand && output == "speech") {
    if (speechDir.empty())
      return fail(absl::InvalidArgumentError(
          "synthesize speech needs the directory to write"));
    status = synthesizeSpeech();
  } else if (synthesizeCommand) {
    if (!speechDir.empty())
      return fail(absl::InvalidArgumentError(
          "synthesize takes one output (OUT.npz, or 'speech DIR'), got '" +
          output + "' and '" + speechDir + "'"));
    status = synthesize();
  } else {
    llvm::errs() << "nn-data: give a subcommand: convert, import or "
                    "synthesize "
                    "(--help lists them)\n";
    return 2;
  }
  return status.ok() ? 0 : fail(status);
}
