//===- Communicator.cpp - the current communicator and the local one ------===//

#include "nn/Communicator.h"

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <thread>

using namespace nn;

namespace {

/// The calling thread's (nn/Communicator.h).
thread_local Communicator *current = nullptr;

/// One process: the sum over the ranks is the value.
class LocalCommunicator final : public Communicator {
public:
  int rank() const override { return 0; }
  int size() const override { return 1; }
  const char *backend() const override { return "local"; }
  absl::Status allReduceSum(const void *send, void *receive, int64_t count,
                            DType dtype) override {
    if (count < 0)
      return absl::InvalidArgumentError("an all-reduce of " +
                                        std::to_string(count) + " elements");
    if (send != receive && count > 0)
      std::memmove(receive, send, (size_t)count * byteSize(dtype));
    return absl::OkStatus();
  }
  absl::Status broadcast(void *, int64_t bytes, int root) override {
    if (root != 0 || bytes < 0)
      return absl::InvalidArgumentError(
          "a broadcast from rank " + std::to_string(root) + " of " +
          std::to_string(bytes) + " bytes in a run of one process");
    return absl::OkStatus();
  }
  absl::Status barrier() override { return absl::OkStatus(); }
  [[noreturn]] void abort(int code) override { std::exit(code); }
};

/// A launcher's world size variable, or 0 when it is not set or not a
/// number.
long worldSizeFrom(const char *variable) {
  const char *value = std::getenv(variable);
  if (!value || !*value)
    return 0;
  char *end = nullptr;
  long size = std::strtol(value, &end, 10);
  return *end ? 0 : size;
}

} // namespace

Communicator::~Communicator() = default;

std::string Communicator::describe() const {
  return "rank " + std::to_string(rank()) + " of " + std::to_string(size());
}

absl::Status
Communicator::waitFor(const std::function<absl::StatusOr<bool>()> &test,
                      const std::string &what) {
  auto start = std::chrono::steady_clock::now();
  for (int spins = 0;; ++spins) {
    absl::StatusOr<bool> done = test();
    if (!done.ok())
      return done.status();
    if (*done)
      return absl::OkStatus();
    if (spins < 1000)
      continue;
    double waited =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start)
            .count();
    if (waited > timeoutSeconds) {
      char seconds[32];
      std::snprintf(seconds, sizeof(seconds), "%g", timeoutSeconds);
      return absl::DeadlineExceededError(
          describe() + ": " + what + " waited " + seconds +
          " s for the other ranks (--collective-timeout); one of them "
          "stopped, failed or is stuck");
    }
    std::this_thread::sleep_for(std::chrono::microseconds(50));
  }
}

void Communicator::record(int64_t bytes, double seconds) {
  ++collected.calls;
  collected.bytes += bytes;
  collected.seconds += seconds;
}

std::unique_ptr<Communicator> nn::makeLocalCommunicator() {
  return std::make_unique<LocalCommunicator>();
}

bool nn::launchedAsRanks() {
  // PMIx gives the rank, not the size; its launchers set PMIX_RANK on
  // every rank of a world of one too, so the size decides where known.
  if (long size = worldSizeFrom("OMPI_COMM_WORLD_SIZE"))
    return size > 1;
  if (long size = worldSizeFrom("PMI_SIZE"))
    return size > 1;
  return std::getenv("PMIX_RANK") != nullptr;
}

Communicator *nn::currentCommunicator() { return current; }

CurrentCommunicator::CurrentCommunicator(Communicator *communicator)
    : previous(current) {
  current = communicator;
}

CurrentCommunicator::~CurrentCommunicator() { current = previous; }
