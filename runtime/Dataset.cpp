//===- Dataset.cpp - training data on disk and its batches ----------------===//

#include "nn/Dataset.h"

#include "nn/Npy.h"
#include "runtime/SplitMix64.h"

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <dirent.h>
#include <sys/stat.h>

using namespace nn;

namespace {

bool isTrainStepScalar(const std::string &name) {
  return name == "learning_rate" || name == "step" || name == "dropout_seed";
}

/// Element `i` of an i32 or i64 tensor, exactly: through a double, large
/// i64 values round out of the range (and their cast back is undefined).
int64_t integerAt(const Tensor &tensor, int64_t i) {
  return tensor.dtype() == DType::i64 ? tensor.data<int64_t>()[i]
                                      : tensor.data<int32_t>()[i];
}

/// A length array: rank 1, i32 or i64, entries >= 0 that add up to at
/// most `rows` (checked as they add up, so that no sum wraps). Read as
/// integers: a double rounds 2^63 - 1 up past the range.
absl::Status readLengths(const Tensor &tensor, const std::string &what,
                         int64_t rows, std::vector<int64_t> &lengths) {
  if (tensor.rank() != 1 ||
      (tensor.dtype() != DType::i32 && tensor.dtype() != DType::i64))
    return absl::InvalidArgumentError(what +
                                      " must be a vector of i32 or "
                                      "i64 lengths, got " +
                                      toString(tensor.dtype()) + " " +
                                      shapeText(tensor.shape()));
  lengths.resize(tensor.numElements());
  int64_t total = 0;
  for (int64_t i = 0; i < tensor.numElements(); ++i) {
    int64_t value = integerAt(tensor, i);
    if (value < 0)
      return absl::InvalidArgumentError(what + " gives utterance " +
                                        std::to_string(i) +
                                        " a negative length");
    if (value > rows - total)
      return absl::InvalidArgumentError(
          what + " gives utterance " + std::to_string(i) + " length " +
          std::to_string(value) + ", past the " + std::to_string(rows) +
          " rows of the array (the lengths before it add up to " +
          std::to_string(total) + ")");
    total += value;
    lengths[i] = value;
  }
  return absl::OkStatus();
}

/// "U+0041", "U+1F600".
std::string codePointText(int64_t codePoint) {
  char text[32];
  std::snprintf(text, sizeof(text), "U+%04llX", (long long)codePoint);
  return text;
}

bool isWhitespace(int64_t c) {
  return (c >= 0x9 && c <= 0xD) || c == 0x20 || c == 0x85 || c == 0xA0 ||
         c == 0x1680 || (c >= 0x2000 && c <= 0x200A) || c == 0x2028 ||
         c == 0x2029 || c == 0x202F || c == 0x205F || c == 0x3000;
}

/// Why code point `c` at `position` may not be in an id, or "".
std::string idCodePointProblem(int64_t c, size_t position) {
  std::string at = " at position " + std::to_string(position);
  if (c < 0 || c > 0x10FFFF)
    return "holds " + std::to_string(c) + at +
           ", which is not a Unicode code point (0 to 0x10FFFF)";
  if (c >= 0xD800 && c <= 0xDFFF)
    return "holds " + codePointText(c) + at +
           ", a surrogate, which is not a Unicode scalar value";
  if (isWhitespace(c))
    return "holds whitespace (" + codePointText(c) + ")" + at;
  if (c < 0x20 || (c >= 0x7F && c <= 0x9F))
    return "holds a control character (" + codePointText(c) + ")" + at;
  return "";
}

/// The file name of `path` without its directory and a final ".npz".
std::string shardStem(const std::string &path) {
  size_t slash = path.find_last_of('/');
  std::string name = slash == std::string::npos ? path : path.substr(slash + 1);
  if (name.size() > 4 && name.compare(name.size() - 4, 4, ".npz") == 0)
    name.resize(name.size() - 4);
  return name;
}

} // namespace

std::string nn::utteranceIdProblem(absl::Span<const int32_t> codePoints) {
  if (codePoints.empty())
    return "is empty";
  for (size_t i = 0; i < codePoints.size(); ++i)
    if (std::string problem = idCodePointProblem(codePoints[i], i);
        !problem.empty())
      return problem;
  return "";
}

std::string nn::utf8FromCodePoints(absl::Span<const int32_t> codePoints) {
  std::string text;
  for (int32_t c : codePoints) {
    auto u = (uint32_t)c;
    if (u < 0x80) {
      text += (char)u;
    } else if (u < 0x800) {
      text += (char)(0xC0 | (u >> 6));
      text += (char)(0x80 | (u & 0x3F));
    } else if (u < 0x10000) {
      text += (char)(0xE0 | (u >> 12));
      text += (char)(0x80 | ((u >> 6) & 0x3F));
      text += (char)(0x80 | (u & 0x3F));
    } else {
      text += (char)(0xF0 | (u >> 18));
      text += (char)(0x80 | ((u >> 12) & 0x3F));
      text += (char)(0x80 | ((u >> 6) & 0x3F));
      text += (char)(0x80 | (u & 0x3F));
    }
  }
  return text;
}

absl::StatusOr<std::vector<int32_t>>
nn::utteranceIdCodePoints(const std::string &id) {
  std::vector<int32_t> codePoints;
  auto notUtf8 = [&](size_t at) {
    return absl::InvalidArgumentError("the utterance id '" + id +
                                      "' is not UTF-8 (byte " +
                                      std::to_string(at) + ")");
  };
  for (size_t i = 0; i < id.size();) {
    auto lead = (unsigned char)id[i];
    int extra = lead < 0x80                   ? 0
                : lead >= 0xC2 && lead < 0xE0 ? 1
                : lead >= 0xE0 && lead < 0xF0 ? 2
                : lead >= 0xF0 && lead < 0xF5 ? 3
                                              : -1;
    if (extra < 0 || i + extra >= id.size())
      return notUtf8(i);
    uint32_t c = extra == 0   ? lead
                 : extra == 1 ? lead & 0x1F
                 : extra == 2 ? lead & 0x0F
                              : lead & 0x07;
    for (int k = 1; k <= extra; ++k) {
      auto next = (unsigned char)id[i + k];
      if ((next & 0xC0) != 0x80)
        return notUtf8(i);
      c = (c << 6) | (next & 0x3F);
    }
    // Overlong forms, surrogates and values past U+10FFFF are not UTF-8.
    static const uint32_t kSmallest[] = {0, 0x80, 0x800, 0x10000};
    if (c < kSmallest[extra] || (c >= 0xD800 && c <= 0xDFFF) || c > 0x10FFFF)
      return notUtf8(i);
    codePoints.push_back((int32_t)c);
    i += extra + 1;
  }
  if (std::string problem = utteranceIdProblem(codePoints); !problem.empty())
    return absl::InvalidArgumentError("the utterance id '" + id + "' " +
                                      problem);
  return codePoints;
}

