//===- LhotseImportTest.cpp - nn-data import of Lhotse cut manifests ------===//
//
// A cut manifest written here for a synthesized task (Lhotse's MonoCut
// layout, plain and gzip-compressed) imports to the same features and
// labels as the task's Kaldi directory, spans of recordings to the same
// frames as Kaldi segments, and every bad cut is skipped with its line.
//
//===----------------------------------------------------------------------===//

#include "tools/nn-data/LhotseImport.h"
#include "tools/nn-data/SpeechTask.h"
#include "unittests/SynthesizedTaskTest.h"

#include "nn/Audio.h"

#include "llvm/Support/FileSystem.h"

#include <gtest/gtest.h>

#include <cstring>
#include <fstream>
#include <zlib.h>

using namespace nn;
using namespace nn::data;

namespace {

class LhotseImportTest : public SynthesizedTaskTest {
protected:
  LhotseImportTest() : SynthesizedTaskTest(/*trainUtterances=*/4, /*seed=*/7) {}

  void SetUp() override {
    SynthesizedTaskTest::SetUp();
    for (const SpeechUtterance &u : task)
      if (u.split == "train")
        train.push_back(u);
  }
  double seconds(const std::string &id) const {
    AudioReadOptions keep;
    keep.sampleRate = 0;
    absl::StatusOr<Audio> audio = readAudio(wav(id), keep);
    EXPECT_TRUE(audio.ok());
    return audio.ok() ? (double)audio->samples.size() / audio->sampleRate : 0;
  }
  /// One MonoCut line as Lhotse writes it (with fields nn-data ignores).
  std::string cut(const std::string &id, const SpeechUtterance &u, double start,
                  double duration, const std::string &words,
                  const std::string &sourceType = "file") const {
    double length = seconds(u.id);
    return "{\"id\": \"" + id + "\", \"start\": " + std::to_string(start) +
           ", \"duration\": " + std::to_string(duration) +
           ", \"channel\": 0, \"supervisions\": [{\"id\": \"" + id +
           "-sup\", \"recording_id\": \"" + u.id +
           "\", \"start\": 0.0, \"duration\": " + std::to_string(duration) +
           ", \"channel\": 0, \"text\": \"" + words + "\", \"speaker\": \"" +
           u.speaker + "\"}], \"recording\": {\"id\": \"" + u.id +
           "\", \"sources\": [{\"type\": \"" + sourceType +
           "\", \"channels\": [0], \"source\": \"" + wav(u.id) +
           "\"}], \"sampling_rate\": 22050, \"duration\": " +
           std::to_string(length) +
           ", \"channel_ids\": [0]}, \"type\": \"MonoCut\"}\n";
  }

