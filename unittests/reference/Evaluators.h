//===- Evaluators.h - the reference's per-family evaluators -----*- C++ -*-===//
//
// Internal to the reference evaluator: the state of one graph's evaluation,
// the array helpers every op family uses, and one entry point per op family
// of the dialect (dialects/nn/NN*Ops.td). Reference.cpp walks a graph and
// hands each op to the families in turn; a new op is evaluated in its
// family's file.
//
//===----------------------------------------------------------------------===//

#ifndef NN_UNITTESTS_REFERENCE_EVALUATORS_H
#define NN_UNITTESTS_REFERENCE_EVALUATORS_H

#include "Reference.h"

#include "dialects/nn/Dims.h"
#include "dialects/nn/NNOps.h"

#include "llvm/ADT/DenseMap.h"

#include <cmath>
#include <functional>
#include <limits>
#include <map>
#include <set>
#include <string>
#include <utility>
#include <vector>

namespace nn::reference {

namespace ir = mlir::nn;
using mlir::Operation;
using mlir::Value;

constexpr double kInf = std::numeric_limits<double>::infinity();

/// The number of elements of an array of `shape`.
inline int64_t count(const std::vector<int64_t> &shape) {
  int64_t n = 1;
  for (int64_t s : shape)
    n *= s;
  return n;
}

/// An array of `shape` filled with zeros.
Array zeros(std::vector<int64_t> shape);

/// Row-major offset of `index` in `shape`.
inline int64_t offsetOf(const std::vector<int64_t> &shape,
                        const std::vector<int64_t> &index) {
  int64_t offset = 0;
  for (size_t i = 0; i < shape.size(); ++i)
    offset = offset * shape[i] + index[i];
  return offset;
}

/// Calls fn(index) for every index of `shape`, in row-major order.
template <typename Fn> void forEach(const std::vector<int64_t> &shape, Fn fn) {
  std::vector<int64_t> index(shape.size(), 0);
  for (int64_t n = count(shape), flat = 0; flat < n; ++flat) {
    fn(index);
    for (size_t i = shape.size(); i-- > 0;) {
      if (++index[i] < shape[i])
        break;
      index[i] = 0;
    }
  }
}

/// The nn tensor type of `v`.
inline ir::NNTensorType typeOf(Value v) {
  return mlir::cast<ir::NNTensorType>(v.getType());
}

/// The logistic function.
inline double sigmoid(double x) { return 1.0 / (1.0 + std::exp(-x)); }

/// Per row (all axes but the last) log-softmax.
Array logSoftmax(const Array &x);

/// MurmurHash3's 32-bit finalizer, the mixing step of the counter-hashed
/// masks (nn.dropout, nn.spec_augment, nn.attention's dropout: their
/// descriptions).
inline uint32_t mix(uint32_t h) {
  h ^= h >> 16;
  h *= 0x85ebca6bu;
  h ^= h >> 13;
  h *= 0xc2b2ae35u;
  h ^= h >> 16;
  return h;
}

/// What every mask's hash starts from: mix(mix(seed + 0x9e3779b9) ^ key).
inline uint32_t keyedSeed(uint32_t seed, int64_t key) {
  return mix(mix(seed + 0x9e3779b9u) ^ static_cast<uint32_t>(key));
}

/// One graph's evaluation state.
struct Frame {
  Frame(std::map<std::string, int64_t> sizes,
        std::map<std::string, std::vector<int64_t>> lengths, ir::DimTable table)
      : sizes(std::move(sizes)), lengths(std::move(lengths)),
        table(std::move(table)) {}

  std::map<std::string, int64_t> sizes;
  std::map<std::string, std::vector<int64_t>> lengths;
  ir::DimTable table;
  llvm::DenseMap<Value, Array> values;
  /// The derived and packed dims deriveDims() has computed.
  std::set<std::string> derived;
  /// Flattened batches H = flatten(B, K): per sequence b, the index of its
  /// first entry.
  std::map<std::string, std::vector<int64_t>> offsets;

  int64_t size(ir::NNTensorType type, unsigned axis) {
    return type.isNamedDim(axis) ? sizes.at(type.getDimName(axis).str())
                                 : type.getStaticSize(axis);
  }
  std::vector<int64_t> shape(ir::NNTensorType type) {
    std::vector<int64_t> s;
    for (unsigned i = 0; i < type.getRank(); ++i)
      s.push_back(size(type, i));
    return s;
  }
  /// Derives the derived and packed dims whose sources have lengths and
  /// which are not derived yet: the roots' at the start, a computed dim's
  /// after its producer.
  void deriveDims();

  /// Whether position `index` of a value of `type` is a real frame.
  bool valid(ir::NNTensorType type, const std::vector<int64_t> &index) {
    for (unsigned i = 1; i < type.getNumPositionDims(); ++i) {
      std::string first = type.getDimName(0).str();
      std::string dim = type.getDimName(i).str();
      if (!lengths.count(dim))
        continue;
      // [B, K, Y]: Y's lengths run over H = flatten(B, K); (b, k) is entry
      // offsets[H][b] + k.
      int64_t row = index[0];
      std::string batch = table.lookup(dim).getBatch().str();
      if (batch != first)
        row = offsets.at(batch)[index[0]] + index[1];
      if (index[i] >= lengths.at(dim)[row])
        return false;
    }
    return true;
  }
  /// The sequence b that entry h of flattened batch `flat` belongs to.
  int64_t owner(const std::string &flat, int64_t h) const {
    const std::vector<int64_t> &firsts = offsets.at(flat);
    int64_t b = 0;
    while (b + 1 < (int64_t)firsts.size() && firsts[b + 1] <= h)
      ++b;
    return b;
  }

