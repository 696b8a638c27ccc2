//===- Pipelines.h - the registered nn compilation pipelines ----*- C++ -*-===//
//
// Every tool (nn-opt, nn-run, the compiler API) builds its pass manager
// with these functions, so they all run the identical pipeline:
//
//   nn-optimize     nn-level passes (pack-before-loss unless pack=false)
//   nn-to-buffers   nn -> linalg/tensor -> bufferized memrefs; shared by
//                   every target
//   nn-cpu-codegen  bufferized linalg -> CBLAS calls (unless blas=false)
//                   and loops -> LLVM dialect
//   nn-cpu          all three
//
//===----------------------------------------------------------------------===//

#ifndef NN_LOWERING_PIPELINES_H
#define NN_LOWERING_PIPELINES_H

#include "mlir/Pass/PassManager.h"
#include "mlir/Pass/PassOptions.h"

namespace mlir::nn {

struct NNPipelineOptions : public PassPipelineOptions<NNPipelineOptions> {
  PassOptions::Option<bool> pack{
      *this, "pack",
      llvm::cl::desc("Run each loss's frame-wise tail on packed frames"),
      llvm::cl::init(true)};
  PassOptions::Option<bool> blas{
      *this, "blas",
      llvm::cl::desc("Call CBLAS for GEMMs (else generated loops)"),
      llvm::cl::init(true)};
};

void buildOptimizePipeline(OpPassManager &pm, const NNPipelineOptions &options);
void buildToBuffersPipeline(OpPassManager &pm);
void buildCpuCodegenPipeline(OpPassManager &pm,
                             const NNPipelineOptions &options);
void buildCpuPipeline(OpPassManager &pm, const NNPipelineOptions &options);

/// Registers the pipelines above (and the nn lowering passes) with the
/// global registry, for nn-opt.
void registerPipelines();

} // namespace mlir::nn

#endif // NN_LOWERING_PIPELINES_H
