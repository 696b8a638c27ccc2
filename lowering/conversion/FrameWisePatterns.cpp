//===- FrameWisePatterns.cpp - ops on each position alone -----------------===//
//
// Frame-wise ops become linalg.generic (or linalg.matmul_transpose_b) on
// their positions, padded or packed alike: they never read lengths, and
// what they compute on padded frames is never read as valid.
// nn.spec_augment is here too, beside nn.dropout, whose counter hash it
// shares; unlike the frame-wise ops it reads its sequences' lengths.
//
//===----------------------------------------------------------------------===//

#include "lowering/conversion/Patterns.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"

#include <cmath>
#include <functional>

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

template <>
Value ElementwiseConversion<SiluOp>::compute(Scalar &s, ValueRange a) {
  return s.mul(a[0], s.sigmoid(a[0]));
}

/// factor * x.
class ScaleConversion : public NNConversionPattern<ScaleOp> {
public:
  using NNConversionPattern::NNConversionPattern;

  FailureOr<SmallVector<Value>> build(ScaleOp op, OpAdaptor adaptor,
                                      LinalgBuilder &lb) const override {
    NNTensorType type = typeOf(op.getResult());
    double factor = op.getFactor().convertToDouble();
    return SmallVector<Value>{
        lb.map(type, {adaptor.getInput()}, [&](Scalar &s, ValueRange a) {
          return s.mul(a[0], s.f(type.getElementType(), factor));
        })};
  }
};

/// a * sigmoid(b) over the feature halves [a, b].
class GluConversion : public NNConversionPattern<GluOp> {
public:
  using NNConversionPattern::NNConversionPattern;

  FailureOr<SmallVector<Value>> build(GluOp op, OpAdaptor adaptor,
                                      LinalgBuilder &lb) const override {
    NNTensorType type = typeOf(op.getResult());
    int64_t half = type.getStaticSize(type.getRank() - 1);
    Value x = adaptor.getInput();
    return SmallVector<Value>{lb.map(
        type, {lb.sliceFeatures(x, 0, half), lb.sliceFeatures(x, half, half)},
        [](Scalar &s, ValueRange a) { return s.mul(a[0], s.sigmoid(a[1])); })};
  }
};

/// [dy s(b), dy a s(b) (1 - s(b))], the halves side by side.
class GluGradConversion : public NNConversionPattern<GluGradOp> {
public:
  using NNConversionPattern::NNConversionPattern;

  FailureOr<SmallVector<Value>> build(GluGradOp op, OpAdaptor adaptor,
                                      LinalgBuilder &lb) const override {
    NNTensorType halfType = typeOf(op.getGrad());
    int64_t half = halfType.getStaticSize(halfType.getRank() - 1);
    Value x = adaptor.getInput(), dy = adaptor.getGrad();
    Value a = lb.sliceFeatures(x, 0, half), b = lb.sliceFeatures(x, half, half);
    Value da = lb.map(halfType, {dy, b}, [](Scalar &s, ValueRange v) {
      return s.mul(v[0], s.sigmoid(v[1]));
    });
    Value db = lb.map(halfType, {dy, a, b}, [](Scalar &s, ValueRange v) {
      Value gate = s.sigmoid(v[2]);
      Value one = s.f(gate.getType(), 1.0);
      return s.mul(s.mul(v[0], v[1]), s.mul(gate, s.sub(one, gate)));
    });
    SmallVector<OpFoldResult> positions = lb.sizes(halfType);
    positions.pop_back();
    return SmallVector<Value>{lb.concatFeatures(
        {da, db}, positions, {half, half}, halfType.getElementType())};
  }
};

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

