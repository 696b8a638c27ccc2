//===- ConvPoolReducePatterns.cpp - windows and reductions over time ------===//
//
// conv1d, pool and reduce read only the valid frames of their sequence
// axis: a frame at or past len(b) reads as zero (conv), is skipped (pool,
// reduce), and average windows divide by the frames they really cover.
//
//===----------------------------------------------------------------------===//

#include "lowering/conversion/Patterns.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"

#include <limits>

using namespace mlir;
using namespace mlir::nn;

using utils::IteratorType;

namespace {

NNTensorType typeOf(Value v) { return cast<NNTensorType>(v.getType()); }

class Conv1dConversion : public NNConversionPattern<Conv1dOp> {
public:
  using NNConversionPattern::NNConversionPattern;

  FailureOr<SmallVector<Value>> build(Conv1dOp op, OpAdaptor adaptor,
                                      LinalgBuilder &lb) const override {
    OpBuilder &b = lb.getBuilder();
    NNTensorType inputType = typeOf(op.getInput());
    NNTensorType type = typeOf(op.getResult());
    Value x = adaptor.getInput();
    Value w = adaptor.getWeight();
    Value lengths = lb.getDims().lengths(inputType.getDimName(1));
    auto wType = cast<RankedTensorType>(w.getType());
    int64_t kernel = wType.getDimSize(1);
    int64_t stride = op.getStride();
    Type element = type.getElementType();
    Value init = lb.filled(lb.sizes(type), element, 0.0);
    if (Value bias = op.getBias() ? adaptor.getBias() : Value()) {
      AffineMap identity = b.getMultiDimIdentityMap(3);
      init = lb.generic(init.getType(), bias, init,
                        {AffineMap::get(3, 0, b.getAffineDimExpr(2)), identity},
                        SmallVector<IteratorType>(3, IteratorType::parallel),
                        [&](OpBuilder &nested, Location l, ValueRange a) {
                          nested.create<linalg::YieldOp>(l, a[0]);
                        });
    }
    // Iteration space (b, t', o, k, c); x is read by index so that frames
    // outside [0, len(b)) read zero.
    auto d = [&](unsigned i) { return b.getAffineDimExpr(i); };
    SmallVector<AffineMap> maps{
        AffineMap::get(5, 0, {d(2), d(3), d(4)}, b.getContext()),
        AffineMap::get(5, 0, d(0)),
        AffineMap::get(5, 0, {d(0), d(1), d(2)}, b.getContext())};
    SmallVector<IteratorType> iterators{
        IteratorType::parallel, IteratorType::parallel, IteratorType::parallel,
        IteratorType::reduction, IteratorType::reduction};
    Value result = lb.generic(
        init.getType(), {w, lengths}, init, maps, iterators,
        [&](OpBuilder &nested, Location l, ValueRange a) {
          Scalar s{nested, l};
          Value t = s.add(
              s.sub(s.mul(s.index(1), s.idx(stride)), s.idx((kernel - 1) / 2)),
              s.index(3));
          Value valid = s.andI(s.ge(t, s.idx(0)), s.lt(t, s.toIndex(a[1])));
          Value safe = s.select(valid, t, s.idx(0));
          Value v = nested.create<tensor::ExtractOp>(
              l, x, ValueRange{s.index(0), safe, s.index(4)});
          v = s.select(valid, v, s.f(element, 0.0));
          nested.create<linalg::YieldOp>(l, s.add(a[2], s.mul(v, a[0])));
        });
    return SmallVector<Value>{result};
  }
};

/// The conv's two gradients, each one generic that reads the other side by
/// index: output frame t' and input frame s meet through tap k when
/// s = t' stride - (K - 1) / 2 + k, t' < len_out(b) and 0 <= s < len_in(b).
/// Every term is selected, not multiplied by a mask, so NaN in padded
/// frames of dy or x never reaches a gradient.
class Conv1dGradConversion : public NNConversionPattern<Conv1dGradOp> {
public:
  using NNConversionPattern::NNConversionPattern;

