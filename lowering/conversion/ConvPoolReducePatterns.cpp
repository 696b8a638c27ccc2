//===- ConvPoolReducePatterns.cpp - windows and reductions over time ------===//
//
// conv1d, pool and reduce read only the valid frames of their sequence
// axis: a frame at or past len(b) reads as zero (conv), is skipped (pool,
// reduce), and average windows divide by the frames they really cover.
// conv1d and pool (and their gradients) take padded [B, T, C] or packed
// [N, C] frames alike (SequenceFrames); a packed window never reaches
// into the neighbouring sequence's rows.
//
// A one-group conv1d is GEMMs on its input windows gathered as rows
// (`windowRows`): the forward, the weight gradient and the input
// gradient's taps, which carry the conv's O-fold work, run in
// nn-gemm-to-blas's BLAS call; the gather and the scatter look each
// window's frames up once per tap (`windowSources`, `tapSources`), not
// once per channel. A grouped (depthwise) conv, whose contraction is
// K * C / groups per output, stays one generic per result that looks its
// frames up per element: reading them through the same tables measured
// faster packed but slower padded (a depthwise conv of 96 channels,
// K = 15, B = 32, forward and backward: 145 against 178 ms packed, 240
// against 159 ms padded), so it waits for a layout that serves both.
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

/// A map of `rank` dims whose results are dims `dims`.
AffineMap dimsMap(OpBuilder &b, unsigned rank, ArrayRef<unsigned> dims) {
  SmallVector<AffineExpr> exprs;
  for (unsigned dim : dims)
    exprs.push_back(b.getAffineDimExpr(dim));
  return AffineMap::get(rank, 0, exprs, b.getContext());
}

/// Dims [0, count) followed by `more`.
SmallVector<unsigned> leading(unsigned count, ArrayRef<unsigned> more = {}) {
  SmallVector<unsigned> dims;
  for (unsigned i = 0; i < count; ++i)
    dims.push_back(i);
  llvm::append_range(dims, more);
  return dims;
}

/// `parallel` parallel iterators then `reductions` reduction ones.
SmallVector<IteratorType> iteratorsOf(unsigned parallel, unsigned reductions) {
  SmallVector<IteratorType> iterators(parallel, IteratorType::parallel);
  iterators.append(reductions, IteratorType::reduction);
  return iterators;
}

/// Output frame t' of a conv or pool starts reading its input at
/// t' * stride - offset.
Value windowStart(Scalar &s, Value outFrame, int64_t stride, int64_t offset) {
  return s.sub(s.mul(outFrame, s.idx(stride)), s.idx(offset));
}

/// The first input channel of output channel `o`'s group: with `groups`
/// groups, `o / (outChannels / groups) * inPerGroup`.
Value groupStart(Scalar &s, Value o, int64_t groups, int64_t outChannels,
                 int64_t inPerGroup) {
  Value group =
      s.b.create<arith::DivUIOp>(s.loc, o, s.idx(outChannels / groups));
  return s.mul(group, s.idx(inPerGroup));
}

/// A [positions..., K] index table over the positions of `type` (laid out
/// as `frames`): entry (position, k) is `entry` of the position's sequence,
/// its frame and k. The conv's per-tap tables are these.
Value tapTable(
    LinalgBuilder &lb, const SequenceFrames &frames, NNTensorType type,
    int64_t kernel,
    function_ref<Value(Scalar &, Value sequence, Value frame, Value k)> entry) {
  OpBuilder &b = lb.getBuilder();
  unsigned p = frames.getPositionDims();
  SmallVector<OpFoldResult> shape = lb.sizes(type);
  shape.back() = b.getIndexAttr(kernel);
  Value init = lb.empty(shape, b.getIndexType());
  // Iteration space (positions..., k).
  return lb.generic(init.getType(), {}, init, {b.getMultiDimIdentityMap(p + 1)},
                    iteratorsOf(p + 1, 0),
                    [&](OpBuilder &nested, Location l, ValueRange) {
                      Scalar s{nested, l};
                      auto [sequence, frame] = frames.current(s);
                      nested.create<linalg::YieldOp>(
                          l, entry(s, sequence, frame, s.index(p)));
                    });
}

