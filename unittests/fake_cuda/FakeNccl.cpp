//===- FakeNccl.cpp - a CPU stand-in for NCCL -----------------------------===//
//
// For testing the runtime's NCCL communicator where there is no GPU, in
// the fake driver's library (so that its streams know NCCL's work). The
// ranks are threads of one process; NCCL's functions keep NCCL's
// behaviour where the runtime depends on it:
//
//  * ncclCommInitRank blocks until every rank of the id has joined;
//  * ncclAllReduce and ncclBroadcast check their arguments (buffers in the
//    fake driver's memory, the data type, the operation), return at once,
//    and finish when every rank has called its n-th collective: until
//    then the stream they were enqueued on is busy (cuStreamQuery says
//    CUDA_ERROR_NOT_READY);
//  * ranks that disagree on a collective (its size, type or root) get an
//    asynchronous invalid-usage error and nothing is written;
//  * ncclCommAbort ends the communicator's pending collectives and tells
//    its peers (an asynchronous remote error).
//
// FAKE_NCCL_FAIL=<call>[:<n>] makes the n-th call (default 1st) of
// ncclGetUniqueId or ncclCommInitRank fail, or the n-th ncclAllReduce of
// the process report an asynchronous remote error and never finish.
// fake_nccl_live_comms() counts communicators not destroyed or aborted,
// fake_nccl_finished_collectives() the collectives every rank finished.
//
//===----------------------------------------------------------------------===//

#include "FakeDevice.h"

#include "runtime/cuda/NcclApi.h"

#include <algorithm>
#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <memory>
#include <mutex>
#include <set>
#include <string>
#include <vector>

using nn::cuda::abi::CUstream;
using nn::cuda::nccl::ncclComm_t;
using nn::cuda::nccl::ncclDataType_t;
using nn::cuda::nccl::ncclRedOp_t;
using nn::cuda::nccl::ncclResult_t;
using nn::cuda::nccl::ncclUniqueId;

