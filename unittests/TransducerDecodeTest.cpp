//===- TransducerDecodeTest.cpp - greedy transducer decoding --------------===//
//
// nn.transducer_greedy_decode compiled and run with an LSTM prediction
// network written as a one-step graph (embedding, gates from two linears,
// the cell update) and a joiner (tanh, linear): against a plain float64
// greedy decoder written here (RNN-T with up to 2 labels per frame, RNA),
// batch invariance (each utterance alone equals it in a batch of very
// different lengths, NaN in padded frames), sequences without frames,
// all-blank output and exact ties. "Written once": the step graph iterated
// over the labels reproduces the training graph's prediction network
// (nn.prepend_start, nn.embedding, nn.lstm), and the joiner graph is
// called in training on the packed joint rows. The same network written
// once in the sequence form (@predictor, the graph training calls) drives
// the searches and rescores their N-best lists in one graph.
//
//===----------------------------------------------------------------------===//

#include "ExecutionUtil.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <limits>
#include <random>

using namespace nn;
using namespace nn::testing;

namespace {

constexpr int64_t kClasses = 5, kEmbed = 4, kHidden = 3;
constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

const char *kSource = R"(
nn.parameter @embed : !nn.tensor<[5, 4], f32>
nn.parameter @wi : !nn.tensor<[12, 4], f32>
nn.parameter @wh : !nn.tensor<[12, 3], f32>
nn.parameter @b : !nn.tensor<[12], f32>
nn.parameter @wj : !nn.tensor<[5, 3], f32>
nn.parameter @bj : !nn.tensor<[5], f32>
nn.graph @pred(%y: !nn.tensor<[S], i32>, %h: !nn.tensor<[S, 3], f32>, %c: !nn.tensor<[S, 3], f32>)
    -> (!nn.tensor<[S, 3], f32>, !nn.tensor<[S, 3], f32>, !nn.tensor<[S, 3], f32>) dims [S: batch] {
  %embed = nn.param_ref @embed : !nn.tensor<[5, 4], f32>
  %wi = nn.param_ref @wi : !nn.tensor<[12, 4], f32>
  %wh = nn.param_ref @wh : !nn.tensor<[12, 3], f32>
  %b = nn.param_ref @b : !nn.tensor<[12], f32>
  %x = nn.embedding %y, %embed : !nn.tensor<[S], i32>, !nn.tensor<[5, 4], f32>
  %gx = nn.linear %x, %wi, %b : !nn.tensor<[S, 4], f32>, !nn.tensor<[12, 4], f32>, !nn.tensor<[12], f32>
  %gh = nn.linear %h, %wh : !nn.tensor<[S, 3], f32>, !nn.tensor<[12, 3], f32>
  %g = nn.add %gx, %gh : !nn.tensor<[S, 12], f32>
  %gi = nn.slice_features %g offset 0 width 3 : !nn.tensor<[S, 12], f32>
  %gf = nn.slice_features %g offset 3 width 3 : !nn.tensor<[S, 12], f32>
  %gg = nn.slice_features %g offset 6 width 3 : !nn.tensor<[S, 12], f32>
  %go = nn.slice_features %g offset 9 width 3 : !nn.tensor<[S, 12], f32>
  %i = nn.sigmoid %gi : !nn.tensor<[S, 3], f32>
  %f = nn.sigmoid %gf : !nn.tensor<[S, 3], f32>
  %n = nn.tanh %gg : !nn.tensor<[S, 3], f32>
  %o = nn.sigmoid %go : !nn.tensor<[S, 3], f32>
  %fc = nn.mul %f, %c : !nn.tensor<[S, 3], f32>
  %in = nn.mul %i, %n : !nn.tensor<[S, 3], f32>
  %c1 = nn.add %fc, %in : !nn.tensor<[S, 3], f32>
  %tc = nn.tanh %c1 : !nn.tensor<[S, 3], f32>
  %h1 = nn.mul %o, %tc : !nn.tensor<[S, 3], f32>
  nn.return %h1, %h1, %c1 : !nn.tensor<[S, 3], f32>, !nn.tensor<[S, 3], f32>, !nn.tensor<[S, 3], f32>
}
nn.graph @joint(%v: !nn.tensor<[R, 3], f32>) -> !nn.tensor<[R, 5], f32> dims [R: batch] {
  %wj = nn.param_ref @wj : !nn.tensor<[5, 3], f32>
  %bj = nn.param_ref @bj : !nn.tensor<[5], f32>
  %t = nn.tanh %v : !nn.tensor<[R, 3], f32>
  %z = nn.linear %t, %wj, %bj : !nn.tensor<[R, 3], f32>, !nn.tensor<[5, 3], f32>, !nn.tensor<[5], f32>
  nn.return %z : !nn.tensor<[R, 5], f32>
}
nn.graph @decode(%enc: !nn.tensor<[B, T, 3], f32>)
    -> (!nn.tensor<[B, Y], i32>, !nn.tensor<[B], f32>, !nn.tensor<[B, Z], i32>, !nn.tensor<[B], f32>)
    dims [B: batch, T: seq(B), Y: seq(B) computed, Z: seq(B) computed] {
  %y, %s = nn.transducer_greedy_decode %enc predictor @pred joiner @joint topology rnnt blank 0 start 0 max_symbols 2
      : !nn.tensor<[B, T, 3], f32> -> !nn.tensor<[B, Y], i32>, !nn.tensor<[B], f32>
  %z, %zs = nn.transducer_greedy_decode %enc predictor @pred joiner @joint topology rna blank 2 start 0
      : !nn.tensor<[B, T, 3], f32> -> !nn.tensor<[B, Z], i32>, !nn.tensor<[B], f32>
  nn.return %y, %s, %z, %zs : !nn.tensor<[B, Y], i32>, !nn.tensor<[B], f32>, !nn.tensor<[B, Z], i32>, !nn.tensor<[B], f32>
}
nn.graph @train_pred(%l: !nn.tensor<[B, U], i32>) -> !nn.tensor<[B, U1, 3], f32>
    dims [B: batch, U: seq(B), U1: seq(B) = U + 1] {
  %embed = nn.param_ref @embed : !nn.tensor<[5, 4], f32>
  %wi = nn.param_ref @wi : !nn.tensor<[12, 4], f32>
  %wh = nn.param_ref @wh : !nn.tensor<[12, 3], f32>
  %b = nn.param_ref @b : !nn.tensor<[12], f32>
  %in = nn.prepend_start %l start 0 : !nn.tensor<[B, U], i32> -> !nn.tensor<[B, U1], i32>
  %x = nn.embedding %in, %embed : !nn.tensor<[B, U1], i32>, !nn.tensor<[5, 4], f32>
  %h = nn.lstm forward %x, %wi, %wh, %b : !nn.tensor<[B, U1, 4], f32>, !nn.tensor<[12, 4], f32>, !nn.tensor<[12, 3], f32>, !nn.tensor<[12], f32>
  nn.return %h : !nn.tensor<[B, U1, 3], f32>
}
nn.graph @train_loss(%enc: !nn.tensor<[B, T, 3], f32>, %l: !nn.tensor<[B, U], i32>) -> !nn.tensor<[B], f32>
    dims [B: batch, T: seq(B), U: seq(B), U1: seq(B) = U + 1, J: packed(B, T, U1)] {
  %p = nn.call @train_pred(%l) : (!nn.tensor<[B, U], i32>) -> !nn.tensor<[B, U1, 3], f32>
  %j = nn.transducer_join %enc, %p : !nn.tensor<[B, T, 3], f32>, !nn.tensor<[B, U1, 3], f32> -> !nn.tensor<[J, 3], f32>
  %z = nn.call @joint(%j) : (!nn.tensor<[J, 3], f32>) -> !nn.tensor<[J, 5], f32>
  %loss = nn.transducer_loss %z, %l from logits topology rnnt blank 0 : !nn.tensor<[J, 5], f32>, !nn.tensor<[B, U], i32>
  nn.mark_loss %loss as "rnnt" normalize per_sequence : !nn.tensor<[B], f32>
  nn.return %loss : !nn.tensor<[B], f32>
}
)";

