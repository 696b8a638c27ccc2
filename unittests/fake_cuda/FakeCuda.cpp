//===- FakeCuda.cpp - a CPU stand-in for the CUDA driver and cuBLAS -------===//
//
// For testing the runtime's CUDA backend where there is no GPU. It exports
// the driver and cuBLAS functions the backend resolves, with the same C
// signatures, backed by host memory:
//
//  * memory (device and managed alike) is malloc'ed, copies are memcpy;
//  * streams finish kernels and copies at once, NCCL collectives when every
//    rank has called them (FakeNccl.cpp: NCCL's stand-in, in this library);
//  * modules and functions are handles that remember their names; a
//    launch records the kernel's name and does nothing else (PTX cannot
//    run on a CPU);
//  * cublasSgemm_v2 / cublasDgemm_v2 compute the column-major product for
//    real, so GEMM-only graphs give true results;
//  * FAKE_CUDA_FAIL=<call>[:<n>] makes the n-th call (default 1st) of
//    cuLaunchKernel, cuMemAlloc, cuModuleLoadDataEx or cublasSgemm fail;
//    FAKE_CUDA_DEVICES=0 reports no device.
//
// fake_cuda_stats() returns what happened, for the tests.
//
//===----------------------------------------------------------------------===//

#include "FakeCuda.h"
#include "FakeDevice.h"

#include "runtime/cuda/CudaApi.h"

#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <map>
#include <mutex>
#include <string>
#include <vector>

// The signatures are the runtime's own (runtime/cuda/CudaApi.h): the
// runtime calls these through function pointers of those types, and UBSan's
// -fsanitize=function refuses a call through a pointer of another type.
using nn::cuda::abi::cublasHandle_t;
using nn::cuda::abi::cublasStatus_t;
using nn::cuda::abi::CUcontext;
using nn::cuda::abi::CUdevice;
using nn::cuda::abi::CUdeviceptr;
using nn::cuda::abi::CUevent;
using nn::cuda::abi::CUfunction;
using nn::cuda::abi::CUmodule;
using nn::cuda::abi::CUresult;
using nn::cuda::abi::CUstream;

namespace {

struct Module {
  std::vector<std::string> functions;
};

struct State {
  std::mutex mutex;
  std::map<char *, size_t> allocations;
  std::map<std::string, int> calls;
  std::vector<std::string> launched;
  int moduleLoads = 0;
  long long bytesToDevice = 0, bytesToHost = 0;
};

State &state() {
  static State *s = new State;
  return *s;
}

/// Counts a call; true when FAKE_CUDA_FAIL asks this one to fail.
bool failNow(const char *call) {
  return fake::failRequested("FAKE_CUDA_FAIL", call, ++state().calls[call]);
}

constexpr int kSuccess = 0, kOutOfMemory = 2, kInvalidValue = 1,
              kLaunchFailed = 719, kNoBinaryForGpu = 209, kNotReady = 600;

} // namespace

#define FAKE extern "C" __attribute__((visibility("default")))

// The driver's and cuBLAS's own names follow.
// NOLINTBEGIN(readability-identifier-naming)

FAKE FakeCudaStats fake_cuda_stats() {
  State &s = state();
  std::lock_guard<std::mutex> lock(s.mutex);
  static std::string last;
  last = s.launched.empty() ? "" : s.launched.back();
  return {s.moduleLoads,
          (int)s.launched.size(),
          (int)s.allocations.size(),
          s.calls["cublasSgemm_v2"] + s.calls["cublasDgemm_v2"],
          last.c_str(),
          s.bytesToDevice,
          s.bytesToHost};
}

FAKE CUresult cuInit(unsigned) { return kSuccess; }
FAKE CUresult cuGetErrorName(int error, const char **name) {
  switch (error) {
  case kOutOfMemory:
    *name = "CUDA_ERROR_OUT_OF_MEMORY";
    return kSuccess;
  case kLaunchFailed:
    *name = "CUDA_ERROR_LAUNCH_FAILED";
    return kSuccess;
  case kNoBinaryForGpu:
    *name = "CUDA_ERROR_NO_BINARY_FOR_GPU";
    return kSuccess;
  default:
    *name = "CUDA_ERROR_INVALID_VALUE";
    return kSuccess;
  }
}
FAKE CUresult cuGetErrorString(int, const char **text) {
  *text = "fake driver";
  return kSuccess;
}
FAKE CUresult cuDeviceGetCount(int *count) {
  const char *devices = std::getenv("FAKE_CUDA_DEVICES");
  *count = devices ? std::atoi(devices) : 1;
  return kSuccess;
}
FAKE CUresult cuDeviceGet(int *device, int ordinal) {
  *device = ordinal;
  return kSuccess;
}
FAKE CUresult cuDeviceGetName(char *name, int length, int) {
  std::strncpy(name, "Fake GPU", length);
  return kSuccess;
}
FAKE CUresult cuDeviceGetAttribute(int *value, int attribute, int) {
  switch (attribute) {
  case 16: // multiprocessors
    *value = 4;
    break;
  case 36: // memory clock, kHz
    *value = 1000000;
    break;
  case 37: // bus width, bits
    *value = 512;
    break;
  case 75:
    *value = 9;
    break;
  case 76:
    *value = 0;
    break;
  default:
    *value = 0;
  }
  return kSuccess;
}
FAKE CUresult cuDevicePrimaryCtxRetain(CUcontext *context, CUdevice) {
  static int dummy;
  *context = reinterpret_cast<CUcontext>(&dummy);
  return kSuccess;
}
FAKE CUresult cuCtxSetCurrent(CUcontext) { return kSuccess; }

