//===- StagesTest.cpp - stage files: the recipe, reruns and bad files -----===//
//
// The shipped recipe (examples/recipe: CTC, Viterbi alignment with a
// prior, frame-wise CE, dev decoded with the CTC model) run from its stage
// file on the synthetic segment task with fixed seeds, checked against the
// task's truth: each label's aligned frames start inside its true segment,
// the frame-wise stage ends with a lower dev frame error than the CTC
// model it started from, the decode stage's label error rate is low, and
// MWER fine-tuning lowers the dev expected risk it trains.
// A decode stage's hypotheses and error counts against a plain greedy
// decoder and edit distance. Then reruns (nothing done twice) and bad
// stage files (each a clear error before anything runs).
//
//===----------------------------------------------------------------------===//

#include "training/Stages.h"
#include "nn/Dataset.h"
#include "nn/Npy.h"
#include "nn/Train.h"
#include "training/StageFile.h"

#include "llvm/Support/FileSystem.h"
#include "llvm/Support/JSON.h"

#include <gtest/gtest.h>

#include <cstring>
#include <fstream>
#include <random>
#include <sstream>
#include <unistd.h>

using namespace nn;
using namespace nn::training;

namespace {

std::string readFile(const std::string &path) {
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

std::string recipeDir() {
  return std::string(NN_SOURCE_DIR) + "/examples/recipe";
}

/// A fresh directory for one test.
std::string scratch(const std::string &name) {
  std::string dir =
      ::testing::TempDir() + "stages-" + name + "-" + std::to_string(getpid());
  llvm::sys::fs::remove_directories(dir);
  llvm::sys::fs::create_directories(dir);
  return dir;
}

double lossIn(const std::vector<std::pair<std::string, double>> &losses,
              const std::string &name) {
  for (const auto &[loss, value] : losses)
    if (loss == name)
      return value;
  ADD_FAILURE() << "no loss " << name;
  return NAN;
}

const StageReport &reportOf(const StagePipeline &pipeline,
                            const std::string &name) {
  for (const StageReport &report : pipeline.reports())
    if (report.name == name)
      return report;
  static StageReport none;
  ADD_FAILURE() << "no stage " << name;
  return none;
}

/// The share of labels whose aligned frame lies inside the label's true
/// segment, from an alignment overlay shard and the data shard it belongs
/// to (the task's "segments"). A label's aligned frame: with the CTC
/// topology's label loop, the first frame of its run (a class after the
/// blank or after another class); with RNA, the one frame emitting it.
double labelsInsideSegments(const std::string &overlay, const std::string &data,
                            bool loop, int64_t &labels) {
  std::map<std::string, Tensor> aligned, truth;
  EXPECT_TRUE(readNpz(overlay, aligned).ok());
  EXPECT_TRUE(readNpz(data, truth).ok());
  const Tensor &path = aligned.at("alignment");
  const Tensor &frames = aligned.at("alignment.lengths");
  const Tensor &segments = truth.at("segments");
  const Tensor &counts = truth.at("segments.lengths");
  int64_t row = 0, segment = 0, inside = 0;
  labels = 0;
  for (int64_t u = 0; u < frames.numElements(); ++u) {
    std::vector<int64_t> starts;
    int32_t previous = 0;
    for (int64_t t = 0; t < frames.at(u); ++t) {
      int32_t cls = path.data<int32_t>()[row + t];
      EXPECT_GE(cls, 0) << "utterance " << u << ": a feasible path";
      if (cls > 0 && (!loop || cls != previous))
        starts.push_back(t);
      previous = cls;
    }
    EXPECT_EQ((int64_t)starts.size(), (int64_t)counts.at(u))
        << "utterance " << u << ": one run per label";
    for (int64_t i = 0; i < counts.at(u) && i < (int64_t)starts.size(); ++i) {
      int64_t begin = (int64_t)segments.at(2 * (segment + i));
      int64_t end = (int64_t)segments.at(2 * (segment + i) + 1);
      inside += starts[i] >= begin && starts[i] < end;
      ++labels;
    }
    row += (int64_t)frames.at(u);
    segment += (int64_t)counts.at(u);
  }
  return labels ? (double)inside / (double)labels : 0.0;
}

/// The chunks of 32 frames every 24 (from frame 0 until a chunk reaches
/// the end) of the utterances of dataset shard `shard`.
int64_t chunksOf32Every24(const std::string &shard) {
  std::map<std::string, Tensor> data;
  EXPECT_TRUE(readNpz(shard, data).ok()) << shard;
  const Tensor &frames = data.at("features.lengths");
  int64_t chunks = 0;
  for (int64_t u = 0; u < frames.numElements(); ++u)
    for (int64_t start = 0;; start += 24) {
      ++chunks;
      if (start + 32 >= (int64_t)frames.at(u))
        break;
    }
  EXPECT_GT(chunks, frames.numElements());
  return chunks;
}

/// The batches the last checkpoint of `dir` had trained.
int64_t checkpointBatches(const std::string &dir) {
  std::string last;
  std::error_code ec;
  for (llvm::sys::fs::directory_iterator it(dir, ec), end; it != end && !ec;
       it.increment(ec))
    if (llvm::StringRef(it->path()).ends_with(".npz"))
      last = std::max(last, it->path());
  std::map<std::string, Tensor> checkpoint;
  EXPECT_TRUE(readNpz(last, checkpoint).ok()) << last;
  TrainState state;
  EXPECT_TRUE(checkpointFromArrays(checkpoint, last, state).ok());
  return state.batches;
}

/// Runs a stage file quietly; `finished` on success.
absl::Status runStages(const std::string &file, const std::string &work,
                       std::unique_ptr<StagePipeline> &pipeline) {
  absl::StatusOr<std::unique_ptr<StagePipeline>> loaded =
      StagePipeline::load(file, work);
  if (!loaded.ok())
    return loaded.status();
  pipeline = std::move(*loaded);
  OutputOptions quiet;
  bool finished = false;
  if (absl::Status status = pipeline->prepare(quiet); !status.ok())
    return status;
  if (absl::Status status = pipeline->run(quiet, finished); !status.ok())
    return status;
  EXPECT_TRUE(finished);
  return absl::OkStatus();
}

TEST(StagesTest, CtcAlignFrameWiseRecipe) {
  std::string work = scratch("recipe");
  std::unique_ptr<StagePipeline> pipeline;
  absl::Status status = runStages(recipeDir() + "/recipe.json", work, pipeline);
  ASSERT_TRUE(status.ok()) << status.message();
  ASSERT_EQ(pipeline->reports().size(), 5u);
  for (const StageReport &report : pipeline->reports())
    EXPECT_FALSE(report.skipped) << report.name;

  // Stage 2: the alignments, next to the data, against the true segments.
  const StageReport &align = reportOf(*pipeline, "align");
  ASSERT_EQ(align.aligned.size(), 2u);
  EXPECT_EQ(align.aligned[0].overlay, work + "/data/train.align");
  ASSERT_EQ(align.logPrior.size(), 8u);
  EXPECT_GT(align.logPrior[0], align.logPrior[1]) << "the blank is the most "
                                                     "frequent class";
  int64_t devLabels = 0, trainLabels = 0;
  double devInside = labelsInsideSegments(
      work + "/data/dev.align/shard-00000.npz",
      work + "/data/dev/shard-00000.npz", /*loop=*/true, devLabels);
  double trainInside = labelsInsideSegments(
      work + "/data/train.align/shard-00000.npz",
      work + "/data/train/shard-00000.npz", /*loop=*/true, trainLabels);
  EXPECT_GT(devLabels, 400);
  EXPECT_GE(devInside, 0.9) << devLabels << " dev labels";
  EXPECT_GE(trainInside, 0.9) << trainLabels << " train labels";

  // Dev frame error rates. Stage 3 starts from the CTC parameters: its
  // first dev evaluation is the CTC model's on stage 3's yardsticks (the
  // alignments it trains on, and the task's true frame labels, which
  // stage 1 also reports).
  const StageReport &ctc = reportOf(*pipeline, "ctc");
  const StageReport &ce = reportOf(*pipeline, "ce");
  double ctcTrue = lossIn(ctc.devAtEnd, "fer_true");
  double startTrue = lossIn(ce.devAtStart, "fer_true");
  double startAligned = lossIn(ce.devAtStart, "fer");
  double endTrue = lossIn(ce.devAtEnd, "fer_true");
  double endAligned = lossIn(ce.devAtEnd, "fer");
  EXPECT_EQ(startTrue, ctcTrue) << "stage 3 starts from stage 1's model";
  EXPECT_LT(endAligned, startAligned);
  EXPECT_LT(endTrue, ctcTrue);
  // Dev label error rates of greedy decoding (eval_only): the CTC model
  // recognizes most labels (0.121 when written), and stage 3 starts from
  // the same number.
  double ctcLer = lossIn(ctc.devAtEnd, "ler");
  EXPECT_GT(ctcLer, 0.0);
  EXPECT_LT(ctcLer, 0.2);
  EXPECT_EQ(lossIn(ce.devAtStart, "ler"), ctcLer);

  // Stage 4: dev decoded greedily with the CTC model, against every dev
  // label (as many as the task's segments): the label error rate stage 1's
  // last dev evaluation reported (its eval_only `ler`), and its CTC loss,
  // for the same parameters and data.
  const StageReport &decode = reportOf(*pipeline, "decode");
  ASSERT_EQ(decode.decoded.size(), 1u);
  const StageReport::Decoded &dev = decode.decoded[0];
  EXPECT_EQ(dev.overlay, work + "/data/dev.decode");
  EXPECT_EQ(dev.utterances, 128);
  EXPECT_TRUE(dev.scored);
  EXPECT_EQ(dev.unit, "label");
  EXPECT_EQ(dev.referenceLength, devLabels);
  ASSERT_TRUE(dev.errorRate.has_value());
  EXPECT_LT(*dev.errorRate, 0.2);
  EXPECT_NEAR(*dev.errorRate, ctcLer, 1e-6);
  EXPECT_NEAR(lossIn(dev.losses, "ler"), *dev.errorRate, 1e-6);
  EXPECT_NEAR(lossIn(dev.losses, "ctc"), lossIn(ctc.devAtEnd, "ctc"),
              1e-5 * lossIn(ctc.devAtEnd, "ctc"));
  std::printf("labels starting inside their segment: dev %.3f (%lld), train "
              "%.3f (%lld); dev frame error against the alignments: CTC "
              "model %.4f, after CE %.4f; against the true frame labels: CTC "
              "model %.4f, after CE %.4f; dev label error rate of the CTC "
              "model, greedy: %.4f (%lld / %lld)\n",
              devInside, (long long)devLabels, trainInside,
              (long long)trainLabels, startAligned, endAligned, ctcTrue,
              endTrue, *dev.errorRate, (long long)dev.errors,
              (long long)dev.referenceLength);

  // Stage 5: MWER fine-tuning of the CTC model (with its CTC loss mixed
  // in): it starts from stage 1's dev numbers, and the expected risk over
  // the dev N-best lists, the objective it trains, falls. Its label error
  // rate is reported, not asserted: on this task it is within a few errors
  // of continuing CTC training (docs/decoding.md has the measurement).
  const StageReport &mwer = reportOf(*pipeline, "mwer");
  EXPECT_EQ(lossIn(mwer.devAtStart, "ler"), ctcLer);
  EXPECT_NEAR(lossIn(mwer.devAtStart, "ctc"), lossIn(ctc.devAtEnd, "ctc"),
              1e-5 * lossIn(ctc.devAtEnd, "ctc"));
  double riskStart = lossIn(mwer.devAtStart, "mwer");
  double riskEnd = lossIn(mwer.devAtEnd, "mwer");
  EXPECT_LT(riskStart, 0.0) << "better hypotheses are more probable";
  EXPECT_LT(riskEnd, riskStart);
  std::printf("MWER stage: dev expected risk %.4f -> %.4f, label error rate "
              "%.4f -> %.4f\n",
              riskStart, riskEnd, lossIn(mwer.devAtStart, "ler"),
              lossIn(mwer.devAtEnd, "ler"));

  // A rerun does nothing again: every stage is skipped, outputs kept.
  std::string parameters = readFile(work + "/ce/parameters.npz");
  std::unique_ptr<StagePipeline> again;
  status = runStages(recipeDir() + "/recipe.json", work, again);
  ASSERT_TRUE(status.ok()) << status.message();
  for (const StageReport &report : again->reports())
    EXPECT_TRUE(report.skipped) << report.name;
  EXPECT_EQ(readFile(work + "/ce/parameters.npz"), parameters);
  llvm::sys::fs::remove_directories(work);
}

// The RNA recipe (examples/recipe-rna): a transducer trained with the
// full-sum RNA loss, its best paths over the joint, frame-wise CE with
// each frame's prediction state gathered along the alignment, dev decoded
// greedily; every network written once (model.mlir), the search driving
// the prediction network training called.
TEST(StagesTest, RnaAlignFrameWiseDecodeRecipe) {
  std::string work = scratch("rna");
  std::unique_ptr<StagePipeline> pipeline;
  absl::Status status =
      runStages(std::string(NN_SOURCE_DIR) + "/examples/recipe-rna/recipe.json",
                work, pipeline);
  ASSERT_TRUE(status.ok()) << status.message();
  ASSERT_EQ(pipeline->reports().size(), 4u);
  int64_t devLabels = 0, trainLabels = 0;
  double devInside = labelsInsideSegments(
      work + "/data/dev.align/shard-00000.npz",
      work + "/data/dev/shard-00000.npz", /*loop=*/false, devLabels);
  double trainInside = labelsInsideSegments(
      work + "/data/train.align/shard-00000.npz",
      work + "/data/train/shard-00000.npz", /*loop=*/false, trainLabels);
  EXPECT_GT(devLabels, 400);
  EXPECT_GE(devInside, 0.9) << devLabels << " dev labels";
  EXPECT_GE(trainInside, 0.9) << trainLabels << " train labels";
  // Stage 3 keeps reproducing its targets (a frame-wise model that read
  // the alignments shifted or on the wrong prediction state would miss
  // far more). It does not beat the transducer it started from on them
  // (docs/sequence-training.md): RNA emits each label on one frame, so no
  // prior widens the alignment as for CTC.
  const StageReport &ce = reportOf(*pipeline, "ce");
  double start = lossIn(ce.devAtStart, "fer"), end = lossIn(ce.devAtEnd, "fer");
  EXPECT_LT(end, 0.06);
  // Stage 4: the label error rate of greedy decoding with the RNA model,
  // the one stage 1's last dev evaluation reported (its eval_only `ler`),
  // and its loss, for the same parameters and data.
  const StageReport &rna = reportOf(*pipeline, "rna");
  const StageReport &decode = reportOf(*pipeline, "decode");
  ASSERT_EQ(decode.decoded.size(), 1u);
  const StageReport::Decoded &dev = decode.decoded[0];
  EXPECT_EQ(dev.utterances, 128);
  EXPECT_EQ(dev.referenceLength, devLabels);
  ASSERT_TRUE(dev.errorRate.has_value());
  EXPECT_LT(*dev.errorRate, 0.3);
  EXPECT_NEAR(*dev.errorRate, lossIn(rna.devAtEnd, "ler"), 1e-6);
  EXPECT_NEAR(lossIn(dev.losses, "rna"), lossIn(rna.devAtEnd, "rna"),
              1e-5 * lossIn(rna.devAtEnd, "rna"));
  std::printf("labels emitted inside their segment: dev %.3f (%lld), train "
              "%.3f (%lld); dev frame error against the alignments: RNA "
              "model %.4f, after CE %.4f; dev label error rate of the RNA "
              "model, greedy: %.4f (%lld / %lld)\n",
              devInside, (long long)devLabels, trainInside,
              (long long)trainLabels, start, end, *dev.errorRate,
              (long long)dev.errors, (long long)dev.referenceLength);
  llvm::sys::fs::remove_directories(work);
}

/// For RNN-T paths (`overlay`'s alignment over its own lengths): checks
/// that each has T blanks and the utterance's labels in order, and returns
/// the fraction of labels emitted on a frame (the blanks before them)
/// inside their true segment; `labels` gets their count.
double rnntLabelsInsideSegments(const std::string &overlay,
                                const std::string &data, int64_t &labels) {
  std::map<std::string, Tensor> aligned, truth;
  EXPECT_TRUE(readNpz(overlay, aligned).ok());
  EXPECT_TRUE(readNpz(data, truth).ok());
  const Tensor &path = aligned.at("alignment");
  const Tensor &positions = aligned.at("alignment.lengths");
  const Tensor &frames = truth.at("features.lengths");
  const Tensor &references = truth.at("labels");
  const Tensor &segments = truth.at("segments");
  const Tensor &counts = truth.at("segments.lengths");
  int64_t row = 0, segment = 0, inside = 0;
  labels = 0;
  for (int64_t u = 0; u < positions.numElements(); ++u) {
    int64_t t = 0, emitted = 0;
    EXPECT_EQ(positions.at(u), frames.at(u) + counts.at(u))
        << "utterance " << u << ": T + U positions";
    for (int64_t k = 0; k < (int64_t)positions.at(u); ++k) {
      int32_t cls = path.data<int32_t>()[row + k];
      if (cls == 0) {
        ++t;
        continue;
      }
      if (emitted == (int64_t)counts.at(u)) {
        ADD_FAILURE() << "utterance " << u << ": more labels than "
                      << counts.at(u);
        break;
      }
      EXPECT_EQ(cls, (int32_t)references.at(segment + emitted))
          << "utterance " << u << ", label " << emitted;
      int64_t begin = (int64_t)segments.at(2 * (segment + emitted));
      int64_t end = (int64_t)segments.at(2 * (segment + emitted) + 1);
      inside += t >= begin && t < end;
      ++emitted;
      ++labels;
    }
    EXPECT_EQ(t, (int64_t)frames.at(u)) << "utterance " << u << ": blanks";
    EXPECT_EQ(emitted, (int64_t)counts.at(u)) << "utterance " << u;
    row += (int64_t)positions.at(u);
    segment += (int64_t)counts.at(u);
  }
  return labels ? (double)inside / (double)labels : 0.0;
}

// The RNN-T recipe (examples/recipe-rnnt): full-sum RNN-T, its best paths
// over the joint (T + U emissions each, a computed dim), CE along them
// (each position at the encoder frame of the blanks before it and the
// prediction state of the labels before it), dev decoded greedily.
TEST(StagesTest, RnntAlignFrameWiseDecodeRecipe) {
  std::string work = scratch("rnnt");
  std::unique_ptr<StagePipeline> pipeline;
  absl::Status status = runStages(std::string(NN_SOURCE_DIR) +
                                      "/examples/recipe-rnnt/recipe.json",
                                  work, pipeline);
  ASSERT_TRUE(status.ok()) << status.message();
  ASSERT_EQ(pipeline->reports().size(), 4u);
  int64_t devLabels = 0, trainLabels = 0;
  double devInside =
      rnntLabelsInsideSegments(work + "/data/dev.align/shard-00000.npz",
                               work + "/data/dev/shard-00000.npz", devLabels);
  double trainInside = rnntLabelsInsideSegments(
      work + "/data/train.align/shard-00000.npz",
      work + "/data/train/shard-00000.npz", trainLabels);
  EXPECT_EQ(devLabels, 554);
  EXPECT_GE(devInside, 0.85);
  EXPECT_GE(trainInside, 0.85);
  // CE along the paths, in chunks of 32 frames every 24 (16 per batch, one
  // bucket: 2 epochs of ceil(chunks / 16) steps), lowers the dev error on
  // them, and the model it leaves decodes better than the full-sum one.
  int64_t chunks = chunksOf32Every24(work + "/data/train/shard-00000.npz");
  EXPECT_EQ(checkpointBatches(work + "/ce/checkpoints"),
            2 * ((chunks + 15) / 16));
  const StageReport &rnnt = reportOf(*pipeline, "rnnt");
  const StageReport &ce = reportOf(*pipeline, "ce");
  double start = lossIn(ce.devAtStart, "per"), end = lossIn(ce.devAtEnd, "per");
  EXPECT_LT(end, start);
  const StageReport &decode = reportOf(*pipeline, "decode");
  ASSERT_EQ(decode.decoded.size(), 1u);
  ASSERT_TRUE(decode.decoded[0].errorRate.has_value());
  double ler = *decode.decoded[0].errorRate;
  EXPECT_LT(ler, lossIn(rnnt.devAtEnd, "ler"));
  std::printf("RNN-T paths: labels inside their segment: dev %.3f (%lld), "
              "train %.3f (%lld); dev error on the paths %.4f -> %.4f; dev "
              "label error rate: full-sum %.4f, after CE %.4f\n",
              devInside, (long long)devLabels, trainInside,
              (long long)trainLabels, start, end, lossIn(rnnt.devAtEnd, "ler"),
              ler);
  llvm::sys::fs::remove_directories(work);
}

/// `text` with the first `from` replaced by `to` (which must be there).
std::string replaced(std::string text, const std::string &from,
                     const std::string &to) {
  size_t at = text.find(from);
  EXPECT_NE(at, std::string::npos) << from;
  if (at != std::string::npos)
    text.replace(at, from.size(), to);
  return text;
}

// The staged transducer recipe (examples/recipe-transducer): full-sum RNA
// training that grows the encoder after two epochs (a BLSTM layer added,
// copy_param_mode "subset"), then three rounds of an alignment over the
// joint and frame-wise training on it under Newbob, each alignment made
// with the latest model, then greedy decoding.
TEST(StagesTest, TransducerRecipeGrowsRealignsAndImproves) {
  std::string work = scratch("transducer");
  std::string file =
      std::string(NN_SOURCE_DIR) + "/examples/recipe-transducer/recipe.json";
  std::unique_ptr<StagePipeline> pipeline;
  absl::Status status = runStages(file, work, pipeline);
  ASSERT_TRUE(status.ok()) << status.message();
  ASSERT_EQ(pipeline->reports().size(), 9u);

  // Growth: the grown model trained on from the small one ends with a
  // lower dev loss and label error rate than the small one reached.
  const StageReport &pretrain = reportOf(*pipeline, "pretrain");
  const StageReport &fullsum = reportOf(*pipeline, "fullsum");
  EXPECT_LT(lossIn(fullsum.devAtEnd, "rna"), lossIn(pretrain.devAtEnd, "rna"));
  EXPECT_LT(lossIn(fullsum.devAtEnd, "ler"), lossIn(pretrain.devAtEnd, "ler"));

  // Each alignment emits nearly every label inside its true segment (dev:
  // 90.1%, 91.5%, 91.3% over the rounds; train: 87.9%, 88.3%, 88.4%), the
  // last one more than the first, and each round's frame error on its own
  // alignments is lower than the round before's, at the start (the
  // previous model against the new alignment) and at the end.
  double startFer = 1.0, endFer = 1.0, firstDevInside = 0, devInside = 0;
  // The fixed stages train on chunks of 32 frames every 24 (from frame 0
  // until a chunk reaches the end), 16 per batch, in one bucket: 3 epochs
  // of ceil(chunks / 16) steps.
  int64_t chunks = chunksOf32Every24(work + "/data/train/shard-00000.npz");
  for (int k = 0; k < 3; ++k) {
    std::string round = std::to_string(k);
    for (const char *data : {"train", "dev"}) {
      int64_t labels = 0;
      double inside = labelsInsideSegments(
          work + "/data/" + data + ".align" + round + "/shard-00000.npz",
          work + "/data/" + data + "/shard-00000.npz", /*loop=*/false, labels);
      bool dev = std::strcmp(data, "dev") == 0;
      EXPECT_GE(inside, dev ? 0.9 : 0.87) << data << " align" << round;
      if (dev)
        (k == 0 ? firstDevInside : devInside) = inside;
      std::printf("align%d %s: %.3f of %lld labels inside their segment\n", k,
                  data, inside, (long long)labels);
    }
    const StageReport &fixed = reportOf(*pipeline, "fixed" + round);
    double start = lossIn(fixed.devAtStart, "fer");
    double end = lossIn(fixed.devAtEnd, "fer");
    EXPECT_LT(start, startFer) << "fixed" << round;
    EXPECT_LT(end, endFer) << "fixed" << round;
    std::printf("fixed%d: dev frame error %.4f -> %.4f\n", k, start, end);
    startFer = start;
    endFer = end;

    // Newbob (decay 0.9, a window of one epoch pair, relative-lr, a rate
    // held for 2 epochs): epochs 1 and 2 train at 1e-3, and epoch 3 at
    // 9e-4 exactly when the relative change of the dev CE from epoch 1 to
    // epoch 2, (s2 - s1) / |s2|, is above -0.01 (too little improvement).
    std::map<std::string, Tensor> checkpoint;
    std::string last;
    std::error_code ec;
    for (llvm::sys::fs::directory_iterator
             it(work + "/fixed" + round + "/checkpoints", ec),
         end;
         it != end && !ec; it.increment(ec))
      if (llvm::StringRef(it->path()).ends_with(".npz"))
        last = std::max(last, it->path());
    ASSERT_TRUE(readNpz(last, checkpoint).ok()) << last;
    TrainState state;
    ASSERT_TRUE(checkpointFromArrays(checkpoint, last, state).ok());
    ASSERT_EQ(state.epochRates.size(), 3u);
    EXPECT_EQ(state.batches, 3 * ((chunks + 15) / 16));
    for (const EpochRate &epoch : state.epochRates)
      EXPECT_TRUE(epoch.scored);
    EXPECT_EQ(state.epochRates[0].rate, 1e-3);
    EXPECT_EQ(state.epochRates[1].rate, 1e-3);
    double s1 = state.epochRates[0].score, s2 = state.epochRates[1].score;
    EXPECT_EQ(state.epochRates[2].rate,
              (s2 - s1) / std::abs(s2) > -0.01 ? 1e-3 * 0.9 : 1e-3)
        << "scores " << s1 << ", " << s2;
  }

  EXPECT_GT(devInside, firstDevInside);

  // The recipe's model decodes better than the full-sum model it started
  // from (the `ler` its last dev evaluation reported).
  const StageReport &decode = reportOf(*pipeline, "decode");
  ASSERT_EQ(decode.decoded.size(), 1u);
  ASSERT_TRUE(decode.decoded[0].errorRate.has_value());
  double ler = *decode.decoded[0].errorRate;
  EXPECT_LT(ler, lossIn(fullsum.devAtEnd, "ler"));
  EXPECT_LT(ler, 0.15);
  std::printf("dev label error rate: small full-sum model %.4f, grown "
              "%.4f, after three alignment rounds %.4f\n",
              lossIn(pretrain.devAtEnd, "ler"), lossIn(fullsum.devAtEnd, "ler"),
              ler);

  // A changed stage reruns with the stages after it; the ones before are
  // skipped. The copy keeps the recipe's relative paths.
  std::string copy = scratch("transducer-copy");
  llvm::sys::fs::create_directories(copy + "/recipe-transducer");
  llvm::sys::fs::create_directories(copy + "/recipe-rna");
  for (const char *path :
       {"recipe-transducer/model.mlir", "recipe-rna/model.mlir"})
    llvm::sys::fs::copy_file(std::string(NN_SOURCE_DIR) + "/examples/" + path,
                             copy + "/" + path);
  std::string changed = replaced(readFile(file), "\"name\": \"fixed2\",",
                                 "\"name\": \"fixed2\", \"seed\": 7,");
  {
    std::ofstream out(copy + "/recipe-transducer/recipe.json");
    out << changed;
  }
  std::unique_ptr<StagePipeline> again;
  status = runStages(copy + "/recipe-transducer/recipe.json", work, again);
  ASSERT_TRUE(status.ok()) << status.message();
  for (const StageReport &report : again->reports())
    EXPECT_EQ(report.skipped,
              report.name != "fixed2" && report.name != "decode")
        << report.name;
  llvm::sys::fs::remove_directories(copy);
  llvm::sys::fs::remove_directories(work);
}

/// The recipe's three stages on small graphs (a linear layer instead of
/// the BLSTM: they compile in a fraction of the time) and less data, as
/// the lit test of nn-train --stages runs them.
std::string tinyDir() {
  return std::string(NN_SOURCE_DIR) + "/test/Tools/Inputs/stages";
}

/// The error of loading and preparing stage file `text` in `dir`; empty
/// when there is none.
std::string stageError(const std::string &dir, const std::string &text) {
  std::string path = dir + "/stages.json";
  std::ofstream(path) << text;
  absl::StatusOr<std::unique_ptr<StagePipeline>> pipeline =
      StagePipeline::load(path);
  if (!pipeline.ok())
    return std::string(pipeline.status().message());
  absl::Status status = (*pipeline)->prepare(OutputOptions());
  return status.ok() ? "" : std::string(status.message());
}

/// Utterances no alignment path fits (more labels than frames): an error
/// naming them by default; with "infeasible": "skip" the align stage
/// leaves them out of what it writes (nn.keep 0) and the next stage
/// trains on the others.
TEST(StagesTest, InfeasibleUtterancesAreAnErrorOrLeftOut) {
  std::string dir = scratch("infeasible");
  for (const char *graph : {"ctc.mlir", "align.mlir", "ce.mlir"})
    std::ofstream(dir + "/" + graph) << readFile(tinyDir() + "/" + graph);
  // 20 utterances; 7 and 13 have 3 frames for 5 labels.
  std::mt19937 rng(5);
  std::normal_distribution<float> normal;
  std::vector<UtteranceArrays> utterances;
  for (int u = 0; u < 20; ++u) {
    bool infeasible = u == 7 || u == 13;
    int64_t frames = infeasible ? 3 : 12 + u % 5, labels = infeasible ? 5 : 3;
    std::vector<float> features(frames * 16);
    for (float &v : features)
      v = normal(rng);
    std::vector<int32_t> sequence;
    for (int64_t i = 0; i < labels; ++i)
      sequence.push_back(1 + (int32_t)((u + i) % 7));
    utterances.push_back(
        {{"features", Tensor::of<float>(DType::f32, {frames, 16}, features)},
         {"labels", Tensor::of<int32_t>(DType::i32, {labels}, sequence)}});
  }
  ASSERT_TRUE(writeNpz(dir + "/data.npz",
                       concatenateUtterances(utterances, 0, utterances.size()))
                  .ok());
  std::string stages = R"({
  "data": {"train": {"path": "data.npz"}},
  "stages": [
    {"name": "ctc", "kind": "train", "graph": "ctc.mlir", "losses": ["ctc"],
     "steps": 2, "reads": {"train": "train"}, "writes": {"parameters": "ctc"}},
    {"name": "align", "kind": "align", "graph": "align.mlir", INFEASIBLE
     "prior": {"parameter": "prior", "scale": 0.5},
     "reads": {"parameters": "ctc", "data": ["train"]},
     "writes": {"data": ["train_aligned"]}},
    {"name": "ce", "kind": "train", "graph": "ce.mlir", "losses": ["ce"],
     "steps": 2, "reads": {"train": "train_aligned", "init": "ctc"},
     "writes": {"parameters": "ce"}}
  ]
})";
  std::string path = dir + "/stages.json";
  std::ofstream(path) << replaced(stages, "INFEASIBLE", "");
  std::unique_ptr<StagePipeline> pipeline;
  absl::Status status = runStages(path, dir + "/work", pipeline);
  ASSERT_FALSE(status.ok());
  EXPECT_EQ(status.message(),
            "stages[1] ('align'): no alignment path fits 2 utterances of "
            "'train' (too few frames for their labels): utterance 7 of '" +
                dir + "/data.npz' (3 frames); utterance 13 of '" + dir +
                "/data.npz' (3 frames). Fix the data, or set \"infeasible\": "
                "\"skip\" to leave them out of what the stage writes");