/// The parameters, float32 values kept as double for the plain decoder.
struct Model {
  std::map<std::string, std::vector<double>> values;
  std::map<std::string, std::vector<int64_t>> shapes = {
      {"embed", {kClasses, kEmbed}},  {"wi", {4 * kHidden, kEmbed}},
      {"wh", {4 * kHidden, kHidden}}, {"b", {4 * kHidden}},
      {"wj", {kClasses, kHidden}},    {"bj", {kClasses}}};

  explicit Model(uint32_t seed, double scale = 1.5) {
    std::mt19937 rng(seed);
    std::uniform_real_distribution<double> u(-scale, scale);
    for (const auto &[name, shape] : shapes) {
      int64_t n = 1;
      for (int64_t s : shape)
        n *= s;
      for (int64_t i = 0; i < n; ++i)
        values[name].push_back((float)u(rng));
    }
  }
  /// Adds the parameters to `inputs`; only the prediction network's with
  /// `predictorOnly` (a graph is given only the parameters it reads).
  void addTo(RunInputs &inputs, bool predictorOnly = false) const {
    for (const auto &[name, shape] : shapes) {
      if (predictorOnly && (name == "wj" || name == "bj"))
        continue;
      Tensor t(DType::f32, shape);
      for (size_t i = 0; i < values.at(name).size(); ++i)
        t.data<float>()[i] = (float)values.at(name)[i];
      inputs.parameters[name] = t;
    }
  }
  double at(const std::string &name, int64_t i) const {
    return values.at(name)[i];
  }

  /// One LSTM step on label y: (h, c) -> (h', c'), gates i, f, g, o.
  void step(int64_t y, std::vector<double> &h, std::vector<double> &c) const {
    std::vector<double> g(4 * kHidden);
    for (int64_t k = 0; k < 4 * kHidden; ++k) {
      g[k] = at("b", k);
      for (int64_t e = 0; e < kEmbed; ++e)
        g[k] += at("wi", k * kEmbed + e) * at("embed", y * kEmbed + e);
      for (int64_t j = 0; j < kHidden; ++j)
        g[k] += at("wh", k * kHidden + j) * h[j];
    }
    auto sigmoid = [](double x) { return 1 / (1 + std::exp(-x)); };
    for (int64_t j = 0; j < kHidden; ++j) {
      c[j] = sigmoid(g[kHidden + j]) * c[j] +
             sigmoid(g[j]) * std::tanh(g[2 * kHidden + j]);
      h[j] = sigmoid(g[3 * kHidden + j]) * std::tanh(c[j]);
    }
  }
  /// The joiner's logits on encoder frame + prediction.
  std::vector<double> joint(const double *frame,
                            const std::vector<double> &h) const {
    std::vector<double> z(kClasses);
    for (int64_t k = 0; k < kClasses; ++k) {
      z[k] = at("bj", k);
      for (int64_t j = 0; j < kHidden; ++j)
        z[k] += at("wj", k * kHidden + j) * std::tanh(frame[j] + h[j]);
    }
    return z;
  }
};

struct Decoded {
  std::vector<int32_t> labels;
  double score = 0;
};

/// A plain greedy transducer decoder: `rounds` decisions per frame at most
/// (1: RNA), each the first largest logit, scored by its log-softmax; a
/// label steps the LSTM, the blank ends the frame.
Decoded plainGreedy(const Model &m, const std::vector<double> &frames,
                    int64_t blank, int64_t rounds) {
  Decoded out;
  std::vector<double> h(kHidden, 0.0), c(kHidden, 0.0);
  m.step(/*start=*/0, h, c);
  for (size_t t = 0; t < frames.size() / kHidden; ++t)
    for (int64_t r = 0; r < rounds; ++r) {
      std::vector<double> z = m.joint(&frames[t * kHidden], h);
      int64_t best = 0;
      for (int64_t k = 1; k < kClasses; ++k)
        if (z[k] > z[best])
          best = k;
      double sum = 0;
      for (double v : z)
        sum += std::exp(v - z[best]);
      out.score -= std::log(sum);
      if (best == blank)
        break;
      out.labels.push_back((int32_t)best);
      m.step(best, h, c);
    }
  return out;
}

