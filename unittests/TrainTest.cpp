//===- TrainTest.cpp - optimizers, train steps, checkpoints, convergence --===//
//
// The optimizer ops against float64 formulas written here from PyTorch's
// documented update rules; initialization against its schemes; a compiled
// train step packed vs padded over 20 steps with dropout; resuming from a
// checkpoint bit for bit; and convergence on the synthetic segment task.
//
//===----------------------------------------------------------------------===//

#include "ExecutionUtil.h"
#include "ThreadCommunicator.h"

#include "nn/Npy.h"
#include "nn/Synthetic.h"
#include "nn/Train.h"

#include <cstdio>
#include <cstring>
#include <limits>
#include <unistd.h>

using namespace nn;
using namespace nn::testing;

namespace {

//===----------------------------------------------------------------------===//
// Update ops vs float64 formulas
//===----------------------------------------------------------------------===//

struct UpdateCase {
  const char *name;
  /// The update op line (operands %p, %g, %m, %v, %lr, %t, %s), its
  /// results and how many state tensors it carries (m, v).
  const char *update;
  int states;
  bool clipped;
  /// The float64 update of one element: p, m, v in place; s the clip
  /// factor (1 when not clipped).
  std::function<void(double &p, double g, double &m, double &v, double lr,
                     int t, double s)>
      reference;
};

std::string updateGraph(const UpdateCase &c) {
  std::string results = "%p1";
  std::string types = "!nn.tensor<[3, 4], f32>";
  for (int i = 0; i < c.states; ++i) {
    results += i == 0 ? ", %m1" : ", %v1";
    types += ", !nn.tensor<[3, 4], f32>";
  }
  return std::string(R"(
nn.graph @g(%p: !nn.tensor<[3, 4], f32>, %g: !nn.tensor<[3, 4], f32>,
            %m: !nn.tensor<[3, 4], f32>, %v: !nn.tensor<[3, 4], f32>,
            %lr: !nn.tensor<[], f32>, %t: !nn.tensor<[], i32>)
    -> ()") +
         types + R"(, !nn.tensor<[], f32>) dims [] {
  %n = nn.global_norm %g : !nn.tensor<[3, 4], f32>
  %s = nn.clip_factor %n max_norm 5.000000e-01
  )" + results +
         " = " + c.update + R"( : !nn.tensor<[3, 4], f32>
  nn.return )" +
         results + ", %n : " + types +
         R"(, !nn.tensor<[], f32>
})";
}

/// Every tensor of `expected` is in `actual` with the same bits.
void expectSameBits(const std::map<std::string, Tensor> &expected,
                    const std::map<std::string, Tensor> &actual) {
  for (const auto &[name, tensor] : expected)
    EXPECT_EQ(
        std::memcmp(tensor.raw(), actual.at(name).raw(), tensor.sizeInBytes()),
        0)
        << name;
}

const double kBeta1 = 0.9, kBeta2 = 0.99, kEps = 1e-8, kDecay = 0.1,
             kMomentum = 0.8;

std::vector<UpdateCase> updateCases() {
  auto adam = [](bool decoupled) {
    return [decoupled](double &p, double g, double &m, double &v, double lr,
                       int t, double s) {
      double grad = g * s;
      if (decoupled)
        p *= 1 - lr * kDecay;
      else
        grad += kDecay * p;
      m = kBeta1 * m + (1 - kBeta1) * grad;
      v = kBeta2 * v + (1 - kBeta2) * grad * grad;
      double c1 = 1 - std::pow(kBeta1, t), c2 = 1 - std::pow(kBeta2, t);
      p -= lr / c1 * m / (std::sqrt(v) / std::sqrt(c2) + kEps);
    };
  };
  auto momentum = [](bool nesterov) {
    return [nesterov](double &p, double g, double &velocity, double &,
                      double lr, int, double s) {
      double grad = g * s + kDecay * p;
      velocity = kMomentum * velocity + grad;
      p -= lr * (nesterov ? grad + kMomentum * velocity : velocity);
    };
  };
  return {
      {"sgd", "nn.sgd_update %p, %g lr %lr", 0, false,
       [](double &p, double g, double &, double &, double lr, int, double) {
         p -= lr * g;
       }},
      {"sgd_clipped_decay",
       "nn.sgd_update %p, %g lr %lr scale %s weight_decay 1.000000e-01", 0,
       true,
       [](double &p, double g, double &, double &, double lr, int, double s) {
         p -= lr * (g * s + kDecay * p);
       }},
      {"momentum",
       "nn.momentum_update %p, %g, %m lr %lr scale %s momentum 8.000000e-01 "
       "weight_decay 1.000000e-01",
       1, true, momentum(false)},
      {"nesterov",
       "nn.momentum_update %p, %g, %m lr %lr scale %s momentum 8.000000e-01 "
       "nesterov weight_decay 1.000000e-01",
       1, true, momentum(true)},
      {"adam_l2",
       "nn.adam_update %p, %g, %m, %v lr %lr step %t beta1 9.000000e-01 "
       "beta2 9.900000e-01 epsilon 1.000000e-08 weight_decay 1.000000e-01",
       2, false, adam(false)},
      {"adamw_clipped",
       "nn.adam_update %p, %g, %m, %v lr %lr step %t scale %s beta1 "
       "9.000000e-01 beta2 9.900000e-01 epsilon 1.000000e-08 weight_decay "
       "1.000000e-01 decoupled",
       2, true, adam(true)},
  };
}

// GoogleTest looks this name up. NOLINTNEXTLINE(readability-identifier-naming)
void PrintTo(const UpdateCase &c, std::ostream *os) { *os << c.name; }

class UpdateTest : public ::testing::TestWithParam<UpdateCase> {};

