//===- SentencePieceShim.cpp - SentencePiece without Abseil ---------------===//
//
// No Abseil header may be included here (SentencePieceShim.h says why).
//
//===----------------------------------------------------------------------===//

#include "tools/nn-data/SentencePieceShim.h"

#include <sentencepiece_processor.h>
#include <sentencepiece_trainer.h>

#include <unordered_map>

using namespace nn::data::sentencepiece_shim;

namespace {

/// The sentences, one at a time, for the trainer.
class Sentences : public sentencepiece::SentenceIterator {
public:
  explicit Sentences(const std::vector<std::string> &all) : all(all) {}
  bool done() const override { return at >= all.size(); }
  void Next() override { ++at; }
  const std::string &value() const override { return all[at]; }
  sentencepiece::util::Status status() const override {
    return sentencepiece::util::Status();
  }

private:
  const std::vector<std::string> &all;
  size_t at = 0;
};

std::string errorOf(const sentencepiece::util::Status &status) {
  return status.ok() ? std::string() : std::string(status.message());
}

} // namespace

std::string nn::data::sentencepiece_shim::train(
    const std::vector<std::string> &sentences,
    const std::map<std::string, std::string> &args, std::string &model) {
  std::unordered_map<std::string, std::string> kwargs(args.begin(), args.end());
  Sentences iterator(sentences);
  return errorOf(
      sentencepiece::SentencePieceTrainer::Train(kwargs, &iterator, &model));
}

struct Processor::Impl {
  sentencepiece::SentencePieceProcessor processor;
};

Processor::Processor() : impl(std::make_unique<Impl>()) {}
Processor::~Processor() = default;

std::string Processor::load(const std::string &path) {
  return errorOf(impl->processor.Load(path));
}

int Processor::pieceCount() const { return impl->processor.GetPieceSize(); }

std::string Processor::piece(int id) const {
  return impl->processor.IdToPiece(id);
}

int Processor::pieceId(const std::string &piece) const {
  return impl->processor.PieceToId(piece);
}

int Processor::unknownId() const { return impl->processor.unk_id(); }

std::string Processor::encode(const std::string &text,
                              std::vector<int> &ids) const {
  return errorOf(impl->processor.Encode(text, &ids));
}
