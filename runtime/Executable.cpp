//===- Executable.cpp - load, validate and run compiled artifacts ---------===//
//
// An artifact is a shared object that exports
//   const char nn_manifest[];       the Manifest text
//   void nn_entry(void **argv);     the entry graph
// argv holds one slot per parameter of the graph's C interface
// (`_mlir_ciface_<graph>`): a pointer to the results struct when the graph
// has results, then per root dim its size (batch) or padded size and a
// pointer to the lengths descriptor (sequence), then pointers to the
// descriptors of inputs and parameters. A descriptor is
// {allocated, aligned, offset, sizes[rank], strides[rank]}, all 8 bytes.
// Returned buffers come from the runtime's allocator (Allocator.h); the
// runtime frees `allocated` unless it is one of the buffers it passed in.
//
// The artifact runs on the Device its manifest's target and the load's
// DeviceOptions choose (device/Device.h). On the host the arguments are
// the caller's buffers; on another device (cuda) the runtime copies
// lengths, inputs and parameters in (memory host code can read for the
// arguments it reads, such as lengths, device memory for the rest), runs
// the entry in the executable's DeviceSession (module cache, error state)
// and copies the results out.
//
//===----------------------------------------------------------------------===//

#include "nn/File.h"
#include "nn/Runtime.h"

#include "Allocator.h"
#include "runtime/device/Device.h"

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <dlfcn.h>
#include <elf.h>
#include <fcntl.h>
#include <link.h>
#include <mutex>
#include <set>
#include <sys/stat.h>
#include <unistd.h>

using namespace nn;

namespace {
using EntryFn = void (*)(void **);

/// Memref descriptor storage for a rank known at run time.
struct Descriptor {
  std::vector<int64_t> words;

  Descriptor(void *data, const std::vector<int64_t> &shape) {
    size_t rank = shape.size();
    words.assign(3 + 2 * rank, 0);
    words[0] = (int64_t)(intptr_t)data;
    words[1] = (int64_t)(intptr_t)data;
    int64_t stride = 1;
    for (size_t i = rank; i-- > 0;) {
      words[3 + i] = shape[i];
      words[3 + rank + i] = stride;
      stride *= shape[i];
    }
  }
  void *pointer() { return words.data(); }
};

/// Manifests are far smaller; a longer one is damage.
constexpr size_t kMaxManifestBytes = 16 << 20;

/// The bytes from `address` to the end of the loaded segment that holds it
/// (0 when no loaded object maps it), so that reading a string whose
/// terminator was damaged stops at the mapping's end.
size_t bytesMappedFrom(const void *address) {
  struct Search {
    uintptr_t address;
    size_t bytes = 0;
  } search{(uintptr_t)address};
  dl_iterate_phdr(
      [](dl_phdr_info *info, size_t, void *data) {
        auto *search = static_cast<Search *>(data);
        for (int i = 0; i < info->dlpi_phnum; ++i) {
          const auto &segment = info->dlpi_phdr[i];
          uintptr_t start = info->dlpi_addr + segment.p_vaddr;
          if (segment.p_type == PT_LOAD && search->address >= start &&
              search->address < start + segment.p_memsz) {
            search->bytes = start + segment.p_memsz - search->address;
            return 1;
          }
        }
        return 0;
      },
      &search);
  return search.bytes;
}

/// Checks that `path` is a complete 64-bit ELF shared object for this
/// machine: every segment and the section table lie within the file.
absl::Status checkSharedObject(const std::string &path) {
  auto fail = [&](const std::string &why) {
    return absl::InvalidArgumentError("cannot load artifact '" + path +
                                      "': " + why);
  };
  // A FIFO would block a plain open (and dlopen) until a writer came.
  absl::StatusOr<FileHandle> file = openRegularFile(path);
  if (!file.ok())
    return withContext(file.status(), "cannot load artifact: ");
  int fd = file->fd();
  Elf64_Ehdr header;
  bool readable = pread(fd, &header, sizeof(header), 0) == sizeof(header);
  uint64_t size = readable ? file->size() : 0;
  auto within = [&](uint64_t offset, uint64_t bytes) {
    return offset <= size && bytes <= size - offset;
  };
  absl::Status status;
  if (!readable || std::memcmp(header.e_ident, ELFMAG, SELFMAG) != 0)
    status = fail("not an ELF shared object");
  else if (header.e_ident[EI_CLASS] != ELFCLASS64 ||
           header.e_ident[EI_DATA] != ELFDATA2LSB || header.e_type != ET_DYN ||
           header.e_machine != EM_X86_64 ||
           header.e_phentsize != sizeof(Elf64_Phdr))
    status = fail("not a 64-bit little-endian x86-64 shared object");
  else if (!within(header.e_phoff,
                   (uint64_t)header.e_phnum * sizeof(Elf64_Phdr)) ||
           (header.e_shnum != 0 &&
            !within(header.e_shoff,
                    (uint64_t)header.e_shnum * header.e_shentsize)))
    status = fail("truncated (its headers lie past the end of the " +
                  std::to_string(size) + "-byte file)");
  for (int i = 0; status.ok() && i < header.e_phnum; ++i) {
    Elf64_Phdr segment;
    if (pread(fd, &segment, sizeof(segment),
              header.e_phoff + i * sizeof(segment)) != sizeof(segment) ||
        !within(segment.p_offset, segment.p_filesz))
      status = fail("truncated (segment " + std::to_string(i) +
                    " lies past the end of the " + std::to_string(size) +
                    "-byte file)");
  }
  return status;
}

/// Binds the dims whose lengths the run computed (a decoder's hypotheses)
/// from the `lengths:` outputs, checked like any untrusted input: one
/// length per sequence, within the padded size of the outputs that name
/// the dim (its longest when none does); then the dims that follow.
absl::Status bindComputedDims(const Manifest &manifest, const RunResult &result,
                              DimValues &bound) {
  for (const DimInfo &dim : manifest.dims) {
    if (!dim.computed)
      continue;
    std::string name = lengthsOutputName(dim.name);
    const Tensor *lengths = nullptr;
    int64_t padded = -1;
    for (size_t r = 0; r < result.outputs.size(); ++r) {
      const auto &[outputName, tensor] = result.outputs[r];
      if (outputName == name)
        lengths = &tensor;
      const TensorInfo *info = nullptr;
      for (const TensorInfo &output : manifest.outputs)
        if (output.name == outputName)
          info = &output;
      for (size_t i = 0; info && i < info->axes.size(); ++i)
        if (info->axes[i].dim == dim.name && i < tensor.shape().size())
          padded = tensor.shape()[i];
    }
    int64_t batch = bound.sizes.at(dim.batch);
    if (!lengths || lengths->dtype() != DType::i32 ||
        lengths->shape() != std::vector<int64_t>{batch})
      return absl::InternalError("the artifact returned no lengths [" +
                                 std::to_string(batch) +
                                 "] i32 for computed dim '" + dim.name + "'");
    std::vector<int32_t> values(lengths->data<int32_t>(),
                                lengths->data<int32_t>() + batch);
    int64_t longest = 1;
    for (int32_t length : values)
      longest = std::max<int64_t>(longest, length);
    if (padded < 0)
      padded = longest;
    for (int64_t b = 0; b < batch; ++b)
      if (values[b] < 0 || values[b] > padded)
        return absl::InternalError(
            "the artifact computed length " + std::to_string(values[b]) +
            " for sequence " + std::to_string(b) + " of dim '" + dim.name +
            "', outside [0, " + std::to_string(padded) + "]");
    bound.sizes[dim.name] = padded;
    bound.lengths[dim.name] = std::move(values);
    // What follows from it (a flattened batch over an N-best's K) may be
    // the batch of the next computed dim.
    deriveDims(manifest, bound);
  }
  return absl::OkStatus();
}

std::string axesText(const std::vector<Axis> &axes) {
  std::string text = "[";
  for (size_t i = 0; i < axes.size(); ++i)
    text += (i ? ", " : "") +
            (axes[i].isNamed() ? axes[i].dim : std::to_string(axes[i].size));
  return text + "]";
}
} // namespace

