//===- Allocator.cpp - the buffers compiled code allocates ----------------===//

#include "Allocator.h"

#include <algorithm>
#include <csetjmp>
#include <cstdlib>
#include <map>
#include <mutex>
#include <string>
#include <unordered_map>

namespace {

/// Large blocks: live ones by address (to know their size when freed), and
/// freed ones by size, ready for reuse.
struct BlockCache {
  std::mutex mutex;
  std::unordered_map<void *, size_t> live;
  std::multimap<size_t, void *> free;
  size_t freeBytes = 0;
  /// Bytes in live large blocks, and their maximum since the last reset.
  size_t liveBytes = 0, peakLiveBytes = 0;

  void addLive(void *block, size_t size) {
    live[block] = size;
    liveBytes += size;
    peakLiveBytes = std::max(peakLiveBytes, liveBytes);
  }

  void *allocate(size_t size) {
    if (size < nn::runtime::kCachedBlockBytes)
      return std::malloc(size);
    {
      std::lock_guard<std::mutex> lock(mutex);
      auto it = free.find(size);
      if (it != free.end()) {
        void *block = it->second;
        free.erase(it);
        freeBytes -= size;
        addLive(block, size);
        return block;
      }
    }
    void *block = std::malloc(size);
    if (block) {
      std::lock_guard<std::mutex> lock(mutex);
      addLive(block, size);
    }
    return block;
  }

  void release(void *block) {
    if (!block)
      return;
    {
      std::lock_guard<std::mutex> lock(mutex);
      auto it = live.find(block);
      if (it != live.end()) {
        size_t size = it->second;
        live.erase(it);
        liveBytes -= size;
        if (freeBytes + size <= nn::runtime::kCacheLimitBytes) {
          free.emplace(size, block);
          freeBytes += size;
          return;
        }
      }
    }
    std::free(block);
  }

  void clear() {
    std::lock_guard<std::mutex> lock(mutex);
    for (auto &entry : free)
      std::free(entry.second);
    free.clear();
    freeBytes = 0;
  }

  ~BlockCache() { clear(); }
};

BlockCache &cache() {
  static BlockCache instance;
  return instance;
}

/// The guard of the run on this thread, and why it ended early: the size
/// that failed, or a runtime entry point's message.
thread_local std::jmp_buf *allocationGuard = nullptr;
thread_local size_t failedAllocation = 0;
thread_local std::string guardError;

} // namespace

nn::runtime::GuardedCall
nn::runtime::callWithAllocationGuard(void (*entry)(void **), void **argv) {
  std::jmp_buf guard;
  std::jmp_buf *outer = allocationGuard;
  GuardedCall result;
  if (setjmp(guard) != 0) {
    allocationGuard = outer;
    result.failedAllocation = failedAllocation;
    std::swap(result.error, guardError);
    failedAllocation = 0;
    return result;
  }
  allocationGuard = &guard;
  entry(argv);
  allocationGuard = outer;
  return result;
}

bool nn::runtime::failGuardedCall(const char *message) {
  if (!allocationGuard)
    return false;
  guardError = message;
  failedAllocation = 0;
  std::longjmp(*allocationGuard, 1);
}

extern "C" void *_mlir_memref_to_llvm_alloc(size_t size) {
  void *block = cache().allocate(size);
  // Nothing with a destructor is live here or in the artifact's frames
  // between this call and the guard.
  if (!block && size > 0 && allocationGuard) {
    failedAllocation = size;
    std::longjmp(*allocationGuard, 1);
  }
  return block;
}

extern "C" void *_mlir_memref_to_llvm_aligned_alloc(size_t alignment,
                                                    size_t size) {
  // Only used with the pipeline's use-aligned-alloc, which nn does not set;
  // kept so that such artifacts still load, outside the cache.
  size_t rounded = (size + alignment - 1) / alignment * alignment;
  return std::aligned_alloc(alignment, rounded);
}

extern "C" void _mlir_memref_to_llvm_free(void *pointer) {
  cache().release(pointer);
}

size_t nn::runtime::cachedBytes() {
  std::lock_guard<std::mutex> lock(cache().mutex);
  return cache().freeBytes;
}

void nn::runtime::releaseCachedBlocks() { cache().clear(); }

size_t nn::runtime::peakLiveBytes() {
  std::lock_guard<std::mutex> lock(cache().mutex);
  return cache().peakLiveBytes;
}

void nn::runtime::resetPeakLiveBytes() {
  std::lock_guard<std::mutex> lock(cache().mutex);
  cache().peakLiveBytes = cache().liveBytes;
}
