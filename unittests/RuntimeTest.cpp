//===- RuntimeTest.cpp - input validation, manifest and .npy/.npz ---------===//
//
// Every validation error of Executable::run has a case here: each must be
// reported before anything runs, with a message naming the input.
//
//===----------------------------------------------------------------------===//

#include "ExecutionUtil.h"
#include "nn/Npy.h"
#include "runtime/Allocator.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <fstream>

using namespace nn;
using namespace nn::testing;

namespace {

const char *kModel = R"(
nn.parameter @w : !nn.tensor<[3, 2], f32>
nn.graph @g(%x: !nn.tensor<[B, T, 2], f32>, %y: !nn.tensor<[B, T2], i32>,
            %l: !nn.tensor<[B, U], i32>)
    dims [B: batch, T: seq(B), T2: seq(B) = ceildiv(T, 2), U: seq(B)] {
  %w = nn.param_ref @w : !nn.tensor<[3, 2], f32>
  %p = nn.pool max %x window 2 stride 2 : (!nn.tensor<[B, T, 2], f32>) -> !nn.tensor<[B, T2, 2], f32>
  %z = nn.linear %p, %w : !nn.tensor<[B, T2, 2], f32>, !nn.tensor<[3, 2], f32>
  %ce = nn.cross_entropy %z, %y from logits : !nn.tensor<[B, T2, 3], f32>, !nn.tensor<[B, T2], i32>
  nn.mark_loss %ce as "ce" normalize per_frame : !nn.tensor<[B, T2], f32>
  %c = nn.ctc_loss %z, %l from logits blank 0 zero_infinity : !nn.tensor<[B, T2, 3], f32>, !nn.tensor<[B, U], i32>
  nn.mark_loss %c as "ctc" normalize per_sequence : !nn.tensor<[B], f32>
  nn.return
}
)";

class RuntimeTest : public ::testing::Test {
protected:
  static void SetUpTestSuite() {
    executable = new Executable(compileOrDie(kModel, true));
  }
  static void TearDownTestSuite() { delete executable; }

  /// B = 3, T = 6 (T2 = 3), U = 2.
  RunInputs valid() {
    RunInputs inputs;
    inputs.lengths["T"] = {6, 1, 4};
    inputs.lengths["U"] = {2, 1, 0};
    inputs.inputs["x"] = Tensor(DType::f32, {3, 6, 2});
    inputs.inputs["y"] =
        Tensor::of<int32_t>(DType::i32, {3, 3}, {0, 1, 2, 2, -1, -1, 1, 0, -7});
    inputs.inputs["l"] =
        Tensor::of<int32_t>(DType::i32, {3, 2}, {1, 2, 1, -1, 9, 9});
    inputs.parameters["w"] = Tensor(DType::f32, {3, 2});
    return inputs;
  }

  void expectError(const RunInputs &inputs, const std::string &expected) {
    RunResult result;
    absl::Status status = executable->run(inputs, result);
    ASSERT_FALSE(status.ok()) << "expected an error containing: " << expected;
    EXPECT_NE(status.message().find(expected), std::string::npos)
        << "message: " << status.message() << "\nexpected: " << expected;
  }

  static Executable *executable;
};
Executable *RuntimeTest::executable = nullptr;

TEST_F(RuntimeTest, ValidInputsRunAndPaddingMayHoldAnything) {
  RunResult result;
  absl::Status status = executable->run(valid(), result);
  ASSERT_TRUE(status.ok()) << status.message();
  ASSERT_EQ(result.losses.size(), 2u);
  // T2 lengths are ceil(T / 2) = {3, 1, 2}: six frames.
  EXPECT_EQ(result.losses[0].normalization, 6);
  EXPECT_TRUE(result.losses[0].packed);
  EXPECT_EQ(result.losses[0].framesComputed, 6);
  EXPECT_EQ(result.losses[0].framesPadded, 9);
  EXPECT_EQ(result.losses[1].normalization, 3);
}

TEST_F(RuntimeTest, WrongRank) {
  RunInputs inputs = valid();
  inputs.inputs["x"] = Tensor(DType::f32, {3, 12});
  expectError(inputs, "input 'x' has rank 2 [3, 12], expected [B, T, 2]");
}

TEST_F(RuntimeTest, WrongDtype) {
  RunInputs inputs = valid();
  inputs.inputs["x"] = Tensor(DType::f64, {3, 6, 2});
  expectError(inputs, "input 'x' has dtype f64, expected f32");
}

TEST_F(RuntimeTest, WrongStaticAxis) {
  RunInputs inputs = valid();
  inputs.inputs["x"] = Tensor(DType::f32, {3, 6, 5});
  expectError(inputs, "input 'x' axis 2 has size 5, expected 2");
}

