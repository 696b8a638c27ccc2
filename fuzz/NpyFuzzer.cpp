//===- NpyFuzzer.cpp - libFuzzer target: the .npy reader ------------------===//

#include "nn/Npy.h"

#include <cstddef>
#include <cstdint>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  nn::Tensor tensor;
  absl::Status status =
      nn::parseNpy(std::string(reinterpret_cast<const char *>(data), size),
                   "'fuzz.npy'", tensor);
  // A parsed tensor holds exactly what its header promised.
  if (status.ok() && tensor.sizeInBytes() > size)
    __builtin_trap();
  return 0;
}
