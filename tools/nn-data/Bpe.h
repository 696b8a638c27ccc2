//===- Bpe.h - BPE vocabularies through SentencePiece -----------*- C++ -*-===//
//
// Byte-pair-encoding vocabularies for `nn-data import`: a SentencePiece
// BPE model trained on the training set's transcripts, and transcripts
// encoded with it. Class 0 is the CTC blank (SentencePiece's pad piece,
// which encoding never produces) and class 1 `<unk>`; there are no
// sentence markers. The pieces mark word starts with "▁", so
// nn::Vocabulary (include/nn/ErrorRate.h) spells a label sequence back as
// words from the pieces alone: the model is needed to encode, never to
// decode or score.
//
//===----------------------------------------------------------------------===//

#ifndef NN_TOOLS_NN_DATA_BPE_H
#define NN_TOOLS_NN_DATA_BPE_H

#include "absl/status/statusor.h"

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace nn::data {

class BpeModel {
public:
  /// Trains a BPE model of `vocabSize` classes (blank and `<unk>`
  /// included) on `transcripts` (words separated by single spaces) and
  /// writes it to `modelPath`. Every character of the transcripts is
  /// covered. InvalidArgument when the size cannot be reached (too small
  /// for the characters, or larger than the text allows), with
  /// SentencePiece's reason.
  static absl::Status train(const std::vector<std::string> &transcripts,
                            int vocabSize, const std::string &modelPath);
  /// Loads a model written by train(); errors name the file.
  static absl::StatusOr<std::unique_ptr<BpeModel>>
  load(const std::string &path);
  ~BpeModel();

  /// The pieces, class i on line i of a tokens.txt.
  const std::vector<std::string> &tokens() const { return tokens_; }
  /// The labels of `transcript`. InvalidArgument when a character is not
  /// in the model (it would become `<unk>`), naming it.
  absl::StatusOr<std::vector<int32_t>>
  encode(const std::string &transcript) const;

private:
  struct Impl;
  explicit BpeModel(std::unique_ptr<Impl> impl);

  std::unique_ptr<Impl> impl_;
  std::vector<std::string> tokens_;
};

/// Class 1 of a BPE vocabulary.
inline constexpr const char *kUnknownToken = "<unk>";

} // namespace nn::data

#endif // NN_TOOLS_NN_DATA_BPE_H