TEST_F(RuntimeTest, BatchSizesDisagree) {
  RunInputs inputs = valid();
  inputs.inputs["l"] = Tensor(DType::i32, {4, 2});
  expectError(inputs, "input 'l' gives dim 'B' size 4, but input 'x' gives 3");
}

TEST_F(RuntimeTest, LengthsDisagreeWithBatch) {
  RunInputs inputs = valid();
  inputs.lengths["T"] = {6, 1};
  expectError(inputs, "the lengths of 'T' gives dim 'B' size 2");
}

TEST_F(RuntimeTest, LengthAbovePaddedSize) {
  RunInputs inputs = valid();
  inputs.lengths["T"] = {6, 7, 4};
  expectError(inputs, "length 7 of sequence 1 in dim 'T' is above the padded "
                      "size 6 (from input 'x')");
}

TEST_F(RuntimeTest, NegativeLength) {
  RunInputs inputs = valid();
  inputs.lengths["U"] = {2, -1, 0};
  expectError(inputs, "length -1 of sequence 1 in dim 'U' is negative");
}

TEST_F(RuntimeTest, MissingLengths) {
  RunInputs inputs = valid();
  inputs.lengths.erase("U");
  expectError(inputs, "missing lengths for sequence dim 'U'");
}

TEST_F(RuntimeTest, LengthsForAnUnknownOrDerivedDim) {
  RunInputs inputs = valid();
  inputs.lengths["T2"] = {3, 1, 2};
  expectError(inputs,
              "lengths given for 'T2', which is not a root sequence dim");
}

TEST_F(RuntimeTest, DerivedDimSizeMismatch) {
  RunInputs inputs = valid();
  inputs.inputs["y"] = Tensor(DType::i32, {3, 4});
  expectError(inputs,
              "input 'y' gives dim 'T2' size 4, expected ceil(6 / 2) = 3");
}

TEST_F(RuntimeTest, MissingAndUnknownInputs) {
  RunInputs inputs = valid();
  inputs.inputs.erase("y");
  expectError(inputs, "missing input 'y' [B, T2] i32");
  inputs = valid();
  inputs.inputs["z"] = Tensor(DType::f32, {1});
  expectError(inputs, "unknown input 'z'");
}

TEST_F(RuntimeTest, UnknownParameter) {
  RunInputs inputs = valid();
  inputs.parameters["v"] = Tensor(DType::f32, {3, 2});
  expectError(inputs, "unknown parameter 'v'");
}

TEST_F(RuntimeTest, MissingParameter) {
  RunInputs inputs = valid();
  inputs.parameters.clear();
  expectError(inputs, "missing parameter 'w' [3, 2] f32");
}

TEST_F(RuntimeTest, WrongParameterShape) {
  RunInputs inputs = valid();
  inputs.parameters["w"] = Tensor(DType::f32, {2, 3});
  expectError(inputs, "parameter 'w' is f32 [2, 3], expected f32 [3, 2]");
}

TEST_F(RuntimeTest, ClassIndexOutOfRange) {
  RunInputs inputs = valid();
  inputs.inputs["y"].data<int32_t>()[1] = 3;
  expectError(inputs,
              "input 'y' holds class index 3 at [0, 1], outside [0, 3)");
  inputs = valid();
  inputs.inputs["l"].data<int32_t>()[0] = -2;
  expectError(inputs, "input 'l' holds class index -2 at [0, 0]");
}

TEST_F(RuntimeTest, CtcLabelsMayNotBeTheBlank) {
  // l = [[1, 2], [1, pad], [pad, pad]], blank 0: a 0 at a valid label
  // position is refused; at a padded one it is not.
  RunInputs inputs = valid();
  inputs.inputs["l"].data<int32_t>()[1] = 0;
  expectError(inputs, "input 'l' holds the reserved class 0 (the CTC blank) "
                      "at [0, 1] (sequence 0, position 1)");
  inputs = valid();
  inputs.inputs["l"].data<int32_t>()[3] = 0;
  RunResult result;
  absl::Status status = executable->run(inputs, result);
  EXPECT_TRUE(status.ok()) << status.message();
  EXPECT_EQ(executable->manifest().inputs[2].reservedClass, 0);
  // Cross-entropy targets reserve nothing.
  EXPECT_EQ(executable->manifest().inputs[1].reservedClass, -1);
}

