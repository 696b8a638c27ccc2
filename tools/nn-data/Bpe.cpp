//===- Bpe.cpp - BPE vocabularies through SentencePiece -------------------===//
//
// SentencePiece runs behind SentencePieceShim.h (its headers clash with
// Abseil's); the trainer reads the transcripts from memory and hands back
// the serialized model, which is written atomically.
//
//===----------------------------------------------------------------------===//

#include "tools/nn-data/Bpe.h"

#include "tools/nn-data/KaldiImport.h"
#include "tools/nn-data/SentencePieceShim.h"

#include "nn/File.h"

#include <optional>

using namespace nn::data;

struct BpeModel::Impl {
  sentencepiece_shim::Processor processor;
};

BpeModel::BpeModel(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {
  for (int i = 0; i < impl_->processor.pieceCount(); ++i)
    tokens_.push_back(impl_->processor.piece(i));
}

BpeModel::~BpeModel() = default;

absl::Status BpeModel::train(const std::vector<std::string> &transcripts,
                             int vocabSize, const std::string &modelPath) {
  if (transcripts.empty())
    return absl::InvalidArgumentError(
        "no transcripts to train a BPE vocabulary on");
  std::map<std::string, std::string> args{
      {"model_type", "bpe"},
      {"vocab_size", std::to_string(vocabSize)},
      {"character_coverage", "1.0"},
      // Class 0 the blank: the pad piece, which encoding never produces.
      {"pad_id", "0"},
      {"pad_piece", kBlankToken},
      {"unk_id", "1"},
      {"unk_piece", kUnknownToken},
      {"bos_id", "-1"},
      {"eos_id", "-1"},
      // Deterministic: every sentence, in order, one thread.
      {"input_sentence_size", "0"},
      {"shuffle_input_sentence", "false"},
      {"num_threads", "1"},
      {"minloglevel", "2"}};
  // The model comes back serialized and is written to exactly
  // `modelPath` (a model_prefix would name two files of its own).
  std::string model;
  std::string error = sentencepiece_shim::train(transcripts, args, model);
  if (!error.empty())
    return absl::InvalidArgumentError(
        "cannot train a BPE vocabulary of " + std::to_string(vocabSize) +
        " classes on these transcripts: " + error);
  return nn::writeFileAtomically(modelPath, model);
}

absl::StatusOr<std::unique_ptr<BpeModel>>
BpeModel::load(const std::string &path) {
  auto impl = std::make_unique<Impl>();
  if (std::string error = impl->processor.load(path); !error.empty())
    return absl::InvalidArgumentError("cannot load the BPE model '" + path +
                                      "': " + error);
  if (impl->processor.pieceCount() < 2 ||
      impl->processor.piece(0) != kBlankToken ||
      impl->processor.unknownId() != 1)
    return absl::InvalidArgumentError(
        "'" + path +
        "' is not a BPE model of nn-data (class 0 must be the blank '" +
        kBlankToken + "', class 1 '" + kUnknownToken + "')");
  return std::unique_ptr<BpeModel>(new BpeModel(std::move(impl)));
}

absl::StatusOr<std::vector<int32_t>>
BpeModel::encode(const std::string &transcript) const {
  const sentencepiece_shim::Processor &processor = impl_->processor;
  std::vector<int> ids;
  if (std::string error = processor.encode(transcript, ids); !error.empty())
    return absl::InvalidArgumentError("cannot encode: " + error);
  for (int id : ids) {
    if (id != processor.unknownId())
      continue;
    // Every character of the training transcripts is a piece of its own
    // (full coverage), so the culprit is the first that is not.
    std::optional<std::vector<std::string>> chars = codePoints(transcript);
    for (const std::string &c : chars.value_or(std::vector<std::string>{}))
      if (c != " " && processor.pieceId(c) == processor.unknownId())
        return absl::InvalidArgumentError("character '" + c +
                                          "' is not in the BPE model");
    return absl::InvalidArgumentError(
        "the transcript encodes to the unknown piece '" +
        std::string(kUnknownToken) + "'");
  }
  return std::vector<int32_t>(ids.begin(), ids.end());
}
