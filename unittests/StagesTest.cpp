//===- StagesTest.cpp - stage files: the recipe, reruns and bad files -----===//
//
// The shipped recipe (examples/recipe: CTC, Viterbi alignment with a
// prior, frame-wise CE) run from its stage file on the synthetic segment
// task with fixed seeds, checked against the task's truth: each label's
// aligned frames start inside its true segment, and the frame-wise stage
// ends with a lower dev frame error than the CTC model it started from.
// Then reruns (nothing done twice) and bad stage files (each a clear error
// before anything runs).
//
//===----------------------------------------------------------------------===//

#include "training/Stages.h"
#include "nn/Dataset.h"
#include "nn/Npy.h"
#include "training/StageFile.h"

#include "llvm/Support/FileSystem.h"

#include <gtest/gtest.h>

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
  ASSERT_EQ(pipeline->reports().size(), 3u);
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
  std::printf("labels starting inside their segment: dev %.3f (%lld), train "
              "%.3f (%lld); dev frame error against the alignments: CTC "
              "model %.4f, after CE %.4f; against the true frame labels: CTC "
              "model %.4f, after CE %.4f\n",
              devInside, (long long)devLabels, trainInside,
              (long long)trainLabels, startAligned, endAligned, ctcTrue,
              endTrue);

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
// each frame's prediction state gathered along the alignment.
TEST(StagesTest, RnaAlignFrameWiseRecipe) {
  std::string work = scratch("rna");
  std::unique_ptr<StagePipeline> pipeline;
  absl::Status status =
      runStages(std::string(NN_SOURCE_DIR) + "/examples/recipe-rna/recipe.json",
                work, pipeline);
  ASSERT_TRUE(status.ok()) << status.message();
  ASSERT_EQ(pipeline->reports().size(), 3u);
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
  std::printf("labels emitted inside their segment: dev %.3f (%lld), train "
              "%.3f (%lld); dev frame error against the alignments: RNA "
              "model %.4f, after CE %.4f\n",
              devInside, (long long)devLabels, trainInside,
              (long long)trainLabels, start, end);
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

TEST(StagesTest, BadStageFilesAreErrorsBeforeAnythingRuns) {
  std::string dir = scratch("bad");
  std::string path = dir + "/stages.json";
  for (const char *graph : {"ctc.mlir", "align.mlir", "ce.mlir"})
    std::ofstream(dir + "/" + graph) << readFile(tinyDir() + "/" + graph);
  std::string stages = readFile(tinyDir() + "/stages.json");
  // ce.mlir with an output layer of other width: a shape conflict.
  std::string wide = readFile(tinyDir() + "/ce.mlir");
  while (wide.find("[8, 16]") != std::string::npos)
    wide = replaced(wide, "[8, 16]", "[8, 24]");
  wide = replaced(wide, "%features: !nn.tensor<[B, T, 16], f32>",
                  "%features: !nn.tensor<[B, T, 24], f32>");
  wide = replaced(wide, "nn.linear %features, %w : !nn.tensor<[B, T, 16], f32>",
                  "nn.linear %features, %w : !nn.tensor<[B, T, 24], f32>");
  std::ofstream(dir + "/wide.mlir") << wide;
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
              "train or align)"},
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
  for (const char *graph : {"ctc.mlir", "align.mlir", "ce.mlir"})
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
  ASSERT_EQ(file->stages.size(), 3u);
  const StageSpec &ctc = file->stages[0], &align = file->stages[1],
                  &ce = file->stages[2];
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
  llvm::sys::fs::remove_directories(dir);
}

/// --work-dir into a tree that holds a user's files is refused before
/// anything is compiled, naming what is there, and nothing in it changes.
TEST(StagesTest, WorkDirsHoldingOtherFilesAreRefused) {
  std::string dir = scratch("tree");
  for (const char *graph : {"ctc.mlir", "align.mlir", "ce.mlir"})
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
