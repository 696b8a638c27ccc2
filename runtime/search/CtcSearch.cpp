//===- CtcSearch.cpp - CTC best-path and prefix beam search ---------------===//
//
// One PrefixSearcher per worker thread decodes whole sequences, one after
// another, in buffers sized once per call: nothing is allocated per frame
// once a sequence's trie has its room. Prefixes are nodes of a trie
// (parent, label), one node per label sequence (a (parent, label) map finds
// an existing child), so a beam entry and an extension that spell the same
// labels meet on one node. Because every label sequence has one node, an
// extension y + c can only coincide with a beam entry whose parent node is
// y's: those few are found through the beam slot of each entry's parent
// and merged into the entry before ranking; every other extension is a new
// prefix, offered to a bounded heap that keeps the `beam` best under the
// total order (score, then length, then labels). docs/runtime.md ("CTC
// search") has the recursion.
//
// The trie lives in flat arrays of a fixed size (a frame makes at most
// `beam` nodes) with an open-addressing child table, so that a step-wise
// search can keep it in a workspace its caller owns between calls: the
// same searcher then runs one frame per call on state it loads from there.
//
//===----------------------------------------------------------------------===//

#include "runtime/search/CtcSearch.h"

#include "nn/Runtime.h"

#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstring>
#include <numeric>
#include <string>
#include <thread>

using namespace nn::runtime;

CtcLabelScorer::~CtcLabelScorer() = default;

namespace {

constexpr double kNegInf = -std::numeric_limits<double>::infinity();
/// An empty slot of a trie's child table (no (node, label) key has it).
constexpr uint64_t kNoChild = ~uint64_t(0);

int64_t alignUp(int64_t bytes) { return (bytes + 7) & ~int64_t(7); }

/// Where the arrays of a trie of at most `maxNodes` nodes lie in its
/// memory (8-byte aligned): parent, label and beam slot per node, then the
/// child table (keys, nodes) of a power-of-two size ≥ 2·maxNodes.
struct TrieLayout {
  int64_t maxNodes = 0, tableSize = 0;
  int tableShift = 0;
  int64_t labelsAt = 0, slotsAt = 0, keysAt = 0, childrenAt = 0, bytes = 0;
};

/// False when node ids (int32) cannot number `maxNodes` nodes.
bool makeTrieLayout(int64_t maxNodes, TrieLayout &layout) {
  if (maxNodes < 1 || maxNodes > std::numeric_limits<int32_t>::max())
    return false;
  layout.maxNodes = maxNodes;
  layout.tableSize = 2;
  layout.tableShift = 63;
  while (layout.tableSize < 2 * maxNodes) {
    layout.tableSize *= 2;
    --layout.tableShift;
  }
  int64_t column = alignUp(4 * maxNodes);
  layout.labelsAt = column;
  layout.slotsAt = 2 * column;
  layout.keysAt = 3 * column;
  layout.childrenAt = layout.keysAt + 8 * layout.tableSize;
  layout.bytes = layout.childrenAt + alignUp(4 * layout.tableSize);
  return true;
}

/// A prefix in the beam: its trie node, the log scores of its paths ending
/// in blank (`blank`) and in its last label (`label`), and its weighted LM
/// score. Plain data: a step-wise search keeps it in its workspace.
struct BeamEntry {
  int32_t node;
  int32_t length;
  int32_t last; // -1 for the empty prefix
  double blank, label, lm;
  bool scorerReady;
};

/// A step-wise search's state of one sequence at the start of its block of
/// the workspace, followed by its `beam` entries and its trie.
struct StepState {
  int64_t nodes, frame, entries, reserved;
};

/// The workspace of a step-wise search starts with this.
struct StepHeader {
  uint64_t magic;
  int64_t batch, beam, capacity, sequenceBytes, reserved[3];
};
constexpr uint64_t kStepMagic = 0x6e6e637463737431; // "nnctcst1"

int64_t stepEntriesBytes(int64_t beam) {
  return alignUp(beam * static_cast<int64_t>(sizeof(BeamEntry)));
}

absl::Status invalid(const std::string &message) {
  return absl::InvalidArgumentError("CTC search: " + message);
}

/// log(exp(a) + exp(b)), exact for -inf operands (no NaN from -inf - -inf).
double logAdd(double a, double b) {
  if (a < b)
    std::swap(a, b);
  if (b == kNegInf || a == std::numeric_limits<double>::infinity())
    return a;
  return a + std::log1p(std::exp(b - a));
}

double mergeScores(CtcMerge merge, double a, double b) {
  return merge == CtcMerge::sum ? logAdd(a, b) : std::max(a, b);
}

/// Element offset of sequence b's first frame.
int64_t sequenceStart(const CtcScores &scores, int64_t b) {
  return scores.offsets ? scores.offsets[b] * scores.frameStride
                        : b * scores.sequenceStride;
}

template <typename T>
void readFrameAs(const T *data, int64_t start, int64_t classStride,
                 int64_t vocab, double *out) {
  for (int64_t c = 0; c < vocab; ++c) {
    double value = data[start + c * classStride];
    // NaN would break the total orders below; it is read as "impossible".
    out[c] = std::isnan(value) ? kNegInf : value;
  }
}

/// Frame t of the sequence starting at element `start`, as f64 in `out`.
void readFrame(const CtcScores &scores, int64_t start, int64_t t, double *out) {
  int64_t first = start + t * scores.frameStride;
  if (scores.type == ScoreType::f32)
    readFrameAs(static_cast<const float *>(scores.data), first,
                scores.classStride, scores.vocab, out);
  else
    readFrameAs(static_cast<const double *>(scores.data), first,
                scores.classStride, scores.vocab, out);
}

void writeScore(void *scores, ScoreType type, int64_t index, double value) {
  if (type == ScoreType::f32)
    static_cast<float *>(scores)[index] = static_cast<float>(value);
  else
    static_cast<double *>(scores)[index] = value;
}

/// Checks the view and every sequence's frames against the buffer; sets
/// `longest` to the most frames of a sequence.
absl::Status checkScores(const CtcScores &scores, int64_t &longest) {
  longest = 0;
  if (scores.batch < 0)
    return invalid("batch " + std::to_string(scores.batch) + " < 0");
  if (scores.vocab < 1)
    return invalid("vocabulary of " + std::to_string(scores.vocab) +
                   " classes (needs at least 1)");
  if (scores.frames < 0)
    return invalid("frames " + std::to_string(scores.frames) + " < 0");
  if (scores.batch > 0 && !scores.lengths)
    return invalid("no lengths");
  for (int64_t b = 0; b < scores.batch; ++b) {
    int64_t length = scores.lengths[b];
    if (length < 0)
      return invalid("sequence " + std::to_string(b) + " has length " +
                     std::to_string(length));
    if (scores.offsets) {
      int64_t offset = scores.offsets[b];
      if (offset < 0 || offset > scores.frames - length)
        return invalid("sequence " + std::to_string(b) + " (rows " +
                       std::to_string(offset) + " to " +
                       std::to_string(offset + length) + ") outside the " +
                       std::to_string(scores.frames) + " rows of the scores");
    } else if (length > scores.frames) {
      return invalid("sequence " + std::to_string(b) + " has length " +
                     std::to_string(length) + " > " +
                     std::to_string(scores.frames) + " padded frames");
    }
    longest = std::max(longest, length);
  }
  if (longest > 0 && !scores.data)
    return invalid("no scores");
  return absl::OkStatus();
}

int resolveThreads(int32_t requested) {
  if (requested > 0)
    return requested;
  if (int threads = nn::numThreads(); threads > 0)
    return threads;
  unsigned hardware = std::thread::hardware_concurrency();
  return hardware > 0 ? static_cast<int>(hardware) : 1;
}

/// Calls body(worker, b) for every b < batch on up to `threads` threads
/// (this one among them), each with its own worker from makeWorker().
/// Sequences are taken in turn from a counter; since each one's result
/// depends on nothing else, which thread takes it does not matter.
template <typename MakeWorker, typename Body>
void forEachSequence(int64_t batch, int threads, MakeWorker makeWorker,
                     Body body) {
  std::atomic<int64_t> next{0};
  auto work = [&] {
    auto worker = makeWorker();
    for (int64_t b; (b = next.fetch_add(1)) < batch;)
      body(worker, b);
  };
  int64_t workers = std::min<int64_t>(threads, batch);
  if (workers <= 1) {
    work();
    return;
  }
  std::vector<std::thread> pool;
  pool.reserve(workers - 1);
  for (int64_t i = 1; i < workers; ++i)
    pool.emplace_back(work);
  work();
  for (std::thread &thread : pool)
    thread.join();
}

/// The prefix beam search of one sequence at a time.
class PrefixSearcher {
public:
  /// With `lmRows`, the language model's rows come from there (a
  /// step-wise search) instead of options.scorer.
  PrefixSearcher(const CtcScores &scores, const CtcBeamOptions &options,
                 const CtcLmRows *lmRows = nullptr, int32_t endClass = -1)
      : scores(scores), options(options), vocab(scores.vocab),
        lmRows(lmRows && lmRows->data ? lmRows : nullptr), endClass(endClass),
        useScorer((options.scorer || this->lmRows) &&
                  options.scorerWeight > 0) {
    size_t beam = options.beam;
    frame.resize(vocab);
    order.resize(vocab);
    tokens.reserve(vocab);
    tokenMark.assign(vocab, 0);
    childMark.assign(vocab, 0);
    entries.reserve(beam);
    nextEntries.reserve(beam);
    heap.reserve(beam);
    sums.resize(beam);
    stayBlank.resize(beam);
    stayLabel.resize(beam);
    firstChild.resize(beam);
    nextChild.resize(beam);
    if (useScorer) {
      scorerRows.resize(beam * vocab);
      nextScorerRows.resize(beam * vocab);
    }
  }

