//===- ScratchDir.cpp - Per-process directory for temporary builds --------===//

#include "ScratchDir.h"

#include "llvm/ADT/SmallString.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Path.h"

#include <cerrno>
#include <cstring>
#include <ctime>
#include <dirent.h>
#include <fcntl.h>
#include <memory>
#include <mutex>
#include <optional>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

namespace nn::compiler {
namespace {

constexpr const char *kLivePrefix = "nn-artifacts-";
constexpr const char *kInitPrefix = "nn-init-";
constexpr const char *kLockName = "lock";
// A set-up directory older than this lost its owner between mkdtemp and
// the rename (setting up takes microseconds).
constexpr time_t kStaleInitSeconds = 3600;

std::string errnoText() { return std::strerror(errno); }

/// Unlinks the entries of `dir` (never recursing: unlinking a link removes
/// the link) and then `dir` itself. What cannot go stays.
void removeFlat(const std::string &dir) {
  if (DIR *stream = opendir(dir.c_str())) {
    int fd = dirfd(stream);
    while (struct dirent *entry = readdir(stream)) {
      if (std::strcmp(entry->d_name, ".") == 0 ||
          std::strcmp(entry->d_name, "..") == 0)
        continue;
      unlinkat(fd, entry->d_name, 0);
    }
    closedir(stream);
  }
  rmdir(dir.c_str());
}

bool startsWith(const char *name, const char *prefix) {
  return std::strncmp(name, prefix, std::strlen(prefix)) == 0;
}

} // namespace

absl::StatusOr<ScratchDir> ScratchDir::create(const std::string &parent) {
  for (int attempt = 0; attempt < 16; ++attempt) {
    std::string initTemplate = parent + "/" + kInitPrefix + "XXXXXX";
    if (!mkdtemp(initTemplate.data()))
      return absl::FailedPreconditionError(
          "cannot create a scratch directory in " + parent + ": " +
          errnoText());
    std::string lockPath = initTemplate + "/" + kLockName;
    int lockFd = open(lockPath.c_str(),
                      O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, 0600);
    if (lockFd < 0 || flock(lockFd, LOCK_EX | LOCK_NB) != 0) {
      std::string reason = errnoText();
      if (lockFd >= 0)
        close(lockFd);
      removeFlat(initTemplate);
      return absl::FailedPreconditionError("cannot lock " + lockPath + ": " +
                                           reason);
    }
    std::string livePath =
        parent + "/" + kLivePrefix +
        initTemplate.substr(initTemplate.size() - std::strlen("XXXXXX"));
    // rename() would replace an empty directory of that name; a live one
    // holds its lock file, so the rename fails and we draw another name.
    if (rename(initTemplate.c_str(), livePath.c_str()) == 0)
      return ScratchDir(livePath, lockFd);
    close(lockFd);
    removeFlat(initTemplate);
  }
  return absl::FailedPreconditionError(
      "cannot find a free scratch directory name in " + parent);
}

ScratchDir::ScratchDir(std::string path, int lockFd)
    : path_(std::move(path)), lockFd_(lockFd), ownerPid_(getpid()) {}

ScratchDir::~ScratchDir() {
  if (lockFd_ < 0 || getpid() != ownerPid_)
    return;
  // The lock goes last: until the directory is gone, nobody else takes it
  // for a dead one while its files are being removed.
  removeFlat(path_);
  close(lockFd_);
}

ScratchDir::ScratchDir(ScratchDir &&other) noexcept
    : path_(std::move(other.path_)), lockFd_(other.lockFd_),
      ownerPid_(other.ownerPid_) {
  other.lockFd_ = -1;
}

int reclaimStaleScratchDirs(const std::string &parent) {
  DIR *stream = opendir(parent.c_str());
  if (!stream)
    return 0;
  int removed = 0;
  int parentFd = dirfd(stream);
  time_t now = time(nullptr);
  while (struct dirent *entry = readdir(stream)) {
    bool live = startsWith(entry->d_name, kLivePrefix);
    bool init = startsWith(entry->d_name, kInitPrefix);
    if (!live && !init)
      continue;
    struct stat info;
    if (fstatat(parentFd, entry->d_name, &info, AT_SYMLINK_NOFOLLOW) != 0 ||
        !S_ISDIR(info.st_mode) || info.st_uid != geteuid())
      continue;
    std::string dir = parent + "/" + entry->d_name;
    if (init) {
      if (now - info.st_mtime > kStaleInitSeconds) {
        removeFlat(dir);
        ++removed;
      }
      continue;
    }
    std::string lockPath = dir + "/" + kLockName;
    int lockFd = open(lockPath.c_str(), O_RDWR | O_CLOEXEC | O_NOFOLLOW);
    if (lockFd < 0) {
      // No lock file: its owner was removing it, or died doing so.
      if (errno == ENOENT) {
        removeFlat(dir);
        ++removed;
      }
      continue;
    }
    if (flock(lockFd, LOCK_EX | LOCK_NB) == 0) {
      removeFlat(dir);
      ++removed;
    }
    close(lockFd);
  }
  closedir(stream);
  return removed;
}

absl::StatusOr<std::string> createScratchFile(const std::string &prefix,
                                              const std::string &suffix) {
  // Destroyed at exit, which removes the directory with whatever artifacts
  // are still in it.
  static std::mutex mutex;
  static std::optional<ScratchDir> processDir;
  std::lock_guard<std::mutex> lock(mutex);
  if (!processDir) {
    llvm::SmallString<128> parent;
    llvm::sys::path::system_temp_directory(/*ErasedOnReboot=*/true, parent);
    std::string parentPath = parent.str().str();
    reclaimStaleScratchDirs(parentPath);
    absl::StatusOr<ScratchDir> dir = ScratchDir::create(parentPath);
    if (!dir.ok())
      return dir.status();
    processDir.emplace(std::move(*dir));
  }
  llvm::SmallString<128> path;
  std::string model = processDir->path() + "/" + prefix + "-%%%%%%." + suffix;
  if (std::error_code ec = llvm::sys::fs::createUniqueFile(model, path))
    return absl::InternalError("cannot create a file in " + processDir->path() +
                               ": " + ec.message());
  return path.str().str();
}

} // namespace nn::compiler