FAKE CUresult cuModuleLoadData(CUmodule *module, const void *) {
  std::lock_guard<std::mutex> lock(state().mutex);
  ++state().moduleLoads;
  *module = reinterpret_cast<CUmodule>(new Module);
  return kSuccess;
}
FAKE CUresult cuModuleLoadDataEx(CUmodule *module, const void *image, unsigned,
                                 int *, void **) {
  if (failNow("cuModuleLoadDataEx"))
    return kNoBinaryForGpu;
  if (!image || std::strstr((const char *)image, ".entry") == nullptr)
    return kInvalidValue; // not PTX
  return cuModuleLoadData(module, image);
}
FAKE CUresult cuModuleGetFunction(CUfunction *function, CUmodule module,
                                  const char *name) {
  auto *m = reinterpret_cast<Module *>(module);
  m->functions.push_back(name);
  *function = reinterpret_cast<CUfunction>(
      const_cast<char *>(m->functions.back().c_str()));
  return kSuccess;
}
FAKE CUresult cuModuleUnload(CUmodule module) {
  delete reinterpret_cast<Module *>(module);
  return kSuccess;
}
FAKE CUresult cuLaunchKernel(CUfunction function, unsigned gridX,
                             unsigned gridY, unsigned gridZ, unsigned blockX,
                             unsigned blockY, unsigned blockZ, unsigned,
                             CUstream, void **params, void **) {
  if (failNow("cuLaunchKernel"))
    return kLaunchFailed;
  if (!function || !params || gridX == 0 || gridY == 0 || gridZ == 0 ||
      blockX * blockY * blockZ == 0 || blockX * blockY * blockZ > 1024)
    return kInvalidValue;
  std::lock_guard<std::mutex> lock(state().mutex);
  state().launched.push_back(reinterpret_cast<const char *>(function));
  return kSuccess;
}
FAKE CUresult cuStreamCreate(CUstream *stream, unsigned) {
  // One object per stream: NCCL collectives are pending on their own.
  *stream = reinterpret_cast<CUstream>(new int(0));
  return kSuccess;
}
// Kernels and copies finish as they are issued; NCCL collectives when every
// rank has called them.
FAKE CUresult cuStreamSynchronize(CUstream stream) {
  return fake::ncclWait(stream, 30) ? kSuccess : kLaunchFailed;
}
FAKE CUresult cuStreamQuery(CUstream stream) {
  return fake::ncclPending(stream) ? kNotReady : kSuccess;
}

static CUresult allocate(CUdeviceptr *pointer, size_t bytes) {
  if (failNow("cuMemAlloc"))
    return kOutOfMemory;
  void *memory = std::calloc(1, bytes);
  std::lock_guard<std::mutex> lock(state().mutex);
  state().allocations[(char *)memory] = bytes;
  *pointer = (CUdeviceptr)(uintptr_t)memory;
  return kSuccess;
}
FAKE CUresult cuMemAlloc_v2(CUdeviceptr *pointer, size_t bytes) {
  return allocate(pointer, bytes);
}
FAKE CUresult cuMemAllocManaged(CUdeviceptr *pointer, size_t bytes, unsigned) {
  return allocate(pointer, bytes);
}
FAKE CUresult cuMemGetInfo_v2(size_t *free, size_t *total) {
  *free = *total = size_t(64) << 30;
  return kSuccess;
}
FAKE CUresult cuMemFree_v2(CUdeviceptr pointer) {
  void *memory = (void *)(uintptr_t)pointer;
  std::lock_guard<std::mutex> lock(state().mutex);
  if (!state().allocations.erase((char *)memory))
    return kInvalidValue;
  std::free(memory);
  return kSuccess;
}
bool fake::failRequested(const char *variable, const char *call, int number) {
  const char *spec = std::getenv(variable);
  if (!spec)
    return false;
  std::string text = spec;
  size_t colon = text.find(':');
  int which =
      colon == std::string::npos ? 1 : std::atoi(text.c_str() + colon + 1);
  return text.substr(0, colon) == call && number == which;
}

