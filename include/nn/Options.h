//===- nn/Options.h - compilation options, one struct per phase -*- C++ -*-===//
//
// Each phase of compilation has one options struct, and each struct
// declares its options once, in bindOptions(): the name a flag, a
// pipeline option and a stage-file key are spelled from, what the option
// means, and (through the member's initializer) its default. Everything
// that sets options reads those declarations through a binder:
//
//   the C++ API          the structs themselves (nn::CompileOptions)
//   nn-opt               pipeline and pass options (support/PassOptionBinder.h)
//   nn-run, nn-train     command-line flags (support/CommandLineBinder.h)
//   stage files          JSON keys (support/JsonOptionReader.h)
//
// A binder is any type with `bind(T &value, const OptionInfo &info)` for
// bool, double, std::string and the enumerations below. Adding an option
// is one member and one bind() line; every front end has it from then on.
//
// Enumerations list their spellings once, in EnumChoices<E>; parsing and
// the error for a value that is none of them ("unknown optimizer 'lion'
// (expected sgd, adam or adamw)") are the same everywhere.
//
// This header is part of the public API: no MLIR or LLVM types.
//
//===----------------------------------------------------------------------===//

#ifndef NN_OPTIONS_H
#define NN_OPTIONS_H

#include <iterator>
#include <optional>
#include <string>
#include <string_view>

namespace nn {

/// How one option is written and what it means.
struct OptionInfo {
  /// The flag and pipeline-option name ("weight-decay"); a stage file's key
  /// is the same with '_' for '-' ("weight_decay").
  const char *name;
  /// One line for --help and the generated docs.
  const char *help;
  /// The stage-file key when it is not derived from `name` (the optimizer's
  /// kind is --optimizer on the command line, "kind" inside a stage file's
  /// "optimizer" object).
  const char *key = nullptr;
};

/// One value of an enumeration as users write it.
template <typename E> struct EnumChoice {
  E value;
  const char *name;
  const char *help;
};

/// The spellings of enumeration E: `what` names the option in errors, and
/// `all` lists every value. Specialized for each enumeration below.
template <typename E> struct EnumChoices;

/// The spelling of `value` ("sweep").
template <typename E> const char *enumName(E value) {
  for (const EnumChoice<E> &choice : EnumChoices<E>::all)
    if (choice.value == value)
      return choice.name;
  return "?";
}

/// The value spelled `name`, or nothing.
template <typename E> std::optional<E> parseEnum(std::string_view name) {
  for (const EnumChoice<E> &choice : EnumChoices<E>::all)
    if (name == choice.name)
      return choice.value;
  return std::nullopt;
}

/// "sgd, adam or adamw".
template <typename E> std::string enumSpellings() {
  std::string list;
  constexpr size_t count = std::size(EnumChoices<E>::all);
  for (size_t i = 0; i < count; ++i) {
    if (i)
      list += i + 1 == count ? " or " : ", ";
    list += EnumChoices<E>::all[i].name;
  }
  return list;
}

/// The error for a value that spells none of E's values: "unknown
/// optimizer 'lion' (expected sgd, adam or adamw)".
template <typename E> std::string unknownEnumMessage(std::string_view given) {
  return std::string("unknown ") + EnumChoices<E>::what + " '" +
         std::string(given) + "' (expected " + enumSpellings<E>() + ")";
}

//===----------------------------------------------------------------------===//
// nn-level passes (nn-optimize)
//===----------------------------------------------------------------------===//

/// How the fused loss tail gets the logits its gradient needs.
enum class LossTailBackward { sweep, recompute };

template <> struct EnumChoices<LossTailBackward> {
  static constexpr const char *what = "loss tail backward";
  static constexpr EnumChoice<LossTailBackward> all[] = {
      {LossTailBackward::sweep, "sweep",
       "in the forward's sweep over the logits"},
      {LossTailBackward::recompute, "recompute",
       "a second sweep recomputes the logits"},
  };
};

/// How far back from each loss nn-pack-before-loss puts the pack.
enum class PackFrontier { lossTail, earliest, cost };

template <> struct EnumChoices<PackFrontier> {
  static constexpr const char *what = "pack frontier";
  static constexpr EnumChoice<PackFrontier> all[] = {
      {PackFrontier::lossTail, "loss-tail",
       "after the last sequence-mixing op: frame-wise ops only"},
      {PackFrontier::earliest, "earliest",
       "as early as the input: every op with a packed form too"},
      {PackFrontier::cost, "auto",
       "each op with a packed form where the cost model says it pays"},
  };
};

/// The nn-level rewrites before autodiff and lowering.
struct OptimizeOptions {
  bool inlineCalls = true;
  bool pack = true;
  PackFrontier packFrontier = PackFrontier::cost;
  /// N / (B * T_max) that the cost model of `pack-frontier=auto` expects:
  /// 0.65 is a batch of 32 LibriSpeech utterances (0.649 measured,
  /// docs/performance.md).
  double packExpectedFill = 0.65;
  bool fuseLossTail = true;
  LossTailBackward lossTailBackward = LossTailBackward::sweep;
  bool saveLstmTape = true;
  bool saveAttentionStats = true;

