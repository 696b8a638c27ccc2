//===- AttentionTest.cpp - attention over long sequences ------------------===//
//
// The lowering walks blocks of 64 queries and 512 keys; the op-family tests
// (LoweringTest, GradientTest) run sequences shorter than one block. Here
// sequences span several blocks, end inside and on block borders, and are
// empty or one frame long:
//   * forward and gradient (nn.attention_grad) against the float64
//     reference, with and without masks, self- and cross-attention;
//   * batch invariance: each sequence computed alone gives exactly the
//     values it gets in a batch of very different lengths whose padding
//     holds NaN, and padded frames of every result are 0;
//   * packed frames give exactly the padded results;
//   * relative positions (forward and all five gradients) with a table of
//     distances up to 100, so that the longer sequences clip, and one
//     of distances up to 4, so that whole blocks lie beyond it;
//   * dropout of the weights (a seed input) over several blocks, self-
//     and cross-attention: against the reference and packed = padded (a
//     sequence alone is another batch index, so other weights drop);
//   * the forward's log normalizers (nn.attention_with_stats) against the
//     reference, +inf where a query sees no key, and gradients that read
//     them and the forward's output (nn-save-attention-stats) equal to
//     the recomputing ones, padded and packed.
//
//===----------------------------------------------------------------------===//

#include "ExecutionUtil.h"
#include "passes/Passes.h"

#include "mlir/Pass/PassManager.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <random>

using namespace nn;
using namespace nn::testing;

namespace {

/// The result types of kGraph, in order ($RESULTS in it).
const char *kResultTypes = R"(
!nn.tensor<[$T, 6], f32>, !nn.tensor<[$T, 6], f32>, !nn.tensor<[$T, 6], f32>,
!nn.tensor<[$T, 8], f32>, !nn.tensor<[$T, 8], f32>, !nn.tensor<[$T, 6], f32>,
!nn.tensor<[$U, 6], f32>, !nn.tensor<[$U, 8], f32>, !nn.tensor<[$T, 8], f32>,
!nn.tensor<[$T, 6], f32>, !nn.tensor<[$T, 6], f32>, !nn.tensor<[$T, 8], f32>,
!nn.tensor<[$T, 8], f32>, !nn.tensor<[$T, 6], f32>, !nn.tensor<[$T, 6], f32>,
!nn.tensor<[$T, 8], f32>, !nn.tensor<[$T, 8], f32>, !nn.tensor<[$T, 6], f32>,
!nn.tensor<[$T, 6], f32>, !nn.tensor<[$T, 8], f32>, !nn.tensor<[$T, 8], f32>,
!nn.tensor<[$T, 6], f32>, !nn.tensor<[$T, 8], f32>, !nn.tensor<[201, 8], f32>,
!nn.tensor<[$T, 6], f32>, !nn.tensor<[$T, 8], f32>, !nn.tensor<[$T, 8], f32>,
!nn.tensor<[$T, 6], f32>, !nn.tensor<[$T, 8], f32>, !nn.tensor<[9, 8], f32>,
!nn.tensor<[$U, 6], f32>, !nn.tensor<[$U, 8], f32>, !nn.tensor<[$T, 8], f32>,
!nn.tensor<[$T, 6], f32>, !nn.tensor<[$T, 8], f32>, !nn.tensor<[$T, 8], f32>,
!nn.tensor<[$T, 6], f32>, !nn.tensor<[$T, 8], f32>)";

