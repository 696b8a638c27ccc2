//===- LinalgBuilder.h - building blocks of the nn lowering -----*- C++ -*-===//
//
// What the conversion patterns build with: scalar arithmetic for region
// bodies (Scalar), the bound dims of a lowered graph (BoundDims), and
// tensor/linalg building blocks shared by several op families
// (LinalgBuilder). Family-specific pieces stay in their pattern files.
//
//===----------------------------------------------------------------------===//

#ifndef NN_LOWERING_CONVERSION_LINALGBUILDER_H
#define NN_LOWERING_CONVERSION_LINALGBUILDER_H

#include "dialects/nn/Dims.h"
#include "mlir/Dialect/Utils/StructuredOpsUtils.h"
#include "mlir/IR/Builders.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/StringMap.h"

namespace mlir::nn {

/// Scalar arithmetic inside region bodies, spelled briefly.
struct Scalar {
  OpBuilder &b;
  Location loc;

  Value f(Type type, double value);
  Value idx(int64_t value);
  /// An i32 constant holding the low 32 bits of `bits`.
  Value i32(int64_t bits);
  Type i32Type() { return b.getIntegerType(32); }
  /// linalg.index of loop `dim`.
  Value index(unsigned dim);
  Value toIndex(Value v);
  Value add(Value x, Value y);
  /// A float sum whose terms may be reordered (row reductions within one
  /// frame), which lets LLVM vectorize it.
  Value addReassoc(Value x, Value y);
  Value sub(Value x, Value y);
  Value mul(Value x, Value y);
  Value div(Value x, Value y);
  Value max(Value x, Value y);
  Value neg(Value x);
  Value exp(Value x);
  Value log(Value x);
  Value tanh(Value x);
  Value sigmoid(Value x);
  Value select(Value c, Value x, Value y);
  Value lt(Value x, Value y);
  Value ge(Value x, Value y);
  Value ne(Value x, Value y);
  Value feq(Value x, Value y);
  Value andI(Value x, Value y);
  Value minI(Value x, Value y);
  Value maxI(Value x, Value y);
  Value toF64(Value x);
  /// An integer class index clamped into [0, size): padded positions may
  /// hold anything, and a clamped read is never out of bounds.
  Value clampIndex(Value v, Value size);
  /// log(exp(x) + exp(y)) without overflow; -inf when both are -inf.
  Value logAddExp(Value x, Value y);
  /// MurmurHash3's 32-bit finalizer of the i32 `h`: the mixing step of
  /// the counter-hashed masks (nn.dropout, nn.spec_augment, attention
  /// dropout).
  Value mix32(Value h);
  /// What every mask's hash starts from: mix(mix(seed + 0x9e3779b9) ^ key)
  /// of the i32 `seed`.
  Value keyedSeed(Value seed, int64_t key);
  /// The i32 seed of a mask's seed tensor (tensor<i32>, or tensor<2xi32>
  /// holding the seed and the batch offset) and the offset its sequence
  /// indices start from (null for a scalar seed: none; requireMaskSeed).
  std::pair<Value, Value> maskSeed(Value seedTensor);
  /// Dropout's draw: the keyed hash `h` mixed with each i32 coordinate in
  /// turn, kept (an i1) iff (h >> 8) >= ceil(rate * 2^24).
  Value keeps(Value h, ArrayRef<Value> coordinates, double rate);
};

/// Run-time values of one declared dim inside a lowered graph.
struct DimValue {
  /// Index: the batch size, the padded size of a sequence dim, or the
  /// number of packed frames.
  Value size;
  /// Sequence dims: tensor<?xi32> lengths over the batch.
  Value lengths;
  /// A flattened batch `flatten(B, K)`: tensor<?xi32> over B, the first
  /// entry of each sequence's hypotheses (the exclusive prefix sum of K's
  /// lengths).
  Value offsets;
  /// A flattened batch: tensor<?xi32> over its entries, the sequence b
  /// each belongs to.
  Value owner;
};

/// The dims of one lowered graph: its declarations and their run-time
/// values, and the function arguments its parameters arrive in.
class BoundDims {
public:
  explicit BoundDims(ArrayAttr declAttr)
      : declAttr(declAttr), decls(declAttr) {}

  /// The graph's `dims` attribute and its table.
  ArrayAttr getDeclAttr() const { return declAttr; }
  const DimTable &getDecls() const { return decls; }
  void bind(StringRef name, DimValue value) { values[name] = value; }
  bool isBound(StringRef name) const { return values.count(name); }
  /// The values of declared dim `name`: bound at function entry, or, for a
  /// computed dim and those derived from it, where its producer runs.
  const DimValue &lookup(StringRef name) const;
  Value size(StringRef name) const { return lookup(name).size; }
  Value lengths(StringRef name) const { return lookup(name).lengths; }

