//===- File.cpp - reading and writing files safely ------------------------===//

#include "nn/File.h"

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

using namespace nn;

namespace {

std::string quoted(const std::string &path) { return "'" + path + "'"; }

std::string reasonOf(int error) { return std::strerror(error); }

/// What a file that is not regular is, for messages.
const char *kindOf(mode_t mode) {
  if (S_ISDIR(mode))
    return "a directory";
  if (S_ISFIFO(mode))
    return "a FIFO";
  if (S_ISCHR(mode))
    return "a character device";
  if (S_ISBLK(mode))
    return "a block device";
  if (S_ISSOCK(mode))
    return "a socket";
  return "not a regular file";
}

} // namespace

FileHandle::FileHandle(FileHandle &&other) noexcept
    : fd_(other.fd_), size_(other.size_) {
  other.fd_ = -1;
}

FileHandle &FileHandle::operator=(FileHandle &&other) noexcept {
  if (this != &other) {
    if (fd_ >= 0)
      ::close(fd_);
    fd_ = other.fd_;
    size_ = other.size_;
    other.fd_ = -1;
  }
  return *this;
}

FileHandle::~FileHandle() {
  if (fd_ >= 0)
    ::close(fd_);
}

absl::StatusOr<FileHandle> nn::openRegularFile(const std::string &path) {
  // O_NONBLOCK: opening a FIFO for reading would otherwise wait for a
  // writer, forever if none comes.
  int fd = ::open(path.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC);
  if (fd < 0) {
    int error = errno;
    std::string message =
        "cannot open " + quoted(path) + ": " + reasonOf(error);
    if (error == ENOENT || error == ENOTDIR)
      return absl::NotFoundError(message);
    return absl::InvalidArgumentError(message);
  }
  FileHandle handle(fd, 0);
  struct stat info;
  if (::fstat(fd, &info) != 0)
    return absl::InvalidArgumentError("cannot read " + quoted(path) + ": " +
                                      reasonOf(errno));
  if (!S_ISREG(info.st_mode))
    return absl::InvalidArgumentError(
        quoted(path) + " is " + kindOf(info.st_mode) + ", not a regular file");
  // Reads of a regular file never block anyway; later readers (and
  // dlopen's own open) expect an ordinary descriptor.
  int flags = ::fcntl(fd, F_GETFL);
  if (flags < 0 || ::fcntl(fd, F_SETFL, flags & ~O_NONBLOCK) != 0)
    return absl::InvalidArgumentError("cannot read " + quoted(path) + ": " +
                                      reasonOf(errno));
  return FileHandle(handle.release(), (uint64_t)info.st_size);
}

absl::StatusOr<std::string> nn::readRegularFile(const std::string &path,
                                                uint64_t maxBytes) {
  absl::StatusOr<FileHandle> file = openRegularFile(path);
  if (!file.ok())
    return file.status();
  auto tooLarge = [&](const std::string &size) {
    return absl::OutOfRangeError(quoted(path) + " is too large: " + size +
                                 ", more than the " + std::to_string(maxBytes) +
                                 "-byte limit for this file");
  };
  if (file->size() > maxBytes)
    return tooLarge(std::to_string(file->size()) + " bytes");
  auto readSome = [&](char *into, size_t size) -> ssize_t {
    while (true) {
      ssize_t got = ::read(file->fd(), into, size);
      if (got >= 0 || errno != EINTR)
        return got;
    }
  };
  auto readError = [&] {
    return absl::InvalidArgumentError("cannot read " + quoted(path) + ": " +
                                      reasonOf(errno));
  };
  std::string bytes((size_t)file->size(), '\0');
  for (size_t done = 0; done < bytes.size();) {
    ssize_t got = readSome(bytes.data() + done, bytes.size() - done);
    if (got < 0)
      return readError();
    if (got == 0) {
      // It shrank since fstat: what is there is the file.
      bytes.resize(done);
      return bytes;
    }
    done += (size_t)got;
  }
  // It may have grown since fstat: what follows counts against the limit
  // too, so an endlessly growing file still ends the read.
  char more[1 << 16];
  while (true) {
    ssize_t got = readSome(more, sizeof(more));
    if (got < 0)
      return readError();
    if (got == 0)
      return bytes;
    if (bytes.size() + (uint64_t)got > maxBytes)
      return tooLarge("it grew past the limit while being read");
    bytes.append(more, (size_t)got);
  }
}

