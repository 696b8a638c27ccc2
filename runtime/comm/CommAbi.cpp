//===- CommAbi.cpp - the collective entry points artifacts call -----------===//

#include "runtime/comm/CommAbi.h"

#include "nn/Communicator.h"
#include "runtime/Allocator.h"

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>

using namespace nn;

namespace {

/// The ticket of a sum that needed no communicator (a run of one process:
/// the sum was the copy the start made).
constexpr int64_t kDoneTicket = -1;

/// Starts the sum into `ticket`; false, with the message in `message`,
/// when its arguments are not a sum nn runs.
bool start(const char *origin, int64_t send, int64_t receive, int64_t count,
           int32_t bits, int64_t &ticket, char *message, size_t size) {
  if ((bits != 32 && bits != 64) || count < 0) {
    std::snprintf(message, size,
                  "%s: unsupported all-reduce of %lld %d-bit "
                  "floats",
                  origin ? origin : "an all-reduce", (long long)count,
                  (int)bits);
    return false;
  }
  auto *from = reinterpret_cast<const void *>(static_cast<intptr_t>(send));
  auto *to = reinterpret_cast<void *>(static_cast<intptr_t>(receive));
  Communicator *communicator = currentCommunicator();
  if (!communicator) {
    if (from != to && count > 0)
      std::memmove(to, from, (size_t)count * (bits / 8));
    ticket = kDoneTicket;
    return true;
  }
  ticket = communicator->startSum(from, to, count,
                                  bits == 32 ? DType::f32 : DType::f64);
  return true;
}

/// Waits for the sum of `ticket`; false, with the message, when it failed.
bool finish(const char *origin, int64_t ticket, char *message, size_t size) {
  if (ticket == kDoneTicket)
    return true;
  Communicator *communicator = currentCommunicator();
  absl::Status status =
      communicator ? communicator->finishSum(ticket)
                   : absl::InternalError("the communicator that started "
                                         "the sum is no longer current");
  if (status.ok())
    return true;
  std::snprintf(message, size, "%s: %s", origin ? origin : "an all-reduce",
                std::string(status.message()).c_str());
  return false;
}

/// Ends the run with `message`: unwinds the guarded call, or (outside one)
/// stops the process.
void fail(const char *message) {
  if (runtime::failGuardedCall(message))
    return;
  std::fprintf(stderr, "nn runtime: %s\n", message);
  std::abort();
}

// The run ends with a longjmp: nothing with a destructor may be live in
// the entry points' frames when they fail.
thread_local char message[768];

} // namespace

extern "C" __attribute__((visibility("default"))) void
nn_comm_all_reduce_v1(const char *origin, int64_t send, int64_t receive,
                      int64_t count, int32_t bits) {
  int64_t ticket = kDoneTicket;
  if (!start(origin, send, receive, count, bits, ticket, message,
             sizeof(message)) ||
      !finish(origin, ticket, message, sizeof(message)))
    fail(message);
}

extern "C" __attribute__((visibility("default"))) int64_t
nn_comm_all_reduce_start_v1(const char *origin, int64_t send, int64_t receive,
                            int64_t count, int32_t bits) {
  int64_t ticket = kDoneTicket;
  if (!start(origin, send, receive, count, bits, ticket, message,
             sizeof(message)))
    fail(message);
  return ticket;
}

extern "C" __attribute__((visibility("default"))) void
nn_comm_all_reduce_finish_v1(const char *origin, int64_t ticket) {
  if (!finish(origin, ticket, message, sizeof(message)))
    fail(message);
}
