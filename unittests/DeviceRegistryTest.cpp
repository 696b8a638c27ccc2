//===- DeviceRegistryTest.cpp - backends, their options and GEMM providers ===//
//
// The device registry with a backend made up here (target "fake", with its
// own options type) next to the built-in ones: devices are cached per
// target and backend key, options of one backend never reach another, a
// target nothing runs is refused at load, and artifacts of the made-up
// target load and run on it. Also the GEMM providers the built-in backends
// attach (cuBLAS through the fake driver of fake_cuda/, no GPU needed),
// against products computed here. Links the runtime alone (sanitizer
// build); every test passes its options explicitly, so the environment
// and the order the tests run in do not matter.
//
//===----------------------------------------------------------------------===//

#include "nn/Cuda.h"
#include "nn/Runtime.h"
#include "runtime/device/Device.h"

#include <gtest/gtest.h>

#include <atomic>
#include <cstdlib>
#include <cstring>

using namespace nn;
using namespace nn::runtime;

namespace {

/// The made-up backend's options: `unit` picks the device (default 0);
/// `note` is not part of the key.
struct FakeOptions : BackendOptions {
  int unit = -1;
  std::string note;
  std::string target() const override { return "fake"; }
};

/// Other options that claim the target "fake".
struct StrayOptions : BackendOptions {
  std::string target() const override { return "fake"; }
};

std::atomic<int> fakeDevicesMade{0};
std::atomic<int> fakeRuns{0};

class FakeSession : public DeviceSession {
public:
  absl::Status run(EntryFn entry, void **argv) override {
    ++fakeRuns;
    entry(argv);
    return absl::OkStatus();
  }
  void fail(const absl::Status &) override {}
};

/// Host memory under another name: enough to load and run the artifact
/// fixture.
class FakeDevice : public Device {
public:
  explicit FakeDevice(int unit) : unit(unit) {}
  std::string describe() const override {
    return "fake:" + std::to_string(unit);
  }
  std::string kind() const override { return "fake accelerator"; }
  bool isHost() const override { return true; }
  absl::Status availability() const override { return absl::OkStatus(); }
  absl::StatusOr<void *> tryAllocate(size_t bytes, bool) override {
    return std::calloc(1, bytes ? bytes : 1);
  }
  void *allocate(size_t bytes, bool) override {
    return std::calloc(1, bytes ? bytes : 1);
  }
  void release(void *pointer) override { std::free(pointer); }
  absl::Status copyToDevice(void *target, const void *source, size_t bytes,
                            const std::string &) override {
    std::memcpy(target, source, bytes);
    return absl::OkStatus();
  }
  absl::Status copyToHost(void *target, const void *source, size_t bytes,
                          const std::string &) override {
    std::memcpy(target, source, bytes);
    return absl::OkStatus();
  }
  absl::Status launch(const KernelLaunch &) override {
    return absl::UnimplementedError("no kernels");
  }
  absl::Status synchronize() override { return absl::OkStatus(); }
  void setProfiling(bool) override {}
  std::vector<KernelTime> takeProfile() override { return {}; }
  std::unique_ptr<DeviceSession> openSession(const Manifest &) override {
    return std::make_unique<FakeSession>();
  }

private:
  int unit;
};

class FakeBackend : public BackendWith<FakeOptions> {
protected:
  FakeOptions withDefaults(FakeOptions options) const override {
    if (options.unit < 0)
      options.unit = 0;
    return options;
  }
  std::string keyOf(const FakeOptions &filled) const override {
    return std::to_string(filled.unit);
  }
  std::shared_ptr<Device> create(const FakeOptions &filled) const override {
    ++fakeDevicesMade;
    return std::make_shared<FakeDevice>(filled.unit);
  }
};

/// Registers the made-up backend once per process.
void registerFake() {
  static bool registered = [] {
    registerBackend(std::make_shared<FakeBackend>());
    return true;
  }();
  (void)registered;
}

std::shared_ptr<Device> deviceOrDie(const std::string &target,
                                    const DeviceOptions &options) {
  absl::StatusOr<std::shared_ptr<Device>> device = getDevice(target, options);
  EXPECT_TRUE(device.ok()) << device.status().message();
  return device.ok() ? *device : nullptr;
}

FakeOptions fakeUnit(int unit) {
  FakeOptions options;
  options.unit = unit;
  return options;
}

CudaOptions cudaWithDriver(const std::string &driver, int ordinal = 0) {
  CudaOptions options;
  options.driver = driver;
  options.ordinal = ordinal;
  return options;
}

TEST(DeviceRegistryTest, MadeUpBackendCachesDevicesPerItsKey) {
  registerFake();
  int madeBefore = fakeDevicesMade;
  std::shared_ptr<Device> byDefault = deviceOrDie("fake", {});
  ASSERT_TRUE(byDefault);
  EXPECT_EQ(byDefault->describe(), "fake:0");
  // Defaults are filled in before keying: unit 0 given is the default.
  FakeOptions zero = fakeUnit(0);
  zero.note = "not part of the key";
  EXPECT_EQ(deviceOrDie("fake", DeviceOptions().set(zero)), byDefault);
  std::shared_ptr<Device> one =
      deviceOrDie("fake", DeviceOptions().set(fakeUnit(1)));
  ASSERT_TRUE(one);
  EXPECT_NE(one, byDefault);
  EXPECT_EQ(one->describe(), "fake:1");
  EXPECT_EQ(deviceOrDie("fake", DeviceOptions().set(fakeUnit(1))), one);
  EXPECT_EQ(fakeDevicesMade - madeBefore, 2);

  // CUDA options do not reach the made-up backend.
  DeviceOptions withCuda;
  withCuda.set(cudaWithDriver("/nonexistent/libcuda-registry.so", 3));
  EXPECT_EQ(deviceOrDie("fake", withCuda), byDefault);
  withCuda.set(fakeUnit(1));
  EXPECT_EQ(deviceOrDie("fake", withCuda), one);
  EXPECT_EQ(fakeDevicesMade - madeBefore, 2);
  // A later set() of the same backend replaces the earlier one.
  withCuda.set(fakeUnit(0));
  EXPECT_EQ(deviceOrDie("fake", withCuda), byDefault);
}

TEST(DeviceRegistryTest, CudaOptionsKeyCudaDevicesAndNoOthers) {
  registerFake();
  DeviceOptions a, b, aAgain, otherOrdinal;
  a.set(cudaWithDriver("/nonexistent/libcuda-a.so"));
  b.set(cudaWithDriver("/nonexistent/libcuda-b.so"));
  aAgain.set(cudaWithDriver("/nonexistent/libcuda-a.so"));
  otherOrdinal.set(cudaWithDriver("/nonexistent/libcuda-a.so", 1));
  std::shared_ptr<Device> onA = deviceOrDie("cuda", a);
  std::shared_ptr<Device> onB = deviceOrDie("cuda", b);
  ASSERT_TRUE(onA && onB);
  EXPECT_NE(onA, onB);
  EXPECT_EQ(deviceOrDie("cuda", aAgain), onA);
  EXPECT_NE(deviceOrDie("cuda", otherOrdinal), onA);
  // Options of the made-up backend do not reach the CUDA one.
  aAgain.set(fakeUnit(7));
  EXPECT_EQ(deviceOrDie("cuda", aAgain), onA);
  // Each device says which driver it misses.
  EXPECT_EQ(onA->availability().code(), absl::StatusCode::kUnavailable);
  EXPECT_NE(onA->availability().message().find("libcuda-a.so"),
            std::string::npos)
      << onA->availability().message();
  EXPECT_NE(onB->availability().message().find("libcuda-b.so"),
            std::string::npos)
      << onB->availability().message();
  EXPECT_EQ(onA->kind(), "GPU");
  EXPECT_FALSE(onA->isHost());
}

TEST(DeviceRegistryTest, OptionsOfAnotherTypeAreAnError) {
  registerFake();
  DeviceOptions stray;
  stray.set(StrayOptions());
  absl::Status status = getDevice("fake", stray).status();
  EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(status.message(), "the device options given for target 'fake' "
                              "are not the options of its backend");
}

TEST(DeviceRegistryTest, UnknownTargetListsTheRegisteredOnes) {
  registerFake();
  EXPECT_EQ(registeredTargets(),
            (std::vector<std::string>{"cpu", "cuda", "fake"}));
  absl::Status status = getDevice("tpu", {}).status();
  EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(status.message(),
            "no device runs target 'tpu' (known: cpu, cuda, fake)");
}

TEST(DeviceRegistryTest, ManifestTakesAnyWellFormedTarget) {
  for (const char *target : {"fake", "tpu", "rocm-gfx90a", "x_1"}) {
    SCOPED_TRACE(target);
    std::string text =
        std::string("nn-artifact 5\ngraph g\ntarget ") + target + "\nend\n";
    Manifest manifest;
    absl::Status status = Manifest::parse(text, manifest);
    ASSERT_TRUE(status.ok()) << status.message();
    EXPECT_EQ(manifest.target, target);
    EXPECT_EQ(manifest.serialize(), text);
  }
  for (const std::string &target :
       {std::string("Fake"), std::string("9x"), std::string("-x"),
        std::string("a/b"), std::string("a%20b"), std::string(65, 'a')}) {
    SCOPED_TRACE(target);
    Manifest manifest;
    absl::Status status = Manifest::parse(
        "nn-artifact 5\ngraph g\ntarget " + target + "\nend\n", manifest);
    EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument);
    EXPECT_NE(status.message().find("manifest line 3: malformed target"),
              std::string::npos)
        << status.message();
  }
  Manifest longest;
  EXPECT_TRUE(Manifest::parse("nn-artifact 5\ngraph g\ntarget " +
                                  std::string(64, 'a') + "\nend\n",
                              longest)
                  .ok());
}

