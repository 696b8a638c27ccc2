//===- ManifestFuzzer.cpp - libFuzzer target: the artifact manifest -------===//
//
// A manifest that parses is one the runtime acts on: it must survive a
// serialize/parse round trip unchanged, and binding a synthetic batch to
// it (what nn-exec does before running) must not crash.
//
//===----------------------------------------------------------------------===//

#include "nn/Runtime.h"
#include "nn/Synthetic.h"

#include <cstddef>
#include <cstdint>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  nn::Manifest manifest;
  std::string text(reinterpret_cast<const char *>(data), size);
  if (!nn::Manifest::parse(text, manifest).ok())
    return 0;
  std::string serialized = manifest.serialize();
  nn::Manifest again;
  if (!nn::Manifest::parse(serialized, again).ok() ||
      again.serialize() != serialized)
    __builtin_trap();
  // Small synthetic batches over the manifest's dims, as nn-exec makes
  // them; static sizes are bounded so that the fuzzer does not just ask
  // for large allocations.
  for (const auto *infos : {&manifest.inputs, &manifest.parameters})
    for (const nn::TensorInfo &info : *infos) {
      int64_t bytes = 0;
      std::vector<int64_t> sizes;
      for (const nn::Axis &axis : info.axes)
        if (!axis.isNamed())
          sizes.push_back(axis.size);
      if (!nn::checkedByteSize(info.dtype, sizes, bytes) || bytes > 4096)
        return 0;
    }
  std::mt19937 rng(1);
  std::map<std::string, std::vector<int32_t>> lengths;
  for (const std::string &root : manifest.rootDims)
    if (manifest.findDim(root)->kind == nn::DimInfo::Kind::seq)
      lengths[root] = {3, 1};
  nn::RunInputs inputs = nn::syntheticBatch(manifest, 2, lengths, rng);
  nn::syntheticParameters(manifest, rng, inputs);
  nn::DimValues dims;
  for (const nn::DimInfo &dim : manifest.dims)
    if (dim.kind == nn::DimInfo::Kind::batch)
      dims.sizes[dim.name] = 2;
  dims.lengths = lengths;
  nn::deriveDims(manifest, dims);
  return 0;
}