  FailureOr<SmallVector<Value>> build(Conv1dGradOp op, OpAdaptor adaptor,
                                      LinalgBuilder &lb) const override {
    OpBuilder &b = lb.getBuilder();
    NNTensorType inputType = typeOf(op.getInput());
    NNTensorType gradType = typeOf(op.getGrad());
    Value dy = adaptor.getGrad(), x = adaptor.getInput(),
          w = adaptor.getWeight();
    Value inLengths = lb.getDims().lengths(inputType.getDimName(1));
    Value outLengths = lb.getDims().lengths(gradType.getDimName(1));
    auto wType = cast<RankedTensorType>(w.getType());
    int64_t kernel = wType.getDimSize(1);
    int64_t pad = (kernel - 1) / 2;
    int64_t stride = op.getStride();
    Type element = inputType.getElementType();
    auto d = [&](unsigned i) { return b.getAffineDimExpr(i); };
    auto map = [&](ArrayRef<AffineExpr> exprs) {
      return AffineMap::get(5, 0, exprs, b.getContext());
    };
    using IT = IteratorType;

    // dx: iteration space (b, s, c, o, k). The input gradient of a conv
    // that reads graph inputs (a first layer) has no use: not computed.
    Value dx = lb.empty(lb.sizes(inputType), element);
    if (!op.getInputGrad().use_empty())
      dx = lb.generic(
          dx.getType(), {w, inLengths, outLengths}, lb.fill(dx, 0.0),
          {map({d(3), d(4), d(2)}), map(d(0)), map(d(0)),
           map({d(0), d(1), d(2)})},
          {IT::parallel, IT::parallel, IT::parallel, IT::reduction,
           IT::reduction},
          [&](OpBuilder &nested, Location l, ValueRange a) {
            Scalar s{nested, l};
            Value frame = s.index(1);
            Value numerator = s.sub(s.add(frame, s.idx(pad)), s.index(4));
            Value strideIdx = s.idx(stride);
            Value t = nested.create<arith::DivSIOp>(l, numerator, strideIdx);
            Value remainder =
                nested.create<arith::RemSIOp>(l, numerator, strideIdx);
            Value valid = s.andI(
                s.ge(numerator, s.idx(0)),
                s.andI(s.lt(remainder, s.idx(1)), s.lt(t, s.toIndex(a[2]))));
            valid = s.andI(valid, s.lt(frame, s.toIndex(a[1])));
            Value safe = s.select(valid, t, s.idx(0));
            Value g = nested.create<tensor::ExtractOp>(
                l, dy, ValueRange{s.index(0), safe, s.index(3)});
            Value term = s.select(valid, s.mul(g, a[0]), s.f(element, 0.0));
            nested.create<linalg::YieldOp>(l, s.add(a[3], term));
          });

    // dw: iteration space (b, t', o, k, c).
    Value dwInit =
        lb.filled({b.getIndexAttr(wType.getDimSize(0)), b.getIndexAttr(kernel),
                   b.getIndexAttr(wType.getDimSize(2))},
                  element, 0.0);
    Value dw = lb.generic(
        dwInit.getType(), {dy, inLengths, outLengths}, dwInit,
        {map({d(0), d(1), d(2)}), map(d(0)), map(d(0)),
         map({d(2), d(3), d(4)})},
        {IT::reduction, IT::reduction, IT::parallel, IT::parallel,
         IT::parallel},
        [&](OpBuilder &nested, Location l, ValueRange a) {
          Scalar s{nested, l};
          Value t = s.index(1);
          Value frame =
              s.add(s.sub(s.mul(t, s.idx(stride)), s.idx(pad)), s.index(3));
          Value valid = s.andI(
              s.lt(t, s.toIndex(a[2])),
              s.andI(s.ge(frame, s.idx(0)), s.lt(frame, s.toIndex(a[1]))));
          Value safe = s.select(valid, frame, s.idx(0));
          Value v = nested.create<tensor::ExtractOp>(
              l, x, ValueRange{s.index(0), safe, s.index(4)});
          nested.create<linalg::YieldOp>(
              l, s.select(valid, s.add(a[3], s.mul(a[0], v)), a[3]));
        });
    return SmallVector<Value>{dx, dw};
  }
};

class PoolConversion : public NNConversionPattern<PoolOp> {
public:
  using NNConversionPattern::NNConversionPattern;

