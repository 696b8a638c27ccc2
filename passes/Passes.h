//===- Passes.h - nn-level passes -------------------------------*- C++ -*-===//

#ifndef NN_PASSES_PASSES_H
#define NN_PASSES_PASSES_H

#include "dialects/nn/NNOps.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/Pass/Pass.h"

namespace mlir::nn {

#define GEN_PASS_DECL
#include "passes/Passes.h.inc"

/// The rewrite of nn-expose-losses, for passes that need it as a first
/// step. Fails (with a diagnostic) on recursive calls.
LogicalResult exposeLosses(ModuleOp module);

/// The graph `name` names, or (empty) the one graph no graph calls; an
/// error from `pass` otherwise.
FailureOr<GraphOp> findEntryGraph(ModuleOp module, StringRef name,
                                  StringRef pass);
/// Appends an argument `name` of `type` to `graph` (its block, type, name
/// and attributes); an error from `pass` when the name is taken.
FailureOr<Value> appendArgument(GraphOp graph, StringRef name, Type type,
                                StringRef pass);

#define GEN_PASS_REGISTRATION
#include "passes/Passes.h.inc"

} // namespace mlir::nn

#endif // NN_PASSES_PASSES_H
