//===- MpiCommunicator.cpp - MPI_COMM_WORLD, loaded at run time -----------===//
//
// The runtime does not link MPI: a single-process run must work where no
// MPI is installed. The library is loaded (RTLD_GLOBAL: OpenMPI's own
// plugins resolve its symbols) when a run of several processes starts,
// and called through the entry points it exports.
//
// Handles are OpenMPI's: MPI_Comm, MPI_Datatype and MPI_Op are pointers to
// objects the library exports (MPI_COMM_WORLD is &ompi_mpi_comm_world, and
// so on), constants are those of its mpi.h. Another MPI (MPICH's integer
// handles) is refused by name: its libmpi lacks those objects.
//
// Every collective is the non-blocking form, tested until it completes or
// the timeout passes: MPI has no timeouts of its own, and a rank waiting
// for one that died would otherwise wait forever.
//
//===----------------------------------------------------------------------===//

#include "nn/Communicator.h"

#include <algorithm>
#include <climits>
#include <cstdio>
#include <cstdlib>
#include <dlfcn.h>

using namespace nn;

namespace {

// OpenMPI's mpi.h: handles are pointers, requests too.
using MpiHandle = void *;
using MpiRequest = void *;
constexpr int kMpiSuccess = 0;
constexpr int kMpiThreadSerialized = 2;
constexpr int kMpiMaxErrorString = 256;

/// The entry points and objects of the loaded library.
struct MpiLibrary {
  void *handle = nullptr;
  int (*initialized)(int *) = nullptr;
  int (*finalized)(int *) = nullptr;
  int (*initThread)(int *, char ***, int, int *) = nullptr;
  int (*finalize)() = nullptr;
  int (*commRank)(MpiHandle, int *) = nullptr;
  int (*commSize)(MpiHandle, int *) = nullptr;
  int (*iallreduce)(const void *, void *, int, MpiHandle, MpiHandle, MpiHandle,
                    MpiRequest *) = nullptr;
  int (*ibcast)(void *, int, MpiHandle, int, MpiHandle, MpiRequest *) = nullptr;
  int (*ibarrier)(MpiHandle, MpiRequest *) = nullptr;
  int (*test)(MpiRequest *, int *, void *) = nullptr;
  int (*abort)(MpiHandle, int) = nullptr;
  int (*errorString)(int, char *, int *) = nullptr;
  int (*queryThread)(int *) = nullptr;
  int (*setErrorHandler)(MpiHandle, MpiHandle) = nullptr;
  MpiHandle world = nullptr, sum = nullptr, f32 = nullptr, f64 = nullptr,
            i32 = nullptr, i64 = nullptr, byte = nullptr,
            errorsReturn = nullptr;
};

template <typename F>
bool bind(void *handle, const char *name, F &entry, std::string &missing) {
  entry = reinterpret_cast<F>(dlsym(handle, name));
  if (!entry)
    missing += (missing.empty() ? "" : ", ") + std::string(name);
  return entry != nullptr;
}

absl::StatusOr<MpiLibrary> loadMpi(const std::string &path) {
  MpiLibrary mpi;
  mpi.handle = dlopen(path.c_str(), RTLD_NOW | RTLD_GLOBAL);
  if (!mpi.handle) {
    const char *why = dlerror();
    return absl::FailedPreconditionError(
        "cannot load the MPI library '" + path + "' (" +
        (why ? why : "unknown error") +
        "); a run of several processes needs OpenMPI (Debian: apt-get "
        "install openmpi-bin), or NN_MPI_LIBRARY naming its libmpi");
  }
  std::string missing;
  void *h = mpi.handle;
  bind(h, "MPI_Initialized", mpi.initialized, missing);
  bind(h, "MPI_Finalized", mpi.finalized, missing);
  bind(h, "MPI_Init_thread", mpi.initThread, missing);
  bind(h, "MPI_Finalize", mpi.finalize, missing);
  bind(h, "MPI_Comm_rank", mpi.commRank, missing);
  bind(h, "MPI_Comm_size", mpi.commSize, missing);
  bind(h, "MPI_Iallreduce", mpi.iallreduce, missing);
  bind(h, "MPI_Ibcast", mpi.ibcast, missing);
  bind(h, "MPI_Ibarrier", mpi.ibarrier, missing);
  bind(h, "MPI_Test", mpi.test, missing);
  bind(h, "MPI_Abort", mpi.abort, missing);
  bind(h, "MPI_Error_string", mpi.errorString, missing);
  bind(h, "MPI_Query_thread", mpi.queryThread, missing);
  bind(h, "MPI_Comm_set_errhandler", mpi.setErrorHandler, missing);
  bind(h, "ompi_mpi_errors_return", mpi.errorsReturn, missing);
  bind(h, "ompi_mpi_comm_world", mpi.world, missing);
  bind(h, "ompi_mpi_op_sum", mpi.sum, missing);
  bind(h, "ompi_mpi_float", mpi.f32, missing);
  bind(h, "ompi_mpi_double", mpi.f64, missing);
  bind(h, "ompi_mpi_int", mpi.i32, missing);
  bind(h, "ompi_mpi_int64_t", mpi.i64, missing);
  bind(h, "ompi_mpi_byte", mpi.byte, missing);
  if (!missing.empty())
    return absl::FailedPreconditionError(
        "the MPI library '" + path + "' lacks " + missing +
        " (nn speaks OpenMPI's ABI, libmpi.so.40; MPI-3 non-blocking "
        "collectives)");
  return mpi;
}

class MpiCommunicator final : public Communicator {
public:
  MpiCommunicator(MpiLibrary mpi, int rank, int size, double timeout,
                  bool finalizeAtEnd)
      : mpi(mpi), rankNumber(rank), worldSize(size),
        finalizeAtEnd(finalizeAtEnd) {
    setTimeout(timeout);
  }
  ~MpiCommunicator() override {
    // Its sums call MPI: they end before MPI does.
    stopSumThread();
    int done = 0;
    if (finalizeAtEnd && mpi.finalized(&done) == kMpiSuccess && !done)
      mpi.finalize();
  }

