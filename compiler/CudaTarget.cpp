//===- CudaTarget.cpp - the cuda target -----------------------------------===//
//
// NVIDIA GPUs: one kernel per linalg op through NVVM, embedded as PTX or
// cubin (GpuCodegenOptions), GEMMs through the runtime's cuBLAS entry
// points (nn-gpu-codegen, lowering/Pipelines.h). The manifest lists the
// kernels and the arguments host code reads (nn-gpu-place-buffers), so
// that the runtime's CUDA backend places those in managed memory.
//
//===----------------------------------------------------------------------===//

#include "compiler/LlvmTargets.h"
#include "compiler/ManifestBuilder.h"
#include "compiler/Target.h"

#include "dialects/nn/NNDialect.h"
#include "lowering/Pipelines.h"

#include "mlir/IR/BuiltinAttributes.h"

using namespace nn;
using namespace nn::compiler;

namespace {
class CudaTarget : public Target {
public:
  std::string name() const override { return "cuda"; }
  std::string description() const override {
    return "an NVIDIA GPU (kernels through NVVM, cuBLAS GEMMs)";
  }

  // NCCL sums on the device's stream and the start waits for it: started
  // in the middle of the backward, each sum would leave the GPU idle while
  // the host launches the kernels after it. Sums after the backward cost
  // one such wait.
  bool overlapsSums() const override { return false; }

  absl::Status checkOptions(const CompileOptions &options) const override {
    // The chip before the toolkit: a chip NVPTX does not know is wrong
    // wherever the compiler runs (and LLVM aborts selecting code for it).
    if (absl::Status chip = checkGpuChip(options.gpu.chip); !chip.ok())
      return chip;
    if (mlir::nn::findCudaToolkit(options.gpu.toolkit).empty())
      return absl::FailedPreconditionError(
          "the cuda target needs the CUDA toolkit's libdevice "
          "(nvvm/libdevice/libdevice.10.bc) for math in kernels: none under "
          "$CUDA_ROOT, $CUDA_HOME, $CUDA_PATH or /usr/local/cuda");
    return absl::OkStatus();
  }

  void buildCodegenPipeline(mlir::OpPassManager &pm,
                            const CompileOptions &options) const override {
    mlir::nn::buildGpuCodegenPipeline(pm, options.codegen, options.gpu);
  }

  absl::Status finishManifest(mlir::ModuleOp module, const std::string &graph,
                              const CompileOptions &options,
                              Manifest &manifest) const override {
    manifest.target = name();
    if (absl::Status status =
            collectKernels(module, options.gpuCodeDir, manifest);
        !status.ok())
      return status;
    // nn-gpu-place-buffers says which arguments host code reads.
    if (auto placement = module->getAttrOfType<mlir::DictionaryAttr>(
            mlir::nn::NNDialect::HostVisibleArgsAttrHelper::getNameStr())) {
      if (auto indices = placement.getAs<mlir::DenseI64ArrayAttr>(graph))
        manifest.hostVisibleArguments.assign(indices.asArrayRef().begin(),
                                             indices.asArrayRef().end());
      module->removeAttr(
          mlir::nn::NNDialect::HostVisibleArgsAttrHelper::getNameStr());
    }
    return absl::OkStatus();
  }
};
} // namespace

std::shared_ptr<const Target> nn::compiler::createCudaTarget() {
  return std::make_shared<CudaTarget>();
}