/// Per row of a packed value: the (sequence, frame) it holds, as two [N]
/// i32 tensors, found by walking the lengths (O(B) per row, once per op).
std::pair<Value, Value> packedRowPositions(LinalgBuilder &lb, Value lengths,
                                           Value batch, OpFoldResult rows) {
  OpBuilder &b = lb.getBuilder();
  Type i32 = b.getIntegerType(32);
  auto type = RankedTensorType::get({ShapedType::kDynamic}, i32);
  Value init = lb.empty({rows}, i32);
  AffineMap identity = b.getMultiDimIdentityMap(1);
  auto step = b.create<linalg::GenericOp>(
      lb.getLoc(), TypeRange{type, type}, ValueRange{}, ValueRange{init, init},
      ArrayRef<AffineMap>{identity, identity},
      ArrayRef<utils::IteratorType>{utils::IteratorType::parallel},
      [&](OpBuilder &nested, Location l, ValueRange) {
        Scalar s{nested, l};
        Value row = s.index(0);
        // (sequence, frame, rows before this sequence): the last sequence
        // that starts at or before `row` holds it.
        auto loop = nested.create<scf::ForOp>(
            l, s.idx(0), batch, s.idx(1),
            ValueRange{s.idx(0), s.idx(0), s.idx(0)},
            [&](OpBuilder &fb, Location fl, Value seq, ValueRange acc) {
              Scalar q{fb, fl};
              Value length =
                  q.toIndex(fb.create<tensor::ExtractOp>(fl, lengths, seq));
              Value starts = q.ge(row, acc[2]);
              Value nonEmpty = q.lt(q.idx(0), length);
              Value here = q.andI(starts, nonEmpty);
              fb.create<scf::YieldOp>(
                  fl, ValueRange{q.select(here, seq, acc[0]),
                                 q.select(here, q.sub(row, acc[2]), acc[1]),
                                 q.add(acc[2], length)});
            });
        auto toI32 = [&](Value v) {
          return nested.create<arith::IndexCastOp>(l, i32, v).getResult();
        };
        nested.create<linalg::YieldOp>(
            l, ValueRange{toI32(loop.getResult(0)), toI32(loop.getResult(1))});
      });
  return {step.getResult(0), step.getResult(1)};
}

/// The body of a counter-hashed mask: the element, the hash of seed and
/// key (`h = mix(mix(seed + 0x9e3779b9) ^ key)`, what every mask starts
/// from), the element's logical position as i32 coordinates, and the
/// position the mask hashes: the same, but for the sequence index, which
/// counts from the seed's batch offset (a data-parallel rank's part; the
/// local index still reads the part's own lengths).
using MaskBody =
    function_ref<Value(Scalar &, Value element, Value keyed,
                       ArrayRef<Value> position, ArrayRef<Value> hashed)>;

/// The elementwise linalg.generic of nn.dropout and nn.spec_augment in
/// training: each element of `x` (of nn type `type`) through `body`. The
/// logical position is (sequence, frame) of a packed row, then the other
/// indices; every index as it is when padded. So a packed and a padded
/// run see the same positions, and the same masks.
FailureOr<Value> maskElementwise(LinalgBuilder &lb, Value x, Value seedTensor,
                                 int64_t key, NNTensorType type,
                                 MaskBody body) {
  OpBuilder &b = lb.getBuilder();
  Location loc = lb.getLoc();
  unsigned rank = type.getRank();
  FailureOr<Positions> positions = classifyPositions(
      type, lb.getDims().getDecls(), [&] { return emitError(loc); });
  if (failed(positions))
    return failure();
  // A data-parallel rank's part of a batch counts its sequences from the
  // offset of its first one: the masks are the whole batch's.
  Value seed, offset;
  std::tie(seed, offset) = lb.scalar().maskSeed(seedTensor);
  AffineMap identity = b.getMultiDimIdentityMap(rank);
  AffineMap scalar = AffineMap::get(rank, 0, {}, b.getContext());
  SmallVector<Value> inputs{x, seed};
  SmallVector<AffineMap> maps{identity, scalar};
  bool shifted = offset && positions->kind != PositionKind::None;
  if (shifted) {
    inputs.push_back(offset);
    maps.push_back(scalar);
  }
  unsigned rows = inputs.size();
  bool packed = positions->kind == PositionKind::Packed;
  if (packed) {
    auto [rowSeq, rowFrame] =
        packedRowPositions(lb, lb.getDims().lengths(positions->sequences[0]),
                           lb.getDims().size(positions->batch),
                           tensor::getMixedSize(b, loc, x, 0));
    inputs.append({rowSeq, rowFrame});
    maps.append(2, AffineMap::get(rank, 0, b.getAffineDimExpr(0)));
  }
  maps.push_back(identity);
  Value init = lb.empty(lb.sizes(type), type.getElementType());
  return lb.generic(
      init.getType(), inputs, init, maps,
      SmallVector<utils::IteratorType>(rank, utils::IteratorType::parallel),
      [&](OpBuilder &nested, Location l, ValueRange a) {
        Scalar s{nested, l};
        Value h = s.keyedSeed(a[1], key);
        SmallVector<Value> position;
        unsigned first = 0;
        if (packed) {
          position.append({a[rows], a[rows + 1]});
          first = 1;
        }
        for (unsigned dim = first; dim < rank; ++dim)
          position.push_back(
              nested.create<arith::IndexCastOp>(l, s.i32Type(), s.index(dim)));
        SmallVector<Value> hashed(position);
        if (shifted)
          hashed[0] = s.add(position[0], a[2]);
        nested.create<linalg::YieldOp>(l, body(s, a[0], h, position, hashed));
      });
}