TEST_P(UpdateTest, MatchesFloat64Formula) {
  const UpdateCase &c = GetParam();
  CompileOptions options;
  Executable exe = compileOrDie(updateGraph(c), options);
  ASSERT_FALSE(exe.manifest().graph.empty());
  std::mt19937 rng(7);
  std::normal_distribution<double> normal;
  std::vector<double> p(12), m(12, 0.0), v(12, 0.0);
  for (double &x : p)
    x = normal(rng);
  // Five steps, each result fed back: the state's evolution and the bias
  // corrections at t = 1..5 are checked, not one step alone.
  for (int t = 1; t <= 5; ++t) {
    std::vector<double> g(12);
    double squares = 0;
    for (double &x : g) {
      x = normal(rng);
      squares += x * x;
    }
    double lr = 0.01 * t;
    RunInputs inputs;
    auto tensor = [](const std::vector<double> &values) {
      std::vector<float> narrow(values.begin(), values.end());
      return Tensor::of<float>(DType::f32, {3, 4}, narrow);
    };
    inputs.inputs["p"] = tensor(p);
    inputs.inputs["g"] = tensor(g);
    inputs.inputs["m"] = tensor(m);
    inputs.inputs["v"] = tensor(v);
    inputs.inputs["lr"] = Tensor::of<float>(DType::f32, {}, {(float)lr});
    inputs.inputs["t"] = Tensor::of<int32_t>(DType::i32, {}, {t});
    RunResult result;
    absl::Status status = exe.run(inputs, result);
    ASSERT_TRUE(status.ok()) << status.message();
    // The inputs as the op saw them (float32), then the formula.
    for (std::vector<double> *values : {&p, &g, &m, &v})
      for (double &x : *values)
        x = (double)(float)x;
    double norm = std::sqrt(squares);
    double scale = c.clipped ? std::min(1.0, 0.5 / (norm + 1e-6)) : 1.0;
    EXPECT_TRUE(close(result.outputs.back().second.at(0), norm, 1e-6))
        << "norm at step " << t;
    for (int i = 0; i < 12; ++i)
      c.reference(p[i], g[i], m[i], v[i], (double)(float)lr, t, scale);
    for (int i = 0; i < 12; ++i) {
      EXPECT_TRUE(close(result.outputs[0].second.at(i), p[i], 1e-5, 1e-7))
          << c.name << " param " << i << " at step " << t << ": "
          << result.outputs[0].second.at(i) << " vs " << p[i];
      if (c.states >= 1) {
        EXPECT_TRUE(close(result.outputs[1].second.at(i), m[i], 1e-5, 1e-7))
            << c.name << " state 0, element " << i << " at step " << t;
      }
      if (c.states >= 2) {
        EXPECT_TRUE(close(result.outputs[2].second.at(i), v[i], 1e-5, 1e-9))
            << c.name << " state 1, element " << i << " at step " << t;
      }
    }
    // Continue from the compiled values, as a train step would.
    for (int i = 0; i < 12; ++i) {
      p[i] = result.outputs[0].second.at(i);
      if (c.states >= 1)
        m[i] = result.outputs[1].second.at(i);
      if (c.states >= 2)
        v[i] = result.outputs[2].second.at(i);
    }
  }
}

INSTANTIATE_TEST_SUITE_P(Optimizers, UpdateTest,
                         ::testing::ValuesIn(updateCases()),
                         [](const auto &info) { return info.param.name; });

// A non-finite gradient makes a non-finite norm, and clipping an infinite
// norm scales by 0 (a NaN one by NaN): the step reports, never hides, it.
TEST(UpdateTest, NonFiniteNormsPropagate) {
  Executable exe = compileOrDie(R"(
nn.graph @g(%g: !nn.tensor<[3], f32>) -> (!nn.tensor<[], f32>, !nn.tensor<[], f32>) dims [] {
  %n = nn.global_norm %g : !nn.tensor<[3], f32>
  %s = nn.clip_factor %n max_norm 1.000000e+00
  nn.return %n, %s : !nn.tensor<[], f32>, !nn.tensor<[], f32>
})",
                                CompileOptions());
  for (float bad : {INFINITY, NAN}) {
    RunInputs inputs;
    inputs.inputs["g"] = Tensor::of<float>(DType::f32, {3}, {1.0f, bad, 2.0f});
    RunResult result;
    ASSERT_TRUE(exe.run(inputs, result).ok());
    double norm = result.outputs[0].second.at(0);
    double scale = result.outputs[1].second.at(0);
    if (std::isnan(bad)) {
      EXPECT_TRUE(std::isnan(norm));
      EXPECT_TRUE(std::isnan(scale));
    } else {
      EXPECT_TRUE(std::isinf(norm));
      EXPECT_EQ(scale, 0.0);
    }
  }
}

//===----------------------------------------------------------------------===//
// Initialization
//===----------------------------------------------------------------------===//

const char *kInitModel = R"(
nn.parameter @emb : !nn.tensor<[10, 4], f32>
nn.parameter @"conv.w" : !nn.tensor<[6, 3, 4], f32>
nn.parameter @"conv.b" : !nn.tensor<[6], f32>
nn.parameter @"lstm.w_ih" : !nn.tensor<[8, 6], f32>
nn.parameter @"lstm.w_hh" : !nn.tensor<[8, 2], f32>
nn.parameter @"lstm.b" : !nn.tensor<[8], f32>
nn.parameter @"ln.g" : !nn.tensor<[2], f32>
nn.parameter @"ln.b" : !nn.tensor<[2], f32>
nn.parameter @"out.w" : !nn.tensor<[500, 2], f32>
nn.parameter @"out.b" : !nn.tensor<[500], f32>
nn.graph @g(%tokens: !nn.tensor<[B, T], i32>, %y: !nn.tensor<[B, T], i32>)
    dims [B: batch, T: seq(B)] {
  %emb = nn.param_ref @emb : !nn.tensor<[10, 4], f32>
  %e = nn.embedding %tokens, %emb : !nn.tensor<[B, T], i32>, !nn.tensor<[10, 4], f32>
  %cw = nn.param_ref @"conv.w" : !nn.tensor<[6, 3, 4], f32>
  %cb = nn.param_ref @"conv.b" : !nn.tensor<[6], f32>
  %c = nn.conv1d %e, %cw, %cb stride 1 : (!nn.tensor<[B, T, 4], f32>, !nn.tensor<[6, 3, 4], f32>, !nn.tensor<[6], f32>) -> !nn.tensor<[B, T, 6], f32>
  %wi = nn.param_ref @"lstm.w_ih" : !nn.tensor<[8, 6], f32>
  %wh = nn.param_ref @"lstm.w_hh" : !nn.tensor<[8, 2], f32>
  %lb = nn.param_ref @"lstm.b" : !nn.tensor<[8], f32>
  %h = nn.lstm forward %c, %wi, %wh, %lb : !nn.tensor<[B, T, 6], f32>, !nn.tensor<[8, 6], f32>, !nn.tensor<[8, 2], f32>, !nn.tensor<[8], f32>
  %g = nn.param_ref @"ln.g" : !nn.tensor<[2], f32>
  %b = nn.param_ref @"ln.b" : !nn.tensor<[2], f32>
  %n = nn.layer_norm %h, %g, %b : !nn.tensor<[B, T, 2], f32>, !nn.tensor<[2], f32>, !nn.tensor<[2], f32>
  %w = nn.param_ref @"out.w" : !nn.tensor<[500, 2], f32>
  %ob = nn.param_ref @"out.b" : !nn.tensor<[500], f32>
  %l = nn.linear %n, %w, %ob : !nn.tensor<[B, T, 2], f32>, !nn.tensor<[500, 2], f32>, !nn.tensor<[500], f32>
  %ce = nn.cross_entropy %l, %y from logits : !nn.tensor<[B, T, 500], f32>, !nn.tensor<[B, T], i32>
  nn.mark_loss %ce as "ce" normalize per_frame : !nn.tensor<[B, T], f32>
  nn.return
})";

