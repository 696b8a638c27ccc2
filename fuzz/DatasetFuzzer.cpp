//===- DatasetFuzzer.cpp - libFuzzer target: datasets and overlays --------===//
//
// The arrays of a dataset's shards and their overlays as Dataset::load
// checks them (the .npz files themselves are nn-fuzz-npz's): lengths,
// utterance counts, shared and derived dims, class bounds, nn.keep, and
// overlays adding arrays. What loads is batched over two epochs of
// budgeted, bucketed, shuffled batches. A crash, a sanitizer report, an
// error without a message, or a batch whose lengths exceed its padding is
// a finding.
//
// The input is a list of arrays, each:
//   byte 0: source (bits 0-1: 0 the dataset, 1-2 an overlay, 3 skipped),
//           shard (bit 2), name (bits 3-7, an index into kNames)
//   byte 1: dtype (bits 0-1: f32, f64, i32, i64), rank (bits 2-3, 0-2)
//   a byte per axis: its size (mod 24)
//   the elements, little-endian (missing bytes read as 0)
// fuzz/make_dataset_seeds.py writes seeds in this format.
//
//===----------------------------------------------------------------------===//

#include "nn/Dataset.h"

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>

namespace {

const char *const kNames[] = {"features",
                              "features.lengths",
                              "frame_labels",
                              "frame_labels.lengths",
                              "labels",
                              "labels.lengths",
                              "weight",
                              "half_labels",
                              "half_labels.lengths",
                              "nn.keep",
                              "alignment",
                              "alignment.lengths"};
constexpr size_t kNameCount = sizeof(kNames) / sizeof(kNames[0]);

/// Frames [B, T, 3] with frame targets (5 classes), labels [B, U] (0 the
/// blank), a weight per utterance, targets on T2 = ceil(T / 2), and an
/// alignment [B, T] an overlay gives.
nn::Manifest model() {
  using nn::Axis;
  using nn::DimInfo;
  using nn::DType;
  nn::Manifest m;
  m.graph = "am";
  m.dims = {{DimInfo::Kind::batch, "B", "", "", 0, ""},
            {DimInfo::Kind::seq, "T", "B", "", 0, ""},
            {DimInfo::Kind::seq, "U", "B", "", 0, ""},
            {DimInfo::Kind::seq, "T2", "B", "T", 2, ""}};
  m.rootDims = {"B", "T", "U"};
  Axis b{"B", -1}, t{"T", -1}, u{"U", -1}, t2{"T2", -1};
  m.inputs = {{"features", DType::f32, {b, t, Axis{"", 3}}},
              {"frame_labels", DType::i32, {b, t}, 5},
              {"labels", DType::i32, {b, u}, 5, 0},
              {"weight", DType::f32, {b}},
              {"half_labels", DType::i32, {b, t2}},
              {"alignment", DType::i32, {b, t}, 5},
              {"learning_rate", DType::f32, {}}};
  return m;
}

/// With NN_FUZZ_VERBOSE set, why an input was refused (to check that the
/// seeds load, and to read a reproduced input).
int refused(const absl::Status &status) {
  if (status.message().empty())
    __builtin_trap();
  if (std::getenv("NN_FUZZ_VERBOSE"))
    std::fprintf(stderr, "refused: %s\n",
                 std::string(status.message()).c_str());
  return 0;
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  static const nn::Manifest manifest = model();
  // [shard][source]: the arrays.
  std::map<std::string, nn::Tensor> arrays[2][3];
  size_t at = 0;
  while (at + 2 <= size) {
    uint8_t head = data[at], kind = data[at + 1];
    at += 2;
    int source = head & 3, shard = (head >> 2) & 1;
    const char *name = kNames[(head >> 3) % kNameCount];
    static const nn::DType kTypes[] = {nn::DType::f32, nn::DType::f64,
                                       nn::DType::i32, nn::DType::i64};
    nn::DType dtype = kTypes[kind & 3];
    int rank = ((kind >> 2) & 3) % 3;
    std::vector<int64_t> shape;
    for (int axis = 0; axis < rank && at < size; ++axis)
      shape.push_back(data[at++] % 24);
    nn::Tensor tensor(dtype, shape);
    size_t bytes = tensor.sizeInBytes(),
           available = std::min(bytes, size - std::min(size, at));
    std::memcpy(tensor.raw(), data + at, available);
    at += available;
    if (source < 3)
      arrays[shard][source][name] = std::move(tensor);
  }
  absl::StatusOr<nn::Dataset> dataset = nn::Dataset::forModel(manifest);
  if (!dataset.ok())
    __builtin_trap();
  for (int shard = 0; shard < 2; ++shard) {
    if (arrays[shard][0].empty() && shard > 0)
      break;
    std::vector<nn::Dataset::SourceArrays> sources;
    for (int source = 0; source < 3; ++source)
      if (source == 0 || !arrays[shard][source].empty())
        sources.emplace_back("shard" + std::to_string(shard) + "-source" +
                                 std::to_string(source) + ".npz",
                             std::move(arrays[shard][source]));
    absl::Status status = dataset->addShard(std::move(sources), manifest);
    if (!status.ok())
      return refused(status);
  }
  if (absl::Status status = dataset->finish("fuzz"); !status.ok())
    return refused(status);
  if (std::getenv("NN_FUZZ_VERBOSE"))
    std::fprintf(stderr, "loaded %lld utterances\n",
                 (long long)dataset->size());
  nn::BatchingOptions batching;
  batching.maxSequences = 3;
  batching.maxFrames = 40;
  batching.seed = size;
  for (int64_t epoch = 0; epoch < 2; ++epoch)
    for (const std::vector<int64_t> &members :
         nn::epochBatches(*dataset, batching, epoch)) {
      nn::RunInputs batch = dataset->batch(members);
      for (const auto &[dim, lengths] : batch.lengths)
        if (lengths.size() != members.size())
          __builtin_trap();
      // Every length fits its input's padded axis, which is never empty.
      for (auto [input, dim] :
           {std::pair<const char *, const char *>{"features", "T"},
            {"frame_labels", "T"},
            {"alignment", "T"},
            {"labels", "U"}}) {
        const nn::Tensor &tensor = batch.inputs.at(input);
        if (tensor.rank() < 2 || tensor.shape()[0] != (int64_t)members.size() ||
            tensor.shape()[1] < 1)
          __builtin_trap();
        for (int32_t length : batch.lengths.at(dim))
          if (length < 0 || length > tensor.shape()[1])
            __builtin_trap();
      }
    }
  return 0;
}
