//===- nn/Manifest.h - what an artifact says about itself -------*- C++ -*-===//
//
// The artifact format shared by the compiler, which writes a manifest into
// every artifact, and the runtime, which reads it: element types, dims,
// the tensors a graph takes and returns, its losses. Text, one record per
// line (runtime/manifest/Manifest.cpp has the grammar), parsed strictly as
// untrusted input. libNNManifest holds it and links neither MLIR/LLVM nor
// the runtime.
//
//===----------------------------------------------------------------------===//

#ifndef NN_MANIFEST_H
#define NN_MANIFEST_H

#include "absl/status/status.h"

#include <cstdint>
#include <map>
#include <string>
#include <vector>

namespace nn {

/// `status` with `context` put before its message; the code is kept.
inline absl::Status withContext(const absl::Status &status,
                                const std::string &context) {
  return absl::Status(status.code(), context + std::string(status.message()));
}

enum class DType { f32, f64, i32, i64 };
const char *toString(DType type);
/// Parses "f32", "f64", "i32", "i64"; false otherwise.
bool parseDType(const std::string &text, DType &type);
size_t byteSize(DType type);
/// The byte size of a `dtype` tensor of `shape`; false when a size is
/// negative or the product overflows int64.
bool checkedByteSize(DType dtype, const std::vector<int64_t> &shape,
                     int64_t &bytes);
/// "[2, 3]", for messages.
std::string shapeText(const std::vector<int64_t> &shape);

/// One axis of a manifest tensor: a dim name, or a static size.
struct Axis {
  std::string dim;
  int64_t size = -1;
  bool isNamed() const { return !dim.empty(); }
};

struct DimInfo {
  enum class Kind { batch, seq, packed } kind;
  std::string name;
  std::string batch;
  /// Derived sequence dims: the source dim; lengths are
  /// ceildiv(source, factor) + offset.
  std::string source;
  int64_t factor = 0;
  /// Packed dims: the sequence dim they pack; for a grid (a transducer
  /// joint's valid (t, u) pairs) also `inner`: the size is the sum of
  /// len(sequence) * len(inner).
  std::string sequence;
  /// Derived sequence dims: added after the ceildiv (`U + 1` is factor 1,
  /// offset 1).
  int64_t offset = 0;
  /// Grid-packed dims: the second (inner) sequence dim.
  std::string inner;
  /// Sequence dims whose lengths the graph computes (a decoder's
  /// hypotheses): no caller passes them; the entry returns them as the
  /// output `lengths:NAME` ([batch] i32), and the padded size of every
  /// output naming the dim is their longest (at least 1).
  bool computed = false;
  /// Sequence dims of a flattened batch declared `= source`: entry (b, k)
  /// has sequence b's length of `source` (a dim of the flattened batch's
  /// source). A batch dim with a `source` is flattened: one entry per
  /// valid (b, k) of its `inner` sequence dim of `source`, b-major.
  bool lift = false;

  bool isFlatten() const { return kind == Kind::batch && !source.empty(); }

  /// The length of a derived dim for a source length `n`.
  int64_t deriveLength(int64_t n) const {
    return (n + factor - 1) / factor + offset;
  }
};

/// How a derived dim follows from `source` (a name or a number), for
/// messages: "ceil(T / 2)" or "U + 1".
std::string derivedFormula(const DimInfo &dim, const std::string &source);
inline std::string derivedFormula(const DimInfo &dim, int64_t source) {
  return derivedFormula(dim, std::to_string(source));
}

struct TensorInfo {
  std::string name;
  DType dtype = DType::f32;
  std::vector<Axis> axes;
  /// Integer inputs used as class indices: values at valid positions must
  /// lie in [0, classes). 0 when unconstrained.
  int64_t classes = 0;
  /// A class index valid positions may not hold (CTC's blank among
  /// labels); -1 when none.
  int64_t reservedClass = -1;
  /// Parameters: how a fresh one is drawn (nn::initializeParameters):
  /// "zeros", "ones", "uniform" in [-initScale, initScale] or "normal"
  /// with standard deviation initScale; empty when the manifest says
  /// nothing.
  std::string init;
  double initScale = 0;
};

struct LossInfo {
  std::string name;
  std::string normalization;
  double scale = 1.0;
  bool useNormalizedLoss = true;
  bool asError = false;
  bool packed = false;
  std::string batch;
  std::vector<std::string> sequences;
};

/// A GPU kernel of an artifact and the nn op it computes
/// ("nn.linear at model.mlir:12:5"), for error messages and profiles.
struct KernelInfo {
  std::string name;
  std::string origin;
};

/// The manifest format this runtime reads and the compiler writes.
constexpr int kManifestVersion = 5;

/// What an artifact computes and how to call it.
struct Manifest {
  std::string graph;
  /// The kind of device that runs it, which picks the runtime's backend:
  /// "cpu" (the host), "cuda" (kernels launched through the CUDA backend,
  /// buffers in GPU memory), or any other well-formed name (a lowercase
  /// letter, then lowercase letters, digits, '_' or '-'; parse() checks
  /// that much, the runtime whether some backend runs it).
  std::string target = "cpu";
  std::vector<DimInfo> dims;
  /// Batch and non-derived sequence dims, in calling order.
  std::vector<std::string> rootDims;
  std::vector<TensorInfo> inputs;
  std::vector<TensorInfo> parameters;
  std::vector<TensorInfo> outputs;
  /// Train steps and gradient graphs: the values the backward reads from
  /// the forward (saved activations), each named by the nn op that
  /// computes it ("nn.lstm_with_tape at model.mlir:12:5 #1"). Their axes
  /// name any dims (packed ones too) in any position; the runtime sizes
  /// them per batch for the memory floor (nn::trainStepFloor). Names need
  /// not be unique.
  std::vector<TensorInfo> saved;
  std::vector<LossInfo> losses;
  std::vector<KernelInfo> kernels;
  /// GPU artifacts: the entry function's arguments (sizes, lengths, inputs,
  /// parameters in calling order, from 0) that host code reads; the
  /// runtime stages them in managed memory, the others in device memory.
  std::vector<int64_t> hostVisibleArguments;
  /// A data-parallel train step (nn-all-reduce-gradients): it sums its
  /// gradients and loss normalizations over the ranks of the current
  /// communicator (nn/Communicator.h), so the runtime sums its losses
  /// over them too. Steps without it refuse to run with several ranks.
  bool dataParallel = false;

