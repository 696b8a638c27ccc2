//===- Origin.h - which nn op an IR op came from ----------------*- C++ -*-===//
//
// nn-convert-to-linalg gives everything it creates the location
// NameLoc("nn.<op>", <the nn op's location>) (originLoc). The functions
// below read it back for kernel names and runtime error messages. An
// nn-level rewrite that replaces the op a user wrote by another
// (nn-expose-losses: mark_loss by loss_terms) names the user's op in the
// new op's location already; originLoc keeps that name.
//
//===----------------------------------------------------------------------===//

#ifndef NN_LOWERING_CONVERSION_ORIGIN_H
#define NN_LOWERING_CONVERSION_ORIGIN_H

#include "mlir/IR/Location.h"

#include <string>

namespace mlir {
class Operation;
} // namespace mlir

namespace mlir::nn {

/// NameLoc("nn.<op>", loc of `op`), or the location of `op` when it already
/// names an nn op.
Location originLoc(Operation *op);

/// The nn op's name without the dialect prefix ("linear"); `fallback` when
/// the location names none.
std::string originOpName(Location loc, const std::string &fallback);

/// "nn.linear at model.mlir:12:5" (or less, as far as the location tells).
std::string describeOrigin(Location loc);

} // namespace mlir::nn

#endif // NN_LOWERING_CONVERSION_ORIGIN_H
