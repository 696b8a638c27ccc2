//===- nn/Communicator.h - the processes of a data-parallel run -*- C++ -*-===//
//
// A data-parallel run is several processes (ranks), each training on its
// part of every batch. A Communicator is their collectives: sums of
// buffers over every rank (what a compiled step's nn.all_reduce does
// between the backward and the update), broadcast and barrier. Backends:
//
//  - local: a run of one process; every sum is the value itself.
//  - mpi:   MPI_COMM_WORLD of the MPI library loaded at run time (Debian's
//           OpenMPI, libmpi.so.40), for processes `mpirun` starts. A
//           single-process run never loads it.
//  - nccl:  the same ranks on their GPUs (nn/Cuda.h): buffers in device
//           memory, summed on the device's stream by NCCL, loaded at run
//           time (libnccl.so.2).
//
// Collectives wait at most `timeoutSeconds` for the other ranks, so a rank
// that stopped (failed, lost, stuck) ends the run with an error naming the
// collective instead of a hang. docs/distributed.md.
//
//   std::unique_ptr<nn::Communicator> comm = ...;   // makeMpiCommunicator
//   nn::CurrentCommunicator scope(comm.get());       // steps sum over it
//   nn::runTrainStep(...);
//
//===----------------------------------------------------------------------===//

#ifndef NN_COMMUNICATOR_H
#define NN_COMMUNICATOR_H

#include "nn/Manifest.h"

#include "absl/status/statusor.h"

#include <cstdint>
#include <functional>
#include <memory>
#include <string>

namespace nn {

/// Time spent in collectives, for the share of a step they take.
struct CollectiveStats {
  int64_t calls = 0;
  int64_t bytes = 0;
  double seconds = 0;
};

class Communicator {
public:
  virtual ~Communicator();
  /// This process's rank in [0, size()) and the number of processes.
  virtual int rank() const = 0;
  virtual int size() const = 0;
  /// "local", "mpi" or "nccl".
  virtual const char *backend() const = 0;

  /// `count` elements of `dtype` at `send`, summed element-wise over every
  /// rank, into `receive` (which may be `send`). Every rank calls it with
  /// the same count and dtype, in the same order as every other
  /// collective.
  virtual absl::Status allReduceSum(const void *send, void *receive,
                                    int64_t count, DType dtype) = 0;
  /// `bytes` at `data` on rank `root` into `data` on every other rank.
  virtual absl::Status broadcast(void *data, int64_t bytes, int root) = 0;
  /// Returns when every rank has called it.
  virtual absl::Status barrier() = 0;
  /// Ends every process of the run with exit status `code` (this rank
  /// failed; it has said why). Never returns.
  [[noreturn]] virtual void abort(int code) = 0;
  /// The same ranks for buffers in host memory: this communicator, or
  /// for one whose buffers live on a device (nccl) the one it was
  /// bootstrapped from. What the runtime sums on the host (a step's
  /// losses) goes through it.
  virtual Communicator &host() { return *this; }
  /// Whether its buffers are a GPU's (nccl), not the host's.
  virtual bool sumsDeviceMemory() const { return false; }

  /// The longest a collective waits for the other ranks before it fails
  /// (CommunicatorOptions::timeoutSeconds; a later setting applies to the
  /// collectives after it).
  double timeout() const { return timeoutSeconds; }
  void setTimeout(double seconds) { timeoutSeconds = seconds; }

  /// "rank 1 of 4": how errors and messages name this process.
  std::string describe() const;
  /// The collectives so far (nn_comm_all_reduce_v1 counts its calls).
  const CollectiveStats &stats() const { return collected; }
  void record(int64_t bytes, double seconds);

protected:
  /// Calls `test` until it says the collective `what` finished: at first
  /// at once (one the other ranks joined already finishes in
  /// microseconds), then with short sleeps that leave the cores to ranks
  /// still computing. An error `test` returns ends the wait; so does the
  /// timeout passing (DeadlineExceeded, naming this rank and `what`).
  absl::Status waitFor(const std::function<absl::StatusOr<bool>()> &test,
                       const std::string &what);

private:
  CollectiveStats collected;
  double timeoutSeconds = 600;
};

struct CommunicatorOptions {
  /// The longest a collective waits for the other ranks before it fails.
  double timeoutSeconds = 600;
  /// The MPI library to load ("" : $NN_MPI_LIBRARY, else libmpi.so.40).
  std::string mpiLibrary;
  /// The NCCL library to load ("" : $NN_NCCL_LIBRARY, else libnccl.so.2;
  /// makeNcclCommunicator in nn/Cuda.h).
  std::string ncclLibrary;
};

/// A run of one process.
std::unique_ptr<Communicator> makeLocalCommunicator();

/// Whether a launcher started this process as one rank of several:
/// OpenMPI's mpirun sets OMPI_COMM_WORLD_SIZE, PMIx launchers PMIX_RANK,
/// and Hydra (MPICH) PMI_SIZE; world sizes of 1 count as not launched.
bool launchedAsRanks();

/// MPI_COMM_WORLD through the MPI library, loaded and initialized now
/// (MPI_Init_thread, MPI_THREAD_SERIALIZED); finalized when the
/// communicator is destroyed. Only OpenMPI's ABI is supported (Debian's
/// libmpi.so.40); errors name the library and what is missing.
absl::StatusOr<std::unique_ptr<Communicator>>
makeMpiCommunicator(const CommunicatorOptions &options);

/// The communicator compiled steps sum over (nn.all_reduce); null, the
/// default, is a run of one process. Per thread: the thread that runs the
/// steps sets it (ranks as threads of one process each have their own).
Communicator *currentCommunicator();

/// Makes `communicator` current for its lifetime, then restores the one
/// before.
class CurrentCommunicator {
public:
  explicit CurrentCommunicator(Communicator *communicator);
  ~CurrentCommunicator();
  CurrentCommunicator(const CurrentCommunicator &) = delete;
  CurrentCommunicator &operator=(const CurrentCommunicator &) = delete;

private:
  Communicator *previous;
};

} // namespace nn

#endif // NN_COMMUNICATOR_H