TEST(InitTest, SchemesPerLayerAndDeterministicStreams) {
  CompileOptions options;
  options.grads = true;
  options.trainStep = true;
  Executable exe = compileOrDie(kInitModel, options);
  const Manifest &manifest = exe.manifest();
  std::map<std::string, std::pair<std::string, double>> expected = {
      {"emb", {"normal", 1.0}},
      {"conv.w", {"uniform", std::sqrt(6.0 / (3 * 4 + 3 * 6))}},
      {"conv.b", {"zeros", 0}},
      {"lstm.w_ih", {"uniform", 1 / std::sqrt(2.0)}},
      {"lstm.w_hh", {"uniform", 1 / std::sqrt(2.0)}},
      {"lstm.b", {"zeros", 0}},
      {"ln.g", {"ones", 0}},
      {"ln.b", {"zeros", 0}},
      {"out.w", {"uniform", std::sqrt(6.0 / (2 + 500))}},
      {"out.b", {"zeros", 0}},
      {"optimizer/adam_m/out.w", {"zeros", 0}},
      {"optimizer/adam_v/lstm.b", {"zeros", 0}}};
  for (const TensorInfo &info : manifest.parameters) {
    auto found = expected.find(info.name);
    if (found == expected.end())
      continue;
    EXPECT_EQ(info.init, found->second.first) << info.name;
    EXPECT_NEAR(info.initScale, found->second.second, 1e-12) << info.name;
    expected.erase(found);
  }
  EXPECT_TRUE(expected.empty()) << expected.size() << " parameters missing";

  std::map<std::string, Tensor> a, b, c;
  ASSERT_TRUE(initializeParameters(manifest, 5, a).ok());
  ASSERT_TRUE(initializeParameters(manifest, 5, b).ok());
  ASSERT_TRUE(initializeParameters(manifest, 6, c).ok());
  for (const auto &[name, tensor] : a) {
    EXPECT_EQ(std::memcmp(tensor.raw(), b.at(name).raw(), tensor.sizeInBytes()),
              0)
        << name << " differs between two draws with one seed";
  }
  EXPECT_NE(std::memcmp(a.at("out.w").raw(), c.at("out.w").raw(),
                        a.at("out.w").sizeInBytes()),
            0);
  // Values within their bounds, with the spread of the distribution: a
  // uniform in [-a, a] has standard deviation a / sqrt(3).
  auto moments = [](const Tensor &t) {
    double sum = 0, squares = 0, extreme = 0;
    for (int64_t i = 0; i < t.numElements(); ++i) {
      sum += t.at(i);
      squares += t.at(i) * t.at(i);
      extreme = std::max(extreme, std::fabs(t.at(i)));
    }
    double n = (double)t.numElements();
    return std::make_tuple(sum / n, std::sqrt(squares / n), extreme);
  };
  double bound = std::sqrt(6.0 / 502);
  auto [mean, rms, extreme] = moments(a.at("out.w"));
  EXPECT_LE(extreme, bound);
  EXPECT_NEAR(rms, bound / std::sqrt(3.0), 0.1 * bound / std::sqrt(3.0));
  EXPECT_NEAR(mean, 0.0, 0.1 * bound);
  for (const char *zero :
       {"conv.b", "lstm.b", "ln.b", "out.b", "optimizer/adam_v/out.w"})
    EXPECT_EQ(std::get<2>(moments(a.at(zero))), 0.0) << zero;
  EXPECT_EQ(a.at("ln.g").at(0), 1.0);
  EXPECT_EQ(a.at("ln.g").at(1), 1.0);

  // A parameter's stream depends on its name, not on the others: the
  // graph with one parameter less draws the same values for the rest.
  Manifest fewer = manifest;
  fewer.parameters.erase(fewer.parameters.begin());
  std::map<std::string, Tensor> d;
  ASSERT_TRUE(initializeParameters(fewer, 5, d).ok());
  for (const auto &[name, tensor] : d)
    EXPECT_EQ(std::memcmp(tensor.raw(), a.at(name).raw(), tensor.sizeInBytes()),
              0)
        << name;
}

//===----------------------------------------------------------------------===//
// Train steps on the segment task
//===----------------------------------------------------------------------===//

/// A BLSTM with dropout, frame-wise CE (and its frame error) and CTC on
/// the encoder: both loss kinds, a packed tail and a padded one.
const char *kSegmentModel = R"(
nn.parameter @"lstm.w_ih" : !nn.tensor<[2, 64, 12], f32>
nn.parameter @"lstm.w_hh" : !nn.tensor<[2, 64, 16], f32>
nn.parameter @"lstm.b" : !nn.tensor<[2, 64], f32>
nn.parameter @"out.w" : !nn.tensor<[6, 32], f32>
nn.parameter @"out.b" : !nn.tensor<[6], f32>
nn.parameter @"ctc.w" : !nn.tensor<[6, 32], f32>
nn.graph @am(%features: !nn.tensor<[B, T, 12], f32>,
             %frame_labels: !nn.tensor<[B, T], i32>,
             %labels: !nn.tensor<[B, U], i32>)
    dims [B: batch, T: seq(B), U: seq(B)] {
  %wi = nn.param_ref @"lstm.w_ih" : !nn.tensor<[2, 64, 12], f32>
  %wh = nn.param_ref @"lstm.w_hh" : !nn.tensor<[2, 64, 16], f32>
  %b = nn.param_ref @"lstm.b" : !nn.tensor<[2, 64], f32>
  %h = nn.lstm bidirectional %features, %wi, %wh, %b
      : !nn.tensor<[B, T, 12], f32>, !nn.tensor<[2, 64, 12], f32>,
        !nn.tensor<[2, 64, 16], f32>, !nn.tensor<[2, 64], f32>
  %d = nn.dropout %h rate 2.000000e-01 : !nn.tensor<[B, T, 32], f32>
  %wo = nn.param_ref @"out.w" : !nn.tensor<[6, 32], f32>
  %bo = nn.param_ref @"out.b" : !nn.tensor<[6], f32>
  %logits = nn.linear %d, %wo, %bo : !nn.tensor<[B, T, 32], f32>, !nn.tensor<[6, 32], f32>, !nn.tensor<[6], f32>
  %ce = nn.cross_entropy %logits, %frame_labels from logits label_smoothing 1.000000e-01
      : !nn.tensor<[B, T, 6], f32>, !nn.tensor<[B, T], i32>
  nn.mark_loss %ce as "ce" normalize per_frame : !nn.tensor<[B, T], f32>
  %err = nn.frame_error %logits, %frame_labels : !nn.tensor<[B, T, 6], f32>, !nn.tensor<[B, T], i32>
  nn.mark_loss %err as "fer" normalize per_frame as_error : !nn.tensor<[B, T], f32>
  %wc = nn.param_ref @"ctc.w" : !nn.tensor<[6, 32], f32>
  %cl = nn.linear %d, %wc : !nn.tensor<[B, T, 32], f32>, !nn.tensor<[6, 32], f32>
  %ctc = nn.ctc_loss %cl, %labels from logits blank 0
      : !nn.tensor<[B, T, 6], f32>, !nn.tensor<[B, U], i32>
  nn.mark_loss %ctc as "ctc" normalize per_sequence scale 5.000000e-01
      : !nn.tensor<[B], f32>
  nn.return
})";

