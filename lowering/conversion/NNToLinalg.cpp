//===- NNToLinalg.cpp - nn graphs to func/tensor/linalg/scf ---------------===//
//
// Lowers each nn.graph to a func.func on builtin tensors with the calling
// convention of lowering/Abi.h. Named axes become dynamic sizes; each
// sequence dim becomes its padded size plus a tensor<?xi32> of lengths,
// which the lowered ops read to mask padding:
//   * frame-wise ops become linalg.generic / linalg.matmul_transpose_b,
//     on padded or packed positions alike (they never look at lengths);
//   * recurrences become scf.for over time; each step only updates the
//     sequences still running (t < len), and the backward direction runs
//     on each sequence reversed within its own length;
//   * convolution, pooling and reductions read only valid frames;
//   * pack / unpack copy each sequence's valid rows, at offsets that a loop
//     over the batch accumulates from the lengths (the exclusive prefix sum);
//   * nn.mark_loss becomes two f64 results: the masked sum and the inverse
//     normalization factor.
//
//===----------------------------------------------------------------------===//

#include "lowering/Passes.h"

#include "dialects/nn/Dims.h"
#include "lowering/conversion/Abi.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/IR/SymbolTable.h"
#include "llvm/ADT/TypeSwitch.h"

#include <cmath>
#include <limits>

namespace mlir::nn {
#define DEBUG_TYPE "nn-convert-to-linalg"

#define GEN_PASS_DEF_NNCONVERTTOLINALG
#include "lowering/Passes.h.inc"
} // namespace mlir::nn

using namespace mlir;
using namespace mlir::nn;

namespace {

using utils::IteratorType;
using BodyFn = function_ref<void(OpBuilder &, Location, ValueRange)>;

/// Scalar arithmetic inside region bodies, spelled briefly.
struct Scalar {
  OpBuilder &b;
  Location loc;

  Value f(Type type, double value) {
    return b.create<arith::ConstantOp>(loc, b.getFloatAttr(type, value));
  }
  Value idx(int64_t value) {
    return b.create<arith::ConstantIndexOp>(loc, value);
  }
  Value index(unsigned dim) { return b.create<linalg::IndexOp>(loc, dim); }
  Value toIndex(Value v) {
    return b.create<arith::IndexCastOp>(loc, b.getIndexType(), v);
  }
  Value add(Value x, Value y) {
    if (isa<FloatType>(x.getType()))
      return b.create<arith::AddFOp>(loc, x, y);
    return b.create<arith::AddIOp>(loc, x, y);
  }
  /// A float sum whose terms may be reordered (row reductions within one
  /// frame), which lets LLVM vectorize it.
  Value addReassoc(Value x, Value y) {
    return b.create<arith::AddFOp>(
        loc, x, y,
        arith::FastMathFlagsAttr::get(b.getContext(),
                                      arith::FastMathFlags::reassoc));
  }
  Value sub(Value x, Value y) {
    if (isa<FloatType>(x.getType()))
      return b.create<arith::SubFOp>(loc, x, y);
    return b.create<arith::SubIOp>(loc, x, y);
  }
  Value mul(Value x, Value y) {
    if (isa<FloatType>(x.getType()))
      return b.create<arith::MulFOp>(loc, x, y);
    return b.create<arith::MulIOp>(loc, x, y);
  }
  Value div(Value x, Value y) { return b.create<arith::DivFOp>(loc, x, y); }
  Value max(Value x, Value y) { return b.create<arith::MaximumFOp>(loc, x, y); }
  Value neg(Value x) { return b.create<arith::NegFOp>(loc, x); }
  Value exp(Value x) { return b.create<math::ExpOp>(loc, x); }
  Value log(Value x) { return b.create<math::LogOp>(loc, x); }
  Value tanh(Value x) { return b.create<math::TanhOp>(loc, x); }
  Value sigmoid(Value x) {
    Value one = f(x.getType(), 1.0);
    return div(one, add(one, exp(neg(x))));
  }
  Value select(Value c, Value x, Value y) {
    return b.create<arith::SelectOp>(loc, c, x, y);
  }
  Value lt(Value x, Value y) {
    return b.create<arith::CmpIOp>(loc, arith::CmpIPredicate::slt, x, y);
  }
  Value ge(Value x, Value y) {
    return b.create<arith::CmpIOp>(loc, arith::CmpIPredicate::sge, x, y);
  }
  Value ne(Value x, Value y) {
    return b.create<arith::CmpIOp>(loc, arith::CmpIPredicate::ne, x, y);
  }
  Value feq(Value x, Value y) {
    return b.create<arith::CmpFOp>(loc, arith::CmpFPredicate::OEQ, x, y);
  }
  Value andI(Value x, Value y) { return b.create<arith::AndIOp>(loc, x, y); }
  Value minI(Value x, Value y) { return b.create<arith::MinSIOp>(loc, x, y); }
  Value maxI(Value x, Value y) { return b.create<arith::MaxSIOp>(loc, x, y); }
  Value toF64(Value x) {
    Type f64 = b.getF64Type();
    if (x.getType() == f64)
      return x;
    if (isa<FloatType>(x.getType()))
      return b.create<arith::ExtFOp>(loc, f64, x);
    if (x.getType().isIndex())
      x = b.create<arith::IndexCastOp>(loc, b.getI64Type(), x);
    return b.create<arith::SIToFPOp>(loc, f64, x);
  }
  /// An integer class index clamped into [0, size): padded positions may
  /// hold anything, and a clamped read is never out of bounds.
  Value clampIndex(Value v, Value size) {
    Value i = toIndex(v);
    return maxI(minI(i, sub(size, idx(1))), idx(0));
  }
  /// log(exp(x) + exp(y)) without overflow; -inf when both are -inf.
  Value logAddExp(Value x, Value y) {
    Value m = max(x, y);
    Type t = x.getType();
    Value negInf = f(t, -std::numeric_limits<double>::infinity());
    Value sum = add(exp(sub(x, m)), exp(sub(y, m)));
    return select(feq(m, negInf), negInf, add(m, log(sum)));
  }
};

/// Run-time values of one declared dim inside a lowered graph.
struct DimValue {
  /// Index: the batch size, the padded size of a sequence dim, or the
  /// number of packed frames.
  Value size;
  /// Sequence dims: tensor<?xi32> lengths over the batch.
  Value lengths;
};

/// Lowers one graph.
class GraphLowering {
public:
  GraphLowering(const ModuleAbi &abis, const GraphAbi &abi,
                SymbolTable &symbols, func::FuncOp func)
      : abis(abis), abi(abi), symbols(symbols), func(func),
        table(abi.graph.getDims()),
        b(OpBuilder::atBlockBegin(&func.getBody().front())) {}

  LogicalResult run();

private:
  // Values and types.
  Location loc() const { return currentLoc; }
  Value lookup(Value nnValue) const { return mapping.lookup(nnValue); }
  NNTensorType typeOf(Value v) const { return cast<NNTensorType>(v.getType()); }
  SmallVector<OpFoldResult> sizes(NNTensorType type);
  Value empty(ArrayRef<OpFoldResult> shape, Type element);
  Value fill(Value init, double value);
  Value filled(ArrayRef<OpFoldResult> shape, Type element, double value);
  Value generic(TypeRange results, ValueRange inputs, ValueRange outputs,
                ArrayRef<AffineMap> maps, ArrayRef<IteratorType> iterators,
                BodyFn body, unsigned resultIndex = 0);
  Value map(NNTensorType resultType, ValueRange inputs,
            function_ref<Value(Scalar &, ValueRange)> fn);
  /// Reduces the last axis of `x` ([P..., F] -> [P...]). `extra` values are
  /// [P...] inputs broadcast along the reduced axis.
  Value reduceLast(
      Value x, ValueRange extra, Type accType, double init,
      function_ref<Value(Scalar &, Value elem, ValueRange extra, Value acc)>
          combine);
  Value lengthsOf(StringRef sequenceDim) { return dims[sequenceDim].lengths; }

