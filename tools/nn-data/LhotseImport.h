//===- LhotseImport.h - Lhotse cut manifests to dataset arrays --*- C++ -*-===//
//
// `nn-data import CUTS.jsonl[.gz] OUT.npz`: a Lhotse cut manifest (one
// JSON object per line, as `CutSet.to_jsonl` writes it) imported like a
// Kaldi data directory (KaldiImport.h): each cut is an utterance, its
// audio the span [start, start + duration) of its recording's file
// source, its transcript the texts of its supervisions in start order.
// Bad entries are skipped with the manifest's file and line.
//
//===----------------------------------------------------------------------===//

#ifndef NN_TOOLS_NN_DATA_LHOTSEIMPORT_H
#define NN_TOOLS_NN_DATA_LHOTSEIMPORT_H

#include "tools/nn-data/KaldiImport.h"

namespace nn::data {

/// Whether `path` names a Lhotse manifest (a file ending in .jsonl or
/// .jsonl.gz) rather than a Kaldi data directory.
bool isLhotseManifest(const std::string &path);

/// Imports the cut manifest `path` (gzip-compressed when it ends in .gz).
/// Errors (not skips) are a file that cannot be read or decompressed and
/// bad options.
absl::StatusOr<KaldiImport>
importLhotseCuts(const std::string &path, const KaldiImportOptions &options,
                 const std::function<void(int64_t, int64_t)> &progress = {});

} // namespace nn::data

#endif // NN_TOOLS_NN_DATA_LHOTSEIMPORT_H