/// Random float32 frames of `length` steps.
std::vector<double> randomFrames(std::mt19937 &rng, int64_t length) {
  std::uniform_real_distribution<double> u(-2, 2);
  std::vector<double> f(length * kHidden);
  for (double &v : f)
    v = (float)u(rng);
  return f;
}

/// A batch of utterances padded to the longest (at least 1) with NaN.
RunInputs batchOf(const std::vector<std::vector<double>> &utterances,
                  const Model &m) {
  int64_t batch = utterances.size(), padded = 1;
  for (const auto &u : utterances)
    padded = std::max<int64_t>(padded, u.size() / kHidden);
  RunInputs inputs;
  Tensor x(DType::f32, {batch, padded, kHidden});
  for (int64_t i = 0; i < x.numElements(); ++i)
    x.data<float>()[i] = (float)kNaN;
  for (int64_t b = 0; b < batch; ++b) {
    inputs.lengths["T"].push_back(utterances[b].size() / kHidden);
    for (size_t i = 0; i < utterances[b].size(); ++i)
      x.data<float>()[b * padded * kHidden + i] = (float)utterances[b][i];
  }
  inputs.inputs["enc"] = x;
  m.addTo(inputs);
  return inputs;
}

const Tensor &output(const RunResult &result, const std::string &name) {
  for (const auto &[n, t] : result.outputs)
    if (n == name)
      return t;
  ADD_FAILURE() << "no output " << name;
  static Tensor none;
  return none;
}

std::vector<int32_t> hypothesis(const RunResult &result,
                                const std::string &labels,
                                const std::string &dim, int64_t b) {
  const Tensor &y = output(result, labels);
  int32_t length = output(result, "lengths:" + dim).data<int32_t>()[b];
  const int32_t *row = y.data<int32_t>() + b * y.shape()[1];
  return std::vector<int32_t>(row, row + length);
}

/// Checks each sequence of `got` against the plain decoder: RNN-T (blank
/// 0, 2 labels per frame) as Y, RNA (blank 2) as Z. Returns the number of
/// labels decoded.
int64_t expectPlainGreedy(const Model &m,
                          const std::vector<std::vector<double>> &utterances,
                          const RunResult &got) {
  int64_t labels = 0;
  for (size_t b = 0; b < utterances.size(); ++b) {
    SCOPED_TRACE("sequence " + std::to_string(b));
    Decoded y = plainGreedy(m, utterances[b], 0, 2);
    Decoded z = plainGreedy(m, utterances[b], 2, 1);
    EXPECT_EQ(hypothesis(got, "result0", "Y", b), y.labels);
    EXPECT_EQ(hypothesis(got, "result2", "Z", b), z.labels);
    EXPECT_NEAR(output(got, "result1").at(b), y.score,
                1e-4 * std::max(1.0, -y.score));
    EXPECT_NEAR(output(got, "result3").at(b), z.score,
                1e-4 * std::max(1.0, -z.score));
    labels += y.labels.size() + z.labels.size();
  }
  return labels;
}

TEST(TransducerGreedyDecodeTest, RandomModelsMatchAPlainDecoder) {
  Executable exe = compileOrDie(kSource, /*pack=*/false, "decode");
  std::mt19937 rng(3);
  int64_t labels = 0, twoPerFrame = 0;
  for (uint32_t seed = 0; seed < 6; ++seed) {
    SCOPED_TRACE("seed " + std::to_string(seed));
    Model m(seed);
    std::vector<std::vector<double>> utterances;
    for (int64_t length : {5, 1, 0, 9, 3})
      utterances.push_back(randomFrames(rng, length));
    RunResult got;
    absl::Status status = exe.run(batchOf(utterances, m), got);
    ASSERT_TRUE(status.ok()) << status.message();
    labels += expectPlainGreedy(m, utterances, got);
    for (size_t b = 0; b < utterances.size(); ++b)
      twoPerFrame += plainGreedy(m, utterances[b], 0, 2).labels.size() >
                     utterances[b].size() / kHidden;
  }
  // The cases decode labels, and some sequence emits more labels than it
  // has frames (only the second label of a frame allows that).
  EXPECT_GT(labels, 20);
  EXPECT_GT(twoPerFrame, 0);
}

TEST(TransducerGreedyDecodeTest, EachUtteranceAloneEqualsItInABatch) {
  Executable exe = compileOrDie(kSource, /*pack=*/false, "decode");
  Model m(11);
  std::mt19937 rng(5);
  std::vector<std::vector<double>> utterances;
  for (int64_t length : {1, 17, 3, 0, 30, 2})
    utterances.push_back(randomFrames(rng, length));
  RunResult batch;
  ASSERT_TRUE(exe.run(batchOf(utterances, m), batch).ok());
  for (size_t b = 0; b < utterances.size(); ++b) {
    SCOPED_TRACE("sequence " + std::to_string(b));
    RunResult alone;
    ASSERT_TRUE(exe.run(batchOf({utterances[b]}, m), alone).ok());
    EXPECT_EQ(hypothesis(batch, "result0", "Y", b),
              hypothesis(alone, "result0", "Y", 0));
    EXPECT_EQ(hypothesis(batch, "result2", "Z", b),
              hypothesis(alone, "result2", "Z", 0));
    for (const char *score : {"result1", "result3"})
      EXPECT_TRUE(
          close(output(batch, score).at(b), output(alone, score).at(0), 1e-6))
          << score;
  }
  // The sequence without frames: the empty hypothesis and 0.
  EXPECT_TRUE(hypothesis(batch, "result0", "Y", 3).empty());
  EXPECT_TRUE(hypothesis(batch, "result2", "Z", 3).empty());
  EXPECT_EQ(output(batch, "result1").at(3), 0.0);
  EXPECT_EQ(output(batch, "result3").at(3), 0.0);
  expectPlainGreedy(m, utterances, batch);
}

