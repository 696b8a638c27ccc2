//===- FakeCuda.cpp - a CPU stand-in for the CUDA driver and cuBLAS -------===//
//
// For testing the runtime's CUDA backend where there is no GPU. It exports
// the driver and cuBLAS functions the backend resolves, with the same C
// signatures, backed by host memory:
//
//  * memory (device and managed alike) is malloc'ed, copies are memcpy;
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

#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <map>
#include <mutex>
#include <string>
#include <vector>

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
  State &s = state();
  int n = ++s.calls[call];
  const char *spec = std::getenv("FAKE_CUDA_FAIL");
  if (!spec)
    return false;
  std::string text = spec;
  std::string name = text.substr(0, text.find(':'));
  int which = text.find(':') == std::string::npos
                  ? 1
                  : std::atoi(text.substr(text.find(':') + 1).c_str());
  return name == call && n == which;
}

constexpr int kSuccess = 0, kOutOfMemory = 2, kInvalidValue = 1,
              kLaunchFailed = 719, kNoBinaryForGpu = 209;

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

FAKE int cuInit(unsigned) { return kSuccess; }
FAKE int cuGetErrorName(int error, const char **name) {
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
FAKE int cuGetErrorString(int, const char **text) {
  *text = "fake driver";
  return kSuccess;
}
FAKE int cuDeviceGetCount(int *count) {
  const char *devices = std::getenv("FAKE_CUDA_DEVICES");
  *count = devices ? std::atoi(devices) : 1;
  return kSuccess;
}
FAKE int cuDeviceGet(int *device, int ordinal) {
  *device = ordinal;
  return kSuccess;
}
FAKE int cuDeviceGetName(char *name, int length, int) {
  std::strncpy(name, "Fake GPU", length);
  return kSuccess;
}
FAKE int cuDeviceGetAttribute(int *value, int attribute, int) {
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
FAKE int cuDevicePrimaryCtxRetain(void **context, int) {
  static int dummy;
  *context = &dummy;
  return kSuccess;
}
FAKE int cuCtxSetCurrent(void *) { return kSuccess; }

FAKE int cuModuleLoadData(void **module, const void *) {
  std::lock_guard<std::mutex> lock(state().mutex);
  ++state().moduleLoads;
  *module = new Module;
  return kSuccess;
}
FAKE int cuModuleLoadDataEx(void **module, const void *image, unsigned, int *,
                            void **) {
  if (failNow("cuModuleLoadDataEx"))
    return kNoBinaryForGpu;
  if (!image || std::strstr((const char *)image, ".entry") == nullptr)
    return kInvalidValue; // not PTX
  return cuModuleLoadData(module, image);
}
FAKE int cuModuleGetFunction(void **function, void *module, const char *name) {
  auto *m = (Module *)module;
  m->functions.push_back(name);
  *function = (void *)m->functions.back().c_str();
  return kSuccess;
}
FAKE int cuModuleUnload(void *module) {
  delete (Module *)module;
  return kSuccess;
}
FAKE int cuLaunchKernel(void *function, unsigned gridX, unsigned gridY,
                        unsigned gridZ, unsigned blockX, unsigned blockY,
                        unsigned blockZ, unsigned, void *, void **params,
                        void **) {
  if (failNow("cuLaunchKernel"))
    return kLaunchFailed;
  if (!function || !params || gridX == 0 || gridY == 0 || gridZ == 0 ||
      blockX * blockY * blockZ == 0 || blockX * blockY * blockZ > 1024)
    return kInvalidValue;
  std::lock_guard<std::mutex> lock(state().mutex);
  state().launched.push_back((const char *)function);
  return kSuccess;
}
FAKE int cuStreamCreate(void **stream, unsigned) {
  static int dummy;
  *stream = &dummy;
  return kSuccess;
}
FAKE int cuStreamSynchronize(void *) { return kSuccess; }

static int allocate(unsigned long long *pointer, size_t bytes) {
  if (failNow("cuMemAlloc"))
    return kOutOfMemory;
  void *memory = std::calloc(1, bytes);
  std::lock_guard<std::mutex> lock(state().mutex);
  state().allocations[(char *)memory] = bytes;
  *pointer = (unsigned long long)(uintptr_t)memory;
  return kSuccess;
}
FAKE int cuMemAlloc_v2(unsigned long long *pointer, size_t bytes) {
  return allocate(pointer, bytes);
}
FAKE int cuMemAllocManaged(unsigned long long *pointer, size_t bytes,
                           unsigned) {
  return allocate(pointer, bytes);
}
FAKE int cuMemGetInfo_v2(size_t *free, size_t *total) {
  *free = *total = size_t(64) << 30;
  return kSuccess;
}
FAKE int cuMemFree_v2(unsigned long long pointer) {
  void *memory = (void *)(uintptr_t)pointer;
  std::lock_guard<std::mutex> lock(state().mutex);
  if (!state().allocations.erase((char *)memory))
    return kInvalidValue;
  std::free(memory);
  return kSuccess;
}
/// Whether [pointer, pointer + bytes) lies in one allocation.
static bool owned(const void *pointer, size_t bytes) {
  std::lock_guard<std::mutex> lock(state().mutex);
  auto &all = state().allocations;
  auto it = all.upper_bound(const_cast<char *>((const char *)pointer));
  if (it == all.begin())
    return false;
  --it;
  return (const char *)pointer + bytes <= it->first + it->second;
}
FAKE int cuMemcpyHtoD_v2(unsigned long long device, const void *host,
                         size_t bytes) {
  if (!owned((void *)(uintptr_t)device, bytes))
    return kInvalidValue;
  std::memcpy((void *)(uintptr_t)device, host, bytes);
  std::lock_guard<std::mutex> lock(state().mutex);
  state().bytesToDevice += (long long)bytes;
  return kSuccess;
}
FAKE int cuMemcpyDtoH_v2(void *host, unsigned long long device, size_t bytes) {
  if (!owned((void *)(uintptr_t)device, bytes))
    return kInvalidValue;
  std::memcpy(host, (const void *)(uintptr_t)device, bytes);
  std::lock_guard<std::mutex> lock(state().mutex);
  state().bytesToHost += (long long)bytes;
  return kSuccess;
}
FAKE int cuEventCreate(void **event, unsigned) {
  *event = new int(0);
  return kSuccess;
}
FAKE int cuEventRecord(void *, void *) { return kSuccess; }
FAKE int cuEventSynchronize(void *) { return kSuccess; }
FAKE int cuEventElapsedTime(float *ms, void *, void *) {
  *ms = 0.5f;
  return kSuccess;
}
FAKE int cuEventDestroy_v2(void *event) {
  delete (int *)event;
  return kSuccess;
}

// cuBLAS: column-major C = alpha op(A) op(B) + beta C.
FAKE int cublasCreate_v2(void **handle) {
  static int dummy;
  *handle = &dummy;
  return 0;
}
FAKE int cublasSetStream_v2(void *, void *) { return 0; }

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
FAKE int cublasSgemm_v2(void *, int transA, int transB, int m, int n, int k,
                        const float *alpha, const float *a, int lda,
                        const float *b, int ldb, const float *beta, float *c,
                        int ldc) {
  return gemm("cublasSgemm_v2", transA, transB, m, n, k, alpha, a, lda, b, ldb,
              beta, c, ldc);
}
FAKE int cublasDgemm_v2(void *, int transA, int transB, int m, int n, int k,
                        const double *alpha, const double *a, int lda,
                        const double *b, int ldb, const double *beta, double *c,
                        int ldc) {
  return gemm("cublasDgemm_v2", transA, transB, m, n, k, alpha, a, lda, b, ldb,
              beta, c, ldc);
}

// NOLINTEND(readability-identifier-naming)