  template <typename Binder> void bindOptions(Binder &binder) {
    binder.bind(inlineCalls,
                {"inline-calls",
                 "Copy each called graph into its caller, so that packing "
                 "sees the whole model (nn-inline-calls)"});
    binder.bind(pack, {"pack", "Run each loss's frame-wise tail, and each "
                               "decoding op's input, on packed frames only "
                               "(nn-pack-before-loss)"});
    binder.bind(packFrontier,
                {"pack-frontier",
                 "How far back from each loss to pack: loss-tail, earliest or "
                 "auto (a cost model per op with a packed form)"});
    binder.bind(packExpectedFill,
                {"pack-expected-fill",
                 "The share of real frames, N / (B * T_max), that "
                 "pack-frontier=auto expects"});
    binder.bind(fuseLossTail,
                {"fuse-loss-tail",
                 "Fuse linear -> (log_softmax ->) cross_entropy into one op "
                 "that never holds the logits (nn-fuse-loss-tail)"});
    binder.bind(lossTailBackward,
                {"loss-tail-backward",
                 "The fused loss tail's gradient: sweep (with the forward) or "
                 "recompute (the logits again)"});
    binder.bind(saveLstmTape,
                {"save-lstm-tape",
                 "With gradients: each LSTM's backward reads the cells and "
                 "gates its forward kept instead of recomputing them "
                 "(nn-save-lstm-tape)"});
    binder.bind(saveAttentionStats,
                {"save-attention-stats",
                 "With gradients: each attention's backward reads the output "
                 "and log normalizers its forward kept instead of "
                 "recomputing them (nn-save-attention-stats)"});
  }
};

//===----------------------------------------------------------------------===//
// The train step (nn-train-step)
//===----------------------------------------------------------------------===//

enum class OptimizerKind { sgd, adam, adamw };

template <> struct EnumChoices<OptimizerKind> {
  static constexpr const char *what = "optimizer";
  static constexpr EnumChoice<OptimizerKind> all[] = {
      {OptimizerKind::sgd, "sgd", "SGD, with momentum and Nesterov"},
      {OptimizerKind::adam, "adam", "Adam, L2 decay in the gradient"},
      {OptimizerKind::adamw, "adamw", "Adam with decoupled weight decay"},
  };
};

/// How a train step updates the parameters (the update ops' formulas are
/// in docs/training.md). nn-train-step checks the ranges.
struct OptimizerOptions {
  OptimizerKind kind = OptimizerKind::adam;
  /// sgd: momentum (0: plain SGD) and Nesterov.
  double momentum = 0;
  bool nesterov = false;
  double beta1 = 0.9, beta2 = 0.999, epsilon = 1e-8;
  /// L2 coefficient (sgd, adam) or decoupled decay (adamw).
  double weightDecay = 0;
  /// Clip the gradients to this global norm; 0 is off.
  double clipNorm = 0;
  /// Data-parallel training (nn-all-reduce-gradients): the step sums the
  /// gradients and the losses' normalization factors over every process
  /// of the run (nn/Communicator.h) before the norm, clipping and update,
  /// the gradients in buckets of at most `allReduceBucketMb` MiB (one
  /// collective each; a larger gradient is a bucket of its own).
  bool dataParallel = false;
  double allReduceBucketMb = 25;
  /// Each bucket summed as soon as the backward has finished it, while the
  /// rest of the backward runs (docs/distributed.md, "Overlap").
  bool allReduceOverlap = true;

