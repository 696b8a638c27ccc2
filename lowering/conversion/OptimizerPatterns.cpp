//===- OptimizerPatterns.cpp - optimizer updates and gradient norms -------===//
//
// The ops nn-train-step adds after the backward: the global gradient norm,
// the clipping factor and the per-parameter updates. Each update is one
// elementwise linalg.generic over the parameter that yields the parameter
// and its optimizer state together; the per-step scalars (learning rate,
// bias corrections, gradient scale) are rank-0 tensors broadcast into it,
// so they never leave the device, and whatever is per step rather than
// per element (powers of beta) is computed once in a rank-0 generic.
// The parameter regularization loss nn.param_norm and its gradient live
// here too: they are the same sums of squares and elementwise maps over
// parameters.
//
//===----------------------------------------------------------------------===//

#include "lowering/conversion/Patterns.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"

using namespace mlir;
using namespace mlir::nn;

using utils::IteratorType;

namespace {

using ElementFn =
    function_ref<SmallVector<Value>(Scalar &, ValueRange, ValueRange)>;

/// One elementwise generic over the static shape of `tensors[0]`: the
/// same-shaped `tensors` and the rank-0 `scalars` (broadcast) in,
/// `numResults` tensors of that type out. `fn` gets the elements and the
/// scalars and returns the results' elements.
SmallVector<Value> elementwise(LinalgBuilder &lb, ValueRange tensors,
                               ValueRange scalars, unsigned numResults,
                               ElementFn fn) {
  OpBuilder &b = lb.getBuilder();
  Location loc = lb.getLoc();
  auto type = cast<RankedTensorType>(tensors.front().getType());
  unsigned rank = type.getRank();
  AffineMap identity = b.getMultiDimIdentityMap(rank);
  AffineMap broadcast = AffineMap::get(rank, 0, {}, b.getContext());
  SmallVector<Value> inputs(tensors);
  inputs.append(scalars.begin(), scalars.end());
  SmallVector<AffineMap> maps(tensors.size(), identity);
  maps.append(scalars.size(), broadcast);
  maps.append(numResults, identity);
  SmallVector<Value> outputs;
  for (unsigned i = 0; i < numResults; ++i)
    outputs.push_back(
        b.create<tensor::EmptyOp>(loc, type.getShape(), type.getElementType()));
  auto generic = b.create<linalg::GenericOp>(
      loc, TypeRange(outputs), inputs, outputs, maps,
      SmallVector<IteratorType>(rank, IteratorType::parallel),
      [&](OpBuilder &nested, Location l, ValueRange args) {
        Scalar s{nested, l};
        SmallVector<Value> results =
            fn(s, args.take_front(tensors.size()),
               args.slice(tensors.size(), scalars.size()));
        nested.create<linalg::YieldOp>(l, results);
      });
  return generic.getResults();
}

/// A rank-0 computation: the rank-0 tensors `inputs` in, rank-0 tensors of
/// `resultElements` out (the per-step scalars of an update).
SmallVector<Value> scalarComputation(LinalgBuilder &lb, ValueRange inputs,
                                     ArrayRef<Type> resultElements,
                                     ElementFn fn) {
  OpBuilder &b = lb.getBuilder();
  Location loc = lb.getLoc();
  AffineMap none = AffineMap::get(0, 0, {}, b.getContext());
  SmallVector<Value> outputs;
  for (Type element : resultElements)
    outputs.push_back(
        b.create<tensor::EmptyOp>(loc, ArrayRef<int64_t>{}, element));
  SmallVector<AffineMap> maps(inputs.size() + outputs.size(), none);
  auto generic = b.create<linalg::GenericOp>(
      loc, TypeRange(outputs), inputs, outputs, maps, ArrayRef<IteratorType>{},
      [&](OpBuilder &nested, Location l, ValueRange args) {
        Scalar s{nested, l};
        nested.create<linalg::YieldOp>(
            l, fn(s, args.take_front(inputs.size()), {}));
      });
  return generic.getResults();
}

/// The sum of squares of every element of `x`, accumulated in f64, as a
/// rank-0 tensor.
Value sumOfSquares(LinalgBuilder &lb, Value x) {
  OpBuilder &b = lb.getBuilder();
  Location loc = lb.getLoc();
  auto type = cast<RankedTensorType>(x.getType());
  unsigned rank = type.getRank();
  Value init = lb.fill(
      b.create<tensor::EmptyOp>(loc, ArrayRef<int64_t>{}, b.getF64Type()), 0.0);
  return lb.generic(init.getType(), x, init,
                    {b.getMultiDimIdentityMap(rank),
                     AffineMap::get(rank, 0, {}, b.getContext())},
                    SmallVector<IteratorType>(rank, IteratorType::reduction),
                    [&](OpBuilder &nested, Location l, ValueRange args) {
                      Scalar s{nested, l};
                      Value e = s.toF64(args[0]);
                      nested.create<linalg::YieldOp>(
                          l, s.add(args[1], s.mul(e, e)));
                    });
}

/// Sums the squares of every input's elements in f64 and returns `fn` of
/// the total, truncated to f32 (`global_norm` takes the root,
/// `param_norm` the total itself).
Value sumOfSquaresOfAll(LinalgBuilder &lb, ValueRange inputs,
                        function_ref<Value(Scalar &, Value)> fn) {
  SmallVector<Value> sums;
  for (Value input : inputs)
    sums.push_back(sumOfSquares(lb, input));
  Type f32 = lb.getBuilder().getF32Type();
  return scalarComputation(
             lb, sums, {f32},
             [&](Scalar &s, ValueRange a, ValueRange) {
               Value total = a[0];
               for (Value sum : a.drop_front())
                 total = s.add(total, sum);
               return SmallVector<Value>{
                   s.b.create<arith::TruncFOp>(s.loc, f32, fn(s, total))};
             })
      .front();
}

class GlobalNormConversion : public NNConversionPattern<GlobalNormOp> {
public:
  using NNConversionPattern::NNConversionPattern;

