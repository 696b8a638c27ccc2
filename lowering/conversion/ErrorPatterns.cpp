//===- ErrorPatterns.cpp - edit distance and expected risk ----------------===//
//
// nn.edit_distance runs per sequence (an scf.for over the batch) the
// Levenshtein dynamic programme over hypothesis rows i and reference
// columns j as scalar loops (tokens are labels, or with `words` the
// words a first pass over each sequence finds, compared label by label
// where the programme compares two), keeping one row of the table: for each
// column the substitution, insertion and deletion counts of the cell's
// chosen path ([U + 1, 3] i32 for the padded reference length U; a cell's
// cost is the sum of its counts, every edit costing 1). Row i is written
// over row i - 1 left to right: column j reads its deletion predecessor
// (i, j - 1) already written, its insertion predecessor (i - 1, j) not yet
// overwritten, and the diagonal (i - 1, j - 1), carried from the previous
// column before it was overwritten. Only each sequence's own lengths are
// read, so padding is never touched.
//
// nn.expected_risk and its gradient are row reductions over the [B, K]
// hypotheses (linalg.generic, k a reduction loop), each valid hypothesis
// (k < len_K(b)) selected into the accumulators, so that whatever padding
// holds never reaches them. They compute in f64, as the loss sums do: one
// pass for the smallest nll (and the summed errors of the mean
// baseline), one for the softmax normalizer and the weighted errors, then
// a map to the result.
//
//===----------------------------------------------------------------------===//

#include "lowering/conversion/Patterns.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"

#include <limits>

using namespace mlir;
using namespace mlir::nn;

using utils::IteratorType;

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

/// What row i (1-based) of the programme compares: the hypothesis token,
/// read once per row.
using RowToken = function_ref<Value(Scalar &, Value i)>;
/// Whether the row's token and reference token `j` (1-based) differ, an
/// i1.
using TokensDiffer = function_ref<Value(Scalar &, Value token, Value j)>;

/// The programme of one sequence of `rows` hypothesis and `columns`
/// reference tokens (indices) over `row`, [>= columns + 1, 3] i32: returns
/// the row whose cell `columns` holds the counts of the whole sequences.
Value levenshtein(Scalar &s, Value rows, Value columns, Value row,
                  RowToken rowToken, TokensDiffer differs) {
  Type i32 = s.i32Type();
  Value zero = s.i32(0);
  // Row 0: the first j reference tokens, all deleted.
  SmallVector<Value> table =
      forLoop(s, s.idx(0), s.add(columns, s.idx(1)), {row},
              [&](Scalar &q, Value j, ValueRange a) -> SmallVector<Value> {
                return {writeCell(q, a[0], j, {zero, zero, toI32(q, j)})};
              });
  table = forLoop(
      s, s.idx(1), s.add(rows, s.idx(1)), table,
      [&](Scalar &q, Value i, ValueRange a) -> SmallVector<Value> {
        Value token = rowToken(q, i);
        // Column 0: the first i hypothesis tokens, all inserted.
        Counts corner = readCell(q, a[0], q.idx(0));
        Value first = writeCell(q, a[0], q.idx(0), {zero, toI32(q, i), zero});
        SmallVector<Value> init{first};
        llvm::append_range(init, corner.values());
        SmallVector<Value> swept = forLoop(
            q, q.idx(1), q.add(columns, q.idx(1)), init,
            [&](Scalar &r, Value j, ValueRange d) -> SmallVector<Value> {
              Value current = d[0];
              Counts diagonal{d[1], d[2], d[3]};
              Counts up = readCell(r, current, j);
              Counts left = readCell(r, current, r.sub(j, r.idx(1)));
              Value mismatch =
                  r.b.create<arith::ExtUIOp>(r.loc, i32, differs(r, token, j));
              // Ties: the diagonal, then the deletion, then the insertion
              // (strict comparisons in that order).
              Counts best{r.add(diagonal.substitutions, mismatch),
                          diagonal.insertions, diagonal.deletions};
              Value bestCost = best.cost(r);
              Value one = r.i32(1);
              Value deletionCost = r.add(left.cost(r), one);
              Value deletes = r.lt(deletionCost, bestCost);
              best = {r.select(deletes, left.substitutions, best.substitutions),
                      r.select(deletes, left.insertions, best.insertions),
                      r.select(deletes, r.add(left.deletions, one),
                               best.deletions)};
              bestCost = r.select(deletes, deletionCost, bestCost);
              Value insertionCost = r.add(up.cost(r), one);
              Value inserts = r.lt(insertionCost, bestCost);
              best = {
                  r.select(inserts, up.substitutions, best.substitutions),
                  r.select(inserts, r.add(up.insertions, one), best.insertions),
                  r.select(inserts, up.deletions, best.deletions)};
              // Cell (i - 1, j) is the next column's diagonal.
              SmallVector<Value> next{writeCell(r, current, j, best)};
              llvm::append_range(next, up.values());
              return next;
            });
        return {swept[0]};
      });
  return table[0];
}

