//===- Communicator.cpp - the current communicator and the local one ------===//

#include "nn/Communicator.h"

#include <algorithm>
#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <deque>
#include <mutex>
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

/// The status of a sum not run because `failure`, an earlier one's, ended
/// the step.
absl::Status notRunAfter(const absl::Status &failure) {
  return absl::Status(failure.code(),
                      "not run: an earlier sum of this rank failed (" +
                          std::string(failure.message()) + ")");
}

} // namespace

/// The thread that runs the sums startSum hands it, in order, while the
/// caller goes on (nn/Communicator.h). It is the only thread that calls
/// the backend while any sum is unfinished, which is what
/// MPI_THREAD_SERIALIZED asks. Once a sum fails, the ones after it fail
/// without running (each would wait the whole timeout for ranks that
/// are gone) until finishAll.
class Communicator::SumThread {
public:
  explicit SumThread(Communicator &owner)
      : owner(owner), thread([this] { serve(); }) {}
  /// Runs what was started, then ends the thread.
  ~SumThread() {
    {
      std::lock_guard<std::mutex> lock(mutex);
      stopping = true;
    }
    changed.notify_all();
    thread.join();
  }

  void start(int64_t ticket, const void *send, void *receive, int64_t count,
             DType dtype) {
    {
      std::lock_guard<std::mutex> lock(mutex);
      queue.push_back({ticket, send, receive, count, dtype});
    }
    changed.notify_all();
  }

  /// False when `ticket` was never started here.
  bool finish(int64_t ticket, absl::Status &status, double &seconds) {
    std::unique_lock<std::mutex> lock(mutex);
    changed.wait(lock, [&] {
      return finished.count(ticket) || (running != ticket && !queued(ticket));
    });
    auto it = finished.find(ticket);
    if (it == finished.end())
      return false;
    status = std::move(it->second.first);
    seconds = it->second.second;
    finished.erase(it);
    return true;
  }

  /// Drops the sums not begun (they have touched no buffer), waits for
  /// the one running, and forgets every result and failure.
  void finishAll() {
    std::unique_lock<std::mutex> lock(mutex);
    queue.clear();
    changed.wait(lock, [&] { return running < 0; });
    finished.clear();
    failure = absl::OkStatus();
  }

  /// Whether a sum is queued or running.
  bool busy() {
    std::lock_guard<std::mutex> lock(mutex);
    return !queue.empty() || running >= 0;
  }

private:
  struct Sum {
    int64_t ticket;
    const void *send;
    void *receive;
    int64_t count;
    DType dtype;
  };

  bool queued(int64_t ticket) const {
    for (const Sum &sum : queue)
      if (sum.ticket == ticket)
        return true;
    return false;
  }

  void serve() {
    std::unique_lock<std::mutex> lock(mutex);
    for (;;) {
      changed.wait(lock, [&] { return stopping || !queue.empty(); });
      if (queue.empty())
        return; // stopping, nothing left
      Sum sum = queue.front();
      queue.pop_front();
      if (!failure.ok()) {
        finished[sum.ticket] = {notRunAfter(failure), 0.0};
        changed.notify_all();
        continue;
      }
      running = sum.ticket;
      lock.unlock();
      auto begin = std::chrono::steady_clock::now();
      absl::Status status =
          owner.allReduceSum(sum.send, sum.receive, sum.count, sum.dtype);
      double seconds = std::chrono::duration<double>(
                           std::chrono::steady_clock::now() - begin)
                           .count();
      lock.lock();
      if (!status.ok())
        failure = status;
      finished[sum.ticket] = {std::move(status), seconds};
      running = -1;
      changed.notify_all();
    }
  }

  Communicator &owner;
  std::mutex mutex;
  std::condition_variable changed;
  std::deque<Sum> queue;
  std::map<int64_t, std::pair<absl::Status, double>> finished;
  int64_t running = -1;
  absl::Status failure;
  bool stopping = false;
  // Last: started once the members above exist.
  std::thread thread;
};

Communicator::Communicator() = default;
Communicator::~Communicator() {
  // The backend is gone by now: a sum still to run would call it.
  if (sumThread && sumThread->busy()) {
    std::fprintf(stderr, "nn runtime: a communicator was destroyed with sums "
                         "unfinished (a backend that overlaps sums calls "
                         "stopSumThread in its destructor)\n");
    std::abort();
  }
}

void Communicator::stopSumThread() {
  // Its destructor runs what was started, then joins.
  sumThread.reset();
}

namespace {
double secondsSince(std::chrono::steady_clock::time_point begin) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - begin)
      .count();
}
} // namespace

int64_t Communicator::startSum(const void *send, void *receive, int64_t count,
                               DType dtype) {
  auto begin = std::chrono::steady_clock::now();
  int64_t ticket = nextTicket++;
  Started &sum = started[ticket];
  sum.bytes = count * (int64_t)byteSize(dtype);
  if (overlapsSums()) {
    if (!sumThread)
      sumThread = std::make_unique<SumThread>(*this);
    sumThread->start(ticket, send, receive, count, dtype);
  } else {
    // As on the thread: after a failed sum, the later ones fail unrun.
    sum.status = failedSum.ok()
                     ? allReduceSum(send, receive, count, dtype)
                     : absl::Status(failedSum.code(),
                                    "not run: an earlier sum of this rank "
                                    "failed (" +
                                        std::string(failedSum.message()) + ")");
    if (!sum.status.ok() && failedSum.ok())
      failedSum = sum.status;
    sum.ran = true;
  }
  sum.waitedSeconds = secondsSince(begin);
  return ticket;
}

absl::Status Communicator::finishSum(int64_t ticket) {
  auto begin = std::chrono::steady_clock::now();
  auto it = started.find(ticket);
  if (it == started.end())
    return absl::InternalError(describe() + ": no sum was started as ticket " +
                               std::to_string(ticket) +
                               " (or it was finished already)");
  Started sum = std::move(it->second);
  started.erase(it);
  double ranSeconds = sum.waitedSeconds;
  if (!sum.ran && !sumThread->finish(ticket, sum.status, ranSeconds))
    return absl::InternalError(describe() + ": the sum of ticket " +
                               std::to_string(ticket) + " was lost");
  double waited = sum.waitedSeconds + secondsSince(begin);
  ++collected.calls;
  collected.bytes += sum.bytes;
  collected.seconds += waited;
  collected.overlappedSeconds += std::max(0.0, ranSeconds - waited);
  return sum.status;
}

void Communicator::finishAllSums() {
  started.clear();
  failedSum = absl::OkStatus();
  if (sumThread)
    sumThread->finishAll();
}

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