  FailureOr<SmallVector<Value>> build(GlobalNormOp, OpAdaptor adaptor,
                                      LinalgBuilder &lb) const override {
    return SmallVector<Value>{sumOfSquaresOfAll(
        lb, adaptor.getInputs(), [](Scalar &s, Value total) -> Value {
          return s.b.create<math::SqrtOp>(s.loc, total);
        })};
  }
};

class ClipFactorConversion : public NNConversionPattern<ClipFactorOp> {
public:
  using NNConversionPattern::NNConversionPattern;

  FailureOr<SmallVector<Value>> build(ClipFactorOp op, OpAdaptor adaptor,
                                      LinalgBuilder &lb) const override {
    double maxNorm = op.getMaxNorm().convertToDouble();
    Type f32 = lb.getBuilder().getF32Type();
    return scalarComputation(
        lb, adaptor.getNorm(), {f32}, [&](Scalar &s, ValueRange a, ValueRange) {
          Type f64 = s.b.getF64Type();
          Value ratio =
              s.div(s.f(f64, maxNorm), s.add(s.toF64(a[0]), s.f(f64, 1e-6)));
          // minimumf keeps a NaN norm NaN (a select would hide it).
          Value factor =
              s.b.create<arith::MinimumFOp>(s.loc, ratio, s.f(f64, 1.0));
          return SmallVector<Value>{
              s.b.create<arith::TruncFOp>(s.loc, f32, factor)};
        });
  }
};

/// Appends the optional gradient scale to an update's rank-0 inputs;
/// where it is among them, if there is one.
std::optional<unsigned> appendScale(SmallVector<Value> &scalars, Value scale) {
  if (!scale)
    return std::nullopt;
  scalars.push_back(scale);
  return scalars.size() - 1;
}

/// A rank-0 f32 value as an element of type `element`.
Value asElement(Scalar &s, Value value, Type element) {
  if (value.getType() == element)
    return value;
  return s.b.create<arith::ExtFOp>(s.loc, element, value);
}

/// The scaled gradient `grad * scale` (scale among `scalars` at
/// `scaleIndex`, or none).
Value scaledGradient(Scalar &s, Value grad, ValueRange scalars,
                     std::optional<unsigned> scaleIndex) {
  if (!scaleIndex)
    return grad;
  return s.mul(grad, asElement(s, scalars[*scaleIndex], grad.getType()));
}

class SgdUpdateConversion : public NNConversionPattern<SgdUpdateOp> {
public:
  using NNConversionPattern::NNConversionPattern;