  int rank() const override { return rankNumber; }
  int size() const override { return worldSize; }
  const char *backend() const override { return "mpi"; }
  // MPI moves a non-blocking collective's data only while a call of this
  // process (MPI_Test) lets it, so a sum that overlaps the step needs a
  // thread of its own to call it.
  bool overlapsSums() const override { return true; }

  absl::Status allReduceSum(const void *send, void *receive, int64_t count,
                            DType dtype) override {
    MpiHandle type = dtype == DType::f32   ? mpi.f32
                     : dtype == DType::f64 ? mpi.f64
                     : dtype == DType::i32 ? mpi.i32
                                           : mpi.i64;
    size_t element = byteSize(dtype);
    // MPI counts are int: larger buffers go in pieces.
    for (int64_t done = 0; done < count;) {
      int piece = (int)std::min<int64_t>(count - done, INT_MAX / 8);
      const void *from = send == receive
                             ? reinterpret_cast<const void *>(1) // MPI_IN_PLACE
                             : (const char *)send + done * element;
      MpiRequest request = nullptr;
      if (absl::Status status =
              check(mpi.iallreduce(from, (char *)receive + done * element,
                                   piece, type, mpi.sum, mpi.world, &request),
                    "an all-reduce");
          !status.ok())
        return status;
      if (absl::Status status =
              wait(request, "an all-reduce of " + std::to_string(piece) + " " +
                                toString(dtype));
          !status.ok())
        return status;
      done += piece;
    }
    return absl::OkStatus();
  }

  absl::Status broadcast(void *data, int64_t bytes, int root) override {
    for (int64_t done = 0; done < bytes;) {
      int piece = (int)std::min<int64_t>(bytes - done, INT_MAX);
      MpiRequest request = nullptr;
      if (absl::Status status =
              check(mpi.ibcast((char *)data + done, piece, mpi.byte, root,
                               mpi.world, &request),
                    "a broadcast");
          !status.ok())
        return status;
      if (absl::Status status =
              wait(request, "a broadcast from rank " + std::to_string(root));
          !status.ok())
        return status;
      done += piece;
    }
    return absl::OkStatus();
  }

