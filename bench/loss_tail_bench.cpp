//===- loss_tail_bench.cpp - padded vs packed loss tail, and GEMM ---------===//
//
// The loss tail linear(512 -> V) -> log_softmax -> cross entropy at B = 32,
// V in {1000, 10000}, with sequence lengths sampled (fixed seed) from real
// LibriSpeech train-clean-100 utterances, compiled by nn with packing off
// and on and measured in one run. Then the GEMM of that tail (N packed rows
// x 512 -> V) three ways on the same shape: nn's generated loops
// (blas=false), nn's default artifact (which calls the --gemm-library,
// oneDNN unless told), and OpenBLAS sgemm called directly. Everything runs
// on --threads threads (default 1). The loss tail also runs forward+backward
// (gradients of W, b and the frontier input), and example 1 (BLSTM) runs
// forward and forward+backward; every variant reports the peak of its
// large buffers. The train step of example 1 at B = 32 (forward, backward
// and Adam in one artifact, nn/Train.h) runs packed and padded, against
// forward+backward alone on the same batch, in frames per second.
// Decoding: greedy CTC decoding's share of a recognition forward (BLSTM and
// CTC layer), and the CTC prefix beam search alone at V = 500, beams 4
// and 16.
//
//   build/bin/nn-bench [--lengths FILE] [--threads N] [--no-threaded-code]
//                      [--gemm-library onednn|openblas]
//                      [--ctc-scores FILE.npz] [--benchmark_*]
//   build/bin/nn-bench --emit-tail V     prints the loss tail model
//   build/bin/nn-bench --memory-report   example 1's train step: its
//                                        memory floor and measured peak
//
// docs/performance.md records the figures and the command.
//
//===----------------------------------------------------------------------===//

#include "BenchCompile.h"
#include "BenchData.h"
#include "nn/Compiler.h"
#include "nn/Npy.h"
#include "nn/Runtime.h"
#include "nn/Synthetic.h"
#include "nn/Train.h"
#include "runtime/Allocator.h"

#include <benchmark/benchmark.h>
#include <cblas.h>

#include <cmath>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <random>
#include <sstream>

extern "C" void openblas_set_num_threads(int);
// The runtime's f32 GEMM (runtime/device/OneDnnGemm.cpp).
extern "C" void nn_cpu_sgemm(const char *origin, int order, int transA,
                             int transB, int m, int n, int k, float alpha,
                             int64_t a, int lda, int64_t b, int ldb, float beta,
                             int64_t c, int ldc);

using namespace nn::bench;