absl::StatusOr<std::vector<std::string>>
Dataset::shardPaths(const std::string &path) {
  struct stat info;
  if (stat(path.c_str(), &info) != 0)
    return absl::NotFoundError("cannot open dataset '" + path + "'");
  if (!S_ISDIR(info.st_mode))
    return std::vector<std::string>{path};
  std::vector<std::string> found;
  if (DIR *dir = opendir(path.c_str())) {
    while (dirent *entry = readdir(dir)) {
      std::string name = entry->d_name;
      if (name.size() > 4 && name.compare(name.size() - 4, 4, ".npz") == 0 &&
          name != kFeatureStatsFile)
        found.push_back(path + "/" + name);
    }
    closedir(dir);
  }
  std::sort(found.begin(), found.end());
  if (found.empty())
    return absl::InvalidArgumentError("dataset directory '" + path +
                                      "' holds no .npz shards");
  return found;
}

absl::StatusOr<Dataset> Dataset::load(const std::string &path,
                                      const Manifest &manifest) {
  return load(std::vector<std::string>{path}, manifest);
}

absl::StatusOr<Dataset> Dataset::load(const std::vector<std::string> &paths,
                                      const Manifest &manifest) {
  return load(paths, manifest, {});
}

absl::StatusOr<Dataset>
Dataset::forModel(const Manifest &manifest,
                  const std::vector<HostArray> &hostArrays,
                  WithoutFrames withoutFrames) {
  Dataset dataset;
  dataset.withoutFramesRule = withoutFrames;
  for (const HostArray &array : hostArrays)
    dataset.hostArrays.push_back({array});
  const TensorInfo *weights = nullptr;
  for (const TensorInfo &input : manifest.inputs) {
    if (isTrainStepScalar(input.name))
      continue;
    if (input.name == kChunkWeightsInput) {
      weights = &input;
      continue;
    }
    Array array;
    array.name = input.name;
    array.dtype = input.dtype;
    const std::vector<Axis> &axes = input.axes;
    const DimInfo *first = axes.empty() || !axes[0].isNamed()
                               ? nullptr
                               : manifest.findDim(axes[0].dim);
    if (!first || first->kind != DimInfo::Kind::batch)
      return absl::InvalidArgumentError(
          "graph input '" + input.name +
          "' is not per utterance (its first axis is not the batch), so no "
          "dataset can fill it");
    size_t at = 1;
    if (axes.size() > 1 && axes[1].isNamed()) {
      array.dim = axes[1].dim;
      array.derived = !manifest.findDim(array.dim)->source.empty();
      at = 2;
      if (dataset.batchingDim.empty() &&
          manifest.findDim(array.dim)->source.empty())
        dataset.batchingDim = array.dim;
    }
    for (; at < axes.size(); ++at) {
      if (axes[at].isNamed())
        return absl::InvalidArgumentError(
            "graph input '" + input.name +
            "' has more than one sequence axis; a dataset array has one");
      array.trailing.push_back(axes[at].size);
    }
    dataset.arrays.push_back(array);
  }
  // A derived dim's lengths follow from its source's, which an array must
  // carry.
  for (const Array &array : dataset.arrays) {
    if (!array.derived)
      continue;
    std::string root = array.dim;
    while (!manifest.findDim(root)->source.empty())
      root = manifest.findDim(root)->source;
    bool carried =
        std::any_of(dataset.arrays.begin(), dataset.arrays.end(),
                    [&](const Array &other) { return other.dim == root; });
    if (!carried)
      return absl::InvalidArgumentError(
          "graph input '" + array.name + "' is along '" + array.dim +
          "', derived from '" + root +
          "', which no other input carries: a dataset cannot give its "
          "lengths");
  }
  if (weights) {
    // Batches compute it: 1 per frame (or path position), 0 where another
    // chunk counts it. Along the frames, or along a root sequence dim that
    // another input carries (an RNN-T path's).
    const std::vector<Axis> &axes = weights->axes;
    bool carried =
        axes.size() == 2 && axes[1].isNamed() &&
        std::any_of(dataset.arrays.begin(), dataset.arrays.end(),
                    [&](const Array &array) {
                      return !array.derived && array.dim == axes[1].dim;
                    });
    bool fits = weights->dtype == DType::f32 && carried && axes[0].isNamed() &&
                manifest.findDim(axes[0].dim)->kind == DimInfo::Kind::batch;
    if (!fits)
      return absl::InvalidArgumentError(
          std::string("graph input '") + kChunkWeightsInput +
          "' is the weight of each frame, which batches fill: it must be "
          "f32 [batch, " +
          (dataset.batchingDim.empty() ? std::string("frames")
                                       : dataset.batchingDim) +
          "] along the frames the dataset batches by, or along an RNN-T "
          "path that another input carries");
    dataset.chunkWeightsDim = axes[1].dim;
  }
  return dataset;
}

absl::Status Dataset::addShard(std::vector<SourceArrays> sources,
                               const Manifest &manifest) {
  std::vector<std::string> shardFiles;
  std::map<std::string, Tensor> members;
  std::map<std::string, std::string> holder;
  std::vector<std::pair<std::string, Tensor>> keeps;
  for (auto &[file, arrays] : sources) {
    for (auto &[name, tensor] : arrays) {
      // Every source may leave utterances out: kept by all of them.
      if (name == kKeepArray) {
        keeps.emplace_back(file, std::move(tensor));
        continue;
      }
      auto [at, added] = holder.emplace(name, file);
      if (!added)
        return absl::InvalidArgumentError("'" + file + "' and '" + at->second +
                                          "' both hold '" + name +
                                          "': an overlay may only add arrays");
      members[name] = std::move(tensor);
    }
    shardFiles.push_back(file);
  }
  if (shardFiles.empty())
    return absl::InvalidArgumentError("a shard needs at least one source");
  return addShard(shardFiles, std::move(members), keeps, manifest);
}

absl::Status Dataset::finish(const std::string &path) const {
  if (utterances.empty()) {
    std::string why;
    if (leftOutCount)
      why = std::to_string(leftOutCount) + " left out by '" + kKeepArray + "'";
    if (withoutFramesCount)
      why += (why.empty() ? "" : ", ") + std::to_string(withoutFramesCount) +
             " without frames along '" + batchingDim + "'";
    return absl::InvalidArgumentError("dataset '" + path +
                                      "' holds no utterances" +
                                      (why.empty() ? "" : " (" + why + ")"));
  }
  return absl::OkStatus();
}

