//===- nn/ErrorRate.h - edit distance, error rates, words -------*- C++ -*-===//
//
// Host-side scoring of recognized sequences against references: the
// Levenshtein alignment of a hypothesis with its reference (counts of
// substitutions, insertions and deletions), corpus-level label or word
// error rates, and the words a label sequence spells through a vocabulary
// file. What nn-decode and the dev evaluation of training print.
//
// Counting. The number of edits is the Levenshtein distance (each
// substitution, insertion and deletion costs 1). Several alignments may
// reach it with different substitution, insertion and deletion counts
// (ref "a c", hyp "b b a": two substitutions and an insertion, or two
// insertions, a match and a deletion). Among them the counts reported are
// those of the alignment with the fewest substitutions, which is the one
// with the most correct units: with the edit total fixed and
// insertions - deletions = |hyp| - |ref|, one substitution fewer is one
// insertion, one deletion and one match more. These counts are a function
// of the two sequences alone (symmetric: swapping them swaps insertions
// and deletions), not of a traversal order.
//
// How they relate to the usual scorers: sclite aligns with weights 0, 3,
// 3, 4 (match, insertion, deletion, substitution), i.e. minimizes
// 3 * edits + substitutions, so among alignments with the fewest edits it
// picks this one too; but it may pick one with more edits (ref "a a a b
// b", hyp "b b c c c": 5 substitutions here, 3 deletions and 3 insertions
// in sclite). Kaldi's compute-wer (util/edit-distance-inl.h) reports the
// same edit total and chooses among tied predecessors cell by cell
// (insertion, then deletion, then substitution); its split agrees with
// this one on most ties, not on all (ref "a c", hyp "b b a": Kaldi reports
// 2 substitutions and 1 insertion). Error rates never depend on the split.
//
// Corpus rates are sums of edits over sums of reference lengths (not the
// mean of per-utterance rates), as Kaldi's compute-wer and sclite report.
// An empty reference counts its hypothesis's units as insertions against
// zero reference units; when the total reference length is 0 the rate is
// undefined and reported as absent.
//
// No text normalization happens here (case, punctuation, noise tokens):
// references and hypotheses are compared unit for unit.
//
//===----------------------------------------------------------------------===//

#ifndef NN_ERRORRATE_H
#define NN_ERRORRATE_H

