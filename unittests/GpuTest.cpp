//===- GpuTest.cpp - compiled GPU code against the reference and the CPU --===//
//
// Needs an NVIDIA GPU: without one every test reports itself skipped.
// Every op family runs on the GPU, packed and padded, on the shapes and
// length patterns of LoweringTest; outputs and losses must match the
// double-precision reference (rel 1e-4 + abs 1e-5) and the CPU build of the
// same graph (rel 1e-4). The examples must match the CPU within rel 1e-4.
// NCCL (libnccl.so.2, or NN_NCCL_LIBRARY), where it loads, sums over the
// GPUs (one rank per GPU, up to 2, as threads).
//
//===----------------------------------------------------------------------===//

#include "ExecutionUtil.h"
#include "ThreadCommunicator.h"

#include "nn/Cuda.h"
#include "runtime/cuda/CudaBackend.h"
#include "runtime/cuda/CudaDevice.h"

#include <thread>

using namespace nn;
using namespace nn::testing;

namespace {

#define SKIP_WITHOUT_GPU()                                                     \
  do {                                                                         \
    std::string why;                                                           \
    if (!cudaAvailable(&why))                                                  \
      GTEST_SKIP() << why;                                                     \
  } while (false)

class GpuOpTest : public ::testing::TestWithParam<OpCase> {};

TEST_P(GpuOpTest, MatchesReferenceAndCpu) {
  SKIP_WITHOUT_GPU();
  const OpCase &c = GetParam();
  for (bool pack : {false, true}) {
    SCOPED_TRACE(pack ? "packed" : "padded");
    Executable gpu = compileOrDie(c.source, pack, "g", "cuda");
    Executable cpu = compileOrDie(c.source, pack, "g", "cpu");
    for (const ShapeRun &run : {ShapeRun{LengthPattern::Mixed, 4, 7},
                                ShapeRun{LengthPattern::AllEqual, 1, 1},
                                ShapeRun{LengthPattern::WithEmpty, 5, 6},
                                ShapeRun{LengthPattern::Mixed, 3, 40}}) {
      SCOPED_TRACE("batch " + std::to_string(run.batch) + ", padded " +
                   std::to_string(run.padded));
      RunInputs inputs =
          makeInputs(gpu.manifest(), 23, run.pattern, run.batch, run.padded);
      RunResult onGpu, onCpu;
      absl::Status status = gpu.run(inputs, onGpu);
      ASSERT_TRUE(status.ok()) << status.message();
      ASSERT_TRUE(cpu.run(inputs, onCpu).ok());
      expectMatchesReference(c.source, gpu, inputs, onGpu, 1e-4, 1e-5);
      expectSameResults(gpu.manifest(), inputs, onCpu, onGpu, 1e-4);
    }
  }
}

INSTANTIATE_TEST_SUITE_P(Ops, GpuOpTest, ::testing::ValuesIn(opCases()),
                         [](const auto &info) { return info.param.name; });

class GpuExampleTest : public ::testing::TestWithParam<const char *> {};

TEST_P(GpuExampleTest, MatchesCpuPackedAndPadded) {
  SKIP_WITHOUT_GPU();
  std::string source = readExample(GetParam());
  ASSERT_FALSE(source.empty());
  for (bool pack : {false, true}) {
    SCOPED_TRACE(pack ? "packed" : "padded");
    Executable gpu = compileOrDie(source, pack, "", "cuda");
    Executable cpu = compileOrDie(source, pack, "", "cpu");
    RunInputs inputs = makeInputs(gpu.manifest(), 5, LengthPattern::Mixed,
                                  /*batch=*/4, /*padded=*/30);
    RunResult onGpu, again, onCpu;
    absl::Status status = gpu.run(inputs, onGpu);
    ASSERT_TRUE(status.ok()) << status.message();
    // A second run reuses cached modules and buffers: same results.
    ASSERT_TRUE(gpu.run(inputs, again).ok());
    ASSERT_TRUE(cpu.run(inputs, onCpu).ok());
    expectSameResults(gpu.manifest(), inputs, onCpu, onGpu, 1e-4);
    expectSameResults(gpu.manifest(), inputs, onGpu, again, 1e-6);
    expectMatchesReference(source, gpu, inputs, onGpu, 1e-4, 1e-5);
  }
}

INSTANTIATE_TEST_SUITE_P(Examples, GpuExampleTest,
                         ::testing::Values("blstm_ce_ctc.mlir",
                                           "conv_encoder_decoupled_loss.mlir",
                                           "shared_tail_two_losses.mlir"),
                         [](const auto &info) {
                           std::string name = info.param;
                           return name.substr(0, name.find('.'));
                         });

TEST(GpuDeviceTest, ReportsTheDevice) {
  SKIP_WITHOUT_GPU();
  CudaDeviceInfo info;
  ASSERT_TRUE(cudaDeviceInfo(info).ok());
  EXPECT_FALSE(info.name.empty());
  EXPECT_GE(info.computeCapability, 80);
  EXPECT_GT(info.multiprocessors, 0);
}

TEST(GpuNcclTest, RanksOnTheGpusSum) {
  SKIP_WITHOUT_GPU();
  int gpus = 1;
  CudaOptions second;
  second.ordinal = 1;
  if (cudaAvailable(nullptr, second))
    gpus = 2;
  ThreadWorld world(gpus);
  std::vector<std::string> errors(gpus);
  std::vector<std::vector<double>> sums(gpus);
  std::vector<std::thread> ranks;
  for (int r = 0; r < gpus; ++r)
    ranks.emplace_back([&, r] {
      ThreadCommunicator bootstrap(world, r);
      CudaOptions gpu;
      gpu.ordinal = r;
      absl::StatusOr<std::unique_ptr<Communicator>> nccl =
          makeNcclCommunicator(bootstrap, {}, gpu);
      if (!nccl.ok()) {
        errors[r] = std::string(nccl.status().message());
        return;
      }
      std::shared_ptr<cuda::CudaDevice> device = *cuda::cudaDevice(gpu);
      // 1000 doubles, rank-dependent, in device memory.
      std::vector<double> mine(1000);
      for (size_t i = 0; i < mine.size(); ++i)
        mine[i] = 0.5 * (double)i + r;
      size_t bytes = mine.size() * sizeof(double);
      void *buffer = device->allocate(bytes, /*hostVisible=*/false);
      absl::Status status =
          device->copyToDevice(buffer, mine.data(), bytes, "the test's");
      if (status.ok())
        status = (*nccl)->allReduceSum(buffer, buffer, 1000, DType::f64);
      if (status.ok())
        status = device->copyToHost(mine.data(), buffer, bytes, "the test's");
      device->release(buffer);
      if (!status.ok())
        errors[r] = std::string(status.message());
      sums[r] = mine;
    });
  for (std::thread &rank : ranks)
    rank.join();
  if (errors[0].find("cannot load NCCL") != std::string::npos)
    GTEST_SKIP() << errors[0];
  for (int r = 0; r < gpus; ++r) {
    ASSERT_EQ(errors[r], "") << "rank " << r;
    for (size_t i = 0; i < 1000; ++i)
      ASSERT_EQ(sums[r][i], gpus * 0.5 * (double)i + (gpus - 1) * gpus / 2.0)
          << "rank " << r << " element " << i;
  }
}

} // namespace