absl::StatusOr<Dataset> Dataset::load(const std::vector<std::string> &paths,
                                      const Manifest &manifest,
                                      const std::vector<HostArray> &hostArrays,
                                      WithoutFrames withoutFrames) {
  if (paths.empty())
    return absl::InvalidArgumentError("no dataset given");
  const std::string &path = paths.front();
  absl::StatusOr<Dataset> made = forModel(manifest, hostArrays, withoutFrames);
  if (!made.ok())
    return made.status();
  Dataset &dataset = *made;
  // The shards of the dataset and of each overlay, matched by position.
  std::vector<std::vector<std::string>> files;
  for (const std::string &source : paths) {
    absl::StatusOr<std::vector<std::string>> shards = shardPaths(source);
    if (!shards.ok())
      return shards.status();
    if (!files.empty() && shards->size() != files.front().size())
      return absl::InvalidArgumentError(
          "overlay '" + source + "' has " + std::to_string(shards->size()) +
          " shards, dataset '" + path + "' " +
          std::to_string(files.front().size()) +
          ": an overlay adds arrays to each shard's utterances");
    files.push_back(std::move(*shards));
  }
  for (size_t k = 0; k < files.front().size(); ++k) {
    std::vector<SourceArrays> sources;
    for (const std::vector<std::string> &source : files) {
      sources.emplace_back(source[k], std::map<std::string, Tensor>());
      if (absl::Status status = readNpz(source[k], sources.back().second);
          !status.ok())
        return status;
    }
    if (absl::Status status = dataset.addShard(std::move(sources), manifest);
        !status.ok())
      return status;
  }
  if (absl::Status status = dataset.finish(path); !status.ok())
    return status;
  return made;
}

absl::Status
Dataset::addShard(const std::vector<std::string> &files,
                  std::map<std::string, Tensor> members,
                  const std::vector<std::pair<std::string, Tensor>> &keeps,
                  const Manifest &manifest) {
  Shard shard;
  shard.path = files.front();
  shard.described = "dataset shard '" + files.front() + "'";
  for (size_t i = 1; i < files.size(); ++i)
    shard.described += (i == 1 ? " with overlay '" : ", '") + files[i] + "'";
  auto fail = [&](const std::string &why) {
    return absl::InvalidArgumentError(shard.described + ": " + why);
  };
  // Which utterances stay (every source's nn.keep says 1); the others
  // are neither checked nor batched.
  std::vector<bool> keep;
  for (const auto &[file, flags] : keeps) {
    std::string what = "'" + file + "': '" + kKeepArray + "'";
    if (flags.rank() != 1 ||
        (flags.dtype() != DType::i32 && flags.dtype() != DType::i64))
      return fail(what + " must be a vector of i32 or i64, got " +
                  toString(flags.dtype()) + " " + shapeText(flags.shape()));
    if (!keep.empty() && (int64_t)keep.size() != flags.numElements())
      return fail(what + " holds " + std::to_string(flags.numElements()) +
                  " utterances, another source's " +
                  std::to_string(keep.size()));
    keep.resize(flags.numElements(), true);
    for (int64_t u = 0; u < flags.numElements(); ++u) {
      int64_t flag = integerAt(flags, u);
      if (flag != 0 && flag != 1)
        return fail(what + " holds " + std::to_string(flag) +
                    " for utterance " + std::to_string(u) +
                    " (1 keeps it, 0 leaves it out)");
      keep[u] = keep[u] && flag == 1;
    }
  }
  auto kept = [&](int64_t u) { return keep.empty() || keep[u]; };
  // Before the graph's arrays are moved into the shard (a host array may
  // be a graph input too).
  if (absl::Status status = readIds(members, shard); !status.ok())
    return status;
  if (absl::Status status = readHostArrays(members, shard); !status.ok())
    return status;
  int64_t count = -1;
  std::map<std::string, std::vector<int64_t>> dimLengths;
  std::map<std::string, std::string> dimOwner;
  for (const Array &array : arrays) {
    auto found = members.find(array.name);
    std::vector<int64_t> expected{-1};
    if (!array.dim.empty())
      expected.push_back(-1);
    expected.insert(expected.end(), array.trailing.begin(),
                    array.trailing.end());
    std::string wanted =
        "[" + std::string(array.dim.empty() ? "B" : "B, ") + array.dim;
    for (int64_t size : array.trailing)
      wanted += ", " + std::to_string(size);
    wanted += "] " + std::string(toString(array.dtype));
    if (found == members.end())
      return fail("no array '" + array.name + "' for the graph input " +
                  wanted);
    Tensor &data = found->second;
    std::vector<int64_t> trailing(data.shape().begin() + (data.rank() ? 1 : 0),
                                  data.shape().end());
    if (data.dtype() != array.dtype ||
        data.rank() != 1 + (int64_t)array.trailing.size() ||
        trailing != array.trailing)
      return fail("array '" + array.name + "' is " + toString(data.dtype()) +
                  " " + shapeText(data.shape()) +
                  ", which does not fit the graph input " + wanted +
                  (array.dim.empty() ? ""
                                     : " (utterances concatenated "
                                       "along axis 0)"));
    std::vector<int64_t> lengths;
    if (array.dim.empty()) {
      lengths.assign(data.shape()[0], 1);
    } else {
      auto lengthsFound = members.find(array.name + ".lengths");
      if (lengthsFound == members.end())
        return fail("no array '" + array.name + ".lengths' giving the " +
                    "length of each utterance in '" + array.name + "'");
      if (absl::Status status =
              readLengths(lengthsFound->second,
                          shard.described + ": '" + array.name + ".lengths'",
                          data.rank() ? data.shape()[0] : 0, lengths);
          !status.ok())
        return status;
    }
    if (count >= 0 && (int64_t)lengths.size() != count)
      return fail("'" + array.name + "' holds " +
                  std::to_string(lengths.size()) + " utterances, '" +
                  arrays.front().name + "' " + std::to_string(count));
    count = (int64_t)lengths.size();
    if (!keep.empty() && (int64_t)keep.size() != count)
      return fail("'" + std::string(kKeepArray) + "' holds " +
                  std::to_string(keep.size()) + " utterances, '" + array.name +
                  "' " + std::to_string(count));
    std::vector<int64_t> offsets(count + 1, 0);
    for (int64_t u = 0; u < count; ++u)
      offsets[u + 1] = offsets[u] + lengths[u];
    if (offsets.back() != data.shape()[0])
      return fail("the lengths in '" + array.name + ".lengths' add up to " +
                  std::to_string(offsets.back()) + " rows, but '" + array.name +
                  "' has " + std::to_string(data.shape()[0]));
    if (!array.dim.empty()) {
      auto [owner, first] = dimOwner.emplace(array.dim, array.name);
      if (first) {
        dimLengths[array.dim] = lengths;
      } else {
        const std::vector<int64_t> &other = dimLengths[array.dim];
        for (int64_t u = 0; u < count; ++u)
          if (kept(u) && other[u] != lengths[u])
            return fail("utterance " + std::to_string(u) + ": '" + array.name +
                        "' has length " + std::to_string(lengths[u]) +
                        " but '" + owner->second + "' " +
                        std::to_string(other[u]) + " along the shared dim '" +
                        array.dim + "'");
      }
    }
    // Class indices: the bounds the runtime would check per batch, here
    // before training starts.
    const TensorInfo *input = nullptr;
    for (const TensorInfo &info : manifest.inputs)
      if (info.name == array.name)
        input = &info;
    if (input && input->classes > 0 &&
        (data.dtype() == DType::i32 || data.dtype() == DType::i64)) {
      int64_t rowSize =
          data.numElements() / std::max<int64_t>(offsets.back(), 1);
      for (int64_t u = 0; u < count; ++u) {
        if (!kept(u))
          continue;
        for (int64_t i = offsets[u] * rowSize; i < offsets[u + 1] * rowSize;
             ++i) {
          int64_t value = integerAt(data, i);
          if (value < 0 || value >= input->classes ||
              value == input->reservedClass)
            return fail("utterance " + std::to_string(u) + ": '" + array.name +
                        "' holds class " + std::to_string(value) +
                        " at position " +
                        std::to_string(i / rowSize - offsets[u]) +
                        (value == input->reservedClass && value >= 0 &&
                                 value < input->classes
                             ? ", the reserved class (the CTC blank)"
                             : ", outside [0, " +
                                   std::to_string(input->classes) + ")"));
        }
      }
    }
    shard.data.push_back(std::move(data));
    shard.offsets.push_back(std::move(offsets));
  }
  // Lengths of derived dims follow from their source: ceil(len / k) or
  // len + c.
  for (const auto &[dim, lengths] : dimLengths) {
    const DimInfo *info = manifest.findDim(dim);
    if (info->source.empty())
      continue;
    auto source = dimLengths.find(info->source);
    if (source == dimLengths.end())
      continue;
    for (size_t u = 0; u < lengths.size(); ++u) {
      int64_t expected = info->deriveLength(source->second[u]);
      if (kept((int64_t)u) && lengths[u] != expected)
        return fail("utterance " + std::to_string(u) + ": '" + dimOwner[dim] +
                    "' has length " + std::to_string(lengths[u]) + " along '" +
                    dim + "' = " + derivedFormula(*info, info->source) +
                    ", expected " + std::to_string(expected));
    }
  }
  if (count >= 0) {
    auto countsAgree = [&](const std::string &name, int64_t held) {
      return held == count
                 ? absl::OkStatus()
                 : fail("'" + name + "' holds " + std::to_string(held) +
                        " utterances, '" + arrays.front().name + "' " +
                        std::to_string(count));
    };
    if (!shard.ids.empty())
      if (absl::Status status = countsAgree(kIdArray, shard.ids.size());
          !status.ok())
        return status;
    for (size_t h = 0; h < hostArrays.size(); ++h)
      if (!shard.hostOffsets[h].empty())
        if (absl::Status status =
                countsAgree(hostArrays[h].array.name,
                            (int64_t)shard.hostOffsets[h].size() - 1);
            !status.ok())
          return status;
  }
  shard.utterances = std::max<int64_t>(count, 0);
  int32_t index = (int32_t)shards.size();
  const std::vector<int64_t> *batching =
      batchingDim.empty() ? nullptr : &dimLengths[batchingDim];
  // An utterance without frames has nothing to train or evaluate on (a
  // label sequence no frames can emit), and a batch of only such
  // utterances would have no padded frame: it is left out, and counted,
  // unless a decoder keeps it (its hypothesis is the empty one).
  for (int64_t u = 0; u < count; ++u) {
    int64_t length = batching ? (*batching)[u] : 1;
    if (!kept(u)) {
      ++leftOutCount;
      continue;
    }
    if (length == 0) {
      ++withoutFramesCount;
      if (withoutFramesRule == WithoutFrames::leaveOut)
        continue;
    }
    utterances.push_back({index, u, length});
  }
  shards.push_back(std::move(shard));
  return absl::OkStatus();
}