namespace {

/// One GEMM, [N, 512] x [V, 512]^T, as an nn graph over packed rows that
/// returns the product (the runtime hands it over without a copy, so a run
/// costs the GEMM plus allocating its output).
std::string gemmSource(int vocabulary) {
  std::ostringstream s;
  std::string x = "!nn.tensor<[N, " + std::to_string(kHidden) + "], f32>";
  std::string w = "!nn.tensor<[" + std::to_string(vocabulary) + ", " +
                  std::to_string(kHidden) + "], f32>";
  std::string y = "!nn.tensor<[N, " + std::to_string(vocabulary) + "], f32>";
  s << "nn.graph @gemm(%x: " << x << ", %w: " << w
    << ", %t: !nn.tensor<[B, T], i32>) -> " << y
    << " dims [B: batch, T: seq(B), N: packed(B, T)] {\n"
    << "  %y = nn.linear %x, %w : " << x << ", " << w << "\n"
    << "  nn.return %y : " << y << "\n}\n";
  return s.str();
}

/// range(2) = 1: forward and backward (gradients of the weight, the bias
/// and the frontier input %h), else the forward alone. range(3): Fusion.
void benchLossTail(benchmark::State &state) {
  int vocabulary = state.range(0);
  bool pack = state.range(1);
  bool backward = state.range(2);
  auto fusion = static_cast<Fusion>(state.range(3));
  nn::Executable exe = compile(tailSource(vocabulary), pack, true, backward,
                               backward ? std::vector<std::string>{"h"}
                                        : std::vector<std::string>{},
                               false, false, fusion);
  nn::RunInputs inputs = tailInputs(vocabulary);
  nn::RunResult result;
  runMeasured(state, exe, inputs, result);
  state.counters["frames_computed"] = result.losses.at(0).framesComputed;
  state.counters["frames_padded"] = result.losses.at(0).framesPadded;
  state.counters["loss"] = result.losses.at(0).normalized;
  static const char *const kFusion[] = {" unfused", " fused",
                                        " fused recompute"};
  state.SetLabel(std::string(pack ? "packed" : "padded") +
                 (backward ? " fwd+bwd" : " fwd") +
                 kFusion[static_cast<int>(fusion)]);
}

/// Example 1 (BLSTM, frame-wise CE and CTC) on the first 8 sequences of
/// the batch, labels one per 20 frames: forward alone, or forward and the
/// gradients of every parameter (range(0) = 1), packed.
void benchBlstmExample(benchmark::State &state) {
  bool backward = state.range(0);
  std::ifstream file(std::string(NN_SOURCE_DIR) +
                     "/examples/blstm_ce_ctc.mlir");
  std::stringstream text;
  text << file.rdbuf();
  nn::Executable exe = compile(text.str(), true, true, backward);
  std::map<std::string, std::vector<int32_t>> lengths;
  for (int b = 0; b < 8; ++b) {
    lengths["T"].push_back(gLengths[b]);
    lengths["U"].push_back(std::max(1, gLengths[b] / 20));
  }
  std::mt19937 rng(3);
  nn::RunInputs inputs =
      nn::syntheticBatch(exe.manifest(), 8, lengths, rng, 0.0);
  nn::syntheticParameters(exe.manifest(), rng, inputs);
  nn::RunResult result;
  runMeasured(state, exe, inputs, result);
  state.SetLabel(backward ? "fwd+bwd" : "fwd");
}

/// One op family of generated loops alone, on the batch's lengths, for
/// the thread scaling table (run with --threads 1 and --threads 2):
/// 0 elementwise (tanh, mul over [B, T, 512]), 1 row reductions
/// (log_softmax over [B, T, 1000]), 2 loss picking (cross-entropy from
/// log-probs over [B, T, 1000]), 3 pack and unpack copies ([B, T, 512]).
std::string familySource(int family) {
  const char *dims = " dims [B: batch, T: seq(B), N: packed(B, T)] {\n";
  std::string wide = "!nn.tensor<[B, T, 512], f32>";
  std::string vocab = "!nn.tensor<[B, T, 1000], f32>";
  std::ostringstream s;
  switch (family) {
  case 0:
    s << "nn.graph @f(%x: " << wide << ") -> " << wide << dims
      << "  %t = nn.tanh %x : " << wide << "\n"
      << "  %m = nn.mul %t, %x : " << wide << "\n"
      << "  nn.return %m : " << wide << "\n}\n";
    break;
  case 1:
    s << "nn.graph @f(%x: " << vocab << ") -> " << vocab << dims
      << "  %l = nn.log_softmax %x : " << vocab << "\n"
      << "  nn.return %l : " << vocab << "\n}\n";
    break;
  case 2:
    s << "nn.graph @f(%x: " << vocab << ", %y: !nn.tensor<[B, T], i32>)" << dims
      << "  %ce = nn.cross_entropy %x, %y from log_probs : " << vocab
      << ", !nn.tensor<[B, T], i32>\n"
      << "  nn.mark_loss %ce as \"ce\" normalize per_frame : "
      << "!nn.tensor<[B, T], f32>\n  nn.return\n}\n";
    break;
  default:
    s << "nn.graph @f(%x: " << wide << ") -> " << wide << dims
      << "  %q = nn.pack %x : " << wide << " -> !nn.tensor<[N, 512], f32>\n"
      << "  %u = nn.unpack %q : !nn.tensor<[N, 512], f32> -> " << wide
      << "\n  nn.return %u : " << wide << "\n}\n";
  }
  return s.str();
}

void benchOpFamily(benchmark::State &state) {
  int family = state.range(0);
  nn::Executable exe = compile(familySource(family), false, true);
  std::map<std::string, std::vector<int32_t>> lengths{{"T", gLengths}};
  std::mt19937 rng(5);
  nn::RunInputs inputs =
      nn::syntheticBatch(exe.manifest(), kBatch, lengths, rng, 0.0);
  nn::RunResult result;
  runMeasured(state, exe, inputs, result);
  static const char *const kFamily[] = {"elementwise", "row reductions",
                                        "loss picking", "pack+unpack"};
  state.SetLabel(kFamily[family]);
}

/// Example 1's two BLSTM layers alone (80 -> 2 x 256 -> 2 x 256, no
/// dropout) on the first 8 sequences of the batch, under an MSE loss
/// against a target (cheap: the layers dominate). range(0) = 1: forward
/// and the gradients of every parameter; then range(1) = 1 the backward
/// reads the forward's tape (nn-save-lstm-tape), 0 recomputes it.
constexpr int kBlstmBatch = 8, kBlstmHidden = 256, kBlstmGates = 1024;
constexpr int kBlstmInput[2] = {80, 512};

std::string blstmLayersSource() {
  std::ostringstream s;
  auto tensor = [](const std::string &shape) {
    return "!nn.tensor<[" + shape + "], f32>";
  };
  for (int layer = 0; layer < 2; ++layer) {
    std::string l = std::to_string(layer + 1);
    std::string in = std::to_string(kBlstmInput[layer]);
    s << "nn.parameter @w" << l << "i : " << tensor("2, 1024, " + in) << "\n"
      << "nn.parameter @w" << l << "h : " << tensor("2, 1024, 256") << "\n"
      << "nn.parameter @b" << l << " : " << tensor("2, 1024") << "\n";
  }
  s << "nn.graph @blstm(%x: " << tensor("B, T, 80")
    << ", %target: " << tensor("B, T, 512")
    << ") dims [B: batch, T: seq(B)] {\n";
  std::string input = "%x";
  for (int layer = 0; layer < 2; ++layer) {
    std::string l = std::to_string(layer + 1);
    std::string in = std::to_string(kBlstmInput[layer]);
    s << "  %w" << l << "i = nn.param_ref @w" << l
      << "i : " << tensor("2, 1024, " + in) << "\n"
      << "  %w" << l << "h = nn.param_ref @w" << l
      << "h : " << tensor("2, 1024, 256") << "\n"
      << "  %b" << l << " = nn.param_ref @b" << l << " : " << tensor("2, 1024")
      << "\n"
      << "  %h" << l << " = nn.lstm bidirectional " << input << ", %w" << l
      << "i, %w" << l << "h, %b" << l << " : " << tensor("B, T, " + in) << ", "
      << tensor("2, 1024, " + in) << ", " << tensor("2, 1024, 256") << ", "
      << tensor("2, 1024") << "\n";
    input = "%h" + l;
  }
  s << "  %e = nn.mse %h2, %target : " << tensor("B, T, 512") << ", "
    << tensor("B, T, 512") << "\n"
    << "  nn.mark_loss %e as \"mse\" normalize per_frame : "
    << "!nn.tensor<[B, T], f32>\n  nn.return\n}\n";
  return s.str();
}

std::map<std::string, std::vector<int32_t>> blstmLengths() {
  return {{"T", std::vector<int32_t>(gLengths.begin(),
                                     gLengths.begin() + kBlstmBatch)}};
}

void benchBlstmLayers(benchmark::State &state) {
  bool backward = state.range(0);
  bool saveTape = state.range(1);
  nn::Executable exe = compile(blstmLayersSource(), true, true, backward, {},
                               false, false, Fusion::Sweep, saveTape);
  std::mt19937 rng(3);
  nn::RunInputs inputs =
      nn::syntheticBatch(exe.manifest(), kBlstmBatch, blstmLengths(), rng, 0.0);
  nn::syntheticParameters(exe.manifest(), rng, inputs);
  nn::RunResult result;
  runMeasured(state, exe, inputs, result);
  state.SetLabel(!backward  ? "BLSTM layers fwd"
                 : saveTape ? "BLSTM layers fwd+bwd, tape saved"
                            : "BLSTM layers fwd+bwd, recomputed");
}

/// One row-major GEMM on the artifacts' library (--gemm-library): the
/// runtime's oneDNN entry point that artifacts call, or OpenBLAS.
void blstmGemm(CBLAS_ORDER order, CBLAS_TRANSPOSE transA,
               CBLAS_TRANSPOSE transB, int m, int n, int k, float alpha,
               const float *a, int lda, const float *b, int ldb, float beta,
               float *c, int ldc) {
  if (gGemmLibrary == nn::GemmLibrary::onednn)
    nn_cpu_sgemm("benchBlstmGemms", order, transA, transB, m, n, k, alpha,
                 (int64_t)a, lda, (int64_t)b, ldb, beta, (int64_t)c, ldc);
  else
    cblas_sgemm(order, transA, transB, m, n, k, alpha, a, lda, b, ldb, beta, c,
                ldc);
}

/// The GEMMs nn's LSTM lowering runs for benchBlstmLayers, alone, called
/// directly on the same library (docs/performance.md, "BLSTM"). The
/// lowering runs in step order (RecurrentPatterns.cpp): per layer and
/// direction, the input projection of the N real frames and, at step s,
/// one recurrent [A(s), 256] x [256, 1024] product over the A(s)
/// sequences longer than s; with range(0) = 1 also the backward's
/// [A(s), 1024] x [1024, 256] products, the weight gradients of W_ih and
/// W_hh over the N frames, and the second layer's input gradient. (The
/// backward's recomputation of the forward is not part of the floor.)
void benchBlstmGemms(benchmark::State &state) {
  bool backward = state.range(0);
  std::map<std::string, std::vector<int32_t>> lengths = blstmLengths();
  // running[s]: the sequences longer than s; rows: the real frames.
  std::vector<int64_t> running;
  int64_t rows = 0;
  for (int32_t length : lengths["T"]) {
    rows += length;
    if ((int64_t)running.size() < length)
      running.resize(length, 0);
    for (int32_t s = 0; s < length; ++s)
      ++running[s];
  }
  int64_t steps = running.size();
  std::mt19937 rng(3);
  auto matrix = [&](int64_t count) {
    std::uniform_real_distribution<float> u(-0.1f, 0.1f);
    std::vector<float> m(count);
    for (float &v : m)
      v = u(rng);
    return m;
  };
  std::vector<float> x = matrix(rows * 512), w = matrix(kBlstmGates * 512),
                     wh = matrix(kBlstmGates * kBlstmHidden),
                     gates = matrix(rows * kBlstmGates),
                     h = matrix(rows * kBlstmHidden), dW = matrix(1024 * 512),
                     dx = matrix(rows * 512);
  const int64_t H = kBlstmHidden, G = kBlstmGates;
  for (auto _ : state) {
    for (int layer = 0; layer < 2; ++layer) {
      int64_t in = kBlstmInput[layer];
      for (int direction = 0; direction < 2; ++direction) {
        blstmGemm(CblasRowMajor, CblasNoTrans, CblasTrans, rows, G, in, 1.0f,
                  x.data(), in, w.data(), in, 0.0f, gates.data(), G);
        // Step s's rows follow the steps before it.
        int64_t start = 0;
        for (int64_t t = 0; t < steps; ++t) {
          blstmGemm(CblasRowMajor, CblasNoTrans, CblasTrans, running[t], G, H,
                    1.0f, h.data() + start * H, H, wh.data(), H, 1.0f,
                    gates.data() + start * G, G);
          start += running[t];
        }
        if (!backward)
          continue;
        start = 0;
        for (int64_t t = 0; t < steps; ++t) {
          blstmGemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, running[t], H, G,
                    1.0f, gates.data() + start * G, G, wh.data(), H, 0.0f,
                    h.data() + start * H, H);
          start += running[t];
        }
        blstmGemm(CblasRowMajor, CblasTrans, CblasNoTrans, G, in, rows, 1.0f,
                  gates.data(), G, x.data(), in, 0.0f, dW.data(), in);
        blstmGemm(CblasRowMajor, CblasTrans, CblasNoTrans, G, H, rows, 1.0f,
                  gates.data(), G, h.data(), H, 0.0f, dW.data(), H);
        if (layer == 1)
          blstmGemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, rows, in, G,
                    1.0f, gates.data(), G, w.data(), in,
                    direction ? 1.0f : 0.0f, dx.data(), in);
      }
    }
    benchmark::DoNotOptimize(dx.data());
    benchmark::DoNotOptimize(gates.data());
  }
  state.SetLabel(backward ? "their GEMMs fwd+bwd" : "their GEMMs fwd");
}