  void bindParameter(StringAttr name, Value value) { parameters[name] = value; }
  Value lookupParameter(StringAttr name) const {
    return parameters.lookup(name);
  }

private:
  ArrayAttr declAttr;
  DimTable decls;
  llvm::StringMap<DimValue> values;
  llvm::DenseMap<StringAttr, Value> parameters;
};

/// The body of forLoop: the values the iteration yields.
using LoopBody =
    function_ref<SmallVector<Value>(Scalar &, Value iv, ValueRange carried)>;

/// scf.for from `lower` to `upper` (step 1) carrying `init`; returns the
/// results. The scalar loops of the sequence recursions (transducers, edit
/// distance) are written with it.
SmallVector<Value> forLoop(Scalar &s, Value lower, Value upper, ValueRange init,
                           LoopBody body);

class LinalgBuilder;

/// Binds the derived, lifted, packed and flattened dims whose sources are
/// bound and which are not bound yet, in declaration order, computing their
/// sizes and lengths at `b`'s insertion point: at function entry from the
/// roots, and again after a producer binds a computed dim.
void deriveBoundDims(LinalgBuilder &b, BoundDims &dims);

/// The exclusive prefix sum of `lengths` (tensor<?xi32> over `batch`
/// sequences, an index): each sequence's first row among the rows of all,
/// as tensor<?xi32>, and the total.
std::pair<Value, Value> exclusivePrefixSum(LinalgBuilder &lb, Value batch,
                                           Value lengths);
/// The same over the row counts `rowsOf(s, b)` (an index) of each sequence
/// b: a transducer's T_b * U1_b grid rows, say.
std::pair<Value, Value>
exclusivePrefixSum(LinalgBuilder &lb, Value batch,
                   function_ref<Value(Scalar &, Value bi)> rowsOf);

/// The owner of each of `rows` rows, tensor<?xi32>: the last i < `count`
/// with firstRows[i] <= r, by bisection, for owners whose first rows are
/// the non-decreasing `firstRows` (an exclusivePrefixSum: the sequence of
/// each packed row; an empty sequence shares its first row with the next,
/// which the search passes).
Value ownerOfRows(LinalgBuilder &lb, Value firstRows, Value count, Value rows);

/// What one iteration of forEachSequence writes: `tile` into the shared
/// output at `offsets` with `sizes` (unit strides).
struct SequenceSlice {
  Value tile;
  SmallVector<OpFoldResult> offsets, sizes;
};

/// An scf.forall over `batch` independent sequences whose iterations each
/// compute their own tiles (`body`, at the iteration's insertion point,
/// returns one per output, in order) and insert them into `outputs`, the
/// loop's shared outputs; returns the outputs written. The tiles of
/// different sequences must not overlap, and together they must cover
/// every element of `outputs` (callers pass tensor.empty: an element no
/// tile writes is undefined). On the CPU, nn-parallel-loops runs the
/// sequences on threads; elsewhere it is a loop.
SmallVector<Value> forEachSequence(
    LinalgBuilder &lb, Value batch, ValueRange outputs,
    function_ref<SmallVector<SequenceSlice>(Scalar &, Value bi)> body);

/// Flattens the leading `positions` axes of `value` into one row axis (or
/// adds one when there are none).
Value toRows(OpBuilder &b, Location loc, Value value, unsigned positions);
/// The inverse of toRows: `rows` [R, F...] back to `shape` [P..., F...].
Value fromRows(OpBuilder &b, Location loc, Value rows, unsigned positions,
               ArrayRef<OpFoldResult> shape);

/// The frames of one sequence dim as a generic over them sees them (a
/// conv, a pool, a rotary embedding): padded [B, T, C] (frame t of
/// sequence b at [b, t]) or packed [N, C] (at row offset(b) + t). A
/// generic over a value of this layout leads with its position dims (two
/// padded, one packed); inside its body `current` names the position's
/// sequence and frame, and `read` any other frame of a value of the same
/// layout.
class SequenceFrames {
public:
  SequenceFrames(LinalgBuilder &lb, NNTensorType type);

  /// The generic dims a position takes.
  unsigned getPositionDims() const { return packed ? 1 : 2; }

  /// The sequence and frame of the current position of a generic that
  /// leads with this layout's position dims.
  std::pair<Value, Value> current(Scalar &s) const;

  /// The length of sequence `sequence`, as an index.
  Value length(Scalar &s, Value sequence) const;

  /// Whether the layout is packed rows `[N, ...]` (else padded).
  bool isPacked() const { return packed; }

  /// The row of frame 0 of sequence `sequence` (packed layouts only).
  Value firstRow(Scalar &s, Value sequence) const;

  /// Feature `feature` of frame `frame` (inside the sequence) of sequence
  /// `sequence` of `x`, a value of this layout.
  Value read(Scalar &s, Value x, Value sequence, Value frame,
             Value feature) const;

