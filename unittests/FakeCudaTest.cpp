//===- FakeCudaTest.cpp - the CUDA backend against a CPU stand-in driver --===//
//
// No GPU needed: the runtime loads fake_cuda/FakeCuda.cpp as its driver
// and cuBLAS (NN_CUDA_DRIVER, NN_CUBLAS_LIBRARY). Kernels do not execute
// there, but everything around them does: staging, module loading and
// caching, launches, cuBLAS GEMMs (the fake computes them, so GEMM-only
// graphs must match the CPU), copies back, profiling, and every error path
// with its message. Each test runs in its own process (ctest), so the
// environment set at its start decides how the backend initializes.
//
//===----------------------------------------------------------------------===//

#include "fake_cuda/FakeCuda.h"
#include "ExecutionUtil.h"

#include "nn/Cuda.h"
#include "nn/Train.h"

#include <cstdio>
#include <cstdlib>
#include <dlfcn.h>
#include <unistd.h>

using namespace nn;
using namespace nn::testing;

namespace {

FakeCudaStats stats() {
  void *fake = dlopen(FAKE_CUDA_LIBRARY, RTLD_NOW | RTLD_NOLOAD);
  EXPECT_NE(fake, nullptr);
  auto *fn = (FakeCudaStats(*)())dlsym(fake, "fake_cuda_stats");
  return fn ? fn() : FakeCudaStats{};
}

/// Points the backend at the fake driver; `fail` sets FAKE_CUDA_FAIL.
void useFakeDriver(const char *fail = nullptr) {
  ::setenv("NN_CUDA_DRIVER", FAKE_CUDA_LIBRARY, 1);
  ::setenv("NN_CUBLAS_LIBRARY", FAKE_CUDA_LIBRARY, 1);
  if (fail)
    ::setenv("FAKE_CUDA_FAIL", fail, 1);
}

// Only GEMMs (padded contraction and packed matmul, no bias): no kernel.
const char *kGemmOnly = R"(
nn.graph @g(%x: !nn.tensor<[B, T, 3], f32>, %w: !nn.tensor<[5, 3], f32>,
            %p: !nn.tensor<[N, 3], f32>)
    -> (!nn.tensor<[B, T, 5], f32>, !nn.tensor<[N, 5], f32>)
    dims [B: batch, T: seq(B), N: packed(B, T)] {
  %z = nn.linear %x, %w : !nn.tensor<[B, T, 3], f32>, !nn.tensor<[5, 3], f32>
  %q = nn.linear %p, %w : !nn.tensor<[N, 3], f32>, !nn.tensor<[5, 3], f32>
  nn.return %z, %q : !nn.tensor<[B, T, 5], f32>, !nn.tensor<[N, 5], f32>
})";

// Kernels and a GEMM.
const char *kTail = R"(
nn.graph @g(%x: !nn.tensor<[B, T, 4], f32>, %w: !nn.tensor<[6, 4], f32>,
            %y: !nn.tensor<[B, T], i32>)
    dims [B: batch, T: seq(B)] {
  %z = nn.linear %x, %w : !nn.tensor<[B, T, 4], f32>, !nn.tensor<[6, 4], f32>
  %ce = nn.cross_entropy %z, %y from logits : !nn.tensor<[B, T, 6], f32>, !nn.tensor<[B, T], i32>
  nn.mark_loss %ce as "ce" normalize per_frame : !nn.tensor<[B, T], f32>
  nn.return
})";

/// kTail compiled for the GPU and a batch for it, with the fake driver
/// failing as `fail` says (FAKE_CUDA_FAIL).
struct TailRun {
  explicit TailRun(const char *fail = nullptr) {
    useFakeDriver(fail);
    gpu = compileOrDie(kTail, true, "", "cuda");
    inputs = makeInputs(gpu.manifest(), 3, LengthPattern::Mixed, 3, 5);
  }
  absl::Status run() { return gpu.run(inputs, result); }

  Executable gpu;
  RunInputs inputs;
  RunResult result;
};

