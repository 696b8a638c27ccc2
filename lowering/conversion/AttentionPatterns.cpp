//===- AttentionPatterns.cpp - attention within each sequence -------------===//
//
// nn.attention (and nn.attention_with_stats) and nn.attention_grad run per
// sequence (an scf.forall over the batch: threads on the CPU), per head, on
// the sequence's own rows of padded [B, T, F] or packed [N, F] frames;
// padding is never read.
//
// Neither holds a [Tq, Tk] score matrix. The forward walks blocks of
// kQueryBlock queries and, for each, blocks of kKeyBlock keys with an
// online softmax (FlashAttention, Dao et al. 2022): a running row maximum
// m, a running sum l of exp(s - m) and an accumulator of the weighted
// values, rescaled by exp(m_old - m_new) when the maximum grows. Between
// its two GEMMs a key block takes two passes over its scores, in place:
// the mask with the row maximum, then the exponentials with their row
// sums (reassociated, so vectorized). Only the key blocks a mask leaves
// visible are visited. nn.attention_with_stats
// also writes each query's log normalizer m + log l per head. The gradient
// reads those and the forward's output when it is given them
// (FlashAttention-2's backward), else it redoes the forward's walk for a
// query block to get them; then it walks the keys to form the block's
// weights and their gradients. The block GEMMs are linalg matmuls that
// nn-gemm-to-blas hands to BLAS. Relative positions add, per block, the GEMM of
// the position queries with the table rows of the block's distances and a
// gather by i - j (the "relative shift"); the gradient scatters back by i - j.
// Dropout of the weights hashes each weight's (sequence, head, query
// frame, key frame) as nn.dropout hashes positions, in the forward and
// again in the gradient, so nothing is stored.
// nn.rotary, the position embedding that attention's queries and keys
// take, is one generic over the frames; nn.relative_positions a generic
// of sinusoids and a GEMM.
//
//===----------------------------------------------------------------------===//

#include "lowering/conversion/Patterns.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"

#include <cmath>
#include <limits>
#include <type_traits>

using namespace mlir;
using namespace mlir::nn;

using utils::IteratorType;

namespace {

/// Queries and keys per block. A [64, 512] block of scores and its weights
/// (128 KiB each) stay in the L2 cache next to the [64, D] and [512, D]
/// blocks they come from. Long key blocks amortize what each block costs
/// besides its work: the BLAS calls, the generics between them and, with
/// relative positions, the table rows of the block's distances (64 + 512 -
/// 1 rows for 64 x 512 scores, against 127 for 64 x 64). Against 64 x 64
/// blocks they made benchAttention 1.07x to 1.44x faster
/// (docs/performance.md).
constexpr int64_t kQueryBlock = 64;
constexpr int64_t kKeyBlock = 512;

constexpr double kNegInf = -std::numeric_limits<double>::infinity();

NNTensorType typeOf(Value v) { return cast<NNTensorType>(v.getType()); }

/// The frames of one sequence dim, padded [B, T, F] or packed [N, F], as
/// the per-sequence body reads and writes them.
class SequenceRows {
public:
  SequenceRows(LinalgBuilder &lb, NNTensorType type) {
    const BoundDims &dims = lb.getDims();
    packed = type.getNumPositionDims() == 1;
    StringRef sequence = type.getDimName(1 - packed);
    if (packed) {
      DimDeclAttr decl = dims.getDecls().lookup(type.getDimName(0));
      sequence = decl.getSource().getValue();
      Value batch = dims.size(decl.getBatch().getValue());
      lengths = dims.lengths(sequence);
      offsets = exclusivePrefixSum(lb, batch, lengths).first;
    } else {
      lengths = dims.lengths(sequence);
    }
    paddedSize = dims.size(sequence);
  }

  /// The padded size of the sequence dim (packed: of the dim it packs).
  Value getPaddedSize() const { return paddedSize; }

  /// Binds sequence `bi`'s length (and first row, packed) at `s`.
  void select(Scalar &s, Value bi) {
    sequence = bi;
    length = s.toIndex(s.b.create<tensor::ExtractOp>(s.loc, lengths, bi));
    if (packed)
      offset = s.toIndex(s.b.create<tensor::ExtractOp>(s.loc, offsets, bi));
  }

  Value getLength() const { return length; }

  /// The selected sequence's real frames of `x`: [length, F].
  Value rows(OpBuilder &b, Location loc, Value x) const {
    int64_t width = cast<RankedTensorType>(x.getType()).getShape().back();
    auto type = RankedTensorType::get({ShapedType::kDynamic, width},
                                      getElementTypeOrSelf(x.getType()));
    OpFoldResult zero = b.getIndexAttr(0), one = b.getIndexAttr(1);
    OpFoldResult features = b.getIndexAttr(width);
    if (packed)
      return b.create<tensor::ExtractSliceOp>(
          loc, type, x, ArrayRef<OpFoldResult>{offset, zero},
          ArrayRef<OpFoldResult>{length, features},
          ArrayRef<OpFoldResult>{one, one});
    return b.create<tensor::ExtractSliceOp>(
        loc, type, x, ArrayRef<OpFoldResult>{sequence, zero, zero},
        ArrayRef<OpFoldResult>{one, length, features},
        ArrayRef<OpFoldResult>{one, one, one});
  }

  /// A zero tile for the selected sequence's part of an output with
  /// `width` features: its length (packed) or the padded size in rows.
  Value zeroTile(LinalgBuilder &lb, int64_t width, Type element) const {
    return lb.filled(
        {packed ? length : paddedSize, lb.getBuilder().getIndexAttr(width)},
        element, 0.0);
  }

  /// Where that tile goes in the output.
  SequenceSlice slice(OpBuilder &b, Value tile, int64_t width) const {
    OpFoldResult zero = b.getIndexAttr(0), one = b.getIndexAttr(1);
    OpFoldResult features = b.getIndexAttr(width);
    if (packed)
      return {tile, {offset, zero}, {length, features}};
    return {tile, {sequence, zero, zero}, {one, paddedSize, features}};
  }

private:
  bool packed;
  /// [B] i32 lengths; packed, each sequence's first row.
  Value lengths, offsets;
  /// The padded size of the sequence dim.
  Value paddedSize;
  /// The selected sequence, its length and first row (packed).
  Value sequence, length, offset;
};

/// The batch that the frames of `type` (padded or packed) belong to.
Value batchOf(LinalgBuilder &lb, NNTensorType type) {
  const DimTable &decls = lb.getDims().getDecls();
  StringRef first = type.getDimName(0);
  return lb.getDims().size(decls.isPacked(first)
                               ? decls.lookup(first).getBatch().getValue()
                               : first);
}

/// The heads, scale and mask of an attention, read from either op.
struct AttentionSpec {
  int64_t heads, keyWidth, valueWidth;
  double scale;
  bool causal;
  std::optional<int64_t> leftContext, rightContext, chunkSize, leftChunks;
  /// With relative positions: c, the distance of the table's last row
  /// (the table has 2c + 1).
  std::optional<int64_t> center;
  /// The dropout rate of the weights and the op's key; applied only with
  /// a seed (training).
  std::optional<double> dropout;
  int64_t dropoutKey;