  void search(int64_t sequence, const CtcNBestBuffers &output) {
    this->sequence = sequence;
    int64_t length = scores.lengths[sequence];
    int64_t start = sequenceStart(scores, sequence);
    TrieLayout layout;
    // ctcPrefixSearch checked that the bound fits.
    makeTrieLayout(length * options.beam + 1, layout);
    if (static_cast<int64_t>(storage.size()) * 8 < layout.bytes)
      storage.resize(layout.bytes / 8);
    attach(reinterpret_cast<char *>(storage.data()), layout);
    reset();
    for (int64_t t = 0; t < length && !entries.empty(); ++t) {
      readFrame(scores, start, t, frame.data());
      selectTokens();
      step();
    }
    finish(output);
  }

  /// Step-wise search: starts `sequence`'s state at `state` (its block of
  /// the workspace) with the empty prefix.
  void begin(char *state, const TrieLayout &layout) {
    attach(state + sizeof(StepState) + stepEntriesBytes(options.beam), layout);
    reset();
    auto *header = reinterpret_cast<StepState *>(state);
    header->frame = 0;
    save(state);
  }

  /// Step-wise search: frame t of `sequence` if t < its length, on the
  /// state at `state`; writes its slots' parents and appended labels and
  /// sets `newLabels` to the number of appended ones.
  void advance(int64_t sequence, int64_t t, char *state,
               const TrieLayout &layout, const CtcStepBuffers &output,
               int32_t &newLabels) {
    load(sequence, state, layout);
    int64_t beam = options.beam;
    int32_t *parents = output.parents + sequence * beam;
    int32_t *appended = output.appended + sequence * beam;
    for (int64_t k = 0; k < beam; ++k) {
      parents[k] = static_cast<int32_t>(k);
      appended[k] = -1;
    }
    newLabels = 0;
    if (t < scores.lengths[sequence]) {
      if (!entries.empty()) {
        readFrame(scores, sequenceStart(scores, sequence), t, frame.data());
        selectTokens();
        step();
        for (size_t k = 0; k < entries.size(); ++k) {
          parents[k] = stepFrom[k];
          appended[k] = stepAppended[k];
          newLabels += stepAppended[k] >= 0;
        }
      }
      reinterpret_cast<StepState *>(state)->frame = t + 1;
    }
    save(state);
  }