TEST(IntegerPackTest, PackAndUnpackOfIntegersRun) {
  // Labels through pack and unpack: i32 and i64 lower and keep their
  // values on valid frames, zero on padding.
  for (const char *type : {"i32", "i64"}) {
    std::string t = type;
    std::string model = "nn.graph @g(%y: !nn.tensor<[B, T], " + t +
                        ">) -> !nn.tensor<[B, T], " + t +
                        ">\n    dims [B: batch, T: seq(B), N: packed(B, T)] {\n"
                        "  %p = nn.pack %y : !nn.tensor<[B, T], " +
                        t + "> -> !nn.tensor<[N], " + t +
                        ">\n"
                        "  %u = nn.unpack %p : !nn.tensor<[N], " +
                        t + "> -> !nn.tensor<[B, T], " + t +
                        ">\n"
                        "  nn.return %u : !nn.tensor<[B, T], " +
                        t + ">\n}\n";
    Executable exe = compileOrDie(model, true);
    RunInputs inputs;
    inputs.lengths["T"] = {3, 1};
    DType dtype = t == "i32" ? DType::i32 : DType::i64;
    inputs.inputs["y"] =
        dtype == DType::i32
            ? Tensor::of<int32_t>(dtype, {2, 3}, {5, 6, 7, 8, -9, -9})
            : Tensor::of<int64_t>(dtype, {2, 3}, {5, 6, 7, 8, -9, -9});
    RunResult result;
    absl::Status status = exe.run(inputs, result);
    ASSERT_TRUE(status.ok()) << status.message();
    const Tensor &out = result.outputs.at(0).second;
    std::vector<double> expected{5, 6, 7, 8, 0, 0};
    for (int i = 0; i < 6; ++i)
      EXPECT_EQ(out.at(i), expected[i]) << type << " " << i;
  }
}

TEST_F(RuntimeTest, EmptyBatchIsRejected) {
  RunInputs inputs = valid();
  inputs.lengths["T"] = {};
  inputs.lengths["U"] = {};
  inputs.inputs["x"] = Tensor(DType::f32, {0, 6, 2});
  inputs.inputs["y"] = Tensor(DType::i32, {0, 3});
  inputs.inputs["l"] = Tensor(DType::i32, {0, 2});
  expectError(inputs, "batch dim 'B' is empty (size 0)");
}

TEST_F(RuntimeTest, PaddedSizeZeroIsRejected) {
  RunInputs inputs = valid();
  inputs.lengths["U"] = {0, 0, 0};
  inputs.inputs["l"] = Tensor(DType::i32, {3, 0});
  expectError(inputs, "input 'l' has sequence dim 'U' of padded size 0");
}

TEST_F(RuntimeTest, EmptySequencesRun) {
  RunInputs inputs = valid();
  inputs.lengths["T"] = {0, 1, 0};
  inputs.lengths["U"] = {0, 0, 0};
  RunResult result;
  absl::Status status = executable->run(inputs, result);
  ASSERT_TRUE(status.ok()) << status.message();
  EXPECT_EQ(result.losses[0].normalization, 1);
  // CTC of an empty label sequence over zero frames is 0.
  EXPECT_TRUE(std::isfinite(result.losses[1].sum));
}

TEST(RuntimePackedInputTest, RowsMustEqualTheSumOfLengths) {
  Executable exe = compileOrDie(R"(
nn.graph @g(%x: !nn.tensor<[N, 2], f32>, %t: !nn.tensor<[B, T], f32>)
    -> !nn.tensor<[N, 2], f32> dims [B: batch, T: seq(B), N: packed(B, T)] {
  %y = nn.relu %x : !nn.tensor<[N, 2], f32>
  nn.return %y : !nn.tensor<[N, 2], f32>
})",
                                true);
  RunInputs inputs;
  inputs.lengths["T"] = {3, 1};
  inputs.inputs["t"] = Tensor(DType::f32, {2, 3});
  inputs.inputs["x"] = Tensor(DType::f32, {4, 2});
  DimValues dims;
  absl::Status status = exe.validate(inputs, dims);
  ASSERT_TRUE(status.ok()) << status.message();
  EXPECT_EQ(dims.sizes["N"], 4);
  EXPECT_EQ(dims.sizes["B"], 2);
  inputs.inputs["x"] = Tensor(DType::f32, {5, 2});
  status = exe.validate(inputs, dims);
  ASSERT_FALSE(status.ok());
  EXPECT_NE(status.message().find("input 'x' gives packed dim 'N' size 5, "
                                  "but the lengths of 'T' sum to 4"),
            std::string::npos)
      << status.message();
}

/// Stands in for an artifact's entry: allocates what argv[0] says, then
/// marks argv[1] (which it never reaches when the allocation fails).
extern "C" void fakeEntry(void **argv) {
  void *block = _mlir_memref_to_llvm_alloc((size_t)(intptr_t)argv[0]);
  *(int *)argv[1] = 1;
  _mlir_memref_to_llvm_free(block);
}

