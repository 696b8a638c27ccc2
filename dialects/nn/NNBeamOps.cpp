//===- NNBeamOps.cpp - N-best lists as a batch ----------------------------===//
//
// Verifiers of the ops that move values between the N-best layout
// [B, K, ...] and the flattened batch H = flatten(B, K). Each derives the
// result dims from the operand's and the graph's declarations and
// compares them with the result type.
//
//===----------------------------------------------------------------------===//

#include "dialects/nn/NNOps.h"

#include "dialects/nn/NNOpsUtils.h"

using namespace mlir;
using namespace mlir::nn;
using namespace mlir::nn::detail;

/// The operand's padded (or per-sequence) positions; packed and static
/// operands are refused.
static FailureOr<Positions>
requireBatchPositions(Operation *op, const DimContext &context, Value value) {
  FailureOr<Positions> positions = context.positions(value);
  if (failed(positions))
    return failure();
  if (positions->kind != PositionKind::Batch &&
      positions->kind != PositionKind::Padded)
    return op->emitOpError() << "input must be [B, ...] or [B, T..., ...] "
                                "over a batch dim, got "
                             << value.getType();
  return positions;
}

/// The declaration of the flattened batch `name`, or an error.
static FailureOr<DimDeclAttr>
requireFlattened(Operation *op, const DimContext &context, StringRef name) {
  DimDeclAttr decl = context.getTable().lookup(name);
  if (!decl || !decl.isFlatten())
    return op->emitOpError()
           << "'" << name
           << "' is not a flattened batch (declare 'H: batch = flatten(B, "
              "K)')";
  return decl;
}

//===----------------------------------------------------------------------===//
// FlattenBeamOp
//===----------------------------------------------------------------------===//

LogicalResult FlattenBeamOp::verify() {
  FailureOr<DimContext> context = DimContext::get(*this);
  if (failed(context))
    return failure();
  FailureOr<Positions> positions =
      requireBatchPositions(*this, *context, getInput());
  if (failed(positions))
    return failure();
  if (positions->sequences.empty())
    return emitOpError() << "input must be [B, K, ...] with K the hypotheses "
                            "of each sequence, got "
                         << getInput().getType();
  StringRef batch = positions->batch, beam = positions->sequences.front();
  DimDeclAttr flat = context->getTable().findFlatten(batch, beam);
  if (!flat)
    return emitOpError() << "no batch dim is declared 'flatten(" << batch
                         << ", " << beam << ")'";
  if (positions->sequences.size() > 1 && !positions->isNested())
    return emitOpError() << "the axes after '" << beam
                         << "' must be sequence dims of '"
                         << flat.getName().getValue()
                         << "' (the N-best layout), got "
                         << getInput().getType();
  NNTensorType input = tensorOf(getInput());
  SmallVector<Attribute> dims{flat.getName()};
  llvm::append_range(dims, input.getDims().drop_front(2));
  return requireResultDims(*this, dims, input.getElementType());
}

//===----------------------------------------------------------------------===//
// UnflattenBeamOp
//===----------------------------------------------------------------------===//

LogicalResult UnflattenBeamOp::verify() {
  FailureOr<DimContext> context = DimContext::get(*this);
  if (failed(context))
    return failure();
  FailureOr<Positions> positions =
      requireBatchPositions(*this, *context, getInput());
  if (failed(positions))
    return failure();
  FailureOr<DimDeclAttr> flat =
      requireFlattened(*this, *context, positions->batch);
  if (failed(flat))
    return failure();
  NNTensorType input = tensorOf(getInput());
  SmallVector<Attribute> dims{flat->getSource(), flat->getInner()};
  llvm::append_range(dims, input.getDims().drop_front(1));
  return requireResultDims(*this, dims, input.getElementType());
}

//===----------------------------------------------------------------------===//
// RepeatBeamOp
//===----------------------------------------------------------------------===//

