//===- TransducerPatterns.cpp - transducer join, losses and gradients -----===//
//
// A transducer's joint lives on the (t, u) grid of each sequence: T_b
// frames by U1_b = U_b + 1 prediction states. Packed, the grid is the
// rows `offset_b + t * U1_b + u` of a [J, D] value (J = sum T_b * U1_b);
// padded, it is [B, T, U1, D].
//
// nn.transducer_join writes encoder + prediction on every valid pair (per
// sequence, one generic over its rows when packed); its gradient sums the
// rows back over u (encoder) and t (prediction).
//
// nn.gather_states picks, for frame-wise training on an RNA alignment,
// the prediction state each frame is in (the labels emitted before it);
// its gradient scatters back.
//
// nn.transducer_align runs the same recursion with max for logaddexp and
// traces the best RNA path back.
//
// nn.transducer_loss reads the joint's logits through their row
// log-sum-exp (the log-softmax is never materialized) and runs the
// forward recursion over the grid per sequence (the sequences an
// scf.forall: threads on the CPU), in float64, as scalar loops: the recursion
// touches two classes per row, so its cost is the grid, not the vocabulary. The
// gradient runs the forward recursion into a table and the backward one into a
// vector, writes each row's total posterior and its blank and label posteriors,
// and one generic over [rows, V] turns them into `occ * softmax - gamma`.
//
//===----------------------------------------------------------------------===//

#include "lowering/conversion/Patterns.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"

#include <limits>

using namespace mlir;
using namespace mlir::nn;

using utils::IteratorType;

namespace {

constexpr double kNegInf = -std::numeric_limits<double>::infinity();

NNTensorType typeOf(Value v) { return cast<NNTensorType>(v.getType()); }

Value extract(Scalar &q, Value tensor, ValueRange indices) {
  return q.b.create<tensor::ExtractOp>(q.loc, tensor, indices);
}

Value insert(Scalar &q, Value scalar, Value tensor, ValueRange indices) {
  return q.b.create<tensor::InsertOp>(q.loc, scalar, tensor, indices);
}

Value eq(Scalar &q, Value x, Value y) {
  return q.b.create<arith::CmpIOp>(q.loc, arith::CmpIPredicate::eq, x, y);
}

/// Whether `v` is packed over a grid (`[J, ...]`) rather than padded.
bool isGridPacked(const LinalgBuilder &lb, NNTensorType type) {
  return type.getNumPositionDims() == 1 &&
         lb.getDims().getDecls().isPacked(type.getDimName(0));
}

/// The shape of `type` without its feature axis: one entry per row.
NNTensorType rowType(NNTensorType type, Type element) {
  return NNTensorType::get(type.getDims().drop_back(), element);
}

//===----------------------------------------------------------------------===//
// The grid of one sequence
//===----------------------------------------------------------------------===//

/// Where sequence `batchIndex`'s (t, u) rows are and what they emit.
struct SequenceGrid {
  bool packed;
  Value batchIndex;
  /// Packed: the first row of the sequence.
  Value offset;
  Value frames;  // T_b
  Value columns; // U1_b = U_b + 1
  Value labels;  // [B, U] labels
  Value joint;   // [rows..., V] logits or log-probs
  Value lse;     // [rows...] log-sum-exp of each row; null for log-probs
  Value classes; // V, index
  int64_t blank;