TEST(TransducerGreedyDecodeTest, AllBlankTiesAndNoFrames) {
  Executable exe = compileOrDie(kSource, /*pack=*/false, "decode");
  // A joiner with no weights: every logit 0, a tie of all classes, won by
  // class 0. Under RNN-T with blank 0 nothing is emitted; under RNA with
  // blank 2 class 0 is emitted at every frame. Each decision scores
  // -log 5.
  Model m(2);
  for (const char *name : {"wj", "bj"})
    std::fill(m.values[name].begin(), m.values[name].end(), 0.0);
  std::mt19937 rng(9);
  std::vector<std::vector<double>> utterances{
      randomFrames(rng, 4), randomFrames(rng, 0), randomFrames(rng, 7)};
  RunResult got;
  ASSERT_TRUE(exe.run(batchOf(utterances, m), got).ok());
  for (size_t b = 0; b < utterances.size(); ++b) {
    int64_t frames = utterances[b].size() / kHidden;
    EXPECT_TRUE(hypothesis(got, "result0", "Y", b).empty());
    EXPECT_EQ(hypothesis(got, "result2", "Z", b),
              std::vector<int32_t>(frames, 0));
    EXPECT_NEAR(output(got, "result1").at(b), -frames * std::log(5.0), 1e-5);
    EXPECT_NEAR(output(got, "result3").at(b), -frames * std::log(5.0), 1e-5);
  }
  // Padded to the longest hypothesis; RNN-T's is empty: padded size 1.
  EXPECT_EQ(output(got, "result0").shape()[1], 1);
  EXPECT_EQ(output(got, "result2").shape()[1], 7);

  // A batch without frames at all.
  RunResult none;
  ASSERT_TRUE(exe.run(batchOf({{}, {}}, m), none).ok());
  for (int64_t b = 0; b < 2; ++b) {
    EXPECT_TRUE(hypothesis(none, "result0", "Y", b).empty());
    EXPECT_EQ(output(none, "result1").at(b), 0.0);
  }
}

TEST(TransducerGreedyDecodeTest, StepGraphReproducesTheTrainingPredictor) {
  // The decoder's predictor, iterated on all rows over the labels, gives
  // what the training graph's nn.lstm over prepend_start(labels) gives.
  Executable train = compileOrDie(kSource, /*pack=*/false, "train_pred");
  Executable step = compileOrDie(kSource, /*pack=*/false, "pred");
  Model m(4);
  std::vector<std::vector<int32_t>> labels{{3, 1, 4}, {}, {2, 2, 1, 4, 3}};
  int64_t batch = labels.size(), longest = 5;
  RunInputs inputs;
  Tensor l(DType::i32, {batch, longest});
  for (int64_t b = 0; b < batch; ++b) {
    inputs.lengths["U"].push_back(labels[b].size());
    for (int64_t u = 0; u < longest; ++u)
      l.data<int32_t>()[b * longest + u] =
          u < (int64_t)labels[b].size() ? labels[b][u] : 0;
  }
  inputs.inputs["l"] = l;
  m.addTo(inputs, /*predictorOnly=*/true);
  RunResult trained;
  absl::Status status = train.run(inputs, trained);
  ASSERT_TRUE(status.ok()) << status.message();
  const Tensor &expected = output(trained, "result0");

  Tensor h(DType::f32, {batch, kHidden}), c(DType::f32, {batch, kHidden});
  for (int64_t i = 0; i < batch * kHidden; ++i)
    h.data<float>()[i] = c.data<float>()[i] = 0;
  for (int64_t u = 0; u <= longest; ++u) {
    RunInputs in;
    Tensor y(DType::i32, {batch});
    for (int64_t b = 0; b < batch; ++b)
      y.data<int32_t>()[b] =
          u == 0 ? 0
                 : (u - 1 < (int64_t)labels[b].size() ? labels[b][u - 1] : 0);
    in.inputs = {{"y", y}, {"h", h}, {"c", c}};
    m.addTo(in, /*predictorOnly=*/true);
    RunResult out;
    status = step.run(in, out);
    ASSERT_TRUE(status.ok()) << status.message();
    for (int64_t b = 0; b < batch; ++b) {
      if (u > (int64_t)labels[b].size())
        continue;
      for (int64_t j = 0; j < kHidden; ++j)
        EXPECT_TRUE(close(output(out, "result0").at(b * kHidden + j),
                          expected.at((b * (longest + 1) + u) * kHidden + j),
                          1e-5, 1e-6))
            << "sequence " << b << ", position " << u << ", feature " << j;
    }
    h = output(out, "result1");
    c = output(out, "result2");
  }
}

TEST(TransducerGreedyDecodeTest, JoinerGraphServesTrainingOnPackedRows) {
  // The decoder's joiner, called by a training graph on the packed joint
  // rows (its row batch bound to J), packed and padded, against the
  // reference.
  for (bool pack : {false, true}) {
    Executable exe = compileOrDie(kSource, pack, "train_loss");
    RunInputs inputs = makeInputs(exe.manifest(), 21, LengthPattern::Mixed,
                                  /*batch=*/3, /*padded=*/6);
    for (int32_t &u : inputs.lengths["U"])
      u = std::min(u, 4);
    for (int64_t i = 0; i < inputs.inputs["l"].numElements(); ++i)
      inputs.inputs["l"].data<int32_t>()[i] =
          1 + inputs.inputs["l"].data<int32_t>()[i] % (kClasses - 1);
    RunResult got;
    absl::Status status = exe.run(inputs, got);
    ASSERT_TRUE(status.ok()) << status.message();
    expectMatchesReference(kSource, exe, inputs, got, 1e-4, 1e-5);
    ASSERT_EQ(got.losses.size(), 1u);
    EXPECT_TRUE(std::isfinite(got.losses[0].sum));
  }
}

//===----------------------------------------------------------------------===//
// nn.transducer_beam_search
//===----------------------------------------------------------------------===//