TEST(DeviceRegistryTest, ArtifactOfTheMadeUpTargetRunsOnItsBackend) {
  registerFake();
  Executable exe;
  LoadOptions options;
  options.device.set(fakeUnit(2));
  absl::Status status = Executable::load(NN_FAKE_TARGET_ARTIFACT, exe, options);
  ASSERT_TRUE(status.ok()) << status.message();
  EXPECT_EQ(exe.manifest().target, "fake");
  EXPECT_EQ(exe.deviceName(), "fake:2");
  EXPECT_TRUE(exe.runsOnHost());
  int runsBefore = fakeRuns;
  RunResult result;
  status = exe.run(RunInputs(), result);
  ASSERT_TRUE(status.ok()) << status.message();
  EXPECT_EQ(fakeRuns - runsBefore, 1);
  EXPECT_TRUE(result.outputs.empty());
}

TEST(DeviceRegistryTest, ArtifactOfATargetNothingRunsIsRefusedAtLoad) {
  registerFake();
  Executable exe;
  absl::Status status = Executable::load(NN_NO_BACKEND_ARTIFACT, exe);
  EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(status.message(), std::string("'") + NN_NO_BACKEND_ARTIFACT +
                                  "': no device runs target 'tpu' (known: "
                                  "cpu, cuda, fake)");
}

