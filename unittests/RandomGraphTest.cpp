//===- RandomGraphTest.cpp - pack on vs off on seeded random graphs -------===//
//
// Each seed builds a graph: an optional sequence-mixing layer (LSTM in any
// direction, convolution with stride 1 to 3 or pooling with stride 1 or 2,
// self-attention with or without a mask, with or without relative
// positions from a small table that long sequences clip), a random frame-wise
// chain after it (linear, activations, layer norm, dropout, softmax, add,
// mul, concat with earlier values) and one or two random losses (cross
// entropy from logits or log-probs with or without label smoothing, or
// MSE; random normalization and scale), sometimes also returning the last
// chain value (a padded user, so packing must unpack it). Packed and padded
// compilations must agree within rel 1e-5, and both match the reference.
//
//===----------------------------------------------------------------------===//

#include "ExecutionUtil.h"

#include "nn/Cuda.h"

#include <limits>
#include <sstream>

using namespace nn;
using namespace nn::testing;

namespace {

/// Graphs per suite, seeds 0 .. kSeeds - 1 (the CMake cache variable
/// NN_RANDOM_GRAPH_SEEDS).
#ifndef NN_RANDOM_GRAPH_SEEDS
#error "NN_RANDOM_GRAPH_SEEDS is set by unittests/CMakeLists.txt"
#endif
constexpr int kSeeds = NN_RANDOM_GRAPH_SEEDS;

class GraphGenerator {
public:
  /// `dropouts`: also a dropout of the input (before the sequence-mixing
  /// layer, so padded) and one at the start of the frame-wise chain (in
  /// the packed tail), for training mode.
  explicit GraphGenerator(uint32_t seed, bool dropouts = false)
      : rng(seed), dropouts(dropouts) {}

  std::string generate();

private:
  int pick(int lo, int hi) {
    return std::uniform_int_distribution<int>(lo, hi)(rng);
  }
  bool coin(double p = 0.5) { return std::bernoulli_distribution(p)(rng); }

  std::string type(int width) const {
    return "!nn.tensor<[B, " + seq + ", " + std::to_string(width) + "], f32>";
  }
  std::string fresh() { return "%v" + std::to_string(counter++); }
  std::string parameter(const std::string &shape) {
    std::string name = "p" + std::to_string(counter++);
    params << "nn.parameter @" << name << " : !nn.tensor<[" << shape
           << "], f32>\n";
    std::string value = fresh();
    body << "  " << value << " = nn.param_ref @" << name << " : !nn.tensor<["
         << shape << "], f32>\n";
    return value;
  }
  /// linear from (value, width) to `out` features.
  std::string linear(const std::string &value, int width, int out) {
    std::string w =
        parameter(std::to_string(out) + ", " + std::to_string(width));
    std::string bias = coin() ? parameter(std::to_string(out)) : "";
    std::string result = fresh();
    body << "  " << result << " = nn.linear " << value << ", " << w
         << (bias.empty() ? "" : ", " + bias) << " : " << type(width)
         << ", !nn.tensor<[" << out << ", " << width << "], f32>"
         << (bias.empty() ? ""
                          : ", !nn.tensor<[" + std::to_string(out) + "], f32>")
         << "\n";
    return result;
  }

