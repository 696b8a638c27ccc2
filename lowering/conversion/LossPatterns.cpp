//===- LossPatterns.cpp - per-position losses and their two f64 terms -----===//
//
// cross_entropy and mse compute a loss per position (CtcPatterns.cpp has
// ctc_loss); nn.loss_terms sums one over its valid positions in f64 and
// computes its inverse normalization factor, the two values a lowered
// graph returns per loss.
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

/// The f64 sum of `loss` (times `weights`, of the same type, where given)
/// over its valid positions. A position of weight 0 adds exactly 0, even
/// where its loss is infinite or NaN.
Value maskedSum(LinalgBuilder &lb, Value loss, NNTensorType type,
                Value weights = {}) {
  OpBuilder &b = lb.getBuilder();
  unsigned rank = type.getRank();
  Value acc = lb.filled({}, b.getF64Type(), 0.0);
  // Padded losses: one lengths input per sequence axis, read at [b].
  SmallVector<Value> lengths = lb.paddingLengths(type);
  SmallVector<Value> inputs{loss};
  SmallVector<AffineMap> maps{b.getMultiDimIdentityMap(rank)};
  if (weights) {
    inputs.push_back(weights);
    maps.push_back(b.getMultiDimIdentityMap(rank));
  }
  unsigned firstLength = inputs.size();
  inputs.append(lengths);
  maps.append(lengths.size(), AffineMap::get(rank, 0, b.getAffineDimExpr(0)));
  maps.push_back(AffineMap::get(rank, 0, b.getContext()));
  return lb.generic(acc.getType(), inputs, acc, maps,
                    SmallVector<IteratorType>(rank, IteratorType::reduction),
                    [&](OpBuilder &nested, Location l, ValueRange args) {
                      Scalar s{nested, l};
                      Value term = s.toF64(args[0]);
                      if (weights) {
                        Value weight = s.toF64(args[1]);
                        Value zero = s.f(nested.getF64Type(), 0.0);
                        term = s.select(s.feq(weight, zero), zero,
                                        s.mul(term, weight));
                      }
                      nested.create<linalg::YieldOp>(
                          l, LinalgBuilder::accumulateIfValid(
                                 s, args.back(), term,
                                 args.drop_front(firstLength).drop_back()));
                    });
}

/// Inside a generic over the positions of `scores` [P..., C]: the score of
/// class `target` at the current position (the target clamped into
/// range: padded positions may hold anything).
Value pickClass(Scalar &s, Value scores, Value target, unsigned positions,
                int64_t classes) {
  SmallVector<Value> indices;
  for (unsigned i = 0; i < positions; ++i)
    indices.push_back(s.index(i));
  indices.push_back(s.clampIndex(target, s.idx(classes)));
  return s.b.create<tensor::ExtractOp>(s.loc, scores, indices);
}

class CrossEntropyConversion : public NNConversionPattern<CrossEntropyOp> {
public:
  using NNConversionPattern::NNConversionPattern;

  FailureOr<SmallVector<Value>> build(CrossEntropyOp op, OpAdaptor adaptor,
                                      LinalgBuilder &lb) const override {
    OpBuilder &b = lb.getBuilder();
    Value logits = adaptor.getLogits();
    Value targets = adaptor.getTargets();
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
      auto [max, sum] = lb.rowMaxAndSumExp(logits);
      lse = lb.map(type, {max, sum}, [](Scalar &s, ValueRange a) {
        return s.add(a[0], s.log(a[1]));
      });
      rowInputs.push_back(lse);
    }
    Value total;
    if (smoothing != 0.0) {
      total = lb.reduceLast(logits, {}, element, 0.0,
                            [](Scalar &s, Value e, ValueRange, Value acc) {
                              return s.addReassoc(acc, e);
                            });
      rowInputs.push_back(total);
    }
    Value init = lb.empty(lb.sizes(type), element);
    AffineMap identity = b.getMultiDimIdentityMap(rank);
    SmallVector<AffineMap> maps(rowInputs.size() + 1, identity);
    Value result = lb.generic(
        init.getType(), rowInputs, init, maps,
        SmallVector<IteratorType>(rank, IteratorType::parallel),
        [&](OpBuilder &nested, Location l, ValueRange a) {
          Scalar s{nested, l};
          Value picked = pickClass(s, logits, a[0], rank, classes);
          Value zero = s.f(element, 0.0);
          Value shift = fromLogits ? a[1] : zero;
          Value targetLogProb = s.sub(picked, shift);
          Value loss = s.neg(targetLogProb);
          if (smoothing != 0.0) {
            // -( (1-eps) lp(y) + eps/(V-1) (sum_c lp(c) - lp(y)) ),
            // sum_c lp(c) = sum_c x(c) - V lse.
            Value sumLogProbs = s.sub(a[fromLogits ? 2 : 1],
                                      s.mul(s.f(element, classes), shift));
            Value others = s.sub(sumLogProbs, targetLogProb);
            Value weighted = s.add(
                s.mul(s.f(element, 1.0 - smoothing), targetLogProb),
                s.mul(s.f(element, smoothing / double(classes - 1)), others));
            loss = s.neg(weighted);
          }
          nested.create<linalg::YieldOp>(l, loss);
        });
    return SmallVector<Value>{result};
  }
};

