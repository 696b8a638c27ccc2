//===- BpeTest.cpp - BPE vocabularies through SentencePiece ---------------===//
//
// A BPE model trained on made-up transcripts: class 0 the blank, 1
// `<unk>`; encoding and spelling back through nn::Vocabulary (the way
// nn-decode --vocab turns labels into words, without the model) gives the
// normalized transcript again; training is deterministic; an unknown
// character is an error naming it; bad files and sizes are errors.
//
//===----------------------------------------------------------------------===//

#include "tools/nn-data/Bpe.h"
#include "tools/nn-data/KaldiImport.h"

#include "nn/ErrorRate.h"

#include "llvm/Support/FileSystem.h"

#include <gtest/gtest.h>

#include <fstream>
#include <random>
#include <sstream>

using namespace nn;
using namespace nn::data;

namespace {

class BpeTest : public ::testing::Test {
protected:
  void SetUp() override {
    llvm::SmallString<128> path;
    ASSERT_FALSE(llvm::sys::fs::createUniqueDirectory("nn-bpe", path));
    root = path.str().str();
    // Random sentences over a few words (some sharing stems, one with a
    // non-ASCII letter), so that merges have something to find.
    const char *words[] = {"the",  "then",  "there",  "cat", "cats",
                           "sat",  "on",    "one",    "mat", "matter",
                           "über", "seven", "eleven", "a",   "zero"};
    std::mt19937 rng(3);
    for (int i = 0; i < 200; ++i) {
      std::string sentence;
      for (int n = 1 + rng() % 6; n > 0; --n)
        sentence += std::string(sentence.empty() ? "" : " ") +
                    words[rng() % (sizeof(words) / sizeof(*words))];
      transcripts.push_back(sentence);
    }
  }
  void TearDown() override { llvm::sys::fs::remove_directories(root); }

  static std::string read(const std::string &path) {
    std::ifstream in(path, std::ios::binary);
    std::stringstream s;
    s << in.rdbuf();
    return s.str();
  }