  std::ofstream(path) << replaced(stages, "INFEASIBLE",
                                  "\"infeasible\": \"skip\",");
  status = runStages(path, dir + "/work", pipeline);
  ASSERT_TRUE(status.ok()) << status.message();
  const StageReport &align = reportOf(*pipeline, "align");
  ASSERT_EQ(align.aligned.size(), 1u);
  EXPECT_EQ(align.aligned[0].utterances, 18);
  EXPECT_EQ(align.aligned[0].leftOut, 2);
  std::map<std::string, Tensor> overlay;
  ASSERT_TRUE(readNpz(dir + "/data.align/data.npz", overlay).ok());
  const Tensor &keep = overlay.at(kKeepArray);
  const Tensor &lengths = overlay.at("alignment.lengths");
  ASSERT_EQ(keep.numElements(), 20);
  for (int64_t u = 0; u < 20; ++u) {
    bool left = u == 7 || u == 13;
    EXPECT_EQ(keep.at(u), left ? 0.0 : 1.0) << u;
    EXPECT_EQ(lengths.at(u), left ? 0.0 : (double)(12 + u % 5)) << u;
  }
  EXPECT_TRUE(llvm::sys::fs::exists(dir + "/work/ce/parameters.npz"));
  llvm::sys::fs::remove_directories(dir);
}

