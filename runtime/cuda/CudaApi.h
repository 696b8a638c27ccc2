//===- CudaApi.h - the CUDA driver and cuBLAS C ABI the runtime uses ------===//
//
// Types, constants and function signatures of the CUDA driver API and
// cuBLAS (cuda.h, cublas_api.h of CUDA 12 and 13), declared here so that
// libNNRuntime builds without the toolkit and loads the libraries with
// dlopen. unittests/CudaAbiTest.cpp checks the constants, sizes and
// versioned symbol names against the toolkit's headers where it is
// installed.
//
//===----------------------------------------------------------------------===//

#ifndef NN_RUNTIME_CUDA_CUDAAPI_H
#define NN_RUNTIME_CUDA_CUDAAPI_H

#include <cstddef>

namespace nn::cuda::abi {

using CUresult = int;
using CUdevice = int;
using CUdeviceptr = unsigned long long;
using CUcontext = struct CUctx_st *;
using CUmodule = struct CUmod_st *;
using CUfunction = struct CUfunc_st *;
using CUstream = struct CUstream_st *;
using CUevent = struct CUevent_st *;
using cublasHandle_t = struct cublasContext *;
using cublasStatus_t = int;

constexpr CUresult kSuccess = 0;
constexpr CUresult kOutOfMemory = 2;
/// cuStreamQuery: work on the stream is still running.
constexpr CUresult kNotReady = 600;
constexpr unsigned kMemAttachGlobal = 0x1;
constexpr unsigned kStreamDefault = 0x0;
constexpr int kJitOptimizationLevel = 7;
constexpr int kJitErrorLogBuffer = 5;
constexpr int kJitErrorLogBufferSize = 6;
constexpr int kAttributeSmCount = 16;
constexpr int kAttributeMemoryClockKHz = 36;
constexpr int kAttributeBusWidthBits = 37;
constexpr int kAttributeMajor = 75;
constexpr int kAttributeMinor = 76;
constexpr int kCublasOpN = 0, kCublasOpT = 1;
constexpr int kCblasRowMajor = 101, kCblasNoTrans = 111, kCblasTrans = 112;

/// Every driver and cuBLAS function the backend uses, listed once:
/// X(member, symbol, result, (parameters)). The symbol is what dlsym looks
/// up: the versioned name where cuda.h maps the plain name to a _v2 one.
/// The function tables below and the loaders (CudaDevice.cpp for the
/// driver, CublasGemm.cpp for cuBLAS) expand these lists, and CudaAbiTest
/// checks each symbol against the toolkit's headers.
#define NN_CUDA_DRIVER_FUNCTIONS(X)                                            \
  X(cuInit, "cuInit", CUresult, (unsigned))                                    \
  X(cuGetErrorName, "cuGetErrorName", CUresult, (CUresult, const char **))     \
  X(cuGetErrorString, "cuGetErrorString", CUresult, (CUresult, const char **)) \
  X(cuDeviceGetCount, "cuDeviceGetCount", CUresult, (int *))                   \
  X(cuDeviceGet, "cuDeviceGet", CUresult, (CUdevice *, int))                   \
  X(cuDeviceGetName, "cuDeviceGetName", CUresult, (char *, int, CUdevice))     \
  X(cuDeviceGetAttribute, "cuDeviceGetAttribute", CUresult,                    \
    (int *, int, CUdevice))                                                    \
  X(cuDevicePrimaryCtxRetain, "cuDevicePrimaryCtxRetain", CUresult,            \
    (CUcontext *, CUdevice))                                                   \
  X(cuCtxSetCurrent, "cuCtxSetCurrent", CUresult, (CUcontext))                 \
  X(cuModuleLoadData, "cuModuleLoadData", CUresult,                            \
    (CUmodule *, const void *))                                                \
  X(cuModuleLoadDataEx, "cuModuleLoadDataEx", CUresult,                        \
    (CUmodule *, const void *, unsigned, int *, void **))                      \
  X(cuModuleGetFunction, "cuModuleGetFunction", CUresult,                      \
    (CUfunction *, CUmodule, const char *))                                    \
  X(cuModuleUnload, "cuModuleUnload", CUresult, (CUmodule))                    \
  X(cuLaunchKernel, "cuLaunchKernel", CUresult,                                \
    (CUfunction, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned,   \
     unsigned, CUstream, void **, void **))                                    \
  X(cuStreamCreate, "cuStreamCreate", CUresult, (CUstream *, unsigned))        \
  X(cuStreamSynchronize, "cuStreamSynchronize", CUresult, (CUstream))          \
  X(cuStreamQuery, "cuStreamQuery", CUresult, (CUstream))                      \
  X(cuMemAlloc, "cuMemAlloc_v2", CUresult, (CUdeviceptr *, size_t))            \
  X(cuMemAllocManaged, "cuMemAllocManaged", CUresult,                          \
    (CUdeviceptr *, size_t, unsigned))                                         \
  X(cuMemGetInfo, "cuMemGetInfo_v2", CUresult, (size_t *, size_t *))           \
  X(cuMemFree, "cuMemFree_v2", CUresult, (CUdeviceptr))                        \
  X(cuMemcpyHtoD, "cuMemcpyHtoD_v2", CUresult,                                 \
    (CUdeviceptr, const void *, size_t))                                       \
  X(cuMemcpyDtoH, "cuMemcpyDtoH_v2", CUresult, (void *, CUdeviceptr, size_t))  \
  X(cuEventCreate, "cuEventCreate", CUresult, (CUevent *, unsigned))           \
  X(cuEventRecord, "cuEventRecord", CUresult, (CUevent, CUstream))             \
  X(cuEventSynchronize, "cuEventSynchronize", CUresult, (CUevent))             \
  X(cuEventElapsedTime, "cuEventElapsedTime_v2", CUresult,                     \
    (float *, CUevent, CUevent))                                               \
  X(cuEventDestroy, "cuEventDestroy_v2", CUresult, (CUevent))

#define NN_CUBLAS_FUNCTIONS(X)                                                 \
  X(cublasCreate, "cublasCreate_v2", cublasStatus_t, (cublasHandle_t *))       \
  X(cublasSetStream, "cublasSetStream_v2", cublasStatus_t,                     \
    (cublasHandle_t, CUstream))                                                \
  X(cublasSgemm, "cublasSgemm_v2", cublasStatus_t,                             \
    (cublasHandle_t, int, int, int, int, int, const float *, const float *,    \
     int, const float *, int, const float *, float *, int))                    \
  X(cublasDgemm, "cublasDgemm_v2", cublasStatus_t,                             \
    (cublasHandle_t, int, int, int, int, int, const double *, const double *,  \
     int, const double *, int, const double *, double *, int))

#define NN_CUDA_DECLARE(member, symbol, result, parameters)                    \
  result(*member) parameters = nullptr;

/// The driver's functions, resolved by dlsym (CudaDevice).
struct Api {
  NN_CUDA_DRIVER_FUNCTIONS(NN_CUDA_DECLARE)
};

/// cuBLAS's functions, resolved by dlsym (CublasGemm).
struct BlasApi {
  NN_CUBLAS_FUNCTIONS(NN_CUDA_DECLARE)
};

#undef NN_CUDA_DECLARE

} // namespace nn::cuda::abi

#endif // NN_RUNTIME_CUDA_CUDAAPI_H
