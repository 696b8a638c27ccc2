//===- OneDnnGemm.cpp - f32 GEMMs of CPU artifacts, on oneDNN -------------===//
//
// CPU artifacts compiled with gemm-library=onednn (the default) call
// `nn_cpu_sgemm` for their f32 GEMMs, with CBLAS's arguments after a
// string naming the nn op. It hands them to the host's GEMM provider, which
// runs oneDNN's `dnnl_sgemm`, loaded on first use with dlopen, so the
// runtime loads and runs everything else without Debian's libdnnl2 and
// says what is missing when a GEMM needs it.
//
// Threads: oneDNN is built on GNU OpenMP, whose GOMP_* entry points LLVM's
// libomp provides too. Loading libomp globally before oneDNN binds
// oneDNN's parallel regions to libomp, the runtime of the generated loops:
// one pool of threads, governed by the one omp_set_num_threads that
// nn::setNumThreads makes before each run (docs/lowering.md, "Threads").
//
//===----------------------------------------------------------------------===//

#include "runtime/device/OneDnnGemm.h"

#include "nn/Runtime.h"
#include "runtime/Allocator.h"

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <dlfcn.h>

namespace {

// CBLAS's enum values (cblas.h).
constexpr int kRowMajor = 101, kNoTrans = 111, kTrans = 112;

using DnnlSgemm = int (*)(char, char, int64_t, int64_t, int64_t, float,
                          const float *, int64_t, const float *, int64_t, float,
                          float *, int64_t);

/// oneDNN's sgemm, or why it could not be loaded.
struct OneDnn {
  DnnlSgemm sgemm = nullptr;
  void (*setThreads)(int) = nullptr;
  char error[512] = "";
};

const OneDnn &oneDnn() {
  static const OneDnn loaded = [] {
    OneDnn d;
    void *openmp = dlopen("libomp.so.5", RTLD_NOW | RTLD_GLOBAL);
    if (!openmp) {
      std::snprintf(d.error, sizeof(d.error),
                    "cannot load LLVM's OpenMP runtime libomp.so.5 for "
                    "oneDNN's threads (Debian: libomp5-19): %s",
                    dlerror());
      return d;
    }
    void *library = dlopen("libdnnl.so.2", RTLD_NOW | RTLD_LOCAL);
    if (!library) {
      std::snprintf(d.error, sizeof(d.error),
                    "cannot load oneDNN (libdnnl.so.2; Debian: libdnnl2), "
                    "which f32 GEMMs of this artifact call: %s",
                    dlerror());
      return d;
    }
    d.sgemm = (DnnlSgemm)dlsym(library, "dnnl_sgemm");
    d.setThreads = (void (*)(int))dlsym(openmp, "omp_set_num_threads");
    if (!d.sgemm || !d.setThreads)
      std::snprintf(d.error, sizeof(d.error),
                    "libdnnl.so.2 has no dnnl_sgemm, or libomp.so.5 no "
                    "omp_set_num_threads");
    return d;
  }();
  return loaded;
}

class OneDnnGemm : public nn::runtime::GemmProvider {
public:
  std::string name() const override { return "oneDNN"; }