namespace {

constexpr ncclResult_t kSuccess = 0, kSystemError = 2, kInvalidArgument = 4,
                       kInvalidUsage = 5, kRemoteError = 6;

/// One rank's part of a collective.
struct Part {
  const void *send = nullptr;
  void *receive = nullptr;
  size_t bytes = 0;
  ncclDataType_t type = 0;
  bool broadcast = false;
  int root = 0;
};

/// The ranks of one unique id.
struct Group {
  int size = 0, joined = 0;
  /// Collective n: each rank's part, by rank, until all are in.
  std::map<int64_t, std::map<int, Part>> open;
  std::set<int64_t> finished;
};

struct Comm {
  std::shared_ptr<Group> group;
  int rank = 0;
  int64_t next = 0;
  /// Collectives this rank enqueued, and on which stream.
  std::vector<std::pair<int64_t, const void *>> enqueued;
  ncclResult_t asyncError = kSuccess;
};

struct State {
  std::mutex mutex;
  std::condition_variable changed;
  std::map<std::string, std::shared_ptr<Group>> groups;
  std::set<Comm *> comms;
  std::map<std::string, int> calls;
  int ids = 0;
  /// Collectives every rank finished.
  int finished = 0;
};

State &state() {
  static State *s = new State;
  return *s;
}

/// Counts a call (the state's mutex held); true when FAKE_NCCL_FAIL asks
/// this one to fail.
bool failNow(const char *call) {
  return fake::failRequested("FAKE_NCCL_FAIL", call, ++state().calls[call]);
}

size_t elementBytes(ncclDataType_t type) {
  switch (type) {
  case 0: // int8
  case 1: // uint8
    return 1;
  case 7: // float32
    return 4;
  case 8: // float64
    return 8;
  default:
    return 0;
  }
}

/// Collective `n` of `group` with every part in: the sums (in rank order)
/// or the root's bytes in every receive buffer.
/// Sets `error` on every communicator of `group` (the state's mutex held).
void failGroup(const Group &group, ncclResult_t error) {
  for (Comm *comm : state().comms)
    if (comm->group.get() == &group)
      comm->asyncError = error;
}

void finish(Group &group, int64_t n) {
  std::map<int, Part> &parts = group.open[n];
  const Part &first = parts.begin()->second;
  // Ranks that disagree on the collective: NCCL's behaviour is undefined;
  // the fake reports it and never finishes the collective.
  for (auto &[rank, part] : parts)
    if (part.bytes != first.bytes || part.type != first.type ||
        part.broadcast != first.broadcast || part.root != first.root) {
      failGroup(group, kInvalidUsage);
      group.open.erase(n);
      return;
    }
  std::vector<char> result(first.bytes); // zeros
  if (first.broadcast) {
    std::memcpy(result.data(), parts.at(first.root).send, first.bytes);
  } else if (first.type == 7) {
    auto *sum = reinterpret_cast<float *>(result.data());
    for (auto &[rank, part] : parts)
      for (size_t i = 0; i < part.bytes / 4; ++i)
        sum[i] += reinterpret_cast<const float *>(part.send)[i];
  } else {
    auto *sum = reinterpret_cast<double *>(result.data());
    for (auto &[rank, part] : parts)
      for (size_t i = 0; i < part.bytes / 8; ++i)
        sum[i] += reinterpret_cast<const double *>(part.send)[i];
  }
  for (auto &[rank, part] : parts)
    std::memcpy(part.receive, result.data(), result.size());
  group.open.erase(n);
  group.finished.insert(n);
  ++state().finished;
}

/// Enqueues `part` as `comm`'s next collective (the state's mutex held).
ncclResult_t enqueue(Comm *comm, const Part &part, CUstream stream) {
  State &s = state();
  if (!comm || !s.comms.count(comm))
    return kInvalidUsage;
  if (elementBytes(part.type) == 0)
    return kInvalidArgument;
  // Nothing to send: NCCL returns at once.
  if (part.bytes == 0)
    return kSuccess;
  if (!fake::owned(part.send, part.bytes) ||
      !fake::owned(part.receive, part.bytes))
    return kInvalidArgument;
  int64_t n = comm->next++;
  Group &group = *comm->group;
  auto &enqueued = comm->enqueued;
  enqueued.erase(std::remove_if(enqueued.begin(), enqueued.end(),
                                [&](const auto &entry) {
                                  return group.finished.count(entry.first) > 0;
                                }),
                 enqueued.end());
  comm->enqueued.emplace_back(n, stream);
  if (!part.broadcast && failNow("ncclAllReduce")) {
    // A peer lost: the collective never finishes, and NCCL says why.
    comm->asyncError = kRemoteError;
    return kSuccess;
  }
  group.open[n][comm->rank] = part;
  if ((int)group.open[n].size() == group.size) {
    finish(group, n);
    s.changed.notify_all();
  }
  return kSuccess;
}

bool pendingLocked(const void *stream) {
  for (Comm *comm : state().comms)
    for (auto &[n, on] : comm->enqueued)
      if (on == stream && !comm->group->finished.count(n))
        return true;
  return false;
}

} // namespace

bool fake::ncclPending(const void *stream) {
  std::lock_guard<std::mutex> lock(state().mutex);
  return pendingLocked(stream);
}

bool fake::ncclWait(const void *stream, double seconds) {
  std::unique_lock<std::mutex> lock(state().mutex);
  return state().changed.wait_for(lock, std::chrono::duration<double>(seconds),
                                  [&] { return !pendingLocked(stream); });
}

#define FAKE extern "C" __attribute__((visibility("default")))

// NCCL's own names follow.
// NOLINTBEGIN(readability-identifier-naming)

FAKE int fake_nccl_live_comms() {
  std::lock_guard<std::mutex> lock(state().mutex);
  return (int)state().comms.size();
}

FAKE int fake_nccl_finished_collectives() {
  std::lock_guard<std::mutex> lock(state().mutex);
  return state().finished;
}

FAKE ncclResult_t ncclGetVersion(int *version) {
  *version = 22800;
  return kSuccess;
}

FAKE ncclResult_t ncclGetUniqueId(ncclUniqueId *id) {
  std::lock_guard<std::mutex> lock(state().mutex);
  if (failNow("ncclGetUniqueId"))
    return kSystemError;
  std::memset(id->internal, 0, sizeof(id->internal));
  std::snprintf(id->internal, sizeof(id->internal), "fake-nccl-%d",
                ++state().ids);
  return kSuccess;
}

