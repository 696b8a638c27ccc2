//===- Pipelines.h - the registered nn compilation pipelines ----*- C++ -*-===//
//
// Every tool (nn-opt, nn-run, the compiler API) builds its pass manager
// with these functions, so they all run the identical pipeline:
//
//   nn-optimize     nn-level passes (nn-dropout-training with
//                   training=true, pack-before-loss unless pack=false,
//                   then nn-autodiff with grads=true, then
//                   nn-train-step with an optimizer)
//   nn-to-buffers   nn -> linalg/tensor -> bufferized memrefs; shared by
//                   every target
//   nn-cpu-codegen  bufferized linalg -> BLAS calls (unless blas=false)
//                   and loops -> LLVM dialect
//   nn-cpu          all three
//   nn-gpu-codegen  bufferized linalg -> cuBLAS calls + gpu kernels ->
//                   host LLVM dialect + gpu.binary (PTX or cubin)
//   nn-gpu          nn-optimize + nn-to-buffers + nn-gpu-codegen
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
  PassOptions::Option<bool> fuseLossTail{
      *this, "fuse-loss-tail",
      llvm::cl::desc("Fuse linear -> (log_softmax ->) cross_entropy into one "
                     "op that never holds the logits (nn-fuse-loss-tail)"),
      llvm::cl::init(true)};
  PassOptions::Option<bool> saveLstmTape{
      *this, "save-lstm-tape",
      llvm::cl::desc("With grads: each LSTM's backward reads its forward's "
                     "tape instead of running the forward again "
                     "(nn-save-lstm-tape)"),
      llvm::cl::init(true)};
  PassOptions::Option<std::string> lossTailBackward{
      *this, "loss-tail-backward",
      llvm::cl::desc("The fused tail's gradient: sweep (with the forward) or "
                     "recompute (the logits again)"),
      llvm::cl::init("sweep")};
  PassOptions::Option<bool> training{
      *this, "training",
      llvm::cl::desc("Training mode: dropout draws its mask from a "
                     "'dropout_seed' input (nn-dropout-training); else it is "
                     "the identity"),
      llvm::cl::init(false)};
  PassOptions::Option<bool> grads{
      *this, "grads",
      llvm::cl::desc("Return the gradient of the training objective with "
                     "respect to every parameter (nn-autodiff)"),
      llvm::cl::init(false)};
  PassOptions::ListOption<std::string> inputGrads{
      *this, "input-grads",
      llvm::cl::desc("With grads: also return the gradient with respect to "
                     "these float inputs of the graph")};
  PassOptions::Option<std::string> graph{
      *this, "graph",
      llvm::cl::desc("With grads: the graph to differentiate (default: the "
                     "one no graph calls)"),
      llvm::cl::init("")};
  // With grads and an optimizer: nn-train-step's options.
  PassOptions::Option<std::string> optimizer{
      *this, "optimizer",
      llvm::cl::desc("With grads: make the graph one train step of this "
                     "optimizer (sgd, adam, adamw; nn-train-step)"),
      llvm::cl::init("")};
  PassOptions::Option<double> momentum{
      *this, "momentum", llvm::cl::desc("sgd: the momentum (0: none)"),
      llvm::cl::init(0.0)};
  PassOptions::Option<bool> nesterov{*this, "nesterov",
                                     llvm::cl::desc("sgd: Nesterov momentum"),
                                     llvm::cl::init(false)};
  PassOptions::Option<double> beta1{
      *this, "beta1", llvm::cl::desc("adam(w): beta1"), llvm::cl::init(0.9)};
  PassOptions::Option<double> beta2{
      *this, "beta2", llvm::cl::desc("adam(w): beta2"), llvm::cl::init(0.999)};
  PassOptions::Option<double> epsilon{*this, "epsilon",
                                      llvm::cl::desc("adam(w): epsilon"),
                                      llvm::cl::init(1e-8)};
  PassOptions::Option<double> weightDecay{
      *this, "weight-decay",
      llvm::cl::desc("L2 coefficient (sgd, adam) or decoupled decay (adamw)"),
      llvm::cl::init(0.0)};
  PassOptions::Option<double> clipNorm{
      *this, "clip-norm",
      llvm::cl::desc("Clip gradients to this global norm (0: off)"),
      llvm::cl::init(0.0)};
  PassOptions::Option<bool> threads{
      *this, "threads",
      llvm::cl::desc("CPU: run the outermost parallel loop of each generated "
                     "loop nest on OpenMP threads (nn-parallel-loops)"),
      llvm::cl::init(true)};
  PassOptions::Option<bool> blas{
      *this, "blas",
      llvm::cl::desc("Call a BLAS for GEMMs (else generated loops)"),
      llvm::cl::init(true)};
  PassOptions::Option<std::string> gemmLibrary{
      *this, "gemm-library",
      llvm::cl::desc("CPU, with blas: the f32 GEMM library, onednn (the "
                     "runtime's, on the generated loops' OpenMP threads) or "
                     "openblas; f64 GEMMs call OpenBLAS either way"),
      llvm::cl::init("onednn")};
  PassOptions::Option<std::string> chip{
      *this, "chip",
      llvm::cl::desc("GPU target: the NVIDIA SM architecture (sm_80, sm_90)"),
      llvm::cl::init("sm_90")};
  PassOptions::Option<std::string> gpuFormat{
      *this, "gpu-format",
      llvm::cl::desc("Kernel image: isa (PTX, the driver compiles it at "
                     "load), bin (cubin through ptxas) or fatbin"),
      llvm::cl::init("isa")};
  PassOptions::Option<std::string> cudaPath{
      *this, "cuda-path",
      llvm::cl::desc("CUDA toolkit for libdevice and ptxas (default: "
                     "$CUDA_ROOT, $CUDA_HOME, $CUDA_PATH or /usr/local/cuda, "
                     "the first holding libdevice)"),
      llvm::cl::init("")};
};

/// The CUDA toolkit the GPU pipeline uses: `given` when set, else the first
/// of $CUDA_ROOT, $CUDA_HOME, $CUDA_PATH and /usr/local/cuda that holds
/// nvvm/libdevice/libdevice.10.bc; empty when none does. Math functions in
/// kernels (expf, logf, tanhf) come from libdevice.
std::string findCudaToolkit(const std::string &given = "");

void buildOptimizePipeline(OpPassManager &pm, const NNPipelineOptions &options);
void buildToBuffersPipeline(OpPassManager &pm);
void buildCpuCodegenPipeline(OpPassManager &pm,
                             const NNPipelineOptions &options);
void buildCpuPipeline(OpPassManager &pm, const NNPipelineOptions &options);
void buildGpuCodegenPipeline(OpPassManager &pm,
                             const NNPipelineOptions &options);
void buildGpuPipeline(OpPassManager &pm, const NNPipelineOptions &options);

/// Registers the pipelines above (and the nn lowering passes) with the
/// global registry, for nn-opt.
void registerPipelines();

} // namespace mlir::nn

#endif // NN_LOWERING_PIPELINES_H