  // Building blocks shared by several ops.
  Value matmulTransposeB(Value a, Value w);
  Value linear(Value x, Value w, Value bias);
  Value logSoftmax(Value x);
  Value concatFeatures(ValueRange parts, ArrayRef<OpFoldResult> positions,
                       ArrayRef<int64_t> widths, Type element);
  Value reverseWithinLengths(Value x, Value lengths);
  Value lstmForward(Value x, Value lengths, Value wi, Value wh, Value bias,
                    int64_t hidden);
  Value sliceDirection(Value weights, int64_t direction);
  Value copySequenceRows(Value source, Value dest, Value lengths, Value batch,
                         bool toPacked);
  Value maskedSum(Value loss, NNTensorType type);

  // Dims.
  LogicalResult bindDims();

  // Ops.
  LogicalResult lower(Operation *op);
  LogicalResult lowerLinear(LinearOp op);
  LogicalResult lowerUnary(Operation *op);
  LogicalResult lowerLayerNorm(LayerNormOp op);
  LogicalResult lowerEmbedding(EmbeddingOp op);
  LogicalResult lowerConcat(ConcatOp op);
  LogicalResult lowerLstm(LstmOp op);
  LogicalResult lowerConv1d(Conv1dOp op);
  LogicalResult lowerPool(PoolOp op);
  LogicalResult lowerReduce(ReduceOp op);
  LogicalResult lowerCrossEntropy(CrossEntropyOp op);
  LogicalResult lowerMse(MseOp op);
  LogicalResult lowerCtc(CtcLossOp op);
  LogicalResult lowerMarkLoss(MarkLossOp op);
  LogicalResult lowerPack(PackOp op);
  LogicalResult lowerUnpack(UnpackOp op);
  LogicalResult lowerCall(CallOp op);
  LogicalResult lowerReturn(ReturnOp op);

  const ModuleAbi &abis;
  const GraphAbi &abi;
  SymbolTable &symbols;
  func::FuncOp func;
  DimTable table;
  OpBuilder b;
  Location currentLoc = UnknownLoc::get(func.getContext());
  IRMapping mapping;
  llvm::StringMap<DimValue> dims;
  llvm::DenseMap<Operation *, Value> parameterArgs;
  /// (sum, inverse normalization) per loss, in ABI order.
  SmallVector<Value> lossValues;
};

} // namespace

//===----------------------------------------------------------------------===//
// Values and types
//===----------------------------------------------------------------------===//

SmallVector<OpFoldResult> GraphLowering::sizes(NNTensorType type) {
  SmallVector<OpFoldResult> result;
  for (unsigned i = 0, e = type.getRank(); i < e; ++i) {
    if (type.isNamedDim(i))
      result.push_back(dims[type.getDimName(i)].size);
    else
      result.push_back(b.getIndexAttr(type.getStaticSize(i)));
  }
  return result;
}

Value GraphLowering::empty(ArrayRef<OpFoldResult> shape, Type element) {
  return b.create<tensor::EmptyOp>(loc(), shape, element);
}

Value GraphLowering::fill(Value init, double value) {
  Type element = cast<ShapedType>(init.getType()).getElementType();
  // Integer values (labels through unpack, for instance) fill with an
  // integer constant.
  Value scalar = isa<IntegerType>(element)
                     ? b.create<arith::ConstantOp>(
                            loc(), b.getIntegerAttr(element, (int64_t)value))
                           .getResult()
                     : Scalar{b, loc()}.f(element, value);
  return b.create<linalg::FillOp>(loc(), scalar, init).getResult(0);
}

Value GraphLowering::filled(ArrayRef<OpFoldResult> shape, Type element,
                            double value) {
  return fill(empty(shape, element), value);
}

Value GraphLowering::generic(TypeRange results, ValueRange inputs,
                             ValueRange outputs, ArrayRef<AffineMap> maps,
                             ArrayRef<IteratorType> iterators, BodyFn body,
                             unsigned resultIndex) {
  auto op = b.create<linalg::GenericOp>(loc(), results, inputs, outputs, maps,
                                        iterators, body);
  return op.getResult(resultIndex);
}

