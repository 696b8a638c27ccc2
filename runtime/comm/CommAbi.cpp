//===- CommAbi.cpp - the collective entry points artifacts call -----------===//

#include "runtime/comm/CommAbi.h"

#include "nn/Communicator.h"
#include "runtime/Allocator.h"

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>

using namespace nn;

namespace {

/// Runs the sum; false, with the message in `message`, when it failed.
bool allReduce(const char *origin, int64_t send, int64_t receive, int64_t count,
               int32_t bits, char *message, size_t size) {
  const char *what = origin ? origin : "an all-reduce";
  if ((bits != 32 && bits != 64) || count < 0) {
    std::snprintf(message, size,
                  "%s: unsupported all-reduce of %lld %d-bit "
                  "floats",
                  what, (long long)count, (int)bits);
    return false;
  }
  auto *from = reinterpret_cast<const void *>(static_cast<intptr_t>(send));
  auto *to = reinterpret_cast<void *>(static_cast<intptr_t>(receive));
  DType dtype = bits == 32 ? DType::f32 : DType::f64;
  Communicator *communicator = currentCommunicator();
  if (!communicator) {
    if (from != to && count > 0)
      std::memmove(to, from, (size_t)count * (bits / 8));
    return true;
  }
  auto start = std::chrono::steady_clock::now();
  absl::Status status = communicator->allReduceSum(from, to, count, dtype);
  communicator->record(
      count * (bits / 8),
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start)
          .count());
  if (status.ok())
    return true;
  std::snprintf(message, size, "%s: %s", what,
                std::string(status.message()).c_str());
  return false;
}

} // namespace

extern "C" __attribute__((visibility("default"))) void
nn_comm_all_reduce_v1(const char *origin, int64_t send, int64_t receive,
                      int64_t count, int32_t bits) {
  // The run ends with a longjmp: nothing with a destructor may be live in
  // this frame when it fails.
  static thread_local char message[768];
  if (allReduce(origin, send, receive, count, bits, message, sizeof(message)))
    return;
  if (runtime::failGuardedCall(message))
    return;
  std::fprintf(stderr, "nn runtime: %s\n", message);
  std::abort();
}