TEST(AllocatorTest, AFailedAllocationEndsTheRunWithItsSize) {
  int reached = 0;
  void *argv[] = {(void *)(intptr_t)64, &reached};
  EXPECT_TRUE(nn::runtime::callWithAllocationGuard(fakeEntry, argv).ok());
  EXPECT_EQ(reached, 1);
  reached = 0;
  size_t huge = size_t(1) << 62;
  argv[0] = (void *)(intptr_t)huge;
  nn::runtime::GuardedCall call =
      nn::runtime::callWithAllocationGuard(fakeEntry, argv);
  EXPECT_EQ(call.failedAllocation, huge);
  EXPECT_EQ(call.error, "");
  EXPECT_EQ(reached, 0);
  // Outside a guarded run a failed allocation is a null pointer.
  EXPECT_EQ(_mlir_memref_to_llvm_alloc(huge), nullptr);
}

extern "C" void nn_cpu_sgemm(const char *origin, int order, int transA,
                             int transB, int m, int n, int k, float alpha,
                             int64_t a, int lda, int64_t b, int ldb, float beta,
                             int64_t c, int ldc);

/// Stands in for an artifact whose f32 GEMM (C[2, 3] = A[2, 4] B[3, 4]^T,
/// row-major) argv[0] describes: its A's leading dimension.
extern "C" void gemmEntry(void **argv) {
  auto *matrices = (float *)argv[1];
  nn_cpu_sgemm("nn.linear at model.mlir:3:5", 101, 111, 112, 2, 3, 4, 1.0f,
               (int64_t)matrices, (int)(intptr_t)argv[0],
               (int64_t)(matrices + 8), 4, 0.0f, (int64_t)(matrices + 20), 3);
  *(int *)argv[2] = 1;
}

/// The runtime's oneDNN GEMM computes what a plain double loop does, and a
/// call oneDNN rejects ends the run with the op's name instead of leaving
/// C as it was.
TEST(OneDnnGemmTest, ComputesTheProductAndNamesTheOpWhenRejected) {
  std::vector<float> m(26);
  for (int i = 0; i < 20; ++i)
    m[i] = 0.25f * (i % 7) - 0.5f;
  int reached = 0;
  void *argv[] = {(void *)(intptr_t)4, m.data(), &reached};
  nn::runtime::GuardedCall call =
      nn::runtime::callWithAllocationGuard(gemmEntry, argv);
  ASSERT_TRUE(call.ok()) << call.error;
  EXPECT_EQ(reached, 1);
  for (int i = 0; i < 2; ++i)
    for (int j = 0; j < 3; ++j) {
      double want = 0;
      for (int k = 0; k < 4; ++k)
        want += (double)m[i * 4 + k] * m[8 + j * 4 + k];
      EXPECT_NEAR(m[20 + i * 3 + j], want, 1e-6) << i << ", " << j;
    }
  // lda = 1 < K = 4: invalid arguments.
  reached = 0;
  argv[0] = (void *)(intptr_t)1;
  call = nn::runtime::callWithAllocationGuard(gemmEntry, argv);
  EXPECT_EQ(reached, 0);
  EXPECT_EQ(call.failedAllocation, 0u);
  EXPECT_NE(call.error.find("GEMM of nn.linear at model.mlir:3:5 failed in "
                            "oneDNN (dnnl_sgemm status 2: invalid arguments"),
            std::string::npos)
      << call.error;
}

/// A product with an empty sum (K = 0: a weight gradient over a batch with
/// no real frame) is C = beta C, as BLAS defines it: zero for beta = 0,
/// whatever C held before, and C scaled otherwise.
TEST(OneDnnGemmTest, AnEmptySumScalesC) {
  std::vector<float> c{std::nanf(""), 7.0f, -2.0f, 1.5f};
  float unused = 0.0f;
  nn_cpu_sgemm("nn.linear_grad_weight", 101, 112, 111, 2, 2, 0, 1.0f,
               (int64_t)&unused, 2, (int64_t)&unused, 2, 0.0f,
               (int64_t)c.data(), 2);
  EXPECT_EQ(c, std::vector<float>(4, 0.0f));
  c = {1.0f, 2.0f, 3.0f, 4.0f};
  nn_cpu_sgemm("nn.linear_grad_weight", 101, 112, 111, 2, 2, 0, 1.0f,
               (int64_t)&unused, 2, (int64_t)&unused, 2, 0.5f,
               (int64_t)c.data(), 2);
  EXPECT_EQ(c, (std::vector<float>{0.5f, 1.0f, 1.5f, 2.0f}));
}

