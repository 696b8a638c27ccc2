//===- TransducerTest.cpp - RNN-T and RNA losses against float64 ----------===//
//
// nn.transducer_join, nn.transducer_loss and their gradients, compiled and
// run on chosen sequences (labels with room, U = T, too few frames for RNA,
// no labels, no frames, one frame), with the joint packed and padded and
// NaN in every padded encoder and prediction position:
//   * the losses against a float64 forward recursion written here from
//     Graves 2012 (RNN-T) and its monotonic variant (RNA), that recursion
//     itself checked against the sum over every path by enumeration;
//   * the encoder and prediction gradients against central differences of
//     that float64 loss, through the join (joint = encoder + prediction);
//   * packed against padded joint; zero_infinity as for CTC.
// nn.transducer_align: the best RNA and RNN-T paths against every path
// enumerated, packed and padded, from logits and log-probs; ties against
// the float64 reference evaluator.
//
//===----------------------------------------------------------------------===//

#include "ExecutionUtil.h"
#include "reference/Reference.h"

#include <cmath>
#include <cstring>
#include <functional>
#include <limits>
#include <random>

using namespace nn;
using namespace nn::testing;

namespace {

constexpr int64_t kClasses = 4, kBlank = 0, kTime = 5, kLabels = 3;
constexpr int64_t kStates = kLabels + 1;
constexpr double kNegInf = -std::numeric_limits<double>::infinity();
constexpr double kInf = std::numeric_limits<double>::infinity();

struct Sequence {
  int32_t frames;
  std::vector<int32_t> labels;
};

const std::vector<Sequence> kSequences{
    {4, {1, 2}},    // room for blanks
    {3, {3, 3, 1}}, // U = T: RNA has one path; a repeat
    {2, {1, 2, 3}}, // too few frames for RNA
    {1, {}},        // one frame, no labels
    {5, {2}},       //
    {0, {}},        // no frames: RNN-T has no path, RNA the empty one
    {5, {1, 1, 2}}, //
    {1, {3}},       // one frame, one label
};

/// The graph: the joint packed and padded, loss and gradients of both.
std::string source(const std::string &topology, bool zeroInfinity,
                   const std::string &labelType = "i32") {
  std::string zi = zeroInfinity ? " zero_infinity" : "";
  std::string attrs = " from logits topology " + topology + " blank 0" + zi;
  const char *e = "!nn.tensor<[B, T, 4], f32>";
  const char *p = "!nn.tensor<[B, U1, 4], f32>";
  std::string y = "!nn.tensor<[B, U], " + labelType + ">";
  const char *jp = "!nn.tensor<[J, 4], f32>";
  const char *jd = "!nn.tensor<[B, T, U1, 4], f32>";
  const char *l = "!nn.tensor<[B], f32>";
  std::string s;
  s += std::string("nn.graph @g(%g: ") + l + ", %e: " + e + ", %p: " + p +
       ", %y: " + y + ")\n    -> (" + l + ", " + l + ", " + e + ", " + p +
       ", " + e + ", " + p + ")\n";
  s += "    dims [B: batch, T: seq(B), U: seq(B), U1: seq(B) = U + 1, "
       "J: packed(B, T, U1)] {\n";
  for (auto [name, type] : {std::pair{"p", jp}, std::pair{"d", jd}}) {
    std::string n = name;
    s += "  %j" + n + " = nn.transducer_join %e, %p : " + e + ", " + p +
         " -> " + type + "\n";
    s += "  %l" + n + " = nn.transducer_loss %j" + n + ", %y" + attrs + " : " +
         type + ", " + y + "\n";
    s += "  %g" + n + " = nn.transducer_loss_grad %g, %j" + n + ", %y" + attrs +
         " : " + l + ", " + type + ", " + y + "\n";
    s += "  %e" + n + ", %p" + n + " = nn.transducer_join_grad %g" + n + " : " +
         type + " -> " + e + ", " + p + "\n";
  }
  s += std::string("  nn.return %lp, %ld, %ep, %pp, %ed, %pd : ") + l + ", " +
       l + ", " + e + ", " + p + ", " + e + ", " + p + "\n}\n";
  return s;
}

/// One sequence's inputs in float64: encoder [T][V], prediction [U+1][V].
struct SequenceData {
  std::vector<std::vector<double>> encoder, prediction;
};

/// log-softmax of encoder[t] + prediction[u].
std::vector<double> logProbs(const SequenceData &d, int64_t t, int64_t u) {
  std::vector<double> z(kClasses), out(kClasses);
  double max = kNegInf, sum = 0;
  for (int64_t k = 0; k < kClasses; ++k) {
    z[k] = d.encoder[t][k] + d.prediction[u][k];
    max = std::max(max, z[k]);
  }
  for (int64_t k = 0; k < kClasses; ++k)
    sum += std::exp(z[k] - max);
  for (int64_t k = 0; k < kClasses; ++k)
    out[k] = z[k] - max - std::log(sum);
  return out;
}

double logAdd(double a, double b) {
  if (a == kNegInf)
    return b;
  if (b == kNegInf)
    return a;
  double m = std::max(a, b);
  return m + std::log(std::exp(a - m) + std::exp(b - m));
}

/// -log p(labels) by the forward recursion; +inf when no path exists.
double referenceLoss(const SequenceData &d, const Sequence &s, bool rna) {
  int64_t T = s.frames, U = s.labels.size();
  auto blank = [&](int64_t t, int64_t u) { return logProbs(d, t, u)[kBlank]; };
  auto label = [&](int64_t t, int64_t u) {
    return logProbs(d, t, u)[s.labels[u]];
  };
  if (!rna) {
    // Graves 2012: alpha(t, u) over t < T, u <= U.
    if (T == 0)
      return kInf;
    std::vector<std::vector<double>> alpha(T,
                                           std::vector<double>(U + 1, kNegInf));
    for (int64_t t = 0; t < T; ++t)
      for (int64_t u = 0; u <= U; ++u) {
        double a = t == 0 && u == 0 ? 0.0 : kNegInf;
        if (t > 0)
          a = logAdd(a, alpha[t - 1][u] + blank(t - 1, u));
        if (u > 0)
          a = logAdd(a, alpha[t][u - 1] + label(t, u - 1));
        alpha[t][u] = a;
      }
    return -(alpha[T - 1][U] + blank(T - 1, U));
  }
  // RNA: alpha_t(u) after t frames, one emission per frame.
  std::vector<double> alpha(U + 1, kNegInf);
  alpha[0] = 0;
  for (int64_t t = 0; t < T; ++t) {
    std::vector<double> next(U + 1, kNegInf);
    for (int64_t u = 0; u <= U; ++u) {
      next[u] = alpha[u] + blank(t, u);
      if (u > 0)
        next[u] = logAdd(next[u], alpha[u - 1] + label(t, u - 1));
    }
    alpha = next;
  }
  return alpha[U] == kNegInf ? kInf : -alpha[U];
}

/// -log of the sum over every path, enumerated: RNN-T arranges U labels
/// and T - 1 blanks before a final blank; RNA places U labels among T
/// frames.
double bruteForceLoss(const SequenceData &d, const Sequence &s, bool rna) {
  int64_t T = s.frames, U = s.labels.size();
  int64_t moves = rna ? T : T - 1 + U;
  if (moves < 0 || (rna && T < U))
    return kInf;
  double total = kNegInf;
  for (int64_t mask = 0; mask < (int64_t{1} << moves); ++mask) {
    if (__builtin_popcountll(mask) != U)
      continue;
    int64_t t = 0, u = 0;
    double score = 0;
    for (int64_t m = 0; m < moves; ++m) {
      std::vector<double> lp = logProbs(d, t, u);
      if (mask >> m & 1) {
        score += lp[s.labels[u]];
        ++u;
        if (rna)
          ++t;
      } else {
        score += lp[kBlank];
        ++t;
      }
    }
    if (!rna)
      score += logProbs(d, T - 1, U)[kBlank];
    total = logAdd(total, score);
  }
  return -total;
}

struct Case {
  std::vector<SequenceData> data;
  std::vector<double> scale; // the incoming gradient per sequence
};

Case randomCase(std::mt19937 &rng) {
  std::uniform_real_distribution<double> uniform(-2.0, 2.0);
  std::uniform_real_distribution<double> positive(0.5, 1.5);
  Case c;
  for (const Sequence &s : kSequences) {
    SequenceData d;
    d.encoder.assign(s.frames, std::vector<double>(kClasses));
    d.prediction.assign(s.labels.size() + 1, std::vector<double>(kClasses));
    for (auto *rows : {&d.encoder, &d.prediction})
      for (auto &row : *rows)
        for (double &v : row)
          v = (float)uniform(rng); // what the f32 input holds
    c.data.push_back(d);
    c.scale.push_back((float)positive(rng));
  }
  return c;
}

RunInputs inputsFor(const Case &c) {
  int64_t batch = kSequences.size();
  float nan = std::numeric_limits<float>::quiet_NaN();
  RunInputs inputs;
  Tensor g(DType::f32, {batch});
  Tensor e(DType::f32, {batch, kTime, kClasses});
  Tensor p(DType::f32, {batch, kStates, kClasses});
  Tensor y(DType::i32, {batch, kLabels});
  for (int64_t b = 0; b < batch; ++b) {
    const Sequence &s = kSequences[b];
    inputs.lengths["T"].push_back(s.frames);
    inputs.lengths["U"].push_back(s.labels.size());
    g.data<float>()[b] = (float)c.scale[b];
    for (int64_t t = 0; t < kTime; ++t)
      for (int64_t k = 0; k < kClasses; ++k)
        e.data<float>()[(b * kTime + t) * kClasses + k] =
            t < s.frames ? (float)c.data[b].encoder[t][k] : nan;
    for (int64_t u = 0; u < kStates; ++u)
      for (int64_t k = 0; k < kClasses; ++k)
        p.data<float>()[(b * kStates + u) * kClasses + k] =
            u <= (int64_t)s.labels.size() ? (float)c.data[b].prediction[u][k]
                                          : nan;
    for (int64_t u = 0; u < kLabels; ++u)
      y.data<int32_t>()[b * kLabels + u] =
          u < (int64_t)s.labels.size() ? s.labels[u] : 1;
  }
  inputs.inputs["g"] = g;
  inputs.inputs["e"] = e;
  inputs.inputs["p"] = p;
  inputs.inputs["y"] = y;
  return inputs;
}

/// Central differences of the float64 loss in each encoder and prediction
/// value of sequence b, times its incoming gradient.
SequenceData referenceGradient(const Case &c, int64_t b, bool rna) {
  SequenceData d = c.data[b], grad = c.data[b];
  const double h = 1e-5;
  for (auto [values, out] : {std::pair{&d.encoder, &grad.encoder},
                             std::pair{&d.prediction, &grad.prediction}})
    for (size_t i = 0; i < values->size(); ++i)
      for (int64_t k = 0; k < kClasses; ++k) {
        double keep = (*values)[i][k];
        (*values)[i][k] = keep + h;
        double up = referenceLoss(d, kSequences[b], rna);
        (*values)[i][k] = keep - h;
        double down = referenceLoss(d, kSequences[b], rna);
        (*values)[i][k] = keep;
        (*out)[i][k] = c.scale[b] * (up - down) / (2 * h);
      }
  return grad;
}

class TransducerLossTest
    : public ::testing::TestWithParam<std::tuple<const char *, bool>> {};

TEST_P(TransducerLossTest, MatchesFloat64RecursionPackedAndPadded) {
  auto [topology, zeroInfinity] = GetParam();
  bool rna = std::string(topology) == "rna";
  std::string graph = source(topology, zeroInfinity);
  SCOPED_TRACE(graph);
  Executable exe = compileOrDie(graph, /*pack=*/false);
  std::mt19937 rng(rna ? 21 : 20);
  for (int round = 0; round < 5; ++round) {
    SCOPED_TRACE("round " + std::to_string(round));
    Case c = randomCase(rng);
    RunResult got;
    absl::Status status = exe.run(inputsFor(c), got);
    ASSERT_TRUE(status.ok()) << status.message();
    ASSERT_EQ(got.outputs.size(), 6u);
    for (size_t b = 0; b < kSequences.size(); ++b) {
      SCOPED_TRACE("sequence " + std::to_string(b));
      const Sequence &s = kSequences[b];
      double want = referenceLoss(c.data[b], s, rna);
      // The recursion is the sum over paths.
      double paths = bruteForceLoss(c.data[b], s, rna);
      ASSERT_TRUE(close(want, paths, 1e-12)) << want << " vs " << paths;
      bool impossible = std::isinf(want);
      double expected = impossible && zeroInfinity ? 0.0 : want;
      for (int which : {0, 1}) {
        double loss = got.outputs[which].second.at(b);
        EXPECT_TRUE(close(loss, expected, 1e-5))
            << (which ? "padded " : "packed ") << loss << " vs " << expected;
      }
      // Packed and padded joints: the same arithmetic per sequence.
      EXPECT_EQ(got.outputs[0].second.at(b), got.outputs[1].second.at(b));

      SequenceData grad = referenceGradient(c, b, rna);
      for (int which : {2, 4}) {
        const Tensor &de = got.outputs[which].second;
        const Tensor &dp = got.outputs[which + 1].second;
        std::string kind = which == 2 ? "packed" : "padded";
        auto check = [&](const Tensor &t, int64_t rows, int64_t valid,
                         const std::vector<std::vector<double>> &ref,
                         const char *what) {
          for (int64_t i = 0; i < rows; ++i)
            for (int64_t k = 0; k < kClasses; ++k) {
              float v = t.data<float>()[(b * rows + i) * kClasses + k];
              SCOPED_TRACE(kind + " " + what + " [" + std::to_string(i) + ", " +
                           std::to_string(k) + "]");
              if (i >= valid)
                EXPECT_EQ(v, 0.0f) << "padding";
              else if (impossible && !zeroInfinity)
                EXPECT_TRUE(std::isnan(v)) << v;
              else if (impossible)
                EXPECT_EQ(v, 0.0f);
              else
                EXPECT_TRUE(close(v, ref[i][k], 1e-5, 1e-6))
                    << v << " vs " << ref[i][k];
            }
        };
        check(de, kTime, s.frames, grad.encoder, "encoder");
        int64_t states = s.labels.size() + 1;
        // No frames: the prediction states meet no frame, gradient 0.
        check(dp, kStates, s.frames == 0 ? 0 : states, grad.prediction,
              "prediction");
      }
    }
  }
}

INSTANTIATE_TEST_SUITE_P(Topologies, TransducerLossTest,
                         ::testing::Combine(::testing::Values("rnnt", "rna"),
                                            ::testing::Bool()),
                         [](const auto &info) {
                           return std::string(std::get<0>(info.param)) +
                                  (std::get<1>(info.param) ? "ZeroInfinity"
                                                           : "");
                         });

/// Every label type the verifier accepts lowers, forward and backward
/// (the gradient's row labels are i32: i64 labels failed to lower), and
/// the label type changes nothing: i64 labels give the losses and
/// gradients of i32 ones bit for bit, packed and padded.
class TransducerLabelTypeTest : public ::testing::TestWithParam<const char *> {
};

TEST_P(TransducerLabelTypeTest, I64LabelsMatchI32BitForBit) {
  std::string topology = GetParam();
  // zero_infinity: RNA's infeasible sequence gives 0, not NaN, so the
  // check below that the gradients are not all zero can see them.
  Executable narrow = compileOrDie(source(topology, true, "i32"), false);
  Executable wide = compileOrDie(source(topology, true, "i64"), false);
  std::mt19937 rng(topology == "rna" ? 31 : 30);
  RunInputs inputs = inputsFor(randomCase(rng));
  RunInputs wideInputs = inputs;
  const Tensor &y = inputs.inputs.at("y");
  Tensor y64(DType::i64, y.shape());
  for (int64_t i = 0; i < y.numElements(); ++i)
    y64.data<int64_t>()[i] = y.data<int32_t>()[i];
  wideInputs.inputs["y"] = y64;
  RunResult a, b;
  absl::Status status = narrow.run(inputs, a);
  ASSERT_TRUE(status.ok()) << status.message();
  status = wide.run(wideInputs, b);
  ASSERT_TRUE(status.ok()) << status.message();
  ASSERT_EQ(a.outputs.size(), 6u);
  ASSERT_EQ(b.outputs.size(), 6u);
  for (size_t i = 0; i < a.outputs.size(); ++i) {
    const Tensor &x = a.outputs[i].second, &z = b.outputs[i].second;
    ASSERT_EQ(x.shape(), z.shape()) << "output " << i;
    EXPECT_EQ(std::memcmp(x.raw(), z.raw(), x.sizeInBytes()), 0)
        << "output " << i << " differs";
  }
  // Not vacuous: the losses are finite and the gradients not all zero.
  EXPECT_TRUE(std::isfinite(a.outputs[0].second.at(0)));
  double sum = 0;
  for (int64_t i = 0; i < a.outputs[2].second.numElements(); ++i)
    sum += std::fabs(a.outputs[2].second.at(i));
  EXPECT_TRUE(std::isfinite(sum) && sum > 0.0) << sum;
}

INSTANTIATE_TEST_SUITE_P(Topologies, TransducerLabelTypeTest,
                         ::testing::Values("rnnt", "rna"));

/// A transducer: encoder projection, prediction network (start symbol,
/// embedding, LSTM over U + 1), the joint (tanh, projection to V) on rows
/// `ROWS`, an RNN-T and an RNA loss.
std::string modelSource(const std::string &rows) {
  std::string h = "!nn.tensor<[" + rows + ", 3], f32>";
  std::string z = "!nn.tensor<[" + rows + ", 5], f32>";
  return R"(
nn.parameter @emb : !nn.tensor<[5, 3], f32>
nn.parameter @wi : !nn.tensor<[12, 3], f32>
nn.parameter @wh : !nn.tensor<[12, 3], f32>
nn.parameter @bl : !nn.tensor<[12], f32>
nn.parameter @we : !nn.tensor<[3, 4], f32>
nn.parameter @wo : !nn.tensor<[5, 3], f32>
nn.graph @g(%x: !nn.tensor<[B, T, 4], f32>, %y: !nn.tensor<[B, U], i32>)
    dims [B: batch, T: seq(B), U: seq(B), U1: seq(B) = U + 1, J: packed(B, T, U1)] {
  %emb = nn.param_ref @emb : !nn.tensor<[5, 3], f32>
  %wi = nn.param_ref @wi : !nn.tensor<[12, 3], f32>
  %wh = nn.param_ref @wh : !nn.tensor<[12, 3], f32>
  %bl = nn.param_ref @bl : !nn.tensor<[12], f32>
  %we = nn.param_ref @we : !nn.tensor<[3, 4], f32>
  %wo = nn.param_ref @wo : !nn.tensor<[5, 3], f32>
  %s = nn.prepend_start %y start 0 : !nn.tensor<[B, U], i32> -> !nn.tensor<[B, U1], i32>
  %e = nn.embedding %s, %emb : !nn.tensor<[B, U1], i32>, !nn.tensor<[5, 3], f32>
  %p = nn.lstm forward %e, %wi, %wh, %bl : !nn.tensor<[B, U1, 3], f32>, !nn.tensor<[12, 3], f32>, !nn.tensor<[12, 3], f32>, !nn.tensor<[12], f32>
  %enc = nn.linear %x, %we : !nn.tensor<[B, T, 4], f32>, !nn.tensor<[3, 4], f32>
  %j = nn.transducer_join %enc, %p : !nn.tensor<[B, T, 3], f32>, !nn.tensor<[B, U1, 3], f32> -> )" +
         h + R"(
  %a = nn.tanh %j : )" +
         h + R"(
  %z = nn.linear %a, %wo : )" +
         h + R"(, !nn.tensor<[5, 3], f32>
  %l = nn.transducer_loss %z, %y from logits topology rnnt blank 0 : )" +
         z + R"(, !nn.tensor<[B, U], i32>
  nn.mark_loss %l as "rnnt" normalize per_sequence : !nn.tensor<[B], f32>
  %r = nn.transducer_loss %z, %y from logits topology rna blank 0 zero_infinity : )" +
         z + R"(, !nn.tensor<[B, U], i32>
  nn.mark_loss %r as "rna" normalize per_sequence scale 5.000000e-01 : !nn.tensor<[B], f32>
  nn.return
}
)";
}

