//===- DatasetTest.cpp - datasets on disk, their checks and batches -------===//

#include "nn/Dataset.h"
#include "nn/Npy.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdio>
#include <fstream>
#include <limits>
#include <numeric>
#include <set>
#include <sys/stat.h>
#include <unistd.h>

using namespace nn;

namespace {

/// A graph's inputs: frames [B, T, 3] f32 with frame targets [B, T] (5
/// classes), labels [B, U] (5 classes, 0 the blank), a per-utterance
/// weight [B] and targets on T2 = ceil(T / 2); plus a train step's scalars,
/// which a dataset does not fill.
Manifest model() {
  Manifest m;
  m.graph = "am";
  m.dims = {{DimInfo::Kind::batch, "B", "", "", 0, ""},
            {DimInfo::Kind::seq, "T", "B", "", 0, ""},
            {DimInfo::Kind::seq, "U", "B", "", 0, ""},
            {DimInfo::Kind::seq, "T2", "B", "T", 2, ""}};
  m.rootDims = {"B", "T", "U"};
  auto axis = [](const std::string &dim) { return Axis{dim, -1}; };
  auto size = [](int64_t n) { return Axis{"", n}; };
  m.inputs = {
      {"features", DType::f32, {axis("B"), axis("T"), size(3)}},
      {"frame_labels", DType::i32, {axis("B"), axis("T")}, 5},
      {"labels", DType::i32, {axis("B"), axis("U")}, 5, 0},
      {"weight", DType::f32, {axis("B")}},
      {"half_labels", DType::i32, {axis("B"), axis("T2")}},
      {"learning_rate", DType::f32, {}},
  };
  return m;
}

/// The arrays of `frames.size()` utterances with these frame and label
/// counts, in the dataset format; values encode (utterance, position).
std::map<std::string, Tensor> shard(const std::vector<int32_t> &frames,
                                    const std::vector<int32_t> &labels) {
  int32_t totalFrames = std::accumulate(frames.begin(), frames.end(), 0);
  int32_t totalLabels = std::accumulate(labels.begin(), labels.end(), 0);
  int32_t totalHalf = 0;
  for (int32_t t : frames)
    totalHalf += (t + 1) / 2;
  std::map<std::string, Tensor> a;
  a["features"] = Tensor(DType::f32, {totalFrames, 3});
  a["frame_labels"] = Tensor(DType::i32, {totalFrames});
  a["labels"] = Tensor(DType::i32, {totalLabels});
  a["weight"] = Tensor(DType::f32, {(int64_t)frames.size()});
  a["half_labels"] = Tensor(DType::i32, {totalHalf});
  std::vector<int32_t> half;
  for (int32_t t : frames)
    half.push_back((t + 1) / 2);
  a["features.lengths"] =
      Tensor::of<int32_t>(DType::i32, {(int64_t)frames.size()}, frames);
  a["frame_labels.lengths"] = a["features.lengths"];
  a["labels.lengths"] =
      Tensor::of<int32_t>(DType::i32, {(int64_t)labels.size()}, labels);
  a["half_labels.lengths"] =
      Tensor::of<int32_t>(DType::i32, {(int64_t)half.size()}, half);
  int64_t row = 0, label = 0;
  for (size_t u = 0; u < frames.size(); ++u) {
    a["weight"].data<float>()[u] = (float)u;
    for (int32_t t = 0; t < frames[u]; ++t, ++row) {
      for (int f = 0; f < 3; ++f)
        a["features"].data<float>()[row * 3 + f] = (float)(100 * u + t);
      a["frame_labels"].data<int32_t>()[row] = (int32_t)(u + t) % 5;
    }
    for (int32_t i = 0; i < labels[u]; ++i, ++label)
      a["labels"].data<int32_t>()[label] = 1 + (int32_t)(u + i) % 4;
  }
  return a;
}

class DatasetTest : public ::testing::Test {
protected:
  void SetUp() override {
    dir = ::testing::TempDir() + "dataset-" + std::to_string(getpid()) + "-" +
          ::testing::UnitTest::GetInstance()->current_test_info()->name();
    mkdir(dir.c_str(), 0755);
  }
  void TearDown() override {
    for (const std::string &path : written)
      std::remove(path.c_str());
    rmdir(dir.c_str());
  }
  std::string write(const std::string &name,
                    const std::map<std::string, Tensor> &arrays) {
    std::string path = dir + "/" + name;
    EXPECT_TRUE(writeNpz(path, arrays).ok());
    written.push_back(path);
    return path;
  }
  /// The error loading `arrays` as the only shard.
  std::string loadError(const std::map<std::string, Tensor> &arrays) {
    std::string path = write("bad.npz", arrays);
    absl::StatusOr<Dataset> loaded = Dataset::load(path, model());
    EXPECT_FALSE(loaded.ok());
    return loaded.ok() ? "" : std::string(loaded.status().message());
  }

