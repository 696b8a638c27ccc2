//===- FakeNcclTest.cpp - the NCCL communicator against a stand-in --------===//
//
// No GPU and no NCCL needed: the ranks are threads of this test, each on a
// device of the fake driver, and the runtime loads the fake library as
// NCCL too (fake_cuda/FakeNccl.cpp): it sums and broadcasts for real over
// the fake driver's memory, finishes a collective when every rank has
// called it, and fails where asked. What is tested is the runtime's side:
// bootstrapping through the run's communicator, the sums and broadcasts
// landing in device memory on every rank, waiting on the stream, timeouts
// and NCCL's errors, and refusals before anything waits. Each test runs in
// its own process (ctest): FAKE_NCCL_FAIL counts calls from its start.
//
//===----------------------------------------------------------------------===//

#include "ExecutionUtil.h"
#include "ThreadCommunicator.h"

#include "nn/Cuda.h"
#include "nn/Train.h"

#include <gtest/gtest.h>

#include <dlfcn.h>
#include <unistd.h>

#include <atomic>
#include <cstdlib>
#include <functional>
#include <random>
#include <thread>
#include <vector>

using namespace nn;
using namespace nn::testing;

namespace {

/// Memory of the fake driver (device memory, as NCCL wants), through its
/// own cuMemAlloc: the fake device's memory is the host's, so the test
/// reads it directly.
template <typename T> T *deviceArray(size_t count) {
  void *fake = dlopen(FAKE_CUDA_LIBRARY, RTLD_NOW);
  EXPECT_NE(fake, nullptr);
  auto *allocate =
      (int (*)(unsigned long long *, size_t))dlsym(fake, "cuMemAlloc_v2");
  unsigned long long pointer = 0;
  EXPECT_EQ(allocate(&pointer, count * sizeof(T)), 0);
  return reinterpret_cast<T *>(pointer);
}

/// What the fake NCCL counts: "live_comms" or "finished_collectives".
int fakeCount(const char *what) {
  void *fake = dlopen(FAKE_CUDA_LIBRARY, RTLD_NOW);
  auto *count =
      (int (*)())dlsym(fake, (std::string("fake_nccl_") + what).c_str());
  return count ? count() : -1;
}

int liveComms() { return fakeCount("live_comms"); }

CudaOptions fakeGpu(int ordinal) {
  CudaOptions options;
  options.ordinal = ordinal;
  options.driver = FAKE_CUDA_LIBRARY;
  options.cublasLibrary = FAKE_CUDA_LIBRARY;
  return options;
}

CommunicatorOptions fakeNccl(double timeoutSeconds = 20) {
  CommunicatorOptions options;
  options.ncclLibrary = FAKE_CUDA_LIBRARY;
  options.timeoutSeconds = timeoutSeconds;
  return options;
}

using RankBody = std::function<void(
    int rank, absl::StatusOr<std::unique_ptr<Communicator>> &nccl)>;

/// `body` on `size` ranks (threads), each given its NCCL communicator on
/// fake GPU `rank` (or why there is none), made with `options(rank)`.
void onRanks(int size, const std::function<CommunicatorOptions(int)> &options,
             const RankBody &body) {
  ThreadWorld world(size);
  std::vector<std::thread> ranks;
  for (int r = 0; r < size; ++r)
    ranks.emplace_back([&, r] {
      ThreadCommunicator bootstrap(world, r);
      absl::StatusOr<std::unique_ptr<Communicator>> nccl =
          makeNcclCommunicator(bootstrap, options(r), fakeGpu(r));
      body(r, nccl);
    });
  for (std::thread &rank : ranks)
    rank.join();
}

/// FAKE_CUDA_DEVICES (and FAKE_NCCL_FAIL) for one test.
struct Environment {
  explicit Environment(const char *devices, const char *fail = nullptr) {
    ::setenv("FAKE_CUDA_DEVICES", devices, 1);
    if (fail)
      ::setenv("FAKE_NCCL_FAIL", fail, 1);
  }
  ~Environment() {
    ::unsetenv("FAKE_CUDA_DEVICES");
    ::unsetenv("FAKE_NCCL_FAIL");
  }
};

TEST(FakeNcclTest, RanksSumAndBroadcastInTheirDevicesMemory) {
  Environment environment("3");
  onRanks(
      3, [](int) { return fakeNccl(); },
      [](int r, absl::StatusOr<std::unique_ptr<Communicator>> &nccl) {
        ASSERT_TRUE(nccl.ok()) << nccl.status();
        Communicator &comm = **nccl;
        EXPECT_EQ(comm.rank(), r);
        EXPECT_EQ(comm.size(), 3);
        EXPECT_STREQ(comm.backend(), "nccl");
        // f32 into another buffer.
        float *mine = deviceArray<float>(5), *sums = deviceArray<float>(5);
        for (int i = 0; i < 5; ++i)
          mine[i] = (float)(10 * r + i);
        ASSERT_TRUE(comm.allReduceSum(mine, sums, 5, DType::f32).ok());
        for (int i = 0; i < 5; ++i) {
          EXPECT_EQ(sums[i], (float)(30 + 3 * i)) << "rank " << r;
          EXPECT_EQ(mine[i], (float)(10 * r + i)); // the input is kept
        }
        // f64 in place, twice (the collectives are counted per rank).
        double *values = deviceArray<double>(2);
        values[0] = 0.25 * r;
        values[1] = -1.0;
        for (int round = 0; round < 2; ++round)
          ASSERT_TRUE(comm.allReduceSum(values, values, 2, DType::f64).ok());
        EXPECT_EQ(values[0], 3 * 0.75); // (0 + 0.25 + 0.5) * 3
        EXPECT_EQ(values[1], -9.0);
        // Rank 1's bytes everywhere.
        char *bytes = deviceArray<char>(7);
        for (int i = 0; i < 7; ++i)
          bytes[i] = (char)('a' + r + i);
        ASSERT_TRUE(comm.broadcast(bytes, 7, 1).ok());
        EXPECT_EQ(std::string(bytes, 7), "bcdefgh");
        // Other types are no NCCL sum here.
        absl::Status status = comm.allReduceSum(values, values, 1, DType::i32);
        EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument);
        EXPECT_TRUE(comm.barrier().ok());
      });
  EXPECT_EQ(liveComms(), 0) << "every rank destroys its communicator";
}