TEST(TransducerModelTest, PackedJointTrainsLikeThePaddedOne) {
  CompileOptions options;
  options.grads = true;
  // GEMMs that round alike for any row count (see RandomGraphGradientTest).
  options.cpu.gemmLibrary = nn::GemmLibrary::openblas;
  Executable packed = compileOrDie(modelSource("J"), options);
  Executable padded = compileOrDie(modelSource("B, T, U1"), options);
  for (uint32_t seed : {1u, 2u, 3u}) {
    SCOPED_TRACE("seed " + std::to_string(seed));
    RunInputs inputs =
        makeInputs(packed.manifest(), seed, LengthPattern::Mixed, /*batch=*/4,
                   /*padded=*/6);
    // Labels are classes 1..4: class 0 is the blank.
    RunResult a, b;
    absl::Status sa = packed.run(inputs, a), sb = padded.run(inputs, b);
    ASSERT_TRUE(sa.ok()) << sa.message();
    ASSERT_TRUE(sb.ok()) << sb.message();
    ASSERT_EQ(a.losses.size(), 2u);
    for (size_t l = 0; l < a.losses.size(); ++l) {
      EXPECT_TRUE(std::isfinite(a.losses[l].sum)) << a.losses[l].name;
      EXPECT_GT(a.losses[l].sum, 0.0) << a.losses[l].name;
      EXPECT_TRUE(close(a.losses[l].sum, b.losses[l].sum, 1e-5))
          << a.losses[l].name << ": " << a.losses[l].sum << " vs "
          << b.losses[l].sum;
    }
    ASSERT_EQ(a.gradientNames(), b.gradientNames());
    ASSERT_EQ(a.gradientNames().size(), 6u);
    for (const std::string &name : a.gradientNames()) {
      const Tensor &ga = *a.gradient(name), &gb = *b.gradient(name);
      double scale = 0;
      for (int64_t i = 0; i < ga.numElements(); ++i)
        scale = std::max(scale, std::fabs((double)gb.at(i)));
      EXPECT_GT(scale, 0.0) << name << ": no gradient reaches it";
      for (int64_t i = 0; i < ga.numElements(); ++i)
        EXPECT_TRUE(close(ga.at(i), gb.at(i), 1e-5, 1e-6 * scale))
            << name << "[" << i << "]: " << ga.at(i) << " vs " << gb.at(i);
    }
  }
}

