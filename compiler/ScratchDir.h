//===- ScratchDir.h - Per-process directory for temporary builds -*- C++ -*-=//
//
// Temporary artifacts (.so) and the object files linked into them live in
// one directory per process, `$TMPDIR/nn-artifacts-XXXXXX`, never loose in
// the temporary directory. The directory holds a `lock` file its owner
// keeps flock()ed for its whole life, so
//   - at normal exit the owner removes the directory with what is left in
//     it, and
//   - a process killed before that (SIGKILL, abort) leaves a directory whose
//     lock nobody holds: the next process that compiles reclaims it.
// A directory is created as `nn-init-XXXXXX` and renamed only once its lock
// is held, so a reclaimer never mistakes one being set up for a dead one.
// Removal unlinks the directory's own entries and never recurses or follows
// a link.
//
//===----------------------------------------------------------------------===//

#ifndef NN_COMPILER_SCRATCHDIR_H
#define NN_COMPILER_SCRATCHDIR_H

#include "absl/status/statusor.h"

#include <string>

namespace nn::compiler {

/// A locked scratch directory under `parent`; removed with its files when
/// the object goes away. Movable, not copyable.
class ScratchDir {
public:
  static absl::StatusOr<ScratchDir> create(const std::string &parent);
  ~ScratchDir();
  ScratchDir(ScratchDir &&other) noexcept;
  ScratchDir &operator=(ScratchDir &&other) = delete;
  ScratchDir(const ScratchDir &) = delete;
  ScratchDir &operator=(const ScratchDir &) = delete;

  const std::string &path() const { return path_; }

private:
  ScratchDir(std::string path, int lockFd);

  std::string path_;
  int lockFd_ = -1;
  // Only the creating process removes it: a forked child that exits must
  // not take its parent's directory.
  int ownerPid_ = 0;
};

/// Removes every scratch directory under `parent` that belongs to this
/// user and whose owner is gone (its lock is free), and set-up directories
/// (`nn-init-*`) older than an hour. Returns how many it removed.
int reclaimStaleScratchDirs(const std::string &parent);

/// A new, empty file `<prefix>-XXXXXX.<suffix>` in this process's scratch
/// directory under the system temporary directory ($TMPDIR, else /tmp).
/// The directory is created on first use, after reclaiming stale ones, and
/// removed at exit.
absl::StatusOr<std::string> createScratchFile(const std::string &prefix,
                                              const std::string &suffix);

} // namespace nn::compiler

#endif // NN_COMPILER_SCRATCHDIR_H