/// The prediction network of kSource written once, as training runs it:
/// @pred's network over the labels after prepend_start.
const char *kSequencePredictor = R"(
nn.graph @predictor(%y: !nn.tensor<[S, U], i32>) -> !nn.tensor<[S, U, 3], f32>
    dims [S: batch, U: seq(S)] {
  %embed = nn.param_ref @embed : !nn.tensor<[5, 4], f32>
  %wi = nn.param_ref @wi : !nn.tensor<[12, 4], f32>
  %wh = nn.param_ref @wh : !nn.tensor<[12, 3], f32>
  %b = nn.param_ref @b : !nn.tensor<[12], f32>
  %x = nn.embedding %y, %embed : !nn.tensor<[S, U], i32>, !nn.tensor<[5, 4], f32>
  %d = nn.dropout %x rate 0.25 : !nn.tensor<[S, U, 4], f32>
  %h = nn.lstm forward %d, %wi, %wh, %b : !nn.tensor<[S, U, 4], f32>, !nn.tensor<[12, 4], f32>, !nn.tensor<[12, 3], f32>, !nn.tensor<[12], f32>
  nn.return %h : !nn.tensor<[S, U, 3], f32>
}
)";

/// `source` with its decoders driving @predictor (kSequencePredictor,
/// added) instead of the step graph @pred, and its rescoring networks
/// (embedding and nn.lstm over prepend_start) replaced by calls of
/// @predictor: one prediction network for search and training.
std::string inSequenceForm(std::string source) {
  auto replaceAll = [&](const std::string &from, const std::string &to) {
    for (size_t at = source.find(from); at != std::string::npos;
         at = source.find(from, at + to.size()))
      source.replace(at, from.size(), to);
  };
  replaceAll("predictor @pred ", "predictor @predictor ");
  // The rescoring LSTMs over the flattened beams H and G.
  for (auto [batch, labels] :
       {std::pair<std::string, std::string>{"H", "Y1"}, {"G", "Z1"}}) {
    std::string p = batch == "H" ? "%ph" : "%pg";
    size_t begin = source.find("  " + p + "x = nn.embedding");
    if (begin == std::string::npos)
      continue; // no rescoring
    size_t end = source.find('\n', source.find("  " + p + " = nn.lstm"));
    source.replace(begin, end - begin,
                   "  " + p + " = nn.call @predictor(" + p +
                       "in) : (!nn.tensor<[" + batch + ", " + labels +
                       "], i32>) -> !nn.tensor<[" + batch + ", " + labels +
                       ", 3], f32>");
  }
  return source + kSequencePredictor;
}

/// The beam searches over the same callees, each N-best list rescored in
/// the graph by the training path (prediction network over the
/// hypotheses, join, joiner, transducer_loss over the flattened batch H):
/// rnnt (blank 0, 2 labels per frame) as result0/1 rescored as result2,
/// rna (blank 2) as result3/4 rescored as result5.
std::string beamSource(int64_t rnntBeam, int64_t rnaBeam,
                       bool sequenceForm = false) {
  std::string source = std::string(kSource) + R"(
nn.graph @beam(%enc: !nn.tensor<[B, T, 3], f32>)
    -> (!nn.tensor<[B, K, Y], i32>, !nn.tensor<[B, K], f32>, !nn.tensor<[B, K], f32>,
        !nn.tensor<[B, L, Z], i32>, !nn.tensor<[B, L], f32>, !nn.tensor<[B, L], f32>)
    dims [B: batch, T: seq(B), K: seq(B) computed, H: batch = flatten(B, K),
          Y: seq(H) computed, TH: seq(H) = T, Y1: seq(H) = Y + 1, J: packed(H, TH, Y1),
          L: seq(B) computed, G: batch = flatten(B, L), Z: seq(G) computed,
          TG: seq(G) = T, Z1: seq(G) = Z + 1, I: packed(G, TG, Z1)] {
  %embed = nn.param_ref @embed : !nn.tensor<[5, 4], f32>
  %wi = nn.param_ref @wi : !nn.tensor<[12, 4], f32>
  %wh = nn.param_ref @wh : !nn.tensor<[12, 3], f32>
  %b = nn.param_ref @b : !nn.tensor<[12], f32>
  %y, %s = nn.transducer_beam_search %enc predictor @pred joiner @joint topology rnnt blank 0 start 0 beam )" +
                       std::to_string(rnntBeam) + R"( max_symbols 2
      : !nn.tensor<[B, T, 3], f32> -> !nn.tensor<[B, K, Y], i32>, !nn.tensor<[B, K], f32>
  %yh = nn.flatten_beam %y : !nn.tensor<[B, K, Y], i32> -> !nn.tensor<[H, Y], i32>
  %eh = nn.repeat_beam %enc : !nn.tensor<[B, T, 3], f32> -> !nn.tensor<[H, TH, 3], f32>
  %phin = nn.prepend_start %yh start 0 : !nn.tensor<[H, Y], i32> -> !nn.tensor<[H, Y1], i32>
  %phx = nn.embedding %phin, %embed : !nn.tensor<[H, Y1], i32>, !nn.tensor<[5, 4], f32>
  %ph = nn.lstm forward %phx, %wi, %wh, %b : !nn.tensor<[H, Y1, 4], f32>, !nn.tensor<[12, 4], f32>, !nn.tensor<[12, 3], f32>, !nn.tensor<[12], f32>
  %jh = nn.transducer_join %eh, %ph : !nn.tensor<[H, TH, 3], f32>, !nn.tensor<[H, Y1, 3], f32> -> !nn.tensor<[J, 3], f32>
  %zh = nn.call @joint(%jh) : (!nn.tensor<[J, 3], f32>) -> !nn.tensor<[J, 5], f32>
  %lh = nn.transducer_loss %zh, %yh from logits topology rnnt blank 0 : !nn.tensor<[J, 5], f32>, !nn.tensor<[H, Y], i32>
  nn.mark_loss %lh as "rnnt" normalize per_sequence : !nn.tensor<[H], f32>
  %lk = nn.unflatten_beam %lh : !nn.tensor<[H], f32> -> !nn.tensor<[B, K], f32>
  %z, %zs = nn.transducer_beam_search %enc predictor @pred joiner @joint topology rna blank 2 start 0 beam )" +
                       std::to_string(rnaBeam) + R"(
      : !nn.tensor<[B, T, 3], f32> -> !nn.tensor<[B, L, Z], i32>, !nn.tensor<[B, L], f32>
  %zg = nn.flatten_beam %z : !nn.tensor<[B, L, Z], i32> -> !nn.tensor<[G, Z], i32>
  %eg = nn.repeat_beam %enc : !nn.tensor<[B, T, 3], f32> -> !nn.tensor<[G, TG, 3], f32>
  %pgin = nn.prepend_start %zg start 0 : !nn.tensor<[G, Z], i32> -> !nn.tensor<[G, Z1], i32>
  %pgx = nn.embedding %pgin, %embed : !nn.tensor<[G, Z1], i32>, !nn.tensor<[5, 4], f32>
  %pg = nn.lstm forward %pgx, %wi, %wh, %b : !nn.tensor<[G, Z1, 4], f32>, !nn.tensor<[12, 4], f32>, !nn.tensor<[12, 3], f32>, !nn.tensor<[12], f32>
  %jg = nn.transducer_join %eg, %pg : !nn.tensor<[G, TG, 3], f32>, !nn.tensor<[G, Z1, 3], f32> -> !nn.tensor<[I, 3], f32>
  %xg = nn.call @joint(%jg) : (!nn.tensor<[I, 3], f32>) -> !nn.tensor<[I, 5], f32>
  %lg = nn.transducer_loss %xg, %zg from logits topology rna blank 2 : !nn.tensor<[I, 5], f32>, !nn.tensor<[G, Z], i32>
  nn.mark_loss %lg as "rna" normalize per_sequence : !nn.tensor<[G], f32>
  %ll = nn.unflatten_beam %lg : !nn.tensor<[G], f32> -> !nn.tensor<[B, L], f32>
  nn.return %y, %s, %lk, %z, %zs, %ll : !nn.tensor<[B, K, Y], i32>, !nn.tensor<[B, K], f32>, !nn.tensor<[B, K], f32>,
      !nn.tensor<[B, L, Z], i32>, !nn.tensor<[B, L], f32>, !nn.tensor<[B, L], f32>
}
)";
  return sequenceForm ? inSequenceForm(source) : source;
}