/// Without a seed (evaluation) the identity. With one, the mask of the
/// op's description: the keyed hash mixed with each coordinate of the
/// position, against an integer threshold.
class DropoutConversion : public NNConversionPattern<DropoutOp> {
public:
  using NNConversionPattern::NNConversionPattern;

  FailureOr<SmallVector<Value>> build(DropoutOp op, OpAdaptor adaptor,
                                      LinalgBuilder &lb) const override {
    if (!op.getSeed())
      return SmallVector<Value>{adaptor.getInput()};
    NNTensorType type = typeOf(op.getResult());
    Type element = type.getElementType();
    double rate = op.getRate().convertToDouble();
    FailureOr<Value> result = maskElementwise(
        lb, adaptor.getInput(), adaptor.getSeed(), op.getKey(), type,
        [&](Scalar &s, Value x, Value h, ArrayRef<Value>,
            ArrayRef<Value> hashed) -> Value {
          Value keep = s.keeps(h, hashed, rate);
          Value kept = s.mul(x, s.f(element, 1.0 / (1.0 - rate)));
          return s.select(keep, kept, s.f(element, 0.0));
        });
    if (failed(result))
      return failure();
    return SmallVector<Value>{*result};
  }
};

/// Without a seed (evaluation) the identity. With one, per element: the
/// masks of its sequence drawn from the hashes of the op's description
/// (recomputed per element: a few multiplies per mask, no state), and the
/// element zeroed when a mask covers it and its frame is real.
class SpecAugmentConversion : public NNConversionPattern<SpecAugmentOp> {
public:
  using NNConversionPattern::NNConversionPattern;

  FailureOr<SmallVector<Value>> build(SpecAugmentOp op, OpAdaptor adaptor,
                                      LinalgBuilder &lb) const override {
    if (!op.getSeed())
      return SmallVector<Value>{adaptor.getInput()};
    NNTensorType type = typeOf(op.getResult());
    Type element = type.getElementType();
    int64_t features = type.getStaticSize(type.getRank() - 1);
    FailureOr<Positions> positions = classifyPositions(
        type, lb.getDims().getDecls(), [&] { return emitError(lb.getLoc()); });
    if (failed(positions))
      return failure();
    Value lengths = lb.getDims().lengths(positions->sequences[0]);
    int64_t freqMasks = op.getFreqMasks(), timeMasks = op.getTimeMasks();
    int64_t freqWidth = op.getFreqWidth(), timeWidth = op.getTimeWidth();
    double ratio = op.getTimeRatio().convertToDouble();
    FailureOr<Value> result = maskElementwise(
        lb, adaptor.getInput(), adaptor.getSeed(), op.getKey(), type,
        [&](Scalar &s, Value x, Value keyed, ArrayRef<Value> position,
            ArrayRef<Value> hashed) -> Value {
          OpBuilder &nested = s.b;
          Location l = s.loc;
          Type i32 = s.i32Type();
          auto xorI = [&](Value v, Value w) {
            return nested.create<arith::XOrIOp>(l, v, w).getResult();
          };
          auto remU = [&](Value v, Value w) {
            return nested.create<arith::RemUIOp>(l, v, w).getResult();
          };
          auto inBand = [&](Value at, Value start, Value width) {
            return s.andI(s.ge(at, start), s.lt(at, s.add(start, width)));
          };
          // (sequence, frame, feature): the position of [B, T, F] and of
          // a packed [N, F] alike.
          Value sequence = position[0], frame = position[1],
                feature = position.back();
          Value length = nested.create<tensor::ExtractOp>(
              l, lengths, ValueRange{s.toIndex(sequence)});
          Value h = s.mix32(xorI(keyed, hashed[0]));
          // u and v of mask m.
          auto draws = [&](int64_t m) {
            auto draw = [&](int64_t counter) {
              return nested.create<arith::ShRUIOp>(
                  l, s.mix32(xorI(h, s.i32(counter))), s.i32(8));
            };
            return std::pair<Value, Value>(draw(2 * m), draw(2 * m + 1));
          };
          Value one = s.i32(1);
          Value masked = nested.create<arith::ConstantIntOp>(l, 0, 1);
          for (int64_t m = 0; m < freqMasks; ++m) {
            auto [u, v] = draws(m);
            Value width = remU(u, s.i32(freqWidth + 1));
            Value start = remU(v, s.add(s.sub(s.i32(features), width), one));
            masked = nested.create<arith::OrIOp>(l, masked,
                                                 inBand(feature, start, width));
          }
          if (timeMasks > 0) {
            // W = min(time_width, floor(time_ratio * L)).
            Value scaled = s.mul(
                nested.create<arith::SIToFPOp>(l, nested.getF64Type(), length),
                s.f(nested.getF64Type(), ratio));
            Value bound = s.minI(
                s.i32(timeWidth),
                nested.create<arith::FPToSIOp>(l, i32, scaled).getResult());
            for (int64_t m = freqMasks; m < freqMasks + timeMasks; ++m) {
              auto [u, v] = draws(m);
              Value width = remU(u, s.add(bound, one));
              Value start = remU(v, s.add(s.sub(length, width), one));
              masked = nested.create<arith::OrIOp>(l, masked,
                                                   inBand(frame, start, width));
            }
          }
          // Padded frames stay as they are.
          masked = s.andI(masked, s.lt(frame, length));
          return s.select(masked, s.f(element, 0.0), x);
        });
    if (failed(result))
      return failure();
    return SmallVector<Value>{*result};
  }
};

