//===- WorkDir.cpp - directories nn-train owns ----------------------------===//

#include "training/WorkDir.h"

#include "nn/File.h"
#include "support/JsonLine.h"
#include "training/StageFile.h"

#include "llvm/Support/FileSystem.h"
#include "llvm/Support/JSON.h"
#include "llvm/Support/Path.h"

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>
#include <vector>

using namespace nn;
using namespace nn::training;

namespace {

std::string systemError(const std::string &what) {
  return what + ": " + std::strerror(errno);
}

/// The entries under `dir` (relative to the root as `prefix`) that `listed`
/// does not name; directories that are listed are walked, links never.
void findUnlisted(const std::string &dir, const std::string &prefix,
                  const std::set<std::string> &listed,
                  std::vector<std::string> &unlisted) {
  DIR *handle = opendir(dir.c_str());
  if (!handle) {
    unlisted.push_back(prefix + " (unreadable: " + std::strerror(errno) + ")");
    return;
  }
  std::vector<std::string> names;
  while (dirent *entry = readdir(handle)) {
    std::string name = entry->d_name;
    if (name != "." && name != "..")
      names.push_back(name);
  }
  closedir(handle);
  std::sort(names.begin(), names.end());
  for (const std::string &name : names) {
    std::string relative = prefix + name;
    if (prefix.empty() &&
        (name == WorkDir::kListName ||
         name == std::string(WorkDir::kListName) + ".partial"))
      continue;
    struct stat info;
    std::string path = dir + "/" + name;
    if (lstat(path.c_str(), &info) != 0) {
      unlisted.push_back(relative);
      continue;
    }
    if (S_ISLNK(info.st_mode)) {
      unlisted.push_back(relative + " (a symbolic link)");
    } else if (S_ISDIR(info.st_mode)) {
      if (listed.count(relative + "/"))
        findUnlisted(path, relative + "/", listed, unlisted);
      else
        unlisted.push_back(relative + "/");
    } else {
      // FILE.partial: a write of a listed file that was cut short.
      llvm::StringRef base(relative);
      bool partial = base.consume_back(".partial") && listed.count(base.str());
      if (!listed.count(relative) && !partial)
        unlisted.push_back(relative);
    }
  }
}

} // namespace

absl::StatusOr<std::unique_ptr<WorkDir>>
WorkDir::open(const std::string &root, const std::string &what) {
  std::set<std::string> entries;
  struct stat info;
  if (stat(root.c_str(), &info) != 0) {
    if (errno == ENOENT)
      return std::unique_ptr<WorkDir>(new WorkDir(root, what, {}));
    return absl::InvalidArgumentError(
        systemError("cannot open the " + what + " '" + root + "'"));
  }
  if (!S_ISDIR(info.st_mode))
    return absl::InvalidArgumentError("the " + what + " '" + root +
                                      "' exists and is not a directory");
  std::string list = root + "/" + kListName;
  if (access(list.c_str(), F_OK) == 0) {
    // A FIFO or device there would block or never end.
    absl::StatusOr<std::string> listText = readRegularFile(list, kMaxListBytes);
    if (!listText.ok())
      return withContext(listText.status(), "the " + what + " '" + root +
                                                "': cannot read its list of "
                                                "what nn-train wrote: ");
    llvm::Expected<llvm::json::Value> value = llvm::json::parse(*listText);
    const llvm::json::Array *names = nullptr;
    if (value)
      if (const llvm::json::Object *object = value->getAsObject())
        names = object->getArray("written");
    if (!value)
      llvm::consumeError(value.takeError());
    if (!names)
      return absl::InvalidArgumentError(
          "the " + what + " '" + root +
          "': its list of what nn-train wrote, '" + list +
          "', is damaged; remove the directory (what it holds is "
          "rewritten)");
    for (const llvm::json::Value &name : *names)
      if (std::optional<llvm::StringRef> text = name.getAsString())
        entries.insert(text->str());
  }
  std::vector<std::string> unlisted;
  findUnlisted(root, "", entries, unlisted);
  if (!unlisted.empty()) {
    std::string names;
    for (size_t i = 0; i < unlisted.size() && i < 5; ++i)
      names += (i ? ", '" : "'") + unlisted[i] + "'";
    if (unlisted.size() > 5)
      names += " and " + std::to_string(unlisted.size() - 5) + " more";
    return absl::FailedPreconditionError(
        "the " + what + " '" + root + "' holds " + names +
        ", which nn-train did not write there: it writes, replaces and "
        "removes files in it, so it takes only a new or empty directory or "
        "one it wrote; move them away or choose another directory");
  }
  return std::unique_ptr<WorkDir>(new WorkDir(root, what, std::move(entries)));
}

bool WorkDir::contains(const std::string &path) const {
  absl::StatusOr<std::string> rel = relative(path);
  return rel.ok() && !rel->empty();
}

absl::StatusOr<std::string> WorkDir::relative(const std::string &path) const {
  std::string base = absolutePath(root_), full = absolutePath(path);
  if (full == base)
    return std::string();
  if (full.size() <= base.size() + 1 ||
      full.compare(0, base.size() + 1, base + "/") != 0)
    return absl::InternalError("'" + path + "' is not under the " + what +
                               " '" + root_ + "'");
  return full.substr(base.size() + 1);
}

