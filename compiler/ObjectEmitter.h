//===- ObjectEmitter.h - LLVM IR to a shared object -------------*- C++ -*-===//
//
// The last step of the compiler: optimizes an artifact's LLVM module (O3,
// vectorizers on, tuned for the host: artifacts are compiled where they
// run), emits object code and links it into a shared object with the
// system's `cc` (OpenBLAS for CPU artifacts, libm).
//
//===----------------------------------------------------------------------===//

#ifndef NN_COMPILER_OBJECTEMITTER_H
#define NN_COMPILER_OBJECTEMITTER_H

#include "absl/status/status.h"

#include <string>

namespace llvm {
class Module;
} // namespace llvm

namespace nn::compiler {

/// Writes `module` as a shared object to `path`, linked with the
/// libraries its declarations call: OpenBLAS for `cblas_*`, LLVM's OpenMP
/// runtime for `__kmpc_*`. The runtime's entry points (`nn_cpu_*`,
/// `nn_cuda_*`, the allocator) resolve when the runtime loads it.
absl::Status emitSharedObject(llvm::Module &module, const std::string &path);

} // namespace nn::compiler

#endif // NN_COMPILER_OBJECTEMITTER_H