  absl::Status barrier() override {
    MpiRequest request = nullptr;
    if (absl::Status status =
            check(mpi.ibarrier(mpi.world, &request), "a barrier");
        !status.ok())
      return status;
    return wait(request, "a barrier");
  }

  [[noreturn]] void abort(int code) override {
    std::fflush(stdout);
    std::fflush(stderr);
    mpi.abort(mpi.world, code);
    std::_Exit(code); // MPI_Abort does not return; in case it does
  }

private:
  absl::Status check(int code, const char *what) {
    if (code == kMpiSuccess)
      return absl::OkStatus();
    char text[kMpiMaxErrorString] = {};
    int length = 0;
    if (mpi.errorString(code, text, &length) != kMpiSuccess)
      std::snprintf(text, sizeof(text), "MPI error %d", code);
    return absl::InternalError(describe() + ": " + what + " failed: " + text);
  }

  /// Tests `request` until it completes (Communicator::waitFor).
  absl::Status wait(MpiRequest &request, const std::string &what) {
    return waitFor(
        [&]() -> absl::StatusOr<bool> {
          int done = 0;
          if (absl::Status status =
                  check(mpi.test(&request, &done, nullptr), what.c_str());
              !status.ok())
            return status;
          return done != 0;
        },
        what);
  }

  MpiLibrary mpi;
  int rankNumber, worldSize;
  bool finalizeAtEnd;
};

} // namespace

absl::StatusOr<std::unique_ptr<Communicator>>
nn::makeMpiCommunicator(const CommunicatorOptions &options) {
  if (!(options.timeoutSeconds > 0))
    return absl::InvalidArgumentError(
        "the collective timeout must be a number of seconds > 0");
  std::string path = options.mpiLibrary;
  if (path.empty()) {
    const char *fromEnv = std::getenv("NN_MPI_LIBRARY");
    path = fromEnv && *fromEnv ? fromEnv : "libmpi.so.40";
  }
  absl::StatusOr<MpiLibrary> mpi = loadMpi(path);
  if (!mpi.ok())
    return mpi.status();
  int initialized = 0;
  if (mpi->initialized(&initialized) != kMpiSuccess)
    return absl::InternalError("MPI_Initialized failed");
  // A host that initialized MPI itself (mpi4py) keeps finalizing it.
  bool ours = !initialized;
  int provided = 0;
  if (ours && mpi->initThread(nullptr, nullptr, kMpiThreadSerialized,
                              &provided) != kMpiSuccess)
    return absl::InternalError("MPI_Init_thread failed ('" + path + "')");
  if (!ours && mpi->queryThread(&provided) != kMpiSuccess)
    return absl::InternalError("MPI_Query_thread failed ('" + path + "')");
  if (provided < kMpiThreadSerialized) {
    if (ours)
      mpi->finalize();
    return absl::FailedPreconditionError(
        "MPI ('" + path +
        "') is not initialized for MPI_THREAD_SERIALIZED (steps may run "
        "their collectives from any one thread)");
  }
  // Errors come back as codes, so that a failed collective says which
  // rank and op it was before the run ends (the default handler aborts).
  if (mpi->setErrorHandler(mpi->world, mpi->errorsReturn) != kMpiSuccess)
    return absl::InternalError("MPI_Comm_set_errhandler failed");
  int rank = 0, size = 0;
  if (mpi->commRank(mpi->world, &rank) != kMpiSuccess ||
      mpi->commSize(mpi->world, &size) != kMpiSuccess)
    return absl::InternalError("MPI_Comm_rank/MPI_Comm_size failed");
  return std::unique_ptr<Communicator>(
      new MpiCommunicator(*mpi, rank, size, options.timeoutSeconds, ours));
}
