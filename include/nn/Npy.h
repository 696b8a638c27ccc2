//===- nn/Npy.h - NumPy .npy / .npz files ------------------------*- C++
//-*-===//
//
// What users already have: arrays saved with numpy.save / numpy.savez.
// Supported: little-endian f4, f8, i4, i8 (and i4 from i8 nowhere: dtypes
// must match the graph), C order, .npz archives stored uncompressed
// (numpy.savez). numpy.savez_compressed archives are rejected with a
// message saying so.
//
//===----------------------------------------------------------------------===//

#ifndef NN_NPY_H
#define NN_NPY_H

#include "nn/Runtime.h"

#include <map>
#include <string>

namespace nn {

/// Parses the bytes of a .npy file; `what` names it in errors.
Status parseNpy(const std::string &bytes, const std::string &what,
                Tensor &tensor);
Status readNpy(const std::string &path, Tensor &tensor);
/// Reads every array of a .npz archive, keyed by name (without ".npy").
Status readNpz(const std::string &path, std::map<std::string, Tensor> &arrays);

std::string serializeNpy(const Tensor &tensor);
Status writeNpy(const std::string &path, const Tensor &tensor);
/// Writes an uncompressed archive like numpy.savez.
Status writeNpz(const std::string &path,
                const std::map<std::string, Tensor> &arrays);

} // namespace nn

#endif // NN_NPY_H