  std::mt19937 rng;
  bool dropouts;
  std::ostringstream params, body;
  int counter = 0;
  std::string seq = "T";
};

std::string GraphGenerator::generate() {
  int inWidth = pick(1, 4), targetWidth = pick(1, 4);
  bool derived = false;
  // The time reduction of a strided layer (T2 = ceildiv(T, reduction)).
  int reduction = 1;
  std::string h = "%x";
  int width = inWidth;
  auto inType = [&] {
    return "!nn.tensor<[B, T, " + std::to_string(inWidth) + "], f32>";
  };

  const char *rates[] = {"1.000000e-01", "3.000000e-01", "5.000000e-01"};
  std::string input = "%x";
  if (dropouts) {
    input = fresh();
    body << "  " << input << " = nn.dropout %x rate " << rates[pick(0, 2)]
         << " : " << inType() << "\n";
    h = input;
  }

  // The sequence-mixing layer (the frontier of every loss).
  switch (pick(0, 4)) {
  case 0: // none: the frontier is the graph argument
    break;
  case 1: { // LSTM
    int hidden = pick(1, 4);
    const char *direction[] = {"forward", "backward", "bidirectional"};
    int d = pick(0, 2);
    std::string prefix = d == 2 ? "2, " : "";
    std::string wi = parameter(prefix + std::to_string(4 * hidden) + ", " +
                               std::to_string(inWidth));
    std::string wh = parameter(prefix + std::to_string(4 * hidden) + ", " +
                               std::to_string(hidden));
    std::string b = parameter(prefix + std::to_string(4 * hidden));
    width = d == 2 ? 2 * hidden : hidden;
    std::string result = fresh();
    body << "  " << result << " = nn.lstm " << direction[d] << " " << input
         << ", " << wi << ", " << wh << ", " << b << " : " << inType()
         << ", !nn.tensor<[" << prefix << 4 * hidden << ", " << inWidth
         << "], f32>, !nn.tensor<[" << prefix << 4 * hidden << ", " << hidden
         << "], f32>, !nn.tensor<[" << prefix << 4 * hidden << "], f32>\n";
    h = result;
    break;
  }
  case 2: { // conv1d
    // Stride 3: the second convolution of a x6 subsampling front end.
    int kernel = pick(1, 3), channels = pick(1, 4), stride = pick(1, 3);
    derived = stride > 1;
    reduction = stride;
    std::string w =
        parameter(std::to_string(channels) + ", " + std::to_string(kernel) +
                  ", " + std::to_string(inWidth));
    if (derived)
      seq = "T2";
    std::string result = fresh();
    body << "  " << result << " = nn.conv1d " << input << ", " << w
         << " stride " << stride << " : (" << inType() << ", !nn.tensor<["
         << channels << ", " << kernel << ", " << inWidth << "], f32>) -> "
         << type(channels) << "\n";
    width = channels;
    h = result;
    break;
  }
  case 3: { // pool
    int window = pick(1, 3), stride = pick(1, 2);
    derived = stride == 2;
    reduction = stride;
    if (derived)
      seq = "T2";
    std::string result = fresh();
    body << "  " << result << " = nn.pool " << (coin() ? "max" : "avg") << " "
         << input << " window " << window << " stride " << stride << " : ("
         << inType() << ") -> " << type(inWidth) << "\n";
    h = result;
    break;
  }
  case 4: { // self-attention: queries a linear of the input, a mask or none
    std::string q = linear(input, inWidth, inWidth);
    int heads = inWidth % 2 == 0 ? pick(1, 2) : 1;
    // Relative positions: position queries another linear of the input,
    // a table of the distances -c ... c.
    std::string relative, relativeTypes;
    if (coin()) {
      int rows = 2 * pick(1, 3) + 1;
      std::string tableShape =
          std::to_string(rows) + ", " + std::to_string(inWidth);
      std::string r = linear(input, inWidth, inWidth);
      relative = " relative " + r + ", " + parameter(tableShape);
      relativeTypes =
          ", " + inType() + ", !nn.tensor<[" + tableShape + "], f32>";
    }
    const char *masks[] = {"",
                           " causal",
                           " causal left_context 1",
                           " left_context 2 right_context 1",
                           " chunk_size 2",
                           " chunk_size 3 left_chunks 1"};
    std::string result = fresh();
    body << "  " << result << " = nn.attention " << q << ", " << input << ", "
         << input << relative << " heads " << heads << masks[pick(0, 5)]
         << " : " << inType() << ", " << inType() << ", " << inType()
         << relativeTypes << "\n";
    h = result;
    break;
  }
  }

  if (dropouts) {
    std::string result = fresh();
    body << "  " << result << " = nn.dropout " << h << " rate "
         << rates[pick(0, 2)] << " : " << type(width) << "\n";
    h = result;
  }

  // The frame-wise chain; `values` are earlier results on the same frames.
  std::vector<std::pair<std::string, int>> values{{h, width}};
  for (int n = pick(1, 5); n > 0; --n) {
    std::string result;
    switch (pick(0, 9)) {
    case 0:
    case 1: {
      int out = pick(1, 6);
      h = linear(h, width, out);
      width = out;
    }
      values.push_back({h, width});
      continue;
    case 2:
    case 3: {
      const char *unary[] = {"relu", "tanh", "sigmoid", "gelu", "softmax"};
      result = fresh();
      body << "  " << result << " = nn." << unary[pick(0, 4)] << " " << h
           << " : " << type(width) << "\n";
      break;
    }
    case 4: {
      std::string g = parameter(std::to_string(width));
      std::string b = parameter(std::to_string(width));
      result = fresh();
      body << "  " << result << " = nn.layer_norm " << h << ", " << g << ", "
           << b << " : " << type(width) << ", !nn.tensor<[" << width
           << "], f32>, !nn.tensor<[" << width << "], f32>\n";
      break;
    }
    case 5:
      result = fresh();
      body << "  " << result << " = nn.dropout " << h
           << " rate 1.000000e-01 : " << type(width) << "\n";
      break;
    case 6:
    case 7: { // add / mul with an earlier value of the same width
      std::string other = h;
      for (auto &[value, w] : values)
        if (w == width && coin())
          other = value;
      result = fresh();
      body << "  " << result << " = nn." << (coin() ? "add" : "mul") << " " << h
           << ", " << other << " : " << type(width) << "\n";
      break;
    }
    default: { // concat with an earlier value
      auto [other, otherWidth] = values[pick(0, (int)values.size() - 1)];
      result = fresh();
      body << "  " << result << " = nn.concat " << h << ", " << other << " : "
           << type(width) << ", " << type(otherWidth) << "\n";
      width += otherWidth;
      break;
    }
    }
    h = result;
    values.push_back({h, width});
  }

  // Losses, on the last value or an earlier one (shared tails).
  const char *norms[] = {"per_frame", "per_sequence", "sum"};
  const char *scales[] = {"5.000000e-01", "1.000000e+00", "2.000000e+00"};
  int losses = pick(1, 2);
  for (int l = 0; l < losses; ++l) {
    auto [source, sourceWidth] = l == 0
                                     ? std::make_pair(h, width)
                                     : values[pick(0, (int)values.size() - 1)];
    std::string loss = fresh();
    if (coin(0.65)) {
      int classes = pick(2, 6);
      std::string logits = linear(source, sourceWidth, classes);
      std::string kind = "logits";
      if (coin()) {
        std::string lp = fresh();
        body << "  " << lp << " = nn.log_softmax " << logits << " : "
             << type(classes) << "\n";
        logits = lp;
        kind = "log_probs";
      }
      body << "  " << loss << " = nn.cross_entropy " << logits << ", %y from "
           << kind << (coin() ? " label_smoothing 1.000000e-01" : "") << " : "
           << type(classes) << ", !nn.tensor<[B, " << seq << "], i32>\n";
    } else {
      std::string prediction = linear(source, sourceWidth, targetWidth);
      body << "  " << loss << " = nn.mse " << prediction
           << ", %r : " << type(targetWidth) << ", " << type(targetWidth)
           << "\n";
    }
    body << "  nn.mark_loss " << loss << " as \"loss" << l << "\" normalize "
         << norms[pick(0, 2)] << " scale " << scales[pick(0, 2)]
         << " : !nn.tensor<[B, " << seq << "], f32>\n";
  }
  bool returnsValue = coin(0.4);
  if (returnsValue)
    body << "  nn.return " << h << " : " << type(width) << "\n";
  else
    body << "  nn.return\n";

  std::ostringstream graph;
  graph << params.str();
  graph << "nn.graph @g(%x: " << inType() << ", %y: !nn.tensor<[B, " << seq
        << "], i32>, %r: " << type(targetWidth) << ")"
        << (returnsValue ? " -> " + type(width) : "")
        << "\n    dims [B: batch, "
        << "T: seq(B)"
        << (derived
                ? ", T2: seq(B) = ceildiv(T, " + std::to_string(reduction) + ")"
                : "")
        << "] {\n"
        << body.str() << "}\n";
  return graph.str();
}

class RandomGraphTest : public ::testing::TestWithParam<int> {};

TEST_P(RandomGraphTest, PackedMatchesPaddedAndReference) {
  uint32_t seed = 1000 + GetParam();
  std::string source = GraphGenerator(seed).generate();
  SCOPED_TRACE(source);
  Executable padded = compileOrDie(source, false);
  Executable packed = compileOrDie(source, true);
  ASSERT_FALSE(::testing::Test::HasFailure());
  for (const LossInfo &loss : packed.manifest().losses)
    EXPECT_TRUE(loss.packed) << loss.name << " was not packed";
  std::mt19937 sizes(seed);
  int batch = std::uniform_int_distribution<int>(1, 5)(sizes);
  int time = std::uniform_int_distribution<int>(1, 9)(sizes);
  RunInputs inputs =
      makeInputs(padded.manifest(), seed, LengthPattern::Mixed, batch, time);
  RunResult a, b;
  absl::Status status = padded.run(inputs, a);
  ASSERT_TRUE(status.ok()) << status.message();
  status = packed.run(inputs, b);
  ASSERT_TRUE(status.ok()) << status.message();
  expectSameResults(padded.manifest(), inputs, a, b, 1e-5);
  expectMatchesReference(source, padded, inputs, a, 1e-4, 1e-5);
}

INSTANTIATE_TEST_SUITE_P(Seeds, RandomGraphTest, ::testing::Range(0, kSeeds));

/// Gradients (nn-autodiff) of the same kind of graphs, sequence-mixing
/// layers included, in evaluation mode and in training mode (with a
/// dropout before the mixing layer and one in the packed tail): packed and
/// padded losses and gradients within rel 1e-5, every gradient finite with
/// NaN in the padded input frames. The GEMMs are OpenBLAS's here: its
/// kernels sum each row in the same order whatever the row count, so
/// packed (N rows) and padded (B x T rows) GEMMs round alike and 1e-5
/// catches packing errors. oneDNN picks kernels by shape: seed 117's
/// conv-weight gradient (through a layer norm's cancelling backward) then
/// differs by 1.7e-5 between the two, with every GEMM within 2.2e-7 of
/// its float64 value relative to the sum of its terms' magnitudes
/// (measured). The default library's gradients are checked against the
/// float64 reference in GradientTest.
class RandomGraphGradientTest
    : public ::testing::TestWithParam<std::tuple<int, bool>> {};

TEST_P(RandomGraphGradientTest, PackedGradientsMatchPadded) {
  auto [index, training] = GetParam();
  uint32_t seed = 5000 + index;
  std::string source = GraphGenerator(seed, training).generate();
  SCOPED_TRACE(source);
  CompileOptions options;
  options.grads = true;
  options.training = training;
  options.cpu.gemmLibrary = nn::GemmLibrary::openblas;
  options.optimize.pack = false;
  Executable padded = compileOrDie(source, options);
  options.optimize.pack = true;
  Executable packed = compileOrDie(source, options);
  ASSERT_FALSE(::testing::Test::HasFailure());
  std::mt19937 sizes(seed);
  int batch = std::uniform_int_distribution<int>(1, 5)(sizes);
  int time = std::uniform_int_distribution<int>(1, 9)(sizes);
  RunInputs inputs =
      makeInputs(padded.manifest(), seed, LengthPattern::Mixed, batch, time);
  RunResult a, b, c;
  absl::Status status = padded.run(inputs, a);
  ASSERT_TRUE(status.ok()) << status.message();
  status = packed.run(inputs, b);
  ASSERT_TRUE(status.ok()) << status.message();
  expectSameResults(padded.manifest(), inputs, a, b, 1e-5);
  RunInputs nanInputs =
      makeInputs(padded.manifest(), seed, LengthPattern::Mixed, batch, time,
                 std::numeric_limits<double>::quiet_NaN());
  // Padded runs compute on the NaN frames and must mask them.
  for (const Executable *exe : {&padded, &packed}) {
    ASSERT_TRUE(exe->run(nanInputs, c).ok());
    for (const std::string &name : c.gradientNames()) {
      const Tensor &tensor = *c.gradient(name);
      for (int64_t i = 0; i < tensor.numElements(); ++i)
        ASSERT_TRUE(std::isfinite(tensor.at(i))) << name << "[" << i << "]";
    }
  }
}

INSTANTIATE_TEST_SUITE_P(Seeds, RandomGraphGradientTest,
                         ::testing::Combine(::testing::Range(0, kSeeds),
                                            ::testing::Bool()),
                         [](const auto &info) {
                           return std::to_string(std::get<0>(info.param)) +
                                  (std::get<1>(info.param) ? "_training"
                                                           : "_evaluation");
                         });

} // namespace