struct ResidentTensors::Impl {
  struct Entry {
    DType dtype = DType::f32;
    std::vector<int64_t> shape;
    /// Where runs read it.
    void *buffer = nullptr;
    /// The device memory to release (null on the host).
    void *allocation = nullptr;
    /// On the host: the tensor itself.
    std::shared_ptr<Tensor> host;
  };

  std::shared_ptr<runtime::Device> device;
  std::map<std::string, Entry> entries;

  void release(Entry &entry) {
    if (entry.allocation)
      device->release(entry.allocation);
    entry.allocation = nullptr;
  }
  ~Impl() {
    for (auto &entry : entries)
      release(entry.second);
  }
};

namespace {
std::atomic<int> gNumThreads{0};
} // namespace

void nn::setNumThreads(int threads) { gNumThreads = std::max(0, threads); }
int nn::numThreads() { return gNumThreads; }

struct Executable::Impl {
  /// Sizes of every dim and lengths of every sequence dim, once validated.
  using Bound = DimValues;

  void *handle = nullptr;
  EntryFn entry = nullptr;
  /// The thread settings of the libraries the artifact brought (null when
  /// it does not use them); the runtime links neither.
  void (*setOpenMPThreads)(int) = nullptr;
  void (*setBlasThreads)(int) = nullptr;
  /// libomp's spin time of idle workers (ms).
  void (*setOpenMPBlocktime)(int) = nullptr;
  Manifest manifest;
  std::shared_ptr<runtime::Device> device;
  std::unique_ptr<runtime::DeviceSession> session;
  /// Runs of this executable, one at a time (the session's state).
  mutable std::mutex runMutex;

  ~Impl() {
    // The session first: its modules' images live in the artifact.
    session.reset();
    if (handle)
      dlclose(handle);
  }

  /// Whether arguments and results live in host memory as they are.
  bool onHost() const { return device->isHost(); }
  using Resident = ResidentTensors::Impl;
  /// The entry `resident` holds under `name`, or null.
  static const Resident::Entry *heldEntry(const Resident *resident,
                                          const std::string &name) {
    if (!resident)
      return nullptr;
    auto found = resident->entries.find(name);
    return found == resident->entries.end() ? nullptr : &found->second;
  }
  absl::Status runEntry(const Bound &bound, const RunInputs &inputs,
                        const Resident *resident, std::vector<int64_t> &results,
                        std::set<void *> &ownedByCaller,
                        std::vector<void *> &deviceCopies) const;
  absl::Status run(const RunInputs &inputs, Resident *resident,
                   RunResult &result,
                   const std::function<bool(const RunResult &)> &accept) const;

