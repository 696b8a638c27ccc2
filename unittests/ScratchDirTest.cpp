//===- ScratchDirTest.cpp - Temporary artifacts never accumulate ----------===//
//
// The per-process scratch directory of temporary artifacts: a live owner's
// directory is kept, a killed owner's is reclaimed, reclaiming never leaves
// its directory, and a compiled temporary artifact lives in the process's
// directory and goes with its Artifact.
//
//===----------------------------------------------------------------------===//

#include "compiler/ScratchDir.h"
#include "nn/Compiler.h"

#include <gtest/gtest.h>

#include <csignal>
#include <fcntl.h>
#include <fstream>
#include <string>
#include <sys/file.h>
#include <sys/stat.h>
#include <sys/time.h>
#include <sys/wait.h>
#include <unistd.h>

using nn::compiler::reclaimStaleScratchDirs;
using nn::compiler::ScratchDir;

namespace {

bool exists(const std::string &path) {
  struct stat info;
  return lstat(path.c_str(), &info) == 0;
}

void touch(const std::string &path) { std::ofstream(path) << "x"; }

/// A scratch directory as a process would have left it: `lock` and one
/// artifact, nobody holding the lock.
std::string makeAbandoned(const std::string &parent, const std::string &name) {
  std::string dir = parent + "/" + name;
  EXPECT_EQ(mkdir(dir.c_str(), 0700), 0);
  touch(dir + "/lock");
  touch(dir + "/nn-artifact-abc123.so");
  return dir;
}

class ScratchDirTest : public ::testing::Test {
protected:
  void SetUp() override {
    char model[] = "/tmp/nn-scratch-test-XXXXXX";
    ASSERT_NE(mkdtemp(model), nullptr);
    parent = model;
  }
  void TearDown() override {
    std::string command = "rm -rf '" + parent + "'";
    ASSERT_EQ(system(command.c_str()), 0);
  }
  std::string parent;
};

TEST_F(ScratchDirTest, LiveDirectoriesStayAndKilledOwnersAreReclaimed) {
  std::string own;
  {
    absl::StatusOr<ScratchDir> dir = ScratchDir::create(parent);
    ASSERT_TRUE(dir.ok()) << dir.status();
    own = dir->path();
    EXPECT_EQ(own.rfind(parent + "/nn-artifacts-", 0), 0u) << own;
    EXPECT_TRUE(exists(own + "/lock"));

    // Another owner, alive: a child holding the lock of its directory.
    std::string other = makeAbandoned(parent, "nn-artifacts-child1");
    int ready[2];
    ASSERT_EQ(pipe(ready), 0);
    pid_t child = fork();
    ASSERT_GE(child, 0);
    if (child == 0) {
      // Only async-signal-safe calls between fork and the kill.
      int fd = open((other + "/lock").c_str(), O_RDWR);
      if (fd < 0 || flock(fd, LOCK_EX) != 0)
        _exit(1);
      char byte = 'x';
      if (write(ready[1], &byte, 1) != 1)
        _exit(1);
      for (;;)
        pause();
    }
    char byte;
    ASSERT_EQ(read(ready[0], &byte, 1), 1);
    close(ready[0]);
    close(ready[1]);

    EXPECT_EQ(reclaimStaleScratchDirs(parent), 0);
    EXPECT_TRUE(exists(other + "/nn-artifact-abc123.so"));
    EXPECT_TRUE(exists(own));

    ASSERT_EQ(kill(child, SIGKILL), 0);
    int status = 0;
    ASSERT_EQ(waitpid(child, &status, 0), child);
    ASSERT_TRUE(WIFSIGNALED(status));

    EXPECT_EQ(reclaimStaleScratchDirs(parent), 1);
    EXPECT_FALSE(exists(other));
    EXPECT_TRUE(exists(own + "/lock"));
    touch(own + "/nn-artifact-left.so");
  }
  // Its owner gone (normally), the directory went with what it held.
  EXPECT_FALSE(exists(own));
}

TEST_F(ScratchDirTest, ReclaimingStaysInsideTheDirectory) {
  std::string outside = parent + "/outside";
  ASSERT_EQ(mkdir(outside.c_str(), 0700), 0);
  touch(outside + "/lock");
  touch(outside + "/precious");

  // An abandoned directory with a link out: the link goes, its target
  // stays.
  std::string dead = makeAbandoned(parent, "nn-artifacts-dead01");
  ASSERT_EQ(symlink((outside + "/precious").c_str(), (dead + "/link").c_str()),
            0);
  // A link named like a scratch directory is not one.
  ASSERT_EQ(symlink(outside.c_str(), (parent + "/nn-artifacts-link01").c_str()),
            0);
  // Someone else's directory is theirs.
  std::string foreign = makeAbandoned(parent, "nn-artifacts-other1");
  ASSERT_EQ(chown(foreign.c_str(), 65534, 65534), 0);
  // A directory inside an abandoned one stays (removal never recurses),
  // and so does the abandoned directory holding it.
  std::string nested = makeAbandoned(parent, "nn-artifacts-nested");
  ASSERT_EQ(mkdir((nested + "/sub").c_str(), 0700), 0);

  reclaimStaleScratchDirs(parent);
  EXPECT_FALSE(exists(dead));
  EXPECT_TRUE(exists(outside + "/precious"));
  EXPECT_TRUE(exists(outside + "/lock"));
  EXPECT_TRUE(exists(parent + "/nn-artifacts-link01"));
  EXPECT_TRUE(exists(foreign + "/nn-artifact-abc123.so"));
  EXPECT_TRUE(exists(nested + "/sub"));
  EXPECT_FALSE(exists(nested + "/lock"));
}

TEST_F(ScratchDirTest, OnlyOldSetUpDirectoriesAreReclaimed) {
  std::string fresh = parent + "/nn-init-fresh1";
  std::string old = parent + "/nn-init-old001";
  ASSERT_EQ(mkdir(fresh.c_str(), 0700), 0);
  ASSERT_EQ(mkdir(old.c_str(), 0700), 0);
  struct timeval twoHoursAgo[2];
  gettimeofday(&twoHoursAgo[0], nullptr);
  twoHoursAgo[0].tv_sec -= 7200;
  twoHoursAgo[1] = twoHoursAgo[0];
  ASSERT_EQ(utimes(old.c_str(), twoHoursAgo), 0);

  EXPECT_EQ(reclaimStaleScratchDirs(parent), 1);
  EXPECT_TRUE(exists(fresh));
  EXPECT_FALSE(exists(old));
}

TEST_F(ScratchDirTest, AnUnwritableParentIsAnError) {
  absl::StatusOr<ScratchDir> dir = ScratchDir::create(parent + "/missing");
  ASSERT_FALSE(dir.ok());
  EXPECT_NE(std::string(dir.status().message()).find(parent + "/missing"),
            std::string::npos)
      << dir.status();
}

TEST(TemporaryArtifactTest, LivesInTheProcessScratchDirectory) {
  const char *model = R"(
nn.parameter @w : !nn.tensor<[3, 2], f32>
nn.graph @g(%x: !nn.tensor<[B, T, 2], f32>, %y: !nn.tensor<[B, T], i32>)
    dims [B: batch, T: seq(B)] {
  %w = nn.param_ref @w : !nn.tensor<[3, 2], f32>
  %z = nn.linear %x, %w : !nn.tensor<[B, T, 2], f32>, !nn.tensor<[3, 2], f32>
  %ce = nn.cross_entropy %z, %y from logits : !nn.tensor<[B, T, 3], f32>, !nn.tensor<[B, T], i32>
  nn.mark_loss %ce as "ce" normalize per_frame : !nn.tensor<[B, T], f32>
  nn.return
}
)";
  std::string path;
  {
    absl::StatusOr<nn::Artifact> artifact =
        nn::compileSource(model, "m.mlir", nn::CompileOptions());
    ASSERT_TRUE(artifact.ok()) << artifact.status();
    path = artifact->path();
    std::string dir = path.substr(0, path.rfind('/'));
    EXPECT_NE(dir.find("/nn-artifacts-"), std::string::npos) << path;
    EXPECT_TRUE(exists(dir + "/lock"));
    EXPECT_TRUE(exists(path));
  }
  EXPECT_FALSE(exists(path));
}

} // namespace