  FailureOr<SmallVector<Value>> build(PoolOp op, OpAdaptor adaptor,
                                      LinalgBuilder &lb) const override {
    OpBuilder &b = lb.getBuilder();
    Location loc = lb.getLoc();
    NNTensorType inputType = typeOf(op.getInput());
    NNTensorType type = typeOf(op.getResult());
    Value x = adaptor.getInput();
    Value lengths = lb.getDims().lengths(inputType.getDimName(1));
    int64_t window = op.getWindow();
    int64_t stride = op.getStride();
    Type element = type.getElementType();
    bool isMax = op.getKind() == PoolKind::max;
    Value init =
        lb.filled(lb.sizes(type), element,
                  isMax ? -std::numeric_limits<double>::infinity() : 0.0);
    // Iteration space (b, t', c, k).
    auto d = [&](unsigned i) { return b.getAffineDimExpr(i); };
    SmallVector<AffineMap> maps{
        AffineMap::get(4, 0, d(0)),
        AffineMap::get(4, 0, {d(0), d(1), d(2)}, b.getContext())};
    SmallVector<IteratorType> iterators{
        IteratorType::parallel, IteratorType::parallel, IteratorType::parallel,
        IteratorType::reduction};
    auto windowType = RankedTensorType::get({window}, element);
    Value windowShape =
        b.create<tensor::EmptyOp>(loc, windowType.getShape(), element);
    maps.insert(maps.begin(), AffineMap::get(4, 0, d(3)));
    Value pooled = lb.generic(
        init.getType(), {windowShape, lengths}, init, maps, iterators,
        [&](OpBuilder &nested, Location l, ValueRange a) {
          Scalar s{nested, l};
          Value t = s.add(s.mul(s.index(1), s.idx(stride)), s.index(3));
          Value valid = s.lt(t, s.toIndex(a[1]));
          Value safe = s.select(valid, t, s.idx(0));
          Value v = nested.create<tensor::ExtractOp>(
              l, x, ValueRange{s.index(0), safe, s.index(2)});
          Value combined = isMax ? s.max(a[2], v) : s.add(a[2], v);
          nested.create<linalg::YieldOp>(l, s.select(valid, combined, a[2]));
        });
    if (!isMax) {
      // Divide by the frames inside the window: min(window, len - t' * stride),
      // at least 1 (a frame past the length is padding anyway).
      AffineMap identity = b.getMultiDimIdentityMap(3);
      Value out = lb.empty(lb.sizes(type), element);
      pooled = lb.generic(
          out.getType(), {pooled, lengths}, out,
          {identity, AffineMap::get(3, 0, b.getAffineDimExpr(0)), identity},
          SmallVector<IteratorType>(3, IteratorType::parallel),
          [&](OpBuilder &nested, Location l, ValueRange a) {
            Scalar s{nested, l};
            Value start = s.mul(s.index(1), s.idx(stride));
            Value inside = s.minI(s.idx(window), s.sub(s.toIndex(a[1]), start));
            inside = s.maxI(inside, s.idx(1));
            Value count = s.b.create<arith::SIToFPOp>(
                l, element,
                s.b.create<arith::IndexCastOp>(l, s.b.getI64Type(), inside));
            nested.create<linalg::YieldOp>(l, s.div(a[0], count));
          });
    }
    return SmallVector<Value>{pooled};
  }
};

class ReduceConversion : public NNConversionPattern<ReduceOp> {
public:
  using NNConversionPattern::NNConversionPattern;

