//===- NNPackOps.cpp - pack, unpack and broadcast -------------------------===//
//
// Verifiers and the folder of the conversions between padded frames,
// packed frames and per-sequence values.
//
//===----------------------------------------------------------------------===//

#include "dialects/nn/NNOps.h"

#include "dialects/nn/NNOpsUtils.h"

using namespace mlir;
using namespace mlir::nn;
using namespace mlir::nn::detail;

/// Checks that `packed` is `padded` with its [B, T] positions replaced by
/// the dim declared `packed(B, T)`.
static LogicalResult verifyPackPair(Operation *op, Value padded, Value packed) {
  FailureOr<DimContext> context = DimContext::get(op);
  if (failed(context))
    return failure();
  StringRef paddedRole = op->getOperand(0) == padded ? "input" : "result";
  StringRef packedRole = paddedRole == "input" ? "result" : "input";
  FailureOr<Positions> in =
      requirePaddedFrames(op, *context, padded, paddedRole);
  if (failed(in))
    return failure();
  FailureOr<Positions> out = context->positions(packed);
  if (failed(out))
    return failure();
  NNTensorType paddedType = tensorOf(padded), packedType = tensorOf(packed);
  if (out->kind != PositionKind::Packed)
    return op->emitOpError()
           << packedRole << " must be packed frames [N, ...], "
           << "got " << packedType;
  if (out->sequences.size() != 1)
    return op->emitOpError()
           << packedRole << " is over the grid-packed dim '" << out->packed
           << "'; nn.pack and nn.unpack pack one sequence dim (a joint's "
              "grid comes from nn.transducer_join)";
  if (out->batch != in->batch || out->sequences[0] != in->sequences[0]) {
    DimDeclAttr expected =
        context->getTable().findPacked(in->batch, in->sequences[0]);
    InFlightDiagnostic diag = op->emitOpError();
    diag << "packed dim '" << out->packed << "' packs (" << out->batch << ", "
         << out->sequences[0] << "), but the padded value is over ("
         << in->batch << ", " << in->sequences[0] << ")";
    if (expected)
      diag << " (did you mean '" << expected.getName().getValue() << "'?)";
    return diag;
  }
  if (paddedType.getDims().drop_front(2) !=
          packedType.getDims().drop_front(1) ||
      paddedType.getElementType() != packedType.getElementType())
    return op->emitOpError()
           << "feature axes and element type of " << packedType
           << " must equal those of " << paddedType;
  return success();
}

OpFoldResult PackOp::fold(FoldAdaptor) {
  auto unpack = getInput().getDefiningOp<UnpackOp>();
  if (unpack && unpack.getInput().getType() == getType())
    return unpack.getInput();
  return nullptr;
}

LogicalResult PackOp::verify() {
  return verifyPackPair(*this, getInput(), getResult());
}

LogicalResult UnpackOp::verify() {
  return verifyPackPair(*this, getResult(), getInput());
}

LogicalResult BroadcastSeqOp::verify() {
  FailureOr<DimContext> context = DimContext::get(*this);
  if (failed(context))
    return failure();
  FailureOr<Positions> in = context->positions(getInput());
  if (failed(in))
    return failure();
  if (in->kind != PositionKind::Batch)
    return emitOpError() << "input must be one value per sequence [batch, "
                            "...], got "
                         << getInput().getType();
  FailureOr<Positions> out =
      requirePaddedFrames(*this, *context, getResult(), "result");
  if (failed(out))
    return failure();
  if (out->batch != in->batch)
    return emitOpError() << "result frames are sequences of '" << out->batch
                         << "', but the input is over '" << in->batch << "'";
  NNTensorType inType = tensorOf(getInput()), outType = tensorOf(getResult());
  if (inType.getDims().drop_front(1) != outType.getDims().drop_front(2) ||
      inType.getElementType() != outType.getElementType())
    return emitOpError() << "feature axes and element type of " << outType
                         << " must equal those of " << inType;
  return success();
}