  absl::Status bind(const RunInputs &inputs, Bound &bound,
                    const Resident *resident = nullptr) const;
  /// Whether host code of the artifact reads parameter `name` (so its
  /// buffer must be memory the host can read too).
  bool parameterIsHostVisible(const std::string &name) const;
  absl::Status checkClasses(const TensorInfo &info, const Tensor &tensor,
                            const Bound &bound) const;
};

Executable::Executable() : impl(std::make_unique<Impl>()) {}
Executable::~Executable() = default;
Executable::Executable(Executable &&) noexcept = default;
Executable &Executable::operator=(Executable &&) noexcept = default;

const Manifest &Executable::manifest() const { return impl->manifest; }

std::string Executable::deviceName() const {
  return impl->device ? impl->device->describe() : "";
}

bool Executable::runsOnHost() const {
  return impl->device && impl->device->isHost();
}

void Executable::setProfiling(bool enabled) const {
  if (impl->device)
    impl->device->setProfiling(enabled);
}

std::vector<KernelTime> Executable::takeProfile() const {
  return impl->device ? impl->device->takeProfile() : std::vector<KernelTime>{};
}

/// Makes this library's symbols (the C entry points artifacts call:
/// nn_cpu_sgemm, the searches, the CUDA launches) visible to the objects
/// dlopen loads later. A program linked against the runtime has it in the
/// global scope already; a host that loads it as a dependency of a
/// library opened with RTLD_LOCAL (a Python extension module) does not,
/// and artifacts would fail to load with an undefined symbol.
static void exportRuntimeSymbols() {
  static std::once_flag once;
  std::call_once(once, [] {
    Dl_info info;
    if (dladdr(reinterpret_cast<void *>(&exportRuntimeSymbols), &info) &&
        info.dli_fname)
      // RTLD_NOLOAD: promotes the loaded copy; the handle stays open
      // (the library is never unloaded while artifacts may need it).
      dlopen(info.dli_fname, RTLD_NOW | RTLD_NOLOAD | RTLD_GLOBAL);
  });
}