//===----------------------------------------------------------------------===//
// GEMM providers
//===----------------------------------------------------------------------===//

/// Row-major op(A) op(B) computed here, in double.
std::vector<double> product(const std::vector<double> &a,
                            const std::vector<double> &b, bool transA,
                            bool transB, int m, int n, int k) {
  std::vector<double> c(m * n, 0);
  for (int i = 0; i < m; ++i)
    for (int j = 0; j < n; ++j)
      for (int p = 0; p < k; ++p)
        c[i * n + j] += (transA ? a[p * m + i] : a[i * k + p]) *
                        (transB ? b[j * k + p] : b[p * n + j]);
  return c;
}

/// Runs C = 2 op(A) op(B) + 0.5 C (C starts at 1) through `device`'s GEMM
/// provider, for every pair of transposes, and checks C.
template <typename T> void checkGemms(Device &device, DType dtype) {
  const int m = 2, n = 3, k = 4;
  std::vector<double> a(m * k), b(k * n);
  for (int i = 0; i < m * k; ++i)
    a[i] = 0.25 * i - 1;
  for (int i = 0; i < k * n; ++i)
    b[i] = 3 - 0.5 * i;
  for (bool transA : {false, true})
    for (bool transB : {false, true}) {
      SCOPED_TRACE(std::to_string(transA) + std::to_string(transB));
      std::vector<T> hostA(a.begin(), a.end()), hostB(b.begin(), b.end()),
          hostC(m * n, T(1));
      void *buffers[3];
      size_t bytes[3] = {hostA.size() * sizeof(T), hostB.size() * sizeof(T),
                         hostC.size() * sizeof(T)};
      const void *sources[3] = {hostA.data(), hostB.data(), hostC.data()};
      for (int i = 0; i < 3; ++i) {
        absl::StatusOr<void *> buffer = device.tryAllocate(bytes[i], false);
        ASSERT_TRUE(buffer.ok()) << buffer.status().message();
        buffers[i] = *buffer;
        ASSERT_TRUE(
            device.copyToDevice(buffers[i], sources[i], bytes[i], "x").ok());
      }
      GemmCall call;
      call.dtype = dtype;
      call.transA = transA;
      call.transB = transB;
      call.m = m;
      call.n = n;
      call.k = k;
      call.alpha = 2;
      call.beta = 0.5;
      call.a = buffers[0];
      call.b = buffers[1];
      call.c = buffers[2];
      call.lda = transA ? m : k;
      call.ldb = transB ? k : n;
      call.ldc = n;
      call.origin = "nn.linear at t.mlir:1:1";
      absl::Status status = device.getGemm()->gemm(call);
      ASSERT_TRUE(status.ok()) << status.message();
      ASSERT_TRUE(
          device.copyToHost(hostC.data(), buffers[2], bytes[2], "c").ok());
      // With a transpose, the same values are read as the transposed
      // matrix's rows.
      std::vector<double> expected = product(a, b, transA, transB, m, n, k);
      for (int i = 0; i < m * n; ++i)
        EXPECT_NEAR(hostC[i], 2 * expected[i] + 0.5, 1e-5) << "C[" << i << "]";
      for (void *buffer : buffers)
        device.release(buffer);
    }
}

