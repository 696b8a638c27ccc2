//===- training/WorkDir.h - directories nn-train owns ------------*- C++
//-*-===//
//
// A stage file's work directory, and each alignment overlay written next
// to a dataset, is a directory nn-train writes into, removes from and
// reruns in. A user can point --work-dir anywhere, so nn-train must never
// remove what it did not write: a WorkDir keeps a list of every file and
// directory it wrote (`.nn-written.json` at its root, rewritten through a
// temporary file before each new file is written) and
//
//   - refuses to take a directory that holds anything not on the list
//     (naming it) or a symbolic link anywhere inside,
//   - removes only files on the list, and never through a link.
//
// A file on the list may be missing (a run was killed before writing it)
// or have a leftover FILE.partial next to it (killed while writing it).
// Files are written whole or not at all, through nn/File.h's OutputFile
// (writeFileAtomically, writeNpz).
//
//===----------------------------------------------------------------------===//

#ifndef NN_TRAINING_WORKDIR_H
#define NN_TRAINING_WORKDIR_H

#include "nn/File.h"
#include "training/Trainer.h"

#include "absl/status/statusor.h"

#include <memory>
#include <set>
#include <string>

namespace nn::training {

class WorkDir : public FileRecorder {
public:
  /// The list's name at the root.
  static constexpr const char *kListName = ".nn-written.json";
  /// The largest list read (a path per line: over a million files).
  static constexpr uint64_t kMaxListBytes = 64 << 20;

  /// Takes `root` (created when first written to, if missing): an error
  /// when it exists and is not a directory, holds an entry the list does
  /// not name (a directory without a list is listless: any entry is), or
  /// a symbolic link. `what` names it in errors ("work directory").
  static absl::StatusOr<std::unique_ptr<WorkDir>> open(const std::string &root,
                                                       const std::string &what);

  const std::string &root() const { return root_; }
  /// Whether `path` lies under the root (lexically).
  bool contains(const std::string &path) const;

  /// Records the file `path` (under the root) and creates its missing
  /// parent directories, recording them too.
  absl::Status record(const std::string &path) override;
  /// Removes the recorded file `path` (and a FILE.partial beside it) and
  /// drops it from the list; a missing file is no error.
  absl::Status remove(const std::string &path) override;
  /// Creates the directory `path` (under the root) and its parents,
  /// recording them.
  absl::Status createDirectory(const std::string &path);
  /// Removes every recorded entry under the directory `path`, then the
  /// directory itself (when it is recorded and empty).
  absl::Status removeUnder(const std::string &path);

private:
  WorkDir(std::string root, std::string what, std::set<std::string> entries)
      : root_(std::move(root)), what(std::move(what)),
        entries(std::move(entries)) {}
  /// `path` relative to the root, or an error when it lies outside it.
  absl::StatusOr<std::string> relative(const std::string &path) const;
  /// Records the directory `relative` and its parents, creating them.
  absl::Status addDirectories(const std::string &relative);
  /// Writes the list (through a temporary file).
  absl::Status save();

  std::string root_, what;
  /// Relative paths; directories end in '/'.
  std::set<std::string> entries;
};

} // namespace nn::training

#endif // NN_TRAINING_WORKDIR_H
