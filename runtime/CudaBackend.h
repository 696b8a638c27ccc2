//===- CudaBackend.h - the runtime's CUDA backend (internal) ----*- C++ -*-===//
//
// Runs GPU artifacts. The driver (libcuda.so.1) and cuBLAS are loaded with
// dlopen on first use, so libNNRuntime links neither and runs, and says
// why, where no GPU is present. The backend exports the entry points GPU
// artifacts call (see CudaBackend.cpp):
//
//   mgpu*            what MLIR's gpu-to-llvm host code calls (LLVM 19
//                    signatures): module load/unload, launch, streams
//   nn_cuda_alloc    device buffers; mgpuMemAlloc(host_shared) gives
//   nn_cuda_free     host-visible (managed) ones; both reused by size
//   nn_cuda_sgemm    row-major CBLAS-style GEMMs through cuBLAS
//   nn_cuda_dgemm
//
// Every driver and cuBLAS call is checked. The first failure during a run
// is recorded in the run's CudaRun with the call's name and the kernel or
// nn op that issued it; later launches and GEMMs of that run are skipped,
// and Executable::run returns the message.
//
//===----------------------------------------------------------------------===//

#ifndef NN_RUNTIME_CUDABACKEND_H
#define NN_RUNTIME_CUDABACKEND_H

#include "nn/Runtime.h"

#include <cstddef>
#include <map>
#include <mutex>
#include <string>
#include <unordered_map>

namespace nn::cuda {

/// Loads the driver and cuBLAS and sets up device 0 (NN_CUDA_DEVICE picks
/// another). Errors say what is missing: no driver, no device, no cuBLAS.
absl::Status initialize();

/// Per-executable state of GPU runs: cached modules and functions (MLIR's
/// host code loads and unloads the module around every launch), kernel
/// names for messages, and the first error of the current run. One run at a
/// time per executable (`mutex`).
class CudaRun {
public:
  explicit CudaRun(const Manifest &manifest);
  ~CudaRun();
  CudaRun(const CudaRun &) = delete;
  CudaRun &operator=(const CudaRun &) = delete;

  /// Makes this the current run of the calling thread (and the device's
  /// context current); the destructor of the returned scope undoes it.
  class Scope {
  public:
    explicit Scope(CudaRun &run);
    ~Scope();

  private:
    CudaRun *previous;
  };

  /// Records the first error of the run.
  void fail(const std::string &message);
  bool failed() const { return !error.empty(); }
  /// Waits for the device and returns the run's error, if any.
  absl::Status finish();

  /// "kernel NAME (nn.op at file:line:col)" for messages.
  std::string describeKernel(void *function) const;

  std::mutex mutex;
  std::string error;
  std::unordered_map<const void *, void *> modules;
  std::unordered_map<void *, std::string> functionNames;
  std::map<std::string, std::string> origins;
  std::string lastLaunch;
};

/// The calling thread's current run, or null outside Executable::run.
CudaRun *currentRun();

/// Device memory, or managed memory when host code touches the buffer
/// (`hostVisible`, see nn-gpu-place-buffers). Failures are recorded in the
/// current run.
void *allocate(size_t bytes, bool hostVisible);
void release(void *pointer);
/// Checked copies; `what` names the tensor for messages.
bool copyToDevice(void *device, const void *host, size_t bytes,
                  const std::string &what);
bool copyToHost(void *host, const void *device, size_t bytes,
                const std::string &what);

} // namespace nn::cuda

#endif // NN_RUNTIME_CUDABACKEND_H
