//===- LlvmTargets.h - the LLVM backends the compiler uses ------*- C++ -*-===//
//
// The one place the compiler initializes LLVM targets (the host's for CPU
// artifacts, NVPTX for kernels) and asks them what they support, so that
// an option they cannot compile for is an error before any code
// generation: LLVM aborts ("Cannot select") on a processor it does not
// know.
//
//===----------------------------------------------------------------------===//

#ifndef NN_COMPILER_LLVMTARGETS_H
#define NN_COMPILER_LLVMTARGETS_H

#include "absl/status/status.h"

#include <string>

namespace nn::compiler {

/// Initializes the native target (with its asm printer) and NVPTX once;
/// every use of LLVM's target registry calls it first.
void initializeLlvmTargets();

/// OK when NVPTX knows `chip` as a processor ("sm_90") that the kernels
/// can be compiled for (sm_30 on); otherwise an error naming it and
/// listing the processors that are.
absl::Status checkGpuChip(const std::string &chip);

} // namespace nn::compiler

#endif // NN_COMPILER_LLVMTARGETS_H
