//===- TensorBoard.cpp - scalar summaries for TensorBoard -----------------===//
//
// The protocol buffer encoding needed here is small: varints, 64-bit and
// 32-bit little-endian fields, and length-delimited fields (strings and
// nested messages). Field numbers, from TensorFlow's protos:
//   Event: wall_time = 1 (double), step = 2 (int64), file_version = 3
//          (string), summary = 5 (Summary)
//   Summary: value = 1 (repeated Summary.Value)
//   Summary.Value: tag = 1 (string), simple_value = 2 (float)
//
//===----------------------------------------------------------------------===//

#include "training/TensorBoard.h"

#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Path.h"

#include <array>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <unistd.h>

using namespace nn::training;

namespace {

/// A protocol buffer message being encoded.
class Message {
public:
  /// Wire types: 0 varint, 1 64-bit, 2 length-delimited, 5 32-bit.
  void tag(uint32_t field, uint32_t wireType) {
    varint((uint64_t(field) << 3) | wireType);
  }
  void varint(uint64_t v) {
    while (v >= 0x80) {
      bytes.push_back(char((v & 0x7f) | 0x80));
      v >>= 7;
    }
    bytes.push_back(char(v));
  }
  void fixed(uint64_t v, int size) {
    for (int i = 0; i < size; ++i)
      bytes.push_back(char((v >> (8 * i)) & 0xff));
  }
  void doubleField(uint32_t field, double v) {
    uint64_t bits;
    std::memcpy(&bits, &v, sizeof(bits));
    tag(field, 1);
    fixed(bits, 8);
  }
  void floatField(uint32_t field, float v) {
    uint32_t bits;
    std::memcpy(&bits, &v, sizeof(bits));
    tag(field, 5);
    fixed(bits, 4);
  }
  void int64Field(uint32_t field, int64_t v) {
    tag(field, 0);
    varint(uint64_t(v)); // negative int64 takes ten bytes, as protobuf does
  }
  void bytesField(uint32_t field, const std::string &v) {
    tag(field, 2);
    varint(v.size());
    bytes += v;
  }

  std::string bytes;
};

double wallTime() {
  return std::chrono::duration<double>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

uint32_t masked(uint32_t crc) {
  return ((crc >> 15) | (crc << 17)) + 0xa282ead8u;
}

} // namespace

uint32_t nn::training::crc32c(llvm::ArrayRef<uint8_t> bytes) {
  static const std::array<uint32_t, 256> table = [] {
    std::array<uint32_t, 256> t{};
    for (uint32_t i = 0; i < 256; ++i) {
      uint32_t c = i;
      for (int k = 0; k < 8; ++k)
        c = (c & 1) ? (c >> 1) ^ 0x82f63b78u : c >> 1;
      t[i] = c;
    }
    return t;
  }();
  uint32_t crc = 0xffffffffu;
  for (uint8_t byte : bytes)
    crc = table[(crc ^ byte) & 0xff] ^ (crc >> 8);
  return crc ^ 0xffffffffu;
}

absl::StatusOr<std::unique_ptr<EventFileWriter>>
EventFileWriter::create(const std::string &dir) {
  if (std::error_code ec = llvm::sys::fs::create_directories(dir))
    return absl::InvalidArgumentError("--tensorboard: cannot create '" + dir +
                                      "': " + ec.message());
  char host[256] = "localhost";
  gethostname(host, sizeof(host) - 1);
  llvm::SmallString<256> path(dir);
  llvm::sys::path::append(
      path, "events.out.tfevents." + std::to_string((long long)wallTime()) +
                "." + host + "." + std::to_string((long long)getpid()));
  std::FILE *file = std::fopen(path.c_str(), "wb");
  if (!file)
    return absl::InvalidArgumentError("--tensorboard: cannot write '" +
                                      path.str().str() +
                                      "': " + std::strerror(errno));
  std::unique_ptr<EventFileWriter> writer(
      new EventFileWriter(file, path.str().str()));
  Message event;
  event.doubleField(1, wallTime());
  event.bytesField(3, "brain.Event:2");
  if (absl::Status status = writer->writeRecord(event.bytes); !status.ok())
    return status;
  return writer;
}

EventFileWriter::~EventFileWriter() { std::fclose(file_); }

absl::Status EventFileWriter::scalars(
    int64_t step, llvm::ArrayRef<std::pair<std::string, double>> values) {
  Message summary;
  for (const auto &[tag, value] : values) {
    Message entry;
    entry.bytesField(1, tag);
    entry.floatField(2, static_cast<float>(value));
    summary.bytesField(1, entry.bytes);
  }
  Message event;
  event.doubleField(1, wallTime());
  event.int64Field(2, step);
  event.bytesField(5, summary.bytes);
  return writeRecord(event.bytes);
}

absl::Status EventFileWriter::writeRecord(const std::string &data) {
  Message header;
  header.fixed(data.size(), 8);
  auto bytesOf = [](const std::string &s) {
    return llvm::ArrayRef<uint8_t>(reinterpret_cast<const uint8_t *>(s.data()),
                                   s.size());
  };
  Message lengthCrc, dataCrc;
  lengthCrc.fixed(masked(crc32c(bytesOf(header.bytes))), 4);
  dataCrc.fixed(masked(crc32c(bytesOf(data))), 4);
  std::string record = header.bytes + lengthCrc.bytes + data + dataCrc.bytes;
  if (std::fwrite(record.data(), 1, record.size(), file_) != record.size() ||
      std::fflush(file_) != 0)
    return absl::InternalError("cannot write '" + path_ +
                               "': " + std::strerror(errno));
  return absl::OkStatus();
}