  FailureOr<SmallVector<Value>> build(SgdUpdateOp op, OpAdaptor adaptor,
                                      LinalgBuilder &lb) const override {
    double decay = op.getWeightDecay().convertToDouble();
    SmallVector<Value> scalars{adaptor.getLr()};
    std::optional<unsigned> scaleIndex =
        appendScale(scalars, adaptor.getGradScale());
    return elementwise(lb, {adaptor.getParam(), adaptor.getGrad()}, scalars, 1,
                       [&](Scalar &s, ValueRange a, ValueRange k) {
                         Type element = a[0].getType();
                         Value g = scaledGradient(s, a[1], k, scaleIndex);
                         if (decay != 0)
                           g = s.add(g, s.mul(s.f(element, decay), a[0]));
                         Value lr = asElement(s, k[0], element);
                         return SmallVector<Value>{s.sub(a[0], s.mul(lr, g))};
                       });
  }
};

class MomentumUpdateConversion : public NNConversionPattern<MomentumUpdateOp> {
public:
  using NNConversionPattern::NNConversionPattern;

  FailureOr<SmallVector<Value>> build(MomentumUpdateOp op, OpAdaptor adaptor,
                                      LinalgBuilder &lb) const override {
    double decay = op.getWeightDecay().convertToDouble();
    double momentum = op.getMomentum().convertToDouble();
    bool nesterov = op.getNesterov();
    SmallVector<Value> scalars{adaptor.getLr()};
    std::optional<unsigned> scaleIndex =
        appendScale(scalars, adaptor.getGradScale());
    return elementwise(
        lb, {adaptor.getParam(), adaptor.getGrad(), adaptor.getVelocity()},
        scalars, 2, [&](Scalar &s, ValueRange a, ValueRange k) {
          Type element = a[0].getType();
          Value mu = s.f(element, momentum);
          Value g = scaledGradient(s, a[1], k, scaleIndex);
          if (decay != 0)
            g = s.add(g, s.mul(s.f(element, decay), a[0]));
          Value velocity = s.add(s.mul(mu, a[2]), g);
          Value direction = nesterov ? s.add(g, s.mul(mu, velocity)) : velocity;
          Value lr = asElement(s, k[0], element);
          return SmallVector<Value>{s.sub(a[0], s.mul(lr, direction)),
                                    velocity};
        });
  }
};

class AdamUpdateConversion : public NNConversionPattern<AdamUpdateOp> {
public:
  using NNConversionPattern::NNConversionPattern;