  template <typename OpTy> static AttentionSpec of(OpTy op) {
    auto optional = [](std::optional<uint64_t> v) -> std::optional<int64_t> {
      if (!v)
        return std::nullopt;
      return static_cast<int64_t>(*v);
    };
    auto heads = static_cast<int64_t>(op.getHeads());
    std::optional<int64_t> center;
    if (Value table = op.getPositions())
      center = typeOf(table).getStaticSize(0) / 2;
    return {heads,
            typeOf(op.getQuery())
                    .getStaticSize(typeOf(op.getQuery()).getRank() - 1) /
                heads,
            typeOf(op.getValue())
                    .getStaticSize(typeOf(op.getValue()).getRank() - 1) /
                heads,
            op.getScaleOrDefault(),
            op.getCausal(),
            optional(op.getLeftContext()),
            optional(op.getRightContext()),
            optional(op.getChunkSize()),
            optional(op.getLeftChunks()),
            center,
            op.getDropout()
                ? std::optional<double>(op.getDropout()->convertToDouble())
                : std::nullopt,
            static_cast<int64_t>(op.getDropoutKey())};
  }

  /// The table row of the distance between query frame `i` and key frame
  /// `j`: c + clamp(i - j, -c, c).
  Value tableRow(Scalar &s, Value i, Value j) const {
    Value row = s.sub(s.add(s.idx(*center), i), j);
    return s.minI(s.maxI(row, s.idx(0)), s.idx(2 * *center));
  }

  /// Whether key frame `j` is visible from query frame `i` (both frames of
  /// one sequence; null when every key is).
  Value visible(Scalar &s, Value i, Value j) const {
    Value result;
    auto require = [&](Value condition) {
      result = result ? s.andI(result, condition) : condition;
    };
    if (causal)
      require(s.ge(i, j));
    if (leftContext)
      require(s.ge(s.add(j, s.idx(*leftContext)), i));
    if (rightContext)
      require(s.ge(s.add(i, s.idx(*rightContext)), j));
    if (chunkSize) {
      Value chunk = s.b.create<arith::DivUIOp>(s.loc, i, s.idx(*chunkSize));
      require(s.lt(j, s.mul(s.add(chunk, s.idx(1)), s.idx(*chunkSize))));
      if (leftChunks)
        require(s.ge(s.add(j, s.idx(*leftChunks * *chunkSize)),
                     s.mul(chunk, s.idx(*chunkSize))));
    }
    return result;
  }

  /// The keys [lo, hi) that queries [first, first + count) may see among
  /// `keys`: a bound the mask gives, so whole blocks outside are skipped.
  std::pair<Value, Value> keyRange(Scalar &s, Value first, Value count,
                                   Value keys) const {
    Value last = s.sub(s.add(first, count), s.idx(1));
    Value lo = s.idx(0), hi = keys;
    if (causal)
      hi = s.minI(hi, s.add(last, s.idx(1)));
    if (rightContext)
      hi = s.minI(hi, s.add(last, s.idx(*rightContext + 1)));
    if (leftContext)
      lo = s.maxI(lo, s.sub(first, s.idx(*leftContext)));
    if (chunkSize) {
      Value size = s.idx(*chunkSize);
      Value lastChunk = s.b.create<arith::DivUIOp>(s.loc, last, size);
      hi = s.minI(hi, s.mul(s.add(lastChunk, s.idx(1)), size));
      if (leftChunks) {
        Value firstChunk = s.b.create<arith::DivUIOp>(s.loc, first, size);
        lo = s.maxI(lo, s.mul(s.sub(firstChunk, s.idx(*leftChunks)), size));
      }
    }
    return {lo, hi};
  }
};

/// Builds the block loops of one sequence's attention with `lb`'s builder.
class AttentionBlocks {
public:
  /// `table` is the relative positions' table, null without them.
  AttentionBlocks(LinalgBuilder &lb, const AttentionSpec &spec, Type element,
                  Value table)
      : lb(lb), b(lb.getBuilder()), loc(lb.getLoc()), spec(spec),
        element(element), table(table) {}

  /// scf.for from `lo` to `hi` by `step` carrying `init`; `body` builds the
  /// iteration with `lb` and returns what it yields.
  SmallVector<Value>
  loop(Value lo, Value hi, int64_t step, ValueRange init,
       function_ref<SmallVector<Value>(Value iv, ValueRange carried)> body) {
    Scalar s = lb.scalar();
    auto forOp = b.create<scf::ForOp>(loc, lo, hi, s.idx(step), init);
    OpBuilder::InsertionGuard guard(b);
    Block *block = forOp.getBody();
    if (block->mightHaveTerminator())
      b.setInsertionPoint(block->getTerminator());
    else
      b.setInsertionPointToEnd(block);
    SmallVector<Value> yielded =
        body(forOp.getInductionVar(), forOp.getRegionIterArgs());
    if (block->mightHaveTerminator())
      block->getTerminator()->erase();
    b.setInsertionPointToEnd(block);
    b.create<scf::YieldOp>(loc, yielded);
    return SmallVector<Value>(forOp.getResults());
  }

  /// min(block, total - first): the size of the block starting at `first`.
  Value blockSize(Value first, Value total, int64_t block) {
    Scalar s = lb.scalar();
    return s.minI(s.idx(block), s.sub(total, first));
  }

  /// Rows [first, first + count) and features [column, column + width) of
  /// `x`.
  Value block(Value x, Value first, Value count, Value column, int64_t width) {
    auto type = RankedTensorType::get({ShapedType::kDynamic, width},
                                      getElementTypeOrSelf(x.getType()));
    OpFoldResult one = b.getIndexAttr(1);
    return b.create<tensor::ExtractSliceOp>(
        loc, type, x, ArrayRef<OpFoldResult>{first, column},
        ArrayRef<OpFoldResult>{count, b.getIndexAttr(width)},
        ArrayRef<OpFoldResult>{one, one});
  }

  Value insertBlock(Value tile, Value into, Value first, Value count,
                    Value column, int64_t width) {
    OpFoldResult one = b.getIndexAttr(1);
    return b.create<tensor::InsertSliceOp>(
        loc, tile, into, ArrayRef<OpFoldResult>{first, column},
        ArrayRef<OpFoldResult>{count, b.getIndexAttr(width)},
        ArrayRef<OpFoldResult>{one, one});
  }

  /// Rows [first, first + count) of column `column` of `x` [R, C]: [count].
  Value columnBlock(Value x, Value first, Value count, Value column) {
    auto type = RankedTensorType::get({ShapedType::kDynamic},
                                      getElementTypeOrSelf(x.getType()));
    OpFoldResult one = b.getIndexAttr(1);
    return b.create<tensor::ExtractSliceOp>(
        loc, type, x, ArrayRef<OpFoldResult>{first, column},
        ArrayRef<OpFoldResult>{count, one}, ArrayRef<OpFoldResult>{one, one});
  }

  /// `values` [count] into rows [first, first + count) of column `column`
  /// of `into` [R, C].
  Value insertColumnBlock(Value values, Value into, Value first, Value count,
                          Value column) {
    OpFoldResult one = b.getIndexAttr(1);
    return b.create<tensor::InsertSliceOp>(
        loc, values, into, ArrayRef<OpFoldResult>{first, column},
        ArrayRef<OpFoldResult>{count, one}, ArrayRef<OpFoldResult>{one, one});
  }

