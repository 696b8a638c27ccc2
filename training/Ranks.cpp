//===- training/Ranks.cpp - joining the ranks of a run --------------------===//

#include "training/Ranks.h"

#include "nn/Cuda.h"

#include <cstdlib>

using namespace nn;
using namespace nn::training;

namespace {

/// Each rank of a machine on its own GPU: local rank r takes GPU r, as
/// the launcher numbers the ranks of each machine, unless NN_CUDA_DEVICE
/// chooses.
void chooseGpuOfRank() {
  const char *chosen = std::getenv("NN_CUDA_DEVICE");
  if (chosen && *chosen)
    return;
  for (const char *name :
       {"OMPI_COMM_WORLD_LOCAL_RANK", "MPI_LOCALRANKID", "SLURM_LOCALID"})
    if (const char *local = std::getenv(name); local && *local) {
      ::setenv("NN_CUDA_DEVICE", local, 1);
      return;
    }
}

} // namespace

absl::Status nn::training::joinRanks(RunRanks &ranks,
                                     const CommunicatorOptions &options,
                                     bool gpu) {
  if (!launchedAsRanks())
    return absl::OkStatus();
  if (!ranks.host) {
    absl::StatusOr<std::unique_ptr<Communicator>> world =
        makeMpiCommunicator(options);
    if (!world.ok())
      return world.status();
    ranks.host = std::move(*world);
  }
  if (!gpu || ranks.gpu)
    return absl::OkStatus();
  // A GPU step sums its device buffers with NCCL; the host's sums (the
  // losses, the state at the start) stay with MPI.
  chooseGpuOfRank();
  absl::StatusOr<std::unique_ptr<Communicator>> gpus =
      makeNcclCommunicator(*ranks.host, options);
  if (!gpus.ok())
    return gpus.status();
  ranks.gpu = std::move(*gpus);
  return absl::OkStatus();
}
