//===- NcclCommunicator.cpp - collectives on GPUs through NCCL ------------===//
//
// The "nccl" Communicator (nn/Cuda.h): NCCL 2 loaded with dlopen
// (NcclApi.h), one communicator per rank on its CUDA device, bootstrapped
// through the run's MPI communicator (rank 0's ncclUniqueId broadcast to
// the others: NCCL's documented way). Collectives are enqueued on the
// device's stream, ordered after the kernels before them; the call then
// polls the stream until NCCL finished (so that host code after it sees
// the sums, and a lost peer is a timeout instead of a hang), asking NCCL
// for asynchronous errors while it waits.
//
//===----------------------------------------------------------------------===//

#include "nn/Cuda.h"

#include "runtime/cuda/CudaBackend.h"
#include "runtime/cuda/CudaDevice.h"
#include "runtime/cuda/NcclApi.h"

#include <dlfcn.h>

#include <cstdlib>

using namespace nn;
using namespace nn::cuda;

namespace {

/// libnccl loaded and its functions resolved, or why not.
absl::StatusOr<nccl::Api> loadNccl(const std::string &path) {
  // RTLD_LOCAL: NCCL's symbols serve this runtime only.
  void *library = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (!library) {
    const char *why = dlerror();
    return absl::UnavailableError(
        "cannot load NCCL '" + path + "' (" + (why ? why : "unknown") +
        "): a data-parallel GPU run needs NCCL 2 (set NN_NCCL_LIBRARY to "
        "its libnccl.so.2)");
  }
  nccl::Api api;
  std::string missing;
#define NN_NCCL_RESOLVE(member, symbol, result, parameters)                    \
  api.member = reinterpret_cast<decltype(api.member)>(dlsym(library, symbol)); \
  if (!api.member)                                                             \
    missing += std::string(missing.empty() ? "" : ", ") + symbol;
  NN_NCCL_FUNCTIONS(NN_NCCL_RESOLVE)
#undef NN_NCCL_RESOLVE
  // The library stays loaded: NCCL's threads may outlive a communicator.
  if (!missing.empty())
    return absl::UnavailableError("NCCL '" + path + "' lacks " + missing);
  return api;
}

class NcclCommunicator final : public Communicator {
public:
  NcclCommunicator(Communicator &bootstrap, std::shared_ptr<CudaDevice> device,
                   nccl::Api api, double timeoutSeconds)
      : bootstrap(bootstrap), device(std::move(device)), api(api) {
    setTimeout(timeoutSeconds);
  }

  ~NcclCommunicator() override {
    if (!comm)
      return;
    (void)device->makeCurrent();
    // An aborted communicator is gone already.
    if (!aborted)
      api.ncclCommDestroy(comm);
  }

  /// Joins the ranks: rank 0's unique id through the bootstrap, sent
  /// with whether rank 0 could make it (so that no rank waits for an id
  /// that never comes).
  absl::Status join() {
    struct {
      int64_t made = 0;
      nccl::ncclUniqueId id{};
    } message;
    absl::Status made = absl::OkStatus();
    if (rank() == 0) {
      made = check(api.ncclGetUniqueId(&message.id), "ncclGetUniqueId",
                   "making the id");
      message.made = made.ok();
    }
    if (absl::Status status = bootstrap.broadcast(&message, sizeof(message), 0);
        !status.ok())
      return status;
    if (!made.ok())
      return made;
    if (!message.made)
      return absl::UnavailableError(describe() +
                                    ": rank 0 could not make NCCL's id");
    // The context was made current on this thread before the ranks
    // agreed to join (makeNcclCommunicator). NCCL's own set-up has no
    // timeout: a rank lost now leaves the others to the launcher.
    nccl::ncclComm_t joined = nullptr;
    absl::Status status =
        check(api.ncclCommInitRank(&joined, size(), message.id, rank()),
              "ncclCommInitRank", "joining the ranks");
    // A failed init leaves nothing to destroy.
    if (status.ok())
      comm = joined;
    return status;
  }

  int rank() const override { return bootstrap.rank(); }
  int size() const override { return bootstrap.size(); }
  const char *backend() const override { return "nccl"; }

  absl::Status allReduceSum(const void *send, void *receive, int64_t count,
                            DType dtype) override {
    if (dtype != DType::f32 && dtype != DType::f64)
      return absl::InvalidArgumentError(describe() +
                                        ": NCCL sums f32 or f64 "
                                        "here, not " +
                                        toString(dtype));
    std::string what =
        "an all-reduce of " + std::to_string(count) + " " + toString(dtype);
    if (absl::Status status = ready(what); !status.ok())
      return status;
    if (absl::Status status =
            check(api.ncclAllReduce(send, receive, (size_t)count,
                                    dtype == DType::f32 ? nccl::kFloat32
                                                        : nccl::kFloat64,
                                    nccl::kSum, comm, device->getStream()),
                  "ncclAllReduce", what);
        !status.ok())
      return status;
    return wait(what);
  }