/// Viterbi forced alignment (nn.viterbi_align, CTC topology, from logits)
/// of the batch at V = 500 against labels of each utterance's own length
/// U (the lengths file's second column), padded scores; range(0) = 1 with
/// a prior. Counts real frames per second (docs/sequence-training.md).
void benchViterbiAlign(benchmark::State &state) {
  constexpr int kVocabulary = 500;
  bool prior = state.range(0);
  std::string scores = "!nn.tensor<[B, T, 500], f32>";
  std::string labels = "!nn.tensor<[B, U], i32>";
  std::string priorType = "!nn.tensor<[500], f32>";
  std::string source =
      (prior ? "nn.parameter @prior : " + priorType + "\n" : "") +
      "nn.graph @align(%x: " + scores + ", %y: " + labels +
      ") -> (!nn.tensor<[B, T], i32>, !nn.tensor<[B], f32>) dims [B: batch, "
      "T: seq(B), U: seq(B)] {\n" +
      (prior ? "  %p = nn.param_ref @prior : " + priorType + "\n" : "") +
      "  %a, %s = nn.viterbi_align %x, %y from logits topology ctc blank 0" +
      (prior ? " prior %p" : "") + " : " + scores + ", " + labels +
      (prior ? ", " + priorType : "") +
      "\n  nn.return %a, %s : !nn.tensor<[B, T], i32>, !nn.tensor<[B], "
      "f32>\n}\n";
  nn::Executable exe = compile(source, false, true);
  std::mt19937 rng(7);
  nn::RunInputs inputs;
  inputs.lengths["T"] = gLengths;
  inputs.lengths["U"] = gLabelLengths;
  inputs.inputs["x"] =
      randomTensor(nn::DType::f32, {kBatch, gPadded, kVocabulary}, rng, 1.0);
  nn::Tensor y(nn::DType::i32, {kBatch, std::max<int64_t>(gLabelPadded, 1)});
  for (int64_t i = 0; i < y.numElements(); ++i)
    y.data<int32_t>()[i] = 1 + (int32_t)(rng() % (kVocabulary - 1));
  inputs.inputs["y"] = y;
  if (prior)
    inputs.parameters["prior"] =
        randomTensor(nn::DType::f32, {kVocabulary}, rng, 1.0);
  nn::RunResult result;
  runMeasured(state, exe, inputs, result);
  state.counters["frames_per_s"] = benchmark::Counter(
      (double)gFrames * state.iterations(), benchmark::Counter::kIsRate);
  state.SetLabel(std::string("viterbi_align ctc, V = 500") +
                 (prior ? ", prior" : ""));
}

/// Decoding on the batch. range(0): 0 the acoustic model alone (example
/// 1's two BLSTM layers and its CTC output layer, 501 classes, forward on
/// all B = 32 utterances, returning the logits), 1 the same model followed
/// by greedy CTC decoding, 2 greedy decoding alone on logits of that
/// shape: 2 / 0 is greedy decoding's share of a recognition forward
/// (docs/performance.md).
std::string decodingModelSource(bool greedy) {
  std::ostringstream s;
  s << R"(nn.parameter @"lstm1.w_ih" : !nn.tensor<[2, 1024, 80], f32>
nn.parameter @"lstm1.w_hh" : !nn.tensor<[2, 1024, 256], f32>
nn.parameter @"lstm1.b" : !nn.tensor<[2, 1024], f32>
nn.parameter @"lstm2.w_ih" : !nn.tensor<[2, 1024, 512], f32>
nn.parameter @"lstm2.w_hh" : !nn.tensor<[2, 1024, 256], f32>
nn.parameter @"lstm2.b" : !nn.tensor<[2, 1024], f32>
nn.parameter @"ctc.w" : !nn.tensor<[501, 512], f32>
nn.parameter @"ctc.b" : !nn.tensor<[501], f32>
nn.graph @m(%x: !nn.tensor<[B, T, 80], f32>) -> )"
    << (greedy ? "(!nn.tensor<[B, Y], i32>, !nn.tensor<[B], f32>)"
               : "!nn.tensor<[B, T, 501], f32>")
    << (greedy ? " dims [B: batch, T: seq(B), Y: seq(B) computed] {"
               : " dims [B: batch, T: seq(B)] {")
    << R"(
  %a = nn.param_ref @"lstm1.w_ih" : !nn.tensor<[2, 1024, 80], f32>
  %b = nn.param_ref @"lstm1.w_hh" : !nn.tensor<[2, 1024, 256], f32>
  %c = nn.param_ref @"lstm1.b" : !nn.tensor<[2, 1024], f32>
  %h1 = nn.lstm bidirectional %x, %a, %b, %c : !nn.tensor<[B, T, 80], f32>, !nn.tensor<[2, 1024, 80], f32>, !nn.tensor<[2, 1024, 256], f32>, !nn.tensor<[2, 1024], f32>
  %d = nn.param_ref @"lstm2.w_ih" : !nn.tensor<[2, 1024, 512], f32>
  %e = nn.param_ref @"lstm2.w_hh" : !nn.tensor<[2, 1024, 256], f32>
  %f = nn.param_ref @"lstm2.b" : !nn.tensor<[2, 1024], f32>
  %h2 = nn.lstm bidirectional %h1, %d, %e, %f : !nn.tensor<[B, T, 512], f32>, !nn.tensor<[2, 1024, 512], f32>, !nn.tensor<[2, 1024, 256], f32>, !nn.tensor<[2, 1024], f32>
  %w = nn.param_ref @"ctc.w" : !nn.tensor<[501, 512], f32>
  %o = nn.param_ref @"ctc.b" : !nn.tensor<[501], f32>
  %z = nn.linear %h2, %w, %o : !nn.tensor<[B, T, 512], f32>, !nn.tensor<[501, 512], f32>, !nn.tensor<[501], f32>
)";
  if (greedy)
    s << "  %y, %s = nn.ctc_greedy_decode %z from logits blank 0 : "
         "!nn.tensor<[B, T, 501], f32> -> !nn.tensor<[B, Y], i32>, "
         "!nn.tensor<[B], f32>\n  nn.return %y, %s : !nn.tensor<[B, Y], "
         "i32>, !nn.tensor<[B], f32>\n}\n";
  else
    s << "  nn.return %z : !nn.tensor<[B, T, 501], f32>\n}\n";
  return s.str();
}

/// Greedy CTC decoding alone, on [B, T, 501] logits.
const char *const kGreedyAlone = R"(
nn.graph @greedy(%z: !nn.tensor<[B, T, 501], f32>)
    -> (!nn.tensor<[B, Y], i32>, !nn.tensor<[B], f32>)
    dims [B: batch, T: seq(B), Y: seq(B) computed] {
  %y, %s = nn.ctc_greedy_decode %z from logits blank 0 : !nn.tensor<[B, T, 501], f32> -> !nn.tensor<[B, Y], i32>, !nn.tensor<[B], f32>
  nn.return %y, %s : !nn.tensor<[B, Y], i32>, !nn.tensor<[B], f32>
}
)";