TEST(FakeNcclTest, HostMemoryIsNcclsError) {
  std::unique_ptr<Communicator> alone = makeLocalCommunicator();
  absl::StatusOr<std::unique_ptr<Communicator>> nccl =
      makeNcclCommunicator(*alone, fakeNccl(), fakeGpu(0));
  ASSERT_TRUE(nccl.ok()) << nccl.status();
  std::vector<float> host(4, 1.0f);
  absl::Status status =
      (*nccl)->allReduceSum(host.data(), host.data(), 4, DType::f32);
  EXPECT_EQ(status.message(),
            "rank 0 of 1: ncclAllReduce failed (invalid argument (run with "
            "NCCL_DEBUG=WARN for details)) in an all-reduce of 4 f32");
  EXPECT_FALSE((*nccl)->broadcast(host.data(), 4, 1).ok()) << "no rank 1";
}

TEST(FakeNcclTest, AStuckRankIsATimeoutNamingTheCollective) {
  Environment environment("2");
  std::atomic<bool> rankZeroDone{false};
  onRanks(
      2, [](int) { return fakeNccl(0.5); },
      [&](int r, absl::StatusOr<std::unique_ptr<Communicator>> &nccl) {
        ASSERT_TRUE(nccl.ok()) << nccl.status();
        if (r == 1) {
          // Stuck: never joins the all-reduce.
          while (!rankZeroDone)
            std::this_thread::yield();
          return;
        }
        float *values = deviceArray<float>(4);
        auto start = std::chrono::steady_clock::now();
        absl::Status status =
            (*nccl)->allReduceSum(values, values, 4, DType::f32);
        double waited = std::chrono::duration<double>(
                            std::chrono::steady_clock::now() - start)
                            .count();
        rankZeroDone = true;
        EXPECT_EQ(status.code(), absl::StatusCode::kDeadlineExceeded);
        EXPECT_EQ(status.message(),
                  "rank 0 of 2: an all-reduce of 4 f32 waited 0.5 s for the "
                  "other ranks (--collective-timeout); one of them stopped, "
                  "failed or is stuck");
        EXPECT_GE(waited, 0.5);
        EXPECT_LT(waited, 10);
        // The communicator was aborted: later collectives say so.
        status = (*nccl)->allReduceSum(values, values, 4, DType::f32);
        EXPECT_EQ(status.code(), absl::StatusCode::kFailedPrecondition);
        EXPECT_NE(status.message().find("aborted after an earlier failure"),
                  std::string::npos)
            << status;
      });
}