Executable compileStep(const std::string &source, bool pack,
                       const OptimizerOptions &optimizer) {
  CompileOptions options;
  options.optimize.pack = pack;
  options.grads = true;
  options.training = true;
  options.trainStep = true;
  options.optimizer = optimizer;
  return compileOrDie(source, options);
}

/// Runs `steps` train steps of `exe` from `state`, batches and dropout
/// seeds drawn from (seed, batch number) as nn-train does.
std::vector<StepReport> train(const Executable &exe, const SegmentBinding &task,
                              int64_t batch, double lr, int steps,
                              TrainState &state) {
  std::vector<StepReport> reports;
  for (int i = 0; i < steps; ++i) {
    std::mt19937 rng(1000 + (uint32_t)state.batches);
    RunInputs inputs = segmentBatchFor(task, batch, rng);
    StepReport report;
    absl::Status status =
        runTrainStep(exe, std::move(inputs), lr,
                     0x5eed0000u + (uint32_t)state.batches, state, report);
    EXPECT_TRUE(status.ok()) << status.message();
    if (!status.ok())
      break;
    reports.push_back(report);
  }
  return reports;
}

SegmentBinding bindOrDie(const Manifest &manifest, double noise = 0.5) {
  absl::StatusOr<SegmentBinding> binding = bindSegmentTask(manifest);
  EXPECT_TRUE(binding.ok()) << binding.status().message();
  SegmentBinding bound = binding.ok() ? *binding : SegmentBinding();
  bound.task.noise = noise;
  bound.task.seed = 3;
  return bound;
}

TEST(TrainStepTest, PackedAndPaddedTrajectoriesAgree) {
  OptimizerOptions adam;
  adam.clipNorm = 5;
  Executable packed = compileStep(kSegmentModel, true, adam);
  Executable padded = compileStep(kSegmentModel, false, adam);
  SegmentBinding task = bindOrDie(packed.manifest());
  ASSERT_EQ(task.task.classes, 6);
  TrainState a, b;
  ASSERT_TRUE(initializeParameters(packed.manifest(), 11, a.parameters).ok());
  b = a;
  std::vector<StepReport> ra = train(packed, task, 6, 3e-3, 20, a);
  std::vector<StepReport> rb = train(padded, task, 6, 3e-3, 20, b);
  ASSERT_EQ(ra.size(), 20u);
  ASSERT_EQ(rb.size(), 20u);
  for (size_t s = 0; s < ra.size(); ++s) {
    ASSERT_EQ(ra[s].losses.size(), rb[s].losses.size());
    EXPECT_TRUE(ra[s].applied && rb[s].applied);
    for (size_t l = 0; l < ra[s].losses.size(); ++l)
      EXPECT_TRUE(
          close(ra[s].losses[l].normalized, rb[s].losses[l].normalized, 1e-4))
          << "step " << s + 1 << " loss " << ra[s].losses[l].name << ": "
          << ra[s].losses[l].normalized << " packed vs "
          << rb[s].losses[l].normalized << " padded";
    EXPECT_TRUE(close(ra[s].gradNorm, rb[s].gradNorm, 1e-4))
        << "step " << s + 1;
  }
  // The packed tail really is packed (and computes fewer frames).
  bool anyPacked = false;
  for (const LossValue &loss : ra[0].losses)
    anyPacked |= loss.packed && loss.framesComputed < loss.framesPadded;
  EXPECT_TRUE(anyPacked);
  // The trajectory moved: training changed the losses.
  EXPECT_NE(ra.front().losses[0].normalized, ra.back().losses[0].normalized);
  for (const auto &[name, tensor] : a.parameters)
    for (int64_t i = 0; i < tensor.numElements(); ++i)
      ASSERT_TRUE(close(tensor.at(i), b.parameters.at(name).at(i), 1e-3, 1e-5))
          << name << "[" << i << "]";
}

TEST(TrainStepTest, ResumeFromCheckpointIsBitIdentical) {
  OptimizerOptions adamw;
  adamw.kind = OptimizerKind::adamw;
  adamw.weightDecay = 0.01;
  Executable exe = compileStep(kSegmentModel, true, adamw);
  SegmentBinding task = bindOrDie(exe.manifest());
  TrainState straight;
  ASSERT_TRUE(
      initializeParameters(exe.manifest(), 2, straight.parameters).ok());
  TrainState first = straight;
  std::vector<StepReport> whole = train(exe, task, 5, 1e-3, 8, straight);

  train(exe, task, 5, 1e-3, 4, first);
  std::string path =
      ::testing::TempDir() + "resume-" + std::to_string(getpid()) + ".npz";
  ASSERT_TRUE(saveCheckpoint(path, first).ok());
  TrainState loaded, resumed;
  ASSERT_TRUE(loadCheckpoint(path, loaded).ok());
  EXPECT_EQ(loaded.step, 4);
  EXPECT_EQ(loaded.batches, 4);
  ASSERT_TRUE(
      initializeParameters(exe.manifest(), 99, resumed.parameters).ok());
  ASSERT_TRUE(
      restoreParameters(exe.manifest(), loaded, true, path, resumed).ok());
  std::vector<StepReport> rest = train(exe, task, 5, 1e-3, 4, resumed);
  std::remove(path.c_str());
  ASSERT_EQ(rest.size(), 4u);
  for (size_t s = 0; s < rest.size(); ++s)
    for (size_t l = 0; l < rest[s].losses.size(); ++l)
      EXPECT_EQ(rest[s].losses[l].sum, whole[4 + s].losses[l].sum)
          << "step " << 5 + s << " loss " << rest[s].losses[l].name;
  EXPECT_EQ(resumed.step, straight.step);
  expectSameBits(straight.parameters, resumed.parameters);
}

TEST(TrainStepTest, NonFiniteLossLeavesTheStateAlone) {
  Executable exe = compileStep(kSegmentModel, true, OptimizerOptions());
  SegmentBinding task = bindOrDie(exe.manifest());
  TrainState state;
  ASSERT_TRUE(initializeParameters(exe.manifest(), 1, state.parameters).ok());
  TrainState before = state;
  std::mt19937 rng(1);
  RunInputs batch = segmentBatchFor(task, 3, rng);
  batch.inputs.at("features").data<float>()[0] = NAN; // a valid frame
  StepReport report;
  ASSERT_TRUE(runTrainStep(exe, batch, 1e-3, 1, state, report).ok());
  EXPECT_FALSE(report.applied);
  EXPECT_TRUE(std::isnan(report.objective) || std::isnan(report.gradNorm));
  EXPECT_EQ(state.step, 0);
  EXPECT_EQ(state.batches, 1);
  expectSameBits(before.parameters, state.parameters);
}

