//===- CudaAbiTest.cpp - runtime/cuda/CudaApi.h against the CUDA headers --===//
//
// The runtime declares the driver and cuBLAS ABI itself (it builds without
// the toolkit and loads the libraries with dlopen). Built only where the
// toolkit is installed, this checks those declarations against cuda.h and
// cublas_v2.h: the constants, the sizes of the types, and the versioned
// symbol names the runtime resolves with dlsym. Most checks are
// static_asserts: a mismatch fails the build.
//
//===----------------------------------------------------------------------===//

#include "runtime/cuda/CudaApi.h"
#include "runtime/cuda/NcclApi.h"

#include <cublas_v2.h>
#include <cuda.h>
#include <gtest/gtest.h>

#include <string_view>
#include <type_traits>

namespace nnabi = nn::cuda::abi;

#define NN_STRINGIFY_(x) #x
#define NN_STRINGIFY(x) NN_STRINGIFY_(x)

static_assert(nnabi::kSuccess == CUDA_SUCCESS);
static_assert(nnabi::kNotReady == CUDA_ERROR_NOT_READY);
static_assert(nnabi::kOutOfMemory == CUDA_ERROR_OUT_OF_MEMORY);
static_assert(nnabi::kMemAttachGlobal == CU_MEM_ATTACH_GLOBAL);
static_assert(nnabi::kStreamDefault == CU_STREAM_DEFAULT);
static_assert(nnabi::kJitOptimizationLevel == CU_JIT_OPTIMIZATION_LEVEL);
static_assert(nnabi::kJitErrorLogBuffer == CU_JIT_ERROR_LOG_BUFFER);
static_assert(nnabi::kJitErrorLogBufferSize ==
              CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES);
static_assert(nnabi::kAttributeSmCount ==
              CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT);
static_assert(nnabi::kAttributeMemoryClockKHz ==
              CU_DEVICE_ATTRIBUTE_MEMORY_CLOCK_RATE);
static_assert(nnabi::kAttributeBusWidthBits ==
              CU_DEVICE_ATTRIBUTE_GLOBAL_MEMORY_BUS_WIDTH);
static_assert(nnabi::kAttributeMajor ==
              CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR);
static_assert(nnabi::kAttributeMinor ==
              CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR);
static_assert(nnabi::kCublasOpN == CUBLAS_OP_N &&
              nnabi::kCublasOpT == CUBLAS_OP_T);

static_assert(sizeof(nnabi::CUresult) == sizeof(CUresult));
static_assert(sizeof(nnabi::CUdevice) == sizeof(CUdevice));
static_assert(sizeof(nnabi::CUdeviceptr) == sizeof(CUdeviceptr));
static_assert(sizeof(nnabi::cublasStatus_t) == sizeof(cublasStatus_t));

TEST(CudaAbiTest, VersionedSymbolNamesMatchTheHeaders) {
  // The runtime dlsyms the symbol of each entry of its function lists;
  // cuda.h and cublas_v2.h map the plain API names to the versioned ones,
  // so the plain name, macro-expanded, must spell the symbol.
  int checked = 0;
#define NN_CHECK_SYMBOL(member, symbol, result, parameters)                    \
  EXPECT_EQ(std::string_view(NN_STRINGIFY(member)), symbol);                   \
  ++checked;
  NN_CUDA_DRIVER_FUNCTIONS(NN_CHECK_SYMBOL)
  NN_CUBLAS_FUNCTIONS(NN_CHECK_SYMBOL)
#undef NN_CHECK_SYMBOL
  EXPECT_EQ(checked, 32);
}

// NCCL ships apart from the toolkit (here, when nccl.h is next to it).
#if __has_include(<nccl.h>)
#include <nccl.h>

namespace nnnccl = nn::cuda::nccl;

static_assert(sizeof(nnnccl::ncclUniqueId) == sizeof(ncclUniqueId));
static_assert(sizeof(nnnccl::ncclResult_t) == sizeof(ncclResult_t));
static_assert(sizeof(nnnccl::ncclDataType_t) == sizeof(ncclDataType_t));
static_assert(sizeof(nnnccl::ncclRedOp_t) == sizeof(ncclRedOp_t));
static_assert(nnnccl::kSuccess == ncclSuccess);
static_assert(nnnccl::kInProgress == ncclInProgress);
static_assert(nnnccl::kUint8 == ncclUint8 && nnnccl::kFloat32 == ncclFloat32 &&
              nnnccl::kFloat64 == ncclFloat64);
static_assert(nnnccl::kSum == ncclSum);
// The enums are ints on both sides: the functions take the same arguments.
static_assert(std::is_same_v<std::underlying_type_t<ncclResult_t>, unsigned> ||
              std::is_same_v<std::underlying_type_t<ncclResult_t>, int>);

/// A function type's result and parameter sizes, in order: the runtime
/// passes ints where nccl.h has enums, and pointers to its own opaque
/// types.
template <typename F> struct Shape;
template <typename R, typename... A> struct Shape<R(A...)> {
  static constexpr size_t arity = sizeof...(A);
  static constexpr size_t sizes[] = {sizeof(R), sizeof(A)...};
};
template <typename F, typename G> constexpr bool sameShape() {
  if (Shape<F>::arity != Shape<G>::arity)
    return false;
  for (size_t i = 0; i <= Shape<F>::arity; ++i)
    if (Shape<F>::sizes[i] != Shape<G>::sizes[i])
      return false;
  return true;
}

TEST(CudaAbiTest, NcclSymbolsAreTheHeadersFunctions) {
  int checked = 0;
  // Each listed member is a function nccl.h declares under that symbol,
  // with as many parameters, each of the same size.
#define NN_CHECK_NCCL(member, symbol, result, parameters)                      \
  EXPECT_EQ(std::string_view(NN_STRINGIFY(member)), symbol);                   \
  static_assert(                                                               \
      sameShape<decltype(::member),                                            \
                std::remove_pointer_t<decltype(nnnccl::Api::member)>>(),       \
      NN_STRINGIFY(member) " differs from nccl.h");                            \
  ++checked;
  NN_NCCL_FUNCTIONS(NN_CHECK_NCCL)
#undef NN_CHECK_NCCL
  EXPECT_EQ(checked, 9);
}
#endif