  /// a [M, K] b [N, K]^T + c.
  Value matmulTransposeB(Value x, Value y, Value c) {
    return b
        .create<linalg::MatmulTransposeBOp>(loc, c.getType(), ValueRange{x, y},
                                            ValueRange{c})
        .getResult(0);
  }
  /// a [M, K] b [K, N] + c.
  Value matmul(Value x, Value y, Value c) {
    return b
        .create<linalg::MatmulOp>(loc, c.getType(), ValueRange{x, y},
                                  ValueRange{c})
        .getResult(0);
  }
  /// a [K, M]^T b [K, N] + c: a contraction over the rows, in the form
  /// nn-gemm-to-blas takes for a weight gradient.
  Value matmulTransposeA(Value x, Value y, Value c) {
    MLIRContext *context = b.getContext();
    AffineExpr r = b.getAffineDimExpr(0), m = b.getAffineDimExpr(1),
               n = b.getAffineDimExpr(2);
    return lb.generic(c.getType(), {x, y}, c,
                      {AffineMap::get(3, 0, {r, m}, context),
                       AffineMap::get(3, 0, {r, n}, context),
                       AffineMap::get(3, 0, {m, n}, context)},
                      {IteratorType::reduction, IteratorType::parallel,
                       IteratorType::parallel},
                      [&](OpBuilder &nb, Location l, ValueRange a) {
                        Scalar s{nb, l};
                        nb.create<linalg::YieldOp>(
                            l, s.add(a[2], s.mul(a[0], a[1])));
                      });
  }

  Value zeros(ArrayRef<OpFoldResult> shape) {
    return lb.filled(shape, element, 0.0);
  }

  /// Turns on the dropout of the weights for the sequence whose index is
  /// the i32 `sequenceIndex`: `keyed` is the hash of the seed and the key.
  void dropWith(Value keyed, Value sequenceIndex) {
    dropoutSeed = keyed;
    sequence = sequenceIndex;
  }

  /// The dropout factors of a block of weights shaped like `block`
  /// [queries, keys] of head `head` (queries from `qFirst`, keys from
  /// `kFirst`): 1 / (1 - rate) where nn.dropout's hash of (sequence, head,
  /// query frame, key frame) keeps the weight, else 0. Null without
  /// dropout.
  Value dropFactors(Value block, Value qFirst, Value kFirst, Value head) {
    if (!dropoutSeed)
      return Value();
    double rate = *spec.dropout;
    return withRows(block, {}, [&](Scalar &s, ValueRange, ValueRange) {
      auto toI32 = [&](Value index) -> Value {
        return s.b.create<arith::IndexCastOp>(s.loc, s.i32Type(), index);
      };
      Value keep =
          s.keeps(dropoutSeed,
                  {sequence, toI32(head), toI32(s.add(qFirst, s.index(0))),
                   toI32(s.add(kFirst, s.index(1)))},
                  rate);
      return s.select(keep, s.f(element, 1.0 / (1.0 - rate)),
                      s.f(element, 0.0));
    });
  }

  /// `x` times the dropout `factors` (`x` itself without them).
  Value dropped(Value x, Value factors) {
    if (!factors)
      return x;
    return withRows({x, factors}, {}, [](Scalar &s, ValueRange a, ValueRange) {
      return s.mul(a[0], a[1]);
    });
  }

  /// The relative-position terms of one block of queries against one of
  /// keys: the table rows [lo, lo + rows) of the block's distances, and
  /// `scores` [queries, rows], each position query against each row.
  struct PositionBlock {
    Value scores, tableRows, lo;
  };
  PositionBlock positionScores(Value r, Value qFirst, Value kFirst,
                               Value kCount, Value head) {
    Scalar s = lb.scalar();
    Value count = b.create<tensor::DimOp>(loc, r, 0);
    Value one = s.idx(1);
    // Distances fall from the block's last query against its first key to
    // its first query against its last key.
    Value lo = spec.tableRow(s, qFirst, s.sub(s.add(kFirst, kCount), one));
    Value hi =
        s.add(spec.tableRow(s, s.sub(s.add(qFirst, count), one), kFirst), one);
    Value rows = s.sub(hi, lo);
    Value p = block(table, lo, rows, s.mul(head, s.idx(spec.keyWidth)),
                    spec.keyWidth);
    return {matmulTransposeB(r, p, zeros({count, rows})), p, lo};
  }

  /// q [queries, D] . k [keys, D]^T: the block's raw scores.
  Value rawScores(Value q, Value k) {
    OpFoldResult rows = tensor::getMixedSize(b, loc, q, 0);
    OpFoldResult cols = tensor::getMixedSize(b, loc, k, 0);
    return matmulTransposeB(q, k, zeros({rows, cols}));
  }

  /// The scaled, masked score of the raw score `raw` at the generic's
  /// position in a block of queries [qFirst, ...) against keys [kFirst,
  /// ...): scale * (q . k + r . p[distance]) where visible, -inf elsewhere
  /// (`position` null without relative positions).
  Value maskScore(Scalar &s, Value raw, Value qFirst, Value kFirst,
                  const PositionBlock *position) {
    Value i = s.add(qFirst, s.index(0)), j = s.add(kFirst, s.index(1));
    Value score = raw;
    if (position) {
      // The relative shift: this pair's distance picks the column.
      Value column = s.sub(spec.tableRow(s, i, j), position->lo);
      score = s.add(
          score, s.b.create<tensor::ExtractOp>(s.loc, position->scores,
                                               ValueRange{s.index(0), column}));
    }
    Value scaled = s.mul(score, s.f(element, spec.scale));
    Value visible = spec.visible(s, i, j);
    return visible ? s.select(visible, scaled, s.f(element, kNegInf)) : scaled;
  }

  /// In one pass over the block `x` [M, N], rewritten in place: each
  /// element becomes `fn` of it (and of its row's values `rows` [M]), and
  /// `combine` folds the new elements of each row into `init` [M]. One walk
  /// where a map and a row reduction would take two; the accumulators stay
  /// in registers (nn-register-accumulators), so LLVM vectorizes the walk.
  /// Returns the new block and the reduction.
  std::pair<Value, Value>
  mapAndReduceRows(Value x, ValueRange rows, Value init,
                   function_ref<Value(Scalar &, Value x, ValueRange rows)> fn,
                   function_ref<Value(Scalar &, Value y, Value acc)> combine) {
    MLIRContext *context = b.getContext();
    AffineMap full = b.getMultiDimIdentityMap(2);
    AffineMap row = AffineMap::get(2, 0, b.getAffineDimExpr(0), context);
    SmallVector<AffineMap> maps(rows.size(), row);
    maps.append({full, row});
    auto generic = b.create<linalg::GenericOp>(
        loc, TypeRange{x.getType(), init.getType()}, rows, ValueRange{x, init},
        maps,
        ArrayRef<IteratorType>{IteratorType::parallel, IteratorType::reduction},
        [&](OpBuilder &nb, Location l, ValueRange a) {
          Scalar s{nb, l};
          Value y = fn(s, a[rows.size()], a.take_front(rows.size()));
          nb.create<linalg::YieldOp>(l, ValueRange{y, combine(s, y, a.back())});
        });
    return {generic.getResult(0), generic.getResult(1)};
  }