  std::vector<SpeechUtterance> train;
};

void expectSameArrays(const ImportedUtterance &a, const ImportedUtterance &b) {
  for (const char *name : {"features", "labels"}) {
    const Tensor &x = a.arrays.at(name), &y = b.arrays.at(name);
    ASSERT_EQ(x.shape(), y.shape()) << name << " of " << a.id;
    ASSERT_EQ(0, std::memcmp(x.raw(), y.raw(), x.sizeInBytes()))
        << name << " of " << a.id;
  }
}

TEST_F(LhotseImportTest, WholeRecordingCutsEqualTheKaldiImport) {
  auto kaldi = importKaldiDirectory(root + "/task/train", {});
  ASSERT_TRUE(kaldi.ok()) << kaldi.status().message();
  std::string manifest;
  for (const SpeechUtterance &u : train)
    manifest += cut(u.id, u, 0.0, seconds(u.id), text(u));
  std::ofstream(root + "/cuts.jsonl") << manifest;
  // And compressed, as Lhotse usually writes it.
  gzFile gz = gzopen((root + "/cuts.jsonl.gz").c_str(), "wb");
  ASSERT_NE(gz, nullptr);
  gzwrite(gz, manifest.data(), (unsigned)manifest.size());
  gzclose(gz);
  for (const char *name : {"/cuts.jsonl", "/cuts.jsonl.gz"}) {
    SCOPED_TRACE(name);
    ASSERT_TRUE(isLhotseManifest(root + name));
    // The vocabulary the Kaldi import wrote, so classes agree.
    KaldiImportOptions options;
    options.tokens = kaldi->tokens;
    auto lhotse = importLhotseCuts(root + name, options);
    ASSERT_TRUE(lhotse.ok()) << lhotse.status().message();
    EXPECT_TRUE(lhotse->problems.empty());
    ASSERT_EQ(lhotse->utterances.size(), kaldi->utterances.size());
    for (const ImportedUtterance &k : kaldi->utterances) {
      auto found = std::find_if(
          lhotse->utterances.begin(), lhotse->utterances.end(),
          [&](const ImportedUtterance &l) { return l.id == k.id; });
      ASSERT_NE(found, lhotse->utterances.end()) << k.id;
      expectSameArrays(*found, k);
    }
  }
  EXPECT_FALSE(isLhotseManifest(root + "/task/train"));
}

TEST_F(LhotseImportTest, CutSpansEqualKaldiSegments) {
  const SpeechUtterance &u = train[0];
  std::string dir = root + "/segmented";
  ASSERT_FALSE(llvm::sys::fs::create_directories(dir));
  std::ofstream(dir + "/wav.scp") << "rec " << wav(u.id) << "\n";
  std::ofstream(dir + "/segments") << "part rec 0.1 0.6\n";
  std::ofstream(dir + "/text") << "part " << text(u) << "\n";
  auto kaldi = importKaldiDirectory(dir, {});
  ASSERT_TRUE(kaldi.ok()) << kaldi.status().message();
  ASSERT_EQ(kaldi->utterances.size(), 1u);
  std::ofstream(root + "/part.jsonl") << cut("part", u, 0.1, 0.5, text(u));
  KaldiImportOptions options;
  options.tokens = kaldi->tokens;
  auto lhotse = importLhotseCuts(root + "/part.jsonl", options);
  ASSERT_TRUE(lhotse.ok()) << lhotse.status().message();
  ASSERT_EQ(lhotse->utterances.size(), 1u);
  expectSameArrays(lhotse->utterances[0], kaldi->utterances[0]);
}

TEST_F(LhotseImportTest, EveryBadCutIsReportedWithItsLine) {
  const SpeechUtterance &u = train[0];
  double length = seconds(u.id);
  std::string good = cut("good", u, 0, length, text(u));
  std::string manifest = good +                                            // 1
                         "{not json\n" +                                   // 2
                         "[1, 2]\n" +                                      // 3
                         cut("url", u, 0, length, text(u), "url") +        // 4
                         cut("silent", u, 0, length, "") +                 // 5
                         cut("long", u, 0, length + 1, text(u)) +          // 6
                         good +                                            // 7
                         "{\"id\": \"nostart\", \"duration\": 1.0}\n" +    // 8
                         "{\"id\": \"multi\", \"type\": \"MultiCut\"}\n" + // 9
                         "\n";
  std::ofstream(root + "/bad.jsonl") << manifest;
  auto imported = importLhotseCuts(root + "/bad.jsonl", {});
  ASSERT_TRUE(imported.ok()) << imported.status().message();
  ASSERT_EQ(imported->utterances.size(), 1u);
  EXPECT_EQ(imported->utterances[0].id, "good");
  std::string path = root + "/bad.jsonl";
  std::vector<std::string> want{
      path + ":2: not JSON",
      path + ":3: a line that is not a JSON object",
      path + ":5: cut 'silent' has an empty transcript",
      path + ":6: cut 'long' ends at",
      path + ":7: cut 'good' is listed more than once",
      path + ":8: cut 'nostart' needs a \"start\" >= 0",
      path + ":9: cut 'multi' is a MultiCut",
      // Its transcript joined the vocabulary: reported after the others,
      // as a Kaldi utterance with bad audio is.
      path + ":4: the source of recording '" + u.id +
          "' is of type 'url'; nn-data reads audio files only",
  };
  ASSERT_EQ(imported->problems.size(), want.size());
  for (size_t i = 0; i < want.size(); ++i)
    EXPECT_EQ(imported->problems[i].rfind(want[i], 0), 0u)
        << imported->problems[i];
  int64_t skipped = 0;
  for (const auto &[reason, count] : imported->skipped)
    skipped += count;
  EXPECT_EQ(skipped, 8);
  EXPECT_EQ(imported->skipped.at("empty transcript"), 1);
  EXPECT_EQ(imported->skipped.at("not an audio file"), 1);
  EXPECT_EQ(imported->skipped.at("segment outside its recording"), 1);

  auto missing = importLhotseCuts(root + "/missing.jsonl", {});
  EXPECT_EQ(missing.status().code(), absl::StatusCode::kNotFound);
  std::ofstream(root + "/broken.jsonl.gz") << "not gzip at all";
  auto broken = importLhotseCuts(root + "/broken.jsonl.gz", {});
  // zlib reads a file without a gzip header as plain data.
  ASSERT_TRUE(broken.ok()) << broken.status().message();
  EXPECT_EQ(broken->problems.size(), 1u);
}

} // namespace
