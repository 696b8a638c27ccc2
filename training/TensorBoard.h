//===- training/TensorBoard.h - TensorBoard event files ---------*- C++ -*-===//
//
// An event file TensorBoard reads, written without TensorFlow: a sequence
// of TFRecord records (length, masked CRC-32C of the length, data, masked
// CRC-32C of the data), each an `Event` protocol buffer encoded by hand:
// the first holds the file version, each later one a step's scalar
// summaries (`Summary.Value` with a tag and a `simple_value`). The formats
// are TensorFlow's (tensorflow/core/util/event.proto, summary.proto and
// the TFRecord writer); the test reads the files with the `tensorboard`
// package (test/Tools/nn-train-tensorboard.py).
//
//===----------------------------------------------------------------------===//

#ifndef NN_TRAINING_TENSORBOARD_H
#define NN_TRAINING_TENSORBOARD_H

#include "absl/status/statusor.h"
#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/StringRef.h"

#include <cstdint>
#include <cstdio>
#include <memory>
#include <string>
#include <utility>
#include <vector>

namespace nn::training {

class EventFileWriter {
public:
  /// Creates `dir` if needed and a new event file in it,
  /// `events.out.tfevents.<seconds>.<host>.<pid>` (TensorBoard reads every
  /// file with "tfevents" in its name; a resumed run adds a file, and
  /// TensorBoard merges them by step).
  static absl::StatusOr<std::unique_ptr<EventFileWriter>>
  create(const std::string &dir);
  ~EventFileWriter();

  /// One event at `step` holding the scalars (tag, value), e.g.
  /// ("train/ctc", 2.5). Written at once and flushed, so that a running
  /// TensorBoard sees it and a crash loses nothing written before.
  absl::Status scalars(int64_t step,
                       llvm::ArrayRef<std::pair<std::string, double>> values);

  const std::string &path() const { return path_; }

private:
  EventFileWriter(std::FILE *file, std::string path)
      : file_(file), path_(std::move(path)) {}
  absl::Status writeRecord(const std::string &data);

  std::FILE *file_;
  std::string path_;
};

/// CRC-32C (Castagnoli, reflected polynomial 0x82f63b78) of `bytes`: the
/// checksum of TFRecord framing. crc32c("123456789") is 0xe3069283.
uint32_t crc32c(llvm::ArrayRef<uint8_t> bytes);

} // namespace nn::training

#endif // NN_TRAINING_TENSORBOARD_H