/// Where each tap of each output position reads, [out positions..., K] of
/// index: the input row (packed) or frame (padded) of frame
/// t' stride - (K - 1) / 2 + k of the position's sequence; -1 where that
/// frame lies outside [0, len_in(b)) or t' is padding. Found once per tap,
/// so that the loops over channels read one entry instead of looking the
/// sequence up.
Value windowSources(LinalgBuilder &lb, const SequenceFrames &in,
                    const SequenceFrames &out, NNTensorType outType,
                    int64_t kernel, int64_t stride) {
  return tapTable(
      lb, out, outType, kernel,
      [&](Scalar &s, Value sequence, Value frame, Value k) {
        Value t = s.add(windowStart(s, frame, stride, (kernel - 1) / 2), k);
        Value valid =
            s.andI(s.lt(frame, out.length(s, sequence)),
                   s.andI(s.ge(t, s.idx(0)), s.lt(t, in.length(s, sequence))));
        Value source = in.isPacked() ? s.add(in.firstRow(s, sequence), t) : t;
        return s.select(valid, source, s.idx(-1));
      });
}

/// The other direction, for input gradients: [in positions..., K] of
/// index, the output row (packed) or frame (padded) t' whose tap k reads
/// the position's frame s, s = t' stride - (K - 1) / 2 + k; -1 where no
/// output frame does (s + pad - k not a multiple of the stride, t' past
/// len_out(b)) or s is padding.
Value tapSources(LinalgBuilder &lb, const SequenceFrames &in,
                 const SequenceFrames &out, NNTensorType inType, int64_t kernel,
                 int64_t stride) {
  return tapTable(
      lb, in, inType, kernel,
      [&](Scalar &s, Value sequence, Value frame, Value k) {
        Value numerator = s.sub(s.add(frame, s.idx((kernel - 1) / 2)), k);
        Value strideIdx = s.idx(stride);
        Value t = s.b.create<arith::DivSIOp>(s.loc, numerator, strideIdx);
        Value remainder =
            s.b.create<arith::RemSIOp>(s.loc, numerator, strideIdx);
        Value valid = s.andI(s.ge(numerator, s.idx(0)),
                             s.andI(s.lt(remainder, s.idx(1)),
                                    s.lt(t, out.length(s, sequence))));
        valid = s.andI(valid, s.lt(frame, in.length(s, sequence)));
        Value source = out.isPacked() ? s.add(out.firstRow(s, sequence), t) : t;
        return s.select(valid, source, s.idx(-1));
      });
}

/// The conv's input windows as rows, [out positions..., K * C] ("im2col"):
/// entry (position, k * C + c) is channel c of the input frame tap k of the
/// output position reads, zero where `windowSources` says -1. With one
/// group the conv and both its gradients are then GEMMs against the weight
/// as [O, K * C] (nn-gemm-to-blas).
Value windowRows(LinalgBuilder &lb, const SequenceFrames &in,
                 const SequenceFrames &out, NNTensorType outType, Value x,
                 int64_t kernel, int64_t stride, int64_t channels,
                 Type element) {
  OpBuilder &b = lb.getBuilder();
  unsigned p = out.getPositionDims();
  Value sources = windowSources(lb, in, out, outType, kernel, stride);
  SmallVector<OpFoldResult> shape = lb.sizes(outType);
  shape.back() = b.getIndexAttr(kernel);
  shape.push_back(b.getIndexAttr(channels));
  Value init = lb.empty(shape, element);
  // Iteration space (out positions..., k, c).
  Value windows = lb.generic(
      init.getType(), {sources}, init,
      {dimsMap(b, p + 2, leading(p + 1)), b.getMultiDimIdentityMap(p + 2)},
      iteratorsOf(p + 2, 0), [&](OpBuilder &nested, Location l, ValueRange a) {
        Scalar s{nested, l};
        Value valid = s.ge(a[0], s.idx(0));
        Value v =
            in.readAt(s, x, s.select(valid, a[0], s.idx(0)), s.index(p + 1));
        nested.create<linalg::YieldOp>(l,
                                       s.select(valid, v, s.f(element, 0.0)));
      });
  SmallVector<ReassociationIndices> groups;
  for (unsigned i = 0; i < p; ++i)
    groups.push_back({static_cast<int64_t>(i)});
  groups.push_back({static_cast<int64_t>(p), static_cast<int64_t>(p) + 1});
  return b.create<tensor::CollapseShapeOp>(lb.getLoc(), windows, groups);
}

