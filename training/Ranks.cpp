//===- training/Ranks.cpp - joining the ranks of a run --------------------===//

#include "training/Ranks.h"

#include "nn/Cuda.h"

#include <algorithm>
#include <cstdlib>
#include <string>

using namespace nn;
using namespace nn::training;

namespace {

/// Each rank of a machine on its own GPU: local rank r (as the launcher
/// numbers the ranks of each machine) takes the r-th GPU it sees, modulo
/// the GPUs CUDA_VISIBLE_DEVICES lists when it is set (a launcher that
/// gives each rank its own GPU lists one); NN_CUDA_DEVICE, when set,
/// decides instead.
void chooseGpuOfRank() {
  const char *chosen = std::getenv("NN_CUDA_DEVICE");
  if (chosen && *chosen)
    return;
  for (const char *name :
       {"OMPI_COMM_WORLD_LOCAL_RANK", "MPI_LOCALRANKID", "SLURM_LOCALID"}) {
    const char *local = std::getenv(name);
    if (!local || !*local)
      continue;
    long ordinal = std::atol(local);
    if (const char *visible = std::getenv("CUDA_VISIBLE_DEVICES");
        visible && *visible) {
      std::string list = visible;
      long count = 1 + (long)std::count(list.begin(), list.end(), ',');
      ordinal %= count;
    }
    ::setenv("NN_CUDA_DEVICE", std::to_string(ordinal).c_str(), 1);
    return;
  }
}

} // namespace

bool nn::training::sumsOnGpus(const std::string &target) {
  return target == "cuda";
}

absl::Status nn::training::joinRanks(RunRanks &ranks,
                                     const CommunicatorOptions &options,
                                     const std::string &target) {
  if (!launchedAsRanks())
    return absl::OkStatus();
  if (!ranks.host) {
    absl::StatusOr<std::unique_ptr<Communicator>> world =
        makeMpiCommunicator(options);
    if (!world.ok())
      return world.status();
    ranks.host = std::move(*world);
  }
  ranks.host->setTimeout(options.timeoutSeconds);
  if (ranks.gpu)
    ranks.gpu->setTimeout(options.timeoutSeconds);
  // Every rank must want NCCL, or none: one that joins it while another
  // goes on would wait in different collectives.
  bool gpu = sumsOnGpus(target);
  double wanting = gpu && !ranks.gpu ? 1 : 0;
  if (absl::Status status =
          ranks.host->allReduceSum(&wanting, &wanting, 1, DType::f64);
      !status.ok())
    return status;
  if (wanting > 0 && wanting < ranks.host->size())
    return absl::InvalidArgumentError(
        ranks.host->describe() + ": " + std::to_string((int)wanting) + " of " +
        std::to_string(ranks.host->size()) +
        " ranks train on GPUs (target 'cuda'): give every rank the same "
        "--target");
  if (wanting == 0)
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