//===----------------------------------------------------------------------===//
// Alignment
//===----------------------------------------------------------------------===//

/// The joint packed and padded, aligned from logits, and padded taken as
/// log-probs as it is (the search needs no normalized scores).
const char *kAlignSource = R"(
nn.graph @g(%e: !nn.tensor<[B, T, 4], f32>, %p: !nn.tensor<[B, U1, 4], f32>, %y: !nn.tensor<[B, U], i32>)
    -> (!nn.tensor<[B, T], i32>, !nn.tensor<[B], f32>, !nn.tensor<[B, T], i32>, !nn.tensor<[B], f32>, !nn.tensor<[B, T], i32>, !nn.tensor<[B], f32>)
    dims [B: batch, T: seq(B), U: seq(B), U1: seq(B) = U + 1, J: packed(B, T, U1)] {
  %jp = nn.transducer_join %e, %p : !nn.tensor<[B, T, 4], f32>, !nn.tensor<[B, U1, 4], f32> -> !nn.tensor<[J, 4], f32>
  %jd = nn.transducer_join %e, %p : !nn.tensor<[B, T, 4], f32>, !nn.tensor<[B, U1, 4], f32> -> !nn.tensor<[B, T, U1, 4], f32>
  %ap, %sp = nn.transducer_align %jp, %y from logits topology rna blank 0 : !nn.tensor<[J, 4], f32>, !nn.tensor<[B, U], i32> -> !nn.tensor<[B, T], i32>, !nn.tensor<[B], f32>
  %ad, %sd = nn.transducer_align %jd, %y from logits topology rna blank 0 : !nn.tensor<[B, T, U1, 4], f32>, !nn.tensor<[B, U], i32> -> !nn.tensor<[B, T], i32>, !nn.tensor<[B], f32>
  %al, %sl = nn.transducer_align %jd, %y from log_probs topology rna blank 0 : !nn.tensor<[B, T, U1, 4], f32>, !nn.tensor<[B, U], i32> -> !nn.tensor<[B, T], i32>, !nn.tensor<[B], f32>
  nn.return %ap, %sp, %ad, %sd, %al, %sl : !nn.tensor<[B, T], i32>, !nn.tensor<[B], f32>, !nn.tensor<[B, T], i32>, !nn.tensor<[B], f32>, !nn.tensor<[B, T], i32>, !nn.tensor<[B], f32>
}
)";