absl::Status Dataset::readIds(const std::map<std::string, Tensor> &members,
                              Shard &shard) const {
  const std::string name = kIdArray, lengthsName = name + ".lengths";
  auto fail = [&](const std::string &why) {
    return absl::InvalidArgumentError(shard.described + ": " + why);
  };
  auto found = members.find(name), lengthsFound = members.find(lengthsName);
  if (found == members.end() && lengthsFound == members.end())
    return absl::OkStatus();
  if (found == members.end())
    return fail("'" + lengthsName + "' without '" + name +
                "': the utterance ids are missing");
  if (lengthsFound == members.end())
    return fail("no array '" + lengthsName +
                "' giving the length of each utterance's id in '" + name + "'");
  const Tensor &codePoints = found->second;
  if (codePoints.rank() != 1 ||
      (codePoints.dtype() != DType::i32 && codePoints.dtype() != DType::i64))
    return fail("'" + name +
                "' must be a vector of i32 or i64 Unicode code points, got " +
                toString(codePoints.dtype()) + " " +
                shapeText(codePoints.shape()));
  std::vector<int64_t> lengths;
  int64_t rows = codePoints.shape()[0];
  if (absl::Status status = readLengths(
          lengthsFound->second, shard.described + ": '" + lengthsName + "'",
          rows, lengths);
      !status.ok())
    return status;
  int64_t at = 0;
  std::vector<std::string> ids;
  for (size_t u = 0; u < lengths.size(); ++u) {
    std::vector<int32_t> id;
    for (int64_t i = 0; i < lengths[u]; ++i, ++at) {
      int64_t value = integerAt(codePoints, at);
      if (std::string problem = idCodePointProblem(value, i); !problem.empty())
        return fail("utterance " + std::to_string(u) + ": '" + name + "' " +
                    problem);
      id.push_back((int32_t)value);
    }
    if (id.empty())
      return fail("utterance " + std::to_string(u) + ": '" + name +
                  "' is empty (its length in '" + lengthsName + "' is 0)");
    ids.push_back(utf8FromCodePoints(id));
  }
  if (at != rows)
    return fail("the lengths in '" + lengthsName + "' add up to " +
                std::to_string(at) + " code points, but '" + name + "' has " +
                std::to_string(rows));
  shard.ids = std::move(ids);
  return absl::OkStatus();
}

