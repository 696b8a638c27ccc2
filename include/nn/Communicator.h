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
#include <map>
#include <memory>
#include <string>

namespace nn {

/// Time spent in collectives, for the share of a step they take.
struct CollectiveStats {
  int64_t calls = 0;
  int64_t bytes = 0;
  /// What the steps waited for them.
  double seconds = 0;
  /// What the sums ran beside the step's own work (started with
  /// Communicator::startSum, not yet waited for): time they did not cost.
  double overlappedSeconds = 0;
};

class Communicator {
public:
  Communicator();
  virtual ~Communicator();
  Communicator(const Communicator &) = delete;
  Communicator &operator=(const Communicator &) = delete;
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
  /// Whether startSum returns before the sum is done: a thread of the
  /// communicator runs the sums started, one after another, while the
  /// caller goes on (mpi). Otherwise startSum runs the sum itself.
  virtual bool overlapsSums() const { return false; }

  /// Starts allReduceSum(send, receive, count, dtype) and returns a ticket
  /// for finishSum. With overlapsSums() it returns at once; the buffers
  /// must then stay as they are until the ticket is finished. The sums of
  /// a rank run in the order they were started, and every collective it
  /// calls directly must come after the finish of every ticket (a
  /// compiled step finishes each before it returns).
  int64_t startSum(const void *send, void *receive, int64_t count, DType dtype);
  /// Waits for the sum of `ticket` (each ticket once) and returns its
  /// status. Counted in stats(): what the caller waited in the start and
  /// the finish, and what the sum ran beyond that.
  absl::Status finishSum(int64_t ticket);
  /// After a failed step: drops the sums started and not begun, waits for
  /// the one running (a step that failed between a start and its finish
  /// leaves it; its buffers are leaked, so it writes nothing freed), and
  /// forgets their results. A sum that failed makes the sums after it
  /// fail without running (each would wait out the timeout for ranks that
  /// are gone) until this is called.
  void finishAllSums();

  /// The longest a collective waits for the other ranks before it fails
  /// (CommunicatorOptions::timeoutSeconds; a later setting applies to the
  /// collectives after it).
  double timeout() const { return timeoutSeconds; }
  void setTimeout(double seconds) { timeoutSeconds = seconds; }

  /// "rank 1 of 4": how errors and messages name this process.
  std::string describe() const;
  /// The sums started so far (startSum, which compiled steps call) and
  /// finished.
  const CollectiveStats &stats() const { return collected; }

protected:
  /// Calls `test` until it says the collective `what` finished: at first
  /// at once (one the other ranks joined already finishes in
  /// microseconds), then with short sleeps that leave the cores to ranks
  /// still computing. An error `test` returns ends the wait; so does the
  /// timeout passing (DeadlineExceeded, naming this rank and `what`).
  absl::Status waitFor(const std::function<absl::StatusOr<bool>()> &test,
                       const std::string &what);
  /// Finishes the started sums and ends the thread that runs them. A
  /// backend that overlaps sums calls it first in its destructor, before
  /// what the thread's sums use is torn down.
  void stopSumThread();

private:
  class SumThread;
  CollectiveStats collected;
  double timeoutSeconds = 600;
  std::unique_ptr<SumThread> sumThread;
  /// The sums started and not finished, by ticket.
  struct Started {
    int64_t bytes = 0;
    /// What startSum took.
    double waitedSeconds = 0;
    /// Set when startSum ran the sum itself.
    bool ran = false;
    absl::Status status;
  };
  int64_t nextTicket = 0;
  std::map<int64_t, Started> started;
  /// The first sum that failed since finishAllSums, when startSum runs
  /// them: the later ones fail without running.
  absl::Status failedSum;
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
