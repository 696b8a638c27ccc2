//===- LinalgBuilder.cpp - building blocks of the nn lowering -------------===//

#include "lowering/conversion/LinalgBuilder.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"

#include <cmath>
#include <limits>

using namespace mlir;
using namespace mlir::nn;

using utils::IteratorType;

//===----------------------------------------------------------------------===//
// Scalar
//===----------------------------------------------------------------------===//

Value Scalar::f(Type type, double value) {
  return b.create<arith::ConstantOp>(loc, b.getFloatAttr(type, value));
}

Value Scalar::idx(int64_t value) {
  return b.create<arith::ConstantIndexOp>(loc, value);
}

Value Scalar::i32(int64_t bits) {
  return b.create<arith::ConstantOp>(
      loc,
      b.getI32IntegerAttr(static_cast<int32_t>(static_cast<uint32_t>(bits))));
}

Value Scalar::index(unsigned dim) {
  return b.create<linalg::IndexOp>(loc, dim);
}

Value Scalar::toIndex(Value v) {
  return b.create<arith::IndexCastOp>(loc, b.getIndexType(), v);
}

Value Scalar::add(Value x, Value y) {
  if (isa<FloatType>(x.getType()))
    return b.create<arith::AddFOp>(loc, x, y);
  return b.create<arith::AddIOp>(loc, x, y);
}

Value Scalar::addReassoc(Value x, Value y) {
  return b.create<arith::AddFOp>(
      loc, x, y,
      arith::FastMathFlagsAttr::get(b.getContext(),
                                    arith::FastMathFlags::reassoc));
}

Value Scalar::sub(Value x, Value y) {
  if (isa<FloatType>(x.getType()))
    return b.create<arith::SubFOp>(loc, x, y);
  return b.create<arith::SubIOp>(loc, x, y);
}

Value Scalar::mul(Value x, Value y) {
  if (isa<FloatType>(x.getType()))
    return b.create<arith::MulFOp>(loc, x, y);
  return b.create<arith::MulIOp>(loc, x, y);
}

Value Scalar::div(Value x, Value y) {
  return b.create<arith::DivFOp>(loc, x, y);
}

Value Scalar::max(Value x, Value y) {
  return b.create<arith::MaximumFOp>(loc, x, y);
}

Value Scalar::neg(Value x) { return b.create<arith::NegFOp>(loc, x); }

Value Scalar::exp(Value x) { return b.create<math::ExpOp>(loc, x); }

Value Scalar::log(Value x) { return b.create<math::LogOp>(loc, x); }

Value Scalar::tanh(Value x) { return b.create<math::TanhOp>(loc, x); }

Value Scalar::sigmoid(Value x) {
  Value one = f(x.getType(), 1.0);
  return div(one, add(one, exp(neg(x))));
}

Value Scalar::select(Value c, Value x, Value y) {
  return b.create<arith::SelectOp>(loc, c, x, y);
}

Value Scalar::lt(Value x, Value y) {
  return b.create<arith::CmpIOp>(loc, arith::CmpIPredicate::slt, x, y);
}

Value Scalar::ge(Value x, Value y) {
  return b.create<arith::CmpIOp>(loc, arith::CmpIPredicate::sge, x, y);
}

Value Scalar::ne(Value x, Value y) {
  return b.create<arith::CmpIOp>(loc, arith::CmpIPredicate::ne, x, y);
}

Value Scalar::feq(Value x, Value y) {
  return b.create<arith::CmpFOp>(loc, arith::CmpFPredicate::OEQ, x, y);
}

Value Scalar::andI(Value x, Value y) {
  return b.create<arith::AndIOp>(loc, x, y);
}

Value Scalar::minI(Value x, Value y) {
  return b.create<arith::MinSIOp>(loc, x, y);
}

Value Scalar::maxI(Value x, Value y) {
  return b.create<arith::MaxSIOp>(loc, x, y);
}

Value Scalar::mix32(Value h) {
  auto shift = [&](Value v, int64_t by) {
    return b.create<arith::ShRUIOp>(loc, v, i32(by)).getResult();
  };
  auto xorI = [&](Value x, Value y) {
    return b.create<arith::XOrIOp>(loc, x, y).getResult();
  };
  h = xorI(h, shift(h, 16));
  h = mul(h, i32(0x85ebca6b));
  h = xorI(h, shift(h, 13));
  h = mul(h, i32(0xc2b2ae35));
  return xorI(h, shift(h, 16));
}

Value Scalar::keyedSeed(Value seed, int64_t key) {
  Value h = mix32(add(seed, i32(0x9e3779b9)));
  return mix32(b.create<arith::XOrIOp>(loc, h, i32(key)));
}

std::pair<Value, Value> Scalar::maskSeed(Value seedTensor) {
  if (cast<RankedTensorType>(seedTensor.getType()).getRank() == 0)
    return {b.create<tensor::ExtractOp>(loc, seedTensor, ValueRange{}),
            Value()};
  auto at = [&](int64_t i) -> Value {
    return b.create<tensor::ExtractOp>(loc, seedTensor, ValueRange{idx(i)});
  };
  return {at(0), at(1)};
}

