//===- ErrorRate.cpp - edit distance, error rates, words ------------------===//

#include "nn/ErrorRate.h"

#include "nn/File.h"

#include <algorithm>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <vector>

using namespace nn;

namespace {

// Fewest edits, then fewest substitutions, as one integer cost: an edit
// weighs `edit` = max(|hyp|, |ref|) + 1, a substitution one more. No
// alignment has as many substitutions as `edit` (at most min(|hyp|,
// |ref|)), so comparing costs compares (edits, substitutions)
// lexicographically, and a plain minimum-cost recursion finds both.
int64_t editWeight(size_t hypothesis, size_t reference) {
  return static_cast<int64_t>(std::max(hypothesis, reference)) + 1;
}

/// The counts of a cost `cost` (see editWeight) between sequences of these
/// lengths: insertions - deletions = |hyp| - |ref| fixes the rest.
EditCounts countsOf(int64_t cost, int64_t edit, int64_t hypothesis,
                    int64_t reference) {
  EditCounts counts;
  int64_t edits = cost / edit;
  counts.substitutions = cost % edit;
  int64_t gaps = edits - counts.substitutions;
  counts.insertions = (gaps + hypothesis - reference) / 2;
  counts.deletions = (gaps - hypothesis + reference) / 2;
  counts.referenceLength = reference;
  return counts;
}

template <typename T>
EditCounts countEdits(absl::Span<const T> hypothesis,
                      absl::Span<const T> reference) {
  const int64_t edit = editWeight(hypothesis.size(), reference.size());
  // One row over the shorter sequence; insertions and deletions weigh the
  // same, so which sequence indexes rows does not change the cost.
  absl::Span<const T> outer = hypothesis, inner = reference;
  if (inner.size() > outer.size())
    std::swap(outer, inner);
  std::vector<int64_t> row(inner.size() + 1);
  for (size_t j = 0; j <= inner.size(); ++j)
    row[j] = static_cast<int64_t>(j) * edit;
  for (size_t i = 1; i <= outer.size(); ++i) {
    int64_t diagonal = row[0];
    row[0] = static_cast<int64_t>(i) * edit;
    for (size_t j = 1; j <= inner.size(); ++j) {
      int64_t cost = diagonal + (outer[i - 1] == inner[j - 1] ? 0 : edit + 1);
      cost = std::min(cost, std::min(row[j], row[j - 1]) + edit);
      diagonal = row[j];
      row[j] = cost;
    }
  }
  return countsOf(row.back(), edit, hypothesis.size(), reference.size());
}

template <typename T>
Alignment alignSequences(absl::Span<const T> hypothesis,
                         absl::Span<const T> reference) {
  const int64_t edit = editWeight(hypothesis.size(), reference.size());
  const size_t rows = reference.size() + 1, columns = hypothesis.size() + 1;
  // cost[i * columns + j]: the first i reference units against the first
  // j hypothesis units.
  std::vector<int64_t> cost(rows * columns);
  auto at = [&](size_t i, size_t j) -> int64_t & {
    return cost[i * columns + j];
  };
  auto substitution = [&](size_t i, size_t j) {
    return reference[i - 1] == hypothesis[j - 1] ? 0 : edit + 1;
  };
  for (size_t j = 0; j < columns; ++j)
    at(0, j) = static_cast<int64_t>(j) * edit;
  for (size_t i = 1; i < rows; ++i) {
    at(i, 0) = static_cast<int64_t>(i) * edit;
    for (size_t j = 1; j < columns; ++j)
      at(i, j) = std::min(at(i - 1, j - 1) + substitution(i, j),
                          std::min(at(i - 1, j), at(i, j - 1)) + edit);
  }

  Alignment result;
  result.counts.referenceLength = static_cast<int64_t>(reference.size());
  size_t i = rows - 1, j = columns - 1;
  while (i > 0 || j > 0) {
    using Kind = AlignmentStep::Kind;
    int64_t here = at(i, j);
    if (i > 0 && j > 0 && at(i - 1, j - 1) + substitution(i, j) == here) {
      --i, --j;
      bool same = reference[i] == hypothesis[j];
      result.steps.push_back({same ? Kind::match : Kind::substitution,
                              static_cast<int64_t>(j),
                              static_cast<int64_t>(i)});
      result.counts.substitutions += same ? 0 : 1;
    } else if (i > 0 && at(i - 1, j) + edit == here) {
      --i;
      result.steps.push_back({Kind::deletion, -1, static_cast<int64_t>(i)});
      ++result.counts.deletions;
    } else {
      --j;
      result.steps.push_back({Kind::insertion, static_cast<int64_t>(j), -1});
      ++result.counts.insertions;
    }
  }
  std::reverse(result.steps.begin(), result.steps.end());
  return result;
}

} // namespace

