//===- gemm_provider_bench.cpp - the loss tail's GEMMs on each provider ---===//
//
// Which library should nn's CPU GEMMs call? The three GEMMs of the loss
// tail linear(512 -> V) -> log_softmax -> CE at N = 9206 packed rows (the
// benchmark batch of docs/performance.md), on every provider Debian ships:
//
//   forward      Y[N, V]  = X[N, 512] W[V, 512]^T
//   grad input   dX[N, 512] = dY[N, V] W[V, 512]
//   grad weight  dW[V, 512] = dY[N, V]^T X[N, 512]
//
// Providers are loaded by path with dlopen (none is linked), so one build
// measures them all and a missing one is reported, not an error:
// OpenBLAS (pthread and OpenMP builds), BLIS (pthread) and oneDNN
// (dnnl_sgemm, OpenMP). Run one provider per process (--provider), so
// that no other library's idle threads share the cores:
//
//   build/bin/nn-gemm-bench --provider openblas-pthread --threads 2
//
// docs/performance.md records the table and the decision.
//
//===----------------------------------------------------------------------===//

#include <benchmark/benchmark.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <dlfcn.h>
#include <random>
#include <string>
#include <vector>

namespace {

constexpr int kRows = 9206, kHidden = 512;

// CBLAS's enum values (cblas.h), so that no CBLAS header is needed.
constexpr int kRowMajor = 101, kNoTrans = 111, kTrans = 112;
using CblasSgemm = void (*)(int, int, int, int, int, int, float, const float *,
                            int, const float *, int, float, float *, int);
using DnnlSgemm = int (*)(char, char, int64_t, int64_t, int64_t, float,
                          const float *, int64_t, const float *, int64_t, float,
                          float *, int64_t);
using SetThreads = void (*)(int);

struct Provider {
  const char *name;
  const char *library;
  const char *threadsSymbol;
};

const Provider kProviders[] = {
    {"openblas-pthread",
     "/usr/lib/x86_64-linux-gnu/openblas-pthread/libopenblas.so.0",
     "openblas_set_num_threads"},
    {"openblas-openmp",
     "/usr/lib/x86_64-linux-gnu/openblas-openmp/libopenblas.so.0",
     "openblas_set_num_threads"},
    {"blis-pthread", "/usr/lib/x86_64-linux-gnu/blis-pthread/libblis.so.4",
     "bli_thread_set_num_threads"},
    {"onednn", "libdnnl.so.2", "omp_set_num_threads"},
};

const Provider *gProvider = nullptr;
CblasSgemm gCblas = nullptr;
DnnlSgemm gDnnl = nullptr;

/// C[m, n] = op(A) op(B), row-major, with the provider's entry point.
void sgemm(bool transA, bool transB, int m, int n, int k, const float *a,
           int lda, const float *b, int ldb, float *c, int ldc) {
  if (gDnnl) {
    gDnnl(transA ? 'T' : 'N', transB ? 'T' : 'N', m, n, k, 1.0f, a, lda, b, ldb,
          0.0f, c, ldc);
    return;
  }
  gCblas(kRowMajor, transA ? kTrans : kNoTrans, transB ? kTrans : kNoTrans, m,
         n, k, 1.0f, a, lda, b, ldb, 0.0f, c, ldc);
}

std::vector<float> randomMatrix(size_t count, unsigned seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> uniform(-1, 1);
  std::vector<float> values(count);
  for (float &v : values)
    v = uniform(rng);
  return values;
}

/// range(0): V; range(1): 0 forward, 1 grad input, 2 grad weight.
void benchGemm(benchmark::State &state) {
  int vocabulary = state.range(0);
  int layout = state.range(1);
  std::vector<float> x = randomMatrix((size_t)kRows * kHidden, 1);
  std::vector<float> w = randomMatrix((size_t)vocabulary * kHidden, 2);
  std::vector<float> dy = randomMatrix((size_t)kRows * vocabulary, 3);
  std::vector<float> out((size_t)kRows * std::max(vocabulary, kHidden));
  for (auto _ : state) {
    switch (layout) {
    case 0: // X W^T
      sgemm(false, true, kRows, vocabulary, kHidden, x.data(), kHidden,
            w.data(), kHidden, out.data(), vocabulary);
      break;
    case 1: // dY W
      sgemm(false, false, kRows, kHidden, vocabulary, dy.data(), vocabulary,
            w.data(), kHidden, out.data(), kHidden);
      break;
    default: // dY^T X
      sgemm(true, false, vocabulary, kHidden, kRows, dy.data(), vocabulary,
            x.data(), kHidden, out.data(), kHidden);
      break;
    }
    benchmark::DoNotOptimize(out.data());
  }
  state.counters["GFLOP/s"] = benchmark::Counter(
      2.0 * kRows * kHidden * vocabulary * state.iterations() / 1e9,
      benchmark::Counter::kIsRate);
  static const char *kLayouts[] = {"forward X W^T", "grad input dY W",
                                   "grad weight dY^T X"};
  state.SetLabel(std::string(gProvider->name) + " " + kLayouts[layout]);
}

} // namespace

BENCHMARK(benchGemm)
    ->ArgsProduct({{1000, 10000}, {0, 1, 2}})
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime();

int main(int argc, char **argv) {
  std::string name = "openblas-pthread";
  int threads = 1;
  std::vector<char *> rest{argv[0]};
  for (int i = 1; i < argc; ++i) {
    if (!std::strcmp(argv[i], "--provider") && i + 1 < argc)
      name = argv[++i];
    else if (!std::strcmp(argv[i], "--threads") && i + 1 < argc)
      threads = std::atoi(argv[++i]);
    else
      rest.push_back(argv[i]);
  }
  for (const Provider &provider : kProviders)
    if (name == provider.name)
      gProvider = &provider;
  if (!gProvider) {
    std::fprintf(stderr,
                 "nn-gemm-bench: unknown provider '%s' (openblas-"
                 "pthread, openblas-openmp, blis-pthread, onednn)\n",
                 name.c_str());
    return 2;
  }
  void *library = dlopen(gProvider->library, RTLD_NOW | RTLD_LOCAL);
  if (!library) {
    std::printf("%s: not installed (%s)\n", gProvider->name, dlerror());
    return 0;
  }
  if (name == "onednn")
    gDnnl = (DnnlSgemm)dlsym(library, "dnnl_sgemm");
  else
    gCblas = (CblasSgemm)dlsym(library, "cblas_sgemm");
  auto setThreads = (SetThreads)dlsym(library, gProvider->threadsSymbol);
  if ((!gDnnl && !gCblas) || !setThreads) {
    std::fprintf(stderr, "nn-gemm-bench: %s lacks sgemm or %s\n",
                 gProvider->library, gProvider->threadsSymbol);
    return 1;
  }
  setThreads(threads);
  std::printf("provider %s (%s), %d threads, N = %d, K = %d\n", gProvider->name,
              gProvider->library, threads, kRows, kHidden);
  int restCount = (int)rest.size();
  benchmark::Initialize(&restCount, rest.data());
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