Value Scalar::keeps(Value h, ArrayRef<Value> coordinates, double rate) {
  for (Value c : coordinates)
    h = mix32(b.create<arith::XOrIOp>(loc, h, c));
  Value drawn = b.create<arith::ShRUIOp>(loc, h, i32(8));
  auto threshold = static_cast<int64_t>(std::ceil(rate * 16777216.0));
  return b.create<arith::CmpIOp>(loc, arith::CmpIPredicate::uge, drawn,
                                 i32(threshold));
}

Value Scalar::toF64(Value x) {
  Type f64 = b.getF64Type();
  if (x.getType() == f64)
    return x;
  if (isa<FloatType>(x.getType()))
    return b.create<arith::ExtFOp>(loc, f64, x);
  if (x.getType().isIndex())
    x = b.create<arith::IndexCastOp>(loc, b.getI64Type(), x);
  return b.create<arith::SIToFPOp>(loc, f64, x);
}

Value Scalar::clampIndex(Value v, Value size) {
  Value i = toIndex(v);
  return maxI(minI(i, sub(size, idx(1))), idx(0));
}

Value Scalar::logAddExp(Value x, Value y) {
  Value m = max(x, y);
  Type t = x.getType();
  Value negInf = f(t, -std::numeric_limits<double>::infinity());
  Value sum = add(exp(sub(x, m)), exp(sub(y, m)));
  return select(feq(m, negInf), negInf, add(m, log(sum)));
}

//===----------------------------------------------------------------------===//
// BoundDims
//===----------------------------------------------------------------------===//

const DimValue &BoundDims::lookup(StringRef name) const {
  auto it = values.find(name);
  assert(it != values.end() && "dims are bound at function entry");
  return it->second;
}

SmallVector<Value> mlir::nn::forLoop(Scalar &s, Value lower, Value upper,
                                     ValueRange init, LoopBody body) {
  auto loop = s.b.create<scf::ForOp>(
      s.loc, lower, upper, s.idx(1), init,
      [&](OpBuilder &nb, Location l, Value iv, ValueRange carried) {
        Scalar q{nb, l};
        nb.create<scf::YieldOp>(l, body(q, iv, carried));
      });
  return SmallVector<Value>(loop.getResults());
}

std::pair<Value, Value>
mlir::nn::exclusivePrefixSum(LinalgBuilder &lb, Value batch, Value lengths) {
  return exclusivePrefixSum(lb, batch, [&](Scalar &q, Value bi) {
    return q.toIndex(q.b.create<tensor::ExtractOp>(q.loc, lengths, bi));
  });
}

std::pair<Value, Value>
mlir::nn::exclusivePrefixSum(LinalgBuilder &lb, Value batch,
                             function_ref<Value(Scalar &, Value bi)> rowsOf) {
  OpBuilder &b = lb.getBuilder();
  Scalar s = lb.scalar();
  Type i32 = b.getI32Type();
  Value offsets = b.create<tensor::EmptyOp>(lb.getLoc(),
                                            ArrayRef<OpFoldResult>{batch}, i32);
  SmallVector<Value> prefix =
      forLoop(s, s.idx(0), batch, {offsets, s.idx(0)},
              [&](Scalar &q, Value bi, ValueRange state) -> SmallVector<Value> {
                Value updated = q.b.create<tensor::InsertOp>(
                    q.loc, q.b.create<arith::IndexCastOp>(q.loc, i32, state[1]),
                    state[0], bi);
                return {updated, q.add(state[1], rowsOf(q, bi))};
              });
  return {prefix[0], prefix[1]};
}

Value mlir::nn::ownerOfRows(LinalgBuilder &lb, Value firstRows, Value count,
                            Value rows) {
  OpBuilder &b = lb.getBuilder();
  Type i32 = b.getI32Type();
  Value init = lb.empty({rows}, i32);
  return lb.generic(
      init.getType(), ValueRange{}, init, {b.getMultiDimIdentityMap(1)},
      {utils::IteratorType::parallel},
      [&](OpBuilder &nested, Location l, ValueRange) {
        Scalar s{nested, l};
        Value row = nested.create<arith::IndexCastOp>(l, i32, s.index(0));
        // 32 halvings cover any count below 2^32; once the interval is one
        // entry wide the rest change nothing.
        SmallVector<Value> bounds = forLoop(
            s, s.idx(0), s.idx(32), {s.idx(0), count},
            [&](Scalar &s, Value, ValueRange range) -> SmallVector<Value> {
              Value mid = s.b.create<arith::DivUIOp>(
                  s.loc, s.add(range[0], range[1]), s.idx(2));
              Value first =
                  s.b.create<tensor::ExtractOp>(s.loc, firstRows, mid);
              Value atOrBefore = s.b.create<arith::CmpIOp>(
                  s.loc, arith::CmpIPredicate::sle, first, row);
              return {s.select(atOrBefore, mid, range[0]),
                      s.select(atOrBefore, range[1], mid)};
            });
        Value owner = nested.create<arith::IndexCastOp>(l, i32, bounds[0]);
        nested.create<linalg::YieldOp>(l, owner);
      });
}

