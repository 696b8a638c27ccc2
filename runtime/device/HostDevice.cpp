//===- HostDevice.cpp - the host device and its backend -------------------===//

#include "runtime/device/HostDevice.h"

#include "nn/Communicator.h"
#include "runtime/Allocator.h"
#include "runtime/device/OneDnnGemm.h"

#include <cstdlib>
#include <cstring>

using namespace nn;
using namespace nn::runtime;

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
    // A run that ended between the start of a sum and its finish left it
    // running on the communicator's thread: the next collective of this
    // rank must come after it.
    if (!call.ok())
      if (Communicator *communicator = currentCommunicator())
        communicator->finishAllSums();
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
  std::string kind() const override { return "cpu"; }
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
  absl::Status synchronize() override { return absl::OkStatus(); }
  void setProfiling(bool) override {}
  std::vector<KernelTime> takeProfile() override { return {}; }
  std::unique_ptr<DeviceSession>
  openSession(const Manifest &manifest) override {
    return std::make_unique<HostSession>(manifest);
  }
};

/// The host takes no options; this type only names the target.
struct HostOptions : BackendOptions {
  std::string target() const override { return "cpu"; }
};

class HostBackend : public BackendWith<HostOptions> {
protected:
  HostOptions withDefaults(HostOptions options) const override {
    return options;
  }
  std::string keyOf(const HostOptions &) const override { return ""; }
  std::shared_ptr<Device> create(const HostOptions &) const override {
    auto device = std::make_shared<HostDevice>();
    device->setGemm(oneDnnGemm());
    return device;
  }
};

} // namespace

std::shared_ptr<const Backend> runtime::createHostBackend() {
  return std::make_shared<HostBackend>();
}
