//===- TransducerSearch.cpp - transducer beam search, one step at a time --===//
//
// The workspace holds a header (the shape), then per sequence its slots
// (the hypotheses the caller's rows belong to) and, for rnnt, the frame's
// result set. A hypothesis stores its score, a hash of its labels (to find
// equal sequences quickly; equality is always checked in full), its length,
// where its rows come from, and its labels. Candidates of a step are
// (parent, appended label) pairs scored in f64; they are grouped by label
// sequence, merged by log-sum-exp in a fixed order, and ranked by the
// sequence order of TransducerSearch.h. Nothing allocated here outlives a
// call.
//
//===----------------------------------------------------------------------===//

#include "runtime/search/TransducerSearch.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <string>

namespace nn::runtime {
namespace {

constexpr uint64_t kMagic = 0x6e6e746265616d31; // "nntbeam1"
constexpr double kNegInf = -std::numeric_limits<double>::infinity();

struct Header {
  uint64_t magic;
  int64_t batch;
  int64_t capacity;
  int32_t beam;
  int32_t kind;
  int32_t maxSymbols;
  int32_t padding;
};

/// A stored hypothesis; its `length` labels follow it.
struct Hypothesis {
  double score;
  uint64_t hash;
  int32_t length;
  /// rnnt result sets: the stashed row its predictor state comes from.
  int32_t source;
};

int64_t entryBytes(int64_t capacity) {
  return (static_cast<int64_t>(sizeof(Hypothesis)) + 4 * capacity + 7) / 8 * 8;
}

int64_t resultSlots(const TransducerBeamShape &shape) {
  return shape.kind == TransducerKind::rnnt
             ? static_cast<int64_t>(shape.beam) * shape.rounds()
             : 0;
}

int64_t sequenceBytes(const TransducerBeamShape &shape) {
  return 8 + entryBytes(shape.capacity) * (shape.beam + resultSlots(shape));
}

bool validShape(const TransducerBeamShape &shape) {
  return shape.batch >= 0 && shape.beam >= 1 && shape.capacity >= 0 &&
         shape.capacity < (int64_t{1} << 30) &&
         (shape.kind == TransducerKind::rna ||
          (shape.kind == TransducerKind::rnnt && shape.maxSymbols >= 1 &&
           shape.maxSymbols < (1 << 20)));
}

uint64_t mixLabel(uint64_t hash, int32_t label) {
  uint64_t z = hash ^ (static_cast<uint64_t>(static_cast<uint32_t>(label)) +
                       0x9e3779b97f4a7c15ULL);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
  return z ^ (z >> 31);
}

double logAddExp(double a, double b) {
  if (a < b)
    std::swap(a, b);
  if (b == kNegInf)
    return a;
  return a + std::log1p(std::exp(b - a));
}

/// The workspace, checked and laid out.
class Workspace {
public:
  static absl::StatusOr<Workspace> open(const void *data, int64_t bytes) {
    if (!data || bytes < static_cast<int64_t>(sizeof(Header)))
      return absl::InvalidArgumentError("workspace missing or too small");
    Header header;
    std::memcpy(&header, data, sizeof(Header));
    if (header.magic != kMagic)
      return absl::InvalidArgumentError(
          "workspace not started (transducer beam search)");
    Workspace ws;
    ws.base = static_cast<char *>(const_cast<void *>(data));
    ws.shape.batch = header.batch;
    ws.shape.capacity = header.capacity;
    ws.shape.beam = header.beam;
    ws.shape.kind = static_cast<TransducerKind>(header.kind);
    ws.shape.maxSymbols = header.maxSymbols;
    if (!validShape(ws.shape) || transducerWorkspaceBytes(ws.shape) > bytes)
      return absl::InvalidArgumentError("workspace header corrupt");
    return ws;
  }

  int32_t &slotCount(int64_t b) { return *counts(b); }
  int32_t &resultCount(int64_t b) { return counts(b)[1]; }
  Hypothesis *slot(int64_t b, int64_t k) { return entry(b, k); }
  Hypothesis *result(int64_t b, int64_t k) { return entry(b, shape.beam + k); }