// A step compiled for one process, run with several ranks current, would
// train each rank on its part alone: refused before anything moves. The
// data-parallel step says so in its manifest.
TEST(TrainStepTest, OnlyADataParallelStepRunsOnSeveralRanks) {
  Executable alone = compileStep(kSegmentModel, true, OptimizerOptions());
  EXPECT_FALSE(alone.manifest().dataParallel);
  OptimizerOptions parallel;
  parallel.dataParallel = true;
  EXPECT_TRUE(
      compileStep(kSegmentModel, true, parallel).manifest().dataParallel);

  ThreadWorld world(2);
  ThreadCommunicator rank0(world, 0);
  SegmentBinding task = bindOrDie(alone.manifest());
  TrainState state;
  ASSERT_TRUE(initializeParameters(alone.manifest(), 1, state.parameters).ok());
  TrainState before = state;
  std::mt19937 rng(1);
  RunInputs batch = segmentBatchFor(task, 3, rng);
  StepReport report;
  CurrentCommunicator scope(&rank0);
  absl::Status status = runTrainStep(alone, batch, 1e-3, 1, state, report);
  EXPECT_EQ(status.code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_EQ(status.message(),
            "rank 0 of 2: train step @am was not compiled data-parallel (the "
            "optimizer's data-parallel option), but runs on 2 ranks");
  EXPECT_EQ(state.step, 0);
  expectSameBits(before.parameters, state.parameters);
}

TEST(TrainStepTest, CheckpointsAreCheckedAgainstTheModel) {
  Executable exe = compileStep(kSegmentModel, true, OptimizerOptions());
  const Manifest &manifest = exe.manifest();
  TrainState state, checkpoint;
  ASSERT_TRUE(initializeParameters(manifest, 1, state.parameters).ok());
  checkpoint.parameters["out.w"] = Tensor(DType::f32, {6, 31});
  absl::Status status =
      restoreParameters(manifest, checkpoint, false, "'c.npz'", state);
  EXPECT_EQ(status.message(), "'c.npz': parameter 'out.w' is f32 [6, 31], "
                              "the model's is f32 [6, 32]");
  checkpoint.parameters.clear();
  checkpoint.parameters["decoder.w"] = Tensor(DType::f32, {2});
  status = restoreParameters(manifest, checkpoint, false, "'c.npz'", state);
  EXPECT_EQ(status.message(),
            "'c.npz' holds 'decoder.w', which graph @am has no parameter for");
  checkpoint.parameters.clear();
  checkpoint.parameters["out.w"] = Tensor(DType::f32, {6, 32});
  EXPECT_TRUE(
      restoreParameters(manifest, checkpoint, false, "'c.npz'", state).ok());
  status = restoreParameters(manifest, checkpoint, true, "'c.npz'", state);
  EXPECT_EQ(status.message(),
            "'c.npz' lacks parameter 'lstm.w_ih' of graph @am");
  TrainState loaded;
  status = loadCheckpoint("/nonexistent/c.npz", loaded);
  EXPECT_FALSE(status.ok());
  EXPECT_NE(status.message().find("/nonexistent/c.npz"), std::string::npos);
}

/// One linear layer and frame-wise CE: the smallest train step.
const char *kLinearModel = R"(
nn.parameter @"out.w" : !nn.tensor<[4, 3], f32>
nn.graph @g(%features: !nn.tensor<[B, T, 3], f32>, %frame_labels: !nn.tensor<[B, T], i32>)
    dims [B: batch, T: seq(B)] {
  %w = nn.param_ref @"out.w" : !nn.tensor<[4, 3], f32>
  %l = nn.linear %features, %w : !nn.tensor<[B, T, 3], f32>, !nn.tensor<[4, 3], f32>
  %ce = nn.cross_entropy %l, %frame_labels from logits : !nn.tensor<[B, T, 4], f32>, !nn.tensor<[B, T], i32>
  nn.mark_loss %ce as "ce" normalize per_frame : !nn.tensor<[B, T], f32>
  nn.return
})";

RunInputs linearBatch() {
  RunInputs batch;
  batch.inputs["features"] =
      Tensor::of<float>(DType::f32, {1, 2, 3}, {1, 2, 3, -1, 0.5f, 2});
  batch.inputs["frame_labels"] =
      Tensor::of<int32_t>(DType::i32, {1, 2}, {1, 3});
  batch.lengths["T"] = {2};
  return batch;
}

/// Finite losses and gradients can still give non-finite parameters or
/// optimizer state (a learning rate near the f32 range); such a step is
/// not applied, whatever the optimizer.
TEST(TrainStepTest, NonFiniteUpdatesAreNotApplied) {
  for (OptimizerKind kind : {OptimizerKind::sgd, OptimizerKind::adam}) {
    SCOPED_TRACE(enumName(kind));
    OptimizerOptions optimizer;
    optimizer.kind = kind;
    Executable exe = compileStep(kLinearModel, true, optimizer);
    TrainState state;
    ASSERT_TRUE(initializeParameters(exe.manifest(), 1, state.parameters).ok());
    state.parameters.at("out.w").data<float>()[0] = 3e38f;
    TrainState before = state;
    StepReport report;
    ASSERT_TRUE(runTrainStep(exe, linearBatch(), 3e38, 1, state, report).ok());
    EXPECT_TRUE(std::isfinite(report.objective));
    EXPECT_TRUE(std::isfinite(report.gradNorm));
    EXPECT_FALSE(std::isfinite(report.updatedNorm));
    EXPECT_FALSE(report.applied);
    EXPECT_EQ(state.step, 0);
    EXPECT_EQ(state.batches, 1);
    expectSameBits(before.parameters, state.parameters);
    // An ordinary step is applied and says what it wrote.
    ASSERT_TRUE(runTrainStep(exe, linearBatch(), 1e-2, 1, before, report).ok());
    EXPECT_TRUE(report.applied);
    EXPECT_GT(report.updatedNorm, 0);
  }
}