/// The words of one sequence: `spans` [>= words + 1, 2] index holds each
/// word's first position and the position after its last; `count` the
/// number of words (an index).
struct Words {
  Value spans, count;

  Value start(Scalar &s, Value word) const {
    return s.b.create<tensor::ExtractOp>(s.loc, spans,
                                         ValueRange{word, s.idx(0)});
  }
  Value end(Scalar &s, Value word) const {
    return s.b.create<tensor::ExtractOp>(s.loc, spans,
                                         ValueRange{word, s.idx(1)});
  }
};

/// Splits the first `length` labels of row `bi` of `labels` at the
/// labels equal to `separator` (i32), into `spans`, [pad + 1, 2] index for
/// the padded length `pad`. Branch-free: every position writes the
/// current word's span at slot `count`, which moves on only when a word
/// ends, so the last write to a slot is the word's true span; a sequence
/// that ends inside a word closes it after the loop (the extra slot
/// takes the write when it does not). A run of separators ends one word
/// at most, so no word is empty.
Words splitWords(Scalar &s, Value labels, Value bi, Value length,
                 Value separator, Value spans) {
  Value falseValue = s.b.create<arith::ConstantIntOp>(s.loc, 0, 1);
  Value trueValue = s.b.create<arith::ConstantIntOp>(s.loc, 1, 1);
  auto writeSpan = [](Scalar &q, Value spans, Value slot, Value start,
                      Value end) {
    spans = q.b.create<tensor::InsertOp>(q.loc, start, spans,
                                         ValueRange{slot, q.idx(0)});
    return q.b
        .create<tensor::InsertOp>(q.loc, end, spans, ValueRange{slot, q.idx(1)})
        .getResult();
  };
  // Carried: spans, count, the current word's start, whether inside a word.
  SmallVector<Value> state = forLoop(
      s, s.idx(0), length, {spans, s.idx(0), s.idx(0), falseValue},
      [&](Scalar &q, Value p, ValueRange a) -> SmallVector<Value> {
        Value label =
            q.b.create<tensor::ExtractOp>(q.loc, labels, ValueRange{bi, p});
        Value isSeparator = q.b.create<arith::CmpIOp>(
            q.loc, arith::CmpIPredicate::eq, label, separator);
        Value inWord = a[3];
        Value isLabel =
            q.b.create<arith::XOrIOp>(q.loc, isSeparator, trueValue);
        Value startsWord = q.andI(
            isLabel, q.b.create<arith::XOrIOp>(q.loc, inWord, trueValue));
        Value endsWord = q.andI(isSeparator, inWord);
        Value start = q.select(startsWord, p, a[2]);
        Value written = writeSpan(q, a[0], a[1], start, p);
        Value count = q.add(a[1], q.select(endsWord, q.idx(1), q.idx(0)));
        return {written, count, start, isLabel};
      });
  Value spansOut = writeSpan(s, state[0], state[1], state[2], length);
  Value count = s.add(state[1], s.select(state[3], s.idx(1), s.idx(0)));
  return {spansOut, count};
}