  TransducerBeamShape shape;

private:
  int32_t *counts(int64_t b) {
    return reinterpret_cast<int32_t *>(base + sizeof(Header) +
                                       b * sequenceBytes(shape));
  }
  Hypothesis *entry(int64_t b, int64_t i) {
    return reinterpret_cast<Hypothesis *>(base + sizeof(Header) +
                                          b * sequenceBytes(shape) + 8 +
                                          i * entryBytes(shape.capacity));
  }
  char *base = nullptr;
};

int32_t *labelsOf(Hypothesis *h) { return reinterpret_cast<int32_t *>(h + 1); }
const int32_t *labelsOf(const Hypothesis *h) {
  return reinterpret_cast<const int32_t *>(h + 1);
}

/// A hypothesis's copy, taken before its slot is overwritten.
struct Parent {
  double score;
  uint64_t hash;
  std::vector<int32_t> labels;
};

/// Parent `parent` extended by `label` (-1: not extended).
struct Candidate {
  double score;
  uint64_t hash;
  int32_t length;
  int32_t parent;
  int32_t label;
};

int32_t labelAt(const std::vector<Parent> &parents, const Candidate &c,
                int32_t i) {
  const std::vector<int32_t> &prefix = parents[c.parent].labels;
  return i < static_cast<int32_t>(prefix.size()) ? prefix[i] : c.label;
}

/// -1, 0, 1 as a's labels sort before, equal or after b's of equal length.
int compareLabels(const std::vector<Parent> &parents, const Candidate &a,
                  const Candidate &b) {
  for (int32_t i = 0; i < a.length; ++i) {
    int32_t x = labelAt(parents, a, i), y = labelAt(parents, b, i);
    if (x != y)
      return x < y ? -1 : 1;
  }
  return 0;
}

/// The sequence order: higher score, then shorter, then lexicographically
/// smaller labels.
bool ranksBefore(const std::vector<Parent> &parents, const Candidate &a,
                 const Candidate &b) {
  if (a.score != b.score)
    return a.score > b.score;
  if (a.length != b.length)
    return a.length < b.length;
  return compareLabels(parents, a, b) < 0;
}

double readLogProb(const TransducerLogProbs &x, int64_t row, int64_t c) {
  int64_t at = row * x.rowStride + c * x.classStride;
  double v = x.type == ScoreType::f32 ? static_cast<const float *>(x.data)[at]
                                      : static_cast<const double *>(x.data)[at];
  return std::isnan(v) ? kNegInf : v;
}

/// Merges candidates that spell the same labels (log-sum-exp, in a fixed
/// order; the first of a group, an unextended one if any, represents it)
/// and keeps the best `beam`, best first.
std::vector<Candidate> mergeAndSelect(const std::vector<Parent> &parents,
                                      std::vector<Candidate> candidates,
                                      int32_t beam) {
  std::sort(candidates.begin(), candidates.end(),
            [&](const Candidate &a, const Candidate &b) {
              if (a.length != b.length)
                return a.length < b.length;
              if (a.hash != b.hash)
                return a.hash < b.hash;
              if (int order = compareLabels(parents, a, b))
                return order < 0;
              if (a.label != b.label)
                return a.label < b.label;
              return a.parent < b.parent;
            });
  std::vector<Candidate> merged;
  for (const Candidate &c : candidates) {
    if (!merged.empty()) {
      Candidate &last = merged.back();
      if (last.length == c.length && last.hash == c.hash &&
          compareLabels(parents, last, c) == 0) {
        last.score = logAddExp(last.score, c.score);
        continue;
      }
    }
    merged.push_back(c);
  }
  auto order = [&](const Candidate &a, const Candidate &b) {
    return ranksBefore(parents, a, b);
  };
  if (static_cast<int64_t>(merged.size()) > beam) {
    std::partial_sort(merged.begin(), merged.begin() + beam, merged.end(),
                      order);
    merged.resize(beam);
  } else {
    std::sort(merged.begin(), merged.end(), order);
  }
  return merged;
}

/// Copies of sequence b's slots.
std::vector<Parent> takeSlots(Workspace &ws, int64_t b) {
  std::vector<Parent> parents(ws.slotCount(b));
  for (int32_t k = 0; k < ws.slotCount(b); ++k) {
    const Hypothesis *h = ws.slot(b, k);
    parents[k].score = h->score;
    parents[k].hash = h->hash;
    parents[k].labels.assign(labelsOf(h), labelsOf(h) + h->length);
  }
  return parents;
}

void writeSlot(Hypothesis *h, double score, uint64_t hash,
               const int32_t *labels, int32_t length, int32_t source) {
  h->score = score;
  h->hash = hash;
  h->length = length;
  h->source = source;
  // An empty hypothesis may come from an empty vector (a null pointer),
  // which memmove must not be given even for zero bytes.
  if (length > 0)
    std::memmove(labelsOf(h), labels, sizeof(int32_t) * length);
}

/// Extends sequence b's slots by the labels (and, with `withBlank`, the
/// blank) of its rows, keeps the best, and reports parents and labels.
absl::Status expand(Workspace &ws, int64_t b, const TransducerLogProbs &x,
                    int32_t blank, bool withBlank, int32_t *parents,
                    int32_t *labels, int32_t *anyLabel) {
  const TransducerBeamShape &shape = ws.shape;
  std::vector<Parent> old = takeSlots(ws, b);
  std::vector<Candidate> candidates;
  candidates.reserve(old.size() * x.vocab);
  for (int32_t k = 0; k < static_cast<int32_t>(old.size()); ++k) {
    int64_t row = b * shape.beam + k;
    auto length = static_cast<int32_t>(old[k].labels.size());
    for (int32_t c = 0; c < x.vocab; ++c) {
      if (c == blank && !withBlank)
        continue;
      double score = old[k].score + readLogProb(x, row, c);
      if (score == kNegInf)
        continue;
      if (c == blank) {
        candidates.push_back({score, old[k].hash, length, k, -1});
        continue;
      }
      if (length >= shape.capacity)
        return absl::InvalidArgumentError(
            "a hypothesis outgrows the label capacity " +
            std::to_string(shape.capacity));
      candidates.push_back({score, mixLabel(old[k].hash, c), length + 1, k, c});
    }
  }
  std::vector<Candidate> kept =
      mergeAndSelect(old, std::move(candidates), shape.beam);
  ws.slotCount(b) = static_cast<int32_t>(kept.size());
  for (int32_t j = 0; j < shape.beam; ++j) {
    int64_t row = b * shape.beam + j;
    if (j >= static_cast<int32_t>(kept.size())) {
      parents[row] = static_cast<int32_t>(row);
      labels[row] = -1;
      continue;
    }
    const Candidate &c = kept[j];
    const Parent &p = old[c.parent];
    Hypothesis *h = ws.slot(b, j);
    writeSlot(h, c.score, c.hash, p.labels.data(),
              static_cast<int32_t>(p.labels.size()), 0);
    if (c.label >= 0)
      labelsOf(h)[h->length++] = c.label;
    parents[row] = static_cast<int32_t>(b * shape.beam + c.parent);
    labels[row] = c.label;
    if (c.label >= 0)
      *anyLabel = 1;
  }
  return absl::OkStatus();
}

/// rnnt: sequence b's slots end the frame with the blank, into its result
/// set (equal labels merge by log-sum-exp; the first arrival keeps its
/// row).
void endWithBlank(Workspace &ws, int64_t b, const TransducerLogProbs &x,
                  int32_t blank, int32_t round) {
  const TransducerBeamShape &shape = ws.shape;
  for (int32_t k = 0; k < ws.slotCount(b); ++k) {
    Hypothesis *h = ws.slot(b, k);
    double score = h->score + readLogProb(x, b * shape.beam + k, blank);
    if (score == kNegInf)
      continue;
    int32_t found = -1;
    for (int32_t i = 0; i < ws.resultCount(b) && found < 0; ++i) {
      const Hypothesis *r = ws.result(b, i);
      if (r->length == h->length && r->hash == h->hash &&
          std::equal(labelsOf(r), labelsOf(r) + r->length, labelsOf(h)))
        found = i;
    }
    if (found >= 0) {
      Hypothesis *r = ws.result(b, found);
      r->score = logAddExp(r->score, score);
      continue;
    }
    auto source = static_cast<int32_t>(
        (static_cast<int64_t>(round) * shape.batch + b) * shape.beam + k);
    writeSlot(ws.result(b, ws.resultCount(b)++), score, h->hash, labelsOf(h),
              h->length, source);
  }
}

} // namespace

int64_t transducerWorkspaceBytes(const TransducerBeamShape &shape) {
  if (!validShape(shape))
    return 0;
  return static_cast<int64_t>(sizeof(Header)) +
         shape.batch * sequenceBytes(shape);
}

absl::Status transducerBeamStart(const TransducerBeamShape &shape,
                                 void *workspace, int64_t bytes) {
  if (!validShape(shape))
    return absl::InvalidArgumentError(
        "transducer beam search: batch, beam, capacity or max_symbols out of "
        "range");
  if (!workspace || bytes < transducerWorkspaceBytes(shape))
    return absl::InvalidArgumentError(
        "transducer beam search: workspace of " + std::to_string(bytes) +
        " bytes, needs " + std::to_string(transducerWorkspaceBytes(shape)));
  Header header{kMagic,
                shape.batch,
                shape.capacity,
                shape.beam,
                static_cast<int32_t>(shape.kind),
                shape.maxSymbols,
                0};
  std::memcpy(workspace, &header, sizeof(Header));
  absl::StatusOr<Workspace> ws = Workspace::open(workspace, bytes);
  if (!ws.ok())
    return ws.status();
  for (int64_t b = 0; b < shape.batch; ++b) {
    ws->slotCount(b) = 1;
    ws->resultCount(b) = 0;
    writeSlot(ws->slot(b, 0), 0.0, 0, nullptr, 0, 0);
  }
  return absl::OkStatus();
}

absl::Status transducerBeamStep(void *workspace, int64_t bytes,
                                const TransducerLogProbs &logProbs,
                                int32_t blank, const int32_t *lengths,
                                int64_t frame, int32_t round, int32_t *parents,
                                int32_t *labels, int32_t *anyLabel) {
  absl::StatusOr<Workspace> ws = Workspace::open(workspace, bytes);
  if (!ws.ok())
    return ws.status();
  const TransducerBeamShape &shape = ws->shape;
  if (round < 0 || round >= shape.rounds())
    return absl::InvalidArgumentError("round " + std::to_string(round) +
                                      " out of range");
  if (blank < 0 || blank >= logProbs.vocab || !logProbs.data ||
      (shape.batch > 0 && (!lengths || !parents || !labels || !anyLabel)))
    return absl::InvalidArgumentError(
        "blank, log-probabilities or buffers out of range");
  bool rnnt = shape.kind == TransducerKind::rnnt;
  *anyLabel = 0;
  for (int64_t b = 0; b < shape.batch; ++b) {
    if (lengths[b] <= frame) {
      for (int32_t j = 0; j < shape.beam; ++j) {
        int64_t row = b * shape.beam + j;
        parents[row] = static_cast<int32_t>(row);
        labels[row] = -1;
      }
      continue;
    }
    if (rnnt) {
      if (round == 0)
        ws->resultCount(b) = 0;
      endWithBlank(*ws, b, logProbs, blank, round);
      if (round == shape.maxSymbols) {
        // The last round only ends hypotheses: a frame emits maxSymbols
        // labels at most.
        ws->slotCount(b) = 0;
        for (int32_t j = 0; j < shape.beam; ++j) {
          int64_t row = b * shape.beam + j;
          parents[row] = static_cast<int32_t>(row);
          labels[row] = -1;
        }
        continue;
      }
    }
    if (absl::Status status =
            expand(*ws, b, logProbs, blank, !rnnt, parents, labels, anyLabel);
        !status.ok())
      return status;
  }
  return absl::OkStatus();
}

absl::Status transducerBeamEndFrame(void *workspace, int64_t bytes,
                                    const int32_t *lengths, int64_t frame,
                                    int32_t *parents) {
  absl::StatusOr<Workspace> ws = Workspace::open(workspace, bytes);
  if (!ws.ok())
    return ws.status();
  const TransducerBeamShape &shape = ws->shape;
  if (shape.kind != TransducerKind::rnnt)
    return absl::InvalidArgumentError("end of frame is for rnnt searches");
  if (shape.batch > 0 && (!lengths || !parents))
    return absl::InvalidArgumentError("lengths or parents missing");
  for (int64_t b = 0; b < shape.batch; ++b) {
    int64_t first = b * shape.beam;
    if (lengths[b] <= frame) {
      for (int32_t j = 0; j < shape.beam; ++j)
        parents[first + j] = static_cast<int32_t>(first + j);
      continue;
    }
    // Rank the result set as candidates of its own hypotheses.
    std::vector<Parent> results(ws->resultCount(b));
    std::vector<Candidate> candidates;
    for (int32_t i = 0; i < ws->resultCount(b); ++i) {
      const Hypothesis *r = ws->result(b, i);
      results[i] = {r->score, r->hash,
                    std::vector<int32_t>(labelsOf(r), labelsOf(r) + r->length)};
      candidates.push_back({r->score, r->hash, r->length, i, -1});
    }
    std::vector<Candidate> kept =
        mergeAndSelect(results, std::move(candidates), shape.beam);
    ws->slotCount(b) = static_cast<int32_t>(kept.size());
    for (int32_t j = 0; j < shape.beam; ++j) {
      if (j >= static_cast<int32_t>(kept.size())) {
        parents[first + j] = static_cast<int32_t>(first + j);
        continue;
      }
      const Parent &p = results[kept[j].parent];
      writeSlot(ws->slot(b, j), p.score, p.hash, p.labels.data(),
                static_cast<int32_t>(p.labels.size()), 0);
      parents[first + j] = ws->result(b, kept[j].parent)->source;
    }
    ws->resultCount(b) = 0;
  }
  return absl::OkStatus();
}

absl::StatusOr<std::vector<std::vector<CtcHypothesis>>>
transducerBeamFinish(const void *workspace, int64_t bytes) {
  absl::StatusOr<Workspace> ws = Workspace::open(workspace, bytes);
  if (!ws.ok())
    return ws.status();
  std::vector<std::vector<CtcHypothesis>> all(ws->shape.batch);
  for (int64_t b = 0; b < ws->shape.batch; ++b)
    for (int32_t k = 0; k < ws->slotCount(b); ++k) {
      const Hypothesis *h = ws->slot(b, k);
      all[b].push_back(
          {std::vector<int32_t>(labelsOf(h), labelsOf(h) + h->length),
           h->score});
    }
  return all;
}

absl::Status transducerBeamFinish(const void *workspace, int64_t bytes,
                                  const CtcNBestBuffers &output) {
  absl::StatusOr<std::vector<std::vector<CtcHypothesis>>> all =
      transducerBeamFinish(workspace, bytes);
  if (!all.ok())
    return all.status();
  auto batch = static_cast<int64_t>(all->size());
  if (batch == 0)
    return absl::OkStatus();
  absl::StatusOr<Workspace> ws = Workspace::open(workspace, bytes);
  int64_t beam = ws->shape.beam;
  if (!output.labels || !output.labelLengths || !output.scores ||
      !output.counts)
    return absl::InvalidArgumentError("N-best buffers missing");
  for (int64_t b = 0; b < batch; ++b)
    for (const CtcHypothesis &h : (*all)[b])
      if (static_cast<int64_t>(h.labels.size()) > output.capacity)
        return absl::InvalidArgumentError(
            "label capacity " + std::to_string(output.capacity) +
            " below a hypothesis of " + std::to_string(h.labels.size()));
  for (int64_t b = 0; b < batch; ++b) {
    const std::vector<CtcHypothesis> &list = (*all)[b];
    output.counts[b] = static_cast<int32_t>(list.size());
    for (int64_t k = 0; k < beam; ++k) {
      int64_t row = b * beam + k;
      int32_t *labels = output.labels + row * output.capacity;
      std::fill(labels, labels + output.capacity, 0);
      bool used = k < static_cast<int64_t>(list.size());
      double score = used ? list[k].score : kNegInf;
      output.labelLengths[row] =
          used ? static_cast<int32_t>(list[k].labels.size()) : 0;
      if (used)
        std::copy(list[k].labels.begin(), list[k].labels.end(), labels);
      if (output.scoreType == ScoreType::f32)
        static_cast<float *>(output.scores)[row] = static_cast<float>(score);
      else
        static_cast<double *>(output.scores)[row] = score;
    }
  }
  return absl::OkStatus();
}

} // namespace nn::runtime
