//===- nn/Cuda.h - the CUDA backend: options and queries --------*- C++ -*-===//
//
// What a program sets and asks of the backend that runs "cuda" artifacts:
// its options (which GPU, which driver and cuBLAS; LoadOptions carries them
// in its DeviceOptions), whether such a device is usable, what it is, its
// kernels' device time, and NCCL communicators over the GPUs of a
// data-parallel run. The driver, cuBLAS and NCCL are loaded with dlopen
// when first used, so programs link none of them.
//
//===----------------------------------------------------------------------===//

#ifndef NN_CUDA_H
#define NN_CUDA_H

#include "nn/Communicator.h"
#include "nn/Runtime.h"

#include <string>
#include <vector>

namespace nn {

/// Options of the CUDA backend (target "cuda"). Empty fields take defaults
/// from the environment, then the built-in ones.
struct CudaOptions : BackendOptions {
  /// The GPU to use; default $NN_CUDA_DEVICE, else 0.
  int ordinal = -1;
  /// The driver library to load; default $NN_CUDA_DRIVER, else
  /// libcuda.so.1.
  std::string driver;
  /// cuBLAS; default $NN_CUBLAS_LIBRARY, else the first of
  /// libcublas.so.13, .so.12 and .so that loads.
  std::string cublasLibrary;

  /// "cuda".
  std::string target() const override;
};

/// Whether the CUDA device `options` choose is usable; otherwise `why`
/// says which library or device is missing and GPU artifacts do not run.
bool cudaAvailable(std::string *why = nullptr, const CudaOptions &options = {});

struct CudaDeviceInfo {
  std::string name;
  int ordinal = 0;
  int multiprocessors = 0;
  /// 90 for sm_90.
  int computeCapability = 0;
  /// From the memory clock and bus width the driver reports.
  double peakBandwidthGBs = 0;
};
/// What the CUDA device `options` choose is; Unavailable without one.
absl::Status cudaDeviceInfo(CudaDeviceInfo &info,
                            const CudaOptions &options = {});

/// The ranks of `bootstrap` (the run's MPI communicator; it must outlive
/// the result) on their GPUs, the CUDA device of `device` each: rank 0
/// makes NCCL's unique id and broadcasts it through `bootstrap`, then
/// every rank joins (ncclCommInitRank; NCCL 2.4 or later). Every rank
/// first learns whether all found their GPU and NCCL, so a rank without
/// them fails every rank instead of leaving them waiting. The result's
/// all-reduce and broadcast take buffers in the device's memory (device
/// or managed) and run on the device's stream; each returns when the
/// device finished it, or fails after the timeout (aborting the NCCL
/// communicator) or when NCCL reports an error. Its barrier and abort,
/// and its host() sums, are `bootstrap`'s. Errors name the library, the
/// call and the rank.
absl::StatusOr<std::unique_ptr<Communicator>>
makeNcclCommunicator(Communicator &bootstrap,
                     const CommunicatorOptions &options = {},
                     const CudaOptions &device = {});

/// Device-time profiling of the CUDA device `options` choose (the one
/// Executable::setProfiling reaches for artifacts loaded with them).
void cudaSetProfiling(bool enabled, const CudaOptions &options = {});
/// The times since profiling was enabled or last taken, per kernel name.
std::vector<KernelTime> cudaTakeProfile(const CudaOptions &options = {});

} // namespace nn

#endif // NN_CUDA_H
