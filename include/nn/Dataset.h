//===- nn/Dataset.h - training data on disk and its batches -----*- C++ -*-===//
//
// What an ASR user has: per-utterance arrays (features, frame targets,
// label sequences). On disk a dataset is one or more shards, each an .npz
// archive of concatenated arrays (docs/training.md):
//
//   NAME           [sum of lengths, ...] the utterances' arrays one after
//                  the other along axis 0, for a graph input [B, T, ...]
//   NAME.lengths   [utterances] i32: each utterance's length along axis 0
//   NAME           [utterances, ...] for a per-utterance input [B, ...]
//
// An array named `nn.keep` ([utterances] integer, 0 or 1) leaves the
// utterances with 0 out: an align stage marks those no alignment path
// fits. An optional `nn.id` ([sum of lengths] integer Unicode code points,
// with `nn.id.lengths`) names each utterance (utteranceId); the graph never
// sees it.
//
// `nn-data convert` writes shards from a folder of per-utterance .npy
// files. Loading reads every shard and checks it against the model before
// anything trains; batches then follow RETURNN/fairseq practice: budgets
// of sequences and padded frames, utterances of similar length batched
// together (bucketing), a shuffle per epoch from a seed.
//
//===----------------------------------------------------------------------===//

#ifndef NN_DATASET_H
#define NN_DATASET_H

#include "nn/Runtime.h"

#include "absl/status/statusor.h"
#include "absl/types/span.h"

#include <cstdint>
#include <map>
#include <string>
#include <vector>

namespace nn {

/// The graph input that batches fill with each frame's weight in the
/// loss: [B, T] f32 along the batching dim, or [B, A] along the positions
/// of an RNN-T path input (each position weighs as its frame), for
/// `nn.mark_loss ... weights`.
constexpr const char *kChunkWeightsInput = "chunk_weights";

/// How chunked training cuts utterances (`nn-train --chunking`), after
/// RETURNN's `chunking = "size:step"`: chunks of `size` frames start at
/// frames 0, step, 2 step, ... and the one that reaches the utterance's
/// end is the last (shorter utterances are one chunk). RETURNN starts
/// more while the start is inside the utterance; they lie inside the last
/// one here and would count no frame.
///
/// Overlapping chunks (step < size) share frames, and each frame counts in
/// the loss once (RETURNN counts it in every chunk): in the chunk where it
/// lies farthest from a cut, the nearer of the chunk's two ends that is not
/// the utterance's own start or end; ties go to the earlier chunk. For two
/// chunks that is the middle of their overlap. A chunk weights the frames
/// it does not count 0 through kChunkWeightsInput.
///
/// Frame-level inputs (along the batching dim) are cut with the frames.
/// With `labels` and `alignment` set (transducer alignments), the input
/// `labels` of a chunk is the labels its frames of `alignment` emit, every
/// value but `blank` in order: the segmentation by emitted blanks. An RNA
/// `alignment` runs along the frames; an RNN-T path (T + U positions along
/// a dim of its own, each frame's labels followed by its blank) is cut
/// with them, at the blank that ends the chunk's frames before its start
/// and at the one that ends its last frame.
struct ChunkingOptions {
  /// Frames per chunk and between chunk starts; 0: no chunking.
  int64_t size = 0, step = 0;
  /// The transducer rule, or empty: the input whose values each chunk
  /// gets from the alignment input `alignment` (RNA, or an RNN-T path),
  /// and the class that alignment emits for no label.
  std::string labels, alignment;
  int64_t blank = 0;

  bool enabled() const { return size > 0; }
  bool overlaps() const { return enabled() && step < size; }
  /// The spec it was parsed from, normalized.
  std::string str() const;
};

/// Parses `SIZE:STEP` (1 <= STEP <= SIZE) with, for transducer
/// alignments, `,labels=NAME,alignment=NAME[,blank=ID]` (blank 0 by
/// default). "" is no chunking.
absl::StatusOr<ChunkingOptions> parseChunking(const std::string &spec);

class Dataset {
public:
  /// An integer sequence per utterance that the caller reads on the host
  /// (hostSequence) and no graph input takes: the references a decoder's
  /// hypotheses are scored against. Stored like a sequence input: NAME
  /// [sum of lengths] i32 or i64 (values within i32) with NAME.lengths.
  /// Checked for every utterance, those nn.keep leaves out too.
  struct HostArray {
    std::string name;
    /// Whether a dataset without it loads (hasHostArray() then says no);
    /// it is then missing from every shard, or an error names the first
    /// shard that lacks or holds it against the others. An optional array
    /// is there only with NAME.lengths (NAME alone may be a per-utterance
    /// value of the same name).
    bool optional = false;
  };

