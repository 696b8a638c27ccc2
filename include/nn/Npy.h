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

/// The bytes of a .npy file holding `tensor` (version 1.0, as numpy.save).
std::string serializeNpy(const Tensor &tensor);
/// Writes `tensor` as a .npy file. Like writeNpz, through `path`.partial.
absl::Status writeNpy(const std::string &path, const Tensor &tensor);
/// Writes an uncompressed archive like numpy.savez (without zip64), member
/// by member straight from the tensors, to `path`.partial, which is
/// fsync'd and renamed to `path` when complete (nn/File.h, OutputFile).
/// Errors name the file and carry the system's reason ("No space left on
/// device"); a failed write leaves neither file. Refused before anything
/// is written: more than 65534 arrays, a name over 65531 bytes, an array
/// of 4 GiB or more with its header, an archive of 4 GiB or more.
absl::Status writeNpz(const std::string &path,
                      const std::map<std::string, Tensor> &arrays);

} // namespace nn

#endif // NN_NPY_H
