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
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/GPU/Transforms/Passes.h"
#include "mlir/Dialect/Linalg/Passes.h"
#include "mlir/Dialect/MemRef/Transforms/Passes.h"
#include "mlir/Pass/PassRegistry.h"
#include "mlir/Transforms/Passes.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Path.h"

#include <cstdlib>

using namespace mlir;

/// The host half of both targets: memrefs, control flow and arithmetic to
/// the LLVM dialect. Buffers come from the runtime's allocator
/// (_mlir_memref_to_llvm_alloc / _free; the compiler renames them for GPU
/// artifacts).
static void buildHostToLLVMPipeline(OpPassManager &pm) {
  pm.addPass(memref::createExpandStridedMetadataPass());
  pm.addPass(createLowerAffinePass());
  pm.addPass(createConvertSCFToCFPass());
  pm.addPass(createConvertVectorToLLVMPass());
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
  // Threaded loops (CPU): omp.parallel regions, outlined at translation.
  pm.addPass(createConvertOpenMPToLLVMPass());
}

void nn::buildOptimizePipeline(OpPassManager &pm,
                               const NNPipelineOptions &options) {
  // A train step returns none of the graph's results: gone before packing
  // and fusion look at their uses.
  if (options.grads && !options.optimizer.empty()) {
    NNDropResultsOptions drop;
    drop.graphName = options.graph;
    pm.addPass(createNNDropResults(drop));
  }
  // Before packing: the seed is an argument like any other.
  if (options.training)
    pm.addPass(createNNDropoutTraining());
  if (options.pack)
    pm.addPass(createNNPackBeforeLoss());
  // After packing (a packed tail fuses on packed rows), before autodiff
  // (the fused op's gradient never forms the logits either).
  NNFuseLossTailOptions fuse;
  fuse.backward = options.lossTailBackward;
  if (options.fuseLossTail)
    pm.addPass(createNNFuseLossTail(fuse));
  // After packing: the backward of a packed tail runs on packed rows.
  if (options.grads) {
    NNAutodiffOptions autodiff;
    autodiff.graphName = options.graph;
    autodiff.inputNames = options.inputGrads;
    pm.addPass(createNNAutodiff(autodiff));
    // The LSTM backward reads its forward's tape.
    if (options.saveLstmTape)
      pm.addPass(createNNSaveLstmTape());
    // Each fused loss and its gradient merged into one sweep.
    if (options.fuseLossTail)
      pm.addPass(createNNFuseLossTail(fuse));
    if (!options.optimizer.empty()) {
      NNTrainStepOptions step;
      step.graphName = options.graph;
      step.optimizer = options.optimizer;
      step.momentum = options.momentum;
      step.nesterov = options.nesterov;
      step.beta1 = options.beta1;
      step.beta2 = options.beta2;
      step.epsilon = options.epsilon;
      step.weightDecay = options.weightDecay;
      step.clipNorm = options.clipNorm;
      pm.addPass(createNNTrainStep(step));
    }
  }
  // nn folds (pack(unpack(p)), dropout with rate 0) and dead nn ops.
  pm.addPass(createCanonicalizerPass());
}

void nn::buildToBuffersPipeline(OpPassManager &pm) {
  pm.addPass(createNNConvertToLinalg());
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
  if (options.blas) {
    // oneDNN's sgemm at AVX-512 width, OpenBLAS limited to AVX2 here
    // (docs/performance.md, "GEMM providers").
    NNGemmToBlasOptions gemm;
    gemm.runtime = options.gemmLibrary == "openblas" ? "cblas" : "onednn";
    pm.addPass(createNNGemmToBlas(gemm));
  }
  if (options.threads) {
    // One level of threads per loop nest, where the work pays for them
    // (docs/performance.md, "Threads").
    pm.addNestedPass<func::FuncOp>(createConvertLinalgToParallelLoopsPass());
    pm.addPass(createNNParallelLoops());
    pm.addPass(createNNRegisterAccumulators());
    pm.addPass(createConvertSCFToOpenMPPass());
    pm.addPass(createNNInlineAllocaScopes());
  } else {
    pm.addNestedPass<func::FuncOp>(createConvertLinalgToLoopsPass());
    pm.addPass(createNNRegisterAccumulators());
  }
  // ceildiv and friends have no direct LLVM lowering; max and min stay
  // intrinsics, which LLVM vectorizes as reductions.
  pm.addPass(createNNExpandDivisions());
  pm.addPass(createNNApproximateMath());
  buildHostToLLVMPipeline(pm);
  pm.addPass(createReconcileUnrealizedCastsPass());
}