  /// What loading does with an utterance that has no frames (length 0
  /// along the batching dim).
  enum class WithoutFrames {
    /// Left out and counted (withoutFrames()): training and evaluation
    /// have nothing to run it on.
    leaveOut,
    /// Kept: it counts in size() with length 0, but epochBatches never
    /// batches it. For decoders, whose hypothesis for it is the empty one
    /// (its reference labels all deletions), not an utterance left out.
    keep,
  };

  /// Reads `path` (an .npz shard, or a directory whose *.npz files are the
  /// shards, in name order) and checks it against the inputs of
  /// `manifest` that are not the train step's own (learning_rate, step,
  /// dropout_seed): every such input has its array, of the input's dtype
  /// and static sizes; sequence axes have lengths that cover the arrays
  /// exactly; inputs that share a sequence dim agree on each utterance's
  /// length; class indices lie within the manifest's bounds. Errors name
  /// the file, the array and the utterance.
  static absl::StatusOr<Dataset> load(const std::string &path,
                                      const Manifest &manifest);
  /// The dataset `paths[0]` with the arrays of overlays `paths[1..]`
  /// added: each overlay has as many shards as the dataset, and its k-th
  /// shard (in name order) holds arrays of the k-th shard's utterances,
  /// under names the dataset does not use. What the alignment stage of a
  /// stage file writes next to the data (docs/sequence-training.md).
  static absl::StatusOr<Dataset> load(const std::vector<std::string> &paths,
                                      const Manifest &manifest);
  /// The same, also reading `hostArrays` from the dataset (or an overlay),
  /// and doing with utterances without frames what `withoutFrames` says.
  static absl::StatusOr<Dataset>
  load(const std::vector<std::string> &paths, const Manifest &manifest,
       const std::vector<HostArray> &hostArrays,
       WithoutFrames withoutFrames = WithoutFrames::leaveOut);

  /// load() in parts, for data that is not in files (and the fuzz target):
  /// an empty dataset for `manifest`'s inputs; then each shard from its
  /// sources' arrays (the dataset's, then its overlays', each with the
  /// file name errors give), checked as load() checks them; then finish()
  /// (an error when no utterance is left; `path` names the dataset).
  using SourceArrays = std::pair<std::string, std::map<std::string, Tensor>>;
  static absl::StatusOr<Dataset>
  forModel(const Manifest &manifest,
           const std::vector<HostArray> &hostArrays = {},
           WithoutFrames withoutFrames = WithoutFrames::leaveOut);
  absl::Status addShard(std::vector<SourceArrays> sources,
                        const Manifest &manifest);
  absl::Status finish(const std::string &path) const;

  /// The shards of `path` as load() reads them: the file itself, or a
  /// directory's *.npz files in name order except kFeatureStatsFile.
  static absl::StatusOr<std::vector<std::string>>
  shardPaths(const std::string &path);