  /// Step-wise search: the N-best list of `sequence`'s current slots.
  void finishSteps(int64_t sequence, char *state, const TrieLayout &layout,
                   const CtcNBestBuffers &output) {
    load(sequence, state, layout);
    finish(output);
  }

private:
  using Entry = BeamEntry;

  /// A prefix competing for the next beam: entry `from` itself
  /// (appended < 0) or entry `from` extended by `appended`.
  struct Candidate {
    double rank, blank, label, lm;
    int32_t from, appended, length;
  };

  const CtcScores &scores;
  const CtcBeamOptions &options;
  const int64_t vocab;
  const CtcLmRows *lmRows;
  const int32_t endClass;
  const bool useScorer;
  int64_t sequence = 0;

  // The trie of this sequence: node 0 is the empty prefix. Its arrays lie
  // in `storage` (a whole-sequence search) or in a step-wise search's
  // workspace; slotOfNode is -1 between frames.
  int32_t *parent = nullptr, *nodeLabel = nullptr, *slotOfNode = nullptr;
  uint64_t *childKeys = nullptr;
  int32_t *childNodes = nullptr;
  int64_t nodeCount = 0, tableSize = 0;
  int tableShift = 0;
  std::vector<uint64_t> storage;

  std::vector<Entry> entries, nextEntries;
  std::vector<Candidate> heap;
  double bestRank = kNegInf, floorRank = kNegInf;

  // Per frame: the scores, the classes prefixes may be extended with.
  std::vector<double> frame;
  std::vector<int32_t> order, tokens;
  std::vector<uint32_t> tokenMark, childMark;
  uint32_t tokenStamp = 0, childStamp = 0;
  bool allTokens = true;

  // Per beam slot, this frame.
  std::vector<double> sums, stayBlank, stayLabel;
  std::vector<int32_t> firstChild, nextChild;
  // λ·log p(c | prefix) per beam slot, [beam, vocab].
  std::vector<double> scorerRows, nextScorerRows;
  std::vector<int32_t> prefixLabels;
  // Per slot after step(): the slot it came from, the label it appended
  // (-1: none).
  std::vector<int32_t> stepFrom, stepAppended;

  static uint64_t childKey(int32_t node, int32_t label) {
    return (static_cast<uint64_t>(static_cast<uint32_t>(node)) << 32) |
           static_cast<uint32_t>(label);
  }

  /// The node spelling node's labels + label, made if new. The layout's
  /// bound holds: each frame makes at most `beam` nodes.
  int32_t child(int32_t node, int32_t label) {
    uint64_t key = childKey(node, label);
    // Fibonacci hashing: the top bits of the product index the table.
    uint64_t mask = static_cast<uint64_t>(tableSize) - 1;
    for (uint64_t i = (key * 0x9e3779b97f4a7c15ull) >> tableShift;;
         i = (i + 1) & mask) {
      if (childKeys[i] == key)
        return childNodes[i];
      if (childKeys[i] == kNoChild) {
        int32_t made = static_cast<int32_t>(nodeCount++);
        parent[made] = node;
        nodeLabel[made] = label;
        slotOfNode[made] = -1;
        childKeys[i] = key;
        childNodes[i] = made;
        return made;
      }
    }
  }

  /// Points the trie's arrays into `memory`, laid out by `layout`.
  void attach(char *memory, const TrieLayout &layout) {
    parent = reinterpret_cast<int32_t *>(memory);
    nodeLabel = reinterpret_cast<int32_t *>(memory + layout.labelsAt);
    slotOfNode = reinterpret_cast<int32_t *>(memory + layout.slotsAt);
    childKeys = reinterpret_cast<uint64_t *>(memory + layout.keysAt);
    childNodes = reinterpret_cast<int32_t *>(memory + layout.childrenAt);
    tableSize = layout.tableSize;
    tableShift = layout.tableShift;
  }

  /// The empty prefix alone, in a trie of one node.
  void reset() {
    nodeCount = 1;
    parent[0] = -1;
    nodeLabel[0] = -1;
    slotOfNode[0] = -1;
    std::fill_n(childKeys, tableSize, kNoChild);
    entries.clear();
    entries.push_back(Entry{0, 0, -1, 0.0, kNegInf, 0.0, false});
  }

  /// Takes up `sequence`'s step-wise state at `state`. The language
  /// model's rows come with every call: no entry has one yet.
  void load(int64_t sequence, char *state, const TrieLayout &layout) {
    this->sequence = sequence;
    auto *header = reinterpret_cast<StepState *>(state);
    attach(state + sizeof(StepState) + stepEntriesBytes(options.beam), layout);
    nodeCount = header->nodes;
    entries.resize(header->entries);
    if (!entries.empty())
      std::memcpy(entries.data(), state + sizeof(StepState),
                  entries.size() * sizeof(Entry));
    for (Entry &entry : entries)
      entry.scorerReady = false;
  }