SmallVector<Value> mlir::nn::forEachSequence(
    LinalgBuilder &lb, Value batch, ValueRange outputs,
    function_ref<SmallVector<SequenceSlice>(Scalar &, Value bi)> body) {
  OpBuilder &b = lb.getBuilder();
  Location loc = lb.getLoc();
  auto forall = b.create<scf::ForallOp>(loc, ArrayRef<OpFoldResult>{batch},
                                        outputs, std::nullopt);
  OpBuilder::InsertionGuard guard(b);
  b.setInsertionPoint(forall.getBody()->getTerminator());
  Scalar s{b, loc};
  SmallVector<SequenceSlice> slices =
      body(s, forall.getInductionVars().front());
  assert(slices.size() == outputs.size() && "one tile per output");
  b.setInsertionPointToStart(forall.getTerminator().getBody());
  for (auto [slice, shared] :
       llvm::zip_equal(slices, forall.getRegionOutArgs())) {
    SmallVector<OpFoldResult> strides(slice.offsets.size(), b.getIndexAttr(1));
    b.create<tensor::ParallelInsertSliceOp>(
        loc, slice.tile, shared, slice.offsets, slice.sizes, strides);
  }
  return SmallVector<Value>(forall.getResults());
}

/// The values of `flatten(B, K)` for batch size `batch` and K's
/// `lengths`: the size (the sum of the lengths), the offsets (their
/// exclusive prefix sum) and each entry's owner.
static DimValue flattenBatch(LinalgBuilder &lb, Value batch, Value lengths) {
  OpBuilder &b = lb.getBuilder();
  Location loc = lb.getLoc();
  Scalar s = lb.scalar();
  Type i32 = b.getI32Type();
  DimValue value;
  std::tie(value.offsets, value.size) = exclusivePrefixSum(lb, batch, lengths);
  Value owner =
      b.create<tensor::EmptyOp>(loc, ArrayRef<OpFoldResult>{value.size}, i32);
  value.owner = forLoop(
      s, s.idx(0), batch, {owner, s.idx(0)},
      [&](Scalar &q, Value bi, ValueRange state) -> SmallVector<Value> {
        Value length =
            q.toIndex(q.b.create<tensor::ExtractOp>(q.loc, lengths, bi));
        Value bi32 = q.b.create<arith::IndexCastOp>(q.loc, i32, bi);
        SmallVector<Value> filled =
            forLoop(q, q.idx(0), length, {state[0]},
                    [&](Scalar &r, Value k, ValueRange inner) {
                      return SmallVector<Value>{r.b.create<tensor::InsertOp>(
                          r.loc, bi32, inner[0], r.add(state[1], k))};
                    });
        return {filled[0], q.add(state[1], length)};
      })[0];
  return value;
}

void mlir::nn::deriveBoundDims(LinalgBuilder &b, BoundDims &dims) {
  OpBuilder &builder = b.getBuilder();
  Location loc = b.getLoc();
  for (DimDeclAttr dim : dims.getDecls().getDecls()) {
    StringRef name = dim.getName().getValue();
    bool ready = !dims.isBound(name) &&
                 (dim.isDerived() || dim.isLift() || dim.isFlatten() ||
                  dim.getKind() == DimKind::packed) &&
                 dims.isBound(dim.getSource().getValue()) &&
                 (!dim.getInner() || dims.isBound(dim.getInner().getValue())) &&
                 (!dim.isLift() || dims.isBound(dim.getBatch().getValue()));
    if (!ready)
      continue;
    if (dim.isFlatten()) {
      dims.bind(name, flattenBatch(b, dims.size(dim.getSource().getValue()),
                                   dims.lengths(dim.getInner().getValue())));
    } else if (dim.isLift()) {
      // Entry h has the length of its sequence owner[h]; the padded size is
      // the source's.
      const DimValue &source = dims.lookup(dim.getSource().getValue());
      Value owner = dims.lookup(dim.getBatch().getValue()).owner;
      Value lengths = source.lengths;
      DimValue value;
      value.size = source.size;
      value.lengths = b.map(
          NNTensorType::get(builder.getContext(), {dim.getBatch().getValue()},
                            {0}, builder.getI32Type()),
          owner, [&](Scalar &s, ValueRange args) -> Value {
            return s.b.create<tensor::ExtractOp>(s.loc, lengths,
                                                 s.toIndex(args[0]));
          });
      dims.bind(name, value);
    } else if (dim.isDerived()) {
      // ceildiv(source, factor) + offset, for the size and each length.
      const DimValue &source = dims.lookup(dim.getSource().getValue());
      int64_t factor = dim.getFactor(), offset = dim.getOffset();
      Scalar outer = b.scalar();
      DimValue value;
      value.size = source.size;
      if (factor != 1)
        value.size = builder.create<arith::CeilDivUIOp>(loc, source.size,
                                                        outer.idx(factor));
      value.size = outer.add(value.size, outer.idx(offset));
      auto lengthsType = cast<RankedTensorType>(source.lengths.getType());
      value.lengths = b.map(
          NNTensorType::get(builder.getContext(), {dim.getBatch().getValue()},
                            {0}, lengthsType.getElementType()),
          source.lengths, [&](Scalar &s, ValueRange args) {
            Value length = args[0];
            if (factor != 1)
              length = s.b.create<arith::CeilDivSIOp>(
                  s.loc, length,
                  s.b.create<arith::ConstantIntOp>(s.loc, factor, 32));
            return s.b.create<arith::AddIOp>(
                s.loc, length,
                s.b.create<arith::ConstantIntOp>(s.loc, offset, 32));
          });
      dims.bind(dim.getName().getValue(), value);
    } else if (dim.getKind() == DimKind::packed) {
      // N = sum of the lengths of the packed sequence dim; a grid J sums
      // len(source) * len(inner).
      Value lengths = dims.lengths(dim.getSource().getValue());
      Value inner = dim.isGridPacked() ? dims.lengths(dim.getInner().getValue())
                                       : Value();
      Value batch = dims.size(dim.getBatch().getValue());
      Scalar outer = b.scalar();
      auto sum = builder.create<scf::ForOp>(
          loc, outer.idx(0), batch, outer.idx(1), ValueRange{outer.idx(0)},
          [&](OpBuilder &nested, Location l, Value i, ValueRange acc) {
            Scalar s{nested, l};
            Value rows =
                s.toIndex(nested.create<tensor::ExtractOp>(l, lengths, i));
            if (inner)
              rows = s.mul(rows, s.toIndex(nested.create<tensor::ExtractOp>(
                                     l, inner, i)));
            nested.create<scf::YieldOp>(l, s.add(acc[0], rows));
          });
      dims.bind(dim.getName().getValue(), DimValue{sum.getResult(0), {}});
    }
  }
}

