//===- Allocator.h - the buffers compiled code allocates --------*- C++ -*-===//
//
// Artifacts allocate through `_mlir_memref_to_llvm_alloc` / `_free`, which
// libNNRuntime exports (the compiler lowers memrefs with MLIR's generic
// allocation functions). Large blocks are kept after they are freed and
// handed out again for the same size: a model run allocates the same
// buffers every time (and an LSTM every step), and fresh pages from the
// kernel cost a page fault each.
//
//===----------------------------------------------------------------------===//

#ifndef NN_RUNTIME_ALLOCATOR_H
#define NN_RUNTIME_ALLOCATOR_H

#include <cstddef>

extern "C" {
void *_mlir_memref_to_llvm_alloc(size_t size);
void *_mlir_memref_to_llvm_aligned_alloc(size_t alignment, size_t size);
void _mlir_memref_to_llvm_free(void *pointer);
}

namespace nn::runtime {
/// Blocks of at least this many bytes are cached for reuse.
constexpr size_t kCachedBlockBytes = 1 << 20;
/// At most this many bytes stay cached; beyond it freed blocks are released.
constexpr size_t kCacheLimitBytes = size_t(1) << 30;

/// Bytes currently held in the cache (for tests).
size_t cachedBytes();
/// Releases every cached block.
void releaseCachedBlocks();
} // namespace nn::runtime

#endif // NN_RUNTIME_ALLOCATOR_H
