//===- CudaRuntimeTest.cpp - the cuda target without a GPU ----------------===//
//
// What must hold on any machine: every op family and example compiles for
// the cuda target and loads; a run without a driver fails with a message
// that says so (never a crash); bad GPU options are errors. Each test runs
// in its own process (ctest), so NN_CUDA_DRIVER set here decides how the
// backend initializes.
//
//===----------------------------------------------------------------------===//

#include "ExecutionUtil.h"

#include "nn/Cuda.h"

#include <cstdlib>

using namespace nn;
using namespace nn::testing;

namespace {

const char *kTinyModel = R"(
nn.graph @g(%x: !nn.tensor<[B, T, 4], f32>, %y: !nn.tensor<[B, T], i32>)
    dims [B: batch, T: seq(B)] {
  %ce = nn.cross_entropy %x, %y from logits : !nn.tensor<[B, T, 4], f32>, !nn.tensor<[B, T], i32>
  nn.mark_loss %ce as "ce" normalize per_frame : !nn.tensor<[B, T], f32>
  nn.return
})";

void forceNoDriver() {
  ::setenv("NN_CUDA_DRIVER", "/nonexistent/libcuda.so.1", 1);
}

TEST(CudaNoDriverTest, RunSaysThereIsNoGpu) {
  SKIP_WITHOUT_TOOLKIT();
  forceNoDriver();
  std::string why;
  EXPECT_FALSE(cudaAvailable(&why));
  EXPECT_NE(why.find("no GPU: cannot load the CUDA driver "
                     "/nonexistent/libcuda.so.1"),
            std::string::npos)
      << why;
  CudaDeviceInfo info;
  EXPECT_EQ(cudaDeviceInfo(info).code(), absl::StatusCode::kUnavailable);

  Executable exe = compileOrDie(kTinyModel, true, "", "cuda");
  EXPECT_EQ(exe.manifest().target, "cuda");
  // The device exists (it says why it cannot run) and is not the host.
  EXPECT_FALSE(exe.runsOnHost());
  EXPECT_EQ(exe.deviceName().rfind("cuda:", 0), 0u) << exe.deviceName();
  RunInputs inputs = makeInputs(exe.manifest(), 3, LengthPattern::Mixed, 2, 5);
  RunResult result;
  absl::Status status = exe.run(inputs, result);
  ASSERT_FALSE(status.ok());
  EXPECT_NE(status.message().find("cannot run @g on the GPU: no GPU"),
            std::string::npos)
      << status.message();
  // A caller tells a missing GPU from bad input by the code.
  EXPECT_EQ(status.code(), absl::StatusCode::kUnavailable);
  // Validation still comes first and names the input.
  inputs.inputs.erase("x");
  status = exe.run(inputs, result);
  EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(status.message().find("missing input 'x'"), std::string::npos)
      << status.message();
}

TEST(CudaCompileTest, EveryOpFamilyCompilesForCudaWithNamedKernels) {
  SKIP_WITHOUT_TOOLKIT();
  for (const OpCase &c : opCases()) {
    SCOPED_TRACE(c.name);
    for (bool pack : {false, true}) {
      Executable exe = compileOrDie(c.source, pack, "g", "cuda");
      const Manifest &manifest = exe.manifest();
      EXPECT_EQ(manifest.target, "cuda");
      // A lone GEMM is a cuBLAS call and needs no kernel.
      if (std::string(c.name) != "linear_packed_input") {
        EXPECT_FALSE(manifest.kernels.empty());
      }
      // <function>_k<n>_<nn op>; kernels of nn ops say where the op is
      // (copies the lowering added have no op).
      for (const KernelInfo &kernel : manifest.kernels) {
        size_t at = kernel.name.find("_k");
        ASSERT_NE(at, std::string::npos) << kernel.name;
        std::string op = kernel.name.substr(kernel.name.find('_', at + 2) + 1);
        if (op != "linalg") {
          EXPECT_EQ(kernel.origin.find("nn." + op + " at test.mlir:"), 0u)
              << kernel.name << ": " << kernel.origin;
        }
      }
    }
  }
}

