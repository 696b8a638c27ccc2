//===- Allocator.h - the buffers compiled code allocates --------*- C++ -*-===//
//
// Artifacts allocate through `_mlir_memref_to_llvm_alloc` / `_free`, which
// libNNRuntime exports (the compiler lowers memrefs with MLIR's generic
// allocation functions). Large blocks are kept after they are freed and
// handed out again for the same size or one up to a quarter smaller: a
// model run allocates the same buffers every time (and an LSTM every step),
// batches of other lengths nearly the same, and fresh pages from the
// kernel cost a page fault each. An allocation that fails inside a run
// ends the run with an error instead of a null pointer the generated code
// would write through; inside a threaded loop, where no guard can unwind,
// it stops the process with the size.
//
//===----------------------------------------------------------------------===//

#ifndef NN_RUNTIME_ALLOCATOR_H
#define NN_RUNTIME_ALLOCATOR_H

#include <cstddef>
#include <string>

extern "C" {
void *_mlir_memref_to_llvm_alloc(size_t size);
void *_mlir_memref_to_llvm_aligned_alloc(size_t alignment, size_t size);
void _mlir_memref_to_llvm_free(void *pointer);
}

namespace nn::runtime {
/// Blocks of at least this many bytes are cached for reuse.
constexpr size_t kCachedBlockBytes = 1 << 20;
/// Freed blocks stay cached up to twice the most bytes ever live at once
/// in large blocks, and at least this many (the floor of that limit);
/// beyond it they are released (smaller cached blocks first). An
/// allocation that fails empties the cache and tries again.
constexpr size_t kCacheLimitBytes = size_t(1) << 30;

/// How a guarded call of an artifact's entry ended.
struct GuardedCall {
  /// Nonzero: an allocation of this many bytes failed.
  size_t failedAllocation = 0;
  /// Non-empty: a runtime entry point the artifact called failed
  /// (failGuardedCall), with this message.
  std::string error;
  bool ok() const { return failedAllocation == 0 && error.empty(); }
};

/// Calls `entry(argv)`. When an allocation the artifact asks for fails, or
/// a runtime entry point it calls gives up (failGuardedCall), the call
/// unwinds out of the artifact (its frames hold no C++ objects; the
/// buffers it had allocated are leaked) and says why. Nests; one guard per
/// thread.
GuardedCall callWithAllocationGuard(void (*entry)(void **), void **argv);

/// Ends the guarded call running on this thread with `message`, unwinding
/// to callWithAllocationGuard; returns false when none runs (the caller
/// must then fail on its own). The caller's frame must hold no objects
/// with destructors.
bool failGuardedCall(const char *message);

/// Bytes currently held in the cache (for tests).
size_t cachedBytes();
/// The most bytes live at once in blocks of at least kCachedBlockBytes
/// (the tensors that matter; smaller ones are not counted) since the last
/// reset, which starts from what is live then. For benchmarks.
size_t peakLiveBytes();
void resetPeakLiveBytes();
/// Releases every cached block (the high-water mark stays).
void releaseCachedBlocks();
} // namespace nn::runtime

#endif // NN_RUNTIME_ALLOCATOR_H
