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
#include "mlir/Dialect/SCF/Transforms/Passes.h"
#include "mlir/Pass/PassRegistry.h"
#include "mlir/Transforms/Passes.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Path.h"

#include <cstdlib>

using namespace mlir;
using namespace mlir::nn;

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

mlir::nn::NNPipelineOptions::NNPipelineOptions() {
  bound.declare(CompileRequest());
  bound.declare(::nn::OptimizeOptions());
  bound.declare(::nn::OptimizerOptions());
  bound.declare(::nn::CodegenOptions());
  bound.declare(::nn::CpuCodegenOptions());
  bound.declare(::nn::GpuCodegenOptions());
}

PipelineSettings mlir::nn::NNPipelineOptions::settings() const {
  PipelineSettings settings;
  settings.request = bound.read<CompileRequest>();
  settings.request.inputGrads.assign(inputGrads.begin(), inputGrads.end());
  settings.optimize = bound.read<::nn::OptimizeOptions>();
  settings.optimizer = bound.read<::nn::OptimizerOptions>();
  settings.codegen = bound.read<::nn::CodegenOptions>();
  settings.cpu = bound.read<::nn::CpuCodegenOptions>();
  settings.gpu = bound.read<::nn::GpuCodegenOptions>();
  return settings;
}

void mlir::nn::buildOptimizePipeline(OpPassManager &pm,
                                     const PipelineSettings &settings) {
  const CompileRequest &request = settings.request;
  const ::nn::OptimizeOptions &optimize = settings.optimize;
  bool trainStep = request.grads && request.trainStep;
  // First: a predictor's step form comes from the graph as written, before
  // dropout and autodiff rewrite it for training.
  pm.addPass(createNNDeriveStepGraphs());
  // A train step returns none of the graph's results: gone before packing
  // and fusion look at their uses.
  if (trainStep) {
    NNDropResultsOptions drop;
    drop.graphName = request.graph;
    pm.addPass(createNNDropResults(drop));
  }
  // Before packing: the seed is an argument like any other.
  if (request.training) {
    // A data-parallel rank's masks are those of the whole batch.
    NNDropoutTrainingOptions dropout;
    dropout.batchOffset = trainStep && settings.optimizer.dataParallel;
    pm.addPass(createNNDropoutTraining(dropout));
  }
  // After dropout's seeds (an inlined dropout reads the seed its call
  // passed), before packing: a model behind a call packs like one written
  // inline.
  if (optimize.inlineCalls) {
    NNInlineCallsOptions inlining;
    inlining.graph = request.graph;
    pm.addPass(createNNInlineCalls(inlining));
  }
  if (optimize.pack) {
    NNPackBeforeLossOptions packing;
    packing.pack = optimize.packFrontier;
    packing.expectedFill = optimize.packExpectedFill;
    pm.addPass(createNNPackBeforeLoss(packing));
  }
  // After packing (a packed tail fuses on packed rows), before autodiff
  // (the fused op's gradient never forms the logits either).
  NNFuseLossTailOptions fuse;
  fuse.backward = optimize.lossTailBackward;
  if (optimize.fuseLossTail)
    pm.addPass(createNNFuseLossTail(fuse));
  // After packing: the backward of a packed tail runs on packed rows.
  if (request.grads) {
    NNAutodiffOptions autodiff;
    autodiff.graphName = request.graph;
    autodiff.inputNames = request.inputGrads;
    pm.addPass(createNNAutodiff(autodiff));
    // The LSTM backward reads its forward's tape.
    if (optimize.saveLstmTape)
      pm.addPass(createNNSaveLstmTape());
    // Likewise each attention's backward reads its forward's statistics.
    if (optimize.saveAttentionStats)
      pm.addPass(createNNSaveAttentionStats());
    // Before the loss tail's gradient merges: the merged op takes the
    // normalization summed over the processes.
    if (trainStep && settings.optimizer.dataParallel) {
      NNAllReduceGradientsOptions reduce;
      reduce.graphName = request.graph;
      reduce.bucketMb = settings.optimizer.allReduceBucketMb;
      reduce.overlap = settings.optimizer.allReduceOverlap;
      pm.addPass(createNNAllReduceGradients(reduce));
    }
    // Each fused loss and its gradient merged into one sweep.
    if (optimize.fuseLossTail)
      pm.addPass(createNNFuseLossTail(fuse));
    if (trainStep) {
      NNTrainStepOptions step;
      step.graphName = request.graph;
      pm.addPass(createNNTrainStep(step, settings.optimizer));
    }
  }
  // nn folds (pack(unpack(p)), dropout with rate 0) and dead nn ops.
  pm.addPass(createCanonicalizerPass());
}