//===----------------------------------------------------------------------===//
// LinalgBuilder
//===----------------------------------------------------------------------===//

SmallVector<OpFoldResult> LinalgBuilder::sizes(NNTensorType type) {
  SmallVector<OpFoldResult> result;
  for (unsigned i = 0, e = type.getRank(); i < e; ++i) {
    if (type.isNamedDim(i))
      result.push_back(dims.size(type.getDimName(i)));
    else
      result.push_back(b.getIndexAttr(type.getStaticSize(i)));
  }
  return result;
}

Value LinalgBuilder::empty(ArrayRef<OpFoldResult> shape, Type element) {
  return b.create<tensor::EmptyOp>(loc, shape, element);
}

Value LinalgBuilder::fill(Value init, double value) {
  Type element = cast<ShapedType>(init.getType()).getElementType();
  // Integer values (labels through unpack, for instance) fill with an
  // integer constant.
  Value constant =
      isa<IntegerType>(element)
          ? b.create<arith::ConstantOp>(
                 loc, b.getIntegerAttr(element, static_cast<int64_t>(value)))
                .getResult()
          : scalar().f(element, value);
  return b.create<linalg::FillOp>(loc, constant, init).getResult(0);
}

Value LinalgBuilder::filled(ArrayRef<OpFoldResult> shape, Type element,
                            double value) {
  return fill(empty(shape, element), value);
}

Value LinalgBuilder::generic(TypeRange results, ValueRange inputs,
                             ValueRange outputs, ArrayRef<AffineMap> maps,
                             ArrayRef<IteratorType> iterators, BodyFn body,
                             unsigned resultIndex) {
  auto op = b.create<linalg::GenericOp>(loc, results, inputs, outputs, maps,
                                        iterators, body);
  return op.getResult(resultIndex);
}

Value LinalgBuilder::map(NNTensorType resultType, ValueRange inputs,
                         function_ref<Value(Scalar &, ValueRange)> fn) {
  unsigned rank = resultType.getRank();
  Value init = empty(sizes(resultType), resultType.getElementType());
  SmallVector<AffineMap> maps(inputs.size() + 1,
                              b.getMultiDimIdentityMap(rank));
  SmallVector<IteratorType> iterators(rank, IteratorType::parallel);
  return generic(init.getType(), inputs, init, maps, iterators,
                 [&](OpBuilder &nested, Location l, ValueRange args) {
                   Scalar s{nested, l};
                   Value result = fn(s, args.drop_back());
                   nested.create<linalg::YieldOp>(l, result);
                 });
}

Value LinalgBuilder::mapWithRow(
    NNTensorType resultType, ValueRange inputs, Value row,
    function_ref<Value(Scalar &, ValueRange, Value)> fn) {
  unsigned rank = resultType.getRank();
  Value init = empty(sizes(resultType), resultType.getElementType());
  AffineMap identity = b.getMultiDimIdentityMap(rank);
  SmallVector<AffineMap> maps(inputs.size(), identity);
  maps.push_back(identity.dropResult(rank - 1));
  maps.push_back(identity);
  SmallVector<Value> operands(inputs);
  operands.push_back(row);
  return generic(init.getType(), operands, init, maps,
                 SmallVector<IteratorType>(rank, IteratorType::parallel),
                 [&](OpBuilder &nested, Location l, ValueRange args) {
                   Scalar s{nested, l};
                   ValueRange full = args.take_front(inputs.size());
                   Value result = fn(s, full, args[inputs.size()]);
                   nested.create<linalg::YieldOp>(l, result);
                 });
}