TEST(FakeCudaTest, GemmOnlyGraphMatchesCpu) {
  SKIP_WITHOUT_TOOLKIT();
  useFakeDriver();
  Executable gpu = compileOrDie(kGemmOnly, false, "", "cuda");
  Executable cpu = compileOrDie(kGemmOnly, false, "", "cpu");
  EXPECT_TRUE(gpu.manifest().kernels.empty());
  RunInputs inputs = makeInputs(cpu.manifest(), 7, LengthPattern::Mixed, 4, 6);
  RunResult onGpu, onCpu;
  absl::Status status = gpu.run(inputs, onGpu);
  ASSERT_TRUE(status.ok()) << status.message();
  ASSERT_TRUE(cpu.run(inputs, onCpu).ok());
  expectSameResults(cpu.manifest(), inputs, onCpu, onGpu, 1e-6);
  // Every padded position, not only valid ones: the GEMM covers them all.
  for (size_t i = 0; i < onCpu.outputs.size(); ++i) {
    const Tensor &a = onCpu.outputs[i].second, &b = onGpu.outputs[i].second;
    ASSERT_EQ(a.shape(), b.shape());
    for (int64_t j = 0; j < a.numElements(); ++j)
      ASSERT_TRUE(close(a.at(j), b.at(j), 1e-5, 1e-6))
          << "output " << i << "[" << j << "]: cpu " << a.at(j) << ", cuda "
          << b.at(j);
  }
  EXPECT_EQ(stats().gemms, 2);
}

TEST(FakeCudaTest, ModulesLoadOnceAndLaunchesAreNamed) {
  SKIP_WITHOUT_TOOLKIT();
  TailRun tail;
  size_t kernels = tail.gpu.manifest().kernels.size();
  ASSERT_GT(kernels, 0u);
  for (int run = 0; run < 3; ++run) {
    absl::Status status = tail.run();
    ASSERT_TRUE(status.ok()) << status.message();
  }
  FakeCudaStats s = stats();
  // MLIR's host code loads the module around every launch; the runtime
  // loads each kernel image once per executable.
  EXPECT_EQ(s.moduleLoads, (int)kernels);
  EXPECT_GE(s.launches, 3 * (int)kernels);
  EXPECT_EQ(s.gemms, 3);
  EXPECT_EQ(std::string(s.lastKernel), tail.gpu.manifest().kernels.back().name);
  ASSERT_EQ(tail.result.losses.size(), 1u);
  EXPECT_EQ(tail.result.losses[0].name, "ce");
}

TEST(FakeCudaTest, LaunchFailureNamesKernelAndOpAndTheNextRunWorks) {
  SKIP_WITHOUT_TOOLKIT();
  TailRun tail("cuLaunchKernel:1");
  absl::Status status = tail.run();
  ASSERT_FALSE(status.ok());
  const KernelInfo &first = tail.gpu.manifest().kernels.at(0);
  EXPECT_NE(status.message().find(
                "cuLaunchKernel failed: CUDA_ERROR_LAUNCH_FAILED (fake "
                "driver) launching kernel " +
                first.name + " (" + first.origin + ") with grid "),
            std::string::npos)
      << status.message();
  EXPECT_NE(first.origin.find(" at test.mlir:"), std::string::npos);
  // Later launches of the failed run were skipped.
  EXPECT_EQ(stats().launches, 0);
  status = tail.run();
  EXPECT_TRUE(status.ok()) << status.message();
}

TEST(FakeCudaTest, GemmFailureNamesTheOp) {
  SKIP_WITHOUT_TOOLKIT();
  TailRun tail("cublasSgemm_v2");
  absl::Status status = tail.run();
  ASSERT_FALSE(status.ok());
  // The tail's linear and cross entropy are one fused op
  // (nn-fuse-loss-tail), whose sweep makes the GEMM.
  EXPECT_NE(status.message().find("cublasSgemm_v2 failed with cuBLAS status "
                                  "13 in the GEMM of nn.linear_cross_entropy "
                                  "at test.mlir:"),
            std::string::npos)
      << status.message();
}

