//===- ImportWork.h - The resumable part of nn-data import --*- C++ -*-===//
//
// An import reads audio and computes features chunk by chunk: the
// utterances of each run of kImportChunkJobs consecutive jobs are written
// to a work folder as soon as the chunk is done, with what became of every
// job. A rerun of the same import reuses each chunk whose fingerprint (the
// jobs, their labels, the feature options and each audio file's size and
// modification time) still matches, so an interrupted import resumes where
// it stopped and a changed entry is imported again. The chunks stream into
// the output afterwards, so an import never holds more than the chunks in
// flight (and, for sharded output, one shard).
//
//===----------------------------------------------------------------------===//

#ifndef NN_TOOLS_NN_DATA_IMPORTWORK_H
#define NN_TOOLS_NN_DATA_IMPORTWORK_H

#include "nn/Dataset.h"

#include "absl/status/statusor.h"

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace nn::data {

/// Jobs (utterances, or their speed-perturbed copies) per chunk: what an
/// interrupted import loses at most per worker thread.
inline constexpr size_t kImportChunkJobs = 128;

/// What became of one job: imported, or skipped with a message
/// ("FILE:LINE: what is wrong") counted under `reason`.
struct JobOutcome {
  std::string id;
  std::string problem, reason; // empty when imported
};

/// One imported utterance.
struct ImportedUtterance {
  std::string id;
  UtteranceArrays arrays; // features [frames, bins] f32, labels [n] i32
};

/// The work folder of one import.
class ImportWork {
public:
  /// Opens (creating) the folder `dir`.
  static absl::StatusOr<ImportWork> open(const std::string &dir);

  /// The folder's path.
  const std::string &dir() const { return dir_; }

  /// The outcomes of chunk `index` when its files are complete and were
  /// written for `fingerprint`; otherwise nullopt, and the chunk's files
  /// are removed so that a half-written chunk of another import is never
  /// taken for this one's.
  std::optional<std::vector<JobOutcome>> reuse(size_t index,
                                               uint64_t fingerprint) const;
  /// Writes chunk `index`: `imported` (the imported jobs, in order, ids
  /// as nn.id arrays; no arrays file when none is) first, then `outcomes`
  /// (one per job) with the fingerprint, which mark the chunk complete.
  absl::Status write(size_t index, uint64_t fingerprint,
                     const std::vector<JobOutcome> &outcomes,
                     std::vector<ImportedUtterance> imported) const;
  /// The utterances of a complete chunk, which must be `ids` in order (the
  /// imported jobs of its outcomes): InvalidArgument naming the file when
  /// the arrays file holds others, as when two imports wrote one folder.
  absl::StatusOr<std::vector<ImportedUtterance>>
  read(size_t index, const std::vector<std::string> &ids) const;
  /// Removes the folder and everything in it.
  absl::Status remove() const;

private:
  explicit ImportWork(std::string dir) : dir_(std::move(dir)) {}
  std::string path(size_t index, const char *extension) const;

  std::string dir_;
};

} // namespace nn::data

#endif // NN_TOOLS_NN_DATA_IMPORTWORK_H
