//===- Device.cpp - the device registry and the host device ---------------===//

#include "runtime/device/Device.h"

#include "runtime/Allocator.h"
#include "runtime/cuda/CudaDevice.h"

#include "absl/container/flat_hash_map.h"

#include <cstdlib>
#include <cstring>
#include <mutex>

using namespace nn;
using namespace nn::runtime;

DeviceSession::~DeviceSession() = default;
Device::~Device() = default;

//===----------------------------------------------------------------------===//
// Options
//===----------------------------------------------------------------------===//

DeviceOptions DeviceOptions::withDefaults() const {
  DeviceOptions filled = *this;
  auto fromEnvironment = [](const char *name) -> const char * {
    const char *value = std::getenv(name);
    return value && *value ? value : nullptr;
  };
  if (filled.cudaOrdinal < 0) {
    const char *chosen = fromEnvironment("NN_CUDA_DEVICE");
    filled.cudaOrdinal = chosen ? std::atoi(chosen) : 0;
  }
  if (filled.cudaDriver.empty()) {
    const char *driver = fromEnvironment("NN_CUDA_DRIVER");
    filled.cudaDriver = driver ? driver : "libcuda.so.1";
  }
  if (filled.cublasLibrary.empty())
    if (const char *blas = fromEnvironment("NN_CUBLAS_LIBRARY"))
      filled.cublasLibrary = blas;
  return filled;
}

//===----------------------------------------------------------------------===//
// The host
//===----------------------------------------------------------------------===//

namespace {

/// The entry point runs on the calling thread and reads host memory as it
/// is; its loops and BLAS calls are in the artifact itself.
class HostSession : public DeviceSession {
public:
  explicit HostSession(const Manifest &manifest) : graph(manifest.graph) {}

  absl::Status run(EntryFn entry, void **argv) override {
    absl::Status status;
    std::swap(status, staging);
    if (!status.ok())
      return status;
    GuardedCall call = callWithAllocationGuard(entry, argv);
    if (call.failedAllocation)
      return absl::ResourceExhaustedError(
          "out of memory: running @" + graph + " needed a buffer of " +
          std::to_string(call.failedAllocation) +
          " bytes that could not be allocated (are the inputs larger than "
          "intended?)");
    if (!call.error.empty())
      return absl::InternalError("running @" + graph + ": " + call.error);
    return absl::OkStatus();
  }
  void fail(const absl::Status &status) override {
    if (staging.ok())
      staging = status;
  }

private:
  std::string graph;
  absl::Status staging;
};

class HostDevice : public Device {
public:
  std::string describe() const override { return "cpu"; }
  bool isHost() const override { return true; }
  absl::Status availability() const override { return absl::OkStatus(); }
  absl::StatusOr<void *> tryAllocate(size_t bytes, bool) override {
    void *pointer = std::calloc(1, bytes ? bytes : 1);
    if (!pointer)
      return absl::ResourceExhaustedError(
          "out of memory: " + std::to_string(bytes) + " bytes on the host");
    return pointer;
  }
  void *allocate(size_t bytes, bool hostVisible) override {
    absl::StatusOr<void *> pointer = tryAllocate(bytes, hostVisible);
    return pointer.ok() ? *pointer : nullptr;
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
    return absl::UnimplementedError(
        "the host runs no kernels: CPU artifacts call their loops directly");
  }
  absl::Status gemm(const GemmCall &) override {
    return absl::UnimplementedError(
        "the host device has no GEMM: CPU artifacts call BLAS directly");
  }
  absl::Status synchronize() override { return absl::OkStatus(); }
  void setProfiling(bool) override {}
  std::vector<KernelTime> takeProfile() override { return {}; }
  std::unique_ptr<DeviceSession>
  openSession(const Manifest &manifest) override {
    return std::make_unique<HostSession>(manifest);
  }
};

//===----------------------------------------------------------------------===//
// The registry
//===----------------------------------------------------------------------===//

struct Registry {
  std::mutex mutex;
  absl::flat_hash_map<std::string, DeviceFactory> factories;
  /// Devices by target and options; never destroyed (artifacts may hold
  /// their memory until exit).
  absl::flat_hash_map<std::string, std::shared_ptr<Device>> devices;

  Registry() {
    factories["cpu"] = [](const DeviceOptions &) {
      return std::make_shared<HostDevice>();
    };
    factories["cuda"] = [](const DeviceOptions &options) {
      return std::make_shared<cuda::CudaDevice>(options);
    };
  }
};

Registry &registry() {
  static Registry *instance = new Registry;
  return *instance;
}

} // namespace

void runtime::registerDeviceFactory(const std::string &target,
                                    DeviceFactory factory) {
  Registry &r = registry();
  std::lock_guard<std::mutex> lock(r.mutex);
  r.factories[target] = std::move(factory);
}

absl::StatusOr<std::shared_ptr<Device>>
runtime::getDevice(const std::string &target, const DeviceOptions &options) {
  DeviceOptions filled = options.withDefaults();
  // The host ignores the CUDA options: one host device.
  std::string key = target;
  if (target != "cpu")
    key += "|" + std::to_string(filled.cudaOrdinal) + "|" + filled.cudaDriver +
           "|" + filled.cublasLibrary;
  Registry &r = registry();
  std::lock_guard<std::mutex> lock(r.mutex);
  if (auto it = r.devices.find(key); it != r.devices.end())
    return it->second;
  auto factory = r.factories.find(target);
  if (factory == r.factories.end())
    return absl::InvalidArgumentError("no device runs target '" + target +
                                      "' (known: cpu, cuda)");
  std::shared_ptr<Device> device = factory->second(filled);
  r.devices[key] = device;
  return device;
}
