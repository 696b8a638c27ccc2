//===- NpzFuzzer.cpp - libFuzzer target: the .npz (zip) reader ------------===//

#include "nn/Npy.h"

#include <cstddef>
#include <cstdint>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  std::map<std::string, nn::Tensor> arrays;
  absl::Status status =
      nn::parseNpz(std::string(reinterpret_cast<const char *>(data), size),
                   "'fuzz.npz'", arrays);
  // Failure never leaves the message empty.
  if (!status.ok() && status.message().empty())
    __builtin_trap();
  return 0;
}