/// Runs `exe` on the benchmark's batch (random inputs of the batch's
/// lengths, random parameters) and counts real frames per second.
void runOnTheBatch(benchmark::State &state, nn::Executable &exe) {
  std::map<std::string, std::vector<int32_t>> lengths{{"T", gLengths}};
  std::mt19937 rng(3);
  nn::RunInputs inputs =
      nn::syntheticBatch(exe.manifest(), kBatch, lengths, rng, 0.0);
  nn::syntheticParameters(exe.manifest(), rng, inputs);
  nn::RunResult result;
  runMeasured(state, exe, inputs, result);
  state.counters["frames_per_s"] = benchmark::Counter(
      (double)gFrames * state.iterations(), benchmark::Counter::kIsRate);
}

/// range(0) 0: the recognizer's logits (no loss and no search: nothing
/// anchors packing, so it runs padded); 1: the recognizer and greedy
/// decoding, whose search packs the model from its input; 2: greedy
/// decoding alone on the model's output shape; 3: 1 compiled without
/// packing (padded, as before decode graphs packed).
void benchGreedyDecode(benchmark::State &state) {
  int variant = state.range(0);
  nn::Executable exe =
      compile(variant == 2 ? kGreedyAlone
                           : decodingModelSource(variant == 1 || variant == 3),
              /*pack=*/variant != 3, true);
  runOnTheBatch(state, exe);
  const char *labels[] = {"BLSTM + CTC layer",
                          "BLSTM + CTC layer + greedy decoding, packed",
                          "greedy decoding alone, V = 501",
                          "BLSTM + CTC layer + greedy decoding, padded"};
  state.SetLabel(labels[variant]);
}

/// The CTC prefix beam search alone (nn.ctc_beam_search from log-probs) on
/// the batch at V = 500, padded: range(0) the beam, range(1) 0 for merge
/// sum and 1 for merge max, range(2) the token beam (0: all classes). The
/// scores are peaked like a trained model's: per frame the blank (70%) or
/// a random label is 8 nats above the rest (standard normal).
/// --ctc-scores FILE.npz: the search's log-probabilities `x` [B, T, V] f32
/// and `lengths.T` from a file instead (bench/compare-ctc-decoders.py
/// writes one and runs other decoders on the same arrays).
std::string gCtcScoresPath;

void benchCtcBeamSearch(benchmark::State &state) {
  int beam = state.range(0);
  bool max = state.range(1);
  int tokenBeam = state.range(2);
  nn::RunInputs inputs;
  int64_t frames = gFrames;
  if (!gCtcScoresPath.empty()) {
    std::map<std::string, nn::Tensor> arrays;
    absl::Status status = nn::readNpz(gCtcScoresPath, arrays);
    if (!status.ok() || !arrays.count("x") || !arrays.count("lengths.T") ||
        arrays.at("x").rank() != 3 ||
        arrays.at("x").dtype() != nn::DType::f32) {
      state.SkipWithError("--ctc-scores: expected x [B, T, V] f32 and "
                          "lengths.T");
      return;
    }
    inputs.inputs["x"] = arrays.at("x");
    const nn::Tensor &lengths = arrays.at("lengths.T");
    inputs.lengths["T"].assign(lengths.data<int32_t>(),
                               lengths.data<int32_t>() + lengths.numElements());
    frames = 0;
    for (int32_t length : inputs.lengths["T"])
      frames += length;
  }
  int64_t vocabulary =
      gCtcScoresPath.empty() ? 500 : inputs.inputs.at("x").shape()[2];
  std::string scores =
      "!nn.tensor<[B, T, " + std::to_string(vocabulary) + "], f32>";
  std::string source =
      "nn.graph @search(%x: " + scores +
      ") -> (!nn.tensor<[B, Y], i32>, !nn.tensor<[B], f32>) dims [B: batch, "
      "T: seq(B), Y: seq(B) computed] {\n  %y, %s = nn.ctc_beam_search %x "
      "from log_probs blank 0 beam " +
      std::to_string(beam) + " merge " + (max ? "max" : "sum") +
      (tokenBeam ? " token_beam " + std::to_string(tokenBeam) : "") + " : " +
      scores +
      " -> !nn.tensor<[B, Y], i32>, !nn.tensor<[B], f32>\n  nn.return %y, %s "
      ": !nn.tensor<[B, Y], i32>, !nn.tensor<[B], f32>\n}\n";
  nn::Executable exe = compile(source, false, true);
  if (gCtcScoresPath.empty()) {
    std::mt19937 rng(11);
    std::normal_distribution<float> noise(0.0f, 1.0f);
    nn::Tensor x(nn::DType::f32, {kBatch, gPadded, vocabulary});
    float *data = x.data<float>();
    for (int64_t row = 0; row < kBatch * gPadded; ++row) {
      float *frame = data + row * vocabulary;
      double sum = 0;
      int peak = rng() % 10 < 7 ? 0 : 1 + rng() % (vocabulary - 1);
      for (int c = 0; c < vocabulary; ++c) {
        frame[c] = noise(rng) + (c == peak ? 8.0f : 0.0f);
        sum += std::exp((double)frame[c]);
      }
      for (int c = 0; c < vocabulary; ++c)
        frame[c] -= (float)std::log(sum);
    }
    inputs.lengths["T"] = gLengths;
    inputs.inputs["x"] = x;
  }
  nn::RunResult result;
  runMeasured(state, exe, inputs, result);
  state.counters["frames_per_s"] = benchmark::Counter(
      (double)frames * state.iterations(), benchmark::Counter::kIsRate);
  state.SetLabel("ctc_beam_search V = " + std::to_string(vocabulary) +
                 ", beam " + std::to_string(beam) +
                 (max ? ", merge max" : ", merge sum") +
                 (tokenBeam ? ", token_beam " + std::to_string(tokenBeam)
                            : ", all tokens"));
}