/// 1 unless the target's score is at least the row maximum; maximumf
/// propagates NaN and an ordered compare with NaN is false, so a NaN score
/// anywhere in the frame counts as an error.
class FrameErrorConversion : public NNConversionPattern<FrameErrorOp> {
public:
  using NNConversionPattern::NNConversionPattern;

  FailureOr<SmallVector<Value>> build(FrameErrorOp op, OpAdaptor adaptor,
                                      LinalgBuilder &lb) const override {
    OpBuilder &b = lb.getBuilder();
    Value scores = adaptor.getScores();
    NNTensorType scoresType = typeOf(op.getScores());
    NNTensorType type = typeOf(op.getResult());
    Type element = type.getElementType();
    unsigned rank = type.getRank();
    int64_t classes = scoresType.getStaticSize(scoresType.getRank() - 1);
    Value max = lb.reduceLast(scores, {}, element,
                              -std::numeric_limits<double>::infinity(),
                              [](Scalar &s, Value e, ValueRange, Value acc) {
                                return s.max(e, acc);
                              });
    Value init = lb.empty(lb.sizes(type), element);
    AffineMap identity = b.getMultiDimIdentityMap(rank);
    return SmallVector<Value>{lb.generic(
        init.getType(), {adaptor.getTargets(), max}, init,
        {identity, identity, identity},
        SmallVector<IteratorType>(rank, IteratorType::parallel),
        [&](OpBuilder &nested, Location l, ValueRange a) {
          Scalar s{nested, l};
          Value picked = pickClass(s, scores, a[0], rank, classes);
          nested.create<linalg::YieldOp>(
              l, s.select(nested.create<arith::CmpFOp>(
                              l, arith::CmpFPredicate::OGE, picked, a[1]),
                          s.f(element, 0.0), s.f(element, 1.0)));
        })};
  }
};

class MseConversion : public NNConversionPattern<MseOp> {
public:
  using NNConversionPattern::NNConversionPattern;

  FailureOr<SmallVector<Value>> build(MseOp op, OpAdaptor adaptor,
                                      LinalgBuilder &lb) const override {
    OpBuilder &b = lb.getBuilder();
    Value prediction = adaptor.getPrediction();
    Value target = adaptor.getTarget();
    NNTensorType type = typeOf(op.getResult());
    unsigned rank = typeOf(op.getPrediction()).getRank();
    Value init = lb.filled(lb.sizes(type), type.getElementType(), 0.0);
    AffineMap identity = b.getMultiDimIdentityMap(rank);
    SmallVector<IteratorType> iterators(rank, IteratorType::parallel);
    iterators.back() = IteratorType::reduction;
    Value result = lb.generic(
        init.getType(), {prediction, target}, init,
        {identity, identity, identity.dropResult(rank - 1)}, iterators,
        [&](OpBuilder &nested, Location l, ValueRange a) {
          Scalar s{nested, l};
          Value d = s.sub(a[0], a[1]);
          nested.create<linalg::YieldOp>(l, s.addReassoc(a[2], s.mul(d, d)));
        });
    return SmallVector<Value>{result};
  }
};

class LossTermsConversion : public NNConversionPattern<LossTermsOp> {
public:
  using NNConversionPattern::NNConversionPattern;

  FailureOr<SmallVector<Value>> build(LossTermsOp op, OpAdaptor adaptor,
                                      LinalgBuilder &lb) const override {
    NNTensorType type = typeOf(op.getLoss());
    const DimTable &decls = lb.getDims().getDecls();
    FailureOr<Positions> positions =
        classifyPositions(type, decls, [&] { return op.emitOpError(); });
    if (failed(positions))
      return failure();
    Value sum = maskedSum(lb, adaptor.getLoss(), type, adaptor.getWeights());
    Value norm;
    if (adaptor.getWeights() &&
        op.getNormalization() == LossNormalization::per_frame) {
      // The frames, each counted by its weight.
      norm = maskedSum(lb, adaptor.getWeights(), type);
    } else if (op.getNormalization() != LossNormalization::custom) {
      norm = inverseNormalization(lb, *positions, op.getNormalization());
    } else {
      NNTensorType factorType = typeOf(op.getCustomInvNormFactor());
      FailureOr<Positions> factorPositions = classifyPositions(
          factorType, decls, [&] { return op.emitOpError(); });
      if (failed(factorPositions))
        return failure();
      norm = maskedSum(lb, adaptor.getCustomInvNormFactor(), factorType);
    }
    return SmallVector<Value>{sum, norm};
  }
};