  absl::Status gemm(const nn::runtime::GemmCall &call) override {
    const char *origin = call.origin ? call.origin : "an nn op";
    const OneDnn &library = oneDnn();
    if (!library.sgemm)
      return absl::InternalError(std::string("GEMM of ") + origin + ": " +
                                 library.error);
    if (call.dtype != nn::DType::f32)
      return absl::InternalError(std::string("GEMM of ") + origin +
                                 ": oneDNN's sgemm takes f32 only");
    if (call.m == 0 || call.n == 0)
      return absl::OkStatus();
    // An empty sum (K = 0, a weight gradient over a batch without a real
    // frame) leaves C = beta C by BLAS's definition, but oneDNN's sgemm
    // returns without touching C: C would keep whatever its buffer held.
    if (call.k == 0) {
      auto *rows = (float *)call.c;
      auto beta = (float)call.beta;
      for (int i = 0; i < call.m; ++i)
        for (int j = 0; j < call.n; ++j) {
          float &c = rows[(int64_t)i * call.ldc + j];
          c = beta == 0.0f ? 0.0f : beta * c;
        }
      return absl::OkStatus();
    }
    // The run set this thread's OpenMP threads only if the artifact has
    // threaded loops (it then links libomp); a GEMM-only artifact does not.
    if (int threads = nn::numThreads(); threads > 0)
      library.setThreads(threads);
    int status =
        library.sgemm(call.transA ? 'T' : 'N', call.transB ? 'T' : 'N', call.m,
                      call.n, call.k, (float)call.alpha, (const float *)call.a,
                      call.lda, (const float *)call.b, call.ldb,
                      (float)call.beta, (float *)call.c, call.ldc);
    if (status == 0)
      return absl::OkStatus();
    // dnnl_status_t: 1 out of memory, 2 invalid arguments.
    char message[768];
    std::snprintf(message, sizeof(message),
                  "GEMM of %s failed in oneDNN (dnnl_sgemm status %d%s; "
                  "M = %d, N = %d, K = %d)",
                  origin, status,
                  status == 1   ? ": out of memory"
                  : status == 2 ? ": invalid arguments"
                                : "",
                  call.m, call.n, call.k);
    return absl::InternalError(message);
  }
};

/// Runs nn_cpu_sgemm's call on the host's provider; false, with the
/// message in `message`, when it fails. Nothing it creates outlives it:
/// the caller may end the run with a longjmp.
bool runSgemm(const char *origin, int order, int transA, int transB, int m,
              int n, int k, float alpha, int64_t a, int lda, int64_t b, int ldb,
              float beta, int64_t c, int ldc, char *message, size_t size) {
  const OneDnn &library = oneDnn();
  if (!library.sgemm) {
    std::snprintf(message, size, "GEMM of %s: %s", origin, library.error);
    return false;
  }
  if (order != kRowMajor || (transA != kTrans && transA != kNoTrans) ||
      (transB != kTrans && transB != kNoTrans)) {
    std::snprintf(message, size,
                  "GEMM of %s: unsupported layout (order %d, transposes %d, "
                  "%d)",
                  origin, order, transA, transB);
    return false;
  }
  nn::runtime::GemmCall call;
  call.transA = transA == kTrans;
  call.transB = transB == kTrans;
  call.m = m;
  call.n = n;
  call.k = k;
  call.alpha = alpha;
  call.beta = beta;
  call.a = (const void *)(intptr_t)a;
  call.b = (const void *)(intptr_t)b;
  call.c = (void *)(intptr_t)c;
  call.lda = lda;
  call.ldb = ldb;
  call.ldc = ldc;
  call.origin = origin;
  absl::Status status = nn::runtime::oneDnnGemm()->gemm(call);
  if (status.ok())
    return true;
  std::snprintf(message, size, "%s", std::string(status.message()).c_str());
  return false;
}

/// Ends the run with `message` (which must outlive the unwinding: a
/// thread-local buffer); outside a guarded run there is no caller to
/// report to, so it prints and aborts.
[[noreturn]] void fail(const char *message) {
  nn::runtime::failGuardedCall(message);
  std::fprintf(stderr, "nn runtime: %s\n", message);
  std::abort();
}

} // namespace

const std::shared_ptr<nn::runtime::GemmProvider> &nn::runtime::oneDnnGemm() {
  // Never destroyed: artifacts may call GEMMs from threads still running
  // at exit.
  static const auto *provider =
      new std::shared_ptr<GemmProvider>(std::make_shared<OneDnnGemm>());
  return *provider;
}

// NOLINTBEGIN(readability-identifier-naming): the names generated code
// calls.

/// C = alpha op(A) op(B) + beta C, row-major, with CBLAS's arguments;
/// `origin` names the nn op for error messages.
extern "C" __attribute__((visibility("default"))) void
nn_cpu_sgemm(const char *origin, int order, int transA, int transB, int m,
             int n, int k, float alpha, int64_t a, int lda, int64_t b, int ldb,
             float beta, int64_t c, int ldc) {
  // The run ends with a longjmp: nothing with a destructor may be live in
  // this frame when it fails.
  static thread_local char message[768];
  if (!runSgemm(origin, order, transA, transB, m, n, k, alpha, a, lda, b, ldb,
                beta, c, ldc, message, sizeof(message)))
    fail(message);
}

// NOLINTEND(readability-identifier-naming)