std::string nn::findCudaToolkit(const std::string &given) {
  if (!given.empty())
    return given;
  std::vector<std::string> candidates;
  for (const char *variable : {"CUDA_ROOT", "CUDA_HOME", "CUDA_PATH"})
    if (const char *value = std::getenv(variable))
      candidates.push_back(value);
  candidates.push_back("/usr/local/cuda");
  for (const std::string &root : candidates) {
    llvm::SmallString<256> libdevice(root);
    llvm::sys::path::append(libdevice, "nvvm", "libdevice", "libdevice.10.bc");
    if (llvm::sys::fs::exists(libdevice))
      return root;
  }
  return "";
}

void nn::buildGpuCodegenPipeline(OpPassManager &pm,
                                 const NNPipelineOptions &options) {
  if (options.blas) {
    NNGemmToBlasOptions gemm;
    gemm.runtime = "cuda";
    pm.addPass(createNNGemmToBlas(gemm));
  }
  // Every copy becomes a kernel: host code must not touch device data in
  // bulk.
  NNCopiesToLinalgOptions copies;
  copies.all = true;
  pm.addPass(createNNCopiesToLinalg(copies));
  pm.addPass(createLinalgGeneralizeNamedOpsPass());
  pm.addPass(createNNLinalgToGpu());
  pm.addPass(createGpuKernelOutliningPass());
  pm.addPass(createNNNameGpuKernels());
  pm.addPass(createNNGpuPlaceBuffers());
  // ceildiv and friends have no direct LLVM lowering.
  pm.addPass(arith::createArithExpandOpsPass());
  pm.addPass(createLowerAffinePass());
  // gpu.all_reduce lowering splits blocks: kernels must be a flat CFG.
  pm.addPass(createConvertSCFToCFPass());
  GpuNVVMAttachTargetOptions target;
  target.chip = options.chip;
  // PTX ISA 8.0 (CUDA 12.0) covers sm_80 and sm_90.
  target.features = "+ptx80";
  target.optLevel = 3;
  pm.addPass(createGpuNVVMAttachTarget(target));
  OpPassManager &kernels = pm.nest<gpu::GPUModuleOp>();
  kernels.addPass(createConvertGpuOpsToNVVMOps());
  kernels.addPass(createCanonicalizerPass());
  kernels.addPass(createCSEPass());
  kernels.addPass(createReconcileUnrealizedCastsPass());
  buildHostToLLVMPipeline(pm);
  // Launches become mgpu* calls, which libNNRuntime provides.
  pm.addPass(createGpuToLLVMConversionPass());
  pm.addPass(createReconcileUnrealizedCastsPass());
  GpuModuleToBinaryPassOptions binary;
  binary.compilationTarget = options.gpuFormat;
  // Explicit, so that libdevice is linked whatever the environment says.
  binary.toolkitPath = findCudaToolkit(options.cudaPath);
  pm.addPass(createGpuModuleToBinaryPass(binary));
  // Host allocations are device buffers, allocated by the CUDA backend.
  pm.addPass(createNNGpuAllocators());
}

void nn::buildGpuPipeline(OpPassManager &pm, const NNPipelineOptions &options) {
  buildOptimizePipeline(pm, options);
  buildToBuffersPipeline(pm);
  buildGpuCodegenPipeline(pm, options);
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
  PassPipelineRegistration<NNPipelineOptions>(
      "nn-gpu-codegen",
      "bufferized linalg to GPU kernels (gpu.binary) and host LLVM dialect",
      buildGpuCodegenPipeline);
  PassPipelineRegistration<NNPipelineOptions>(
      "nn-gpu", "nn graphs to GPU kernels and host LLVM dialect",
      buildGpuPipeline);
}