  /// The transpose of the relative shift: each score gradient of `ds`
  /// [queries, keys] added into its distance's column of a [queries,
  /// rows] block (clipped distances share the end columns).
  Value scatterByDistance(Value ds, const PositionBlock &position, Value qFirst,
                          Value kFirst) {
    Scalar s = lb.scalar();
    Value count = b.create<tensor::DimOp>(loc, ds, 0);
    Value keys = b.create<tensor::DimOp>(loc, ds, 1);
    Value rows = b.create<tensor::DimOp>(loc, position.scores, 1);
    Value init = zeros({count, rows});
    return loop(s.idx(0), count, 1, init, [&](Value i, ValueRange perRow) {
      return loop(s.idx(0), keys, 1, perRow, [&](Value j, ValueRange acc) {
        Scalar x = lb.scalar();
        Value column = x.sub(
            spec.tableRow(x, x.add(qFirst, i), x.add(kFirst, j)), position.lo);
        Value old =
            b.create<tensor::ExtractOp>(loc, acc[0], ValueRange{i, column});
        Value value = b.create<tensor::ExtractOp>(loc, ds, ValueRange{i, j});
        return SmallVector<Value>{b.create<tensor::InsertOp>(
            loc, x.add(old, value), acc[0], ValueRange{i, column})};
      });
    })[0];
  }

  /// Per row of `x` [M, N]: `combine` of the row's elements (and those of
  /// same-shaped `extras` at the same place) into `init` [M].
  Value
  rowReduce(Value x, ValueRange extras, Value init,
            function_ref<Value(Scalar &, Value x, ValueRange extras, Value acc)>
                combine) {
    MLIRContext *context = b.getContext();
    AffineMap full = b.getMultiDimIdentityMap(2);
    AffineMap row = AffineMap::get(2, 0, b.getAffineDimExpr(0), context);
    SmallVector<Value> inputs{x};
    llvm::append_range(inputs, extras);
    SmallVector<AffineMap> maps(extras.size() + 1, full);
    maps.push_back(row);
    return lb.generic(
        init.getType(), inputs, init, maps,
        {IteratorType::parallel, IteratorType::reduction},
        [&](OpBuilder &nb, Location l, ValueRange a) {
          Scalar s{nb, l};
          nb.create<linalg::YieldOp>(
              l, combine(s, a[0], a.slice(1, extras.size()), a.back()));
        });
  }

  /// Elementwise over same-shaped `full` values ([M, N] or [M]) with
  /// per-row values `rows` [M]; `fn` may read the position (linalg.index).
  Value
  withRows(ValueRange full, ValueRange rows,
           function_ref<Value(Scalar &, ValueRange full, ValueRange rows)> fn) {
    MLIRContext *context = b.getContext();
    unsigned rank = cast<RankedTensorType>(full[0].getType()).getRank();
    AffineMap identity = b.getMultiDimIdentityMap(rank);
    AffineMap row = AffineMap::get(rank, 0, b.getAffineDimExpr(0), context);
    SmallVector<Value> inputs(full);
    llvm::append_range(inputs, rows);
    SmallVector<AffineMap> maps(full.size(), identity);
    maps.append(rows.size(), row);
    maps.push_back(identity);
    Value init = lb.empty(tensor::getMixedSizes(b, loc, full[0]), element);
    return lb.generic(init.getType(), inputs, init, maps,
                      SmallVector<IteratorType>(rank, IteratorType::parallel),
                      [&](OpBuilder &nb, Location l, ValueRange a) {
                        Scalar s{nb, l};
                        nb.create<linalg::YieldOp>(
                            l, fn(s, a.take_front(full.size()),
                                  a.slice(full.size(), rows.size())));
                      });
  }

  /// m where it is finite, else 0: the base of exp(s - m) for a row that
  /// has seen no visible key yet (every s is -inf; exp gives 0, not NaN).
  Value safeMax(Scalar &s, Value m) {
    return s.select(s.feq(m, s.f(element, kNegInf)), s.f(element, 0.0), m);
  }

  /// The online softmax of one query block `q` (rows [qFirst, qFirst +
  /// count)) over the visible keys of `kRows`/`vRows` in head `head`:
  /// the row maximum m, the sum l of exp(s - m) and sum_j exp(s - m) v_j
  /// (with dropout, of the kept exp(s - m), scaled; l sums them all).
  struct Softmax {
    Value max, sum, weighted;
  };
  /// `r` is the block's position queries, null without relative
  /// positions.
  Softmax onlineSoftmax(Value q, Value r, Value qFirst, Value count,
                        Value kRows, Value vRows, Value keys, Value head) {
    Scalar s = lb.scalar();
    auto [lo, hi] = spec.keyRange(s, qFirst, count, keys);
    Value kColumn = s.mul(head, s.idx(spec.keyWidth));
    Value vColumn = s.mul(head, s.idx(spec.valueWidth));
    Value max0 = lb.filled({count}, element, kNegInf);
    Value sum0 = zeros({count});
    Value weighted0 = zeros({count, b.getIndexAttr(spec.valueWidth)});
    SmallVector<Value> state = loop(
        lo, hi, kKeyBlock, {max0, sum0, weighted0},
        [&](Value kFirst, ValueRange carried) -> SmallVector<Value> {
          Value kCount = blockSize(kFirst, hi, kKeyBlock);
          Value k = block(kRows, kFirst, kCount, kColumn, spec.keyWidth);
          Value v = block(vRows, kFirst, kCount, vColumn, spec.valueWidth);
          std::optional<PositionBlock> position;
          if (r)
            position = positionScores(r, qFirst, kFirst, kCount, head);
          // Two passes over the block's scores: the mask and the row
          // maximum, then the weights exp(s - m) and their row sums.
          auto [scores, max] = mapAndReduceRows(
              rawScores(q, k), {}, carried[0],
              [&](Scalar &r, Value x, ValueRange) {
                return maskScore(r, x, qFirst, kFirst,
                                 position ? &*position : nullptr);
              },
              [](Scalar &r, Value y, Value acc) { return r.max(acc, y); });
          // exp(m_old - m_new): 0 while the row had no visible key.
          Value rescale = withRows(
              carried[0], max, [&](Scalar &r, ValueRange old, ValueRange m) {
                return r.exp(r.sub(old[0], safeMax(r, m[0])));
              });
          Value rescaledSum = withRows(
              carried[1], rescale, [](Scalar &r, ValueRange l, ValueRange a) {
                return r.mul(l[0], a[0]);
              });
          // The row sums in any order (reassociated, so that LLVM
          // vectorizes them): the order is still the sequence's own.
          auto [weights, sum] = mapAndReduceRows(
              scores, max, rescaledSum,
              [&](Scalar &r, Value x, ValueRange m) {
                return r.exp(r.sub(x, safeMax(r, m[0])));
              },
              [](Scalar &r, Value y, Value acc) {
                return r.addReassoc(acc, y);
              });
          Value weighted = matmul(
              dropped(weights, dropFactors(weights, qFirst, kFirst, head)), v,
              withRows(carried[2], rescale,
                       [](Scalar &r, ValueRange acc, ValueRange a) {
                         return r.mul(acc[0], a[0]);
                       }));
          return {max, sum, weighted};
        });
    return {state[0], state[1], state[2]};
  }

