//===- ChunkingTest.cpp - chunked training data: cuts, counts, labels -----===//
//
// Dataset::chunksOf against hand-worked cases and a brute-force
// restatement of its documented rule over every small size, step and
// length; Dataset::chunked on data in memory (frames, frame-level inputs,
// the transducer rule's labels, the chunk weights); the parser and the
// errors.
//
//===----------------------------------------------------------------------===//

#include "nn/Dataset.h"

#include <gtest/gtest.h>

#include <climits>
#include <tuple>

using namespace nn;

namespace {

using Cut = std::tuple<int64_t, int64_t, int64_t, int64_t>;

/// (start, length, countBegin, countEnd) of each chunk.
std::vector<Cut> cuts(int64_t length, int64_t size, int64_t step) {
  ChunkingOptions options;
  options.size = size;
  options.step = step;
  std::vector<Cut> out;
  for (const Dataset::Chunk &c : Dataset::chunksOf(length, options))
    out.emplace_back(c.start, c.length, c.countBegin, c.countEnd);
  return out;
}

TEST(ChunkingTest, HandWorkedCuts) {
  // 4:3 over 10 frames: frame 3 is shared by chunks 0 and 1 and 0 to cut
  // in both, so the earlier takes it; frame 6 likewise.
  EXPECT_EQ(cuts(10, 4, 3),
            (std::vector<Cut>{{0, 4, 0, 4}, {3, 4, 1, 4}, {6, 4, 1, 4}}));
  // 5:2 over 10 frames: chunks [0,5) [2,7) [4,9) [6,10); frame 4 lies 2
  // from both cuts of [2,7) and 0 from one of [0,5) and [4,9).
  EXPECT_EQ(cuts(10, 5, 2),
            (std::vector<Cut>{
                {0, 5, 0, 4}, {2, 5, 2, 4}, {4, 5, 2, 4}, {6, 4, 2, 4}}));
  // RETURNN's test_iterate_seqs_chunking_1 (10:5 over 11 frames) cuts
  // [0,10) [5,11) [10,11); the last lies inside the one before and would
  // count nothing, so it is not cut. The overlap [5,10) splits after
  // frame 7 (2 from a cut in both chunks: the earlier takes it).
  EXPECT_EQ(cuts(11, 10, 5), (std::vector<Cut>{{0, 10, 0, 8}, {5, 6, 3, 6}}));
  // No overlap: every chunk counts all of its frames.
  EXPECT_EQ(cuts(7, 3, 3),
            (std::vector<Cut>{{0, 3, 0, 3}, {3, 3, 0, 3}, {6, 1, 0, 1}}));
  // Shorter than a chunk, exactly one chunk, none.
  EXPECT_EQ(cuts(3, 5, 2), (std::vector<Cut>{{0, 3, 0, 3}}));
  EXPECT_EQ(cuts(5, 5, 2), (std::vector<Cut>{{0, 5, 0, 5}}));
  EXPECT_EQ(cuts(0, 5, 2), (std::vector<Cut>{{0, 0, 0, 0}}));
  // RETURNN's 100:75 over 250 frames: chunks from 0, 75, 150; the overlaps
  // [75, 100) and [150, 175) split in the middle (the 13th frame of 25
  // ties and goes to the earlier chunk).
  EXPECT_EQ(cuts(250, 100, 75),
            (std::vector<Cut>{
                {0, 100, 0, 88}, {75, 100, 13, 88}, {150, 100, 13, 100}}));
}

/// The rule as docs and ChunkingOptions state it, written out plainly:
/// chunks from 0 by `step` until one reaches the end; each frame to the
/// chunk where it lies farthest from a cut (an end that is not the
/// utterance's), the earlier on ties; chunks that count nothing dropped.
std::vector<Cut> referenceCuts(int64_t length, int64_t size, int64_t step) {
  std::vector<std::pair<int64_t, int64_t>> chunks;
  int64_t start = 0;
  while (true) {
    int64_t end = std::min(start + size, length);
    chunks.emplace_back(start, end);
    if (end >= length)
      break;
    start += step;
  }
  std::vector<int64_t> owner(length, -1);
  for (int64_t t = 0; t < length; ++t) {
    double best = -1;
    for (size_t k = 0; k < chunks.size(); ++k) {
      auto [s, e] = chunks[k];
      if (t < s || t >= e)
        continue;
      double left = s == 0 ? 1e18 : double(t - s);
      double right = e == length ? 1e18 : double(e - 1 - t);
      double distance = std::min(left, right);
      if (distance > best) {
        best = distance;
        owner[t] = (int64_t)k;
      }
    }
  }
  std::vector<Cut> out;
  for (size_t k = 0; k < chunks.size(); ++k) {
    auto [s, e] = chunks[k];
    int64_t first = -1, last = -1;
    for (int64_t t = 0; t < length; ++t)
      if (owner[t] == (int64_t)k) {
        if (first < 0)
          first = t;
        last = t;
      }
    if (length == 0)
      out.emplace_back(s, e - s, 0, 0);
    else if (first >= 0)
      out.emplace_back(s, e - s, first - s, last + 1 - s);
  }
  return out;
}

TEST(ChunkingTest, EveryFrameCountsOnceByTheRule) {
  for (int64_t size = 1; size <= 12; ++size)
    for (int64_t step = 1; step <= size; ++step)
      for (int64_t length = 0; length <= 40; ++length) {
        SCOPED_TRACE(std::to_string(size) + ":" + std::to_string(step) +
                     " over " + std::to_string(length));
        std::vector<Cut> got = cuts(length, size, step);
        ASSERT_EQ(got, referenceCuts(length, size, step));
        // Each frame counted once, by a chunk that holds it.
        std::vector<int> counted(length, 0);
        for (auto [start, chunkLength, begin, end] : got) {
          ASSERT_LE(0, begin);
          // No chunk is only context.
          if (length > 0)
            ASSERT_LT(begin, end);
          ASSERT_LE(end, chunkLength);
          ASSERT_LE(chunkLength, size);
          for (int64_t t = begin; t < end; ++t)
            ++counted[start + t];
        }
        for (int64_t t = 0; t < length; ++t)
          ASSERT_EQ(counted[t], 1) << "frame " << t;
      }
}

TEST(ChunkingTest, ParsesSpecsAndNamesWhatIsWrong) {
  absl::StatusOr<ChunkingOptions> plain = parseChunking("100:75");
  ASSERT_TRUE(plain.ok()) << plain.status().message();
  EXPECT_EQ(plain->size, 100);
  EXPECT_EQ(plain->step, 75);
  EXPECT_TRUE(plain->overlaps());
  EXPECT_TRUE(plain->labels.empty());
  EXPECT_EQ(plain->str(), "100:75");
  EXPECT_FALSE(parseChunking("")->enabled());
  EXPECT_FALSE(parseChunking("8:8")->overlaps());
  absl::StatusOr<ChunkingOptions> rule =
      parseChunking("10:5,labels=y,alignment=path,blank=3");
  ASSERT_TRUE(rule.ok()) << rule.status().message();
  EXPECT_EQ(rule->labels, "y");
  EXPECT_EQ(rule->alignment, "path");
  EXPECT_EQ(rule->blank, 3);
  EXPECT_EQ(parseChunking("10:5,labels=y,alignment=path")->blank, 0);
  const std::pair<const char *, const char *> bad[] = {
      {"100", "no SIZE:STEP"},
      {"a:b", "no SIZE:STEP"},
      {"10:-1", "no SIZE:STEP"},
      {"0:0", "at least 1"},
      {"10:11", "skips frames"},
      {"10:5,labels=y", "go together"},
      {"10:5,blank=1", "go together"},
      {"10:5,labels=y,alignment=y", "different inputs"},
      {"10:5,size=3", "unknown key 'size'"},
      {"10:5,labels", "not KEY=VALUE"},
      {"10:5,labels=y,alignment=a,blank=x", "class index"},
  };
  for (auto [spec, why] : bad) {
    absl::StatusOr<ChunkingOptions> parsed = parseChunking(spec);
    ASSERT_FALSE(parsed.ok()) << spec;
    EXPECT_NE(parsed.status().message().find(why), std::string::npos)
        << spec << ": " << parsed.status().message();
    EXPECT_NE(parsed.status().message().find(spec), std::string::npos)
        << parsed.status().message();
  }
}

/// A dataset of one shard, `arrays`, named `name`, for `manifest`.
Dataset inMemory(const Manifest &manifest, const std::string &name,
                 std::map<std::string, Tensor> arrays) {
  absl::StatusOr<Dataset> dataset = Dataset::forModel(manifest);
  EXPECT_TRUE(dataset.ok()) << dataset.status().message();
  absl::Status added = dataset->addShard({{name, std::move(arrays)}}, manifest);
  EXPECT_TRUE(added.ok()) << added.message();
  return std::move(*dataset);
}

/// Frames [B, T, 2] f32, an RNA alignment [B, T] and labels [B, U] (5
/// classes, 0 the blank), a per-utterance value [B]; with `weights`, the
/// chunk weights [B, T].
Manifest model(bool weights) {
  Manifest m;
  m.graph = "fixed";
  m.dims = {{DimInfo::Kind::batch, "B", "", "", 0, ""},
            {DimInfo::Kind::seq, "T", "B", "", 0, ""},
            {DimInfo::Kind::seq, "U", "B", "", 0, ""}};
  m.rootDims = {"B", "T", "U"};
  auto axis = [](const std::string &dim) { return Axis{dim, -1}; };
  m.inputs = {
      {"features", DType::f32, {axis("B"), axis("T"), Axis{"", 2}}},
      {"alignment", DType::i32, {axis("B"), axis("T")}, 5},
      {"labels", DType::i32, {axis("B"), axis("U")}, 5},
      {"speaker", DType::f32, {axis("B")}},
  };
  if (weights)
    m.inputs.push_back(
        {kChunkWeightsInput, DType::f32, {axis("B"), axis("T")}});
  return m;
}

/// Two utterances: 7 frames aligned to labels 3 1 4, and 3 frames to 2.
/// Feature values encode (utterance, frame).
Dataset data(const Manifest &manifest) {
  std::vector<int32_t> alignment{3, 0, 0, 1, 0, 4, 0, 0, 2, 0};
  std::map<std::string, Tensor> a;
  a["features"] = Tensor(DType::f32, {10, 2});
  for (int r = 0; r < 10; ++r)
    for (int f = 0; f < 2; ++f)
      a["features"].data<float>()[r * 2 + f] =
          (float)((r < 7 ? 100 + r : 200 + r - 7) * 10 + f);
  a["features.lengths"] = Tensor::of<int32_t>(DType::i32, {2}, {7, 3});
  a["alignment"] = Tensor::of<int32_t>(DType::i32, {10}, alignment);
  a["alignment.lengths"] = a["features.lengths"];
  a["labels"] = Tensor::of<int32_t>(DType::i32, {4}, {3, 1, 4, 2});
  a["labels.lengths"] = Tensor::of<int32_t>(DType::i32, {2}, {3, 1});
  a["speaker"] = Tensor::of<float>(DType::f32, {2}, {5.0f, 6.0f});
  return inMemory(manifest, "mem.npz", std::move(a));
}

TEST(ChunkingTest, ChunksCarryTheirFramesLabelsAndWeights) {
  Manifest manifest = model(true);
  Dataset whole = data(manifest);
  absl::StatusOr<ChunkingOptions> options =
      parseChunking("4:2,labels=labels,alignment=alignment");
  ASSERT_TRUE(options.ok());
  absl::StatusOr<Dataset> chunked = whole.chunked(*options);
  ASSERT_TRUE(chunked.ok()) << chunked.status().message();
  // 7 frames: [0,4) [2,6) [4,7), counting [0,3) [3,5) [5,7); 3 frames:
  // one chunk.
  ASSERT_EQ(chunked->size(), 4);
  std::vector<int64_t> all{0, 1, 2, 3};
  RunInputs batch = chunked->batch(all);
  EXPECT_EQ(batch.lengths.at("T"), (std::vector<int32_t>{4, 4, 3, 3}));
  // The labels each chunk's frames emit: 3 1 | 1 4 | 4 | 2.
  EXPECT_EQ(batch.lengths.at("U"), (std::vector<int32_t>{2, 2, 1, 1}));
  const Tensor &labels = batch.inputs.at("labels");
  ASSERT_EQ(labels.shape(), (std::vector<int64_t>{4, 2}));
  EXPECT_EQ(
      std::vector<int32_t>(labels.data<int32_t>(), labels.data<int32_t>() + 8),
      (std::vector<int32_t>{3, 1, 1, 4, 4, -1, 2, -1}));
  const Tensor &features = batch.inputs.at("features");
  const int64_t starts[] = {0, 2, 4, 0};
  const int64_t lengths[] = {4, 4, 3, 3};
  for (int b = 0; b < 4; ++b)
    for (int t = 0; t < lengths[b]; ++t) {
      float want = (float)((b < 3 ? 100 : 200) + starts[b] + t) * 10 + 1;
      EXPECT_EQ(features.data<float>()[(b * 4 + t) * 2 + 1], want)
          << "chunk " << b << " frame " << t;
    }
  const int32_t wantAlignment[] = {3, 0, 0, 1,  0, 1, 0, 4,
                                   0, 4, 0, -1, 0, 2, 0, -1};
  for (int i = 0; i < 16; ++i)
    EXPECT_EQ(batch.inputs.at("alignment").data<int32_t>()[i], wantAlignment[i])
        << i;
  const float wantWeights[] = {1, 1, 1, 0, 0, 1, 1, 0, 0, 1, 1, 0, 1, 1, 1, 0};
  for (int i = 0; i < 16; ++i)
    EXPECT_EQ(batch.inputs.at(kChunkWeightsInput).data<float>()[i],
              wantWeights[i])
        << i;
  EXPECT_EQ(batch.inputs.at("speaker").data<float>()[2], 5.0f);
  EXPECT_EQ(batch.inputs.at("speaker").data<float>()[3], 6.0f);

  // Unchunked: weight 1 at every real frame, 0 in the padding.
  RunInputs plain = whole.batch({0, 1});
  const float wantPlain[] = {1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 0, 0, 0, 0};
  for (int i = 0; i < 14; ++i)
    EXPECT_EQ(plain.inputs.at(kChunkWeightsInput).data<float>()[i],
              wantPlain[i])
        << i;
}

TEST(ChunkingTest, InputsChunksCannotCutAreErrors) {
  Manifest weighted = model(true);
  Dataset whole = data(weighted);
  // The labels run along U: without the transducer rule nothing cuts them.
  absl::StatusOr<Dataset> noRule = whole.chunked(*parseChunking("4:2"));
  ASSERT_FALSE(noRule.ok());
  EXPECT_NE(noRule.status().message().find(
                "input 'labels' runs along 'U', which chunks cannot cut"),
            std::string::npos)
      << noRule.status().message();
  absl::StatusOr<Dataset> wrongAlignment =
      whole.chunked(*parseChunking("4:2,labels=labels,alignment=features"));
  ASSERT_FALSE(wrongAlignment.ok());
  EXPECT_NE(wrongAlignment.status().message().find(
                "alignment 'features' must be a graph input of integers"),
            std::string::npos)
      << wrongAlignment.status().message();
  absl::StatusOr<Dataset> wrongLabels =
      whole.chunked(*parseChunking("4:2,labels=speaker,alignment=alignment"));
  ASSERT_FALSE(wrongLabels.ok());
  EXPECT_NE(wrongLabels.status().message().find("labels 'speaker' must be"),
            std::string::npos)
      << wrongLabels.status().message();
  absl::StatusOr<Dataset> twice =
      whole.chunked(*parseChunking("4:4,labels=labels,alignment=alignment"));
  ASSERT_TRUE(twice.ok()) << twice.status().message();
  EXPECT_FALSE(
      twice->chunked(*parseChunking("4:4,labels=labels,alignment=alignment"))
          .ok());

  // Overlapping chunks need the weights; chunks that do not overlap count
  // each frame once without them.
  Manifest unweighted = model(false);
  Dataset plain = data(unweighted);
  absl::StatusOr<Dataset> overlapping =
      plain.chunked(*parseChunking("4:2,labels=labels,alignment=alignment"));
  ASSERT_FALSE(overlapping.ok());
  EXPECT_NE(overlapping.status().message().find(
                "the graph needs an input 'chunk_weights' [batch, T] f32"),
            std::string::npos)
      << overlapping.status().message();
  EXPECT_TRUE(
      plain.chunked(*parseChunking("4:4,labels=labels,alignment=alignment"))
          .ok());

  // The weights input must be f32 along the frames or along a path;
  // along another dim (the labels') chunks cannot weight it.
  Manifest badWeights = model(false);
  badWeights.inputs.push_back(
      {kChunkWeightsInput, DType::i32, {Axis{"B", -1}, Axis{"T", -1}}});
  absl::StatusOr<Dataset> refused = Dataset::forModel(badWeights);
  ASSERT_FALSE(refused.ok());
  EXPECT_NE(refused.status().message().find("must be f32 [batch, T]"),
            std::string::npos)
      << refused.status().message();
  Manifest alongLabels = model(false);
  alongLabels.inputs.push_back(
      {kChunkWeightsInput, DType::f32, {Axis{"B", -1}, Axis{"U", -1}}});
  absl::StatusOr<Dataset> notCut =
      data(alongLabels)
          .chunked(*parseChunking("4:2,labels=labels,alignment=alignment"));
  ASSERT_FALSE(notCut.ok());
  EXPECT_NE(notCut.status().message().find(
                "'chunk_weights' runs along 'U', neither the frames 'T' nor "
                "the positions of an RNN-T path"),
            std::string::npos)
      << notCut.status().message();
}

/// An RNN-T path input [B, A] beside frames [B, T, 1] and labels [B, U],
/// the chunk weights along the path.
Manifest rnntModel() {
  Manifest m;
  m.graph = "path";
  m.dims = {{DimInfo::Kind::batch, "B", "", "", 0, ""},
            {DimInfo::Kind::seq, "T", "B", "", 0, ""},
            {DimInfo::Kind::seq, "U", "B", "", 0, ""},
            {DimInfo::Kind::seq, "A", "B", "", 0, ""}};
  m.rootDims = {"B", "T", "U", "A"};
  auto axis = [](const std::string &dim) { return Axis{dim, -1}; };
  m.inputs = {
      {"features", DType::f32, {axis("B"), axis("T"), Axis{"", 1}}},
      {"labels", DType::i32, {axis("B"), axis("U")}, 5},
      {"alignment", DType::i32, {axis("B"), axis("A")}, 5},
      {kChunkWeightsInput, DType::f32, {axis("B"), axis("A")}},
  };
  return m;
}

/// Two utterances: 4 frames with the path 3 . | . | 1 2 . | . (labels
/// 3 1 2; "." the blank, "|" between frames) and 2 frames with . | 4 .
Dataset rnntData(const Manifest &manifest, std::vector<int32_t> path) {
  std::map<std::string, Tensor> a;
  a["features"] = Tensor::of<float>(DType::f32, {6, 1}, {0, 1, 2, 3, 10, 11});
  a["features.lengths"] = Tensor::of<int32_t>(DType::i32, {2}, {4, 2});
  a["labels"] = Tensor::of<int32_t>(DType::i32, {4}, {3, 1, 2, 4});
  a["labels.lengths"] = Tensor::of<int32_t>(DType::i32, {2}, {3, 1});
  a["alignment"] =
      Tensor::of<int32_t>(DType::i32, {(int64_t)path.size()}, path);
  a["alignment.lengths"] =
      Tensor::of<int32_t>(DType::i32, {2}, {(int32_t)path.size() - 3, 3});
  return inMemory(manifest, "path.npz", std::move(a));
}

TEST(ChunkingTest, RnntPathsAreCutAtTheBlanksOfTheChunksFrames) {
  Manifest manifest = rnntModel();
  Dataset whole = rnntData(manifest, {3, 0, 0, 1, 2, 0, 0, 0, 4, 0});
  absl::StatusOr<Dataset> chunked =
      whole.chunked(*parseChunking("2:1,labels=labels,alignment=alignment"));
  ASSERT_TRUE(chunked.ok()) << chunked.status().message();
  // 4 frames at 2:1: [0,2) [1,3) [2,4), counting [0,2) [2,3) [3,4); 2
  // frames: one chunk.
  ASSERT_EQ(chunked->size(), 4);
  RunInputs batch = chunked->batch({0, 1, 2, 3});
  EXPECT_EQ(batch.lengths.at("T"), (std::vector<int32_t>{2, 2, 2, 2}));
  // Frames [0,2): positions 3 . | . ; [1,3): . | 1 2 . ; [2,4): 1 2 . | .
  EXPECT_EQ(batch.lengths.at("A"), (std::vector<int32_t>{3, 4, 4, 3}));
  EXPECT_EQ(batch.lengths.at("U"), (std::vector<int32_t>{1, 2, 2, 1}));
  const int32_t wantPath[] = {3, 0, 0, -1, 0, 1, 2, 0, 1, 2, 0, 0, 0, 4, 0, -1};
  const int32_t wantLabels[] = {3, -1, 1, 2, 1, 2, 4, -1};
  // Each position weighs as its frame: [0,2) all; [1,3) frame 2 (its
  // second); [2,4) frame 3 (its second).
  const float wantWeights[] = {1, 1, 1, 0, 0, 1, 1, 1, 0, 0, 0, 1, 1, 1, 1, 0};
  float counted = 0;
  for (int i = 0; i < 16; ++i) {
    EXPECT_EQ(batch.inputs.at("alignment").data<int32_t>()[i], wantPath[i])
        << i;
    EXPECT_EQ(batch.inputs.at(kChunkWeightsInput).data<float>()[i],
              wantWeights[i])
        << i;
    counted += batch.inputs.at(kChunkWeightsInput).data<float>()[i];
  }
  for (int i = 0; i < 8; ++i)
    EXPECT_EQ(batch.inputs.at("labels").data<int32_t>()[i], wantLabels[i]) << i;
  // Every position of the whole paths counts once.
  EXPECT_EQ(counted, 10);

  // Unchunked: every position weighs 1.
  RunInputs plain = whole.batch({0, 1});
  const float wantPlain[] = {1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 0, 0, 0, 0};
  for (int i = 0; i < 14; ++i)
    EXPECT_EQ(plain.inputs.at(kChunkWeightsInput).data<float>()[i],
              wantPlain[i])
        << i;

  // A path whose blanks are not the frames is an error naming the
  // utterance.
  Dataset bad = rnntData(manifest, {3, 0, 0, 1, 0, 0, 0, 0, 4, 0});
  absl::StatusOr<Dataset> refused =
      bad.chunked(*parseChunking("2:1,labels=labels,alignment=alignment"));
  ASSERT_FALSE(refused.ok());
  EXPECT_NE(refused.status().message().find(
                "utterance 'path:0' of shard 'path.npz': 'alignment' holds 5 "
                "blanks (class 0) for 4 frames"),
            std::string::npos)
      << refused.status().message();
}

} // namespace