/// Counters a train step cannot continue from are refused: at load, and
/// when a caller's state holds them.
TEST(TrainStepTest, HostileCheckpointsAreRefusedAtLoad) {
  OptimizerOptions adam;
  Executable exe = compileStep(kLinearModel, true, adam);
  const Manifest &manifest = exe.manifest();
  std::string path =
      ::testing::TempDir() + "hostile-" + std::to_string(getpid()) + ".npz";
  std::map<std::string, Tensor> arrays;
  ASSERT_TRUE(initializeParameters(manifest, 1, arrays).ok());
  auto loadError = [&](const std::map<std::string, Tensor> &contents) {
    EXPECT_TRUE(writeNpz(path, contents).ok());
    TrainState loaded;
    absl::Status status = loadCheckpoint(path, loaded);
    return status.ok() ? std::string() : std::string(status.message());
  };
  auto with = [&](const char *key, int64_t value) {
    std::map<std::string, Tensor> contents = arrays;
    contents[key] = Tensor::of<int64_t>(DType::i64, {}, {value});
    return contents;
  };
  std::string what = "checkpoint '" + path + "'";
  EXPECT_EQ(loadError(with(kCheckpointBatchesKey,
                           std::numeric_limits<int64_t>::max())),
            what + ": 'nn.train.batches' is 9223372036854775807, outside [0, "
                   "2147483647]");
  EXPECT_EQ(loadError(with(kCheckpointStepKey, int64_t(1) << 31)),
            what + ": 'nn.train.step' is 2147483648, outside [0, 2147483647]");
  std::map<std::string, Tensor> fewer = with(kCheckpointStepKey, 5);
  fewer[kCheckpointBatchesKey] = Tensor::of<int64_t>(DType::i64, {}, {4});
  EXPECT_EQ(loadError(fewer),
            what + ": 'nn.train.batches' (4) is below 'nn.train.step' (5): "
                   "every update used a batch");
  std::map<std::string, Tensor> fractional = arrays;
  fractional[kCheckpointStepKey] = Tensor::of<double>(DType::f64, {}, {2.5});
  EXPECT_EQ(loadError(fractional),
            what + ": 'nn.train.step' is not an i64 or i32 scalar");
  std::map<std::string, Tensor> poisoned = arrays;
  poisoned.at("optimizer/adam_v/out.w").data<float>()[5] = NAN;
  poisoned.at("optimizer/adam_v/out.w").data<float>()[7] = INFINITY;
  EXPECT_EQ(loadError(poisoned),
            what + ": 'optimizer/adam_v/out.w' holds 2 non-finite values (NaN "
                   "or infinite; the first at flat index 5)");
  EXPECT_EQ(loadError(with(kCheckpointStepKey, 2147483647)), "");

  // Nor is a non-finite state ever saved.
  TrainState state;
  state.parameters = poisoned;
  absl::Status saved = saveCheckpoint(path, state);
  EXPECT_EQ(saved.message(),
            "cannot save '" + path +
                "': 'optimizer/adam_v/out.w' holds 2 non-finite values (NaN "
                "or infinite; the first at flat index 5)");

  // A state at the counter's limit stops instead of wrapping Adam's i32
  // step.
  state.parameters = arrays;
  state.step = state.batches = kMaxTrainSteps;
  StepReport report;
  absl::Status stepped =
      runTrainStep(exe, linearBatch(), 1e-3, 1, state, report);
  EXPECT_EQ(stepped.message(),
            "the update counter is at 2147483647; a train step counts at most "
            "2147483647 updates (Adam's step input is i32)");
  std::remove(path.c_str());
}

/// Starting from a file (--init-from, a stage's parameters) takes its
/// model parameters only: the optimizer state starts at zero.
TEST(TrainStepTest, InitFromIgnoresOptimizerState) {
  Executable exe = compileStep(kLinearModel, true, OptimizerOptions());
  const Manifest &manifest = exe.manifest();
  TrainState fresh, file;
  ASSERT_TRUE(initializeParameters(manifest, 1, fresh.parameters).ok());
  ASSERT_TRUE(initializeParameters(manifest, 2, file.parameters).ok());
  // A second moment no run could have written: negative.
  for (int64_t i = 0; i < 12; ++i)
    file.parameters.at("optimizer/adam_v/out.w").data<float>()[i] = -1;
  file.step = file.batches = 9;
  TrainState started = fresh;
  ASSERT_TRUE(
      restoreParameters(manifest, file, /*resume=*/false, "'f'", started).ok());
  EXPECT_EQ(std::memcmp(started.parameters.at("out.w").raw(),
                        file.parameters.at("out.w").raw(), 12 * 4),
            0);
  for (int64_t i = 0; i < 12; ++i)
    EXPECT_EQ(started.parameters.at("optimizer/adam_v/out.w").at(i), 0.0);
  EXPECT_EQ(started.step, 0);
  StepReport report;
  ASSERT_TRUE(runTrainStep(exe, linearBatch(), 1e-3, 1, started, report).ok());
  EXPECT_TRUE(report.applied);
  // Resuming continues the state as it is.
  TrainState resumed = fresh;
  ASSERT_TRUE(
      restoreParameters(manifest, file, /*resume=*/true, "'f'", resumed).ok());
  EXPECT_EQ(resumed.parameters.at("optimizer/adam_v/out.w").at(0), -1.0);
  EXPECT_EQ(resumed.step, 9);
}

TEST(TrainStepTest, SegmentTaskBindsOnlyItsInputs) {
  Executable exe = compileOrDie(R"(
nn.parameter @w : !nn.tensor<[4, 3], f32>
nn.graph @g(%features: !nn.tensor<[B, T, 3], f32>, %targets: !nn.tensor<[B, T], i32>)
    dims [B: batch, T: seq(B)] {
  %w = nn.param_ref @w : !nn.tensor<[4, 3], f32>
  %l = nn.linear %features, %w : !nn.tensor<[B, T, 3], f32>, !nn.tensor<[4, 3], f32>
  %ce = nn.cross_entropy %l, %targets from logits : !nn.tensor<[B, T, 4], f32>, !nn.tensor<[B, T], i32>
  nn.mark_loss %ce as "ce" normalize per_frame : !nn.tensor<[B, T], f32>
  nn.return
})",
                                CompileOptions());
  absl::StatusOr<SegmentBinding> binding = bindSegmentTask(exe.manifest());
  ASSERT_FALSE(binding.ok());
  EXPECT_EQ(binding.status().message(),
            "input 'targets' of graph @g is not one the segment task fills "
            "(features, frame_labels, labels)");
}

//===----------------------------------------------------------------------===//
// Convergence on the segment task
//===----------------------------------------------------------------------===//

/// The dev losses of `exe`'s evaluation twin on `batches` fixed batches.
std::vector<LossValue> devLosses(const std::string &source,
                                 const SegmentBinding &task,
                                 const TrainState &state, int batches) {
  Executable eval = compileOrDie(source, CompileOptions());
  std::mt19937 rng(424242);
  LossTotals totals;
  for (int b = 0; b < batches; ++b) {
    RunInputs inputs = segmentBatchFor(task, 16, rng);
    for (const TensorInfo &info : eval.manifest().parameters)
      inputs.parameters[info.name] = state.parameters.at(info.name);
    RunResult result;
    absl::Status status = eval.run(inputs, result);
    EXPECT_TRUE(status.ok()) << status.message();
    totals.add(result.losses);
  }
  return totals.losses;
}

double lossNamed(const std::vector<LossValue> &losses,
                 const std::string &name) {
  for (const LossValue &loss : losses)
    if (loss.name == name)
      return loss.normalized;
  ADD_FAILURE() << "no loss " << name;
  return NAN;
}

/// The share of frames whose nearest class prototype is not their class:
/// what a model that looks at one frame alone gets at best, about.
double nearestPrototypeError(const SegmentTask &task) {
  std::vector<float> prototypes = task.prototypes();
  std::mt19937 rng(424242);
  int64_t wrong = 0, frames = 0;
  for (int u = 0; u < 200; ++u) {
    SegmentUtterance utterance = sampleSegmentUtterance(task, prototypes, rng);
    for (int32_t t = 0; t < utterance.frames; ++t) {
      int64_t best = 0;
      double bestDistance = INFINITY;
      for (int64_t c = 0; c < task.classes; ++c) {
        double distance = 0;
        for (int64_t f = 0; f < task.features; ++f) {
          double d = utterance.features[t * task.features + f] -
                     prototypes[c * task.features + f];
          distance += d * d;
        }
        if (distance < bestDistance) {
          bestDistance = distance;
          best = c;
        }
      }
      wrong += best != utterance.frameLabels[t];
      ++frames;
    }
  }
  return (double)wrong / (double)frames;
}