TEST(FakeCudaTest, AllocationFailureIsAnErrorNotACrash) {
  SKIP_WITHOUT_TOOLKIT();
  TailRun tail("cuMemAlloc:4");
  absl::Status status = tail.run();
  ASSERT_FALSE(status.ok());
  EXPECT_NE(status.message().find(
                "cuMemAlloc failed: CUDA_ERROR_OUT_OF_MEMORY (fake driver)"),
            std::string::npos)
      << status.message();
  EXPECT_TRUE(tail.run().ok());
}

TEST(FakeCudaTest, KernelImageRejectedByTheDriver) {
  SKIP_WITHOUT_TOOLKIT();
  TailRun tail("cuModuleLoadDataEx");
  absl::Status status = tail.run();
  ASSERT_FALSE(status.ok());
  EXPECT_NE(status.message().find("CUDA_ERROR_NO_BINARY_FOR_GPU"),
            std::string::npos)
      << status.message();
  EXPECT_NE(status.message().find("loading a kernel image"), std::string::npos)
      << status.message();
}

TEST(FakeCudaTest, NoDeviceIsReported) {
  useFakeDriver();
  ::setenv("FAKE_CUDA_DEVICES", "0", 1);
  std::string why;
  EXPECT_FALSE(cudaAvailable(&why));
  EXPECT_NE(why.find("no GPU: the CUDA driver reports 0 devices"),
            std::string::npos)
      << why;
}

TEST(FakeCudaTest, DeviceInfoAndProfile) {
  SKIP_WITHOUT_TOOLKIT();
  useFakeDriver();
  CudaDeviceInfo info;
  ASSERT_TRUE(cudaDeviceInfo(info).ok());
  EXPECT_EQ(info.name, "Fake GPU");
  EXPECT_EQ(info.computeCapability, 90);
  EXPECT_EQ(info.multiprocessors, 4);
  // 1 GHz memory clock, 512-bit bus, double data rate: 128 GB/s.
  EXPECT_DOUBLE_EQ(info.peakBandwidthGBs, 128.0);

  TailRun tail;
  cudaSetProfiling(true);
  ASSERT_TRUE(tail.run().ok());
  std::vector<KernelTime> profile = cudaTakeProfile();
  cudaSetProfiling(false);
  // Each kernel and the GEMM, 0.5 ms each in the fake.
  EXPECT_EQ(profile.size(), tail.gpu.manifest().kernels.size() + 1);
  bool sawGemm = false;
  for (const KernelTime &time : profile) {
    EXPECT_DOUBLE_EQ(time.milliseconds, 0.5 * time.launches) << time.name;
    sawGemm |=
        time.name.rfind("cublasSgemm_v2 nn.linear_cross_entropy at", 0) == 0;
  }
  EXPECT_TRUE(sawGemm);
}

/// An executable's profile is its device's: the one cudaSetProfiling
/// reaches for the same options.
TEST(FakeCudaTest, ExecutableProfilesItsDevice) {
  SKIP_WITHOUT_TOOLKIT();
  TailRun tail;
  tail.gpu.setProfiling(true);
  ASSERT_TRUE(tail.run().ok());
  std::vector<KernelTime> profile = tail.gpu.takeProfile();
  EXPECT_EQ(profile.size(), tail.gpu.manifest().kernels.size() + 1);
  EXPECT_TRUE(cudaTakeProfile().empty());
  ASSERT_TRUE(tail.run().ok());
  EXPECT_EQ(cudaTakeProfile().size(), profile.size());
  tail.gpu.setProfiling(false);
  ASSERT_TRUE(tail.run().ok());
  EXPECT_TRUE(tail.gpu.takeProfile().empty());
}