/// inputsFor(c) without the loss test's incoming gradient.
RunInputs alignInputsFor(const Case &c) {
  RunInputs inputs = inputsFor(c);
  inputs.inputs.erase("g");
  return inputs;
}

/// The best RNA path by enumeration: every choice of the U frames that
/// emit the labels; each frame's class and the path's log-probability,
/// or -inf and no classes. Of equally scoring paths the first wins, in
/// the order of the masks of emitting frames: labels as early as
/// possible. `best` receives how many paths have the best score.
std::pair<std::vector<int64_t>, double> bestPathByEnumeration(
    const std::function<std::vector<double>(int64_t, int64_t)> &logProbsAt,
    const Sequence &s, int *best = nullptr) {
  int64_t T = s.frames, U = s.labels.size();
  std::vector<int64_t> bestPath;
  double bestScore = kNegInf;
  for (int64_t mask = 0; mask < (int64_t{1} << T); ++mask) {
    if (__builtin_popcountll(mask) != U)
      continue;
    std::vector<int64_t> path;
    double score = 0;
    for (int64_t t = 0, u = 0; t < T; ++t) {
      std::vector<double> lp = logProbsAt(t, u);
      bool emits = mask >> t & 1;
      path.push_back(emits ? s.labels[u] : kBlank);
      score += emits ? lp[s.labels[u]] : lp[kBlank];
      u += emits;
    }
    if (score > bestScore) {
      bestScore = score;
      bestPath = path;
      if (best)
        *best = 0;
    }
    if (best && score == bestScore)
      ++*best;
  }
  return {bestPath, bestScore};
}