TEST(AllocatorTest, LargeBlocksAreReusedSmallOnesAreNot) {
  nn::runtime::releaseCachedBlocks();
  size_t large = nn::runtime::kCachedBlockBytes * 2;
  void *first = _mlir_memref_to_llvm_alloc(large);
  ASSERT_NE(first, nullptr);
  EXPECT_EQ(nn::runtime::cachedBytes(), 0u);
  _mlir_memref_to_llvm_free(first);
  EXPECT_EQ(nn::runtime::cachedBytes(), large);
  // The same size comes back from the cache; another size does not.
  void *second = _mlir_memref_to_llvm_alloc(large);
  EXPECT_EQ(second, first);
  EXPECT_EQ(nn::runtime::cachedBytes(), 0u);
  void *other = _mlir_memref_to_llvm_alloc(large + 64);
  EXPECT_NE(other, first);
  void *small = _mlir_memref_to_llvm_alloc(64);
  _mlir_memref_to_llvm_free(small);
  EXPECT_EQ(nn::runtime::cachedBytes(), 0u);
  _mlir_memref_to_llvm_free(second);
  _mlir_memref_to_llvm_free(other);
  EXPECT_EQ(nn::runtime::cachedBytes(), 2 * large + 64);
  _mlir_memref_to_llvm_free(nullptr);
  nn::runtime::releaseCachedBlocks();
  EXPECT_EQ(nn::runtime::cachedBytes(), 0u);
}

/// A request up to a quarter smaller than a cached block gets that block
/// (batches of other lengths ask for nearly the same sizes); a smaller one
/// does not, and a block goes back to the cache with its own size.
TEST(AllocatorTest, ASlightlyLargerCachedBlockIsReused) {
  nn::runtime::releaseCachedBlocks();
  size_t size = nn::runtime::kCachedBlockBytes * 4;
  void *block = _mlir_memref_to_llvm_alloc(size);
  ASSERT_NE(block, nullptr);
  _mlir_memref_to_llvm_free(block);
  void *smaller = _mlir_memref_to_llvm_alloc(size - size / 4);
  EXPECT_EQ(smaller, block);
  EXPECT_EQ(nn::runtime::cachedBytes(), 0u);
  _mlir_memref_to_llvm_free(smaller);
  EXPECT_EQ(nn::runtime::cachedBytes(), size);
  void *tooSmall = _mlir_memref_to_llvm_alloc(size - size / 4 - 1);
  EXPECT_NE(tooSmall, block);
  EXPECT_EQ(nn::runtime::cachedBytes(), size);
  _mlir_memref_to_llvm_free(tooSmall);
  nn::runtime::releaseCachedBlocks();
}

/// Freed blocks stay cached up to the most bytes live at once, past the
/// fixed floor: a run that held 1.2 GiB gets all of it back next time
/// (before, everything past 1 GiB went back to the kernel, and a
/// transducer's joint was faulted in fresh every batch). The blocks are
/// never touched: only address space is taken.
TEST(AllocatorTest, TheCacheKeepsWhatARunHeldAtOnce) {
  nn::runtime::releaseCachedBlocks();
  size_t size = size_t(600) << 20;
  ASSERT_GT(2 * size, nn::runtime::kCacheLimitBytes);
  void *first = _mlir_memref_to_llvm_alloc(size);
  void *second = _mlir_memref_to_llvm_alloc(size);
  ASSERT_TRUE(first && second);
  _mlir_memref_to_llvm_free(first);
  _mlir_memref_to_llvm_free(second);
  EXPECT_EQ(nn::runtime::cachedBytes(), 2 * size);
  void *again = _mlir_memref_to_llvm_alloc(size);
  void *againToo = _mlir_memref_to_llvm_alloc(size);
  EXPECT_TRUE((again == first && againToo == second) ||
              (again == second && againToo == first));
  EXPECT_EQ(nn::runtime::cachedBytes(), 0u);
  _mlir_memref_to_llvm_free(again);
  _mlir_memref_to_llvm_free(againToo);
  nn::runtime::releaseCachedBlocks();
  EXPECT_EQ(nn::runtime::cachedBytes(), 0u);
}

/// Blocks live at different times stay cached together even when they add
/// up to more than was ever live at once (up to twice that): a
/// transducer's step frees 4.17 GB of blocks after a 3.58 GB peak, and a
/// cache held to the peak faulted 0.6 GB in again every batch. 600 and 440
/// MiB blocks (too different to serve each other), one live at a time:
/// 1,040 MiB cached, past both the 1 GiB floor and the 600 MiB peak. The
/// high-water mark is process-wide: the test discriminates in a process
/// of its own (as ctest runs it), not after a test that held more.
TEST(AllocatorTest, BlocksLiveAtDifferentTimesStayCached) {
  nn::runtime::releaseCachedBlocks();
  size_t larger = size_t(600) << 20, smaller = size_t(440) << 20;
  ASSERT_GT(larger + smaller, nn::runtime::kCacheLimitBytes);
  void *first = _mlir_memref_to_llvm_alloc(larger);
  ASSERT_NE(first, nullptr);
  _mlir_memref_to_llvm_free(first);
  void *second = _mlir_memref_to_llvm_alloc(smaller);
  ASSERT_NE(second, nullptr);
  EXPECT_NE(second, first);
  _mlir_memref_to_llvm_free(second);
  EXPECT_EQ(nn::runtime::cachedBytes(), larger + smaller);
  nn::runtime::releaseCachedBlocks();
}

