//===- CudaBackend.h - the backend of target "cuda" (internal) --*- C++ -*-===//
//
// Fills in CudaOptions from the environment (NN_CUDA_DEVICE,
// NN_CUDA_DRIVER, NN_CUBLAS_LIBRARY) and the built-in defaults, keys CUDA
// devices by ordinal, driver and cuBLAS library, and makes each one a
// CudaDevice with a cuBLAS GEMM provider. nn/Cuda.h's functions are
// defined with it.
//
//===----------------------------------------------------------------------===//

#ifndef NN_RUNTIME_CUDA_CUDABACKEND_H
#define NN_RUNTIME_CUDA_CUDABACKEND_H

#include "nn/Cuda.h"
#include "runtime/device/Device.h"

#include "absl/status/statusor.h"

#include <memory>

namespace nn::cuda {

class CudaDevice;

std::shared_ptr<const runtime::Backend> createCudaBackend();

/// The CUDA device of `options` (the runtime's, shared), or why there is
/// none.
absl::StatusOr<std::shared_ptr<CudaDevice>>
cudaDevice(const CudaOptions &options);

} // namespace nn::cuda

#endif // NN_RUNTIME_CUDA_CUDABACKEND_H
