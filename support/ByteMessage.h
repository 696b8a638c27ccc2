//===- support/ByteMessage.h - plain values as bytes ------------*- C++ -*-===//
//
// What the ranks of one data-parallel run hand each other beyond tensors
// (a stage's alignments and hypotheses, gathered by nn::allGather): plain
// values, vectors of them and strings, packed in order into bytes and
// read back in the same order. Every rank runs the same build of nn, so
// the layout is the machine's own; a reader that would run past the end
// says so instead of reading out of bounds. Header-only.
//
//   Packer packer;
//   packer.put(utterance).putAll(path).putText(line);
//   Unpacker unpacker(bytes);
//   absl::Status status = unpacker.get(utterance);
//
//===----------------------------------------------------------------------===//

#ifndef NN_SUPPORT_BYTEMESSAGE_H
#define NN_SUPPORT_BYTEMESSAGE_H

#include "absl/status/status.h"

#include <cstdint>
#include <cstring>
#include <string>
#include <type_traits>
#include <vector>

namespace nn::support {

/// Writes values in order.
class Packer {
public:
  template <typename T> Packer &put(const T &value) {
    static_assert(std::is_trivially_copyable_v<T>);
    bytes.append(reinterpret_cast<const char *>(&value), sizeof(T));
    return *this;
  }
  template <typename T> Packer &putAll(const std::vector<T> &values) {
    put((int64_t)values.size());
    for (const T &value : values)
      put(value);
    return *this;
  }
  Packer &putText(const std::string &text) {
    put((int64_t)text.size());
    bytes += text;
    return *this;
  }
  const std::string &str() const { return bytes; }

private:
  std::string bytes;
};

/// Reads what a Packer wrote, in its order; an error where a value would
/// run past the end (a message of another layout, or cut short).
class Unpacker {
public:
  /// Reads `bytes`, which must outlive it.
  explicit Unpacker(const std::string &bytes) : bytes(bytes) {}
  Unpacker(std::string &&) = delete;
  bool done() const { return at == bytes.size(); }
  template <typename T> absl::Status get(T &value) {
    static_assert(std::is_trivially_copyable_v<T>);
    if (bytes.size() - at < sizeof(T))
      return absl::InternalError("a packed message ends early");
    std::memcpy(&value, bytes.data() + at, sizeof(T));
    at += sizeof(T);
    return absl::OkStatus();
  }
  template <typename T> absl::Status getAll(std::vector<T> &values) {
    int64_t count = 0;
    if (absl::Status status = get(count); !status.ok())
      return status;
    if (count < 0 || (uint64_t)count > (bytes.size() - at) / sizeof(T))
      return absl::InternalError("a packed message ends early");
    values.resize((size_t)count);
    for (T &value : values)
      if (absl::Status status = get(value); !status.ok())
        return status;
    return absl::OkStatus();
  }
  absl::Status getText(std::string &text) {
    int64_t size = 0;
    if (absl::Status status = get(size); !status.ok())
      return status;
    if (size < 0 || (uint64_t)size > bytes.size() - at)
      return absl::InternalError("a packed message ends early");
    text.assign(bytes, at, (size_t)size);
    at += (size_t)size;
    return absl::OkStatus();
  }

private:
  const std::string &bytes;
  size_t at = 0;
};

} // namespace nn::support

#endif // NN_SUPPORT_BYTEMESSAGE_H