/// An allocation that fails gives the cached blocks back before it gives
/// up (outside a run: a null pointer).
TEST(AllocatorTest, AFailedAllocationEmptiesTheCache) {
  nn::runtime::releaseCachedBlocks();
  size_t size = nn::runtime::kCachedBlockBytes * 2;
  void *block = _mlir_memref_to_llvm_alloc(size);
  ASSERT_NE(block, nullptr);
  _mlir_memref_to_llvm_free(block);
  ASSERT_EQ(nn::runtime::cachedBytes(), size);
  EXPECT_EQ(_mlir_memref_to_llvm_alloc(size_t(1) << 62), nullptr);
  EXPECT_EQ(nn::runtime::cachedBytes(), 0u);
}

TEST(ManifestTest, RoundTrip) {
  Executable exe = compileOrDie(kModel, true);
  const Manifest &manifest = exe.manifest();
  std::string text = manifest.serialize();
  Manifest parsed;
  ASSERT_TRUE(Manifest::parse(text, parsed).ok());
  EXPECT_EQ(parsed.serialize(), text);
  EXPECT_EQ(manifest.graph, "g");
  ASSERT_EQ(manifest.inputs.size(), 3u);
  EXPECT_EQ(manifest.inputs[1].classes, 3);
  EXPECT_EQ(manifest.inputs[2].classes, 3);
  EXPECT_EQ(manifest.rootDims, (std::vector<std::string>{"B", "T", "U"}));
  Manifest broken;
  EXPECT_FALSE(Manifest::parse("nn-artifact 5\nend\n", broken).ok());
  EXPECT_FALSE(Manifest::parse("nn-artifact 1\nbogus\nend\n", broken).ok());
}

TEST(CompilerTest, ErrorsNameTheProblem) {
  CompileOptions options;
  absl::Status status =
      compileSource("nn.graph @g(", "bad.mlir", options).status();
  ASSERT_FALSE(status.ok());
  EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(status.message().find("bad.mlir:1:"), std::string::npos)
      << status.message();
  options.target = "tpu";
  status = compileSource(kModel, "m.mlir", options).status();
  EXPECT_NE(status.message().find("unknown target 'tpu'"), std::string::npos);
  options.target = "cpu";
  options.entry = "nope";
  status = compileSource(kModel, "m.mlir", options).status();
  EXPECT_NE(status.message().find("no graph named @nope"), std::string::npos);
  status = compileFile("/nonexistent/model.mlir", CompileOptions()).status();
  EXPECT_EQ(status.code(), absl::StatusCode::kNotFound);
  EXPECT_NE(status.message().find("cannot read the model: cannot open "
                                  "'/nonexistent/model.mlir'"),
            std::string::npos);
  Executable loaded;
  status = Executable::load("/nonexistent/x.so", loaded);
  EXPECT_NE(status.message().find("cannot load artifact"), std::string::npos);
}

