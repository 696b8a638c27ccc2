//===- WorkDirTest.cpp - directories nn-train owns, strict JSON -----------===//
//
// The rules that keep nn-train from deleting what it did not write
// (training/WorkDir.h), checked on real directories with users' files and
// symbolic links in them; writes that fail with the system's reason and
// leave nothing behind; and the strict JSON reader stage files go through
// (training/JsonFile.h).
//
//===----------------------------------------------------------------------===//

#include "training/WorkDir.h"
#include "training/JsonFile.h"
#include "training/StageFile.h"
#include "training/Stages.h"

#include "llvm/Support/FileSystem.h"

#include <gtest/gtest.h>

#include <fstream>
#include <sstream>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

using namespace nn;
using namespace nn::training;

namespace {

std::string scratch(const std::string &name) {
  std::string dir =
      ::testing::TempDir() + "workdir-" + name + "-" + std::to_string(getpid());
  llvm::sys::fs::remove_directories(dir);
  llvm::sys::fs::create_directories(dir);
  return dir;
}

std::string readFile(const std::string &path) {
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

bool exists(const std::string &path) {
  struct stat info;
  return lstat(path.c_str(), &info) == 0;
}

TEST(WorkDirTest, RemovesOnlyWhatItWrote) {
  std::string root = scratch("own") + "/work";
  absl::StatusOr<std::unique_ptr<WorkDir>> opened =
      WorkDir::open(root, "work directory");
  ASSERT_TRUE(opened.ok()) << opened.status().message();
  WorkDir &work = **opened;
  std::string checkpoint = root + "/ctc/checkpoints/step-00000002.npz";
  ASSERT_TRUE(work.record(checkpoint).ok());
  std::ofstream(checkpoint) << "weights";
  std::ofstream(checkpoint + ".partial") << "cut short";
  // Opening it again takes it: everything in it is on the list.
  absl::StatusOr<std::unique_ptr<WorkDir>> again =
      WorkDir::open(root, "work directory");
  ASSERT_TRUE(again.ok()) << again.status().message();
  ASSERT_TRUE((*again)->removeUnder(root + "/ctc/checkpoints").ok());
  EXPECT_FALSE(exists(checkpoint));
  EXPECT_FALSE(exists(checkpoint + ".partial"));
  EXPECT_FALSE(exists(root + "/ctc/checkpoints"));
  EXPECT_TRUE(exists(root + "/ctc"));
  // A path outside is no file of the directory's.
  EXPECT_FALSE((*again)->record(root + "/../elsewhere.npz").ok());
}

TEST(WorkDirTest, RefusesADirectoryHoldingWhatItDidNotWrite) {
  std::string dir = scratch("foreign");
  std::string root = dir + "/work";
  llvm::sys::fs::create_directories(root + "/ctc/checkpoints");
  std::ofstream(root + "/ctc/checkpoints/notes.txt") << "mine";
  absl::StatusOr<std::unique_ptr<WorkDir>> opened =
      WorkDir::open(root, "work directory");
  ASSERT_FALSE(opened.ok());
  EXPECT_EQ(opened.status().message(),
            "the work directory '" + root +
                "' holds 'ctc/', which nn-train did not write there: it "
                "writes, replaces and removes files in it, so it takes only "
                "a new or empty directory or one it wrote; move them away or "
                "choose another directory");
  // A directory nn-train wrote, with a user's file added later.
  std::string own = dir + "/own";
  {
    absl::StatusOr<std::unique_ptr<WorkDir>> fresh =
        WorkDir::open(own, "work directory");
    ASSERT_TRUE(fresh.ok());
    ASSERT_TRUE((*fresh)->record(own + "/ctc/done.json").ok());
  }
  std::ofstream(own + "/ctc/done.json") << "{}";
  std::ofstream(own + "/ctc/notes.txt") << "mine";
  opened = WorkDir::open(own, "work directory");
  ASSERT_FALSE(opened.ok());
  EXPECT_NE(opened.status().message().find("holds 'ctc/notes.txt', which "
                                           "nn-train did not write there"),
            std::string::npos)
      << opened.status().message();
  EXPECT_EQ(readFile(own + "/ctc/notes.txt"), "mine");
  // A file where the directory should be.
  std::ofstream(dir + "/file") << "x";
  opened = WorkDir::open(dir + "/file", "work directory");
  EXPECT_EQ(opened.status().message(), "the work directory '" + dir +
                                           "/file' exists and is not a "
                                           "directory");
  llvm::sys::fs::remove_directories(dir);
}

TEST(WorkDirTest, NeverFollowsALink) {
  std::string dir = scratch("link");
  std::string outside = dir + "/outside";
  llvm::sys::fs::create_directories(outside);
  std::ofstream(outside + "/precious.npz") << "data";
  std::string root = dir + "/work";
  {
    absl::StatusOr<std::unique_ptr<WorkDir>> fresh =
        WorkDir::open(root, "work directory");
    ASSERT_TRUE(fresh.ok());
    ASSERT_TRUE((*fresh)->createDirectory(root + "/ctc").ok());
  }
  // The stage's checkpoints directory made a link to elsewhere.
  ASSERT_EQ(symlink(outside.c_str(), (root + "/ctc/checkpoints").c_str()), 0);
  absl::StatusOr<std::unique_ptr<WorkDir>> opened =
      WorkDir::open(root, "work directory");
  ASSERT_FALSE(opened.ok());
  EXPECT_NE(opened.status().message().find(
                "holds 'ctc/checkpoints (a symbolic link)'"),
            std::string::npos)
      << opened.status().message();
  EXPECT_EQ(readFile(outside + "/precious.npz"), "data");
  llvm::sys::fs::remove_directories(dir);
}

/// A write the file system refuses (here: past RLIMIT_FSIZE, as a full
/// disk refuses one) says why and leaves no partial file.
TEST(WorkDirTest, FailedWritesSayWhyAndLeaveNothing) {
  std::string dir = scratch("full");
  std::string path = dir + "/done.json";
  pid_t child = fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    signal(SIGXFSZ, SIG_IGN);
    rlimit limit{16, 16};
    setrlimit(RLIMIT_FSIZE, &limit);
    absl::Status status = writeFileAtomically(path, std::string(4096, 'x'));
    bool says = status.message().find("File too large") != std::string::npos;
    _exit(!status.ok() && says && !exists(path + ".partial") && !exists(path)
              ? 0
              : 1);
  }
  int result = 0;
  ASSERT_EQ(waitpid(child, &result, 0), child);
  EXPECT_TRUE(WIFEXITED(result) && WEXITSTATUS(result) == 0);
  ASSERT_TRUE(writeFileAtomically(path, "{}\n").ok());
  EXPECT_EQ(readFile(path), "{}\n");
  llvm::sys::fs::remove_directories(dir);
}

/// The files nn-train reads back (its list, a stage file) are read only
/// when regular and within their bounds: a FIFO put there fails at once
/// (in a child, so a read that blocks fails instead of hanging), one too
/// large by its size.
TEST(WorkDirTest, ReadsOnlyRegularFilesWithinBounds) {
  std::string root = scratch("fifo");
  std::string list = root + "/" + WorkDir::kListName;
  ASSERT_EQ(mkfifo(list.c_str(), 0644), 0);
  std::string stages = root + "/stages.json";
  ASSERT_EQ(mkfifo(stages.c_str(), 0644), 0);
  pid_t child = fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    alarm(10);
    absl::StatusOr<std::unique_ptr<WorkDir>> opened =
        WorkDir::open(root, "work directory");
    absl::StatusOr<StageFile> read = StageFile::read(stages);
    bool ok = !opened.ok() &&
              opened.status().message() ==
                  "the work directory '" + root +
                      "': cannot read its list of what nn-train wrote: '" +
                      list + "' is a FIFO, not a regular file" &&
              !read.ok() &&
              read.status().message() ==
                  "stage file: '" + stages + "' is a FIFO, not a regular file";
    _exit(ok ? 0 : 1);
  }
  int result = 0;
  ASSERT_EQ(waitpid(child, &result, 0), child);
  EXPECT_TRUE(WIFEXITED(result) && WEXITSTATUS(result) == 0)
      << (WIFSIGNALED(result) ? "blocked on a FIFO" : "wrong error");
  unlink(stages.c_str());
  std::ofstream(stages) << std::string(kMaxStageFileBytes - 2, ' ') << "{}";
  absl::StatusOr<StageFile> atLimit = StageFile::read(stages);
  EXPECT_TRUE(atLimit.ok() ||
              atLimit.status().message().find("too large") == std::string::npos)
      << atLimit.status().message();
  std::ofstream(stages, std::ios::app) << " ";
  absl::StatusOr<StageFile> over = StageFile::read(stages);
  ASSERT_FALSE(over.ok());
  EXPECT_EQ(over.status().message(),
            "stage file: '" + stages + "' is too large: " +
                std::to_string(kMaxStageFileBytes + 1) + " bytes, more than " +
                "the " + std::to_string(kMaxStageFileBytes) +
                "-byte limit for this file");
  llvm::sys::fs::remove_directories(root);
}