/// Each utterance's values of NAME (with NAME.lengths) in `arrays`.
std::vector<std::vector<int32_t>>
perUtterance(const std::map<std::string, Tensor> &arrays,
             const std::string &name) {
  const Tensor &values = arrays.at(name);
  const Tensor &lengths = arrays.at(name + ".lengths");
  std::vector<std::vector<int32_t>> out;
  int64_t at = 0;
  for (int64_t u = 0; u < lengths.numElements(); ++u) {
    std::vector<int32_t> row;
    for (int64_t i = 0; i < (int64_t)lengths.at(u); ++i)
      row.push_back((int32_t)values.at(at + i));
    at += (int64_t)lengths.at(u);
    out.push_back(std::move(row));
  }
  return out;
}

/// Greedy CTC decoding written plainly for a linear layer without bias:
/// per frame the class with the largest logit (in double; the lowest
/// class among equal ones), repeats merged, blanks (0) dropped.
std::vector<int32_t> plainGreedy(const float *frames, int64_t count,
                                 const Tensor &weight) {
  int64_t classes = weight.shape()[0], features = weight.shape()[1];
  std::vector<int32_t> labels;
  int64_t previous = -1;
  for (int64_t t = 0; t < count; ++t) {
    int64_t best = 0;
    double bestLogit = -INFINITY;
    for (int64_t c = 0; c < classes; ++c) {
      double logit = 0;
      for (int64_t f = 0; f < features; ++f)
        logit += (double)weight.data<float>()[c * features + f] *
                 (double)frames[t * features + f];
      if (logit > bestLogit) {
        bestLogit = logit;
        best = c;
      }
    }
    if (best != 0 && best != previous)
      labels.push_back((int32_t)best);
    previous = best;
  }
  return labels;
}

