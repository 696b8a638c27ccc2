//===- Device.h - where an executable runs (internal) -----------*- C++ -*-===//
//
// The runtime reaches hardware only through Device: memory, copies, kernel
// launches, synchronization and profiling; its GEMMs go to the library the
// device's backend attached (Gemm.h). Devices come from a registry of
// backends, one per target ("cpu", "cuda"): a backend fills in its options
// (BackendOptions, from the load's DeviceOptions and its defaults), keys
// its devices by them and makes them. The same target and key give the
// same device, so executables on one GPU share its context, stream and
// memory cache, and executables on different devices live side by side.
// Nothing outside a backend knows its options or compares target names.
//
// Each executable opens a DeviceSession: the state of its runs (loaded
// kernel modules, the first error of a run). The host is a Device too,
// whose memory the entry point reads as it is.
//
//===----------------------------------------------------------------------===//

#ifndef NN_RUNTIME_DEVICE_DEVICE_H
#define NN_RUNTIME_DEVICE_DEVICE_H

#include "nn/Runtime.h"
#include "runtime/device/Gemm.h"

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
  /// The kind of hardware, for messages ("cannot run @g on the GPU").
  virtual std::string kind() const = 0;
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
  virtual absl::Status synchronize() = 0;

  /// The library the device's GEMMs run on, or null when it has none.
  GemmProvider *getGemm() const { return gemm.get(); }
  /// Attaches it; the backend does when it makes the device.
  void setGemm(std::shared_ptr<GemmProvider> provider) {
    gemm = std::move(provider);
  }

  /// Device time per kernel and GEMM while enabled (benchmarks).
  virtual void setProfiling(bool enabled) = 0;
  virtual std::vector<KernelTime> takeProfile() = 0;

  virtual std::unique_ptr<DeviceSession>
  openSession(const Manifest &manifest) = 0;

private:
  std::shared_ptr<GemmProvider> gemm;
};

/// The devices of one target: fills in their options, keys them and makes
/// them. BackendWith<Options> implements it for a backend with its own
/// options type.
class Backend {
public:
  virtual ~Backend();
  /// The manifest target whose artifacts its devices run ("cuda").
  virtual std::string target() const = 0;
  /// The options a device is made from: `given` (the load's options for
  /// this target, or null for none) with defaults filled in.
  /// InvalidArgument when `given` is not of this backend's options type.
  virtual absl::StatusOr<std::shared_ptr<const BackendOptions>>
  fillDefaults(const BackendOptions *given) const = 0;
  /// What tells its devices apart: filled options with equal keys share
  /// one device.
  virtual std::string deviceKey(const BackendOptions &filled) const = 0;
  /// A new device (with its GEMM provider, if any) for filled options.
  /// A device that cannot run says why in availability().
  virtual std::shared_ptr<Device>
  createDevice(const BackendOptions &filled) const = 0;
};

/// A backend whose options are an `Options` (a BackendOptions whose
/// target() is the backend's target).
template <typename Options> class BackendWith : public Backend {
public:
  std::string target() const final { return Options().target(); }

  absl::StatusOr<std::shared_ptr<const BackendOptions>>
  fillDefaults(const BackendOptions *given) const final {
    Options options;
    if (given) {
      const auto *typed = dynamic_cast<const Options *>(given);
      if (!typed)
        return absl::InvalidArgumentError(
            "the device options given for target '" + target() +
            "' are not the options of its backend");
      options = *typed;
    }
    return std::shared_ptr<const BackendOptions>(
        std::make_shared<const Options>(withDefaults(std::move(options))));
  }
  std::string deviceKey(const BackendOptions &filled) const final {
    return keyOf(static_cast<const Options &>(filled));
  }
  std::shared_ptr<Device>
  createDevice(const BackendOptions &filled) const final {
    return create(static_cast<const Options &>(filled));
  }

protected:
  /// `options` with every empty field filled in.
  virtual Options withDefaults(Options options) const = 0;
  virtual std::string keyOf(const Options &filled) const = 0;
  virtual std::shared_ptr<Device> create(const Options &filled) const = 0;
};

/// Registers `backend` for its target, replacing the one registered
/// before (devices made already stay cached). The runtime registers "cpu"
/// and "cuda" itself.
void registerBackend(std::shared_ptr<const Backend> backend);

/// The targets some backend runs, sorted.
std::vector<std::string> registeredTargets();

/// The device for `target` and `options`: its backend fills in defaults
/// and keys it; made on first use and shared after. InvalidArgument for a
/// target no backend runs ("no device runs target 'tpu' (known: cpu,
/// cuda)") and for options of the wrong type.
absl::StatusOr<std::shared_ptr<Device>> getDevice(const std::string &target,
                                                  const DeviceOptions &options);

} // namespace nn::runtime

#endif // NN_RUNTIME_DEVICE_DEVICE_H