  /// The log of each row's normalizer, safeMax(m) + log l: the weights
  /// are exp(s - lse). +inf for a row that saw no key, whose weights are
  /// then all 0. What nn.attention_with_stats keeps.
  Value logNormalizer(const Softmax &softmax) {
    return withRows(softmax.max, softmax.sum,
                    [&](Scalar &x, ValueRange m, ValueRange l) {
                      Value zero = x.f(element, 0.0);
                      return x.select(x.feq(l[0], zero), x.f(element, -kNegInf),
                                      x.add(safeMax(x, m[0]), x.log(l[0])));
                    });
  }

  /// The block's output: weighted / sum, 0 for a row that saw no key.
  Value normalize(const Softmax &softmax) {
    return withRows(softmax.weighted, softmax.sum,
                    [&](Scalar &s, ValueRange x, ValueRange l) {
                      Value zero = s.f(element, 0.0);
                      return s.select(s.feq(l[0], zero), zero,
                                      s.div(x[0], l[0]));
                    });
  }

private:
  LinalgBuilder &lb;
  OpBuilder &b;
  Location loc;
  const AttentionSpec &spec;
  Type element;
  Value table;
  /// Dropout in training: the hash of seed and key, the sequence's index.
  Value dropoutSeed, sequence;
};

/// The hash of the seed and the op's key that every dropped weight's hash
/// starts from, and the index of the batch's first sequence (a
/// data-parallel rank's part), or nulls without dropout in training.
std::pair<Value, Value>
keyedDropoutSeed(LinalgBuilder &lb, const AttentionSpec &spec, Value seed) {
  if (!seed || !spec.dropout || *spec.dropout == 0.0)
    return {};
  Scalar s = lb.scalar();
  auto [value, offset] = s.maskSeed(seed);
  return {s.keyedSeed(value, spec.dropoutKey), offset};
}

/// The i32 index of sequence `bi` (an index), a coordinate of the hash.
Value sequenceIndex(Scalar &s, Value bi) {
  return s.b.create<arith::IndexCastOp>(s.loc, s.i32Type(), bi);
}

/// The sequence coordinate of the dropout hash: the index of sequence
/// `bi` in the whole batch, counting from `firstSequence` (a data-parallel
/// rank's part) when the seed gives one.
Value sequenceKey(Scalar &s, Value bi, Value firstSequence) {
  Value index = sequenceIndex(s, bi);
  return firstSequence ? s.add(index, firstSequence) : index;
}

/// nn.attention, and nn.attention_with_stats, which also writes each
/// query block's log normalizers into its stats.
template <typename OpTy>
class AttentionConversion : public NNConversionPattern<OpTy> {
public:
  using NNConversionPattern<OpTy>::NNConversionPattern;
  using OpAdaptor = typename NNConversionPattern<OpTy>::OpAdaptor;
  static constexpr bool kWithStats = std::is_same_v<OpTy, AttentionWithStatsOp>;

  FailureOr<SmallVector<Value>> build(OpTy op, OpAdaptor adaptor,
                                      LinalgBuilder &lb) const override {
    OpBuilder &b = lb.getBuilder();
    AttentionSpec spec = AttentionSpec::of(op);
    NNTensorType resultType = typeOf(op.getResult());
    Type element = resultType.getElementType();
    SequenceRows queries(lb, typeOf(op.getQuery()));
    SequenceRows keys(lb, typeOf(op.getKey()));
    Value batch = batchOf(lb, resultType);
    int64_t width = spec.heads * spec.valueWidth;
    ValueRange relative = adaptor.getRelative();
    Value keyed, firstSequence;
    std::tie(keyed, firstSequence) =
        keyedDropoutSeed(lb, spec, adaptor.getSeed());
    SmallVector<Value> outputs{lb.empty(lb.sizes(resultType), element)};
    if constexpr (kWithStats)
      outputs.push_back(lb.empty(lb.sizes(typeOf(op.getStats())), element));
    SmallVector<Value> results = forEachSequence(
        lb, batch, outputs,
        [&](Scalar &s, Value bi) -> SmallVector<SequenceSlice> {
          queries.select(s, bi);
          keys.select(s, bi);
          Value qRows = queries.rows(b, s.loc, adaptor.getQuery());
          Value kRows = keys.rows(b, s.loc, adaptor.getKey());
          Value vRows = keys.rows(b, s.loc, adaptor.getValue());
          Value rRows =
              !relative.empty() ? queries.rows(b, s.loc, relative[0]) : Value();
          Value qCount = queries.getLength(), kCount = keys.getLength();
          AttentionBlocks blocks(lb, spec, element,
                                 !relative.empty() ? relative[1] : Value());
          if (keyed)
            blocks.dropWith(keyed, sequenceKey(s, bi, firstSequence));
          // The output tile, and the stats tile (padded frames 0).
          SmallVector<Value> tiles{queries.zeroTile(lb, width, element)};
          if constexpr (kWithStats)
            tiles.push_back(queries.zeroTile(lb, spec.heads, element));
          tiles = blocks.loop(
              s.idx(0), s.idx(spec.heads), 1, tiles,
              [&](Value head, ValueRange perHead) -> SmallVector<Value> {
                Scalar h = lb.scalar();
                Value qColumn = h.mul(head, h.idx(spec.keyWidth));
                Value outColumn = h.mul(head, h.idx(spec.valueWidth));
                return blocks.loop(
                    h.idx(0), qCount, kQueryBlock, perHead,
                    [&](Value qFirst,
                        ValueRange carried) -> SmallVector<Value> {
                      Value count =
                          blocks.blockSize(qFirst, qCount, kQueryBlock);
                      Value q = blocks.block(qRows, qFirst, count, qColumn,
                                             spec.keyWidth);
                      Value r = rRows ? blocks.block(rRows, qFirst, count,
                                                     qColumn, spec.keyWidth)
                                      : Value();
                      AttentionBlocks::Softmax softmax = blocks.onlineSoftmax(
                          q, r, qFirst, count, kRows, vRows, kCount, head);
                      SmallVector<Value> written{blocks.insertBlock(
                          blocks.normalize(softmax), carried[0], qFirst, count,
                          outColumn, spec.valueWidth)};
                      if constexpr (kWithStats)
                        written.push_back(blocks.insertColumnBlock(
                            blocks.logNormalizer(softmax), carried[1], qFirst,
                            count, head));
                      return written;
                    });
              });
          SmallVector<SequenceSlice> slices{queries.slice(b, tiles[0], width)};
          if constexpr (kWithStats)
            slices.push_back(queries.slice(b, tiles[1], spec.heads));
          return slices;
        });
    return results;
  }
};

/// The rows of one sequence that the gradient reads and its lengths.
struct GradientRows {
  Value q, dy, k, v;
  /// The position queries' rows, null without relative positions.
  Value r;
  Value qCount, kCount;
  /// The table row that row 0 of the sequence's part of the table's
  /// gradient stands for.
  Value tableFirst;
  /// The forward's output and stats rows (nn.attention_with_stats), or
  /// null when the gradient recomputes them.
  Value savedOutput, savedStats;
};

class AttentionGradConversion : public NNConversionPattern<AttentionGradOp> {
public:
  using NNConversionPattern::NNConversionPattern;

