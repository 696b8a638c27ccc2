//===- GraphUtils.h - graph-level rewrites shared by passes and lowering -*- C++
//-*-===//
//
// Helpers that nn passes and the conversion to linalg both use, in a
// library of their own (NNPassUtils) so that the conversion does not link
// the pass library: finding the entry graph, appending an argument, and
// the rewrites of nn-expose-losses (marked losses become graph results)
// and nn-derive-step-graphs (a transducer predictor's step form), which
// nn-convert-to-linalg runs as its first steps.
//
//===----------------------------------------------------------------------===//

#ifndef NN_PASSES_UTILS_GRAPHUTILS_H
#define NN_PASSES_UTILS_GRAPHUTILS_H

#include "dialects/nn/NNOps.h"

#include "mlir/IR/BuiltinOps.h"

namespace mlir::nn {

/// The rewrite of nn-expose-losses: each nn.mark_loss becomes
/// nn.loss_terms, whose two f64 values its graph returns after its own
/// results (a call returns its callee's). Fails (with a diagnostic) on
/// recursive calls.
LogicalResult exposeLosses(ModuleOp module);

/// Gives every transducer decoder whose predictor is in the sequence form
/// (dialects/nn/TransducerPredictor.h) a derived graph in the step form,
/// `<predictor>.step`, and points the decoder at it; one per predictor.
/// The rewrite of nn-derive-step-graphs, which nn-convert-to-linalg runs
/// too. Idempotent.
LogicalResult deriveStepGraphs(ModuleOp module);

/// The graph `name` names, or (empty) the one graph no graph calls; an
/// error from `pass` otherwise.
FailureOr<GraphOp> findEntryGraph(ModuleOp module, StringRef name,
                                  StringRef pass);
/// Appends an argument `name` of `type` to `graph` (its block, type, name
/// and attributes); an error from `pass` when the name is taken.
FailureOr<Value> appendArgument(GraphOp graph, StringRef name, Type type,
                                StringRef pass);

} // namespace mlir::nn

#endif // NN_PASSES_UTILS_GRAPHUTILS_H
