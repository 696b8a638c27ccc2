//===- ThreadCommunicator.h - ranks as threads of one test ------*- C++ -*-===//
//
// A Communicator whose ranks are threads of the test's process, for tests
// of what runs on several ranks (gathering, bootstrapping NCCL) without
// mpirun. Every collective is a rendezvous: each rank hands in its bytes
// for its n-th collective, and once all have, each takes what it needs
// (the root's, or the sum). A rank left waiting more than 30 s fails
// rather than hang the test.
//
//   ThreadWorld world(3);
//   std::thread([&] { ThreadCommunicator rank1(world, 1); ... });
//
//===----------------------------------------------------------------------===//

#ifndef NN_UNITTESTS_THREADCOMMUNICATOR_H
#define NN_UNITTESTS_THREADCOMMUNICATOR_H

#include "nn/Communicator.h"

#include <chrono>
#include <condition_variable>
#include <cstdlib>
#include <cstring>
#include <map>
#include <mutex>
#include <string>
#include <vector>

namespace nn::testing {

class ThreadWorld {
public:
  explicit ThreadWorld(int size) : size(size) {}
  int getSize() const { return size; }

  /// Rank `rank`'s bytes for collective `call`; every rank's, by rank,
  /// once all handed theirs in.
  absl::StatusOr<std::vector<std::string>> exchange(int64_t call, int rank,
                                                    std::string bytes) {
    std::unique_lock<std::mutex> lock(mutex);
    std::vector<std::string> &parts = calls[call];
    parts.resize(size);
    parts[rank] = std::move(bytes);
    if (++arrived[call] == size)
      changed.notify_all();
    if (!changed.wait_for(lock, std::chrono::seconds(30),
                          [&] { return arrived[call] == size; }))
      return absl::DeadlineExceededError("rank " + std::to_string(rank) +
                                         " waited 30 s in a collective");
    return calls[call];
  }

private:
  int size;
  std::mutex mutex;
  std::condition_variable changed;
  std::map<int64_t, std::vector<std::string>> calls;
  std::map<int64_t, int> arrived;
};

class ThreadCommunicator final : public Communicator {
public:
  /// `overlaps`: started sums run on the communicator's own thread, as
  /// MPI's do (Communicator::startSum).
  ThreadCommunicator(ThreadWorld &world, int rank, bool overlaps = false)
      : world(world), rankNumber(rank), overlaps(overlaps) {}
  ~ThreadCommunicator() override { stopSumThread(); }
  int rank() const override { return rankNumber; }
  int size() const override { return world.getSize(); }
  const char *backend() const override { return "threads"; }
  bool overlapsSums() const override { return overlaps; }

  absl::Status allReduceSum(const void *send, void *receive, int64_t count,
                            DType dtype) override {
    if (dtype != DType::f32 && dtype != DType::f64)
      return absl::UnimplementedError("threads sum f32 and f64");
    size_t bytes = (size_t)count * byteSize(dtype);
    absl::StatusOr<std::vector<std::string>> all = world.exchange(
        calls++, rankNumber, std::string((const char *)send, bytes));
    if (!all.ok())
      return all.status();
    for (int64_t i = 0; i < count; ++i) {
      double sum = 0;
      for (const std::string &part : *all)
        sum += dtype == DType::f32 ? (double)((const float *)part.data())[i]
                                   : ((const double *)part.data())[i];
      if (dtype == DType::f32)
        ((float *)receive)[i] = (float)sum;
      else
        ((double *)receive)[i] = sum;
    }
    return absl::OkStatus();
  }

  absl::Status broadcast(void *data, int64_t bytes, int root) override {
    absl::StatusOr<std::vector<std::string>> all = world.exchange(
        calls++, rankNumber,
        root == rankNumber ? std::string((char *)data, bytes) : std::string());
    if (!all.ok())
      return all.status();
    if ((int64_t)(*all)[root].size() != bytes)
      return absl::InternalError("broadcast sizes differ");
    std::memcpy(data, (*all)[root].data(), (size_t)bytes);
    return absl::OkStatus();
  }

  absl::Status barrier() override {
    return world.exchange(calls++, rankNumber, "").status();
  }
  [[noreturn]] void abort(int) override { std::abort(); }

private:
  ThreadWorld &world;
  int rankNumber;
  bool overlaps;
  int64_t calls = 0;
};

} // namespace nn::testing

#endif // NN_UNITTESTS_THREADCOMMUNICATOR_H