absl::Status
Dataset::readHostArrays(const std::map<std::string, Tensor> &members,
                        Shard &shard) {
  auto fail = [&](const std::string &why) {
    return absl::InvalidArgumentError(shard.described + ": " + why);
  };
  shard.hostValues.resize(hostArrays.size());
  shard.hostOffsets.resize(hostArrays.size());
  for (size_t h = 0; h < hostArrays.size(); ++h) {
    HostArrayState &state = hostArrays[h];
    const std::string &name = state.array.name, lengthsName = name + ".lengths";
    const std::string wanted =
        "'" + name + "' [sum of lengths] i32 with '" + lengthsName + "'";
    auto found = members.find(name);
    // An optional array is there only with its lengths: `labels` without
    // them is a per-utterance class, not a sequence to read.
    bool held = found != members.end() &&
                (!state.array.optional || members.count(lengthsName));
    using Presence = HostArrayState::Presence;
    if (!held && !state.array.optional)
      return fail("no array " + wanted);
    if (state.presence == Presence::present && !held)
      return fail("no array " + wanted + ", which '" + shards.front().path +
                  "' holds (an optional array is in every shard or in none)");
    if (state.presence == Presence::absent && held)
      return fail("holds '" + name + "', which '" + shards.front().path +
                  "' lacks (an optional array is in every shard or in none)");
    state.presence = held ? Presence::present : Presence::absent;
    if (!held)
      continue;
    const Tensor &data = found->second;
    if (data.rank() != 1 ||
        (data.dtype() != DType::i32 && data.dtype() != DType::i64))
      return fail("array '" + name + "' is " + toString(data.dtype()) + " " +
                  shapeText(data.shape()) + ", which is not " + wanted);
    auto lengthsFound = members.find(lengthsName);
    if (lengthsFound == members.end())
      return fail("no array '" + lengthsName +
                  "' giving the length of each utterance in '" + name + "'");
    std::vector<int64_t> lengths;
    int64_t rows = data.shape()[0];
    if (absl::Status status = readLengths(
            lengthsFound->second, shard.described + ": '" + lengthsName + "'",
            rows, lengths);
        !status.ok())
      return status;
    std::vector<int64_t> &offsets = shard.hostOffsets[h];
    offsets.assign(lengths.size() + 1, 0);
    for (size_t u = 0; u < lengths.size(); ++u)
      offsets[u + 1] = offsets[u] + lengths[u];
    if (offsets.back() != rows)
      return fail("the lengths in '" + lengthsName + "' add up to " +
                  std::to_string(offsets.back()) + " rows, but '" + name +
                  "' has " + std::to_string(rows));
    std::vector<int32_t> &values = shard.hostValues[h];
    values.resize(rows);
    for (size_t u = 0; u < lengths.size(); ++u)
      for (int64_t i = offsets[u]; i < offsets[u + 1]; ++i) {
        int64_t value = integerAt(data, i);
        if (value < INT32_MIN || value > INT32_MAX)
          return fail("utterance " + std::to_string(u) + ": '" + name +
                      "' holds " + std::to_string(value) + " at position " +
                      std::to_string(i - offsets[u]) + ", outside i32");
        values[i] = (int32_t)value;
      }
  }
  return absl::OkStatus();
}

std::string Dataset::utteranceId(int64_t u) const {
  const Utterance &utterance = utterances[u];
  const Shard &shard = shards[utterance.shard];
  if (!shard.ids.empty())
    return shard.ids[utterance.index];
  return shardStem(shard.path) + ":" + std::to_string(utterance.index);
}

bool Dataset::hasHostArray(const std::string &name) const {
  for (const HostArrayState &state : hostArrays)
    if (state.array.name == name)
      return state.presence == HostArrayState::Presence::present;
  return false;
}

absl::Span<const int32_t> Dataset::hostSequence(const std::string &name,
                                                int64_t u) const {
  const Utterance &utterance = utterances[u];
  const Shard &shard = shards[utterance.shard];
  for (size_t h = 0; h < hostArrays.size(); ++h) {
    if (hostArrays[h].array.name != name || shard.hostOffsets[h].empty())
      continue;
    const std::vector<int64_t> &offsets = shard.hostOffsets[h];
    int64_t first = offsets[utterance.index];
    return absl::Span<const int32_t>(shard.hostValues[h].data() + first,
                                     offsets[utterance.index + 1] - first);
  }
  return {};
}

RunInputs Dataset::batch(const std::vector<int64_t> &members) const {
  RunInputs inputs;
  auto batch = (int64_t)members.size();
  // The transducer rule's labels of each member's chunk.
  std::vector<std::vector<int64_t>> chunkLabelsOf;
  if (!chunking.labels.empty())
    for (int64_t member : members) {
      std::vector<int64_t> &labels = chunkLabelsOf.emplace_back();
      for (int64_t value : chunkAlignment(utterances[member]))
        if (value != chunking.blank)
          labels.push_back(value);
    }
  auto isChunkLabels = [&](const Array &array) {
    return !chunking.labels.empty() && array.name == chunking.labels;
  };
  // Member b's rows of array a: its first row in the shard's data and
  // their count (a chunk's frames along the batching dim).
  auto rowsOf = [&](size_t a, int64_t b) -> std::pair<int64_t, int64_t> {
    const Utterance &u = utterances[members[b]];
    const std::vector<int64_t> &offsets = shards[u.shard].offsets[a];
    int64_t first = offsets[u.index];
    if (!batchingDim.empty() && arrays[a].dim == batchingDim)
      return {first + u.start, u.length};
    if (!pathDim.empty() && arrays[a].dim == pathDim && u.pathLength >= 0)
      return {first + u.pathStart, u.pathLength};
    if (isChunkLabels(arrays[a]))
      return {0, (int64_t)chunkLabelsOf[b].size()};
    return {first, offsets[u.index + 1] - first};
  };
  std::map<std::string, int64_t> padded;
  for (size_t a = 0; a < arrays.size(); ++a) {
    const Array &array = arrays[a];
    if (array.dim.empty() || inputs.lengths.count(array.dim))
      continue;
    std::vector<int32_t> &lengths = inputs.lengths[array.dim];
    int64_t longest = 0;
    for (int64_t b = 0; b < batch; ++b) {
      int64_t length = rowsOf(a, b).second;
      lengths.push_back((int32_t)length);
      longest = std::max(longest, length);
    }
    // A batch of utterances without labels still has a padded position:
    // nothing reads it, and every tensor keeps an extent of at least 1.
    padded[array.dim] = std::max<int64_t>(longest, 1);
  }
  for (size_t a = 0; a < arrays.size(); ++a) {
    const Array &array = arrays[a];
    int64_t rowSize = 1;
    for (int64_t size : array.trailing)
      rowSize *= size;
    std::vector<int64_t> shape{batch};
    int64_t rows = 1;
    if (!array.dim.empty()) {
      rows = padded[array.dim];
      shape.push_back(rows);
    }
    shape.insert(shape.end(), array.trailing.begin(), array.trailing.end());
    Tensor tensor(array.dtype, shape);
    size_t element = byteSize(array.dtype);
    if (array.dtype == DType::i32)
      std::fill_n(tensor.data<int32_t>(), tensor.numElements(), -1);
    else if (array.dtype == DType::i64)
      std::fill_n(tensor.data<int64_t>(), tensor.numElements(), -1);
    for (int64_t b = 0; b < batch; ++b) {
      if (isChunkLabels(array)) {
        // chunked() checked: an integer sequence, one value per row.
        const std::vector<int64_t> &labels = chunkLabelsOf[b];
        for (size_t i = 0; i < labels.size(); ++i) {
          if (array.dtype == DType::i64)
            tensor.data<int64_t>()[b * rows + i] = labels[i];
          else
            tensor.data<int32_t>()[b * rows + i] = (int32_t)labels[i];
        }
        continue;
      }
      const Shard &shard = shards[utterances[members[b]].shard];
      auto [first, count] = rowsOf(a, b);
      std::memcpy((char *)tensor.raw() + b * rows * rowSize * element,
                  (const char *)shard.data[a].raw() + first * rowSize * element,
                  count * rowSize * element);
    }
    inputs.inputs[array.name] = std::move(tensor);
  }
  if (!chunkWeightsDim.empty()) {
    // 1 where the chunk counts the frame; along an RNN-T path, where it
    // counts the frame of the position (the blanks before it).
    int64_t rows = padded.at(chunkWeightsDim);
    Tensor weights(DType::f32, {batch, rows});
    std::fill_n(weights.data<float>(), weights.numElements(), 0.0f);
    const std::vector<int32_t> &lengths = inputs.lengths.at(chunkWeightsDim);
    for (int64_t b = 0; b < batch; ++b) {
      const Utterance &u = utterances[members[b]];
      std::vector<int64_t> path;
      if (!pathDim.empty() && chunkWeightsDim == pathDim)
        path = chunkAlignment(u);
      for (int64_t k = 0, t = 0; k < lengths[b]; ++k) {
        bool counted = t >= u.countBegin && t < u.countEnd;
        weights.data<float>()[b * rows + k] = counted ? 1.0f : 0.0f;
        // Frames advance by position, or by the path's blanks.
        t += path.empty() ? 1 : path[k] == chunking.blank;
      }
    }
    inputs.inputs[kChunkWeightsInput] = std::move(weights);
  }
  // Only root dims take lengths; the runtime derives the others.
  for (const Array &array : arrays)
    if (array.derived)
      inputs.lengths.erase(array.dim);
  return inputs;
}

