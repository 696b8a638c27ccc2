//===- SplitMix64.h - a random generator specified bit for bit --*- C++ -*-===//
//
// Initial parameters and dataset shuffles must be the same on every
// platform and standard library, which <random>'s distributions and
// std::shuffle do not promise. SplitMix64 (Steele, Lea and Flood, 2014)
// is a few lines whose output is fixed.
//
//===----------------------------------------------------------------------===//

#ifndef NN_RUNTIME_SPLITMIX64_H
#define NN_RUNTIME_SPLITMIX64_H

#include <cstdint>
#include <utility>
#include <vector>

namespace nn::runtime {

struct SplitMix64 {
  uint64_t state;

  uint64_t next() {
    uint64_t z = (state += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
  }
  /// Uniform in (0, 1): 24 random bits, never 0 (Box-Muller takes a log).
  double uniform() { return ((double)(next() >> 40) + 0.5) * 0x1p-24; }
  /// Fisher-Yates.
  template <typename T> void shuffle(std::vector<T> &items) {
    for (size_t i = items.size(); i > 1; --i)
      std::swap(items[i - 1], items[next() % i]);
  }
};

} // namespace nn::runtime

#endif // NN_RUNTIME_SPLITMIX64_H