class LossNormConversion : public NNConversionPattern<LossNormOp> {
public:
  using NNConversionPattern::NNConversionPattern;

  FailureOr<SmallVector<Value>> build(LossNormOp op, OpAdaptor,
                                      LinalgBuilder &lb) const override {
    FailureOr<Positions> positions = classifyPositions(
        cast<NNTensorType>(op.getPositions()), lb.getDims().getDecls(),
        [&] { return op.emitOpError(); });
    if (failed(positions))
      return failure();
    return SmallVector<Value>{
        inverseNormalization(lb, *positions, op.getNormalization())};
  }
};

} // namespace

Value mlir::nn::inverseNormalization(LinalgBuilder &lb,
                                     const Positions &positions,
                                     LossNormalization normalization) {
  OpBuilder &b = lb.getBuilder();
  Location loc = lb.getLoc();
  Scalar s{b, loc};
  auto scalar = [&](Value value) -> Value {
    return b.create<tensor::FromElementsOp>(
        loc, RankedTensorType::get({}, b.getF64Type()), ValueRange{value});
  };
  switch (normalization) {
  case LossNormalization::sum:
    return scalar(s.f(b.getF64Type(), 1.0));
  case LossNormalization::per_sequence:
    return scalar(s.toF64(lb.getDims().size(positions.batch)));
  case LossNormalization::per_frame: {
    if (positions.kind == PositionKind::Packed)
      return scalar(s.toF64(lb.getDims().size(positions.packed)));
    // Valid positions: sum over b of the product of its lengths.
    SmallVector<Value> lengths;
    for (StringRef sequence : positions.sequences)
      lengths.push_back(lb.getDims().lengths(sequence));
    Value acc = lb.filled({}, b.getF64Type(), 0.0);
    SmallVector<AffineMap> maps(lengths.size(), b.getMultiDimIdentityMap(1));
    maps.push_back(AffineMap::get(1, 0, b.getContext()));
    return lb.generic(
        acc.getType(), lengths, acc, maps, {IteratorType::reduction},
        [&](OpBuilder &nested, Location l, ValueRange a) {
          Scalar q{nested, l};
          Value count = q.toF64(a[0]);
          for (Value other : a.drop_front().drop_back())
            count = q.mul(count, q.toF64(other));
          nested.create<linalg::YieldOp>(l, q.add(a.back(), count));
        });
  }
  case LossNormalization::custom:
    break;
  }
  llvm_unreachable("a custom factor is summed by the caller");
}

namespace {

//===----------------------------------------------------------------------===//
// Gradients of the losses
//===----------------------------------------------------------------------===//

/// scale / inv_norm (or scale) at valid positions, 0 at padded ones.
class LossSeedConversion : public NNConversionPattern<LossSeedOp> {
public:
  using NNConversionPattern::NNConversionPattern;