/// Per frame of `x` [P..., F]: the mean and 1 / sqrt(variance + epsilon)
/// of its features, [P...] each (layer_norm and its gradients).
std::pair<Value, Value> layerNormStats(LinalgBuilder &b, Value x,
                                       NNTensorType type, double epsilon) {
  Type element = type.getElementType();
  int64_t features = type.getStaticSize(type.getRank() - 1);
  double inverse = 1.0 / static_cast<double>(features);
  Value sum = b.reduceLast(x, {}, element, 0.0,
                           [](Scalar &s, Value e, ValueRange, Value acc) {
                             return s.addReassoc(acc, e);
                           });
  NNTensorType rowType = type.withoutLastAxis();
  Value mean = b.map(rowType, sum, [&](Scalar &s, ValueRange a) {
    return s.mul(a[0], s.f(element, inverse));
  });
  Value squares = b.reduceLast(x, mean, element, 0.0,
                               [](Scalar &s, Value e, ValueRange m, Value acc) {
                                 Value d = s.sub(e, m[0]);
                                 return s.addReassoc(acc, s.mul(d, d));
                               });
  Value rstd = b.map(rowType, squares, [&](Scalar &s, ValueRange a) {
    Value variance = s.mul(a[0], s.f(element, inverse));
    return s.b.create<math::RsqrtOp>(s.loc,
                                     s.add(variance, s.f(element, epsilon)));
  });
  return {mean, rstd};
}

class LayerNormConversion : public NNConversionPattern<LayerNormOp> {
public:
  using NNConversionPattern::NNConversionPattern;

