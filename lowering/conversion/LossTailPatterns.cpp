//===- LossTailPatterns.cpp - linear + cross entropy without the logits ---===//
//
// The three ops of the fused loss tail lower to one sweep over blocks of
// rows (positions flattened): per block, the logits [rows, V] come from one
// GEMM (bias broadcast first), a row maximum and one pass of exp give the
// log-sum-exp, the target's logit is read where it lies, and the block's
// loss rows are written. With gradients the same block turns into
// dz = w_row (softmax - q) in place, and two more GEMMs take dz W into the
// input gradient's rows and accumulate dz^T x into the weight gradient;
// the bias gradient sums dz over the block's rows. No [N, V] buffer
// exists; the largest is one block of logits. docs/loss-tail.md.
//
//===----------------------------------------------------------------------===//

#include "lowering/conversion/Patterns.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Arith/Utils/Utils.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"

#include <algorithm>
#include <limits>

using namespace mlir;
using namespace mlir::nn;

using utils::IteratorType;

namespace {

NNTensorType typeOf(Value v) { return cast<NNTensorType>(v.getType()); }

/// A block of logits holds about this many values (10 MB of f32).
/// Measured (docs/performance.md, "Fused loss tail"): the block must be
/// tall enough that the GEMMs, which repack the weight for every call,
/// stay near their full-size speed; at V = 10000, 64 rows cost 28% more
/// than 256, and 1024 rows gained 3% for four times the memory.
constexpr int64_t kBlockElements = 2560000;

/// Rows per block for `classes` classes: a multiple of 16 in [64, 4096].
int64_t rowsPerBlock(int64_t classes) {
  return std::clamp<int64_t>(kBlockElements / classes, 64, 4096) / 16 * 16;
}

/// What one sweep computes. `rowGrad` (per row, [R]) or `seedScale` (a
/// rank-0 f64 tensor: the same gradient at every valid row) weights the
/// logits' gradient; with neither, the sweep computes the loss only.
struct SweepRequest {
  Value input, weight, bias, targets;
  NNTensorType inputType;
  double smoothing = 0.0;
  Value rowGrad;
  Value seedScale;
  bool loss = true;
  bool inputGrad = false, weightGrad = false, biasGrad = false;
  bool grads() const { return inputGrad || weightGrad || biasGrad; }
};

struct SweepResult {
  Value loss, inputGrad, weightGrad, biasGrad;
};

/// The weight of each row's logits gradient, [P...]: the row's gradient
/// (or the seed scale) at valid positions, 0 at padded ones (selected:
/// whatever the gradient holds there never reaches a sum).
Value rowWeights(LinalgBuilder &lb, const SweepRequest &request,
                 NNTensorType lossType) {
  OpBuilder &b = lb.getBuilder();
  Type element = lossType.getElementType();
  unsigned rank = lossType.getRank();
  SmallVector<Value> lengths = lb.paddingLengths(lossType);
  Value init = lb.empty(lb.sizes(lossType), element);
  SmallVector<Value> inputs;
  SmallVector<AffineMap> maps;
  AffineMap identity = b.getMultiDimIdentityMap(rank);
  if (request.rowGrad) {
    inputs.push_back(request.rowGrad);
    maps.push_back(identity);
  } else {
    inputs.push_back(request.seedScale);
    maps.push_back(AffineMap::get(rank, 0, b.getContext()));
  }
  inputs.append(lengths);
  maps.append(lengths.size(), AffineMap::get(rank, 0, b.getAffineDimExpr(0)));
  maps.push_back(identity);
  return lb.generic(
      init.getType(), inputs, init, maps,
      SmallVector<IteratorType>(rank, IteratorType::parallel),
      [&](OpBuilder &nested, Location l, ValueRange a) {
        Scalar s{nested, l};
        Value weight = a[0];
        if (weight.getType() != element)
          weight = nested.create<arith::TruncFOp>(l, element, weight);
        Value valid =
            LinalgBuilder::isValidPosition(s, a.drop_front().drop_back());
        nested.create<linalg::YieldOp>(
            l, valid ? s.select(valid, weight, s.f(element, 0.0)) : weight);
      });
}

/// The seed loss_seed would give: scale / inv_norm (0 for a loss over no
/// frames), or scale, as a rank-0 f64 tensor. `invNorm` (a rank-0 f64
/// tensor), when given, is the factor; otherwise `normalization` over the
/// loss's positions gives it.
Value seedScale(LinalgBuilder &lb, NNTensorType lossType,
                LossNormalization normalization, Value invNorm, double scale,
                bool unnormalized, Operation *op) {
  OpBuilder &b = lb.getBuilder();
  Location loc = lb.getLoc();
  Scalar s{b, loc};
  Type f64 = b.getF64Type();
  auto scalarType = RankedTensorType::get({}, f64);
  if (unnormalized)
    return b.create<tensor::FromElementsOp>(loc, scalarType,
                                            ValueRange{s.f(f64, scale)});
  Value norm = invNorm;
  if (!norm) {
    FailureOr<Positions> positions = classifyPositions(
        lossType, lb.getDims().getDecls(), [&] { return op->emitOpError(); });
    assert(succeeded(positions) && "the verifier checked the dims");
    norm = inverseNormalization(lb, *positions, normalization);
  }
  Value init = lb.empty({}, f64);
  return lb.generic(
      scalarType, norm, init,
      {AffineMap::get(0, 0, b.getContext()),
       AffineMap::get(0, 0, b.getContext())},
      {}, [&](OpBuilder &nested, Location l, ValueRange a) {
        Scalar q{nested, l};
        Value zero = q.f(f64, 0.0);
        nested.create<linalg::YieldOp>(
            l, q.select(q.feq(a[0], zero), zero, q.div(q.f(f64, scale), a[0])));
      });
}

/// `x` [n, I] with the rows whose weight is 0 zeroed (selected), in a new
/// buffer: NaN in padding never reaches the weight gradient's sum.
Value zeroUnweightedRows(LinalgBuilder &lb, Value x, Value weights) {
  OpBuilder &b = lb.getBuilder();
  auto type = cast<RankedTensorType>(x.getType());
  Type element = type.getElementType();
  Value init =
      lb.empty(tensor::getMixedSizes(b, lb.getLoc(), x), type.getElementType());
  AffineMap identity = b.getMultiDimIdentityMap(2);
  return lb.generic(type, {x, weights}, init,
                    {identity, identity.dropResult(1), identity},
                    {IteratorType::parallel, IteratorType::parallel},
                    [&](OpBuilder &nested, Location l, ValueRange a) {
                      Scalar s{nested, l};
                      Value zero = s.f(element, 0.0);
                      nested.create<linalg::YieldOp>(
                          l, s.select(s.feq(a[1], zero), zero, a[0]));
                    });
}

/// One block's logits: x [n, I] W^T + bias, [n, V].
Value blockLogits(LinalgBuilder &lb, Value x, Value weight, Value bias) {
  OpBuilder &b = lb.getBuilder();
  Location loc = lb.getLoc();
  auto weightType = cast<RankedTensorType>(weight.getType());
  Type element = weightType.getElementType();
  SmallVector<OpFoldResult> shape{tensor::getMixedSize(b, loc, x, 0),
                                  b.getIndexAttr(weightType.getDimSize(0))};
  Value init;
  if (bias) {
    AffineMap identity = b.getMultiDimIdentityMap(2);
    init = lb.generic(
        RankedTensorType::get({ShapedType::kDynamic, weightType.getDimSize(0)},
                              element),
        bias, lb.empty(shape, element),
        {AffineMap::get(2, 0, b.getAffineDimExpr(1)), identity},
        {IteratorType::parallel, IteratorType::parallel},
        [&](OpBuilder &nested, Location l, ValueRange a) {
          nested.create<linalg::YieldOp>(l, a[0]);
        });
  } else {
    init = lb.filled(shape, element, 0.0);
  }
  return b
      .create<linalg::MatmulTransposeBOp>(
          loc, init.getType(), ValueRange{x, weight}, ValueRange{init})
      .getResult(0);
}

/// The sweep. Rows are the input's positions flattened; each block of
/// rowsPerBlock(V) rows is computed from its own logits alone.
SweepResult buildSweep(LinalgBuilder &lb, const SweepRequest &request) {
  OpBuilder &b = lb.getBuilder();
  Location loc = lb.getLoc();
  const BoundDims &dims = lb.getDims();
  NNTensorType inputType = request.inputType;
  NNTensorType lossType = NNTensorType::get(inputType.getDims().drop_back(),
                                            inputType.getElementType());
  Type element = inputType.getElementType();
  unsigned positions = lossType.getRank();
  auto weightType = cast<RankedTensorType>(request.weight.getType());
  int64_t classes = weightType.getDimSize(0);
  int64_t features = weightType.getDimSize(1);
  double smoothing = request.smoothing;
  Value weight = request.weight;
  Value bias = request.bias;

  Value x = toRows(b, loc, request.input, positions);
  Value targets = toRows(b, loc, request.targets, positions);
  Value weights;
  if (request.grads())
    weights = toRows(b, loc, rowWeights(lb, request, lossType), positions);
  // Padded rows hold anything: with gradients, each block's rows are
  // copied with the unweighted ones zeroed.
  bool maskRows = request.grads() && !lb.paddingLengths(lossType).empty();

  Value rows = b.create<tensor::DimOp>(loc, x, 0);
  SmallVector<Value> inits;
  if (request.loss)
    inits.push_back(lb.empty({rows}, element));
  if (request.inputGrad)
    inits.push_back(lb.empty({rows, b.getIndexAttr(features)}, element));
  if (request.weightGrad)
    inits.push_back(lb.filled(
        {b.getIndexAttr(classes), b.getIndexAttr(features)}, element, 0.0));
  if (request.biasGrad)
    inits.push_back(lb.filled({b.getIndexAttr(classes)}, element, 0.0));

  Value zeroIndex = b.create<arith::ConstantIndexOp>(loc, 0);
  Value step = b.create<arith::ConstantIndexOp>(loc, rowsPerBlock(classes));
  auto loop = b.create<scf::ForOp>(
      loc, zeroIndex, rows, step, inits,
      [&](OpBuilder &nb, Location l, Value first, ValueRange carried) {
        LinalgBuilder bb(nb, l, dims);
        Scalar s{nb, l};
        Value count =
            nb.create<arith::MinSIOp>(l, step, s.sub(rows, first)).getResult();
        OpFoldResult n = count;
        OpFoldResult zero = nb.getIndexAttr(0), one = nb.getIndexAttr(1);
        auto rowsOf = [&](Value value) -> Value {
          auto type = cast<RankedTensorType>(value.getType());
          SmallVector<OpFoldResult> offsets(type.getRank(), zero);
          SmallVector<OpFoldResult> sizes{n};
          for (int64_t i = 1; i < type.getRank(); ++i)
            sizes.push_back(nb.getIndexAttr(type.getDimSize(i)));
          offsets[0] = first;
          return nb.create<tensor::ExtractSliceOp>(
              l, value, offsets, sizes,
              SmallVector<OpFoldResult>(type.getRank(), one));
        };
        auto intoRows = [&](Value part, Value whole) -> Value {
          auto type = cast<RankedTensorType>(whole.getType());
          SmallVector<OpFoldResult> offsets(type.getRank(), zero);
          offsets[0] = first;
          return nb.create<tensor::InsertSliceOp>(
              l, part, whole, offsets, tensor::getMixedSizes(nb, l, part),
              SmallVector<OpFoldResult>(type.getRank(), one));
        };

        Value xb = rowsOf(x);
        Value tb = rowsOf(targets);
        Value wb = weights ? rowsOf(weights) : Value();
        if (maskRows)
          xb = zeroUnweightedRows(bb, xb, wb);
        Value z = blockLogits(bb, xb, weight, bias);

        // Row maximum, then sum exp(z - max) (and sum z for smoothing).
        Value max = bb.reduceLast(
            z, {}, element, -std::numeric_limits<double>::infinity(),
            [](Scalar &q, Value e, ValueRange, Value acc) -> Value {
              return q.max(e, acc);
            });
        AffineMap identity = nb.getMultiDimIdentityMap(2);
        AffineMap row = identity.dropResult(1);
        SmallVector<Value> sums{bb.filled({n}, element, 0.0)};
        if (smoothing != 0.0)
          sums.push_back(bb.filled({n}, element, 0.0));
        SmallVector<AffineMap> sumMaps{identity, row};
        sumMaps.append(sums.size(), row);
        auto sumOp = nb.create<linalg::GenericOp>(
            l, TypeRange(ValueRange(sums)), ValueRange{z, max}, sums, sumMaps,
            SmallVector<IteratorType>{IteratorType::parallel,
                                      IteratorType::reduction},
            [&](OpBuilder &inner, Location il, ValueRange a) {
              Scalar q{inner, il};
              SmallVector<Value> next{
                  q.addReassoc(a[2], q.exp(q.sub(a[0], a[1])))};
              if (smoothing != 0.0)
                next.push_back(q.addReassoc(a[3], a[0]));
              inner.create<linalg::YieldOp>(il, next);
            });
        Value sumExp = sumOp.getResult(0);

        // Per row: lse = max + log(sum), and the loss.
        SmallVector<Value> rowInputs{max, sumExp, tb};
        if (smoothing != 0.0)
          rowInputs.push_back(sumOp.getResult(1));
        AffineMap rowIdentity = nb.getMultiDimIdentityMap(1);
        // The loss rows are written in place into the loss's rows.
        SmallVector<Value> rowOutputs{request.loss ? rowsOf(carried[0])
                                                   : bb.empty({n}, element),
                                      bb.empty({n}, element)};
        SmallVector<AffineMap> rowMaps(rowInputs.size() + rowOutputs.size(),
                                       rowIdentity);
        auto rowOp = nb.create<linalg::GenericOp>(
            l, TypeRange(ValueRange(rowOutputs)), rowInputs, rowOutputs,
            rowMaps, SmallVector<IteratorType>{IteratorType::parallel},
            [&](OpBuilder &inner, Location il, ValueRange a) {
              Scalar q{inner, il};
              Value lse = q.add(a[0], q.log(a[1]));
              Value picked = inner.create<tensor::ExtractOp>(
                  il, z,
                  ValueRange{q.index(0), q.clampIndex(a[2], q.idx(classes))});
              Value targetLogProb = q.sub(picked, lse);
              Value loss = q.neg(targetLogProb);
              if (smoothing != 0.0) {
                // -((1-eps) lp(y) + eps/(V-1) (sum_c lp(c) - lp(y))),
                // sum_c lp(c) = sum_c z(c) - V lse.
                Value sumLogProbs =
                    q.sub(a[3], q.mul(q.f(element, classes), lse));
                Value others = q.sub(sumLogProbs, targetLogProb);
                loss = q.neg(
                    q.add(q.mul(q.f(element, 1.0 - smoothing), targetLogProb),
                          q.mul(q.f(element, smoothing / double(classes - 1)),
                                others)));
              }
              inner.create<linalg::YieldOp>(il, ValueRange{loss, lse});
            });

        SmallVector<Value> results;
        unsigned next = 0;
        if (request.loss)
          results.push_back(intoRows(rowOp.getResult(0), carried[next++]));
        if (!request.grads()) {
          nb.create<scf::YieldOp>(l, results);
          return;
        }

        // dz = w_row (exp(z - lse) - q), in place of the logits.
        Value lse = rowOp.getResult(1);
        double onTarget = 1.0 - smoothing;
        double offTarget = classes > 1 ? smoothing / double(classes - 1) : 0.0;
        Value dz = bb.generic(
            z.getType(), ValueRange{lse, wb, tb}, z, {row, row, row, identity},
            {IteratorType::parallel, IteratorType::parallel},
            [&](OpBuilder &inner, Location il, ValueRange a) {
              Scalar q{inner, il};
              Value p = q.exp(q.sub(a[3], a[0]));
              Value target = q.clampIndex(a[2], q.idx(classes));
              Value isTarget = inner.create<arith::CmpIOp>(
                  il, arith::CmpIPredicate::eq, q.index(1), target);
              Value want = q.select(isTarget, q.f(element, onTarget),
                                    q.f(element, offTarget));
              inner.create<linalg::YieldOp>(il, q.mul(a[1], q.sub(p, want)));
            });

        if (request.inputGrad) {
          // dx rows = dz W, written into the gradient's rows.
          Value slice = rowsOf(carried[next]);
          Value filled = bb.fill(slice, 0.0);
          Value product = nb.create<linalg::MatmulOp>(l, filled.getType(),
                                                      ValueRange{dz, weight},
                                                      ValueRange{filled})
                              .getResult(0);
          results.push_back(intoRows(product, carried[next++]));
        }
        if (request.weightGrad) {
          // dW += dz^T x: loops (p, o, i), the rows contracted.
          MLIRContext *context = nb.getContext();
          AffineExpr p = getAffineDimExpr(0, context),
                     o = getAffineDimExpr(1, context),
                     i = getAffineDimExpr(2, context);
          SmallVector<AffineMap> maps{AffineMap::get(3, 0, {p, o}, context),
                                      AffineMap::get(3, 0, {p, i}, context),
                                      AffineMap::get(3, 0, {o, i}, context)};
          results.push_back(bb.generic(
              carried[next].getType(), ValueRange{dz, xb}, carried[next], maps,
              {IteratorType::reduction, IteratorType::parallel,
               IteratorType::parallel},
              [&](OpBuilder &inner, Location il, ValueRange a) {
                Scalar q{inner, il};
                inner.create<linalg::YieldOp>(il,
                                              q.add(a[2], q.mul(a[0], a[1])));
              }));
          ++next;
        }
        if (request.biasGrad) {
          // db += the block's column sums of dz.
          results.push_back(bb.generic(
              carried[next].getType(), dz, carried[next],
              {identity, AffineMap::get(2, 0, nb.getAffineDimExpr(1))},
              {IteratorType::reduction, IteratorType::parallel},
              [&](OpBuilder &inner, Location il, ValueRange a) {
                Scalar q{inner, il};
                inner.create<linalg::YieldOp>(il, q.add(a[1], a[0]));
              }));
          ++next;
        }
        nb.create<scf::YieldOp>(l, results);
      });

  SweepResult result;
  unsigned next = 0;
  SmallVector<OpFoldResult> lossShape = lb.sizes(lossType);
  if (request.loss)
    result.loss =
        fromRows(b, loc, loop.getResult(next++), positions, lossShape);
  if (request.inputGrad) {
    SmallVector<OpFoldResult> shape(lossShape);
    shape.push_back(b.getIndexAttr(features));
    result.inputGrad =
        fromRows(b, loc, loop.getResult(next++), positions, shape);
  }
  if (request.weightGrad)
    result.weightGrad = loop.getResult(next++);
  if (request.biasGrad)
    result.biasGrad = loop.getResult(next++);
  return result;
}

/// An empty tensor of `original`'s lowered shape, for a gradient nobody
/// reads (the conversion still needs a value; nothing computes it).
Value unusedGradient(LinalgBuilder &lb, Value original) {
  NNTensorType type = typeOf(original);
  return lb.empty(lb.sizes(type), type.getElementType());
}

/// The operands and attributes the three fused ops share.
template <typename Op>
SweepRequest requestFor(Op op, typename Op::Adaptor adaptor) {
  SweepRequest request;
  request.input = adaptor.getInput();
  request.weight = adaptor.getWeight();
  request.bias = adaptor.getBias();
  request.targets = adaptor.getTargets();
  request.inputType = typeOf(op.getInput());
  request.smoothing = op.getLabelSmoothing().convertToDouble();
  return request;
}

/// Asks for the gradients `op`'s users read.
template <typename Op> void requestUsedGradients(Op op, SweepRequest &request) {
  request.inputGrad = !op.getInputGrad().use_empty();
  request.weightGrad = !op.getWeightGrad().use_empty();
  request.biasGrad = !op.getBiasGrad().use_empty();
}

/// The input, weight and bias gradients of `op` from `sweep`, an empty
/// tensor for each one nobody reads.
template <typename Op>
SmallVector<Value> gradientValues(LinalgBuilder &lb, Op op,
                                  const SweepResult &sweep) {
  return {
      sweep.inputGrad ? sweep.inputGrad : unusedGradient(lb, op.getInputGrad()),
      sweep.weightGrad ? sweep.weightGrad
                       : unusedGradient(lb, op.getWeightGrad()),
      sweep.biasGrad ? sweep.biasGrad : unusedGradient(lb, op.getBiasGrad())};
}

class LinearCrossEntropyConversion
    : public NNConversionPattern<LinearCrossEntropyOp> {
public:
  using NNConversionPattern::NNConversionPattern;

  FailureOr<SmallVector<Value>> build(LinearCrossEntropyOp op,
                                      OpAdaptor adaptor,
                                      LinalgBuilder &lb) const override {
    SweepRequest request = requestFor(op, adaptor);
    return SmallVector<Value>{buildSweep(lb, request).loss};
  }
};

class LinearCrossEntropyGradConversion
    : public NNConversionPattern<LinearCrossEntropyGradOp> {
public:
  using NNConversionPattern::NNConversionPattern;

  FailureOr<SmallVector<Value>> build(LinearCrossEntropyGradOp op,
                                      OpAdaptor adaptor,
                                      LinalgBuilder &lb) const override {
    SweepRequest request = requestFor(op, adaptor);
    request.rowGrad = adaptor.getGrad();
    request.loss = false;
    requestUsedGradients(op, request);
    SweepResult sweep;
    if (request.grads())
      sweep = buildSweep(lb, request);
    return gradientValues(lb, op, sweep);
  }
};

class LinearCrossEntropyTrainConversion
    : public NNConversionPattern<LinearCrossEntropyTrainOp> {
public:
  using NNConversionPattern::NNConversionPattern;

  FailureOr<SmallVector<Value>> build(LinearCrossEntropyTrainOp op,
                                      OpAdaptor adaptor,
                                      LinalgBuilder &lb) const override {
    SweepRequest request = requestFor(op, adaptor);
    request.seedScale = seedScale(
        lb, typeOf(op.getResult()), op.getNormalization(), adaptor.getInvNorm(),
        op.getScale().convertToDouble(), op.getUnnormalized(), op);
    requestUsedGradients(op, request);
    SweepResult sweep = buildSweep(lb, request);
    SmallVector<Value> results{sweep.loss};
    results.append(gradientValues(lb, op, sweep));
    return results;
  }
};

} // namespace

void mlir::nn::populateLossTailConversionPatterns(
    const TypeConverter &converter, ConversionState &state,
    RewritePatternSet &patterns) {
  patterns.add<LinearCrossEntropyConversion, LinearCrossEntropyGradConversion,
               LinearCrossEntropyTrainConversion>(converter, state);
}