  SmallVector<Value> row(Scalar &q, Value t, Value u) const {
    if (packed)
      return {q.add(offset, q.add(q.mul(t, columns), u))};
    return {batchIndex, t, u};
  }
  /// (t, u) in this sequence's own tile of the rows: [T_b * U1_b] packed,
  /// [T, U1] padded.
  SmallVector<Value> tileRow(Scalar &q, Value t, Value u) const {
    if (packed)
      return {q.add(q.mul(t, columns), u)};
    return {t, u};
  }
  /// log p(class | t, u) in float64.
  Value logProb(Scalar &q, Value t, Value u, Value cls) const {
    SmallVector<Value> at = row(q, t, u);
    SmallVector<Value> full(at);
    full.push_back(cls);
    Value x = q.toF64(extract(q, joint, full));
    return lse ? q.sub(x, q.toF64(extract(q, lse, at))) : x;
  }
  Value blankLogProb(Scalar &q, Value t, Value u) const {
    return logProb(q, t, u, q.idx(blank));
  }
  /// Label u + 1 (index u) at (t, u); u < U_b. Clamped: the runtime
  /// rejects labels outside [0, V) at valid positions.
  Value labelLogProb(Scalar &q, Value t, Value u) const {
    return logProb(q, t, u, q.clampIndex(label(q, u), classes));
  }
  /// Label index u of the sequence, u clamped into [0, U_b): callers
  /// read it unconditionally and discard it where u = U_b (which may be
  /// the padded label count, one past the labels' last column).
  Value label(Scalar &q, Value u) const {
    Value lastLabel = q.maxI(q.sub(columns, q.idx(2)), q.idx(0));
    return extract(q, labels, {batchIndex, q.minI(u, lastLabel)});
  }
  /// label(u) as i32, what alignments and the gradient's row labels hold
  /// whatever integer type the labels have (classes fit: the runtime
  /// rejects labels outside [0, V), V < 2^31).
  Value labelI32(Scalar &q, Value u) const {
    Value value = label(q, u);
    Type i32 = q.b.getI32Type();
    unsigned width = value.getType().getIntOrFloatBitWidth();
    if (width > 32)
      return q.b.create<arith::TruncIOp>(q.loc, i32, value);
    if (width < 32)
      return q.b.create<arith::ExtSIOp>(q.loc, i32, value);
    return value;
  }
};

/// max(i - 1, 0): a read index that is safe when `i` is 0 (its value is
/// then discarded).
Value before(Scalar &q, Value i) {
  return q.maxI(q.sub(i, q.idx(1)), q.idx(0));
}

/// The forward recursion of one sequence. Writes alpha into `state`, a
/// table ([T_b + 1, U1_b] f64) when `isTable`, else one vector ([U1_b]);
/// returns log p(labels) and the updated tensor.
///
/// rnnt: alpha(t, u) = logaddexp(alpha(t-1, u) + blank(t-1, u),
///                               alpha(t, u-1) + label(t, u-1)),
///       alpha(0, 0) = 0, log p = alpha(T-1, U) + blank(T-1, U).
/// rna:  alpha_t(u) = logaddexp(alpha_{t-1}(u) + blank(t-1, u),
///                              alpha_{t-1}(u-1) + label(t-1, u-1)),
///       alpha_0 = [0, -inf, ...], log p = alpha_T(U).
std::pair<Value, Value> forward(Scalar &s, const SequenceGrid &g,
                                TransducerTopology topology, Value state,
                                bool isTable) {
  Type f64 = s.b.getF64Type();
  Value negInf = s.f(f64, kNegInf);
  Value last = s.sub(g.columns, s.idx(1)); // U
  auto at = [&](Scalar &q, Value t, Value u) -> SmallVector<Value> {
    if (isTable)
      return {t, u};
    return {u};
  };
  if (topology == TransducerTopology::rnnt) {
    SmallVector<Value> rows = forLoop(
        s, s.idx(0), g.frames, {state}, [&](Scalar &q, Value t, ValueRange c) {
          return forLoop(
              q, q.idx(0), g.columns, {c[0]},
              [&](Scalar &r, Value u, ValueRange a) -> SmallVector<Value> {
                Value tPrev = before(r, t), uPrev = before(r, u);
                Value hasBelow = r.ge(t, r.idx(1));
                Value hasLeft = r.ge(u, r.idx(1));
                Value below = r.add(extract(r, a[0], at(r, tPrev, u)),
                                    g.blankLogProb(r, tPrev, u));
                Value start = r.select(eq(r, u, r.idx(0)), r.f(f64, 0.0),
                                       r.f(f64, kNegInf));
                below = r.select(hasBelow, below, start);
                Value left = r.add(extract(r, a[0], at(r, t, uPrev)),
                                   g.labelLogProb(r, t, uPrev));
                left = r.select(hasLeft, left, r.f(f64, kNegInf));
                return {insert(r, r.logAddExp(below, left), a[0], at(r, t, u))};
              });
        });
    Value tLast = before(s, g.frames);
    Value end = s.add(extract(s, rows[0], at(s, tLast, last)),
                      g.blankLogProb(s, tLast, last));
    return {s.select(s.ge(g.frames, s.idx(1)), end, negInf), rows[0]};
  }
  // rna: row 0 is the start; frame t - 1 leads from row t - 1 to row t.
  SmallVector<Value> init =
      forLoop(s, s.idx(0), g.columns, {state},
              [&](Scalar &q, Value u, ValueRange a) -> SmallVector<Value> {
                Value v = q.select(eq(q, u, q.idx(0)), q.f(f64, 0.0),
                                   q.f(f64, kNegInf));
                return {insert(q, v, a[0], at(q, q.idx(0), u))};
              });
  SmallVector<Value> rows = forLoop(
      s, s.idx(1), s.add(g.frames, s.idx(1)), init,
      [&](Scalar &q, Value t, ValueRange c) {
        Value tPrev = q.sub(t, q.idx(1));
        // In place over a vector: u descending reads alpha_{t-1}(u - 1)
        // before it is overwritten.
        return forLoop(
            q, q.idx(0), g.columns, {c[0]},
            [&](Scalar &r, Value step, ValueRange a) -> SmallVector<Value> {
              Value u = r.sub(last, step);
              Value uPrev = before(r, u);
              Value stay = r.add(extract(r, a[0], at(r, tPrev, u)),
                                 g.blankLogProb(r, tPrev, u));
              Value move = r.add(extract(r, a[0], at(r, tPrev, uPrev)),
                                 g.labelLogProb(r, tPrev, uPrev));
              move = r.select(r.ge(u, r.idx(1)), move, r.f(f64, kNegInf));
              return {insert(r, r.logAddExp(stay, move), a[0], at(r, t, u))};
            });
      });
  return {extract(s, rows[0], at(s, g.frames, last)), rows[0]};
}

/// What both loss patterns read: the joint's row log-sum-exp, labels,
/// lengths and sizes.
struct TransducerInputs {
  bool packed;
  Value joint, lse, labels, frameLengths, labelLengths, batch, framePad,
      labelPad, classes;
};

template <typename OpTy, typename Adaptor>
TransducerInputs transducerInputs(OpTy op, Adaptor adaptor, LinalgBuilder &lb) {
  NNTensorType jointType = typeOf(op.getJoint());
  NNTensorType labelsType = typeOf(op.getLabels());
  const BoundDims &dims = lb.getDims();
  TransducerInputs in;
  in.packed = isGridPacked(lb, jointType);
  in.joint = adaptor.getJoint();
  if (op.getInputKind() == LossInput::logits) {
    auto [max, sum] = lb.rowMaxAndSumExp(in.joint);
    in.lse = lb.map(
        rowType(jointType, jointType.getElementType()), {max, sum},
        [](Scalar &s, ValueRange a) { return s.add(a[0], s.log(a[1])); });
  }
  in.labels = adaptor.getLabels();
  StringRef batch = labelsType.getDimName(0),
            labelDim = labelsType.getDimName(1);
  DimDeclAttr grid = in.packed ? dims.getDecls().lookup(jointType.getDimName(0))
                               : DimDeclAttr();
  StringRef frameDim =
      in.packed ? grid.getSource().getValue() : jointType.getDimName(1);
  in.frameLengths = dims.lengths(frameDim);
  in.labelLengths = dims.lengths(labelDim);
  in.batch = dims.size(batch);
  in.framePad = dims.size(frameDim);
  in.labelPad = dims.size(labelDim);
  Scalar s = lb.scalar();
  in.classes = s.idx(jointType.getStaticSize(jointType.getRank() - 1));
  return in;
}

/// Packed: each sequence's first row of the grid (the T_b * U1_b rows of
/// the sequences before it), tensor<?xi32> over the batch, computed before
/// the sequences so that they can run in any order; padded: null.
Value gridOffsets(LinalgBuilder &lb, const TransducerInputs &in) {
  if (!in.packed)
    return Value();
  return exclusivePrefixSum(lb, in.batch,
                            [&](Scalar &q, Value bi) {
                              Value frames =
                                  q.toIndex(extract(q, in.frameLengths, {bi}));
                              Value labels =
                                  q.toIndex(extract(q, in.labelLengths, {bi}));
                              return q.mul(frames, q.add(labels, q.idx(1)));
                            })
      .first;
}

/// The grid of sequence `bi`; `offsets` from gridOffsets.
SequenceGrid sequenceGrid(Scalar &s, const TransducerInputs &in, Value bi,
                          Value offsets, int64_t blank) {
  SequenceGrid g;
  g.packed = in.packed;
  g.batchIndex = bi;
  if (offsets)
    g.offset = s.toIndex(extract(s, offsets, {bi}));
  g.frames = s.toIndex(extract(s, in.frameLengths, {bi}));
  g.columns = s.add(s.toIndex(extract(s, in.labelLengths, {bi})), s.idx(1));
  g.labels = in.labels;
  g.joint = in.joint;
  g.lse = in.lse;
  g.classes = in.classes;
  g.blank = blank;
  return g;
}

/// 0 where |v| is below the smallest normal number of `element`.
/// Posteriors of rows far from every likely path underflow there, and a
/// gradient full of subnormals made the GEMMs that read it 5-8x slower
/// (oneDNN, benchTransducer: 10.6 s instead of 1.3 s for the grad-input
/// GEMM); what is dropped is below 1.2e-38 (f32).
Value flushSubnormal(Scalar &q, Value v, Type element) {
  double smallest = llvm::APFloat::getSmallestNormalized(
                        cast<FloatType>(element).getFloatSemantics())
                        .convertToDouble();
  Type type = v.getType();
  Value magnitude = q.b.create<math::AbsFOp>(q.loc, v);
  Value tiny = q.b.create<arith::CmpFOp>(q.loc, arith::CmpFPredicate::OLT,
                                         magnitude, q.f(type, smallest));
  return q.select(tiny, q.f(type, 0.0), v);
}

Value emptyF64(Scalar &s, ValueRange sizes) {
  SmallVector<int64_t> shape(sizes.size(), ShapedType::kDynamic);
  return s.b.create<tensor::EmptyOp>(s.loc, shape, s.b.getF64Type(), sizes);
}

//===----------------------------------------------------------------------===//
// Loss
//===----------------------------------------------------------------------===//

class TransducerLossConversion : public NNConversionPattern<TransducerLossOp> {
public:
  using NNConversionPattern::NNConversionPattern;

