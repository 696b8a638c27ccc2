//===- NcclApi.h - the NCCL C ABI the runtime uses --------------*- C++ -*-===//
//
// Types, constants and function signatures of NCCL 2 (nccl.h; these
// functions are all there from 2.4 on, which the communicator requires),
// declared here so that libNNRuntime builds without NCCL and loads
// libnccl.so.2 with dlopen when a GPU run of several ranks asks for it.
// unittests/CudaAbiTest.cpp checks the constants, the sizes, and each
// function's parameter count and sizes against nccl.h where it is
// installed.
//
//===----------------------------------------------------------------------===//

#ifndef NN_RUNTIME_CUDA_NCCLAPI_H
#define NN_RUNTIME_CUDA_NCCLAPI_H

#include "runtime/cuda/CudaApi.h"

#include <cstddef>

namespace nn::cuda::nccl {

using ncclComm_t = struct ncclComm *;
using ncclResult_t = int;
using ncclDataType_t = int;
using ncclRedOp_t = int;
/// What rank 0 makes and every rank passes to ncclCommInitRank.
struct ncclUniqueId {
  char internal[128];
};

constexpr ncclResult_t kSuccess = 0;
constexpr ncclResult_t kInProgress = 7;
constexpr ncclDataType_t kUint8 = 1, kFloat32 = 7, kFloat64 = 8;
constexpr ncclRedOp_t kSum = 0;

/// X(member, symbol, result, (parameters)), as CudaApi.h's lists.
#define NN_NCCL_FUNCTIONS(X)                                                   \
  X(ncclGetVersion, "ncclGetVersion", ncclResult_t, (int *))                   \
  X(ncclGetUniqueId, "ncclGetUniqueId", ncclResult_t, (ncclUniqueId *))        \
  X(ncclCommInitRank, "ncclCommInitRank", ncclResult_t,                        \
    (ncclComm_t *, int, ncclUniqueId, int))                                    \
  X(ncclCommDestroy, "ncclCommDestroy", ncclResult_t, (ncclComm_t))            \
  X(ncclCommAbort, "ncclCommAbort", ncclResult_t, (ncclComm_t))                \
  X(ncclCommGetAsyncError, "ncclCommGetAsyncError", ncclResult_t,              \
    (ncclComm_t, ncclResult_t *))                                              \
  X(ncclGetErrorString, "ncclGetErrorString", const char *, (ncclResult_t))    \
  X(ncclAllReduce, "ncclAllReduce", ncclResult_t,                              \
    (const void *, void *, size_t, ncclDataType_t, ncclRedOp_t, ncclComm_t,    \
     abi::CUstream))                                                           \
  X(ncclBroadcast, "ncclBroadcast", ncclResult_t,                              \
    (const void *, void *, size_t, ncclDataType_t, int, ncclComm_t,            \
     abi::CUstream))

#define NN_NCCL_DECLARE(member, symbol, result, parameters)                    \
  result(*member) parameters = nullptr;

/// NCCL's functions, resolved by dlsym (NcclCommunicator.cpp).
struct Api {
  NN_NCCL_FUNCTIONS(NN_NCCL_DECLARE)
};

#undef NN_NCCL_DECLARE

} // namespace nn::cuda::nccl

#endif // NN_RUNTIME_CUDA_NCCLAPI_H