//===----------------------------------------------------------------------===//
// Chunking
//===----------------------------------------------------------------------===//

std::string ChunkingOptions::str() const {
  if (!enabled())
    return "";
  std::string spec = std::to_string(size) + ":" + std::to_string(step);
  if (!labels.empty())
    spec += ",labels=" + labels + ",alignment=" + alignment +
            ",blank=" + std::to_string(blank);
  return spec;
}

absl::StatusOr<ChunkingOptions> nn::parseChunking(const std::string &spec) {
  ChunkingOptions options;
  if (spec.empty())
    return options;
  auto bad = [&](const std::string &why) {
    return absl::InvalidArgumentError(
        "chunking '" + spec + "': " + why +
        " (expected SIZE:STEP, 1 <= STEP <= "
        "SIZE, optionally followed by "
        ",labels=NAME,alignment=NAME[,blank=ID])");
  };
  auto number = [](const std::string &text, int64_t &value) {
    if (text.empty() || text.size() > 9 ||
        text.find_first_not_of("0123456789") != std::string::npos)
      return false;
    value = std::stoll(text);
    return true;
  };
  size_t comma = spec.find(',');
  std::string head = spec.substr(0, comma);
  size_t colon = head.find(':');
  if (colon == std::string::npos ||
      !number(head.substr(0, colon), options.size) ||
      !number(head.substr(colon + 1), options.step))
    return bad("no SIZE:STEP of whole numbers");
  if (options.size < 1 || options.step < 1 || options.step > options.size)
    return bad(options.step > options.size
                   ? "a step longer than the chunk skips frames"
                   : "sizes must be at least 1");
  bool blankGiven = false;
  while (comma != std::string::npos) {
    size_t next = spec.find(',', comma + 1);
    std::string item = spec.substr(comma + 1, next - comma - 1);
    comma = next;
    size_t equals = item.find('=');
    std::string key = item.substr(0, equals),
                value =
                    equals == std::string::npos ? "" : item.substr(equals + 1);
    if (equals == std::string::npos || value.empty())
      return bad("'" + item + "' is not KEY=VALUE");
    if (key == "labels")
      options.labels = value;
    else if (key == "alignment")
      options.alignment = value;
    else if (key == "blank" && number(value, options.blank))
      blankGiven = true;
    else
      return bad(key == "blank" ? "blank must be a class index"
                                : "unknown key '" + key + "'");
  }
  if (options.labels.empty() != options.alignment.empty() ||
      (blankGiven && options.labels.empty()))
    return bad("labels, alignment and blank go together");
  if (!options.labels.empty() && options.labels == options.alignment)
    return bad("labels and alignment are different inputs");
  return options;
}

std::vector<Dataset::Chunk> Dataset::chunksOf(int64_t length,
                                              const ChunkingOptions &options) {
  std::vector<Chunk> chunks;
  for (int64_t start = 0;; start += options.step) {
    Chunk chunk;
    chunk.start = start;
    chunk.length = std::min(start + options.size, length) - start;
    chunks.push_back(chunk);
    if (start + chunk.length >= length)
      break;
  }
  // Each frame counts in the chunk where it is farthest from a cut (a
  // chunk end inside the utterance); ties go to the earlier chunk. Owners
  // grow with the frame, so each chunk counts a range.
  constexpr int64_t kNoCut = INT64_MAX;
  std::vector<int64_t> first(chunks.size(), -1), last(chunks.size(), -1);
  for (int64_t t = 0; t < length; ++t) {
    int64_t owner = -1, best = -1;
    int64_t lowest = t < options.size ? 0 : (t - options.size) / options.step;
    for (auto k = (size_t)lowest; k < chunks.size(); ++k) {
      const Chunk &c = chunks[k];
      if (c.start > t)
        break;
      if (t >= c.start + c.length)
        continue;
      int64_t left = c.start > 0 ? t - c.start : kNoCut;
      int64_t right =
          c.start + c.length < length ? c.start + c.length - 1 - t : kNoCut;
      int64_t distance = std::min(left, right);
      if (distance > best) {
        best = distance;
        owner = (int64_t)k;
      }
    }
    if (first[owner] < 0)
      first[owner] = t;
    last[owner] = t;
  }
  // Every chunk owns at least one frame (ChunkingTest checks it for every
  // size and step up to 12 and length up to 40), so none is left empty.
  for (size_t k = 0; k < chunks.size() && length > 0; ++k) {
    chunks[k].countBegin = first[k] - chunks[k].start;
    chunks[k].countEnd = last[k] + 1 - chunks[k].start;
  }
  return chunks;
}