/// A BLSTM (32 units per direction) over 16 features and a linear layer to
/// 8 classes, `%logits`, in graph `header`; `losses` mark the losses on
/// them. The convergence tests' models differ only there.
std::string blstmModel(const std::string &header, const std::string &losses) {
  return R"(
nn.parameter @"lstm.w_ih" : !nn.tensor<[2, 128, 16], f32>
nn.parameter @"lstm.w_hh" : !nn.tensor<[2, 128, 32], f32>
nn.parameter @"lstm.b" : !nn.tensor<[2, 128], f32>
nn.parameter @"out.w" : !nn.tensor<[8, 64], f32>
nn.parameter @"out.b" : !nn.tensor<[8], f32>
)" + header +
         R"( {
  %wi = nn.param_ref @"lstm.w_ih" : !nn.tensor<[2, 128, 16], f32>
  %wh = nn.param_ref @"lstm.w_hh" : !nn.tensor<[2, 128, 32], f32>
  %b = nn.param_ref @"lstm.b" : !nn.tensor<[2, 128], f32>
  %h = nn.lstm bidirectional %features, %wi, %wh, %b
      : !nn.tensor<[B, T, 16], f32>, !nn.tensor<[2, 128, 16], f32>,
        !nn.tensor<[2, 128, 32], f32>, !nn.tensor<[2, 128], f32>
  %wo = nn.param_ref @"out.w" : !nn.tensor<[8, 64], f32>
  %bo = nn.param_ref @"out.b" : !nn.tensor<[8], f32>
  %logits = nn.linear %h, %wo, %bo : !nn.tensor<[B, T, 64], f32>, !nn.tensor<[8, 64], f32>, !nn.tensor<[8], f32>
)" + losses +
         R"(
  nn.return
})";
}

const std::string kFrameModel = blstmModel(
    R"(nn.graph @frames(%features: !nn.tensor<[B, T, 16], f32>,
                 %frame_labels: !nn.tensor<[B, T], i32>)
    dims [B: batch, T: seq(B)])",
    R"(  %ce = nn.cross_entropy %logits, %frame_labels from logits
      : !nn.tensor<[B, T, 8], f32>, !nn.tensor<[B, T], i32>
  nn.mark_loss %ce as "ce" normalize per_frame : !nn.tensor<[B, T], f32>
  %err = nn.frame_error %logits, %frame_labels : !nn.tensor<[B, T, 8], f32>, !nn.tensor<[B, T], i32>
  nn.mark_loss %err as "fer" normalize per_frame as_error : !nn.tensor<[B, T], f32>)");

// At this noise a frame's nearest prototype is wrong for about a tenth of
// the frames; a BLSTM that reads the segments around it does much better.
TEST(ConvergenceTest, BlstmFrameErrorBelowTenPercent) {
  OptimizerOptions adam;
  Executable exe = compileStep(kFrameModel, true, adam);
  SegmentBinding task = bindOrDie(exe.manifest(), /*noise=*/0.35);
  double perFrame = nearestPrototypeError(task.task);
  TrainState state;
  ASSERT_TRUE(initializeParameters(exe.manifest(), 1, state.parameters).ok());
  double before = lossNamed(devLosses(kFrameModel, task, state, 4), "fer");
  train(exe, task, 16, 1e-2, 300, state);
  double after = lossNamed(devLosses(kFrameModel, task, state, 4), "fer");
  EXPECT_GT(before, 0.5);
  EXPECT_LT(after, 0.10) << "from " << before;
  EXPECT_LT(after, perFrame / 2) << "nearest prototype per frame: " << perFrame;
}

const std::string kCtcModel = blstmModel(
    R"(nn.graph @ctc(%features: !nn.tensor<[B, T, 16], f32>,
              %labels: !nn.tensor<[B, U], i32>)
    dims [B: batch, T: seq(B), U: seq(B)])",
    R"(  %ctc = nn.ctc_loss %logits, %labels from logits blank 0
      : !nn.tensor<[B, T, 8], f32>, !nn.tensor<[B, U], i32>
  nn.mark_loss %ctc as "ctc" normalize per_sequence : !nn.tensor<[B], f32>)");

// CTC per sequence (about 4.5 labels, 30 frames) starts near 30 nats; at
// 2.5 the best path is right almost everywhere.
TEST(ConvergenceTest, CtcLossBelowThreshold) {
  Executable exe = compileStep(kCtcModel, true, OptimizerOptions());
  SegmentBinding task = bindOrDie(exe.manifest());
  TrainState state;
  ASSERT_TRUE(initializeParameters(exe.manifest(), 1, state.parameters).ok());
  double before = lossNamed(devLosses(kCtcModel, task, state, 4), "ctc");
  train(exe, task, 16, 1e-2, 400, state);
  double after = lossNamed(devLosses(kCtcModel, task, state, 4), "ctc");
  EXPECT_GT(before, 15.0);
  EXPECT_LT(after, 2.5) << "from " << before;
}

// A trained loss's scale must be finite and >= 0 (a negative one trains
// the loss up): -1 compiled, and trained ctc upwards. NaN keeps the
// marked scale; 0 is allowed (the loss reports but does not train).
TEST(TrainStepTest, NegativeOrInfiniteTrainedLossScaleIsAnError) {
  CompileOptions options;
  options.grads = true;
  options.trainStep = true;
  const double inf = std::numeric_limits<double>::infinity();
  for (auto [scale, text] : {std::pair{-1.0, "-1"}, std::pair{-1e-30, "-1e-30"},
                             std::pair{inf, "inf"}, std::pair{-inf, "-inf"}}) {
    SCOPED_TRACE(text);
    options.trainedLosses = {{"ce"}, {"ctc", scale}};
    absl::StatusOr<Artifact> compiled =
        compileSource(kSegmentModel, "model.mlir", options);
    ASSERT_FALSE(compiled.ok());
    EXPECT_EQ(compiled.status().code(), absl::StatusCode::kInvalidArgument);
    EXPECT_EQ(compiled.status().message(),
              std::string("loss 'ctc': scale must be finite and >= 0, got ") +
                  text);
  }
  options.trainedLosses = {{"ce", 0.0}, {"ctc"}};
  absl::StatusOr<Artifact> zero =
      compileSource(kSegmentModel, "model.mlir", options);
  EXPECT_TRUE(zero.ok()) << zero.status().message();
}

