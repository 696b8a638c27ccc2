//===- Gemm.h - GEMM providers: the libraries a device's GEMMs run on -----===//
//
// GEMMs are not a method of the hardware: a library does them on a
// device's memory (cuBLAS on a CUDA device's stream, oneDNN on the host).
// A backend attaches the provider of its devices when it makes them
// (Device::setGemm); the entry points artifacts call (nn_cuda_sgemm,
// nn_cpu_sgemm) hand each call to it.
//
//===----------------------------------------------------------------------===//

#ifndef NN_RUNTIME_DEVICE_GEMM_H
#define NN_RUNTIME_DEVICE_GEMM_H

#include "nn/Manifest.h"

#include "absl/status/status.h"

#include <string>

namespace nn::runtime {

/// A row-major C = alpha op(A) op(B) + beta C on a device's buffers.
struct GemmCall {
  DType dtype = DType::f32;
  bool transA = false, transB = false;
  int m = 0, n = 0, k = 0;
  double alpha = 1, beta = 0;
  const void *a = nullptr, *b = nullptr;
  void *c = nullptr;
  int lda = 0, ldb = 0, ldc = 0;
  /// The nn op and its location, as the artifact names it, for messages and
  /// profile entries; null when it names none.
  const char *origin = nullptr;
};

/// "the GEMM of nn.linear at m.mlir:3:5 (M x N x K)", for messages.
std::string describeGemm(const GemmCall &call);

class GemmProvider {
public:
  virtual ~GemmProvider();
  /// The library, for messages: "cuBLAS", "oneDNN".
  virtual std::string name() const = 0;
  /// Runs `call`; its result is in C when this returns (host code may read
  /// it next). Internal (ResourceExhausted when memory ran out) with a
  /// message naming the library call and the GEMM otherwise.
  virtual absl::Status gemm(const GemmCall &call) = 0;
};

} // namespace nn::runtime

#endif // NN_RUNTIME_DEVICE_GEMM_H