/// Self-attention (no mask, causal with a left context, chunked), the
/// gradients of the causal one, cross-attention from U with its
/// gradients, then chunks with a left context and a left and right
/// context, each with its gradients, then relative positions from the
/// position queries %r and the table %p, with their gradients, then
/// dropout with relative positions from the small table %p9 and in
/// cross-attention, with their gradients, then the gradients of the
/// chunked attention with one chunk of left context, then rotary position
/// embeddings of the queries (positions within each sequence, up to 599).
/// $T and $U are the position axes of T and U frames.
const char *kGraph = R"(
nn.graph @g(%q: !nn.tensor<[$T, 8], f32>, %k: !nn.tensor<[$T, 8], f32>,
            %v: !nn.tensor<[$T, 6], f32>, %dy: !nn.tensor<[$T, 6], f32>,
            %u: !nn.tensor<[$U, 8], f32>, %du: !nn.tensor<[$U, 6], f32>,
            %r: !nn.tensor<[$T, 8], f32>, %p: !nn.tensor<[201, 8], f32>,
            %p9: !nn.tensor<[9, 8], f32>, %s: !nn.tensor<[], i32>)
    -> ($RESULTS)
    dims [$DIMS] {
  %a = nn.attention %q, %k, %v heads 2 : !nn.tensor<[$T, 8], f32>, !nn.tensor<[$T, 8], f32>, !nn.tensor<[$T, 6], f32>
  %c = nn.attention %q, %k, %v heads 2 causal left_context 70 : !nn.tensor<[$T, 8], f32>, !nn.tensor<[$T, 8], f32>, !nn.tensor<[$T, 6], f32>
  %h = nn.attention %q, %k, %v heads 2 chunk_size 40 left_chunks 1 : !nn.tensor<[$T, 8], f32>, !nn.tensor<[$T, 8], f32>, !nn.tensor<[$T, 6], f32>
  %dq, %dk, %dv = nn.attention_grad %dy, %q, %k, %v heads 2 causal left_context 70 : !nn.tensor<[$T, 6], f32>, !nn.tensor<[$T, 8], f32>, !nn.tensor<[$T, 8], f32>, !nn.tensor<[$T, 6], f32>
  %x = nn.attention %u, %k, %v heads 2 : !nn.tensor<[$U, 8], f32>, !nn.tensor<[$T, 8], f32>, !nn.tensor<[$T, 6], f32>
  %xq, %xk, %xv = nn.attention_grad %du, %u, %k, %v heads 2 : !nn.tensor<[$U, 6], f32>, !nn.tensor<[$U, 8], f32>, !nn.tensor<[$T, 8], f32>, !nn.tensor<[$T, 6], f32>
  %cl = nn.attention %q, %k, %v heads 2 left_context 50 chunk_size 40 : !nn.tensor<[$T, 8], f32>, !nn.tensor<[$T, 8], f32>, !nn.tensor<[$T, 6], f32>
  %clq, %clk, %clv = nn.attention_grad %dy, %q, %k, %v heads 2 left_context 50 chunk_size 40 : !nn.tensor<[$T, 6], f32>, !nn.tensor<[$T, 8], f32>, !nn.tensor<[$T, 8], f32>, !nn.tensor<[$T, 6], f32>
  %lr = nn.attention %q, %k, %v heads 2 left_context 20 right_context 70 : !nn.tensor<[$T, 8], f32>, !nn.tensor<[$T, 8], f32>, !nn.tensor<[$T, 6], f32>
  %lrq, %lrk, %lrv = nn.attention_grad %dy, %q, %k, %v heads 2 left_context 20 right_context 70 : !nn.tensor<[$T, 6], f32>, !nn.tensor<[$T, 8], f32>, !nn.tensor<[$T, 8], f32>, !nn.tensor<[$T, 6], f32>
  %ra = nn.attention %q, %k, %v relative %r, %p heads 2 : !nn.tensor<[$T, 8], f32>, !nn.tensor<[$T, 8], f32>, !nn.tensor<[$T, 6], f32>, !nn.tensor<[$T, 8], f32>, !nn.tensor<[201, 8], f32>
  %raq, %rak, %rav, %rar, %rap = nn.attention_grad %dy, %q, %k, %v relative %r, %p heads 2 : !nn.tensor<[$T, 6], f32>, !nn.tensor<[$T, 8], f32>, !nn.tensor<[$T, 8], f32>, !nn.tensor<[$T, 6], f32>, !nn.tensor<[$T, 8], f32>, !nn.tensor<[201, 8], f32>
  %da = nn.attention %q, %k, %v relative %r, %p9 seed %s heads 2 dropout 3.000000e-01 : !nn.tensor<[$T, 8], f32>, !nn.tensor<[$T, 8], f32>, !nn.tensor<[$T, 6], f32>, !nn.tensor<[$T, 8], f32>, !nn.tensor<[9, 8], f32>, !nn.tensor<[], i32>
  %daq, %dak, %dav, %dar, %dap = nn.attention_grad %dy, %q, %k, %v relative %r, %p9 seed %s heads 2 dropout 3.000000e-01 : !nn.tensor<[$T, 6], f32>, !nn.tensor<[$T, 8], f32>, !nn.tensor<[$T, 8], f32>, !nn.tensor<[$T, 6], f32>, !nn.tensor<[$T, 8], f32>, !nn.tensor<[9, 8], f32>, !nn.tensor<[], i32>
  %dx = nn.attention %u, %k, %v seed %s heads 2 dropout 2.500000e-01 dropout_key 1 : !nn.tensor<[$U, 8], f32>, !nn.tensor<[$T, 8], f32>, !nn.tensor<[$T, 6], f32>, !nn.tensor<[], i32>
  %dxq, %dxk, %dxv = nn.attention_grad %du, %u, %k, %v seed %s heads 2 dropout 2.500000e-01 dropout_key 1 : !nn.tensor<[$U, 6], f32>, !nn.tensor<[$U, 8], f32>, !nn.tensor<[$T, 8], f32>, !nn.tensor<[$T, 6], f32>, !nn.tensor<[], i32>
  %hq, %hk, %hv = nn.attention_grad %dy, %q, %k, %v heads 2 chunk_size 40 left_chunks 1 : !nn.tensor<[$T, 6], f32>, !nn.tensor<[$T, 8], f32>, !nn.tensor<[$T, 8], f32>, !nn.tensor<[$T, 6], f32>
  %rot = nn.rotary %q heads 2 : !nn.tensor<[$T, 8], f32>
  nn.return %a, %c, %h, %dq, %dk, %dv, %x, %xq, %xk, %xv, %cl, %clq, %clk, %clv,
      %lr, %lrq, %lrk, %lrv, %ra, %raq, %rak, %rav, %rar, %rap,
      %da, %daq, %dak, %dav, %dar, %dap, %dx, %dxq, %dxk, %dxv, %hq, %hk, %hv,
      %rot : $RESULTS
}
)";

