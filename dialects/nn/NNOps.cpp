//===- NNOps.cpp - ops of the nn dialect: shared checks, definitions ------===//
//
// The generated op definitions, the checks that the op families share
// (declared in NNOpsUtils.h) and the dialect-wide DimsDeclared check. Each
// family's verifiers, type inference, folders and custom syntax are in the
// file of its name (NNGraphOps.cpp, NNFrameWiseOps.cpp, NNSequenceOps.cpp,
// NNLossOps.cpp, NNCtcOps.cpp, NNTransducerOps.cpp, NNPackOps.cpp,
// NNGradientOps.cpp, NNOptimizerOps.cpp); VJPs are in NNVjp.cpp.
//
//===----------------------------------------------------------------------===//

#include "dialects/nn/NNOps.h"

#include "dialects/nn/NNOpsUtils.h"
#include "mlir/IR/Builders.h"
#include "llvm/ADT/STLExtras.h"

using namespace mlir;
using namespace mlir::nn;

//===----------------------------------------------------------------------===//
// Shared checks and inference (NNOpsUtils.h)
//===----------------------------------------------------------------------===//

std::string mlir::nn::detail::formatDims(ArrayRef<Attribute> dims) {
  std::string text;
  llvm::raw_string_ostream os(text);
  os << "[";
  llvm::interleaveComma(dims, os, [&](Attribute dim) {
    if (auto size = dyn_cast<IntegerAttr>(dim))
      os << size.getInt();
    else
      os << cast<StringAttr>(dim).getValue();
  });
  os << "]";
  return text;
}

LogicalResult mlir::nn::detail::requireStaticShape(Operation *op, Value value,
                                                   StringRef what,
                                                   ArrayRef<int64_t> shape) {
  NNTensorType type = tensorOf(value);
  bool matches =
      type.hasStaticShape() && type.getRank() == (int64_t)shape.size();
  for (unsigned i = 0; matches && i < shape.size(); ++i)
    matches = type.getStaticSize(i) == shape[i];
  if (matches)
    return success();
  InFlightDiagnostic diag = op->emitOpError();
  diag << what << " must have the static shape [";
  llvm::interleaveComma(shape, diag);
  diag << "], got " << type;
  return diag;
}

LogicalResult mlir::nn::detail::requireStaticShape(Operation *op, Value value,
                                                   StringRef role) {
  if (tensorOf(value).hasStaticShape())
    return success();
  return op->emitOpError() << role << " must have a static shape (a "
                           << "parameter or its gradient), got "
                           << value.getType();
}

LogicalResult mlir::nn::detail::requireStaticInputs(Operation *op,
                                                    ValueRange inputs) {
  if (inputs.empty())
    return op->emitOpError() << "needs at least one input";
  for (auto [i, input] : llvm::enumerate(inputs))
    if (failed(requireStaticShape(op, input, "input " + std::to_string(i))))
      return failure();
  return success();
}

LogicalResult mlir::nn::detail::requireMaskSeed(Operation *op, Value seed) {
  NNTensorType type = tensorOf(seed);
  bool scalar = type.getRank() == 0;
  bool withOffset = type.getRank() == 1 && type.hasStaticShape() &&
                    type.getStaticSize(0) == 2;
  if ((scalar || withOffset) && type.getElementType().isSignlessInteger(32))
    return success();
  return op->emitOpError() << "seed must be a scalar !nn.tensor<[], i32> (or "
                              "!nn.tensor<[2], i32>: the seed and the batch "
                              "offset), got "
                           << type;
}

LogicalResult mlir::nn::detail::requireResultDims(Operation *op,
                                                  ArrayRef<Attribute> dims,
                                                  Type elementType) {
  NNTensorType result = tensorOf(op->getResult(0));
  if (result.getDims() == dims && result.getElementType() == elementType)
    return success();
  return op->emitOpError() << "result must be "
                           << NNTensorType::get(dims, elementType) << ", got "
                           << result;
}

LogicalResult mlir::nn::detail::requireOneFeatureAxis(Operation *op,
                                                      Value value,
                                                      StringRef what) {
  NNTensorType type = tensorOf(value);
  if (type.getRank() == 0 || featureSize(type) < 0 ||
      type.getNumPositionDims() != type.getRank() - 1)
    return op->emitOpError() << what
                             << " must have position axes then one static "
                                "feature axis, got "
                             << type;
  return success();
}