TEST(FakeNcclTest, RanksDisagreeingOnACollectiveAreNcclsError) {
  Environment environment("2");
  std::vector<std::string> messages(2);
  onRanks(
      2, [](int) { return fakeNccl(); },
      [&](int r, absl::StatusOr<std::unique_ptr<Communicator>> &nccl) {
        ASSERT_TRUE(nccl.ok()) << nccl.status();
        // Rank 0 sums 4 floats, rank 1 2: nothing is written.
        float *values = deviceArray<float>(4);
        for (int i = 0; i < 4; ++i)
          values[i] = 1.0f;
        messages[r] = std::string(
            (*nccl)
                ->allReduceSum(values, values, 4 - 2 * r, DType::f32)
                .message());
        EXPECT_EQ(values[0], 1.0f);
      });
  // Both hear of it from NCCL: the misuse, or the peer that aborted on
  // hearing of it first.
  int misuse = 0;
  for (int r = 0; r < 2; ++r) {
    EXPECT_NE(
        messages[r].find("rank " + std::to_string(r) + " of 2: NCCL failed ("),
        std::string::npos)
        << messages[r];
    misuse += messages[r].find("(invalid usage") != std::string::npos;
  }
  EXPECT_GE(misuse, 1) << messages[0] << "\n" << messages[1];
}

TEST(FakeNcclTest, AnAsynchronousNcclErrorEndsTheWait) {
  Environment environment("1", "ncclAllReduce");
  std::unique_ptr<Communicator> alone = makeLocalCommunicator();
  absl::StatusOr<std::unique_ptr<Communicator>> nccl =
      makeNcclCommunicator(*alone, fakeNccl(), fakeGpu(0));
  ASSERT_TRUE(nccl.ok()) << nccl.status();
  float *values = deviceArray<float>(4);
  absl::Status status = (*nccl)->allReduceSum(values, values, 4, DType::f32);
  EXPECT_EQ(status.message(),
            "rank 0 of 1: NCCL failed (remote process exited or there was a "
            "network error) during an all-reduce of 4 f32");
}

TEST(FakeNcclTest, SetUpFailuresEndEveryRankWithoutWaiting) {
  Environment environment("2");
  std::unique_ptr<Communicator> alone = makeLocalCommunicator();
  // No library, and a library that is not NCCL.
  CommunicatorOptions missing = fakeNccl();
  missing.ncclLibrary = "/nonexistent/libnccl.so.2";
  absl::StatusOr<std::unique_ptr<Communicator>> nccl =
      makeNcclCommunicator(*alone, missing, fakeGpu(0));
  EXPECT_EQ(nccl.status().code(), absl::StatusCode::kUnavailable);
  EXPECT_NE(nccl.status().message().find(
                "rank 0 of 1: cannot load NCCL '/nonexistent/libnccl.so.2'"),
            std::string::npos)
      << nccl.status();
  CommunicatorOptions notNccl = fakeNccl();
  notNccl.ncclLibrary = "libc.so.6";
  nccl = makeNcclCommunicator(*alone, notNccl, fakeGpu(0));
  EXPECT_NE(nccl.status().message().find(
                "NCCL 'libc.so.6' lacks ncclGetVersion, ncclGetUniqueId"),
            std::string::npos)
      << nccl.status();
  // No GPU: the device's own message.
  nccl = makeNcclCommunicator(*alone, fakeNccl(), fakeGpu(5));
  EXPECT_FALSE(nccl.ok());
  CommunicatorOptions badTimeout = fakeNccl(0);
  EXPECT_EQ(
      makeNcclCommunicator(*alone, badTimeout, fakeGpu(0)).status().code(),
      absl::StatusCode::kInvalidArgument);

  // Rank 1 lacks NCCL: both ranks fail at once, each saying why.
  onRanks(
      2, [&](int r) { return r == 1 ? missing : fakeNccl(); },
      [](int r, absl::StatusOr<std::unique_ptr<Communicator>> &made) {
        ASSERT_FALSE(made.ok());
        EXPECT_NE(made.status().message().find(
                      r == 0 ? "rank 0 of 2: 1 other ranks could not set up "
                               "their GPU or NCCL"
                             : "rank 1 of 2: cannot load NCCL"),
                  std::string::npos)
            << made.status();
      });
  EXPECT_EQ(liveComms(), 0);
}

TEST(FakeNcclTest, NoUniqueIdEndsEveryRank) {
  Environment environment("2", "ncclGetUniqueId");
  onRanks(
      2, [](int) { return fakeNccl(); },
      [](int r, absl::StatusOr<std::unique_ptr<Communicator>> &made) {
        ASSERT_FALSE(made.ok());
        EXPECT_NE(made.status().message().find(
                      r == 0 ? "rank 0 of 2: ncclGetUniqueId failed"
                             : "rank 1 of 2: rank 0 could not make NCCL's id"),
                  std::string::npos)
            << made.status();
      });
}