/// Whether word `i` of `hyp` and word `j` of `ref` (0-based) differ: their
/// lengths, or some label at one offset.
Value wordsDiffer(Scalar &s, Value hypLabels, Value refLabels, Value bi,
                  const Words &hyp, Value i, const Words &ref, Value j) {
  Value hypStart = hyp.start(s, i), refStart = ref.start(s, j);
  Value hypLength = s.sub(hyp.end(s, i), hypStart);
  Value refLength = s.sub(ref.end(s, j), refStart);
  Value differ = s.ne(hypLength, refLength);
  SmallVector<Value> any =
      forLoop(s, s.idx(0), s.minI(hypLength, refLength), {differ},
              [&](Scalar &q, Value k, ValueRange a) -> SmallVector<Value> {
                Value h = q.b.create<tensor::ExtractOp>(
                    q.loc, hypLabels, ValueRange{bi, q.add(hypStart, k)});
                Value r = q.b.create<tensor::ExtractOp>(
                    q.loc, refLabels, ValueRange{bi, q.add(refStart, k)});
                return {q.b.create<arith::OrIOp>(q.loc, a[0], q.ne(h, r))};
              });
  return any[0];
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
    Value hypPad = dims.size(hypType.getDimName(1));
    Value refPad = dims.size(refType.getDimName(1));
    std::optional<int64_t> separator = op.getSeparator();
    Scalar outer = lb.scalar();
    Type f32 = outer.b.getF32Type(), i32 = outer.i32Type();
    Value errors = lb.empty(lb.sizes(typeOf(op.getErrors())), f32);
    Value refCounts = lb.empty(lb.sizes(typeOf(op.getRefLengths())), f32);
    Value counts = lb.empty(lb.sizes(typeOf(op.getCounts())), i32);
    // One row for every sequence, sized for the longest reference (words
    // are never more than labels).
    auto scratch = [&](Value pad, int64_t width, Type element) -> Value {
      return outer.b.create<tensor::EmptyOp>(
          outer.loc, ArrayRef<int64_t>{ShapedType::kDynamic, width}, element,
          ValueRange{outer.add(pad, outer.idx(1))});
    };
    SmallVector<Value> init{errors, refCounts, counts, scratch(refPad, 3, i32)};
    if (separator) {
      init.push_back(scratch(hypPad, 2, outer.b.getIndexType()));
      init.push_back(scratch(refPad, 2, outer.b.getIndexType()));
    }

    SmallVector<Value> results = forLoop(
        outer, outer.idx(0), batch, init,
        [&](Scalar &s, Value bi, ValueRange c) -> SmallVector<Value> {
          Value hypLength =
              s.b.create<tensor::ExtractOp>(s.loc, hypLengths, bi);
          // The reference's tokens, i32 (the rate's divisor) and index.
          Value refTokens =
              s.b.create<tensor::ExtractOp>(s.loc, refLengths, bi);
          hypLength = s.toIndex(hypLength);
          Value refLength = s.toIndex(refTokens);
          SmallVector<Value> carried(c.begin(), c.end());
          Value table;
          if (separator) {
            Value sep = s.i32(*separator);
            Words hypWords = splitWords(s, hyp, bi, hypLength, sep, carried[4]);
            Words refWords = splitWords(s, ref, bi, refLength, sep, carried[5]);
            carried[4] = hypWords.spans;
            carried[5] = refWords.spans;
            refLength = refWords.count;
            refTokens = toI32(s, refLength);
            table = levenshtein(
                s, hypWords.count, refWords.count, carried[3],
                [&](Scalar &q, Value i) { return q.sub(i, q.idx(1)); },
                [&](Scalar &r, Value word, Value j) {
                  return wordsDiffer(r, hyp, ref, bi, hypWords, word, refWords,
                                     r.sub(j, r.idx(1)));
                });
          } else {
            table = levenshtein(
                s, hypLength, refLength, carried[3],
                [&](Scalar &q, Value i) -> Value {
                  return q.b.create<tensor::ExtractOp>(
                      q.loc, hyp, ValueRange{bi, q.sub(i, q.idx(1))});
                },
                [&](Scalar &r, Value label, Value j) {
                  Value refLabel = r.b.create<tensor::ExtractOp>(
                      r.loc, ref, ValueRange{bi, r.sub(j, r.idx(1))});
                  return r.ne(label, refLabel);
                });
          }
          carried[3] = table;
          Counts last = readCell(s, table, refLength);
          Value total = s.b.create<arith::SIToFPOp>(s.loc, f32, last.cost(s));
          Value length = s.b.create<arith::SIToFPOp>(s.loc, f32, refTokens);
          for (auto [k, value] : llvm::enumerate(last.values()))
            carried[2] = s.b.create<tensor::InsertOp>(s.loc, value, carried[2],
                                                      ValueRange{bi, s.idx(k)});
          carried[0] =
              s.b.create<tensor::InsertOp>(s.loc, total, carried[0], bi);
          carried[1] =
              s.b.create<tensor::InsertOp>(s.loc, length, carried[1], bi);
          return carried;
        });
    return SmallVector<Value>{results[0], results[1], results[2]};
  }
};

//===----------------------------------------------------------------------===//
// Expected risk
//===----------------------------------------------------------------------===//

constexpr double kInf = std::numeric_limits<double>::infinity();

/// The [B, K] operands of an expected risk, lowered, and what indexes them.
struct Hypotheses {
  Value nll, err;
  /// len_K per sequence, tensor<?xi32>.
  Value lengths;
  /// B, as an index.
  Value batch;
  Type element;