/// Transducer beam search (nn.transducer_beam_search) at B = 8, beam 4,
/// V = 32 classes, over random encoder frames of 100 to 200 steps: the
/// predictor a one-step graph (embedding, linear over [embedding, state],
/// tanh; D = 64), the joiner tanh then linear to V; random parameters.
/// range(0): 0 for rna, 1 for rnnt with max_symbols 2. Counts frames/s.
void benchTransducerBeamSearch(benchmark::State &state) {
  bool rnnt = state.range(0);
  constexpr int64_t kRows = 8, kWidth = 64, kClasses = 32, kBeam = 4;
  std::string d = std::to_string(kWidth), v = std::to_string(kClasses);
  std::string row = "!nn.tensor<[S, " + d + "], f32>";
  std::string source =
      "nn.parameter @embed : !nn.tensor<[" + v + ", " + d +
      "], f32>\n"
      "nn.parameter @wp : !nn.tensor<[" +
      d + ", " + std::to_string(2 * kWidth) +
      "], f32>\n"
      "nn.parameter @wj : !nn.tensor<[" +
      v + ", " + d +
      "], f32>\n"
      "nn.graph @pred(%y: !nn.tensor<[S], i32>, %h: " +
      row + ") -> (" + row + ", " + row +
      ") dims [S: batch] {\n"
      "  %e = nn.param_ref @embed : !nn.tensor<[" +
      v + ", " + d +
      "], f32>\n"
      "  %w = nn.param_ref @wp : !nn.tensor<[" +
      d + ", " + std::to_string(2 * kWidth) +
      "], f32>\n"
      "  %x = nn.embedding %y, %e : !nn.tensor<[S], i32>, !nn.tensor<[" +
      v + ", " + d + "], f32>\n  %c = nn.concat %x, %h : " + row + ", " + row +
      "\n  %l = nn.linear %c, %w : !nn.tensor<[S, " +
      std::to_string(2 * kWidth) + "], f32>, !nn.tensor<[" + d + ", " +
      std::to_string(2 * kWidth) + "], f32>\n  %n = nn.tanh %l : " + row +
      "\n  nn.return %n, %n : " + row + ", " + row +
      "\n}\n"
      "nn.graph @joint(%h: !nn.tensor<[R, " +
      d + "], f32>) -> !nn.tensor<[R, " + v +
      "], f32> dims [R: batch] {\n"
      "  %w = nn.param_ref @wj : !nn.tensor<[" +
      v + ", " + d + "], f32>\n  %t = nn.tanh %h : !nn.tensor<[R, " + d +
      "], f32>\n  %z = nn.linear %t, %w : !nn.tensor<[R, " + d +
      "], f32>, !nn.tensor<[" + v + ", " + d +
      "], f32>\n  nn.return %z : !nn.tensor<[R, " + v +
      "], f32>\n}\n"
      "nn.graph @search(%enc: !nn.tensor<[B, T, " +
      d +
      "], f32>) -> (!nn.tensor<[B, K, Y], i32>, !nn.tensor<[B, K], f32>) "
      "dims [B: batch, T: seq(B), K: seq(B) computed, H: batch = flatten(B, "
      "K), Y: seq(H) computed] {\n  %y, %s = nn.transducer_beam_search %enc "
      "predictor @pred joiner @joint topology " +
      (rnnt ? "rnnt" : "rna") + " blank 0 start 0 beam " +
      std::to_string(kBeam) + (rnnt ? " max_symbols 2" : "") +
      " : !nn.tensor<[B, T, " + d +
      "], f32> -> !nn.tensor<[B, K, Y], i32>, !nn.tensor<[B, K], f32>\n"
      "  nn.return %y, %s : !nn.tensor<[B, K, Y], i32>, !nn.tensor<[B, K], "
      "f32>\n}\n";
  nn::Executable exe = compile(source, false, true);
  std::mt19937 rng(29);
  std::uniform_real_distribution<float> u(-1.0f, 1.0f);
  auto random = [&](std::vector<int64_t> shape, float scale) {
    nn::Tensor t(nn::DType::f32, shape);
    for (int64_t i = 0; i < t.numElements(); ++i)
      t.data<float>()[i] = scale * u(rng);
    return t;
  };
  nn::RunInputs inputs;
  int64_t frames = 0, padded = 0;
  for (int64_t b = 0; b < kRows; ++b) {
    int32_t length = 100 + rng() % 101;
    inputs.lengths["T"].push_back(length);
    frames += length;
    padded = std::max<int64_t>(padded, length);
  }
  inputs.inputs["enc"] = random({kRows, padded, kWidth}, 1.0f);
  inputs.parameters["embed"] = random({kClasses, kWidth}, 1.0f);
  inputs.parameters["wp"] = random({kWidth, 2 * kWidth}, 0.2f);
  inputs.parameters["wj"] = random({kClasses, kWidth}, 1.0f);
  nn::RunResult result;
  runMeasured(state, exe, inputs, result);
  state.counters["frames_per_s"] = benchmark::Counter(
      (double)frames * state.iterations(), benchmark::Counter::kIsRate);
  state.SetLabel(std::string("transducer_beam_search ") +
                 (rnnt ? "rnnt, max_symbols 2" : "rna") +
                 ", B = 8, V = 32, D = 64, beam 4");
}

/// The RNN-T loss tail of a transducer at B = 30 (the first 30 utterances
/// of the batch, with their own T and U): encoder [B, T, 512] and
/// prediction [B, U + 1, 512] meet in the joint, then tanh, linear to
/// V = 500, the RNN-T loss (log-softmax fused); forward and backward (the
/// gradients of the joint's weight and of both inputs). range(0) = 1
/// computes the joint packed ([J, D], J = sum T (U + 1) rows), 0 padded
/// ([B, T_max, U_max + 1, D]). Reports the peak of the large buffers, the
/// joint's rows and the valid fraction of the padded grid
/// (docs/sequence-training.md).
constexpr int kTransducerBatch = 30, kTransducerVocabulary = 500;

std::string transducerSource(bool packed) {
  std::string rows = packed ? "J" : "B, T, U1";
  std::string d = std::to_string(kHidden),
              v = std::to_string(kTransducerVocabulary);
  std::string h = "!nn.tensor<[" + rows + ", " + d + "], f32>";
  std::string z = "!nn.tensor<[" + rows + ", " + v + "], f32>";
  std::string w = "!nn.tensor<[" + v + ", " + d + "], f32>";
  std::string e = "!nn.tensor<[B, T, " + d + "], f32>";
  std::string p = "!nn.tensor<[B, U1, " + d + "], f32>";
  return "nn.parameter @w : " + w + "\n" + "nn.graph @rnnt(%e: " + e +
         ", %p: " + p +
         ", %y: !nn.tensor<[B, U], i32>) dims [B: batch, T: seq(B), U: "
         "seq(B), U1: seq(B) = U + 1, J: packed(B, T, U1)] {\n" +
         "  %w = nn.param_ref @w : " + w + "\n" +
         "  %j = nn.transducer_join %e, %p : " + e + ", " + p + " -> " + h +
         "\n" + "  %h = nn.tanh %j : " + h + "\n" +
         "  %z = nn.linear %h, %w : " + h + ", " + w + "\n" +
         "  %l = nn.transducer_loss %z, %y from logits topology rnnt blank 0 "
         ": " +
         z + ", !nn.tensor<[B, U], i32>\n" +
         "  nn.mark_loss %l as \"rnnt\" normalize per_sequence : "
         "!nn.tensor<[B], f32>\n  nn.return\n}\n";
}

/// The first 30 utterances of the batch as a transducer's inputs: encoder
/// `e` [B, T, 512] and prediction `p` [B, U + 1, 512] at random, labels `y`
/// of each utterance's own U, the joint's weight `w`; with the padded
/// sizes, the valid (t, u) pairs and the frames.
struct TransducerBatch {
  nn::RunInputs inputs;
  int64_t timeMax = 0, labelMax = 0, validPairs = 0, frames = 0;
};

TransducerBatch transducerBatch() {
  TransducerBatch batch;
  std::vector<int32_t> frames(gLengths.begin(),
                              gLengths.begin() + kTransducerBatch);
  std::vector<int32_t> labels(gLabelLengths.begin(),
                              gLabelLengths.begin() + kTransducerBatch);
  for (int b = 0; b < kTransducerBatch; ++b) {
    batch.timeMax = std::max<int64_t>(batch.timeMax, frames[b]);
    batch.labelMax = std::max<int64_t>(batch.labelMax, labels[b]);
    batch.validPairs += (int64_t)frames[b] * (labels[b] + 1);
    batch.frames += frames[b];
  }
  std::mt19937 rng(11);
  nn::RunInputs &inputs = batch.inputs;
  inputs.lengths["T"] = frames;
  inputs.lengths["U"] = labels;
  inputs.inputs["e"] = randomTensor(
      nn::DType::f32, {kTransducerBatch, batch.timeMax, kHidden}, rng, 0.5);
  inputs.inputs["p"] =
      randomTensor(nn::DType::f32,
                   {kTransducerBatch, batch.labelMax + 1, kHidden}, rng, 0.5);
  nn::Tensor y(nn::DType::i32,
               {kTransducerBatch, std::max<int64_t>(batch.labelMax, 1)});
  for (int64_t i = 0; i < y.numElements(); ++i)
    y.data<int32_t>()[i] = 1 + (int32_t)(rng() % (kTransducerVocabulary - 1));
  inputs.inputs["y"] = y;
  inputs.parameters["w"] =
      randomTensor(nn::DType::f32, {kTransducerVocabulary, kHidden}, rng,
                   1.0 / std::sqrt(kHidden));
  return batch;
}

void benchTransducer(benchmark::State &state) {
  bool packed = state.range(0);
  nn::Executable exe = compile(transducerSource(packed), false, true,
                               /*grads=*/true, {"e", "p"});
  TransducerBatch batch = transducerBatch();
  nn::RunResult result;
  runMeasured(state, exe, batch.inputs, result);
  int64_t padded = kTransducerBatch * batch.timeMax * (batch.labelMax + 1);
  state.counters["joint_rows"] = packed ? batch.validPairs : padded;
  state.counters["valid_fraction"] = (double)batch.validPairs / padded;
  if (!result.losses.empty())
    state.counters["loss"] = result.losses.at(0).normalized;
  state.SetLabel(std::string(packed ? "packed" : "padded") +
                 " joint, rnnt fwd+bwd, B = 30, V = 500, D = 512");
}