/// kGraph with every `$name` replaced by its value.
std::string
instantiate(const std::vector<std::pair<std::string, std::string>> &values) {
  std::string text = kGraph;
  // The result types first: they name $T and $U too.
  std::vector<std::pair<std::string, std::string>> all{
      {"$RESULTS", kResultTypes}};
  all.insert(all.end(), values.begin(), values.end());
  for (const auto &[name, value] : all)
    for (size_t at; (at = text.find(name)) != std::string::npos;)
      text.replace(at, name.size(), value);
  return text;
}

const std::string kPadded =
    instantiate({{"$DIMS", "B: batch, T: seq(B), U: seq(B)"},
                 {"$T", "B, T"},
                 {"$U", "B, U"}});
const std::string kPacked = instantiate(
    {{"$DIMS",
      "B: batch, T: seq(B), U: seq(B), N: packed(B, T), M: packed(B, U)"},
     {"$T", "N"},
     {"$U", "M"}});

/// The sequences: T lengths on, just past and between the query (64) and
/// key (512) block borders, and the shortest ones; U lengths for the
/// cross-attention, whose keys run over U.
const int32_t kTimeLengths[] = {600, 1, 0, 129, 512, 513};
const int32_t kLabelLengths[] = {3, 0, 530, 64, 1, 512};

/// (input name, features, over U) of the graph's inputs over frames.
struct InputSpec {
  const char *name;
  int64_t features;
  bool labels;
};
const InputSpec kInputs[] = {{"q", 8, false},  {"k", 8, false}, {"v", 6, false},
                             {"dy", 6, false}, {"u", 8, true},  {"du", 6, true},
                             {"r", 8, false}};

/// Feature f of frame t of input `input` of sequence `id`: the same
/// whichever batch the sequence is in.
float valueAt(unsigned input, int id, int64_t t, int64_t f) {
  std::mt19937 rng(input * 1000003u + id * 10007u + t * 101u + f);
  return std::normal_distribution<float>(0.0f, 1.0f)(rng);
}

/// A relative positions' table of `rows` rows (the distances -(rows -
/// 1) / 2 ...), 8 features, the same for every batch.
Tensor positionTable(int64_t rows) {
  Tensor table(DType::f32, {rows, 8});
  for (int64_t i = 0; i < rows * 8; ++i)
    table.data<float>()[i] = 0.5f * valueAt(100 + rows, 0, i / 8, i % 8);
  return table;
}