  /// The dataset's utterances: those `nn.keep` left in, with frames (and,
  /// loaded with WithoutFrames::keep, those without).
  int64_t size() const { return (int64_t)utterances.size(); }
  /// The utterances `nn.keep` left out.
  int64_t leftOut() const { return leftOutCount; }
  /// The utterances `nn.keep` left in that have no frames along the
  /// batching dim: left out (nothing to train on; a batch of them would
  /// have no padded frame), or kept when keepsWithoutFrames().
  int64_t withoutFrames() const { return withoutFramesCount; }
  /// Whether the utterances without frames are among size() (loaded with
  /// WithoutFrames::keep).
  bool keepsWithoutFrames() const {
    return withoutFramesRule == WithoutFrames::keep;
  }
  /// The length of utterance `u` along the batching dim: the first root
  /// sequence dim of the graph (its frames), or 1 without one; 0 for a
  /// kept utterance without frames.
  int64_t length(int64_t u) const { return utterances[u].length; }
  /// The batching dim's name ("" when the graph has no sequence dim).
  const std::string &lengthDim() const { return batchingDim; }
  /// The shards in load order and the utterances each holds (those left
  /// out too); the dataset's utterances run shard by shard in file order.
  int64_t shardCount() const { return (int64_t)shards.size(); }
  /// The dataset's own file of shard `shard` (not its overlays').
  const std::string &shardPath(int64_t shard) const {
    return shards[shard].path;
  }
  int64_t shardUtterances(int64_t shard) const {
    return shards[shard].utterances;
  }
  /// Where utterance `u` is: its shard and its position in the shard's
  /// arrays.
  std::pair<int64_t, int64_t> origin(int64_t u) const {
    return {utterances[u].shard, utterances[u].index};
  }
  /// The name of utterance `u`: its `nn.id`, UTF-8; without one, the
  /// shard's file name without ".npz", a colon and the utterance's
  /// position in the shard ("shard-00001:17"). Ids are not checked for
  /// repeats (data may repeat an utterance on purpose).
  std::string utteranceId(int64_t u) const;
  /// Whether the dataset holds host array `name` (one asked for at load).
  bool hasHostArray(const std::string &name) const;
  /// The values of host array `name` (hasHostArray) for utterance `u`.
  absl::Span<const int32_t> hostSequence(const std::string &name,
                                         int64_t u) const;
  /// The padded batch of `members` as graph inputs and lengths. Padding
  /// holds 0 (floats) and -1 (integers); every sequence axis is padded to
  /// at least 1 (a batch whose utterances have no labels). A graph input
  /// kChunkWeightsInput gets each frame's weight: 1, or 0 at the frames of
  /// a chunk that a neighbouring chunk counts.
  RunInputs batch(const std::vector<int64_t> &members) const;
  /// This dataset with every utterance cut into chunks along the batching
  /// dim (the rules are at ChunkingOptions): each chunk is an utterance of
  /// the result, batched like one, named by its utterance's id.
  /// InvalidArgument when an input cannot be cut: one along another
  /// sequence dim (except the labels of the transducer rule) or along a
  /// dim derived from the frames; chunks that overlap for a graph without
  /// the kChunkWeightsInput input; a dataset holding host arrays (they
  /// are per utterance). The rvalue form reuses the shards' memory.
  absl::StatusOr<Dataset> chunked(const ChunkingOptions &options) const &;
  absl::StatusOr<Dataset> chunked(const ChunkingOptions &options) &&;
  /// The chunks of one utterance of `length` frames, as chunked() cuts
  /// them; each counts at least one frame (of an utterance with frames).
  struct Chunk {
    /// The chunk's frames [start, start + length) of the utterance.
    int64_t start = 0, length = 0;
    /// The frames it counts, [countBegin, countEnd) within the chunk.
    int64_t countBegin = 0, countEnd = 0;
  };
  static std::vector<Chunk> chunksOf(int64_t length,
                                     const ChunkingOptions &options);

private:
  struct Array {
    std::string name;
    /// The input's sequence dim along axis 0 ("" for per-utterance arrays).
    std::string dim;
    /// Whether `dim` is derived (ceil(T / k)): its lengths come from its
    /// source's.
    bool derived = false;
    DType dtype = DType::f32;
    /// The static sizes after the position axes.
    std::vector<int64_t> trailing;
  };
  struct Shard {
    /// The dataset's file; `described` names it with its overlays in
    /// errors.
    std::string path, described;
    /// Per array: the data and each utterance's first row.
    std::vector<Tensor> data;
    std::vector<std::vector<int64_t>> offsets;
    int64_t utterances = 0;
    /// Per host array (as `hostArrays`): the values and each utterance's
    /// first one; empty when the dataset lacks an optional one.
    std::vector<std::vector<int32_t>> hostValues;
    std::vector<std::vector<int64_t>> hostOffsets;
    /// Each utterance's nn.id (UTF-8), or empty when the shard has none.
    std::vector<std::string> ids;
  };
  struct HostArrayState {
    HostArray array;
    /// Whether the shards read so far hold it (unknown before the first).
    enum class Presence {
      unknown,
      present,
      absent
    } presence = Presence::unknown;
  };
  struct Utterance {
    int32_t shard = 0;
    int64_t index = 0;
    /// The frames along the batching dim: the whole utterance, or a chunk
    /// of it from `start`, that counts frames [countBegin, countEnd).
    int64_t length = 1;
    int64_t start = 0;
    int64_t countBegin = 0, countEnd = INT64_MAX;
    /// A chunk's positions [pathStart, pathStart + pathLength) of an
    /// RNN-T path input; pathLength -1: the whole path.
    int64_t pathStart = 0, pathLength = -1;
  };
  /// The values of integer array `a` (one per row) of utterance `u` over
  /// its rows [begin, begin + count).
  std::vector<int64_t> integerRows(size_t a, const Utterance &u, int64_t begin,
                                   int64_t count) const;
  /// The chunk's part of the alignment: its frames of an RNA alignment, its
  /// positions of an RNN-T path.
  std::vector<int64_t> chunkAlignment(const Utterance &u) const;

  /// Checks the arrays of one shard (`members`, from `files`; `keeps`,
  /// each source's nn.keep) against the graph's inputs and adds the
  /// utterances every nn.keep keeps.
  absl::Status
  addShard(const std::vector<std::string> &files,
           std::map<std::string, Tensor> members,
           const std::vector<std::pair<std::string, Tensor>> &keeps,
           const Manifest &manifest);

