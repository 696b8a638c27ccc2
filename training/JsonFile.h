//===- training/JsonFile.h - JSON that users write, read strictly -*- C++
//-*-===//
//
// Stage files are JSON a person writes. llvm::json takes a repeated key as
// the last one (a second "epochs" silently wins) and recurses once per
// nesting level (100,000 unclosed '[' overflow the stack). This reader
// bounds the nesting and finds repeated keys in one pass over the text
// before llvm::json parses it, and names the place of each error as
// FILE:LINE:COLUMN.
//
//===----------------------------------------------------------------------===//

#ifndef NN_TRAINING_JSONFILE_H
#define NN_TRAINING_JSONFILE_H

#include "absl/status/statusor.h"
#include "llvm/Support/JSON.h"

#include <string>

namespace nn::training {

/// The deepest nesting of objects and arrays a JSON text may have.
constexpr int kMaxJsonDepth = 64;

/// Parses `text` (the contents of `file`, which names it in errors): an
/// error for nesting deeper than kMaxJsonDepth or an object that repeats a
/// key (naming both places), then whatever llvm::json finds.
absl::StatusOr<llvm::json::Value> parseJsonStrictly(llvm::StringRef text,
                                                    const std::string &file);

} // namespace nn::training

#endif // NN_TRAINING_JSONFILE_H