  FailureOr<SmallVector<Value>> build(TransducerLossOp op, OpAdaptor adaptor,
                                      LinalgBuilder &lb) const override {
    NNTensorType type = typeOf(op.getResult());
    Type element = type.getElementType();
    TransducerInputs in = transducerInputs(op, adaptor, lb);
    Value losses = lb.empty(lb.sizes(type), element);
    Value offsets = gridOffsets(lb, in);
    // The sequences are independent: threads on the CPU.
    return forEachSequence(
        lb, in.batch, {losses},
        [&](Scalar &s, Value bi) -> SmallVector<SequenceSlice> {
          SequenceGrid g = sequenceGrid(s, in, bi, offsets, op.getBlank());
          auto [logP, vector] =
              forward(s, g, op.getTopology(), emptyF64(s, {g.columns}),
                      /*isTable=*/false);
          Value loss = s.neg(logP);
          if (op.getZeroInfinity())
            loss = s.select(s.feq(logP, s.f(logP.getType(), kNegInf)),
                            s.f(logP.getType(), 0.0), loss);
          loss = s.b.create<arith::TruncFOp>(s.loc, element, loss);
          Value tile = s.b.create<tensor::FromElementsOp>(s.loc, loss);
          return {{tile, {bi}, {s.b.getIndexAttr(1)}}};
        });
  }
};

//===----------------------------------------------------------------------===//
// Alignment
//===----------------------------------------------------------------------===//

/// Whether a label step scores strictly above the blank step: ties keep
/// the blank, so each label is emitted as early as the best score allows.
Value labelWins(Scalar &q, Value label, Value blank) {
  return q.b.create<arith::CmpFOp>(q.loc, arith::CmpFPredicate::OGT, label,
                                   blank);
}

/// The two scores into node (t, u) of a Viterbi table `delta`: by the
/// blank and by a label (-inf where there is no such step).
using StepScores =
    function_ref<std::pair<Value, Value>(Scalar &, Value, Value, Value)>;

/// A [T + 1, U + 1] f64 Viterbi table of one sequence whose row 0 holds 0
/// at u = 0 and -inf elsewhere.
Value viterbiTable(Scalar &s, Value frames, Value columns) {
  Type f64 = s.b.getF64Type();
  Value table = emptyF64(s, {s.add(frames, s.idx(1)), columns});
  return forLoop(s, s.idx(0), columns, {table},
                 [&](Scalar &q, Value u, ValueRange a) -> SmallVector<Value> {
                   Value v = q.select(eq(q, u, q.idx(0)), q.f(f64, 0.0),
                                      q.f(f64, kNegInf));
                   return {insert(q, v, a[0], {q.idx(0), u})};
                 })[0];
}

/// Fills rows 1..T of `table` with the better step into each node.
Value fillViterbiRows(Scalar &s, Value table, Value frames, Value columns,
                      StepScores steps) {
  return forLoop(
      s, s.idx(1), s.add(frames, s.idx(1)), {table},
      [&](Scalar &q, Value t, ValueRange a) {
        return forLoop(
            q, q.idx(0), columns, a,
            [&](Scalar &r, Value u, ValueRange d) -> SmallVector<Value> {
              auto [blank, label] = steps(r, d[0], t, u);
              Value best = r.select(labelWins(r, label, blank), label, blank);
              return {insert(r, best, d[0], {t, u})};
            });
      })[0];
}

/// nn.transducer_align (rna). Per sequence, the forward recursion with max
/// for logaddexp fills delta, a [T + 1, U + 1] float64 table (row t: the
/// best score of having emitted u labels in t frames); the backtrace from
/// (T, U) recomputes each step's two candidates from the table, exactly as
/// the forward compared them, and writes the emitted class per frame.
/// Ties keep the blank (staying), as nn.viterbi_align's rna does.
class TransducerAlignConversion
    : public NNConversionPattern<TransducerAlignOp> {
public:
  using NNConversionPattern::NNConversionPattern;

  FailureOr<SmallVector<Value>> build(TransducerAlignOp op, OpAdaptor adaptor,
                                      LinalgBuilder &lb) const override {
    if (op.getTopology() == TransducerTopology::rnnt)
      return buildRnnt(op, adaptor, lb);
    NNTensorType alignmentType = typeOf(op.getAlignment());
    NNTensorType scoreType = typeOf(op.getScore());
    Type element = scoreType.getElementType();
    TransducerInputs in = transducerInputs(op, adaptor, lb);
    OpBuilder &b = lb.getBuilder();
    Type i32 = b.getI32Type(), f64 = b.getF64Type();
    Value alignment = lb.empty(lb.sizes(alignmentType), i32);
    Value scores = lb.empty(lb.sizes(scoreType), element);
    Value offsets = gridOffsets(lb, in);
    int64_t blank = op.getBlank();
    // The sequences are independent: threads on the CPU. Each writes its
    // row of the alignment (-1 past its frames or where it is infeasible)
    // and its score.
    return forEachSequence(
        lb, in.batch, {alignment, scores},
        [&](Scalar &s, Value bi) -> SmallVector<SequenceSlice> {
          SequenceGrid g = sequenceGrid(s, in, bi, offsets, blank);
          Value last = s.sub(g.columns, s.idx(1)); // U
          // The two ways into (t, u): the blank from (t - 1, u), label u
          // from (t - 1, u - 1).
          auto candidates = [&](Scalar &q, Value delta, Value t, Value u) {
            Value tPrev = q.sub(t, q.idx(1)), uPrev = before(q, u);
            Value stay = q.add(extract(q, delta, {tPrev, u}),
                               g.blankLogProb(q, tPrev, u));
            Value move = q.add(extract(q, delta, {tPrev, uPrev}),
                               g.labelLogProb(q, tPrev, uPrev));
            move = q.select(q.ge(u, q.idx(1)), move, q.f(f64, kNegInf));
            return std::make_pair(stay, move);
          };
          SmallVector<Value> delta{
              fillViterbiRows(s, viterbiTable(s, g.frames, g.columns), g.frames,
                              g.columns, candidates)};
          Value best = extract(s, delta[0], {g.frames, last});
          Value feasible = s.b.create<arith::CmpFOp>(
              s.loc, arith::CmpFPredicate::OGT, best, s.f(f64, kNegInf));
          Value traced = s.select(feasible, g.frames, s.idx(0));
          Value row = lb.filled({in.framePad}, i32, -1.0);
          SmallVector<Value> path = forLoop(
              s, s.idx(0), traced, {last, row},
              [&](Scalar &q, Value step, ValueRange a) -> SmallVector<Value> {
                Value t = q.sub(g.frames, step), u = a[0];
                auto [stay, move] = candidates(q, delta[0], t, u);
                Value emits = labelWins(q, move, stay);
                Value label = g.labelI32(q, before(q, u));
                Value cls = q.select(emits, label, q.i32(blank));
                Value written = insert(q, cls, a[1], {q.sub(t, q.idx(1))});
                return {q.select(emits, before(q, u), u), written};
              });
          Value score = s.b.create<arith::TruncFOp>(s.loc, element, best);
          OpFoldResult one = s.b.getIndexAttr(1);
          return {
              {path[1], {bi, s.b.getIndexAttr(0)}, {one, in.framePad}},
              {s.b.create<tensor::FromElementsOp>(s.loc, score), {bi}, {one}}};
        });
  }

private:
  /// rnnt: delta is a [T + 1, U + 1] f64 table over the lattice's nodes
  /// (row t: at frame t, u labels emitted; row T: past the last frame).
  /// Into (t, u) come the blank of (t - 1, u) and label u from (t, u - 1),
  /// the latter only while t < T. The best path ends at (T, U); its T + U
  /// emissions are traced back into positions t + u - 1, the computed
  /// dim's lengths (T + U, 0 without frames) bound first.
  FailureOr<SmallVector<Value>>
  buildRnnt(TransducerAlignOp op, OpAdaptor adaptor, LinalgBuilder &lb) const {
    NNTensorType scoreType = typeOf(op.getScore());
    Type element = scoreType.getElementType();
    TransducerInputs in = transducerInputs(op, adaptor, lb);
    OpBuilder &b = lb.getBuilder();
    Type i32 = b.getI32Type(), f64 = b.getF64Type();
    int64_t blank = op.getBlank();
    Scalar outer = lb.scalar();
    Value lengthsInit = outer.b.create<tensor::EmptyOp>(
        outer.loc, ArrayRef<int64_t>{ShapedType::kDynamic}, i32,
        ValueRange{in.batch});
    SmallVector<Value> counted = forLoop(
        outer, outer.idx(0), in.batch, {lengthsInit, outer.idx(1)},
        [&](Scalar &q, Value bi, ValueRange a) -> SmallVector<Value> {
          Value frames = q.toIndex(extract(q, in.frameLengths, {bi}));
          Value labels = q.toIndex(extract(q, in.labelLengths, {bi}));
          Value n =
              q.select(q.lt(q.idx(0), frames), q.add(frames, labels), q.idx(0));
          Value written = insert(
              q, q.b.create<arith::IndexCastOp>(q.loc, i32, n), a[0], {bi});
          return {written, q.maxI(a[1], n)};
        });
    Value lengths = counted[0], longest = counted[1];
    Value alignment = outer.b.create<tensor::EmptyOp>(
        outer.loc,
        ArrayRef<int64_t>{ShapedType::kDynamic, ShapedType::kDynamic}, i32,
        ValueRange{in.batch, longest});
    Value scores = lb.empty(lb.sizes(scoreType), element);
    Value offsets = gridOffsets(lb, in);
    SmallVector<Value> results = forEachSequence(
        lb, in.batch, {alignment, scores},
        [&](Scalar &s, Value bi) -> SmallVector<SequenceSlice> {
          SequenceGrid g = sequenceGrid(s, in, bi, offsets, blank);
          Value frames = g.frames, last = s.sub(g.columns, s.idx(1)); // U
          Value anyFrame = s.lt(s.idx(0), frames);
          Value negInf = s.f(f64, kNegInf);
          // The two ways into (t, u). Reads stay inside the sequence's
          // rows: the blank's row (t - 1, u) only for t >= 1, the label's
          // (t, u - 1) clamped to a real row and dropped at t = T or u = 0.
          auto candidates = [&](Scalar &q, Value delta, Value t, Value u) {
            Value tPrev = before(q, t), uPrev = before(q, u);
            Value stay = q.add(extract(q, delta, {tPrev, u}),
                               g.blankLogProb(q, tPrev, u));
            stay = q.select(q.ge(t, q.idx(1)), stay, negInf);
            Value tHere = q.minI(t, before(q, frames));
            Value up = q.add(extract(q, delta, {t, uPrev}),
                             g.labelLogProb(q, tHere, uPrev));
            up = q.select(q.andI(q.ge(u, q.idx(1)), q.lt(t, frames)), up,
                          negInf);
            return std::make_pair(stay, up);
          };
          // Row 0: the labels of frame 0 (none without frames), then the
          // rows after it.
          Value rowZeroEnd = s.select(anyFrame, g.columns, s.idx(1));
          SmallVector<Value> delta = forLoop(
              s, s.idx(1), rowZeroEnd, {viterbiTable(s, frames, g.columns)},
              [&](Scalar &q, Value u, ValueRange a) {
                auto [stay, up] = candidates(q, a[0], q.idx(0), u);
                return SmallVector<Value>{insert(q, up, a[0], {q.idx(0), u})};
              });
          delta[0] =
              fillViterbiRows(s, delta[0], frames, g.columns, candidates);
          Value best = extract(s, delta[0], {frames, last});
          Value feasible = s.andI(
              anyFrame, s.b.create<arith::CmpFOp>(
                            s.loc, arith::CmpFPredicate::OGT, best, negInf));
          best = s.select(anyFrame, best, negInf);
          Value steps = s.select(feasible, s.add(frames, last), s.idx(0));
          Value row = lb.filled({longest}, i32, -1.0);
          SmallVector<Value> path = forLoop(
              s, s.idx(0), steps, {frames, last, row},
              [&](Scalar &q, Value, ValueRange a) -> SmallVector<Value> {
                Value t = a[0], u = a[1];
                auto [stay, up] = candidates(q, delta[0], t, u);
                Value emits = labelWins(q, up, stay);
                Value label = g.labelI32(q, before(q, u));
                Value cls = q.select(emits, label, q.i32(blank));
                Value at = q.sub(q.add(t, u), q.idx(1));
                Value written = insert(q, cls, a[2], {at});
                return {q.select(emits, t, before(q, t)),
                        q.select(emits, before(q, u), u), written};
              });
          Value score = s.b.create<arith::TruncFOp>(s.loc, element, best);
          OpFoldResult one = s.b.getIndexAttr(1);
          return {
              {path[2], {bi, s.b.getIndexAttr(0)}, {one, longest}},
              {s.b.create<tensor::FromElementsOp>(s.loc, score), {bi}, {one}}};
        });
    state.bindComputed(op, typeOf(op.getAlignment()).getDimName(1),
                       DimValue{longest, lengths}, lb);
    return results;
  }
};

//===----------------------------------------------------------------------===//
// Gradient
//===----------------------------------------------------------------------===//

/// Per sequence: alpha into a table, then the backward recursion from the
/// last row down into one vector, beta, writing at each (t, u) the row's
/// posteriors of the blank and of the next label, times the sequence's
/// incoming gradient, and their sum. A last generic over [rows, V] forms
/// `occ * softmax - gamma` (or `-gamma` from log-probs).
class TransducerLossGradConversion
    : public NNConversionPattern<TransducerLossGradOp> {
public:
  using NNConversionPattern::NNConversionPattern;

  FailureOr<SmallVector<Value>> build(TransducerLossGradOp op,
                                      OpAdaptor adaptor,
                                      LinalgBuilder &lb) const override {
    OpBuilder &b = lb.getBuilder();
    NNTensorType jointType = typeOf(op.getJoint());
    Type element = jointType.getElementType();
    TransducerInputs in = transducerInputs(op, adaptor, lb);
    TransducerTopology topology = op.getTopology();
    bool rnnt = topology == TransducerTopology::rnnt;
    SmallVector<OpFoldResult> rowShape = lb.sizes(rowType(jointType, element));
    Type i32 = b.getI32Type();
    SmallVector<Value> rowOutputs{
        lb.empty(rowShape, element), lb.empty(rowShape, element),
        lb.empty(rowShape, element), lb.empty(rowShape, i32)};
    Value offsets = gridOffsets(lb, in);
    Value grad = adaptor.getGrad();

    // The sequences are independent: threads on the CPU. Each writes its
    // rows of the occupancy, the blank and label posteriors and the row
    // labels (0, 0, 0, -1 on padding) as one tile.
    SmallVector<Value> results = forEachSequence(
        lb, in.batch, rowOutputs,
        [&](Scalar &s, Value bi) -> SmallVector<SequenceSlice> {
          Type f64 = s.b.getF64Type();
          SequenceGrid g = sequenceGrid(s, in, bi, offsets, op.getBlank());
          SmallVector<OpFoldResult> tileShape, offsetsOut, sizesOut;
          OpFoldResult zero = s.b.getIndexAttr(0), one = s.b.getIndexAttr(1);
          if (in.packed) {
            tileShape = {s.mul(g.frames, g.columns)};
            offsetsOut = {g.offset};
            sizesOut = tileShape;
          } else {
            tileShape = {rowShape[1], rowShape[2]};
            offsetsOut = {bi, zero, zero};
            sizesOut = {one, rowShape[1], rowShape[2]};
          }
          // Packed, the recursion writes every row of the tile; padded,
          // the rows past the sequence's grid keep the fill.
          auto tile = [&](Type type, double fill) {
            return in.packed ? lb.empty(tileShape, type)
                             : lb.filled(tileShape, type, fill);
          };
          SmallVector<Value> tiles{tile(element, 0.0), tile(element, 0.0),
                                   tile(element, 0.0), tile(i32, -1.0)};
          Value table = emptyF64(s, {s.add(g.frames, s.idx(1)), g.columns});
          auto [logP, alphas] =
              forward(s, g, topology, table, /*isTable=*/true);
          Value last = s.sub(g.columns, s.idx(1));
          Value feasible = s.b.create<arith::CmpFOp>(
              s.loc, arith::CmpFPredicate::OGT, logP, s.f(f64, kNegInf));
          // An impossible sequence: zero with zero_infinity, else NaN.
          Value scale = s.toF64(extract(s, grad, {bi}));
          double impossible = op.getZeroInfinity()
                                  ? 0.0
                                  : std::numeric_limits<double>::quiet_NaN();
          scale = s.select(feasible, scale, s.f(f64, impossible));
          Value safeLogP = s.select(feasible, logP, s.f(f64, 0.0));
          auto posterior = [&](Scalar &q, Value logTerm) {
            Value p = q.exp(q.sub(logTerm, safeLogP));
            return q.mul(q.select(feasible, p, q.f(f64, 0.0)), scale);
          };
          auto toElement = [&](Scalar &q, Value v) -> Value {
            return q.b.create<arith::TruncFOp>(q.loc, element,
                                               flushSubnormal(q, v, element));
          };
          // beta before the last frame: rna's final vector, [.., 0 at U];
          // rnnt reads none (the end is the blank at (T - 1, U)).
          SmallVector<Value> betaInit = forLoop(
              s, s.idx(0), g.columns, {emptyF64(s, {g.columns})},
              [&](Scalar &q, Value u, ValueRange a) -> SmallVector<Value> {
                Value v =
                    q.select(eq(q, u, last), q.f(f64, 0.0), q.f(f64, kNegInf));
                return {insert(q, v, a[0], {u})};
              });
          SmallVector<Value> rows = forLoop(
              s, s.idx(0), g.frames,
              {tiles[0], tiles[1], tiles[2], tiles[3], betaInit[0]},
              [&](Scalar &q, Value step, ValueRange tc) {
                Value t = q.sub(q.sub(g.frames, q.idx(1)), step);
                Value hasNext = q.lt(q.add(t, q.idx(1)), g.frames);
                // rnnt: u descending (beta(t, u + 1) is this row's, already
                // written); rna: u ascending (beta_{t+1}(u + 1) is still
                // the next row's).
                return forLoop(
                    q, q.idx(0), g.columns, tc,
                    [&](Scalar &r, Value iu,
                        ValueRange a) -> SmallVector<Value> {
                      Value u = rnnt ? r.sub(last, iu) : iu;
                      Value hasLabel = r.lt(u, last);
                      Value uNext = r.minI(r.add(u, r.idx(1)), last);
                      Value betaHere = extract(r, a[4], {u});
                      Value betaRight = extract(r, a[4], {uNext});
                      Value afterBlank = betaHere;
                      if (rnnt) {
                        Value end = r.select(eq(r, u, last), r.f(f64, 0.0),
                                             r.f(f64, kNegInf));
                        afterBlank = r.select(hasNext, betaHere, end);
                      }
                      Value blankTerm =
                          r.add(g.blankLogProb(r, t, u), afterBlank);
                      Value labelTerm = r.select(
                          hasLabel, r.add(g.labelLogProb(r, t, u), betaRight),
                          r.f(f64, kNegInf));
                      Value alpha = extract(r, alphas, {t, u});
                      Value pBlank = posterior(r, r.add(alpha, blankTerm));
                      Value pLabel = posterior(r, r.add(alpha, labelTerm));
                      SmallVector<Value> at = g.tileRow(r, t, u);
                      Value label =
                          r.select(hasLabel, g.labelI32(r, u), r.i32(-1));
                      Value nextBeta = r.logAddExp(blankTerm, labelTerm);
                      return {insert(r, toElement(r, r.add(pBlank, pLabel)),
                                     a[0], at),
                              insert(r, toElement(r, pBlank), a[1], at),
                              insert(r, toElement(r, pLabel), a[2], at),
                              insert(r, label, a[3], at),
                              insert(r, nextBeta, a[4], {u})};
                    });
              });
          SmallVector<SequenceSlice> slices;
          for (Value tile : ArrayRef(rows).take_front(4))
            slices.push_back({tile, offsetsOut, sizesOut});
          return slices;
        });

    // [rows, V]: occ * softmax - gamma (from log-probs: -gamma).
    unsigned rank = jointType.getRank();
    AffineMap identity = b.getMultiDimIdentityMap(rank);
    AffineMap rowMap = identity.dropResult(rank - 1);
    bool fromLogits = op.getInputKind() == LossInput::logits;
    SmallVector<Value> inputs{in.joint, results[0], results[1], results[2],
                              results[3]};
    if (fromLogits)
      inputs.push_back(in.lse);
    SmallVector<AffineMap> maps{identity, rowMap, rowMap, rowMap, rowMap};
    if (fromLogits)
      maps.push_back(rowMap);
    maps.push_back(identity);
    Value init = lb.empty(lb.sizes(jointType), element);
    int64_t blank = op.getBlank();
    Value result = lb.generic(
        init.getType(), inputs, init, maps,
        SmallVector<IteratorType>(rank, IteratorType::parallel),
        [&](OpBuilder &nested, Location l, ValueRange args) {
          Scalar q{nested, l};
          Value k = q.index(rank - 1);
          Value zero = q.f(element, 0.0);
          Value gamma =
              q.add(q.select(eq(q, k, q.idx(blank)), args[2], zero),
                    q.select(eq(q, k, q.toIndex(args[4])), args[3], zero));
          Value value = q.neg(gamma);
          if (fromLogits)
            value =
                q.sub(q.mul(args[1], q.exp(q.sub(args[0], args[5]))), gamma);
          // No posterior (padding, rows no path visits): exactly 0, even
          // where the joint holds NaN.
          value = q.select(q.feq(args[1], zero), zero, value);
          value = flushSubnormal(q, value, element);
          nested.create<linalg::YieldOp>(l, value);
        });
    return SmallVector<Value>{result};
  }
};

//===----------------------------------------------------------------------===//
// Join and its gradient
//===----------------------------------------------------------------------===//

/// The per-sequence lengths and sizes a join reads, from the joint's dims
/// (its operands may be padded or packed).
struct JoinDims {
  bool packed;
  Value frameLengths, stateLengths, batch;
};

JoinDims joinDims(LinalgBuilder &lb, NNTensorType joint) {
  const BoundDims &dims = lb.getDims();
  JoinDims d;
  d.packed = isGridPacked(lb, joint);
  StringRef batch, frames, states;
  if (d.packed) {
    DimDeclAttr grid = dims.getDecls().lookup(joint.getDimName(0));
    batch = grid.getBatch().getValue();
    frames = grid.getSource().getValue();
    states = grid.getInner().getValue();
  } else {
    batch = joint.getDimName(0);
    frames = joint.getDimName(1);
    states = joint.getDimName(2);
  }
  d.frameLengths = dims.lengths(frames);
  d.stateLengths = dims.lengths(states);
  d.batch = dims.size(batch);
  return d;
}

/// A generic with no inputs over `sizes` writing into `init`, its body
/// `fn(q)` (read the loop indices with q.index).
Value indexGeneric(LinalgBuilder &lb, Value init, unsigned rank,
                   ArrayRef<IteratorType> iterators, ArrayRef<AffineMap> maps,
                   function_ref<Value(Scalar &, Value acc)> fn) {
  return lb.generic(init.getType(), {}, init, maps, iterators,
                    [&](OpBuilder &nested, Location l, ValueRange args) {
                      Scalar q{nested, l};
                      nested.create<linalg::YieldOp>(l, fn(q, args[0]));
                    });
}

class TransducerJoinConversion : public NNConversionPattern<TransducerJoinOp> {
public:
  using NNConversionPattern::NNConversionPattern;

