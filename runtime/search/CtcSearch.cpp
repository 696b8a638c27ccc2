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
//===----------------------------------------------------------------------===//

#include "runtime/search/CtcSearch.h"

#include "nn/Runtime.h"

#include "absl/container/flat_hash_map.h"

#include <algorithm>
#include <atomic>
#include <cmath>
#include <numeric>
#include <string>
#include <thread>

using namespace nn::runtime;

CtcLabelScorer::~CtcLabelScorer() = default;

namespace {

constexpr double kNegInf = -std::numeric_limits<double>::infinity();

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
  PrefixSearcher(const CtcScores &scores, const CtcBeamOptions &options)
      : scores(scores), options(options), vocab(scores.vocab),
        useScorer(options.scorer && options.scorerWeight > 0) {
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
    reset(length);
    for (int64_t t = 0; t < length && !entries.empty(); ++t) {
      readFrame(scores, start, t, frame.data());
      selectTokens();
      step();
    }
    finish(output);
  }

private:
  /// A prefix in the beam: its trie node, the log scores of its paths
  /// ending in blank (`blank`) and in its last label (`label`), and its
  /// weighted LM score.
  struct Entry {
    int32_t node;
    int32_t length;
    int32_t last; // -1 for the empty prefix
    double blank, label, lm;
    bool scorerReady;
  };

  /// A prefix competing for the next beam: entry `from` itself
  /// (appended < 0) or entry `from` extended by `appended`.
  struct Candidate {
    double rank, blank, label, lm;
    int32_t from, appended, length;
  };

  const CtcScores &scores;
  const CtcBeamOptions &options;
  const int64_t vocab;
  const bool useScorer;
  int64_t sequence = 0;

  // The trie of this sequence: node 0 is the empty prefix.
  std::vector<int32_t> parent, nodeLabel, slotOfNode;
  absl::flat_hash_map<uint64_t, int32_t> children;

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

  static uint64_t childKey(int32_t node, int32_t label) {
    return (static_cast<uint64_t>(static_cast<uint32_t>(node)) << 32) |
           static_cast<uint32_t>(label);
  }

  /// The node spelling node's labels + label, made if new.
  int32_t child(int32_t node, int32_t label) {
    auto [it, inserted] = children.try_emplace(
        childKey(node, label), static_cast<int32_t>(parent.size()));
    if (inserted) {
      parent.push_back(node);
      nodeLabel.push_back(label);
      slotOfNode.push_back(-1);
    }
    return it->second;
  }

  void reset(int64_t length) {
    parent.assign(1, -1);
    nodeLabel.assign(1, -1);
    slotOfNode.assign(1, -1);
    children.clear();
    // Each frame makes at most `beam` nodes; reserving that bound (within
    // reason) keeps growth out of the frame loop.
    int64_t bound = std::min<int64_t>(length * options.beam + 1, 1 << 20);
    parent.reserve(bound);
    nodeLabel.reserve(bound);
    slotOfNode.reserve(bound);
    children.reserve(bound);
    entries.clear();
    entries.push_back(Entry{0, 0, -1, 0.0, kNegInf, 0.0, false});
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

  void scoreNext(size_t slot) {
    Entry &entry = entries[slot];
    double *row = &scorerRows[slot * vocab];
    spell(entry.node, entry.length);
    options.scorer->scoreNext(sequence, prefixLabels.data(), entry.length, row);
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
    for (const Candidate &candidate : heap) {
      if (candidate.rank < bestRank - options.scoreBeam)
        break;
      const Entry &source = entries[candidate.from];
      size_t slot = nextEntries.size();
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
    for (size_t i = 0; i < entries.size(); ++i) {
      const Entry &entry = entries[i];
      double rank = mergeScores(options.merge, entry.blank, entry.label) +
                    (entry.lm + bonus(entry.length));
      if (useScorer && options.scoreEnd) {
        spell(entry.node, entry.length);
        double end = options.scorer->scoreEnd(sequence, prefixLabels.data(),
                                              entry.length);
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
