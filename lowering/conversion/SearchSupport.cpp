//===- SearchSupport.cpp - building blocks of the decoding patterns -------===//

#include "lowering/conversion/SearchSupport.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Bufferization/IR/Bufferization.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"

#include <limits>

using namespace mlir;
using namespace mlir::nn;

using utils::IteratorType;

std::pair<Value, Value> mlir::nn::rowArgMax(LinalgBuilder &lb, Value x) {
  auto type = cast<RankedTensorType>(x.getType());
  unsigned rank = type.getRank();
  Value best = lb.reduceLast(
      x, {}, type.getElementType(), -std::numeric_limits<double>::infinity(),
      [](Scalar &s, Value value, ValueRange, Value acc) -> Value {
        return s.b.create<arith::MaxNumFOp>(s.loc, acc, value);
      });
  Value index = lb.reduceLast(
      x, best, lb.getBuilder().getI32Type(),
      static_cast<double>(std::numeric_limits<int32_t>::max()),
      [&](Scalar &s, Value value, ValueRange best, Value acc) -> Value {
        Value c = s.b.create<arith::IndexCastOp>(s.loc, s.i32Type(),
                                                 s.index(rank - 1));
        return s.minI(acc,
                      s.select(s.feq(value, best[0]), c,
                               s.i32(std::numeric_limits<int32_t>::max())));
      });
  return {best, index};
}

Value mlir::nn::bufferOf(OpBuilder &b, Location loc, Value tensor) {
  auto type = cast<RankedTensorType>(tensor.getType());
  SmallVector<int64_t> dynamic(type.getRank(), ShapedType::kDynamic);
  auto layout =
      StridedLayoutAttr::get(b.getContext(), ShapedType::kDynamic, dynamic);
  return b.create<bufferization::ToMemrefOp>(
      loc, MemRefType::get(type.getShape(), type.getElementType(), layout),
      tensor, /*read_only=*/true);
}

Value mlir::nn::outputBuffer(OpBuilder &b, Location loc, ArrayRef<Value> shape,
                             Type element) {
  SmallVector<int64_t> sizes(shape.size(), ShapedType::kDynamic);
  return b.create<memref::AllocOp>(loc, MemRefType::get(sizes, element), shape);
}

std::pair<Value, SmallVector<Value>>
mlir::nn::addressOf(OpBuilder &b, Location loc, Value memref) {
  auto metadata = b.create<memref::ExtractStridedMetadataOp>(loc, memref);
  Value base = b.create<memref::ExtractAlignedPointerAsIndexOp>(loc, memref);
  Scalar s{b, loc};
  int64_t bytes =
      cast<MemRefType>(memref.getType()).getElementTypeBitWidth() / 8;
  Value address = s.add(base, s.mul(metadata.getOffset(), s.idx(bytes)));
  Type i64 = b.getI64Type();
  SmallVector<Value> strides;
  for (Value stride : metadata.getStrides())
    strides.push_back(b.create<arith::IndexCastOp>(loc, i64, stride));
  return {b.create<arith::IndexCastOp>(loc, i64, address), strides};
}

func::FuncOp mlir::nn::createCallSite(
    OpBuilder &b, ModuleOp module, StringRef prefix, TypeRange types,
    function_ref<void(OpBuilder &, ValueRange, StringRef name)> body) {
  return createCallSite(b, module, prefix, types, {},
                        [&](OpBuilder &fb, ValueRange args, StringRef name) {
                          body(fb, args, name);
                          return SmallVector<Value>();
                        });
}

func::FuncOp mlir::nn::createCallSite(
    OpBuilder &b, ModuleOp module, StringRef prefix, TypeRange types,
    TypeRange results,
    function_ref<SmallVector<Value>(OpBuilder &, ValueRange, StringRef name)>
        body) {
  OpBuilder::InsertionGuard guard(b);
  unsigned site = 0;
  std::string name;
  do
    name = (prefix + Twine(site++)).str();
  while (module.lookupSymbol(name));
  b.setInsertionPointToEnd(module.getBody());
  auto function = b.create<func::FuncOp>(module.getLoc(), name,
                                         b.getFunctionType(types, results));
  function.setPrivate();
  Block *entry = function.addEntryBlock();
  b.setInsertionPointToStart(entry);
  SmallVector<Value> returned = body(b, entry->getArguments(), name);
  b.create<func::ReturnOp>(module.getLoc(), returned);
  return function;
}

void mlir::nn::declareRuntimeFunction(OpBuilder &b, ModuleOp module,
                                      StringRef name, FunctionType type) {
  if (module.lookupSymbol(name))
    return;
  OpBuilder::InsertionGuard guard(b);
  b.setInsertionPointToStart(module.getBody());
  b.create<func::FuncOp>(module.getLoc(), name, type).setPrivate();
}

Value mlir::nn::selectRows(LinalgBuilder &lb, Value mask, Value fresh,
                           Value old) {
  OpBuilder &b = lb.getBuilder();
  auto type = cast<RankedTensorType>(old.getType());
  unsigned rank = type.getRank();
  Value init = lb.empty(tensor::getMixedSizes(b, lb.getLoc(), old),
                        type.getElementType());
  AffineMap id = b.getMultiDimIdentityMap(rank);
  AffineMap row = AffineMap::get(rank, 0, b.getAffineDimExpr(0));
  return lb.generic(init.getType(), {mask, fresh, old}, init, {row, id, id, id},
                    SmallVector<IteratorType>(rank, IteratorType::parallel),
                    [&](OpBuilder &nested, Location l, ValueRange args) {
                      Scalar q{nested, l};
                      nested.create<linalg::YieldOp>(
                          l,
                          q.select(q.ne(args[0], q.i32(0)), args[1], args[2]));
                    });
}

