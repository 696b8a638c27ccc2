//===- CpuTarget.cpp - the cpu target -------------------------------------===//
//
// Host code only: loops on OpenMP threads (CpuCodegenOptions::threads) and
// GEMMs through oneDNN or OpenBLAS (nn-cpu-codegen, lowering/Pipelines.h).
// The manifest names the target; there are no kernels.
//
//===----------------------------------------------------------------------===//

#include "compiler/Target.h"

#include "lowering/Pipelines.h"

using namespace nn;
using namespace nn::compiler;

namespace {
class CpuTarget : public Target {
public:
  std::string name() const override { return "cpu"; }
  std::string description() const override {
    return "this machine's CPU (OpenMP threads, oneDNN or OpenBLAS GEMMs)";
  }
  void buildCodegenPipeline(mlir::OpPassManager &pm,
                            const CompileOptions &options) const override {
    mlir::nn::buildCpuCodegenPipeline(pm, options.codegen, options.cpu);
  }
};
} // namespace

std::shared_ptr<const Target> nn::compiler::createCpuTarget() {
  return std::make_shared<CpuTarget>();
}
