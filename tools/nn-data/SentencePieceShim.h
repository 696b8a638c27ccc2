//===- SentencePieceShim.h - SentencePiece without Abseil -------*- C++ -*-===//
//
// Debian's SentencePiece headers declare their own `absl::string_view`,
// which clashes with Abseil's: the translation unit that includes them
// (SentencePieceShim.cpp) includes no Abseil header, and this interface
// speaks std:: types only. Errors are strings; empty means success.
//
//===----------------------------------------------------------------------===//

#ifndef NN_TOOLS_NN_DATA_SENTENCEPIECESHIM_H
#define NN_TOOLS_NN_DATA_SENTENCEPIECESHIM_H

#include <map>
#include <memory>
#include <string>
#include <vector>

namespace nn::data::sentencepiece_shim {

/// Trains a model on `sentences` with the trainer's `args` (name to
/// value), the serialized model into `model`.
std::string train(const std::vector<std::string> &sentences,
                  const std::map<std::string, std::string> &args,
                  std::string &model);

class Processor {
public:
  Processor();
  ~Processor();
  std::string load(const std::string &path);
  int pieceCount() const;
  std::string piece(int id) const;
  int pieceId(const std::string &piece) const;
  int unknownId() const;
  std::string encode(const std::string &text, std::vector<int> &ids) const;

private:
  struct Impl;
  std::unique_ptr<Impl> impl;
};

} // namespace nn::data::sentencepiece_shim

#endif // NN_TOOLS_NN_DATA_SENTENCEPIECESHIM_H