/// A conv weight [O, K, C] as the GEMM operand [O, K * C].
Value weightRows(LinalgBuilder &lb, Value w) {
  return lb.getBuilder().create<tensor::CollapseShapeOp>(
      lb.getLoc(), w, SmallVector<ReassociationIndices>{{0}, {1, 2}});
}

class Conv1dConversion : public NNConversionPattern<Conv1dOp> {
public:
  using NNConversionPattern::NNConversionPattern;

  FailureOr<SmallVector<Value>> build(Conv1dOp op, OpAdaptor adaptor,
                                      LinalgBuilder &lb) const override {
    OpBuilder &b = lb.getBuilder();
    NNTensorType type = typeOf(op.getResult());
    SequenceFrames in(lb, typeOf(op.getInput())), out(lb, type);
    Value x = adaptor.getInput();
    Value w = adaptor.getWeight();
    Value bias = op.getBias() ? adaptor.getBias() : Value();
    auto wType = cast<RankedTensorType>(w.getType());
    int64_t kernel = wType.getDimSize(1);
    int64_t stride = op.getStride();
    auto groups = static_cast<int64_t>(op.getGroups());
    int64_t outChannels = wType.getDimSize(0), inPerGroup = wType.getDimSize(2);
    Type element = type.getElementType();
    if (groups == 1)
      return SmallVector<Value>{lb.linear(
          windowRows(lb, in, out, type, x, kernel, stride, inPerGroup, element),
          weightRows(lb, w), bias)};
    unsigned p = out.getPositionDims();
    Value init = lb.filled(lb.sizes(type), element, 0.0);
    if (bias)
      init =
          lb.generic(init.getType(), bias, init,
                     {dimsMap(b, p + 1, {p}), b.getMultiDimIdentityMap(p + 1)},
                     iteratorsOf(p + 1, 0),
                     [&](OpBuilder &nested, Location l, ValueRange a) {
                       nested.create<linalg::YieldOp>(l, a[0]);
                     });
    // Iteration space (positions..., o, k, c), c within o's group; x is
    // read by index so that frames outside [0, len(b)) read zero.
    Value result = lb.generic(
        init.getType(), {w}, init,
        {dimsMap(b, p + 3, {p, p + 1, p + 2}),
         dimsMap(b, p + 3, leading(p, {p}))},
        iteratorsOf(p + 1, 2),
        [&](OpBuilder &nested, Location l, ValueRange a) {
          Scalar s{nested, l};
          auto [sequence, frame] = out.current(s);
          Value t = s.add(windowStart(s, frame, stride, (kernel - 1) / 2),
                          s.index(p + 1));
          Value valid =
              s.andI(s.ge(t, s.idx(0)), s.lt(t, in.length(s, sequence)));
          Value safe = s.select(valid, t, s.idx(0));
          Value channel =
              s.add(groupStart(s, s.index(p), groups, outChannels, inPerGroup),
                    s.index(p + 2));
          Value v = in.read(s, x, sequence, safe, channel);
          v = s.select(valid, v, s.f(element, 0.0));
          nested.create<linalg::YieldOp>(l, s.add(a[1], s.mul(v, a[0])));
        });
    return SmallVector<Value>{result};
  }
};