TEST(JsonFileTest, RepeatedKeysAndDeepNestingAreErrors) {
  absl::StatusOr<llvm::json::Value> parsed = parseJsonStrictly(
      "{\n  \"a\": 1,\n  \"b\": {\"a\": 2},\n  \"a\": 3\n}", "f.json");
  ASSERT_FALSE(parsed.ok());
  EXPECT_EQ(parsed.status().message(),
            "f.json:4:3: the key 'a' is given twice in one object (first at "
            "f.json:2:3); JSON would keep only the last");
  // Keys are compared as decoded: "\u0061" is "a".
  parsed = parseJsonStrictly(R"({"a": 1, "\u0061": 2})", "f.json");
  ASSERT_FALSE(parsed.ok());
  EXPECT_NE(parsed.status().message().find("the key 'a' is given twice"),
            std::string::npos);
  // The same key in different objects, and in strings, is fine.
  parsed = parseJsonStrictly(R"({"a": {"a": [{"a": "a,\"a\""}]}, "b": "a"})",
                             "f.json");
  EXPECT_TRUE(parsed.ok()) << parsed.status().message();
  // 100,000 unclosed '[' are an error, not a stack overflow.
  parsed = parseJsonStrictly(std::string(100000, '['), "f.json");
  ASSERT_FALSE(parsed.ok());
  EXPECT_EQ(parsed.status().message(),
            "f.json:1:65: objects and lists nest deeper than 64 levels");
  parsed =
      parseJsonStrictly(std::string(64, '[') + std::string(64, ']'), "f.json");
  EXPECT_TRUE(parsed.ok()) << parsed.status().message();
  parsed = parseJsonStrictly("{\"a\": }", "f.json");
  ASSERT_FALSE(parsed.ok());
  EXPECT_EQ(parsed.status().message().substr(0, 23), "f.json: not valid JSON:");
}

} // namespace