/// beamSource's two searches by output: labels, scores, rescored, the
/// list dim and the hypothesis dim (rnnt, then rna).
constexpr std::array<std::array<const char *, 5>, 2> kSearches = {
    {{"result0", "result1", "result2", "K", "Y"},
     {"result3", "result4", "result5", "L", "Z"}}};

struct Hypothesis {
  std::vector<int32_t> labels;
  double score = 0, rescored = 0;
};

/// Sequence b's N-best list: labels output `labels` [B, K, Y] over the
/// computed dims `k` (list lengths) and `y` (hypothesis lengths over the
/// flattened batch), scores `scores` and in-graph rescoring `rescored`
/// ([B, K]).
std::vector<Hypothesis>
nBestOf(const RunResult &result, const std::string &labels,
        const std::string &scores, const std::string &rescored,
        const std::string &k, const std::string &y, int64_t b) {
  const Tensor &l = output(result, labels);
  const Tensor &counts = output(result, "lengths:" + k);
  const Tensor &lengths = output(result, "lengths:" + y);
  int64_t first = 0;
  for (int64_t i = 0; i < b; ++i)
    first += counts.data<int32_t>()[i];
  int64_t slots = l.shape()[1], longest = l.shape()[2];
  std::vector<Hypothesis> list;
  for (int64_t i = 0; i < counts.data<int32_t>()[b]; ++i) {
    const int32_t *row = l.data<int32_t>() + (b * slots + i) * longest;
    list.push_back(
        {std::vector<int32_t>(row, row + lengths.data<int32_t>()[first + i]),
         output(result, scores).at(b * slots + i),
         output(result, rescored).at(b * slots + i)});
  }
  return list;
}

TEST(TransducerBeamSearchTest, WideBeamScoresAreMinusTheTransducerLoss) {
  // Two frames (rnnt: every sequence of at most 2 labels has all its
  // alignments under max_symbols 2, and beam 512 prunes nothing) and
  // three frames (rna: 85 sequences, beam 128): each listed hypothesis
  // scores -transducer_loss of itself, rescored in the same graph.
  Executable exe = compileOrDie(beamSource(512, 128), /*pack=*/false, "beam");
  std::mt19937 rng(17);
  for (uint32_t seed = 0; seed < 3; ++seed) {
    SCOPED_TRACE("seed " + std::to_string(seed));
    Model m(seed);
    std::vector<std::vector<double>> utterances{
        randomFrames(rng, 2), randomFrames(rng, 1), randomFrames(rng, 0)};
    RunInputs inputs = batchOf(utterances, m);
    RunResult got;
    absl::Status status = exe.run(inputs, got);
    ASSERT_TRUE(status.ok()) << status.message();
    for (size_t b = 0; b < utterances.size(); ++b) {
      SCOPED_TRACE("sequence " + std::to_string(b));
      int64_t frames = utterances[b].size() / kHidden;
      std::vector<Hypothesis> rnnt =
          nBestOf(got, "result0", "result1", "result2", "K", "Y", b);
      std::vector<Hypothesis> rna =
          nBestOf(got, "result3", "result4", "result5", "L", "Z", b);
      // Every sequence of up to 2 labels per frame (4 labels), and every
      // one of up to `frames` labels under rna.
      int64_t rnntCount = 0, rnaCount = 0;
      for (int64_t n = 0, p = 1; n <= 2 * frames; ++n, p *= 4)
        rnntCount += p;
      for (int64_t n = 0, p = 1; n <= frames; ++n, p *= 4)
        rnaCount += p;
      EXPECT_EQ((int64_t)rnnt.size(), rnntCount);
      EXPECT_EQ((int64_t)rna.size(), rnaCount);
      int64_t exact = 0;
      for (const Hypothesis &h : rnnt)
        if ((int64_t)h.labels.size() <= 2) {
          EXPECT_NEAR(h.score, -h.rescored, 1e-4 * std::max(1.0, h.rescored));
          ++exact;
        }
      EXPECT_GT(exact, 0);
      for (const Hypothesis &h : rna)
        EXPECT_NEAR(h.score, -h.rescored, 1e-4 * std::max(1.0, h.rescored));
      for (const auto *list : {&rnnt, &rna})
        for (size_t k = 1; k < list->size(); ++k)
          EXPECT_GE((*list)[k - 1].score, (*list)[k].score);
    }
    expectMatchesReference(beamSource(512, 128), exe, inputs, got, 1e-4, 1e-5);
  }
}