  FailureOr<SmallVector<Value>> build(TransducerJoinOp op, OpAdaptor adaptor,
                                      LinalgBuilder &lb) const override {
    OpBuilder &b = lb.getBuilder();
    Location loc = lb.getLoc();
    NNTensorType type = typeOf(op.getResult());
    Type element = type.getElementType();
    JoinDims d = joinDims(lb, type);
    Value enc = adaptor.getEncoder(), pred = adaptor.getPrediction();
    Value result = lb.empty(lb.sizes(type), element);
    int64_t features = type.getStaticSize(type.getRank() - 1);
    if (!d.packed) {
      // [B, T, U1, D], zero past either length.
      AffineMap id = b.getMultiDimIdentityMap(4);
      Value joined = indexGeneric(
          lb, result, 4, SmallVector<IteratorType>(4, IteratorType::parallel),
          {id}, [&](Scalar &q, Value) {
            Value bi = q.index(0), t = q.index(1), u = q.index(2),
                  f = q.index(3);
            Value valid =
                q.andI(q.lt(t, q.toIndex(extract(q, d.frameLengths, {bi}))),
                       q.lt(u, q.toIndex(extract(q, d.stateLengths, {bi}))));
            Value sum = q.add(extract(q, enc, {bi, t, f}),
                              extract(q, pred, {bi, u, f}));
            return q.select(valid, sum, q.f(element, 0.0));
          });
      return SmallVector<Value>{joined};
    }
    // Packed: per sequence, one generic over its T_b * U1_b rows. The
    // operands are padded or packed (nn-pack-before-loss packs them).
    SequenceFrames encFrames(lb, typeOf(op.getEncoder()));
    SequenceFrames predFrames(lb, typeOf(op.getPrediction()));
    Scalar outer{b, loc};
    SmallVector<Value> results = forLoop(
        outer, outer.idx(0), d.batch, {result, outer.idx(0)},
        [&](Scalar &s, Value bi, ValueRange c) -> SmallVector<Value> {
          Value frames = s.toIndex(extract(s, d.frameLengths, {bi}));
          Value columns = s.toIndex(extract(s, d.stateLengths, {bi}));
          Value rows = s.mul(frames, columns);
          // A packed operand's first row of sequence bi, read once here.
          Value encFirst =
              encFrames.isPacked() ? encFrames.firstRow(s, bi) : Value();
          Value predFirst =
              predFrames.isPacked() ? predFrames.firstRow(s, bi) : Value();
          auto read = [&](Scalar &q, Value x, Value first, Value position,
                          Value f) {
            return first ? extract(q, x, {q.add(first, position), f})
                         : extract(q, x, {bi, position, f});
          };
          Value block = s.b.create<tensor::EmptyOp>(
              s.loc, ArrayRef<int64_t>{ShapedType::kDynamic, features}, element,
              ValueRange{rows});
          LinalgBuilder inner(s.b, s.loc, lb.getDims());
          AffineMap id = s.b.getMultiDimIdentityMap(2);
          Value filled = indexGeneric(
              inner, block, 2,
              SmallVector<IteratorType>(2, IteratorType::parallel), {id},
              [&](Scalar &q, Value) {
                Value j = q.index(0), f = q.index(1);
                Value t = q.b.create<arith::DivUIOp>(q.loc, j, columns);
                Value u = q.b.create<arith::RemUIOp>(q.loc, j, columns);
                return q.add(read(q, enc, encFirst, t, f),
                             read(q, pred, predFirst, u, f));
              });
          Value written = s.b.create<tensor::InsertSliceOp>(
              s.loc, filled, c[0],
              ArrayRef<OpFoldResult>{c[1], s.b.getIndexAttr(0)},
              ArrayRef<OpFoldResult>{rows, s.b.getIndexAttr(features)},
              ArrayRef<OpFoldResult>{s.b.getIndexAttr(1), s.b.getIndexAttr(1)});
          return {written, s.add(c[1], rows)};
        });
    return SmallVector<Value>{results[0]};
  }
};

class TransducerJoinGradConversion
    : public NNConversionPattern<TransducerJoinGradOp> {
public:
  using NNConversionPattern::NNConversionPattern;

  FailureOr<SmallVector<Value>> build(TransducerJoinGradOp op,
                                      OpAdaptor adaptor,
                                      LinalgBuilder &lb) const override {
    OpBuilder &b = lb.getBuilder();
    Location loc = lb.getLoc();
    NNTensorType encType = typeOf(op.getEncoder());
    NNTensorType predType = typeOf(op.getPrediction());
    Type element = encType.getElementType();
    JoinDims d = joinDims(lb, typeOf(op.getGrad()));
    Value g = adaptor.getGrad();
    Value encGrad = lb.filled(lb.sizes(encType), element, 0.0);
    Value predGrad = lb.filled(lb.sizes(predType), element, 0.0);
    int64_t features = encType.getStaticSize(encType.getRank() - 1);
    SmallVector<IteratorType> reduce{
        IteratorType::parallel, IteratorType::parallel, IteratorType::reduction,
        IteratorType::parallel};
    if (!d.packed) {
      // Loops (b, outer, inner, d): the sum over `inner` of valid rows,
      // the features innermost (contiguous reads).
      Value frames = lb.getDims().size(encType.getDimName(1));
      Value states = lb.getDims().size(predType.getDimName(1));
      auto sumOver = [&](Value init, Value innerSize, bool overStates) {
        Value sized = b.create<tensor::EmptyOp>(
            loc,
            ArrayRef<int64_t>{ShapedType::kDynamic, ShapedType::kDynamic,
                              ShapedType::kDynamic, features},
            element,
            ValueRange{d.batch, overStates ? frames : states, innerSize});
        // The inner extent comes from a shape-only operand.
        AffineMap id4 = b.getMultiDimIdentityMap(4);
        AffineMap out = id4.dropResult(2);
        return lb.generic(
            init.getType(), {sized}, init, {id4, out}, reduce,
            [&](OpBuilder &nested, Location l, ValueRange args) {
              Scalar q{nested, l};
              Value bi = q.index(0), o = q.index(1), i = q.index(2),
                    f = q.index(3);
              Value t = overStates ? o : i, u = overStates ? i : o;
              Value valid =
                  q.andI(q.lt(t, q.toIndex(extract(q, d.frameLengths, {bi}))),
                         q.lt(u, q.toIndex(extract(q, d.stateLengths, {bi}))));
              Value term = q.select(valid, extract(q, g, {bi, t, u, f}),
                                    q.f(element, 0.0));
              nested.create<linalg::YieldOp>(l, q.add(args[1], term));
            });
      };
      return SmallVector<Value>{sumOver(encGrad, states, true),
                                sumOver(predGrad, frames, false)};
    }
    // Packed: per sequence, [T_b, D] summed over u and [U1_b, D] over t,
    // written to its rows of padded or packed gradients.
    SequenceFrames encFrames(lb, encType), predFrames(lb, predType);
    Scalar outer{b, loc};
    SmallVector<Value> results = forLoop(
        outer, outer.idx(0), d.batch, {encGrad, predGrad, outer.idx(0)},
        [&](Scalar &s, Value bi, ValueRange c) -> SmallVector<Value> {
          Value frames = s.toIndex(extract(s, d.frameLengths, {bi}));
          Value columns = s.toIndex(extract(s, d.stateLengths, {bi}));
          LinalgBuilder inner(s.b, s.loc, lb.getDims());
          auto sumRows = [&](Value outerSize, Value innerSize, bool overStates,
                             Value into, const SequenceFrames &layout) {
            // Loops (outer, inner, d), the features innermost: each step
            // reads one contiguous row of the gradient.
            Value sized = s.b.create<tensor::EmptyOp>(
                s.loc,
                ArrayRef<int64_t>{ShapedType::kDynamic, ShapedType::kDynamic,
                                  features},
                element, ValueRange{outerSize, innerSize});
            Value init = inner.filled({outerSize, s.b.getIndexAttr(features)},
                                      element, 0.0);
            AffineMap id3 = s.b.getMultiDimIdentityMap(3);
            Value summed = inner.generic(
                init.getType(), {sized}, init, {id3, id3.dropResult(1)},
                {IteratorType::parallel, IteratorType::reduction,
                 IteratorType::parallel},
                [&](OpBuilder &nested, Location l, ValueRange args) {
                  Scalar q{nested, l};
                  Value o = q.index(0), i = q.index(1), f = q.index(2);
                  Value t = overStates ? o : i, u = overStates ? i : o;
                  Value row = q.add(c[2], q.add(q.mul(t, columns), u));
                  nested.create<linalg::YieldOp>(
                      l, q.add(args[1], extract(q, g, {row, f})));
                });
            OpFoldResult zero = s.b.getIndexAttr(0), one = s.b.getIndexAttr(1),
                         width = s.b.getIndexAttr(features);
            if (layout.isPacked())
              return s.b
                  .create<tensor::InsertSliceOp>(
                      s.loc, summed, into,
                      ArrayRef<OpFoldResult>{layout.firstRow(s, bi), zero},
                      ArrayRef<OpFoldResult>{outerSize, width},
                      ArrayRef<OpFoldResult>{one, one})
                  .getResult();
            return s.b
                .create<tensor::InsertSliceOp>(
                    s.loc, summed, into, ArrayRef<OpFoldResult>{bi, zero, zero},
                    ArrayRef<OpFoldResult>{one, outerSize, width},
                    ArrayRef<OpFoldResult>{one, one, one})
                .getResult();
          };
          return {sumRows(frames, columns, true, c[0], encFrames),
                  sumRows(columns, frames, false, c[1], predFrames),
                  s.add(c[2], s.mul(frames, columns))};
        });
    return SmallVector<Value>{results[0], results[1]};
  }
};

//===----------------------------------------------------------------------===//
// Gathering prediction states along an RNA alignment
//===----------------------------------------------------------------------===//

/// [B, T] i32: the number of labels the alignment emits before each frame
/// (of blanks with `byBlanks`), clamped to the states' length - 1; -1 for
/// a sequence without states (an RNN-T path over no frames: nothing to
/// gather). One scalar pass per sequence.
Value statePositions(LinalgBuilder &lb, Value alignment, Value frameLengths,
                     Value stateLengths, Value batch, Value time, int64_t blank,
                     bool byBlanks) {
  Scalar outer = lb.scalar();
  Type i32 = outer.i32Type();
  Value positions = outer.b.create<tensor::EmptyOp>(
      outer.loc, ArrayRef<int64_t>{ShapedType::kDynamic, ShapedType::kDynamic},
      i32, ValueRange{batch, time});
  return forLoop(
      outer, outer.idx(0), batch, {positions},
      [&](Scalar &s, Value bi, ValueRange c) -> SmallVector<Value> {
        Value frames = s.toIndex(extract(s, frameLengths, {bi}));
        Value last = s.sub(s.toIndex(extract(s, stateLengths, {bi})), s.idx(1));
        SmallVector<Value> rows = forLoop(
            s, s.idx(0), time, {c[0], s.idx(0)},
            [&](Scalar &q, Value t, ValueRange a) -> SmallVector<Value> {
              Value here = q.minI(a[1], last);
              Value written =
                  insert(q, q.b.create<arith::IndexCastOp>(q.loc, i32, here),
                         a[0], {bi, t});
              Value cls = q.toIndex(extract(q, alignment, {bi, t}));
              // What moves to the next state: a label (not the blank, not
              // -1), or by_blanks the blank.
              Value counted = byBlanks ? eq(q, cls, q.idx(blank))
                                       : q.andI(q.ne(cls, q.idx(blank)),
                                                q.ge(cls, q.idx(0)));
              Value emits = q.andI(q.lt(t, frames), counted);
              return {written, q.select(emits, q.add(a[1], q.idx(1)), a[1])};
            });
        return {rows[0]};
      })[0];
}

class GatherStatesConversion : public NNConversionPattern<GatherStatesOp> {
public:
  using NNConversionPattern::NNConversionPattern;

