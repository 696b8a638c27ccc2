//===- DropResults.cpp - a train step's graph returns nothing of its own --===//
//
// A compiled train step returns the gradient norm and the updates
// (nn-train-step), never the graph's own results; dropping them first,
// before packing and fusion, means no unpack is built for a result nobody
// reads and a loss tail whose logits were also a result can fuse. Losses
// marked eval_only (reported by evaluation, never by a step) go too, in
// every graph, with the ops only they used and the computed dims of a
// decoder among them.
//
//===----------------------------------------------------------------------===//

#include "passes/Passes.h"
#include "passes/utils/GraphUtils.h"

#include "dialects/nn/Dims.h"

#include "mlir/IR/Builders.h"
#include "llvm/ADT/SetVector.h"
#include "llvm/ADT/StringSet.h"

namespace mlir::nn {
#define DEBUG_TYPE "nn-drop-results"

#define GEN_PASS_DEF_NNDROPRESULTS
#include "passes/Passes.h.inc"
} // namespace mlir::nn

using namespace mlir;
using namespace mlir::nn;

namespace {

/// The dims `type` names, added to `names`.
void addNamedDims(Type type, llvm::StringSet<> &names) {
  if (auto tensor = dyn_cast<NNTensorType>(type))
    for (unsigned i = 0, e = tensor.getNumPositionDims(); i < e; ++i)
      names.insert(tensor.getDimName(i));
}

/// A computed dim whose producer went with an eval_only loss (the decoder
/// that only the scoring read) leaves the graph's declarations, with the
/// unused dims declared from it: the graph verifier wants a producer for
/// every computed dim.
void dropOrphanComputedDims(GraphOp graph) {
  DimTable table(graph.getDims());
  if (table.getComputedDims().empty())
    return;
  llvm::StringSet<> produced, named;
  for (Type type : graph.getFunctionType().getInputs())
    addNamedDims(type, named);
  for (Type type : graph.getFunctionType().getResults())
    addNamedDims(type, named);
  graph.walk([&](Operation *op) {
    if (auto producer = dyn_cast<DimProducerOpInterface>(op))
      for (StringRef dim : producer.getProducedDims())
        produced.insert(dim);
    for (Type type : op->getOperandTypes())
      addNamedDims(type, named);
    for (Type type : op->getResultTypes())
      addNamedDims(type, named);
  });
  // Declarations refer to earlier ones only: one pass in order finds the
  // dims declared from a dropped one.
  llvm::StringSet<> dropped;
  SmallVector<Attribute> kept;
  for (DimDeclAttr decl : table.getDecls()) {
    StringRef name = decl.getName().getValue();
    bool orphan = decl.getComputed() && !produced.contains(name);
    for (StringAttr reference :
         {decl.getBatch(), decl.getSource(), decl.getInner()})
      orphan |= reference && dropped.contains(reference.getValue());
    if (orphan && !named.contains(name)) {
      dropped.insert(name);
      continue;
    }
    kept.push_back(decl);
  }
  if (!dropped.empty())
    graph.setDimsAttr(ArrayAttr::get(graph.getContext(), kept));
}

struct DropResultsPass
    : public mlir::nn::impl::NNDropResultsBase<DropResultsPass> {
  using NNDropResultsBase::NNDropResultsBase;

  void runOnOperation() override {
    FailureOr<GraphOp> graph =
        findEntryGraph(getOperation(), graphName, "nn-drop-results");
    if (failed(graph))
      return signalPassFailure();
    Block &body = graph->getBody().front();
    auto ret = cast<ReturnOp>(body.getTerminator());
    // A set: an op that fed several of the dropped uses is visited (and
    // erased) once.
    llvm::SetVector<Operation *> producers;
    for (Value result : ret.getOperands())
      if (Operation *producer = result.getDefiningOp())
        producers.insert(producer);
    OpBuilder builder(ret);
    builder.create<ReturnOp>(ret.getLoc(), ValueRange{});
    ret.erase();
    graph->setFunctionTypeAttr(TypeAttr::get(
        builder.getFunctionType(body.getArgumentTypes(), TypeRange{})));
    graph->removeResAttrsAttr();
    // Callee graphs mark losses too: every eval_only mark of the module.
    SmallVector<MarkLossOp> evalOnly;
    getOperation().walk([&](MarkLossOp mark) {
      if (mark.getEvalOnly())
        evalOnly.push_back(mark);
    });
    for (MarkLossOp mark : evalOnly) {
      for (Value operand : mark->getOperands())
        if (Operation *producer = operand.getDefiningOp())
          producers.insert(producer);
      mark.erase();
    }
    // What only the results and those marks used (pure nn ops) goes now,
    // so that later passes see the values' real uses.
    while (!producers.empty()) {
      Operation *op = producers.pop_back_val();
      if (!op->use_empty() || !isPure(op))
        continue;
      for (Value operand : op->getOperands())
        if (Operation *producer = operand.getDefiningOp())
          producers.insert(producer);
      op->erase();
    }
    for (GraphOp each : getOperation().getOps<GraphOp>())
      dropOrphanComputedDims(each);
  }
};
} // namespace