// Only the entry and the graphs it runs are lowered: a graph the entry
// does not run may hold what the backends cannot compile (here f16, which
// the verifier accepts) without stopping the entry's compile.
TEST(CompilerTest, GraphsTheEntryDoesNotRunAreNotCompiled) {
  const char *source = R"(
nn.graph @helper(%x: !nn.tensor<[B, T, 4], f32>) -> !nn.tensor<[B, T, 4], f32>
    dims [B: batch, T: seq(B)] {
  %y = nn.tanh %x : !nn.tensor<[B, T, 4], f32>
  nn.return %y : !nn.tensor<[B, T, 4], f32>
}
nn.graph @main(%x: !nn.tensor<[B, T, 4], f32>) -> !nn.tensor<[B, T, 4], f32>
    dims [B: batch, T: seq(B)] {
  %y = nn.call @helper(%x)
      : (!nn.tensor<[B, T, 4], f32>) -> !nn.tensor<[B, T, 4], f32>
  nn.return %y : !nn.tensor<[B, T, 4], f32>
}
nn.graph @half(%x: !nn.tensor<[B, T, 4], f16>) -> !nn.tensor<[B, T, 4], f16>
    dims [B: batch, T: seq(B)] {
  %y = nn.sigmoid %x : !nn.tensor<[B, T, 4], f16>
  nn.return %y : !nn.tensor<[B, T, 4], f16>
}
)";
  CompileOptions options;
  options.entry = "main";
  absl::StatusOr<Artifact> artifact = compileSource(source, "m.mlir", options);
  ASSERT_TRUE(artifact.ok()) << artifact.status().message();
  Executable exe;
  ASSERT_TRUE(Executable::load(artifact->path(), exe).ok());
  RunInputs inputs;
  inputs.inputs["x"] =
      Tensor::of<float>(DType::f32, {1, 2, 4}, {0.5, -1, 2, 0, 1, 1, -3, 0.25});
  inputs.lengths["T"] = {2};
  RunResult result;
  absl::Status status = exe.run(inputs, result);
  ASSERT_TRUE(status.ok()) << status.message();
  ASSERT_EQ(result.outputs.size(), 1u);
  // Within the polynomial tanh's error (nn-approximate-math).
  EXPECT_NEAR(result.outputs[0].second.at(2), std::tanh(2.0), 1e-6);
  EXPECT_NEAR(result.outputs[0].second.at(6), std::tanh(-3.0), 1e-6);

  // The graph itself still cannot be compiled, and the whole module is
  // verified whatever the entry.
  options.entry = "half";
  status = compileSource(source, "m.mlir", options).status();
  EXPECT_NE(status.message().find("element type 'f16'"), std::string::npos)
      << status.message();
  options.entry = "main";
  std::string broken = source;
  std::string signature = "f16>) -> !nn.tensor<[B, T, 4], f16>";
  broken.replace(broken.find(signature), signature.size(),
                 "f16>) -> !nn.tensor<[B, T, 5], f16>");
  status = compileSource(broken, "m.mlir", options).status();
  EXPECT_NE(status.message().find("graph @half declares result type"),
            std::string::npos)
      << status.message();
}

// A decoder's predictor and joiner are graphs it runs, named by
// attributes rather than calls: they stay, the unreached f16 graph goes.
TEST(CompilerTest, ADecodersPredictorAndJoinerAreCompiledWithIt) {
  const char *source = R"(
nn.parameter @embed : !nn.tensor<[5, 4], f32>
nn.parameter @wp : !nn.tensor<[4, 8], f32>
nn.parameter @wj : !nn.tensor<[5, 4], f32>
nn.graph @half(%x: !nn.tensor<[B, T, 4], f16>) -> !nn.tensor<[B, T, 4], f16>
    dims [B: batch, T: seq(B)] {
  %y = nn.sigmoid %x : !nn.tensor<[B, T, 4], f16>
  nn.return %y : !nn.tensor<[B, T, 4], f16>
}
nn.graph @pred(%y: !nn.tensor<[S], i32>, %h: !nn.tensor<[S, 4], f32>)
    -> (!nn.tensor<[S, 4], f32>, !nn.tensor<[S, 4], f32>) dims [S: batch] {
  %e = nn.param_ref @embed : !nn.tensor<[5, 4], f32>
  %w = nn.param_ref @wp : !nn.tensor<[4, 8], f32>
  %x = nn.embedding %y, %e : !nn.tensor<[S], i32>, !nn.tensor<[5, 4], f32>
  %c = nn.concat %x, %h : !nn.tensor<[S, 4], f32>, !nn.tensor<[S, 4], f32>
  %l = nn.linear %c, %w : !nn.tensor<[S, 8], f32>, !nn.tensor<[4, 8], f32>
  %n = nn.tanh %l : !nn.tensor<[S, 4], f32>
  nn.return %n, %n : !nn.tensor<[S, 4], f32>, !nn.tensor<[S, 4], f32>
}
nn.graph @joint(%h: !nn.tensor<[R, 4], f32>) -> !nn.tensor<[R, 5], f32>
    dims [R: batch] {
  %w = nn.param_ref @wj : !nn.tensor<[5, 4], f32>
  %z = nn.linear %h, %w : !nn.tensor<[R, 4], f32>, !nn.tensor<[5, 4], f32>
  nn.return %z : !nn.tensor<[R, 5], f32>
}
nn.graph @decode(%enc: !nn.tensor<[B, T, 4], f32>)
    -> (!nn.tensor<[B, Y], i32>, !nn.tensor<[B], f32>)
    dims [B: batch, T: seq(B), Y: seq(B) computed] {
  %y, %s = nn.transducer_greedy_decode %enc predictor @pred joiner @joint
      topology rna blank 0 start 0
      : !nn.tensor<[B, T, 4], f32> -> !nn.tensor<[B, Y], i32>, !nn.tensor<[B], f32>
  nn.return %y, %s : !nn.tensor<[B, Y], i32>, !nn.tensor<[B], f32>
}
)";
  CompileOptions options;
  options.entry = "decode";
  absl::StatusOr<Artifact> artifact = compileSource(source, "m.mlir", options);
  ASSERT_TRUE(artifact.ok()) << artifact.status().message();
  std::vector<std::string> names;
  for (const TensorInfo &parameter : artifact->manifest().parameters)
    names.push_back(parameter.name);
  std::sort(names.begin(), names.end());
  EXPECT_EQ(names, (std::vector<std::string>{"embed", "wj", "wp"}));
  Executable exe;
  ASSERT_TRUE(Executable::load(artifact->path(), exe).ok());
  RunInputs inputs;
  inputs.inputs["enc"] = Tensor(DType::f32, {2, 3, 4});
  inputs.lengths["T"] = {3, 1};
  for (const TensorInfo &info : exe.manifest().parameters) {
    std::vector<int64_t> shape;
    for (const Axis &axis : info.axes)
      shape.push_back(axis.size);
    inputs.parameters[info.name] = Tensor(DType::f32, shape);
  }
  RunResult result;
  absl::Status status = exe.run(inputs, result);
  ASSERT_TRUE(status.ok()) << status.message();
}