namespace {

/// The same graphs on the GPU target. Without a GPU they must still compile
/// (the whole GPU pipeline, PTX included) and load; with one, the GPU run
/// must match the CPU run within rel 1e-4.
class RandomGraphGpuTest : public ::testing::TestWithParam<int> {};

TEST_P(RandomGraphGpuTest, CompilesAndMatchesCpuWhereAGpuIs) {
  SKIP_WITHOUT_TOOLKIT();
  uint32_t seed = 1000 + GetParam();
  std::string source = GraphGenerator(seed).generate();
  SCOPED_TRACE(source);
  Executable gpu = compileOrDie(source, true, "", "cuda");
  ASSERT_FALSE(::testing::Test::HasFailure());
  EXPECT_EQ(gpu.manifest().target, "cuda");
  if (!cudaAvailable())
    return;
  Executable cpu = compileOrDie(source, true);
  std::mt19937 sizes(seed);
  int batch = std::uniform_int_distribution<int>(1, 5)(sizes);
  int time = std::uniform_int_distribution<int>(1, 9)(sizes);
  RunInputs inputs =
      makeInputs(cpu.manifest(), seed, LengthPattern::Mixed, batch, time);
  RunResult onCpu, onGpu;
  ASSERT_TRUE(cpu.run(inputs, onCpu).ok());
  absl::Status status = gpu.run(inputs, onGpu);
  ASSERT_TRUE(status.ok()) << status.message();
  expectSameResults(cpu.manifest(), inputs, onCpu, onGpu, 1e-4);
}

// Every fifth seed of the CPU suite: compiling for the GPU costs ~1 s.
INSTANTIATE_TEST_SUITE_P(Seeds, RandomGraphGpuTest,
                         ::testing::Range(0, kSeeds, 5));

} // namespace
