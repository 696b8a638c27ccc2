//===- nn/Runtime.h - load and run compiled nn artifacts --------*- C++ -*-===//
//
// The runtime executor: loads an artifact (a shared object the compiler
// wrote, with its manifest embedded), validates inputs against the
// manifest, binds lengths, runs the entry point and returns the outputs and
// the losses. It uses neither MLIR nor LLVM; see docs/runtime.md for the
// artifact format and the calling convention.
//
// Errors are absl::Status values with canonical codes: InvalidArgument for
// bad input (files, manifests, tensors, lengths), NotFound for a file that
// cannot be opened, Unavailable when a GPU artifact finds no GPU or driver,
// ResourceExhausted when memory runs out, Internal for failures of the
// device or toolchain underneath.
//
//===----------------------------------------------------------------------===//

#ifndef NN_RUNTIME_H
#define NN_RUNTIME_H

#include "absl/status/status.h"
#include "absl/status/statusor.h"

#include <cstdint>
#include <map>
#include <memory>
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

/// A dense row-major host tensor. It owns its bytes, or shares a buffer a
/// run returned (results are handed over without a copy). Copies are deep;
/// moves are cheap.
class Tensor {
public:
  Tensor() = default;
  /// A zero-filled tensor.
  Tensor(DType dtype, std::vector<int64_t> shape);
  Tensor(const Tensor &other);
  Tensor &operator=(const Tensor &other);
  Tensor(Tensor &&) noexcept = default;
  Tensor &operator=(Tensor &&) noexcept = default;

  /// A tensor over `data`, kept alive by `owner` (freed when the last
  /// tensor sharing it goes away).
  static Tensor adopt(DType dtype, std::vector<int64_t> shape, void *data,
                      std::shared_ptr<void> owner);

  template <typename T>
  static Tensor of(DType dtype, std::vector<int64_t> shape,
                   const std::vector<T> &values) {
    Tensor tensor(dtype, std::move(shape));
    for (size_t i = 0; i < values.size() && i < (size_t)tensor.numElements();
         ++i)
      tensor.data<T>()[i] = values[i];
    return tensor;
  }

  DType dtype() const { return dtype_; }
  const std::vector<int64_t> &shape() const { return shape_; }
  int64_t rank() const { return (int64_t)shape_.size(); }
  int64_t numElements() const;
  template <typename T> T *data() { return reinterpret_cast<T *>(data_); }
  template <typename T> const T *data() const {
    return reinterpret_cast<const T *>(data_);
  }
  void *raw() { return data_; }
  const void *raw() const { return data_; }
  size_t sizeInBytes() const { return numElements() * byteSize(dtype_); }
  /// Element i as a double (any dtype).
  double at(int64_t i) const;

private:
  DType dtype_ = DType::f32;
  std::vector<int64_t> shape_;
  std::shared_ptr<void> owner_;
  uint8_t *data_ = nullptr;
};

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
  /// Derived sequence dims: the source dim and the factor.
  std::string source;
  int64_t factor = 0;
  /// Packed dims: the sequence dim they pack.
  std::string sequence;
};

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
constexpr int kManifestVersion = 2;

/// What an artifact computes and how to call it.
struct Manifest {
  std::string graph;
  /// "cpu", or "cuda": the artifact launches kernels through the runtime's
  /// CUDA backend and its buffers live in GPU memory.
  std::string target = "cpu";
  std::vector<DimInfo> dims;
  /// Batch and non-derived sequence dims, in calling order.
  std::vector<std::string> rootDims;
  std::vector<TensorInfo> inputs;
  std::vector<TensorInfo> parameters;
  std::vector<TensorInfo> outputs;
  std::vector<LossInfo> losses;
  std::vector<KernelInfo> kernels;
  /// GPU artifacts: the entry function's arguments (sizes, lengths, inputs,
  /// parameters in calling order, from 0) that host code reads; the
  /// runtime stages them in managed memory, the others in device memory.
  std::vector<int64_t> hostVisibleArguments;

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
  static uint64_t hash(const std::string &text);
};

/// Sizes of the dims of a graph and lengths of its sequence dims.
struct DimValues {
  std::map<std::string, int64_t> sizes;
  std::map<std::string, std::vector<int32_t>> lengths;

  /// Whether position `index` of a tensor with `axes` is a real frame:
  /// every sequence axis within its sequence's length. Padding may hold
  /// anything.
  bool isValid(const std::vector<Axis> &axes,
               const std::vector<int64_t> &index) const;
};

/// Fills in the derived dims (`ceil(len / k)`, their padded sizes likewise)
/// and packed dims (`sum(len)`) of `manifest` from the root dims already in
/// `values`.
void deriveDims(const Manifest &manifest, DimValues &values);

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

/// What a run takes: padded inputs by graph argument name, the lengths of
/// each root sequence dim, and parameters by name.
struct RunInputs {
  std::map<std::string, Tensor> inputs;
  std::map<std::string, std::vector<int32_t>> lengths;
  std::map<std::string, Tensor> parameters;
};

struct LossValue {
  std::string name;
  /// The sum over valid positions, the inverse normalization factor, and
  /// sum / factor (0 when the factor is 0: a loss over no frames).
  double sum = 0, normalization = 0, normalized = 0;
  double scale = 1;
  bool asError = false;
  bool packed = false;
  /// Positions the loss tail computed vs the padded positions it covers;
  /// both 0 for a called graph's loss over dims the entry does not name.
  int64_t framesComputed = 0, framesPadded = 0;
};

struct RunResult {
  std::vector<std::pair<std::string, Tensor>> outputs;
  std::vector<LossValue> losses;
};

/// A loaded artifact. Movable, not copyable; unloads on destruction.
class Executable {
public:
  Executable();
  ~Executable();
  Executable(Executable &&) noexcept;
  Executable &operator=(Executable &&) noexcept;

  /// Loads an artifact written by the compiler.
  static absl::Status load(const std::string &path, Executable &executable);

  const Manifest &manifest() const;
  /// Validates every input, then runs. Nothing runs when validation fails;
  /// the error names the offending input.
  absl::Status run(const RunInputs &inputs, RunResult &result) const;
  /// Only the validation step of run(): the sizes and lengths every dim
  /// takes for `inputs`.
  absl::Status validate(const RunInputs &inputs, DimValues &dims) const;

private:
  struct Impl;
  std::unique_ptr<Impl> impl;
};

/// The CUDA backend (GPU artifacts). The driver and cuBLAS are loaded on
/// first use; without them these report why and GPU artifacts do not run.
/// NN_CUDA_DRIVER and NN_CUBLAS_LIBRARY name other libraries to load,
/// NN_CUDA_DEVICE another device than 0.
bool cudaAvailable(std::string *why = nullptr);

struct CudaDeviceInfo {
  std::string name;
  int ordinal = 0;
  int multiprocessors = 0;
  /// 90 for sm_90.
  int computeCapability = 0;
  /// From the memory clock and bus width the driver reports.
  double peakBandwidthGBs = 0;
};
absl::Status cudaDeviceInfo(CudaDeviceInfo &info);

/// Device time of kernels and cuBLAS calls (CUDA events around each), for
/// benchmarks; GEMMs are named "cublasSgemm_v2 <nn op at location>".
struct KernelTime {
  std::string name;
  int64_t launches = 0;
  double milliseconds = 0;
};
void cudaSetProfiling(bool enabled);
/// The times since profiling was enabled or last taken, per kernel name.
std::vector<KernelTime> cudaTakeProfile();

} // namespace nn

#endif // NN_RUNTIME_H