  /// Feature `feature` at `at` of `x`, a value of this layout, inside a
  /// generic that leads with this layout's position dims: `at` is a row
  /// (packed) or a frame of the current batch entry (padded), as a table
  /// found it once for many features (conv1d's window sources).
  Value readAt(Scalar &s, Value x, Value at, Value feature) const;

private:
  bool packed;
  /// [B] i32 lengths; packed: each sequence's first row, and [N] i32 the
  /// sequence of each row.
  Value lengths, offsets, sequenceOf;
};

/// Builds tensor/linalg IR at one location, reading sizes of named axes
/// from the bound dims.
class LinalgBuilder {
public:
  using BodyFn = function_ref<void(OpBuilder &, Location, ValueRange)>;
  using IteratorType = utils::IteratorType;

  LinalgBuilder(OpBuilder &b, Location loc, const BoundDims &dims)
      : b(b), loc(loc), dims(dims) {}

  OpBuilder &getBuilder() { return b; }
  Location getLoc() const { return loc; }
  const BoundDims &getDims() const { return dims; }
  Scalar scalar() { return Scalar{b, loc}; }
  /// The sizes of a value of `type`: bound dims for named axes.
  SmallVector<OpFoldResult> sizes(NNTensorType type);
  Value empty(ArrayRef<OpFoldResult> shape, Type element);
  /// `init` filled with `value` (an integer constant for integer tensors).
  Value fill(Value init, double value);
  Value filled(ArrayRef<OpFoldResult> shape, Type element, double value);
  Value generic(TypeRange results, ValueRange inputs, ValueRange outputs,
                ArrayRef<AffineMap> maps, ArrayRef<IteratorType> iterators,
                BodyFn body, unsigned resultIndex = 0);
  /// An elementwise map of same-shaped `inputs` to a value of `resultType`.
  Value map(NNTensorType resultType, ValueRange inputs,
            function_ref<Value(Scalar &, ValueRange)> fn);
  /// A map over `resultType` [P..., F] of same-shaped `inputs` and of a
  /// per-row value `row` [P...], broadcast along the last axis.
  Value mapWithRow(NNTensorType resultType, ValueRange inputs, Value row,
                   function_ref<Value(Scalar &, ValueRange, Value row)> fn);
  /// Reduces the last axis of `x` ([P..., F] -> [P...]). `extra` values are
  /// [P...] inputs broadcast along the reduced axis.
  Value reduceLast(
      Value x, ValueRange extra, Type accType, double init,
      function_ref<Value(Scalar &, Value elem, ValueRange extra, Value acc)>
          combine);

  /// The lengths that mask the padded position axes of a value of `type`:
  /// one per sequence axis (axes 1, 2, ...; each read at the batch index,
  /// axis 0); none for packed, per-sequence and static values.
  SmallVector<Value> paddingLengths(NNTensorType type);
  /// Inside a generic whose loops start with the position axes: whether
  /// the position is valid, given the `paddingLengths` as body arguments
  /// (null when there is nothing to mask).
  static Value isValidPosition(Scalar &s, ValueRange lengths);
  /// `x` with its padded positions zeroed by select (whatever they held);
  /// `lengths` are its `paddingLengths`.
  Value zeroPadding(Value x, ValueRange lengths);
  /// acc + term at valid positions, acc at padded ones (selected, not
  /// multiplied: whatever padding holds never reaches the sum).
  static Value accumulateIfValid(Scalar &s, Value acc, Value term,
                                 ValueRange lengths);

  /// a [M, K] times w [N, K] transposed: [M, N].
  Value matmulTransposeB(Value a, Value w);
  /// x [P..., I] W^T + bias over the last axis (`bias` may be null).
  Value linear(Value x, Value w, Value bias);
  /// The gradients of a linear, shared by every op whose backward holds
  /// one (nn.linear_grad_*, nn.lstm_grad). The input gradient dy [P..., O]
  /// times w [O, I]: [P..., I].
  Value linearGradInput(Value dy, Value w);
  /// The weight gradient: the sum over valid positions of dy[p, o] x[p, i],
  /// [O, I]. `lengths` are the positions' `paddingLengths`; padded
  /// positions of dy and x are zeroed by select first (NaN there never
  /// reaches the sum), leaving one GEMM for nn-gemm-to-blas.
  Value linearGradWeight(Value dy, Value x, ValueRange lengths);
  /// The sum of `x` over its first `positions` axes at valid positions
  /// (a bias gradient); the trailing axes are kept.
  Value sumValidPositions(Value x, unsigned positions, ValueRange lengths);
  /// The row maximum m of `x` over its last axis and sum exp(x - m): a
  /// log-sum-exp that does not overflow, m + log(sum).
  std::pair<Value, Value> rowMaxAndSumExp(Value x);
  /// log_softmax over the last axis.
  Value logSoftmax(Value x);
  /// Features [offset, offset + width) of `x` (its last axis).
  Value sliceFeatures(Value x, int64_t offset, int64_t width);
  /// The feature axes of `parts` side by side, on shared `positions`.
  Value concatFeatures(ValueRange parts, ArrayRef<OpFoldResult> positions,
                       ArrayRef<int64_t> widths, Type element);

private:
  OpBuilder &b;
  Location loc;
  const BoundDims &dims;
};

} // namespace mlir::nn

#endif // NN_LOWERING_CONVERSION_LINALGBUILDER_H