  /// The value of operand `i` of `op` (ops are evaluated in order, so it
  /// is already there).
  const Array &operand(Operation *op, unsigned i) {
    return values[op->getOperand(i)];
  }
  /// Records `a` as the value of result `i` of `op`.
  void setResult(Operation *op, Array a, unsigned i = 0) {
    values[op->getResult(i)] = std::move(a);
  }
};

/// The losses nn.mark_loss reports, in the order the graphs mark them.
using LossList = std::vector<std::pair<std::string, Loss>>;

/// Where frame t of sequence b lies among the rows of a value over one
/// sequence dim: b * T + t when padded [B, T, F], first[b] + t when packed
/// [N, F] (the sequences one after another). `rows[b]` is how many rows
/// sequence b has: T padded, its length packed.
struct FrameRows {
  std::vector<int64_t> len, first, rows;
  int64_t row(int64_t b, int64_t t) const { return first[b] + t; }
};

/// The rows of a value of `type`, over one sequence dim (padded or
/// packed).
FrameRows frameRows(Frame &f, ir::NNTensorType type);

// One entry point per op family. Each evaluates `op` in `f` and returns
// true when `op` belongs to its family; false, with `f` untouched,
// otherwise.

/// Frame-wise layers (NNFrameWiseOps.td), and nn.spec_augment
/// (NNAugmentOps.td), whose masks are drawn as dropout's are.
bool evaluateFrameWiseOp(Frame &f, Operation *op);
/// Sequence-mixing layers and their gradients (NNSequenceOps.td).
bool evaluateSequenceOp(Frame &f, Operation *op);
/// Attention within each sequence and its gradient (NNAttentionOps.td).
bool evaluateAttentionOp(Frame &f, Operation *op);
/// Frame-wise losses and the marking of losses (NNLossOps.td); nn.mark_loss
/// appends to `losses`.
bool evaluateLossOp(Frame &f, Operation *op, LossList &losses);
/// CTC loss, its gradient and forced alignment (NNCtcOps.td).
bool evaluateCtcOp(Frame &f, Operation *op);
/// Scoring of recognized label sequences: edit_distance, expected_risk
/// and its gradient (NNErrorOps.td).
bool evaluateErrorOp(Frame &f, Operation *op);
/// Transducer joint, loss, alignment and their gradients
/// (NNTransducerOps.td).
bool evaluateTransducerOp(Frame &f, Operation *op);
/// Decoders, which compute the lengths of their hypotheses
/// (NNDecodeOps.td).
bool evaluateDecodeOp(Frame &f, Operation *op);
/// For decoders with `[B, Y]` results: binds computed dim `dim` to the
/// hypotheses' lengths (padded to the longest, at least 1), derives what
/// follows, and sets the hypotheses, padded with 0, as result 0 of `op`.
void setHypotheses(Frame &f, Operation *op, const std::string &dim,
                   const std::vector<std::vector<int64_t>> &hypotheses);
/// For beam searches: results from each sequence's list of (labels, score),
/// best first. `[B, Y]` results take each list's first hypothesis (the
/// empty one and -inf for an empty list); `[B, K, Y]` results bind K to
/// the lists' sizes and Y to the hypotheses' lengths (H = flatten(B, K)
/// follows), padded with 0.
void setBeamResults(
    Frame &f, Operation *op, ir::NNTensorType labelsType,
    const std::vector<std::vector<std::pair<std::vector<int64_t>, double>>>
        &lists);
/// Evaluates callee graph `graph` on `arguments` with its row batch (its
/// first dim) bound to `rows`; the reference's own graph walker. A callee
/// with a second dim (a sequence-form predictor, `[S, U]` labels in) runs
/// every row over the whole of its argument's axis 1.
using RowGraphRunner = std::function<absl::Status(
    llvm::StringRef graph, int64_t rows, std::vector<Array> arguments,
    std::vector<Array> &results)>;
/// Decoders that drive callee graphs step by step
/// (nn.transducer_greedy_decode, NNDecodeOps.td); `status` reports a
/// callee's failure.
bool evaluateCalleeDecodeOp(Frame &f, Operation *op,
                            const RowGraphRunner &runRows,
                            absl::Status &status);
/// nn.ctc_beam_search, with its language model (if any) evaluated by
/// `runRows`.
absl::Status evaluateCtcBeamSearchOp(Frame &f, Operation *op,
                                     const RowGraphRunner &runRows);
/// Packing and broadcasting between layouts (NNPackOps.td).
bool evaluatePackOp(Frame &f, Operation *op);
/// Gradients of frame-wise layers and losses and the generic backward
/// pieces (NNGradientOps.td).
bool evaluateGradientOp(Frame &f, Operation *op);

} // namespace nn::reference

#endif // NN_UNITTESTS_REFERENCE_EVALUATORS_H