/// Padded inputs for the sequences `ids` (indexes into the length
/// tables); padded frames hold `pad`.
RunInputs paddedInputs(const std::vector<int> &ids, float pad) {
  RunInputs inputs;
  for (int id : ids) {
    inputs.lengths["T"].push_back(kTimeLengths[id]);
    inputs.lengths["U"].push_back(kLabelLengths[id]);
  }
  auto longest = [](const std::vector<int32_t> &lengths) {
    return int64_t{
        std::max(1, *std::max_element(lengths.begin(), lengths.end()))};
  };
  int64_t batch = ids.size();
  for (unsigned i = 0; i < std::size(kInputs); ++i) {
    const InputSpec &spec = kInputs[i];
    const std::vector<int32_t> &lengths =
        inputs.lengths[spec.labels ? "U" : "T"];
    int64_t frames = longest(lengths);
    Tensor tensor(DType::f32, {batch, frames, spec.features});
    for (int64_t b = 0; b < batch; ++b)
      for (int64_t t = 0; t < frames; ++t)
        for (int64_t f = 0; f < spec.features; ++f)
          tensor.data<float>()[(b * frames + t) * spec.features + f] =
              t < lengths[b] ? valueAt(i, ids[b], t, f) : pad;
    inputs.inputs[spec.name] = std::move(tensor);
  }
  inputs.inputs["p"] = positionTable(201);
  inputs.inputs["p9"] = positionTable(9);
  inputs.inputs["s"] = Tensor::of<int32_t>(DType::i32, {}, {12345});
  return inputs;
}

/// The same frames packed: the real frames of each sequence in turn.
RunInputs packedInputs(const RunInputs &padded) {
  RunInputs packed;
  packed.lengths = padded.lengths;
  for (const InputSpec &spec : kInputs) {
    const std::vector<int32_t> &lengths =
        padded.lengths.at(spec.labels ? "U" : "T");
    const Tensor &from = padded.inputs.at(spec.name);
    int64_t frames = from.shape()[1], total = 0;
    for (int32_t l : lengths)
      total += l;
    Tensor tensor(DType::f32, {total, spec.features});
    int64_t row = 0;
    for (size_t b = 0; b < lengths.size(); ++b)
      for (int64_t t = 0; t < lengths[b]; ++t, ++row)
        for (int64_t f = 0; f < spec.features; ++f)
          tensor.data<float>()[row * spec.features + f] =
              from.data<float>()[(b * frames + t) * spec.features + f];
    packed.inputs[spec.name] = std::move(tensor);
  }
  for (const char *name : {"p", "p9", "s"})
    packed.inputs[name] = padded.inputs.at(name);
  // The packed graph keeps the padded sizes of T and U as dims only.
  return packed;
}

/// Whether result `i` of kGraph is over U frames (else T frames).
bool overLabels(size_t i) { return i == 6 || i == 7 || i == 30 || i == 31; }

/// Whether result `i` of kGraph is a table's gradient, a sum over the
/// batch without position axes.
bool isTableGradient(size_t i) { return i == 23 || i == 29; }

/// Whether result `i` of kGraph drops weights: their hash reads the
/// sequence's batch index.
bool dropsWeights(size_t i) { return i >= 24 && i <= 33; }

std::vector<int> allSequences() {
  std::vector<int> ids(std::size(kTimeLengths));
  for (size_t i = 0; i < ids.size(); ++i)
    ids[i] = i;
  return ids;
}

TEST(AttentionTest, LongSequencesMatchReference) {
  Executable exe = compileOrDie(kPadded, /*pack=*/false, "g");
  RunInputs inputs = paddedInputs(allSequences(), 0.0f);
  RunResult result;
  absl::Status status = exe.run(inputs, result);
  ASSERT_TRUE(status.ok()) << status.message();
  expectMatchesReference(kPadded, exe, inputs, result, 1e-4, 1e-5);
}