/// The Levenshtein distance, by the textbook dynamic program.
int64_t plainEditDistance(const std::vector<int32_t> &a,
                          const std::vector<int32_t> &b) {
  std::vector<int64_t> row(b.size() + 1);
  for (size_t j = 0; j <= b.size(); ++j)
    row[j] = (int64_t)j;
  for (size_t i = 1; i <= a.size(); ++i) {
    int64_t diagonal = row[0];
    row[0] = (int64_t)i;
    for (size_t j = 1; j <= b.size(); ++j) {
      int64_t above = row[j];
      row[j] = std::min({row[j] + 1, row[j - 1] + 1,
                         diagonal + (a[i - 1] != b[j - 1] ? 1 : 0)});
      diagonal = above;
    }
  }
  return row[b.size()];
}

/// A decode stage decodes dev with the CTC stage's parameters: its overlay
/// holds what a plain greedy decoder gives for those parameters, its error
/// counts are a plain edit distance's, error-rate.json and the hypothesis
/// file say the same, and the written dataset reads back with the data.
/// A rerun skips it; a new vocabulary (the same file, other tokens) runs it
/// again, in words, and nothing before it.
TEST(StagesTest, DecodeStageWritesHypothesesAndErrorRates) {
  std::string dir = scratch("decode");
  for (const char *graph : {"ctc.mlir", "decode.mlir"})
    std::ofstream(dir + "/" + graph) << readFile(tinyDir() + "/" + graph);
  std::string stages = R"({
  "seed": 1,
  "data": {
    "train": {"synthesize": {"task": "segments", "utterances": 32, "features": 16, "classes": 8, "task_seed": 3, "seed": 1}},
    "dev": {"synthesize": {"task": "segments", "utterances": 20, "features": 16, "classes": 8, "task_seed": 3, "seed": 2}}
  },
  "stages": [
    {"name": "ctc", "kind": "train", "graph": "ctc.mlir", "losses": ["ctc"],
     "steps": 20, "lr": "constant:peak=3e-2",
     "reads": {"train": "train"}, "writes": {"parameters": "ctc"}},
    {"name": "decode", "kind": "decode", "graph": "decode.mlir",
     "batch_size": 6, "reads": {"parameters": "ctc", "data": ["dev"]},
     "writes": {"data": ["dev_decoded"]}VOCAB}
  ]
})";
  std::string path = dir + "/stages.json", work = dir + "/work";
  std::ofstream(path) << replaced(stages, "VOCAB", "");
  std::unique_ptr<StagePipeline> pipeline;
  absl::Status status = runStages(path, work, pipeline);
  ASSERT_TRUE(status.ok()) << status.message();
  const StageReport &decode = reportOf(*pipeline, "decode");
  ASSERT_EQ(decode.decoded.size(), 1u);
  const StageReport::Decoded &dev = decode.decoded[0];
  EXPECT_EQ(dev.data, "dev");
  EXPECT_EQ(dev.writes, "dev_decoded");
  EXPECT_EQ(dev.overlay, work + "/data/dev.decode");
  EXPECT_EQ(dev.hypotheses, work + "/decode/dev.jsonl");
  EXPECT_EQ(dev.utterances, 20);
  EXPECT_EQ(dev.leftOut, 0);
  EXPECT_EQ(dev.unit, "label");

  std::map<std::string, Tensor> parameters, data, overlay;
  ASSERT_TRUE(readNpz(work + "/ctc/parameters.npz", parameters).ok());
  ASSERT_TRUE(readNpz(work + "/data/dev/shard-00000.npz", data).ok());
  ASSERT_TRUE(readNpz(work + "/data/dev.decode/shard-00000.npz", overlay).ok());
  std::vector<std::vector<int32_t>> references = perUtterance(data, "labels");
  std::vector<std::vector<int32_t>> hypotheses = perUtterance(overlay, "hyp");
  ASSERT_EQ(hypotheses.size(), 20u);
  ASSERT_EQ(overlay.at("hyp.score").numElements(), 20);
  const Tensor &frames = data.at("features.lengths");
  int64_t row = 0, errors = 0, referenceLength = 0, labels = 0;
  for (int64_t u = 0; u < 20; ++u) {
    std::vector<int32_t> expected =
        plainGreedy(data.at("features").data<float>() + row * 16,
                    (int64_t)frames.at(u), parameters.at("out.w"));
    EXPECT_EQ(hypotheses[u], expected) << "utterance " << u;
    EXPECT_TRUE(std::isfinite(overlay.at("hyp.score").at(u))) << u;
    errors += plainEditDistance(expected, references[u]);
    referenceLength += (int64_t)references[u].size();
    labels += (int64_t)expected.size();
    row += (int64_t)frames.at(u);
  }
  EXPECT_GT(labels, 0) << "some hypothesis holds labels";
  EXPECT_EQ(dev.errors, errors);
  EXPECT_EQ(dev.referenceLength, referenceLength);
  ASSERT_TRUE(dev.errorRate.has_value());
  EXPECT_DOUBLE_EQ(*dev.errorRate, (double)errors / (double)referenceLength);

  // error-rate.json: the dataset's summary, as the hypothesis file ends.
  llvm::Expected<llvm::json::Value> rates =
      llvm::json::parse(readFile(work + "/decode/error-rate.json"));
  ASSERT_TRUE((bool)rates);
  const llvm::json::Object *devRate = rates->getAsObject()->getObject("dev");
  ASSERT_NE(devRate, nullptr);
  EXPECT_EQ(devRate->getInteger("errors"), errors);
  EXPECT_EQ(devRate->getInteger("ref_len"), referenceLength);
  EXPECT_EQ(devRate->getInteger("utterances"), 20);
  EXPECT_EQ(devRate->getString("unit"), "label");
  std::string lines = readFile(work + "/decode/dev.jsonl");
  EXPECT_EQ(std::count(lines.begin(), lines.end(), '\n'), 21);
  std::string last = lines.substr(lines.rfind('\n', lines.size() - 2) + 1);
  EXPECT_EQ(last,
            "{\"summary\": " + readFile(work + "/decode/error-rate.json")
                                   .substr(std::string("{\"dev\": ").size()));

  // Others read the written dataset: the data and its overlay.
  Manifest reader;
  reader.graph = "reader";
  reader.dims = {{DimInfo::Kind::batch, "B", "", "", 0, ""},
                 {DimInfo::Kind::seq, "T", "B", "", 0, ""}};
  reader.rootDims = {"B", "T"};
  reader.inputs = {
      {"features", DType::f32, {Axis{"B", -1}, Axis{"T", -1}, Axis{"", 16}}}};
  absl::StatusOr<Dataset> decoded = Dataset::load(
      {work + "/data/dev", work + "/data/dev.decode"}, reader, {{"hyp"}});
  ASSERT_TRUE(decoded.ok()) << decoded.status().message();
  ASSERT_EQ(decoded->size(), 20);
  for (int64_t u = 0; u < 20; ++u) {
    absl::Span<const int32_t> read = decoded->hostSequence("hyp", u);
    EXPECT_EQ(std::vector<int32_t>(read.begin(), read.end()), hypotheses[u]);
  }

  // A rerun skips both stages and leaves the overlay as it was.
  std::string written = readFile(work + "/data/dev.decode/shard-00000.npz");
  status = runStages(path, work, pipeline);
  ASSERT_TRUE(status.ok()) << status.message();
  EXPECT_TRUE(reportOf(*pipeline, "ctc").skipped);
  EXPECT_TRUE(reportOf(*pipeline, "decode").skipped);
  EXPECT_EQ(readFile(work + "/data/dev.decode/shard-00000.npz"), written);

  // A token per label is a word per label: the same edits, in words.
  std::ofstream(dir + "/tokens.txt") << "sil\na\nb\nc\nd\ne\nf\ng\n";
  std::ofstream(path) << replaced(stages, "VOCAB",
                                  ", \"vocab\": \"tokens.txt\"");
  status = runStages(path, work, pipeline);
  ASSERT_TRUE(status.ok()) << status.message();
  EXPECT_TRUE(reportOf(*pipeline, "ctc").skipped);
  ASSERT_FALSE(reportOf(*pipeline, "decode").skipped);
  ASSERT_EQ(reportOf(*pipeline, "decode").decoded.size(), 1u);
  const StageReport::Decoded &words = reportOf(*pipeline, "decode").decoded[0];
  EXPECT_EQ(words.unit, "word");
  EXPECT_EQ(words.errors, errors);
  EXPECT_EQ(words.referenceLength, referenceLength);
  // Other tokens in the same file: the stage runs again.
  std::ofstream(dir + "/tokens.txt") << "sil\nA\nB\nC\nD\nE\nF\nG\n";
  status = runStages(path, work, pipeline);
  ASSERT_TRUE(status.ok()) << status.message();
  EXPECT_TRUE(reportOf(*pipeline, "ctc").skipped);
  EXPECT_FALSE(reportOf(*pipeline, "decode").skipped);

  // Utterance 0 without frames (its features and frame labels dropped,
  // its references kept): decoded as the empty hypothesis with score 0,
  // its references all deletions, counted as without frames, not left out.
  std::map<std::string, Tensor> frameless = data;
  int64_t first = frames.at(0);
  for (const char *name : {"features", "frame_labels"}) {
    const Tensor &all = data.at(name);
    int64_t width = all.numElements() / all.shape()[0];
    std::vector<int64_t> shape = all.shape();
    shape[0] -= first;
    Tensor rest(all.dtype(), shape);
    std::memcpy(rest.raw(),
                (const char *)all.raw() + first * width * byteSize(all.dtype()),
                rest.sizeInBytes());
    frameless[name] = rest;
    // A new lengths tensor: copies of a Tensor may share its buffer.
    const Tensor &lengths = data.at(std::string(name) + ".lengths");
    Tensor zeroFirst(DType::i32, lengths.shape());
    std::memcpy(zeroFirst.raw(), lengths.raw(), lengths.sizeInBytes());
    zeroFirst.data<int32_t>()[0] = 0;
    frameless[std::string(name) + ".lengths"] = zeroFirst;
  }
  ASSERT_TRUE(writeNpz(dir + "/frameless.npz", frameless).ok());
  std::string withFrameless = replaced(
      replaced(stages, "VOCAB", ""),
      R"("dev": {"synthesize": {"task": "segments", "utterances": 20, "features": 16, "classes": 8, "task_seed": 3, "seed": 2}})",
      "\"dev\": {\"path\": \"" + dir + "/frameless.npz\"}");
  std::ofstream(path) << withFrameless;
  status = runStages(path, work, pipeline);
  ASSERT_TRUE(status.ok()) << status.message();
  const StageReport::Decoded &empty = reportOf(*pipeline, "decode").decoded[0];
  EXPECT_EQ(empty.utterances, 20);
  EXPECT_EQ(empty.withoutFrames, 1);
  EXPECT_EQ(empty.leftOut, 0);
  std::vector<int32_t> firstHypothesis = plainGreedy(
      data.at("features").data<float>(), first, parameters.at("out.w"));
  EXPECT_EQ(empty.errors,
            errors - plainEditDistance(firstHypothesis, references[0]) +
                (int64_t)references[0].size());
  EXPECT_EQ(empty.referenceLength, referenceLength);
  std::map<std::string, Tensor> emptyOverlay;
  ASSERT_TRUE(readNpz(empty.overlay + "/frameless.npz", emptyOverlay).ok())
      << empty.overlay;
  std::vector<std::vector<int32_t>> emptyHypotheses =
      perUtterance(emptyOverlay, "hyp");
  ASSERT_EQ(emptyHypotheses.size(), 20u);
  EXPECT_TRUE(emptyHypotheses[0].empty());
  EXPECT_EQ(emptyOverlay.at("hyp.score").at(0), 0.0);
  for (int64_t u = 1; u < 20; ++u)
    EXPECT_EQ(emptyHypotheses[u], hypotheses[u]) << "utterance " << u;
  llvm::sys::fs::remove_directories(dir);
}

