//===- CollectivePatterns.cpp - sums over the processes of a run ----------===//
//
// nn.all_reduce: its inputs are copied, flattened, into one bucket (one
// tensor.insert_slice each), the bucket is copied into a fresh contiguous
// buffer, and the runtime sums that buffer over the processes in place in
// two halves (runtime/comm/CommAbi.h): `nn_comm_all_reduce_start_v1` where
// the op is, `nn_comm_all_reduce_finish_v1` just before the first op that
// reads a result, so that the ops in between run while the sum does. Each
// result is its slice of the buffer, reshaped (views, no copies). The
// calls go through private call-site functions whose memref operands keep
// the buffers alive, as for the searches (SearchSupport.h).
//
//===----------------------------------------------------------------------===//

#include "lowering/conversion/Origin.h"
#include "lowering/conversion/Patterns.h"
#include "lowering/conversion/SearchSupport.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Bufferization/IR/Bufferization.h"
#include "mlir/Dialect/LLVMIR/FunctionCallUtils.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"

using namespace mlir;
using namespace mlir::nn;

namespace {

/// The reassociation between a tensor of `type` and its elements as a
/// rank-1 tensor: every axis in one group (none for a rank-0 tensor).
SmallVector<ReassociationIndices> oneGroup(RankedTensorType type) {
  if (type.getRank() == 0)
    return {};
  ReassociationIndices all;
  for (int64_t axis = 0; axis < type.getRank(); ++axis)
    all.push_back(axis);
  return {all};
}

/// `tensor` (static shape) as a rank-1 tensor of its elements, row-major:
/// a scalar grows an axis, more axes collapse into one.
Value flatten(OpBuilder &b, Location loc, Value tensor) {
  auto type = cast<RankedTensorType>(tensor.getType());
  if (type.getRank() == 1)
    return tensor;
  auto flat =
      RankedTensorType::get({type.getNumElements()}, type.getElementType());
  if (type.getRank() == 0)
    return b.create<tensor::ExpandShapeOp>(loc, flat, tensor, oneGroup(type));
  return b.create<tensor::CollapseShapeOp>(loc, flat, tensor, oneGroup(type));
}

/// The inverse of flatten: rank-1 `flat` as `type`.
Value unflatten(OpBuilder &b, Location loc, Value flat, RankedTensorType type) {
  if (type.getRank() == 1)
    return flat;
  if (type.getRank() == 0)
    return b.create<tensor::CollapseShapeOp>(loc, type, flat, oneGroup(type));
  return b.create<tensor::ExpandShapeOp>(loc, type, flat, oneGroup(type));
}

/// The first op of `op`'s block that reads one of its results (itself or
/// through an op nested in it); null when none does.
Operation *firstReader(Operation *op) {
  Block *block = op->getBlock();
  Operation *first = nullptr;
  for (Operation *user : op->getUsers()) {
    Operation *inBlock = block->findAncestorOpInBlock(*user);
    if (inBlock && (!first || inBlock->isBeforeInBlock(first)))
      first = inBlock;
  }
  return first;
}

class AllReduceConversion : public NNConversionPattern<AllReduceOp> {
public:
  using NNConversionPattern::NNConversionPattern;