FailureOr<Positions>
mlir::nn::detail::requirePaddedFrames(Operation *op, const DimContext &context,
                                      Value value, StringRef what) {
  FailureOr<Positions> positions = context.positions(value);
  if (failed(positions))
    return failure();
  if (positions->kind != PositionKind::Padded ||
      positions->sequences.size() != 1) {
    op->emitOpError() << what << " must be padded frames [batch, sequence, ...]"
                      << (positions->kind == PositionKind::Packed
                              ? " (a packed value cannot be used here)"
                              : "")
                      << ", got " << value.getType();
    return failure();
  }
  return positions;
}

FailureOr<Positions> mlir::nn::detail::requireSequenceFrames(
    Operation *op, const DimContext &context, Value value, StringRef what) {
  FailureOr<Positions> positions = context.positions(value);
  if (failed(positions))
    return failure();
  bool padded = positions->kind == PositionKind::Padded;
  if ((!padded && positions->kind != PositionKind::Packed) ||
      positions->sequences.size() != 1 || positions->isNested())
    return op->emitOpError()
           << what
           << " must be the frames of one sequence dim, padded [batch, "
              "sequence, ...] or packed [packed(batch, sequence), ...], got "
           << value.getType();
  return positions;
}

LogicalResult mlir::nn::detail::requireLossGradType(Operation *op, Value grad,
                                                    ArrayRef<Attribute> dims,
                                                    Value scores) {
  auto want = NNTensorType::get(dims, tensorOf(scores).getElementType());
  if (tensorOf(grad) != want)
    return op->emitOpError() << "grad must be the loss's type " << want
                             << ", got " << tensorOf(grad);
  return success();
}

FailureOr<NNTensorType>
mlir::nn::detail::inferenceOperand(std::optional<Location> location,
                                   ValueRange operands, unsigned index,
                                   StringRef what) {
  auto type = index < operands.size()
                  ? dyn_cast<NNTensorType>(operands[index].getType())
                  : NNTensorType();
  if (!type)
    return emitOptionalError(location, what, " must be an nn tensor");
  return type;
}

FailureOr<int64_t>
mlir::nn::detail::inferenceStaticSize(std::optional<Location> location,
                                      NNTensorType type, int64_t axis,
                                      StringRef expected) {
  int64_t rank = type.getRank();
  int64_t index = axis < 0 ? rank + axis : axis;
  if (index < 0 || index >= rank || type.getStaticSize(index) < 0)
    return emitOptionalError(location, expected, ", got ", type);
  return type.getStaticSize(index);
}

NNTensorType mlir::nn::detail::inferredType(MLIRContext *context,
                                            ArrayRef<Attribute> dims,
                                            bool dropLast,
                                            ArrayRef<int64_t> appended,
                                            Type element) {
  SmallVector<Attribute> result(dropLast && !dims.empty() ? dims.drop_back()
                                                          : dims);
  Builder builder(context);
  for (int64_t size : appended)
    result.push_back(builder.getI64IntegerAttr(size));
  return NNTensorType::get(result, element);
}

//===----------------------------------------------------------------------===//
// DimsDeclared trait
//===----------------------------------------------------------------------===//

LogicalResult mlir::nn::detail::verifyDimsDeclared(Operation *op) {
  FailureOr<DimTable> table = DimTable::forOp(op);
  if (failed(table))
    return failure();
  auto check = [&](Type type) -> LogicalResult {
    auto tensor = dyn_cast<NNTensorType>(type);
    if (!tensor)
      return success();
    FailureOr<Positions> positions =
        classifyPositions(tensor, *table, [&] { return op->emitOpError(); });
    if (failed(positions))
      return failure();
    if (positions->isNested() && !op->hasTrait<OpTrait::BeamLayout>())
      return op->emitOpError()
             << "type " << tensor << " is an N-best layout (its axes after '"
             << positions->sequences.front() << "' are sequences of '"
             << positions->flat << "'); flatten it with nn.flatten_beam";
    return success();
  };
  for (Type type : op->getOperandTypes())
    if (failed(check(type)))
      return failure();
  for (Type type : op->getResultTypes())
    if (failed(check(type)))
      return failure();
  return success();
}

#define GET_OP_CLASSES
#include "dialects/nn/NNOps.cpp.inc"
