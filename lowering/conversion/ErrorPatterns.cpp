//===- ErrorPatterns.cpp - edit distance of label sequences ---------------===//
//
// nn.edit_distance runs per sequence (an scf.for over the batch) the
// Levenshtein dynamic programme over hypothesis rows i and reference
// columns j as scalar loops, keeping one row of the table: for each
// column the substitution, insertion and deletion counts of the cell's
// chosen path ([U + 1, 3] i32 for the padded reference length U; a cell's
// cost is the sum of its counts, every edit costing 1). Row i is written
// over row i - 1 left to right: column j reads its deletion predecessor
// (i, j - 1) already written, its insertion predecessor (i - 1, j) not yet
// overwritten, and the diagonal (i - 1, j - 1), carried from the previous
// column before it was overwritten. Only each sequence's own lengths are
// read, so padding is never touched.
//
//===----------------------------------------------------------------------===//

#include "lowering/conversion/Patterns.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"

using namespace mlir;
using namespace mlir::nn;

namespace {

NNTensorType typeOf(Value v) { return cast<NNTensorType>(v.getType()); }

/// The counts of one cell: substitutions, insertions, deletions (i32).
struct Counts {
  Value substitutions, insertions, deletions;

  Value cost(Scalar &q) const {
    return q.add(q.add(substitutions, insertions), deletions);
  }
  SmallVector<Value, 3> values() const {
    return {substitutions, insertions, deletions};
  }
};

/// Column `j` of the row.
Counts readCell(Scalar &q, Value row, Value j) {
  auto at = [&](int64_t k) -> Value {
    return q.b.create<tensor::ExtractOp>(q.loc, row, ValueRange{j, q.idx(k)});
  };
  return {at(0), at(1), at(2)};
}

/// The row with column `j` set to `cell`.
Value writeCell(Scalar &q, Value row, Value j, const Counts &cell) {
  for (auto [k, value] : llvm::enumerate(cell.values()))
    row = q.b.create<tensor::InsertOp>(q.loc, value, row,
                                       ValueRange{j, q.idx(k)});
  return row;
}

/// The i32 value of an index `v`.
Value toI32(Scalar &q, Value v) {
  return q.b.create<arith::IndexCastOp>(q.loc, q.i32Type(), v);
}

class EditDistanceConversion : public NNConversionPattern<EditDistanceOp> {
public:
  using NNConversionPattern::NNConversionPattern;

