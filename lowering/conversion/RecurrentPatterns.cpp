//===- RecurrentPatterns.cpp - recurrent layers to scf loops --------------===//
//
// A recurrence becomes an scf.for over time: one GEMM projects every
// frame's input at once, and each step updates only the sequences still
// running (t < len). The backward direction runs on each sequence reversed
// within its own length, so padding never enters the state.
//
//===----------------------------------------------------------------------===//

#include "lowering/conversion/Patterns.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Arith/Utils/Utils.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"

using namespace mlir;
using namespace mlir::nn;

using utils::IteratorType;

namespace {

/// y[b, t] = x[b, len(b) - 1 - t] for t < len(b), else 0.
Value reverseWithinLengths(LinalgBuilder &lb, Value x, Value lengths) {
  OpBuilder &b = lb.getBuilder();
  Location loc = lb.getLoc();
  auto type = cast<RankedTensorType>(x.getType());
  unsigned rank = type.getRank();
  Value init =
      lb.empty(tensor::getMixedSizes(b, loc, x), type.getElementType());
  AffineMap identity = b.getMultiDimIdentityMap(rank);
  AffineMap batch = AffineMap::get(rank, 0, b.getAffineDimExpr(0));
  return lb.generic(type, lengths, init, {batch, identity},
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
                      nested.create<linalg::YieldOp>(l,
                                                     s.select(valid, v, zero));
                    });
}

/// A forward LSTM over x [B, T, I]; outputs on padded frames are zero.
Value lstmForward(LinalgBuilder &lb, Value x, Value lengths, Value wi, Value wh,
                  Value bias, int64_t hidden) {
  OpBuilder &b = lb.getBuilder();
  Location loc = lb.getLoc();
  auto xType = cast<RankedTensorType>(x.getType());
  Type element = xType.getElementType();
  OpFoldResult batch = tensor::getMixedSize(b, loc, x, 0);
  OpFoldResult time = tensor::getMixedSize(b, loc, x, 1);
  // The input projection of all frames at once: one GEMM.
  Value projected = lb.linear(x, wi, bias); // [B, T, 4H]
  Value h0 = lb.filled({batch, b.getIndexAttr(hidden)}, element, 0.0);
  Value y0 = lb.filled({batch, time, b.getIndexAttr(hidden)}, element, 0.0);
  Value zero = b.create<arith::ConstantIndexOp>(loc, 0);
  Value one = b.create<arith::ConstantIndexOp>(loc, 1);
  Value steps = getValueOrCreateConstantIndexOp(b, loc, time);
  auto stateType = cast<RankedTensorType>(h0.getType());

  auto loop = b.create<scf::ForOp>(
      loc, zero, steps, one, ValueRange{h0, h0, y0},
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
        Value recurrent = lb.matmulTransposeB(h, wh); // [B, 4H]
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
        Value init = lb.empty({batch, b.getIndexAttr(hidden)}, element);
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
Value sliceDirection(LinalgBuilder &lb, Value weights, int64_t direction) {
  OpBuilder &b = lb.getBuilder();
  Location loc = lb.getLoc();
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
  return b.create<tensor::ExtractSliceOp>(loc, resultType, weights, offsets,
                                          sliceSizes, strides);
}

class LstmConversion : public NNConversionPattern<LstmOp> {
public:
  using NNConversionPattern::NNConversionPattern;

  FailureOr<SmallVector<Value>> build(LstmOp op, OpAdaptor adaptor,
                                      LinalgBuilder &b) const override {
    auto inputType = cast<NNTensorType>(op.getInput().getType());
    Value x = adaptor.getInput();
    Value lengths = b.getDims().lengths(inputType.getDimName(1));
    Value wi = adaptor.getInputWeight();
    Value wh = adaptor.getRecurrentWeight();
    Value bias = adaptor.getBias();
    auto whType = cast<RankedTensorType>(wh.getType());
    int64_t hidden = whType.getDimSize(whType.getRank() - 1);
    auto backward = [&](Value wiD, Value whD, Value biasD) {
      Value reversed = reverseWithinLengths(b, x, lengths);
      Value y = lstmForward(b, reversed, lengths, wiD, whD, biasD, hidden);
      return reverseWithinLengths(b, y, lengths);
    };
    switch (op.getDirection()) {
    case LstmDirection::forward:
      return SmallVector<Value>{
          lstmForward(b, x, lengths, wi, wh, bias, hidden)};
    case LstmDirection::backward:
      return SmallVector<Value>{backward(wi, wh, bias)};
    case LstmDirection::bidirectional: {
      Value forward = lstmForward(b, x, lengths, sliceDirection(b, wi, 0),
                                  sliceDirection(b, wh, 0),
                                  sliceDirection(b, bias, 0), hidden);
      Value back = backward(sliceDirection(b, wi, 1), sliceDirection(b, wh, 1),
                            sliceDirection(b, bias, 1));
      SmallVector<OpFoldResult> positions = b.sizes(inputType);
      positions.pop_back();
      return SmallVector<Value>{b.concatFeatures({forward, back}, positions,
                                                 {hidden, hidden},
                                                 inputType.getElementType())};
    }
    }
    llvm_unreachable("every LSTM direction is handled");
  }
};

} // namespace

void nn::populateRecurrentConversionPatterns(const TypeConverter &converter,
                                             ConversionState &state,
                                             RewritePatternSet &patterns) {
  patterns.add<LstmConversion>(converter, state);
}
