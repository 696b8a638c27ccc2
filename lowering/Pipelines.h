//===- Pipelines.h - the registered nn compilation pipelines ----*- C++ -*-===//
//
// Every tool (nn-opt, nn-run, the compiler API) builds its pass manager
// with these functions, so they all run the identical pipeline:
//
//   nn-optimize     nn-level passes: nn-drop-results (train step),
//                   nn-dropout-training (training=true),
//                   nn-pack-before-loss (unless pack=false),
//                   nn-fuse-loss-tail, then with grads=true nn-autodiff,
//                   nn-save-lstm-tape, nn-save-attention-stats,
//                   nn-fuse-loss-tail again (each loss
//                   merged with its gradient) and with train-step=true
//                   nn-train-step; canonicalize
//   nn-to-buffers   nn -> linalg/tensor -> bufferized memrefs; shared by
//                   every target
//   nn-cpu-codegen  bufferized linalg -> BLAS calls (unless blas=false)
//                   and loops -> LLVM dialect
//   nn-cpu          all three
//   nn-gpu-codegen  bufferized linalg -> cuBLAS calls + gpu kernels ->
//                   host LLVM dialect + gpu.binary (PTX or cubin)
//   nn-gpu          nn-optimize + nn-to-buffers + nn-gpu-codegen
//
// The builders take PipelineSettings: what to compile (gradients, a train
// step) and the options structs of nn/Options.h, which declare every
// tuning option once. NNPipelineOptions is the same as textual pipeline
// options for nn-opt (`nn-cpu{gemm-library=openblas}`).
//
//===----------------------------------------------------------------------===//

#ifndef NN_LOWERING_PIPELINES_H
#define NN_LOWERING_PIPELINES_H

#include "nn/Options.h"
#include "support/PassOptionBinder.h"

#include "mlir/Pass/PassManager.h"
#include "mlir/Pass/PassOptions.h"

#include <string>
#include <vector>

namespace mlir::nn {

/// What the nn-level pipeline makes of the entry graph, beyond the options.
struct CompileRequest {
  /// Training mode: dropout draws its mask from a 'dropout_seed' input
  /// (nn-dropout-training); else it is the identity.
  bool training = false;
  /// Return the gradient of the training objective with respect to every
  /// parameter (nn-autodiff).
  bool grads = false;
  /// With grads: also these float inputs of the graph.
  std::vector<std::string> inputGrads;
  /// With grads: make the graph one optimizer step (nn-train-step).
  bool trainStep = false;
  /// The graph to compile (default: the one no graph calls).
  std::string graph;

  /// The options of the registered pipelines (`input-grads`, a list, is
  /// declared by NNPipelineOptions itself).
  template <typename Binder> void bindOptions(Binder &binder) {
    binder.bind(training, {"training", "Training mode: dropout draws its mask "
                                       "from a 'dropout_seed' input "
                                       "(nn-dropout-training); else it is "
                                       "the identity"});
    binder.bind(grads, {"grads", "Return the gradient of the training "
                                 "objective with respect to every parameter "
                                 "(nn-autodiff)"});
    binder.bind(trainStep, {"train-step", "With grads: make the graph one "
                                          "optimizer step (nn-train-step)"});
    binder.bind(graph, {"graph", "The graph to compile (default: the one no "
                                 "graph calls)"});
  }
};

/// Everything the pipeline builders read.
struct PipelineSettings {
  CompileRequest request;
  ::nn::OptimizeOptions optimize;
  ::nn::OptimizerOptions optimizer;
  ::nn::CodegenOptions codegen;
  ::nn::CpuCodegenOptions cpu;
  ::nn::GpuCodegenOptions gpu;
};

/// PipelineSettings as the options of the registered pipelines.
class NNPipelineOptions : public PassPipelineOptions<NNPipelineOptions> {
public:
  NNPipelineOptions();
  /// The options as parsed (defaults where not given).
  PipelineSettings settings() const;

private:
  ::nn::support::PassOptionBinder<mlir::detail::PassOptions> bound{*this};
  // `input-grads` is a list, which binders do not take.
  ListOption<std::string> inputGrads{
      *this, "input-grads",
      llvm::cl::desc("With grads: also return the gradient with respect to "
                     "these float inputs of the graph")};
};

/// The CUDA toolkit the GPU pipeline uses: `given` when set, else the first
/// of $CUDA_ROOT, $CUDA_HOME, $CUDA_PATH and /usr/local/cuda that holds
/// nvvm/libdevice/libdevice.10.bc; empty when none does. Math functions in
/// kernels (expf, logf, tanhf) come from libdevice.
std::string findCudaToolkit(const std::string &given = "");

void buildOptimizePipeline(OpPassManager &pm, const PipelineSettings &settings);
void buildToBuffersPipeline(OpPassManager &pm);
void buildCpuCodegenPipeline(OpPassManager &pm,
                             const ::nn::CodegenOptions &codegen,
                             const ::nn::CpuCodegenOptions &cpu);
void buildGpuCodegenPipeline(OpPassManager &pm,
                             const ::nn::CodegenOptions &codegen,
                             const ::nn::GpuCodegenOptions &gpu);

/// Registers the pipelines above (and the nn lowering passes) with the
/// global registry, for nn-opt.
void registerPipelines();

} // namespace mlir::nn

#endif // NN_LOWERING_PIPELINES_H