  void save(char *state) {
    auto *header = reinterpret_cast<StepState *>(state);
    header->nodes = nodeCount;
    header->entries = static_cast<int64_t>(entries.size());
    if (!entries.empty())
      std::memcpy(state + sizeof(StepState), entries.data(),
                  entries.size() * sizeof(Entry));
  }

  bool extendable(int32_t c) const {
    return allTokens ? c != options.blank : tokenMark[c] == tokenStamp;
  }

  static void bumpStamp(uint32_t &stamp, std::vector<uint32_t> &marks) {
    if (++stamp == 0) {
      std::fill(marks.begin(), marks.end(), 0);
      stamp = 1;
    }
  }

  /// The classes of this frame prefixes may be extended with (blank never:
  /// it keeps the prefix).
  void selectTokens() {
    bool limitCount = options.tokenBeam > 0 && options.tokenBeam < vocab;
    bool limitScore = std::isfinite(options.tokenThreshold);
    allTokens = !limitCount && !limitScore;
    if (allTokens)
      return;
    bumpStamp(tokenStamp, tokenMark);
    std::iota(order.begin(), order.end(), 0);
    int64_t kept = vocab;
    if (limitCount) {
      kept = options.tokenBeam;
      std::nth_element(order.begin(), order.begin() + (kept - 1), order.end(),
                       [&](int32_t a, int32_t b) {
                         return frame[a] != frame[b] ? frame[a] > frame[b]
                                                     : a < b;
                       });
    }
    double best = *std::max_element(frame.begin(), frame.end());
    double lowest = best - options.tokenThreshold;
    tokens.clear();
    for (int64_t i = 0; i < kept; ++i) {
      int32_t c = order[i];
      if (c != options.blank && frame[c] > kNegInf && frame[c] >= lowest) {
        tokens.push_back(c);
        tokenMark[c] = tokenStamp;
      }
    }
  }

  /// -1, 0, 1 as a's labels are lexicographically before, equal to or
  /// after b's; both have the same length.
  int compareLabels(const Candidate &a, const Candidate &b) const {
    int32_t nodeA = entries[a.from].node, lastA = a.appended;
    int32_t nodeB = entries[b.from].node, lastB = b.appended;
    if (lastA < 0) {
      if (nodeA == 0)
        return 0; // both empty
      lastA = nodeLabel[nodeA];
      nodeA = parent[nodeA];
    }
    if (lastB < 0) {
      lastB = nodeLabel[nodeB];
      nodeB = parent[nodeB];
    }
    int result = lastA < lastB ? -1 : lastA > lastB ? 1 : 0;
    // Walking up both in step, the last difference seen is the first one.
    while (nodeA != nodeB) {
      if (nodeLabel[nodeA] != nodeLabel[nodeB])
        result = nodeLabel[nodeA] < nodeLabel[nodeB] ? -1 : 1;
      nodeA = parent[nodeA];
      nodeB = parent[nodeB];
    }
    return result;
  }

  /// The tie rule: higher score, then fewer labels, then lexicographically
  /// smaller labels.
  bool better(const Candidate &a, const Candidate &b) const {
    if (a.rank != b.rank)
      return a.rank > b.rank;
    if (a.length != b.length)
      return a.length < b.length;
    return compareLabels(a, b) < 0;
  }

  void offer(const Candidate &candidate) {
    // Probability zero (and NaN, from inf - inf in odd inputs) never enters.
    if (!(candidate.rank > kNegInf) ||
        candidate.rank < bestRank - options.scoreBeam)
      return;
    bestRank = std::max(bestRank, candidate.rank);
    auto worseFirst = [this](const Candidate &a, const Candidate &b) {
      return better(a, b);
    };
    if (heap.size() < static_cast<size_t>(options.beam)) {
      heap.push_back(candidate);
      std::push_heap(heap.begin(), heap.end(), worseFirst);
    } else {
      if (!better(candidate, heap.front()))
        return;
      std::pop_heap(heap.begin(), heap.end(), worseFirst);
      heap.back() = candidate;
      std::push_heap(heap.begin(), heap.end(), worseFirst);
    }
    double full = heap.size() == static_cast<size_t>(options.beam)
                      ? heap.front().rank
                      : kNegInf;
    floorRank = std::max(full, bestRank - options.scoreBeam);
  }

  /// Writes the labels of `node` (oldest first) to prefixLabels.
  void spell(int32_t node, int32_t length) {
    prefixLabels.resize(length);
    for (int32_t i = length - 1; i >= 0; --i, node = parent[node])
      prefixLabels[i] = nodeLabel[node];
  }

  /// Row `row` of lmRows, class c.
  double lmValue(int64_t row, int64_t c) const {
    int64_t at = row * lmRows->rowStride + c * lmRows->classStride;
    return lmRows->type == ScoreType::f32
               ? static_cast<const float *>(lmRows->data)[at]
               : static_cast<const double *>(lmRows->data)[at];
  }

  void scoreNext(size_t slot) {
    Entry &entry = entries[slot];
    double *row = &scorerRows[slot * vocab];
    if (lmRows) {
      for (int64_t c = 0; c < vocab; ++c)
        row[c] = lmValue(sequence * options.beam + slot, c);
    } else {
      spell(entry.node, entry.length);
      options.scorer->scoreNext(sequence, prefixLabels.data(), entry.length,
                                row);
    }
    for (int64_t c = 0; c < vocab; ++c)
      row[c] = std::isnan(row[c]) ? kNegInf : options.scorerWeight * row[c];
    entry.scorerReady = true;
  }

  double bonus(int32_t length) const { return options.lengthBonus * length; }