  FailureOr<SmallVector<Value>> build(AttentionGradOp op, OpAdaptor adaptor,
                                      LinalgBuilder &lb) const override {
    OpBuilder &b = lb.getBuilder();
    AttentionSpec spec = AttentionSpec::of(op);
    NNTensorType queryType = typeOf(op.getQuery());
    Type element = queryType.getElementType();
    SequenceRows queries(lb, queryType);
    SequenceRows keys(lb, typeOf(op.getKey()));
    Value batch = batchOf(lb, queryType);
    int64_t keyFeatures = spec.heads * spec.keyWidth;
    int64_t valueFeatures = spec.heads * spec.valueWidth;
    ValueRange relative = adaptor.getRelative();
    bool hasRelative = !relative.empty();
    Value keyed, firstSequence;
    std::tie(keyed, firstSequence) =
        keyedDropoutSeed(lb, spec, adaptor.getSeed());
    SmallVector<Value> outputs{
        lb.empty(lb.sizes(queryType), element),
        lb.empty(lb.sizes(typeOf(op.getKey())), element),
        lb.empty(lb.sizes(typeOf(op.getValue())), element)};
    // The table's gradient sums over all sequences: each sequence writes
    // its own part, summed after the loop, so no two threads write one
    // element. A part covers only the rows of distances within the longest
    // sequence, [first, first + used): at most 2 T_max - 1 rows however
    // large the table is.
    Value tableFirst, tableUsed;
    if (hasRelative) {
      Scalar s = lb.scalar();
      int64_t c = *spec.center;
      Value reach = s.sub(queries.getPaddedSize(), s.idx(1));
      tableFirst = s.maxI(s.idx(0), s.sub(s.idx(c), reach));
      Value last = s.minI(s.idx(2 * c), s.add(s.idx(c), reach));
      tableUsed = s.maxI(s.idx(0), s.sub(s.add(last, s.idx(1)), tableFirst));
      outputs.push_back(lb.empty(lb.sizes(queryType), element));
      outputs.push_back(
          lb.empty({batch, tableUsed, b.getIndexAttr(keyFeatures)}, element));
    }
    SmallVector<Value> results = forEachSequence(
        lb, batch, outputs,
        [&](Scalar &s, Value bi) -> SmallVector<SequenceSlice> {
          queries.select(s, bi);
          keys.select(s, bi);
          Location loc = s.loc;
          GradientRows rows{queries.rows(b, loc, adaptor.getQuery()),
                            queries.rows(b, loc, adaptor.getGrad()),
                            keys.rows(b, loc, adaptor.getKey()),
                            keys.rows(b, loc, adaptor.getValue()),
                            hasRelative ? queries.rows(b, loc, relative[0])
                                        : Value(),
                            queries.getLength(),
                            keys.getLength(),
                            tableFirst};
          if (Value saved = adaptor.getSavedOutput()) {
            rows.savedOutput = queries.rows(b, loc, saved);
            rows.savedStats = queries.rows(b, loc, adaptor.getSavedStats());
          }
          AttentionBlocks blocks(lb, spec, element,
                                 hasRelative ? relative[1] : Value());
          if (keyed)
            blocks.dropWith(keyed, sequenceKey(s, bi, firstSequence));
          SmallVector<Value> tiles{queries.zeroTile(lb, keyFeatures, element),
                                   keys.zeroTile(lb, keyFeatures, element),
                                   keys.zeroTile(lb, valueFeatures, element)};
          if (hasRelative) {
            tiles.push_back(queries.zeroTile(lb, keyFeatures, element));
            tiles.push_back(
                blocks.zeros({tableUsed, b.getIndexAttr(keyFeatures)}));
          }
          tiles = blocks.loop(
              s.idx(0), s.idx(spec.heads), 1, tiles,
              [&](Value head, ValueRange perHead) -> SmallVector<Value> {
                return blocks.loop(s.idx(0), rows.qCount, kQueryBlock, perHead,
                                   [&](Value qFirst, ValueRange carried) {
                                     return queryBlock(lb, blocks, spec,
                                                       element, qFirst, head,
                                                       rows, carried);
                                   });
              });
          SmallVector<SequenceSlice> slices{
              queries.slice(b, tiles[0], keyFeatures),
              keys.slice(b, tiles[1], keyFeatures),
              keys.slice(b, tiles[2], valueFeatures)};
          if (hasRelative) {
            OpFoldResult zero = b.getIndexAttr(0), one = b.getIndexAttr(1);
            slices.push_back(queries.slice(b, tiles[3], keyFeatures));
            slices.push_back({tiles[4],
                              {bi, zero, zero},
                              {one, tableUsed, b.getIndexAttr(keyFeatures)}});
          }
          return slices;
        });
    if (hasRelative) {
      // The parts' sum, in the table's rows; the rows no distance reaches
      // get 0.
      OpFoldResult zero = b.getIndexAttr(0), one = b.getIndexAttr(1);
      OpFoldResult features = b.getIndexAttr(keyFeatures);
      Value table =
          lb.filled(lb.sizes(typeOf(op.getPositions())), element, 0.0);
      results.back() = b.create<tensor::InsertSliceOp>(
          lb.getLoc(), sumOverSequences(lb, results.back(), element), table,
          ArrayRef<OpFoldResult>{tableFirst, zero},
          ArrayRef<OpFoldResult>{tableUsed, features},
          ArrayRef<OpFoldResult>{one, one});
    }
    return results;
  }

private:
  /// The sum over the leading axis of `parts` [B, R, F].
  static Value sumOverSequences(LinalgBuilder &lb, Value parts, Type element) {
    OpBuilder &b = lb.getBuilder();
    Value init = lb.filled({tensor::getMixedSize(b, lb.getLoc(), parts, 1),
                            tensor::getMixedSize(b, lb.getLoc(), parts, 2)},
                           element, 0.0);
    MLIRContext *context = b.getContext();
    AffineExpr s = b.getAffineDimExpr(0), r = b.getAffineDimExpr(1),
               f = b.getAffineDimExpr(2);
    return lb.generic(init.getType(), parts, init,
                      {AffineMap::get(3, 0, {s, r, f}, context),
                       AffineMap::get(3, 0, {r, f}, context)},
                      {IteratorType::reduction, IteratorType::parallel,
                       IteratorType::parallel},
                      [](OpBuilder &nb, Location l, ValueRange a) {
                        Scalar x{nb, l};
                        nb.create<linalg::YieldOp>(l, x.add(a[1], a[0]));
                      });
  }

