//===- Pipelines.cpp - the registered nn compilation pipelines ------------===//

#include "lowering/Pipelines.h"

#include "lowering/Passes.h"
#include "passes/Passes.h"

#include "mlir/Conversion/Passes.h"
#include "mlir/Dialect/Arith/Transforms/Passes.h"
#include "mlir/Dialect/Bufferization/Pipelines/Passes.h"
#include "mlir/Dialect/Bufferization/Transforms/OneShotAnalysis.h"
#include "mlir/Dialect/Bufferization/Transforms/Passes.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Linalg/Passes.h"
#include "mlir/Dialect/MemRef/Transforms/Passes.h"
#include "mlir/Pass/PassRegistry.h"
#include "mlir/Transforms/Passes.h"

using namespace mlir;

void nn::buildOptimizePipeline(OpPassManager &pm,
                               const NNPipelineOptions &options) {
  if (options.pack)
    pm.addPass(createNNPackBeforeLoss());
}

void nn::buildToBuffersPipeline(OpPassManager &pm) {
  pm.addPass(createConvertNNToLinalg());
  pm.addPass(createCanonicalizerPass());
  pm.addPass(createCSEPass());
  bufferization::OneShotBufferizationOptions bufferization;
  bufferization.bufferizeFunctionBoundaries = true;
  // Recurrences carry freshly computed states through scf.for.
  bufferization.allowReturnAllocsFromLoops = true;
  bufferization.setFunctionBoundaryTypeConversion(
      bufferization::LayoutMapOption::IdentityLayoutMap);
  pm.addPass(bufferization::createOneShotBufferizePass(bufferization));
  // Folds self-copies before deallocation is decided.
  pm.addPass(createCSEPass());
  pm.addPass(createCanonicalizerPass());
  bufferization::BufferDeallocationPipelineOptions deallocation;
  bufferization::buildBufferDeallocationPipeline(pm, deallocation);
  pm.addPass(createBufferizationToMemRefPass());
  pm.addPass(createNNCopiesToLinalg());
}

void nn::buildCpuCodegenPipeline(OpPassManager &pm,
                                 const NNPipelineOptions &options) {
  if (options.blas)
    pm.addPass(createNNGemmToBlas());
  pm.addNestedPass<func::FuncOp>(createConvertLinalgToLoopsPass());
  // ceildiv and friends have no direct LLVM lowering.
  pm.addPass(arith::createArithExpandOpsPass());
  pm.addPass(createNNApproximateMath());
  pm.addPass(memref::createExpandStridedMetadataPass());
  pm.addPass(createLowerAffinePass());
  pm.addPass(createConvertSCFToCFPass());
  pm.addPass(createConvertVectorToLLVMPass());
  // Buffers come from the runtime's allocator (_mlir_memref_to_llvm_alloc /
  // _free, which libNNRuntime exports), which keeps large blocks for reuse.
  FinalizeMemRefToLLVMConversionPassOptions memrefOptions;
  memrefOptions.useGenericFunctions = true;
  pm.addPass(createFinalizeMemRefToLLVMConversionPass(memrefOptions));
  pm.addPass(createConvertMathToLLVMPass());
  // What LLVM has no intrinsic for (erf, tanh) becomes a libm call.
  pm.addPass(createConvertMathToLibmPass());
  pm.addPass(createArithToLLVMConversionPass());
  pm.addPass(createConvertIndexToLLVMPass());
  pm.addPass(createConvertFuncToLLVMPass());
  pm.addPass(createConvertControlFlowToLLVMPass());
  pm.addPass(createReconcileUnrealizedCastsPass());
}

void nn::buildCpuPipeline(OpPassManager &pm, const NNPipelineOptions &options) {
  buildOptimizePipeline(pm, options);
  buildToBuffersPipeline(pm);
  buildCpuCodegenPipeline(pm, options);
}

void nn::registerPipelines() {
  registerNNLoweringPasses();
  PassPipelineRegistration<NNPipelineOptions>(
      "nn-optimize", "nn-level passes (pack-before-loss unless pack=false)",
      buildOptimizePipeline);
  PassPipelineRegistration<>(
      "nn-to-buffers",
      "nn graphs to bufferized linalg on memrefs (shared by all targets)",
      buildToBuffersPipeline);
  PassPipelineRegistration<NNPipelineOptions>(
      "nn-cpu-codegen", "bufferized linalg to the LLVM dialect for CPUs",
      buildCpuCodegenPipeline);
  PassPipelineRegistration<NNPipelineOptions>(
      "nn-cpu", "nn graphs to the LLVM dialect for CPUs", buildCpuPipeline);
}