/// The conv's two gradients. Output frame t' and input frame s meet
/// through tap k when s = t' stride - (K - 1) / 2 + k, t' < len_out(b) and
/// 0 <= s < len_in(b). With groups each gradient is one generic that reads
/// the other side by index; with one group, GEMMs (`gemmGradients`) on the
/// pairs `windowSources` and `tapSources` found. Every term is selected,
/// not multiplied by a mask, so NaN in padded frames of dy or x never
/// reaches a gradient.
class Conv1dGradConversion : public NNConversionPattern<Conv1dGradOp> {
public:
  using NNConversionPattern::NNConversionPattern;

  FailureOr<SmallVector<Value>> build(Conv1dGradOp op, OpAdaptor adaptor,
                                      LinalgBuilder &lb) const override {
    OpBuilder &b = lb.getBuilder();
    NNTensorType inputType = typeOf(op.getInput());
    NNTensorType outType = typeOf(op.getGrad());
    SequenceFrames in(lb, inputType), out(lb, outType);
    Value dy = adaptor.getGrad(), x = adaptor.getInput(),
          w = adaptor.getWeight();
    auto wType = cast<RankedTensorType>(w.getType());
    int64_t kernel = wType.getDimSize(1);
    int64_t stride = op.getStride();
    auto groups = static_cast<int64_t>(op.getGroups());
    int64_t outChannels = wType.getDimSize(0), inPerGroup = wType.getDimSize(2);
    int64_t outPerGroup = outChannels / groups;
    Type element = inputType.getElementType();
    unsigned p = in.getPositionDims();
    if (groups == 1)
      return gemmGradients(op, lb, in, out, dy, x, w);

    // dx: iteration space (positions..., c, o, k), o the index within c's
    // group (an unread [Cout / G, K] operand spans o and k), the weight
    // read by index. The input gradient of a conv that reads graph inputs
    // (a first layer) has no use: not computed.
    Value dx = lb.empty(lb.sizes(inputType), element);
    int64_t pad = (kernel - 1) / 2;
    if (!op.getInputGrad().use_empty()) {
      Value span = lb.empty(
          {b.getIndexAttr(outPerGroup), b.getIndexAttr(kernel)}, element);
      dx = lb.generic(
          dx.getType(), {span}, lb.fill(dx, 0.0),
          {dimsMap(b, p + 3, {p + 1, p + 2}),
           dimsMap(b, p + 3, leading(p, {p}))},
          iteratorsOf(p + 1, 2),
          [&](OpBuilder &nested, Location l, ValueRange a) {
            Scalar s{nested, l};
            Value c = s.index(p);
            Value group =
                nested.create<arith::DivUIOp>(l, c, s.idx(inPerGroup));
            Value o = s.add(s.mul(group, s.idx(outPerGroup)), s.index(p + 1));
            Value local =
                nested.create<arith::RemUIOp>(l, c, s.idx(inPerGroup));
            Value weight = nested.create<tensor::ExtractOp>(
                l, w, ValueRange{o, s.index(p + 2), local});
            auto [sequence, frame] = in.current(s);
            Value numerator = s.sub(s.add(frame, s.idx(pad)), s.index(p + 2));
            Value strideIdx = s.idx(stride);
            Value t = nested.create<arith::DivSIOp>(l, numerator, strideIdx);
            Value remainder =
                nested.create<arith::RemSIOp>(l, numerator, strideIdx);
            Value valid = s.andI(s.ge(numerator, s.idx(0)),
                                 s.andI(s.lt(remainder, s.idx(1)),
                                        s.lt(t, out.length(s, sequence))));
            valid = s.andI(valid, s.lt(frame, in.length(s, sequence)));
            Value safe = s.select(valid, t, s.idx(0));
            Value g = out.read(s, dy, sequence, safe, o);
            Value term = s.select(valid, s.mul(g, weight), s.f(element, 0.0));
            nested.create<linalg::YieldOp>(l, s.add(a[1], term));
          });
    }

    // dw: iteration space (out positions..., o, k, c).
    unsigned q = out.getPositionDims();
    Value dwInit =
        lb.filled({b.getIndexAttr(outChannels), b.getIndexAttr(kernel),
                   b.getIndexAttr(inPerGroup)},
                  element, 0.0);
    Value dw = lb.generic(
        dwInit.getType(), {dy}, dwInit,
        {dimsMap(b, q + 3, leading(q, {q})),
         dimsMap(b, q + 3, {q, q + 1, q + 2})},
        [&] {
          SmallVector<IteratorType> iterators = iteratorsOf(0, q);
          iterators.append(3, IteratorType::parallel);
          return iterators;
        }(),
        [&](OpBuilder &nested, Location l, ValueRange a) {
          Scalar s{nested, l};
          auto [sequence, t] = out.current(s);
          Value frame = s.add(windowStart(s, t, stride, pad), s.index(q + 1));
          Value valid = s.andI(s.lt(t, out.length(s, sequence)),
                               s.andI(s.ge(frame, s.idx(0)),
                                      s.lt(frame, in.length(s, sequence))));
          Value safe = s.select(valid, frame, s.idx(0));
          Value channel =
              s.add(groupStart(s, s.index(q), groups, outChannels, inPerGroup),
                    s.index(q + 2));
          Value v = in.read(s, x, sequence, safe, channel);
          nested.create<linalg::YieldOp>(
              l, s.select(valid, s.add(a[1], s.mul(a[0], v)), a[1]));
        });
    return SmallVector<Value>{dx, dw};
  }

private:
  /// One group: dw = dy^T windows and, for dx, taps = dy W (each output
  /// position's contribution through each tap, [out positions..., K * C])
  /// summed into the input frames they came from. The GEMMs carry the
  /// O-fold work.
  FailureOr<SmallVector<Value>>
  gemmGradients(Conv1dGradOp op, LinalgBuilder &lb, const SequenceFrames &in,
                const SequenceFrames &out, Value dy, Value x, Value w) const {
    OpBuilder &b = lb.getBuilder();
    NNTensorType inputType = typeOf(op.getInput());
    NNTensorType outType = typeOf(op.getGrad());
    auto wType = cast<RankedTensorType>(w.getType());
    int64_t kernel = wType.getDimSize(1), channels = wType.getDimSize(2);
    int64_t stride = op.getStride();
    Type element = inputType.getElementType();
    unsigned p = in.getPositionDims();
    Value rows = weightRows(lb, w);

    Value dx = lb.empty(lb.sizes(inputType), element);
    if (!op.getInputGrad().use_empty()) {
      // Selected, not masked: NaN in dy's padded frames stays in their
      // taps rows, which no sources entry names.
      Value taps = lb.linearGradInput(dy, rows);
      Value sources = tapSources(lb, in, out, inputType, kernel, stride);
      // Iteration space (in positions..., c, k).
      dx = lb.generic(
          dx.getType(), {sources}, lb.fill(dx, 0.0),
          {dimsMap(b, p + 2, leading(p, {p + 1})),
           dimsMap(b, p + 2, leading(p, {p}))},
          iteratorsOf(p + 1, 1),
          [&](OpBuilder &nested, Location l, ValueRange a) {
            Scalar s{nested, l};
            Value c = s.index(p), k = s.index(p + 1);
            Value valid = s.ge(a[0], s.idx(0));
            Value g = out.readAt(s, taps, s.select(valid, a[0], s.idx(0)),
                                 s.add(s.mul(k, s.idx(channels)), c));
            nested.create<linalg::YieldOp>(
                l, s.add(a[1], s.select(valid, g, s.f(element, 0.0))));
          });
    }

    // The windows are zero at padded output positions already; dy is
    // zeroed there by select, so that NaN in its padding never reaches the
    // sum, and the contraction then needs no mask.
    Value windows =
        windowRows(lb, in, out, outType, x, kernel, stride, channels, element);
    SmallVector<Value> lengths = lb.paddingLengths(outType);
    Value dyValid = lengths.empty() ? dy : lb.zeroPadding(dy, lengths);
    Value dwRows = lb.linearGradWeight(dyValid, windows, {});
    Value dw = b.create<tensor::ExpandShapeOp>(
        lb.getLoc(), wType, dwRows,
        SmallVector<ReassociationIndices>{{0}, {1, 2}});
    return SmallVector<Value>{dx, dw};
  }
};