  std::string root;
  std::vector<std::string> transcripts;
};

TEST_F(BpeTest, EncodedTranscriptsSpellThemselvesBack) {
  std::string path = root + "/bpe.model";
  ASSERT_TRUE(BpeModel::train(transcripts, 48, path).ok());
  absl::StatusOr<std::unique_ptr<BpeModel>> model = BpeModel::load(path);
  ASSERT_TRUE(model.ok()) << model.status().message();
  const std::vector<std::string> &tokens = (*model)->tokens();
  ASSERT_EQ(tokens.size(), 48u);
  EXPECT_EQ(tokens[0], kBlankToken);
  EXPECT_EQ(tokens[1], kUnknownToken);
  // Pieces merged beyond single characters exist.
  EXPECT_TRUE(std::count(tokens.begin(), tokens.end(), "\u2581the") ||
              std::count(tokens.begin(), tokens.end(), "\u2581th"));
  absl::StatusOr<Vocabulary> vocabulary =
      Vocabulary::fromTokens(tokens, "bpe tokens");
  ASSERT_TRUE(vocabulary.ok()) << vocabulary.status().message();
  EXPECT_TRUE(vocabulary->marksWordStarts());
  size_t labels = 0, characters = 0;
  for (const std::string &t : transcripts) {
    absl::StatusOr<std::vector<int32_t>> encoded = (*model)->encode(t);
    ASSERT_TRUE(encoded.ok()) << encoded.status().message();
    for (int32_t label : *encoded) {
      EXPECT_GE(label, 2) << "blank or <unk> in '" << t << "'";
      EXPECT_LT(label, 48);
    }
    absl::StatusOr<std::string> text = vocabulary->text(*encoded);
    ASSERT_TRUE(text.ok()) << text.status().message();
    EXPECT_EQ(*text, t);
    labels += encoded->size();
    characters += t.size();
  }
  // Fewer labels than characters: the merges are used.
  EXPECT_LT(labels, characters * 2 / 3);
}

TEST_F(BpeTest, TrainingIsDeterministic) {
  ASSERT_TRUE(BpeModel::train(transcripts, 40, root + "/a.model").ok());
  ASSERT_TRUE(BpeModel::train(transcripts, 40, root + "/b.model").ok());
  EXPECT_EQ(read(root + "/a.model"), read(root + "/b.model"));
}

TEST_F(BpeTest, UnknownCharactersAndBadInputsAreErrors) {
  std::string path = root + "/bpe.model";
  ASSERT_TRUE(BpeModel::train(transcripts, 40, path).ok());
  absl::StatusOr<std::unique_ptr<BpeModel>> model = BpeModel::load(path);
  ASSERT_TRUE(model.ok());
  absl::StatusOr<std::vector<int32_t>> encoded = (*model)->encode("the cat q");
  ASSERT_FALSE(encoded.ok());
  EXPECT_EQ(encoded.status().message(),
            "character 'q' is not in the BPE model");

  absl::Status tooLarge = BpeModel::train(transcripts, 5000, root + "/x.model");
  EXPECT_EQ(tooLarge.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(tooLarge.message().find("Vocabulary size too high"),
            std::string::npos)
      << tooLarge.message();
  EXPECT_FALSE(llvm::sys::fs::exists(root + "/x.model"));
  EXPECT_FALSE(BpeModel::train({}, 40, root + "/x.model").ok());

  std::ofstream(root + "/tokens.txt") << "<blank>\na\n";
  absl::StatusOr<std::unique_ptr<BpeModel>> notModel =
      BpeModel::load(root + "/tokens.txt");
  ASSERT_FALSE(notModel.ok());
  EXPECT_NE(notModel.status().message().find("cannot load the BPE model '" +
                                             root + "/tokens.txt'"),
            std::string::npos);
  EXPECT_FALSE(BpeModel::load(root + "/missing.model").ok());
}

// An import with a BPE coder: labels from the model, tokens the model's
// pieces, and an utterance whose transcript holds a character the model
// lacks is skipped with its line.
TEST_F(BpeTest, ImportLabelsWithTheModel) {
  std::string path = root + "/bpe.model";
  ASSERT_TRUE(BpeModel::train(transcripts, 40, path).ok());
  absl::StatusOr<std::unique_ptr<BpeModel>> loaded = BpeModel::load(path);
  ASSERT_TRUE(loaded.ok());
  std::shared_ptr<BpeModel> model = std::move(*loaded);
  // A Kaldi directory of two utterances sharing one (silent) recording.
  std::string dir = root + "/data";
  ASSERT_FALSE(llvm::sys::fs::create_directories(dir));
  {
    std::ofstream wav(dir + "/r.wav", std::ios::binary);
    auto put = [&](uint32_t v, int bytes) {
      for (int i = 0; i < bytes; ++i)
        wav.put(char((v >> (8 * i)) & 0xff));
    };
    const uint32_t samples = 16000;
    wav << "RIFF";
    put(36 + 2 * samples, 4);
    wav << "WAVEfmt ";
    put(16, 4), put(1, 2), put(1, 2), put(16000, 4), put(32000, 4);
    put(2, 2), put(16, 2);
    wav << "data";
    put(2 * samples, 4);
    for (uint32_t i = 0; i < samples; ++i)
      put((i * 37) % 200, 2);
  }
  std::ofstream(dir + "/wav.scp")
      << "a " << dir << "/r.wav\nb " << dir << "/r.wav\n";
  std::ofstream(dir + "/text") << "a the cat sat\nb the quick cat\n";
  KaldiImportOptions options;
  options.coder = [&](const std::vector<std::string> &seen)
      -> absl::StatusOr<TranscriptCoder> {
    EXPECT_EQ(seen.size(), 2u);
    TranscriptCoder coder;
    coder.tokens = model->tokens();
    coder.encode = [model](const std::string &t) { return model->encode(t); };
    return coder;
  };
  absl::StatusOr<KaldiImport> imported = importKaldiDirectory(dir, options);
  ASSERT_TRUE(imported.ok()) << imported.status().message();
  EXPECT_EQ(imported->tokens, model->tokens());
  ASSERT_EQ(imported->utterances.size(), 1u);
  EXPECT_EQ(imported->utterances[0].id, "a");
  ASSERT_EQ(imported->problems.size(), 1u);
  EXPECT_NE(imported->problems[0].find("text:2"), std::string::npos)
      << imported->problems[0];
  EXPECT_NE(imported->problems[0].find("character 'q'"), std::string::npos)
      << imported->problems[0];
  absl::StatusOr<std::vector<int32_t>> want = model->encode("the cat sat");
  ASSERT_TRUE(want.ok());
  const Tensor &labels = imported->utterances[0].arrays.at("labels");
  ASSERT_EQ(labels.numElements(), (int64_t)want->size());
  for (size_t i = 0; i < want->size(); ++i)
    EXPECT_EQ(labels.data<int32_t>()[i], (*want)[i]);
}

} // namespace