  FailureOr<SmallVector<Value>> build(AdamUpdateOp op, OpAdaptor adaptor,
                                      LinalgBuilder &lb) const override {
    double beta1 = op.getBeta1().convertToDouble();
    double beta2 = op.getBeta2().convertToDouble();
    double epsilon = op.getEpsilon().convertToDouble();
    double decay = op.getWeightDecay().convertToDouble();
    bool decoupled = op.getDecoupled() && decay != 0;
    Type f32 = lb.getBuilder().getF32Type();
    // Per step: lr / c1, sqrt(c2) and the decoupled decay factor
    // 1 - lr weight_decay, in f64 and then rounded once.
    SmallVector<Value> perStep = scalarComputation(
        lb, {adaptor.getLr(), adaptor.getStep()}, {f32, f32, f32},
        [&](Scalar &s, ValueRange a, ValueRange) {
          Type f64 = s.b.getF64Type();
          Value lr = s.toF64(a[0]);
          Value step = s.b.create<arith::SIToFPOp>(s.loc, f64, a[1]);
          auto correction = [&](double beta) {
            Value power = s.b.create<math::PowFOp>(s.loc, s.f(f64, beta), step);
            return s.sub(s.f(f64, 1.0), power);
          };
          Value stepSize = s.div(lr, correction(beta1));
          Value sqrtC2 = s.b.create<math::SqrtOp>(s.loc, correction(beta2));
          Value keep = s.sub(s.f(f64, 1.0), s.mul(lr, s.f(f64, decay)));
          SmallVector<Value> results;
          for (Value v : {stepSize, sqrtC2, keep})
            results.push_back(s.b.create<arith::TruncFOp>(s.loc, f32, v));
          return results;
        });
    SmallVector<Value> scalars(perStep);
    std::optional<unsigned> scaleIndex =
        appendScale(scalars, adaptor.getGradScale());
    return elementwise(
        lb,
        {adaptor.getParam(), adaptor.getGrad(), adaptor.getM(), adaptor.getV()},
        scalars, 3, [&](Scalar &s, ValueRange a, ValueRange k) {
          Type element = a[0].getType();
          Value param = a[0];
          Value g = scaledGradient(s, a[1], k, scaleIndex);
          if (decay != 0 && !decoupled)
            g = s.add(g, s.mul(s.f(element, decay), param));
          if (decoupled)
            param = s.mul(param, asElement(s, k[2], element));
          Value m = s.add(s.mul(s.f(element, beta1), a[2]),
                          s.mul(s.f(element, 1.0 - beta1), g));
          Value v = s.add(s.mul(s.f(element, beta2), a[3]),
                          s.mul(s.f(element, 1.0 - beta2), s.mul(g, g)));
          Value root = s.b.create<math::SqrtOp>(s.loc, v);
          Value denominator = s.add(s.div(root, asElement(s, k[1], element)),
                                    s.f(element, epsilon));
          Value step =
              s.mul(asElement(s, k[0], element), s.div(m, denominator));
          return SmallVector<Value>{s.sub(param, step), m, v};
        });
  }
};

class ParamNormConversion : public NNConversionPattern<ParamNormOp> {
public:
  using NNConversionPattern::NNConversionPattern;

  FailureOr<SmallVector<Value>> build(ParamNormOp, OpAdaptor adaptor,
                                      LinalgBuilder &lb) const override {
    return SmallVector<Value>{sumOfSquaresOfAll(
        lb, adaptor.getInputs(), [](Scalar &, Value total) { return total; })};
  }
};

class ParamNormGradConversion : public NNConversionPattern<ParamNormGradOp> {
public:
  using NNConversionPattern::NNConversionPattern;

  FailureOr<SmallVector<Value>> build(ParamNormGradOp, OpAdaptor adaptor,
                                      LinalgBuilder &lb) const override {
    return elementwise(lb, adaptor.getInput(), adaptor.getGrad(), 1,
                       [&](Scalar &s, ValueRange a, ValueRange k) {
                         Type element = a[0].getType();
                         Value dl = asElement(s, k[0], element);
                         return SmallVector<Value>{
                             s.mul(s.f(element, 2.0), s.mul(dl, a[0]))};
                       });
  }
};

} // namespace

void mlir::nn::populateOptimizerConversionPatterns(
    const TypeConverter &converter, ConversionState &state,
    RewritePatternSet &patterns) {
  patterns.add<GlobalNormConversion, ClipFactorConversion, SgdUpdateConversion,
               MomentumUpdateConversion, AdamUpdateConversion,
               ParamNormConversion, ParamNormGradConversion>(converter, state);
}
