//===- nn/File.h - reading and writing files safely -------------*- C++ -*-===//
//
// Every path a user names is untrusted: it may be a FIFO (opening it for
// reading would block until a writer comes), a device that never ends
// (/dev/zero), a directory, or a regular file far larger than its format
// needs. Readers open paths through openRegularFile, which refuses all but
// regular files without blocking, and read whole files through
// readRegularFile, which bounds what it reads. Writers go through
// OutputFile: the bytes land in PATH.partial, which is fsync'd and renamed
// over PATH only when complete, so a reader never sees half a file and a
// failed write leaves nothing behind. Every error names the path and, for
// system calls, the system's reason ("No space left on device").
//
//===----------------------------------------------------------------------===//

#ifndef NN_FILE_H
#define NN_FILE_H

#include "absl/status/status.h"
#include "absl/status/statusor.h"

#include <cstdint>
#include <string>
#include <utility>

namespace nn {

/// An open file descriptor, closed when this goes away.
class FileHandle {
public:
  FileHandle() = default;
  explicit FileHandle(int fd, uint64_t size) : fd_(fd), size_(size) {}
  FileHandle(FileHandle &&other) noexcept;
  FileHandle &operator=(FileHandle &&other) noexcept;
  FileHandle(const FileHandle &) = delete;
  FileHandle &operator=(const FileHandle &) = delete;
  ~FileHandle();

  int fd() const { return fd_; }
  /// The size fstat gave when the file was opened.
  uint64_t size() const { return size_; }
  /// Gives up ownership: the caller closes the descriptor.
  int release() {
    int fd = fd_;
    fd_ = -1;
    return fd;
  }

private:
  int fd_ = -1;
  uint64_t size_ = 0;
};

/// Opens `path` for reading if it is a regular file. It is opened
/// non-blocking (a FIFO then opens at once instead of waiting for a
/// writer), checked with fstat, and set blocking again. Errors: NotFound
/// when it does not exist ("cannot open 'PATH': No such file or
/// directory"), InvalidArgument when it is something else ("'PATH' is a
/// FIFO, not a regular file"; "a character device", "a directory", ...).
absl::StatusOr<FileHandle> openRegularFile(const std::string &path);

/// The bytes of the regular file `path`, at most `maxBytes` of them: a
/// larger file is an error (OutOfRange) naming the path, the size and the
/// bound, found from its size before reading and again while reading (a
/// file may grow after it was opened).
absl::StatusOr<std::string> readRegularFile(const std::string &path,
                                            uint64_t maxBytes);

/// A file written whole or not at all. The bytes go to `path`.partial;
/// commit() fsyncs them (a full disk may surface only then), closes the
/// file and renames it over `path`. A failed write, or an OutputFile
/// destroyed before commit(), removes the partial file.
class OutputFile {
public:
  /// Creates (or truncates) `path`.partial.
  static absl::StatusOr<OutputFile> create(const std::string &path);
  OutputFile(OutputFile &&other) noexcept;
  OutputFile &operator=(OutputFile &&other) noexcept;
  OutputFile(const OutputFile &) = delete;
  OutputFile &operator=(const OutputFile &) = delete;
  ~OutputFile();

  /// Appends `size` bytes; an error carries the system's reason and has
  /// removed the partial file (later writes and commit() fail too).
  absl::Status write(const void *data, size_t size);
  absl::Status write(const std::string &bytes) {
    return write(bytes.data(), bytes.size());
  }
  /// Makes the file `path`: fsync, close, rename.
  absl::Status commit();

  const std::string &path() const { return path_; }
  const std::string &partialPath() const { return partial_; }

private:
  OutputFile(std::string path, std::string partial, int fd)
      : path_(std::move(path)), partial_(std::move(partial)), fd_(fd) {}
  /// Closes and removes the partial file; returns `reason` as an error.
  absl::Status abandon(const std::string &reason);

  std::string path_, partial_;
  int fd_ = -1;
  bool failed_ = false;
};

/// Writes `contents` to `path` through an OutputFile.
absl::Status writeFileAtomically(const std::string &path,
                                 const std::string &contents);

} // namespace nn

#endif // NN_FILE_H