  absl::Status broadcast(void *data, int64_t bytes, int root) override {
    std::string what = "a broadcast of " + std::to_string(bytes) +
                       " bytes from rank " + std::to_string(root);
    if (root < 0 || root >= size())
      return absl::InvalidArgumentError(describe() + ": " + what +
                                        ": no such rank");
    if (absl::Status status = ready(what); !status.ok())
      return status;
    if (absl::Status status =
            check(api.ncclBroadcast(data, data, (size_t)bytes, nccl::kUint8,
                                    root, comm, device->getStream()),
                  "ncclBroadcast", what);
        !status.ok())
      return status;
    return wait(what);
  }

  absl::Status barrier() override { return bootstrap.barrier(); }
  Communicator &host() override { return bootstrap; }
  bool sumsDeviceMemory() const override { return true; }

  [[noreturn]] void abort(int code) override {
    abortComm();
    bootstrap.abort(code);
  }

private:
  absl::Status check(nccl::ncclResult_t result, const char *call,
                     const std::string &what) {
    if (result == nccl::kSuccess)
      return absl::OkStatus();
    return absl::InternalError(describe() + ": " + call + " failed (" +
                               errorText(result) + ") in " + what);
  }

  std::string errorText(nccl::ncclResult_t result) const {
    const char *text = api.ncclGetErrorString(result);
    return text ? text : "NCCL error " + std::to_string(result);
  }

  /// The context current on this thread, and the communicator usable.
  absl::Status ready(const std::string &what) {
    if (aborted)
      return absl::FailedPreconditionError(
          describe() + ": " + what +
          ": the NCCL communicator was aborted after an earlier failure");
    return device->makeCurrent();
  }

  void abortComm() {
    if (comm && !aborted) {
      aborted = true;
      api.ncclCommAbort(comm);
    }
  }

  /// Polls the stream until the collective (and all before it) finished
  /// (Communicator::waitFor). Fails on an error NCCL reports, or after the
  /// timeout; either aborts the communicator, which ends the collective
  /// on the device.
  absl::Status wait(const std::string &what) {
    absl::Status status = waitFor(
        [&]() -> absl::StatusOr<bool> {
          cuda::abi::CUresult query =
              device->getApi().cuStreamQuery(device->getStream());
          if (query == cuda::abi::kSuccess)
            return true;
          if (query != cuda::abi::kNotReady)
            return device->check(query, "cuStreamQuery",
                                 "after " + what + " (" + describe() + ")");
          nccl::ncclResult_t async = nccl::kSuccess;
          if (api.ncclCommGetAsyncError(comm, &async) == nccl::kSuccess &&
              async != nccl::kSuccess && async != nccl::kInProgress)
            return absl::InternalError(describe() + ": NCCL failed (" +
                                       errorText(async) + ") during " + what);
          return false;
        },
        what);
    if (!status.ok())
      abortComm();
    return status;
  }

  Communicator &bootstrap;
  std::shared_ptr<CudaDevice> device;
  nccl::Api api;
  nccl::ncclComm_t comm = nullptr;
  bool aborted = false;
};

} // namespace

absl::StatusOr<std::unique_ptr<Communicator>>
nn::makeNcclCommunicator(Communicator &bootstrap,
                         const CommunicatorOptions &options,
                         const CudaOptions &deviceOptions) {
  if (!(options.timeoutSeconds > 0))
    return absl::InvalidArgumentError(
        bootstrap.describe() +
        ": the collective timeout must be a number of seconds > 0");
  std::string path = options.ncclLibrary;
  if (path.empty()) {
    const char *fromEnv = std::getenv("NN_NCCL_LIBRARY");
    path = fromEnv && *fromEnv ? fromEnv : "libnccl.so.2";
  }
  absl::StatusOr<std::shared_ptr<CudaDevice>> device =
      cudaDevice(deviceOptions);
  absl::StatusOr<nccl::Api> api = [&]() -> absl::StatusOr<nccl::Api> {
    if (!device.ok())
      return device.status();
    if (absl::Status status = (*device)->makeCurrent(); !status.ok())
      return status;
    absl::StatusOr<nccl::Api> loaded = loadNccl(path);
    if (!loaded.ok())
      return loaded.status();
    // ncclCommAbort and ncclCommGetAsyncError came with 2.4 (version
    // codes: 2400 then, major * 10000 + minor * 100 + patch from 2.9).
    int version = 0;
    if (loaded->ncclGetVersion(&version) != nccl::kSuccess || version < 2400)
      return absl::UnavailableError("NCCL '" + path + "' is version " +
                                    std::to_string(version) +
                                    "; nn needs NCCL 2.4 or later");
    return loaded;
  }();
  // Every rank learns whether all found their GPU and NCCL before any
  // waits for the others in NCCL.
  double failed = api.ok() ? 0 : 1;
  if (absl::Status status =
          bootstrap.allReduceSum(&failed, &failed, 1, DType::f64);
      !status.ok())
    return status;
  if (!api.ok())
    return absl::Status(api.status().code(),
                        bootstrap.describe() + ": " +
                            std::string(api.status().message()));
  if (failed > 0)
    return absl::UnavailableError(
        bootstrap.describe() + ": " + std::to_string((int)failed) +
        " other ranks could not set up their GPU or NCCL");
  auto communicator = std::make_unique<NcclCommunicator>(
      bootstrap, *std::move(device), *api, options.timeoutSeconds);
  if (absl::Status status = communicator->join(); !status.ok())
    return status;
  return std::unique_ptr<Communicator>(std::move(communicator));
}