TEST(GemmProviderTest, HostGemmsRunOnOneDnn) {
  std::shared_ptr<Device> host = deviceOrDie("cpu", {});
  ASSERT_TRUE(host && host->getGemm());
  EXPECT_TRUE(host->isHost());
  EXPECT_EQ(host->getGemm()->name(), "oneDNN");
  checkGemms<float>(*host, DType::f32);
}

TEST(GemmProviderTest, CudaGemmsRunOnCublas) {
  CudaOptions fake;
  fake.driver = FAKE_CUDA_LIBRARY;
  fake.cublasLibrary = FAKE_CUDA_LIBRARY;
  fake.ordinal = 0;
  std::shared_ptr<Device> gpu = deviceOrDie("cuda", DeviceOptions().set(fake));
  ASSERT_TRUE(gpu);
  ASSERT_TRUE(gpu->availability().ok()) << gpu->availability().message();
  ASSERT_TRUE(gpu->getGemm());
  EXPECT_EQ(gpu->getGemm()->name(), "cuBLAS");
  checkGemms<float>(*gpu, DType::f32);
  checkGemms<double>(*gpu, DType::f64);
  GemmCall call;
  call.dtype = DType::i32;
  call.m = 2;
  call.n = 3;
  call.k = 4;
  call.origin = "nn.linear at t.mlir:1:1";
  absl::Status status = gpu->getGemm()->gemm(call);
  EXPECT_EQ(status.code(), absl::StatusCode::kInternal);
  EXPECT_EQ(status.message(), "cublasSgemm_v2: unsupported element type in "
                              "the GEMM of nn.linear at t.mlir:1:1 (2 x 3 x "
                              "4)");
}

/// cuBLAS loads with the device: without it the device is unavailable,
/// with the same messages as when the device itself loaded cuBLAS.
TEST(GemmProviderTest, CudaDeviceWithoutCublasIsUnavailable) {
  CudaOptions missing;
  missing.driver = FAKE_CUDA_LIBRARY;
  missing.cublasLibrary = "/nonexistent/libcublas-registry.so";
  missing.ordinal = 0;
  std::string why;
  EXPECT_FALSE(cudaAvailable(&why, missing));
  EXPECT_EQ(why, "cannot load cuBLAS /nonexistent/libcublas-registry.so");
  std::shared_ptr<Device> gpu =
      deviceOrDie("cuda", DeviceOptions().set(missing));
  ASSERT_TRUE(gpu);
  EXPECT_EQ(gpu->availability().code(), absl::StatusCode::kUnavailable);
  EXPECT_EQ(gpu->getGemm(), nullptr);

  // A library without cuBLAS's functions (zlib, which the runtime links).
  CudaOptions wrong = missing;
  wrong.cublasLibrary = "libz.so.1";
  EXPECT_FALSE(cudaAvailable(&why, wrong));
  EXPECT_EQ(why, "cuBLAS lacks cublasCreate_v2/SetStream_v2/Sgemm_v2/Dgemm_v2");
}

} // namespace