  template <typename Binder> void bindOptions(Binder &binder) {
    binder.bind(kind, {"optimizer", "sgd, adam or adamw", "kind"});
    binder.bind(momentum, {"momentum", "sgd: the momentum (0: none)"});
    binder.bind(nesterov, {"nesterov", "sgd: Nesterov momentum"});
    binder.bind(beta1, {"beta1", "adam(w): beta1"});
    binder.bind(beta2, {"beta2", "adam(w): beta2"});
    binder.bind(epsilon, {"epsilon", "adam(w): epsilon"});
    binder.bind(weightDecay,
                {"weight-decay",
                 "L2 coefficient (sgd, adam) or decoupled decay (adamw)"});
    binder.bind(clipNorm,
                {"clip-norm", "Clip gradients to this global norm (0: off)"});
    binder.bind(dataParallel,
                {"data-parallel",
                 "Sum gradients and loss normalizations over every process "
                 "of the run (mpirun) before the update"});
    binder.bind(allReduceBucketMb,
                {"all-reduce-bucket-mb",
                 "data-parallel: MiB of gradients per all-reduce"});
    binder.bind(allReduceOverlap,
                {"all-reduce-overlap",
                 "data-parallel: sum each bucket while the rest of the "
                 "backward runs"});
  }
};

//===----------------------------------------------------------------------===//
// Code generation (every target, then per target)
//===----------------------------------------------------------------------===//

/// What code generation does on every target.
struct CodegenOptions {
  bool blas = true;

  template <typename Binder> void bindOptions(Binder &binder) {
    binder.bind(blas, {"blas", "Call the target's BLAS for GEMMs (OpenBLAS or "
                               "oneDNN on CPUs, cuBLAS on GPUs) instead of "
                               "generating loops"});
  }
};

/// The library of f32 GEMMs in CPU artifacts.
enum class GemmLibrary { onednn, openblas };

template <> struct EnumChoices<GemmLibrary> {
  static constexpr const char *what = "GEMM library";
  static constexpr EnumChoice<GemmLibrary> all[] = {
      {GemmLibrary::onednn, "onednn",
       "the runtime's oneDNN sgemm, on the OpenMP threads of the loops"},
      {GemmLibrary::openblas, "openblas", "OpenBLAS's cblas_sgemm"},
  };
};

/// The cpu target.
struct CpuCodegenOptions {
  bool threads = true;
  GemmLibrary gemmLibrary = GemmLibrary::onednn;

  template <typename Binder> void bindOptions(Binder &binder) {
    binder.bind(threads, {"threads", "CPU: run the outermost parallel loop of "
                                     "each generated loop nest on OpenMP "
                                     "threads (nn-parallel-loops)"});
    binder.bind(gemmLibrary,
                {"gemm-library", "CPU, with blas: the f32 GEMM library, onednn "
                                 "or openblas (f64 GEMMs call OpenBLAS either "
                                 "way)"});
  }
};

/// How GPU artifacts carry their kernels.
enum class GpuBinary { ptx, cubin };

template <> struct EnumChoices<GpuBinary> {
  static constexpr const char *what = "GPU binary format";
  static constexpr EnumChoice<GpuBinary> all[] = {
      {GpuBinary::ptx, "ptx", "PTX, compiled by the driver when first run"},
      {GpuBinary::cubin, "cubin", "cubin, through ptxas at compile time"},
  };
};

/// The cuda target.
struct GpuCodegenOptions {
  /// The SM architecture; checked against what NVPTX can compile for.
  std::string chip = "sm_90";
  GpuBinary binary = GpuBinary::ptx;
  /// The CUDA toolkit (libdevice, ptxas); empty: $CUDA_ROOT, $CUDA_HOME,
  /// $CUDA_PATH or /usr/local/cuda, the first holding libdevice.
  std::string toolkit;

  template <typename Binder> void bindOptions(Binder &binder) {
    binder.bind(chip, {"gpu-chip", "cuda: the SM architecture (sm_80, sm_90)"});
    binder.bind(binary, {"gpu-binary", "cuda: kernel images as ptx (compiled "
                                       "by the driver at first run) or cubin "
                                       "(ptxas now)"});
    binder.bind(toolkit,
                {"cuda-path", "cuda: the CUDA toolkit for libdevice and ptxas "
                              "(default: $CUDA_ROOT, $CUDA_HOME, $CUDA_PATH or "
                              "/usr/local/cuda)"});
  }
};

} // namespace nn

#endif // NN_OPTIONS_H