  FailureOr<SmallVector<Value>> build(LayerNormOp op, OpAdaptor adaptor,
                                      LinalgBuilder &b) const override {
    Value x = adaptor.getInput();
    NNTensorType type = typeOf(op.getResult());
    Type element = type.getElementType();
    auto [mean, rstd] =
        layerNormStats(b, x, type, op.getEpsilon().convertToDouble());
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

//===----------------------------------------------------------------------===//
// Gradients of the frame-wise ops
//===----------------------------------------------------------------------===//

/// dx = dy W: dx(p..., i) = sum_o dy(p..., o) W(o, i).
class LinearGradInputConversion
    : public NNConversionPattern<LinearGradInputOp> {
public:
  using NNConversionPattern::NNConversionPattern;

  FailureOr<SmallVector<Value>> build(LinearGradInputOp op, OpAdaptor adaptor,
                                      LinalgBuilder &lb) const override {
    return SmallVector<Value>{
        lb.linearGradInput(adaptor.getGrad(), adaptor.getWeight())};
  }
};

/// dW(o, i) = sum over valid positions p of dy(p, o) x(p, i); padded
/// positions are skipped (selected away), so NaN there never reaches dW.
class LinearGradWeightConversion
    : public NNConversionPattern<LinearGradWeightOp> {
public:
  using NNConversionPattern::NNConversionPattern;

  FailureOr<SmallVector<Value>> build(LinearGradWeightOp op, OpAdaptor adaptor,
                                      LinalgBuilder &lb) const override {
    return SmallVector<Value>{
        lb.linearGradWeight(adaptor.getGrad(), adaptor.getInput(),
                            lb.paddingLengths(typeOf(op.getGrad())))};
  }
};

/// The sum over valid positions, feature axes kept.
class SumPositionsConversion : public NNConversionPattern<SumPositionsOp> {
public:
  using NNConversionPattern::NNConversionPattern;

  FailureOr<SmallVector<Value>> build(SumPositionsOp op, OpAdaptor adaptor,
                                      LinalgBuilder &lb) const override {
    NNTensorType type = typeOf(op.getInput());
    return SmallVector<Value>{lb.sumValidPositions(adaptor.getInput(),
                                                   type.getNumPositionDims(),
                                                   lb.paddingLengths(type))};
  }
};

class ActivationGradConversion : public NNConversionPattern<ActivationGradOp> {
public:
  using NNConversionPattern::NNConversionPattern;

  FailureOr<SmallVector<Value>> build(ActivationGradOp op, OpAdaptor adaptor,
                                      LinalgBuilder &lb) const override {
    Activation kind = op.getKind();
    return SmallVector<Value>{lb.map(
        typeOf(op.getResult()), {adaptor.getGrad(), adaptor.getInput()},
        [&](Scalar &s, ValueRange a) -> Value {
          Value dy = a[0], x = a[1];
          Type t = x.getType();
          Value one = s.f(t, 1.0);
          Value derivative;
          switch (kind) {
          case Activation::relu:
            derivative =
                s.select(s.b.create<arith::CmpFOp>(
                             s.loc, arith::CmpFPredicate::OGT, x, s.f(t, 0.0)),
                         one, s.f(t, 0.0));
            break;
          case Activation::tanh: {
            Value y = s.tanh(x);
            derivative = s.sub(one, s.mul(y, y));
            break;
          }
          case Activation::sigmoid: {
            Value y = s.sigmoid(x);
            derivative = s.mul(y, s.sub(one, y));
            break;
          }
          case Activation::gelu: {
            // Phi(x) + x phi(x), phi(x) = exp(-x^2 / 2) / sqrt(2 pi).
            Value erf =
                s.b.create<math::ErfOp>(s.loc, s.mul(x, s.f(t, M_SQRT1_2)));
            Value cdf = s.mul(s.f(t, 0.5), s.add(one, erf));
            Value pdf = s.mul(s.exp(s.mul(s.mul(x, x), s.f(t, -0.5))),
                              s.f(t, 0.5 * M_2_SQRTPI * M_SQRT1_2));
            derivative = s.add(cdf, s.mul(x, pdf));
            break;
          }
          case Activation::silu: {
            // s(x) + x s(x) (1 - s(x)).
            Value y = s.sigmoid(x);
            derivative = s.mul(y, s.add(one, s.mul(x, s.sub(one, y))));
            break;
          }
          }
          return s.mul(dy, derivative);
        })};
  }
};

/// dx = dy - exp(y) sum(dy), per frame.
class LogSoftmaxGradConversion : public NNConversionPattern<LogSoftmaxGradOp> {
public:
  using NNConversionPattern::NNConversionPattern;

  FailureOr<SmallVector<Value>> build(LogSoftmaxGradOp op, OpAdaptor adaptor,
                                      LinalgBuilder &lb) const override {
    NNTensorType type = typeOf(op.getResult());
    Type element = type.getElementType();
    Value sum = lb.reduceLast(adaptor.getGrad(), {}, element, 0.0,
                              [](Scalar &s, Value e, ValueRange, Value acc) {
                                return s.addReassoc(acc, e);
                              });
    return SmallVector<Value>{
        lb.mapWithRow(type, {adaptor.getGrad(), adaptor.getOutput()}, sum,
                      [](Scalar &s, ValueRange a, Value rowSum) {
                        return s.sub(a[0], s.mul(s.exp(a[1]), rowSum));
                      })};
  }
};

/// dx = y (dy - sum(dy y)), per frame.
class SoftmaxGradConversion : public NNConversionPattern<SoftmaxGradOp> {
public:
  using NNConversionPattern::NNConversionPattern;

  FailureOr<SmallVector<Value>> build(SoftmaxGradOp op, OpAdaptor adaptor,
                                      LinalgBuilder &lb) const override {
    NNTensorType type = typeOf(op.getResult());
    Type element = type.getElementType();
    Value products =
        lb.map(type, {adaptor.getGrad(), adaptor.getOutput()},
               [](Scalar &s, ValueRange a) { return s.mul(a[0], a[1]); });
    Value sum = lb.reduceLast(products, {}, element, 0.0,
                              [](Scalar &s, Value e, ValueRange, Value acc) {
                                return s.addReassoc(acc, e);
                              });
    return SmallVector<Value>{
        lb.mapWithRow(type, {adaptor.getGrad(), adaptor.getOutput()}, sum,
                      [](Scalar &s, ValueRange a, Value rowSum) {
                        return s.mul(a[1], s.sub(a[0], rowSum));
                      })};
  }
};

/// Padded positions selected to 0; nothing to do for other positions.
class ZeroPaddingConversion : public NNConversionPattern<ZeroPaddingOp> {
public:
  using NNConversionPattern::NNConversionPattern;

  FailureOr<SmallVector<Value>> build(ZeroPaddingOp op, OpAdaptor adaptor,
                                      LinalgBuilder &lb) const override {
    SmallVector<Value> lengths =
        lb.paddingLengths(cast<NNTensorType>(op.getType()));
    if (lengths.empty())
      return SmallVector<Value>{adaptor.getInput()};
    return SmallVector<Value>{lb.zeroPadding(adaptor.getInput(), lengths)};
  }
};

/// A slice of the feature axis.
class SliceFeaturesConversion : public NNConversionPattern<SliceFeaturesOp> {
public:
  using NNConversionPattern::NNConversionPattern;

  FailureOr<SmallVector<Value>> build(SliceFeaturesOp op, OpAdaptor adaptor,
                                      LinalgBuilder &lb) const override {
    return SmallVector<Value>{lb.sliceFeatures(
        adaptor.getInput(), static_cast<int64_t>(op.getOffset()),
        static_cast<int64_t>(op.getWidth()))};
  }
};

/// dx = rstd (g - mean(g) - xhat mean(g xhat)), g = dy scale, per frame.
class LayerNormGradInputConversion
    : public NNConversionPattern<LayerNormGradInputOp> {
public:
  using NNConversionPattern::NNConversionPattern;

  FailureOr<SmallVector<Value>> build(LayerNormGradInputOp op,
                                      OpAdaptor adaptor,
                                      LinalgBuilder &lb) const override {
    OpBuilder &b = lb.getBuilder();
    NNTensorType type = typeOf(op.getResult());
    Type element = type.getElementType();
    unsigned rank = type.getRank();
    double inverse = 1.0 / double(type.getStaticSize(rank - 1));
    Value x = adaptor.getInput(), dy = adaptor.getGrad();
    auto [mean, rstd] =
        layerNormStats(lb, x, type, op.getEpsilon().convertToDouble());
    AffineMap identity = b.getMultiDimIdentityMap(rank);
    AffineMap dropLast = identity.dropResult(rank - 1);
    AffineMap lastOnly = AffineMap::get(rank, 0, b.getAffineDimExpr(rank - 1));
    // Per frame: sum(g) and sum(g xhat).
    NNTensorType rowType = type.withoutLastAxis();
    Value zero = lb.filled(lb.sizes(rowType), element, 0.0);
    auto sums = b.create<linalg::GenericOp>(
        lb.getLoc(), TypeRange{zero.getType(), zero.getType()},
        ValueRange{dy, adaptor.getScale(), x, mean, rstd},
        ValueRange{zero, zero},
        ArrayRef<AffineMap>{identity, lastOnly, identity, dropLast, dropLast,
                            dropLast, dropLast},
        [&] {
          SmallVector<IteratorType> iterators(rank, IteratorType::parallel);
          iterators.back() = IteratorType::reduction;
          return iterators;
        }(),
        [&](OpBuilder &nested, Location l, ValueRange a) {
          Scalar s{nested, l};
          Value g = s.mul(a[0], a[1]);
          Value xhat = s.mul(s.sub(a[2], a[3]), a[4]);
          nested.create<linalg::YieldOp>(
              l, ValueRange{s.addReassoc(a[5], g),
                            s.addReassoc(a[6], s.mul(g, xhat))});
        });
    Value init = lb.empty(lb.sizes(type), element);
    return SmallVector<Value>{lb.generic(
        init.getType(),
        {dy, adaptor.getScale(), x, mean, rstd, sums.getResult(0),
         sums.getResult(1)},
        init,
        {identity, lastOnly, identity, dropLast, dropLast, dropLast, dropLast,
         identity},
        SmallVector<IteratorType>(rank, IteratorType::parallel),
        [&](OpBuilder &nested, Location l, ValueRange a) {
          Scalar s{nested, l};
          Value g = s.mul(a[0], a[1]);
          Value xhat = s.mul(s.sub(a[2], a[3]), a[4]);
          Value meanG = s.mul(a[5], s.f(element, inverse));
          Value meanGx = s.mul(a[6], s.f(element, inverse));
          Value dx = s.mul(a[4], s.sub(s.sub(g, meanG), s.mul(xhat, meanGx)));
          nested.create<linalg::YieldOp>(l, dx);
        })};
  }
};

/// dscale = sum over valid positions of dy xhat.
class LayerNormGradScaleConversion
    : public NNConversionPattern<LayerNormGradScaleOp> {
public:
  using NNConversionPattern::NNConversionPattern;

  FailureOr<SmallVector<Value>> build(LayerNormGradScaleOp op,
                                      OpAdaptor adaptor,
                                      LinalgBuilder &lb) const override {
    OpBuilder &b = lb.getBuilder();
    NNTensorType inputType = typeOf(op.getInput());
    NNTensorType type = typeOf(op.getResult());
    unsigned rank = inputType.getRank();
    Value x = adaptor.getInput();
    auto [mean, rstd] =
        layerNormStats(lb, x, inputType, op.getEpsilon().convertToDouble());
    SmallVector<Value> lengths = lb.paddingLengths(inputType);
    Value init = lb.filled(lb.sizes(type), type.getElementType(), 0.0);
    AffineMap identity = b.getMultiDimIdentityMap(rank);
    AffineMap dropLast = identity.dropResult(rank - 1);
    SmallVector<AffineMap> maps{identity, identity, dropLast, dropLast};
    maps.append(lengths.size(), AffineMap::get(rank, 0, b.getAffineDimExpr(0)));
    maps.push_back(AffineMap::get(rank, 0, b.getAffineDimExpr(rank - 1)));
    SmallVector<IteratorType> iterators(rank, IteratorType::reduction);
    iterators.back() = IteratorType::parallel;
    SmallVector<Value> inputs{adaptor.getGrad(), x, mean, rstd};
    inputs.append(lengths);
    return SmallVector<Value>{lb.generic(
        init.getType(), inputs, init, maps, iterators,
        [&](OpBuilder &nested, Location l, ValueRange a) {
          Scalar s{nested, l};
          Value xhat = s.mul(s.sub(a[1], a[2]), a[3]);
          nested.create<linalg::YieldOp>(l, LinalgBuilder::accumulateIfValid(
                                                s, a.back(), s.mul(a[0], xhat),
                                                a.drop_front(4).drop_back()));
        })};
  }
};

/// dtable(v, f) = sum over valid positions p with index(p) = v of dy(p, f).
/// A dense reduction over (p..., v, f): simple, and O(V) per position; a
/// scatter loop is the faster form for large vocabularies.
/// A scatter-add: loops over the positions (an scf.for per axis) and, at
/// each valid position whose index is in the table, over the features,
/// adding the position's gradient row to the indexed row: O(positions x F),
/// not O(positions x V x F). Invalid positions and out-of-range indices
/// get a feature loop of 0 trips (the forward read zeros for them).
class EmbeddingGradConversion : public NNConversionPattern<EmbeddingGradOp> {
public:
  using NNConversionPattern::NNConversionPattern;

  FailureOr<SmallVector<Value>> build(EmbeddingGradOp op, OpAdaptor adaptor,
                                      LinalgBuilder &lb) const override {
    OpBuilder &b = lb.getBuilder();
    Location loc = lb.getLoc();
    NNTensorType indicesType = typeOf(op.getIndices());
    NNTensorType type = typeOf(op.getResult());
    unsigned positions = indicesType.getRank();
    SmallVector<Value> lengths = lb.paddingLengths(indicesType);
    Value dy = adaptor.getGrad(), indices = adaptor.getIndices();
    int64_t vocabulary = type.getStaticSize(0),
            features = type.getStaticSize(1);
    Value table = lb.filled(lb.sizes(type), type.getElementType(), 0.0);
    SmallVector<Value> ivs;
    std::function<Value(OpBuilder &, Location, unsigned, Value)> loop =
        [&](OpBuilder &ob, Location l, unsigned axis, Value acc) -> Value {
      Scalar s{ob, l};
      if (axis == positions) {
        // One position: its index and whether its row counts.
        Value id = s.toIndex(ob.create<tensor::ExtractOp>(l, indices, ivs));
        Value counts = s.andI(s.ge(id, s.idx(0)), s.lt(id, s.idx(vocabulary)));
        for (auto [i, length] : llvm::enumerate(lengths)) {
          Value limit = s.toIndex(
              ob.create<tensor::ExtractOp>(l, length, ValueRange{ivs[0]}));
          counts = s.andI(counts, s.lt(ivs[i + 1], limit));
        }
        Value row = s.select(counts, id, s.idx(0));
        Value trips = s.select(counts, s.idx(features), s.idx(0));
        auto featureLoop = ob.create<scf::ForOp>(
            l, s.idx(0), trips, s.idx(1), ValueRange{acc},
            [&](OpBuilder &fb, Location fl, Value f, ValueRange state) {
              Scalar q{fb, fl};
              SmallVector<Value> at(ivs);
              at.push_back(f);
              Value g = fb.create<tensor::ExtractOp>(fl, dy, at);
              Value old = fb.create<tensor::ExtractOp>(fl, state[0],
                                                       ValueRange{row, f});
              fb.create<scf::YieldOp>(
                  fl, fb.create<tensor::InsertOp>(fl, q.add(old, g), state[0],
                                                  ValueRange{row, f})
                          .getResult());
            });
        return featureLoop.getResult(0);
      }
      Value size = ob.create<tensor::DimOp>(l, indices, axis);
      auto forOp = ob.create<scf::ForOp>(
          l, s.idx(0), size, s.idx(1), ValueRange{acc},
          [&](OpBuilder &nb, Location nl, Value iv, ValueRange state) {
            ivs.push_back(iv);
            Value next = loop(nb, nl, axis + 1, state[0]);
            ivs.pop_back();
            nb.create<scf::YieldOp>(nl, next);
          });
      return forOp.getResult(0);
    };
    return SmallVector<Value>{loop(b, loc, 0, table)};
  }
};

} // namespace

void mlir::nn::populateFrameWiseConversionPatterns(
    const TypeConverter &converter, ConversionState &state,
    RewritePatternSet &patterns) {
  patterns.add<LinearConversion, ElementwiseConversion<AddOp>,
               ElementwiseConversion<MulOp>, ElementwiseConversion<ReluOp>,
               ElementwiseConversion<TanhOp>, ElementwiseConversion<SigmoidOp>,
               ElementwiseConversion<GeluOp>, ElementwiseConversion<SiluOp>,
               GluConversion, GluGradConversion, ScaleConversion,
               SoftmaxConversion, LogSoftmaxConversion, DropoutConversion,
               SpecAugmentConversion, LayerNormConversion, EmbeddingConversion,
               ConcatConversion, LinearGradInputConversion,
               LinearGradWeightConversion, SumPositionsConversion,
               ActivationGradConversion, LogSoftmaxGradConversion,
               SoftmaxGradConversion, SliceFeaturesConversion,
               ZeroPaddingConversion, LayerNormGradInputConversion,
               LayerNormGradScaleConversion, EmbeddingGradConversion>(converter,
                                                                      state);
}