EditCounts nn::editDistance(absl::Span<const int32_t> hypothesis,
                            absl::Span<const int32_t> reference) {
  return countEdits(hypothesis, reference);
}

EditCounts nn::editDistance(absl::Span<const std::string> hypothesis,
                            absl::Span<const std::string> reference) {
  return countEdits(hypothesis, reference);
}

Alignment nn::align(absl::Span<const int32_t> hypothesis,
                    absl::Span<const int32_t> reference) {
  return alignSequences(hypothesis, reference);
}

Alignment nn::align(absl::Span<const std::string> hypothesis,
                    absl::Span<const std::string> reference) {
  return alignSequences(hypothesis, reference);
}

//===----------------------------------------------------------------------===//
// ErrorRateAccumulator
//===----------------------------------------------------------------------===//

void ErrorRateAccumulator::add(const EditCounts &utterance) {
  totals_ += utterance;
  ++sentences_;
  if (utterance.errors() > 0)
    ++sentenceErrors_;
}

void ErrorRateAccumulator::merge(const ErrorRateAccumulator &other) {
  totals_ += other.totals_;
  sentences_ += other.sentences_;
  sentenceErrors_ += other.sentenceErrors_;
}

std::optional<double> ErrorRateAccumulator::errorRate() const {
  if (totals_.referenceLength == 0)
    return std::nullopt;
  return static_cast<double>(totals_.errors()) /
         static_cast<double>(totals_.referenceLength);
}

std::optional<double> ErrorRateAccumulator::sentenceErrorRate() const {
  if (sentences_ == 0)
    return std::nullopt;
  return static_cast<double>(sentenceErrors_) / static_cast<double>(sentences_);
}

//===----------------------------------------------------------------------===//
// Vocabulary
//===----------------------------------------------------------------------===//

namespace {

/// U+2581 LOWER ONE EIGHTH BLOCK in UTF-8: SentencePiece's word marker.
constexpr std::string_view kWordMarker = "\xE2\x96\x81";

/// The offset of the first byte of `text` that does not belong to a
/// well-formed UTF-8 sequence (no overlong forms, surrogates or code
/// points past U+10FFFF), or npos.
size_t invalidUtf8At(std::string_view text) {
  size_t i = 0;
  while (i < text.size()) {
    unsigned char lead = text[i];
    size_t length;
    unsigned char low = 0x80, high = 0xBF; // bounds of the second byte
    if (lead < 0x80) {
      ++i;
      continue;
    } else if (lead >= 0xC2 && lead <= 0xDF) {
      length = 2;
    } else if (lead >= 0xE0 && lead <= 0xEF) {
      length = 3;
      if (lead == 0xE0)
        low = 0xA0; // overlong
      if (lead == 0xED)
        high = 0x9F; // surrogates
    } else if (lead >= 0xF0 && lead <= 0xF4) {
      length = 4;
      if (lead == 0xF0)
        low = 0x90; // overlong
      if (lead == 0xF4)
        high = 0x8F; // past U+10FFFF
    } else {
      return i;
    }
    if (i + length > text.size())
      return i;
    for (size_t k = 1; k < length; ++k) {
      unsigned char byte = text[i + k];
      if (k == 1 ? (byte < low || byte > high) : (byte < 0x80 || byte > 0xBF))
        return i;
    }
    i += length;
  }
  return std::string_view::npos;
}

bool isAsciiSpace(char c) {
  return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\v' ||
         c == '\f';
}

/// Where label `label` of a vocabulary comes from, for messages.
std::string where(const std::string &name, bool fromFile, size_t label) {
  if (fromFile)
    return "'" + name + "' line " + std::to_string(label + 1) + " (label " +
           std::to_string(label) + ")";
  return "vocabulary '" + name + "' label " + std::to_string(label);
}

/// Checks `tokens` as the header describes; `fromFile` chooses how
/// messages point at a token.
absl::Status checkTokens(const std::vector<std::string> &tokens,
                         const std::string &name, bool fromFile) {
  if (tokens.empty())
    return absl::InvalidArgumentError(
        (fromFile ? "'" + name + "'" : "vocabulary '" + name + "'") +
        " holds no tokens");
  std::unordered_map<std::string_view, size_t> firstLabel;
  firstLabel.reserve(tokens.size());
  for (size_t label = 0; label < tokens.size(); ++label) {
    const std::string &token = tokens[label];
    if (token.empty())
      return absl::InvalidArgumentError(where(name, fromFile, label) +
                                        " is empty");
    size_t bad = invalidUtf8At(token);
    if (bad != std::string_view::npos)
      return absl::InvalidArgumentError(
          where(name, fromFile, label) + " is not UTF-8 (byte " +
          std::to_string(bad + 1) + " of the token)");
    if (std::any_of(token.begin(), token.end(), isAsciiSpace))
      return absl::InvalidArgumentError(
          where(name, fromFile, label) + " holds whitespace ('" + token +
          "'): a vocabulary is one token per line, the first line label "
          "0, with no ids in the file");
    auto [it, inserted] = firstLabel.emplace(token, label);
    if (!inserted)
      return absl::InvalidArgumentError(
          where(name, fromFile, label) + ": token '" + token + "' repeats " +
          (fromFile ? "line " + std::to_string(it->second + 1) + " (label " +
                          std::to_string(it->second) + ")"
                    : "label " + std::to_string(it->second)));
  }
  return absl::OkStatus();
}

} // namespace

