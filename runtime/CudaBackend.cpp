//===- CudaBackend.cpp - driver, cuBLAS and the GPU entry points ----------===//
//
// The driver and cuBLAS are loaded with dlopen and called through the
// function table of CudaAbi.h.
//
//===----------------------------------------------------------------------===//

#include "CudaBackend.h"

#include "CudaAbi.h"

#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <dlfcn.h>
#include <mutex>
#include <vector>

using namespace nn;
using namespace nn::cuda;

namespace {

using namespace nn::cuda::abi;

/// The process-wide device: loaded once, never unloaded.
struct Device {
  Api api{};
  std::string error;
  CUdevice device = 0;
  CUcontext context = nullptr;
  CUstream stream = nullptr;
  cublasHandle_t blas = nullptr;
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

std::string resultText(const Api &api, CUresult result) {
  const char *name = nullptr, *text = nullptr;
  if (api.cuGetErrorName)
    api.cuGetErrorName(result, &name);
  if (api.cuGetErrorString)
    api.cuGetErrorString(result, &text);
  std::string message = name ? name : "CUDA error " + std::to_string(result);
  if (text)
    message += std::string(" (") + text + ")";
  return message;
}

template <typename Fn> bool resolve(void *library, const char *name, Fn &fn) {
  fn = reinterpret_cast<Fn>(dlsym(library, name));
  return fn != nullptr;
}

Device &device() {
  static Device *instance = [] {
    auto *d = new Device;
    Api &a = d->api;
    const char *driverPath = std::getenv("NN_CUDA_DRIVER");
    if (!driverPath)
      driverPath = "libcuda.so.1";
    void *driver = dlopen(driverPath, RTLD_NOW | RTLD_LOCAL);
    if (!driver) {
      const char *why = dlerror();
      d->error = std::string("no GPU: cannot load the CUDA driver ") +
                 driverPath + " (" + (why ? why : "unknown") +
                 "); --target=cuda needs an NVIDIA GPU and its driver";
      return d;
    }
    bool ok = resolve(driver, "cuInit", a.cuInit) &&
              resolve(driver, "cuGetErrorName", a.cuGetErrorName) &&
              resolve(driver, "cuGetErrorString", a.cuGetErrorString) &&
              resolve(driver, "cuDeviceGetCount", a.cuDeviceGetCount) &&
              resolve(driver, "cuDeviceGet", a.cuDeviceGet) &&
              resolve(driver, "cuDeviceGetName", a.cuDeviceGetName) &&
              resolve(driver, "cuDeviceGetAttribute", a.cuDeviceGetAttribute) &&
              resolve(driver, "cuDevicePrimaryCtxRetain",
                      a.cuDevicePrimaryCtxRetain) &&
              resolve(driver, "cuCtxSetCurrent", a.cuCtxSetCurrent) &&
              resolve(driver, "cuModuleLoadData", a.cuModuleLoadData) &&
              resolve(driver, "cuModuleLoadDataEx", a.cuModuleLoadDataEx) &&
              resolve(driver, "cuModuleGetFunction", a.cuModuleGetFunction) &&
              resolve(driver, "cuModuleUnload", a.cuModuleUnload) &&
              resolve(driver, "cuLaunchKernel", a.cuLaunchKernel) &&
              resolve(driver, "cuStreamCreate", a.cuStreamCreate) &&
              resolve(driver, "cuStreamSynchronize", a.cuStreamSynchronize) &&
              resolve(driver, "cuMemAlloc_v2", a.cuMemAlloc) &&
              resolve(driver, "cuMemAllocManaged", a.cuMemAllocManaged) &&
              resolve(driver, "cuMemGetInfo_v2", a.cuMemGetInfo) &&
              resolve(driver, "cuMemFree_v2", a.cuMemFree) &&
              resolve(driver, "cuMemcpyHtoD_v2", a.cuMemcpyHtoD) &&
              resolve(driver, "cuMemcpyDtoH_v2", a.cuMemcpyDtoH) &&
              resolve(driver, "cuEventCreate", a.cuEventCreate) &&
              resolve(driver, "cuEventRecord", a.cuEventRecord) &&
              resolve(driver, "cuEventSynchronize", a.cuEventSynchronize) &&
              resolve(driver, "cuEventElapsedTime", a.cuEventElapsedTime) &&
              resolve(driver, "cuEventDestroy_v2", a.cuEventDestroy);
    if (!ok) {
      d->error = std::string("the CUDA driver ") + driverPath +
                 " lacks a function the runtime needs (driver too old?)";
      return d;
    }
    auto check = [&](CUresult result, const char *call) {
      if (result == kSuccess)
        return true;
      d->error =
          std::string("no GPU: ") + call + " failed: " + resultText(a, result);
      return false;
    };
    int count = 0;
    int ordinal = 0;
    if (const char *chosen = std::getenv("NN_CUDA_DEVICE"))
      ordinal = std::atoi(chosen);
    if (!check(a.cuInit(0), "cuInit") ||
        !check(a.cuDeviceGetCount(&count), "cuDeviceGetCount"))
      return d;
    if (count <= ordinal) {
      d->error = "no GPU: the CUDA driver reports " + std::to_string(count) +
                 " devices, device " + std::to_string(ordinal) +
                 " was asked for";
      return d;
    }
    // cuCtxCreate's signature changed in CUDA 13; the primary context is
    // the same on every version.
    if (!check(a.cuDeviceGet(&d->device, ordinal), "cuDeviceGet") ||
        !check(a.cuDevicePrimaryCtxRetain(&d->context, d->device),
               "cuDevicePrimaryCtxRetain") ||
        !check(a.cuCtxSetCurrent(d->context), "cuCtxSetCurrent") ||
        // A blocking stream: the runtime's synchronous copies (legacy
        // default stream) are ordered with the kernels and GEMMs on it.
        !check(a.cuStreamCreate(&d->stream, kStreamDefault), "cuStreamCreate"))
      return d;

    char name[256] = {0};
    a.cuDeviceGetName(name, sizeof(name) - 1, d->device);
    int sms = 0, major = 0, minor = 0, clockKHz = 0, busBits = 0;
    a.cuDeviceGetAttribute(&sms, kAttributeSmCount, d->device);
    a.cuDeviceGetAttribute(&major, kAttributeMajor, d->device);
    a.cuDeviceGetAttribute(&minor, kAttributeMinor, d->device);
    a.cuDeviceGetAttribute(&clockKHz, kAttributeMemoryClockKHz, d->device);
    a.cuDeviceGetAttribute(&busBits, kAttributeBusWidthBits, d->device);
    d->info.name = name;
    d->info.ordinal = ordinal;
    d->info.multiprocessors = sms;
    d->info.computeCapability = major * 10 + minor;
    // Double data rate: two transfers per clock.
    d->info.peakBandwidthGBs = 2.0 * clockKHz * 1e3 * (busBits / 8.0) / 1e9;

    const char *blasPath = std::getenv("NN_CUBLAS_LIBRARY");
    void *blas = nullptr;
    for (const char *candidate :
         {blasPath, "libcublas.so.13", "libcublas.so.12", "libcublas.so"})
      if (candidate && (blas = dlopen(candidate, RTLD_NOW | RTLD_LOCAL)))
        break;
    if (!blas) {
      d->error = "cannot load cuBLAS (libcublas.so.13, .12 or .so; "
                 "NN_CUBLAS_LIBRARY names another)";
      return d;
    }
    if (!resolve(blas, "cublasCreate_v2", a.cublasCreate) ||
        !resolve(blas, "cublasSetStream_v2", a.cublasSetStream) ||
        !resolve(blas, "cublasSgemm_v2", a.cublasSgemm) ||
        !resolve(blas, "cublasDgemm_v2", a.cublasDgemm)) {
      d->error = "cuBLAS lacks cublasCreate_v2/SetStream_v2/Sgemm_v2/Dgemm_v2";
      return d;
    }
    cublasStatus_t status = a.cublasCreate(&d->blas);
    if (status == 0)
      status = a.cublasSetStream(d->blas, d->stream);
    if (status != 0)
      d->error = "cublasCreate_v2/cublasSetStream_v2 failed with status " +
                 std::to_string(status);
    return d;
  }();
  return *instance;
}

thread_local CudaRun *current = nullptr;

/// Records a failed driver call in the current run (or prints it when no
/// run is current). Returns whether the call succeeded.
bool check(CUresult result, const std::string &call, const std::string &what) {
  if (result == kSuccess)
    return true;
  std::string message = call + " failed: " + resultText(device().api, result) +
                        (what.empty() ? "" : " " + what);
  if (current)
    current->fail(message);
  else
    std::fprintf(stderr, "nn runtime: %s\n", message.c_str());
  return false;
}

bool usable() {
  Device &d = device();
  if (!d.error.empty()) {
    if (current)
      current->fail(d.error);
    return false;
  }
  return !current || !current->failed();
}

} // namespace

//===----------------------------------------------------------------------===//
// Public API (nn/Runtime.h)
//===----------------------------------------------------------------------===//

absl::Status cuda::initialize() {
  Device &d = device();
  return d.error.empty() ? absl::OkStatus() : absl::UnavailableError(d.error);
}

bool nn::cudaAvailable(std::string *why) {
  absl::Status status = cuda::initialize();
  if (why)
    *why = std::string(status.message());
  return status.ok();
}

absl::Status nn::cudaDeviceInfo(CudaDeviceInfo &info) {
  absl::Status status = cuda::initialize();
  if (status.ok())
    info = device().info;
  return status;
}

void nn::cudaSetProfiling(bool enabled) {
  Device &d = device();
  std::lock_guard<std::mutex> lock(d.profileMutex);
  d.profiling = enabled;
  d.profile.clear();
}

std::vector<KernelTime> nn::cudaTakeProfile() {
  Device &d = device();
  std::lock_guard<std::mutex> lock(d.profileMutex);
  std::vector<KernelTime> times;
  for (auto &[name, time] : d.profile)
    times.push_back(time);
  d.profile.clear();
  return times;
}

//===----------------------------------------------------------------------===//
// Runs
//===----------------------------------------------------------------------===//

CudaRun::CudaRun(const Manifest &manifest) {
  for (const KernelInfo &kernel : manifest.kernels)
    origins[kernel.name] = kernel.origin;
}

CudaRun::~CudaRun() {
  Device &d = device();
  if (!d.error.empty())
    return;
  d.api.cuCtxSetCurrent(d.context);
  for (auto &[data, module] : modules)
    d.api.cuModuleUnload((CUmodule)module);
}

CudaRun::Scope::Scope(CudaRun &run) : previous(current) {
  current = &run;
  Device &d = device();
  if (d.error.empty())
    check(d.api.cuCtxSetCurrent(d.context), "cuCtxSetCurrent", "");
}

CudaRun::Scope::~Scope() { current = previous; }

void CudaRun::fail(const std::string &message) {
  if (error.empty())
    error = message;
}

absl::Status CudaRun::finish() {
  Device &d = device();
  if (d.error.empty() && !failed())
    check(d.api.cuStreamSynchronize(d.stream), "cuStreamSynchronize",
          lastLaunch.empty() ? "" : "after " + lastLaunch);
  bool noDevice = !d.error.empty() && error.empty();
  if (noDevice)
    error = d.error;
  std::string message;
  std::swap(message, error);
  if (message.empty())
    return absl::OkStatus();
  if (noDevice)
    return absl::UnavailableError(message);
  if (message.find("OUT_OF_MEMORY") != std::string::npos ||
      message.find("out of memory") != std::string::npos)
    return absl::ResourceExhaustedError(message);
  return absl::InternalError(message);
}

std::string CudaRun::describeKernel(void *function) const {
  auto name = functionNames.find(function);
  if (name == functionNames.end())
    return "an unknown kernel";
  std::string text = "kernel " + name->second;
  auto origin = origins.find(name->second);
  if (origin != origins.end())
    text += " (" + origin->second + ")";
  return text;
}

CudaRun *cuda::currentRun() { return current; }

//===----------------------------------------------------------------------===//
// Memory
//===----------------------------------------------------------------------===//

namespace {
/// Cached buffers beyond this are returned to the driver.
constexpr size_t kCacheLimit = size_t(8) << 30;

void trimCache(Device &d, size_t keep) {
  for (auto it = d.cached.begin(); it != d.cached.end() && d.cachedBytes > keep;
       it = d.cached.erase(it)) {
    d.cachedBytes -= it->first.second;
    d.api.cuMemFree((CUdeviceptr)(uintptr_t)it->second);
  }
}

CUresult allocateFresh(Device &d, CUdeviceptr *pointer, size_t size,
                       bool hostVisible) {
  if (!hostVisible)
    return d.api.cuMemAlloc(pointer, size);
  // Managed memory beyond what the device has free can hang the GPU:
  // refuse it instead.
  size_t free = 0, total = 0;
  CUresult result = d.api.cuMemGetInfo(&free, &total);
  if (result != kSuccess)
    return result;
  if (size > free)
    return kOutOfMemory;
  return d.api.cuMemAllocManaged(pointer, size, kMemAttachGlobal);
}
} // namespace

void *cuda::allocate(size_t bytes, bool hostVisible) {
  Device &d = device();
  // A zero-size buffer still needs a distinct, freeable address.
  size_t size = bytes == 0 ? 1 : bytes;
  std::pair<bool, size_t> key{hostVisible, size};
  if (d.error.empty()) {
    std::lock_guard<std::mutex> lock(d.memoryMutex);
    auto it = d.cached.find(key);
    if (it != d.cached.end()) {
      void *pointer = it->second;
      d.cached.erase(it);
      d.cachedBytes -= size;
      d.live[pointer] = key;
      return pointer;
    }
    CUdeviceptr pointer = 0;
    CUresult result = allocateFresh(d, &pointer, size, hostVisible);
    if (result != kSuccess && !d.cached.empty()) {
      trimCache(d, 0);
      result = allocateFresh(d, &pointer, size, hostVisible);
    }
    if (check(result, hostVisible ? "cuMemAllocManaged" : "cuMemAlloc",
              "(" + std::to_string(size) + " bytes)")) {
      d.live[(void *)(uintptr_t)pointer] = key;
      return (void *)(uintptr_t)pointer;
    }
  } else if (current) {
    current->fail(d.error);
  }
  // The run has failed; give host code memory it can touch harmlessly.
  void *host = std::calloc(1, size);
  std::lock_guard<std::mutex> lock(d.memoryMutex);
  d.fallback[host] = size;
  return host;
}

void cuda::release(void *pointer) {
  if (!pointer)
    return;
  Device &d = device();
  std::lock_guard<std::mutex> lock(d.memoryMutex);
  if (auto it = d.fallback.find(pointer); it != d.fallback.end()) {
    d.fallback.erase(it);
    std::free(pointer);
    return;
  }
  auto it = d.live.find(pointer);
  if (it == d.live.end())
    return;
  d.cached.emplace(it->second, pointer);
  d.cachedBytes += it->second.second;
  d.live.erase(it);
  if (d.cachedBytes > kCacheLimit)
    trimCache(d, kCacheLimit);
}

namespace {
/// A checked synchronous copy in either direction; `what` names the tensor.
bool copy(void *target, const void *source, size_t bytes, bool toDevice,
          const std::string &what) {
  if (bytes == 0)
    return true;
  if (!usable())
    return false;
  const Api &api = device().api;
  return toDevice ? check(api.cuMemcpyHtoD((CUdeviceptr)(uintptr_t)target,
                                           source, bytes),
                          "cuMemcpyHtoD", "copying " + what + " to the device")
                  : check(api.cuMemcpyDtoH(
                              target, (CUdeviceptr)(uintptr_t)source, bytes),
                          "cuMemcpyDtoH", "copying " + what + " to the host");
}
} // namespace

bool cuda::copyToDevice(void *target, const void *source, size_t bytes,
                        const std::string &what) {
  return copy(target, source, bytes, /*toDevice=*/true, what);
}

bool cuda::copyToHost(void *target, const void *source, size_t bytes,
                      const std::string &what) {
  return copy(target, source, bytes, /*toDevice=*/false, what);
}

//===----------------------------------------------------------------------===//
// Entry points of GPU artifacts
//===----------------------------------------------------------------------===//

#define NN_EXPORT extern "C" __attribute__((visibility("default")))

// Buffers only kernels and cuBLAS touch (memref.alloc): device memory.
// The C names GPU artifacts call. NOLINTNEXTLINE(readability-identifier-naming)
NN_EXPORT void *nn_cuda_alloc(size_t bytes) {
  return cuda::allocate(bytes, /*hostVisible=*/false);
}

// The C names GPU artifacts call. NOLINTNEXTLINE(readability-identifier-naming)
NN_EXPORT void *nn_cuda_aligned_alloc(size_t alignment, size_t bytes) {
  // cuMemAlloc aligns to at least 256 bytes.
  (void)alignment;
  return cuda::allocate(bytes, /*hostVisible=*/false);
}

// The C names GPU artifacts call. NOLINTNEXTLINE(readability-identifier-naming)
NN_EXPORT void nn_cuda_free(void *pointer) { cuda::release(pointer); }

// gpu.alloc (host_shared: buffers host code touches, see
// nn-gpu-place-buffers) and gpu.dealloc. Synchronous: the stream is unused.
NN_EXPORT void *mgpuMemAlloc(uint64_t bytes, void *stream, bool hostShared) {
  (void)stream;
  return cuda::allocate(bytes, hostShared);
}

NN_EXPORT void mgpuMemFree(void *pointer, void *stream) {
  (void)stream;
  cuda::release(pointer);
}

namespace {
void *loadModule(const void *data, bool isPtx, int optLevel) {
  if (!usable())
    return nullptr;
  Device &d = device();
  if (current) {
    auto it = current->modules.find(data);
    if (it != current->modules.end())
      return it->second;
  }
  CUmodule module = nullptr;
  CUresult result;
  if (isPtx) {
    char log[4096] = {0};
    int options[] = {kJitOptimizationLevel, kJitErrorLogBuffer,
                     kJitErrorLogBufferSize};
    void *values[] = {(void *)(intptr_t)optLevel, log,
                      (void *)(intptr_t)sizeof(log)};
    result = d.api.cuModuleLoadDataEx(&module, data, 3, options, values);
    if (result != kSuccess && log[0])
      check(result, "cuModuleLoadDataEx (PTX JIT)", std::string(": ") + log);
  } else {
    result = d.api.cuModuleLoadData(&module, data);
  }
  if (!check(result, isPtx ? "cuModuleLoadDataEx" : "cuModuleLoadData",
             "loading a kernel image"))
    return nullptr;
  if (current)
    current->modules[data] = module;
  return module;
}
} // namespace

NN_EXPORT void *mgpuModuleLoad(void *data, size_t size) {
  (void)size;
  return loadModule(data, /*isPtx=*/false, 0);
}

NN_EXPORT void *mgpuModuleLoadJIT(void *data, int optLevel) {
  return loadModule(data, /*isPtx=*/true, optLevel);
}

NN_EXPORT void mgpuModuleUnload(void *module) {
  // Modules of a run stay loaded until its executable goes away.
  if (!module || current || !device().error.empty())
    return;
  check(device().api.cuModuleUnload((CUmodule)module), "cuModuleUnload", "");
}

NN_EXPORT void *mgpuModuleGetFunction(void *module, const char *name) {
  if (!module || !usable())
    return nullptr;
  CUfunction function = nullptr;
  if (!check(
          device().api.cuModuleGetFunction(&function, (CUmodule)module, name),
          "cuModuleGetFunction", std::string("for kernel ") + name))
    return nullptr;
  if (current)
    current->functionNames[function] = name;
  return function;
}

NN_EXPORT void *mgpuStreamCreate() {
  // Every launch of a run goes to the backend's one stream.
  return usable() ? device().stream : nullptr;
}

NN_EXPORT void mgpuStreamDestroy(void *stream) { (void)stream; }

NN_EXPORT void mgpuStreamSynchronize(void *stream) {
  if (!stream || !usable())
    return;
  check(device().api.cuStreamSynchronize((CUstream)stream),
        "cuStreamSynchronize",
        current && !current->lastLaunch.empty() ? "after " + current->lastLaunch
                                                : "");
}

namespace {
/// Runs `enqueue` (work on the backend's stream, returning whether it was
/// accepted). While profiling, CUDA events around it time the work, added
/// to the profile under `name`; `what` describes it in messages.
template <typename Fn>
void profiled(const std::string &name, const std::string &what, Fn enqueue) {
  Device &d = device();
  if (!d.profiling) {
    enqueue();
    return;
  }
  CUevent start = nullptr, stop = nullptr;
  float ms = 0;
  if (check(d.api.cuEventCreate(&start, 0), "cuEventCreate", "") &&
      check(d.api.cuEventCreate(&stop, 0), "cuEventCreate", "") &&
      check(d.api.cuEventRecord(start, d.stream), "cuEventRecord",
            "before " + what) &&
      enqueue() &&
      check(d.api.cuEventRecord(stop, d.stream), "cuEventRecord",
            "after " + what) &&
      check(d.api.cuEventSynchronize(stop), "cuEventSynchronize",
            "after " + what) &&
      check(d.api.cuEventElapsedTime(&ms, start, stop), "cuEventElapsedTime",
            "of " + what)) {
    std::lock_guard<std::mutex> lock(d.profileMutex);
    KernelTime &time = d.profile[name];
    time.name = name;
    time.launches += 1;
    time.milliseconds += ms;
  }
  if (start)
    d.api.cuEventDestroy(start);
  if (stop)
    d.api.cuEventDestroy(stop);
}
} // namespace

NN_EXPORT void mgpuLaunchKernel(void *function, intptr_t gridX, intptr_t gridY,
                                intptr_t gridZ, intptr_t blockX,
                                intptr_t blockY, intptr_t blockZ,
                                int32_t sharedMemory, void *stream,
                                void **params, void **extra,
                                size_t paramsCount) {
  (void)paramsCount;
  if (!function || !usable())
    return;
  std::string what = current ? current->describeKernel(function) : "a kernel";
  std::string name = what;
  if (current) {
    current->lastLaunch = what;
    if (auto it = current->functionNames.find(function);
        it != current->functionNames.end())
      name = it->second;
  }
  profiled(name, what, [&] {
    return check(device().api.cuLaunchKernel(
                     (CUfunction)function, gridX, gridY, gridZ, blockX, blockY,
                     blockZ, sharedMemory, (CUstream)stream, params, extra),
                 "cuLaunchKernel",
                 "launching " + what + " with grid " + std::to_string(gridX) +
                     " x block " + std::to_string(blockX));
  });
}

namespace {
template <typename T, typename Gemm>
void gemm(Gemm call, const char *callName, const char *origin, int order,
          int transA, int transB, int m, int n, int k, T alpha, int64_t a,
          int lda, int64_t b, int ldb, T beta, int64_t c, int ldc) {
  if (!usable())
    return;
  std::string what = std::string("in the GEMM of ") +
                     (origin ? origin : "an nn op") + " (" + std::to_string(m) +
                     " x " + std::to_string(n) + " x " + std::to_string(k) +
                     ")";
  if (order != kCblasRowMajor ||
      (transA != kCblasNoTrans && transA != kCblasTrans) ||
      (transB != kCblasNoTrans && transB != kCblasTrans)) {
    if (current)
      current->fail(std::string(callName) + ": unsupported layout " + what);
    return;
  }
  if (m == 0 || n == 0)
    return;
  auto op = [](int trans) {
    return trans == kCblasTrans ? kCublasOpT : kCublasOpN;
  };
  // Row-major C = op(A) op(B) is column-major C^T = op(B)^T op(A)^T: swap
  // the operands, keep each one's transpose flag.
  cublasStatus_t status = 0;
  profiled(std::string(callName) + " " + (origin ? origin : ""), what, [&] {
    status = call(device().blas, op(transB), op(transA), n, m, k, &alpha,
                  (const T *)(intptr_t)b, ldb, (const T *)(intptr_t)a, lda,
                  &beta, (T *)(intptr_t)c, ldc);
    return status == 0;
  });
  if (status != 0) {
    if (current)
      current->fail(std::string(callName) + " failed with cuBLAS status " +
                    std::to_string(status) + " " + what);
    return;
  }
  // Host code may read the result next (kernel launches synchronize too).
  check(device().api.cuStreamSynchronize(device().stream),
        "cuStreamSynchronize", "after the GEMM " + what);
}
} // namespace

// The C names GPU artifacts call. NOLINTNEXTLINE(readability-identifier-naming)
NN_EXPORT void nn_cuda_sgemm(const char *origin, int order, int transA,
                             int transB, int m, int n, int k, float alpha,
                             int64_t a, int lda, int64_t b, int ldb, float beta,
                             int64_t c, int ldc) {
  gemm<float>(device().api.cublasSgemm, "cublasSgemm_v2", origin, order, transA,
              transB, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc);
}

// The C names GPU artifacts call. NOLINTNEXTLINE(readability-identifier-naming)
NN_EXPORT void nn_cuda_dgemm(const char *origin, int order, int transA,
                             int transB, int m, int n, int k, double alpha,
                             int64_t a, int lda, int64_t b, int ldb,
                             double beta, int64_t c, int ldc) {
  gemm<double>(device().api.cublasDgemm, "cublasDgemm_v2", origin, order,
               transA, transB, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc);
}
