//===- Reference.h - a plain evaluator of nn graphs (tests only) -*- C++
//-*-===//
//
// Evaluates an nn graph directly from its ops, in double precision, on
// padded tensors with per-sequence masks: no lowering, no packing, loops
// written as the op descriptions read. Compiled results are checked
// against it. It shares nothing with lowering/ or runtime/ except the
// dialect it reads.
//
//===----------------------------------------------------------------------===//

#ifndef NN_UNITTESTS_REFERENCE_H
#define NN_UNITTESTS_REFERENCE_H

#include "nn/Runtime.h"

#include <map>
#include <string>
#include <vector>

namespace nn::reference {

struct Array {
  std::vector<int64_t> shape;
  std::vector<double> data;
};

struct Loss {
  double sum = 0, normalization = 0;
};

struct Result {
  std::vector<Array> outputs;
  std::map<std::string, Loss> losses;
  /// Lengths of every sequence dim of the entry graph (derived included).
  std::map<std::string, std::vector<int64_t>> lengths;
};

/// Evaluates graph `entry` of the module in `source`.
absl::Status evaluate(const std::string &source, const std::string &entry,
                      const RunInputs &inputs, Result &result);

} // namespace nn::reference

#endif // NN_UNITTESTS_REFERENCE_H
