//===- FakeCuda.h - what the CPU stand-in driver reports -------*- C++ -*-===//
//
// The fake driver (FakeCuda.cpp) exports `FakeCudaStats fake_cuda_stats()`;
// tests look it up with dlsym in the copy the runtime loaded.
//
//===----------------------------------------------------------------------===//

#ifndef NN_UNITTESTS_FAKE_CUDA_FAKECUDA_H
#define NN_UNITTESTS_FAKE_CUDA_FAKECUDA_H

struct FakeCudaStats {
  int moduleLoads;
  int launches;
  int liveAllocations;
  int gemms;
  /// The name of the last kernel launched ("" before any).
  const char *lastKernel;
  /// Bytes copied host to device and back (cuMemcpyHtoD / DtoH).
  long long bytesToDevice, bytesToHost;
};

#endif // NN_UNITTESTS_FAKE_CUDA_FAKECUDA_H