  /// The gradients of one head's query block: its rows of dq (and dr),
  /// and what it adds to the rows of dk, dv (and the table's gradient);
  /// `carried`: the dq, dk, dv (dr, dtable) tiles.
  static SmallVector<Value>
  queryBlock(LinalgBuilder &lb, AttentionBlocks &blocks,
             const AttentionSpec &spec, Type element, Value qFirst, Value head,
             const GradientRows &rows, ValueRange carried) {
    OpBuilder &b = lb.getBuilder();
    Scalar s = lb.scalar();
    Value kColumn = s.mul(head, s.idx(spec.keyWidth));
    Value vColumn = s.mul(head, s.idx(spec.valueWidth));
    Value count = blocks.blockSize(qFirst, rows.qCount, kQueryBlock);
    Value q = blocks.block(rows.q, qFirst, count, kColumn, spec.keyWidth);
    Value dy = blocks.block(rows.dy, qFirst, count, vColumn, spec.valueWidth);
    Value r = rows.r
                  ? blocks.block(rows.r, qFirst, count, kColumn, spec.keyWidth)
                  : Value();
    // The forward's output and log normalizers (p = exp(s - lse)): kept
    // by nn.attention_with_stats, or recomputed by the same walk.
    Value out, lse;
    if (rows.savedOutput) {
      out = blocks.block(rows.savedOutput, qFirst, count, vColumn,
                         spec.valueWidth);
      lse = blocks.columnBlock(rows.savedStats, qFirst, count, head);
    } else {
      AttentionBlocks::Softmax softmax = blocks.onlineSoftmax(
          q, r, qFirst, count, rows.k, rows.v, rows.kCount, head);
      out = blocks.normalize(softmax);
      lse = blocks.logNormalizer(softmax);
    }
    // sum_j p[i, j] dp[i, j] = dy[i] . out[i].
    Value dyOut =
        blocks.rowReduce(dy, out, blocks.zeros({count}),
                         [](Scalar &x, Value y, ValueRange o, Value acc) {
                           return x.addReassoc(acc, x.mul(y, o[0]));
                         });
    auto [lo, hi] = spec.keyRange(s, qFirst, count, rows.kCount);
    Value rowBlock = blocks.zeros({count, b.getIndexAttr(spec.keyWidth)});
    SmallVector<Value> init{rowBlock, carried[1], carried[2]};
    if (r)
      init.append({rowBlock, carried[4]});
    SmallVector<Value> state = blocks.loop(
        lo, hi, kKeyBlock, init,
        [&](Value kFirst, ValueRange acc) -> SmallVector<Value> {
          Value kBlock = blocks.blockSize(kFirst, hi, kKeyBlock);
          Value k =
              blocks.block(rows.k, kFirst, kBlock, kColumn, spec.keyWidth);
          Value v =
              blocks.block(rows.v, kFirst, kBlock, vColumn, spec.valueWidth);
          std::optional<AttentionBlocks::PositionBlock> position;
          if (r)
            position = blocks.positionScores(r, qFirst, kFirst, kBlock, head);
          // The weights exp(s - lse), masked and scaled in the same pass.
          Value weights = blocks.withRows(
              blocks.rawScores(q, k), lse,
              [&](Scalar &x, ValueRange y, ValueRange l) {
                Value score = blocks.maskScore(x, y[0], qFirst, kFirst,
                                               position ? &*position : nullptr);
                return x.exp(x.sub(score, l[0]));
              });
          // dv[j] += sum_i p[i, j] dy[i], p the kept (dropped) weights.
          Value factors = blocks.dropFactors(weights, qFirst, kFirst, head);
          Value dv = blocks.insertBlock(
              blocks.matmulTransposeA(blocks.dropped(weights, factors), dy,
                                      blocks.block(acc[2], kFirst, kBlock,
                                                   vColumn, spec.valueWidth)),
              acc[2], kFirst, kBlock, vColumn, spec.valueWidth);
          // ds = p (dp - dy . out), times the scale for dq and dk; dp of
          // a dropped weight is 0, of a kept one scaled like the weight.
          Value dp = blocks.dropped(
              blocks.matmulTransposeB(
                  dy, v,
                  blocks.zeros(
                      {count, tensor::getMixedSize(b, lb.getLoc(), k, 0)})),
              factors);
          Value ds = blocks.withRows(
              {weights, dp}, dyOut, [&](Scalar &x, ValueRange a, ValueRange o) {
                return x.mul(x.mul(a[0], x.sub(a[1], o[0])),
                             x.f(element, spec.scale));
              });
          Value dq = blocks.matmul(ds, k, acc[0]);
          Value dk = blocks.insertBlock(
              blocks.matmulTransposeA(
                  ds, q,
                  blocks.block(acc[1], kFirst, kBlock, kColumn, spec.keyWidth)),
              acc[1], kFirst, kBlock, kColumn, spec.keyWidth);
          if (!r)
            return {dq, dk, dv};
          // The position terms: dr[i] += ds . p[distance], and each table
          // row gets the position queries of its distance's pairs.
          Value byDistance =
              blocks.scatterByDistance(ds, *position, qFirst, kFirst);
          Value dr = blocks.matmul(byDistance, position->tableRows, acc[3]);
          Value tableCount =
              b.create<tensor::DimOp>(lb.getLoc(), byDistance, 1);
          Scalar x = lb.scalar();
          Value partRow = x.sub(position->lo, rows.tableFirst);
          Value dtable = blocks.insertBlock(
              blocks.matmulTransposeA(byDistance, r,
                                      blocks.block(acc[4], partRow, tableCount,
                                                   kColumn, spec.keyWidth)),
              acc[4], partRow, tableCount, kColumn, spec.keyWidth);
          return {dq, dk, dv, dr, dtable};
        });
    SmallVector<Value> results{blocks.insertBlock(state[0], carried[0], qFirst,
                                                  count, kColumn,
                                                  spec.keyWidth),
                               state[1], state[2]};
    if (r) {
      results.push_back(blocks.insertBlock(state[3], carried[3], qFirst, count,
                                           kColumn, spec.keyWidth));
      results.push_back(state[4]);
    }
    return results;
  }
};

/// sin and cos of the angle `position` * base^(-2 `pair` / D), where
/// `perPair` = -2 ln(base) / D and `pairs` bounds `pair`: as accurate at
/// any position as the element type's sin and cos near zero. The angle is
/// formed in f64, the frequency as a product of the compile-time powers
/// exp(perPair 2^k) that the bits of `pair` select (no exp at run time),
/// and reduced to [-pi, pi] there; only then do the element type's sin and
/// cos run. In f32 throughout, position 600 would turn by an angle off by
/// ~1e-4 rad (the frequency's rounding and sin's own range reduction, each
/// growing with the angle).
std::pair<Value, Value> sinCosOfAngle(Scalar &s, Value position, Value pair,
                                      double perPair, int64_t pairs,
                                      Type element) {
  constexpr double kPi = 3.14159265358979323846;
  OpBuilder &b = s.b;
  Type f64 = b.getF64Type();
  Value frequency = s.f(f64, 1.0);
  for (int64_t bit = 0; (int64_t(1) << bit) < pairs; ++bit) {
    Value set =
        s.ne(b.create<arith::AndIOp>(s.loc, pair, s.idx(1 << bit)), s.idx(0));
    frequency = s.select(
        set,
        s.mul(frequency,
              s.f(f64, std::exp(perPair * static_cast<double>(1 << bit)))),
        frequency);
  }
  Value angle =
      s.mul(b.create<arith::SIToFPOp>(
                s.loc, f64,
                b.create<arith::IndexCastOp>(s.loc, b.getI64Type(), position)),
            frequency);
  Value turns = b.create<math::FloorOp>(
      s.loc, s.add(s.mul(angle, s.f(f64, 0.5 / kPi)), s.f(f64, 0.5)));
  Value reduced = s.sub(angle, s.mul(turns, s.f(f64, 2.0 * kPi)));
  if (element != f64)
    reduced = b.create<arith::TruncFOp>(s.loc, element, reduced);
  return {b.create<math::SinOp>(s.loc, reduced),
          b.create<math::CosOp>(s.loc, reduced)};
}

/// One generic over the frames: each feature reads its pair partner by
/// index and the frame's place in its sequence (padded: its frame axis;
/// packed: its row less its sequence's first row).
class RotaryConversion : public NNConversionPattern<RotaryOp> {
public:
  using NNConversionPattern::NNConversionPattern;

