//===- CudaDevice.cpp - the CUDA device: driver, memory, launches --------===//

#include "runtime/cuda/CudaDevice.h"

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <dlfcn.h>

using namespace nn;
using namespace nn::cuda;
using namespace nn::cuda::abi;

namespace {

thread_local CudaSession *current = nullptr;

/// Cached buffers beyond this are returned to the driver.
constexpr size_t kCacheLimit = size_t(8) << 30;

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

/// Looks `name` up; a versioned symbol that older drivers lack falls back
/// to the unversioned one where both have the same signature and meaning
/// (cuEventElapsedTime_v2 came with CUDA 12.8; CUDA 13's cuda.h maps the
/// plain name to it).
template <typename Fn> bool resolve(void *library, const char *name, Fn &fn) {
  fn = reinterpret_cast<Fn>(dlsym(library, name));
  if (!fn && std::strcmp(name, "cuEventElapsedTime_v2") == 0)
    fn = reinterpret_cast<Fn>(dlsym(library, "cuEventElapsedTime"));
  return fn != nullptr;
}

/// Out of memory, by the driver's or cuBLAS's words.
bool isOutOfMemory(const std::string &message) {
  return message.find("OUT_OF_MEMORY") != std::string::npos ||
         message.find("out of memory") != std::string::npos;
}

} // namespace

CudaSession *cuda::currentSession() { return current; }

//===----------------------------------------------------------------------===//
// Setup
//===----------------------------------------------------------------------===//

CudaDevice::CudaDevice(const CudaOptions &options) {
  status = initialize(options);
}

CudaDevice::~CudaDevice() {
  // Devices live as long as the process (the registry keeps them); the
  // driver tears its contexts down at exit.
}

