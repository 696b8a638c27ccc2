//===- ThreadsTest.cpp - threaded generated loops change no bit -----------===//
//
// Threads split only the outermost parallel loop of a loop nest: each
// output element is computed by one thread, its reductions in the same
// order, so an artifact compiled with threads computes what one compiled
// without does, bit for bit. The GEMM library (oneDNN, or OpenBLAS) on
// two threads sums a GEMM's products in another order than on one: there
// the bound is 2e-6 of each tensor's largest entry (float32
// reassociation); with generated GEMMs two threads change no bit. Checked on
// every example forward+backward, on the fused loss tail packed and padded,
// at sizes whose loops pass the threading threshold, and on the loops over
// sequences (recursions, alignments, attention).
//
//===----------------------------------------------------------------------===//

#include "ExecutionUtil.h"

#include <cmath>
#include <cstring>

using namespace nn;
using namespace nn::testing;

namespace {

/// Every output and loss of `a` equals `b`'s: bit for bit when `bound` is
/// 0 or the output is not f32 (alignments), else within `bound` relative
/// to each tensor's largest magnitude.
void expectSame(const RunResult &a, const RunResult &b, double bound) {
  ASSERT_EQ(a.outputs.size(), b.outputs.size());
  for (size_t i = 0; i < a.outputs.size(); ++i) {
    const Tensor &x = a.outputs[i].second, &y = b.outputs[i].second;
    ASSERT_EQ(x.shape(), y.shape()) << a.outputs[i].first;
    ASSERT_EQ(x.dtype(), y.dtype()) << a.outputs[i].first;
    if (bound == 0 || x.dtype() != DType::f32) {
      EXPECT_EQ(std::memcmp(x.raw(), y.raw(), x.sizeInBytes()), 0)
          << a.outputs[i].first << " differs";
      continue;
    }
    double diff = 0, scale = 0;
    for (int64_t k = 0; k < x.numElements(); ++k) {
      diff = std::max(
          diff, (double)std::fabs(x.data<float>()[k] - y.data<float>()[k]));
      scale = std::max(scale, (double)std::fabs(y.data<float>()[k]));
    }
    EXPECT_LE(diff, bound * scale) << a.outputs[i].first;
  }
  ASSERT_EQ(a.losses.size(), b.losses.size());
  for (size_t i = 0; i < a.losses.size(); ++i) {
    EXPECT_TRUE(close(a.losses[i].sum, b.losses[i].sum, bound))
        << a.losses[i].name << ": " << a.losses[i].sum << " vs "
        << b.losses[i].sum;
    EXPECT_EQ(a.losses[i].normalization, b.losses[i].normalization);
  }
}

/// Runs `source` on one batch: compiled with threads, on one thread and on
/// two; compiled without threads, on one; with `loopGemms`, also compiled
/// with generated GEMMs (no BLAS), on one thread and on two.
/// `twoThreadsBound` bounds one thread against two (0: bit for bit).
void checkThreads(const std::string &source, const RunInputs &inputs,
                  const CompileOptions &base, bool loopGemms,
                  double twoThreadsBound = 2e-6) {
  CompileOptions threaded = base;
  threaded.cpu.threads = true;
  CompileOptions single = base;
  single.cpu.threads = false;
  Executable withThreads = compileOrDie(source, threaded);
  Executable without = compileOrDie(source, single);
  RunResult one, two, none;
  setNumThreads(1);
  absl::Status status = withThreads.run(inputs, one);
  ASSERT_TRUE(status.ok()) << status.message();
  status = without.run(inputs, none);
  ASSERT_TRUE(status.ok()) << status.message();
  setNumThreads(2);
  status = withThreads.run(inputs, two);
  setNumThreads(0);
  ASSERT_TRUE(status.ok()) << status.message();
  {
    // The generated loops: the same arithmetic in the same order.
    SCOPED_TRACE("compiled with threads vs without, one thread");
    expectSame(one, none, 0.0);
  }
  {
    // The GEMM library on two threads sums a GEMM's products in another
    // order (measured with OpenBLAS: at most 6e-7 of the tensor's largest
    // entry).
    SCOPED_TRACE("one thread vs two");
    expectSame(one, two, twoThreadsBound);
  }
  if (!loopGemms)
    return;
  // Without a BLAS every loop is generated: two threads change no bit.
  CompileOptions loops = threaded;
  loops.codegen.blas = false;
  Executable generated = compileOrDie(source, loops);
  RunResult loopsOne, loopsTwo;
  setNumThreads(1);
  status = generated.run(inputs, loopsOne);
  ASSERT_TRUE(status.ok()) << status.message();
  setNumThreads(2);
  status = generated.run(inputs, loopsTwo);
  setNumThreads(0);
  ASSERT_TRUE(status.ok()) << status.message();
  SCOPED_TRACE("generated GEMMs, one thread vs two");
  expectSame(loopsOne, loopsTwo, 0.0);
}

class ThreadsTest : public ::testing::TestWithParam<const char *> {};

TEST_P(ThreadsTest, ThreadsChangeOnlyGemmSummationOrder) {
  std::string source = readExample(GetParam());
  ASSERT_FALSE(source.empty());
  CompileOptions options;
  options.grads = true;
  Executable probe = compileOrDie(source, options);
  // Long enough that frame-wise loops pass the threading threshold.
  RunInputs inputs =
      makeInputs(probe.manifest(), 11, LengthPattern::Mixed, 8, 120);
  // Example 1's BLSTMs with generated GEMMs would take minutes.
  checkThreads(source, inputs, options,
               std::string(GetParam()) != "blstm_ce_ctc.mlir");
}

/// The fused loss tail (its row passes threaded, its GEMMs the library's),
/// packed and padded, with its input's gradient.
TEST(ThreadsFusedTailTest, ThreadsChangeOnlyGemmSummationOrder) {
  const char *source = R"(
nn.parameter @w : !nn.tensor<[700, 32], f32>
nn.parameter @b : !nn.tensor<[700], f32>
nn.graph @g(%x: !nn.tensor<[B, T, 32], f32>, %y: !nn.tensor<[B, T], i32>)
    dims [B: batch, T: seq(B)] {
  %w = nn.param_ref @w : !nn.tensor<[700, 32], f32>
  %b = nn.param_ref @b : !nn.tensor<[700], f32>
  %h = nn.tanh %x : !nn.tensor<[B, T, 32], f32>
  %z = nn.linear %h, %w, %b : !nn.tensor<[B, T, 32], f32>, !nn.tensor<[700, 32], f32>, !nn.tensor<[700], f32>
  %ce = nn.cross_entropy %z, %y from logits label_smoothing 1.000000e-01 : !nn.tensor<[B, T, 700], f32>, !nn.tensor<[B, T], i32>
  nn.mark_loss %ce as "ce" normalize per_frame : !nn.tensor<[B, T], f32>
  nn.return
})";
  for (bool pack : {true, false}) {
    CompileOptions options;
    options.grads = true;
    options.optimize.pack = pack;
    options.inputGradients = {"x"};
    Executable probe = compileOrDie(source, options);
    RunInputs inputs =
        makeInputs(probe.manifest(), 5, LengthPattern::Mixed, 6, 150);
    checkThreads(source, inputs, options, /*loopGemms=*/true);
  }
}

