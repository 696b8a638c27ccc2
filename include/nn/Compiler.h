//===- nn/Compiler.h - the embedded compiler API ----------------*- C++ -*-===//
//
// Compiles nn models (MLIR text) into executables. The header exposes no
// MLIR or LLVM types; the library links them, the Executable it returns
// does not need them (see nn/Runtime.h).
//
//   nn::CompileOptions options;
//   options.pack = true;
//   nn::Executable exe;
//   absl::Status status = nn::compileFile("model.mlir", options, exe);
//   nn::RunResult result;
//   status = exe.run(inputs, result);
//
//===----------------------------------------------------------------------===//

#ifndef NN_COMPILER_H
#define NN_COMPILER_H

#include "nn/Runtime.h"

#include <string>

namespace nn {

struct CompileOptions {
  /// Run each loss's frame-wise tail on packed frames (nn-pack-before-loss).
  bool pack = true;
  /// Call CBLAS (OpenBLAS) for GEMMs; false keeps generated loops, which
  /// the benchmark measures against it.
  bool blas = true;
  /// "cpu", or "cuda": kernels for an NVIDIA GPU (PTX through NVVM), GEMMs
  /// through cuBLAS, run by the runtime's CUDA backend. Compiling needs no
  /// GPU; running does.
  std::string target = "cpu";
  /// cuda: the SM architecture ("sm_80", "sm_90").
  std::string gpuChip = "sm_90";
  /// cuda: "ptx" (the driver compiles it when the artifact first runs) or
  /// "cubin" (ptxas at compile time; needs the CUDA toolkit).
  std::string gpuBinary = "ptx";
  /// cuda: when set, each kernel module's PTX (or cubin) is also written
  /// to this directory as <kernel>.ptx / <kernel>.cubin.
  std::string gpuCodeDir;
  /// The graph to compile; empty picks the one graph no other graph calls
  /// (an error when there are several).
  std::string entry;
  /// Where to keep the artifact (.so); empty writes a temporary file that
  /// is removed once loaded.
  std::string artifactPath;
};

/// Compiles `source` (MLIR text; `bufferName` names it in diagnostics).
/// Errors carry the diagnostics with their locations.
absl::Status compileSource(const std::string &source,
                           const std::string &bufferName,
                           const CompileOptions &options,
                           Executable &executable);
absl::Status compileFile(const std::string &path, const CompileOptions &options,
                         Executable &executable);

} // namespace nn

#endif // NN_COMPILER_H