  /// One frame: every entry stays (blank, or its last label repeated) and
  /// is extended by each allowed class; the `beam` best survive.
  void step() {
    CtcMerge merge = options.merge;
    const double *x = frame.data();
    size_t count = entries.size();
    bool extends = allTokens ? vocab > 1 : !tokens.empty();
    if (useScorer && extends)
      for (size_t i = 0; i < count; ++i)
        if (!entries[i].scorerReady)
          scoreNext(i);

    // Stays, and the extensions that spell an entry of the beam: they are
    // merged into that entry (the paths of one prefix meet there).
    for (size_t i = 0; i < count; ++i)
      slotOfNode[entries[i].node] = static_cast<int32_t>(i);
    for (size_t i = 0; i < count; ++i) {
      const Entry &entry = entries[i];
      sums[i] = mergeScores(merge, entry.blank, entry.label);
      stayBlank[i] = sums[i] + x[options.blank];
      stayLabel[i] = entry.length > 0 ? entry.label + x[entry.last] : kNegInf;
      firstChild[i] = -1;
    }
    for (size_t i = 0; i < count; ++i) {
      const Entry &entry = entries[i];
      if (entry.node == 0)
        continue;
      int32_t from = slotOfNode[parent[entry.node]];
      if (from < 0)
        continue;
      nextChild[i] = firstChild[from];
      firstChild[from] = static_cast<int32_t>(i);
      int32_t c = entry.last;
      if (!extendable(c))
        continue;
      const Entry &source = entries[from];
      double extended = (c == source.last ? source.blank : sums[from]) + x[c];
      stayLabel[i] = mergeScores(merge, stayLabel[i], extended);
    }
    for (size_t i = 0; i < count; ++i)
      slotOfNode[entries[i].node] = -1;

    heap.clear();
    bestRank = floorRank = kNegInf;
    for (size_t i = 0; i < count; ++i) {
      const Entry &entry = entries[i];
      double acoustic = mergeScores(merge, stayBlank[i], stayLabel[i]);
      offer(Candidate{acoustic + (entry.lm + bonus(entry.length)), stayBlank[i],
                      stayLabel[i], entry.lm, static_cast<int32_t>(i), -1,
                      entry.length});
    }
    if (extends)
      for (size_t j = 0; j < count; ++j)
        extend(j);

    // Best first; the heap may hold candidates offered before the best
    // one raised the score beam's floor.
    auto bestFirst = [this](const Candidate &a, const Candidate &b) {
      return better(a, b);
    };
    std::sort_heap(heap.begin(), heap.end(), bestFirst);
    nextEntries.clear();
    stepFrom.clear();
    stepAppended.clear();
    for (const Candidate &candidate : heap) {
      if (candidate.rank < bestRank - options.scoreBeam)
        break;
      const Entry &source = entries[candidate.from];
      size_t slot = nextEntries.size();
      stepFrom.push_back(candidate.from);
      stepAppended.push_back(candidate.appended);
      if (candidate.appended < 0) {
        nextEntries.push_back(Entry{source.node, source.length, source.last,
                                    candidate.blank, candidate.label,
                                    candidate.lm, source.scorerReady});
        if (useScorer && source.scorerReady)
          std::copy_n(&scorerRows[candidate.from * vocab], vocab,
                      &nextScorerRows[slot * vocab]);
      } else {
        nextEntries.push_back(Entry{child(source.node, candidate.appended),
                                    candidate.length, candidate.appended,
                                    candidate.blank, candidate.label,
                                    candidate.lm, false});
      }
    }
    entries.swap(nextEntries);
    scorerRows.swap(nextScorerRows);
  }

  /// Offers entry j extended by each allowed class that does not spell an
  /// entry of the beam (those were merged above).
  void extend(size_t j) {
    const Entry &entry = entries[j];
    bumpStamp(childStamp, childMark);
    for (int32_t i = firstChild[j]; i >= 0; i = nextChild[i])
      childMark[entries[i].last] = childStamp;
    const double *x = frame.data();
    const double *lmRow = useScorer ? &scorerRows[j * vocab] : nullptr;
    double sum = sums[j];
    int32_t length = entry.length + 1;
    double lengthScore = bonus(length);
    auto offerClass = [&](int32_t c) {
      if (childMark[c] == childStamp)
        return;
      double acoustic = (c == entry.last ? entry.blank : sum) + x[c];
      double lm = lmRow ? entry.lm + lmRow[c] : entry.lm;
      double rank = acoustic + (lm + lengthScore);
      // Most classes fall below the floor: a compare, no heap work.
      if (rank < floorRank)
        return;
      offer(Candidate{rank, kNegInf, acoustic, lm, static_cast<int32_t>(j), c,
                      length});
    };
    if (allTokens) {
      for (int32_t c = 0; c < vocab; ++c)
        if (c != options.blank)
          offerClass(c);
    } else {
      for (int32_t c : tokens)
        offerClass(c);
    }
  }