TEST(StagesTest, BadStageFilesAreErrorsBeforeAnythingRuns) {
  std::string dir = scratch("bad");
  std::string path = dir + "/stages.json";
  for (const char *graph : {"ctc.mlir", "align.mlir", "ce.mlir", "decode.mlir"})
    std::ofstream(dir + "/" + graph) << readFile(tinyDir() + "/" + graph);
  std::string stages = readFile(tinyDir() + "/stages.json");
  // ce.mlir with an output layer of other width: a shape conflict.
  std::ofstream(dir + "/empty.txt") << "";
  std::string wide = readFile(tinyDir() + "/ce.mlir");
  while (wide.find("[8, 16]") != std::string::npos)
    wide = replaced(wide, "[8, 16]", "[8, 24]");
  wide = replaced(wide, "%features: !nn.tensor<[B, T, 16], f32>",
                  "%features: !nn.tensor<[B, T, 24], f32>");
  wide = replaced(wide, "nn.linear %features, %w : !nn.tensor<[B, T, 16], f32>",
                  "nn.linear %features, %w : !nn.tensor<[B, T, 24], f32>");
  std::ofstream(dir + "/wide.mlir") << wide;
  // decode.mlir likewise.
  std::string wideDecode = readFile(tinyDir() + "/decode.mlir");
  while (wideDecode.find("16]") != std::string::npos)
    wideDecode = replaced(wideDecode, "16]", "24]");
  std::ofstream(dir + "/wide-decode.mlir") << wideDecode;
  ASSERT_EQ(stageError(dir, stages), "");

  struct Case {
    std::string from, to, error;
  };
  std::vector<Case> cases = {
      {"\"seed\": 1,", "\"seed\": 1,,",
       path + ": not valid JSON: [2:13, byte="},
      {"\"stages\"", "\"stage\"",
       path + ": stage: unknown key (did you mean 'stages'?); expected "
              "description, seed, work_dir, data, stages"},
      {"\"epochs\": 1, \"lr\"", "\"epoch\": 1, \"lr\"",
       path + ": stages[0] ('ctc').epoch: unknown key (did you mean "
              "'epochs'?)"},
      {"\"epochs\": 1, \"lr\"", "\"epochs\": 1, \"steps\": 5, \"lr\"",
       path + ": stages[0] ('ctc'): give \"epochs\" or \"steps\", one of them"},
      {"\"kind\": \"align\"", "\"kind\": \"realign\"",
       path + ": stages[1] ('align').kind: unknown kind 'realign' (expected "
              "train, align or decode)"},
      {"\"align.mlir\"", "\"missing.mlir\"",
       path + ": stages[1] ('align').graph: no file '" + dir +
           "/missing.mlir'"},
      {"\"name\": \"align\"", "\"name\": \"ctc\"",
       path + ": stages[1].name: 'ctc' names stages[0] ('ctc') too"},
      {"\"kind\": \"sgd\"", "\"kind\": \"lion\"",
       path + ": stages[2] ('ce').optimizer.kind: unknown optimizer 'lion' "
              "(expected sgd, adam or adamw)"},
      {"\"train\": \"train_aligned\"", "\"train\": \"train_aligend\"",
       path + ": stages[2] ('ce').reads.train: 'train_aligend' is written by "
              "no earlier stage and is not declared data (known before this "
              "stage: ctc, dev, dev_aligned, train, train_aligned)"},
      {"\"parameters\": \"ctc\", \"data\"",
       "\"parameters\": \"train\", \"data\"",
       path + ": stages[1] ('align').reads.parameters: 'train' is a dataset, "
              "not parameters"},
      {"\"writes\": {\"parameters\": \"ce\"}",
       "\"writes\": {\"parameters\": \"dev_aligned\"}",
       path + ": stages[2] ('ce').writes.parameters: 'dev_aligned' is already "
              "written by stages[1] ('align')"},
      {"[\"train_aligned\", \"dev_aligned\"]", "[\"train_aligned\"]",
       path + ": stages[1] ('align').writes.data: names 1 datasets for the 2 "
              "it aligns (one each, in order)"},
      {"\"classes\": 8, \"task_seed\": 3, \"seed\": 2",
       "\"classes\": 1, \"task_seed\": 3, \"seed\": 2",
       path + ": data.dev.synthesize.classes: must be an integer in [2, "
              "2147483647]"},
      // A repeated key would silently win.
      {"\"epochs\": 1, \"lr\"", "\"epochs\": 1, \"epochs\": 1000000000, \"lr\"",
       path +
           ":9:19: the key 'epochs' is given twice in one object (first "
           "at " +
           path + ":9:6); JSON would keep only the last"},
      // Numbers no run can hold.
      {"\"utterances\": 32", "\"utterances\": 100000000",
       path + ": data.train.synthesize.utterances: segment task: 100000000 "
              "utterances of up to 66 frames of 16 features"},
      {"\"utterances\": 32", "\"utterances\": 1e12",
       path + ": data.train.synthesize.utterances: must be an integer in [1, "
              "2147483647]"},
      {"\"features\": 16, \"classes\": 8, \"task_seed\": 3, \"seed\": 1",
       "\"features\": 2147483647, \"classes\": 8, \"task_seed\": 3, \"seed\": "
       "1",
       path + ": data.train.synthesize.utterances: segment task: 32 "
              "utterances of up to 66 frames of 2147483647 features"},
      {"\"epochs\": 1, \"lr\"", "\"epochs\": 1e9, \"lr\"",
       path + ": stages[0] ('ctc').epochs: must be an integer in [1, 1000000]"},
      {"\"losses\": [\"ctc\"]", "\"losses\": {\"ctc\": -1}",
       path + ": stages[0] ('ctc').losses.ctc: must be a finite scale >= 0"},
      {"\"scale\": 0.5", "\"scale\": 1e308",
       path + ": stages[1] ('align').prior.scale: must be a number in [0, "
              "1000]"},
      // An overlay on top of a declared dataset would overwrite it.
      {"\"dev\": {\"synthesize\"",
       "\"train.align\": {\"synthesize\": {\"utterances\": 4, \"features\": "
       "16, \"classes\": 8}}, \"dev\": {\"synthesize\"",
       path +
           ": stages[1] ('align').writes.data: the alignments of 'train' "
           "would be written to '" +
           dir +
           "/stages.work/data/train.align', "
           "which is dataset 'train.align'"},
      // Compilation options, as nn/Options.h declares them.
      {"\"epochs\": 1, \"optimizer\"",
       "\"epochs\": 1, \"loss_tail_backward\": \"twice\", \"optimizer\"",
       path + ": stages[2] ('ce').loss_tail_backward: unknown loss tail "
              "backward 'twice' (expected sweep or recompute)"},
      {"\"prior\": {", "\"gemm_library\": 3, \"prior\": {",
       path + ": stages[1] ('align').gemm_library: must be one of onednn or "
              "openblas"},
      {"\"epochs\": 1, \"optimizer\"",
       "\"epochs\": 1, \"fuse_loss_tail\": \"no\", \"optimizer\"",
       path + ": stages[2] ('ce').fuse_loss_tail: must be true or false"},
      {"\"kind\": \"sgd\", \"momentum\": 0.9",
       "\"kind\": \"sgd\", \"momentum\": 0.9, \"beta3\": 0.9",
       path + ": stages[2] ('ce').optimizer.beta3: unknown key (did you "
              "mean 'beta1'?)"},
      // Found by compiling the graphs.
      {"\"losses\": [\"ce\"]", "\"losses\": [\"cee\"]",
       path + ": stages[2] ('ce'): loss 'cee' is marked nowhere in the model "
              "(it marks ce, fer)"},
      {"\"train\": \"train_aligned\"", "\"train\": \"train\"",
       path + ": stages[2] ('ce'): graph @ce reads input 'alignment', which "
              "dataset 'train' does not hold (it holds features, "
              "frame_labels, labels, segments)"},
      {"\"parameter\": \"prior\"", "\"parameter\": \"log_prior\"",
       path + ": stages[1] ('align'): graph @align reads parameter 'prior', "
              "which 'ctc' (from stages[0] ('ctc')) does not hold"},
      {"\"ce.mlir\"", "\"wide.mlir\"",
       path + ": stages[2] ('ce'): parameter 'out.w' is [8, 24] f32 in graph "
              "@ce, but [8, 16] f32 in 'ctc' (from stages[0] ('ctc'))"},
      {"\"graph\": \"align.mlir\"", "\"graph\": \"ctc.mlir\"",
       path + ": stages[1] ('align'): graph @ctc must return the alignment "
              "first, [B, T] i32 over a sequence dim"},
      // Decode stages: their keys, what they read and write, their graph.
      {"\"writes\": {\"data\": [\"dev_decoded\"]}",
       "\"writes\": {\"data\": [\"dev_decoded\"]}, \"refs\": \"labels\"",
       path + ": stages[3] ('decode').refs: unknown key (did you mean "
              "'ref'?); expected name, kind, graph, entry, batch_size, "
              "max_frames, reads, writes, array, vocab, ref, "},
      {"\"writes\": {\"data\": [\"dev_decoded\"]}",
       "\"writes\": {\"data\": [\"dev_decoded\"]}, \"vocab\": "
       "\"missing.txt\"",
       path + ": stages[3] ('decode').vocab: no file '" + dir +
           "/missing.txt'"},
      {"\"writes\": {\"data\": [\"dev_decoded\"]}",
       "\"writes\": {\"data\": [\"dev_decoded\"]}, \"vocab\": "
       "\"empty.txt\"",
       path + ": stages[3] ('decode').vocab: "},
      {"\"writes\": {\"data\": [\"dev_decoded\"]}",
       "\"writes\": {\"data\": [\"dev_decoded\"]}, \"ref\": 3",
       path + ": stages[3] ('decode').ref: must be a non-empty string"},
      {"[\"dev_decoded\"]", "[\"dev_decoded\", \"more\"]",
       path + ": stages[3] ('decode').writes.data: names 2 datasets for the "
              "1 it decodes (one each, in order)"},
      {"\"parameters\": \"ctc\", \"data\": [\"dev\"]",
       "\"parameters\": \"dev\", \"data\": [\"dev\"]",
       path + ": stages[3] ('decode').reads.parameters: 'dev' is a dataset, "
              "not parameters"},
      {"\"data\": [\"dev\"]}", "\"data\": [\"dev_decodd\"]}",
       path + ": stages[3] ('decode').reads.data: 'dev_decodd' is written by "
              "no earlier stage and is not declared data (known before this "
              "stage: ce, ctc, dev, dev_aligned, train, train_aligned)"},
      {"\"dev\": {\"synthesize\"",
       "\"dev.decode\": {\"synthesize\": {\"utterances\": 4, "
       "\"features\": 16, \"classes\": 8}}, \"dev\": {\"synthesize\"",
       path +
           ": stages[3] ('decode').writes.data: the hypotheses of 'dev' "
           "would be written to '" +
           dir +
           "/stages.work/data/dev.decode', which is dataset "
           "'dev.decode'"},
      // Found by compiling the decode graph.
      {"\"graph\": \"decode.mlir\"", "\"graph\": \"ctc.mlir\"",
       path + ": stages[3] ('decode'): graph @ctc returns no results; a "
              "decoding graph returns its hypotheses as result0, [B, Y] i32 "
              "(and their scores as result1, [B] f32)"},
      {"\"writes\": {\"data\": [\"dev_decoded\"]}",
       "\"writes\": {\"data\": [\"dev_decoded\"]}, \"ref\": \"words\"",
       path + ": stages[3] ('decode').ref: dataset 'dev' holds no array "
              "'words' (it holds features, frame_labels, labels, segments)"},
      {"\"writes\": {\"data\": [\"dev_decoded\"]}",
       "\"writes\": {\"data\": [\"dev_decoded\"]}, \"array\": \"labels\"",
       path + ": stages[3] ('decode'): dataset 'dev' already holds an array "
              "'labels' (choose another \"array\")"},
      {"\"graph\": \"decode.mlir\"", "\"graph\": \"wide-decode.mlir\"",
       path + ": stages[3] ('decode'): graph @decode has parameter 'out.w' as "
              "[8, 24] f32, but 'ctc' holds [8, 16] f32"},
      // Newbob needs the dev score; growth needs parameters to grow.
      {"\"epochs\": 1, \"optimizer\"",
       "\"epochs\": 1, \"lr\": \"newbob:lr=1e-3,score=wer\", \"optimizer\"",
       path + ": stages[2] ('ce'): lr: newbob: score 'wer' is not a dev loss "
              "of graph @ce"},
      {", \"init\": \"ctc\"}",
       ", \"init\": \"ctc\"}, \"copy_param_mode\": \"x\"",
       path + ": stages[2] ('ce').copy_param_mode: must be \"subset\""},
      {", \"init\": \"ctc\"}", "}, \"copy_param_mode\": \"subset\"",
       path + ": stages[2] ('ce').copy_param_mode: \"subset\" grows the "
              "parameters of reads.init, which this stage does not give"},
      // Chunking: a bad spec, and overlapping chunks for a graph whose
      // losses cannot count each frame once.
      {"\"epochs\": 1, \"optimizer\"",
       "\"epochs\": 1, \"chunking\": \"8:9\", \"optimizer\"",
       path + ": stages[2] ('ce').chunking: chunking '8:9': a step longer "
              "than the chunk skips frames"},
      {"\"epochs\": 1, \"optimizer\"",
       "\"epochs\": 1, \"chunking\": \"8:6\", \"optimizer\"",
       path + ": stages[2] ('ce'): chunking 8:6: overlapping chunks share "
              "frames, which must count once: the graph needs an input "
              "'chunk_weights'"},
  };
  for (const Case &c : cases) {
    SCOPED_TRACE(c.to);
    std::string error = stageError(dir, replaced(stages, c.from, c.to));
    EXPECT_EQ(error.substr(0, c.error.size()), c.error) << error;
  }
  // Nothing ran: no stage wrote anything, no data was synthesized.
  EXPECT_FALSE(llvm::sys::fs::exists(dir + "/stages.work"));
  llvm::sys::fs::remove_directories(dir);
}

