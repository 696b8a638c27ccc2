//===- SpeechTaskTest.cpp - the synthesized spoken-word task --------------===//
//
// The task's directories are what Kaldi tools read (sorted, consistent
// wav.scp / text / utt2spk / spk2utt), its audio is real speech (libsndfile
// reads it back; it is not silence), dev and test voices never speak in
// training, and the same seed writes the same bytes.
//
//===----------------------------------------------------------------------===//

#include "tools/nn-data/SpeechTask.h"

#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Path.h"

#include <gtest/gtest.h>
#include <sndfile.h>

#include <cmath>
#include <fstream>
#include <map>
#include <set>
#include <sstream>

using namespace nn::data;

namespace {

/// Fresh directories in the system's temporary folder, removed when the
/// test ends.
class SpeechTaskTest : public ::testing::Test {
protected:
  std::string freshDir(const std::string &name) {
    llvm::SmallString<128> path;
    EXPECT_FALSE(
        llvm::sys::fs::createUniqueDirectory("nn-speech-" + name, path));
    made.push_back(path.str().str());
    return made.back();
  }
  void TearDown() override {
    for (const std::string &dir : made)
      llvm::sys::fs::remove_directories(dir);
  }
  std::vector<std::string> made;
};

std::string readFile(const std::string &path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

/// The lines of a Kaldi table as (key, rest) pairs, in file order.
std::vector<std::pair<std::string, std::string>>
table(const std::string &path) {
  std::vector<std::pair<std::string, std::string>> rows;
  std::istringstream in(readFile(path));
  std::string line;
  while (std::getline(in, line)) {
    size_t space = line.find(' ');
    rows.emplace_back(line.substr(0, space),
                      space == std::string::npos ? "" : line.substr(space + 1));
  }
  return rows;
}

SpeechTaskOptions small() {
  SpeechTaskOptions o;
  o.trainUtterances = 6;
  o.devUtterances = 3;
  o.testUtterances = 3;
  o.devVariants = 2;
  o.testVariants = 2;
  o.maxWords = 3;
  o.seed = 7;
  return o;
}

TEST_F(SpeechTaskTest, KaldiDirectoriesDescribeRealSpeech) {
  std::string dir = freshDir("kaldi");
  absl::StatusOr<std::vector<SpeechUtterance>> made =
      synthesizeSpeechTask(dir, small());
  ASSERT_TRUE(made.ok()) << made.status().message();
  ASSERT_EQ(made->size(), 12u);
  std::vector<std::string> vocabulary = *speechTaskWords("digits");
  std::set<std::string> digits(vocabulary.begin(), vocabulary.end());
  std::map<std::string, std::set<std::string>> speakers;
  for (const char *split : {"train", "dev", "test"}) {
    std::string base = dir + "/" + split + "/";
    auto scp = table(base + "wav.scp"), text = table(base + "text"),
         utt2spk = table(base + "utt2spk"), spk2utt = table(base + "spk2utt");
    size_t expected = std::string(split) == "train" ? 6 : 3;
    ASSERT_EQ(scp.size(), expected) << split;
    ASSERT_EQ(text.size(), expected);
    ASSERT_EQ(utt2spk.size(), expected);
    size_t listed = 0;
    for (auto &[speaker, ids] : spk2utt) {
      std::istringstream in(ids);
      std::string id;
      while (in >> id) {
        ++listed;
        EXPECT_EQ(id.rfind(speaker + "-", 0), 0u) << id;
      }
    }
    EXPECT_EQ(listed, expected);
    for (size_t i = 0; i < expected; ++i) {
      // One id per line, in byte order, the same in every table.
      if (i) {
        EXPECT_LT(scp[i - 1].first, scp[i].first);
      }
      EXPECT_EQ(text[i].first, scp[i].first);
      EXPECT_EQ(utt2spk[i].first, scp[i].first);
      EXPECT_EQ(scp[i].first.rfind(utt2spk[i].second + "-", 0), 0u);
      speakers[split].insert(utt2spk[i].second);
      std::istringstream words(text[i].second);
      std::string word;
      int count = 0;
      while (words >> word) {
        EXPECT_TRUE(digits.count(word)) << word;
        ++count;
      }
      EXPECT_GE(count, 1);
      EXPECT_LE(count, 3);

      // The audio: mono 16-bit at eSpeak NG's rate, audible, about as
      // long as its words (0.1 .. 3 s per word at 130 .. 210 wpm).
      SF_INFO info{};
      SNDFILE *file = sf_open(scp[i].second.c_str(), SFM_READ, &info);
      ASSERT_TRUE(file) << scp[i].second << ": " << sf_strerror(nullptr);
      EXPECT_EQ(info.channels, 1);
      EXPECT_EQ(info.samplerate, 22050);
      EXPECT_EQ(info.format, SF_FORMAT_WAV | SF_FORMAT_PCM_16);
      std::vector<short> pcm(info.frames);
      ASSERT_EQ(sf_read_short(file, pcm.data(), pcm.size()),
                (sf_count_t)pcm.size());
      sf_close(file);
      double seconds = (double)info.frames / info.samplerate;
      EXPECT_GT(seconds, 0.1 * count);
      EXPECT_LT(seconds, 3.0 * count);
      double power = 0;
      for (short s : pcm)
        power += (double)s * s;
      EXPECT_GT(std::sqrt(power / pcm.size()), 100.0) << scp[i].first;
    }
  }
  // Voices the training set never heard.
  for (const char *held : {"dev", "test"})
    for (const std::string &speaker : speakers[held])
      EXPECT_FALSE(speakers["train"].count(speaker)) << speaker;
  for (const std::string &speaker : speakers["dev"])
    EXPECT_FALSE(speakers["test"].count(speaker)) << speaker;
  std::string task = readFile(dir + "/task.json");
  EXPECT_NE(task.find("\"sample_rate\": 22050"), std::string::npos);
  EXPECT_NE(task.find("\"dev\": {\"utterances\": 3"), std::string::npos);
}

TEST_F(SpeechTaskTest, TheSeedDeterminesEveryByte) {
  SpeechTaskOptions o = small();
  o.noise = true;
  std::string a = freshDir("a"), b = freshDir("b"), c = freshDir("c");
  auto first = synthesizeSpeechTask(a, o);
  auto second = synthesizeSpeechTask(b, o);
  o.seed = 8;
  auto other = synthesizeSpeechTask(c, o);
  ASSERT_TRUE(first.ok() && second.ok() && other.ok());
  EXPECT_EQ(readFile(a + "/train/text"), readFile(b + "/train/text"));
  for (const SpeechUtterance &u : *first)
    EXPECT_EQ(readFile(a + "/wav/" + u.id + ".wav"),
              readFile(b + "/wav/" + u.id + ".wav"))
        << u.id;
  EXPECT_NE(readFile(a + "/train/text"), readFile(c + "/train/text"));
  // An utterance does not depend on how many the other splits have.
  o.seed = 7;
  o.trainUtterances = 2;
  std::string d = freshDir("d");
  auto fewer = synthesizeSpeechTask(d, o);
  ASSERT_TRUE(fewer.ok());
  EXPECT_EQ(readFile(a + "/dev/text"), readFile(d + "/dev/text"));
}

TEST_F(SpeechTaskTest, NoisyAudioIsNoisierThanClean) {
  SpeechTaskOptions o = small();
  o.trainUtterances = 1;
  o.devUtterances = o.testUtterances = 0;
  std::string clean = freshDir("clean"), noisy = freshDir("noisy");
  auto c = synthesizeSpeechTask(clean, o);
  o.noise = true;
  o.minSnrDb = o.maxSnrDb = 5;
  auto n = synthesizeSpeechTask(noisy, o);
  ASSERT_TRUE(c.ok() && n.ok());
  ASSERT_EQ(c->front().id, n->front().id);
  EXPECT_TRUE(std::isnan(c->front().snrDb));
  EXPECT_EQ(n->front().snrDb, 5);
  auto read = [](const std::string &path) {
    SF_INFO info{};
    SNDFILE *file = sf_open(path.c_str(), SFM_READ, &info);
    std::vector<short> pcm(file ? info.frames : 0);
    if (file) {
      sf_read_short(file, pcm.data(), pcm.size());
      sf_close(file);
    }
    return pcm;
  };
  std::vector<short> a = read(clean + "/wav/" + c->front().id + ".wav");
  std::vector<short> b = read(noisy + "/wav/" + n->front().id + ".wav");
  ASSERT_EQ(a.size(), b.size());
  ASSERT_FALSE(a.empty());
  // The added noise has 1/10^0.5 of the speech's power (5 dB), within
  // what clipping and a finite sample allow.
  double speech = 0, noise = 0;
  for (size_t i = 0; i < a.size(); ++i) {
    speech += (double)a[i] * a[i];
    noise += ((double)b[i] - a[i]) * ((double)b[i] - a[i]);
  }
  double snr = 10 * std::log10(speech / noise);
  EXPECT_NEAR(snr, 5.0, 0.5);
}

TEST_F(SpeechTaskTest, BadOptionsSayWhatIsWrong) {
  std::string dir = freshDir("bad");
  auto message = [&](SpeechTaskOptions o) {
    auto made = synthesizeSpeechTask(dir, o);
    EXPECT_FALSE(made.ok());
    return std::string(made.status().message());
  };
  SpeechTaskOptions o = small();
  o.vocabulary = "letters";
  EXPECT_EQ(message(o), "unknown vocabulary 'letters' (known: digits, words)");
  o = small();
  o.devVariants = 40;
  o.testVariants = 40;
  EXPECT_EQ(message(o).find("dev and test reserve 80 voice variants"), 0u);
  o = small();
  o.minWords = 3;
  o.maxWords = 2;
  EXPECT_EQ(message(o),
            "words per utterance must satisfy 1 <= min <= max, got 3 .. 2");
  o = small();
  o.maxPitch = 120;
  EXPECT_EQ(message(o), "the pitch must lie in 0 .. 99, min <= max");
  // A file where the directory should be.
  std::string file = dir + "/occupied";
  std::ofstream(file) << "x";
  auto made = synthesizeSpeechTask(file, small());
  ASSERT_FALSE(made.ok());
  EXPECT_EQ(std::string(made.status().message()).find("cannot create '"), 0u);
}

TEST_F(SpeechTaskTest, VocabulariesHaveDistinctWords) {
  for (const char *name : {"digits", "words"}) {
    auto words = speechTaskWords(name);
    ASSERT_TRUE(words.ok());
    std::set<std::string> unique(words->begin(), words->end());
    EXPECT_EQ(unique.size(), words->size()) << name;
  }
  EXPECT_EQ(speechTaskWords("digits")->size(), 10u);
  EXPECT_GE(speechTaskWords("words")->size(), 250u);
  std::set<std::string> variants(speechTaskVariants().begin(),
                                 speechTaskVariants().end());
  EXPECT_EQ(variants.size(), speechTaskVariants().size());
}

} // namespace
