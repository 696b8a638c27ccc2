//===- nn/DataParallel.h - one batch trained by several ranks ---*- C++ -*-===//
//
// A data-parallel run draws the batches a single process would, and each
// rank (nn/Communicator.h) trains on a contiguous part of every batch. The
// compiled step sums the gradients and the losses' normalizations over
// the ranks (nn-all-reduce-gradients), so an update equals the single
// process's on the whole batch; what is left to the runtime is below:
// the split, the part, the losses and the starting state.
// docs/distributed.md.
//
//===----------------------------------------------------------------------===//

#ifndef NN_DATAPARALLEL_H
#define NN_DATAPARALLEL_H

#include "nn/Communicator.h"
#include "nn/Runtime.h"
#include "nn/Train.h"

#include "absl/status/statusor.h"

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

namespace nn {

/// The parts of a batch whose sequences have `lengths` frames, one per
/// rank: contiguous ranges [begin, end) in batch order that cover every
/// sequence once. Each cut falls where the running frame count comes
/// closest to its share of the total (ties: the earlier cut), so the
/// parts' frames are as even as contiguous cuts allow. No part is empty
/// while the batch has a sequence per part; a batch of fewer sequences
/// gives one to each of the first parts and leaves the rest empty (a
/// data-parallel run's batches have enough: BatchingOptions::minSequences).
std::vector<std::pair<int64_t, int64_t>>
splitBatch(const std::vector<int32_t> &lengths, int parts);

/// The batch dim every batched input of `manifest` leads with: the one
/// whose parts the ranks train on. An error when the inputs name none, or
/// several, or one on another axis, or an input is packed (its rows would
/// need the offsets of each sequence).
absl::StatusOr<std::string> inputBatchDim(const Manifest &manifest);

/// Sequences [begin, end) of `batch`: every input that leads with
/// `batchDim` sliced along it, the lengths of `batchDim`'s sequence dims
/// sliced, and each of those dims' padded size cut to the part's longest
/// sequence (at least 1), so that a part of short sequences does not pad
/// to the batch's longest. Other inputs are kept as they are.
absl::StatusOr<RunInputs> sliceBatch(const Manifest &manifest,
                                     const RunInputs &batch,
                                     const std::string &batchDim, int64_t begin,
                                     int64_t end);

/// `losses` (this rank's, one per loss of `manifest` in its order, or
/// none) summed over every rank: sums, normalizations and frames added,
/// the normalized values recomputed. Every rank gets the totals.
absl::Status allReduceLosses(Communicator &communicator,
                             const Manifest &manifest,
                             std::vector<LossValue> &losses);

/// Rank 0's state on every rank: each parameter of `manifest` (model and
/// optimizer state, by name), the counters and a newbob run's epochs. The
/// other ranks' state must hold every parameter with rank 0's shapes.
absl::Status broadcastState(Communicator &communicator,
                            const Manifest &manifest, TrainState &state);

/// Every rank's `mine`, indexed by rank, on every rank: what work shared
/// out by rank (a stage's alignments or hypotheses) hands back. Each rank
/// broadcasts its size, then its bytes, in rank order.
absl::StatusOr<std::vector<std::string>> allGather(Communicator &communicator,
                                                   const std::string &mine);

} // namespace nn

#endif // NN_DATAPARALLEL_H