/// The joint's row (t, u) as it is: encoder[t] + prediction[u].
std::function<std::vector<double>(int64_t, int64_t)>
jointAt(const SequenceData &d) {
  return [&d](int64_t t, int64_t u) {
    std::vector<double> row(kClasses);
    for (int64_t k = 0; k < kClasses; ++k)
      row[k] = d.encoder[t][k] + d.prediction[u][k];
    return row;
  };
}

void expectAlignment(const RunResult &got, int first, int64_t b,
                     const std::vector<int64_t> &path, double score,
                     double tolerance) {
  const Tensor &alignment = got.outputs[first].second;
  double value = got.outputs[first + 1].second.at(b);
  SCOPED_TRACE("result " + std::to_string(first));
  if (score == kNegInf)
    EXPECT_EQ(value, kNegInf);
  else
    EXPECT_TRUE(close(value, score, tolerance, tolerance))
        << value << " vs " << score;
  for (int64_t t = 0; t < kTime; ++t)
    EXPECT_EQ(alignment.data<int32_t>()[b * kTime + t],
              t < (int64_t)path.size() ? path[t] : -1)
        << "frame " << t;
}

TEST(TransducerAlignTest, MatchesEveryPathPackedAndPadded) {
  Executable exe = compileOrDie(kAlignSource, /*pack=*/false);
  std::mt19937 rng(33);
  for (int round = 0; round < 10; ++round) {
    SCOPED_TRACE("round " + std::to_string(round));
    Case c = randomCase(rng);
    RunResult got;
    absl::Status status = exe.run(alignInputsFor(c), got);
    ASSERT_TRUE(status.ok()) << status.message();
    ASSERT_EQ(got.outputs.size(), 6u);
    for (size_t b = 0; b < kSequences.size(); ++b) {
      SCOPED_TRACE("sequence " + std::to_string(b));
      auto [path, score] = bestPathByEnumeration(
          [&](int64_t t, int64_t u) { return logProbs(c.data[b], t, u); },
          kSequences[b]);
      for (int first : {0, 2})
        expectAlignment(got, first, b, path, score, 1e-5);
      auto [raw, rawScore] =
          bestPathByEnumeration(jointAt(c.data[b]), kSequences[b]);
      expectAlignment(got, 4, b, raw, rawScore, 1e-5);
      // Packed and padded joints: the same arithmetic.
      EXPECT_EQ(got.outputs[1].second.at(b), got.outputs[3].second.at(b));
    }
  }
  // Sequence 2 (3 labels, 2 frames) has no path; 5 (no frames, no labels)
  // the empty one.
  RunResult got;
  ASSERT_TRUE(exe.run(alignInputsFor(randomCase(rng)), got).ok());
  EXPECT_EQ(got.outputs[1].second.at(2), kNegInf);
  EXPECT_EQ(got.outputs[1].second.at(5), 0.0);
}

