//===- BenchData.cpp - the loss-tail model and its data for benchmarks ---===//

#include "BenchData.h"

#include <cmath>
#include <fstream>
#include <sstream>

std::vector<int32_t> nn::bench::gLengths, nn::bench::gLabelLengths;
int64_t nn::bench::gPadded = 0, nn::bench::gFrames = 0,
        nn::bench::gLabelPadded = 0;

std::string nn::bench::defaultLengthsPath() { return NN_BENCH_LENGTHS_FILE; }

std::string nn::bench::tailSource(int vocabulary) {
  std::ostringstream s;
  s << "nn.parameter @w : !nn.tensor<[" << vocabulary << ", " << kHidden
    << "], f32>\n"
    << "nn.parameter @b : !nn.tensor<[" << vocabulary << "], f32>\n"
    << "nn.graph @tail(%h: !nn.tensor<[B, T, " << kHidden
    << "], f32>, %y: !nn.tensor<[B, T], i32>) dims [B: batch, T: seq(B)] {\n"
    << "  %w = nn.param_ref @w : !nn.tensor<[" << vocabulary << ", " << kHidden
    << "], f32>\n"
    << "  %b = nn.param_ref @b : !nn.tensor<[" << vocabulary << "], f32>\n"
    << "  %z = nn.linear %h, %w, %b : !nn.tensor<[B, T, " << kHidden
    << "], f32>, !nn.tensor<[" << vocabulary << ", " << kHidden
    << "], f32>, !nn.tensor<[" << vocabulary << "], f32>\n"
    << "  %lp = nn.log_softmax %z : !nn.tensor<[B, T, " << vocabulary
    << "], f32>\n"
    << "  %ce = nn.cross_entropy %lp, %y from log_probs : !nn.tensor<[B, T, "
    << vocabulary << "], f32>, !nn.tensor<[B, T], i32>\n"
    << "  nn.mark_loss %ce as \"ce\" normalize per_frame : !nn.tensor<[B, T], "
       "f32>\n"
    << "  nn.return\n}\n";
  return s.str();
}

nn::Tensor nn::bench::randomTensor(nn::DType dtype, std::vector<int64_t> shape,
                                   std::mt19937 &rng, double scale) {
  nn::Tensor tensor(dtype, std::move(shape));
  std::uniform_real_distribution<float> uniform(-scale, scale);
  for (int64_t i = 0; i < tensor.numElements(); ++i)
    tensor.data<float>()[i] = uniform(rng);
  return tensor;
}

nn::RunInputs nn::bench::tailInputs(int vocabulary) {
  std::mt19937 rng(1);
  nn::RunInputs inputs;
  inputs.lengths["T"] = gLengths;
  inputs.inputs["h"] =
      randomTensor(nn::DType::f32, {kBatch, gPadded, kHidden}, rng, 1.0);
  nn::Tensor targets(nn::DType::i32, {kBatch, gPadded});
  std::uniform_int_distribution<int32_t> classes(0, vocabulary - 1);
  for (int64_t i = 0; i < targets.numElements(); ++i)
    targets.data<int32_t>()[i] = classes(rng);
  inputs.inputs["y"] = std::move(targets);
  inputs.parameters["w"] = randomTensor(nn::DType::f32, {vocabulary, kHidden},
                                        rng, 1.0 / std::sqrt(kHidden));
  inputs.parameters["b"] = randomTensor(nn::DType::f32, {vocabulary}, rng, 0.1);
  return inputs;
}

bool nn::bench::loadLengths(const std::string &path) {
  std::ifstream file(path);
  std::vector<std::pair<int32_t, int32_t>> all;
  for (std::string line; std::getline(file, line);) {
    if (line.empty() || line[0] == '#')
      continue;
    std::istringstream fields(line);
    int32_t frames = 0, labels = 0;
    fields >> frames >> labels;
    all.emplace_back(frames, labels);
  }
  if (all.empty())
    return false;
  std::mt19937 rng(2024);
  std::uniform_int_distribution<size_t> pick(0, all.size() - 1);
  for (int b = 0; b < kBatch; ++b) {
    auto [frames, labels] = all[pick(rng)];
    gLengths.push_back(frames);
    gLabelLengths.push_back(labels);
    gPadded = std::max<int64_t>(gPadded, frames);
    gFrames += frames;
    gLabelPadded = std::max<int64_t>(gLabelPadded, labels);
  }
  return true;
}