// Parameters start alike whichever graph of a file is compiled: the first
// reader in module order decides, among every graph of the file. Here the
// tied table is an embedding's (normal) in @lm, which @train does not run,
// and a linear's (Glorot uniform) in @train.
TEST(CompilerTest, ParameterInitsComeFromTheWholeFile) {
  const char *source = R"(
nn.parameter @tied : !nn.tensor<[5, 4], f32>
nn.graph @lm(%y: !nn.tensor<[B, U], i32>) -> !nn.tensor<[B, U, 4], f32>
    dims [B: batch, U: seq(B)] {
  %e = nn.param_ref @tied : !nn.tensor<[5, 4], f32>
  %x = nn.embedding %y, %e : !nn.tensor<[B, U], i32>, !nn.tensor<[5, 4], f32>
  nn.return %x : !nn.tensor<[B, U, 4], f32>
}
nn.graph @train(%x: !nn.tensor<[B, T, 4], f32>, %c: !nn.tensor<[B, T], i32>)
    dims [B: batch, T: seq(B)] {
  %w = nn.param_ref @tied : !nn.tensor<[5, 4], f32>
  %z = nn.linear %x, %w : !nn.tensor<[B, T, 4], f32>, !nn.tensor<[5, 4], f32>
  %ce = nn.cross_entropy %z, %c from logits
      : !nn.tensor<[B, T, 5], f32>, !nn.tensor<[B, T], i32>
  nn.mark_loss %ce as "ce" normalize per_frame : !nn.tensor<[B, T], f32>
  nn.return
}
)";
  for (const char *entry : {"lm", "train"}) {
    CompileOptions options;
    options.entry = entry;
    absl::StatusOr<Artifact> artifact =
        compileSource(source, "m.mlir", options);
    ASSERT_TRUE(artifact.ok()) << artifact.status().message();
    ASSERT_EQ(artifact->manifest().parameters.size(), 1u);
    EXPECT_EQ(artifact->manifest().parameters[0].init, "normal") << entry;
  }

  // A trained loss marked only in a graph the entry does not run.
  CompileOptions options;
  options.entry = "lm";
  options.grads = true;
  options.trainedLosses = {{"ce"}};
  absl::Status status = compileSource(source, "m.mlir", options).status();
  EXPECT_NE(status.message().find(
                "loss 'ce' is marked only in graphs that @lm does not run"),
            std::string::npos)
      << status.message();
}

TEST(CompilerTest, TemporaryArtifactsAreRemovedWithTheirArtifact) {
  // The compiler writes, the runtime loads; a temporary artifact lives as
  // long as its Artifact, an executable loaded from it longer.
  std::string path;
  Executable exe;
  {
    absl::StatusOr<Artifact> artifact =
        compileSource(kModel, "m.mlir", CompileOptions());
    ASSERT_TRUE(artifact.ok()) << artifact.status().message();
    path = artifact->path();
    EXPECT_EQ(artifact->manifest().graph, "g");
    ASSERT_TRUE(std::ifstream(path).good());
    ASSERT_TRUE(Executable::load(path, exe).ok());
    Artifact moved = std::move(*artifact);
    EXPECT_TRUE(std::ifstream(path).good());
  }
  EXPECT_FALSE(std::ifstream(path).good());
  EXPECT_EQ(exe.manifest().graph, "g");
}

} // namespace
