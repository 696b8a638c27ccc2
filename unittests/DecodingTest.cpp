//===- DecodingTest.cpp - a decoding graph's hypotheses and their scores --===//

#include "training/Decoding.h"

#include <gtest/gtest.h>

#include <limits>

using namespace nn;
using namespace nn::training;

namespace {

Axis dim(const std::string &name) { return Axis{name, -1}; }
Axis size(int64_t n) { return Axis{"", n}; }

/// A graph over B with the input dim T, the derived T2 = ceil(T / 2) and Y,
/// whose lengths the graph computes; `outputs` are its results.
Manifest graph(std::vector<TensorInfo> outputs) {
  Manifest m;
  m.graph = "decode";
  m.dims = {{DimInfo::Kind::batch, "B", "", "", 0, ""},
            {DimInfo::Kind::seq, "T", "B", "", 0, ""},
            {DimInfo::Kind::seq, "T2", "B", "T", 2, ""},
            {DimInfo::Kind::seq, "Y", "B", "", 0, ""},
            {DimInfo::Kind::packed, "N", "B", "", 0, "T"}};
  m.rootDims = {"B", "T"};
  m.inputs = {{"features", DType::f32, {dim("B"), dim("T"), size(4)}}};
  m.outputs = std::move(outputs);
  return m;
}

std::string layoutError(std::vector<TensorInfo> outputs) {
  absl::StatusOr<HypothesisLayout> layout =
      hypothesisLayout(graph(std::move(outputs)));
  EXPECT_FALSE(layout.ok());
  return layout.ok() ? "" : std::string(layout.status().message());
}

TEST(DecodingTest, LayoutFindsLabelsLengthsAndScores) {
  absl::StatusOr<HypothesisLayout> input =
      hypothesisLayout(graph({{"result0", DType::i32, {dim("B"), dim("T")}}}));
  ASSERT_TRUE(input.ok()) << input.status().message();
  EXPECT_EQ(input->labels, "result0");
  EXPECT_EQ(input->lengthDim, "T");
  EXPECT_EQ(input->lengthsOutput, "");
  EXPECT_EQ(input->score, "");

  // A dim whose lengths the graph computes: the output lengths:Y, after
  // the results, holds them.
  absl::StatusOr<HypothesisLayout> computed =
      hypothesisLayout(graph({{"result0", DType::i32, {dim("B"), dim("Y")}},
                              {"result1", DType::f32, {dim("B")}},
                              {"lengths:Y", DType::i32, {dim("B")}}}));
  ASSERT_TRUE(computed.ok()) << computed.status().message();
  EXPECT_EQ(computed->lengthDim, "Y");
  EXPECT_EQ(computed->lengthsOutput, "lengths:Y");
  EXPECT_EQ(computed->score, "result1");

  absl::StatusOr<HypothesisLayout> fixed =
      hypothesisLayout(graph({{"result0", DType::i32, {dim("B"), size(3)}}}));
  ASSERT_TRUE(fixed.ok()) << fixed.status().message();
  EXPECT_EQ(fixed->lengthDim, "");
  EXPECT_EQ(fixed->staticLength, 3);
}

TEST(DecodingTest, LayoutRefusesResultsThatAreNoHypotheses) {
  EXPECT_EQ(layoutError({}),
            "graph @decode returns no results; a decoding graph returns its "
            "hypotheses as result0, [B, Y] i32 (and their scores as result1, "
            "[B] f32)");
  EXPECT_EQ(
      layoutError({{"result0", DType::f32, {dim("B"), dim("T"), size(6)}}}),
      "graph @decode result0 (f32 [B, T, 6]) is not a hypothesis per "
      "sequence: expected [B, Y] i32 (B the batch, Y the labels' "
      "sequence dim)");
  EXPECT_EQ(
      layoutError({{"result0", DType::i32, {dim("B"), size(4), dim("Y")}}}),
      "graph @decode result0 (i32 [B, 4, Y]) is not an N-best list: "
      "expected [B, K, Y] i32 with Y a sequence dim of a batch declared "
      "flatten(B, K)");
  EXPECT_EQ(layoutError({{"result0", DType::i32, {dim("T"), dim("B")}}}),
            "graph @decode result0 (i32 [T, B]) is not a hypothesis per "
            "sequence: expected [B, Y] i32 (B the batch, Y the labels' "
            "sequence dim)");
  EXPECT_EQ(layoutError({{"result0", DType::i32, {dim("B"), dim("N")}}}),
            "graph @decode result0 (i32 [B, N]): its axis 1, 'N', is not a "
            "sequence dim of the batch");
  EXPECT_EQ(layoutError({{"result0", DType::i32, {dim("B"), dim("T")}},
                         {"result1", DType::i32, {dim("B"), dim("T")}}}),
            "graph @decode result1 (i32 [B, T]) is not a score per "
            "hypothesis: expected [B] f32");
  EXPECT_EQ(layoutError({{"result0", DType::i32, {dim("B"), dim("T")}},
                         {"result1", DType::f32, {dim("B")}},
                         {"result2", DType::f32, {dim("B")}}}),
            "graph @decode returns 3 results; a decoding graph returns its "
            "hypotheses (result0) and optionally their scores (result1)");
  EXPECT_EQ(layoutError({{"result0", DType::i32, {dim("B"), dim("Y")}},
                         {"lengths:Y", DType::i64, {dim("B")}}}),
            "graph @decode output 'lengths:Y' is i64 [B]; the lengths of 'Y' "
            "are [B] i32");
}

/// A run's result: labels [rows, padded] holding 10 * row + position.
RunResult labelsResult(int64_t rows, int64_t padded) {
  RunResult result;
  Tensor labels(DType::i32, {rows, padded});
  for (int64_t i = 0; i < rows * padded; ++i)
    labels.data<int32_t>()[i] = (int32_t)(10 * (i / padded) + i % padded);
  result.outputs.emplace_back("result0", std::move(labels));
  return result;
}

TEST(DecodingTest, HypothesesEndAtTheirLengths) {
  // Lengths from the batch (an input's dim, or one derived from it).
  HypothesisLayout fromBatch = *hypothesisLayout(
      graph({{"result0", DType::i32, {dim("B"), dim("T2")}}}));
  DimValues dims;
  dims.lengths["T2"] = {2, 0, 3};
  absl::StatusOr<std::vector<Hypothesis>> read =
      readHypotheses(fromBatch, labelsResult(3, 3), dims);
  ASSERT_TRUE(read.ok()) << read.status().message();
  ASSERT_EQ(read->size(), 3u);
  EXPECT_EQ((*read)[0].labels, (std::vector<int32_t>{0, 1}));
  EXPECT_EQ((*read)[1].labels, (std::vector<int32_t>{}));
  EXPECT_EQ((*read)[2].labels, (std::vector<int32_t>{20, 21, 22}));
  EXPECT_FALSE((*read)[0].score.has_value());

  // Lengths and scores the graph returns.
  HypothesisLayout computed =
      *hypothesisLayout(graph({{"result0", DType::i32, {dim("B"), dim("Y")}},
                               {"result1", DType::f32, {dim("B")}},
                               {"lengths:Y", DType::i32, {dim("B")}}}));
  RunResult result = labelsResult(2, 4);
  result.outputs.emplace_back(
      "result1", Tensor::of<float>(DType::f32, {2}, {-1.5f, -0.25f}));
  result.outputs.emplace_back("lengths:Y",
                              Tensor::of<int32_t>(DType::i32, {2}, {4, 1}));
  read = readHypotheses(computed, result, DimValues());
  ASSERT_TRUE(read.ok()) << read.status().message();
  EXPECT_EQ((*read)[0].labels, (std::vector<int32_t>{0, 1, 2, 3}));
  EXPECT_EQ((*read)[1].labels, (std::vector<int32_t>{10}));
  EXPECT_EQ((*read)[0].score, -1.5);
  EXPECT_EQ((*read)[1].score, -0.25);

  // A length past the padded axis is the graph's error, not a read past
  // the row.
  result.outputs.back().second = Tensor::of<int32_t>(DType::i32, {2}, {5, 1});
  read = readHypotheses(computed, result, DimValues());
  ASSERT_FALSE(read.ok());
  EXPECT_EQ(read.status().message(),
            "graph @decode gives batch row 0 a hypothesis of length 5 along "
            "'Y', outside the 4 positions of result0");
  result.outputs.pop_back();
  read = readHypotheses(computed, result, DimValues());
  ASSERT_FALSE(read.ok());
  EXPECT_EQ(read.status().message(),
            "graph @decode returned no 'lengths:Y' [2] i32");

  // Without lengths anywhere.
  read = readHypotheses(fromBatch, labelsResult(3, 3), DimValues());
  ASSERT_FALSE(read.ok());
  EXPECT_EQ(read.status().message(),
            "graph @decode: the batch gives no lengths of 'T2', the "
            "hypotheses' dim, and the graph returns none ('lengths:T2')");

  // A static axis: every row in full.
  HypothesisLayout fixed =
      *hypothesisLayout(graph({{"result0", DType::i32, {dim("B"), size(2)}}}));
  read = readHypotheses(fixed, labelsResult(2, 2), DimValues());
  ASSERT_TRUE(read.ok()) << read.status().message();
  EXPECT_EQ((*read)[1].labels, (std::vector<int32_t>{10, 11}));
}

/// An N-best graph: K hypotheses per sequence (computed), H their
/// flattened batch, Y each hypothesis's length (computed, over H).
Manifest nBestGraph(bool withScores) {
  Manifest m = graph({{"result0", DType::i32, {dim("B"), dim("K"), dim("Z")}}});
  DimInfo list{DimInfo::Kind::seq, "K", "B"};
  list.computed = true;
  DimInfo flat{DimInfo::Kind::batch, "H", "", "B"};
  flat.inner = "K";
  DimInfo length{DimInfo::Kind::seq, "Z", "H"};
  length.computed = true;
  m.dims.insert(m.dims.end(), {list, flat, length});
  if (withScores)
    m.outputs.push_back({"result1", DType::f32, {dim("B"), dim("K")}});
  m.outputs.push_back({"lengths:K", DType::i32, {dim("B")}});
  m.outputs.push_back({"lengths:Z", DType::i32, {dim("H")}});
  return m;
}

TEST(DecodingTest, NBestListsAreReadBestFirst) {
  absl::StatusOr<HypothesisLayout> layout = hypothesisLayout(nBestGraph(true));
  ASSERT_TRUE(layout.ok()) << layout.status().message();
  EXPECT_TRUE(layout->isNBest());
  EXPECT_EQ(layout->listLengthsOutput, "lengths:K");
  EXPECT_EQ(layout->lengthsOutput, "lengths:Z");
  EXPECT_EQ(layout->score, "result1");

  // Three sequences with 2, 0 and 1 hypotheses in [3, 2, 3] slots.
  RunResult result;
  std::vector<int32_t> labels(3 * 2 * 3);
  for (size_t i = 0; i < labels.size(); ++i)
    labels[i] = (int32_t)i;
  result.outputs.emplace_back(
      "result0", Tensor::of<int32_t>(DType::i32, {3, 2, 3}, labels));
  result.outputs.emplace_back(
      "result1", Tensor::of<float>(DType::f32, {3, 2},
                                   {-1.0f, -2.0f, 0.0f, 0.0f, -0.5f, 0.0f}));
  result.outputs.emplace_back("lengths:K",
                              Tensor::of<int32_t>(DType::i32, {3}, {2, 0, 1}));
  result.outputs.emplace_back("lengths:Z",
                              Tensor::of<int32_t>(DType::i32, {3}, {3, 1, 0}));
  absl::StatusOr<std::vector<std::vector<Hypothesis>>> lists =
      readNBest(*layout, result, DimValues());
  ASSERT_TRUE(lists.ok()) << lists.status().message();
  ASSERT_EQ(lists->size(), 3u);
  ASSERT_EQ((*lists)[0].size(), 2u);
  EXPECT_EQ((*lists)[0][0].labels, (std::vector<int32_t>{0, 1, 2}));
  EXPECT_EQ((*lists)[0][1].labels, (std::vector<int32_t>{3}));
  EXPECT_EQ((*lists)[0][1].score, -2.0);
  EXPECT_TRUE((*lists)[1].empty());
  ASSERT_EQ((*lists)[2].size(), 1u);
  EXPECT_EQ((*lists)[2][0].labels, (std::vector<int32_t>{}));
  EXPECT_EQ((*lists)[2][0].score, -0.5);
  // The best of each; a sequence without hypotheses reads as the empty
  // one no path reaches.
  absl::StatusOr<std::vector<Hypothesis>> best =
      readHypotheses(*layout, result, DimValues());
  ASSERT_TRUE(best.ok()) << best.status().message();
  EXPECT_EQ((*best)[0].labels, (std::vector<int32_t>{0, 1, 2}));
  EXPECT_TRUE((*best)[1].labels.empty());
  EXPECT_EQ((*best)[1].score, -std::numeric_limits<double>::infinity());

  // What the artifact returned is checked: more hypotheses than slots,
  // Y's lengths not over H, a length past the padded axis.
  result.outputs[2].second = Tensor::of<int32_t>(DType::i32, {3}, {3, 0, 0});
  lists = readNBest(*layout, result, DimValues());
  ASSERT_FALSE(lists.ok());
  EXPECT_EQ(lists.status().message(),
            "graph @decode gives batch row 0 3 hypotheses, outside the 2 "
            "slots of result0");
  result.outputs[2].second = Tensor::of<int32_t>(DType::i32, {3}, {2, 0, 0});
  lists = readNBest(*layout, result, DimValues());
  ASSERT_FALSE(lists.ok());
  EXPECT_EQ(lists.status().message(),
            "graph @decode returned no 'lengths:Z' [2] i32");
  result.outputs[2].second = Tensor::of<int32_t>(DType::i32, {3}, {2, 0, 1});
  result.outputs[3].second = Tensor::of<int32_t>(DType::i32, {3}, {3, 4, 0});
  lists = readNBest(*layout, result, DimValues());
  ASSERT_FALSE(lists.ok());
  EXPECT_EQ(lists.status().message(),
            "graph @decode gives hypothesis 1 of batch row 0 length 4, "
            "outside the 3 positions of result0");

  // A list dim the caller passes is no search's list.
  Manifest given = nBestGraph(false);
  given.dims[5].computed = false;
  absl::StatusOr<HypothesisLayout> refused = hypothesisLayout(given);
  ASSERT_FALSE(refused.ok());
  EXPECT_EQ(refused.status().message(),
            "graph @decode result0 (i32 [B, K, Z]): 'K' is not computed by "
            "the graph; an N-best list's hypotheses and their lengths come "
            "from its search");
}

TEST(DecodingTest, ScoresCountLabelsOrWords) {
  // Labels: "1 2 3" against "1 3": one insertion.
  absl::StatusOr<Scored> labels = score({1, 2, 3}, {1, 3}, nullptr);
  ASSERT_TRUE(labels.ok());
  EXPECT_EQ(labels->counts.errors(), 1);
  EXPECT_EQ(labels->counts.insertions, 1);
  EXPECT_EQ(labels->counts.referenceLength, 2);
  EXPECT_EQ(labels->text, "");

  // Words: the hypothesis spells "the cat" (3 labels, 2 words), the
  // reference "the hat" (2 labels): one substitution of two words, where
  // labels would count two edits of two.
  absl::StatusOr<Vocabulary> vocabulary =
      Vocabulary::fromTokens({"<blank>", "\xE2\x96\x81the",
                              "\xE2\x96\x81"
                              "c",
                              "at", "\xE2\x96\x81hat"},
                             "tokens");
  ASSERT_TRUE(vocabulary.ok()) << vocabulary.status().message();
  absl::StatusOr<Scored> words = score({1, 2, 3}, {1, 4}, &*vocabulary);
  ASSERT_TRUE(words.ok()) << words.status().message();
  EXPECT_EQ(words->counts.errors(), 1);
  EXPECT_EQ(words->counts.substitutions, 1);
  EXPECT_EQ(words->counts.referenceLength, 2);
  EXPECT_EQ(words->text, "the cat");
  EXPECT_EQ(words->referenceText, "the hat");

  absl::StatusOr<Scored> outside = score({1, 7}, {1}, &*vocabulary);
  ASSERT_FALSE(outside.ok());
  EXPECT_EQ(outside.status().message(),
            "the hypothesis: label 7 at position 1 is outside vocabulary "
            "'tokens' (5 tokens, labels 0..4)");
  outside = score({1}, {-1}, &*vocabulary);
  ASSERT_FALSE(outside.ok());
  EXPECT_EQ(outside.status().message(),
            "the reference: label -1 at position 0 is outside vocabulary "
            "'tokens' (5 tokens, labels 0..4)");
}

} // namespace
