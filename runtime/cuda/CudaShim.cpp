//===- CudaShim.cpp - the C entry points GPU artifacts call ---------------===//
//
// GPU artifacts call fixed C names: what MLIR 19's gpu-to-llvm host code
// emits (mgpu*, LLVM 19 signatures: module load/unload, launch, streams,
// gpu.alloc) and what nn-gemm-to-blas emits for the cuda runtime
// (nn_cuda_sgemm/dgemm, nn_cuda_alloc/free for memref.alloc). They are the
// only global symbols of the CUDA backend, and each one forwards to the
// session of the calling thread's current run (CudaSession::run sets it)
// and through it to that run's device (GEMMs: to the device's GEMM
// provider, cuBLAS): two executables on two devices run side by side, each
// on its own thread.
//
// Why globals and not a table handed to the entry point: gpu-to-llvm emits
// direct calls to these external names with no context argument, and the
// artifact resolves them when it is loaded. Handing a table in would mean
// rewriting every such call after the conversion into an indirect call
// with an added context; this shim keeps that rewrite out of the compiler
// while keeping the names in one place. docs/runtime.md has the trade-off.
//
//===----------------------------------------------------------------------===//

#include "runtime/cuda/CudaDevice.h"

#include <cstdint>
#include <cstdio>

using namespace nn;
using namespace nn::cuda;

namespace {

/// The running session, or null (after a message) outside a run.
CudaSession *session(const char *entryPoint) {
  CudaSession *running = currentSession();
  if (!running)
    std::fprintf(stderr,
                 "nn runtime: %s called outside a run of a GPU artifact\n",
                 entryPoint);
  return running;
}

/// Skips work after the run's first failure.
CudaSession *usableSession(const char *entryPoint) {
  CudaSession *running = session(entryPoint);
  return running && !running->failed() ? running : nullptr;
}

/// Hands a GEMM of the running artifact to its device's GEMM provider.
void gemm(DType dtype, const char *callName, const char *origin, int order,
          int transA, int transB, int m, int n, int k, double alpha, int64_t a,
          int lda, int64_t b, int ldb, double beta, int64_t c, int ldc) {
  CudaSession *running = usableSession(callName);
  if (!running)
    return;
  runtime::GemmCall call;
  call.dtype = dtype;
  call.m = m;
  call.n = n;
  call.k = k;
  call.origin = origin;
  if (order != cuda::abi::kCblasRowMajor ||
      (transA != cuda::abi::kCblasNoTrans &&
       transA != cuda::abi::kCblasTrans) ||
      (transB != cuda::abi::kCblasNoTrans &&
       transB != cuda::abi::kCblasTrans)) {
    running->fail(std::string(callName) + ": unsupported layout in " +
                  runtime::describeGemm(call));
    return;
  }
  call.transA = transA == cuda::abi::kCblasTrans;
  call.transB = transB == cuda::abi::kCblasTrans;
  call.alpha = alpha;
  call.beta = beta;
  call.a = (const void *)(intptr_t)a;
  call.b = (const void *)(intptr_t)b;
  call.c = (void *)(intptr_t)c;
  call.lda = lda;
  call.ldb = ldb;
  call.ldc = ldc;
  runtime::GemmProvider *provider = running->getDevice().getGemm();
  if (!provider) {
    running->fail(std::string(callName) + ": " +
                  running->getDevice().describe() + " has no GEMM provider");
    return;
  }
  running->fail(provider->gemm(call));
}

} // namespace

#define NN_EXPORT extern "C" __attribute__((visibility("default")))

// The C names GPU artifacts call. NOLINTBEGIN(readability-identifier-naming)

// Buffers only kernels and cuBLAS touch (memref.alloc): device memory.
NN_EXPORT void *nn_cuda_alloc(size_t bytes) {
  CudaSession *running = session("nn_cuda_alloc");
  return running ? running->getDevice().allocate(bytes, /*hostVisible=*/false)
                 : nullptr;
}

NN_EXPORT void *nn_cuda_aligned_alloc(size_t alignment, size_t bytes) {
  // cuMemAlloc aligns to at least 256 bytes.
  (void)alignment;
  return nn_cuda_alloc(bytes);
}

