//===- Dims.h - named dims: declarations, positions, binding ----*- C++ -*-===//
//
// The C++ side of the dim type system: the table of dims a graph declares,
// the classification of a type's position axes, and the binding of a
// callee's dims to a caller's. Verifiers and passes use these; they never
// compare dim names by hand.
//
//===----------------------------------------------------------------------===//

#ifndef NN_DIALECTS_NN_DIMS_H
#define NN_DIALECTS_NN_DIMS_H

#include "dialects/nn/NNDialect.h"
#include "mlir/IR/Diagnostics.h"
#include "llvm/ADT/SmallVector.h"
#include "llvm/ADT/StringMap.h"

namespace mlir::nn {

/// Produces an error diagnostic at the place being verified.
using EmitErrorFn = llvm::function_ref<InFlightDiagnostic()>;

/// The dims declared by one graph, looked up by name.
class DimTable {
public:
  DimTable() = default;
  /// Builds the table from a graph's `dims` attribute. Entries that are not
  /// `#nn.dim` declarations are skipped (the graph verifier reports them).
  explicit DimTable(ArrayAttr dims);

  /// The table of the graph that encloses `op` (or of the function a graph
  /// was partly lowered to, NNDialect::kLoweredDimsAttrName), or failure
  /// with an error on `op` when there is none.
  static FailureOr<DimTable> forOp(Operation *op);

  /// The declaration of `name`, or null.
  DimDeclAttr lookup(StringRef name) const;
  bool isBatch(StringRef name) const;
  /// True for sequence dims, derived ones included.
  bool isSequence(StringRef name) const;
  bool isPacked(StringRef name) const;

  /// The dim declared `packed(batch, sequence)`, or, with `inner`,
  /// `packed(batch, sequence, inner)`; null if there is none.
  DimDeclAttr findPacked(StringRef batch, StringRef sequence,
                         StringRef inner = {}) const;
  /// The dim declared `seq(...) = ceildiv(source, factor)` (offset 0) or
  /// `seq(...) = source + offset` (factor 1), or null.
  DimDeclAttr findDerived(StringRef source, int64_t factor,
                          int64_t offset = 0) const;

  /// The batch declared `flatten(batch, sequence)`, or null.
  DimDeclAttr findFlatten(StringRef batch, StringRef sequence) const;
  /// The sequence dim declared `seq(batch) = source` (a lift), or null.
  DimDeclAttr findLift(StringRef batch, StringRef source) const;

  ArrayRef<DimDeclAttr> getDecls() const { return decls; }

  /// The computed dims (`seq(B) computed`) whose lengths `name`'s depend
  /// on: itself when it is one, the sources of a derived or packed dim
  /// otherwise (empty for dims the caller's lengths determine).
  SmallVector<StringRef, 2> computedSources(StringRef name) const;
  /// True when `name` is computed or derived/packed from a computed dim.
  bool dependsOnComputed(StringRef name) const {
    return !computedSources(name).empty();
  }
  /// The dims declared `computed`, in declaration order.
  SmallVector<DimDeclAttr> getComputedDims() const;

  /// Checks the declarations: unique names, each reference names an
  /// earlier dim of the right kind, derived dims `ceildiv` by at least 2
  /// or `+` at least 1, at most one packed dim per (batch, sequence) and
  /// per (batch, sequence, inner), `computed` only on a sequence dim that
  /// is not derived, one flatten per (batch, sequence) of an unflattened
  /// batch, lifts onto flattened batches only, and sequences of a flattened
  /// batch computed, lifted or derived.
  LogicalResult verify(EmitErrorFn emitError) const;

private:
  SmallVector<DimDeclAttr> decls;
  llvm::StringMap<unsigned> indexByName;
};

/// What the position axes (the leading named axes) of a type are.
enum class PositionKind {
  /// No named axis: a parameter or a static value.
  None,
  /// `[B]`: one value per sequence.
  Batch,
  /// `[B, T, ...]`: padded frames over one or more sequence dims of B.
  Padded,
  /// `[N]`: packed frames, N declared `packed(B, T)`.
  Packed,
};

/// The classified position axes of a tensor type.
struct Positions {
  PositionKind kind = PositionKind::None;
  /// The batch dim (for packed: the batch that N packs).
  StringRef batch;
  /// Padded: the sequence dims after the batch. Packed: the one it packs
  /// (two for a grid-packed dim: the outer one, then the inner one).
  SmallVector<StringRef, 2> sequences;
  /// Packed: the packed dim N.
  StringRef packed;
  /// The N-best layout `[B, K, Y...]`: the flattened batch
  /// `H = flatten(B, K)` whose sequence dims the axes after K are
  /// (`sequences` = K, Y...). Empty otherwise. Only ops with the BeamLayout
  /// trait accept it.
  StringRef flat;

  unsigned getNumAxes() const;
  bool hasSequenceAxis() const {
    return kind == PositionKind::Padded || kind == PositionKind::Packed;
  }
  bool isNested() const { return !flat.empty(); }
};

/// Checks that every dim `type` names is declared in `table`, that named
/// axes come before static ones and that they form `[B]`, `[B, T...]`,
/// `[N]` or the N-best layout `[B, K, Y...]` (Y sequence dims of
/// `flatten(B, K)`); returns their classification.
FailureOr<Positions> classifyPositions(NNTensorType type, const DimTable &table,
                                       EmitErrorFn emitError);

/// The binding of a callee graph's dims to its caller's dims, built by
/// unifying the types at a call position by position.
class DimBinding {
public:
  DimBinding(const DimTable &callee, const DimTable &caller)
      : callee(callee), caller(caller) {}

  /// Unifies one callee type with the caller's type at the same place;
  /// `what` names that place in diagnostics ("operand 0").
  LogicalResult unify(NNTensorType calleeType, NNTensorType callerType,
                      StringRef what, EmitErrorFn emitError);

  /// Unifies a call: each callee argument type with the operand type at
  /// its place ("operand i"), each callee result type with the call's
  /// result type ("result i").
  LogicalResult unifyCall(TypeRange calleeArguments, TypeRange operands,
                          TypeRange calleeResults, TypeRange results,
                          EmitErrorFn emitError);

  /// Checks that each bound pair has the same kind and that what a dim
  /// refers to (its batch, its source, its factor) is bound consistently.
  /// A callee's computed dim binds nothing: calls return no lengths yet.
  /// A row batch (a callee batch over which the callee declares no
  /// sequence dim) may bind a caller's batch or packed dim.
  LogicalResult verifyKinds(EmitErrorFn emitError);

  /// The caller dim bound to `calleeDim`, or empty.
  StringRef lookup(StringRef calleeDim) const;

private:
  LogicalResult bind(StringRef calleeDim, StringRef callerDim, StringRef what,
                     EmitErrorFn emitError);

  const DimTable &callee;
  const DimTable &caller;
  llvm::StringMap<std::string> binding;
  /// Bound callee dims in binding order, for deterministic diagnostics.
  SmallVector<std::string> order;
};

} // namespace mlir::nn

#endif // NN_DIALECTS_NN_DIMS_H