FAKE ncclResult_t ncclCommInitRank(ncclComm_t *comm, int size, ncclUniqueId id,
                                   int rank) {
  State &s = state();
  std::unique_lock<std::mutex> lock(s.mutex);
  if (failNow("ncclCommInitRank"))
    return kSystemError;
  std::string key(id.internal, strnlen(id.internal, sizeof(id.internal)));
  if (size < 1 || rank < 0 || rank >= size || key.rfind("fake-nccl-", 0))
    return kInvalidArgument;
  std::shared_ptr<Group> &group = s.groups[key];
  if (!group) {
    group = std::make_shared<Group>();
    group->size = size;
  }
  if (group->size != size)
    return kInvalidArgument;
  ++group->joined;
  s.changed.notify_all();
  std::shared_ptr<Group> joining = group;
  if (!s.changed.wait_for(lock, std::chrono::seconds(30),
                          [&] { return joining->joined >= size; }))
    return kSystemError;
  auto *made = new Comm;
  made->group = joining;
  made->rank = rank;
  s.comms.insert(made);
  *comm = reinterpret_cast<ncclComm_t>(made);
  return kSuccess;
}

/// Frees `comm`. Its parts of collectives still open go (no peer writes
/// into its buffers later) and its pending collectives end with it; an
/// abort tells its peers, whose collectives with it can never finish.
static ncclResult_t release(ncclComm_t comm, bool abort) {
  State &s = state();
  std::lock_guard<std::mutex> lock(s.mutex);
  auto *own = reinterpret_cast<Comm *>(comm);
  if (!s.comms.erase(own))
    return kInvalidUsage;
  for (auto &[n, parts] : own->group->open)
    parts.erase(own->rank);
  if (abort)
    failGroup(*own->group, kRemoteError);
  delete own;
  s.changed.notify_all();
  return kSuccess;
}

FAKE ncclResult_t ncclCommDestroy(ncclComm_t comm) {
  return release(comm, /*abort=*/false);
}
FAKE ncclResult_t ncclCommAbort(ncclComm_t comm) {
  return release(comm, /*abort=*/true);
}

FAKE ncclResult_t ncclCommGetAsyncError(ncclComm_t comm, ncclResult_t *error) {
  std::lock_guard<std::mutex> lock(state().mutex);
  auto *own = reinterpret_cast<Comm *>(comm);
  if (!state().comms.count(own))
    return kInvalidUsage;
  *error = own->asyncError;
  return kSuccess;
}

FAKE const char *ncclGetErrorString(ncclResult_t result) {
  switch (result) {
  case kSuccess:
    return "no error";
  case kSystemError:
    return "unhandled system error (run with NCCL_DEBUG=INFO for details)";
  case kInvalidArgument:
    return "invalid argument (run with NCCL_DEBUG=WARN for details)";
  case kInvalidUsage:
    return "invalid usage (run with NCCL_DEBUG=WARN for details)";
  case kRemoteError:
    return "remote process exited or there was a network error";
  default:
    return "unknown result code";
  }
}

FAKE ncclResult_t ncclAllReduce(const void *send, void *receive, size_t count,
                                ncclDataType_t type, ncclRedOp_t op,
                                ncclComm_t comm, CUstream stream) {
  if (op != 0 || (type != 7 && type != 8))
    return kInvalidArgument;
  std::lock_guard<std::mutex> lock(state().mutex);
  Part part;
  part.send = send;
  part.receive = receive;
  part.bytes = count * elementBytes(type);
  part.type = type;
  return enqueue(reinterpret_cast<Comm *>(comm), part, stream);
}

FAKE ncclResult_t ncclBroadcast(const void *send, void *receive, size_t count,
                                ncclDataType_t type, int root, ncclComm_t comm,
                                CUstream stream) {
  std::lock_guard<std::mutex> lock(state().mutex);
  auto *own = reinterpret_cast<Comm *>(comm);
  if (state().comms.count(own) && (root < 0 || root >= own->group->size))
    return kInvalidArgument;
  Part part;
  part.send = send;
  part.receive = receive;
  part.bytes = count * elementBytes(type);
  part.type = type;
  part.broadcast = true;
  part.root = root;
  return enqueue(own, part, stream);
}

// NOLINTEND(readability-identifier-naming)

// Every function above, in the order of NN_NCCL_FUNCTIONS: initializing the
// runtime's function table with them does not compile where a signature
// differs from the runtime's.
[[maybe_unused]] static const nn::cuda::nccl::Api kNcclSignatures{
    &ncclGetVersion,     &ncclGetUniqueId, &ncclCommInitRank,
    &ncclCommDestroy,    &ncclCommAbort,   &ncclCommGetAsyncError,
    &ncclGetErrorString, &ncclAllReduce,   &ncclBroadcast};