SmallVector<Value> mlir::nn::callOnRows(LinalgBuilder &lb,
                                        const GraphAbi &callee, Value rows,
                                        ValueRange operands) {
  SmallVector<Value> arguments{rows};
  llvm::append_range(arguments, operands);
  for (ParameterOp parameter : callee.parameters)
    arguments.push_back(
        lb.getDims().lookupParameter(parameter.getSymNameAttr()));
  SmallVector<Type> results;
  for (Type type : callee.graph.getResultTypes())
    results.push_back(GraphAbi::loweredType(cast<NNTensorType>(type)));
  auto call = lb.getBuilder().create<func::CallOp>(
      lb.getLoc(), callee.graph.getSymName(), results, arguments);
  return SmallVector<Value>(call.getResults());
}

SmallVector<Value> mlir::nn::beamSearchResults(ConversionState &state,
                                               Operation *op,
                                               NNTensorType labelsType,
                                               LinalgBuilder &lb, Value labels,
                                               Value labelLengths, Value scores,
                                               Value counts, Value batch) {
  OpBuilder &b = lb.getBuilder();
  Location loc = lb.getLoc();
  Scalar s{b, loc};
  Type i32 = b.getI32Type();
  OpFoldResult zero = b.getIndexAttr(0), one = b.getIndexAttr(1);
  Type scoreType = cast<RankedTensorType>(scores.getType()).getElementType();
  auto longestOf = [&](Value lengths, Value size) {
    return forLoop(
        s, s.idx(0), size, {s.idx(1)}, [&](Scalar &q, Value i, ValueRange acc) {
          Value length =
              q.toIndex(q.b.create<tensor::ExtractOp>(q.loc, lengths, i));
          return SmallVector<Value>{q.maxI(acc[0], length)};
        })[0];
  };

  if (labelsType.getRank() == 2) {
    Value longest =
        forLoop(s, s.idx(0), batch, {s.idx(1)},
                [&](Scalar &q, Value bi, ValueRange acc) {
                  Value length = q.toIndex(q.b.create<tensor::ExtractOp>(
                      q.loc, labelLengths, ValueRange{bi, q.idx(0)}));
                  return SmallVector<Value>{q.maxI(acc[0], length)};
                })[0];
    Value first = b.create<tensor::ExtractSliceOp>(
        loc,
        RankedTensorType::get({ShapedType::kDynamic, ShapedType::kDynamic},
                              i32),
        labels, ArrayRef<OpFoldResult>{zero, zero, zero},
        ArrayRef<OpFoldResult>{batch, one, longest},
        ArrayRef<OpFoldResult>{one, one, one});
    auto column = [&](Value matrix, Type element) -> Value {
      return b.create<tensor::ExtractSliceOp>(
          loc, RankedTensorType::get({ShapedType::kDynamic}, element), matrix,
          ArrayRef<OpFoldResult>{zero, zero},
          ArrayRef<OpFoldResult>{batch, one}, ArrayRef<OpFoldResult>{one, one});
    };
    state.bindComputed(op, labelsType.getDimName(1),
                       DimValue{longest, column(labelLengths, i32)}, lb);
    return {first, column(scores, scoreType)};
  }

  StringRef beamDim = labelsType.getDimName(1);
  StringRef labelDim = labelsType.getDimName(2);
  Value listSize = longestOf(counts, batch);
  state.bindComputed(op, beamDim, DimValue{listSize, counts}, lb);

  // Entry h of H is hypothesis h - offset(owner(h)) of sequence owner(h).
  StringRef flatName = lb.getDims().getDecls().lookup(labelDim).getBatch();
  DimValue flat = lb.getDims().lookup(flatName);
  Value offsets = flat.offsets;
  Value lengths =
      lb.map(NNTensorType::get(b.getContext(), {flatName}, {0}, i32),
             flat.owner, [&](Scalar &q, ValueRange args) -> Value {
               Value owner = q.toIndex(args[0]);
               Value firstOfOwner = q.toIndex(
                   q.b.create<tensor::ExtractOp>(q.loc, offsets, owner));
               Value k = q.sub(q.index(0), firstOfOwner);
               return q.b.create<tensor::ExtractOp>(q.loc, labelLengths,
                                                    ValueRange{owner, k});
             });
  Value longest = longestOf(lengths, flat.size);
  state.bindComputed(op, labelDim, DimValue{longest, lengths}, lb);

  Value nBestLabels = b.create<tensor::ExtractSliceOp>(
      loc,
      RankedTensorType::get(SmallVector<int64_t>(3, ShapedType::kDynamic), i32),
      labels, ArrayRef<OpFoldResult>{zero, zero, zero},
      ArrayRef<OpFoldResult>{batch, listSize, longest},
      ArrayRef<OpFoldResult>{one, one, one});
  Value nBestScores = b.create<tensor::ExtractSliceOp>(
      loc,
      RankedTensorType::get(SmallVector<int64_t>(2, ShapedType::kDynamic),
                            scoreType),
      scores, ArrayRef<OpFoldResult>{zero, zero},
      ArrayRef<OpFoldResult>{batch, listSize},
      ArrayRef<OpFoldResult>{one, one});
  return {nBestLabels, nBestScores};
}
