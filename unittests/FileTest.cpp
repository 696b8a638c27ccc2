//===- FileTest.cpp - opening, reading and writing user-named paths -------===//
//
// Paths come from users: a FIFO must be refused at once (not block until a
// writer comes), /dev/zero and directories refused by what they are, files
// larger than a reader's bound refused by size; and a write that fails must
// say why and leave no partial file.
//
//===----------------------------------------------------------------------===//

#include "nn/File.h"

#include <gtest/gtest.h>

#include <chrono>
#include <csignal>
#include <fstream>
#include <sstream>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <thread>
#include <unistd.h>

using namespace nn;

namespace {

#define EXPECT_CONTAINS(text, part)                                            \
  EXPECT_NE(std::string(text).find(part), std::string::npos)                   \
      << "expected '" << (part) << "' in: " << (text)

std::string scratch(const std::string &name) {
  std::string dir = ::testing::TempDir() + "/nn-file-test-" + name + "-" +
                    std::to_string(getpid());
  mkdir(dir.c_str(), 0755);
  return dir;
}

bool exists(const std::string &path) {
  struct stat info;
  return lstat(path.c_str(), &info) == 0;
}

std::string contents(const std::string &path) {
  std::ifstream file(path, std::ios::binary);
  std::ostringstream bytes;
  bytes << file.rdbuf();
  return bytes.str();
}

/// Runs `body` in a child process and gives its exit status, or -1 when it
/// had not finished after 10 s (it is then killed): a read that blocks
/// fails the test instead of hanging it.
int exitStatusWithin10s(const std::function<int()> &body) {
  pid_t child = fork();
  if (child == 0)
    _exit(body());
  for (int i = 0; i < 1000; ++i) {
    int status = 0;
    if (waitpid(child, &status, WNOHANG) == child)
      return WIFEXITED(status) ? WEXITSTATUS(status) : 128;
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  kill(child, SIGKILL);
  waitpid(child, nullptr, 0);
  return -1;
}

TEST(FileTest, AFifoIsRefusedWithoutBlocking) {
  std::string dir = scratch("fifo");
  std::string fifo = dir + "/input.npz";
  ASSERT_EQ(mkfifo(fifo.c_str(), 0644), 0);
  // No writer ever opens it: a blocking open or read would wait forever.
  int status = exitStatusWithin10s([&] {
    absl::StatusOr<std::string> read = readRegularFile(fifo, 1 << 20);
    absl::StatusOr<FileHandle> opened = openRegularFile(fifo);
    return !read.ok() &&
                   read.status().code() == absl::StatusCode::kInvalidArgument &&
                   read.status().message() ==
                       "'" + fifo + "' is a FIFO, not a regular file" &&
                   !opened.ok() && opened.status() == read.status()
               ? 0
               : 1;
  });
  EXPECT_EQ(status, 0) << (status < 0 ? "blocked on the FIFO" : "wrong error");
  unlink(fifo.c_str());
  rmdir(dir.c_str());
}

TEST(FileTest, DevicesAndDirectoriesAreRefusedByWhatTheyAre) {
  // /dev/zero never ends: read to its end, it exhausts memory.
  absl::StatusOr<std::string> zero = readRegularFile("/dev/zero", 1 << 20);
  ASSERT_FALSE(zero.ok());
  EXPECT_EQ(zero.status().message(),
            "'/dev/zero' is a character device, not a regular file");
  std::string dir = scratch("dir");
  absl::StatusOr<std::string> directory = readRegularFile(dir, 1 << 20);
  ASSERT_FALSE(directory.ok());
  EXPECT_EQ(directory.status().message(),
            "'" + dir + "' is a directory, not a regular file");
  EXPECT_EQ(directory.status().code(), absl::StatusCode::kInvalidArgument);
  absl::StatusOr<std::string> missing = readRegularFile(dir + "/none", 1);
  ASSERT_FALSE(missing.ok());
  EXPECT_EQ(missing.status().code(), absl::StatusCode::kNotFound);
  EXPECT_EQ(missing.status().message(),
            "cannot open '" + dir + "/none': No such file or directory");
  rmdir(dir.c_str());
}

TEST(FileTest, ReadsAreBoundedBySize) {
  std::string dir = scratch("bound");
  std::string path = dir + "/f.json";
  std::ofstream(path, std::ios::binary) << std::string(100, 'x');
  absl::StatusOr<std::string> atLimit = readRegularFile(path, 100);
  ASSERT_TRUE(atLimit.ok()) << atLimit.status().message();
  EXPECT_EQ(*atLimit, std::string(100, 'x'));
  absl::StatusOr<std::string> over = readRegularFile(path, 99);
  ASSERT_FALSE(over.ok());
  EXPECT_EQ(over.status().code(), absl::StatusCode::kOutOfRange);
  EXPECT_EQ(over.status().message(),
            "'" + path +
                "' is too large: 100 bytes, more than the 99-byte limit for "
                "this file");
  // Empty files are files.
  std::string empty = dir + "/empty";
  std::ofstream(empty).close();
  absl::StatusOr<std::string> none = readRegularFile(empty, 0);
  ASSERT_TRUE(none.ok());
  EXPECT_EQ(*none, "");
  unlink(path.c_str());
  unlink(empty.c_str());
  rmdir(dir.c_str());
}

TEST(FileTest, OutputFilesAppearWholeOrNotAtAll) {
  std::string dir = scratch("out");
  std::string path = dir + "/x.npz";
  {
    absl::StatusOr<OutputFile> file = OutputFile::create(path);
    ASSERT_TRUE(file.ok()) << file.status().message();
    ASSERT_TRUE(file->write("half").ok());
    EXPECT_TRUE(exists(path + ".partial"));
    EXPECT_FALSE(exists(path));
    // Dropped before commit (an error elsewhere): nothing is left.
  }
  EXPECT_FALSE(exists(path + ".partial"));
  EXPECT_FALSE(exists(path));
  ASSERT_TRUE(writeFileAtomically(path, "whole").ok());
  EXPECT_EQ(contents(path), "whole");
  EXPECT_FALSE(exists(path + ".partial"));
  unlink(path.c_str());
  rmdir(dir.c_str());
}

/// A full disk, through /dev/full: the partial file is a link to it.
TEST(FileTest, AFullDiskSaysSoAndLeavesNoPartialFile) {
  std::string dir = scratch("full");
  std::string path = dir + "/x.npz";
  ASSERT_EQ(symlink("/dev/full", (path + ".partial").c_str()), 0);
  absl::Status status = writeFileAtomically(path, std::string(4096, 'x'));
  ASSERT_FALSE(status.ok());
  EXPECT_EQ(status.message(),
            "cannot write '" + path + ".partial': No space left on device");
  EXPECT_FALSE(exists(path + ".partial"));
  EXPECT_FALSE(exists(path));
  EXPECT_TRUE(exists("/dev/full"));
  rmdir(dir.c_str());
}

/// Past RLIMIT_FSIZE the kernel refuses writes (EFBIG) as a full disk
/// refuses them; in a child, whose limit does not bind the test.
TEST(FileTest, AWriteRefusedPartWaySaysWhy) {
  std::string dir = scratch("limit");
  std::string path = dir + "/checkpoint.npz";
  int status = exitStatusWithin10s([&] {
    signal(SIGXFSZ, SIG_IGN);
    rlimit limit{1000, 1000};
    setrlimit(RLIMIT_FSIZE, &limit);
    absl::StatusOr<OutputFile> file = OutputFile::create(path);
    if (!file.ok() || !file->write(std::string(600, 'x')).ok())
      return 2;
    absl::Status second = file->write(std::string(600, 'x'));
    bool says = second.message() ==
                "cannot write '" + path + ".partial': File too large";
    bool later = !file->commit().ok();
    return says && later && !exists(path + ".partial") && !exists(path) ? 0 : 1;
  });
  EXPECT_EQ(status, 0);
  rmdir(dir.c_str());
}

} // namespace