/// nn.transducer_align over the same joint as benchTransducer (packed, B
/// = 30, V = 500, D = 512): join, tanh, linear to V and the RNA alignment
/// (log-softmax fused), forward only. Counts frames per second.
void benchTransducerAlign(benchmark::State &state) {
  std::string source = transducerSource(/*packed=*/true);
  std::string loss = source.substr(source.find("  %l = nn.transducer_loss"));
  source.replace(source.find(loss), loss.size(),
                 "  %a, %s = nn.transducer_align %z, %y from logits topology "
                 "rna blank 0 : !nn.tensor<[J, 500], f32>, !nn.tensor<[B, U], "
                 "i32> -> !nn.tensor<[B, T], i32>, !nn.tensor<[B], f32>\n"
                 "  nn.return %a, %s : !nn.tensor<[B, T], i32>, "
                 "!nn.tensor<[B], f32>\n}\n");
  source.replace(source.find(") dims [B: batch"), 1,
                 ") -> (!nn.tensor<[B, T], i32>, !nn.tensor<[B], f32>)");
  nn::Executable exe = compile(source, false, true);
  TransducerBatch batch = transducerBatch();
  nn::RunResult result;
  runMeasured(state, exe, batch.inputs, result);
  state.counters["frames_per_s"] = benchmark::Counter(
      (double)batch.frames * state.iterations(), benchmark::Counter::kIsRate);
  state.SetLabel("transducer_align rna, packed joint, B = 30, V = 500, "
                 "D = 512");
}

/// The text of `examples/<name>` (example 1 by default).
std::string exampleSource(const std::string &name = "blstm_ce_ctc.mlir") {
  std::ifstream file(std::string(NN_SOURCE_DIR) + "/examples/" + name);
  std::stringstream text;
  text << file.rdbuf();
  return text.str();
}

/// Example 1's train step (or forward+backward) and a batch for it.
struct TrainStepCase {
  nn::Executable exe;
  nn::RunInputs batch;
  nn::TrainState train;
  bool step = true;

  absl::Status once() {
    if (step) {
      nn::StepReport report;
      return nn::runTrainStep(exe, batch, 1e-4, 7, train, report);
    }
    nn::RunResult result;
    return exe.run(batch, result);
  }
};

/// The benchmark's batch (its LibriSpeech lengths, one label per 20
/// frames), a dropout seed and fresh parameters for `c.exe`.
void fillTrainStepBatch(TrainStepCase &c) {
  std::map<std::string, std::vector<int32_t>> lengths;
  lengths["T"] = gLengths;
  for (int32_t length : gLengths)
    lengths["U"].push_back(std::max(1, length / 20));
  std::mt19937 rng(3);
  c.batch = nn::syntheticBatch(c.exe.manifest(), kBatch, lengths, rng, 0.0);
  c.batch.inputs.erase("learning_rate");
  c.batch.inputs.erase("step");
  c.batch.inputs["dropout_seed"] =
      nn::Tensor::of<int32_t>(nn::DType::i32, {}, {7});
  (void)nn::initializeParameters(c.exe.manifest(), 1, c.train.parameters);
  if (!c.step)
    c.batch.parameters = c.train.parameters;
}

TrainStepCase trainStepCase(bool pack, bool lossTailOnly, bool step,
                            Fusion fusion, bool saveTape) {
  TrainStepCase c;
  c.step = step;
  c.exe = compile(exampleSource(), pack, true, true, {}, /*trainStep=*/step,
                  /*training=*/true, fusion, saveTape,
                  lossTailOnly ? nn::PackFrontier::lossTail
                               : nn::PackFrontier::cost);
  fillTrainStepBatch(c);
  return c;
}

/// Runs the train step of the speech example `example` (graph `entry`) on
/// the benchmark's batch of 40-dim features, compiled with `options` (the
/// entry, training and threads set here); counts real frames per second.
void runSpeechTrainStep(benchmark::State &state, const std::string &example,
                        const std::string &entry, nn::CompileOptions options,
                        const std::string &label) {
  options.entry = entry;
  options.grads = options.training = options.trainStep = true;
  options.cpu.threads = gThreadedCode;
  options.cpu.gemmLibrary = gGemmLibrary;
  TrainStepCase c;
  absl::StatusOr<nn::Artifact> artifact =
      nn::compileSource(exampleSource(example), example, options);
  absl::Status status = artifact.status();
  if (status.ok())
    status = nn::Executable::load(artifact->path(), c.exe);
  if (!status.ok()) {
    state.SkipWithError(std::string(status.message()).c_str());
    return;
  }
  fillTrainStepBatch(c);
  for (auto _ : state)
    if (absl::Status status = c.once(); !status.ok())
      state.SkipWithError(std::string(status.message()).c_str());
  state.counters["frames/s"] = benchmark::Counter(
      (double)gFrames * state.iterations(), benchmark::Counter::kIsRate);
  state.SetLabel(label);
}

/// The train step of the speech example (examples/speech/ctc.mlir, entry
/// ctc: SpecAugment, the BLSTM behind `nn.call @acoustic`, CTC, Adam) on
/// the benchmark's batch of 40-dim features; range(0) = 1 inlines the
/// call first (the default: the cost model then packs the BLSTM), 0 keeps
/// it (only the CTC loss packs). Counts real frames per second.
void benchSpeechTrainStep(benchmark::State &state) {
  bool inlineCalls = state.range(0);
  nn::CompileOptions options;
  options.optimize.inlineCalls = inlineCalls;
  runSpeechTrainStep(state, "speech/ctc.mlir", "ctc", options,
                     inlineCalls ? "speech ctc train step, call inlined"
                                 : "speech ctc train step, call kept");
}

/// The train step of the Conformer example (examples/speech/conformer_ctc.mlir,
/// entry ctc: SpecAugment, subsampling by 2, two Conformer blocks with
/// relative positions, CTC, Adam; the call inlined) on the benchmark's
/// batch of 40-dim features: range(0) = 1 packed by the cost model (both
/// blocks on real frames), 0 padded (every frame-wise layer on padded
/// frames too; attention and the depthwise convolutions read each
/// sequence's own frames either way); range(1) = 0 has each attention's
/// backward recompute its forward's log normalizers and output instead of
/// reading them (nn-save-attention-stats off). Counts real frames per
/// second.
void benchConformerTrainStep(benchmark::State &state) {
  bool pack = state.range(0), saveStats = state.range(1);
  nn::CompileOptions options;
  options.optimize.inlineCalls = true;
  options.optimize.pack = pack;
  options.optimize.saveAttentionStats = saveStats;
  std::string label = pack ? "conformer ctc train step, packed"
                           : "conformer ctc train step, padded";
  if (!saveStats)
    label += ", attention stats recomputed";
  runSpeechTrainStep(state, "speech/conformer_ctc.mlir", "ctc", options, label);
}

/// nn-decode's graph of the Conformer example (entry decode: the encoder
/// and greedy CTC decoding, no loss) on the benchmark's batch of 40-dim
/// features, random parameters: range(0) = 1 packed (the search reads
/// packed logits, so the cost model packs the model from its input), 0
/// padded. Counts real frames per second.
void benchConformerDecode(benchmark::State &state) {
  nn::CompileOptions options;
  options.entry = "decode";
  options.optimize.inlineCalls = true;
  options.optimize.pack = state.range(0);
  nn::Executable exe =
      compile(exampleSource("speech/conformer_ctc.mlir"), options);
  runOnTheBatch(state, exe);
  state.SetLabel(state.range(0) ? "conformer ctc decode, packed"
                                : "conformer ctc decode, padded");
}

