//===- NNTraits.h - op traits of the nn dialect -----------------*- C++ -*-===//
//
// DimsDeclared: the dialect-wide check, appended to every op by the NN_Op
// base class, that the dims named in operand and result types are declared
// by the enclosing graph. BeamLayout: the ops that accept N-best layouts.
//
//===----------------------------------------------------------------------===//

#ifndef NN_DIALECTS_NN_NNTRAITS_H
#define NN_DIALECTS_NN_NNTRAITS_H

#include "mlir/IR/OpDefinition.h"

namespace mlir::nn {
namespace detail {
/// Verifies the types of `op`'s operands and results against the dims of
/// the enclosing graph.
LogicalResult verifyDimsDeclared(Operation *op);
} // namespace detail

namespace OpTrait {
template <typename ConcreteType>
class DimsDeclared
    : public mlir::OpTrait::TraitBase<ConcreteType, DimsDeclared> {
public:
  static LogicalResult verifyTrait(Operation *op) {
    return detail::verifyDimsDeclared(op);
  }
};

/// Marks ops that accept N-best layout types `[B, K, Y...]`; DimsDeclared
/// refuses them on every other op.
template <typename ConcreteType>
class BeamLayout : public mlir::OpTrait::TraitBase<ConcreteType, BeamLayout> {};
} // namespace OpTrait
} // namespace mlir::nn

#endif // NN_DIALECTS_NN_NNTRAITS_H
