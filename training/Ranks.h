//===- training/Ranks.h - the ranks of a data-parallel run ------*- C++ -*-===//
//
// What a process started by a launcher (mpirun) joins before it trains:
// the run's MPI communicator, and for a GPU run the NCCL communicator of
// the same ranks, each rank on its own GPU. nn-train and the Python
// Trainer join the same way (docs/distributed.md).
//
//   RunRanks ranks;
//   absl::Status joined = joinRanks(ranks, options, compile.target);
//   trainOptions.communicator = ranks.host.get();
//   trainOptions.stepCommunicator = ranks.gpu.get();
//
//===----------------------------------------------------------------------===//

#ifndef NN_TRAINING_RANKS_H
#define NN_TRAINING_RANKS_H

#include "nn/Communicator.h"

#include "absl/status/statusor.h"

#include <memory>
#include <string>

namespace nn::training {

/// A process's ranks: what it joined, kept for its runs.
struct RunRanks {
  /// MPI_COMM_WORLD: what the host sums and sends. Null when the process
  /// is not one of several ranks.
  std::unique_ptr<Communicator> host;
  /// The same ranks on their GPUs (NCCL), for a cuda train step's sums;
  /// null otherwise. Goes before `host` (it was bootstrapped from it).
  std::unique_ptr<Communicator> gpu;

  // Members go in reverse order (gpu first); so does an assignment.
  RunRanks() = default;
  RunRanks(RunRanks &&) = default;
  RunRanks &operator=(RunRanks &&other) {
    gpu = std::move(other.gpu);
    host = std::move(other.host);
    return *this;
  }
};

/// Whether a train step compiled for `target` sums its gradients on GPUs
/// (with NCCL).
bool sumsOnGpus(const std::string &target);

/// Joins what `ranks` lacks of the ranks this process belongs to: none (a
/// single process) unless a launcher started it as one of several
/// (launchedAsRanks); then MPI, and for a `target` that sums on GPUs
/// NCCL, each rank of a machine on its GPU by local rank (NN_CUDA_DEVICE
/// decides where set). What `ranks` holds is kept, with the timeout of
/// `options` from now on. Every rank calls it with the same target: an
/// error on every rank otherwise.
absl::Status joinRanks(RunRanks &ranks, const CommunicatorOptions &options,
                       const std::string &target);

} // namespace nn::training

#endif // NN_TRAINING_RANKS_H
