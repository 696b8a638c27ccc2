//===- SynthesizedTaskTest.h - tests over a spoken-word task --*- C++ -*-===//
//
// The fixture of the import tests: a temporary folder holding a small
// spoken-word task (SpeechTask.h) in root/task, removed after each test.
//
//===----------------------------------------------------------------------===//

#ifndef NN_UNITTESTS_SYNTHESIZEDTASKTEST_H
#define NN_UNITTESTS_SYNTHESIZEDTASKTEST_H

#include "tools/nn-data/SpeechTask.h"

#include "llvm/Support/FileSystem.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace nn::data {

class SynthesizedTaskTest : public ::testing::Test {
protected:
  /// `trainUtterances` training utterances of at most three words, one
  /// dev and one test utterance with one held-out voice each, from `seed`.
  SynthesizedTaskTest(int trainUtterances, uint64_t seed) {
    options.trainUtterances = trainUtterances;
    options.devUtterances = options.testUtterances = 1;
    options.devVariants = options.testVariants = 1;
    options.maxWords = 3;
    options.seed = seed;
  }

  void SetUp() override {
    llvm::SmallString<128> path;
    ASSERT_FALSE(llvm::sys::fs::createUniqueDirectory("nn-task", path));
    root = path.str().str();
    auto made = synthesizeSpeechTask(root + "/task", options);
    ASSERT_TRUE(made.ok()) << made.status().message();
    task = *made;
  }
  void TearDown() override { llvm::sys::fs::remove_directories(root); }

  /// The path of utterance `id`'s WAV file.
  std::string wav(const std::string &id) const {
    return root + "/task/wav/" + id + ".wav";
  }
  /// The words of `u` joined by single spaces, as its text line has them.
  static std::string text(const SpeechUtterance &u) {
    std::string words;
    for (const std::string &w : u.words)
      words += (words.empty() ? "" : " ") + w;
    return words;
  }

  SpeechTaskOptions options;
  std::string root;
  /// Every utterance of every split.
  std::vector<SpeechUtterance> task;
};

} // namespace nn::data

#endif // NN_UNITTESTS_SYNTHESIZEDTASKTEST_H