// A model for the segment task (features, frame labels).
const char *kTrainModel = R"(
nn.parameter @w : !nn.tensor<[16, 8], f32>
nn.graph @g(%features: !nn.tensor<[B, T, 8], f32>, %frame_labels: !nn.tensor<[B, T], i32>)
    dims [B: batch, T: seq(B)] {
  %w = nn.param_ref @w : !nn.tensor<[16, 8], f32>
  %l = nn.linear %features, %w : !nn.tensor<[B, T, 8], f32>, !nn.tensor<[16, 8], f32>
  %ce = nn.cross_entropy %l, %frame_labels from logits : !nn.tensor<[B, T, 16], f32>, !nn.tensor<[B, T], i32>
  nn.mark_loss %ce as "ce" normalize per_frame : !nn.tensor<[B, T], f32>
  nn.return
})";

// A data-parallel train step for the GPU, each rank on its own (fake) GPU:
// the compiled step's sums (the frames' count and the gradient bucket) go
// through NCCL on device memory, and the losses the runtime sums after the
// step through the communicator NCCL was bootstrapped from (host memory).
// The fake runs no kernels, so the values are not checked here; what is
// checked is where every sum went.
TEST(FakeNcclTest, AGpuStepSumsItsBuffersWithNcclAndItsLossesOnTheHost) {
  SKIP_WITHOUT_TOOLKIT();
  Environment environment("2");
  CompileOptions options;
  options.target = "cuda";
  options.grads = options.training = options.trainStep = true;
  options.optimizer.dataParallel = true;
  options.artifactPath =
      ::testing::TempDir() + "nccl-step-" + std::to_string(::getpid()) + ".so";
  LoadOptions onFirst;
  onFirst.device.set(fakeGpu(0));
  Executable first = compileOrDie(kTrainModel, options, onFirst);
  absl::StatusOr<SegmentBinding> binding = bindSegmentTask(first.manifest());
  ASSERT_TRUE(binding.ok()) << binding.status();
  std::mt19937 rng(3);
  // Each rank's part of the batch: 2 and 3 sequences.
  std::vector<RunInputs> parts{segmentBatchFor(*binding, 2, rng),
                               segmentBatchFor(*binding, 3, rng)};
  std::vector<int64_t> padded;
  for (const RunInputs &part : parts) {
    const Tensor &features = part.inputs.at("features");
    padded.push_back(features.shape()[0] * features.shape()[1]);
  }
  // Its sums are the GPU's: a host communicator is refused, before the
  // step runs.
  {
    ThreadWorld hostWorld(2);
    ThreadCommunicator host(hostWorld, 0);
    CurrentCommunicator scope(&host);
    TrainState state;
    ASSERT_TRUE(
        initializeParameters(first.manifest(), 1, state.parameters).ok());
    StepReport report;
    absl::Status status = runTrainStep(first, parts[0], 1e-3, 1, state, report);
    EXPECT_EQ(status.message(),
              "rank 0 of 2: train step @g runs on cuda:0 (Fake GPU), but "
              "its ranks' communicator (threads) sums host memory (a GPU "
              "step sums with NCCL: nn::makeNcclCommunicator)");
  }
  int before = fakeCount("finished_collectives");
  std::vector<StepReport> reports(2);
  onRanks(
      2, [](int) { return fakeNccl(); },
      [&](int r, absl::StatusOr<std::unique_ptr<Communicator>> &nccl) {
        ASSERT_TRUE(nccl.ok()) << nccl.status();
        Executable own;
        LoadOptions load;
        load.device.set(fakeGpu(r));
        ASSERT_TRUE(Executable::load(options.artifactPath, own, load).ok());
        EXPECT_EQ(own.deviceName(),
                  "cuda:" + std::to_string(r) + " (Fake GPU)");
        TrainState state;
        ASSERT_TRUE(
            initializeParameters(own.manifest(), 1, state.parameters).ok());
        CurrentCommunicator scope(nccl->get());
        absl::Status status =
            runTrainStep(own, parts[r], 1e-3, 1, state, reports[r]);
        ASSERT_TRUE(status.ok()) << status;
        EXPECT_EQ(state.step, 1);
      });
  std::remove(options.artifactPath.c_str());
  // Both ranks ran the step's collectives together: the per-frame loss's
  // frame count, and the gradients' bucket (and no other).
  EXPECT_EQ(fakeCount("finished_collectives") - before, 2);
  // The losses after the step: both parts' frames on both ranks.
  for (const StepReport &report : reports) {
    ASSERT_EQ(report.losses.size(), 1u);
    EXPECT_EQ(report.losses[0].framesPadded, padded[0] + padded[1]);
  }
  EXPECT_EQ(liveComms(), 0);
}

} // namespace
