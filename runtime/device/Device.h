//===- Device.h - where an executable runs (internal) -----------*- C++ -*-===//
//
// The runtime reaches hardware only through Device: memory, copies, kernel
// launches, GEMMs, synchronization and profiling. Devices come from a
// registry keyed on the manifest's target ("cpu", "cuda") and the
// DeviceOptions of the load; the same target and options give the same
// device, so executables on one GPU share its context, stream and memory
// cache, and executables on different devices live side by side.
//
// Each executable opens a DeviceSession: the state of its runs (loaded
// kernel modules, the first error of a run). The host is a Device too,
// whose memory the entry point reads as it is.
//
//===----------------------------------------------------------------------===//

#ifndef NN_RUNTIME_DEVICE_DEVICE_H
#define NN_RUNTIME_DEVICE_DEVICE_H

#include "nn/Runtime.h"

#include "absl/status/statusor.h"

#include <cstddef>
#include <functional>
#include <memory>
#include <string>
#include <vector>

namespace nn::runtime {

/// The entry point of an artifact (see Executable.cpp).
using EntryFn = void (*)(void **);

/// One kernel launch; `what` describes it for messages, `name` keys its
/// profile entry.
struct KernelLaunch {
  void *function = nullptr;
  int64_t grid[3] = {1, 1, 1};
  int64_t block[3] = {1, 1, 1};
  int32_t sharedMemory = 0;
  void **params = nullptr;
  void **extra = nullptr;
  std::string what, name;
};

/// A row-major C = alpha op(A) op(B) + beta C on device buffers.
struct GemmCall {
  DType dtype = DType::f32;
  bool transA = false, transB = false;
  int m = 0, n = 0, k = 0;
  double alpha = 1, beta = 0;
  const void *a = nullptr, *b = nullptr;
  void *c = nullptr;
  int lda = 0, ldb = 0, ldc = 0;
  std::string what, name;
};

/// The state of one executable's runs on its device.
class DeviceSession {
public:
  virtual ~DeviceSession();
  /// Calls the entry point on `argv` and waits for the device; the run's
  /// first failure, if any. The executable serializes its runs (staging,
  /// run, copies back) on its session.
  virtual absl::Status run(EntryFn entry, void **argv) = 0;
  /// Records a failure of the coming run (a staging copy), so that run()
  /// skips the entry point and returns it.
  virtual void fail(const absl::Status &status) = 0;
};

class Device {
public:
  virtual ~Device();

  /// "cpu", "cuda:0 (NVIDIA H200)".
  virtual std::string describe() const = 0;
  /// True when the entry point reads host memory as it is: arguments are
  /// not staged and results not copied back.
  virtual bool isHost() const = 0;
  /// Why the device cannot run anything, or OK.
  virtual absl::Status availability() const = 0;

  /// Memory the entry point reads; `hostVisible` when host code of the
  /// artifact touches it too. The runtime's own buffers (staged arguments).
  virtual absl::StatusOr<void *> tryAllocate(size_t bytes,
                                             bool hostVisible) = 0;
  /// The same for the artifact's allocations, which must not fail: after a
  /// failure (recorded in the current run) it returns host memory that is
  /// safe to touch, and the run reports the failure.
  virtual void *allocate(size_t bytes, bool hostVisible) = 0;
  virtual void release(void *pointer) = 0;
  /// Synchronous copies; `what` names the tensor in messages.
  virtual absl::Status copyToDevice(void *target, const void *source,
                                    size_t bytes, const std::string &what) = 0;
  virtual absl::Status copyToHost(void *target, const void *source,
                                  size_t bytes, const std::string &what) = 0;

  virtual absl::Status launch(const KernelLaunch &launch) = 0;
  virtual absl::Status gemm(const GemmCall &gemm) = 0;
  virtual absl::Status synchronize() = 0;

  /// Device time per kernel and GEMM while enabled (benchmarks).
  virtual void setProfiling(bool enabled) = 0;
  virtual std::vector<KernelTime> takeProfile() = 0;

  virtual std::unique_ptr<DeviceSession>
  openSession(const Manifest &manifest) = 0;
};

/// Makes the device of one target for some options (not yet cached).
using DeviceFactory =
    std::function<std::shared_ptr<Device>(const DeviceOptions &options)>;

/// Registers the factory of `target`; the runtime registers "cpu" and
/// "cuda" itself.
void registerDeviceFactory(const std::string &target, DeviceFactory factory);

/// The device for `target` and `options` (environment defaults filled in,
/// DeviceOptions::withDefaults), created on first use and shared after.
/// InvalidArgument for a target no factory is registered for.
absl::StatusOr<std::shared_ptr<Device>> getDevice(const std::string &target,
                                                  const DeviceOptions &options);

} // namespace nn::runtime

#endif // NN_RUNTIME_DEVICE_DEVICE_H