  FailureOr<SmallVector<Value>> build(GatherStatesOp op, OpAdaptor adaptor,
                                      LinalgBuilder &lb) const override {
    NNTensorType type = typeOf(op.getResult());
    NNTensorType alignmentType = typeOf(op.getAlignment());
    NNTensorType statesType = typeOf(op.getStates());
    const BoundDims &dims = lb.getDims();
    Value frameLengths = dims.lengths(alignmentType.getDimName(1));
    Value positions = statePositions(lb, adaptor.getAlignment(), frameLengths,
                                     dims.lengths(statesType.getDimName(1)),
                                     dims.size(alignmentType.getDimName(0)),
                                     dims.size(alignmentType.getDimName(1)),
                                     op.getBlank(), op.getByBlanks());
    Value states = adaptor.getStates();
    Type element = type.getElementType();
    OpBuilder &b = lb.getBuilder();
    AffineMap id = b.getMultiDimIdentityMap(3);
    Value init = lb.empty(lb.sizes(type), element);
    Value result = lb.generic(
        init.getType(), {positions}, init, {id.dropResult(2), id},
        SmallVector<IteratorType>(3, IteratorType::parallel),
        [&](OpBuilder &nested, Location l, ValueRange args) {
          Scalar q{nested, l};
          Value bi = q.index(0), t = q.index(1), f = q.index(2);
          Value position = q.toIndex(args[0]);
          Value valid =
              q.andI(q.lt(t, q.toIndex(extract(q, frameLengths, {bi}))),
                     q.ge(position, q.idx(0)));
          Value state = extract(q, states, {bi, q.maxI(position, q.idx(0)), f});
          nested.create<linalg::YieldOp>(
              l, q.select(valid, state, q.f(element, 0.0)));
        });
    return SmallVector<Value>{result};
  }
};

/// A scatter-add of each valid frame's gradient onto the state it
/// gathered (scalar loops over B x T_b x D).
class GatherStatesGradConversion
    : public NNConversionPattern<GatherStatesGradOp> {
public:
  using NNConversionPattern::NNConversionPattern;

  FailureOr<SmallVector<Value>> build(GatherStatesGradOp op, OpAdaptor adaptor,
                                      LinalgBuilder &lb) const override {
    NNTensorType type = typeOf(op.getResult());
    NNTensorType alignmentType = typeOf(op.getAlignment());
    const BoundDims &dims = lb.getDims();
    Value frameLengths = dims.lengths(alignmentType.getDimName(1));
    Value batch = dims.size(alignmentType.getDimName(0));
    Value positions = statePositions(lb, adaptor.getAlignment(), frameLengths,
                                     dims.lengths(type.getDimName(1)), batch,
                                     dims.size(alignmentType.getDimName(1)),
                                     op.getBlank(), op.getByBlanks());
    Value grad = adaptor.getGrad();
    Value result = lb.filled(lb.sizes(type), type.getElementType(), 0.0);
    Scalar outer = lb.scalar();
    Value features = outer.idx(type.getStaticSize(2));
    return SmallVector<Value>{forLoop(
        outer, outer.idx(0), batch, {result},
        [&](Scalar &s, Value bi, ValueRange c) -> SmallVector<Value> {
          Value frames = s.toIndex(extract(s, frameLengths, {bi}));
          return forLoop(
              s, s.idx(0), frames, c,
              [&](Scalar &q, Value t, ValueRange a) -> SmallVector<Value> {
                // A position with no state to gather adds nothing.
                Value position = q.toIndex(extract(q, positions, {bi, t}));
                Value gathered = q.ge(position, q.idx(0));
                Value u = q.maxI(position, q.idx(0));
                return forLoop(
                    q, q.idx(0), q.select(gathered, features, q.idx(0)), a,
                    [&](Scalar &r, Value f,
                        ValueRange acc) -> SmallVector<Value> {
                      Value sum = r.add(extract(r, acc[0], {bi, u, f}),
                                        extract(r, grad, {bi, t, f}));
                      return {insert(r, sum, acc[0], {bi, u, f})};
                    });
              });
        })[0]};
  }
};

/// [B, U1]: start, then the labels; start again on padding (so that an
/// embedding of padded positions reads a valid class).
class PrependStartConversion : public NNConversionPattern<PrependStartOp> {
public:
  using NNConversionPattern::NNConversionPattern;

