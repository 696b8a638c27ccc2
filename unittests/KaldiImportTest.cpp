//===- KaldiImportTest.cpp - nn-data import of Kaldi directories ----------===//
//
// A synthesized spoken-word task imports into features whose frame counts
// follow the audio's duration and labels that spell the transcripts back
// through the vocabulary; segments cut recordings; every bad entry is
// reported with its file and line and its utterance left out; threads do
// not change the result.
//
//===----------------------------------------------------------------------===//

#include "tools/nn-data/KaldiImport.h"
#include "tools/nn-data/SpeechTask.h"
#include "unittests/SynthesizedTaskTest.h"

#include "nn/ErrorRate.h"

#include "llvm/Support/FileSystem.h"

#include <gtest/gtest.h>

#include <cstring>
#include <fstream>
#include <sstream>

using namespace nn;
using namespace nn::data;

namespace {

class KaldiImportTest : public SynthesizedTaskTest {
protected:
  KaldiImportTest() : SynthesizedTaskTest(/*trainUtterances=*/5, /*seed=*/11) {}

  static void write(const std::string &path, const std::string &text) {
    std::ofstream(path, std::ios::binary) << text;
  }
  static std::string read(const std::string &path) {
    std::ifstream in(path, std::ios::binary);
    std::stringstream s;
    s << in.rdbuf();
    return s.str();
  }
};

TEST_F(KaldiImportTest, FeaturesFollowTheAudioAndLabelsSpellTheText) {
  auto imported = importKaldiDirectory(root + "/task/train", {});
  ASSERT_TRUE(imported.ok()) << imported.status().message();
  EXPECT_TRUE(imported->problems.empty());
  ASSERT_EQ(imported->utterances.size(), 5u);
  absl::StatusOr<Vocabulary> vocabulary =
      Vocabulary::fromTokens(imported->tokens, "tokens");
  ASSERT_TRUE(vocabulary.ok()) << vocabulary.status().message();
  EXPECT_EQ(imported->tokens[0], kBlankToken);
  std::map<std::string, std::string> transcripts;
  for (const SpeechUtterance &u : task)
    transcripts[u.id] = text(u);
  for (const ImportedUtterance &u : imported->utterances) {
    const Tensor &features = u.arrays.at("features");
    const Tensor &labels = u.arrays.at("labels");
    ASSERT_EQ(features.shape().size(), 2u);
    EXPECT_EQ(features.shape()[1], 80);
    // 25 ms frames every 10 ms at 16 kHz over the resampled duration.
    AudioReadOptions native;
    native.sampleRate = 0;
    absl::StatusOr<Audio> audio = readAudio(wav(u.id), native);
    ASSERT_TRUE(audio.ok());
    int64_t samples16k =
        ((int64_t)audio->samples.size() * 16000 + 11025) / 22050;
    int64_t frames = (samples16k - 400) / 160 + 1;
    EXPECT_NEAR(features.shape()[0], frames, 1) << u.id;
    std::vector<int32_t> l(labels.data<int32_t>(),
                           labels.data<int32_t>() + labels.numElements());
    auto words = vocabulary->text(l);
    ASSERT_TRUE(words.ok());
    EXPECT_EQ(*words, transcripts.at(u.id)) << u.id;
  }
  // More threads, the same arrays.
  KaldiImportOptions two;
  two.threads = 2;
  auto again = importKaldiDirectory(root + "/task/train", two);
  ASSERT_TRUE(again.ok());
  ASSERT_EQ(again->utterances.size(), 5u);
  for (size_t i = 0; i < 5; ++i) {
    EXPECT_EQ(again->utterances[i].id, imported->utterances[i].id);
    const Tensor &a = again->utterances[i].arrays.at("features");
    const Tensor &b = imported->utterances[i].arrays.at("features");
    ASSERT_EQ(a.numElements(), b.numElements());
    EXPECT_EQ(0, std::memcmp(a.data<float>(), b.data<float>(),
                             a.numElements() * sizeof(float)));
  }
}

// --speed-perturb 0.9,1,1.1: three copies per utterance, in that order,
// ids prefixed as Kaldi does, the same labels, about 1/factor as many
// frames; factor 1 is the plain import, feature for feature.
TEST_F(KaldiImportTest, SpeedPerturbationCopiesEachUtterance) {
  auto plain = importKaldiDirectory(root + "/task/train", {});
  ASSERT_TRUE(plain.ok()) << plain.status().message();
  KaldiImportOptions options;
  options.speeds = {0.9, 1.0, 1.1};
  auto perturbed = importKaldiDirectory(root + "/task/train", options);
  ASSERT_TRUE(perturbed.ok()) << perturbed.status().message();
  ASSERT_EQ(perturbed->utterances.size(), 3 * plain->utterances.size());
  for (size_t u = 0; u < plain->utterances.size(); ++u) {
    const ImportedUtterance &original = plain->utterances[u];
    const std::string prefixes[] = {"sp0.9-", "", "sp1.1-"};
    const double factors[] = {0.9, 1.0, 1.1};
    int64_t frames = original.arrays.at("features").shape()[0];
    for (int k = 0; k < 3; ++k) {
      const ImportedUtterance &copy = perturbed->utterances[3 * u + k];
      EXPECT_EQ(copy.id, prefixes[k] + original.id);
      const Tensor &labels = copy.arrays.at("labels");
      const Tensor &want = original.arrays.at("labels");
      ASSERT_EQ(labels.numElements(), want.numElements());
      for (int64_t i = 0; i < want.numElements(); ++i)
        EXPECT_EQ(labels.data<int32_t>()[i], want.data<int32_t>()[i]);
      const Tensor &features = copy.arrays.at("features");
      // Frames every 10 ms of 25 ms windows: duration / factor, +-2.
      EXPECT_NEAR((double)features.shape()[0], frames / factors[k], 2.0)
          << copy.id;
      if (k == 1) {
        const Tensor &f = original.arrays.at("features");
        ASSERT_EQ(features.numElements(), f.numElements());
        for (int64_t i = 0; i < f.numElements(); ++i)
          ASSERT_EQ(features.data<float>()[i], f.data<float>()[i]);
      }
    }
  }
  for (std::vector<double> bad :
       {std::vector<double>{}, {0.9, 0.9}, {3.0}, {1.0, 0.1}}) {
    options.speeds = bad;
    auto rejected = importKaldiDirectory(root + "/task/train", options);
    EXPECT_EQ(rejected.status().code(), absl::StatusCode::kInvalidArgument);
  }
}

// A segment to the end of its recording (end -1) that starts past it has
// no audio: skipped as shorter than one frame, not read out of bounds.
TEST_F(KaldiImportTest, ASegmentStartingPastItsRecordingIsSkipped) {
  std::string dir = root + "/late";
  ASSERT_FALSE(llvm::sys::fs::create_directories(dir));
  write(dir + "/wav.scp", "r " + wav(task[0].id) + "\n");
  write(dir + "/segments", "late r 999 -1\n");
  write(dir + "/text", "late a\n");
  auto imported = importKaldiDirectory(dir, {});
  ASSERT_TRUE(imported.ok()) << imported.status().message();
  EXPECT_TRUE(imported->utterances.empty());
  ASSERT_EQ(imported->problems.size(), 1u);
  EXPECT_NE(imported->problems[0].find("shorter than one frame (0 samples)"),
            std::string::npos)
      << imported->problems[0];
}

TEST_F(KaldiImportTest, SegmentsCutRecordings) {
  std::string dir = root + "/segmented";
  llvm::sys::fs::create_directories(dir);
  const std::string &id = task.front().id;
  write(dir + "/wav.scp", "rec " + wav(id) + "\n");
  write(dir + "/segments", "a rec 0.05 0.3\nb rec 0 -1\n");
  write(dir + "/text", "a x\nb y\n");
  auto imported = importKaldiDirectory(dir, {});
  ASSERT_TRUE(imported.ok()) << imported.status().message();
  ASSERT_EQ(imported->utterances.size(), 2u)
      << (imported->problems.empty() ? "" : imported->problems.front());
  // 0.25 s at 16 kHz: 4000 samples, (4000 - 400) / 160 + 1 frames.
  EXPECT_EQ(imported->utterances[0].arrays.at("features").shape()[0], 23);
  auto whole = importKaldiDirectory(root + "/task/train", {});
  ASSERT_TRUE(whole.ok());
  for (const ImportedUtterance &u : whole->utterances) {
    if (u.id != id)
      continue;
    EXPECT_EQ(imported->utterances[1].arrays.at("features").shape(),
              u.arrays.at("features").shape());
  }
}

TEST_F(KaldiImportTest, EveryBadEntryIsReportedWithItsLine) {
  std::string dir = root + "/bad";
  llvm::sys::fs::create_directories(dir);
  std::string good = wav(task.front().id);
  write(dir + "/notaudio.wav", "RIFF but not really");
  write(dir + "/wav.scp", "r1 " + good + "\n" +                 // 1
                              "r2 sox x.flac -t wav - |\n" +    // 2
                              "r3 " + dir + "/missing.wav\n" +  // 3
                              "r4 " + dir + "/notaudio.wav\n" + // 4
                              "r5 " + good + "\n" +             // 5
                              "r5 " + good + "\n" +             // 6
                              "r6\n");                          // 7
  write(dir + "/segments", "u1 r1 0 0.3\n"                      // 1
                           "u2 r2 0 0.3\n"                      // 2
                           "u3 r3 0 0.3\n"                      // 3
                           "u4 r4 0 0.3\n"                      // 4
                           "u5 r5 0 0.3\n"                      // 5
                           "u6 r6 0 0.3\n"                      // 6
                           "u7 r1 0.5 0.2\n"                    // 7
                           "u8 r1 0 999\n"                      // 8
                           "u9 r1 0 0.01\n"                     // 9
                           "u11 nowhere 0 1\n");                // 10
  write(dir + "/text", "u1 a b\n"                               // 1
                       "u2 a\n"                                 // 2
                       "u3 a\n"                                 // 3
                       "u4 a\n"                                 // 4
                       "u5 a\n"                                 // 5
                       "u6 a\n"                                 // 6
                       "u7 a\n"                                 // 7
                       "u8 a\n"                                 // 8
                       "u9 a\n"                                 // 9
                       "u10 a\n"                                // 10
                       "u11 a\n"                                // 11
                       "u12\n"                                  // 12
                       "u1 a\n");                               // 13
  KaldiImportOptions options;
  options.tokens = {kBlankToken, kWordSeparator, "a"};
  auto imported = importKaldiDirectory(dir, options);
  ASSERT_TRUE(imported.ok()) << imported.status().message();
  // u1 has a 'b' the given vocabulary lacks, so nothing is imported.
  EXPECT_TRUE(imported->utterances.empty());
  std::string scp = dir + "/wav.scp", seg = dir + "/segments",
              text = dir + "/text";
  std::vector<std::string> expected = {
      text + ":12: utterance 'u12' has an empty transcript",
      text + ":13: utterance 'u1' is listed more than once",
      text + ":1: utterance 'u1': the character 'b' is not in the vocabulary",
      text + ":2: utterance 'u2': " + scp +
          ":2: 'sox x.flac -t wav - |' is "
          "a command; nn-data reads audio "
          "files only (convert the audio "
          "first)",
      text + ":5: utterance 'u5': " + scp +
          ":6: recording 'r5' is listed more than once",
      text + ":6: utterance 'u6': " + scp +
          ":7: expected '<recording-id> <path>', got no path",
      text + ":7: utterance 'u7': " + seg +
          ":7: segment 'u7' has start 0.500000 and end 0.200000 (seconds; "
          "end -1 means the recording's end)",
      text + ":10: utterance 'u10' has no entry in segments",
      text + ":11: utterance 'u11' has no recording 'nowhere' in wav.scp",
  };
  ASSERT_GE(imported->problems.size(), expected.size());
  for (size_t i = 0; i < expected.size(); ++i)
    EXPECT_EQ(imported->problems[i], expected[i]);
  // Then the audio problems, in text's order.
  ASSERT_EQ(imported->problems.size(), expected.size() + 4);
  EXPECT_EQ(imported->problems[expected.size()].rfind(scp + ":3: ", 0), 0u);
  EXPECT_NE(imported->problems[expected.size()].find("missing.wav"),
            std::string::npos);
  EXPECT_EQ(imported->problems[expected.size() + 1].rfind(scp + ":4: ", 0), 0u);
  EXPECT_EQ(imported->problems[expected.size() + 2].rfind(
                scp + ":1: segment 'u8' ends at 999.000000 s, past the end "
                      "of its recording (",
                0),
            0u);
  EXPECT_EQ(imported->problems[expected.size() + 3],
            scp + ":1: utterance 'u9' is shorter than one frame (160 "
                  "samples)");
  int64_t skipped = 0;
  for (const auto &[reason, count] : imported->skipped)
    skipped += count;
  EXPECT_EQ(skipped, 13);
  EXPECT_EQ(imported->skipped.at("unreadable audio"), 2);

  // A directory without its lists is an error, not a skip.
  auto empty = importKaldiDirectory(root + "/nowhere", {});
  ASSERT_FALSE(empty.ok());
  EXPECT_EQ(empty.status().message(),
            "'" + root + "/nowhere/wav.scp' does not exist");
}

TEST(CharacterVocabularyTest, BlankSeparatorThenCharactersInByteOrder) {
  std::vector<std::string> tokens =
      characterVocabulary({"zwei drei", "\xC3\xA9t\xC3\xA9 a"});
  std::vector<std::string> expected = {
      kBlankToken, kWordSeparator, "a", "d", "e", "i", "r", "t", "w",
      "z",         "\xC3\xA9"};
  EXPECT_EQ(tokens, expected);
  auto labels = characterLabels("\xC3\xA9t\xC3\xA9 a", tokens);
  ASSERT_TRUE(labels.ok());
  EXPECT_EQ(*labels, (std::vector<int32_t>{10, 7, 10, 1, 2}));
  EXPECT_FALSE(characterLabels("q", tokens).ok());
  EXPECT_FALSE(characterLabels("\xFF", tokens).ok());
}

} // namespace