/// randomCase with every encoder and prediction value one of three exact
/// levels: sums of them are exact in float64, so many paths tie.
Case tiedCase(std::mt19937 &rng) {
  const double levels[] = {-0.5, -1.0, -1.5};
  Case c = randomCase(rng);
  for (SequenceData &d : c.data) {
    for (auto &row : d.encoder)
      for (double &v : row)
        v = levels[rng() % 3];
    for (auto &row : d.prediction)
      for (double &v : row)
        v = levels[rng() % 3];
  }
  return c;
}

/// Exact values (sums of them are exact in float64): many tied paths, and
/// the compiled op breaks each tie as the reference evaluator, written
/// from the op's rule (the blank wins), does.
TEST(TransducerAlignTest, TiesGoToTheBlankAsInTheReference) {
  Executable exe = compileOrDie(kAlignSource, /*pack=*/false);
  std::mt19937 rng(34);
  int tied = 0;
  for (int round = 0; round < 20; ++round) {
    SCOPED_TRACE("round " + std::to_string(round));
    Case c = tiedCase(rng);
    RunInputs inputs = alignInputsFor(c);
    RunResult got;
    ASSERT_TRUE(exe.run(inputs, got).ok());
    reference::Result want;
    absl::Status status = reference::evaluate(kAlignSource, "g", inputs, want);
    ASSERT_TRUE(status.ok()) << status.message();
    for (size_t b = 0; b < kSequences.size(); ++b) {
      SCOPED_TRACE("sequence " + std::to_string(b));
      // From log-probs (result 4) the scores are the joint's own sums:
      // exact, so ties are exact and the rule decides.
      std::vector<int64_t> path;
      for (int64_t t = 0; t < kSequences[b].frames; ++t)
        path.push_back((int64_t)want.outputs[4].data[b * kTime + t]);
      double score = want.outputs[5].data[b];
      if (score == kNegInf)
        path.clear();
      expectAlignment(got, 4, b, path, score, 1e-6);
      // The enumeration's first best path is the rule's too (labels as
      // early as possible); count the sequences where several paths tied.
      int best = 0;
      auto [enumerated, bestScore] =
          bestPathByEnumeration(jointAt(c.data[b]), kSequences[b], &best);
      EXPECT_EQ(bestScore, score);
      EXPECT_EQ(enumerated, path);
      tied += best > 1;
    }
  }
  EXPECT_GT(tied, 20) << "ties the rule had to break";
}