Value LinalgBuilder::reduceLast(
    Value x, ValueRange extra, Type accType, double init,
    function_ref<Value(Scalar &, Value, ValueRange, Value)> combine) {
  auto type = cast<RankedTensorType>(x.getType());
  unsigned rank = type.getRank();
  SmallVector<OpFoldResult> shape = tensor::getMixedSizes(b, loc, x);
  shape.pop_back();
  Value acc = filled(shape, accType, init);
  AffineMap identity = b.getMultiDimIdentityMap(rank);
  AffineMap dropLast = identity.dropResult(rank - 1);
  SmallVector<AffineMap> maps{identity};
  maps.append(extra.size(), dropLast);
  maps.push_back(dropLast);
  SmallVector<IteratorType> iterators(rank, IteratorType::parallel);
  iterators.back() = IteratorType::reduction;
  SmallVector<Value> inputs{x};
  inputs.append(extra.begin(), extra.end());
  return generic(acc.getType(), inputs, acc, maps, iterators,
                 [&](OpBuilder &nested, Location l, ValueRange args) {
                   Scalar s{nested, l};
                   Value result =
                       combine(s, args.front(), args.drop_front().drop_back(),
                               args.back());
                   nested.create<linalg::YieldOp>(l, result);
                 });
}

SmallVector<Value> LinalgBuilder::paddingLengths(NNTensorType type) {
  SmallVector<Value> lengths;
  FailureOr<Positions> positions =
      classifyPositions(type, dims.getDecls(), [&] { return emitError(loc); });
  if (succeeded(positions) && positions->kind == PositionKind::Padded)
    for (StringRef sequence : positions->sequences)
      lengths.push_back(dims.lengths(sequence));
  return lengths;
}

Value LinalgBuilder::isValidPosition(Scalar &s, ValueRange lengths) {
  Value valid;
  for (auto [i, length] : llvm::enumerate(lengths)) {
    Value inside = s.lt(s.index(i + 1), s.toIndex(length));
    valid = valid ? s.andI(valid, inside) : inside;
  }
  return valid;
}

Value LinalgBuilder::accumulateIfValid(Scalar &s, Value acc, Value term,
                                       ValueRange lengths) {
  Value sum = s.add(acc, term);
  Value valid = isValidPosition(s, lengths);
  return valid ? s.select(valid, sum, acc) : sum;
}

/// a [M, K] times w [N, K] transposed: [M, N].
Value LinalgBuilder::matmulTransposeB(Value a, Value w) {
  auto wType = cast<RankedTensorType>(w.getType());
  OpFoldResult rows = tensor::getMixedSize(b, loc, a, 0);
  Value init = filled({rows, b.getIndexAttr(wType.getDimSize(0))},
                      wType.getElementType(), 0.0);
  return b
      .create<linalg::MatmulTransposeBOp>(loc, init.getType(), ValueRange{a, w},
                                          ValueRange{init})
      .getResult(0);
}

Value LinalgBuilder::linearGradInput(Value dy, Value w) {
  auto dyType = cast<RankedTensorType>(dy.getType());
  auto wType = cast<RankedTensorType>(w.getType());
  unsigned rank = dyType.getRank();
  SmallVector<OpFoldResult> shape = tensor::getMixedSizes(b, loc, dy);
  shape.back() = b.getIndexAttr(wType.getDimSize(1));
  Value init = filled(shape, dyType.getElementType(), 0.0);
  if (rank == 2)
    return b
        .create<linalg::MatmulOp>(loc, init.getType(), ValueRange{dy, w},
                                  ValueRange{init})
        .getResult(0);
  // Loops (p..., i, o).
  unsigned loops = rank + 1;
  SmallVector<AffineExpr> dyExprs, dxExprs;
  for (unsigned i = 0; i + 1 < rank; ++i) {
    dyExprs.push_back(b.getAffineDimExpr(i));
    dxExprs.push_back(b.getAffineDimExpr(i));
  }
  AffineExpr in = b.getAffineDimExpr(rank - 1), out = b.getAffineDimExpr(rank);
  dyExprs.push_back(out);
  dxExprs.push_back(in);
  SmallVector<AffineMap> maps{
      AffineMap::get(loops, 0, dyExprs, b.getContext()),
      AffineMap::get(loops, 0, {out, in}, b.getContext()),
      AffineMap::get(loops, 0, dxExprs, b.getContext())};
  SmallVector<IteratorType> iterators(loops, IteratorType::parallel);
  iterators.back() = IteratorType::reduction;
  return generic(init.getType(), {dy, w}, init, maps, iterators,
                 [&](OpBuilder &nested, Location l, ValueRange a) {
                   Scalar s{nested, l};
                   nested.create<linalg::YieldOp>(
                       l, s.add(a[2], s.mul(a[0], a[1])));
                 });
}