LogicalResult RepeatBeamOp::verify() {
  FailureOr<DimContext> context = DimContext::get(*this);
  if (failed(context))
    return failure();
  FailureOr<Positions> positions =
      requireBatchPositions(*this, *context, getInput());
  if (failed(positions))
    return failure();
  NNTensorType input = tensorOf(getInput());
  NNTensorType result = tensorOf(getResult());
  if (result.getNumPositionDims() == 0)
    return emitOpError() << "result must be over a flattened batch of '"
                         << positions->batch << "', got " << result;
  StringRef flatName = result.getDimName(0);
  FailureOr<DimDeclAttr> flat = requireFlattened(*this, *context, flatName);
  if (failed(flat))
    return failure();
  if (flat->getSource().getValue() != positions->batch)
    return emitOpError() << "'" << flatName << "' flattens '"
                         << flat->getSource().getValue() << "', not the "
                         << "input's batch '" << positions->batch << "'";
  SmallVector<Attribute> dims{flat->getName()};
  for (StringRef sequence : positions->sequences) {
    DimDeclAttr lift = context->getTable().findLift(flatName, sequence);
    if (!lift)
      return emitOpError() << "no dim lifts '" << sequence << "' onto '"
                           << flatName << "' (declare 'S: seq(" << flatName
                           << ") = " << sequence << "')";
    dims.push_back(lift.getName());
  }
  llvm::append_range(dims, input.getDims().drop_front(positions->getNumAxes()));
  return requireResultDims(*this, dims, input.getElementType());
}

//===----------------------------------------------------------------------===//
// SumBeamOp
//===----------------------------------------------------------------------===//

LogicalResult SumBeamOp::verify() {
  FailureOr<DimContext> context = DimContext::get(*this);
  if (failed(context))
    return failure();
  FailureOr<Positions> positions =
      requireBatchPositions(*this, *context, getInput());
  if (failed(positions))
    return failure();
  FailureOr<DimDeclAttr> flat =
      requireFlattened(*this, *context, positions->batch);
  if (failed(flat))
    return failure();
  NNTensorType input = tensorOf(getInput());
  SmallVector<Attribute> dims{flat->getSource()};
  for (StringRef sequence : positions->sequences) {
    DimDeclAttr decl = context->getTable().lookup(sequence);
    if (!decl.isLift())
      return emitOpError() << "'" << sequence << "' is not lifted from a "
                           << "sequence dim of '"
                           << flat->getSource().getValue()
                           << "'; only lifted axes can be summed back";
    dims.push_back(decl.getSource());
  }
  llvm::append_range(dims, input.getDims().drop_front(positions->getNumAxes()));
  return requireResultDims(*this, dims, input.getElementType());
}

//===----------------------------------------------------------------------===//
// VJPs: flatten and unflatten are each other's adjoint on valid positions
// (unflatten's padding is zero, which flatten drops); repeat and sum are
// adjoints.
//===----------------------------------------------------------------------===//

LogicalResult
FlattenBeamOp::buildVjp(OpBuilder &b, ValueRange resultGradients,
                        SmallVectorImpl<Value> &operandGradients) {
  Value g = resultGradients[0];
  operandGradients.push_back(
      g ? b.create<UnflattenBeamOp>(getLoc(), getInput().getType(), g)
              .getResult()
        : Value());
  return success();
}

LogicalResult
UnflattenBeamOp::buildVjp(OpBuilder &b, ValueRange resultGradients,
                          SmallVectorImpl<Value> &operandGradients) {
  Value g = resultGradients[0];
  operandGradients.push_back(
      g ? b.create<FlattenBeamOp>(getLoc(), getInput().getType(), g).getResult()
        : Value());
  return success();
}

LogicalResult RepeatBeamOp::buildVjp(OpBuilder &b, ValueRange resultGradients,
                                     SmallVectorImpl<Value> &operandGradients) {
  Value g = resultGradients[0];
  operandGradients.push_back(
      g ? b.create<SumBeamOp>(getLoc(), getInput().getType(), g).getResult()
        : Value());
  return success();
}

LogicalResult SumBeamOp::buildVjp(OpBuilder &b, ValueRange resultGradients,
                                  SmallVectorImpl<Value> &operandGradients) {
  Value g = resultGradients[0];
  operandGradients.push_back(
      g ? b.create<RepeatBeamOp>(getLoc(), getInput().getType(), g).getResult()
        : Value());
  return success();
}