Value GraphLowering::map(NNTensorType resultType, ValueRange inputs,
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

Value GraphLowering::reduceLast(
    Value x, ValueRange extra, Type accType, double init,
    function_ref<Value(Scalar &, Value, ValueRange, Value)> combine) {
  auto type = cast<RankedTensorType>(x.getType());
  unsigned rank = type.getRank();
  SmallVector<OpFoldResult> shape = tensor::getMixedSizes(b, loc(), x);
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

//===----------------------------------------------------------------------===//
// Building blocks
//===----------------------------------------------------------------------===//

/// a [M, K] times w [N, K] transposed: [M, N].
Value GraphLowering::matmulTransposeB(Value a, Value w) {
  auto wType = cast<RankedTensorType>(w.getType());
  OpFoldResult rows = tensor::getMixedSize(b, loc(), a, 0);
  Value init = filled({rows, b.getIndexAttr(wType.getDimSize(0))},
                      wType.getElementType(), 0.0);
  return b
      .create<linalg::MatmulTransposeBOp>(loc(), init.getType(),
                                          ValueRange{a, w}, ValueRange{init})
      .getResult(0);
}

/// x [P..., I] W^T + bias over the last axis. Two-dimensional inputs (packed
/// frames) are one named GEMM; padded ones a contraction over (P..., O, I).
/// (Collapsing [B, T] into rows would need a tensor.expand_shape back, whose
/// bufferization crashes in MLIR 19 when a group has two dynamic sizes.)
Value GraphLowering::linear(Value x, Value w, Value bias) {
  auto xType = cast<RankedTensorType>(x.getType());
  auto wType = cast<RankedTensorType>(w.getType());
  unsigned rank = xType.getRank();
  int64_t out = wType.getDimSize(0);
  SmallVector<OpFoldResult> shape = tensor::getMixedSizes(b, loc(), x);
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
        .create<linalg::MatmulTransposeBOp>(loc(), init.getType(),
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

Value GraphLowering::logSoftmax(Value x) {
  Type element = cast<ShapedType>(x.getType()).getElementType();
  double negInf = -std::numeric_limits<double>::infinity();
  Value max = reduceLast(
      x, {}, element, negInf,
      [](Scalar &s, Value e, ValueRange, Value acc) { return s.max(e, acc); });
  Value sum = reduceLast(x, max, element, 0.0,
                         [](Scalar &s, Value e, ValueRange m, Value acc) {
                           return s.addReassoc(acc, s.exp(s.sub(e, m[0])));
                         });
  auto type = cast<RankedTensorType>(x.getType());
  unsigned rank = type.getRank();
  AffineMap identity = b.getMultiDimIdentityMap(rank);
  AffineMap dropLast = identity.dropResult(rank - 1);
  Value init = empty(tensor::getMixedSizes(b, loc(), x), element);
  return generic(
      type, {x, max, sum}, init, {identity, dropLast, dropLast, identity},
      SmallVector<IteratorType>(rank, IteratorType::parallel),
      [&](OpBuilder &nested, Location l, ValueRange args) {
        Scalar s{nested, l};
        Value shifted = s.sub(args[0], args[1]);
        nested.create<linalg::YieldOp>(l, s.sub(shifted, s.log(args[2])));
      });
}

Value GraphLowering::concatFeatures(ValueRange parts,
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
    result = b.create<tensor::InsertSliceOp>(loc(), part, result, offsets,
                                             partShape, strides);
    offset += width;
  }
  return result;
}

/// y[b, t] = x[b, len(b) - 1 - t] for t < len(b), else 0.
Value GraphLowering::reverseWithinLengths(Value x, Value lengths) {
  auto type = cast<RankedTensorType>(x.getType());
  unsigned rank = type.getRank();
  Value init = empty(tensor::getMixedSizes(b, loc(), x), type.getElementType());
  AffineMap identity = b.getMultiDimIdentityMap(rank);
  AffineMap batch = AffineMap::get(rank, 0, b.getAffineDimExpr(0));
  return generic(type, lengths, init, {batch, identity},
                 SmallVector<IteratorType>(rank, IteratorType::parallel),
                 [&](OpBuilder &nested, Location l, ValueRange args) {
                   Scalar s{nested, l};
                   Value length = s.toIndex(args[0]);
                   Value t = s.index(1);
                   Value valid = s.lt(t, length);
                   Value source = s.sub(s.sub(length, s.idx(1)), t);
                   source = s.select(valid, source, s.idx(0));
                   SmallVector<Value> indices{s.index(0), source};
                   for (unsigned i = 2; i < rank; ++i)
                     indices.push_back(s.index(i));
                   Value v = nested.create<tensor::ExtractOp>(l, x, indices);
                   Value zero = s.f(type.getElementType(), 0.0);
                   nested.create<linalg::YieldOp>(l, s.select(valid, v, zero));
                 });
}

/// A forward LSTM over x [B, T, I]; outputs on padded frames are zero.
Value GraphLowering::lstmForward(Value x, Value lengths, Value wi, Value wh,
                                 Value bias, int64_t hidden) {
  auto xType = cast<RankedTensorType>(x.getType());
  Type element = xType.getElementType();
  OpFoldResult batch = tensor::getMixedSize(b, loc(), x, 0);
  OpFoldResult time = tensor::getMixedSize(b, loc(), x, 1);
  // The input projection of all frames at once: one GEMM.
  Value projected = linear(x, wi, bias); // [B, T, 4H]
  Value h0 = filled({batch, b.getIndexAttr(hidden)}, element, 0.0);
  Value y0 = filled({batch, time, b.getIndexAttr(hidden)}, element, 0.0);
  Value zero = b.create<arith::ConstantIndexOp>(loc(), 0);
  Value one = b.create<arith::ConstantIndexOp>(loc(), 1);
  Value steps = getValueOrCreateConstantIndexOp(b, loc(), time);
  auto stateType = cast<RankedTensorType>(h0.getType());

  auto loop = b.create<scf::ForOp>(
      loc(), zero, steps, one, ValueRange{h0, h0, y0},
      [&](OpBuilder &nested, Location l, Value t, ValueRange state) {
        OpBuilder::InsertionGuard guard(b);
        b.setInsertionPoint(nested.getInsertionBlock(),
                            nested.getInsertionPoint());
        Value h = state[0], c = state[1], y = state[2];
        auto gatesType =
            RankedTensorType::get({ShapedType::kDynamic, 4 * hidden}, element);
        Value gates = b.create<tensor::ExtractSliceOp>(
            l, gatesType, projected,
            ArrayRef<OpFoldResult>{b.getIndexAttr(0), t, b.getIndexAttr(0)},
            ArrayRef<OpFoldResult>{batch, b.getIndexAttr(1),
                                   b.getIndexAttr(4 * hidden)},
            ArrayRef<OpFoldResult>{b.getIndexAttr(1), b.getIndexAttr(1),
                                   b.getIndexAttr(1)});
        Value recurrent = matmulTransposeB(h, wh); // [B, 4H]
        // Loop bounds come from the first operand that indexes a loop
        // plainly, so the [B, H] state goes first: gate k of unit j is
        // column k * H + j of the [B, 4H] gate tensors.
        AffineMap identity = b.getMultiDimIdentityMap(2);
        AffineMap batchOnly = AffineMap::get(2, 0, b.getAffineDimExpr(0));
        SmallVector<AffineMap> maps{identity, identity, batchOnly};
        SmallVector<Value> inputs{c, h, lengths};
        for (Value source : {gates, recurrent})
          for (int k = 0; k < 4; ++k) {
            inputs.push_back(source);
            maps.push_back(AffineMap::get(
                2, 0,
                {b.getAffineDimExpr(0), b.getAffineDimExpr(1) + k * hidden},
                b.getContext()));
          }
        maps.append(3, identity);
        Value init = empty({batch, b.getIndexAttr(hidden)}, element);
        auto step = b.create<linalg::GenericOp>(
            l, TypeRange{stateType, stateType, stateType}, inputs,
            ValueRange{init, init, init}, maps,
            SmallVector<IteratorType>(2, IteratorType::parallel),
            [&](OpBuilder &body, Location bl, ValueRange args) {
              Scalar s{body, bl};
              Value cPrev = args[0], hPrev = args[1];
              Value running = s.lt(t, s.toIndex(args[2]));
              ValueRange gate = args.slice(3, 4), rec = args.slice(7, 4);
              Value i = s.sigmoid(s.add(gate[0], rec[0]));
              Value f = s.sigmoid(s.add(gate[1], rec[1]));
              Value g = s.tanh(s.add(gate[2], rec[2]));
              Value o = s.sigmoid(s.add(gate[3], rec[3]));
              Value cNext = s.add(s.mul(f, cPrev), s.mul(i, g));
              Value hNext = s.mul(o, s.tanh(cNext));
              Value zeroF = s.f(cNext.getType(), 0.0);
              body.create<linalg::YieldOp>(
                  bl, ValueRange{s.select(running, hNext, hPrev),
                                 s.select(running, cNext, cPrev),
                                 s.select(running, hNext, zeroF)});
            });
        Value out = b.create<tensor::InsertSliceOp>(
            l, step.getResult(2), y,
            ArrayRef<OpFoldResult>{b.getIndexAttr(0), t, b.getIndexAttr(0)},
            ArrayRef<OpFoldResult>{batch, b.getIndexAttr(1),
                                   b.getIndexAttr(hidden)},
            ArrayRef<OpFoldResult>{b.getIndexAttr(1), b.getIndexAttr(1),
                                   b.getIndexAttr(1)});
        b.create<scf::YieldOp>(
            l, ValueRange{step.getResult(0), step.getResult(1), out});
      });
  return loop.getResult(2);
}

/// weights[direction] of a bidirectional layer's stacked weights.
Value GraphLowering::sliceDirection(Value weights, int64_t direction) {
  auto type = cast<RankedTensorType>(weights.getType());
  unsigned rank = type.getRank();
  SmallVector<OpFoldResult> offsets(rank, b.getIndexAttr(0));
  offsets[0] = b.getIndexAttr(direction);
  SmallVector<OpFoldResult> sliceSizes{b.getIndexAttr(1)};
  for (unsigned i = 1; i < rank; ++i)
    sliceSizes.push_back(b.getIndexAttr(type.getDimSize(i)));
  SmallVector<OpFoldResult> strides(rank, b.getIndexAttr(1));
  auto resultType = RankedTensorType::get(type.getShape().drop_front(),
                                          type.getElementType());
  return b.create<tensor::ExtractSliceOp>(loc(), resultType, weights, offsets,
                                          sliceSizes, strides);
}

/// The f64 sum of a loss value over its valid positions.
Value GraphLowering::maskedSum(Value loss, NNTensorType type) {
  unsigned rank = type.getRank();
  Value acc = filled({}, b.getF64Type(), 0.0);
  FailureOr<Positions> positions =
      classifyPositions(type, table, [&] { return abi.graph.emitOpError(); });
  SmallVector<Value> inputs{loss};
  SmallVector<AffineMap> maps{b.getMultiDimIdentityMap(rank)};
  // Padded losses: one lengths input per sequence axis, read at [b].
  SmallVector<unsigned> maskedAxes;
  if (succeeded(positions) && positions->kind == PositionKind::Padded) {
    for (auto [i, sequence] : llvm::enumerate(positions->sequences)) {
      inputs.push_back(lengthsOf(sequence));
      maps.push_back(AffineMap::get(rank, 0, b.getAffineDimExpr(0)));
      maskedAxes.push_back(i + 1);
    }
  }
  maps.push_back(AffineMap::get(rank, 0, b.getContext()));
  return generic(acc.getType(), inputs, acc, maps,
                 SmallVector<IteratorType>(rank, IteratorType::reduction),
                 [&](OpBuilder &nested, Location l, ValueRange args) {
                   Scalar s{nested, l};
                   Value v = s.toF64(args[0]);
                   Value sum = s.add(args.back(), v);
                   Value valid;
                   for (auto [k, axis] : llvm::enumerate(maskedAxes)) {
                     Value inside = s.lt(s.index(axis), s.toIndex(args[1 + k]));
                     valid = valid ? s.andI(valid, inside) : inside;
                   }
                   nested.create<linalg::YieldOp>(
                       l, valid ? s.select(valid, sum, args.back()) : sum);
                 });
}

//===----------------------------------------------------------------------===//
// Dims
//===----------------------------------------------------------------------===//

LogicalResult GraphLowering::bindDims() {
  Block &entry = func.getBody().front();
  unsigned next = 0;
  for (DimDeclAttr dim : abi.rootDims) {
    DimValue &value = dims[dim.getName().getValue()];
    value.size = entry.getArgument(next++);
    if (dim.getKind() == DimKind::seq)
      value.lengths = entry.getArgument(next++);
  }
  for (BlockArgument argument : abi.graph.getBody().getArguments())
    mapping.map(argument, entry.getArgument(next++));
  for (ParameterOp parameter : abi.parameters)
    parameterArgs[parameter] = entry.getArgument(next++);

  // Derived and packed dims, computed from the roots in declaration order.
  for (DimDeclAttr dim : table.getDecls()) {
    if (dim.isDerived()) {
      const DimValue &source = dims[dim.getSource().getValue()];
      int64_t factor = dim.getFactor();
      Value k = b.create<arith::ConstantIndexOp>(loc(), factor);
      DimValue &value = dims[dim.getName().getValue()];
      value.size = b.create<arith::CeilDivUIOp>(loc(), source.size, k);
      auto lengthsType = cast<RankedTensorType>(source.lengths.getType());
      value.lengths =
          map(NNTensorType::get(b.getContext(), {dim.getBatch().getValue()},
                                {0}, lengthsType.getElementType()),
              source.lengths, [&](Scalar &s, ValueRange args) {
                Value kI32 =
                    s.b.create<arith::ConstantIntOp>(s.loc, factor, 32);
                return s.b.create<arith::CeilDivSIOp>(s.loc, args[0], kI32);
              });
    } else if (dim.getKind() == DimKind::packed) {
      // N = sum of the lengths of the packed sequence dim.
      Value lengths = dims[dim.getSource().getValue()].lengths;
      Value batch = dims[dim.getBatch().getValue()].size;
      Value zero = b.create<arith::ConstantIndexOp>(loc(), 0);
      Value one = b.create<arith::ConstantIndexOp>(loc(), 1);
      auto sum = b.create<scf::ForOp>(
          loc(), zero, batch, one, ValueRange{zero},
          [&](OpBuilder &nested, Location l, Value i, ValueRange acc) {
            Scalar s{nested, l};
            Value length = nested.create<tensor::ExtractOp>(l, lengths, i);
            nested.create<scf::YieldOp>(l, s.add(acc[0], s.toIndex(length)));
          });
      dims[dim.getName().getValue()].size = sum.getResult(0);
    }
  }
  return success();
}

//===----------------------------------------------------------------------===//
// Ops
//===----------------------------------------------------------------------===//

LogicalResult GraphLowering::run() {
  if (failed(bindDims()))
    return failure();
  for (Operation &op : abi.graph.getBody().front()) {
    // Everything op lowers to carries its name, so later stages (GPU kernel
    // names, runtime errors) can say which nn op they came from.
    currentLoc = NameLoc::get(op.getName().getIdentifier(), op.getLoc());
    if (failed(lower(&op)))
      return failure();
  }
  return success();
}

LogicalResult GraphLowering::lower(Operation *op) {
  return llvm::TypeSwitch<Operation *, LogicalResult>(op)
      .Case([&](ParamRefOp ref) {
        auto parameter = symbols.lookup<ParameterOp>(ref.getName());
        mapping.map(ref.getResult(), parameterArgs.lookup(parameter));
        return success();
      })
      .Case([&](LinearOp op) { return lowerLinear(op); })
      .Case<AddOp, MulOp, ReluOp, TanhOp, SigmoidOp, GeluOp, SoftmaxOp,
            LogSoftmaxOp, DropoutOp>(
          [&](Operation *op) { return lowerUnary(op); })
      .Case([&](LayerNormOp op) { return lowerLayerNorm(op); })
      .Case([&](EmbeddingOp op) { return lowerEmbedding(op); })
      .Case([&](ConcatOp op) { return lowerConcat(op); })
      .Case([&](LstmOp op) { return lowerLstm(op); })
      .Case([&](Conv1dOp op) { return lowerConv1d(op); })
      .Case([&](PoolOp op) { return lowerPool(op); })
      .Case([&](ReduceOp op) { return lowerReduce(op); })
      .Case([&](CrossEntropyOp op) { return lowerCrossEntropy(op); })
      .Case([&](MseOp op) { return lowerMse(op); })
      .Case([&](CtcLossOp op) { return lowerCtc(op); })
      .Case([&](MarkLossOp op) { return lowerMarkLoss(op); })
      .Case([&](PackOp op) { return lowerPack(op); })
      .Case([&](UnpackOp op) { return lowerUnpack(op); })
      .Case([&](CallOp op) { return lowerCall(op); })
      .Case([&](ReturnOp op) { return lowerReturn(op); })
      .Default([&](Operation *op) {
        return op->emitOpError("has no lowering to linalg");
      });
}

LogicalResult GraphLowering::lowerLinear(LinearOp op) {
  Value bias = op.getBias() ? lookup(op.getBias()) : Value();
  mapping.map(op.getResult(),
              linear(lookup(op.getInput()), lookup(op.getWeight()), bias));
  return success();
}

/// Element-wise and feature-axis ops on one type.
LogicalResult GraphLowering::lowerUnary(Operation *op) {
  Value x = lookup(op->getOperand(0));
  NNTensorType type = typeOf(op->getResult(0));
  Value result;
  if (isa<SoftmaxOp>(op)) {
    Value logProbs = logSoftmax(x);
    result = map(type, logProbs,
                 [](Scalar &s, ValueRange a) { return s.exp(a[0]); });
  } else if (isa<LogSoftmaxOp>(op)) {
    result = logSoftmax(x);
  } else if (isa<DropoutOp>(op)) {
    // Evaluation semantics: dropout is the identity until training lands.
    result = x;
  } else {
    SmallVector<Value> inputs;
    for (Value operand : op->getOperands())
      inputs.push_back(lookup(operand));
    result = map(type, inputs, [&](Scalar &s, ValueRange a) -> Value {
      Type t = a[0].getType();
      return llvm::TypeSwitch<Operation *, Value>(op)
          .Case([&](AddOp) { return s.add(a[0], a[1]); })
          .Case([&](MulOp) { return s.mul(a[0], a[1]); })
          .Case([&](ReluOp) { return s.max(a[0], s.f(t, 0.0)); })
          .Case([&](TanhOp) { return s.tanh(a[0]); })
          .Case([&](SigmoidOp) { return s.sigmoid(a[0]); })
          .Case([&](GeluOp) {
            // 0.5 x (1 + erf(x / sqrt(2))), the exact form.
            Value scaled = s.mul(a[0], s.f(t, M_SQRT1_2));
            Value erf = s.b.create<math::ErfOp>(s.loc, scaled);
            return s.mul(s.mul(s.f(t, 0.5), a[0]), s.add(s.f(t, 1.0), erf));
          })
          .Default([](Operation *) { return Value(); });
    });
  }
  mapping.map(op->getResult(0), result);
  return success();
}

LogicalResult GraphLowering::lowerLayerNorm(LayerNormOp op) {
  Value x = lookup(op.getInput());
  NNTensorType type = typeOf(op.getResult());
  Type element = type.getElementType();
  int64_t features = type.getStaticSize(type.getRank() - 1);
  double inverse = 1.0 / static_cast<double>(features);
  Value sum = reduceLast(x, {}, element, 0.0,
                         [](Scalar &s, Value e, ValueRange, Value acc) {
                           return s.addReassoc(acc, e);
                         });
  NNTensorType rowType = type.withDims(type.getDims().drop_back());
  Value mean = map(rowType, sum, [&](Scalar &s, ValueRange a) {
    return s.mul(a[0], s.f(element, inverse));
  });
  Value squares = reduceLast(x, mean, element, 0.0,
                             [](Scalar &s, Value e, ValueRange m, Value acc) {
                               Value d = s.sub(e, m[0]);
                               return s.addReassoc(acc, s.mul(d, d));
                             });
  double epsilon = op.getEpsilon().convertToDouble();
  Value rstd = map(rowType, squares, [&](Scalar &s, ValueRange a) {
    Value variance = s.mul(a[0], s.f(element, inverse));
    return s.b.create<math::RsqrtOp>(s.loc,
                                     s.add(variance, s.f(element, epsilon)));
  });
  unsigned rank = type.getRank();
  AffineMap identity = b.getMultiDimIdentityMap(rank);
  AffineMap dropLast = identity.dropResult(rank - 1);
  AffineMap lastOnly = AffineMap::get(rank, 0, b.getAffineDimExpr(rank - 1));
  Value init = empty(sizes(type), element);
  Value result = generic(
      init.getType(),
      {x, mean, rstd, lookup(op.getScale()), lookup(op.getBias())}, init,
      {identity, dropLast, dropLast, lastOnly, lastOnly, identity},
      SmallVector<IteratorType>(rank, IteratorType::parallel),
      [&](OpBuilder &nested, Location l, ValueRange a) {
        Scalar s{nested, l};
        Value normalized = s.mul(s.sub(a[0], a[1]), a[2]);
        nested.create<linalg::YieldOp>(l, s.add(s.mul(normalized, a[3]), a[4]));
      });
  mapping.map(op.getResult(), result);
  return success();
}

LogicalResult GraphLowering::lowerEmbedding(EmbeddingOp op) {
  Value indices = lookup(op.getIndices());
  Value tableValue = lookup(op.getTable());
  NNTensorType type = typeOf(op.getResult());
  unsigned rank = type.getRank();
  int64_t vocabulary =
      cast<RankedTensorType>(tableValue.getType()).getDimSize(0);
  Value init = empty(sizes(type), type.getElementType());
  AffineMap identity = b.getMultiDimIdentityMap(rank);
  Value result = generic(
      init.getType(), indices, init, {identity.dropResult(rank - 1), identity},
      SmallVector<IteratorType>(rank, IteratorType::parallel),
      [&](OpBuilder &nested, Location l, ValueRange a) {
        Scalar s{nested, l};
        Value row = s.clampIndex(a[0], s.idx(vocabulary));
        Value v = nested.create<tensor::ExtractOp>(
            l, tableValue, ValueRange{row, s.index(rank - 1)});
        nested.create<linalg::YieldOp>(l, v);
      });
  mapping.map(op.getResult(), result);
  return success();
}

LogicalResult GraphLowering::lowerConcat(ConcatOp op) {
  NNTensorType type = typeOf(op.getResult());
  SmallVector<OpFoldResult> positions = sizes(type);
  positions.pop_back();
  SmallVector<Value> parts;
  SmallVector<int64_t> widths;
  for (Value input : op.getInputs()) {
    NNTensorType inputType = typeOf(input);
    parts.push_back(lookup(input));
    widths.push_back(inputType.getStaticSize(inputType.getRank() - 1));
  }
  mapping.map(op.getResult(),
              concatFeatures(parts, positions, widths, type.getElementType()));
  return success();
}

LogicalResult GraphLowering::lowerLstm(LstmOp op) {
  NNTensorType inputType = typeOf(op.getInput());
  Value x = lookup(op.getInput());
  Value lengths = lengthsOf(inputType.getDimName(1));
  Value wi = lookup(op.getInputWeight());
  Value wh = lookup(op.getRecurrentWeight());
  Value bias = lookup(op.getBias());
  auto whType = cast<RankedTensorType>(wh.getType());
  int64_t hidden = whType.getDimSize(whType.getRank() - 1);
  auto backward = [&](Value wiD, Value whD, Value biasD) {
    Value reversed = reverseWithinLengths(x, lengths);
    Value y = lstmForward(reversed, lengths, wiD, whD, biasD, hidden);
    return reverseWithinLengths(y, lengths);
  };
  Value result;
  switch (op.getDirection()) {
  case LstmDirection::forward:
    result = lstmForward(x, lengths, wi, wh, bias, hidden);
    break;
  case LstmDirection::backward:
    result = backward(wi, wh, bias);
    break;
  case LstmDirection::bidirectional: {
    Value forward =
        lstmForward(x, lengths, sliceDirection(wi, 0), sliceDirection(wh, 0),
                    sliceDirection(bias, 0), hidden);
    Value back = backward(sliceDirection(wi, 1), sliceDirection(wh, 1),
                          sliceDirection(bias, 1));
    SmallVector<OpFoldResult> positions = sizes(inputType);
    positions.pop_back();
    result = concatFeatures({forward, back}, positions, {hidden, hidden},
                            inputType.getElementType());
    break;
  }
  }
  mapping.map(op.getResult(), result);
  return success();
}

LogicalResult GraphLowering::lowerConv1d(Conv1dOp op) {
  NNTensorType inputType = typeOf(op.getInput());
  NNTensorType type = typeOf(op.getResult());
  Value x = lookup(op.getInput());
  Value w = lookup(op.getWeight());
  Value lengths = lengthsOf(inputType.getDimName(1));
  auto wType = cast<RankedTensorType>(w.getType());
  int64_t kernel = wType.getDimSize(1);
  int64_t stride = op.getStride();
  Type element = type.getElementType();
  Value init = filled(sizes(type), element, 0.0);
  if (Value bias = op.getBias() ? lookup(op.getBias()) : Value()) {
    AffineMap identity = b.getMultiDimIdentityMap(3);
    init = generic(init.getType(), bias, init,
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
  Value result = generic(
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
  mapping.map(op.getResult(), result);
  return success();
}

LogicalResult GraphLowering::lowerPool(PoolOp op) {
  NNTensorType inputType = typeOf(op.getInput());
  NNTensorType type = typeOf(op.getResult());
  Value x = lookup(op.getInput());
  Value lengths = lengthsOf(inputType.getDimName(1));
  int64_t window = op.getWindow();
  int64_t stride = op.getStride();
  Type element = type.getElementType();
  bool isMax = op.getKind() == PoolKind::max;
  Value init = filled(sizes(type), element,
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
      b.create<tensor::EmptyOp>(loc(), windowType.getShape(), element);
  maps.insert(maps.begin(), AffineMap::get(4, 0, d(3)));
  Value pooled = generic(
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
    Value out = empty(sizes(type), element);
    pooled = generic(
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
  mapping.map(op.getResult(), pooled);
  return success();
}

LogicalResult GraphLowering::lowerReduce(ReduceOp op) {
  NNTensorType inputType = typeOf(op.getInput());
  NNTensorType type = typeOf(op.getResult());
  unsigned axis = op.getAxis();
  unsigned rank = inputType.getRank();
  Value x = lookup(op.getInput());
  Value lengths = lengthsOf(inputType.getDimName(axis));
  Type element = type.getElementType();
  bool isMax = op.getKind() == ReduceKind::max;
  Value init = filled(sizes(type), element,
                      isMax ? -std::numeric_limits<double>::infinity() : 0.0);
  AffineMap identity = b.getMultiDimIdentityMap(rank);
  SmallVector<IteratorType> iterators(rank, IteratorType::parallel);
  iterators[axis] = IteratorType::reduction;
  Value reduced = generic(
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
    Value out = empty(sizes(type), element);
    reduced =
        generic(out.getType(), {reduced, lengths}, out,
                {outIdentity, AffineMap::get(outRank, 0, b.getAffineDimExpr(0)),
                 outIdentity},
                SmallVector<IteratorType>(outRank, IteratorType::parallel),
                [&](OpBuilder &nested, Location l, ValueRange a) {
                  Scalar s{nested, l};
                  Value count =
                      nested.create<arith::SIToFPOp>(l, element, a[1]);
                  Value zero = s.f(element, 0.0);
                  Value empty = s.feq(count, zero);
                  nested.create<linalg::YieldOp>(
                      l, s.select(empty, zero, s.div(a[0], count)));
                });
  }
  mapping.map(op.getResult(), reduced);
  return success();
}

LogicalResult GraphLowering::lowerCrossEntropy(CrossEntropyOp op) {
  Value logits = lookup(op.getLogits());
  Value targets = lookup(op.getTargets());
  NNTensorType logitsType = typeOf(op.getLogits());
  NNTensorType type = typeOf(op.getResult());
  Type element = type.getElementType();
  unsigned rank = type.getRank();
  int64_t classes = logitsType.getStaticSize(logitsType.getRank() - 1);
  double smoothing = op.getLabelSmoothing().convertToDouble();
  bool fromLogits = op.getInputKind() == LossInput::logits;

  // log p(c) = x(c) - lse with lse = log sum exp x (0 for log-probs).
  SmallVector<Value> rowInputs{targets};
  Value lse;
  if (fromLogits) {
    double negInf = -std::numeric_limits<double>::infinity();
    Value max = reduceLast(logits, {}, element, negInf,
                           [](Scalar &s, Value e, ValueRange, Value acc) {
                             return s.max(e, acc);
                           });
    Value sum = reduceLast(logits, max, element, 0.0,
                           [](Scalar &s, Value e, ValueRange m, Value acc) {
                             return s.addReassoc(acc, s.exp(s.sub(e, m[0])));
                           });
    lse = map(type, {max, sum},
              [](Scalar &s, ValueRange a) { return s.add(a[0], s.log(a[1])); });
    rowInputs.push_back(lse);
  }
  Value total;
  if (smoothing != 0.0) {
    total = reduceLast(logits, {}, element, 0.0,
                       [](Scalar &s, Value e, ValueRange, Value acc) {
                         return s.addReassoc(acc, e);
                       });
    rowInputs.push_back(total);
  }
  Value init = empty(sizes(type), element);
  AffineMap identity = b.getMultiDimIdentityMap(rank);
  SmallVector<AffineMap> maps(rowInputs.size() + 1, identity);
  Value result = generic(
      init.getType(), rowInputs, init, maps,
      SmallVector<IteratorType>(rank, IteratorType::parallel),
      [&](OpBuilder &nested, Location l, ValueRange a) {
        Scalar s{nested, l};
        SmallVector<Value> indices;
        for (unsigned i = 0; i < rank; ++i)
          indices.push_back(s.index(i));
        indices.push_back(s.clampIndex(a[0], s.idx(classes)));
        Value picked = nested.create<tensor::ExtractOp>(l, logits, indices);
        Value zero = s.f(element, 0.0);
        Value shift = fromLogits ? a[1] : zero;
        Value targetLogProb = s.sub(picked, shift);
        Value loss = s.neg(targetLogProb);
        if (smoothing != 0.0) {
          // -( (1-eps) lp(y) + eps/(V-1) (sum_c lp(c) - lp(y)) ),
          // sum_c lp(c) = sum_c x(c) - V lse.
          Value sumLogProbs =
              s.sub(a[fromLogits ? 2 : 1], s.mul(s.f(element, classes), shift));
          Value others = s.sub(sumLogProbs, targetLogProb);
          Value weighted = s.add(
              s.mul(s.f(element, 1.0 - smoothing), targetLogProb),
              s.mul(s.f(element, smoothing / double(classes - 1)), others));
          loss = s.neg(weighted);
        }
        nested.create<linalg::YieldOp>(l, loss);
      });
  mapping.map(op.getResult(), result);
  return success();
}

LogicalResult GraphLowering::lowerMse(MseOp op) {
  Value prediction = lookup(op.getPrediction());
  Value target = lookup(op.getTarget());
  NNTensorType type = typeOf(op.getResult());
  unsigned rank = typeOf(op.getPrediction()).getRank();
  Value init = filled(sizes(type), type.getElementType(), 0.0);
  AffineMap identity = b.getMultiDimIdentityMap(rank);
  SmallVector<IteratorType> iterators(rank, IteratorType::parallel);
  iterators.back() = IteratorType::reduction;
  Value result = generic(
      init.getType(), {prediction, target}, init,
      {identity, identity, identity.dropResult(rank - 1)}, iterators,
      [&](OpBuilder &nested, Location l, ValueRange a) {
        Scalar s{nested, l};
        Value d = s.sub(a[0], a[1]);
        nested.create<linalg::YieldOp>(l, s.addReassoc(a[2], s.mul(d, d)));
      });
  mapping.map(op.getResult(), result);
  return success();
}

LogicalResult GraphLowering::lowerCtc(CtcLossOp op) {
  NNTensorType logitsType = typeOf(op.getLogits());
  NNTensorType labelsType = typeOf(op.getLabels());
  NNTensorType type = typeOf(op.getResult());
  Type element = type.getElementType();
  Value logProbs = lookup(op.getLogits());
  if (op.getInputKind() == LossInput::logits)
    logProbs = logSoftmax(logProbs);
  Value labels = lookup(op.getLabels());
  Value frameLengths = lengthsOf(logitsType.getDimName(1));
  Value labelLengths = lengthsOf(labelsType.getDimName(1));
  Value batch = dims[logitsType.getDimName(0)].size;
  Value labelPad = dims[labelsType.getDimName(1)].size;
  int64_t classes = logitsType.getStaticSize(2);
  int64_t blank = op.getBlank();
  bool zeroInfinity = op.getZeroInfinity();
  double negInf = -std::numeric_limits<double>::infinity();

  Scalar outer{b, loc()};
  // States 0..2U: even states are blanks, state 2u+1 is label u.
  Value states = outer.add(outer.mul(labelPad, outer.idx(2)), outer.idx(1));
  auto alphaType = RankedTensorType::get({ShapedType::kDynamic}, element);
  Value losses = empty(sizes(type), element);
  Value zero = outer.idx(0), one = outer.idx(1);

  auto batchLoop = b.create<scf::ForOp>(
      loc(), zero, batch, one, ValueRange{losses},
      [&](OpBuilder &nb, Location l, Value bi, ValueRange bState) {
        Scalar s{nb, l};
        Value frames =
            s.toIndex(nb.create<tensor::ExtractOp>(l, frameLengths, bi));
        Value labelCount =
            s.toIndex(nb.create<tensor::ExtractOp>(l, labelLengths, bi));
        // Odd states are labels: state 2u + 1 is label u.
        auto isLabelState = [&](Scalar &q, Value state) -> Value {
          return q.b.create<arith::CmpIOp>(
              q.loc, arith::CmpIPredicate::eq,
              q.b.create<arith::RemUIOp>(q.loc, state, q.idx(2)), q.idx(1));
        };
        // The class a state emits, clamped: labels past U (padding) only
        // feed states past 2U, which the result never reads.
        auto stateClass = [&](Scalar &q, Value state) -> Value {
          Value u = q.b.create<arith::DivUIOp>(q.loc, state, q.idx(2));
          u = q.minI(u, q.maxI(q.sub(labelPad, q.idx(1)), q.idx(0)));
          Value label =
              q.b.create<tensor::ExtractOp>(q.loc, labels, ValueRange{bi, u});
          return q.select(isLabelState(q, state),
                          q.clampIndex(label, q.idx(classes)), q.idx(blank));
        };
        // alpha before frame 0: a virtual start with log-prob 0 in state 0,
        // so one recurrence covers every frame.
        Value start = nb.create<tensor::EmptyOp>(
            l, ArrayRef<int64_t>{ShapedType::kDynamic}, element,
            ValueRange{states});
        AffineMap identity = nb.getMultiDimIdentityMap(1);
        start = nb.create<linalg::GenericOp>(
                      l, TypeRange{alphaType}, ValueRange{}, ValueRange{start},
                      ArrayRef<AffineMap>{identity},
                      ArrayRef<IteratorType>{IteratorType::parallel},
                      [&](OpBuilder &gb, Location gl, ValueRange) {
                        Scalar q{gb, gl};
                        Value first = gb.create<arith::CmpIOp>(
                            gl, arith::CmpIPredicate::eq, q.index(0), q.idx(0));
                        gb.create<linalg::YieldOp>(
                            gl, q.select(first, q.f(element, 0.0),
                                         q.f(element, negInf)));
                      })
                    .getResult(0);
        auto timeLoop = nb.create<scf::ForOp>(
            l, s.idx(0), frames, s.idx(1), ValueRange{start},
            [&](OpBuilder &tb, Location tl, Value t, ValueRange tState) {
              Value prev = tState[0];
              Value next = tb.create<tensor::EmptyOp>(
                  tl, ArrayRef<int64_t>{ShapedType::kDynamic}, element,
                  ValueRange{states});
              Value alpha =
                  tb.create<linalg::GenericOp>(
                        tl, TypeRange{alphaType}, ValueRange{},
                        ValueRange{next}, ArrayRef<AffineMap>{identity},
                        ArrayRef<IteratorType>{IteratorType::parallel},
                        [&](OpBuilder &gb, Location gl, ValueRange) {
                          Scalar q{gb, gl};
                          Value state = q.index(0);
                          Value label = stateClass(q, state);
                          Value isLabel = isLabelState(q, state);
                          Value stay =
                              gb.create<tensor::ExtractOp>(gl, prev, state);
                          Value hasPrev = q.ge(state, q.idx(1));
                          Value prevState = q.select(
                              hasPrev, q.sub(state, q.idx(1)), q.idx(0));
                          Value fromPrev = q.select(
                              hasPrev,
                              gb.create<tensor::ExtractOp>(gl, prev, prevState),
                              q.f(element, negInf));
                          // Skipping a blank: a label state whose label
                          // differs from the label two states back.
                          Value hasSkip =
                              q.andI(isLabel, q.ge(state, q.idx(2)));
                          Value skipState = q.select(
                              hasSkip, q.sub(state, q.idx(2)), q.idx(0));
                          Value skipLabel = stateClass(q, skipState);
                          hasSkip = q.andI(hasSkip, q.ne(label, skipLabel));
                          Value fromSkip = q.select(
                              hasSkip,
                              gb.create<tensor::ExtractOp>(gl, prev, skipState),
                              q.f(element, negInf));
                          Value sum = q.logAddExp(q.logAddExp(stay, fromPrev),
                                                  fromSkip);
                          Value emit = gb.create<tensor::ExtractOp>(
                              gl, logProbs, ValueRange{bi, t, label});
                          gb.create<linalg::YieldOp>(gl, q.add(sum, emit));
                        })
                      .getResult(0);
              tb.create<scf::YieldOp>(tl, alpha);
            });
        Value alpha = timeLoop.getResult(0);
        // log p = logaddexp(alpha[2U], alpha[2U - 1]).
        Value last = s.mul(labelCount, s.idx(2));
        Value atLast = nb.create<tensor::ExtractOp>(l, alpha, last);
        Value hasBefore = s.ge(last, s.idx(1));
        Value before = s.select(
            hasBefore,
            nb.create<tensor::ExtractOp>(
                l, alpha, s.select(hasBefore, s.sub(last, s.idx(1)), s.idx(0))),
            s.f(element, negInf));
        Value loss = s.neg(s.logAddExp(atLast, before));
        if (zeroInfinity) {
          Value inf = s.f(element, std::numeric_limits<double>::infinity());
          loss = s.select(s.feq(loss, inf), s.f(element, 0.0), loss);
        }
        Value updated =
            nb.create<tensor::InsertOp>(l, loss, bState[0], ValueRange{bi});
        nb.create<scf::YieldOp>(l, updated);
      });
  mapping.map(op.getResult(), batchLoop.getResult(0));
  return success();
}

LogicalResult GraphLowering::lowerMarkLoss(MarkLossOp op) {
  NNTensorType type = typeOf(op.getLoss());
  Value sum = maskedSum(lookup(op.getLoss()), type);
  FailureOr<Positions> positions =
      classifyPositions(type, table, [&] { return op.emitOpError(); });
  if (failed(positions))
    return failure();
  Scalar s{b, loc()};
  Value norm;
  switch (op.getNormalization()) {
  case LossNormalization::sum:
    norm = b.create<tensor::FromElementsOp>(
        loc(), RankedTensorType::get({}, b.getF64Type()),
        ValueRange{s.f(b.getF64Type(), 1.0)});
    break;
  case LossNormalization::per_sequence:
    norm = b.create<tensor::FromElementsOp>(
        loc(), RankedTensorType::get({}, b.getF64Type()),
        ValueRange{s.toF64(dims[positions->batch].size)});
    break;
  case LossNormalization::per_frame: {
    if (positions->kind == PositionKind::Packed) {
      norm = b.create<tensor::FromElementsOp>(
          loc(), RankedTensorType::get({}, b.getF64Type()),
          ValueRange{s.toF64(dims[positions->packed].size)});
      break;
    }
    // Valid positions: sum over b of the product of its lengths.
    SmallVector<Value> lengths;
    for (StringRef sequence : positions->sequences)
      lengths.push_back(lengthsOf(sequence));
    Value acc = filled({}, b.getF64Type(), 0.0);
    SmallVector<AffineMap> maps(lengths.size(), b.getMultiDimIdentityMap(1));
    maps.push_back(AffineMap::get(1, 0, b.getContext()));
    norm = generic(acc.getType(), lengths, acc, maps, {IteratorType::reduction},
                   [&](OpBuilder &nested, Location l, ValueRange a) {
                     Scalar q{nested, l};
                     Value count = q.toF64(a[0]);
                     for (Value other : a.drop_front().drop_back())
                       count = q.mul(count, q.toF64(other));
                     nested.create<linalg::YieldOp>(l, q.add(a.back(), count));
                   });
    break;
  }
  case LossNormalization::custom: {
    Value factor = lookup(op.getCustomInvNormFactor());
    norm = maskedSum(factor, typeOf(op.getCustomInvNormFactor()));
    break;
  }
  }
  lossValues.append({sum, norm});
  return success();
}

/// Moves each sequence's valid rows between a padded value [B, T, F...]
/// and a packed one [N, F...]: a loop over the batch carrying the running
/// offset (the exclusive prefix sum of the lengths) that copies
/// padded[b, 0:len(b)] to or from packed[offset:offset + len(b)].
Value GraphLowering::copySequenceRows(Value source, Value dest, Value lengths,
                                      Value batch, bool toPacked) {
  Value packed = toPacked ? dest : source;
  auto packedType = cast<RankedTensorType>(packed.getType());
  unsigned packedRank = packedType.getRank();
  SmallVector<OpFoldResult> features;
  for (unsigned i = 1; i < packedRank; ++i)
    features.push_back(b.getIndexAttr(packedType.getDimSize(i)));
  auto rowsType =
      RankedTensorType::get(packedType.getShape(), packedType.getElementType());
  Scalar s{b, loc()};
  auto loop = b.create<scf::ForOp>(
      loc(), s.idx(0), batch, s.idx(1), ValueRange{dest, s.idx(0)},
      [&](OpBuilder &nested, Location l, Value bi, ValueRange state) {
        Scalar q{nested, l};
        Value length =
            q.toIndex(nested.create<tensor::ExtractOp>(l, lengths, bi));
        OpFoldResult zero = nested.getIndexAttr(0),
                     one = nested.getIndexAttr(1);
        // padded[bi, 0:len, ...] and packed[offset:offset + len, ...].
        SmallVector<OpFoldResult> paddedOffsets(packedRank + 1, zero);
        paddedOffsets[0] = bi;
        SmallVector<OpFoldResult> paddedSizes{one, length};
        paddedSizes.append(features);
        SmallVector<OpFoldResult> paddedStrides(packedRank + 1, one);
        SmallVector<OpFoldResult> packedOffsets(packedRank, zero);
        packedOffsets[0] = state[1];
        SmallVector<OpFoldResult> packedSizes{length};
        packedSizes.append(features);
        SmallVector<OpFoldResult> packedStrides(packedRank, one);
        Value rows, updated;
        if (toPacked) {
          rows = nested.create<tensor::ExtractSliceOp>(
              l, rowsType, source, paddedOffsets, paddedSizes, paddedStrides);
          updated = nested.create<tensor::InsertSliceOp>(
              l, rows, state[0], packedOffsets, packedSizes, packedStrides);
        } else {
          rows = nested.create<tensor::ExtractSliceOp>(
              l, rowsType, source, packedOffsets, packedSizes, packedStrides);
          updated = nested.create<tensor::InsertSliceOp>(
              l, rows, state[0], paddedOffsets, paddedSizes, paddedStrides);
        }
        nested.create<scf::YieldOp>(
            l, ValueRange{updated, q.add(state[1], length)});
      });
  return loop.getResult(0);
}

LogicalResult GraphLowering::lowerPack(PackOp op) {
  NNTensorType inputType = typeOf(op.getInput());
  NNTensorType type = typeOf(op.getResult());
  Value packed = empty(sizes(type), type.getElementType());
  mapping.map(op.getResult(),
              copySequenceRows(lookup(op.getInput()), packed,
                               lengthsOf(inputType.getDimName(1)),
                               dims[inputType.getDimName(0)].size,
                               /*toPacked=*/true));
  return success();
}

LogicalResult GraphLowering::lowerUnpack(UnpackOp op) {
  NNTensorType type = typeOf(op.getResult());
  Value padded = filled(sizes(type), type.getElementType(), 0.0);
  mapping.map(op.getResult(), copySequenceRows(lookup(op.getInput()), padded,
                                               lengthsOf(type.getDimName(1)),
                                               dims[type.getDimName(0)].size,
                                               /*toPacked=*/false));
  return success();
}

LogicalResult GraphLowering::lowerCall(CallOp op) {
  auto callee = symbols.lookup<GraphOp>(op.getCallee());
  const GraphAbi &calleeAbi = abis.lookup(callee);
  DimTable calleeTable(callee.getDims());
  DimBinding binding(calleeTable, table);
  if (failed(binding.unifyCall(callee.getArgumentTypes(), op.getOperandTypes(),
                               callee.getResultTypes(), op.getResultTypes(),
                               [&] { return op.emitOpError(); })))
    return failure();

  SmallVector<Value> arguments;
  for (DimDeclAttr dim : calleeAbi.rootDims) {
    StringRef bound = binding.lookup(dim.getName().getValue());
    if (bound.empty())
      return op.emitOpError()
             << "cannot bind dim '" << dim.getName().getValue() << "' of @"
             << callee.getSymName() << ": no operand or result type names it";
    arguments.push_back(dims[bound].size);
    if (dim.getKind() == DimKind::seq)
      arguments.push_back(dims[bound].lengths);
  }
  for (Value operand : op.getOperands())
    arguments.push_back(lookup(operand));
  for (ParameterOp parameter : calleeAbi.parameters)
    arguments.push_back(parameterArgs.lookup(parameter));
  auto call = b.create<func::CallOp>(
      loc(), callee.getSymName(),
      calleeAbi.getLoweredFunctionType().getResults(), arguments);
  unsigned numResults = op.getNumResults();
  for (unsigned i = 0; i < numResults; ++i)
    mapping.map(op.getResult(i), call.getResult(i));
  for (Value loss : call.getResults().drop_front(numResults))
    lossValues.push_back(loss);
  return success();
}

LogicalResult GraphLowering::lowerReturn(ReturnOp op) {
  SmallVector<Value> results;
  for (Value operand : op.getOperands())
    results.push_back(lookup(operand));
  results.append(lossValues);
  b.create<func::ReturnOp>(loc(), results);
  return success();
}

//===----------------------------------------------------------------------===//
// The pass
//===----------------------------------------------------------------------===//

namespace {
struct NNConvertToLinalgPass
    : public nn::impl::NNConvertToLinalgBase<NNConvertToLinalgPass> {
  void runOnOperation() override {
    ModuleOp module = getOperation();
    FailureOr<ModuleAbi> abis = ModuleAbi::compute(module);
    if (failed(abis))
      return signalPassFailure();
    SymbolTable symbols(module);
    OpBuilder builder(module.getContext());
    SmallVector<std::pair<func::FuncOp, const GraphAbi *>> lowered;
    for (const GraphAbi &abi : abis->getGraphs()) {
      builder.setInsertionPoint(abi.graph);
      auto func = builder.create<func::FuncOp>(
          abi.graph.getLoc(), (abi.graph.getSymName() + ".lowered").str(),
          abi.getLoweredFunctionType());
      func->setAttr("llvm.emit_c_interface", builder.getUnitAttr());
      func.addEntryBlock();
      lowered.emplace_back(func, &abi);
    }
    for (auto [func, abi] : lowered) {
      GraphLowering lowering(*abis, *abi, symbols, func);
      if (failed(lowering.run()))
        return signalPassFailure();
    }
    // Calls name graphs: give each func its graph's name once graphs are gone.
    for (auto [func, abi] : lowered) {
      StringAttr name = abi->graph.getSymNameAttr();
      abi->graph.erase();
      func.setSymName(name);
    }
    for (ParameterOp parameter :
         llvm::make_early_inc_range(module.getOps<ParameterOp>()))
      parameter.erase();
  }
};
} // namespace