/// The train step of the Conformer transducer example
/// (examples/speech/conformer_transducer.mlir, entry rnnt: the encoder of
/// benchConformerTrainStep projected to 64, an LSTM prediction network
/// over one label per 20 frames, the joint on the packed (t, u) grid, the
/// RNN-T loss, Adam): range(0) = 1 packed by the cost model (the encoder
/// and the prediction network behind the join's packs), 0 padded (the
/// joint grid stays packed either way). Counts real frames per second.
void benchConformerTransducerTrainStep(benchmark::State &state) {
  bool pack = state.range(0);
  nn::CompileOptions options;
  options.optimize.inlineCalls = true;
  options.optimize.pack = pack;
  runSpeechTrainStep(state, "speech/conformer_transducer.mlir", "rnnt", options,
                     pack ? "conformer rnnt train step, packed"
                          : "conformer rnnt train step, padded");
}

/// Example 1 at B = 32 (the batch's LibriSpeech lengths, one label per 20
/// frames): range(1) = 1 runs the train step (forward, backward, global
/// norm and Adam, the state swapped in between steps), 0 forward+backward
/// alone (the gradients returned); range(0) = 1 packed (the default
/// frontier: the cost model packs the features and runs both BLSTMs on
/// packed rows), 2 packed at the loss tail only, 0 padded;
/// range(2) = 0 leaves the loss tail unfused; range(3) = 0 recomputes the
/// LSTM forwards in the backward (no saved tape). Dropout is on in all.
/// Counts real frames per second.
void benchTrainStep(benchmark::State &state) {
  bool pack = state.range(0) != 0;
  bool lossTailOnly = state.range(0) == 2;
  bool step = state.range(1);
  auto fusion = static_cast<Fusion>(state.range(2));
  TrainStepCase c =
      trainStepCase(pack, lossTailOnly, step, fusion, state.range(3));
  auto once = [&]() {
    if (absl::Status status = c.once(); !status.ok())
      state.SkipWithError(std::string(status.message()).c_str());
  };
  for (auto _ : state)
    once();
  nn::runtime::resetPeakLiveBytes();
  once();
  state.counters["peak_MiB"] =
      static_cast<double>(nn::runtime::peakLiveBytes()) / (1 << 20);
  // The floor without the batch, which the caller allocates and the peak
  // does not count either (the state does: earlier steps' results).
  absl::StatusOr<nn::MemoryFloor> floor =
      nn::trainStepFloor(c.exe.manifest(), c.batch);
  if (!floor.ok()) {
    state.SkipWithError(std::string(floor.status().message()).c_str());
    return;
  }
  state.counters["floor_MiB"] =
      static_cast<double>(floor->total() - floor->inputs) / (1 << 20);
  state.counters["saved_MiB"] = static_cast<double>(floor->saved) / (1 << 20);
  state.counters["frames/s"] = benchmark::Counter(
      (double)gFrames * state.iterations(), benchmark::Counter::kIsRate);
  state.SetLabel(std::string(!pack          ? "padded"
                             : lossTailOnly ? "packed at the loss tail"
                                            : "packed") +
                 (step ? " train step" : " fwd+bwd") +
                 (fusion == Fusion::Unfused ? " unfused" : ""));
}

/// --memory-report: example 1's train step, padded and packed (the
/// defaults otherwise), its floor by part and by saved value next to the
/// measured peak, in MiB. The peak counts the artifact's blocks of 1 MiB
/// and more and the state earlier steps returned, not the batch; the
/// floor is shown without the batch likewise.
int printMemoryReport() {
  for (bool pack : {false, true}) {
    TrainStepCase c = trainStepCase(pack, false, true, Fusion::Sweep, true);
    absl::Status status = c.once();
    if (status.ok()) {
      nn::runtime::resetPeakLiveBytes();
      status = c.once();
    }
    absl::StatusOr<nn::MemoryFloor> floor =
        status.ok() ? nn::trainStepFloor(c.exe.manifest(), c.batch)
                    : absl::StatusOr<nn::MemoryFloor>(status);
    if (!floor.ok()) {
      std::fprintf(stderr, "nn-bench: %s\n",
                   std::string(floor.status().message()).c_str());
      return 1;
    }
    auto mib = [](int64_t bytes) { return (double)bytes / (1 << 20); };
    std::printf("example 1 train step, %s:\n", pack ? "packed" : "padded");
    std::printf("  parameters %.1f, optimizer state %.1f, gradients %.1f, "
                "saved activations %.1f; floor %.1f (the batch %.1f apart)\n",
                mib(floor->parameters), mib(floor->optimizerState),
                mib(floor->gradients), mib(floor->saved),
                mib(floor->total() - floor->inputs), mib(floor->inputs));
    std::printf("  measured peak %.1f\n", mib(nn::runtime::peakLiveBytes()));
    for (const auto &[origin, bytes] : floor->savedByOrigin)
      std::printf("  saved %8.1f  %s\n", mib(bytes), origin.c_str());
  }
  return 0;
}

/// The recipe's model (examples/recipe: a BLSTM of 32 units per direction
/// over 16 features, 8 classes) at B = 32 with the batch's lengths and one
/// label per 20 frames, one train step (forward, backward, Adam): range(0)
/// = 0 trains CTC (ctc.mlir), 1 fine-tunes with MWER and CTC (mwer.mlir:
/// a beam-4 CTC prefix search in the step, its N-best lists rescored by
/// ctc_loss over the flattened batch, expected_risk). The ratio is what
/// MWER fine-tuning costs over CTC training per step. Real frames per
/// second.
void benchMwerTrainStep(benchmark::State &state) {
  bool mwer = state.range(0);
  std::ifstream file(std::string(NN_SOURCE_DIR) + "/examples/recipe/" +
                     (mwer ? "mwer.mlir" : "ctc.mlir"));
  std::stringstream text;
  text << file.rdbuf();
  nn::CompileOptions options;
  options.optimize.pack = true;
  options.codegen.blas = true;
  options.grads = true;
  options.trainStep = true;
  options.cpu.threads = gThreadedCode;
  options.cpu.gemmLibrary = gGemmLibrary;
  if (mwer)
    options.trainedLosses = {{"mwer", 1.0}, {"ctc", 1.0}};
  nn::Executable exe;
  absl::StatusOr<nn::Artifact> artifact =
      nn::compileSource(text.str(), "bench.mlir", options);
  absl::Status status = artifact.status();
  if (status.ok())
    status = nn::Executable::load(artifact->path(), exe);
  if (!status.ok()) {
    state.SkipWithError(std::string(status.message()).c_str());
    return;
  }
  std::map<std::string, std::vector<int32_t>> lengths;
  lengths["T"] = gLengths;
  for (int32_t length : gLengths)
    lengths["U"].push_back(std::max(1, length / 20));
  std::mt19937 rng(3);
  nn::RunInputs batch =
      nn::syntheticBatch(exe.manifest(), kBatch, lengths, rng, 0.0);
  batch.inputs.erase("learning_rate");
  batch.inputs.erase("step");
  nn::TrainState train;
  (void)nn::initializeParameters(exe.manifest(), 1, train.parameters);
  // A trained CTC model is peaky: most frames are blank. Freshly
  // initialized, every frame's argmax is a coin toss over 8 classes and
  // each hypothesis holds about 0.8 T labels, which makes rescoring cost
  // O(T^2) per hypothesis; an output bias of 4 on the blank gives about
  // 0.1 T labels, closer to what MWER fine-tuning starts from.
  nn::Tensor &bias = train.parameters.at("out.b");
  bias.data<float>()[0] = 4.0f;
  auto once = [&]() {
    nn::StepReport report;
    absl::Status stepStatus =
        nn::runTrainStep(exe, batch, 1e-4, 7, train, report);
    if (!stepStatus.ok())
      state.SkipWithError(std::string(stepStatus.message()).c_str());
  };
  for (auto _ : state)
    once();
  nn::runtime::resetPeakLiveBytes();
  once();
  state.counters["peak_MiB"] =
      static_cast<double>(nn::runtime::peakLiveBytes()) / (1 << 20);
  state.counters["frames/s"] = benchmark::Counter(
      (double)gFrames * state.iterations(), benchmark::Counter::kIsRate);
  state.SetLabel(mwer ? "MWER + CTC, beam 4" : "CTC");
}

