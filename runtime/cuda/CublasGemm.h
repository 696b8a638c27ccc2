//===- CublasGemm.h - cuBLAS GEMMs of CUDA devices (internal) ---*- C++ -*-===//
//
// The GEMM provider of CUDA devices: cuBLAS, loaded with dlopen when the
// device is made (libNNRuntime does not link it), with one handle bound to
// the device's stream. GEMMs are timed by the device's profiling, and each
// waits for its result, which host code may read next.
//
//===----------------------------------------------------------------------===//

#ifndef NN_RUNTIME_CUDA_CUBLASGEMM_H
#define NN_RUNTIME_CUDA_CUBLASGEMM_H

#include "runtime/cuda/CudaDevice.h"
#include "runtime/device/Gemm.h"

#include "absl/status/statusor.h"

#include <memory>

namespace nn::cuda {

class CublasGemm : public runtime::GemmProvider {
public:
  /// Loads cuBLAS (`options.cublasLibrary`, else the first of
  /// libcublas.so.13, .so.12 and .so) for `device`, which must be
  /// available and outlive it; Unavailable, saying what failed, otherwise.
  static absl::StatusOr<std::shared_ptr<CublasGemm>>
  create(CudaDevice &device, const CudaOptions &options);

  std::string name() const override { return "cuBLAS"; }
  absl::Status gemm(const runtime::GemmCall &call) override;

private:
  explicit CublasGemm(CudaDevice &device) : device(device) {}

  CudaDevice &device;
  void *library = nullptr;
  abi::BlasApi api;
  abi::cublasHandle_t handle = nullptr;
};

} // namespace nn::cuda

#endif // NN_RUNTIME_CUDA_CUBLASGEMM_H