TEST(AttentionTest, SequenceAloneEqualsSequenceInBatchWithNanPadding) {
  Executable exe = compileOrDie(kPadded, /*pack=*/false, "g");
  std::vector<int> ids = allSequences();
  RunResult batch;
  absl::Status status = exe.run(
      paddedInputs(ids, std::numeric_limits<float>::quiet_NaN()), batch);
  ASSERT_TRUE(status.ok()) << status.message();
  for (size_t b = 0; b < ids.size(); ++b) {
    SCOPED_TRACE("sequence " + std::to_string(b));
    RunResult alone;
    status = exe.run(paddedInputs({ids[b]}, 0.0f), alone);
    ASSERT_TRUE(status.ok()) << status.message();
    ASSERT_EQ(alone.outputs.size(), batch.outputs.size());
    for (size_t o = 0; o < batch.outputs.size(); ++o) {
      if (isTableGradient(o) || dropsWeights(o))
        continue;
      const Tensor &inBatch = batch.outputs[o].second;
      const Tensor &single = alone.outputs[o].second;
      int64_t frames = inBatch.shape()[1], features = inBatch.shape()[2];
      int64_t length = overLabels(o) ? kLabelLengths[b] : kTimeLengths[b];
      for (int64_t t = 0; t < frames; ++t)
        for (int64_t f = 0; f < features; ++f) {
          float got = inBatch.data<float>()[(b * frames + t) * features + f];
          if (t >= length) {
            ASSERT_EQ(got, 0.0f) << batch.outputs[o].first << " padded frame "
                                 << t << " feature " << f;
            continue;
          }
          ASSERT_EQ(got, single.data<float>()[t * features + f])
              << batch.outputs[o].first << " frame " << t << " feature " << f;
        }
    }
  }
}

TEST(AttentionTest, PackedEqualsPadded) {
  Executable padded = compileOrDie(kPadded, /*pack=*/false, "g");
  Executable packed = compileOrDie(kPacked, /*pack=*/false, "g");
  RunInputs inputs = paddedInputs(allSequences(), 0.0f);
  RunResult a, b;
  absl::Status status = padded.run(inputs, a);
  ASSERT_TRUE(status.ok()) << status.message();
  status = packed.run(packedInputs(inputs), b);
  ASSERT_TRUE(status.ok()) << status.message();
  ASSERT_EQ(a.outputs.size(), b.outputs.size());
  for (size_t o = 0; o < a.outputs.size(); ++o) {
    const Tensor &pad = a.outputs[o].second, &pack = b.outputs[o].second;
    if (isTableGradient(o)) {
      // Each sequence's part is the same; they are summed in one order.
      ASSERT_EQ(pad.shape(), pack.shape());
      for (int64_t i = 0; i < pad.shape()[0] * 8; ++i)
        ASSERT_EQ(pad.data<float>()[i], pack.data<float>()[i]) << i;
      continue;
    }
    const std::vector<int32_t> &lengths =
        inputs.lengths.at(overLabels(o) ? "U" : "T");
    int64_t frames = pad.shape()[1], features = pad.shape()[2], row = 0;
    for (size_t s = 0; s < lengths.size(); ++s)
      for (int64_t t = 0; t < lengths[s]; ++t, ++row)
        for (int64_t f = 0; f < features; ++f)
          ASSERT_EQ(pack.data<float>()[row * features + f],
                    pad.data<float>()[(s * frames + t) * features + f])
              << a.outputs[o].first << " sequence " << s << " frame " << t;
  }
}

/// `source` after nn-save-attention-stats: each nn.attention_grad of kGraph
/// reads the output and log normalizers of the nn.attention of the same
/// operands, which becomes an nn.attention_with_stats.
std::string withSavedStats(const std::string &source) {
  return withPasses(source, [](mlir::OpPassManager &pm) {
    pm.addPass(mlir::nn::createNNSaveAttentionStats());
  });
}

/// How many times `part` occurs in `text`.
size_t occurrences(const std::string &text, const std::string &part) {
  size_t count = 0;
  for (size_t at = text.find(part); at != std::string::npos;
       at = text.find(part, at + part.size()))
    ++count;
  return count;
}