void gemmCounters(benchmark::State &state, int vocabulary) {
  state.counters["GFLOP/s"] = benchmark::Counter(
      2.0 * gFrames * kHidden * vocabulary * state.iterations() / 1e9,
      benchmark::Counter::kIsRate);
}

nn::RunInputs gemmInputs(int vocabulary) {
  std::mt19937 rng(2);
  nn::RunInputs inputs;
  inputs.lengths["T"] = gLengths;
  inputs.inputs["x"] = randomTensor(nn::DType::f32, {gFrames, kHidden}, rng, 1);
  inputs.inputs["w"] =
      randomTensor(nn::DType::f32, {vocabulary, kHidden}, rng, 1);
  inputs.inputs["t"] = nn::Tensor(nn::DType::i32, {kBatch, gPadded});
  return inputs;
}

/// nn's GEMM: range(1) = 1 for the default artifact (CBLAS), 0 for
/// generated loops.
void benchNnGemm(benchmark::State &state) {
  int vocabulary = state.range(0);
  bool blas = state.range(1);
  nn::Executable exe = compile(gemmSource(vocabulary), false, blas);
  nn::RunInputs inputs = gemmInputs(vocabulary);
  nn::RunResult result;
  for (auto _ : state) {
    absl::Status status = exe.run(inputs, result);
    if (!status.ok())
      state.SkipWithError(std::string(status.message()).c_str());
  }
  gemmCounters(state, vocabulary);
  state.SetLabel(blas ? "nn artifact (" +
                            std::string(nn::enumName(gGemmLibrary)) + ")"
                      : "nn generated loops");
}

void benchOpenBlasSgemm(benchmark::State &state) {
  int vocabulary = state.range(0);
  nn::RunInputs inputs = gemmInputs(vocabulary);
  std::vector<float> c(gFrames * vocabulary);
  for (auto _ : state) {
    cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasTrans, gFrames, vocabulary,
                kHidden, 1.0f, inputs.inputs["x"].data<float>(), kHidden,
                inputs.inputs["w"].data<float>(), kHidden, 0.0f, c.data(),
                vocabulary);
    benchmark::DoNotOptimize(c.data());
  }
  gemmCounters(state, vocabulary);
  state.SetLabel("OpenBLAS sgemm");
}

} // namespace

BENCHMARK(benchLossTail)
    ->ArgsProduct({{1000, 10000}, {0, 1}, {0, 1}, {0, 1, 2}})
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime();
BENCHMARK(benchBlstmExample)
    ->Arg(0)
    ->Arg(1)
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime();
BENCHMARK(benchBlstmLayers)
    ->Args({0, 1})
    ->Args({1, 1})
    ->Args({1, 0})
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime();
BENCHMARK(benchBlstmGemms)
    ->Arg(0)
    ->Arg(1)
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime();
BENCHMARK(benchViterbiAlign)
    ->Arg(0)
    ->Arg(1)
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime();
BENCHMARK(benchTransducerAlign)
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime()
    ->Iterations(2);
BENCHMARK(benchTransducer)
    ->Arg(1)
    ->Arg(0)
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime()
    ->Iterations(1);
BENCHMARK(benchOpFamily)
    ->DenseRange(0, 3)
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime();
BENCHMARK(benchSpeechTrainStep)
    ->Arg(1)
    ->Arg(0)
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime();
BENCHMARK(benchConformerTrainStep)
    ->Args({1, 1})
    ->Args({0, 1})
    ->Args({1, 0})
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime();
BENCHMARK(benchConformerDecode)
    ->Arg(1)
    ->Arg(0)
    ->MinTime(4.0)
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime();
BENCHMARK(benchConformerTransducerTrainStep)
    ->Arg(1)
    ->Arg(0)
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime();
BENCHMARK(benchTrainStep)
    ->ArgsProduct({{1, 0}, {1, 0}, {1}, {1}})
    ->Args({2, 1, 1, 1})
    ->Args({1, 1, 0, 1})
    ->Args({1, 1, 1, 0})
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime();
BENCHMARK(benchNnGemm)
    ->ArgsProduct({{1000, 10000}, {0, 1}})
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime();
BENCHMARK(benchOpenBlasSgemm)
    ->Arg(1000)
    ->Arg(10000)
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime();

BENCHMARK(benchGreedyDecode)
    ->Arg(0)
    ->Arg(1)
    ->Arg(2)
    ->Arg(3)
    ->MinTime(4.0)
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime();
BENCHMARK(benchMwerTrainStep)
    ->Arg(0)
    ->Arg(1)
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime();
BENCHMARK(benchTransducerBeamSearch)
    ->Arg(0)
    ->Arg(1)
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime();
BENCHMARK(benchCtcBeamSearch)
    ->Args({4, 0, 0})
    ->Args({4, 1, 0})
    ->Args({16, 0, 0})
    ->Args({16, 1, 0})
    ->Args({16, 0, 16})
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime();

int main(int argc, char **argv) {
  std::string lengths = defaultLengthsPath();
  int threads = 1;
  bool memoryReport = false;
  std::vector<char *> rest{argv[0]};
  for (int i = 1; i < argc; ++i) {
    if (!std::strcmp(argv[i], "--emit-tail") && i + 1 < argc) {
      std::fputs(tailSource(std::atoi(argv[i + 1])).c_str(), stdout);
      return 0;
    }
    if (!std::strcmp(argv[i], "--lengths") && i + 1 < argc)
      lengths = argv[++i];
    else if (!std::strcmp(argv[i], "--threads") && i + 1 < argc)
      threads = std::atoi(argv[++i]);
    else if (!std::strcmp(argv[i], "--ctc-scores") && i + 1 < argc)
      gCtcScoresPath = argv[++i];
    else if (!std::strcmp(argv[i], "--no-threaded-code"))
      gThreadedCode = false;
    else if (!std::strcmp(argv[i], "--memory-report"))
      memoryReport = true;
    else if (!std::strcmp(argv[i], "--gemm-library") && i + 1 < argc) {
      std::optional<nn::GemmLibrary> library =
          nn::parseEnum<nn::GemmLibrary>(argv[++i]);
      if (!library) {
        std::fprintf(stderr, "nn-bench: --gemm-library: %s\n",
                     nn::unknownEnumMessage<nn::GemmLibrary>(argv[i]).c_str());
        return 1;
      }
      gGemmLibrary = *library;
    } else
      rest.push_back(argv[i]);
  }
  if (!loadLengths(lengths)) {
    std::fprintf(stderr,
                 "nn-bench: cannot read lengths from '%s' (--lengths)\n",
                 lengths.c_str());
    return 1;
  }
  openblas_set_num_threads(threads);
  // The artifacts' generated loops (OpenMP) and GEMMs, the same count.
  nn::setNumThreads(threads);
  std::printf("lengths: ");
  for (size_t b = 0; b < gLengths.size(); ++b)
    std::printf("%s%d", b ? "," : "", gLengths[b]);
  std::printf("\n");
  std::printf("B = %d, T_max = %lld, N = %lld, N / (B * T_max) = %.4f, "
              "threads = %d, GEMM library %s\n",
              kBatch, (long long)gPadded, (long long)gFrames,
              (double)gFrames / (kBatch * gPadded), threads,
              nn::enumName(gGemmLibrary));
  int restCount = rest.size();
  benchmark::Initialize(&restCount, rest.data());
  // A mistyped flag (say --num-threads for --threads) would otherwise run
  // every benchmark under the wrong setting without a word.
  if (benchmark::ReportUnrecognizedArguments(restCount, rest.data()))
    return 1;
  if (memoryReport)
    return printMemoryReport();
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