  FailureOr<SmallVector<Value>> build(AllReduceOp op, OpAdaptor adaptor,
                                      LinalgBuilder &lb) const override {
    OpBuilder &b = lb.getBuilder();
    Location loc = lb.getLoc();
    ValueRange inputs = adaptor.getInputs();
    Type element =
        cast<RankedTensorType>(inputs.front().getType()).getElementType();
    SmallVector<int64_t> offsets;
    int64_t total = 0;
    for (Value input : inputs) {
      offsets.push_back(total);
      total += cast<RankedTensorType>(input.getType()).getNumElements();
    }
    auto bucketType = RankedTensorType::get({total}, element);
    Value bucket =
        b.create<tensor::EmptyOp>(loc, bucketType.getShape(), element);
    for (auto [input, offset] : llvm::zip(inputs, offsets)) {
      Value flat = flatten(b, loc, input);
      int64_t count = cast<RankedTensorType>(flat.getType()).getNumElements();
      bucket = b.create<tensor::InsertSliceOp>(
          loc, flat, bucket, ArrayRef<OpFoldResult>{b.getIndexAttr(offset)},
          ArrayRef<OpFoldResult>{b.getIndexAttr(count)},
          ArrayRef<OpFoldResult>{b.getIndexAttr(1)});
    }

    Scalar s{b, loc};
    SmallVector<Value> buffers{bufferOf(b, loc, bucket),
                               outputBuffer(b, loc, {s.idx(total)}, element)};
    auto module = op->getParentOfType<ModuleOp>();
    std::string origin = describeOrigin(loc);
    Type i64 = b.getI64Type();
    // The runtime reads the origin as a C string: the global holds its NUL.
    auto originOf = [&](OpBuilder &fb, Location fl, StringRef name) {
      return LLVM::createGlobalString(fl, fb, (name + "_origin").str(),
                                      origin + std::string(1, '\0'),
                                      LLVM::Linkage::Internal);
    };
    func::FuncOp startSite = createCallSite(
        b, module, "nn_all_reduce_start_site", ValueRange(buffers).getTypes(),
        {i64}, [&](OpBuilder &fb, ValueRange args, StringRef name) {
          // The op's location: on GPUs the copy is a kernel named after
          // it.
          Location fl = loc;
          // The bucket's buffer may be a view with any stride (a single
          // input the canonicalizer passed through): copied into the
          // contiguous result, it is summed in place there.
          fb.create<memref::CopyOp>(fl, args[0], args[1]);
          Value summed = addressOf(fb, fl, args[1]).first;
          SmallVector<Value> arguments{
              originOf(fb, fl, name), summed, summed,
              fb.create<arith::ConstantIntOp>(fl, total, 64),
              fb.create<arith::ConstantIntOp>(
                  fl, element.getIntOrFloatBitWidth(), 32)};
          StringRef callee = "nn_comm_all_reduce_start_v1";
          declareRuntimeFunction(
              fb, module, callee,
              fb.getFunctionType(ValueRange(arguments).getTypes(), {i64}));
          return SmallVector<Value>{
              fb.create<func::CallOp>(fl, callee, TypeRange{i64}, arguments)
                  .getResult(0)};
        });
    Value ticket = b.create<func::CallOp>(loc, startSite, buffers).getResult(0);

    // The sum runs while the ops up to the first that reads it do (the
    // backward's, when nn-all-reduce-gradients placed the op after its
    // last gradient); the finish waits there. Its memref operand keeps the
    // buffer alive until then even when no op reads the sum.
    OpBuilder::InsertionGuard guard(b);
    if (Operation *reader = firstReader(op))
      b.setInsertionPoint(reader);
    func::FuncOp finishSite = createCallSite(
        b, module, "nn_all_reduce_finish_site",
        TypeRange{buffers[1].getType(), i64},
        [&](OpBuilder &fb, ValueRange args, StringRef name) {
          StringRef callee = "nn_comm_all_reduce_finish_v1";
          SmallVector<Value> arguments{originOf(fb, loc, name), args[1]};
          declareRuntimeFunction(
              fb, module, callee,
              fb.getFunctionType(ValueRange(arguments).getTypes(), {}));
          fb.create<func::CallOp>(loc, callee, TypeRange{}, arguments);
        });
    b.create<func::CallOp>(loc, finishSite, ValueRange{buffers[1], ticket});
    Value summed = b.create<bufferization::ToTensorOp>(
        loc, buffers[1], /*restrict=*/true, /*writable=*/true);
    summed = b.create<tensor::CastOp>(loc, bucketType, summed);

    SmallVector<Value> results;
    for (auto [input, offset] : llvm::zip(inputs, offsets)) {
      auto type = cast<RankedTensorType>(input.getType());
      int64_t count = type.getNumElements();
      Value slice = b.create<tensor::ExtractSliceOp>(
          loc, RankedTensorType::get({count}, element), summed,
          ArrayRef<OpFoldResult>{b.getIndexAttr(offset)},
          ArrayRef<OpFoldResult>{b.getIndexAttr(count)},
          ArrayRef<OpFoldResult>{b.getIndexAttr(1)});
      results.push_back(unflatten(b, loc, slice, type));
    }
    return results;
  }
};

} // namespace

void mlir::nn::populateCollectiveConversionPatterns(
    const TypeConverter &converter, ConversionState &state,
    RewritePatternSet &patterns) {
  patterns.add<AllReduceConversion>(converter, state);
}