TEST(CudaCompileTest, ExamplesCompileForSm80AndSm90) {
  SKIP_WITHOUT_TOOLKIT();
  for (const char *name :
       {"blstm_ce_ctc.mlir", "conv_encoder_decoupled_loss.mlir",
        "shared_tail_two_losses.mlir"}) {
    SCOPED_TRACE(name);
    std::string source = readExample(name);
    for (const char *chip : {"sm_80", "sm_90"}) {
      CompileOptions options;
      options.target = "cuda";
      options.gpu.chip = chip;
      absl::StatusOr<Artifact> artifact = compileSource(source, name, options);
      ASSERT_TRUE(artifact.ok()) << artifact.status().message();
      EXPECT_FALSE(artifact->manifest().kernels.empty());
      // Loading needs no GPU either.
      Executable exe;
      absl::Status status = Executable::load(artifact->path(), exe);
      ASSERT_TRUE(status.ok()) << status.message();
      EXPECT_EQ(exe.manifest().serialize(), artifact->manifest().serialize());
    }
  }
}

TEST(CudaCompileTest, ManifestKeepsTargetAndKernels) {
  SKIP_WITHOUT_TOOLKIT();
  Executable exe = compileOrDie(kTinyModel, true, "", "cuda");
  std::string text = exe.manifest().serialize();
  Manifest parsed;
  ASSERT_TRUE(Manifest::parse(text, parsed).ok());
  EXPECT_EQ(parsed.serialize(), text);
  EXPECT_EQ(parsed.target, "cuda");
  ASSERT_EQ(parsed.kernels.size(), exe.manifest().kernels.size());
  EXPECT_NE(parsed.kernels.front().origin.find("nn."), std::string::npos);
  // Packing reads the lengths of T (argument 2, after B and T's padded
  // size) on the host: they are staged in managed memory, x and y in
  // device memory.
  EXPECT_EQ(parsed.hostVisibleArguments, std::vector<int64_t>{2});
  Manifest broken;
  EXPECT_FALSE(
      Manifest::parse("nn-artifact 1\ntarget tpu\nend\n", broken).ok());
}

TEST(CudaCompileTest, BadGpuOptionsAreErrors) {
  SKIP_WITHOUT_TOOLKIT();
  CompileOptions options;
  options.target = "cuda";
  // Binary formats are an enumeration: a wrong one is refused where it is
  // spelled (flags, pipeline options), by the one message of its parser.
  EXPECT_FALSE(parseEnum<GpuBinary>("sass").has_value());
  EXPECT_EQ(unknownEnumMessage<GpuBinary>("sass"),
            "unknown GPU binary format 'sass' (expected ptx or cubin)");
  options.gpu.binary = GpuBinary::ptx;
  options.gpu.chip = "gfx90a";
  absl::Status status = compileSource(kTinyModel, "m.mlir", options).status();
  EXPECT_NE(status.message().find("unknown GPU architecture 'gfx90a'"),
            std::string::npos)
      << status.message();
}

/// A chip LLVM's NVPTX backend cannot compile the kernels for is an
/// InvalidArgument naming it and listing valid ones, before anything is
/// compiled (LLVM aborted "Cannot select: intrinsic" on sm_0 and sm_21):
/// no toolkit needed. A valid chip still compiles where the toolkit is.
TEST(CudaCompileTest, ChipsNvptxCannotCompileForAreErrors) {
  CompileOptions options;
  options.target = "cuda";
  for (const char *chip : {"sm_0", "sm_abc", "sm_21", "sm_90b", ""}) {
    SCOPED_TRACE(chip);
    options.gpu.chip = chip;
    absl::Status status = compileSource(kTinyModel, "m.mlir", options).status();
    EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument)
        << status.message();
    EXPECT_NE(status.message().find("unknown GPU architecture '" +
                                    std::string(chip) + "'"),
              std::string::npos)
        << status.message();
    EXPECT_NE(status.message().find("sm_30, "), std::string::npos)
        << status.message();
    EXPECT_NE(status.message().find("sm_90"), std::string::npos)
        << status.message();
  }
  SKIP_WITHOUT_TOOLKIT();
  for (const char *chip : {"sm_30", "sm_90", "sm_90a"}) {
    SCOPED_TRACE(chip);
    options.gpu.chip = chip;
    absl::Status status = compileSource(kTinyModel, "m.mlir", options).status();
    EXPECT_TRUE(status.ok()) << status.message();
  }
}

} // namespace