absl::Status WorkDir::save() {
  if (std::error_code ec = llvm::sys::fs::create_directories(root_))
    return absl::InternalError("cannot create the " + what + " '" + root_ +
                               "': " + ec.message());
  support::JsonArray written(support::JsonArray::Layout::itemPerLine);
  for (const std::string &entry : entries)
    written.push(entry);
  support::JsonObject list;
  list.add("written_by", "nn-train").add("written", written);
  return writeFileAtomically(root_ + "/" + kListName, list.str() + "\n");
}

absl::Status WorkDir::addDirectories(const std::string &relativeDir) {
  if (std::error_code ec = llvm::sys::fs::create_directories(root_))
    return absl::InternalError("cannot create the " + what + " '" + root_ +
                               "': " + ec.message());
  std::string at;
  for (llvm::StringRef rest = relativeDir; !rest.empty();) {
    auto [part, tail] = rest.split('/');
    rest = tail;
    if (part.empty())
      continue;
    at += part.str() + "/";
    std::string path = root_ + "/" + at;
    path.pop_back();
    if (::mkdir(path.c_str(), 0755) != 0) {
      struct stat info;
      if (errno != EEXIST || lstat(path.c_str(), &info) != 0 ||
          !S_ISDIR(info.st_mode))
        return absl::InternalError(
            "cannot create '" + path + "': " +
            (errno == EEXIST ? "it exists and is not a directory (nn-train "
                               "does not write through links)"
                             : std::string(std::strerror(errno))));
    }
    entries.insert(at);
  }
  return absl::OkStatus();
}

absl::Status WorkDir::record(const std::string &path) {
  absl::StatusOr<std::string> rel = relative(path);
  if (!rel.ok())
    return rel.status();
  if (rel->empty())
    return absl::InternalError("the " + what + " '" + root_ +
                               "' itself is not a file to write");
  size_t slash = rel->rfind('/');
  if (absl::Status status = addDirectories(
          slash == std::string::npos ? "" : rel->substr(0, slash));
      !status.ok())
    return status;
  entries.insert(*rel);
  return save();
}

absl::Status WorkDir::createDirectory(const std::string &path) {
  absl::StatusOr<std::string> rel = relative(path);
  if (!rel.ok())
    return rel.status();
  if (absl::Status status = addDirectories(*rel); !status.ok())
    return status;
  return save();
}

/// Unlinks `path` if it is a file (never a link's target); a missing file
/// is no error.
static absl::Status removeRegular(const std::string &path) {
  struct stat info;
  if (lstat(path.c_str(), &info) != 0)
    return errno == ENOENT ? absl::OkStatus()
                           : absl::InternalError(
                                 systemError("cannot remove '" + path + "'"));
  if (!S_ISREG(info.st_mode))
    return absl::FailedPreconditionError(
        "'" + path + "' is no longer the file nn-train wrote (it is " +
        (S_ISLNK(info.st_mode)    ? "a symbolic link"
         : S_ISDIR(info.st_mode)  ? "a directory"
         : S_ISFIFO(info.st_mode) ? "a FIFO"
                                  : "not a regular file") +
        " now); not removing it");
  if (::unlink(path.c_str()) != 0)
    return absl::InternalError(systemError("cannot remove '" + path + "'"));
  return absl::OkStatus();
}

absl::Status WorkDir::remove(const std::string &path) {
  absl::StatusOr<std::string> rel = relative(path);
  if (!rel.ok())
    return rel.status();
  if (!entries.count(*rel))
    return absl::InternalError("'" + path +
                               "' is not a file nn-train wrote "
                               "in the " +
                               what + " '" + root_ + "'");
  for (const std::string &file : {path, path + ".partial"})
    if (absl::Status status = removeRegular(file); !status.ok())
      return status;
  entries.erase(*rel);
  return save();
}

absl::Status WorkDir::removeUnder(const std::string &path) {
  absl::StatusOr<std::string> rel = relative(path);
  if (!rel.ok())
    return rel.status();
  // The root itself: everything recorded in it (the root stays).
  std::string prefix = rel->empty() ? std::string() : *rel + "/";
  std::vector<std::string> files, directories;
  for (const std::string &entry : entries)
    if (entry.compare(0, prefix.size(), prefix) == 0)
      (entry.back() == '/' ? directories : files).push_back(entry);
  for (const std::string &file : files) {
    std::string full = root_ + "/" + file;
    for (const std::string &each : {full, full + ".partial"})
      if (absl::Status status = removeRegular(each); !status.ok())
        return status;
    entries.erase(file);
  }
  // Deepest first (a directory sorts before what it holds), the
  // directory itself last.
  std::sort(directories.rbegin(), directories.rend());
  for (const std::string &directory : directories) {
    std::string full = root_ + "/" + directory;
    full.pop_back();
    if (::rmdir(full.c_str()) != 0 && errno != ENOENT)
      return absl::InternalError(systemError("cannot remove '" + full + "'"));
    entries.erase(directory);
  }
  return save();
}