/// RNN-T alignments, packed and padded from logits and padded from
/// log-probs, over the computed dims A, A2, A3 (one per producer).
const char *kRnntAlignSource = R"(
nn.graph @g(%e: !nn.tensor<[B, T, 4], f32>, %p: !nn.tensor<[B, U1, 4], f32>, %y: !nn.tensor<[B, U], i32>)
    -> (!nn.tensor<[B, A], i32>, !nn.tensor<[B], f32>, !nn.tensor<[B, A2], i32>, !nn.tensor<[B], f32>, !nn.tensor<[B, A3], i32>, !nn.tensor<[B], f32>)
    dims [B: batch, T: seq(B), U: seq(B), U1: seq(B) = U + 1, J: packed(B, T, U1), A: seq(B) computed, A2: seq(B) computed, A3: seq(B) computed] {
  %jp = nn.transducer_join %e, %p : !nn.tensor<[B, T, 4], f32>, !nn.tensor<[B, U1, 4], f32> -> !nn.tensor<[J, 4], f32>
  %jd = nn.transducer_join %e, %p : !nn.tensor<[B, T, 4], f32>, !nn.tensor<[B, U1, 4], f32> -> !nn.tensor<[B, T, U1, 4], f32>
  %ap, %sp = nn.transducer_align %jp, %y from logits topology rnnt blank 0 : !nn.tensor<[J, 4], f32>, !nn.tensor<[B, U], i32> -> !nn.tensor<[B, A], i32>, !nn.tensor<[B], f32>
  %ad, %sd = nn.transducer_align %jd, %y from logits topology rnnt blank 0 : !nn.tensor<[B, T, U1, 4], f32>, !nn.tensor<[B, U], i32> -> !nn.tensor<[B, A2], i32>, !nn.tensor<[B], f32>
  %al, %sl = nn.transducer_align %jd, %y from log_probs topology rnnt blank 0 : !nn.tensor<[B, T, U1, 4], f32>, !nn.tensor<[B, U], i32> -> !nn.tensor<[B, A3], i32>, !nn.tensor<[B], f32>
  nn.return %ap, %sp, %ad, %sd, %al, %sl : !nn.tensor<[B, A], i32>, !nn.tensor<[B], f32>, !nn.tensor<[B, A2], i32>, !nn.tensor<[B], f32>, !nn.tensor<[B, A3], i32>, !nn.tensor<[B], f32>
}
)";

/// The best RNN-T path by enumeration: every placement of the U labels
/// among the first T + U - 1 emissions (the last is the last frame's
/// blank); a label stays on its frame, a blank moves to the next. The
/// classes in order and the log-probability; nothing and -inf without
/// frames. `best` receives how many paths have the best score.
std::pair<std::vector<int64_t>, double> bestRnntPathByEnumeration(
    const std::function<std::vector<double>(int64_t, int64_t)> &logProbsAt,
    const Sequence &s, int *best = nullptr) {
  int64_t T = s.frames, U = s.labels.size();
  if (T == 0)
    return {{}, kNegInf};
  std::vector<int64_t> bestPath;
  double bestScore = kNegInf;
  for (int64_t mask = 0; mask < (int64_t{1} << (T + U - 1)); ++mask) {
    if (__builtin_popcountll(mask) != U)
      continue;
    std::vector<int64_t> path;
    double score = 0;
    for (int64_t k = 0, t = 0, u = 0; k < T + U; ++k) {
      std::vector<double> lp = logProbsAt(t, u);
      bool emits = mask >> k & 1;
      path.push_back(emits ? s.labels[u] : kBlank);
      score += emits ? lp[s.labels[u]] : lp[kBlank];
      (emits ? u : t) += 1;
    }
    if (score > bestScore) {
      bestScore = score;
      bestPath = path;
      if (best)
        *best = 0;
    }
    if (best && score == bestScore)
      ++*best;
  }
  return {bestPath, bestScore};
}

