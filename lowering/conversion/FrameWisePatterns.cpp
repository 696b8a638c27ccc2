//===- FrameWisePatterns.cpp - ops on each position alone -----------------===//
//
// Frame-wise ops become linalg.generic (or linalg.matmul_transpose_b) on
// their positions, padded or packed alike: they never read lengths, and
// what they compute on padded frames is never read as valid.
//
//===----------------------------------------------------------------------===//

#include "lowering/conversion/Patterns.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"

#include <cmath>

using namespace mlir;
using namespace mlir::nn;

using utils::IteratorType;

namespace {

NNTensorType typeOf(Value v) { return cast<NNTensorType>(v.getType()); }

class LinearConversion : public NNConversionPattern<LinearOp> {
public:
  using NNConversionPattern::NNConversionPattern;

  FailureOr<SmallVector<Value>> build(LinearOp, OpAdaptor adaptor,
                                      LinalgBuilder &b) const override {
    return SmallVector<Value>{
        b.linear(adaptor.getInput(), adaptor.getWeight(), adaptor.getBias())};
  }
};

/// Elementwise ops: one scalar function of the operands at each element.
template <typename OpTy>
class ElementwiseConversion : public NNConversionPattern<OpTy> {
public:
  using Base = NNConversionPattern<OpTy>;
  using Base::Base;
  using typename Base::OpAdaptor;

  FailureOr<SmallVector<Value>> build(OpTy op, OpAdaptor adaptor,
                                      LinalgBuilder &b) const override {
    return SmallVector<Value>{
        b.map(typeOf(op.getResult()), adaptor.getOperands(),
              [](Scalar &s, ValueRange a) { return compute(s, a); })};
  }

private:
  static Value compute(Scalar &s, ValueRange a);
};

template <>
Value ElementwiseConversion<AddOp>::compute(Scalar &s, ValueRange a) {
  return s.add(a[0], a[1]);
}
template <>
Value ElementwiseConversion<MulOp>::compute(Scalar &s, ValueRange a) {
  return s.mul(a[0], a[1]);
}
template <>
Value ElementwiseConversion<ReluOp>::compute(Scalar &s, ValueRange a) {
  return s.max(a[0], s.f(a[0].getType(), 0.0));
}
template <>
Value ElementwiseConversion<TanhOp>::compute(Scalar &s, ValueRange a) {
  return s.tanh(a[0]);
}
template <>
Value ElementwiseConversion<SigmoidOp>::compute(Scalar &s, ValueRange a) {
  return s.sigmoid(a[0]);
}
template <>
Value ElementwiseConversion<GeluOp>::compute(Scalar &s, ValueRange a) {
  // 0.5 x (1 + erf(x / sqrt(2))), the exact form.
  Type t = a[0].getType();
  Value scaled = s.mul(a[0], s.f(t, M_SQRT1_2));
  Value erf = s.b.create<math::ErfOp>(s.loc, scaled);
  return s.mul(s.mul(s.f(t, 0.5), a[0]), s.add(s.f(t, 1.0), erf));
}

class SoftmaxConversion : public NNConversionPattern<SoftmaxOp> {
public:
  using NNConversionPattern::NNConversionPattern;

  FailureOr<SmallVector<Value>> build(SoftmaxOp op, OpAdaptor adaptor,
                                      LinalgBuilder &b) const override {
    Value logProbs = b.logSoftmax(adaptor.getInput());
    return SmallVector<Value>{
        b.map(typeOf(op.getResult()), logProbs,
              [](Scalar &s, ValueRange a) { return s.exp(a[0]); })};
  }
};

class LogSoftmaxConversion : public NNConversionPattern<LogSoftmaxOp> {
public:
  using NNConversionPattern::NNConversionPattern;

  FailureOr<SmallVector<Value>> build(LogSoftmaxOp, OpAdaptor adaptor,
                                      LinalgBuilder &b) const override {
    return SmallVector<Value>{b.logSoftmax(adaptor.getInput())};
  }
};

/// Evaluation semantics: dropout is the identity until training lands.
class DropoutConversion : public NNConversionPattern<DropoutOp> {
public:
  using NNConversionPattern::NNConversionPattern;

  FailureOr<SmallVector<Value>> build(DropoutOp, OpAdaptor adaptor,
                                      LinalgBuilder &) const override {
    return SmallVector<Value>{adaptor.getInput()};
  }
};

class LayerNormConversion : public NNConversionPattern<LayerNormOp> {
public:
  using NNConversionPattern::NNConversionPattern;