TEST(TransducerBeamSearchTest, NarrowBeamMatchesTheReference) {
  Executable exe = compileOrDie(beamSource(4, 3), /*pack=*/false, "beam");
  std::mt19937 rng(23);
  for (uint32_t seed = 0; seed < 4; ++seed) {
    SCOPED_TRACE("seed " + std::to_string(seed));
    Model m(seed + 40);
    std::vector<std::vector<double>> utterances;
    for (int64_t length : {5, 1, 0, 9, 3})
      utterances.push_back(randomFrames(rng, length));
    RunInputs inputs = batchOf(utterances, m);
    RunResult got;
    absl::Status status = exe.run(inputs, got);
    ASSERT_TRUE(status.ok()) << status.message();
    expectMatchesReference(beamSource(4, 3), exe, inputs, got, 1e-4, 1e-5);
    // Full lists: at most the beam, the sequence without frames one empty
    // hypothesis scoring 0.
    std::vector<Hypothesis> none =
        nBestOf(got, "result0", "result1", "result2", "K", "Y", 2);
    ASSERT_EQ(none.size(), 1u);
    EXPECT_TRUE(none[0].labels.empty());
    EXPECT_EQ(none[0].score, 0.0);
    EXPECT_EQ(nBestOf(got, "result0", "result1", "result2", "K", "Y", 3).size(),
              4u);
    EXPECT_EQ(nBestOf(got, "result3", "result4", "result5", "L", "Z", 3).size(),
              3u);
  }
}

TEST(TransducerBeamSearchTest, EachUtteranceAloneEqualsItInABatch) {
  Executable exe = compileOrDie(beamSource(4, 3), /*pack=*/false, "beam");
  Model m(12);
  std::mt19937 rng(6);
  std::vector<std::vector<double>> utterances;
  for (int64_t length : {1, 17, 3, 0, 30, 2})
    utterances.push_back(randomFrames(rng, length));
  RunResult batch;
  ASSERT_TRUE(exe.run(batchOf(utterances, m), batch).ok());
  for (size_t b = 0; b < utterances.size(); ++b) {
    SCOPED_TRACE("sequence " + std::to_string(b));
    RunResult alone;
    ASSERT_TRUE(exe.run(batchOf({utterances[b]}, m), alone).ok());
    for (auto [labels, scores, rescored, k, y] : kSearches) {
      std::vector<Hypothesis> together =
          nBestOf(batch, labels, scores, rescored, k, y, b);
      std::vector<Hypothesis> single =
          nBestOf(alone, labels, scores, rescored, k, y, 0);
      ASSERT_EQ(together.size(), single.size()) << labels;
      for (size_t i = 0; i < single.size(); ++i) {
        EXPECT_EQ(together[i].labels, single[i].labels) << labels;
        EXPECT_TRUE(close(together[i].score, single[i].score, 1e-6)) << labels;
      }
    }
  }
}

TEST(TransducerBeamSearchTest, RnaBeamOneIsGreedy) {
  // With beam 1 the rna search keeps the best extension of one hypothesis
  // per frame: the greedy decision (random real scores: no exact ties).
  std::string source = std::string(kSource) + R"(
nn.graph @one(%enc: !nn.tensor<[B, T, 3], f32>) -> (!nn.tensor<[B, Y], i32>, !nn.tensor<[B], f32>)
    dims [B: batch, T: seq(B), Y: seq(B) computed] {
  %y, %s = nn.transducer_beam_search %enc predictor @pred joiner @joint topology rna blank 2 start 0 beam 1
      : !nn.tensor<[B, T, 3], f32> -> !nn.tensor<[B, Y], i32>, !nn.tensor<[B], f32>
  nn.return %y, %s : !nn.tensor<[B, Y], i32>, !nn.tensor<[B], f32>
}
)";
  Executable exe = compileOrDie(source, /*pack=*/false, "one");
  std::mt19937 rng(31);
  for (uint32_t seed = 0; seed < 4; ++seed) {
    Model m(seed + 60);
    std::vector<std::vector<double>> utterances;
    for (int64_t length : {6, 0, 11})
      utterances.push_back(randomFrames(rng, length));
    RunResult got;
    ASSERT_TRUE(exe.run(batchOf(utterances, m), got).ok());
    for (size_t b = 0; b < utterances.size(); ++b) {
      Decoded want = plainGreedy(m, utterances[b], 2, 1);
      EXPECT_EQ(hypothesis(got, "result0", "Y", b), want.labels);
      EXPECT_NEAR(output(got, "result1").at(b), want.score,
                  1e-4 * std::max(1.0, -want.score));
    }
  }
}

