//===- CudaAbi.h - the CUDA driver and cuBLAS C ABI the runtime uses -*- C++
//-*-===//
//
// Types, constants and function signatures of the CUDA driver API and
// cuBLAS (cuda.h, cublas_api.h of CUDA 12 and 13), declared here so that
// libNNRuntime builds without the toolkit and loads the libraries with
// dlopen. unittests/CudaAbiTest.cpp checks the constants, sizes and
// versioned symbol names against the toolkit's headers where it is
// installed.
//
//===----------------------------------------------------------------------===//

#ifndef NN_RUNTIME_CUDAABI_H
#define NN_RUNTIME_CUDAABI_H

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

/// The driver and cuBLAS functions the backend uses, resolved by dlsym
/// (versioned names where cuda.h maps the plain name to a _v2 symbol).
struct Api {
  CUresult (*cuInit)(unsigned);
  CUresult (*cuGetErrorName)(CUresult, const char **);
  CUresult (*cuGetErrorString)(CUresult, const char **);
  CUresult (*cuDeviceGetCount)(int *);
  CUresult (*cuDeviceGet)(CUdevice *, int);
  CUresult (*cuDeviceGetName)(char *, int, CUdevice);
  CUresult (*cuDeviceGetAttribute)(int *, int, CUdevice);
  CUresult (*cuDevicePrimaryCtxRetain)(CUcontext *, CUdevice);
  CUresult (*cuCtxSetCurrent)(CUcontext);
  CUresult (*cuModuleLoadData)(CUmodule *, const void *);
  CUresult (*cuModuleLoadDataEx)(CUmodule *, const void *, unsigned, int *,
                                 void **);
  CUresult (*cuModuleGetFunction)(CUfunction *, CUmodule, const char *);
  CUresult (*cuModuleUnload)(CUmodule);
  CUresult (*cuLaunchKernel)(CUfunction, unsigned, unsigned, unsigned, unsigned,
                             unsigned, unsigned, unsigned, CUstream, void **,
                             void **);
  CUresult (*cuStreamCreate)(CUstream *, unsigned);
  CUresult (*cuStreamSynchronize)(CUstream);
  CUresult (*cuMemAlloc)(CUdeviceptr *, size_t);
  CUresult (*cuMemAllocManaged)(CUdeviceptr *, size_t, unsigned);
  CUresult (*cuMemGetInfo)(size_t *, size_t *);
  CUresult (*cuMemFree)(CUdeviceptr);
  CUresult (*cuMemcpyHtoD)(CUdeviceptr, const void *, size_t);
  CUresult (*cuMemcpyDtoH)(void *, CUdeviceptr, size_t);
  CUresult (*cuEventCreate)(CUevent *, unsigned);
  CUresult (*cuEventRecord)(CUevent, CUstream);
  CUresult (*cuEventSynchronize)(CUevent);
  CUresult (*cuEventElapsedTime)(float *, CUevent, CUevent);
  CUresult (*cuEventDestroy)(CUevent);

  cublasStatus_t (*cublasCreate)(cublasHandle_t *);
  cublasStatus_t (*cublasSetStream)(cublasHandle_t, CUstream);
  cublasStatus_t (*cublasSgemm)(cublasHandle_t, int, int, int, int, int,
                                const float *, const float *, int,
                                const float *, int, const float *, float *,
                                int);
  cublasStatus_t (*cublasDgemm)(cublasHandle_t, int, int, int, int, int,
                                const double *, const double *, int,
                                const double *, int, const double *, double *,
                                int);
};

} // namespace nn::cuda::abi

#endif // NN_RUNTIME_CUDAABI_H