/// The per-sequence recursions run their sequences on threads: the
/// transducer loss and its gradient over a packed joint, transducer_align
/// (RNA and RNN-T) and viterbi_align. Each sequence is computed by one thread
/// as it would be alone, so with generated GEMMs threads change no bit of the
/// losses, gradients, alignments or scores.
TEST(ThreadsSequencesTest, SequencesOnThreadsChangeNoBit) {
  const char *source = R"(
nn.parameter @we : !nn.tensor<[6, 4], f32>
nn.parameter @wp : !nn.tensor<[6, 4], f32>
nn.parameter @wo : !nn.tensor<[5, 6], f32>
nn.graph @g(%x: !nn.tensor<[B, T, 4], f32>, %q: !nn.tensor<[B, U1, 4], f32>, %y: !nn.tensor<[B, U], i32>)
    -> (!nn.tensor<[B, T], i32>, !nn.tensor<[B], f32>, !nn.tensor<[B, T], i32>, !nn.tensor<[B], f32>, !nn.tensor<[B, A], i32>, !nn.tensor<[B], f32>)
    dims [B: batch, T: seq(B), U: seq(B), U1: seq(B) = U + 1, J: packed(B, T, U1), A: seq(B) computed] {
  %we = nn.param_ref @we : !nn.tensor<[6, 4], f32>
  %wp = nn.param_ref @wp : !nn.tensor<[6, 4], f32>
  %wo = nn.param_ref @wo : !nn.tensor<[5, 6], f32>
  %enc = nn.linear %x, %we : !nn.tensor<[B, T, 4], f32>, !nn.tensor<[6, 4], f32>
  %pred = nn.linear %q, %wp : !nn.tensor<[B, U1, 4], f32>, !nn.tensor<[6, 4], f32>
  %j = nn.transducer_join %enc, %pred : !nn.tensor<[B, T, 6], f32>, !nn.tensor<[B, U1, 6], f32> -> !nn.tensor<[J, 6], f32>
  %h = nn.tanh %j : !nn.tensor<[J, 6], f32>
  %z = nn.linear %h, %wo : !nn.tensor<[J, 6], f32>, !nn.tensor<[5, 6], f32>
  %l = nn.transducer_loss %z, %y from logits topology rnnt blank 0 : !nn.tensor<[J, 5], f32>, !nn.tensor<[B, U], i32>
  nn.mark_loss %l as "rnnt" normalize per_sequence : !nn.tensor<[B], f32>
  %ta, %ts = nn.transducer_align %z, %y from logits topology rna blank 0 : !nn.tensor<[J, 5], f32>, !nn.tensor<[B, U], i32> -> !nn.tensor<[B, T], i32>, !nn.tensor<[B], f32>
  %c = nn.linear %enc, %wo : !nn.tensor<[B, T, 6], f32>, !nn.tensor<[5, 6], f32>
  %va, %vs = nn.viterbi_align %c, %y from logits topology ctc blank 0 : !nn.tensor<[B, T, 5], f32>, !nn.tensor<[B, U], i32>
  %ra, %rs = nn.transducer_align %z, %y from logits topology rnnt blank 0 : !nn.tensor<[J, 5], f32>, !nn.tensor<[B, U], i32> -> !nn.tensor<[B, A], i32>, !nn.tensor<[B], f32>
  nn.return %ta, %ts, %va, %vs, %ra, %rs : !nn.tensor<[B, T], i32>, !nn.tensor<[B], f32>, !nn.tensor<[B, T], i32>, !nn.tensor<[B], f32>, !nn.tensor<[B, A], i32>, !nn.tensor<[B], f32>
})";
  CompileOptions options;
  options.grads = true;
  // Generated GEMMs throughout: a GEMM library's two-thread summation
  // order could flip a near-tie of an alignment.
  options.codegen.blas = false;
  Executable probe = compileOrDie(source, options);
  for (LengthPattern pattern :
       {LengthPattern::Mixed, LengthPattern::WithEmpty}) {
    RunInputs inputs = makeInputs(probe.manifest(), 7, pattern, 6, 30);
    checkThreads(source, inputs, options, /*loopGemms=*/false,
                 /*twoThreadsBound=*/0.0);
  }
}

