//===- NNErrorOps.cpp - error counts of recognized sequences --------------===//
//
// Verifiers, result type inference and loss interfaces of
// nn.edit_distance and nn.expected_risk (with nn.expected_risk_grad).
//
//===----------------------------------------------------------------------===//

#include "dialects/nn/NNOps.h"

#include "dialects/nn/NNOpsUtils.h"
#include "mlir/IR/Builders.h"

using namespace mlir;
using namespace mlir::nn;
using namespace mlir::nn::detail;

/// The result types of an edit distance over batch `batch`: errors and
/// reference lengths `[B]` f32, counts `[B, 3]` i32.
static SmallVector<Type, 3> editDistanceTypes(MLIRContext *context,
                                              Attribute batch) {
  Builder b(context);
  auto perSequence = NNTensorType::get({batch}, b.getF32Type());
  auto counts =
      NNTensorType::get({batch, b.getI64IntegerAttr(3)}, b.getI32Type());
  return {perSequence, perSequence, counts};
}

/// Requires `value` to be padded i32 labels `[B, S]` over one sequence dim;
/// returns its positions.
static FailureOr<Positions> requirePaddedLabels(Operation *op,
                                                const DimContext &context,
                                                Value value, StringRef what) {
  FailureOr<Positions> positions = context.positions(value);
  if (failed(positions))
    return failure();
  NNTensorType type = tensorOf(value);
  if (positions->kind != PositionKind::Padded ||
      positions->sequences.size() != 1 || type.getRank() != 2 ||
      !type.getElementType().isSignlessInteger(32)) {
    op->emitOpError() << what << " must be padded i32 labels [batch, sequence]"
                      << (positions->kind == PositionKind::Packed
                              ? " (packed labels are not accepted)"
                              : "")
                      << ", got " << type;
    return failure();
  }
  return positions;
}

bool EditDistanceOp::isPerFrameLoss() { return false; }

LogicalResult EditDistanceOp::verify() {
  FailureOr<DimContext> context = DimContext::get(*this);
  if (failed(context))
    return failure();
  FailureOr<Positions> hyp =
      requirePaddedLabels(*this, *context, getHyp(), "hyp");
  if (failed(hyp))
    return failure();
  FailureOr<Positions> ref =
      requirePaddedLabels(*this, *context, getRef(), "ref");
  if (failed(ref))
    return failure();
  if (ref->batch != hyp->batch)
    return emitOpError() << "ref batch '" << ref->batch
                         << "' differs from the hyp batch '" << hyp->batch
                         << "'";
  if (std::optional<int64_t> separator = getSeparator();
      separator && *separator < 0)
    return emitOpError() << "words separator must be a label (>= 0), got "
                         << *separator;
  SmallVector<Type, 3> want =
      editDistanceTypes(getContext(), tensorOf(getHyp()).getDims()[0]);
  StringRef names[] = {"errors", "ref_lengths", "counts"};
  for (auto [name, result, type] : llvm::zip(names, getResults(), want))
    if (result.getType() != type)
      return emitOpError() << name << " must be " << type << ", got "
                           << result.getType();
  return success();
}

LogicalResult EditDistanceOp::inferReturnTypes(
    MLIRContext *context, std::optional<Location> location, ValueRange operands,
    DictionaryAttr, OpaqueProperties, RegionRange,
    SmallVectorImpl<Type> &inferred) {
  FailureOr<NNTensorType> hyp = inferenceOperand(location, operands, 0, "hyp");
  if (failed(hyp))
    return failure();
  if (hyp->getRank() == 0)
    return emitOptionalError(location, "hyp must be [B, Y], got ", *hyp);
  llvm::append_range(inferred,
                     editDistanceTypes(context, hyp->getDims().front()));
  return success();
}

//===----------------------------------------------------------------------===//
// ExpectedRiskOp, ExpectedRiskGradOp
//===----------------------------------------------------------------------===//

/// The operand checks nn.expected_risk and its gradient share: `nll` and
/// `err` padded [B, K] over one sequence dim, of one type. Returns the
/// dims of the per-sequence result, [B].
static FailureOr<ArrayRef<Attribute>> verifyRiskOperands(Operation *op,
                                                         Value nll, Value err) {
  FailureOr<DimContext> context = DimContext::get(op);
  if (failed(context))
    return failure();
  for (auto [value, what] : {std::pair(nll, "nll"), std::pair(err, "err")}) {
    FailureOr<Positions> positions = context->positions(value);
    if (failed(positions))
      return failure();
    NNTensorType type = tensorOf(value);
    if (positions->kind != PositionKind::Padded ||
        positions->sequences.size() != 1 || type.getRank() != 2)
      return op->emitOpError()
             << what << " must be padded [batch, hypotheses] values"
             << (positions->kind == PositionKind::Packed
                     ? " (packed values are not accepted)"
                     : "")
             << ", got " << type;
  }
  NNTensorType nllType = tensorOf(nll), errType = tensorOf(err);
  if (errType.getDims() != nllType.getDims())
    return op->emitOpError() << "err must be over the dims of nll "
                             << formatDims(nllType.getDims()) << ", got "
                             << formatDims(errType.getDims());
  if (errType.getElementType() != nllType.getElementType())
    return op->emitOpError()
           << "err element type " << errType.getElementType()
           << " differs from the nll element type " << nllType.getElementType();
  return nllType.getDims().take_front(1);
}

bool ExpectedRiskOp::isPerFrameLoss() { return false; }

LogicalResult ExpectedRiskOp::verify() {
  FailureOr<ArrayRef<Attribute>> dims =
      verifyRiskOperands(*this, getNll(), getErr());
  if (failed(dims))
    return failure();
  return requireResultDims(*this, *dims, tensorOf(getNll()).getElementType());
}

LogicalResult ExpectedRiskOp::inferReturnTypes(
    MLIRContext *, std::optional<Location> location, ValueRange operands,
    DictionaryAttr, OpaqueProperties, RegionRange,
    SmallVectorImpl<Type> &inferred) {
  FailureOr<NNTensorType> nll = inferenceOperand(location, operands, 0, "nll");
  if (failed(nll))
    return failure();
  if (nll->getRank() == 0)
    return emitOptionalError(location, "nll must be [B, K], got ", *nll);
  inferred.push_back(
      NNTensorType::get(nll->getDims().take_front(1), nll->getElementType()));
  return success();
}

LogicalResult ExpectedRiskGradOp::verify() {
  FailureOr<ArrayRef<Attribute>> dims =
      verifyRiskOperands(*this, getNll(), getErr());
  if (failed(dims))
    return failure();
  return requireLossGradType(*this, getGrad(), *dims, getNll());
}
