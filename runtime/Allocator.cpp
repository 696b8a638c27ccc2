//===- Allocator.cpp - the buffers compiled code allocates ----------------===//

#include "Allocator.h"

#include <algorithm>
#include <csetjmp>
#include <cstdio>
#include <cstdlib>
#include <dlfcn.h>
#include <map>
#include <mutex>
#include <string>
#include <unordered_map>

namespace {

/// Large blocks: live ones by address (to know their size when freed), and
/// freed ones by size, ready for reuse.
struct BlockCache {
  /// A live block: its size, and the bytes asked for (up to a quarter
  /// less when a cached block was handed out for a smaller request).
  struct Live {
    size_t size, requested;
  };

  std::mutex mutex;
  std::unordered_map<void *, Live> live;
  std::multimap<size_t, void *> free;
  size_t freeBytes = 0;
  /// Bytes asked for in live large blocks, and their maximum since the
  /// last reset (what benchmarks report).
  size_t liveBytes = 0, peakLiveBytes = 0;
  /// Bytes of live large blocks, and their maximum ever (the high-water
  /// mark).
  size_t liveBlockBytes = 0, highWaterBytes = 0;

  /// How many freed bytes may stay cached: twice the high-water mark of
  /// live blocks, at least kCacheLimitBytes. A run that once needed that
  /// much will need it again; keeping it spares the next run every page
  /// fault of fresh memory (a transducer's joint buffers are GBs). Twice:
  /// the blocks of one run, live at different times, add up to more than
  /// were live at once (transducer_align at B = 30: 4.17 GB of blocks, a
  /// 3.58 GB peak), and a cache held to the peak dropped 0.6 GB of them
  /// every batch, to be faulted in again.
  size_t limit() const {
    return std::max(nn::runtime::kCacheLimitBytes, 2 * highWaterBytes);
  }

  void addLive(void *block, size_t size, size_t requested) {
    live[block] = {size, requested};
    liveBytes += requested;
    peakLiveBytes = std::max(peakLiveBytes, liveBytes);
    liveBlockBytes += size;
    highWaterBytes = std::max(highWaterBytes, liveBlockBytes);
  }

  /// Frees every cached block (the caller holds the lock).
  void releaseAll() {
    for (auto &entry : free)
      std::free(entry.second);
    free.clear();
    freeBytes = 0;
  }

  void *allocate(size_t size) {
    if (size < nn::runtime::kCachedBlockBytes)
      return std::malloc(size);
    {
      std::lock_guard<std::mutex> lock(mutex);
      // The smallest cached block that holds `size` and leaves at most a
      // quarter of itself unused: batches of other lengths ask for
      // slightly different sizes every step.
      auto it = free.lower_bound(size);
      if (it != free.end() && it->first - size <= it->first / 4) {
        void *block = it->second;
        size_t blockSize = it->first;
        free.erase(it);
        freeBytes -= blockSize;
        addLive(block, blockSize, size);
        return block;
      }
    }
    void *block = std::malloc(size);
    if (!block) {
      // Out of memory with blocks cached: give them back and try again.
      std::lock_guard<std::mutex> lock(mutex);
      releaseAll();
      block = std::malloc(size);
    }
    if (block) {
      std::lock_guard<std::mutex> lock(mutex);
      addLive(block, size, size);
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
        Live entry = it->second;
        live.erase(it);
        liveBytes -= entry.requested;
        liveBlockBytes -= entry.size;
        // Over the limit, smaller cached blocks go first (they cannot
        // serve this block's size), but only when dropping them makes room
        // for it: otherwise the block itself goes.
        if (freeBytes + entry.size > limit()) {
          size_t smallerBytes = 0;
          for (auto it = free.begin();
               it != free.end() && it->first < entry.size; ++it)
            smallerBytes += it->first;
          if (freeBytes - smallerBytes + entry.size <= limit())
            while (freeBytes + entry.size > limit()) {
              auto smallest = free.begin();
              freeBytes -= smallest->first;
              std::free(smallest->second);
              free.erase(smallest);
            }
        }
        if (freeBytes + entry.size <= limit()) {
          free.emplace(entry.size, block);
          freeBytes += entry.size;
          return;
        }
      }
    }
    std::free(block);
  }

  void clear() {
    std::lock_guard<std::mutex> lock(mutex);
    releaseAll();
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

/// Whether this thread runs inside an OpenMP parallel region (libomp's
/// omp_in_parallel, when an artifact has loaded it).
bool inParallelRegion() {
  using InParallel = int (*)();
  static auto inParallel =
      reinterpret_cast<InParallel>(dlsym(RTLD_DEFAULT, "omp_in_parallel"));
  return inParallel && inParallel();
}

extern "C" void *_mlir_memref_to_llvm_alloc(size_t size) {
  void *block = cache().allocate(size);
  // Inside a threaded loop (the sequences of an alignment or a transducer
  // loss allocate their scratch there) the guard cannot unwind: a worker
  // thread has none, and the master's would leave libomp's join behind.
  // Stop with the size rather than hand out a null pointer.
  if (!block && size > 0 && inParallelRegion()) {
    std::fprintf(stderr,
                 "nn runtime: out of memory: allocating %zu bytes inside a "
                 "threaded loop of an artifact failed\n",
                 size);
    std::abort();
  }
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