  /// `original` is the nn value of `nll`, whose type names the dims.
  Hypotheses(LinalgBuilder &lb, Value original, Value nll, Value err) {
    NNTensorType type = typeOf(original);
    this->nll = nll;
    this->err = err;
    lengths = lb.getDims().lengths(type.getDimName(1));
    batch = lb.getDims().size(type.getDimName(0));
    element = type.getElementType();
  }
};

/// The body of a row reduction: the hypothesis's nll and err in f64, the
/// per-row inputs, the accumulators; returns the new accumulators.
using RowCombine = function_ref<SmallVector<Value>(
    Scalar &, Value nll, Value err, ValueRange rows, ValueRange acc)>;

/// Reduces each row of `h` over its valid hypotheses into [B] f64
/// accumulators starting at `inits`. `rows` are [B] inputs read at the
/// row. At padded positions the accumulators pass through unchanged
/// (selected, so NaN there never reaches them).
SmallVector<Value> reduceRows(LinalgBuilder &lb, const Hypotheses &h,
                              ValueRange rows, ArrayRef<double> inits,
                              RowCombine combine) {
  OpBuilder &b = lb.getBuilder();
  Type f64 = b.getF64Type();
  SmallVector<Value> outputs;
  for (double init : inits)
    outputs.push_back(lb.filled({h.batch}, f64, init));
  AffineMap full = b.getMultiDimIdentityMap(2);
  AffineMap row = AffineMap::get(2, 0, b.getAffineDimExpr(0));
  SmallVector<Value> inputs{h.nll, h.err, h.lengths};
  llvm::append_range(inputs, rows);
  SmallVector<AffineMap> maps{full, full, row};
  maps.append(rows.size() + outputs.size(), row);
  auto generic = b.create<linalg::GenericOp>(
      lb.getLoc(), TypeRange(ValueRange(outputs)), inputs, outputs, maps,
      SmallVector<IteratorType>{IteratorType::parallel,
                                IteratorType::reduction},
      [&](OpBuilder &nested, Location l, ValueRange a) {
        Scalar s{nested, l};
        ValueRange acc = a.take_back(outputs.size());
        SmallVector<Value> next = combine(s, s.toF64(a[0]), s.toF64(a[1]),
                                          a.slice(3, rows.size()), acc);
        Value valid = LinalgBuilder::isValidPosition(s, a[2]);
        for (size_t i = 0; i < next.size(); ++i)
          next[i] = s.select(valid, next[i], acc[i]);
        nested.create<linalg::YieldOp>(l, next);
      });
  return SmallVector<Value>(generic.getResults());
}

/// The smallest nll of each row over its valid hypotheses: +inf where
/// there are none or all are +inf, NaN where one is NaN (minimumf
/// propagates it). With `errorSum`, also the sum of their errors.
SmallVector<Value> minNllAndErrorSum(LinalgBuilder &lb, const Hypotheses &h,
                                     bool errorSum) {
  SmallVector<double> inits{kInf};
  if (errorSum)
    inits.push_back(0.0);
  return reduceRows(lb, h, {}, inits,
                    [&](Scalar &s, Value nll, Value err, ValueRange,
                        ValueRange acc) -> SmallVector<Value> {
                      SmallVector<Value> next{
                          s.b.create<arith::MinimumFOp>(s.loc, acc[0], nll)};
                      if (errorSum)
                        next.push_back(s.add(acc[1], err));
                      return next;
                    });
}

/// exp(minNll - nll): the unnormalized P of a hypothesis, at most 1.
Value weight(Scalar &s, Value minNll, Value nll) {
  return s.exp(s.sub(minNll, nll));
}

/// Whether a row's result is 0 by rule: no valid hypothesis, or every one
/// +inf. False for NaN, which propagates.
Value zeroByRule(Scalar &s, Value minNll) {
  return s.feq(minNll, s.f(minNll.getType(), kInf));
}

/// `x` (f64) in `element`.
Value fromF64(Scalar &s, Value x, Type element) {
  if (element == x.getType())
    return x;
  return s.b.create<arith::TruncFOp>(s.loc, element, x);
}

/// risk[b] = sum_k w_k (err_k - e) / sum_k w_k over the valid hypotheses,
/// w_k = exp(min nll - nll_k), e the mean error or 0.
class ExpectedRiskConversion : public NNConversionPattern<ExpectedRiskOp> {
public:
  using NNConversionPattern::NNConversionPattern;