std::vector<int64_t> Dataset::integerRows(size_t a, const Utterance &u,
                                          int64_t begin, int64_t count) const {
  const Shard &shard = shards[u.shard];
  int64_t first = shard.offsets[a][u.index] + begin;
  std::vector<int64_t> values;
  for (int64_t i = 0; i < count; ++i)
    values.push_back(integerAt(shard.data[a], first + i));
  return values;
}

std::vector<int64_t> Dataset::chunkAlignment(const Utterance &u) const {
  for (size_t a = 0; a < arrays.size(); ++a) {
    if (arrays[a].name != chunking.alignment)
      continue;
    if (!pathDim.empty())
      return integerRows(a, u, u.pathStart, u.pathLength);
    return integerRows(a, u, u.start, u.length);
  }
  return {};
}

absl::StatusOr<Dataset>
Dataset::chunked(const ChunkingOptions &options) const & {
  return Dataset(*this).chunked(options);
}

absl::StatusOr<Dataset> Dataset::chunked(const ChunkingOptions &options) && {
  if (!options.enabled())
    return std::move(*this);
  std::string spec = "chunking " + options.str();
  if (chunking.enabled())
    return absl::InvalidArgumentError(spec +
                                      ": the dataset is chunked already");
  if (batchingDim.empty())
    return absl::InvalidArgumentError(
        spec + ": the graph's inputs have no sequence dim to cut");
  for (const HostArrayState &host : hostArrays)
    if (host.presence == HostArrayState::Presence::present)
      return absl::InvalidArgumentError(
          spec + ": host array '" + host.array.name +
          "' holds whole utterances, which chunks would cut");
  const Array *labels = nullptr, *alignment = nullptr;
  for (const Array &array : arrays) {
    if (array.name == options.labels)
      labels = &array;
    if (array.name == options.alignment)
      alignment = &array;
  }
  auto isIntegerSequence = [](const Array *array) {
    return array && array->trailing.empty() &&
           (array->dtype == DType::i32 || array->dtype == DType::i64);
  };
  std::string path;
  if (!options.labels.empty()) {
    if (!isIntegerSequence(labels) || labels->dim.empty() ||
        labels->dim == batchingDim || labels->derived)
      return absl::InvalidArgumentError(
          spec + ": labels '" + options.labels +
          "' must be a graph input of integers [batch, U] along a sequence "
          "dim of their own");
    // Along the frames: an RNA alignment; along a dim of its own: an
    // RNN-T path.
    if (!isIntegerSequence(alignment) || alignment->dim.empty() ||
        alignment->derived || alignment->dim == labels->dim)
      return absl::InvalidArgumentError(
          spec + ": alignment '" + options.alignment +
          "' must be a graph input of integers [batch, " + batchingDim +
          "] (an RNA alignment) or [batch, A] along a dim of its own (an "
          "RNN-T path)");
    if (alignment->dim != batchingDim)
      path = alignment->dim;
  }
  for (const Array &array : arrays) {
    if (array.dim.empty() || array.dim == batchingDim || &array == labels ||
        (!path.empty() && array.dim == path))
      continue;
    return absl::InvalidArgumentError(
        spec + " cuts the inputs along '" + batchingDim + "', but input '" +
        array.name + "' runs along '" + array.dim + "'" +
        (array.derived ? ", a dim derived from the frames, which chunks do "
                         "not cut"
                       : ", which chunks cannot cut alone: for a "
                         "transducer's labels and alignment (RNA, or an "
                         "RNN-T path) add ,labels=L,alignment=A,blank=ID"));
  }
  // The losses run along the frames, or along the path.
  const std::string &lossDim = path.empty() ? batchingDim : path;
  if (!chunkWeightsDim.empty() && chunkWeightsDim != batchingDim &&
      chunkWeightsDim != path)
    return absl::InvalidArgumentError(
        spec + ": '" + std::string(kChunkWeightsInput) + "' runs along '" +
        chunkWeightsDim + "', neither the frames '" + batchingDim +
        "' nor the positions of an RNN-T path that chunks cut");
  if (options.overlaps() && chunkWeightsDim != lossDim)
    return absl::InvalidArgumentError(
        spec +
        ": overlapping chunks share frames, which must count once: "
        "the graph needs an input '" +
        std::string(kChunkWeightsInput) + "' [batch, " + lossDim +
        "] f32 that weights its per-frame losses (nn.mark_loss ... weights "
        "%" +
        std::string(kChunkWeightsInput) + ")" +
        (chunkWeightsDim.empty() ? ""
                                 : ", not along '" + chunkWeightsDim + "'"));
  // An RNN-T path: where each frame's positions begin (the blanks end
  // them), so that a chunk of frames [s, e) takes positions
  // [begins[s], begins[e]).
  std::vector<std::vector<int64_t>> beginsOf(utterances.size());
  for (size_t w = 0; w < utterances.size() && !path.empty(); ++w) {
    const Utterance &u = utterances[w];
    size_t a = alignment - arrays.data();
    const std::vector<int64_t> &offsets = shards[u.shard].offsets[a];
    int64_t positions = offsets[u.index + 1] - offsets[u.index];
    std::vector<int64_t> values = integerRows(a, u, 0, positions);
    std::vector<int64_t> &begins = beginsOf[w];
    begins.push_back(0);
    for (int64_t k = 0; k < positions; ++k)
      if (values[k] == options.blank)
        begins.push_back(k + 1);
    if ((int64_t)begins.size() != u.length + 1 || begins.back() != positions)
      return absl::InvalidArgumentError(
          spec + ": utterance '" + utteranceId((int64_t)w) + "' of shard '" +
          shards[u.shard].path + "': '" + options.alignment + "' holds " +
          std::to_string(begins.size() - 1) + " blanks (class " +
          std::to_string(options.blank) + ") for " + std::to_string(u.length) +
          " frames, or labels after the last: not an RNN-T path of them");
  }
  std::vector<Utterance> whole = std::move(utterances);
  utterances.clear();
  for (size_t w = 0; w < whole.size(); ++w) {
    const Utterance &u = whole[w];
    const std::vector<int64_t> &begins = beginsOf[w];
    for (const Chunk &chunk : chunksOf(u.length, options)) {
      Utterance piece = u;
      piece.start = chunk.start;
      piece.length = chunk.length;
      piece.countBegin = chunk.countBegin;
      piece.countEnd = chunk.countEnd;
      if (!path.empty()) {
        piece.pathStart = begins[chunk.start];
        piece.pathLength =
            begins[chunk.start + chunk.length] - begins[chunk.start];
      }
      utterances.push_back(piece);
    }
  }
  chunking = options;
  pathDim = path;
  return std::move(*this);
}

