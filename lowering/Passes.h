//===- Passes.h - lowering passes for nn ------------------------*- C++ -*-===//

#ifndef NN_LOWERING_PASSES_H
#define NN_LOWERING_PASSES_H

#include "support/OptionParsers.h"

#include "mlir/IR/BuiltinOps.h"
#include "mlir/Pass/Pass.h"

namespace mlir::nn {

/// The GEMM nn-gemm-to-blas calls; each target chooses one
/// (compiler/Target.h).
enum class GemmRuntime {
  /// OpenBLAS's CBLAS, linked into CPU artifacts.
  cblas,
  /// The runtime's oneDNN sgemm (f32; f64 stays CBLAS).
  onednn,
  /// The runtime's cuBLAS entry points.
  cuda,
};

} // namespace mlir::nn

template <> struct nn::EnumChoices<mlir::nn::GemmRuntime> {
  static constexpr const char *what = "GEMM runtime";
  static constexpr EnumChoice<mlir::nn::GemmRuntime> all[] = {
      {mlir::nn::GemmRuntime::cblas, "cblas", "OpenBLAS's cblas_*gemm"},
      {mlir::nn::GemmRuntime::onednn, "onednn", "the runtime's nn_cpu_sgemm"},
      {mlir::nn::GemmRuntime::cuda, "cuda",
       "the runtime's nn_cuda_sgemm/dgemm (cuBLAS)"},
  };
};
NN_ENUM_OPTION_PARSER(mlir::nn::GemmRuntime)

namespace mlir::nn {

/// The unit attribute nn-parallel-loops puts on the scf.parallel loops that
/// were loops over independent sequences (scf.forall);
/// nn-sequences-to-openmp schedules them dynamically.
inline constexpr llvm::StringLiteral kSequencesLoopAttr = "nn.sequences";

#define GEN_PASS_DECL
#include "lowering/Passes.h.inc"

#define GEN_PASS_REGISTRATION
#include "lowering/Passes.h.inc"

} // namespace mlir::nn

#endif // NN_LOWERING_PASSES_H