  void finish(const CtcNBestBuffers &output) {
    heap.clear();
    bool addEnd = useScorer && (lmRows ? endClass >= 0 : options.scoreEnd);
    for (size_t i = 0; i < entries.size(); ++i) {
      const Entry &entry = entries[i];
      double rank = mergeScores(options.merge, entry.blank, entry.label) +
                    (entry.lm + bonus(entry.length));
      if (addEnd) {
        double end;
        if (lmRows) {
          end = lmValue(sequence * options.beam + i, endClass);
        } else {
          spell(entry.node, entry.length);
          end = options.scorer->scoreEnd(sequence, prefixLabels.data(),
                                         entry.length);
        }
        rank += std::isnan(end) ? kNegInf : options.scorerWeight * end;
      }
      if (rank > kNegInf)
        heap.push_back(Candidate{rank, entry.blank, entry.label, entry.lm,
                                 static_cast<int32_t>(i), -1, entry.length});
    }
    std::sort(heap.begin(), heap.end(),
              [this](const Candidate &a, const Candidate &b) {
                return better(a, b);
              });

    int64_t beam = options.beam;
    output.counts[sequence] = static_cast<int32_t>(heap.size());
    for (int64_t k = 0; k < beam; ++k) {
      int64_t row = sequence * beam + k;
      int32_t *labels = output.labels + row * output.capacity;
      int32_t length = 0;
      double score = kNegInf;
      if (k < static_cast<int64_t>(heap.size())) {
        const Entry &entry = entries[heap[k].from];
        length = entry.length;
        score = heap[k].rank;
        int32_t node = entry.node;
        for (int32_t i = length - 1; i >= 0; --i, node = parent[node])
          labels[i] = nodeLabel[node];
      }
      std::fill(labels + length, labels + output.capacity, 0);
      output.labelLengths[row] = length;
      writeScore(output.scores, output.scoreType, row, score);
    }
  }
};

absl::Status checkBeamOptions(const CtcScores &scores,
                              const CtcBeamOptions &options) {
  if (options.blank < 0 || options.blank >= scores.vocab)
    return invalid("blank " + std::to_string(options.blank) +
                   " is not a class of the " + std::to_string(scores.vocab) +
                   "-class vocabulary");
  if (options.beam < 1)
    return invalid("beam " + std::to_string(options.beam) + " < 1");
  if (options.merge != CtcMerge::sum && options.merge != CtcMerge::max)
    return invalid("unknown merge mode");
  if (options.tokenBeam < 0 || options.tokenBeam > scores.vocab)
    return invalid("token beam " + std::to_string(options.tokenBeam) +
                   " outside [0, " + std::to_string(scores.vocab) + "]");
  if (!(options.tokenThreshold >= 0))
    return invalid("token threshold must be >= 0");
  if (!(options.scoreBeam >= 0))
    return invalid("score beam must be >= 0");
  if (!std::isfinite(options.lengthBonus))
    return invalid("length bonus must be finite");
  if (!(options.scorerWeight >= 0) || !std::isfinite(options.scorerWeight))
    return invalid("scorer weight must be finite and >= 0");
  if (options.threads < 0)
    return invalid("threads " + std::to_string(options.threads) + " < 0");
  return absl::OkStatus();
}

} // namespace

static CtcScores paddedView(const void *data, ScoreType type, int64_t batch,
                            int64_t frames, int64_t vocab,
                            const int32_t *lengths) {
  CtcScores scores;
  scores.data = data;
  scores.type = type;
  scores.batch = batch;
  scores.frames = frames;
  scores.vocab = vocab;
  scores.lengths = lengths;
  scores.sequenceStride = frames * vocab;
  scores.frameStride = vocab;
  scores.classStride = 1;
  return scores;
}

/// Packed rows: each sequence starts at its row offsets[b].
static CtcScores packedView(const void *data, ScoreType type, int64_t rows,
                            int64_t vocab, int64_t batch,
                            const int32_t *lengths, const int64_t *offsets) {
  CtcScores scores = paddedView(data, type, batch, rows, vocab, lengths);
  scores.offsets = offsets;
  scores.sequenceStride = 0;
  return scores;
}

CtcScores CtcScores::padded(const float *data, int64_t batch, int64_t frames,
                            int64_t vocab, const int32_t *lengths) {
  return paddedView(data, ScoreType::f32, batch, frames, vocab, lengths);
}

CtcScores CtcScores::padded(const double *data, int64_t batch, int64_t frames,
                            int64_t vocab, const int32_t *lengths) {
  return paddedView(data, ScoreType::f64, batch, frames, vocab, lengths);
}

CtcScores CtcScores::packed(const float *data, int64_t rows, int64_t vocab,
                            int64_t batch, const int32_t *lengths,
                            const int64_t *offsets) {
  return packedView(data, ScoreType::f32, rows, vocab, batch, lengths, offsets);
}

CtcScores CtcScores::packed(const double *data, int64_t rows, int64_t vocab,
                            int64_t batch, const int32_t *lengths,
                            const int64_t *offsets) {
  return packedView(data, ScoreType::f64, rows, vocab, batch, lengths, offsets);
}

std::vector<int64_t> nn::runtime::packedOffsets(const int32_t *lengths,
                                                int64_t batch) {
  std::vector<int64_t> offsets(batch);
  int64_t row = 0;
  for (int64_t b = 0; b < batch; ++b) {
    offsets[b] = row;
    row += lengths[b];
  }
  return offsets;
}

absl::Status nn::runtime::ctcPrefixSearch(const CtcScores &scores,
                                          const CtcBeamOptions &options,
                                          const CtcNBestBuffers &output) {
  int64_t longest = 0;
  if (absl::Status status = checkScores(scores, longest); !status.ok())
    return status;
  if (absl::Status status = checkBeamOptions(scores, options); !status.ok())
    return status;
  if (scores.batch > 0 && (!output.labels || !output.labelLengths ||
                           !output.scores || !output.counts))
    return invalid("missing output buffer");
  if (scores.batch > 0 && output.capacity < longest)
    return invalid("label capacity " + std::to_string(output.capacity) + " < " +
                   std::to_string(longest) + " frames of the longest sequence");
  if (TrieLayout layout;
      longest > (std::numeric_limits<int32_t>::max() - 1) / options.beam ||
      !makeTrieLayout(longest * options.beam + 1, layout))
    return invalid("beam " + std::to_string(options.beam) + " × " +
                   std::to_string(longest) + " frames: too many prefixes");
  forEachSequence(
      scores.batch, resolveThreads(options.threads),
      [&] { return PrefixSearcher(scores, options); },
      [&](PrefixSearcher &searcher, int64_t b) { searcher.search(b, output); });
  return absl::OkStatus();
}

