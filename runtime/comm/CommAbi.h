//===- CommAbi.h - the collective entry points artifacts call ---*- C++ -*-===//
//
// The C signature nn.all_reduce lowers to (lowering/conversion/
// CollectivePatterns.cpp emits the matching declaration). The name carries
// a version, as the searches' do (runtime/search/SearchAbi.h): a changed
// signature gets a new name. Pointers travel as int64 addresses.
//
//===----------------------------------------------------------------------===//

#ifndef NN_RUNTIME_COMM_COMMABI_H
#define NN_RUNTIME_COMM_COMMABI_H

#include <cstdint>

extern "C" {

// NOLINTBEGIN(readability-identifier-naming): the names generated code
// calls.

/// Sums `count` floats of `bits` (32 or 64) bits at address `send` over
/// every rank of the current communicator (nn::currentCommunicator) into
/// the buffer at `receive` (`send` itself: in place); without one, copies.
/// A failure (a timeout, an MPI error) ends the run with a message naming
/// `origin` (the nn op and its location) and the rank.
void nn_comm_all_reduce_v1(const char *origin, int64_t send, int64_t receive,
                           int64_t count, int32_t bits);

/// nn_comm_all_reduce_v1 in two halves, so that a step's own work runs
/// while the sum does (Communicator::startSum): starts it and returns a
/// ticket for nn_comm_all_reduce_finish_v1, which waits for it. The
/// buffers must stay untouched in between. Both end the run as
/// nn_comm_all_reduce_v1 does when the sum fails.
int64_t nn_comm_all_reduce_start_v1(const char *origin, int64_t send,
                                    int64_t receive, int64_t count,
                                    int32_t bits);
void nn_comm_all_reduce_finish_v1(const char *origin, int64_t ticket);

// NOLINTEND(readability-identifier-naming)
}

#endif // NN_RUNTIME_COMM_COMMABI_H