  FailureOr<SmallVector<Value>> build(ReduceOp op, OpAdaptor adaptor,
                                      LinalgBuilder &lb) const override {
    OpBuilder &b = lb.getBuilder();
    NNTensorType inputType = typeOf(op.getInput());
    NNTensorType type = typeOf(op.getResult());
    unsigned axis = op.getAxis();
    unsigned rank = inputType.getRank();
    Value x = adaptor.getInput();
    Value lengths = lb.getDims().lengths(inputType.getDimName(axis));
    Type element = type.getElementType();
    bool isMax = op.getKind() == ReduceKind::max;
    Value init =
        lb.filled(lb.sizes(type), element,
                  isMax ? -std::numeric_limits<double>::infinity() : 0.0);
    AffineMap identity = b.getMultiDimIdentityMap(rank);
    SmallVector<IteratorType> iterators(rank, IteratorType::parallel);
    iterators[axis] = IteratorType::reduction;
    Value reduced = lb.generic(
        init.getType(), {x, lengths}, init,
        {identity, AffineMap::get(rank, 0, b.getAffineDimExpr(0)),
         identity.dropResult(axis)},
        iterators, [&](OpBuilder &nested, Location l, ValueRange a) {
          Scalar s{nested, l};
          Value valid = s.lt(s.index(axis), s.toIndex(a[1]));
          Value combined = isMax ? s.max(a[2], a[0]) : s.add(a[2], a[0]);
          nested.create<linalg::YieldOp>(l, s.select(valid, combined, a[2]));
        });
    if (op.getKind() == ReduceKind::mean) {
      unsigned outRank = type.getRank();
      AffineMap outIdentity = b.getMultiDimIdentityMap(outRank);
      Value out = lb.empty(lb.sizes(type), element);
      reduced = lb.generic(
          out.getType(), {reduced, lengths}, out,
          {outIdentity, AffineMap::get(outRank, 0, b.getAffineDimExpr(0)),
           outIdentity},
          SmallVector<IteratorType>(outRank, IteratorType::parallel),
          [&](OpBuilder &nested, Location l, ValueRange a) {
            Scalar s{nested, l};
            Value count = nested.create<arith::SIToFPOp>(l, element, a[1]);
            Value zero = s.f(element, 0.0);
            Value empty = s.feq(count, zero);
            nested.create<linalg::YieldOp>(
                l, s.select(empty, zero, s.div(a[0], count)));
          });
    }
    return SmallVector<Value>{reduced};
  }
};

/// The reduce's gradient on its input: `grad` (sum), `grad / len` (mean)
/// or `grad` at the first maximal frame (max) on valid frames, 0 on padded.
class ReduceGradConversion : public NNConversionPattern<ReduceGradOp> {
public:
  using NNConversionPattern::NNConversionPattern;