  FailureOr<SmallVector<Value>> build(EditDistanceOp op, OpAdaptor adaptor,
                                      LinalgBuilder &lb) const override {
    NNTensorType hypType = typeOf(op.getHyp());
    NNTensorType refType = typeOf(op.getRef());
    const BoundDims &dims = lb.getDims();
    Value hyp = adaptor.getHyp(), ref = adaptor.getRef();
    Value hypLengths = dims.lengths(hypType.getDimName(1));
    Value refLengths = dims.lengths(refType.getDimName(1));
    Value batch = dims.size(hypType.getDimName(0));
    Value refPad = dims.size(refType.getDimName(1));
    Scalar outer = lb.scalar();
    Type f32 = outer.b.getF32Type(), i32 = outer.i32Type();
    Value errors = lb.empty(lb.sizes(typeOf(op.getErrors())), f32);
    Value refCounts = lb.empty(lb.sizes(typeOf(op.getRefLengths())), f32);
    Value counts = lb.empty(lb.sizes(typeOf(op.getCounts())), i32);
    // One row for every sequence, sized for the longest reference.
    Value row = outer.b.create<tensor::EmptyOp>(
        outer.loc, ArrayRef<int64_t>{ShapedType::kDynamic, 3}, i32,
        ValueRange{outer.add(refPad, outer.idx(1))});

    SmallVector<Value> results = forLoop(
        outer, outer.idx(0), batch, {errors, refCounts, counts, row},
        [&](Scalar &s, Value bi, ValueRange c) -> SmallVector<Value> {
          Value hypLength =
              s.b.create<tensor::ExtractOp>(s.loc, hypLengths, bi);
          Value refLength =
              s.b.create<tensor::ExtractOp>(s.loc, refLengths, bi);
          Value rows = s.toIndex(hypLength), columns = s.toIndex(refLength);
          Value zero = s.i32(0);
          // Row 0: the first j reference labels, all deleted.
          SmallVector<Value> table = forLoop(
              s, s.idx(0), s.add(columns, s.idx(1)), {c[3]},
              [&](Scalar &q, Value j, ValueRange a) -> SmallVector<Value> {
                return {writeCell(q, a[0], j, {zero, zero, toI32(q, j)})};
              });
          table = forLoop(
              s, s.idx(1), s.add(rows, s.idx(1)), table,
              [&](Scalar &q, Value i, ValueRange a) -> SmallVector<Value> {
                Value label = q.b.create<tensor::ExtractOp>(
                    q.loc, hyp, ValueRange{bi, q.sub(i, q.idx(1))});
                // Column 0: the first i hypothesis labels, all inserted.
                Counts corner = readCell(q, a[0], q.idx(0));
                Value first =
                    writeCell(q, a[0], q.idx(0), {zero, toI32(q, i), zero});
                SmallVector<Value> init{first};
                llvm::append_range(init, corner.values());
                SmallVector<Value> swept = forLoop(
                    q, q.idx(1), q.add(columns, q.idx(1)), init,
                    [&](Scalar &r, Value j,
                        ValueRange d) -> SmallVector<Value> {
                      Value current = d[0];
                      Counts diagonal{d[1], d[2], d[3]};
                      Counts up = readCell(r, current, j);
                      Counts left = readCell(r, current, r.sub(j, r.idx(1)));
                      Value refLabel = r.b.create<tensor::ExtractOp>(
                          r.loc, ref, ValueRange{bi, r.sub(j, r.idx(1))});
                      Value differs = r.b.create<arith::ExtUIOp>(
                          r.loc, i32, r.ne(label, refLabel));
                      // Ties: the diagonal, then the deletion, then the
                      // insertion (strict comparisons in that order).
                      Counts best{r.add(diagonal.substitutions, differs),
                                  diagonal.insertions, diagonal.deletions};
                      Value bestCost = best.cost(r);
                      Value one = r.i32(1);
                      Value deletionCost = r.add(left.cost(r), one);
                      Value deletes = r.lt(deletionCost, bestCost);
                      best = {
                          r.select(deletes, left.substitutions,
                                   best.substitutions),
                          r.select(deletes, left.insertions, best.insertions),
                          r.select(deletes, r.add(left.deletions, one),
                                   best.deletions)};
                      bestCost = r.select(deletes, deletionCost, bestCost);
                      Value insertionCost = r.add(up.cost(r), one);
                      Value inserts = r.lt(insertionCost, bestCost);
                      best = {r.select(inserts, up.substitutions,
                                       best.substitutions),
                              r.select(inserts, r.add(up.insertions, one),
                                       best.insertions),
                              r.select(inserts, up.deletions, best.deletions)};
                      // Cell (i - 1, j) is the next column's diagonal.
                      SmallVector<Value> next{writeCell(r, current, j, best)};
                      llvm::append_range(next, up.values());
                      return next;
                    });
                return {swept[0]};
              });
          Counts last = readCell(s, table[0], columns);
          Value total = s.b.create<arith::SIToFPOp>(s.loc, f32, last.cost(s));
          Value length = s.b.create<arith::SIToFPOp>(s.loc, f32, refLength);
          Value counted = c[2];
          for (auto [k, value] : llvm::enumerate(last.values()))
            counted = s.b.create<tensor::InsertOp>(s.loc, value, counted,
                                                   ValueRange{bi, s.idx(k)});
          return {s.b.create<tensor::InsertOp>(s.loc, total, c[0], bi),
                  s.b.create<tensor::InsertOp>(s.loc, length, c[1], bi),
                  counted, table[0]};
        });
    return SmallVector<Value>{results[0], results[1], results[2]};
  }
};

} // namespace

void mlir::nn::populateErrorConversionPatterns(const TypeConverter &converter,
                                               ConversionState &state,
                                               RewritePatternSet &patterns) {
  patterns.add<EditDistanceConversion>(converter, state);
}