  std::string dir;
  std::vector<std::string> written;
};

TEST_F(DatasetTest, BatchesHoldTheUtterancesPadded) {
  write("a.npz", shard({4, 2}, {2, 1}));
  write("b.npz", shard({5}, {3}));
  absl::StatusOr<Dataset> dataset = Dataset::load(dir, model());
  ASSERT_TRUE(dataset.ok()) << dataset.status().message();
  ASSERT_EQ(dataset->size(), 3);
  EXPECT_EQ(dataset->lengthDim(), "T");
  EXPECT_EQ(dataset->length(2), 5);
  RunInputs batch = dataset->batch({2, 1});
  EXPECT_EQ(batch.lengths.at("T"), (std::vector<int32_t>{5, 2}));
  EXPECT_EQ(batch.lengths.at("U"), (std::vector<int32_t>{3, 1}));
  EXPECT_EQ(batch.lengths.count("T2"), 0u); // derived by the runtime
  EXPECT_EQ(batch.inputs.count("learning_rate"), 0u);
  const Tensor &features = batch.inputs.at("features");
  ASSERT_EQ(features.shape(), (std::vector<int64_t>{2, 5, 3}));
  // Utterance 2 is b.npz's first (u = 0 there); utterance 1 is a.npz's
  // second (u = 1), padded with 0 after its 2 frames.
  EXPECT_EQ(features.at(4 * 3), 4.0);
  EXPECT_EQ(features.at(15 + 1 * 3), 101.0);
  EXPECT_EQ(features.at(15 + 2 * 3), 0.0);
  EXPECT_EQ(batch.inputs.at("frame_labels").at(5 + 2), -1.0);
  EXPECT_EQ(batch.inputs.at("weight").at(1), 1.0);
  EXPECT_EQ(batch.inputs.at("half_labels").shape(),
            (std::vector<int64_t>{2, 3}));

  // The statistics nn-data import --cmvn writes beside shards are not one.
  write("cmvn.npz", {{"frames", Tensor::of<int64_t>(DType::i64, {1}, {7})}});
  absl::StatusOr<std::vector<std::string>> shards = Dataset::shardPaths(dir);
  ASSERT_TRUE(shards.ok());
  EXPECT_EQ(*shards,
            (std::vector<std::string>{dir + "/a.npz", dir + "/b.npz"}));
  absl::StatusOr<Dataset> again = Dataset::load(dir, model());
  ASSERT_TRUE(again.ok()) << again.status().message();
  EXPECT_EQ(again->size(), 3);
}

// An overlay adds arrays to the dataset's utterances, shard by shard: here
// frame targets written apart from the features (what an alignment stage
// writes next to the data).
TEST_F(DatasetTest, OverlaysAddArraysToEachShard) {
  auto first = shard({4, 2}, {2, 1}), second = shard({5}, {3});
  // Moves the frame targets out of `arrays` into an overlay shard.
  auto splitTargets = [](std::map<std::string, Tensor> &arrays) {
    std::map<std::string, Tensor> targets;
    for (const char *name : {"frame_labels", "frame_labels.lengths"}) {
      targets[name] = std::move(arrays.at(name));
      arrays.erase(name);
    }
    return targets;
  };
  auto firstTargets = splitTargets(first), secondTargets = splitTargets(second);
  std::string data = dir + "/data", overlay = dir + "/data.align";
  mkdir(data.c_str(), 0755);
  mkdir(overlay.c_str(), 0755);
  write("data/shard-0.npz", first);
  write("data/shard-1.npz", second);
  write("data.align/shard-0.npz", firstTargets);
  std::string lastOverlay = write("data.align/shard-1.npz", secondTargets);

  absl::StatusOr<Dataset> plain = Dataset::load(data, model());
  ASSERT_FALSE(plain.ok());
  EXPECT_EQ(plain.status().message(),
            "dataset shard '" + data +
                "/shard-0.npz': no array 'frame_labels' for the graph input "
                "[B, T] i32");
  absl::StatusOr<Dataset> both = Dataset::load({data, overlay}, model());
  ASSERT_TRUE(both.ok()) << both.status().message();
  ASSERT_EQ(both->size(), 3);
  ASSERT_EQ(both->shardCount(), 2);
  EXPECT_EQ(both->shardPath(1), data + "/shard-1.npz");
  EXPECT_EQ(both->shardUtterances(0), 2);
  EXPECT_EQ(both->shardUtterances(1), 1);
  RunInputs batch = both->batch({2, 1});
  // frame_labels of utterance u at frame t is (u + t) % 5, u counted
  // within its shard.
  const Tensor &targets = batch.inputs.at("frame_labels");
  ASSERT_EQ(targets.shape(), (std::vector<int64_t>{2, 5}));
  EXPECT_EQ(targets.at(3), 3.0);
  EXPECT_EQ(targets.at(5 + 1), 2.0);
  EXPECT_EQ(targets.at(5 + 2), -1.0);

  // An overlay's shard whose utterances differ, one that repeats an
  // array, and one with another shard count.
  auto shorter = secondTargets;
  shorter["frame_labels.lengths"] = Tensor::of<int32_t>(DType::i32, {1}, {4});
  shorter["frame_labels"] = Tensor(DType::i32, {4});
  write("data.align/shard-1.npz", shorter);
  absl::StatusOr<Dataset> mismatched = Dataset::load({data, overlay}, model());
  ASSERT_FALSE(mismatched.ok());
  EXPECT_EQ(mismatched.status().message(),
            "dataset shard '" + data + "/shard-1.npz' with overlay '" +
                lastOverlay +
                "': utterance 0: 'frame_labels' has length 4 but 'features' "
                "5 along the shared dim 'T'");
  auto repeated = secondTargets;
  repeated["weight"] = Tensor(DType::f32, {1});
  write("data.align/shard-1.npz", repeated);
  absl::StatusOr<Dataset> clash = Dataset::load({data, overlay}, model());
  ASSERT_FALSE(clash.ok());
  EXPECT_EQ(clash.status().message(),
            "'" + lastOverlay + "' and '" + data +
                "/shard-1.npz' both hold 'weight': an overlay may only add "
                "arrays");
  std::remove(lastOverlay.c_str());
  absl::StatusOr<Dataset> fewer = Dataset::load({data, overlay}, model());
  ASSERT_FALSE(fewer.ok());
  EXPECT_EQ(fewer.status().message(),
            "overlay '" + overlay + "' has 1 shards, dataset '" + data +
                "' 2: an overlay adds arrays to each shard's utterances");
  rmdir(overlay.c_str());
  std::remove((data + "/shard-0.npz").c_str());
  std::remove((data + "/shard-1.npz").c_str());
  rmdir(data.c_str());
}

// nn.keep leaves utterances out: they are neither checked nor batched, and
// every source's nn.keep must keep an utterance.
TEST_F(DatasetTest, KeepLeavesUtterancesOut) {
  auto arrays = shard({4, 2, 3}, {2, 1, 1});
  // Utterance 1 would fail every check: its targets are out of range and
  // its half_labels too short.
  arrays["frame_labels"].data<int32_t>()[4] = 9;
  arrays["half_labels.lengths"] =
      Tensor::of<int32_t>(DType::i32, {3}, {2, 0, 2});
  arrays["half_labels"] = Tensor(DType::i32, {4});
  arrays[kKeepArray] = Tensor::of<int32_t>(DType::i32, {3}, {1, 0, 1});
  std::string path = write("kept.npz", arrays);
  absl::StatusOr<Dataset> dataset = Dataset::load(path, model());
  ASSERT_TRUE(dataset.ok()) << dataset.status().message();
  EXPECT_EQ(dataset->size(), 2);
  EXPECT_EQ(dataset->leftOut(), 1);
  EXPECT_EQ(dataset->shardUtterances(0), 3);
  EXPECT_EQ(dataset->origin(1), (std::pair<int64_t, int64_t>{0, 2}));
  RunInputs batch = dataset->batch({0, 1});
  EXPECT_EQ(batch.lengths.at("T"), (std::vector<int32_t>{4, 3}));
  EXPECT_EQ(batch.inputs.at("weight").at(1), 2.0);

  // A second source's nn.keep leaves utterance 0 out too.
  std::string overlayDir = dir + "/kept.more";
  mkdir(overlayDir.c_str(), 0755);
  std::string overlay =
      write("kept.more/kept.npz",
            {{kKeepArray, Tensor::of<int32_t>(DType::i32, {3}, {0, 1, 1})}});
  absl::StatusOr<Dataset> both = Dataset::load({path, overlayDir}, model());
  ASSERT_TRUE(both.ok()) << both.status().message();
  EXPECT_EQ(both->size(), 1);
  EXPECT_EQ(both->leftOut(), 2);

  auto bad = arrays;
  bad[kKeepArray] = Tensor::of<int32_t>(DType::i32, {3}, {1, 2, 1});
  EXPECT_EQ(loadError(bad), "dataset shard '" + dir + "/bad.npz': '" + dir +
                                "/bad.npz': 'nn.keep' holds 2 for utterance 1 "
                                "(1 keeps it, 0 leaves it out)");
  // Read as integers: as a double, 2^63 - 1 rounds past the i64 range
  // (found by nn-fuzz-dataset).
  bad[kKeepArray] = Tensor::of<int64_t>(DType::i64, {3}, {1, INT64_MAX, 1});
  EXPECT_EQ(loadError(bad), "dataset shard '" + dir + "/bad.npz': '" + dir +
                                "/bad.npz': 'nn.keep' holds "
                                "9223372036854775807 for utterance 1 "
                                "(1 keeps it, 0 leaves it out)");
  bad[kKeepArray] = Tensor::of<int32_t>(DType::i32, {2}, {1, 1});
  EXPECT_EQ(loadError(bad), "dataset shard '" + dir +
                                "/bad.npz': 'nn.keep' holds 2 utterances, "
                                "'features' 3");
  bad[kKeepArray] = Tensor::of<int32_t>(DType::i32, {3}, {0, 0, 0});
  bad["frame_labels"].data<int32_t>()[4] = 1;
  EXPECT_EQ(loadError(bad), "dataset '" + dir +
                                "/bad.npz' holds no utterances (3 left out "
                                "by 'nn.keep')");
  std::remove(overlay.c_str());
  rmdir(overlayDir.c_str());
}

TEST_F(DatasetTest, EpochBatchesRespectBudgetsAndCoverEveryUtterance) {
  std::vector<int32_t> frames, labels;
  for (int u = 0; u < 200; ++u) {
    frames.push_back(1 + (u * 37) % 50);
    labels.push_back(1 + u % 3);
  }
  write("all.npz", shard(frames, labels));
  absl::StatusOr<Dataset> dataset = Dataset::load(dir, model());
  ASSERT_TRUE(dataset.ok()) << dataset.status().message();
  BatchingOptions options;
  options.maxSequences = 8;
  options.maxFrames = 120;
  options.bucketBatches = 4;
  options.seed = 3;
  auto padding = [&](const std::vector<std::vector<int64_t>> &batches) {
    int64_t padded = 0;
    for (const auto &batch : batches) {
      int64_t longest = 0;
      for (int64_t u : batch)
        longest = std::max(longest, dataset->length(u));
      padded += longest * (int64_t)batch.size();
    }
    return padded;
  };
  std::vector<std::vector<int64_t>> epoch0 = epochBatches(*dataset, options, 0);
  std::multiset<int64_t> seen;
  for (const auto &batch : epoch0) {
    EXPECT_LE(batch.size(), 8u);
    int64_t longest = 0;
    for (int64_t u : batch) {
      seen.insert(u);
      longest = std::max(longest, dataset->length(u));
    }
    if (batch.size() > 1)
      EXPECT_LE(longest * (int64_t)batch.size(), 120);
  }
  EXPECT_EQ(seen.size(), 200u);
  EXPECT_EQ(std::set<int64_t>(seen.begin(), seen.end()).size(), 200u);
  EXPECT_EQ(epochBatches(*dataset, options, 0), epoch0);
  EXPECT_NE(epochBatches(*dataset, options, 1), epoch0);
  BatchingOptions unsorted = options;
  unsorted.bucket = false;
  EXPECT_LT(padding(epoch0), padding(epochBatches(*dataset, unsorted, 0)));
  BatchingOptions ordered = options;
  ordered.shuffle = false;
  ordered.bucket = false;
  ordered.maxFrames = 0;
  std::vector<std::vector<int64_t>> inOrder =
      epochBatches(*dataset, ordered, 5);
  ASSERT_EQ(inOrder.size(), 25u);
  EXPECT_EQ(inOrder[1].front(), 8);

  // A data-parallel run's batches hold a sequence per rank: 200 in order
  // by 8 with at least 3 is the same; 200 by 7 leaves a last batch of 4,
  // kept at 3 and joined to the one before at 5.
  ordered.minSequences = 3;
  EXPECT_EQ(epochBatches(*dataset, ordered, 5), inOrder);
  ordered.maxSequences = 7;
  ASSERT_EQ(epochBatches(*dataset, ordered, 5).back().size(), 4u);
  ordered.minSequences = 5;
  std::vector<std::vector<int64_t>> joined = epochBatches(*dataset, ordered, 5);
  ASSERT_EQ(joined.size(), 28u);
  EXPECT_EQ(joined.back().size(), 11u);
  EXPECT_EQ(joined.back().back(), 199);
  // Budgets that cut every batch short: each one joins the one before it
  // (the first, the one after) until it is long enough, and every
  // utterance stays in exactly one.
  BatchingOptions tight = options;
  tight.maxFrames = 1;
  tight.minSequences = 4;
  std::multiset<int64_t> once;
  for (const auto &batch : epochBatches(*dataset, tight, 0)) {
    EXPECT_GE(batch.size(), 4u);
    once.insert(batch.begin(), batch.end());
  }
  EXPECT_EQ(std::set<int64_t>(once.begin(), once.end()).size(), 200u);
  EXPECT_EQ(once.size(), 200u);
}

TEST_F(DatasetTest, BadDataIsAnErrorNamingTheFileArrayAndUtterance) {
  std::string missingFile = dir + "/none.npz";
  absl::StatusOr<Dataset> none = Dataset::load(missingFile, model());
  EXPECT_EQ(none.status().message(),
            "cannot open dataset '" + missingFile + "'");
  absl::StatusOr<Dataset> empty = Dataset::load(dir, model());
  EXPECT_EQ(empty.status().message(),
            "dataset directory '" + dir + "' holds no .npz shards");

  std::string bad = dir + "/bad.npz";
  auto arrays = shard({4, 2}, {2, 1});
  auto without = arrays;
  without.erase("labels");
  EXPECT_EQ(loadError(without),
            "dataset shard '" + bad +
                "': no array 'labels' for the graph input [B, U] i32");
  auto wrongWidth = arrays;
  wrongWidth["features"] = Tensor(DType::f32, {6, 4});
  EXPECT_EQ(loadError(wrongWidth),
            "dataset shard '" + bad +
                "': array 'features' is f32 [6, 4], which does not fit the "
                "graph input [B, T, 3] f32 (utterances concatenated along "
                "axis 0)");
  auto wrongType = arrays;
  wrongType["weight"] = Tensor(DType::f64, {2});
  EXPECT_EQ(loadError(wrongType),
            "dataset shard '" + bad +
                "': array 'weight' is f64 [2], which does not fit the graph "
                "input [B] f32");
  auto overrun = arrays;
  overrun["features.lengths"] = Tensor::of<int32_t>(DType::i32, {2}, {4, 3});
  EXPECT_EQ(loadError(overrun),
            "dataset shard '" + bad +
                "': 'features.lengths' gives utterance 1 length 3, past the 6 "
                "rows of the array (the lengths before it add up to 4)");
  auto underrun = arrays;
  underrun["features.lengths"] = Tensor::of<int32_t>(DType::i32, {2}, {4, 1});
  EXPECT_EQ(loadError(underrun),
            "dataset shard '" + bad +
                "': the lengths in 'features.lengths' add up to 5 rows, but "
                "'features' has 6");
  auto negative = arrays;
  negative["labels.lengths"] = Tensor::of<int32_t>(DType::i32, {2}, {3, -1});
  EXPECT_EQ(loadError(negative), "dataset shard '" + bad +
                                     "': 'labels.lengths' gives utterance 1 a "
                                     "negative length");
  auto noLengths = arrays;
  noLengths.erase("labels.lengths");
  EXPECT_EQ(loadError(noLengths),
            "dataset shard '" + bad +
                "': no array 'labels.lengths' giving the length of each "
                "utterance in 'labels'");
  auto disagree = arrays;
  disagree["frame_labels.lengths"] =
      Tensor::of<int32_t>(DType::i32, {2}, {3, 3});
  EXPECT_EQ(loadError(disagree),
            "dataset shard '" + bad +
                "': utterance 0: 'frame_labels' has length 3 but 'features' "
                "4 along the shared dim 'T'");
  auto count = arrays;
  count["weight"] = Tensor(DType::f32, {3});
  EXPECT_EQ(loadError(count), "dataset shard '" + bad +
                                  "': 'weight' holds 3 utterances, 'features' "
                                  "2");
  auto outOfRange = arrays;
  outOfRange["frame_labels"].data<int32_t>()[5] = 7;
  EXPECT_EQ(loadError(outOfRange),
            "dataset shard '" + bad +
                "': utterance 1: 'frame_labels' holds class 7 at position 1, "
                "outside [0, 5)");
  auto blank = arrays;
  blank["labels"].data<int32_t>()[1] = 0;
  EXPECT_EQ(loadError(blank), "dataset shard '" + bad +
                                  "': utterance 0: 'labels' holds class 0 at "
                                  "position 1, the reserved class (the CTC "
                                  "blank)");
  auto halves = arrays;
  halves["half_labels.lengths"] = Tensor::of<int32_t>(DType::i32, {2}, {1, 2});
  EXPECT_EQ(loadError(halves),
            "dataset shard '" + bad +
                "': utterance 0: 'half_labels' has length 1 along 'T2' = "
                "ceil(T / 2), expected 2");
  auto nothing = shard({}, {});
  EXPECT_EQ(loadError(nothing), "dataset '" + bad + "' holds no utterances");
  auto noFrames = shard({0, 0}, {0, 0});
  EXPECT_EQ(loadError(noFrames), "dataset '" + bad +
                                     "' holds no utterances (2 without frames "
                                     "along 'T')");

  std::ofstream(bad) << "not a zip archive";
  absl::StatusOr<Dataset> corrupt = Dataset::load(bad, model());
  ASSERT_FALSE(corrupt.ok());
  EXPECT_NE(corrupt.status().message().find(bad), std::string::npos)
      << corrupt.status().message();
}

/// Lengths that add up past the array only modulo 2^64 (or that a double
/// rounds out of range) are errors, not utterances that read outside
/// their array.
TEST_F(DatasetTest, LengthsThatWrapAreErrors) {
  Manifest m;
  m.graph = "g";
  m.dims = {{DimInfo::Kind::batch, "B", "", "", 0, ""},
            {DimInfo::Kind::seq, "T", "B", "", 0, ""}};
  m.rootDims = {"B", "T"};
  m.inputs = {{"x", DType::f32, {Axis{"B", -1}, Axis{"T", -1}}}};
  std::map<std::string, Tensor> arrays;
  arrays["x"] = Tensor(DType::f32, {0});
  const int64_t quarter = int64_t(1) << 62;
  arrays["x.lengths"] = Tensor::of<int64_t>(
      DType::i64, {4}, {quarter, quarter, quarter, quarter});
  std::string path = write("wrap.npz", arrays);
  absl::StatusOr<Dataset> wrapped = Dataset::load(path, m);
  ASSERT_FALSE(wrapped.ok());
  EXPECT_EQ(wrapped.status().message(),
            "dataset shard '" + path +
                "': 'x.lengths' gives utterance 0 length 4611686018427387904, "
                "past the 0 rows of the array (the lengths before it add up "
                "to 0)");
  arrays["x"] = Tensor(DType::f32, {3});
  arrays["x.lengths"] = Tensor::of<int64_t>(
      DType::i64, {2}, {std::numeric_limits<int64_t>::max(), 4});
  path = write("max.npz", arrays);
  absl::StatusOr<Dataset> largest = Dataset::load(path, m);
  ASSERT_FALSE(largest.ok());
  EXPECT_NE(
      largest.status().message().find(
          "gives utterance 0 length 9223372036854775807, past the 3 rows"),
      std::string::npos)
      << largest.status().message();
}

/// Utterances without frames are left out (counted); a batch whose
/// utterances have no labels still pads its label axis to one position.
TEST_F(DatasetTest, EmptyUtterancesNeverMakeAnEmptyBatch) {
  std::string path = write("empty.npz", shard({4, 0, 3, 0}, {2, 1, 0, 0}));
  absl::StatusOr<Dataset> loaded = Dataset::load(path, model());
  ASSERT_TRUE(loaded.ok()) << loaded.status().message();
  EXPECT_EQ(loaded->size(), 2);
  EXPECT_EQ(loaded->withoutFrames(), 2);
  EXPECT_EQ(loaded->origin(1), std::make_pair(int64_t(0), int64_t(2)));
  // Utterance 2 of the file (the second kept) has no labels.
  RunInputs batch = loaded->batch({1});
  EXPECT_EQ(batch.lengths.at("U"), std::vector<int32_t>{0});
  EXPECT_EQ(batch.inputs.at("labels").shape(), (std::vector<int64_t>{1, 1}));
  EXPECT_EQ(batch.inputs.at("labels").data<int32_t>()[0], -1);
  EXPECT_EQ(batch.inputs.at("features").shape(),
            (std::vector<int64_t>{1, 3, 3}));
}

/// A decoder keeps the utterances without frames (WithoutFrames::keep):
/// they are utterances of the dataset, in file order, with their ids and
/// references, but no batch holds them, and nn.keep 0 still leaves out.
TEST_F(DatasetTest, DecodersKeepUtterancesWithoutFramesOutOfBatches) {
  auto arrays = shard({4, 0, 3, 0, 2}, {2, 3, 0, 1, 1});
  arrays[kKeepArray] = Tensor::of<int32_t>(DType::i32, {5}, {1, 1, 1, 0, 1});
  std::string path = write("kept.npz", arrays);
  absl::StatusOr<Dataset> left = Dataset::load(path, model());
  ASSERT_TRUE(left.ok()) << left.status().message();
  EXPECT_FALSE(left->keepsWithoutFrames());
  EXPECT_EQ(left->size(), 3);
  EXPECT_EQ(left->withoutFrames(), 1);
  EXPECT_EQ(left->leftOut(), 1);

  absl::StatusOr<Dataset> kept = Dataset::load(
      {path}, model(), {{"labels", false}}, Dataset::WithoutFrames::keep);
  ASSERT_TRUE(kept.ok()) << kept.status().message();
  EXPECT_TRUE(kept->keepsWithoutFrames());
  // Utterances 0, 1 (no frames) and 2, 4 of the file; 3 is nn.keep 0.
  ASSERT_EQ(kept->size(), 4);
  EXPECT_EQ(kept->withoutFrames(), 1);
  EXPECT_EQ(kept->leftOut(), 1);
  EXPECT_EQ(kept->origin(1), std::make_pair(int64_t(0), int64_t(1)));
  EXPECT_EQ(kept->length(1), 0);
  EXPECT_EQ(kept->utteranceId(1), "kept:1");
  // Its reference: the file's labels 2..4 (utterance 0 holds 2).
  absl::Span<const int32_t> reference = kept->hostSequence("labels", 1);
  const int32_t *labels = arrays.at("labels").data<int32_t>();
  EXPECT_EQ(std::vector<int32_t>(reference.begin(), reference.end()),
            std::vector<int32_t>(labels + 2, labels + 5));
  for (bool shuffle : {false, true}) {
    BatchingOptions options;
    options.maxSequences = 2;
    options.shuffle = shuffle;
    std::vector<int64_t> batched;
    for (const std::vector<int64_t> &batch : epochBatches(*kept, options, 0))
      batched.insert(batched.end(), batch.begin(), batch.end());
    std::sort(batched.begin(), batched.end());
    EXPECT_EQ(batched, (std::vector<int64_t>{0, 2, 3}));
  }
  // A dataset of such utterances alone loads when they are kept.
  std::string empty = write("frameless.npz", shard({0, 0}, {1, 0}));
  absl::StatusOr<Dataset> frameless =
      Dataset::load({empty}, model(), {}, Dataset::WithoutFrames::keep);
  ASSERT_TRUE(frameless.ok()) << frameless.status().message();
  EXPECT_EQ(frameless->size(), 2);
  EXPECT_TRUE(epochBatches(*frameless, BatchingOptions(), 0).empty());
}

/// nn.id and nn.id.lengths for ids given as code points.
void addIds(std::map<std::string, Tensor> &arrays,
            const std::vector<std::vector<int64_t>> &ids,
            DType dtype = DType::i32) {
  std::vector<int64_t> flat;
  std::vector<int32_t> lengths;
  for (const std::vector<int64_t> &id : ids) {
    flat.insert(flat.end(), id.begin(), id.end());
    lengths.push_back((int32_t)id.size());
  }
  arrays[kIdArray] =
      dtype == DType::i64
          ? Tensor::of<int64_t>(DType::i64, {(int64_t)flat.size()}, flat)
          : Tensor::of<int32_t>(DType::i32, {(int64_t)flat.size()},
                                std::vector<int32_t>(flat.begin(), flat.end()));
  arrays[std::string(kIdArray) + ".lengths"] =
      Tensor::of<int32_t>(DType::i32, {(int64_t)lengths.size()}, lengths);
}

std::vector<int64_t> codePoints(const std::string &ascii) {
  return std::vector<int64_t>(ascii.begin(), ascii.end());
}

// Ids come from nn.id (the graph never sees it), or else from the shard's
// file name and the utterance's position in it; nn.keep leaves the ids of
// the utterances it keeps in place.
TEST_F(DatasetTest, UtteranceIdsComeFromNnIdOrTheShard) {
  auto named = shard({4, 2, 3}, {2, 1, 1});
  // "été" (U+00E9 is two bytes in UTF-8), and U+1F600 (four).
  addIds(named, {codePoints("utt-a"), {0xE9, 't', 0xE9}, {0x1F600}},
         DType::i64);
  named[kKeepArray] = Tensor::of<int32_t>(DType::i32, {3}, {0, 1, 1});
  write("a.npz", named);
  write("b.npz", shard({5, 1}, {3, 1}));
  absl::StatusOr<Dataset> dataset = Dataset::load(dir, model());
  ASSERT_TRUE(dataset.ok()) << dataset.status().message();
  ASSERT_EQ(dataset->size(), 4);
  EXPECT_EQ(dataset->utteranceId(0), "\xC3\xA9t\xC3\xA9");
  EXPECT_EQ(dataset->utteranceId(1), "\xF0\x9F\x98\x80");
  EXPECT_EQ(dataset->utteranceId(2), "b:0");
  EXPECT_EQ(dataset->utteranceId(3), "b:1");
  RunInputs batch = dataset->batch({0, 2});
  EXPECT_EQ(batch.inputs.count(kIdArray), 0u);
  EXPECT_EQ(batch.lengths.count(kIdArray), 0u);
}

TEST_F(DatasetTest, BadIdsAreErrorsNamingTheUtterance) {
  std::string bad = "dataset shard '" + dir + "/bad.npz': ";
  auto arrays = shard({4, 2}, {2, 1});
  auto withIds = [&](const std::vector<std::vector<int64_t>> &ids) {
    auto copy = arrays;
    addIds(copy, ids, DType::i64);
    return copy;
  };
  EXPECT_EQ(loadError(withIds({codePoints("a"), codePoints("b c")})),
            bad + "utterance 1: 'nn.id' holds whitespace (U+0020) at "
                  "position 1");
  EXPECT_EQ(loadError(withIds({codePoints("a"), {'b', 0x3000}})),
            bad + "utterance 1: 'nn.id' holds whitespace (U+3000) at "
                  "position 1");
  EXPECT_EQ(loadError(withIds({{'a', 0x9}, codePoints("b")})),
            bad + "utterance 0: 'nn.id' holds whitespace (U+0009) at "
                  "position 1");
  EXPECT_EQ(loadError(withIds({{'a', 0x1B}, codePoints("b")})),
            bad + "utterance 0: 'nn.id' holds a control character (U+001B) "
                  "at position 1");
  EXPECT_EQ(loadError(withIds({{0xD800}, codePoints("b")})),
            bad + "utterance 0: 'nn.id' holds U+D800 at position 0, a "
                  "surrogate, which is not a Unicode scalar value");
  EXPECT_EQ(loadError(withIds({codePoints("a"), {0x110000}})),
            bad + "utterance 1: 'nn.id' holds 1114112 at position 0, which "
                  "is not a Unicode code point (0 to 0x10FFFF)");
  EXPECT_EQ(loadError(withIds({codePoints("a"), {-1}})),
            bad + "utterance 1: 'nn.id' holds -1 at position 0, which is "
                  "not a Unicode code point (0 to 0x10FFFF)");
  EXPECT_EQ(loadError(withIds({codePoints("a"), {}})),
            bad + "utterance 1: 'nn.id' is empty (its length in "
                  "'nn.id.lengths' is 0)");
  EXPECT_EQ(loadError(withIds({codePoints("a")})),
            bad + "'nn.id' holds 1 utterances, 'features' 2");

  auto noLengths = withIds({codePoints("a"), codePoints("b")});
  noLengths.erase("nn.id.lengths");
  EXPECT_EQ(loadError(noLengths),
            bad + "no array 'nn.id.lengths' giving the length of each "
                  "utterance's id in 'nn.id'");
  auto noIds = withIds({codePoints("a"), codePoints("b")});
  noIds.erase("nn.id");
  EXPECT_EQ(loadError(noIds), bad + "'nn.id.lengths' without 'nn.id': the "
                                    "utterance ids are missing");
  auto floats = withIds({codePoints("a"), codePoints("b")});
  floats["nn.id"] = Tensor(DType::f32, {2});
  EXPECT_EQ(loadError(floats),
            bad + "'nn.id' must be a vector of i32 or i64 Unicode code "
                  "points, got f32 [2]");
  auto shortLengths = withIds({codePoints("a"), codePoints("bc")});
  shortLengths["nn.id.lengths"] = Tensor::of<int32_t>(DType::i32, {2}, {1, 1});
  EXPECT_EQ(loadError(shortLengths),
            bad + "the lengths in 'nn.id.lengths' add up to 2 code points, "
                  "but 'nn.id' has 3");
  auto longLengths = withIds({codePoints("a"), codePoints("bc")});
  longLengths["nn.id.lengths"] = Tensor::of<int32_t>(DType::i32, {2}, {1, 3});
  EXPECT_EQ(loadError(longLengths),
            bad + "'nn.id.lengths' gives utterance 1 length 3, past the 3 "
                  "rows of the array (the lengths before it add up to 1)");
}

TEST_F(DatasetTest, UtteranceIdsAreUtf8WithoutSpaces) {
  absl::StatusOr<std::vector<int32_t>> decoded =
      utteranceIdCodePoints("a\xC3\xA9\xE2\x82\xAC\xF0\x9F\x98\x80");
  ASSERT_TRUE(decoded.ok()) << decoded.status().message();
  EXPECT_EQ(*decoded, (std::vector<int32_t>{'a', 0xE9, 0x20AC, 0x1F600}));
  EXPECT_EQ(utf8FromCodePoints(*decoded),
            "a\xC3\xA9\xE2\x82\xAC\xF0\x9F\x98\x80");
  auto error = [](const std::string &id) {
    absl::StatusOr<std::vector<int32_t>> decoded = utteranceIdCodePoints(id);
    EXPECT_FALSE(decoded.ok()) << id;
    return decoded.ok() ? "" : std::string(decoded.status().message());
  };
  // A stray continuation byte, a truncated sequence, an overlong NUL, an
  // encoded surrogate and a value past U+10FFFF.
  EXPECT_EQ(error("ab\x80"), "the utterance id 'ab\x80' is not UTF-8 (byte 2)");
  EXPECT_EQ(error("a\xC3"), "the utterance id 'a\xC3' is not UTF-8 (byte 1)");
  EXPECT_EQ(error("\xC0\x80"),
            "the utterance id '\xC0\x80' is not UTF-8 (byte 0)");
  EXPECT_EQ(error("\xED\xA0\x80"),
            "the utterance id '\xED\xA0\x80' is not UTF-8 (byte 0)");
  EXPECT_EQ(error("\xF4\x90\x80\x80"),
            "the utterance id '\xF4\x90\x80\x80' is not UTF-8 (byte 0)");
  EXPECT_EQ(error(""), "the utterance id '' is empty");
  EXPECT_EQ(error("utt 1"), "the utterance id 'utt 1' holds whitespace "
                            "(U+0020) at position 3");
  EXPECT_EQ(error("utt\xC2\xA0"
                  "1"),
            "the utterance id 'utt\xC2\xA0"
            "1' holds whitespace (U+00A0) at "
            "position 3");
}

// Host arrays: sequences the caller reads (references), not graph inputs.
TEST_F(DatasetTest, HostArraysAreReadForTheCaller) {
  auto first = shard({4, 2}, {2, 1}), second = shard({5}, {3});
  first["refs"] = Tensor::of<int64_t>(DType::i64, {3}, {7, 8, 9});
  first["refs.lengths"] = Tensor::of<int32_t>(DType::i32, {2}, {2, 1});
  second["refs"] = Tensor::of<int32_t>(DType::i32, {0}, {});
  second["refs.lengths"] = Tensor::of<int32_t>(DType::i32, {1}, {0});
  write("a.npz", first);
  std::string secondPath = write("b.npz", second);
  std::vector<Dataset::HostArray> refs{{"refs", false}};
  absl::StatusOr<Dataset> dataset = Dataset::load({dir}, model(), refs);
  ASSERT_TRUE(dataset.ok()) << dataset.status().message();
  ASSERT_TRUE(dataset->hasHostArray("refs"));
  EXPECT_FALSE(dataset->hasHostArray("labels"));
  auto values = [&](int64_t u) {
    absl::Span<const int32_t> span = dataset->hostSequence("refs", u);
    return std::vector<int32_t>(span.begin(), span.end());
  };
  EXPECT_EQ(values(0), (std::vector<int32_t>{7, 8}));
  EXPECT_EQ(values(1), (std::vector<int32_t>{9}));
  EXPECT_EQ(values(2), (std::vector<int32_t>{}));
  EXPECT_EQ(dataset->batch({0}).inputs.count("refs"), 0u);
  // A graph input can be read as a host array too.
  absl::StatusOr<Dataset> labels =
      Dataset::load({dir}, model(), {{"labels", false}});
  ASSERT_TRUE(labels.ok()) << labels.status().message();
  absl::Span<const int32_t> label = labels->hostSequence("labels", 2);
  EXPECT_EQ(std::vector<int32_t>(label.begin(), label.end()),
            (std::vector<int32_t>{1, 2, 3}));
  EXPECT_EQ(labels->batch({2}).inputs.at("labels").at(2), 3.0);

  // Optional and missing everywhere; required and missing; optional in
  // one shard only.
  absl::StatusOr<Dataset> optional =
      Dataset::load({dir}, model(), {{"missing", true}});
  ASSERT_TRUE(optional.ok()) << optional.status().message();
  EXPECT_FALSE(optional->hasHostArray("missing"));
  EXPECT_TRUE(optional->hostSequence("missing", 0).empty());
  // "weight" is a per-utterance value, not a sequence with lengths.
  absl::StatusOr<Dataset> scalar =
      Dataset::load({dir}, model(), {{"weight", true}});
  ASSERT_TRUE(scalar.ok()) << scalar.status().message();
  EXPECT_FALSE(scalar->hasHostArray("weight"));
  absl::StatusOr<Dataset> required =
      Dataset::load({dir}, model(), {{"missing", false}});
  ASSERT_FALSE(required.ok());
  EXPECT_EQ(required.status().message(),
            "dataset shard '" + dir +
                "/a.npz': no array 'missing' [sum of lengths] i32 with "
                "'missing.lengths'");
  second.erase("refs");
  second.erase("refs.lengths");
  write("b.npz", second);
  absl::StatusOr<Dataset> partly =
      Dataset::load({dir}, model(), {{"refs", true}});
  ASSERT_FALSE(partly.ok());
  EXPECT_EQ(partly.status().message(),
            "dataset shard '" + secondPath +
                "': no array 'refs' [sum of lengths] i32 with "
                "'refs.lengths', which '" +
                dir +
                "/a.npz' holds (an optional array is in every shard or in "
                "none)");

  // Bad host arrays.
  std::string bad = "dataset shard '" + dir + "/bad.npz': ";
  auto hostError = [&](std::map<std::string, Tensor> arrays) {
    std::string path = write("bad.npz", arrays);
    absl::StatusOr<Dataset> loaded = Dataset::load({path}, model(), refs);
    EXPECT_FALSE(loaded.ok());
    return loaded.ok() ? "" : std::string(loaded.status().message());
  };
  auto wrongCount = first;
  wrongCount["refs.lengths"] = Tensor::of<int32_t>(DType::i32, {1}, {3});
  EXPECT_EQ(hostError(wrongCount), bad + "'refs' holds 1 utterances, "
                                         "'features' 2");
  auto floats = first;
  floats["refs"] = Tensor(DType::f32, {3});
  EXPECT_EQ(hostError(floats),
            bad + "array 'refs' is f32 [3], which is not 'refs' [sum of "
                  "lengths] i32 with 'refs.lengths'");
  auto noLengths = first;
  noLengths.erase("refs.lengths");
  EXPECT_EQ(hostError(noLengths),
            bad + "no array 'refs.lengths' giving the length of each "
                  "utterance in 'refs'");
  auto wide = first;
  wide["refs"] = Tensor::of<int64_t>(DType::i64, {3}, {7, int64_t(1) << 40, 9});
  EXPECT_EQ(hostError(wide), bad + "utterance 0: 'refs' holds 1099511627776 "
                                   "at position 1, outside i32");
  auto shortLengths = first;
  shortLengths["refs.lengths"] = Tensor::of<int32_t>(DType::i32, {2}, {1, 1});
  EXPECT_EQ(hostError(shortLengths),
            bad + "the lengths in 'refs.lengths' add up to 2 rows, but "
                  "'refs' has 3");
}

} // namespace