Value LinalgBuilder::zeroPadding(Value x, ValueRange lengths) {
  LinalgBuilder &lb = *this;
  auto type = cast<RankedTensorType>(x.getType());
  unsigned rank = type.getRank();
  Value init =
      lb.empty(tensor::getMixedSizes(b, lb.getLoc(), x), type.getElementType());
  AffineMap identity = b.getMultiDimIdentityMap(rank);
  SmallVector<AffineMap> maps{identity};
  maps.append(lengths.size(), AffineMap::get(rank, 0, b.getAffineDimExpr(0)));
  maps.push_back(identity);
  SmallVector<Value> inputs{x};
  inputs.append(lengths.begin(), lengths.end());
  return lb.generic(
      type, inputs, init, maps,
      SmallVector<utils::IteratorType>(rank, utils::IteratorType::parallel),
      [&](OpBuilder &nested, Location l, ValueRange a) {
        Scalar s{nested, l};
        Value valid =
            LinalgBuilder::isValidPosition(s, a.drop_front().drop_back());
        nested.create<linalg::YieldOp>(
            l, s.select(valid, a[0], s.f(type.getElementType(), 0.0)));
      });
}

Value LinalgBuilder::linearGradWeight(Value dy, Value x, ValueRange lengths) {
  // Padded positions are zeroed first (selected: NaN there never reaches
  // the sum), which costs a pass over dy and x but leaves a plain
  // contraction over every position: one GEMM (dy^T x) for
  // nn-gemm-to-blas.
  if (!lengths.empty()) {
    dy = zeroPadding(dy, lengths);
    x = zeroPadding(x, lengths);
  }
  auto dyType = cast<RankedTensorType>(dy.getType());
  auto xType = cast<RankedTensorType>(x.getType());
  unsigned positions = dyType.getRank() - 1;
  Value init = filled({b.getIndexAttr(dyType.getShape().back()),
                       b.getIndexAttr(xType.getShape().back())},
                      dyType.getElementType(), 0.0);
  // Loops (p..., o, i).
  unsigned loops = positions + 2;
  AffineExpr o = b.getAffineDimExpr(positions),
             i = b.getAffineDimExpr(positions + 1);
  SmallVector<AffineExpr> dyExprs, xExprs;
  for (unsigned p = 0; p < positions; ++p) {
    dyExprs.push_back(b.getAffineDimExpr(p));
    xExprs.push_back(b.getAffineDimExpr(p));
  }
  dyExprs.push_back(o);
  xExprs.push_back(i);
  SmallVector<AffineMap> maps{AffineMap::get(loops, 0, dyExprs, b.getContext()),
                              AffineMap::get(loops, 0, xExprs, b.getContext())};
  maps.push_back(AffineMap::get(loops, 0, {o, i}, b.getContext()));
  SmallVector<IteratorType> iterators(loops, IteratorType::reduction);
  iterators[positions] = iterators[positions + 1] = IteratorType::parallel;
  return generic(init.getType(), ValueRange{dy, x}, init, maps, iterators,
                 [&](OpBuilder &nested, Location l, ValueRange a) {
                   Scalar s{nested, l};
                   nested.create<linalg::YieldOp>(
                       l, s.add(a[2], s.mul(a[0], a[1])));
                 });
}

Value LinalgBuilder::sumValidPositions(Value x, unsigned positions,
                                       ValueRange lengths) {
  auto xType = cast<RankedTensorType>(x.getType());
  unsigned rank = xType.getRank();
  SmallVector<OpFoldResult> shape = llvm::to_vector(
      ArrayRef(tensor::getMixedSizes(b, loc, x)).drop_front(positions));
  Value init = filled(shape, xType.getElementType(), 0.0);
  AffineMap identity = b.getMultiDimIdentityMap(rank);
  SmallVector<AffineMap> maps{identity};
  maps.append(lengths.size(), AffineMap::get(rank, 0, b.getAffineDimExpr(0)));
  SmallVector<AffineExpr> features;
  for (unsigned i = positions; i < rank; ++i)
    features.push_back(b.getAffineDimExpr(i));
  maps.push_back(AffineMap::get(rank, 0, features, b.getContext()));
  SmallVector<IteratorType> iterators(rank, IteratorType::parallel);
  for (unsigned i = 0; i < positions; ++i)
    iterators[i] = IteratorType::reduction;
  SmallVector<Value> inputs{x};
  inputs.append(lengths.begin(), lengths.end());
  return generic(init.getType(), inputs, init, maps, iterators,
                 [&](OpBuilder &nested, Location l, ValueRange a) {
                   Scalar s{nested, l};
                   nested.create<linalg::YieldOp>(
                       l, accumulateIfValid(s, a.back(), a[0],
                                            a.drop_front().drop_back()));
                 });
}

Value LinalgBuilder::sliceFeatures(Value x, int64_t offset, int64_t width) {
  auto type = cast<RankedTensorType>(x.getType());
  unsigned rank = type.getRank();
  SmallVector<OpFoldResult> offsets(rank, b.getIndexAttr(0));
  offsets.back() = b.getIndexAttr(offset);
  SmallVector<OpFoldResult> sizes = tensor::getMixedSizes(b, loc, x);
  sizes.back() = b.getIndexAttr(width);
  SmallVector<OpFoldResult> strides(rank, b.getIndexAttr(1));
  SmallVector<int64_t> shape(type.getShape());
  shape.back() = width;
  return b.create<tensor::ExtractSliceOp>(
      loc, RankedTensorType::get(shape, type.getElementType()), x, offsets,
      sizes, strides);
}