/// cuBLAS is loaded with the device: without it no GPU artifact runs, with
/// GEMMs or without, and the run says which library is missing.
TEST(FakeCudaTest, MissingCublasIsReportedByTheRun) {
  SKIP_WITHOUT_TOOLKIT();
  useFakeDriver();
  ::setenv("NN_CUBLAS_LIBRARY", "/nonexistent/libcublas.so.13", 1);
  Executable gpu = compileOrDie(kTail, true, "", "cuda");
  RunInputs inputs = makeInputs(gpu.manifest(), 3, LengthPattern::Mixed, 3, 5);
  RunResult result;
  absl::Status status = gpu.run(inputs, result);
  EXPECT_EQ(status.code(), absl::StatusCode::kUnavailable) << status.message();
  EXPECT_EQ(status.message(), "cannot run @g on the GPU: cannot load cuBLAS "
                              "/nonexistent/libcublas.so.13");
  EXPECT_EQ(stats().launches, 0);
}

/// Devices come from options, not only the environment: an executable on
/// the fake GPU, one on a device whose driver is missing and one on the
/// host live in one process, and each run goes to its own device.
TEST(FakeCudaTest, DevicesChosenByOptionsLiveSideBySide) {
  SKIP_WITHOUT_TOOLKIT();
  ::unsetenv("NN_CUDA_DRIVER");
  ::unsetenv("NN_CUBLAS_LIBRARY");
  CudaOptions fakeGpu;
  fakeGpu.driver = FAKE_CUDA_LIBRARY;
  fakeGpu.cublasLibrary = FAKE_CUDA_LIBRARY;
  CudaOptions missingGpu;
  missingGpu.driver = "/nonexistent/libcuda-for-a-second-device.so";
  LoadOptions fake, missing;
  fake.device.set(fakeGpu);
  missing.device.set(missingGpu);
  EXPECT_TRUE(cudaAvailable(nullptr, fakeGpu));
  std::string why;
  EXPECT_FALSE(cudaAvailable(&why, missingGpu));
  EXPECT_NE(why.find("libcuda-for-a-second-device.so"), std::string::npos)
      << why;

  Executable onFake = compileOrDie(kTail, true, "", "cuda", fake);
  Executable onMissing = compileOrDie(kTail, true, "", "cuda", missing);
  Executable onHost = compileOrDie(kTail, true, "", "cpu");
  EXPECT_EQ(onFake.deviceName(), "cuda:0 (Fake GPU)");
  EXPECT_FALSE(onFake.runsOnHost());
  EXPECT_EQ(onHost.deviceName(), "cpu");
  EXPECT_TRUE(onHost.runsOnHost());
  RunInputs inputs =
      makeInputs(onHost.manifest(), 3, LengthPattern::Mixed, 3, 5);
  RunResult a, b, c;
  int launchesBefore = stats().launches;
  absl::Status status = onFake.run(inputs, a);
  ASSERT_TRUE(status.ok()) << status.message();
  EXPECT_GT(stats().launches, launchesBefore);
  status = onMissing.run(inputs, b);
  EXPECT_EQ(status.code(), absl::StatusCode::kUnavailable) << status.message();
  EXPECT_TRUE(onHost.run(inputs, c).ok());
  // The fake device still works after the other one failed.
  EXPECT_TRUE(onFake.run(inputs, a).ok());
}

} // namespace

namespace {
// A model for the segment task whose parameters (and Adam's moments)
// outweigh a batch: what crosses to the device per step tells them apart.
const char *kTrainModel = R"(
nn.parameter @w : !nn.tensor<[256, 8], f32>
nn.parameter @b : !nn.tensor<[256], f32>
nn.graph @g(%features: !nn.tensor<[B, T, 8], f32>, %frame_labels: !nn.tensor<[B, T], i32>)
    dims [B: batch, T: seq(B)] {
  %w = nn.param_ref @w : !nn.tensor<[256, 8], f32>
  %b = nn.param_ref @b : !nn.tensor<[256], f32>
  %l = nn.linear %features, %w, %b : !nn.tensor<[B, T, 8], f32>, !nn.tensor<[256, 8], f32>, !nn.tensor<[256], f32>
  %ce = nn.cross_entropy %l, %frame_labels from logits : !nn.tensor<[B, T, 256], f32>, !nn.tensor<[B, T], i32>
  nn.mark_loss %ce as "ce" normalize per_frame : !nn.tensor<[B, T], f32>
  nn.return
})";
} // namespace