/// The frames a pool window starting at `start` covers inside a sequence
/// of `length`: min(window, length - start), at least 1 (a window past
/// the length is padding anyway), as a float of `element`.
Value windowCount(Scalar &s, Type element, int64_t window, Value start,
                  Value length) {
  Value inside = s.maxI(s.minI(s.idx(window), s.sub(length, start)), s.idx(1));
  return s.b.create<arith::SIToFPOp>(
      s.loc, element,
      s.b.create<arith::IndexCastOp>(s.loc, s.b.getI64Type(), inside));
}

class PoolConversion : public NNConversionPattern<PoolOp> {
public:
  using NNConversionPattern::NNConversionPattern;

  FailureOr<SmallVector<Value>> build(PoolOp op, OpAdaptor adaptor,
                                      LinalgBuilder &lb) const override {
    OpBuilder &b = lb.getBuilder();
    Location loc = lb.getLoc();
    NNTensorType type = typeOf(op.getResult());
    SequenceFrames in(lb, typeOf(op.getInput())), out(lb, type);
    Value x = adaptor.getInput();
    int64_t window = op.getWindow();
    int64_t stride = op.getStride();
    Type element = type.getElementType();
    bool isMax = op.getKind() == PoolKind::max;
    unsigned p = out.getPositionDims();
    Value init =
        lb.filled(lb.sizes(type), element,
                  isMax ? -std::numeric_limits<double>::infinity() : 0.0);
    // Iteration space (positions..., c, k); the window's shape sizes k.
    Value windowShape =
        b.create<tensor::EmptyOp>(loc, ArrayRef<int64_t>{window}, element);
    Value pooled = lb.generic(
        init.getType(), {windowShape}, init,
        {dimsMap(b, p + 2, {p + 1}), dimsMap(b, p + 2, leading(p, {p}))},
        iteratorsOf(p + 1, 1),
        [&](OpBuilder &nested, Location l, ValueRange a) {
          Scalar s{nested, l};
          auto [sequence, frame] = out.current(s);
          Value t = s.add(windowStart(s, frame, stride, 0), s.index(p + 1));
          Value valid = s.lt(t, in.length(s, sequence));
          Value safe = s.select(valid, t, s.idx(0));
          Value v = in.read(s, x, sequence, safe, s.index(p));
          Value combined = isMax ? s.max(a[1], v) : s.add(a[1], v);
          nested.create<linalg::YieldOp>(l, s.select(valid, combined, a[1]));
        });
    if (!isMax) {
      // Divide by the frames inside the window.
      AffineMap identity = b.getMultiDimIdentityMap(p + 1);
      Value result = lb.empty(lb.sizes(type), element);
      pooled =
          lb.generic(result.getType(), {pooled}, result, {identity, identity},
                     iteratorsOf(p + 1, 0),
                     [&](OpBuilder &nested, Location l, ValueRange a) {
                       Scalar s{nested, l};
                       auto [sequence, frame] = out.current(s);
                       Value count = windowCount(
                           s, element, window, windowStart(s, frame, stride, 0),
                           in.length(s, sequence));
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
    SequenceFrames in(lb, type), out(lb, outType);
    Type element = type.getElementType();
    int64_t window = op.getWindow(), stride = op.getStride();
    bool isMax = op.getKind() == PoolKind::max;
    Value dy = adaptor.getGrad(), x = adaptor.getInput();
    Value windowShape =
        b.create<tensor::EmptyOp>(loc, ArrayRef<int64_t>{window}, element);
    Value argmax;
    if (isMax) {
      // Per window (out positions..., c): the first valid frame holding the
      // maximum.
      unsigned q = out.getPositionDims();
      Type i64 = b.getI64Type();
      Value first = lb.filled(lb.sizes(outType), i64, -1.0);
      AffineMap window = dimsMap(b, q + 2, leading(q, {q}));
      argmax = lb.generic(
          first.getType(), {windowShape, adaptor.getOutput()}, first,
          {dimsMap(b, q + 2, {q + 1}), window, window}, iteratorsOf(q + 1, 1),
          [&](OpBuilder &nested, Location l, ValueRange a) {
            Scalar s{nested, l};
            auto [sequence, frame] = out.current(s);
            Value t = s.add(windowStart(s, frame, stride, 0), s.index(q + 1));
            Value valid = s.lt(t, in.length(s, sequence));
            Value safe = s.select(valid, t, s.idx(0));
            Value v = in.read(s, x, sequence, safe, s.index(q));
            Value unset = nested.create<arith::CmpIOp>(
                l, arith::CmpIPredicate::slt, a[2],
                nested.create<arith::ConstantIntOp>(l, 0, 64));
            Value hit = s.andI(s.andI(valid, s.feq(v, a[1])), unset);
            Value t64 = nested.create<arith::IndexCastOp>(l, i64, t);
            nested.create<linalg::YieldOp>(l, s.select(hit, t64, a[2]));
          });
    }
    // Iteration space (positions..., c, k): window k of input frame t is
    // output frame o = (t - k) / stride when that divides.
    unsigned p = in.getPositionDims();
    Value init = lb.filled(lb.sizes(type), element, 0.0);
    return SmallVector<Value>{lb.generic(
        init.getType(), {windowShape}, init,
        {dimsMap(b, p + 2, {p + 1}), dimsMap(b, p + 2, leading(p, {p}))},
        iteratorsOf(p + 1, 1),
        [&](OpBuilder &nested, Location l, ValueRange a) {
          Scalar s{nested, l};
          auto [sequence, t] = in.current(s);
          Value start = s.sub(t, s.index(p + 1));
          Value aligned = nested.create<arith::CmpIOp>(
              l, arith::CmpIPredicate::eq,
              nested.create<arith::RemSIOp>(l, start, s.idx(stride)), s.idx(0));
          Value o = nested.create<arith::DivSIOp>(l, start, s.idx(stride));
          Value inLength = in.length(s, sequence);
          Value valid = s.andI(
              s.andI(s.ge(start, s.idx(0)), aligned),
              s.andI(s.lt(o, out.length(s, sequence)), s.lt(t, inLength)));
          Value safe = s.select(valid, o, s.idx(0));
          Value channel = s.index(p);
          Value g = out.read(s, dy, sequence, safe, channel);
          if (isMax) {
            Value winner = out.read(s, argmax, sequence, safe, channel);
            Value t64 =
                nested.create<arith::IndexCastOp>(l, nested.getI64Type(), t);
            valid =
                s.andI(valid, nested.create<arith::CmpIOp>(
                                  l, arith::CmpIPredicate::eq, winner, t64));
          } else {
            g = s.div(g,
                      windowCount(s, element, window,
                                  windowStart(s, safe, stride, 0), inLength));
          }
          nested.create<linalg::YieldOp>(l,
                                         s.select(valid, s.add(a[1], g), a[1]));
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