  FailureOr<SmallVector<Value>> build(LossSeedOp op, OpAdaptor adaptor,
                                      LinalgBuilder &lb) const override {
    OpBuilder &b = lb.getBuilder();
    NNTensorType type = typeOf(op.getResult());
    Type element = type.getElementType();
    unsigned rank = type.getRank();
    double scale = op.getScale().convertToDouble();
    bool normalized = !op.getUnnormalized();
    SmallVector<Value> lengths = lb.paddingLengths(type);
    Value init = lb.empty(lb.sizes(type), element);
    SmallVector<AffineMap> maps{AffineMap::get(rank, 0, b.getContext())};
    maps.append(lengths.size(), AffineMap::get(rank, 0, b.getAffineDimExpr(0)));
    maps.push_back(b.getMultiDimIdentityMap(rank));
    SmallVector<Value> inputs{adaptor.getInvNorm()};
    Value weights = adaptor.getWeights();
    if (weights) {
      inputs.push_back(weights);
      maps.insert(maps.begin() + 1, b.getMultiDimIdentityMap(rank));
    }
    unsigned firstLength = inputs.size();
    inputs.append(lengths);
    return SmallVector<Value>{lb.generic(
        init.getType(), inputs, init, maps,
        SmallVector<IteratorType>(rank, IteratorType::parallel),
        [&](OpBuilder &nested, Location l, ValueRange a) {
          Scalar s{nested, l};
          Type f64 = nested.getF64Type();
          Value seed = s.f(f64, scale);
          if (normalized) {
            Value norm = a[0];
            Value zero = s.f(f64, 0.0);
            seed = s.select(s.feq(norm, zero), zero, s.div(seed, norm));
          }
          if (weights)
            seed = s.mul(seed, s.toF64(a[1]));
          if (element != f64)
            seed = nested.create<arith::TruncFOp>(l, element, seed);
          Value valid = LinalgBuilder::isValidPosition(
              s, a.drop_front(firstLength).drop_back());
          nested.create<linalg::YieldOp>(
              l, valid ? s.select(valid, seed, s.f(element, 0.0)) : seed);
        })};
  }
};

/// dx = g (softmax(x) - q) from logits, -g q from log-probabilities, q the
/// smoothed target distribution.
class CrossEntropyGradConversion
    : public NNConversionPattern<CrossEntropyGradOp> {
public:
  using NNConversionPattern::NNConversionPattern;

  FailureOr<SmallVector<Value>> build(CrossEntropyGradOp op, OpAdaptor adaptor,
                                      LinalgBuilder &lb) const override {
    OpBuilder &b = lb.getBuilder();
    NNTensorType type = typeOf(op.getResult());
    Type element = type.getElementType();
    unsigned rank = type.getRank();
    int64_t classes = type.getStaticSize(rank - 1);
    double smoothing = op.getLabelSmoothing().convertToDouble();
    bool fromLogits = op.getInputKind() == LossInput::logits;
    double onTarget = 1.0 - smoothing;
    double offTarget = classes > 1 ? smoothing / double(classes - 1) : 0.0;
    Value logits = adaptor.getLogits();
    // Per row: the gradient g, the target, and (from logits) the lse.
    SmallVector<Value> rows{adaptor.getGrad(), adaptor.getTargets()};
    if (fromLogits) {
      NNTensorType rowType = typeOf(op.getGrad());
      auto [max, sum] = lb.rowMaxAndSumExp(logits);
      rows.push_back(lb.map(rowType, {max, sum}, [](Scalar &s, ValueRange a) {
        return s.add(a[0], s.log(a[1]));
      }));
    }
    Value init = lb.empty(lb.sizes(type), element);
    AffineMap identity = b.getMultiDimIdentityMap(rank);
    SmallVector<AffineMap> maps{identity};
    maps.append(rows.size(), identity.dropResult(rank - 1));
    maps.push_back(identity);
    SmallVector<Value> inputs{logits};
    inputs.append(rows);
    return SmallVector<Value>{lb.generic(
        init.getType(), inputs, init, maps,
        SmallVector<IteratorType>(rank, IteratorType::parallel),
        [&](OpBuilder &nested, Location l, ValueRange a) {
          Scalar s{nested, l};
          Value x = a[0], g = a[1];
          Value target = s.clampIndex(a[2], s.idx(classes));
          Value isTarget = nested.create<arith::CmpIOp>(
              l, arith::CmpIPredicate::eq, s.index(rank - 1), target);
          Value q = s.select(isTarget, s.f(element, onTarget),
                             s.f(element, offTarget));
          Value d = fromLogits ? s.sub(s.exp(s.sub(x, a[3])), q) : s.neg(q);
          nested.create<linalg::YieldOp>(l, s.mul(g, d));
        })};
  }
};

/// dprediction = 2 g (prediction - target).
class MseGradConversion : public NNConversionPattern<MseGradOp> {
public:
  using NNConversionPattern::NNConversionPattern;

  FailureOr<SmallVector<Value>> build(MseGradOp op, OpAdaptor adaptor,
                                      LinalgBuilder &lb) const override {
    return SmallVector<Value>{lb.mapWithRow(
        typeOf(op.getResult()), {adaptor.getPrediction(), adaptor.getTarget()},
        adaptor.getGrad(), [](Scalar &s, ValueRange a, Value g) {
          Value d = s.sub(a[0], a[1]);
          return s.mul(s.mul(g, s.f(d.getType(), 2.0)), d);
        })};
  }
};

} // namespace

void mlir::nn::populateLossConversionPatterns(const TypeConverter &converter,
                                              ConversionState &state,
                                              RewritePatternSet &patterns) {
  patterns.add<CrossEntropyConversion, FrameErrorConversion, MseConversion,
               LossTermsConversion, LossNormConversion, LossSeedConversion,
               CrossEntropyGradConversion, MseGradConversion>(converter, state);
}