NN_EXPORT void nn_cuda_free(void *pointer) {
  if (CudaSession *running = session("nn_cuda_free"))
    running->getDevice().release(pointer);
}

// gpu.alloc (host_shared: buffers host code touches, see
// nn-gpu-place-buffers) and gpu.dealloc. Synchronous: the stream is unused.
NN_EXPORT void *mgpuMemAlloc(uint64_t bytes, void *stream, bool hostShared) {
  (void)stream;
  CudaSession *running = session("mgpuMemAlloc");
  return running ? running->getDevice().allocate(bytes, hostShared) : nullptr;
}

NN_EXPORT void mgpuMemFree(void *pointer, void *stream) {
  (void)stream;
  nn_cuda_free(pointer);
}

NN_EXPORT void *mgpuModuleLoad(void *data, size_t size) {
  (void)size;
  CudaSession *running = usableSession("mgpuModuleLoad");
  return running ? running->loadModule(data, /*isPtx=*/false, 0) : nullptr;
}

NN_EXPORT void *mgpuModuleLoadJIT(void *data, int optLevel) {
  CudaSession *running = usableSession("mgpuModuleLoadJIT");
  return running ? running->loadModule(data, /*isPtx=*/true, optLevel)
                 : nullptr;
}

NN_EXPORT void mgpuModuleUnload(void *module) {
  // Modules of a run stay loaded until its executable goes away.
  (void)module;
}

NN_EXPORT void *mgpuModuleGetFunction(void *module, const char *name) {
  CudaSession *running = usableSession("mgpuModuleGetFunction");
  return running ? running->getFunction(module, name) : nullptr;
}

NN_EXPORT void *mgpuStreamCreate() {
  // Every launch of a run goes to its device's one stream.
  CudaSession *running = usableSession("mgpuStreamCreate");
  return running ? running->getDevice().getStream() : nullptr;
}

NN_EXPORT void mgpuStreamDestroy(void *stream) { (void)stream; }

NN_EXPORT void mgpuStreamSynchronize(void *stream) {
  CudaSession *running = usableSession("mgpuStreamSynchronize");
  if (!stream || !running)
    return;
  absl::Status status = running->getDevice().synchronize();
  if (!status.ok() && !running->lastLaunch.empty())
    status = absl::Status(status.code(), std::string(status.message()) +
                                             " after " + running->lastLaunch);
  running->fail(status);
}

NN_EXPORT void mgpuLaunchKernel(void *function, intptr_t gridX, intptr_t gridY,
                                intptr_t gridZ, intptr_t blockX,
                                intptr_t blockY, intptr_t blockZ,
                                int32_t sharedMemory, void *stream,
                                void **params, void **extra,
                                size_t paramsCount) {
  (void)stream;
  (void)paramsCount;
  CudaSession *running = usableSession("mgpuLaunchKernel");
  if (!function || !running)
    return;
  runtime::KernelLaunch launch;
  launch.function = function;
  launch.grid[0] = gridX;
  launch.grid[1] = gridY;
  launch.grid[2] = gridZ;
  launch.block[0] = blockX;
  launch.block[1] = blockY;
  launch.block[2] = blockZ;
  launch.sharedMemory = sharedMemory;
  launch.params = params;
  launch.extra = extra;
  launch.what = running->describeKernel(function);
  launch.name = running->kernelName(function);
  running->lastLaunch = launch.what;
  running->fail(running->getDevice().launch(launch));
}

NN_EXPORT void nn_cuda_sgemm(const char *origin, int order, int transA,
                             int transB, int m, int n, int k, float alpha,
                             int64_t a, int lda, int64_t b, int ldb, float beta,
                             int64_t c, int ldc) {
  gemm(DType::f32, "cublasSgemm_v2", origin, order, transA, transB, m, n, k,
       alpha, a, lda, b, ldb, beta, c, ldc);
}

NN_EXPORT void nn_cuda_dgemm(const char *origin, int order, int transA,
                             int transB, int m, int n, int k, double alpha,
                             int64_t a, int lda, int64_t b, int ldb,
                             double beta, int64_t c, int ldc) {
  gemm(DType::f64, "cublasDgemm_v2", origin, order, transA, transB, m, n, k,
       alpha, a, lda, b, ldb, beta, c, ldc);
}

// NOLINTEND(readability-identifier-naming)