// The gradients that read the forward's output and log normalizers match
// the reference and equal those that recompute them: the same block walk
// made them, once in the forward and once in the gradient.
TEST(AttentionTest, SavedStatsGiveTheRecomputedGradients) {
  for (bool packed : {false, true}) {
    SCOPED_TRACE(packed ? "packed" : "padded");
    const std::string &source = packed ? kPacked : kPadded;
    std::string saved = withSavedStats(source);
    ASSERT_FALSE(saved.empty());
    // Every gradient of kGraph has its forward in the graph.
    ASSERT_EQ(occurrences(saved, "nn.attention_with_stats"), 8u);
    ASSERT_EQ(occurrences(saved, " saved "), 8u);
    Executable recomputing = compileOrDie(source, /*pack=*/false, "g");
    Executable reading = compileOrDie(saved, /*pack=*/false, "g");
    RunInputs padded = paddedInputs(allSequences(), 0.0f);
    RunInputs inputs = packed ? packedInputs(padded) : padded;
    RunResult a, b;
    absl::Status status = recomputing.run(inputs, a);
    ASSERT_TRUE(status.ok()) << status.message();
    status = reading.run(inputs, b);
    ASSERT_TRUE(status.ok()) << status.message();
    if (!packed)
      expectMatchesReference(saved, reading, inputs, b, 1e-4, 1e-5);
    ASSERT_EQ(a.outputs.size(), b.outputs.size());
    for (size_t o = 0; o < a.outputs.size(); ++o) {
      const Tensor &x = a.outputs[o].second, &y = b.outputs[o].second;
      ASSERT_EQ(x.shape(), y.shape());
      for (int64_t i = 0; i < x.numElements(); ++i)
        ASSERT_EQ(x.data<float>()[i], y.data<float>()[i])
            << a.outputs[o].first << " element " << i;
    }
  }
}

// The log normalizers of each query and head against the reference:
// self-attention with a causal left context, relative positions with
// dropout (the normalizer is of the undropped weights), and cross-attention
// where a sequence has no keys (+inf) or no queries; padded frames 0.
TEST(AttentionTest, StatsAreTheLogNormalizers) {
  const std::string source = R"(
nn.graph @g(%q: !nn.tensor<[B, T, 8], f32>, %k: !nn.tensor<[B, T, 8], f32>,
            %v: !nn.tensor<[B, T, 6], f32>, %u: !nn.tensor<[B, U, 8], f32>,
            %r: !nn.tensor<[B, T, 8], f32>, %p9: !nn.tensor<[9, 8], f32>,
            %s: !nn.tensor<[], i32>)
    -> (!nn.tensor<[B, T, 6], f32>, !nn.tensor<[B, T, 2], f32>,
        !nn.tensor<[B, T, 2], f32>, !nn.tensor<[B, U, 2], f32>)
    dims [B: batch, T: seq(B), U: seq(B)] {
  %c, %cs = nn.attention_with_stats %q, %k, %v heads 2 causal left_context 70 : !nn.tensor<[B, T, 8], f32>, !nn.tensor<[B, T, 8], f32>, !nn.tensor<[B, T, 6], f32> -> !nn.tensor<[B, T, 6], f32>, !nn.tensor<[B, T, 2], f32>
  %d, %ds = nn.attention_with_stats %q, %k, %v relative %r, %p9 seed %s heads 2 dropout 3.000000e-01 : !nn.tensor<[B, T, 8], f32>, !nn.tensor<[B, T, 8], f32>, !nn.tensor<[B, T, 6], f32>, !nn.tensor<[B, T, 8], f32>, !nn.tensor<[9, 8], f32>, !nn.tensor<[], i32> -> !nn.tensor<[B, T, 6], f32>, !nn.tensor<[B, T, 2], f32>
  %x, %xs = nn.attention_with_stats %u, %k, %v heads 2 : !nn.tensor<[B, U, 8], f32>, !nn.tensor<[B, T, 8], f32>, !nn.tensor<[B, T, 6], f32> -> !nn.tensor<[B, U, 6], f32>, !nn.tensor<[B, U, 2], f32>
  nn.return %c, %cs, %ds, %xs : !nn.tensor<[B, T, 6], f32>, !nn.tensor<[B, T, 2], f32>, !nn.tensor<[B, T, 2], f32>, !nn.tensor<[B, U, 2], f32>
}
)";
  Executable exe = compileOrDie(source, /*pack=*/false, "g");
  RunInputs inputs = paddedInputs(allSequences(), 0.0f);
  for (const char *unused : {"dy", "du", "p"})
    inputs.inputs.erase(unused);
  RunResult result;
  absl::Status status = exe.run(inputs, result);
  ASSERT_TRUE(status.ok()) << status.message();
  expectMatchesReference(source, exe, inputs, result, 1e-5, 1e-6);
  // Sequence 1 (T = 1, U = 0) and 2 (T = 0, U = 530): the queries of 2
  // see no key; padded frames hold 0.
  const Tensor &cross = result.outputs[3].second;
  int64_t frames = cross.shape()[1];
  for (int64_t t = 0; t < frames; ++t)
    for (int64_t h = 0; h < 2; ++h) {
      float at = cross.data<float>()[(2 * frames + t) * 2 + h];
      if (t < kLabelLengths[2])
        ASSERT_EQ(at, std::numeric_limits<float>::infinity()) << t;
      else
        ASSERT_EQ(at, 0.0f) << t;
    }
}

