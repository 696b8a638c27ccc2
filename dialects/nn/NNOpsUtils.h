//===- NNOpsUtils.h - checks the nn op families share -----------*- C++ -*-===//
//
// Private to dialects/nn: the helpers that the per-family op files
// (NNGraphOps.cpp, NNFrameWiseOps.cpp, ...) share; NNOps.cpp defines them.
// Each verifier checks the op's shape relation in terms of named dims: the
// enclosing graph's DimTable says what each dim is, classifyPositions says
// what a value's position axes are.
//
//===----------------------------------------------------------------------===//

#ifndef NN_DIALECTS_NN_NNOPSUTILS_H
#define NN_DIALECTS_NN_NNOPSUTILS_H

#include "dialects/nn/Dims.h"
#include "dialects/nn/NNOps.h"

#include <string>

namespace mlir::nn::detail {

/// The nn tensor type of `value`.
inline NNTensorType tensorOf(Value value) {
  return cast<NNTensorType>(value.getType());
}

/// What verifiers need to know about dims: the enclosing graph's table,
/// and the op that reports errors.
class DimContext {
public:
  static FailureOr<DimContext> get(Operation *op) {
    FailureOr<DimTable> table = DimTable::forOp(op);
    if (failed(table))
      return failure();
    return DimContext(op, std::move(*table));
  }

  FailureOr<Positions> positions(Value value) const {
    return classifyPositions(tensorOf(value), table,
                             [&] { return op->emitOpError(); });
  }

  const DimTable &getTable() const { return table; }

private:
  DimContext(Operation *op, DimTable table) : op(op), table(std::move(table)) {}
  Operation *op;
  DimTable table;
};

/// `[a, b, ...]` of a type's dims, for diagnostics.
std::string formatDims(ArrayRef<Attribute> dims);

/// The dims of `type` without its last (feature) axis.
inline ArrayRef<Attribute> dropFeatureAxis(NNTensorType type) {
  return type.getDims().drop_back();
}

/// The static size of the last axis, or -1 when it is absent or named.
inline int64_t featureSize(NNTensorType type) {
  if (type.getRank() == 0)
    return -1;
  return type.getStaticSize(type.getRank() - 1);
}

//===----------------------------------------------------------------------===//
// Verifier checks
//===----------------------------------------------------------------------===//

/// Requires `value` to have the static shape `shape` (parameters, weights).
LogicalResult requireStaticShape(Operation *op, Value value, StringRef what,
                                 ArrayRef<int64_t> shape);

/// Requires `value` to have a static shape: a parameter or its gradient
/// (optimizer ops, nn.param_norm); `role` names it in the message.
LogicalResult requireStaticShape(Operation *op, Value value, StringRef role);

/// Requires at least one input and a static shape for each (`input i` in
/// messages): the parameters or gradients of nn.global_norm and
/// nn.param_norm.
LogicalResult requireStaticInputs(Operation *op, ValueRange inputs);

/// Requires the seed of a counter-hashed mask (dropout, spec_augment,
/// attention dropout): `!nn.tensor<[], i32>`, or `!nn.tensor<[2], i32>`
/// holding the seed and the index in the whole batch of this batch's first
/// sequence (a data-parallel rank's part; nn-dropout-training
/// `batch-offset`), which the mask adds to every sequence index.
LogicalResult requireMaskSeed(Operation *op, Value seed);

/// Requires the result to be `dims` with the element type `elementType`.
LogicalResult requireResultDims(Operation *op, ArrayRef<Attribute> dims,
                                Type elementType);

/// Requires a value with feature axes to have exactly one, static, after its
/// position axes: `[P..., F]`.
LogicalResult requireOneFeatureAxis(Operation *op, Value value, StringRef what);

/// Requires `value` to be padded frames over exactly one sequence dim,
/// `[B, T, F]`, and returns its positions.
FailureOr<Positions> requirePaddedFrames(Operation *op,
                                         const DimContext &context, Value value,
                                         StringRef what);

/// Requires `value` to be the frames of exactly one sequence dim, padded
/// `[B, T, F]` or packed `[N, F]` with N = packed(B, T) (not a transducer
/// grid), and returns its positions.
FailureOr<Positions> requireSequenceFrames(Operation *op,
                                           const DimContext &context,
                                           Value value, StringRef what);

/// A per-sequence loss's gradient `grad` must have the loss's type: `dims`
/// (`[B]`) of the scores' element type.
LogicalResult requireLossGradType(Operation *op, Value grad,
                                  ArrayRef<Attribute> dims, Value scores);

//===----------------------------------------------------------------------===//
// Result type inference
//
// Inference runs when an op is built or parsed, before it is verified, so
// it is lenient: it needs only what the result type follows from (the
// positions of one operand, one static size of another) and leaves every
// other check to the verifier, whose messages say more. It fails only
// where no type follows at all.
//===----------------------------------------------------------------------===//

/// Operand `index` as an nn tensor, or failure with an error at `location`.
FailureOr<NNTensorType> inferenceOperand(std::optional<Location> location,
                                         ValueRange operands, unsigned index,
                                         StringRef what);

/// The static size of axis `axis` of `type` (negative: from the end), or
/// failure with the error "`expected`, got <type>" at `location`.
FailureOr<int64_t> inferenceStaticSize(std::optional<Location> location,
                                       NNTensorType type, int64_t axis,
                                       StringRef expected);

/// `dims` (without their last axis, if `dropLast`) followed by `appended`
/// static sizes, with `element`.
NNTensorType inferredType(MLIRContext *context, ArrayRef<Attribute> dims,
                          bool dropLast, ArrayRef<int64_t> appended,
                          Type element);

} // namespace mlir::nn::detail

#endif // NN_DIALECTS_NN_NNOPSUTILS_H