/// x [P..., I] W^T + bias over the last axis. Two-dimensional inputs (packed
/// frames) are one named GEMM; padded ones a contraction over (P..., O, I).
/// (Collapsing [B, T] into rows would need a tensor.expand_shape back, whose
/// bufferization crashes in MLIR 19 when a group has two dynamic sizes.)
Value LinalgBuilder::linear(Value x, Value w, Value bias) {
  auto xType = cast<RankedTensorType>(x.getType());
  auto wType = cast<RankedTensorType>(w.getType());
  unsigned rank = xType.getRank();
  int64_t out = wType.getDimSize(0);
  SmallVector<OpFoldResult> shape = tensor::getMixedSizes(b, loc, x);
  shape.back() = b.getIndexAttr(out);
  Value init = filled(shape, xType.getElementType(), 0.0);
  if (bias) {
    AffineMap identity = b.getMultiDimIdentityMap(rank);
    AffineMap column = AffineMap::get(rank, 0, b.getAffineDimExpr(rank - 1));
    init = generic(init.getType(), bias, init, {column, identity},
                   SmallVector<IteratorType>(rank, IteratorType::parallel),
                   [&](OpBuilder &nested, Location l, ValueRange args) {
                     nested.create<linalg::YieldOp>(l, args[0]);
                   });
  }
  if (rank == 2)
    return b
        .create<linalg::MatmulTransposeBOp>(loc, init.getType(),
                                            ValueRange{x, w}, ValueRange{init})
        .getResult(0);
  // Loops (p..., o, i): x(p..., i) w(o, i) -> y(p..., o).
  unsigned loops = rank + 1;
  SmallVector<AffineExpr> xExprs, yExprs;
  for (unsigned i = 0; i + 1 < rank; ++i) {
    xExprs.push_back(b.getAffineDimExpr(i));
    yExprs.push_back(b.getAffineDimExpr(i));
  }
  AffineExpr o = b.getAffineDimExpr(rank - 1), k = b.getAffineDimExpr(rank);
  xExprs.push_back(k);
  yExprs.push_back(o);
  SmallVector<AffineMap> maps{AffineMap::get(loops, 0, xExprs, b.getContext()),
                              AffineMap::get(loops, 0, {o, k}, b.getContext()),
                              AffineMap::get(loops, 0, yExprs, b.getContext())};
  SmallVector<IteratorType> iterators(loops, IteratorType::parallel);
  iterators.back() = IteratorType::reduction;
  return generic(init.getType(), {x, w}, init, maps, iterators,
                 [&](OpBuilder &nested, Location l, ValueRange args) {
                   Scalar s{nested, l};
                   nested.create<linalg::YieldOp>(
                       l, s.add(args[2], s.mul(args[0], args[1])));
                 });
}

std::pair<Value, Value> LinalgBuilder::rowMaxAndSumExp(Value x) {
  Type element = cast<ShapedType>(x.getType()).getElementType();
  double negInf = -std::numeric_limits<double>::infinity();
  Value max = reduceLast(
      x, {}, element, negInf,
      [](Scalar &s, Value e, ValueRange, Value acc) { return s.max(e, acc); });
  Value sum = reduceLast(x, max, element, 0.0,
                         [](Scalar &s, Value e, ValueRange m, Value acc) {
                           return s.addReassoc(acc, s.exp(s.sub(e, m[0])));
                         });
  return {max, sum};
}

Value LinalgBuilder::logSoftmax(Value x) {
  Type element = cast<ShapedType>(x.getType()).getElementType();
  auto [max, sum] = rowMaxAndSumExp(x);
  auto type = cast<RankedTensorType>(x.getType());
  unsigned rank = type.getRank();
  AffineMap identity = b.getMultiDimIdentityMap(rank);
  AffineMap dropLast = identity.dropResult(rank - 1);
  Value init = empty(tensor::getMixedSizes(b, loc, x), element);
  return generic(
      type, {x, max, sum}, init, {identity, dropLast, dropLast, identity},
      SmallVector<IteratorType>(rank, IteratorType::parallel),
      [&](OpBuilder &nested, Location l, ValueRange args) {
        Scalar s{nested, l};
        Value shifted = s.sub(args[0], args[1]);
        nested.create<linalg::YieldOp>(l, s.sub(shifted, s.log(args[2])));
      });
}

Value LinalgBuilder::concatFeatures(ValueRange parts,
                                    ArrayRef<OpFoldResult> positions,
                                    ArrayRef<int64_t> widths, Type element) {
  int64_t total = 0;
  for (int64_t width : widths)
    total += width;
  SmallVector<OpFoldResult> shape(positions);
  shape.push_back(b.getIndexAttr(total));
  Value result = empty(shape, element);
  int64_t offset = 0;
  unsigned rank = shape.size();
  for (auto [part, width] : llvm::zip(parts, widths)) {
    SmallVector<OpFoldResult> offsets(rank, b.getIndexAttr(0));
    offsets.back() = b.getIndexAttr(offset);
    SmallVector<OpFoldResult> partShape(positions);
    partShape.push_back(b.getIndexAttr(width));
    SmallVector<OpFoldResult> strides(rank, b.getIndexAttr(1));
    result = b.create<tensor::InsertSliceOp>(loc, part, result, offsets,
                                             partShape, strides);
    offset += width;
  }
  return result;
}

