//===- PackPatterns.cpp - padded and packed frames ------------------------===//
//
// Moves between the layouts of sequence data: pack and unpack move each
// sequence's valid rows between padded [B, T, ...] and packed [N, ...]
// values; broadcast_seq repeats a per-sequence [B, ...] value on its
// sequence's frames. Padded frames they write are zero. The beam ops do
// the same between an N-best list [B, K, ...] and its flattened batch
// [H, ...]: flatten and unflatten as pack and unpack over K, repeat and
// sum through each entry's sequence.
//
//===----------------------------------------------------------------------===//

#include "lowering/conversion/Patterns.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"

using namespace mlir;
using namespace mlir::nn;

namespace {

NNTensorType typeOf(Value v) { return cast<NNTensorType>(v.getType()); }

/// Moves each sequence's valid rows between a padded value [B, T, F...]
/// and a packed one [N, F...]: a loop over the batch carrying the running
/// offset (the exclusive prefix sum of the lengths) that copies
/// padded[b, 0:len(b)] to or from packed[offset:offset + len(b)].
Value copySequenceRows(LinalgBuilder &lb, Value source, Value dest,
                       Value lengths, Value batch, bool toPacked) {
  OpBuilder &b = lb.getBuilder();
  Location loc = lb.getLoc();
  Value packed = toPacked ? dest : source;
  auto packedType = cast<RankedTensorType>(packed.getType());
  unsigned packedRank = packedType.getRank();
  // The axes after the packed one may be dynamic (an N-best list's label
  // axis).
  SmallVector<OpFoldResult> features;
  for (unsigned i = 1; i < packedRank; ++i)
    features.push_back(
        packedType.isDynamicDim(i)
            ? OpFoldResult(b.create<tensor::DimOp>(loc, packed, i).getResult())
            : OpFoldResult(b.getIndexAttr(packedType.getDimSize(i))));
  auto rowsType =
      RankedTensorType::get(packedType.getShape(), packedType.getElementType());
  Scalar s = lb.scalar();
  auto loop = b.create<scf::ForOp>(
      loc, s.idx(0), batch, s.idx(1), ValueRange{dest, s.idx(0)},
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

class PackConversion : public NNConversionPattern<PackOp> {
public:
  using NNConversionPattern::NNConversionPattern;

  FailureOr<SmallVector<Value>> build(PackOp op, OpAdaptor adaptor,
                                      LinalgBuilder &lb) const override {
    NNTensorType inputType = typeOf(op.getInput());
    NNTensorType type = typeOf(op.getResult());
    Value packed = lb.empty(lb.sizes(type), type.getElementType());
    return SmallVector<Value>{
        copySequenceRows(lb, adaptor.getInput(), packed,
                         lb.getDims().lengths(inputType.getDimName(1)),
                         lb.getDims().size(inputType.getDimName(0)),
                         /*toPacked=*/true)};
  }
};

class UnpackConversion : public NNConversionPattern<UnpackOp> {
public:
  using NNConversionPattern::NNConversionPattern;

  FailureOr<SmallVector<Value>> build(UnpackOp op, OpAdaptor adaptor,
                                      LinalgBuilder &lb) const override {
    NNTensorType type = typeOf(op.getResult());
    Value padded = lb.filled(lb.sizes(type), type.getElementType(), 0.0);
    return SmallVector<Value>{
        copySequenceRows(lb, adaptor.getInput(), padded,
                         lb.getDims().lengths(type.getDimName(1)),
                         lb.getDims().size(type.getDimName(0)),
                         /*toPacked=*/false)};
  }
};

/// out[b, t, f...] = t < len(b) ? in[b, f...] : 0.
class BroadcastSeqConversion : public NNConversionPattern<BroadcastSeqOp> {
public:
  using NNConversionPattern::NNConversionPattern;

  FailureOr<SmallVector<Value>> build(BroadcastSeqOp op, OpAdaptor adaptor,
                                      LinalgBuilder &lb) const override {
    OpBuilder &b = lb.getBuilder();
    NNTensorType type = typeOf(op.getResult());
    unsigned rank = type.getRank();
    Value lengths = lb.getDims().lengths(type.getDimName(1));
    Value init = lb.empty(lb.sizes(type), type.getElementType());
    AffineMap identity = b.getMultiDimIdentityMap(rank);
    SmallVector<AffineMap> maps{identity.dropResult(1),
                                AffineMap::get(rank, 0, b.getAffineDimExpr(0)),
                                identity};
    Value result = lb.generic(
        init.getType(), {adaptor.getInput(), lengths}, init, maps,
        SmallVector<utils::IteratorType>(rank, utils::IteratorType::parallel),
        [&](OpBuilder &nested, Location l, ValueRange a) {
          Scalar s{nested, l};
          Value valid = s.lt(s.index(1), s.toIndex(a[1]));
          Type element = a[0].getType();
          Value zero = isa<FloatType>(element)
                           ? s.f(element, 0.0)
                           : nested.create<arith::ConstantOp>(
                                 l, nested.getIntegerAttr(element, 0));
          nested.create<linalg::YieldOp>(l, s.select(valid, a[0], zero));
        });
    return SmallVector<Value>{result};
  }
};

class FlattenBeamConversion : public NNConversionPattern<FlattenBeamOp> {
public:
  using NNConversionPattern::NNConversionPattern;

  FailureOr<SmallVector<Value>> build(FlattenBeamOp op, OpAdaptor adaptor,
                                      LinalgBuilder &lb) const override {
    NNTensorType inputType = typeOf(op.getInput());
    NNTensorType type = typeOf(op.getResult());
    Value flat = lb.empty(lb.sizes(type), type.getElementType());
    return SmallVector<Value>{
        copySequenceRows(lb, adaptor.getInput(), flat,
                         lb.getDims().lengths(inputType.getDimName(1)),
                         lb.getDims().size(inputType.getDimName(0)),
                         /*toPacked=*/true)};
  }
};

class UnflattenBeamConversion : public NNConversionPattern<UnflattenBeamOp> {
public:
  using NNConversionPattern::NNConversionPattern;

  FailureOr<SmallVector<Value>> build(UnflattenBeamOp op, OpAdaptor adaptor,
                                      LinalgBuilder &lb) const override {
    NNTensorType type = typeOf(op.getResult());
    Value padded = lb.filled(lb.sizes(type), type.getElementType(), 0.0);
    return SmallVector<Value>{
        copySequenceRows(lb, adaptor.getInput(), padded,
                         lb.getDims().lengths(type.getDimName(1)),
                         lb.getDims().size(type.getDimName(0)),
                         /*toPacked=*/false)};
  }
};

/// out[h, s..., f...] = in[owner(h), s..., f...]: a gather through the
/// flattened batch's owners (lifted lengths equal their sources', so every
/// valid position reads a valid one).
class RepeatBeamConversion : public NNConversionPattern<RepeatBeamOp> {
public:
  using NNConversionPattern::NNConversionPattern;

  FailureOr<SmallVector<Value>> build(RepeatBeamOp op, OpAdaptor adaptor,
                                      LinalgBuilder &lb) const override {
    OpBuilder &b = lb.getBuilder();
    NNTensorType type = typeOf(op.getResult());
    unsigned rank = type.getRank();
    Value owner = lb.getDims().lookup(type.getDimName(0)).owner;
    Value input = adaptor.getInput();
    Value init = lb.empty(lb.sizes(type), type.getElementType());
    AffineMap identity = b.getMultiDimIdentityMap(rank);
    SmallVector<AffineMap> maps{AffineMap::get(rank, 0, b.getAffineDimExpr(0)),
                                identity};
    return SmallVector<Value>{lb.generic(
        init.getType(), {owner}, init, maps,
        SmallVector<utils::IteratorType>(rank, utils::IteratorType::parallel),
        [&](OpBuilder &nested, Location l, ValueRange a) {
          Scalar s{nested, l};
          SmallVector<Value> index{s.toIndex(a[0])};
          for (unsigned i = 1; i < rank; ++i)
            index.push_back(s.index(i));
          nested.create<linalg::YieldOp>(
              l, nested.create<tensor::ExtractOp>(l, input, index).getResult());
        })};
  }
};

/// out[b, s..., f...] = sum over k < len_K(b) of in[offset(b) + k, s...,
/// f...]; an inner loop per position, in hypothesis order.
class SumBeamConversion : public NNConversionPattern<SumBeamOp> {
public:
  using NNConversionPattern::NNConversionPattern;

  FailureOr<SmallVector<Value>> build(SumBeamOp op, OpAdaptor adaptor,
                                      LinalgBuilder &lb) const override {
    OpBuilder &b = lb.getBuilder();
    NNTensorType type = typeOf(op.getResult());
    unsigned rank = type.getRank();
    StringRef flatName = typeOf(op.getInput()).getDimName(0);
    const DimValue &flat = lb.getDims().lookup(flatName);
    DimDeclAttr decl = lb.getDims().getDecls().lookup(flatName);
    Value counts = lb.getDims().lengths(decl.getInner().getValue());
    Value input = adaptor.getInput();
    Value init = lb.empty(lb.sizes(type), type.getElementType());
    AffineMap identity = b.getMultiDimIdentityMap(rank);
    AffineMap perSequence = AffineMap::get(rank, 0, b.getAffineDimExpr(0));
    SmallVector<AffineMap> maps{perSequence, perSequence, identity};
    return SmallVector<Value>{lb.generic(
        init.getType(), {flat.offsets, counts}, init, maps,
        SmallVector<utils::IteratorType>(rank, utils::IteratorType::parallel),
        [&](OpBuilder &nested, Location l, ValueRange a) {
          Scalar s{nested, l};
          Value first = s.toIndex(a[0]);
          Value zero = s.f(type.getElementType(), 0.0);
          SmallVector<Value> position;
          for (unsigned i = 1; i < rank; ++i)
            position.push_back(s.index(i));
          SmallVector<Value> sum = forLoop(
              s, s.idx(0), s.toIndex(a[1]), {zero},
              [&](Scalar &q, Value k, ValueRange acc) -> SmallVector<Value> {
                SmallVector<Value> index{q.add(first, k)};
                index.append(position);
                Value term = q.b.create<tensor::ExtractOp>(q.loc, input, index);
                return {q.add(acc[0], term)};
              });
          nested.create<linalg::YieldOp>(l, sum[0]);
        })};
  }
};

} // namespace

void mlir::nn::populatePackConversionPatterns(const TypeConverter &converter,
                                              ConversionState &state,
                                              RewritePatternSet &patterns) {
  patterns.add<PackConversion, UnpackConversion, BroadcastSeqConversion,
               FlattenBeamConversion, UnflattenBeamConversion,
               RepeatBeamConversion, SumBeamConversion>(converter, state);
}