absl::StatusOr<OutputFile> OutputFile::create(const std::string &path) {
  std::string partial = path + ".partial";
  int fd =
      ::open(partial.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0)
    return absl::InternalError("cannot write " + quoted(partial) + ": " +
                               reasonOf(errno));
  return OutputFile(path, std::move(partial), fd);
}

OutputFile::OutputFile(OutputFile &&other) noexcept
    : path_(std::move(other.path_)), partial_(std::move(other.partial_)),
      fd_(other.fd_), failed_(other.failed_) {
  other.fd_ = -1;
  other.failed_ = true;
}

OutputFile &OutputFile::operator=(OutputFile &&other) noexcept {
  if (this != &other) {
    if (fd_ >= 0)
      (void)abandon("");
    path_ = std::move(other.path_);
    partial_ = std::move(other.partial_);
    fd_ = other.fd_;
    failed_ = other.failed_;
    other.fd_ = -1;
    other.failed_ = true;
  }
  return *this;
}

OutputFile::~OutputFile() {
  if (fd_ >= 0)
    (void)abandon("");
}

absl::Status OutputFile::abandon(const std::string &reason) {
  if (fd_ >= 0)
    ::close(fd_);
  fd_ = -1;
  failed_ = true;
  ::unlink(partial_.c_str());
  return absl::InternalError(reason);
}

absl::Status OutputFile::write(const void *data, size_t size) {
  if (failed_ || fd_ < 0)
    return absl::FailedPreconditionError(
        "cannot write " + quoted(partial_) +
        ": it was already committed or abandoned");
  const char *bytes = static_cast<const char *>(data);
  for (size_t done = 0; done < size;) {
    ssize_t wrote = ::write(fd_, bytes + done, size - done);
    if (wrote < 0 && errno == EINTR)
      continue;
    if (wrote < 0)
      return abandon("cannot write " + quoted(partial_) + ": " +
                     reasonOf(errno));
    // write(2) returns 0 only for a 0-byte request; treat it as no space
    // rather than loop forever.
    if (wrote == 0)
      return abandon("cannot write " + quoted(partial_) + ": " +
                     reasonOf(ENOSPC));
    done += (size_t)wrote;
  }
  return absl::OkStatus();
}

absl::Status OutputFile::commit() {
  if (failed_ || fd_ < 0)
    return absl::FailedPreconditionError(
        "cannot write " + quoted(partial_) +
        ": it was already committed or abandoned");
  // Before the rename: a crash after it must find the data, not a renamed
  // empty file, and a full disk may surface only here.
  if (::fsync(fd_) != 0)
    return abandon("cannot write " + quoted(partial_) + ": " + reasonOf(errno));
  int closed = ::close(fd_);
  fd_ = -1;
  if (closed != 0)
    return abandon("cannot write " + quoted(partial_) + ": " + reasonOf(errno));
  if (::rename(partial_.c_str(), path_.c_str()) != 0)
    return abandon("cannot rename " + quoted(partial_) + " to " +
                   quoted(path_) + ": " + reasonOf(errno));
  failed_ = true; // Done: nothing more may be written.
  return absl::OkStatus();
}

absl::Status nn::writeFileAtomically(const std::string &path,
                                     const std::string &contents) {
  absl::StatusOr<OutputFile> file = OutputFile::create(path);
  if (!file.ok())
    return file.status();
  if (absl::Status status = file->write(contents); !status.ok())
    return status;
  return file->commit();
}
