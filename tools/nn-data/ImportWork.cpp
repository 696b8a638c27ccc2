//===- ImportWork.cpp - The resumable part of nn-data import -------------===//

#include "tools/nn-data/ImportWork.h"

#include "nn/File.h"
#include "nn/Npy.h"

#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Path.h"

#include <algorithm>
#include <cstdio>
#include <fstream>
#include <sstream>

namespace nn::data {
namespace {

/// The first line of an outcomes file; another version is not reused.
constexpr const char *kOutcomesHeader = "nn-data import chunk 1";

/// `text` on one line without tabs, as the outcomes file stores fields.
std::string oneField(const std::string &text) {
  std::string field = text;
  for (char &c : field)
    if (c == '\t' || c == '\n' || c == '\r')
      c = ' ';
  return field;
}

std::string hex(uint64_t value) {
  char text[17];
  std::snprintf(text, sizeof(text), "%016llx", (unsigned long long)value);
  return text;
}

} // namespace

absl::StatusOr<ImportWork> ImportWork::open(const std::string &dir) {
  if (std::error_code ec = llvm::sys::fs::create_directories(dir))
    return absl::InternalError("cannot create the import's work folder '" +
                               dir + "': " + ec.message());
  return ImportWork(dir);
}

std::string ImportWork::path(size_t index, const char *extension) const {
  char name[40];
  std::snprintf(name, sizeof(name), "chunk-%06zu.%s", index, extension);
  llvm::SmallString<256> joined(dir_);
  llvm::sys::path::append(joined, name);
  return joined.str().str();
}

std::optional<std::vector<JobOutcome>>
ImportWork::reuse(size_t index, uint64_t fingerprint) const {
  std::string arrays = path(index, "npz"), outcomes = path(index, "txt");
  auto discard = [&]() -> std::optional<std::vector<JobOutcome>> {
    llvm::sys::fs::remove(outcomes);
    llvm::sys::fs::remove(arrays);
    return std::nullopt;
  };
  std::ifstream in(outcomes, std::ios::binary);
  if (!in)
    return discard();
  std::string line;
  if (!std::getline(in, line) || line != kOutcomesHeader ||
      !std::getline(in, line) || line != "fingerprint " + hex(fingerprint))
    return discard();
  std::vector<JobOutcome> result;
  while (std::getline(in, line)) {
    std::vector<std::string> fields;
    std::stringstream split(line);
    for (std::string field; std::getline(split, field, '\t');)
      fields.push_back(field);
    if (fields.size() == 2 && fields[0] == "ok")
      result.push_back({fields[1], "", ""});
    else if (fields.size() == 4 && fields[0] == "skip")
      result.push_back({fields[1], fields[3], fields[2]});
    else
      return discard();
  }
  // A chunk that imported anything has its arrays file.
  for (const JobOutcome &outcome : result)
    if (outcome.problem.empty() && !llvm::sys::fs::exists(arrays))
      return discard();
  return result;
}

absl::Status ImportWork::write(size_t index, uint64_t fingerprint,
                               const std::vector<JobOutcome> &outcomes,
                               std::vector<ImportedUtterance> imported) const {
  std::vector<UtteranceArrays> utterances;
  for (ImportedUtterance &u : imported) {
    absl::StatusOr<std::vector<int32_t>> codePoints =
        utteranceIdCodePoints(u.id);
    if (!codePoints.ok())
      return codePoints.status();
    u.arrays[kIdArray] = Tensor::of<int32_t>(
        DType::i32, {(int64_t)codePoints->size()}, *codePoints);
    utterances.push_back(std::move(u.arrays));
  }
  // The arrays first: the outcomes file is what marks a chunk complete. A
  // chunk whose every job was skipped has no arrays (an archive without
  // arrays is not a valid .npz).
  if (utterances.empty())
    llvm::sys::fs::remove(path(index, "npz"));
  else if (absl::Status status = writeNpz(
               path(index, "npz"),
               concatenateUtterances(utterances, 0, utterances.size()));
           !status.ok())
    return status;
  std::string text =
      std::string(kOutcomesHeader) + "\nfingerprint " + hex(fingerprint) + "\n";
  for (const JobOutcome &outcome : outcomes)
    text += outcome.problem.empty() ? "ok\t" + oneField(outcome.id) + "\n"
                                    : "skip\t" + oneField(outcome.id) + "\t" +
                                          oneField(outcome.reason) + "\t" +
                                          oneField(outcome.problem) + "\n";
  return writeFileAtomically(path(index, "txt"), text);
}

absl::StatusOr<std::vector<ImportedUtterance>>
ImportWork::read(size_t index, const std::vector<std::string> &ids) const {
  if (ids.empty())
    return std::vector<ImportedUtterance>();
  std::map<std::string, Tensor> arrays;
  std::string file = path(index, "npz");
  if (absl::Status status = readNpz(file, arrays); !status.ok())
    return status;
  absl::StatusOr<std::vector<UtteranceArrays>> split =
      splitUtterances(arrays, file);
  if (!split.ok())
    return split.status();
  std::vector<ImportedUtterance> utterances;
  for (UtteranceArrays &u : *split) {
    auto id = u.find(kIdArray);
    if (id == u.end() || id->second.dtype() != DType::i32)
      return absl::InvalidArgumentError(file + ": an utterance without " +
                                        std::string(kIdArray));
    const Tensor &codePoints = id->second;
    std::string text = utf8FromCodePoints(absl::Span<const int32_t>(
        codePoints.data<int32_t>(), (size_t)codePoints.numElements()));
    u.erase(id);
    utterances.push_back({std::move(text), std::move(u)});
  }
  for (size_t i = 0; i < std::max(ids.size(), utterances.size()); ++i)
    if (i >= ids.size() || i >= utterances.size() || ids[i] != utterances[i].id)
      return absl::InvalidArgumentError(
          file + " holds " + std::to_string(utterances.size()) +
          " utterances, not the " + std::to_string(ids.size()) +
          " its outcomes list (first difference at position " +
          std::to_string(i) + "); remove the work folder '" + dir_ +
          "' and import again");
  return utterances;
}

absl::Status ImportWork::remove() const {
  if (std::error_code ec = llvm::sys::fs::remove_directories(dir_))
    return absl::InternalError("cannot remove the import's work folder '" +
                               dir_ + "': " + ec.message());
  return absl::OkStatus();
}

} // namespace nn::data
