//===- nn/Synthetic.h - seeded batches and parameters ------------*- C++
//-*-===//
//
// What nn-run runs when it is given no files, and what the execution tests
// run: inputs and parameters that fit a compiled graph's manifest.
//
//===----------------------------------------------------------------------===//

#ifndef NN_SYNTHETIC_H
#define NN_SYNTHETIC_H

#include "nn/Runtime.h"

#include <random>

namespace nn {

/// A batch of `batch` sequences with the given lengths per root sequence
/// dim, each padded to its longest sequence: floats uniform in [-1, 1] and
/// class indices uniform over their classes ([0, 10) when unconstrained)
/// on valid positions; padding holds `pad` (floats) or -1 (integers).
RunInputs syntheticBatch(const Manifest &manifest, int64_t batch,
                         std::map<std::string, std::vector<int32_t>> lengths,
                         std::mt19937 &rng, double pad = 0.0);

/// Parameters uniform in +-1/sqrt(last axis) (the fan-in of [out, in]).
void syntheticParameters(const Manifest &manifest, std::mt19937 &rng,
                         RunInputs &inputs);

} // namespace nn

#endif // NN_SYNTHETIC_H
