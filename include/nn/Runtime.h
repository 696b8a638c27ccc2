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

#include "nn/Manifest.h"

#include "absl/status/status.h"

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

namespace nn {

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

/// What a run takes: padded inputs by graph argument name, the lengths of
/// each root sequence dim, and parameters by name.
struct RunInputs {
  std::map<std::string, Tensor> inputs;
  std::map<std::string, std::vector<int32_t>> lengths;
  std::map<std::string, Tensor> parameters;
};

/// The dims of `inputs` for `manifest`, unchecked: sizes from the shapes of
/// the inputs given, lengths as given, then the derived and packed dims
/// (deriveDims); in runtime/Train.cpp. Executable::run validates instead;
/// this is for sizing (nn::trainStepFloor) and for tests.
DimValues dimsOfBatch(const Manifest &manifest, const RunInputs &inputs);

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
  /// Every result of the graph, in order, by its manifest name: result<i>
  /// for the graph's own results, then grad:<parameter> for each gradient
  /// a graph compiled with CompileOptions::grads returns.
  std::vector<std::pair<std::string, Tensor>> outputs;
  std::vector<LossValue> losses;

  /// The gradient of the training objective with respect to `parameter`,
  /// or null when the run returned none for it.
  const Tensor *gradient(const std::string &parameter) const;
  /// The parameters the run returned gradients for, in result order.
  std::vector<std::string> gradientNames() const;
  /// The gradient with respect to graph input `input`
  /// (CompileOptions::inputGradients), or null.
  const Tensor *inputGradient(const std::string &input) const;
};

/// The options of one backend (the kind of device a manifest's target
/// names): which of its devices to use and how to set it up. Each backend
/// defines its own type (nn/Cuda.h: CudaOptions); fields left empty take
/// that backend's defaults.
struct BackendOptions {
  virtual ~BackendOptions();
  /// The target whose devices these configure ("cuda").
  virtual std::string target() const = 0;
};

/// Which device runs an artifact, and how it is set up: options per
/// backend, of which a load uses those for the manifest's target (a
/// backend given none uses its defaults). Artifacts loaded with equal
/// options for their target share one device (for a GPU: its context,
/// stream and memory cache); different options give different devices,
/// side by side. Copies share the (immutable) options they hold.
class DeviceOptions {
public:
  /// Sets the options of the backend `options` is for (its target()),
  /// replacing any set before; null sets nothing.
  DeviceOptions &set(std::shared_ptr<const BackendOptions> options);
  /// The same for a copy of `options` (a CudaOptions, ...).
  template <typename Options, typename = std::enable_if_t<std::is_base_of_v<
                                  BackendOptions, std::decay_t<Options>>>>
  DeviceOptions &set(Options &&options) {
    return set(std::shared_ptr<const BackendOptions>(
        std::make_shared<const std::decay_t<Options>>(
            std::forward<Options>(options))));
  }
  /// The options set for `target`, or null.
  const BackendOptions *find(const std::string &target) const;

private:
  std::map<std::string, std::shared_ptr<const BackendOptions>> byTarget;
};

struct LoadOptions {
  DeviceOptions device;
};

/// Device time of the kernels and library calls (GEMMs) a device ran while
/// profiling was on, per name (benchmarks); on a GPU, CUDA events around
/// each, and GEMMs are named "cublasSgemm_v2 <nn op at location>".
struct KernelTime {
  std::string name;
  int64_t launches = 0;
  double milliseconds = 0;
};

/// Threads for everything a CPU artifact runs: its generated loops
/// (OpenMP) and its GEMMs (OpenBLAS), one setting for both. 0, the
/// default, leaves each library's own default (all cores, or
/// OMP_NUM_THREADS / OPENBLAS_NUM_THREADS). Applies to runs that start
/// after the call, in every executable.
void setNumThreads(int threads);
int numThreads();

class Executable;

/// Tensors that stay where an executable runs between its runs: a train
/// step's parameters and optimizer state. On the host they are the
/// tensors themselves (placing and fetching copies nothing); on a GPU they
/// are device buffers that runs read in place and update in place
/// (Executable::runResident), so nothing crosses to the host per step.
/// Movable, not copyable; frees its device memory when it goes away.
class ResidentTensors {
public:
  ResidentTensors();
  ~ResidentTensors();
  ResidentTensors(ResidentTensors &&) noexcept;
  ResidentTensors &operator=(ResidentTensors &&) noexcept;

  /// Takes `tensors` to the device `executable` runs on, replacing any
  /// held under the same names.
  absl::Status place(const Executable &executable,
                     std::map<std::string, Tensor> tensors);
  /// Every held tensor, on the host: views of the held buffers on the host
  /// (sharing them, valid after later updates replace them), copies from a
  /// GPU.
  absl::Status fetch(std::map<std::string, Tensor> &tensors) const;
  bool holds(const std::string &name) const;
  bool empty() const;

private:
  friend class Executable;
  struct Impl;
  std::unique_ptr<Impl> impl;
};

/// A loaded artifact. Movable, not copyable; unloads on destruction. Runs
/// of one executable are serialized; different executables run in
/// parallel.
class Executable {
public:
  Executable();
  ~Executable();
  Executable(Executable &&) noexcept;
  Executable &operator=(Executable &&) noexcept;

  /// Loads an artifact written by the compiler, for the device `options`
  /// choose (the device itself is set up on first use). InvalidArgument
  /// when no backend runs the manifest's target.
  static absl::Status load(const std::string &path, Executable &executable,
                           const LoadOptions &options = {});

  const Manifest &manifest() const;
  /// The device it runs on: "cpu", "cuda:0 (NVIDIA H200)".
  std::string deviceName() const;
  /// True when it runs on the host, reading the caller's tensors where they
  /// are (nothing is staged or copied back, and resident tensors are the
  /// tensors themselves).
  bool runsOnHost() const;
  /// Turns device-time profiling of its device on (clearing what was
  /// recorded) or off. The device is shared by every executable loaded for
  /// it, and so is its profile. The host records nothing.
  void setProfiling(bool enabled) const;
  /// The device times since profiling was turned on or last taken.
  std::vector<KernelTime> takeProfile() const;
  /// Validates every input, then runs. Nothing runs when validation fails;
  /// the error names the offending input.
  absl::Status run(const RunInputs &inputs, RunResult &result) const;
  /// run() with the parameters `resident` holds read where they live
  /// (inputs.parameters gives the others). Each output "update:<name>"
  /// whose <name> `resident` holds is not returned: when `accept` (given
  /// the run's other outputs and its losses) says yes, or there is no
  /// `accept`, it replaces <name> in `resident`, on a GPU without leaving
  /// device memory; otherwise `resident` stays as it was.
  absl::Status
  runResident(const RunInputs &inputs, ResidentTensors &resident,
              RunResult &result,
              const std::function<bool(const RunResult &)> &accept = {}) const;
  /// Only the validation step of run(): the sizes and lengths every dim
  /// takes for `inputs`.
  absl::Status validate(const RunInputs &inputs, DimValues &dims) const;

private:
  friend class ResidentTensors;
  struct Impl;
  std::unique_ptr<Impl> impl;
};

} // namespace nn

#endif // NN_RUNTIME_H
