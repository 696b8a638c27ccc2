//===- nn/Compiler.h - the embedded compiler API ----------------*- C++ -*-===//
//
// Compiles nn models (MLIR text) into artifacts: a shared object and the
// manifest it embeds. Loading and running an artifact is the runtime's
// (nn/Runtime.h); this library does not link the runtime. The header
// exposes no MLIR or LLVM types.
//
//   nn::CompileOptions options;
//   absl::StatusOr<nn::Artifact> artifact =
//       nn::compileFile("model.mlir", options);
//   nn::Executable exe;
//   absl::Status status = nn::Executable::load(artifact->path(), exe);
//   nn::RunResult result;
//   status = exe.run(inputs, result);
//
//===----------------------------------------------------------------------===//

#ifndef NN_COMPILER_H
#define NN_COMPILER_H

#include "nn/Manifest.h"
#include "nn/Options.h"

#include "absl/status/statusor.h"

#include <limits>
#include <string>
#include <vector>

namespace nn {

/// A loss that trains, and its scale (NaN: the scale its nn.mark_loss
/// gives).
struct TrainedLoss {
  std::string name;
  double scale = std::numeric_limits<double>::quiet_NaN();
};

/// What to compile, for which target, and how. The tuning of each phase
/// is one struct of nn/Options.h, declared there once for every front end
/// (flags, pipeline options, stage files).
struct CompileOptions {
  /// The graph to compile; empty picks the one graph no other graph calls
  /// (an error when there are several). The whole module is verified;
  /// only the entry and the graphs it runs are compiled.
  std::string entry;
  /// Also return the gradient of the training objective with respect to
  /// every parameter that reaches it (nn-autodiff): outputs named
  /// "grad:<parameter>", after the graph's own results.
  bool grads = false;
  /// With grads: also the gradient with respect to these float inputs of
  /// the entry graph, outputs named "grad_input:<input>" after the
  /// parameters' (RunResult::inputGradient).
  std::vector<std::string> inputGradients;
  /// Training mode: each dropout drops units, its mask drawn from the
  /// scalar i32 input "dropout_seed" the compiler adds to graphs that need
  /// it (nn-dropout-training); packed and padded runs and the backward use
  /// the same mask. Otherwise dropout is the identity.
  bool training = false;
  /// Compile one train step (needs grads): the entry takes the inputs
  /// "learning_rate" ([] f32) and, for Adam, "step" ([] i32), reads the
  /// optimizer state as parameters "optimizer/<slot>/<parameter>" and
  /// returns the outputs "grad_norm", "updated_norm" (the global norm of
  /// every updated value) and "update:<parameter>" for every parameter
  /// and state parameter, instead of the graph's own results
  /// and the gradients (nn/Train.h runs it). `optimizer` says how.
  bool trainStep = false;
  /// When not empty: exactly these losses train, at their scales; every
  /// other marked loss is only reported (as if marked as_error). Each
  /// must be marked somewhere in the model. Empty: as marked.
  std::vector<TrainedLoss> trainedLosses;

  /// When > 0: the beam of the one CTC beam search (nn.ctc_beam_search)
  /// the entry graph runs, itself or through the graphs it calls, in place
  /// of the beam the model writes (`nn-decode --beam`); an error when it
  /// runs none or several.
  int64_t searchBeam = 0;

  /// The target, by the name it is registered under (compiler/Target.h):
  /// "cpu", or "cuda" (kernels for an NVIDIA GPU through NVVM, GEMMs
  /// through cuBLAS, run by the runtime's CUDA backend; compiling needs no
  /// GPU, running does).
  std::string target = "cpu";
  /// Where to keep the artifact (.so); empty writes a temporary file that
  /// the Artifact removes when it goes away. Temporary files live in a
  /// per-process `$TMPDIR/nn-artifacts-XXXXXX` directory, removed at exit;
  /// one left by a killed process is reclaimed by the next compile.
  std::string artifactPath;
  /// cuda: when set, each kernel module's PTX (or cubin) is also written
  /// to this directory as <kernel>.ptx / <kernel>.cubin.
  std::string gpuCodeDir;

  /// The nn-level passes: packing, loss-tail fusion, the LSTM tape.
  OptimizeOptions optimize;
  /// The train step's optimizer.
  OptimizerOptions optimizer;
  /// Code generation on every target (BLAS calls).
  CodegenOptions codegen;
  /// The cpu target (threads, the f32 GEMM library).
  CpuCodegenOptions cpu;
  /// The cuda target (chip, binary format, toolkit).
  GpuCodegenOptions gpu;
};

/// A compiled artifact: a shared object on disk and the manifest it embeds.
/// A temporary one (no CompileOptions::artifactPath) is removed when its
/// Artifact goes away; an executable loaded from it stays valid (the
/// mapping outlives the file). Movable, not copyable.
class Artifact {
public:
  Artifact(std::string path, Manifest manifest, bool temporary);
  ~Artifact();
  Artifact(Artifact &&other) noexcept;
  Artifact &operator=(Artifact &&other) noexcept;
  Artifact(const Artifact &) = delete;
  Artifact &operator=(const Artifact &) = delete;

  const std::string &path() const { return path_; }
  const Manifest &manifest() const { return manifest_; }

private:
  std::string path_;
  Manifest manifest_;
  bool temporary_ = false;
};

/// Compiles `source` (MLIR text; `bufferName` names it in diagnostics).
/// Errors carry the diagnostics with their locations.
absl::StatusOr<Artifact> compileSource(const std::string &source,
                                       const std::string &bufferName,
                                       const CompileOptions &options);
/// The names CompileOptions::target takes: the registered targets
/// ("cpu", "cuda"), sorted.
std::vector<std::string> registeredTargets();

/// The largest model file compileFile reads: far past any graph written by
/// hand or by an exporter (parameters live in .npz files, not in the IR),
/// small enough that the parser's own memory stays within a machine's.
constexpr uint64_t kMaxModelFileBytes = uint64_t{1} << 30;

/// Compiles the MLIR file `path`: a regular file of at most
/// kMaxModelFileBytes (a FIFO, a device or a directory is refused by what
/// it is, before anything is read).
absl::StatusOr<Artifact> compileFile(const std::string &path,
                                     const CompileOptions &options);

} // namespace nn

#endif // NN_COMPILER_H