absl::Status Executable::load(const std::string &path, Executable &executable,
                              const LoadOptions &options) {
  // dlopen maps the file: a truncated or damaged object would fault
  // (SIGBUS) when a page past its end is touched. Check the ELF headers
  // against the file first.
  absl::Status status = checkSharedObject(path);
  if (!status.ok())
    return status;
  exportRuntimeSymbols();
  auto impl = std::make_unique<Impl>();
  // dlopen looks a name without a slash up in the library path: an
  // artifact given as "model.so" is the file in the working directory.
  std::string file = path.find('/') == std::string::npos ? "./" + path : path;
  impl->handle = dlopen(file.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (!impl->handle)
    return absl::InvalidArgumentError("cannot load artifact '" + path +
                                      "': " + dlerror());
  auto *text = (const char *)dlsym(impl->handle, "nn_manifest");
  auto hashFn = (uint64_t(*)())dlsym(impl->handle, "nn_manifest_hash");
  auto arityFn = (int64_t(*)())dlsym(impl->handle, "nn_entry_arity");
  impl->entry = (EntryFn)dlsym(impl->handle, "nn_entry");
  impl->setOpenMPThreads =
      (void (*)(int))dlsym(impl->handle, "omp_set_num_threads");
  impl->setBlasThreads =
      (void (*)(int))dlsym(impl->handle, "openblas_set_num_threads");
  impl->setOpenMPBlocktime =
      (void (*)(int))dlsym(impl->handle, "kmp_set_blocktime");
  if (!text || !impl->entry)
    return absl::InvalidArgumentError(
        "'" + path + "' is not an nn artifact (no nn_manifest/nn_entry)");
  if (!hashFn || !arityFn)
    return absl::InvalidArgumentError("'" + path +
                                      "' was written by an older compiler "
                                      "(no nn_manifest_hash); recompile it");
  // The manifest's size is unknown: read it up to its NUL within a bound.
  size_t limit = std::min(kMaxManifestBytes, bytesMappedFrom(text));
  size_t length = strnlen(text, limit);
  if (length == limit)
    return absl::InvalidArgumentError("'" + path +
                                      "': the manifest is not terminated");
  std::string manifestText(text, length);
  if (Manifest::hash(manifestText) != hashFn())
    return absl::InvalidArgumentError(
        "'" + path +
        "': the manifest does not match the code it was "
        "compiled with (checksum mismatch); the artifact is "
        "damaged, recompile it");
  status = Manifest::parse(manifestText, impl->manifest);
  if (!status.ok())
    return withContext(status, "'" + path + "': ");
  if (impl->manifest.entryArity() != arityFn())
    return absl::InvalidArgumentError(
        "'" + path + "': the manifest describes " +
        std::to_string(impl->manifest.entryArity()) +
        " entry arguments, the code takes " + std::to_string(arityFn()));
  absl::StatusOr<std::shared_ptr<runtime::Device>> device =
      runtime::getDevice(impl->manifest.target, options.device);
  if (!device.ok())
    return withContext(device.status(), "'" + path + "': ");
  impl->device = *std::move(device);
  impl->session = impl->device->openSession(impl->manifest);
  executable.impl = std::move(impl);
  return absl::OkStatus();
}

bool Executable::Impl::parameterIsHostVisible(const std::string &name) const {
  // The argument order of runEntry: per root dim its size (and lengths),
  // the inputs, then the parameters.
  int64_t argument = 0;
  for (const std::string &root : manifest.rootDims)
    argument += manifest.findDim(root)->kind == DimInfo::Kind::seq ? 2 : 1;
  argument += (int64_t)manifest.inputs.size();
  for (const TensorInfo &info : manifest.parameters) {
    if (info.name == name)
      return std::count(manifest.hostVisibleArguments.begin(),
                        manifest.hostVisibleArguments.end(), argument) > 0;
    ++argument;
  }
  return false;
}

absl::Status Executable::Impl::bind(const RunInputs &given, Bound &bound,
                                    const Resident *resident) const {
  // Where each dim's size came from, for messages.
  std::map<std::string, std::string> source;
  auto record = [&](const std::string &dim, int64_t size,
                    const std::string &what) -> absl::Status {
    auto [it, inserted] = bound.sizes.emplace(dim, size);
    if (!inserted && it->second != size)
      return absl::InvalidArgumentError(
          what + " gives dim '" + dim + "' size " + std::to_string(size) +
          ", but " + source[dim] + " gives " + std::to_string(it->second));
    if (inserted)
      source[dim] = what;
    return absl::OkStatus();
  };

  // Inputs: presence, dtype, rank, static sizes; named sizes recorded.
  auto declares = [](const std::vector<TensorInfo> &infos,
                     const std::string &name) {
    return std::any_of(infos.begin(), infos.end(), [&](const TensorInfo &info) {
      return info.name == name;
    });
  };
  for (const auto &entry : given.inputs) {
    const std::string &name = entry.first;
    bool known = declares(manifest.inputs, name);
    if (!known)
      return absl::InvalidArgumentError(
          "unknown input '" + name + "'; graph @" + manifest.graph + " takes " +
          std::to_string(manifest.inputs.size()) + " inputs");
  }
  for (const TensorInfo &info : manifest.inputs) {
    auto found = given.inputs.find(info.name);
    if (found == given.inputs.end())
      return absl::InvalidArgumentError("missing input '" + info.name + "' " +
                                        axesText(info.axes) + " " +
                                        toString(info.dtype));
    const Tensor &tensor = found->second;
    std::string what = "input '" + info.name + "'";
    if (tensor.dtype() != info.dtype)
      return absl::InvalidArgumentError(what + " has dtype " +
                                        toString(tensor.dtype()) +
                                        ", expected " + toString(info.dtype));
    if (tensor.rank() != (int64_t)info.axes.size())
      return absl::InvalidArgumentError(
          what + " has rank " + std::to_string(tensor.rank()) + " " +
          shapeText(tensor.shape()) + ", expected " + axesText(info.axes));
    for (size_t i = 0; i < info.axes.size(); ++i) {
      const Axis &axis = info.axes[i];
      int64_t size = tensor.shape()[i];
      if (!axis.isNamed() && size != axis.size)
        return absl::InvalidArgumentError(
            what + " axis " + std::to_string(i) + " has size " +
            std::to_string(size) + ", expected " + std::to_string(axis.size));
      if (axis.isNamed()) {
        absl::Status status = record(axis.dim, size, what);
        if (!status.ok())
          return status;
      }
    }
  }

  // Lengths of the root sequence dims.
  for (const auto &[dim, lengths] : given.lengths) {
    const DimInfo *info = manifest.findDim(dim);
    if (!info || info->kind != DimInfo::Kind::seq || !info->source.empty())
      return absl::InvalidArgumentError(
          "lengths given for '" + dim +
          "', which is not a root sequence dim of @" + manifest.graph);
  }
  for (const std::string &root : manifest.rootDims) {
    const DimInfo *dim = manifest.findDim(root);
    if (dim->kind != DimInfo::Kind::seq)
      continue;
    auto found = given.lengths.find(root);
    if (found == given.lengths.end())
      return absl::InvalidArgumentError("missing lengths for sequence dim '" +
                                        root + "'");
    absl::Status status = record(dim->batch, (int64_t)found->second.size(),
                                 "the lengths of '" + root + "'");
    if (!status.ok())
      return status;
    bound.lengths[root] = found->second;
  }

  // Root dims: batch sizes and padded sizes, checked against the lengths.
  for (const DimInfo &dim : manifest.dims) {
    if (dim.kind == DimInfo::Kind::batch && !dim.isFlatten()) {
      auto it = bound.sizes.find(dim.name);
      if (it == bound.sizes.end())
        return absl::InvalidArgumentError(
            "no input or lengths gives the size of batch dim '" + dim.name +
            "'");
      if (it->second == 0)
        return absl::InvalidArgumentError(
            "batch dim '" + dim.name +
            "' is empty (size 0); give at least one sequence");
    } else if (dim.kind == DimInfo::Kind::seq && dim.source.empty() &&
               !dim.computed) {
      const std::vector<int32_t> &lengths = bound.lengths[dim.name];
      if (!bound.sizes.count(dim.name)) {
        int64_t longest = 1;
        for (int32_t length : lengths)
          longest = std::max<int64_t>(longest, length);
        bound.sizes[dim.name] = longest;
        source[dim.name] = "the longest sequence";
      }
      int64_t padded = bound.sizes[dim.name];
      if (padded == 0)
        return absl::InvalidArgumentError(
            source[dim.name] + " has sequence dim '" + dim.name +
            "' of padded size 0; pad to at least 1 frame");
      for (size_t b = 0; b < lengths.size(); ++b)
        if (lengths[b] < 0 || lengths[b] > padded)
          return absl::InvalidArgumentError(
              "length " + std::to_string(lengths[b]) + " of sequence " +
              std::to_string(b) + " in dim '" + dim.name + "' is " +
              (lengths[b] < 0
                   ? "negative"
                   : "above the padded size " + std::to_string(padded) +
                         " (from " + source[dim.name] + ")"));
    }
  }

  // Derived and packed dims follow from the roots; inputs that name them
  // must agree.
  std::map<std::string, int64_t> named = bound.sizes;
  deriveDims(manifest, bound);
  for (const DimInfo &dim : manifest.dims) {
    bool derived = (dim.kind == DimInfo::Kind::seq && !dim.source.empty()) ||
                   dim.isFlatten();
    if (!derived && dim.kind != DimInfo::Kind::packed)
      continue;
    auto it = named.find(dim.name);
    if (it == named.end() || !bound.sizes.count(dim.name))
      continue;
    int64_t expected = bound.sizes[dim.name];
    if (it->second == expected)
      continue;
    if (dim.isFlatten())
      return absl::InvalidArgumentError(
          source[dim.name] + " gives batch dim '" + dim.name + "' size " +
          std::to_string(it->second) + ", but the lengths of '" + dim.inner +
          "' sum to " + std::to_string(expected));
    if (derived)
      return absl::InvalidArgumentError(
          source[dim.name] + " gives dim '" + dim.name + "' size " +
          std::to_string(it->second) + ", expected " +
          derivedFormula(dim, bound.sizes[dim.source]) + " = " +
          std::to_string(expected));
    return absl::InvalidArgumentError(
        source[dim.name] + " gives packed dim '" + dim.name + "' size " +
        std::to_string(it->second) + ", but " +
        (dim.inner.empty() ? "the lengths of '" + dim.sequence + "' sum to "
                           : "the products of the lengths of '" + dim.sequence +
                                 "' and '" + dim.inner + "' sum to ") +
        std::to_string(expected));
  }

  // Parameters: presence, dtype and exact shape.
  for (const auto &entry : given.parameters) {
    const std::string &name = entry.first;
    bool known = declares(manifest.parameters, name);
    if (!known)
      return absl::InvalidArgumentError("unknown parameter '" + name +
                                        "'; graph @" + manifest.graph +
                                        " does not read it");
  }
  for (const TensorInfo &info : manifest.parameters) {
    std::vector<int64_t> expected;
    for (const Axis &axis : info.axes)
      expected.push_back(axis.size);
    DType dtype;
    std::vector<int64_t> shape;
    std::string what = "parameter '" + info.name + "'";
    if (const Resident::Entry *held = heldEntry(resident, info.name)) {
      dtype = held->dtype;
      shape = held->shape;
      what = "resident " + what;
    } else {
      auto found = given.parameters.find(info.name);
      if (found == given.parameters.end())
        return absl::InvalidArgumentError("missing parameter '" + info.name +
                                          "' " + axesText(info.axes) + " " +
                                          toString(info.dtype));
      dtype = found->second.dtype();
      shape = found->second.shape();
    }
    if (dtype != info.dtype || shape != expected)
      return absl::InvalidArgumentError(
          what + " is " + toString(dtype) + " " + shapeText(shape) +
          ", expected " + toString(info.dtype) + " " + shapeText(expected));
  }

  for (const TensorInfo &info : manifest.inputs)
    if (info.classes > 0) {
      absl::Status status =
          checkClasses(info, given.inputs.at(info.name), bound);
      if (!status.ok())
        return status;
    }
  return absl::OkStatus();
}

/// Class indices at valid positions must lie in [0, classes); padding may
/// hold anything.
absl::Status Executable::Impl::checkClasses(const TensorInfo &info,
                                            const Tensor &tensor,
                                            const Bound &bound) const {
  const std::vector<int64_t> &shape = tensor.shape();
  absl::Status status;
  int64_t flat = 0;
  forEachIndex(shape, [&](const std::vector<int64_t> &index) {
    double value = tensor.at(flat++);
    if (!status.ok() || !bound.isValid(info.axes, index))
      return;
    if (value < 0 || value >= (double)info.classes)
      status = absl::InvalidArgumentError(
          "input '" + info.name + "' holds class index " +
          std::to_string((int64_t)value) + " at " + shapeText(index) +
          ", outside [0, " + std::to_string(info.classes) + ")");
    else if ((int64_t)value == info.reservedClass)
      status = absl::InvalidArgumentError(
          "input '" + info.name + "' holds the reserved class " +
          std::to_string(info.reservedClass) + " (the CTC blank) at " +
          shapeText(index) + " (sequence " + std::to_string(index[0]) +
          ", position " + std::to_string(index.size() > 1 ? index[1] : 0) +
          "), a valid label position");
  });
  return status;
}

absl::Status Executable::validate(const RunInputs &inputs,
                                  DimValues &dims) const {
  dims = DimValues();
  if (!impl || !impl->entry)
    return absl::FailedPreconditionError(
        "no artifact is loaded in this executable (Executable::load first)");
  return impl->bind(inputs, dims);
}

/// Builds the arguments (staging them on the device for GPU artifacts) and
/// calls the entry point; `results` receives the results struct.
absl::Status Executable::Impl::runEntry(
    const Bound &bound, const RunInputs &inputs, const Resident *resident,
    std::vector<int64_t> &results, std::set<void *> &ownedByCaller,
    std::vector<void *> &deviceCopies) const {
  const Manifest &m = manifest;
  std::vector<void *> argv;
  std::vector<Descriptor> descriptors;
  descriptors.reserve(m.rootDims.size() + m.inputs.size() +
                      m.parameters.size());
  if (!results.empty())
    argv.push_back(results.data());
  // Host data as it is, or a device copy of it. `argument` counts the
  // entry function's arguments (the results pointer aside).
  int64_t argument = 0;
  auto stage = [&](const void *data, size_t bytes,
                   const std::string &what) -> void * {
    void *target = const_cast<void *>(data);
    bool hostVisible = std::count(m.hostVisibleArguments.begin(),
                                  m.hostVisibleArguments.end(), argument) > 0;
    if (!onHost()) {
      absl::StatusOr<void *> buffer = device->tryAllocate(bytes, hostVisible);
      if (!buffer.ok()) {
        // The run is skipped; the entry never sees this argument.
        session->fail(buffer.status());
        return nullptr;
      }
      target = *buffer;
      deviceCopies.push_back(target);
      session->fail(device->copyToDevice(target, data, bytes, what));
    }
    ownedByCaller.insert(target);
    return target;
  };
  std::map<std::string, std::vector<int32_t>> lengths = bound.lengths;
  for (const std::string &root : m.rootDims) {
    argv.push_back((void *)(intptr_t)bound.sizes.at(root));
    ++argument;
    if (m.findDim(root)->kind == DimInfo::Kind::seq) {
      std::vector<int32_t> &values = lengths[root];
      void *data = stage(values.data(), values.size() * sizeof(int32_t),
                         "the lengths of '" + root + "'");
      descriptors.emplace_back(data,
                               std::vector<int64_t>{(int64_t)values.size()});
      argv.push_back(descriptors.back().pointer());
      ++argument;
    }
  }
  auto pass = [&](const Tensor &tensor, const std::string &what) {
    void *data = stage(tensor.raw(), tensor.sizeInBytes(), what);
    descriptors.emplace_back(data, tensor.shape());
    argv.push_back(descriptors.back().pointer());
    ++argument;
  };
  for (const TensorInfo &info : m.inputs)
    pass(inputs.inputs.at(info.name), "input '" + info.name + "'");
  for (const TensorInfo &info : m.parameters) {
    if (const Resident::Entry *held = heldEntry(resident, info.name)) {
      // Read where it lives: no staging.
      ownedByCaller.insert(held->buffer);
      descriptors.emplace_back(held->buffer, held->shape);
      argv.push_back(descriptors.back().pointer());
      ++argument;
      continue;
    }
    pass(inputs.parameters.at(info.name), "parameter '" + info.name + "'");
  }

  // OpenMP's settings belong to the calling thread: set them on the thread
  // that runs.
  if (int threads = numThreads(); threads > 0) {
    if (setOpenMPThreads)
      setOpenMPThreads(threads);
    if (setBlasThreads)
      setBlasThreads(threads);
  }
  // Idle OpenMP workers spin for 1 ms, not libomp's 200 ms: the GEMMs
  // between threaded loops run on OpenBLAS's own threads, which spinning
  // workers would slow down, while waking a sleeping worker costs more
  // than a short loop (docs/performance.md, "Threads"). KMP_BLOCKTIME,
  // when set, wins.
  static const bool blocktimeFromEnvironment = std::getenv("KMP_BLOCKTIME");
  if (setOpenMPBlocktime && !blocktimeFromEnvironment)
    setOpenMPBlocktime(1);
  return session->run(entry, argv.data());
}

absl::Status Executable::run(const RunInputs &inputs, RunResult &result) const {
  if (!impl || !impl->entry)
    return absl::FailedPreconditionError(
        "no artifact is loaded in this executable (Executable::load first)");
  return impl->run(inputs, nullptr, result, {});
}

absl::Status Executable::runResident(
    const RunInputs &inputs, ResidentTensors &resident, RunResult &result,
    const std::function<bool(const RunResult &)> &accept) const {
  if (!impl || !impl->entry)
    return absl::FailedPreconditionError(
        "no artifact is loaded in this executable (Executable::load first)");
  if (resident.impl && resident.impl->device &&
      resident.impl->device != impl->device && !resident.impl->entries.empty())
    return absl::InvalidArgumentError("the resident tensors live on " +
                                      resident.impl->device->describe() +
                                      ", but @" + impl->manifest.graph +
                                      " runs on " + impl->device->describe());
  return impl->run(inputs, resident.impl.get(), result, accept);
}

absl::Status Executable::Impl::run(
    const RunInputs &inputs, Resident *resident, RunResult &result,
    const std::function<bool(const RunResult &)> &accept) const {
  const Impl *impl = this;
  const Manifest &m = manifest;
  Impl::Bound bound;
  absl::Status status = impl->bind(inputs, bound, resident);
  if (!status.ok())
    return status;

  status = impl->device->availability();
  if (!status.ok())
    return withContext(status, "cannot run @" + m.graph + " on the " +
                                   impl->device->kind() + ": ");
  // The session holds a run's state; host runs keep none and run in
  // parallel.
  std::unique_lock<std::mutex> runLock(impl->runMutex, std::defer_lock);
  if (!impl->onHost())
    runLock.lock();

  // Results struct: outputs, then (sum, factor) per loss, all descriptors.
  std::vector<size_t> resultRanks;
  for (const TensorInfo &output : m.outputs)
    resultRanks.push_back(output.axes.size());
  resultRanks.insert(resultRanks.end(), 2 * m.losses.size(), 0);
  size_t resultWords = 0;
  for (size_t rank : resultRanks)
    resultWords += 3 + 2 * rank;
  std::vector<int64_t> results(resultWords, 0);

  std::set<void *> ownedByCaller;
  std::vector<void *> deviceCopies;
  status = impl->runEntry(bound, inputs, resident, results, ownedByCaller,
                          deviceCopies);
  // Device buffers the run returned, released once each at the end.
  std::set<void *> deviceResults;
  auto releaseDevice = [&] {
    for (void *copy : deviceCopies)
      impl->device->release(copy);
    for (void *buffer : deviceResults)
      impl->device->release(buffer);
  };
  if (!impl->onHost()) {
    for (size_t r = 0, at = 0; r < resultRanks.size(); ++r) {
      auto *allocated = (void *)(intptr_t)results[at];
      if (allocated && !ownedByCaller.count(allocated))
        deviceResults.insert(allocated);
      at += 3 + 2 * resultRanks[r];
    }
  }
  if (!status.ok()) {
    releaseDevice();
    return status;
  }

  // Hand results over without copying: a row-major result becomes a
  // tensor that shares its buffer, freed (once) when the last tensor using
  // it goes away. Buffers the caller passed in (an input returned as is)
  // and strided results are copied instead.
  std::map<void *, std::shared_ptr<void>> owners;
  result = RunResult();
  size_t at = 0;
  std::vector<double> scalars;
  // Updates of resident tensors: device buffers that stay on the device,
  // or host tensors, committed once the run is accepted.
  struct Update {
    std::string name;
    void *allocation = nullptr, *buffer = nullptr;
    Tensor host;
  };
  std::vector<Update> updates;
  auto rowMajor = [](const std::vector<int64_t> &shape,
                     const std::vector<int64_t> &strides) {
    for (int64_t i = (int64_t)shape.size() - 1, expected = 1; i >= 0; --i) {
      if (shape[i] != 1 && strides[i] != expected)
        return false;
      expected *= shape[i];
    }
    return true;
  };
  for (size_t r = 0; r < resultRanks.size(); ++r) {
    size_t rank = resultRanks[r];
    int64_t *words = results.data() + at;
    at += 3 + 2 * rank;
    void *allocated = (void *)(intptr_t)words[0];
    auto *aligned = (char *)(intptr_t)words[1];
    int64_t offset = words[2];
    std::vector<int64_t> shape(words + 3, words + 3 + rank);
    std::vector<int64_t> strides(words + 3 + rank, words + 3 + 2 * rank);
    DType dtype = r < m.outputs.size() ? m.outputs[r].dtype : DType::f64;
    size_t element = byteSize(dtype);
    std::string updated;
    if (r < m.outputs.size() && m.outputs[r].name.rfind("update:", 0) == 0 &&
        heldEntry(resident, m.outputs[r].name.substr(7)))
      updated = m.outputs[r].name.substr(7);
    // A fresh dense device buffer becomes the resident tensor as it is.
    if (!updated.empty() && !impl->onHost() && allocated && offset == 0 &&
        !ownedByCaller.count(allocated) && rowMajor(shape, strides)) {
      deviceResults.erase(allocated);
      updates.push_back({updated, allocated, aligned, Tensor()});
      continue;
    }
    std::shared_ptr<void> hostCopy;
    if (!impl->onHost()) {
      // Copy the span the view covers; the view then reads the host copy.
      int64_t last = offset, count = 1;
      for (size_t i = 0; i < rank; ++i) {
        last += (shape[i] - 1) * strides[i];
        count *= shape[i];
      }
      size_t bytes = count == 0 ? 0 : (size_t)(last + 1) * element;
      hostCopy =
          std::shared_ptr<void>(std::malloc(bytes ? bytes : 1), std::free);
      std::string what =
          r < m.outputs.size()
              ? "output '" + m.outputs[r].name + "'"
              : "loss '" + m.losses[(r - m.outputs.size()) / 2].name + "'";
      status = impl->device->copyToHost(hostCopy.get(), aligned, bytes, what);
      if (!status.ok()) {
        releaseDevice();
        return status;
      }
      aligned = (char *)hostCopy.get();
    }
    std::shared_ptr<void> &owner = hostCopy ? hostCopy : owners[allocated];
    if (!owner && allocated && !ownedByCaller.count(allocated))
      owner = std::shared_ptr<void>(allocated, _mlir_memref_to_llvm_free);
    Tensor tensor;
    if (owner && rowMajor(shape, strides)) {
      tensor = Tensor::adopt(dtype, shape, aligned + offset * element, owner);
    } else {
      tensor = Tensor(dtype, shape);
      auto *target = (char *)tensor.raw();
      forEachIndex(shape, [&](const std::vector<int64_t> &index) {
        int64_t source = offset;
        for (size_t i = 0; i < rank; ++i)
          source += index[i] * strides[i];
        std::memcpy(target, aligned + source * element, element);
        target += element;
      });
    }
    if (!updated.empty())
      updates.push_back({updated, nullptr, nullptr, std::move(tensor)});
    else if (r < m.outputs.size())
      result.outputs.emplace_back(m.outputs[r].name, std::move(tensor));
    else
      scalars.push_back(tensor.at(0));
  }

  status = bindComputedDims(m, result, bound);
  if (!status.ok()) {
    releaseDevice();
    return status;
  }

  for (size_t l = 0; l < m.losses.size(); ++l) {
    const LossInfo &info = m.losses[l];
    LossValue loss;
    loss.name = info.name;
    loss.sum = scalars[2 * l];
    loss.normalization = scalars[2 * l + 1];
    loss.normalized =
        loss.normalization == 0 ? 0.0 : loss.sum / loss.normalization;
    loss.scale = info.scale;
    loss.asError = info.asError;
    loss.packed = info.packed;
    int64_t batch = info.batch.empty() ? 0 : bound.sizes.at(info.batch);
    if (info.batch.empty()) {
      // A callee's loss over dims the entry does not name: frames unknown.
    } else if (info.packed) {
      const std::string &sequence = info.sequences.front();
      loss.framesPadded = batch * bound.sizes.at(sequence);
      for (int32_t length : bound.lengths[sequence])
        loss.framesComputed += length;
    } else {
      int64_t padded = batch;
      for (const std::string &sequence : info.sequences)
        padded *= bound.sizes.at(sequence);
      loss.framesPadded = loss.framesComputed = padded;
    }
    result.losses.push_back(loss);
  }

  if (resident && !updates.empty()) {
    bool accepted = !accept || accept(result);
    for (Update &update : updates) {
      if (!accepted) {
        if (update.allocation)
          impl->device->release(update.allocation);
        continue;
      }
      Resident::Entry &entry = resident->entries[update.name];
      if (!update.allocation && !impl->onHost()) {
        // A strided or reused result came through the host: back in.
        absl::StatusOr<void *> buffer = impl->device->tryAllocate(
            std::max<size_t>(update.host.sizeInBytes(), 1),
            parameterIsHostVisible(update.name));
        status = buffer.status();
        if (status.ok())
          status = impl->device->copyToDevice(
              *buffer, update.host.raw(), update.host.sizeInBytes(),
              "resident tensor '" + update.name + "'");
        if (!status.ok()) {
          releaseDevice();
          return status;
        }
        update.allocation = update.buffer = *buffer;
      }
      if (update.allocation != entry.allocation)
        resident->release(entry);
      if (impl->onHost()) {
        entry.host = std::make_shared<Tensor>(std::move(update.host));
        entry.buffer = entry.host->raw();
      } else {
        entry.allocation = update.allocation;
        entry.buffer = update.buffer;
      }
    }
  }
  releaseDevice();
  return absl::OkStatus();
}

ResidentTensors::ResidentTensors() = default;
ResidentTensors::~ResidentTensors() = default;
ResidentTensors::ResidentTensors(ResidentTensors &&) noexcept = default;
ResidentTensors &
ResidentTensors::operator=(ResidentTensors &&) noexcept = default;

absl::Status ResidentTensors::place(const Executable &executable,
                                    std::map<std::string, Tensor> tensors) {
  if (!executable.impl || !executable.impl->entry)
    return absl::FailedPreconditionError(
        "no artifact is loaded in this executable (Executable::load first)");
  const std::shared_ptr<runtime::Device> &device = executable.impl->device;
  if (!impl)
    impl = std::make_unique<Impl>();
  if (impl->device && impl->device != device && !impl->entries.empty())
    return absl::InvalidArgumentError("these resident tensors live on " +
                                      impl->device->describe() + ", not on " +
                                      device->describe());
  impl->device = device;
  for (auto &[name, tensor] : tensors) {
    Impl::Entry entry;
    entry.dtype = tensor.dtype();
    entry.shape = tensor.shape();
    if (device->isHost()) {
      entry.host = std::make_shared<Tensor>(std::move(tensor));
      entry.buffer = entry.host->raw();
    } else {
      size_t bytes = tensor.sizeInBytes();
      absl::StatusOr<void *> buffer =
          device->tryAllocate(std::max<size_t>(bytes, 1),
                              executable.impl->parameterIsHostVisible(name));
      if (!buffer.ok())
        return buffer.status();
      absl::Status status = device->copyToDevice(
          *buffer, tensor.raw(), bytes, "resident tensor '" + name + "'");
      if (!status.ok()) {
        device->release(*buffer);
        return status;
      }
      entry.allocation = entry.buffer = *buffer;
    }
    auto found = impl->entries.find(name);
    if (found != impl->entries.end())
      impl->release(found->second);
    impl->entries[name] = std::move(entry);
  }
  return absl::OkStatus();
}

absl::Status
ResidentTensors::fetch(std::map<std::string, Tensor> &tensors) const {
  if (!impl)
    return absl::OkStatus();
  for (const auto &[name, entry] : impl->entries) {
    if (entry.host) {
      tensors[name] =
          Tensor::adopt(entry.dtype, entry.shape, entry.buffer,
                        std::shared_ptr<void>(entry.host, entry.host->raw()));
      continue;
    }
    Tensor copy(entry.dtype, entry.shape);
    absl::Status status =
        impl->device->copyToHost(copy.raw(), entry.buffer, copy.sizeInBytes(),
                                 "resident tensor '" + name + "'");
    if (!status.ok())
      return status;
    tensors[name] = std::move(copy);
  }
  return absl::OkStatus();
}

bool ResidentTensors::holds(const std::string &name) const {
  return impl && impl->entries.count(name);
}

bool ResidentTensors::empty() const { return !impl || impl->entries.empty(); }