#include "absl/status/statusor.h"
#include "absl/types/span.h"

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace nn {

/// The edits that turn a reference into a hypothesis (or the sum of
/// several), and the reference length they are counted against.
struct EditCounts {
  int64_t substitutions = 0;
  int64_t insertions = 0;
  int64_t deletions = 0;
  /// Reference units (labels or words).
  int64_t referenceLength = 0;

  /// Substitutions + insertions + deletions: the Levenshtein distance.
  int64_t errors() const { return substitutions + insertions + deletions; }
  /// Reference units the alignment matches.
  int64_t correct() const {
    return referenceLength - substitutions - deletions;
  }

  EditCounts &operator+=(const EditCounts &other) {
    substitutions += other.substitutions;
    insertions += other.insertions;
    deletions += other.deletions;
    referenceLength += other.referenceLength;
    return *this;
  }
  bool operator==(const EditCounts &other) const {
    return substitutions == other.substitutions &&
           insertions == other.insertions && deletions == other.deletions &&
           referenceLength == other.referenceLength;
  }
  bool operator!=(const EditCounts &other) const { return !(*this == other); }
};

/// The edit counts of `hypothesis` against `reference` (file comment:
/// fewest edits, then fewest substitutions). O(|hyp| * |ref|) time,
/// O(min(|hyp|, |ref|)) memory.
EditCounts editDistance(absl::Span<const int32_t> hypothesis,
                        absl::Span<const int32_t> reference);
/// The same over words, compared byte for byte.
EditCounts editDistance(absl::Span<const std::string> hypothesis,
                        absl::Span<const std::string> reference);

/// One step of an alignment, in order along both sequences.
struct AlignmentStep {
  enum class Kind { match, substitution, insertion, deletion };
  Kind kind;
  /// Index into the hypothesis; -1 for a deletion.
  int64_t hypothesis;
  /// Index into the reference; -1 for an insertion.
  int64_t reference;

  bool operator==(const AlignmentStep &other) const {
    return kind == other.kind && hypothesis == other.hypothesis &&
           reference == other.reference;
  }
};

/// An alignment that realizes editDistance's counts, for reports.
struct Alignment {
  /// Equal to editDistance() of the same sequences.
  EditCounts counts;
  std::vector<AlignmentStep> steps;
};

/// An alignment of `hypothesis` with `reference` with the counts
/// editDistance() gives. Where several such alignments exist, the one
/// chosen prefers, walking back from the ends, a match or substitution,
/// then a deletion, then an insertion. O(|hyp| * |ref|) time and memory.
Alignment align(absl::Span<const int32_t> hypothesis,
                absl::Span<const int32_t> reference);
/// The same over words.
Alignment align(absl::Span<const std::string> hypothesis,
                absl::Span<const std::string> reference);

/// Totals over a corpus: edits, reference length, sentences.
class ErrorRateAccumulator {
public:
  /// Adds one utterance's counts (editDistance of its hypothesis and
  /// reference). The utterance is a sentence error when it has any edit.
  void add(const EditCounts &utterance);
  /// Adds another accumulator's totals (e.g. one per thread).
  void merge(const ErrorRateAccumulator &other);

  /// The summed counts.
  const EditCounts &totals() const { return totals_; }
  int64_t sentences() const { return sentences_; }
  int64_t sentenceErrors() const { return sentenceErrors_; }

  /// Total edits / total reference length; absent when the total
  /// reference length is 0 (totals().errors() still counts insertions).
  std::optional<double> errorRate() const;
  /// Sentences with any edit / sentences; absent when nothing was added.
  std::optional<double> sentenceErrorRate() const;

private:
  EditCounts totals_;
  int64_t sentences_ = 0;
  int64_t sentenceErrors_ = 0;
};

/// The largest vocabulary file Vocabulary::load reads (64 MiB).
inline constexpr uint64_t kMaxVocabularyFileBytes = uint64_t(64) << 20;

/// Label ids to tokens and words. A vocabulary file holds one token per
/// line, UTF-8: the first line is label 0, the next label 1, and so on
/// (the CTC blank, where there is one, is a line like any other). Lines
/// end in "\n" or "\r\n"; a final line break is optional; a leading UTF-8
/// byte-order mark is skipped. A token is not empty, holds no space, tab
/// or other ASCII whitespace, and appears once.
///
/// Words. When some token contains U+2581 ("▁", SentencePiece's word
/// boundary marker), a label sequence spells the concatenation of its
/// tokens, and each "▁" separates words: "▁the", "▁c", "at" are the
/// words "the" and "cat"; a sequence that starts without "▁" starts a
/// word all the same, and empty words (a lone "▁") vanish. When no token
/// contains it, each token is a word.
class Vocabulary {
public:
  /// Reads `path`. Errors name the path, and for a bad token the line and
  /// its label: NotFound when the file does not exist, InvalidArgument for
  /// an empty file, an empty line, whitespace inside a token (a Kaldi
  /// words.txt "word id" line), a token repeated on another line, or bytes
  /// that are not UTF-8; OutOfRange when larger than
  /// kMaxVocabularyFileBytes.
  static absl::StatusOr<Vocabulary> load(const std::string &path);
  /// A vocabulary from tokens in label order, checked as load() checks a
  /// file; `name` stands for the file in messages.
  static absl::StatusOr<Vocabulary> fromTokens(std::vector<std::string> tokens,
                                               const std::string &name);

  /// The number of tokens (labels 0 .. size() - 1).
  int64_t size() const { return static_cast<int64_t>(tokens_.size()); }
  /// The token of `label`, which must lie in [0, size()).
  const std::string &token(int32_t label) const { return tokens_[label]; }
  /// Whether some token contains "▁" (words are then SentencePiece words).
  bool marksWordStarts() const { return marksWordStarts_; }

  /// The words `labels` spell (class comment). A label outside [0, size())
  /// is an InvalidArgument error naming it, its position and the
  /// vocabulary.
  absl::StatusOr<std::vector<std::string>>
  words(absl::Span<const int32_t> labels) const;
  /// The words joined by single spaces.
  absl::StatusOr<std::string> text(absl::Span<const int32_t> labels) const;

private:
  /// Checks `tokens` and builds the vocabulary; `fromFile` says whether
  /// messages point at lines of the file `name`.
  static absl::StatusOr<Vocabulary> create(std::vector<std::string> tokens,
                                           const std::string &name,
                                           bool fromFile);

  std::string name_;
  std::vector<std::string> tokens_;
  bool marksWordStarts_ = false;
};

} // namespace nn

#endif // NN_ERRORRATE_H
