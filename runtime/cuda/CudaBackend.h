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

#include "runtime/device/Device.h"

#include <memory>

namespace nn::cuda {

std::shared_ptr<const runtime::Backend> createCudaBackend();

} // namespace nn::cuda

#endif // NN_RUNTIME_CUDA_CUDABACKEND_H
