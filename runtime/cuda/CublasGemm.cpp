//===- CublasGemm.cpp - the CUDA device's GEMMs, on cuBLAS ----------------===//

#include "runtime/cuda/CublasGemm.h"

#include <dlfcn.h>
#include <string>
#include <vector>

using namespace nn;
using namespace nn::cuda;
using namespace nn::cuda::abi;

absl::StatusOr<std::shared_ptr<CublasGemm>>
CublasGemm::create(CudaDevice &device, const CudaOptions &options) {
  std::shared_ptr<CublasGemm> blas(new CublasGemm(device));
  std::vector<std::string> candidates{"libcublas.so.13", "libcublas.so.12",
                                      "libcublas.so"};
  if (!options.cublasLibrary.empty())
    candidates = {options.cublasLibrary};
  for (const std::string &candidate : candidates)
    if ((blas->library = dlopen(candidate.c_str(), RTLD_NOW | RTLD_LOCAL)))
      break;
  if (!blas->library)
    return absl::UnavailableError(
        options.cublasLibrary.empty()
            ? "cannot load cuBLAS (libcublas.so.13, .12 or .so; "
              "NN_CUBLAS_LIBRARY names another)"
            : "cannot load cuBLAS " + options.cublasLibrary);
  bool ok = true;
#define NN_CUBLAS_RESOLVE(member, symbol, result, parameters)                  \
  ok = ok && (blas->api.member = reinterpret_cast<decltype(blas->api.member)>( \
                  dlsym(blas->library, symbol)));
  NN_CUBLAS_FUNCTIONS(NN_CUBLAS_RESOLVE)
#undef NN_CUBLAS_RESOLVE
  if (!ok)
    return absl::UnavailableError(
        "cuBLAS lacks cublasCreate_v2/SetStream_v2/Sgemm_v2/Dgemm_v2");
  cublasStatus_t status = blas->api.cublasCreate(&blas->handle);
  if (status == 0)
    status = blas->api.cublasSetStream(blas->handle, device.getStream());
  if (status != 0)
    return absl::UnavailableError(
        "cublasCreate_v2/cublasSetStream_v2 failed with status " +
        std::to_string(status));
  return blas;
}

absl::Status CublasGemm::gemm(const runtime::GemmCall &g) {
  absl::Status ready = device.availability();
  if (!ready.ok())
    return ready;
  const char *callName =
      g.dtype == DType::f64 ? "cublasDgemm_v2" : "cublasSgemm_v2";
  std::string what = "in " + runtime::describeGemm(g);
  if (g.dtype != DType::f32 && g.dtype != DType::f64)
    return absl::InternalError(std::string(callName) +
                               ": unsupported element type " + what);
  if (g.m == 0 || g.n == 0)
    return absl::OkStatus();
  int opA = g.transA ? kCublasOpT : kCublasOpN;
  int opB = g.transB ? kCublasOpT : kCublasOpN;
  // Row-major C = op(A) op(B) is column-major C^T = op(B)^T op(A)^T: swap
  // the operands, keep each one's transpose flag.
  std::string profileName =
      std::string(callName) + " " + (g.origin ? g.origin : "");
  absl::Status result = device.profiled(profileName, what, [&] {
    cublasStatus_t status;
    if (g.dtype == DType::f32) {
      float alpha = (float)g.alpha, beta = (float)g.beta;
      status = api.cublasSgemm(handle, opB, opA, g.n, g.m, g.k, &alpha,
                               (const float *)g.b, g.ldb, (const float *)g.a,
                               g.lda, &beta, (float *)g.c, g.ldc);
    } else {
      status = api.cublasDgemm(handle, opB, opA, g.n, g.m, g.k, &g.alpha,
                               (const double *)g.b, g.ldb, (const double *)g.a,
                               g.lda, &g.beta, (double *)g.c, g.ldc);
    }
    return status == 0
               ? absl::OkStatus()
               : absl::InternalError(std::string(callName) +
                                     " failed with cuBLAS status " +
                                     std::to_string(status) + " " + what);
  });
  if (!result.ok())
    return result;
  // Host code may read the result next (kernel launches synchronize too).
  return device.check(device.getApi().cuStreamSynchronize(device.getStream()),
                      "cuStreamSynchronize", "after the GEMM " + what);
}