void mlir::nn::buildToBuffersPipeline(OpPassManager &pm) {
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

void mlir::nn::buildCpuCodegenPipeline(OpPassManager &pm,
                                       const ::nn::CodegenOptions &codegen,
                                       const ::nn::CpuCodegenOptions &cpu) {
  // Each buffer freed after its last use, not when its block ends: a
  // train step's peak is then what is live at once, not all it allocates.
  pm.addPass(createNNFreeAfterLastUse());
  if (codegen.blas) {
    // oneDNN's sgemm at AVX-512 width, OpenBLAS limited to AVX2 here
    // (docs/performance.md, "GEMM providers").
    NNGemmToBlasOptions gemm;
    gemm.runtime = cpu.gemmLibrary == ::nn::GemmLibrary::openblas
                       ? GemmRuntime::cblas
                       : GemmRuntime::onednn;
    pm.addPass(createNNGemmToBlas(gemm));
  }
  if (cpu.threads) {
    // One level of threads per loop nest, where the work pays for them
    // (docs/performance.md, "Threads").
    pm.addNestedPass<func::FuncOp>(createConvertLinalgToParallelLoopsPass());
    pm.addPass(createNNParallelLoops());
    pm.addPass(createNNRegisterAccumulators());
    pm.addPass(createNNSequencesToOpenMP());
    pm.addPass(createNNInlineAllocaScopes());
  } else {
    pm.addPass(createForallToForLoopPass());
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

std::string mlir::nn::findCudaToolkit(const std::string &given) {
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

void mlir::nn::buildGpuCodegenPipeline(OpPassManager &pm,
                                       const ::nn::CodegenOptions &codegen,
                                       const ::nn::GpuCodegenOptions &gpu) {
  if (codegen.blas) {
    NNGemmToBlasOptions gemm;
    gemm.runtime = GemmRuntime::cuda;
    pm.addPass(createNNGemmToBlas(gemm));
  }
  // Sequences run one after another: each is a host loop launching a
  // kernel per frame.
  pm.addPass(createForallToForLoopPass());
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
  target.chip = gpu.chip;
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
  binary.compilationTarget =
      gpu.binary == ::nn::GpuBinary::cubin ? "bin" : "isa";
  // Explicit, so that libdevice is linked whatever the environment says.
  binary.toolkitPath = findCudaToolkit(gpu.toolkit);
  pm.addPass(createGpuModuleToBinaryPass(binary));
  // Host allocations are device buffers, allocated by the CUDA backend.
  pm.addPass(createNNGpuAllocators());
}

/// The tail of one target's pipelines: bufferized linalg onwards.
using CodegenBuilder = void (*)(OpPassManager &, const PipelineSettings &);

/// Registers NAME-codegen (the tail alone) and NAME (nn graphs through
/// the nn-level passes and nn-to-buffers, then the tail).
static void registerTargetPipelines(StringRef name, StringRef what,
                                    CodegenBuilder codegen) {
  PassPipelineRegistration<NNPipelineOptions>(
      (name + "-codegen").str(), ("bufferized linalg to " + what).str(),
      [codegen](OpPassManager &pm, const NNPipelineOptions &options) {
        codegen(pm, options.settings());
      });
  PassPipelineRegistration<NNPipelineOptions>(
      name, ("nn graphs to " + what).str(),
      [codegen](OpPassManager &pm, const NNPipelineOptions &options) {
        PipelineSettings settings = options.settings();
        buildOptimizePipeline(pm, settings);
        buildToBuffersPipeline(pm);
        codegen(pm, settings);
      });
}

void mlir::nn::registerPipelines() {
  registerNNLoweringPasses();
  PassPipelineRegistration<NNPipelineOptions>(
      "nn-optimize", "nn-level passes (pack-before-loss unless pack=false)",
      [](OpPassManager &pm, const NNPipelineOptions &options) {
        buildOptimizePipeline(pm, options.settings());
      });
  PassPipelineRegistration<>(
      "nn-to-buffers",
      "nn graphs to bufferized linalg on memrefs (shared by all targets)",
      buildToBuffersPipeline);
  registerTargetPipelines(
      "nn-cpu", "the LLVM dialect for CPUs",
      [](OpPassManager &pm, const PipelineSettings &settings) {
        buildCpuCodegenPipeline(pm, settings.codegen, settings.cpu);
      });
  registerTargetPipelines(
      "nn-gpu", "GPU kernels (gpu.binary) and host LLVM dialect",
      [](OpPassManager &pm, const PipelineSettings &settings) {
        buildGpuCodegenPipeline(pm, settings.codegen, settings.gpu);
      });
}