// On a GPU the train state stays in device memory between steps: after
// the first step's upload, a step copies in only its batch and copies out
// only the losses and the gradient norm, and it leaks no buffer. (The
// fake runs no kernels; its zeroed memory makes every step finite.)
TEST(FakeCudaTest, TrainStateStaysOnTheDevice) {
  SKIP_WITHOUT_TOOLKIT();
  useFakeDriver();
  CompileOptions options;
  options.target = "cuda";
  options.grads = options.training = options.trainStep = true;
  Executable exe = compileOrDie(kTrainModel, options);
  ASSERT_EQ(exe.manifest().target, "cuda");
  absl::StatusOr<SegmentBinding> binding = bindSegmentTask(exe.manifest());
  ASSERT_TRUE(binding.ok()) << binding.status().message();
  TrainState state;
  ASSERT_TRUE(initializeParameters(exe.manifest(), 1, state.parameters).ok());
  int64_t stateBytes = 0;
  for (const auto &[name, tensor] : state.parameters)
    stateBytes += (int64_t)tensor.sizeInBytes();
  ASSERT_EQ(stateBytes, 3 * (256 * 8 + 256) * 4);
  std::mt19937 rng(1);
  RunInputs batch = segmentBatchFor(*binding, 2, rng);
  int64_t batchBytes = 0;
  for (const auto &[name, tensor] : batch.inputs)
    batchBytes += (int64_t)tensor.sizeInBytes();
  ASSERT_LT(batchBytes + 64, stateBytes / 4);

  std::vector<FakeCudaStats> after;
  for (int step = 0; step < 3; ++step) {
    StepReport report;
    absl::Status status = runTrainStep(exe, batch, 1e-3, 1, state, report);
    ASSERT_TRUE(status.ok()) << status.message();
    EXPECT_TRUE(report.applied);
    after.push_back(stats());
  }
  EXPECT_EQ(state.step, 3);
  ASSERT_TRUE(state.resident);
  EXPECT_TRUE(state.resident->holds("optimizer/adam_v/w"));
  // The second and third steps: the batch in (and the step's scalars and
  // lengths), the losses and the norm out; no parameter either way.
  for (int step = 1; step < 3; ++step) {
    long long in = after[step].bytesToDevice - after[step - 1].bytesToDevice;
    long long out = after[step].bytesToHost - after[step - 1].bytesToHost;
    EXPECT_GE(in, batchBytes);
    EXPECT_LT(in, batchBytes + 64) << "step " << step + 1;
    EXPECT_LT(out, 64) << "step " << step + 1;
  }
  EXPECT_EQ(after[2].liveAllocations, after[1].liveAllocations);
  // A checkpoint saves the resident values; syncToHost brings them back
  // on request; dropping the resident copy (as restoring a checkpoint
  // does) makes the next step upload the state again.
  long long before = stats().bytesToHost;
  std::string path = ::testing::TempDir() + "fake-cuda-state-" +
                     std::to_string(getpid()) + ".npz";
  ASSERT_TRUE(saveCheckpoint(path, state).ok());
  std::remove(path.c_str());
  EXPECT_EQ(stats().bytesToHost - before, stateBytes);
  before = stats().bytesToHost;
  ASSERT_TRUE(syncToHost(state).ok());
  EXPECT_EQ(stats().bytesToHost - before, stateBytes);
  EXPECT_EQ(state.parameters.at("w").shape(), (std::vector<int64_t>{256, 8}));
  state.resident.reset();
  before = stats().bytesToDevice;
  StepReport report;
  ASSERT_TRUE(runTrainStep(exe, batch, 1e-3, 1, state, report).ok());
  EXPECT_GE(stats().bytesToDevice - before, stateBytes + batchBytes);
  EXPECT_EQ(state.step, 4);
}