absl::Status CudaDevice::initialize(const CudaOptions &options) {
  const std::string &driverPath = options.driver;
  driverLibrary = dlopen(driverPath.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (!driverLibrary) {
    const char *why = dlerror();
    return absl::UnavailableError(
        "no GPU: cannot load the CUDA driver " + driverPath + " (" +
        (why ? why : "unknown") +
        "); --target=cuda needs an NVIDIA GPU and its driver");
  }
  bool ok = true;
#define NN_CUDA_RESOLVE(member, symbol, result, parameters)                    \
  ok = ok && resolve(driverLibrary, symbol, api.member);
  NN_CUDA_DRIVER_FUNCTIONS(NN_CUDA_RESOLVE)
  if (!ok)
    return absl::UnavailableError(
        "the CUDA driver " + driverPath +
        " lacks a function the runtime needs (driver too old?)");
  auto call = [&](CUresult result, const char *name) {
    return result == kSuccess
               ? absl::OkStatus()
               : absl::UnavailableError(std::string("no GPU: ") + name +
                                        " failed: " + resultText(api, result));
  };
  int count = 0;
  int ordinal = options.ordinal;
  absl::Status status = call(api.cuInit(0), "cuInit");
  if (status.ok())
    status = call(api.cuDeviceGetCount(&count), "cuDeviceGetCount");
  if (!status.ok())
    return status;
  if (ordinal < 0 || count <= ordinal)
    return absl::UnavailableError("no GPU: the CUDA driver reports " +
                                  std::to_string(count) + " devices, device " +
                                  std::to_string(ordinal) + " was asked for");
  // cuCtxCreate's signature changed in CUDA 13; the primary context is the
  // same on every version.
  status = call(api.cuDeviceGet(&device, ordinal), "cuDeviceGet");
  if (status.ok())
    status = call(api.cuDevicePrimaryCtxRetain(&context, device),
                  "cuDevicePrimaryCtxRetain");
  if (status.ok())
    status = call(api.cuCtxSetCurrent(context), "cuCtxSetCurrent");
  // A blocking stream: the runtime's synchronous copies (legacy default
  // stream) are ordered with the kernels and GEMMs on it.
  if (status.ok())
    status =
        call(api.cuStreamCreate(&stream, kStreamDefault), "cuStreamCreate");
  if (!status.ok())
    return status;

  char name[256] = {0};
  api.cuDeviceGetName(name, sizeof(name) - 1, device);
  int sms = 0, major = 0, minor = 0, clockKHz = 0, busBits = 0;
  api.cuDeviceGetAttribute(&sms, kAttributeSmCount, device);
  api.cuDeviceGetAttribute(&major, kAttributeMajor, device);
  api.cuDeviceGetAttribute(&minor, kAttributeMinor, device);
  api.cuDeviceGetAttribute(&clockKHz, kAttributeMemoryClockKHz, device);
  api.cuDeviceGetAttribute(&busBits, kAttributeBusWidthBits, device);
  info.name = name;
  info.ordinal = ordinal;
  info.multiprocessors = sms;
  info.computeCapability = major * 10 + minor;
  // Double data rate: two transfers per clock.
  info.peakBandwidthGBs = 2.0 * clockKHz * 1e3 * (busBits / 8.0) / 1e9;
  return absl::OkStatus();
}

std::string CudaDevice::describe() const {
  return "cuda:" + std::to_string(info.ordinal) +
         (info.name.empty() ? "" : " (" + info.name + ")");
}

absl::Status CudaDevice::availability() const { return status; }

absl::Status CudaDevice::makeCurrent() {
  if (!status.ok())
    return status;
  return check(api.cuCtxSetCurrent(context), "cuCtxSetCurrent", "");
}

absl::Status CudaDevice::check(CUresult result, const std::string &call,
                               const std::string &what) const {
  if (result == kSuccess)
    return absl::OkStatus();
  std::string message = call + " failed: " + resultText(api, result) +
                        (what.empty() ? "" : " " + what);
  return isOutOfMemory(message) ? absl::ResourceExhaustedError(message)
                                : absl::InternalError(message);
}

//===----------------------------------------------------------------------===//
// Memory
//===----------------------------------------------------------------------===//

void CudaDevice::trimCache(size_t keep) {
  for (auto it = cached.begin(); it != cached.end() && cachedBytes > keep;
       it = cached.erase(it)) {
    cachedBytes -= it->first.second;
    api.cuMemFree((CUdeviceptr)(uintptr_t)it->second);
  }
}

CUresult CudaDevice::allocateFresh(CUdeviceptr *pointer, size_t size,
                                   bool hostVisible) {
  if (!hostVisible)
    return api.cuMemAlloc(pointer, size);
  // Managed memory beyond what the device has free can hang the GPU:
  // refuse it instead.
  size_t free = 0, total = 0;
  CUresult result = api.cuMemGetInfo(&free, &total);
  if (result != kSuccess)
    return result;
  if (size > free)
    return kOutOfMemory;
  return api.cuMemAllocManaged(pointer, size, kMemAttachGlobal);
}

absl::StatusOr<void *> CudaDevice::tryAllocate(size_t bytes, bool hostVisible) {
  if (!status.ok())
    return status;
  // A zero-size buffer still needs a distinct, freeable address.
  size_t size = bytes == 0 ? 1 : bytes;
  std::pair<bool, size_t> key{hostVisible, size};
  std::lock_guard<std::mutex> lock(memoryMutex);
  auto it = cached.find(key);
  if (it != cached.end()) {
    void *pointer = it->second;
    cached.erase(it);
    cachedBytes -= size;
    live[pointer] = key;
    return pointer;
  }
  CUdeviceptr pointer = 0;
  CUresult result = allocateFresh(&pointer, size, hostVisible);
  if (result != kSuccess && !cached.empty()) {
    trimCache(0);
    result = allocateFresh(&pointer, size, hostVisible);
  }
  absl::Status allocated =
      check(result, hostVisible ? "cuMemAllocManaged" : "cuMemAlloc",
            "(" + std::to_string(size) + " bytes)");
  if (!allocated.ok())
    return allocated;
  live[(void *)(uintptr_t)pointer] = key;
  return (void *)(uintptr_t)pointer;
}

void *CudaDevice::allocate(size_t bytes, bool hostVisible) {
  absl::StatusOr<void *> pointer = tryAllocate(bytes, hostVisible);
  if (pointer.ok())
    return *pointer;
  if (current)
    current->fail(pointer.status());
  else
    std::fprintf(stderr, "nn runtime: %s\n",
                 std::string(pointer.status().message()).c_str());
  // The run has failed; give host code memory it can touch harmlessly.
  size_t size = bytes == 0 ? 1 : bytes;
  void *host = std::calloc(1, size);
  std::lock_guard<std::mutex> lock(memoryMutex);
  fallback[host] = size;
  return host;
}

void CudaDevice::release(void *pointer) {
  if (!pointer)
    return;
  std::lock_guard<std::mutex> lock(memoryMutex);
  if (auto it = fallback.find(pointer); it != fallback.end()) {
    fallback.erase(it);
    std::free(pointer);
    return;
  }
  auto it = live.find(pointer);
  if (it == live.end())
    return;
  cached.emplace(it->second, pointer);
  cachedBytes += it->second.second;
  live.erase(it);
  if (cachedBytes > kCacheLimit)
    trimCache(kCacheLimit);
}

absl::Status CudaDevice::copyToDevice(void *target, const void *source,
                                      size_t bytes, const std::string &what) {
  if (bytes == 0 || !status.ok())
    return status;
  return check(api.cuMemcpyHtoD((CUdeviceptr)(uintptr_t)target, source, bytes),
               "cuMemcpyHtoD", "copying " + what + " to the device");
}

absl::Status CudaDevice::copyToHost(void *target, const void *source,
                                    size_t bytes, const std::string &what) {
  if (bytes == 0 || !status.ok())
    return status;
  return check(api.cuMemcpyDtoH(target, (CUdeviceptr)(uintptr_t)source, bytes),
               "cuMemcpyDtoH", "copying " + what + " to the host");
}

//===----------------------------------------------------------------------===//
// Work on the stream
//===----------------------------------------------------------------------===//

absl::Status
CudaDevice::profiled(const std::string &name, const std::string &what,
                     const std::function<absl::Status()> &enqueue) {
  if (!profiling)
    return enqueue();
  CUevent start = nullptr, stop = nullptr;
  float ms = 0;
  absl::Status result =
      check(api.cuEventCreate(&start, 0), "cuEventCreate", "");
  if (result.ok())
    result = check(api.cuEventCreate(&stop, 0), "cuEventCreate", "");
  if (result.ok())
    result = check(api.cuEventRecord(start, stream), "cuEventRecord",
                   "before " + what);
  if (result.ok())
    result = enqueue();
  if (result.ok())
    result = check(api.cuEventRecord(stop, stream), "cuEventRecord",
                   "after " + what);
  if (result.ok())
    result = check(api.cuEventSynchronize(stop), "cuEventSynchronize",
                   "after " + what);
  if (result.ok())
    result = check(api.cuEventElapsedTime(&ms, start, stop),
                   "cuEventElapsedTime", "of " + what);
  if (result.ok()) {
    std::lock_guard<std::mutex> lock(profileMutex);
    KernelTime &time = profile[name];
    time.name = name;
    time.launches += 1;
    time.milliseconds += ms;
  }
  if (start)
    api.cuEventDestroy(start);
  if (stop)
    api.cuEventDestroy(stop);
  return result;
}

absl::Status CudaDevice::launch(const runtime::KernelLaunch &l) {
  if (!status.ok())
    return status;
  return profiled(l.name, l.what, [&] {
    return check(
        api.cuLaunchKernel((CUfunction)l.function, l.grid[0], l.grid[1],
                           l.grid[2], l.block[0], l.block[1], l.block[2],
                           l.sharedMemory, stream, l.params, l.extra),
        "cuLaunchKernel",
        "launching " + l.what + " with grid " + std::to_string(l.grid[0]) +
            " x block " + std::to_string(l.block[0]));
  });
}

absl::Status CudaDevice::synchronize() {
  if (!status.ok())
    return status;
  return check(api.cuStreamSynchronize(stream), "cuStreamSynchronize", "");
}

void CudaDevice::setProfiling(bool enabled) {
  std::lock_guard<std::mutex> lock(profileMutex);
  profiling = enabled;
  profile.clear();
}

std::vector<KernelTime> CudaDevice::takeProfile() {
  std::lock_guard<std::mutex> lock(profileMutex);
  std::vector<KernelTime> times;
  for (auto &[name, time] : profile)
    times.push_back(time);
  profile.clear();
  return times;
}

std::unique_ptr<runtime::DeviceSession>
CudaDevice::openSession(const Manifest &manifest) {
  return std::make_unique<CudaSession>(*this, manifest);
}

//===----------------------------------------------------------------------===//
// Sessions
//===----------------------------------------------------------------------===//

CudaSession::CudaSession(CudaDevice &device, const Manifest &manifest)
    : device(device) {
  for (const KernelInfo &kernel : manifest.kernels)
    origins[kernel.name] = kernel.origin;
}

CudaSession::~CudaSession() {
  if (!device.availability().ok() || modules.empty())
    return;
  (void)device.makeCurrent();
  for (auto &[image, module] : modules)
    device.getApi().cuModuleUnload((CUmodule)module);
}

void CudaSession::fail(const std::string &message) {
  if (error.empty())
    error = message;
}

void CudaSession::fail(const absl::Status &status) {
  if (!status.ok())
    fail(std::string(status.message()));
}

absl::Status CudaSession::run(runtime::EntryFn entry, void **argv) {
  absl::Status ready = device.availability();
  if (!ready.ok()) {
    error.clear();
    return ready;
  }
  CudaSession *previous = current;
  current = this;
  fail(device.makeCurrent());
  // A failed staging copy skips the run; the entry point still runs when
  // the device fails mid-run, with launches skipped, so that its host
  // code frees what it allocated.
  if (!failed())
    entry(argv);
  current = previous;
  return finish();
}

absl::Status CudaSession::finish() {
  if (!failed())
    fail(device.check(device.getApi().cuStreamSynchronize(device.getStream()),
                      "cuStreamSynchronize",
                      lastLaunch.empty() ? "" : "after " + lastLaunch));
  std::string message;
  std::swap(message, error);
  lastLaunch.clear();
  if (message.empty())
    return absl::OkStatus();
  return isOutOfMemory(message) ? absl::ResourceExhaustedError(message)
                                : absl::InternalError(message);
}

std::string CudaSession::describeKernel(void *function) const {
  auto name = functionNames.find(function);
  if (name == functionNames.end())
    return "an unknown kernel";
  std::string text = "kernel " + name->second;
  auto origin = origins.find(name->second);
  if (origin != origins.end())
    text += " (" + origin->second + ")";
  return text;
}

std::string CudaSession::kernelName(void *function) const {
  auto name = functionNames.find(function);
  return name == functionNames.end() ? describeKernel(function) : name->second;
}

void *CudaSession::loadModule(const void *image, bool isPtx, int optLevel) {
  if (failed())
    return nullptr;
  auto it = modules.find(image);
  if (it != modules.end())
    return it->second;
  const Api &api = device.getApi();
  CUmodule module = nullptr;
  CUresult result;
  if (isPtx) {
    char log[4096] = {0};
    int options[] = {kJitOptimizationLevel, kJitErrorLogBuffer,
                     kJitErrorLogBufferSize};
    void *values[] = {(void *)(intptr_t)optLevel, log,
                      (void *)(intptr_t)sizeof(log)};
    result = api.cuModuleLoadDataEx(&module, image, 3, options, values);
    if (result != kSuccess && log[0])
      fail(device.check(result, "cuModuleLoadDataEx (PTX JIT)",
                        std::string(": ") + log));
  } else {
    result = api.cuModuleLoadData(&module, image);
  }
  absl::Status loaded =
      device.check(result, isPtx ? "cuModuleLoadDataEx" : "cuModuleLoadData",
                   "loading a kernel image");
  if (!loaded.ok()) {
    fail(loaded);
    return nullptr;
  }
  modules[image] = module;
  return module;
}

void *CudaSession::getFunction(void *module, const char *name) {
  if (!module || failed())
    return nullptr;
  CUfunction function = nullptr;
  absl::Status found = device.check(
      device.getApi().cuModuleGetFunction(&function, (CUmodule)module, name),
      "cuModuleGetFunction", std::string("for kernel ") + name);
  if (!found.ok()) {
    fail(found);
    return nullptr;
  }
  functionNames[function] = name;
  return function;
}