// CompileOptions::trainedLosses picks what trains: the others are only
// reported, and parameters only they reach are not updated.
TEST(TrainStepTest, TrainedLossesChooseWhatTrains) {
  CompileOptions options;
  options.grads = true;
  options.trainStep = true;
  options.trainedLosses = {{"ctc", 2.0}};
  Executable exe = compileOrDie(kSegmentModel, options);
  std::map<std::string, const LossInfo *> losses;
  for (const LossInfo &loss : exe.manifest().losses)
    losses[loss.name] = &loss;
  ASSERT_EQ(losses.size(), 3u);
  EXPECT_FALSE(losses.at("ctc")->asError);
  EXPECT_EQ(losses.at("ctc")->scale, 2.0);
  EXPECT_TRUE(losses.at("ce")->asError);
  EXPECT_TRUE(losses.at("fer")->asError);

  SegmentBinding task = bindOrDie(exe.manifest());
  TrainState state;
  ASSERT_TRUE(initializeParameters(exe.manifest(), 4, state.parameters).ok());
  TrainState before = state;
  std::vector<StepReport> reports = train(exe, task, 4, 1e-2, 1, state);
  ASSERT_EQ(reports.size(), 1u);
  // The objective is 2 x ctc alone.
  EXPECT_NEAR(reports[0].objective, 2 * lossNamed(reports[0].losses, "ctc"),
              1e-6 * reports[0].objective);
  auto changed = [&](const std::string &name) {
    const Tensor &a = before.parameters.at(name),
                 &b = state.parameters.at(name);
    return std::memcmp(a.raw(), b.raw(), a.sizeInBytes()) != 0;
  };
  EXPECT_TRUE(changed("ctc.w"));
  EXPECT_TRUE(changed("lstm.w_ih"));
  EXPECT_FALSE(changed("out.w"));

  options.trainedLosses = {{"ctx"}};
  absl::StatusOr<Artifact> unknown =
      compileSource(kSegmentModel, "model.mlir", options);
  ASSERT_FALSE(unknown.ok());
  EXPECT_EQ(unknown.status().message(),
            "loss 'ctx' is marked nowhere in the model (it marks ce, ctc, "
            "fer)");
  options.trainedLosses = {{"ce"}, {"ce"}};
  absl::StatusOr<Artifact> twice =
      compileSource(kSegmentModel, "model.mlir", options);
  ASSERT_FALSE(twice.ok());
  EXPECT_EQ(twice.status().message(), "loss 'ce' is listed twice");
}

} // namespace

//===----------------------------------------------------------------------===//
// The memory floor of a train step
//===----------------------------------------------------------------------===//

const char *kFloorModel = R"(
nn.parameter @w1 : !nn.tensor<[8, 4], f32>
nn.parameter @b1 : !nn.tensor<[8], f32>
nn.parameter @w2 : !nn.tensor<[3, 8], f32>
nn.graph @g(%x: !nn.tensor<[B, T, 4], f32>, %y: !nn.tensor<[B, T], i32>)
    dims [B: batch, T: seq(B)] {
  %w1 = nn.param_ref @w1 : !nn.tensor<[8, 4], f32>
  %b1 = nn.param_ref @b1 : !nn.tensor<[8], f32>
  %h = nn.linear %x, %w1, %b1 : !nn.tensor<[B, T, 4], f32>, !nn.tensor<[8, 4], f32>, !nn.tensor<[8], f32>
  %a = nn.tanh %h : !nn.tensor<[B, T, 8], f32>
  %w2 = nn.param_ref @w2 : !nn.tensor<[3, 8], f32>
  %z = nn.linear %a, %w2 : !nn.tensor<[B, T, 8], f32>, !nn.tensor<[3, 8], f32>
  %ce = nn.cross_entropy %z, %y from logits : !nn.tensor<[B, T, 3], f32>, !nn.tensor<[B, T], i32>
  nn.mark_loss %ce as "ce" normalize per_frame : !nn.tensor<[B, T], f32>
  nn.return
})";

TEST(TrainStepTest, MemoryFloorCountsStateAndSavedActivations) {
  const std::vector<int32_t> lengths{5, 0, 2};
  const int64_t batch = 3, longest = 5, frames = 7;
  for (bool pack : {false, true}) {
    SCOPED_TRACE(pack ? "packed" : "padded");
    CompileOptions options;
    options.optimize.pack = pack;
    options.optimize.packFrontier = PackFrontier::earliest;
    // Unfused: the backward reads the logits, not gradients the fused
    // tail forms in the forward.
    options.optimize.fuseLossTail = false;
    options.grads = options.training = options.trainStep = true;
    Executable exe = compileOrDie(kFloorModel, options);
    const Manifest &manifest = exe.manifest();
    std::mt19937 rng(5);
    RunInputs inputs =
        syntheticBatch(manifest, batch, {{"T", lengths}}, rng, 0);
    inputs.inputs.erase("learning_rate");
    inputs.inputs.erase("step");
    absl::StatusOr<MemoryFloor> floor = trainStepFloor(manifest, inputs);
    ASSERT_TRUE(floor.ok()) << floor.status().message();

    const int64_t f = sizeof(float);
    const int64_t params = (8 * 4 + 8 + 3 * 8) * f;
    EXPECT_EQ(floor->parameters, params);
    EXPECT_EQ(floor->optimizerState, 2 * params); // Adam: m and v
    EXPECT_EQ(floor->gradients, params);
    // x and y, padded [B, T, ...] as the caller passes them, and the
    // learning rate and step scalars.
    EXPECT_EQ(floor->inputs, batch * longest * (4 + 1) * f + 2 * 4);

    // What the backward reads: both linears' outputs (the tanh's gradient
    // reads its input, the cross entropy's its logits) and the tanh's
    // output (the second linear's weight gradient); x is an input, counted
    // apart; and the per-frame loss (the loss seed's normalization reads
    // it). Rows are B * T padded, or the N real frames once the pass
    // packs at the input; then the packed features and labels (read by the
    // first weight gradient and the cross entropy's) are saved as well.
    const int64_t rows = pack ? frames : batch * longest;
    std::map<std::string, int64_t> byOp;
    for (const auto &[origin, bytes] : floor->savedByOrigin)
      byOp[origin.substr(0, origin.find(' '))] += bytes;
    EXPECT_EQ(byOp["nn.linear"], rows * (8 + 3) * f);
    EXPECT_EQ(byOp["nn.tanh"], rows * 8 * f);
    EXPECT_EQ(byOp["nn.cross_entropy"], rows * f);
    EXPECT_EQ(byOp["nn.pack"], pack ? rows * (4 + 1) * f : 0);
    int64_t saved = 0;
    for (const auto &[op, bytes] : byOp)
      saved += bytes;
    EXPECT_EQ(floor->saved, saved);
    EXPECT_EQ(saved, rows * (8 + 3 + 8 + 1 + (pack ? 5 : 0)) * f);
    EXPECT_EQ(floor->total(), floor->parameters + floor->optimizerState +
                                  floor->gradients + floor->inputs +
                                  floor->saved);

    // A batch that does not size a dim the saved values name is an error
    // that names the dim.
    RunInputs missing = inputs;
    missing.inputs.erase("x");
    missing.inputs.erase("y");
    absl::StatusOr<MemoryFloor> bad = trainStepFloor(manifest, missing);
    ASSERT_FALSE(bad.ok());
    EXPECT_NE(std::string(bad.status().message()).find("no input 'x'"),
              std::string::npos)
        << bad.status().message();
  }
}
