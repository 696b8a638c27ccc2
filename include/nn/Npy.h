//===- nn/Npy.h - NumPy .npy / .npz files -----------------------*- C++ -*-===//
//
// What users already have: arrays saved with numpy.save / numpy.savez /
// numpy.savez_compressed, by numpy 1.x or 2.x. Supported: little-endian f4,
// f8, i4, i8 (dtypes must match the graph), C order; .npz members stored or
// deflated, with or without zip64 records. Readers take untrusted files:
// malformed input is an error naming the file, member and field, never a
// crash or a large allocation (docs/runtime.md lists the rules).
//
//===----------------------------------------------------------------------===//

#ifndef NN_NPY_H
#define NN_NPY_H

#include "nn/Runtime.h"

#include <map>
#include <string>

namespace nn {

/// Parses the bytes of a .npy file; `what` names it in errors.
absl::Status parseNpy(const std::string &bytes, const std::string &what,
                      Tensor &tensor);
absl::Status readNpy(const std::string &path, Tensor &tensor);
/// Reads every array of a .npz archive, keyed by name (without ".npy").
absl::Status readNpz(const std::string &path,
                     std::map<std::string, Tensor> &arrays);
/// Parses the bytes of a .npz archive; `what` names it in errors.
absl::Status parseNpz(const std::string &bytes, const std::string &what,
                      std::map<std::string, Tensor> &arrays);

std::string serializeNpy(const Tensor &tensor);
absl::Status writeNpy(const std::string &path, const Tensor &tensor);
/// Writes an uncompressed archive like numpy.savez.
absl::Status writeNpz(const std::string &path,
                      const std::map<std::string, Tensor> &arrays);

} // namespace nn

#endif // NN_NPY_H