  const DimInfo *findDim(const std::string &name) const;
  std::string serialize() const;
  /// Parses and verifies a manifest.
  static absl::Status parse(const std::string &text, Manifest &manifest);
  /// Whether the manifest describes a callable graph: dims declared before
  /// use, every root dim an argument, position axes well formed, static
  /// sizes that fit in memory, losses over declared dims.
  absl::Status verify() const;

  /// Whether the entry returns a results struct (outputs or losses).
  bool hasResults() const;
  /// The number of argv slots the entry point reads.
  int64_t entryArity() const;
  /// A checksum of manifest text; the compiler compiles it into the
  /// artifact's code (`nn_manifest_hash`) and the runtime checks it on load.
  /// FNV-1a, 64 bits: a checksum against damage, not a signature. Inline:
  /// the compiler's passes compute it without linking this library.
  static uint64_t hash(const std::string &text) {
    uint64_t hash = 0xcbf29ce484222325ull;
    for (unsigned char c : text)
      hash = (hash ^ c) * 0x100000001b3ull;
    return hash;
  }
};

/// Sizes of the dims of a graph and lengths of its sequence dims.
struct DimValues {
  std::map<std::string, int64_t> sizes;
  std::map<std::string, std::vector<int32_t>> lengths;
  /// Flattened batches: the first entry of each sequence (the exclusive
  /// prefix sum of the inner dim's lengths), by the flattened dim's name.
  std::map<std::string, std::vector<int64_t>> offsets;
  /// The flattened batch each sequence dim of one belongs to, so that an
  /// N-best axis `[B, K, Y]` finds entry `offsets[H][b] + k`'s length.
  std::map<std::string, std::string> flatBatch;

  /// Whether position `index` of a tensor with `axes` is a real frame:
  /// every sequence axis within its sequence's length. Padding may hold
  /// anything.
  bool isValid(const std::vector<Axis> &axes,
               const std::vector<int64_t> &index) const;
};

/// Fills in the derived dims (`ceil(len / k)`, their padded sizes likewise)
/// and packed dims (`sum(len)`) of `manifest` from the root and computed
/// dims already in `values`; dims that follow from a computed dim not in
/// `values` yet are left out.
void deriveDims(const Manifest &manifest, DimValues &values);

/// The name of the output that holds computed dim `dim`'s lengths.
inline std::string lengthsOutputName(const std::string &dim) {
  return "lengths:" + dim;
}

/// Calls fn(index) for every index of `shape` in row-major order.
template <typename Fn>
void forEachIndex(const std::vector<int64_t> &shape, Fn fn) {
  int64_t count = 1;
  for (int64_t size : shape)
    count *= size;
  std::vector<int64_t> index(shape.size(), 0);
  for (int64_t flat = 0; flat < count; ++flat) {
    fn(index);
    for (size_t i = shape.size(); i-- > 0;) {
      if (++index[i] < shape[i])
        break;
      index[i] = 0;
    }
  }
}

} // namespace nn

#endif // NN_MANIFEST_H