  /// Reads and checks the shard's nn.id, if it has one, into `shard`
  /// (addShard compares the utterance counts).
  absl::Status readIds(const std::map<std::string, Tensor> &members,
                       Shard &shard) const;
  /// Reads and checks the shard's host arrays into `shard`.
  absl::Status readHostArrays(const std::map<std::string, Tensor> &members,
                              Shard &shard);

  std::vector<Array> arrays;
  std::vector<HostArrayState> hostArrays;
  std::vector<Shard> shards;
  std::vector<Utterance> utterances;
  std::string batchingDim;
  /// The dim of the graph's kChunkWeightsInput, or "" without one.
  std::string chunkWeightsDim;
  /// How the utterances were cut (chunked()); size 0 when they were not.
  ChunkingOptions chunking;
  /// The dim of the RNN-T path chunked() cut with the frames, or "".
  std::string pathDim;
  int64_t leftOutCount = 0, withoutFramesCount = 0;
  WithoutFrames withoutFramesRule = WithoutFrames::leaveOut;
};

/// The per-utterance array that leaves utterances out of a dataset.
constexpr const char *kKeepArray = "nn.keep";

/// The per-utterance array that names utterances: Unicode code points,
/// ragged with "nn.id.lengths" like a sequence input.
constexpr const char *kIdArray = "nn.id";
/// The normalization statistics `nn-data import --cmvn` writes into a
/// directory of shards (nn::FeatureStats): not a shard.
constexpr const char *kFeatureStatsFile = "cmvn.npz";

/// Why `codePoints` is not an utterance id, or "" when it is one. An id is
/// a non-empty sequence of Unicode scalar values (no surrogates, at most
/// U+10FFFF) without control characters (U+0000-U+001F, U+007F-U+009F) or
/// whitespace (Unicode's White_Space): it is the first token of a line of
/// nn-decode's plain output, as in Kaldi's text files.
std::string utteranceIdProblem(absl::Span<const int32_t> codePoints);

/// The code points nn.id stores for `id` (UTF-8); an error saying why
/// when `id` is not UTF-8 or not an id (utteranceIdProblem).
absl::StatusOr<std::vector<int32_t>>
utteranceIdCodePoints(const std::string &id);

/// `codePoints` (Unicode scalar values) in UTF-8.
std::string utf8FromCodePoints(absl::Span<const int32_t> codePoints);

/// One utterance's arrays by name, as a dataset stores them: an array of
/// rank >= 1 along its first axis (for a graph input [B, T, ...]), or a
/// rank-0 value (for [B]).
using UtteranceArrays = std::map<std::string, Tensor>;

/// The arrays of one shard holding `utterances[begin, end)`: each name's
/// arrays concatenated along axis 0 with NAME.lengths, rank-0 values
/// stacked. Every utterance has the first one's names, dtypes and
/// trailing sizes (the caller checks).
std::map<std::string, Tensor>
concatenateUtterances(const std::vector<UtteranceArrays> &utterances,
                      size_t begin, size_t end);

/// The utterances of a shard's arrays, as concatenateUtterances wrote
/// them: each NAME cut along axis 0 by NAME.lengths, rank-1 arrays without
/// lengths one value per utterance. InvalidArgument naming `what` and the
/// array when they do not cut (lengths missing, of another count, or not
/// summing to the rows).
absl::StatusOr<std::vector<UtteranceArrays>>
splitUtterances(const std::map<std::string, Tensor> &arrays,
                const std::string &what);

struct BatchingOptions {
  /// At most this many sequences per batch.
  int64_t maxSequences = 16;
  /// At most this many padded frames (sequences x longest length) per
  /// batch; 0 means no frame budget. A longer utterance gets a batch of
  /// its own.
  int64_t maxFrames = 0;
  /// Batch utterances of similar length: the shuffled order is cut into
  /// chunks of `bucketBatches` x maxSequences utterances, each sorted by
  /// length before it is cut into batches; the batches are then shuffled.
  bool bucket = true;
  int64_t bucketBatches = 100;
  /// At least this many sequences per batch where the epoch has them: a
  /// batch with fewer (the last one, or one the frame budget cut short)
  /// joins a neighbour, past the budgets. A data-parallel run asks for
  /// one per rank (nn/DataParallel.h).
  int64_t minSequences = 1;
  /// Shuffle per epoch (from seed and epoch); false keeps the file order.
  bool shuffle = true;
  uint64_t seed = 0;
};

/// The batches of epoch `epoch` (from 0) as lists of utterance indices;
/// the same for the same options, dataset and epoch. Utterances without
/// frames (kept by WithoutFrames::keep) are in none.
std::vector<std::vector<int64_t>> epochBatches(const Dataset &dataset,
                                               const BatchingOptions &options,
                                               int64_t epoch);

} // namespace nn

#endif // NN_DATASET_H