  FailureOr<SmallVector<Value>> build(ReduceGradOp op, OpAdaptor adaptor,
                                      LinalgBuilder &lb) const override {
    OpBuilder &b = lb.getBuilder();
    NNTensorType type = typeOf(op.getResult());
    Type element = type.getElementType();
    unsigned axis = op.getAxis();
    unsigned rank = type.getRank();
    Value lengths = lb.getDims().lengths(type.getDimName(axis));
    AffineMap identity = b.getMultiDimIdentityMap(rank);
    AffineMap reduced = identity.dropResult(axis);
    AffineMap batch = AffineMap::get(rank, 0, b.getAffineDimExpr(0));
    ReduceKind kind = op.getKind();
    SmallVector<Value> inputs{adaptor.getGrad(), lengths};
    SmallVector<AffineMap> maps{reduced, batch};
    if (kind == ReduceKind::max) {
      // The first valid frame holding the maximum, per reduced position.
      Type i64 = b.getI64Type();
      Value first = lb.filled(lb.sizes(typeOf(op.getGrad())), i64, -1.0);
      SmallVector<IteratorType> iterators(rank, IteratorType::parallel);
      iterators[axis] = IteratorType::reduction;
      Value argmax = lb.generic(
          first.getType(), {adaptor.getInput(), adaptor.getOutput(), lengths},
          first, {identity, reduced, batch, reduced}, iterators,
          [&](OpBuilder &nested, Location l, ValueRange a) {
            Scalar s{nested, l};
            Value t = s.index(axis);
            Value valid = s.lt(t, s.toIndex(a[2]));
            Value unset = nested.create<arith::CmpIOp>(
                l, arith::CmpIPredicate::slt, a[3],
                nested.create<arith::ConstantIntOp>(l, 0, 64));
            Value hit = s.andI(s.andI(valid, s.feq(a[0], a[1])), unset);
            Value t64 = nested.create<arith::IndexCastOp>(l, i64, t);
            nested.create<linalg::YieldOp>(l, s.select(hit, t64, a[3]));
          });
      inputs.push_back(argmax);
      maps.push_back(reduced);
    }
    maps.push_back(identity);
    Value init = lb.empty(lb.sizes(type), element);
    return SmallVector<Value>{lb.generic(
        init.getType(), inputs, init, maps,
        SmallVector<IteratorType>(rank, IteratorType::parallel),
        [&](OpBuilder &nested, Location l, ValueRange a) {
          Scalar s{nested, l};
          Value t = s.index(axis);
          Value valid = s.lt(t, s.toIndex(a[1]));
          Value value = a[0];
          if (kind == ReduceKind::mean) {
            Value count = nested.create<arith::SIToFPOp>(l, element, a[1]);
            value = s.div(value, count);
          } else if (kind == ReduceKind::max) {
            Value t64 =
                nested.create<arith::IndexCastOp>(l, nested.getI64Type(), t);
            valid = s.andI(valid, nested.create<arith::CmpIOp>(
                                      l, arith::CmpIPredicate::eq, t64, a[2]));
          }
          nested.create<linalg::YieldOp>(
              l, s.select(valid, value, s.f(element, 0.0)));
        })};
  }
};

/// Each valid input frame t collects, over the windows o it lies in
/// (t = o * stride + k, k < window, o a valid output frame), grad / count
/// (avg) or grad where t is the window's first maximal frame (max).
class PoolGradConversion : public NNConversionPattern<PoolGradOp> {
public:
  using NNConversionPattern::NNConversionPattern;