bool fake::owned(const void *pointer, size_t bytes) {
  std::lock_guard<std::mutex> lock(state().mutex);
  auto &all = state().allocations;
  auto it = all.upper_bound(const_cast<char *>((const char *)pointer));
  if (it == all.begin())
    return false;
  --it;
  return (const char *)pointer + bytes <= it->first + it->second;
}
FAKE CUresult cuMemcpyHtoD_v2(CUdeviceptr device, const void *host,
                              size_t bytes) {
  if (!fake::owned((void *)(uintptr_t)device, bytes))
    return kInvalidValue;
  std::memcpy((void *)(uintptr_t)device, host, bytes);
  std::lock_guard<std::mutex> lock(state().mutex);
  state().bytesToDevice += (long long)bytes;
  return kSuccess;
}
FAKE CUresult cuMemcpyDtoH_v2(void *host, CUdeviceptr device, size_t bytes) {
  if (!fake::owned((void *)(uintptr_t)device, bytes))
    return kInvalidValue;
  std::memcpy(host, (const void *)(uintptr_t)device, bytes);
  std::lock_guard<std::mutex> lock(state().mutex);
  state().bytesToHost += (long long)bytes;
  return kSuccess;
}
FAKE CUresult cuEventCreate(CUevent *event, unsigned) {
  *event = reinterpret_cast<CUevent>(new int(0));
  return kSuccess;
}
FAKE CUresult cuEventRecord(CUevent, CUstream) { return kSuccess; }
FAKE CUresult cuEventSynchronize(CUevent) { return kSuccess; }
FAKE CUresult cuEventElapsedTime(float *ms, CUevent, CUevent) {
  *ms = 0.5f;
  return kSuccess;
}
FAKE CUresult cuEventDestroy_v2(CUevent event) {
  delete reinterpret_cast<int *>(event);
  return kSuccess;
}

// cuBLAS: column-major C = alpha op(A) op(B) + beta C.
FAKE cublasStatus_t cublasCreate_v2(cublasHandle_t *handle) {
  static int dummy;
  *handle = reinterpret_cast<cublasHandle_t>(&dummy);
  return 0;
}
FAKE cublasStatus_t cublasSetStream_v2(cublasHandle_t, CUstream) { return 0; }

template <typename T>
static int gemm(const char *name, int transA, int transB, int m, int n, int k,
                const T *alpha, const T *a, int lda, const T *b, int ldb,
                const T *beta, T *c, int ldc) {
  if (failNow(name))
    return 13; // CUBLAS_STATUS_EXECUTION_FAILED
  auto at = [&](const T *x, int ld, bool trans, int i, int j) {
    return trans ? x[j + (size_t)i * ld] : x[i + (size_t)j * ld];
  };
  for (int j = 0; j < n; ++j)
    for (int i = 0; i < m; ++i) {
      T sum = 0;
      for (int p = 0; p < k; ++p)
        sum += at(a, lda, transA, i, p) * at(b, ldb, transB, p, j);
      T &out = c[i + (size_t)j * ldc];
      out = *alpha * sum + (*beta == T(0) ? T(0) : *beta * out);
    }
  return 0;
}
FAKE cublasStatus_t cublasSgemm_v2(cublasHandle_t, int transA, int transB,
                                   int m, int n, int k, const float *alpha,
                                   const float *a, int lda, const float *b,
                                   int ldb, const float *beta, float *c,
                                   int ldc) {
  return gemm("cublasSgemm_v2", transA, transB, m, n, k, alpha, a, lda, b, ldb,
              beta, c, ldc);
}
FAKE cublasStatus_t cublasDgemm_v2(cublasHandle_t, int transA, int transB,
                                   int m, int n, int k, const double *alpha,
                                   const double *a, int lda, const double *b,
                                   int ldb, const double *beta, double *c,
                                   int ldc) {
  return gemm("cublasDgemm_v2", transA, transB, m, n, k, alpha, a, lda, b, ldb,
              beta, c, ldc);
}

// NOLINTEND(readability-identifier-naming)

// Every function above, in the order of NN_CUDA_DRIVER_FUNCTIONS and
// NN_CUBLAS_FUNCTIONS: initializing the runtime's function tables with
// them does not compile where a signature differs from the runtime's.
[[maybe_unused]] static const nn::cuda::abi::Api kDriverSignatures{
    &cuInit,
    &cuGetErrorName,
    &cuGetErrorString,
    &cuDeviceGetCount,
    &cuDeviceGet,
    &cuDeviceGetName,
    &cuDeviceGetAttribute,
    &cuDevicePrimaryCtxRetain,
    &cuCtxSetCurrent,
    &cuModuleLoadData,
    &cuModuleLoadDataEx,
    &cuModuleGetFunction,
    &cuModuleUnload,
    &cuLaunchKernel,
    &cuStreamCreate,
    &cuStreamSynchronize,
    &cuStreamQuery,
    &cuMemAlloc_v2,
    &cuMemAllocManaged,
    &cuMemGetInfo_v2,
    &cuMemFree_v2,
    &cuMemcpyHtoD_v2,
    &cuMemcpyDtoH_v2,
    &cuEventCreate,
    &cuEventRecord,
    &cuEventSynchronize,
    &cuEventElapsedTime,
    &cuEventDestroy_v2};
[[maybe_unused]] static const nn::cuda::abi::BlasApi kBlasSignatures{
    &cublasCreate_v2, &cublasSetStream_v2, &cublasSgemm_v2, &cublasDgemm_v2};