// splitUtterances undoes concatenateUtterances: arrays of any rank cut by
// their lengths, rank-0 values unstacked; arrays that do not cut are
// errors naming the array.
TEST(ShardArraysTest, SplitUndoesConcatenate) {
  std::vector<UtteranceArrays> utterances;
  for (int u = 0; u < 4; ++u) {
    UtteranceArrays a;
    a["features"] = Tensor::of<float>(DType::f32, {u, 2},
                                      std::vector<float>(2 * u, 0.5f * u));
    a["labels"] = Tensor::of<int32_t>(DType::i32, {u + 1},
                                      std::vector<int32_t>(u + 1, 7 * u));
    a["weight"] = Tensor::of<float>(DType::f32, {}, {1.0f + u});
    utterances.push_back(std::move(a));
  }
  std::map<std::string, Tensor> shard =
      concatenateUtterances(utterances, 0, utterances.size());
  absl::StatusOr<std::vector<UtteranceArrays>> split =
      splitUtterances(shard, "shard");
  ASSERT_TRUE(split.ok()) << split.status().message();
  ASSERT_EQ(split->size(), utterances.size());
  for (size_t u = 0; u < utterances.size(); ++u) {
    ASSERT_EQ((*split)[u].size(), 3u);
    for (const auto &[name, tensor] : utterances[u]) {
      const Tensor &got = (*split)[u].at(name);
      EXPECT_EQ(got.shape(), tensor.shape()) << name << " " << u;
      EXPECT_EQ(got.dtype(), tensor.dtype());
      EXPECT_EQ(0, std::memcmp(got.raw(), tensor.raw(), tensor.sizeInBytes()))
          << name << " " << u;
    }
  }
  EXPECT_TRUE(splitUtterances({}, "empty")->empty());

  std::map<std::string, Tensor> tooShort = shard;
  tooShort["labels.lengths"].data<int32_t>()[3] = 9;
  absl::StatusOr<std::vector<UtteranceArrays>> bad =
      splitUtterances(tooShort, "bad.npz");
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(
      bad.status().message(),
      "bad.npz: array 'labels' has fewer rows than its lengths add up to");
  std::map<std::string, Tensor> tooLong = shard;
  tooLong["labels.lengths"].data<int32_t>()[3] = 1;
  EXPECT_EQ(splitUtterances(tooLong, "bad.npz").status().message(),
            "bad.npz: array 'labels' has more rows than its lengths add up to");
  std::map<std::string, Tensor> count = shard;
  count["weight"] = Tensor::of<float>(DType::f32, {3}, {1, 2, 3});
  EXPECT_EQ(splitUtterances(count, "bad.npz").status().message(),
            "bad.npz: array 'weight' has no lengths and is not one value per "
            "utterance");
}