absl::StatusOr<std::vector<std::vector<CtcHypothesis>>>
nn::runtime::ctcPrefixSearch(const CtcScores &scores,
                             const CtcBeamOptions &options) {
  int64_t longest = 0;
  if (absl::Status status = checkScores(scores, longest); !status.ok())
    return status;
  int64_t batch = scores.batch, beam = std::max(options.beam, 1);
  int64_t capacity = std::max<int64_t>(longest, 1);
  std::vector<int32_t> labels(batch * beam * capacity), lengths(batch * beam),
      counts(batch);
  std::vector<double> hypothesisScores(batch * beam);
  CtcNBestBuffers output{labels.data(),  capacity,
                         lengths.data(), hypothesisScores.data(),
                         ScoreType::f64, counts.data()};
  if (absl::Status status = ctcPrefixSearch(scores, options, output);
      !status.ok())
    return status;
  std::vector<std::vector<CtcHypothesis>> result(batch);
  for (int64_t b = 0; b < batch; ++b) {
    for (int64_t k = 0; k < counts[b]; ++k) {
      int64_t row = b * beam + k;
      const int32_t *first = &labels[row * capacity];
      result[b].push_back(
          CtcHypothesis{std::vector<int32_t>(first, first + lengths[row]),
                        hypothesisScores[row]});
    }
  }
  return result;
}

/// Bytes of one sequence's block of a step workspace, and its trie's
/// layout; false when out of range.
static bool stepSequenceLayout(int64_t beam, int64_t capacity,
                               TrieLayout &layout, int64_t &bytes) {
  if (beam < 1 || beam > std::numeric_limits<int32_t>::max() || capacity < 0 ||
      capacity > (std::numeric_limits<int32_t>::max() - 1) / beam ||
      !makeTrieLayout(capacity * beam + 1, layout))
    return false;
  bytes = sizeof(StepState) + stepEntriesBytes(beam) + layout.bytes;
  return true;
}

int64_t nn::runtime::ctcStepWorkspaceBytes(int64_t batch, int64_t beam,
                                           int64_t capacity) {
  TrieLayout layout;
  int64_t sequenceBytes = 0;
  if (batch < 0 || !stepSequenceLayout(beam, capacity, layout, sequenceBytes) ||
      (batch > 0 && sequenceBytes > (std::numeric_limits<int64_t>::max() -
                                     static_cast<int64_t>(sizeof(StepHeader))) /
                                        batch))
    return -1;
  return static_cast<int64_t>(sizeof(StepHeader)) + batch * sequenceBytes;
}

absl::Status nn::runtime::ctcStepBegin(void *workspace, int64_t bytes,
                                       int64_t batch, int32_t beam,
                                       int64_t capacity) {
  int64_t needed = ctcStepWorkspaceBytes(batch, beam, capacity);
  if (needed < 0)
    return invalid("no step workspace for batch " + std::to_string(batch) +
                   ", beam " + std::to_string(beam) + ", " +
                   std::to_string(capacity) + " frames");
  if (!workspace || bytes < needed ||
      reinterpret_cast<uintptr_t>(workspace) % 8 != 0)
    return invalid("step workspace of " + std::to_string(bytes) + " bytes at " +
                   std::to_string(reinterpret_cast<uintptr_t>(workspace)) +
                   " (needs " + std::to_string(needed) + ", 8-byte aligned)");
  TrieLayout layout;
  int64_t sequenceBytes = 0;
  stepSequenceLayout(beam, capacity, layout, sequenceBytes);
  auto *header = static_cast<StepHeader *>(workspace);
  *header = StepHeader{kStepMagic, batch, beam, capacity, sequenceBytes, {}};
  // The scores are not read: a view of one class gives a searcher.
  CtcScores none;
  none.vocab = 1;
  CtcBeamOptions options;
  options.beam = beam;
  PrefixSearcher searcher(none, options);
  char *first = static_cast<char *>(workspace) + sizeof(StepHeader);
  for (int64_t b = 0; b < batch; ++b)
    searcher.begin(first + b * sequenceBytes, layout);
  return absl::OkStatus();
}

/// The workspace's header, checked against the call's batch and beam.
static absl::StatusOr<const StepHeader *>
checkStepWorkspace(const void *workspace, int64_t bytes,
                   const CtcScores &scores, const CtcBeamOptions &options) {
  const auto *header = static_cast<const StepHeader *>(workspace);
  if (!workspace || bytes < static_cast<int64_t>(sizeof(StepHeader)) ||
      header->magic != kStepMagic)
    return invalid("step workspace not started (ctcStepBegin)");
  if (header->batch != scores.batch || header->beam != options.beam)
    return invalid("step workspace of batch " + std::to_string(header->batch) +
                   " and beam " + std::to_string(header->beam) +
                   " used for batch " + std::to_string(scores.batch) +
                   " and beam " + std::to_string(options.beam));
  if (bytes <
      ctcStepWorkspaceBytes(header->batch, header->beam, header->capacity))
    return invalid("step workspace of " + std::to_string(bytes) +
                   " bytes is too small");
  if (options.scorer)
    return invalid("a step-wise search takes its language model as rows");
  int64_t longest = 0;
  if (absl::Status status = checkScores(scores, longest); !status.ok())
    return status;
  if (absl::Status status = checkBeamOptions(scores, options); !status.ok())
    return status;
  if (longest > header->capacity)
    return invalid("a sequence of " + std::to_string(longest) +
                   " frames in a step workspace for " +
                   std::to_string(header->capacity));
  return header;
}