/// Relative positions worked by hand: zero queries and keys, so each score
/// is the position query [1, 0] times the table row of the pair's
/// distance, and the table's first features are 0, ln 2, ln 3 for the
/// distances -1, 0, +1 (distance 2 clips to +1, -2 to -1). With values
/// 0, 1, 2 the weights of frame 0 over keys 0, 1, 2 (distances 0, -1,
/// -2) are exp(ln 2, 0, 0) / 4 = (2, 1, 1) / 4: (0 * 2 + 1 + 2) / 4 = 3/4.
/// Frame 1 (distances 1, 0, -1: 3, 2, 1): (2 + 2) / 6 = 2/3. Frame 2
/// (distances 2, 1, 0: 3, 3, 2): (3 + 4) / 8 = 7/8.
TEST(AttentionTest, RelativePositionsByHand) {
  const char *source = R"(
nn.graph @g(%q: !nn.tensor<[B, T, 2], f32>, %v: !nn.tensor<[B, T, 1], f32>,
            %r: !nn.tensor<[B, T, 2], f32>, %p: !nn.tensor<[3, 2], f32>)
    -> !nn.tensor<[B, T, 1], f32> dims [B: batch, T: seq(B)] {
  %y = nn.attention %q, %q, %v relative %r, %p heads 1 scale 1.0 : !nn.tensor<[B, T, 2], f32>, !nn.tensor<[B, T, 2], f32>, !nn.tensor<[B, T, 1], f32>, !nn.tensor<[B, T, 2], f32>, !nn.tensor<[3, 2], f32>
  nn.return %y : !nn.tensor<[B, T, 1], f32>
}
)";
  Executable exe = compileOrDie(source, /*pack=*/false, "g");
  RunInputs inputs;
  inputs.lengths["T"] = {3};
  Tensor q(DType::f32, {1, 3, 2}), v(DType::f32, {1, 3, 1}),
      r(DType::f32, {1, 3, 2}), p(DType::f32, {3, 2});
  for (int t = 0; t < 3; ++t) {
    q.data<float>()[2 * t] = q.data<float>()[2 * t + 1] = 0.0f;
    v.data<float>()[t] = static_cast<float>(t);
    r.data<float>()[2 * t] = 1.0f;
    r.data<float>()[2 * t + 1] = 0.0f;
  }
  const float rows[] = {0.0f, std::log(2.0f), std::log(3.0f)};
  for (int d = 0; d < 3; ++d) {
    p.data<float>()[2 * d] = rows[d];
    p.data<float>()[2 * d + 1] = 5.0f; // times r's 0: never counts
  }
  inputs.inputs["q"] = std::move(q);
  inputs.inputs["v"] = std::move(v);
  inputs.inputs["r"] = std::move(r);
  inputs.inputs["p"] = std::move(p);
  RunResult result;
  absl::Status status = exe.run(inputs, result);
  ASSERT_TRUE(status.ok()) << status.message();
  const float *y = result.outputs[0].second.data<float>();
  EXPECT_NEAR(y[0], 3.0 / 4.0, 1e-6);
  EXPECT_NEAR(y[1], 2.0 / 3.0, 1e-6);
  EXPECT_NEAR(y[2], 7.0 / 8.0, 1e-6);
}

} // namespace