  FailureOr<SmallVector<Value>> build(LayerNormOp op, OpAdaptor adaptor,
                                      LinalgBuilder &b) const override {
    Value x = adaptor.getInput();
    NNTensorType type = typeOf(op.getResult());
    Type element = type.getElementType();
    int64_t features = type.getStaticSize(type.getRank() - 1);
    double inverse = 1.0 / static_cast<double>(features);
    Value sum = b.reduceLast(x, {}, element, 0.0,
                             [](Scalar &s, Value e, ValueRange, Value acc) {
                               return s.addReassoc(acc, e);
                             });
    NNTensorType rowType = type.withDims(type.getDims().drop_back());
    Value mean = b.map(rowType, sum, [&](Scalar &s, ValueRange a) {
      return s.mul(a[0], s.f(element, inverse));
    });
    Value squares = b.reduceLast(
        x, mean, element, 0.0, [](Scalar &s, Value e, ValueRange m, Value acc) {
          Value d = s.sub(e, m[0]);
          return s.addReassoc(acc, s.mul(d, d));
        });
    double epsilon = op.getEpsilon().convertToDouble();
    Value rstd = b.map(rowType, squares, [&](Scalar &s, ValueRange a) {
      Value variance = s.mul(a[0], s.f(element, inverse));
      return s.b.create<math::RsqrtOp>(s.loc,
                                       s.add(variance, s.f(element, epsilon)));
    });
    OpBuilder &builder = b.getBuilder();
    unsigned rank = type.getRank();
    AffineMap identity = builder.getMultiDimIdentityMap(rank);
    AffineMap dropLast = identity.dropResult(rank - 1);
    AffineMap lastOnly =
        AffineMap::get(rank, 0, builder.getAffineDimExpr(rank - 1));
    Value init = b.empty(b.sizes(type), element);
    Value result = b.generic(
        init.getType(), {x, mean, rstd, adaptor.getScale(), adaptor.getBias()},
        init, {identity, dropLast, dropLast, lastOnly, lastOnly, identity},
        SmallVector<IteratorType>(rank, IteratorType::parallel),
        [&](OpBuilder &nested, Location l, ValueRange a) {
          Scalar s{nested, l};
          Value normalized = s.mul(s.sub(a[0], a[1]), a[2]);
          nested.create<linalg::YieldOp>(l,
                                         s.add(s.mul(normalized, a[3]), a[4]));
        });
    return SmallVector<Value>{result};
  }
};

class EmbeddingConversion : public NNConversionPattern<EmbeddingOp> {
public:
  using NNConversionPattern::NNConversionPattern;

  FailureOr<SmallVector<Value>> build(EmbeddingOp op, OpAdaptor adaptor,
                                      LinalgBuilder &b) const override {
    Value table = adaptor.getTable();
    NNTensorType type = typeOf(op.getResult());
    unsigned rank = type.getRank();
    int64_t vocabulary = cast<RankedTensorType>(table.getType()).getDimSize(0);
    Value init = b.empty(b.sizes(type), type.getElementType());
    AffineMap identity = b.getBuilder().getMultiDimIdentityMap(rank);
    Value result =
        b.generic(init.getType(), adaptor.getIndices(), init,
                  {identity.dropResult(rank - 1), identity},
                  SmallVector<IteratorType>(rank, IteratorType::parallel),
                  [&](OpBuilder &nested, Location l, ValueRange a) {
                    Scalar s{nested, l};
                    Value row = s.clampIndex(a[0], s.idx(vocabulary));
                    Value v = nested.create<tensor::ExtractOp>(
                        l, table, ValueRange{row, s.index(rank - 1)});
                    nested.create<linalg::YieldOp>(l, v);
                  });
    return SmallVector<Value>{result};
  }
};

class ConcatConversion : public NNConversionPattern<ConcatOp> {
public:
  using NNConversionPattern::NNConversionPattern;

  FailureOr<SmallVector<Value>> build(ConcatOp op, OpAdaptor adaptor,
                                      LinalgBuilder &b) const override {
    NNTensorType type = typeOf(op.getResult());
    SmallVector<OpFoldResult> positions = b.sizes(type);
    positions.pop_back();
    SmallVector<int64_t> widths;
    for (Value input : op.getInputs()) {
      NNTensorType inputType = typeOf(input);
      widths.push_back(inputType.getStaticSize(inputType.getRank() - 1));
    }
    return SmallVector<Value>{b.concatFeatures(adaptor.getInputs(), positions,
                                               widths, type.getElementType())};
  }
};

} // namespace

void nn::populateFrameWiseConversionPatterns(const TypeConverter &converter,
                                             ConversionState &state,
                                             RewritePatternSet &patterns) {
  patterns.add<LinearConversion, ElementwiseConversion<AddOp>,
               ElementwiseConversion<MulOp>, ElementwiseConversion<ReluOp>,
               ElementwiseConversion<TanhOp>, ElementwiseConversion<SigmoidOp>,
               ElementwiseConversion<GeluOp>, SoftmaxConversion,
               LogSoftmaxConversion, DropoutConversion, LayerNormConversion,
               EmbeddingConversion, ConcatConversion>(converter, state);
}
