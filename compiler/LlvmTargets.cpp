//===- LlvmTargets.cpp - the LLVM backends the compiler uses --------------===//

#include "compiler/LlvmTargets.h"

#include "llvm/ADT/StringRef.h"
#include "llvm/MC/MCSubtargetInfo.h"
#include "llvm/MC/TargetRegistry.h"
#include "llvm/Support/TargetSelect.h"

#include <memory>
#include <string>

void nn::compiler::initializeLlvmTargets() {
  static bool initialized = [] {
    llvm::InitializeNativeTarget();
    llvm::InitializeNativeTargetAsmPrinter();
    // MLIR's NVVM serializer initializes NVPTX itself when it runs; the
    // chip check runs before it, and needs the target and its MC layer.
    LLVMInitializeNVPTXTargetInfo();
    LLVMInitializeNVPTXTarget();
    LLVMInitializeNVPTXTargetMC();
    LLVMInitializeNVPTXAsmPrinter();
    return true;
  }();
  (void)initialized;
}

namespace {

/// The kernels use warp shuffles (shfl.sync), which NVPTX selects from
/// sm_30 on; for sm_20 and sm_21 it aborts ("Cannot select: intrinsic").
constexpr int kMinimumSmVersion = 30;

/// NN of "sm_NN" or "sm_NNa"; -1 for anything else.
int smVersion(llvm::StringRef chip) {
  unsigned version;
  if (!chip.consume_front("sm_") || chip.consumeInteger(10, version))
    return -1;
  return chip.empty() || chip == "a" ? static_cast<int>(version) : -1;
}

} // namespace

absl::Status nn::compiler::checkGpuChip(const std::string &chip) {
  initializeLlvmTargets();
  const char *triple = "nvptx64-nvidia-cuda";
  std::string error;
  const llvm::Target *target =
      llvm::TargetRegistry::lookupTarget(triple, error);
  if (!target)
    return absl::InternalError("this build of LLVM has no NVPTX backend: " +
                               error);
  // An empty CPU: the subtarget only lists the processors here.
  std::unique_ptr<llvm::MCSubtargetInfo> info(
      target->createMCSubtargetInfo(triple, "", ""));
  if (!info)
    return absl::InternalError("the NVPTX backend has no subtarget info");
  if (!chip.empty() && info->isCPUStringValid(chip) &&
      smVersion(chip) >= kMinimumSmVersion)
    return absl::OkStatus();
  std::string valid;
  for (const llvm::SubtargetSubTypeKV &processor :
       info->getAllProcessorDescriptions())
    if (smVersion(processor.Key) >= kMinimumSmVersion)
      valid += (valid.empty() ? "" : ", ") + std::string(processor.Key);
  return absl::InvalidArgumentError(
      "unknown GPU architecture '" + chip + "': the cuda target compiles for " +
      valid + " (what LLVM's NVPTX backend knows, from sm_" +
      std::to_string(kMinimumSmVersion) +
      " on: the kernels use warp shuffles)");
}