/// The compilation options a stage gives reach that stage's settings,
/// under the keys nn/Options.h declares (and nothing else changes).
TEST(StagesTest, OptionKeysSetTheStagesCompileOptions) {
  std::string dir = scratch("options");
  for (const char *graph : {"ctc.mlir", "align.mlir", "ce.mlir", "decode.mlir"})
    std::ofstream(dir + "/" + graph) << readFile(tinyDir() + "/" + graph);
  std::string stages = readFile(tinyDir() + "/stages.json");
  stages = replaced(stages, "\"epochs\": 1, \"optimizer\"",
                    "\"epochs\": 1, \"fuse_loss_tail\": false, "
                    "\"loss_tail_backward\": \"recompute\", \"pack\": false, "
                    "\"threads\": false, \"optimizer\"");
  stages = replaced(stages, "\"prior\": {",
                    "\"gemm_library\": \"openblas\", \"blas\": false, "
                    "\"prior\": {");
  stages = replaced(stages, "\"kind\": \"sgd\", \"momentum\": 0.9",
                    "\"kind\": \"adamw\", \"weight_decay\": 0.25, "
                    "\"clip_norm\": 2");
  absl::StatusOr<StageFile> file =
      StageFile::parse(stages, dir + "/stages.json");
  ASSERT_TRUE(file.ok()) << file.status().message();
  ASSERT_EQ(file->stages.size(), 4u);
  const StageSpec &ctc = file->stages[0], &align = file->stages[1],
                  &ce = file->stages[2], &decode = file->stages[3];
  // The first stage gives none: the defaults.
  EXPECT_TRUE(ctc.optimize.pack);
  EXPECT_TRUE(ctc.optimize.fuseLossTail);
  EXPECT_EQ(ctc.optimizer.kind, OptimizerKind::adam);
  EXPECT_TRUE(ctc.cpu.threads);
  EXPECT_FALSE(align.codegen.blas);
  EXPECT_EQ(align.cpu.gemmLibrary, GemmLibrary::openblas);
  EXPECT_FALSE(ce.optimize.pack);
  EXPECT_FALSE(ce.optimize.fuseLossTail);
  EXPECT_EQ(ce.optimize.lossTailBackward, LossTailBackward::recompute);
  EXPECT_TRUE(ce.optimize.saveLstmTape);
  EXPECT_FALSE(ce.cpu.threads);
  EXPECT_EQ(ce.cpu.gemmLibrary, GemmLibrary::onednn);
  EXPECT_EQ(ce.optimizer.kind, OptimizerKind::adamw);
  EXPECT_EQ(ce.optimizer.weightDecay, 0.25);
  EXPECT_EQ(ce.optimizer.clipNorm, 2);
  EXPECT_EQ(ce.optimizer.momentum, 0);
  // A decode stage's defaults: hypotheses as "hyp", "labels" as the
  // references where the data holds them, labels not words.
  EXPECT_EQ(decode.kind, StageKind::decode);
  EXPECT_EQ(decode.array, "hyp");
  EXPECT_EQ(decode.reference, "labels");
  EXPECT_FALSE(decode.referenceGiven);
  EXPECT_EQ(decode.vocabularyPath, "");
  EXPECT_TRUE(decode.codegen.blas);
  llvm::sys::fs::remove_directories(dir);
}