absl::StatusOr<Vocabulary> Vocabulary::load(const std::string &path) {
  absl::StatusOr<std::string> bytes =
      readRegularFile(path, kMaxVocabularyFileBytes);
  if (!bytes.ok())
    return bytes.status();
  std::string_view text = *bytes;
  constexpr std::string_view kByteOrderMark = "\xEF\xBB\xBF";
  if (text.substr(0, kByteOrderMark.size()) == kByteOrderMark)
    text.remove_prefix(kByteOrderMark.size());
  std::vector<std::string> tokens;
  while (!text.empty()) {
    size_t end = text.find('\n');
    std::string_view line = text.substr(0, end);
    text.remove_prefix(end == std::string_view::npos ? text.size() : end + 1);
    if (!line.empty() && line.back() == '\r')
      line.remove_suffix(1);
    tokens.emplace_back(line);
  }
  return create(std::move(tokens), path, /*fromFile=*/true);
}

absl::StatusOr<Vocabulary>
Vocabulary::fromTokens(std::vector<std::string> tokens,
                       const std::string &name) {
  return create(std::move(tokens), name, /*fromFile=*/false);
}

absl::StatusOr<Vocabulary> Vocabulary::create(std::vector<std::string> tokens,
                                              const std::string &name,
                                              bool fromFile) {
  if (absl::Status status = checkTokens(tokens, name, fromFile); !status.ok())
    return status;
  Vocabulary vocabulary;
  vocabulary.name_ = name;
  vocabulary.tokens_ = std::move(tokens);
  vocabulary.marksWordStarts_ =
      std::any_of(vocabulary.tokens_.begin(), vocabulary.tokens_.end(),
                  [](const std::string &token) {
                    return token.find(kWordMarker) != std::string::npos;
                  });
  return vocabulary;
}

absl::StatusOr<std::vector<std::string>>
Vocabulary::words(absl::Span<const int32_t> labels) const {
  for (size_t position = 0; position < labels.size(); ++position)
    if (labels[position] < 0 || labels[position] >= size())
      return absl::InvalidArgumentError(
          "label " + std::to_string(labels[position]) + " at position " +
          std::to_string(position) + " is outside vocabulary '" + name_ +
          "' (" + std::to_string(size()) + " tokens, labels 0.." +
          std::to_string(size() - 1) + ")");
  std::vector<std::string> words;
  if (!marksWordStarts_) {
    words.reserve(labels.size());
    for (int32_t label : labels)
      words.push_back(tokens_[label]);
    return words;
  }
  // Tokens hold no ASCII whitespace, so after the concatenation every
  // word boundary is a marker.
  std::string spelled;
  for (int32_t label : labels)
    spelled += tokens_[label];
  std::string_view rest = spelled;
  while (true) {
    size_t marker = rest.find(kWordMarker);
    std::string_view word = rest.substr(0, marker);
    if (!word.empty())
      words.emplace_back(word);
    if (marker == std::string_view::npos)
      break;
    rest.remove_prefix(marker + kWordMarker.size());
  }
  return words;
}

absl::StatusOr<std::string>
Vocabulary::text(absl::Span<const int32_t> labels) const {
  absl::StatusOr<std::vector<std::string>> spelled = words(labels);
  if (!spelled.ok())
    return spelled.status();
  std::string joined;
  for (const std::string &word : *spelled) {
    if (!joined.empty())
      joined += ' ';
    joined += word;
  }
  return joined;
}
