//===- FakeDevice.h - what the stand-in driver and NCCL share ---*- C++ -*-===//
//
// Inside the fake library only: the driver's memory check and streams, and
// the NCCL collectives still running on a stream (which the driver's
// cuStreamQuery and cuStreamSynchronize wait for).
//
//===----------------------------------------------------------------------===//

#ifndef NN_UNITTESTS_FAKE_CUDA_FAKEDEVICE_H
#define NN_UNITTESTS_FAKE_CUDA_FAKEDEVICE_H

#include <cstddef>

namespace fake {

/// Whether the environment variable `variable`, `<call>[:<n>]`, asks call
/// number `number` (from 1) of `call` to fail (n defaults to 1).
bool failRequested(const char *variable, const char *call, int number);

/// Whether [pointer, pointer + bytes) lies in one allocation of the fake
/// driver (device or managed memory).
bool owned(const void *pointer, size_t bytes);

/// Whether an NCCL collective enqueued on `stream` has not finished: some
/// rank has not called it yet (FakeNccl.cpp).
bool ncclPending(const void *stream);

/// Waits until ncclPending(stream) is false, at most `seconds`; false on
/// a timeout.
bool ncclWait(const void *stream, double seconds);

} // namespace fake

#endif // NN_UNITTESTS_FAKE_CUDA_FAKEDEVICE_H