std::map<std::string, Tensor>
nn::concatenateUtterances(const std::vector<UtteranceArrays> &utterances,
                          size_t begin, size_t end) {
  std::map<std::string, Tensor> arrays;
  if (begin >= end)
    return arrays;
  for (const auto &[name, first] : utterances[begin]) {
    int64_t rows = 0;
    for (size_t u = begin; u < end; ++u)
      rows += first.rank() ? utterances[u].at(name).shape()[0] : 1;
    std::vector<int64_t> shape{rows};
    if (first.rank())
      shape.insert(shape.end(), first.shape().begin() + 1, first.shape().end());
    Tensor data(first.dtype(), shape);
    Tensor lengths(DType::i32, {(int64_t)(end - begin)});
    size_t at = 0;
    for (size_t u = begin; u < end; ++u) {
      const Tensor &part = utterances[u].at(name);
      std::memcpy((char *)data.raw() + at, part.raw(), part.sizeInBytes());
      at += part.sizeInBytes();
      lengths.data<int32_t>()[u - begin] =
          (int32_t)(part.rank() ? part.shape()[0] : 1);
    }
    arrays[name] = std::move(data);
    if (first.rank())
      arrays[name + ".lengths"] = std::move(lengths);
  }
  return arrays;
}

absl::StatusOr<std::vector<UtteranceArrays>>
nn::splitUtterances(const std::map<std::string, Tensor> &arrays,
                    const std::string &what) {
  auto fail = [&](const std::string &name, const std::string &why) {
    return absl::InvalidArgumentError(what + ": array '" + name + "' " + why);
  };
  auto isLengths = [](const std::string &name) {
    const std::string suffix = ".lengths";
    return name.size() > suffix.size() &&
           name.compare(name.size() - suffix.size(), suffix.size(), suffix) ==
               0;
  };
  // The utterance count: any lengths array's size, else a stacked array's.
  // -1 until known; a shard without rows of either kind holds none.
  int64_t count = -1;
  for (const auto &[name, tensor] : arrays)
    if (count < 0 && isLengths(name) && tensor.rank() == 1)
      count = tensor.shape()[0];
  for (const auto &[name, tensor] : arrays)
    if (count < 0 && tensor.rank() == 1 && !arrays.count(name + ".lengths"))
      count = tensor.shape()[0];
  std::vector<UtteranceArrays> utterances(std::max<int64_t>(count, 0));
  for (const auto &[name, tensor] : arrays) {
    if (isLengths(name))
      continue;
    if (tensor.rank() == 0)
      return fail(name, "is a scalar, not one row per utterance");
    int64_t rowBytes =
        tensor.sizeInBytes() / std::max<int64_t>(tensor.shape()[0], 1);
    auto lengthsIt = arrays.find(name + ".lengths");
    if (lengthsIt == arrays.end()) {
      // Stacked rank-0 values.
      if (tensor.rank() != 1 || tensor.shape()[0] != count)
        return fail(name, "has no lengths and is not one value per "
                          "utterance");
      for (int64_t u = 0; u < count; ++u) {
        Tensor value(tensor.dtype(), {});
        std::memcpy(value.raw(), (const char *)tensor.raw() + u * rowBytes,
                    rowBytes);
        utterances[u][name] = std::move(value);
      }
      continue;
    }
    const Tensor &lengths = lengthsIt->second;
    if (lengths.dtype() != DType::i32 || lengths.rank() != 1 ||
        lengths.shape()[0] != count)
      return fail(name + ".lengths", "is not one i32 length per utterance");
    int64_t row = 0;
    for (int64_t u = 0; u < count; ++u) {
      int32_t length = lengths.data<int32_t>()[u];
      if (length < 0 || row + length > tensor.shape()[0])
        return fail(name, "has fewer rows than its lengths add up to");
      std::vector<int64_t> shape = tensor.shape();
      shape[0] = length;
      Tensor part(tensor.dtype(), shape);
      std::memcpy(part.raw(), (const char *)tensor.raw() + row * rowBytes,
                  length * rowBytes);
      utterances[u][name] = std::move(part);
      row += length;
    }
    if (row != tensor.shape()[0])
      return fail(name, "has more rows than its lengths add up to");
  }
  return utterances;
}

std::vector<std::vector<int64_t>>
nn::epochBatches(const Dataset &dataset, const BatchingOptions &options,
                 int64_t epoch) {
  std::vector<int64_t> order;
  for (int64_t i = 0; i < dataset.size(); ++i)
    if (dataset.length(i) > 0)
      order.push_back(i);
  runtime::SplitMix64 rng{options.seed * 0x9e3779b97f4a7c15ull +
                          (uint64_t)epoch};
  if (options.shuffle)
    rng.shuffle(order);
  int64_t maxSequences = std::max<int64_t>(options.maxSequences, 1);
  if (options.bucket) {
    int64_t chunk = std::max<int64_t>(options.bucketBatches, 1) * maxSequences;
    for (int64_t begin = 0; begin < (int64_t)order.size(); begin += chunk) {
      auto end = order.begin() + std::min<int64_t>(begin + chunk, order.size());
      std::stable_sort(order.begin() + begin, end, [&](int64_t a, int64_t b) {
        return dataset.length(a) < dataset.length(b);
      });
    }
  }
  std::vector<std::vector<int64_t>> batches;
  std::vector<int64_t> current;
  int64_t longest = 0;
  for (int64_t u : order) {
    int64_t length = dataset.length(u);
    int64_t grown = std::max(longest, length);
    bool fits = (int64_t)current.size() < maxSequences &&
                (options.maxFrames <= 0 ||
                 grown * (int64_t)(current.size() + 1) <= options.maxFrames);
    if (!fits && !current.empty()) {
      batches.push_back(std::move(current));
      current.clear();
      grown = length;
    }
    current.push_back(u);
    longest = grown;
  }
  if (!current.empty())
    batches.push_back(std::move(current));
  // Too small a batch joins the one before it (the first, the one after);
  // the merged batch is looked at next.
  for (size_t b = batches.size(); b-- > 0;) {
    if ((int64_t)batches[b].size() >= options.minSequences ||
        batches.size() < 2)
      continue;
    if (b > 0) {
      batches[b - 1].insert(batches[b - 1].end(), batches[b].begin(),
                            batches[b].end());
      batches.erase(batches.begin() + (ptrdiff_t)b);
    } else {
      batches[1].insert(batches[1].begin(), batches[0].begin(),
                        batches[0].end());
      batches.erase(batches.begin());
      b = 1;
    }
  }
  if (options.bucket && options.shuffle)
    rng.shuffle(batches);
  return batches;
}