/// Result `first` (the path, over a computed dim) and its score and
/// lengths (`lengths`: the computed dim's lengths output) for sequence b.
void expectRnntAlignment(const RunResult &got, int first, const Tensor &lengths,
                         int64_t b, const std::vector<int64_t> &path,
                         double score, double tolerance) {
  const Tensor &alignment = got.outputs[first].second;
  double value = got.outputs[first + 1].second.at(b);
  SCOPED_TRACE("result " + std::to_string(first));
  if (score == kNegInf)
    EXPECT_EQ(value, kNegInf);
  else
    EXPECT_TRUE(close(value, score, tolerance, tolerance))
        << value << " vs " << score;
  ASSERT_EQ(lengths.data<int32_t>()[b], (int32_t)path.size());
  int64_t width = alignment.shape()[1];
  for (int64_t k = 0; k < width; ++k)
    EXPECT_EQ(alignment.data<int32_t>()[b * width + k],
              k < (int64_t)path.size() ? path[k] : -1)
        << "position " << k;
}

/// The output named `name` of a run.
const Tensor &outputNamed(const RunResult &got, const std::string &name) {
  for (const auto &[outputName, tensor] : got.outputs)
    if (outputName == name)
      return tensor;
  ADD_FAILURE() << "no output " << name;
  return got.outputs.front().second;
}

TEST(TransducerAlignTest, RnntMatchesEveryPathPackedAndPadded) {
  Executable exe = compileOrDie(kRnntAlignSource, /*pack=*/false);
  std::mt19937 rng(35);
  for (int round = 0; round < 10; ++round) {
    SCOPED_TRACE("round " + std::to_string(round));
    Case c = randomCase(rng);
    RunResult got;
    absl::Status status = exe.run(alignInputsFor(c), got);
    ASSERT_TRUE(status.ok()) << status.message();
    const Tensor &packedLengths = outputNamed(got, "lengths:A");
    const Tensor &paddedLengths = outputNamed(got, "lengths:A2");
    const Tensor &rawLengths = outputNamed(got, "lengths:A3");
    // Every sequence has a path but the one without frames: T + U
    // positions, the longest of them the padded width.
    EXPECT_EQ(got.outputs[0].second.shape()[1], 5 + 3);
    for (size_t b = 0; b < kSequences.size(); ++b) {
      SCOPED_TRACE("sequence " + std::to_string(b));
      auto [path, score] = bestRnntPathByEnumeration(
          [&](int64_t t, int64_t u) { return logProbs(c.data[b], t, u); },
          kSequences[b]);
      expectRnntAlignment(got, 0, packedLengths, b, path, score, 1e-5);
      expectRnntAlignment(got, 2, paddedLengths, b, path, score, 1e-5);
      auto [raw, rawScore] =
          bestRnntPathByEnumeration(jointAt(c.data[b]), kSequences[b]);
      expectRnntAlignment(got, 4, rawLengths, b, raw, rawScore, 1e-5);
      EXPECT_EQ(got.outputs[1].second.at(b), got.outputs[3].second.at(b));
    }
  }
}

/// Exact values, many tied paths: the compiled op breaks each tie as the
/// reference evaluator, written from the op's rule (the blank wins), does,
/// and both find the enumeration's best score.
TEST(TransducerAlignTest, RnntTiesGoToTheBlankAsInTheReference) {
  Executable exe = compileOrDie(kRnntAlignSource, /*pack=*/false);
  std::mt19937 rng(36);
  int tied = 0;
  for (int round = 0; round < 20; ++round) {
    SCOPED_TRACE("round " + std::to_string(round));
    Case c = tiedCase(rng);
    RunInputs inputs = alignInputsFor(c);
    RunResult got;
    ASSERT_TRUE(exe.run(inputs, got).ok());
    reference::Result want;
    absl::Status status =
        reference::evaluate(kRnntAlignSource, "g", inputs, want);
    ASSERT_TRUE(status.ok()) << status.message();
    const Tensor &lengths = outputNamed(got, "lengths:A3");
    int64_t width = want.outputs[4].shape[1];
    for (size_t b = 0; b < kSequences.size(); ++b) {
      SCOPED_TRACE("sequence " + std::to_string(b));
      std::vector<int64_t> path;
      for (int64_t k = 0;
           k < kSequences[b].frames + (int64_t)kSequences[b].labels.size() &&
           kSequences[b].frames > 0;
           ++k)
        path.push_back((int64_t)want.outputs[4].data[b * width + k]);
      double score = want.outputs[5].data[b];
      expectRnntAlignment(got, 4, lengths, b, path, score, 1e-6);
      int best = 0;
      auto [enumerated, bestScore] =
          bestRnntPathByEnumeration(jointAt(c.data[b]), kSequences[b], &best);
      EXPECT_EQ(bestScore, score);
      tied += best > 1;
    }
  }
  EXPECT_GT(tied, 20) << "ties the rule had to break";
}

} // namespace