Value mlir::nn::toRows(OpBuilder &b, Location loc, Value value,
                       unsigned positions) {
  auto type = cast<RankedTensorType>(value.getType());
  unsigned rank = type.getRank();
  if (positions == 1)
    return value;
  if (positions == 0) {
    SmallVector<int64_t> shape{1};
    shape.append(type.getShape().begin(), type.getShape().end());
    SmallVector<ReassociationIndices> groups;
    if (rank == 0) {
      groups = {};
    } else {
      groups.push_back({0, 1});
      for (unsigned i = 1; i < rank; ++i)
        groups.push_back({(int64_t)i + 1});
    }
    return b.create<tensor::ExpandShapeOp>(
        loc, RankedTensorType::get(shape, type.getElementType()), value,
        groups);
  }
  SmallVector<ReassociationIndices> groups;
  ReassociationIndices rows;
  for (unsigned i = 0; i < positions; ++i)
    rows.push_back(i);
  groups.push_back(rows);
  for (unsigned i = positions; i < rank; ++i)
    groups.push_back({(int64_t)i});
  return b.create<tensor::CollapseShapeOp>(loc, value, groups);
}

Value mlir::nn::fromRows(OpBuilder &b, Location loc, Value rows,
                         unsigned positions, ArrayRef<OpFoldResult> shape) {
  auto type = cast<RankedTensorType>(rows.getType());
  if (positions == 1)
    return rows;
  SmallVector<int64_t> staticShape;
  SmallVector<Value> dynamic;
  dispatchIndexOpFoldResults(shape, dynamic, staticShape);
  auto resultType = RankedTensorType::get(staticShape, type.getElementType());
  if (positions == 0) {
    SmallVector<ReassociationIndices> groups;
    if (type.getRank() > 1) {
      groups.push_back({0, 1});
      for (unsigned i = 2; i < type.getRank(); ++i)
        groups.push_back({(int64_t)i - 1});
    }
    return b.create<tensor::CollapseShapeOp>(loc, resultType, rows, groups);
  }
  // tensor.reshape, not expand_shape: bufferizing an expand_shape with two
  // dynamic sizes in one group crashes in MLIR 19 (the memref op is rebuilt
  // without its output shape; docs/lowering.md, "Decisions").
  SmallVector<Value> extents;
  for (OpFoldResult size : shape)
    extents.push_back(getValueOrCreateConstantIndexOp(b, loc, size));
  Value shapeTensor = b.create<tensor::FromElementsOp>(loc, extents);
  return b.create<tensor::ReshapeOp>(loc, resultType, rows, shapeTensor);
}

//===----------------------------------------------------------------------===//
// SequenceFrames
//===----------------------------------------------------------------------===//

/// Entry `at` of the i32 `table`, as an index.
static Value extractIndex(Scalar &s, Value table, Value at) {
  return s.toIndex(s.b.create<tensor::ExtractOp>(s.loc, table, at));
}

SequenceFrames::SequenceFrames(LinalgBuilder &lb, NNTensorType type) {
  const BoundDims &dims = lb.getDims();
  packed = type.getNumPositionDims() == 1;
  if (!packed) {
    lengths = dims.lengths(type.getDimName(1));
    return;
  }
  DimDeclAttr decl = dims.getDecls().lookup(type.getDimName(0));
  Value batch = dims.size(decl.getBatch().getValue());
  lengths = dims.lengths(decl.getSource().getValue());
  offsets = exclusivePrefixSum(lb, batch, lengths).first;
  sequenceOf = ownerOfRows(lb, offsets, batch, dims.size(type.getDimName(0)));
}

std::pair<Value, Value> SequenceFrames::current(Scalar &s) const {
  if (!packed)
    return {s.index(0), s.index(1)};
  Value row = s.index(0);
  Value sequence = extractIndex(s, sequenceOf, row);
  return {sequence, s.sub(row, extractIndex(s, offsets, sequence))};
}

Value SequenceFrames::length(Scalar &s, Value sequence) const {
  return extractIndex(s, lengths, sequence);
}

Value SequenceFrames::firstRow(Scalar &s, Value sequence) const {
  assert(packed && "padded frames have no row offsets");
  return extractIndex(s, offsets, sequence);
}

Value SequenceFrames::read(Scalar &s, Value x, Value sequence, Value frame,
                           Value feature) const {
  if (!packed)
    return s.b.create<tensor::ExtractOp>(s.loc, x,
                                         ValueRange{sequence, frame, feature});
  Value row = s.add(extractIndex(s, offsets, sequence), frame);
  return s.b.create<tensor::ExtractOp>(s.loc, x, ValueRange{row, feature});
}

Value SequenceFrames::readAt(Scalar &s, Value x, Value at,
                             Value feature) const {
  if (packed)
    return s.b.create<tensor::ExtractOp>(s.loc, x, ValueRange{at, feature});
  return s.b.create<tensor::ExtractOp>(s.loc, x,
                                       ValueRange{s.index(0), at, feature});
}