  FailureOr<SmallVector<Value>> build(PrependStartOp op, OpAdaptor adaptor,
                                      LinalgBuilder &lb) const override {
    NNTensorType type = typeOf(op.getResult());
    NNTensorType labelsType = typeOf(op.getLabels());
    Value labels = adaptor.getLabels();
    Value lengths = lb.getDims().lengths(labelsType.getDimName(1));
    Value init = lb.empty(lb.sizes(type), type.getElementType());
    int64_t start = op.getStart();
    AffineMap id = lb.getBuilder().getMultiDimIdentityMap(2);
    Value result = indexGeneric(
        lb, init, 2, {IteratorType::parallel, IteratorType::parallel}, {id},
        [&](Scalar &q, Value) {
          Value bi = q.index(0), u = q.index(1);
          Value count = q.toIndex(extract(q, lengths, {bi}));
          Value inside =
              q.andI(q.ge(u, q.idx(1)), q.lt(q.sub(u, q.idx(1)), count));
          Value label = extract(q, labels, {bi, before(q, u)});
          Value startValue = q.b.create<arith::ConstantOp>(
              q.loc, type.getElementType(),
              q.b.getIntegerAttr(type.getElementType(), start));
          return q.select(inside, label, startValue);
        });
    return SmallVector<Value>{result};
  }
};

} // namespace

void mlir::nn::populateTransducerConversionPatterns(
    const TypeConverter &converter, ConversionState &state,
    RewritePatternSet &patterns) {
  patterns.add<TransducerLossConversion, TransducerLossGradConversion,
               TransducerAlignConversion, TransducerJoinConversion,
               TransducerJoinGradConversion, PrependStartConversion,
               GatherStatesConversion, GatherStatesGradConversion>(converter,
                                                                   state);
}