  FailureOr<SmallVector<Value>> build(ExpectedRiskOp op, OpAdaptor adaptor,
                                      LinalgBuilder &lb) const override {
    Hypotheses h(lb, op.getNll(), adaptor.getNll(), adaptor.getErr());
    NNTensorType riskType = typeOf(op.getRisk());
    bool mean = op.getBaseline() == RiskBaseline::mean;
    SmallVector<Value> stats = minNllAndErrorSum(lb, h, mean);
    SmallVector<Value> rows{stats[0]};
    if (mean)
      rows.push_back(lb.map(
          NNTensorType::get(riskType.getDims(), lb.getBuilder().getF64Type()),
          {stats[1], h.lengths}, [](Scalar &s, ValueRange a) {
            Value count = s.toF64(a[1]);
            Value zero = s.f(count.getType(), 0.0);
            return s.select(s.feq(count, zero), zero, s.div(a[0], count));
          }));
    SmallVector<Value> sums = reduceRows(
        lb, h, rows, {0.0, 0.0},
        [&](Scalar &s, Value nll, Value err, ValueRange row,
            ValueRange acc) -> SmallVector<Value> {
          Value w = weight(s, row[0], nll);
          Value relative = mean ? s.sub(err, row[1]) : err;
          return {s.add(acc[0], w), s.add(acc[1], s.mul(w, relative))};
        });
    Value risk = lb.map(
        riskType, {stats[0], sums[0], sums[1]}, [&](Scalar &s, ValueRange a) {
          Value zero = s.f(a[0].getType(), 0.0);
          Value risk = s.select(zeroByRule(s, a[0]), zero, s.div(a[2], a[1]));
          return fromF64(s, risk, h.element);
        });
    return SmallVector<Value>{risk};
  }
};

/// d risk[b] / d nll_j = -P_j (err_j - sum_k P_k err_k), times grad[b]:
/// the row sums of w_k and w_k err_k, then one map over [B, K].
class ExpectedRiskGradConversion
    : public NNConversionPattern<ExpectedRiskGradOp> {
public:
  using NNConversionPattern::NNConversionPattern;

  FailureOr<SmallVector<Value>> build(ExpectedRiskGradOp op, OpAdaptor adaptor,
                                      LinalgBuilder &lb) const override {
    OpBuilder &b = lb.getBuilder();
    Hypotheses h(lb, op.getNll(), adaptor.getNll(), adaptor.getErr());
    Value minNll = minNllAndErrorSum(lb, h, /*errorSum=*/false)[0];
    SmallVector<Value> sums =
        reduceRows(lb, h, minNll, {0.0, 0.0},
                   [&](Scalar &s, Value nll, Value err, ValueRange row,
                       ValueRange acc) -> SmallVector<Value> {
                     Value w = weight(s, row[0], nll);
                     return {s.add(acc[0], w), s.add(acc[1], s.mul(w, err))};
                   });
    Value init = lb.empty(lb.sizes(typeOf(op.getResult())), h.element);
    AffineMap full = b.getMultiDimIdentityMap(2);
    AffineMap row = AffineMap::get(2, 0, b.getAffineDimExpr(0));
    Value grad = lb.generic(
        init.getType(),
        {adaptor.getGrad(), h.nll, h.err, h.lengths, minNll, sums[0], sums[1]},
        init, {row, full, full, row, row, row, row, full},
        {IteratorType::parallel, IteratorType::parallel},
        [&](OpBuilder &nested, Location l, ValueRange a) {
          Scalar s{nested, l};
          Value g = s.toF64(a[0]), nll = s.toF64(a[1]), err = s.toF64(a[2]);
          Value m = a[4], normalizer = a[5], weighted = a[6];
          Value p = s.div(weight(s, m, nll), normalizer);
          Value expected = s.div(weighted, normalizer);
          Value value = s.neg(s.mul(g, s.mul(p, s.sub(err, expected))));
          Value zero = s.f(value.getType(), 0.0);
          value = s.select(zeroByRule(s, m), zero, value);
          value =
              s.select(LinalgBuilder::isValidPosition(s, a[3]), value, zero);
          nested.create<linalg::YieldOp>(l, fromF64(s, value, h.element));
        });
    return SmallVector<Value>{grad};
  }
};

} // namespace

void mlir::nn::populateErrorConversionPatterns(const TypeConverter &converter,
                                               ConversionState &state,
                                               RewritePatternSet &patterns) {
  patterns.add<EditDistanceConversion, ExpectedRiskConversion,
               ExpectedRiskGradConversion>(converter, state);
}