absl::Status nn::runtime::ctcStepFrame(void *workspace, int64_t bytes,
                                       const CtcScores &scores,
                                       const CtcBeamOptions &options, int64_t t,
                                       const CtcLmRows &lm,
                                       const CtcStepBuffers &output) {
  auto header = checkStepWorkspace(workspace, bytes, scores, options);
  if (!header.ok())
    return header.status();
  if (scores.batch > 0 && (!output.parents || !output.appended))
    return invalid("missing step output buffer");
  int64_t sequenceBytes = (*header)->sequenceBytes;
  char *first = static_cast<char *>(workspace) + sizeof(StepHeader);
  for (int64_t b = 0; b < scores.batch; ++b) {
    int64_t next =
        reinterpret_cast<StepState *>(first + b * sequenceBytes)->frame;
    if (t < scores.lengths[b] && next != t)
      return invalid("frame " + std::to_string(t) + " of sequence " +
                     std::to_string(b) + " out of order (next is " +
                     std::to_string(next) + ")");
  }
  TrieLayout layout;
  stepSequenceLayout((*header)->beam, (*header)->capacity, layout,
                     sequenceBytes);
  std::vector<int32_t> newLabels(scores.batch, 0);
  forEachSequence(
      scores.batch, resolveThreads(options.threads),
      [&] { return PrefixSearcher(scores, options, &lm); },
      [&](PrefixSearcher &searcher, int64_t b) {
        searcher.advance(b, t, first + b * sequenceBytes, layout, output,
                         newLabels[b]);
      });
  if (output.newLabels)
    *output.newLabels = std::accumulate(newLabels.begin(), newLabels.end(), 0);
  return absl::OkStatus();
}

absl::Status nn::runtime::ctcStepFinish(void *workspace, int64_t bytes,
                                        const CtcScores &scores,
                                        const CtcBeamOptions &options,
                                        const CtcLmRows &lm, int32_t endClass,
                                        const CtcNBestBuffers &output) {
  auto header = checkStepWorkspace(workspace, bytes, scores, options);
  if (!header.ok())
    return header.status();
  if (endClass >= scores.vocab)
    return invalid("end class " + std::to_string(endClass) +
                   " is not a class of the " + std::to_string(scores.vocab) +
                   "-class vocabulary");
  if (scores.batch > 0 && (!output.labels || !output.labelLengths ||
                           !output.scores || !output.counts))
    return invalid("missing output buffer");
  // A hypothesis has at most one label per frame of the workspace.
  if (scores.batch > 0 && output.capacity < (*header)->capacity)
    return invalid("label capacity " + std::to_string(output.capacity) + " < " +
                   std::to_string((*header)->capacity) + " frames");
  TrieLayout layout;
  int64_t sequenceBytes = 0;
  stepSequenceLayout((*header)->beam, (*header)->capacity, layout,
                     sequenceBytes);
  char *first = static_cast<char *>(workspace) + sizeof(StepHeader);
  forEachSequence(
      scores.batch, resolveThreads(options.threads),
      [&] { return PrefixSearcher(scores, options, &lm, endClass); },
      [&](PrefixSearcher &searcher, int64_t b) {
        searcher.finishSteps(b, first + b * sequenceBytes, layout, output);
      });
  return absl::OkStatus();
}

absl::Status nn::runtime::ctcGreedySearch(const CtcScores &scores,
                                          int32_t blank, int32_t threads,
                                          const CtcGreedyBuffers &output) {
  int64_t longest = 0;
  if (absl::Status status = checkScores(scores, longest); !status.ok())
    return status;
  if (blank < 0 || blank >= scores.vocab)
    return invalid("blank " + std::to_string(blank) +
                   " is not a class of the " + std::to_string(scores.vocab) +
                   "-class vocabulary");
  if (threads < 0)
    return invalid("threads " + std::to_string(threads) + " < 0");
  if (scores.batch > 0 && (!output.labels || !output.lengths || !output.scores))
    return invalid("missing output buffer");
  if (scores.batch > 0 && output.capacity < longest)
    return invalid("label capacity " + std::to_string(output.capacity) + " < " +
                   std::to_string(longest) + " frames of the longest sequence");
  forEachSequence(
      scores.batch, resolveThreads(threads),
      [&] { return std::vector<double>(scores.vocab); },
      [&](std::vector<double> &frame, int64_t b) {
        int64_t start = sequenceStart(scores, b);
        int32_t *labels = output.labels + b * output.capacity;
        int32_t length = 0, previous = -1;
        double score = 0;
        for (int64_t t = 0; t < scores.lengths[b]; ++t) {
          readFrame(scores, start, t, frame.data());
          int32_t best = 0;
          for (int32_t c = 1; c < scores.vocab; ++c)
            if (frame[c] > frame[best])
              best = c;
          score += frame[best];
          if (best != blank && best != previous)
            labels[length++] = best;
          previous = best;
        }
        std::fill(labels + length, labels + output.capacity, 0);
        output.lengths[b] = length;
        writeScore(output.scores, output.scoreType, b, score);
      });
  return absl::OkStatus();
}

absl::StatusOr<std::vector<CtcHypothesis>>
nn::runtime::ctcGreedySearch(const CtcScores &scores, int32_t blank,
                             int32_t threads) {
  int64_t longest = 0;
  if (absl::Status status = checkScores(scores, longest); !status.ok())
    return status;
  int64_t batch = scores.batch, capacity = std::max<int64_t>(longest, 1);
  std::vector<int32_t> labels(batch * capacity), lengths(batch);
  std::vector<double> pathScores(batch);
  CtcGreedyBuffers output{labels.data(), capacity, lengths.data(),
                          pathScores.data(), ScoreType::f64};
  if (absl::Status status = ctcGreedySearch(scores, blank, threads, output);
      !status.ok())
    return status;
  std::vector<CtcHypothesis> result(batch);
  for (int64_t b = 0; b < batch; ++b) {
    const int32_t *first = &labels[b * capacity];
    result[b] = CtcHypothesis{std::vector<int32_t>(first, first + lengths[b]),
                              pathScores[b]};
  }
  return result;
}