TEST(TransducerBeamSearchTest, SearchBeamOptionSetsTheBeam) {
  // compile's searchBeam reaches nn.transducer_beam_search: beam 1 lists
  // one hypothesis per sequence.
  std::string source = std::string(kSource) + R"(
nn.graph @nbest(%enc: !nn.tensor<[B, T, 3], f32>) -> (!nn.tensor<[B, K, Y], i32>, !nn.tensor<[B, K], f32>)
    dims [B: batch, T: seq(B), K: seq(B) computed, H: batch = flatten(B, K), Y: seq(H) computed] {
  %y, %s = nn.transducer_beam_search %enc predictor @pred joiner @joint topology rnnt blank 0 start 0 beam 6 max_symbols 2
      : !nn.tensor<[B, T, 3], f32> -> !nn.tensor<[B, K, Y], i32>, !nn.tensor<[B, K], f32>
  nn.return %y, %s : !nn.tensor<[B, K, Y], i32>, !nn.tensor<[B, K], f32>
}
)";
  CompileOptions options;
  options.entry = "nbest";
  options.searchBeam = 1;
  Executable exe = compileOrDie(source, options);
  Model m(3);
  std::mt19937 rng(2);
  RunResult got;
  ASSERT_TRUE(
      exe.run(batchOf({randomFrames(rng, 4), randomFrames(rng, 6)}, m), got)
          .ok());
  EXPECT_EQ(output(got, "lengths:K").data<int32_t>()[0], 1);
  EXPECT_EQ(output(got, "lengths:K").data<int32_t>()[1], 1);
}

//===----------------------------------------------------------------------===//
// The prediction network written once
//===----------------------------------------------------------------------===//

TEST(TransducerWrittenOnceTest,
     SequenceFormPredictorDecodesLikeThePlainDecoder) {
  // The decoders given the training network itself (@predictor, with a
  // dropout that a search leaves out) decode as the plain decoder does,
  // and as the reference, which runs @predictor on each whole prefix.
  std::string source = inSequenceForm(kSource);
  ASSERT_NE(source.find("predictor @predictor joiner"), std::string::npos);
  Executable exe = compileOrDie(source, /*pack=*/false, "decode");
  std::mt19937 rng(3);
  for (uint32_t seed = 0; seed < 4; ++seed) {
    SCOPED_TRACE("seed " + std::to_string(seed));
    Model m(seed);
    std::vector<std::vector<double>> utterances;
    for (int64_t length : {5, 1, 0, 9, 3})
      utterances.push_back(randomFrames(rng, length));
    RunInputs inputs = batchOf(utterances, m);
    RunResult got;
    absl::Status status = exe.run(inputs, got);
    ASSERT_TRUE(status.ok()) << status.message();
    EXPECT_GT(expectPlainGreedy(m, utterances, got), 0);
    expectMatchesReference(source, exe, inputs, got, 1e-4, 1e-5);
  }
}

TEST(TransducerWrittenOnceTest, SearchRescoringAndTrainingShareOnePredictor) {
  // The beam searches drive @predictor and the same graph rescores their
  // N-best lists through nn.call. Compiled for evaluation, the lists,
  // scores and rescorings are the step-form graph's and the reference's.
  // Compiled for training (gradients, dropout on), the search still runs
  // without dropout, so its lists are the evaluation build's, while the
  // rescoring drops units and trains every parameter.
  std::string source = beamSource(4, 3, /*sequenceForm=*/true);
  ASSERT_NE(source.find("nn.call @predictor(%phin)"), std::string::npos);
  ASSERT_NE(source.find("nn.call @predictor(%pgin)"), std::string::npos);
  Executable sequence = compileOrDie(source, /*pack=*/false, "beam");
  Executable step = compileOrDie(beamSource(4, 3), /*pack=*/false, "beam");
  CompileOptions training;
  training.entry = "beam";
  training.grads = training.training = true;
  Executable trained = compileOrDie(source, training);

  std::mt19937 rng(17);
  std::vector<std::vector<double>> utterances;
  for (int64_t length : {5, 1, 0, 9, 3})
    utterances.push_back(randomFrames(rng, length));
  Model m(41);
  RunInputs inputs = batchOf(utterances, m);
  RunResult a, b, t;
  absl::Status status = sequence.run(inputs, a);
  ASSERT_TRUE(status.ok()) << status.message();
  ASSERT_TRUE(step.run(inputs, b).ok());
  expectMatchesReference(source, sequence, inputs, a, 1e-4, 1e-5);
  Tensor seed(DType::i32, {});
  seed.data<int32_t>()[0] = 5;
  inputs.inputs["dropout_seed"] = seed;
  status = trained.run(inputs, t);
  ASSERT_TRUE(status.ok()) << status.message();

  bool rescoredDiffers = false;
  for (size_t i = 0; i < utterances.size(); ++i)
    for (auto [labels, scores, rescored, k, y] : kSearches) {
      SCOPED_TRACE(std::string(labels) + ", sequence " + std::to_string(i));
      std::vector<Hypothesis> x = nBestOf(a, labels, scores, rescored, k, y, i);
      std::vector<Hypothesis> z = nBestOf(b, labels, scores, rescored, k, y, i);
      std::vector<Hypothesis> w = nBestOf(t, labels, scores, rescored, k, y, i);
      ASSERT_EQ(x.size(), z.size());
      ASSERT_EQ(x.size(), w.size());
      for (size_t j = 0; j < x.size(); ++j) {
        EXPECT_EQ(x[j].labels, z[j].labels);
        EXPECT_TRUE(close(x[j].score, z[j].score, 1e-5, 1e-6));
        EXPECT_TRUE(close(x[j].rescored, z[j].rescored, 1e-5, 1e-6));
        EXPECT_EQ(w[j].labels, x[j].labels);
        EXPECT_EQ(w[j].score, x[j].score);
        rescoredDiffers |= !close(w[j].rescored, x[j].rescored, 1e-4);
      }
    }
  EXPECT_TRUE(rescoredDiffers);
  // Every parameter trains: the predictor's through the rescoring, the
  // joiner's through both joins.
  ASSERT_EQ(t.gradientNames().size(), 6u);
  for (const std::string &name : t.gradientNames()) {
    const Tensor &grad = *t.gradient(name);
    double norm = 0;
    for (int64_t i = 0; i < grad.numElements(); ++i) {
      ASSERT_TRUE(std::isfinite(grad.at(i))) << name;
      norm += grad.at(i) * grad.at(i);
    }
    EXPECT_GT(norm, 0) << name;
  }
}

} // namespace