namespace {

/// The ids and features of an import, read from its work folder.
std::vector<ImportedUtterance> readWork(const KaldiImport &imported) {
  std::vector<ImportedUtterance> utterances;
  for (size_t c = 0; c < imported.chunkIds.size(); ++c) {
    auto chunk = imported.work->read(c, imported.chunkIds[c]);
    EXPECT_TRUE(chunk.ok()) << chunk.status().message();
    if (chunk.ok())
      for (ImportedUtterance &u : *chunk)
        utterances.push_back(std::move(u));
  }
  return utterances;
}

bool sameArrays(const UtteranceArrays &a, const UtteranceArrays &b) {
  if (a.size() != b.size())
    return false;
  for (const auto &[name, tensor] : a) {
    auto other = b.find(name);
    if (other == b.end() || other->second.shape() != tensor.shape() ||
        other->second.dtype() != tensor.dtype() ||
        std::memcmp(tensor.raw(), other->second.raw(), tensor.sizeInBytes()) !=
            0)
      return false;
  }
  return true;
}

} // namespace

// With a work folder, finished chunks are written there and a rerun reuses
// those still valid: the same utterances and skips as an import in memory;
// a chunk whose files are incomplete, or whose audio file changed, is
// imported again.
TEST_F(KaldiImportTest, ResumesFromTheWorkFolder) {
  std::string dir = root + "/resume";
  ASSERT_FALSE(llvm::sys::fs::create_directories(dir + "/wav"));
  std::string scp, lines;
  for (const SpeechUtterance &u : task) {
    ASSERT_FALSE(
        llvm::sys::fs::copy_file(wav(u.id), dir + "/wav/" + u.id + ".wav"));
    scp += u.id + " " + dir + "/wav/" + u.id + ".wav\n";
    lines += u.id + " " + text(u) + "\n";
  }
  scp += "gone " + dir + "/wav/gone.wav\n";
  lines += "gone a\n";
  write(dir + "/wav.scp", scp);
  write(dir + "/text", lines);

  KaldiImportOptions inMemory;
  auto plain = importKaldiDirectory(dir, inMemory);
  ASSERT_TRUE(plain.ok()) << plain.status().message();
  const size_t n = task.size(); // 7: train, dev and test
  ASSERT_EQ(plain->utterances.size(), n);
  ASSERT_EQ(plain->problems.size(), 1u);

  KaldiImportOptions options;
  options.workDir = root + "/work";
  options.chunkJobs = 3; // chunks [u0 u1 u2] [u3 u4 u5] [u6 gone]
  options.threads = 2;
  auto check = [&](const KaldiImport &imported, int64_t reused) {
    EXPECT_EQ(imported.reused, reused);
    EXPECT_EQ(imported.chunkIds.size(), 3u);
    EXPECT_EQ(imported.imported, (int64_t)n);
    EXPECT_TRUE(imported.utterances.empty());
    EXPECT_EQ(imported.problems, plain->problems);
    EXPECT_EQ(imported.skipped, plain->skipped);
    std::vector<ImportedUtterance> stored = readWork(imported);
    ASSERT_EQ(stored.size(), n);
    for (size_t i = 0; i < n; ++i) {
      EXPECT_EQ(stored[i].id, plain->utterances[i].id);
      EXPECT_TRUE(sameArrays(stored[i].arrays, plain->utterances[i].arrays))
          << stored[i].id;
    }
  };
  auto first = importKaldiDirectory(dir, options);
  ASSERT_TRUE(first.ok()) << first.status().message();
  check(*first, 0);
  auto again = importKaldiDirectory(dir, options);
  ASSERT_TRUE(again.ok()) << again.status().message();
  check(*again, 8);

  // Killed while the second chunk was written: its outcomes are missing.
  ASSERT_FALSE(llvm::sys::fs::remove(root + "/work/chunk-000001.txt"));
  auto resumed = importKaldiDirectory(dir, options);
  ASSERT_TRUE(resumed.ok()) << resumed.status().message();
  check(*resumed, 5);

  // An outcomes file of another version is not trusted.
  std::string outcomes = read(root + "/work/chunk-000000.txt");
  write(root + "/work/chunk-000000.txt",
        "nn-data import chunk 0" + outcomes.substr(outcomes.find('\n')));
  auto rewritten = importKaldiDirectory(dir, options);
  ASSERT_TRUE(rewritten.ok()) << rewritten.status().message();
  check(*rewritten, 5);

  // u6's audio replaced by u0's: the last chunk is imported again.
  const std::string &last = task[6].id;
  ASSERT_FALSE(
      llvm::sys::fs::copy_file(wav(task[0].id), dir + "/wav/" + last + ".wav"));
  auto changed = importKaldiDirectory(dir, options);
  ASSERT_TRUE(changed.ok()) << changed.status().message();
  EXPECT_EQ(changed->reused, 6);
  std::vector<ImportedUtterance> stored = readWork(*changed);
  ASSERT_EQ(stored.size(), n);
  EXPECT_EQ(stored[6].id, last);
  UtteranceArrays now{{"features", stored[6].arrays.at("features")}};
  UtteranceArrays u0{{"features", plain->utterances[0].arrays.at("features")}};
  EXPECT_TRUE(sameArrays(now, u0));

  // The arrays of a chunk gone, its outcomes there: imported again.
  ASSERT_FALSE(llvm::sys::fs::remove(root + "/work/chunk-000001.npz"));
  auto refilled = importKaldiDirectory(dir, options);
  ASSERT_TRUE(refilled.ok()) << refilled.status().message();
  EXPECT_EQ(refilled->reused, 5);

  // An edited transcript (u3's, with the characters it has): its chunk is
  // imported again with the new labels.
  std::string edited;
  for (const SpeechUtterance &u : task)
    edited += u.id + " " + text(u) +
              (u.id == task[3].id ? " " + u.words.front() : "") + "\n";
  write(dir + "/text", edited + "gone a\n");
  auto relabelled = importKaldiDirectory(dir, options);
  ASSERT_TRUE(relabelled.ok()) << relabelled.status().message();
  EXPECT_EQ(relabelled->reused, 5);
  stored = readWork(*relabelled);
  ASSERT_EQ(stored.size(), n);
  EXPECT_GT(stored[3].arrays.at("labels").numElements(),
            plain->utterances[3].arrays.at("labels").numElements());

  // Arrays that are not the chunk's utterances (another chunk's): an error
  // naming the file, not other utterances.
  ASSERT_FALSE(llvm::sys::fs::copy_file(root + "/work/chunk-000000.npz",
                                        root + "/work/chunk-000001.npz"));
  auto mixed = importKaldiDirectory(dir, options);
  ASSERT_TRUE(mixed.ok()) << mixed.status().message();
  auto wrong = mixed->work->read(1, mixed->chunkIds[1]);
  ASSERT_FALSE(wrong.ok());
  EXPECT_NE(wrong.status().message().find("chunk-000001.npz holds 3 "
                                          "utterances, not the 3 its outcomes "
                                          "list (first difference at position "
                                          "0)"),
            std::string::npos)
      << wrong.status().message();

  ASSERT_TRUE(changed->work->remove().ok());
  EXPECT_FALSE(llvm::sys::fs::exists(root + "/work"));

  // Chunks of one job: "gone" is a chunk whose every job is skipped, with
  // no arrays; it is reused like the others.
  options.chunkJobs = 1;
  options.workDir = root + "/single";
  auto single = importKaldiDirectory(dir, options);
  ASSERT_TRUE(single.ok()) << single.status().message();
  auto singleAgain = importKaldiDirectory(dir, options);
  ASSERT_TRUE(singleAgain.ok()) << singleAgain.status().message();
  EXPECT_EQ(singleAgain->reused, (int64_t)n + 1);
  EXPECT_EQ(singleAgain->problems, plain->problems);
  ASSERT_EQ(singleAgain->chunkIds.size(), n + 1);
  EXPECT_TRUE(singleAgain->chunkIds.back().empty());
  EXPECT_EQ(readWork(*singleAgain).size(), n);
}