/// --work-dir into a tree that holds a user's files is refused before
/// anything is compiled, naming what is there, and nothing in it changes.
TEST(StagesTest, WorkDirsHoldingOtherFilesAreRefused) {
  std::string dir = scratch("tree");
  for (const char *graph : {"ctc.mlir", "align.mlir", "ce.mlir", "decode.mlir"})
    std::ofstream(dir + "/" + graph) << readFile(tinyDir() + "/" + graph);
  std::string path = dir + "/stages.json";
  std::ofstream(path) << readFile(tinyDir() + "/stages.json");
  std::string tree = dir + "/home";
  llvm::sys::fs::create_directories(tree + "/ctc/checkpoints");
  std::ofstream(tree + "/ctc/checkpoints/thesis.tex") << "years of work";
  std::ofstream(tree + "/notes.txt") << "more";
  absl::StatusOr<std::unique_ptr<StagePipeline>> pipeline =
      StagePipeline::load(path, tree);
  ASSERT_TRUE(pipeline.ok()) << pipeline.status().message();
  absl::Status status = (*pipeline)->prepare(OutputOptions());
  EXPECT_EQ(status.message(),
            path + ": the work directory '" + tree +
                "' holds 'ctc/', 'notes.txt', which nn-train did not write "
                "there: it writes, replaces and removes files in it, so it "
                "takes only a new or empty directory or one it wrote; move "
                "them away or choose another directory");
  EXPECT_EQ(readFile(tree + "/ctc/checkpoints/thesis.tex"), "years of work");
  EXPECT_FALSE(llvm::sys::fs::exists(tree + "/.nn-written.json"));
  llvm::sys::fs::remove_directories(dir);
}

} // namespace
