//===- ErrorRateTest.cpp - edit distance, error rates, vocabularies -------===//
//
// The edit counts against a plain full-matrix recursion written here that
// keeps, for every cell, the counts of *every* minimum-edit alignment, and
// picks the documented one (fewest substitutions) at the end; random
// sequences over small alphabets so that ties are common. Then hand cases,
// corpus totals, and vocabulary files with their errors.
//
//===----------------------------------------------------------------------===//

#include "nn/ErrorRate.h"

#include <gtest/gtest.h>

#include <fstream>
#include <random>
#include <set>
#include <sys/stat.h>
#include <tuple>
#include <unistd.h>

using namespace nn;

namespace {

#define EXPECT_CONTAINS(text, part)                                            \
  EXPECT_NE(std::string(text).find(part), std::string::npos)                   \
      << "expected '" << (part) << "' in: " << (text)

/// (substitutions, insertions, deletions).
using Split = std::tuple<int64_t, int64_t, int64_t>;

/// The edit total and the splits of all alignments reaching it, by a full
/// (|ref| + 1) x (|hyp| + 1) table of sets.
template <typename T>
std::pair<int64_t, std::set<Split>>
allMinimumAlignments(const std::vector<T> &hyp, const std::vector<T> &ref) {
  struct Cell {
    int64_t edits = 0;
    std::set<Split> splits;
  };
  std::vector<std::vector<Cell>> table(ref.size() + 1,
                                       std::vector<Cell>(hyp.size() + 1));
  table[0][0].splits.insert(Split{0, 0, 0});
  for (size_t i = 0; i <= ref.size(); ++i) {
    for (size_t j = 0; j <= hyp.size(); ++j) {
      if (i == 0 && j == 0)
        continue;
      // (cost, split added, predecessor) of each way into (i, j).
      std::vector<std::tuple<int64_t, Split, const Cell *>> ways;
      if (i > 0)
        ways.emplace_back(table[i - 1][j].edits + 1, Split{0, 0, 1},
                          &table[i - 1][j]);
      if (j > 0)
        ways.emplace_back(table[i][j - 1].edits + 1, Split{0, 1, 0},
                          &table[i][j - 1]);
      if (i > 0 && j > 0) {
        int64_t different = ref[i - 1] == hyp[j - 1] ? 0 : 1;
        ways.emplace_back(table[i - 1][j - 1].edits + different,
                          Split{different, 0, 0}, &table[i - 1][j - 1]);
      }
      int64_t best = std::get<0>(ways[0]);
      for (const auto &way : ways)
        best = std::min(best, std::get<0>(way));
      Cell &cell = table[i][j];
      cell.edits = best;
      for (const auto &[cost, added, from] : ways) {
        if (cost != best)
          continue;
        for (const Split &split : from->splits)
          cell.splits.insert(Split{std::get<0>(split) + std::get<0>(added),
                                   std::get<1>(split) + std::get<1>(added),
                                   std::get<2>(split) + std::get<2>(added)});
      }
    }
  }
  const Cell &last = table[ref.size()][hyp.size()];
  return {last.edits, last.splits};
}

/// What editDistance must return, from the table above.
template <typename T>
EditCounts expectedCounts(const std::vector<T> &hyp,
                          const std::vector<T> &ref) {
  auto [edits, splits] = allMinimumAlignments(hyp, ref);
  // std::set orders by substitutions first.
  const Split &fewest = *splits.begin();
  EditCounts counts;
  counts.substitutions = std::get<0>(fewest);
  counts.insertions = std::get<1>(fewest);
  counts.deletions = std::get<2>(fewest);
  counts.referenceLength = static_cast<int64_t>(ref.size());
  EXPECT_EQ(counts.errors(), edits);
  return counts;
}

std::string describe(const EditCounts &c) {
  return "S=" + std::to_string(c.substitutions) +
         " I=" + std::to_string(c.insertions) +
         " D=" + std::to_string(c.deletions) +
         " N=" + std::to_string(c.referenceLength);
}

/// Checks that `alignment` walks both sequences in order, that its steps
/// are what their kinds say, and that its counts are its steps' counts.
template <typename T>
void expectValidAlignment(const Alignment &alignment, const std::vector<T> &hyp,
                          const std::vector<T> &ref) {
  using Kind = AlignmentStep::Kind;
  int64_t nextHyp = 0, nextRef = 0;
  EditCounts counted;
  counted.referenceLength = static_cast<int64_t>(ref.size());
  for (const AlignmentStep &step : alignment.steps) {
    bool usesHyp = step.kind != Kind::deletion;
    bool usesRef = step.kind != Kind::insertion;
    ASSERT_EQ(step.hypothesis, usesHyp ? nextHyp : -1);
    ASSERT_EQ(step.reference, usesRef ? nextRef : -1);
    nextHyp += usesHyp, nextRef += usesRef;
    if (step.kind == Kind::match) {
      EXPECT_EQ(hyp[step.hypothesis], ref[step.reference]);
    }
    if (step.kind == Kind::substitution) {
      EXPECT_NE(hyp[step.hypothesis], ref[step.reference]);
      ++counted.substitutions;
    }
    counted.insertions += step.kind == Kind::insertion;
    counted.deletions += step.kind == Kind::deletion;
  }
  EXPECT_EQ(nextHyp, static_cast<int64_t>(hyp.size()));
  EXPECT_EQ(nextRef, static_cast<int64_t>(ref.size()));
  EXPECT_EQ(counted, alignment.counts)
      << describe(counted) << " vs " << describe(alignment.counts);
}

std::vector<std::string> split(const std::string &text) {
  std::vector<std::string> words;
  std::string word;
  for (char c : text + " ") {
    if (c != ' ') {
      word += c;
    } else if (!word.empty()) {
      words.push_back(word);
      word.clear();
    }
  }
  return words;
}

EditCounts counts(int64_t s, int64_t i, int64_t d, int64_t n) {
  EditCounts c;
  c.substitutions = s, c.insertions = i, c.deletions = d, c.referenceLength = n;
  return c;
}

TEST(ErrorRateTest, LabelsMatchAPlainRecursionOnRandomSequences) {
  int ties = 0, cases = 0;
  for (int alphabet = 1; alphabet <= 4; ++alphabet) {
    for (uint32_t seed = 0; seed < 600; ++seed) {
      std::mt19937 random(seed * 7919 + alphabet);
      auto draw = [&] {
        std::vector<int32_t> sequence(random() % 13);
        for (int32_t &label : sequence)
          label = static_cast<int32_t>(random() % alphabet);
        return sequence;
      };
      std::vector<int32_t> hyp = draw(), ref = draw();
      EditCounts expected = expectedCounts(hyp, ref);
      ties += allMinimumAlignments(hyp, ref).second.size() > 1;
      ++cases;
      EditCounts got = editDistance(hyp, ref);
      ASSERT_EQ(got, expected)
          << "alphabet " << alphabet << " seed " << seed << ": "
          << describe(got) << " expected " << describe(expected);
      Alignment alignment = align(hyp, ref);
      EXPECT_EQ(alignment.counts, expected);
      expectValidAlignment(alignment, hyp, ref);
    }
  }
  // The rule among ties is what this test is for: make sure it met many.
  EXPECT_GT(ties, 100) << ties << " of " << cases;
}

TEST(ErrorRateTest, WordsMatchAPlainRecursionOnRandomSequences) {
  const std::vector<std::string> dictionary = {"a", "the", "cat", "cats",
                                               "\xE2\x96\x81"
                                               "sat"};
  for (uint32_t seed = 0; seed < 500; ++seed) {
    std::mt19937 random(seed);
    auto draw = [&] {
      std::vector<std::string> words(random() % 13);
      for (std::string &word : words)
        word = dictionary[random() % dictionary.size()];
      return words;
    };
    std::vector<std::string> hyp = draw(), ref = draw();
    EditCounts expected = expectedCounts(hyp, ref);
    ASSERT_EQ(editDistance(hyp, ref), expected) << "seed " << seed;
    Alignment alignment = align(hyp, ref);
    EXPECT_EQ(alignment.counts, expected);
    expectValidAlignment(alignment, hyp, ref);
  }
}

TEST(ErrorRateTest, SwappingTheSequencesSwapsInsertionsAndDeletions) {
  for (uint32_t seed = 0; seed < 300; ++seed) {
    std::mt19937 random(seed);
    auto draw = [&] {
      std::vector<int32_t> sequence(random() % 40);
      for (int32_t &label : sequence)
        label = static_cast<int32_t>(random() % 3);
      return sequence;
    };
    std::vector<int32_t> a = draw(), b = draw();
    EditCounts forward = editDistance(a, b), backward = editDistance(b, a);
    EXPECT_EQ(forward.substitutions, backward.substitutions) << seed;
    EXPECT_EQ(forward.insertions, backward.deletions) << seed;
    EXPECT_EQ(forward.deletions, backward.insertions) << seed;
    EXPECT_EQ(align(a, b).counts, forward) << seed;
  }
}

TEST(ErrorRateTest, HandCases) {
  auto words = [](const std::string &hyp, const std::string &ref) {
    return editDistance(split(hyp), split(ref));
  };
  // "sat" -> "sit", the second "the" dropped.
  EXPECT_EQ(words("the cat sit on mat", "the cat sat on the mat"),
            counts(1, 0, 1, 6));
  EXPECT_EQ(words("the cat sat on the mat", "the cat sat on the mat"),
            counts(0, 0, 0, 6));
  EXPECT_EQ(words("a b c d", "b c d e"), counts(0, 1, 1, 4));
  // Five substitutions, where sclite's weights report three deletions and
  // three insertions (six edits).
  EXPECT_EQ(words("b b c c c", "a a a b b"), counts(5, 0, 0, 5));
  // Two alignments with three edits: {S, S, I} and {I, I, match, D}; the
  // second has fewer substitutions (Kaldi's compute-wer reports the first).
  EXPECT_EQ(words("b b a", "a c"), counts(0, 2, 1, 2));
  EXPECT_EQ(words("b a", "a b"), counts(0, 1, 1, 2));
  // Empty sides.
  EXPECT_EQ(words("x y", ""), counts(0, 2, 0, 0));
  EXPECT_EQ(words("", "x y z"), counts(0, 0, 3, 3));
  EXPECT_EQ(words("", ""), counts(0, 0, 0, 0));
  EXPECT_EQ(align(std::vector<int32_t>{}, std::vector<int32_t>{}).steps.size(),
            0u);
}

TEST(ErrorRateTest, TheAlignmentOfAHandCase) {
  using Kind = AlignmentStep::Kind;
  std::vector<std::string> hyp = split("the cat sit on mat");
  std::vector<std::string> ref = split("the cat sat on the mat");
  Alignment alignment = align(hyp, ref);
  std::vector<AlignmentStep> expected = {
      {Kind::match, 0, 0}, {Kind::match, 1, 1},     {Kind::substitution, 2, 2},
      {Kind::match, 3, 3}, {Kind::deletion, -1, 4}, {Kind::match, 4, 5}};
  EXPECT_EQ(alignment.steps, expected);
  EXPECT_EQ(alignment.counts, counts(1, 0, 1, 6));
}

TEST(ErrorRateTest, LongSequences) {
  // Every tenth label of 3000 dropped, and 7 labels changed.
  std::vector<int32_t> ref(3000), hyp;
  for (int32_t i = 0; i < 3000; ++i)
    ref[i] = i % 97;
  for (int32_t i = 0; i < 3000; ++i)
    if (i % 10 != 0)
      hyp.push_back(ref[i]);
  for (int k = 0; k < 7; ++k)
    hyp[100 + 300 * k] = 1000;
  EXPECT_EQ(editDistance(hyp, ref), counts(7, 0, 300, 3000));
  EXPECT_EQ(editDistance(ref, hyp), counts(7, 300, 0, 2700));
  EXPECT_EQ(align(hyp, ref).counts, counts(7, 0, 300, 3000));
}

TEST(ErrorRateTest, CorpusRateIsEditsOverReferenceLengthNotAMeanOfRates) {
  ErrorRateAccumulator corpus;
  corpus.add(counts(1, 0, 0, 2)); // 50%
  corpus.add(counts(0, 0, 0, 8)); // 0%
  ASSERT_TRUE(corpus.errorRate().has_value());
  EXPECT_DOUBLE_EQ(*corpus.errorRate(), 0.1); // not 0.25
  EXPECT_EQ(corpus.totals(), counts(1, 0, 0, 10));
  EXPECT_EQ(corpus.sentences(), 2);
  EXPECT_EQ(corpus.sentenceErrors(), 1);
  EXPECT_DOUBLE_EQ(*corpus.sentenceErrorRate(), 0.5);

  // Insertions against an empty reference count against the corpus.
  corpus.add(counts(0, 3, 0, 0));
  EXPECT_DOUBLE_EQ(*corpus.errorRate(), 0.4);
  EXPECT_EQ(corpus.sentenceErrors(), 2);

  ErrorRateAccumulator other;
  other.add(counts(2, 1, 1, 5));
  ErrorRateAccumulator merged = corpus;
  merged.merge(other);
  EXPECT_EQ(merged.totals(), counts(3, 4, 1, 15));
  EXPECT_EQ(merged.sentences(), 4);
  EXPECT_EQ(merged.sentenceErrors(), 3);
  EXPECT_DOUBLE_EQ(*merged.errorRate(), 8.0 / 15.0);
}

TEST(ErrorRateTest, NoReferenceUnitsGiveNoRate) {
  ErrorRateAccumulator nothing;
  EXPECT_FALSE(nothing.errorRate().has_value());
  EXPECT_FALSE(nothing.sentenceErrorRate().has_value());

  ErrorRateAccumulator onlyEmpty;
  onlyEmpty.add(
      editDistance(std::vector<int32_t>{4, 5}, std::vector<int32_t>{}));
  onlyEmpty.add(editDistance(std::vector<int32_t>{}, std::vector<int32_t>{}));
  EXPECT_FALSE(onlyEmpty.errorRate().has_value());
  EXPECT_EQ(onlyEmpty.totals().errors(), 2);
  EXPECT_EQ(onlyEmpty.sentenceErrors(), 1);
  EXPECT_DOUBLE_EQ(*onlyEmpty.sentenceErrorRate(), 0.5);
}

//===----------------------------------------------------------------------===//
// Vocabularies
//===----------------------------------------------------------------------===//

const std::string kMarker = "\xE2\x96\x81"; // U+2581

std::string writeFile(const std::string &name, const std::string &bytes) {
  std::string dir =
      ::testing::TempDir() + "/nn-error-rate-test-" + std::to_string(getpid());
  mkdir(dir.c_str(), 0755);
  std::string path = dir + "/" + name;
  std::ofstream(path, std::ios::binary) << bytes;
  return path;
}

/// Vocabulary::load's error for `path` (failing the test if it loads).
absl::Status loadError(const std::string &path) {
  absl::StatusOr<Vocabulary> vocabulary = Vocabulary::load(path);
  EXPECT_FALSE(vocabulary.ok()) << path;
  return vocabulary.status();
}

TEST(ErrorRateTest, VocabularyFileLinesAreLabels) {
  std::string path = writeFile("plain.txt", "<blank>\na\nb\r\nc");
  absl::StatusOr<Vocabulary> vocabulary = Vocabulary::load(path);
  ASSERT_TRUE(vocabulary.ok()) << vocabulary.status().message();
  EXPECT_EQ(vocabulary->size(), 4);
  EXPECT_EQ(vocabulary->token(0), "<blank>");
  EXPECT_EQ(vocabulary->token(2), "b"); // "\r\n" line end
  EXPECT_EQ(vocabulary->token(3), "c"); // no final line break
  EXPECT_FALSE(vocabulary->marksWordStarts());
  // Without "▁" each token is a word.
  absl::StatusOr<std::vector<std::string>> words =
      vocabulary->words(std::vector<int32_t>{3, 1, 1, 2});
  ASSERT_TRUE(words.ok());
  EXPECT_EQ(*words, (std::vector<std::string>{"c", "a", "a", "b"}));
  EXPECT_EQ(*vocabulary->text(std::vector<int32_t>{3, 1, 2}), "c a b");
  EXPECT_EQ(*vocabulary->text(std::vector<int32_t>{}), "");

  absl::StatusOr<Vocabulary> withMark =
      Vocabulary::load(writeFile("bom.txt", "\xEF\xBB\xBFx\ny\n"));
  ASSERT_TRUE(withMark.ok()) << withMark.status().message();
  EXPECT_EQ(withMark->size(), 2);
  EXPECT_EQ(withMark->token(0), "x");
}

TEST(ErrorRateTest, SentencePieceMarkersSeparateWords) {
  absl::StatusOr<Vocabulary> vocabulary = Vocabulary::load(
      writeFile("pieces.txt", "<blank>\n" + kMarker + "the\n" + kMarker +
                                  "c\nat\n" + kMarker + "\ns\n"));
  ASSERT_TRUE(vocabulary.ok()) << vocabulary.status().message();
  EXPECT_TRUE(vocabulary->marksWordStarts());
  auto words = [&](std::vector<int32_t> labels) {
    absl::StatusOr<std::vector<std::string>> spelled =
        vocabulary->words(labels);
    EXPECT_TRUE(spelled.ok()) << spelled.status().message();
    return spelled.ok() ? *spelled : std::vector<std::string>{"?"};
  };
  using Words = std::vector<std::string>;
  // "▁the" "▁c" "at" "▁" "s": the, cat, s.
  EXPECT_EQ(words({1, 2, 3, 4, 5}), (Words{"the", "cat", "s"}));
  // A sequence that starts inside a word starts a word all the same.
  EXPECT_EQ(words({3, 5, 1}), (Words{"ats", "the"}));
  // Lone markers make no empty words.
  EXPECT_EQ(words({4, 4, 2, 4, 4}), (Words{"c"}));
  EXPECT_EQ(words({4}), Words{});
  EXPECT_EQ(*vocabulary->text(std::vector<int32_t>{1, 2, 3, 3}), "the catat");

  // Words from labels, then their error: "the cat s" against "the cats".
  EXPECT_EQ(editDistance(words({1, 2, 3, 4, 5}), words({1, 2, 3, 5})),
            counts(1, 1, 0, 2));
}

TEST(ErrorRateTest, LabelsOutsideTheVocabularyAreErrors) {
  std::string path = writeFile("small.txt", "a\nb\nc\n");
  absl::StatusOr<Vocabulary> vocabulary = Vocabulary::load(path);
  ASSERT_TRUE(vocabulary.ok());
  absl::StatusOr<std::vector<std::string>> words =
      vocabulary->words(std::vector<int32_t>{0, 2, 3});
  ASSERT_FALSE(words.ok());
  EXPECT_EQ(words.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(words.status().message(),
            "label 3 at position 2 is outside vocabulary '" + path +
                "' (3 tokens, labels 0..2)");
  absl::StatusOr<std::string> text = vocabulary->text(std::vector<int32_t>{-1});
  ASSERT_FALSE(text.ok());
  EXPECT_CONTAINS(text.status().message(), "label -1 at position 0");
}

TEST(ErrorRateTest, BadVocabularyFiles) {
  std::string missing = ::testing::TempDir() + "/nn-no-such-vocabulary.txt";
  absl::Status status = loadError(missing);
  EXPECT_EQ(status.code(), absl::StatusCode::kNotFound);
  EXPECT_CONTAINS(status.message(), "cannot open '" + missing + "'");

  std::string empty = writeFile("empty.txt", "");
  status = loadError(empty);
  EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(status.message(), "'" + empty + "' holds no tokens");

  std::string blankLine = writeFile("blank-line.txt", "a\nb\n\nc\n");
  EXPECT_EQ(loadError(blankLine).message(),
            "'" + blankLine + "' line 3 (label 2) is empty");

  // Trailing empty lines are lines too.
  std::string trailing = writeFile("trailing.txt", "a\nb\n\n");
  EXPECT_EQ(loadError(trailing).message(),
            "'" + trailing + "' line 3 (label 2) is empty");

  std::string repeated = writeFile("repeated.txt", "a\nb\nc\nb\n");
  EXPECT_EQ(loadError(repeated).message(),
            "'" + repeated + "' line 4 (label 3): token 'b' repeats line 2 " +
                "(label 1)");

  // A Kaldi words.txt ("word id") is not a vocabulary file.
  std::string kaldi = writeFile("words.txt", "<eps> 0\nthe 1\n");
  status = loadError(kaldi);
  EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_CONTAINS(status.message(),
                  "'" + kaldi + "' line 1 (label 0) holds whitespace");

  std::string tab = writeFile("tab.txt", "a\tb\n");
  EXPECT_CONTAINS(loadError(tab).message(), "holds whitespace");

  // 0xFF never occurs in UTF-8; 0xC0 0xAF is an overlong '/'.
  std::string latin1 = writeFile("latin1.txt", "a\nb\xFF\n");
  EXPECT_EQ(loadError(latin1).message(),
            "'" + latin1 +
                "' line 2 (label 1) is not UTF-8 (byte 2 of the "
                "token)");
  std::string overlong = writeFile("overlong.txt", "\xC0\xAF\n");
  EXPECT_CONTAINS(loadError(overlong).message(), "is not UTF-8");
  std::string cut = writeFile("cut.txt", "x\xE2\x96\n");
  EXPECT_CONTAINS(loadError(cut).message(), "is not UTF-8 (byte 2");

  // Something that is not a regular file.
  std::string directory = ::testing::TempDir();
  EXPECT_CONTAINS(loadError(directory).message(),
                  "is a directory, not a regular file");
}

TEST(ErrorRateTest, VocabularyFromTokens) {
  absl::StatusOr<Vocabulary> vocabulary =
      Vocabulary::fromTokens({"x", kMarker + "y", "z"}, "inline");
  ASSERT_TRUE(vocabulary.ok()) << vocabulary.status().message();
  EXPECT_TRUE(vocabulary->marksWordStarts());
  EXPECT_EQ(*vocabulary->text(std::vector<int32_t>{0, 1, 2, 1}), "x yz y");

  absl::StatusOr<Vocabulary> repeated =
      Vocabulary::fromTokens({"x", "y", "x"}, "inline");
  ASSERT_FALSE(repeated.ok());
  EXPECT_EQ(repeated.status().message(),
            "vocabulary 'inline' label 2: token 'x' repeats label 0");
  absl::StatusOr<Vocabulary> none = Vocabulary::fromTokens({}, "inline");
  ASSERT_FALSE(none.ok());
  EXPECT_EQ(none.status().message(), "vocabulary 'inline' holds no tokens");
}

} // namespace