/// Attention runs its sequences on threads, one sequence per thread, and
/// sums each row's exponentials reassociated (vectorized): threads must
/// not change how LLVM vectorizes those sums, inside the outlined OpenMP
/// body or inline. Self-attention (causal with relative positions) and
/// its gradients, padded and packed, over several query blocks.
TEST(ThreadsAttentionTest, SequencesOnThreadsChangeNoBit) {
  const std::string graph = R"(
nn.graph @g(%q: !nn.tensor<[$T, 8], f32>, %k: !nn.tensor<[$T, 8], f32>,
            %v: !nn.tensor<[$T, 6], f32>, %dy: !nn.tensor<[$T, 6], f32>,
            %r: !nn.tensor<[$T, 8], f32>, %p: !nn.tensor<[41, 8], f32>)
    -> (!nn.tensor<[$T, 6], f32>, !nn.tensor<[$T, 6], f32>,
        !nn.tensor<[$T, 8], f32>, !nn.tensor<[$T, 8], f32>, !nn.tensor<[$T, 6], f32>,
        !nn.tensor<[$T, 8], f32>, !nn.tensor<[41, 8], f32>)
    dims [B: batch, T: seq(B), N: packed(B, T)] {
  %a = nn.attention %q, %k, %v heads 2 : !nn.tensor<[$T, 8], f32>, !nn.tensor<[$T, 8], f32>, !nn.tensor<[$T, 6], f32>
  %c = nn.attention %q, %k, %v relative %r, %p heads 2 causal left_context 70 : !nn.tensor<[$T, 8], f32>, !nn.tensor<[$T, 8], f32>, !nn.tensor<[$T, 6], f32>, !nn.tensor<[$T, 8], f32>, !nn.tensor<[41, 8], f32>
  %dq, %dk, %dv, %dr, %dp = nn.attention_grad %dy, %q, %k, %v relative %r, %p heads 2 causal left_context 70 : !nn.tensor<[$T, 6], f32>, !nn.tensor<[$T, 8], f32>, !nn.tensor<[$T, 8], f32>, !nn.tensor<[$T, 6], f32>, !nn.tensor<[$T, 8], f32>, !nn.tensor<[41, 8], f32>
  nn.return %a, %c, %dq, %dk, %dv, %dr, %dp : !nn.tensor<[$T, 6], f32>, !nn.tensor<[$T, 6], f32>, !nn.tensor<[$T, 8], f32>, !nn.tensor<[$T, 8], f32>, !nn.tensor<[$T, 6], f32>, !nn.tensor<[$T, 8], f32>, !nn.tensor<[41, 8], f32>
})";
  for (const char *frames : {"B, T", "N"}) {
    SCOPED_TRACE(std::string("frames [") + frames + "]");
    std::string source = graph;
    for (size_t at; (at = source.find("$T")) != std::string::npos;)
      source.replace(at, 2, frames);
    CompileOptions options;
    Executable probe = compileOrDie(source, options);
    RunInputs inputs =
        makeInputs(probe.manifest(), 5, LengthPattern::WithEmpty, 6, 150);
    checkThreads(source, inputs, options, /*loopGemms=*/true);
  }
}

INSTANTIATE_TEST_SUITE_P(Examples, ThreadsTest,
                         ::testing::Values("blstm_ce_ctc.mlir",
                                           "conv_encoder_decoupled_loss.mlir",
                                           "shared_tail_two_losses.mlir"));

} // namespace
