//===- CudaDevice.h - the CUDA device (internal) ----------------*- C++ -*-===//
//
// A Device on one NVIDIA GPU. The driver (libcuda.so.1) is loaded with
// dlopen when the device is created, so libNNRuntime does not link it and
// runs, and says why, where no GPU is present. Which driver and device come
// from CudaOptions (CudaBackend.cpp fills them in). Its GEMMs run on cuBLAS
// (CublasGemm.h), which the backend attaches.
//
// Every driver call is checked. The first failure during a run is recorded
// in the run's CudaSession with the call's name and the kernel or nn op
// that issued it; later launches and GEMMs of that run are skipped, and the
// run returns the message. GPU artifacts reach the device through the entry
// points of CudaShim.cpp, which find it through the calling thread's
// current session.
//
//===----------------------------------------------------------------------===//

#ifndef NN_RUNTIME_CUDA_CUDADEVICE_H
#define NN_RUNTIME_CUDA_CUDADEVICE_H

#include "nn/Cuda.h"
#include "runtime/cuda/CudaApi.h"
#include "runtime/device/Device.h"

#include <functional>
#include <map>
#include <mutex>
#include <string>
#include <unordered_map>

namespace nn::cuda {

class CudaDevice;

/// The state of one executable's runs: cached modules and functions
/// (MLIR's host code loads and unloads the module around every launch),
/// kernel names for messages, and the first error of the current run. The
/// executable runs one run at a time on it.
class CudaSession : public runtime::DeviceSession {
public:
  CudaSession(CudaDevice &device, const Manifest &manifest);
  ~CudaSession() override;

  absl::Status run(runtime::EntryFn entry, void **argv) override;
  void fail(const absl::Status &status) override;

  CudaDevice &getDevice() const { return device; }
  /// Records the first error of the run.
  void fail(const std::string &message);
  bool failed() const { return !error.empty(); }
  /// "kernel NAME (nn.op at file:line:col)" for messages.
  std::string describeKernel(void *function) const;
  /// The kernel's name (its profile entry), or its description.
  std::string kernelName(void *function) const;

  /// A module of the artifact's images, loaded once per session.
  void *loadModule(const void *image, bool isPtx, int optLevel);
  void *getFunction(void *module, const char *name);
  /// The kernel launched last, for messages of later failures.
  std::string lastLaunch;

private:
  /// Waits for the device and returns the run's error, if any.
  absl::Status finish();

  CudaDevice &device;
  std::string error;
  std::unordered_map<const void *, void *> modules;
  std::unordered_map<void *, std::string> functionNames;
  std::map<std::string, std::string> origins;
};

/// The calling thread's running session, or null outside a run.
CudaSession *currentSession();

class CudaDevice : public runtime::Device {
public:
  /// Loads the driver and sets up the device `options` (filled in)
  /// name; availability() says what failed.
  explicit CudaDevice(const CudaOptions &options);
  ~CudaDevice() override;

  std::string describe() const override;
  std::string kind() const override { return "GPU"; }
  bool isHost() const override { return false; }
  absl::Status availability() const override;
  /// Makes the device unusable for `why` (Unavailable): a library it needs
  /// besides the driver did not load. Only while it is being made.
  void markUnavailable(absl::Status why) { status = std::move(why); }
  const CudaDeviceInfo &getInfo() const { return info; }

  absl::StatusOr<void *> tryAllocate(size_t bytes, bool hostVisible) override;
  void *allocate(size_t bytes, bool hostVisible) override;
  void release(void *pointer) override;
  absl::Status copyToDevice(void *target, const void *source, size_t bytes,
                            const std::string &what) override;
  absl::Status copyToHost(void *target, const void *source, size_t bytes,
                          const std::string &what) override;
  absl::Status launch(const runtime::KernelLaunch &launch) override;
  absl::Status synchronize() override;
  void setProfiling(bool enabled) override;
  std::vector<KernelTime> takeProfile() override;
  std::unique_ptr<runtime::DeviceSession>
  openSession(const Manifest &manifest) override;

  /// For sessions: the driver, the stream, and making the context current.
  const abi::Api &getApi() const { return api; }
  abi::CUstream getStream() const { return stream; }
  absl::Status makeCurrent();
  /// The error of a failed driver call ("call failed: NAME (text) what").
  absl::Status check(abi::CUresult result, const std::string &call,
                     const std::string &what) const;
  /// Runs `enqueue` (work on the stream, returning its status). While
  /// profiling, CUDA events around it time the work, added to the profile
  /// under `name`; `what` describes it in messages.
  absl::Status profiled(const std::string &name, const std::string &what,
                        const std::function<absl::Status()> &enqueue);

private:
  absl::Status initialize(const CudaOptions &options);
  abi::CUresult allocateFresh(abi::CUdeviceptr *pointer, size_t size,
                              bool hostVisible);
  void trimCache(size_t keep);

  abi::Api api;
  void *driverLibrary = nullptr;
  /// Why the device cannot be used (Unavailable), or OK.
  absl::Status status;
  abi::CUdevice device = 0;
  abi::CUcontext context = nullptr;
  abi::CUstream stream = nullptr;
  CudaDeviceInfo info;

  /// Reused buffers by kind (host-visible or not) and exact size: a run
  /// allocates the same sizes again.
  std::mutex memoryMutex;
  std::multimap<std::pair<bool, size_t>, void *> cached;
  std::unordered_map<void *, std::pair<bool, size_t>> live;
  /// Host memory handed out after a failed allocation, so that host code
  /// of the failed run does not crash; freed with free().
  std::unordered_map<void *, size_t> fallback;
  size_t cachedBytes = 0;

  bool profiling = false;
  std::mutex profileMutex;
  std::map<std::string, KernelTime> profile;
};

} // namespace nn::cuda

#endif // NN_RUNTIME_CUDA_CUDADEVICE_H