  FailureOr<SmallVector<Value>> build(PoolGradOp op, OpAdaptor adaptor,
                                      LinalgBuilder &lb) const override {
    OpBuilder &b = lb.getBuilder();
    Location loc = lb.getLoc();
    NNTensorType type = typeOf(op.getResult());
    NNTensorType outType = typeOf(op.getGrad());
    Type element = type.getElementType();
    int64_t window = op.getWindow(), stride = op.getStride();
    bool isMax = op.getKind() == PoolKind::max;
    Value inLengths = lb.getDims().lengths(type.getDimName(1));
    Value outLengths = lb.getDims().lengths(outType.getDimName(1));
    Value dy = adaptor.getGrad(), x = adaptor.getInput();
    auto d = [&](unsigned i) { return b.getAffineDimExpr(i); };
    auto windowType = RankedTensorType::get({window}, element);
    Value windowShape =
        b.create<tensor::EmptyOp>(loc, windowType.getShape(), element);
    SmallVector<IteratorType> iterators{
        IteratorType::parallel, IteratorType::parallel, IteratorType::parallel,
        IteratorType::reduction};
    Value argmax;
    if (isMax) {
      // Per window (b, o, c): the first valid frame holding the maximum.
      Type i64 = b.getI64Type();
      Value first = lb.filled(lb.sizes(outType), i64, -1.0);
      argmax = lb.generic(
          first.getType(), {windowShape, inLengths, adaptor.getOutput()}, first,
          {AffineMap::get(4, 0, d(3)), AffineMap::get(4, 0, d(0)),
           AffineMap::get(4, 0, {d(0), d(1), d(2)}, b.getContext()),
           AffineMap::get(4, 0, {d(0), d(1), d(2)}, b.getContext())},
          iterators, [&](OpBuilder &nested, Location l, ValueRange a) {
            Scalar s{nested, l};
            Value t = s.add(s.mul(s.index(1), s.idx(stride)), s.index(3));
            Value valid = s.lt(t, s.toIndex(a[1]));
            Value safe = s.select(valid, t, s.idx(0));
            Value v = nested.create<tensor::ExtractOp>(
                l, x, ValueRange{s.index(0), safe, s.index(2)});
            Value unset = nested.create<arith::CmpIOp>(
                l, arith::CmpIPredicate::slt, a[3],
                nested.create<arith::ConstantIntOp>(l, 0, 64));
            Value hit = s.andI(s.andI(valid, s.feq(v, a[2])), unset);
            Value t64 = nested.create<arith::IndexCastOp>(l, i64, t);
            nested.create<linalg::YieldOp>(l, s.select(hit, t64, a[3]));
          });
    }
    // Iteration space (b, t, c, k): window k of input frame t is output
    // frame o = (t - k) / stride when that divides.
    Value init = lb.filled(lb.sizes(type), element, 0.0);
    SmallVector<Value> inputs{windowShape, inLengths, outLengths};
    SmallVector<AffineMap> maps{AffineMap::get(4, 0, d(3)),
                                AffineMap::get(4, 0, d(0)),
                                AffineMap::get(4, 0, d(0))};
    maps.push_back(AffineMap::get(4, 0, {d(0), d(1), d(2)}, b.getContext()));
    return SmallVector<Value>{lb.generic(
        init.getType(), inputs, init, maps, iterators,
        [&](OpBuilder &nested, Location l, ValueRange a) {
          Scalar s{nested, l};
          Value t = s.index(1), k = s.index(3);
          Value start = s.sub(t, k);
          Value aligned = nested.create<arith::CmpIOp>(
              l, arith::CmpIPredicate::eq,
              nested.create<arith::RemSIOp>(l, start, s.idx(stride)), s.idx(0));
          Value o = nested.create<arith::DivSIOp>(l, start, s.idx(stride));
          Value valid = s.andI(
              s.andI(s.ge(start, s.idx(0)), aligned),
              s.andI(s.lt(o, s.toIndex(a[2])), s.lt(t, s.toIndex(a[1]))));
          Value safe = s.select(valid, o, s.idx(0));
          Value g = nested.create<tensor::ExtractOp>(
              l, dy, ValueRange{s.index(0), safe, s.index(2)});
          if (isMax) {
            Value winner = nested.create<tensor::ExtractOp>(
                l, argmax, ValueRange{s.index(0), safe, s.index(2)});
            Value t64 =
                nested.create<arith::IndexCastOp>(l, nested.getI64Type(), t);
            valid =
                s.andI(valid, nested.create<arith::CmpIOp>(
                                  l, arith::CmpIPredicate::eq, winner, t64));
          } else {
            Value windowStart = s.mul(safe, s.idx(stride));
            Value inside =
                s.minI(s.idx(window), s.sub(s.toIndex(a[1]), windowStart));
            inside = s.maxI(inside, s.idx(1));
            Value count = nested.create<arith::SIToFPOp>(
                l, element,
                nested.create<arith::IndexCastOp>(l, nested.getI64Type(),
                                                  inside));
            g = s.div(g, count);
          }
          nested.create<linalg::YieldOp>(l,
                                         s.select(valid, s.add(a[3], g), a[3]));
        })};
  }
};

} // namespace

void mlir::nn::populateConvPoolReduceConversionPatterns(
    const TypeConverter &converter, ConversionState &state,
    RewritePatternSet &patterns) {
  patterns.add<Conv1dConversion, Conv1dGradConversion, PoolConversion,
               ReduceConversion, ReduceGradConversion, PoolGradConversion>(
      converter, state);
}