  FailureOr<SmallVector<Value>> build(RotaryOp op, OpAdaptor adaptor,
                                      LinalgBuilder &lb) const override {
    NNTensorType type = typeOf(op.getResult());
    Type element = type.getElementType();
    bool packed = type.getNumPositionDims() == 1;
    unsigned featureAxis = type.getRank() - 1;
    int64_t head =
        type.getStaticSize(featureAxis) / static_cast<int64_t>(op.getHeads());
    // Pair i turns by t * base^(-2i / D) = t * exp(i * (-2 ln(base) / D)).
    double perPair = -2.0 * std::log(op.getBase().convertToDouble()) / head;
    SequenceFrames frames(lb, type);
    Value x = adaptor.getInput();
    bool inverse = op.getInverse();
    return SmallVector<Value>{
        lb.map(type, {x}, [&](Scalar &s, ValueRange a) -> Value {
          auto [sequence, frame] = frames.current(s);
          // Packed rows are all real frames.
          Value valid =
              packed ? Value() : s.lt(frame, frames.length(s, sequence));
          Value feature = s.index(featureAxis);
          Value within =
              s.b.create<arith::RemUIOp>(s.loc, feature, s.idx(head));
          Value pair = s.b.create<arith::DivUIOp>(s.loc, within, s.idx(2));
          Value odd = s.ne(s.b.create<arith::RemUIOp>(s.loc, within, s.idx(2)),
                           s.idx(0));
          SmallVector<Value> at;
          for (unsigned i = 0; i < featureAxis; ++i)
            at.push_back(s.index(i));
          at.push_back(s.select(odd, s.sub(feature, s.idx(1)),
                                s.add(feature, s.idx(1))));
          Value partner = s.b.create<tensor::ExtractOp>(s.loc, x, at);
          auto [sin, cos] =
              sinCosOfAngle(s, frame, pair, perPair, head / 2, element);
          // Even features take -partner sin, odd ones +partner sin; the
          // inverse turns the other way.
          Value sign = s.select(odd, s.f(element, inverse ? -1.0 : 1.0),
                                s.f(element, inverse ? 1.0 : -1.0));
          Value y = s.add(s.mul(a[0], cos), s.mul(s.mul(sign, partner), sin));
          return valid ? s.select(valid, y, s.f(element, 0.0)) : y;
        })};
  }
};

/// The sinusoidal embeddings of the distances -c ... c, [2c + 1, E]: row
/// c + d holds sin(d w_m) at 2m and cos(d w_m) at 2m + 1, w_m =
/// 10000^(-2m / E).
Value distanceSinusoids(LinalgBuilder &lb, int64_t rows, int64_t width,
                        Type element) {
  OpBuilder &b = lb.getBuilder();
  Value init = lb.empty({b.getIndexAttr(rows), b.getIndexAttr(width)}, element);
  double perPair = -2.0 * std::log(10000.0) / static_cast<double>(width);
  return lb.generic(
      init.getType(), {}, init, {b.getMultiDimIdentityMap(2)},
      {IteratorType::parallel, IteratorType::parallel},
      [&](OpBuilder &nb, Location l, ValueRange) {
        Scalar s{nb, l};
        Value distance = s.sub(s.index(0), s.idx(rows / 2));
        Value feature = s.index(1);
        Value pair = nb.create<arith::DivUIOp>(l, feature, s.idx(2));
        Value odd =
            s.ne(nb.create<arith::RemUIOp>(l, feature, s.idx(2)), s.idx(0));
        auto [sin, cos] =
            sinCosOfAngle(s, distance, pair, perPair, (width + 1) / 2, element);
        nb.create<linalg::YieldOp>(l, s.select(odd, cos, sin));
      });
}

/// The table: the sinusoids [2c + 1, E] times the weight [O, E]^T.
class RelativePositionsConversion
    : public NNConversionPattern<RelativePositionsOp> {
public:
  using NNConversionPattern::NNConversionPattern;

  FailureOr<SmallVector<Value>> build(RelativePositionsOp op, OpAdaptor adaptor,
                                      LinalgBuilder &lb) const override {
    OpBuilder &b = lb.getBuilder();
    NNTensorType type = typeOf(op.getResult());
    Type element = type.getElementType();
    int64_t width = typeOf(op.getWeight()).getStaticSize(1);
    Value sinusoids =
        distanceSinusoids(lb, type.getStaticSize(0), width, element);
    Value init = lb.filled(lb.sizes(type), element, 0.0);
    return SmallVector<Value>{b.create<linalg::MatmulTransposeBOp>(
                                   lb.getLoc(), init.getType(),
                                   ValueRange{sinusoids, adaptor.getWeight()},
                                   ValueRange{init})
                                  .getResult(0)};
  }
};

/// dweight [O, E] = grad [2c + 1, O]^T sinusoids [2c + 1, E]: a
/// contraction over the rows, the form nn-gemm-to-blas takes for a weight
/// gradient.
class RelativePositionsGradConversion
    : public NNConversionPattern<RelativePositionsGradOp> {
public:
  using NNConversionPattern::NNConversionPattern;

  FailureOr<SmallVector<Value>> build(RelativePositionsGradOp op,
                                      OpAdaptor adaptor,
                                      LinalgBuilder &lb) const override {
    OpBuilder &b = lb.getBuilder();
    NNTensorType type = typeOf(op.getResult());
    Type element = type.getElementType();
    Value sinusoids =
        distanceSinusoids(lb, typeOf(op.getGrad()).getStaticSize(0),
                          type.getStaticSize(1), element);
    Value init = lb.filled(lb.sizes(type), element, 0.0);
    MLIRContext *context = b.getContext();
    AffineExpr r = b.getAffineDimExpr(0), o = b.getAffineDimExpr(1),
               e = b.getAffineDimExpr(2);
    return SmallVector<Value>{lb.generic(
        init.getType(), {adaptor.getGrad(), sinusoids}, init,
        {AffineMap::get(3, 0, {r, o}, context),
         AffineMap::get(3, 0, {r, e}, context),
         AffineMap::get(3, 0, {o, e}, context)},
        {IteratorType::reduction, IteratorType::parallel,
         IteratorType::parallel},
        [](OpBuilder &nb, Location l, ValueRange a) {
          Scalar s{nb, l};
          nb.create<linalg::YieldOp>(l, s.add(a[2], s.mul(a[0], a[1])));
        })};
  }
};

} // namespace

void mlir::nn::populateAttentionConversionPatterns(
    const TypeConverter &converter, ConversionState &state,
    RewritePatternSet &patterns) {
  patterns.add<AttentionConversion<AttentionOp>,
               AttentionConversion<AttentionWithStatsOp>,
               AttentionGradConversion, RotaryConversion,
               RelativePositionsConversion, RelativePositionsGradConversion>(
      converter, state);
}
