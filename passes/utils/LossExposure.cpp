//===- LossExposure.cpp - marked losses become graph results --------------===//
//
// Each nn.mark_loss becomes nn.loss_terms, whose two f64 values the graph
// returns after its own results; a call returns its callee's terms as new
// results, which the caller returns in turn. Callees are rewritten before
// their callers so that a call can take the callee's new signature.
//
//===----------------------------------------------------------------------===//

#include "passes/utils/GraphUtils.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/SymbolTable.h"
#include "llvm/ADT/DenseSet.h"

using namespace mlir;
using namespace mlir::nn;

namespace {

class LossExposer {
public:
  explicit LossExposer(ModuleOp module) : symbols(module) {}

  LogicalResult expose(GraphOp graph);

private:
  SymbolTable symbols;
  llvm::DenseSet<Operation *> done, inProgress;
};

} // namespace

LogicalResult LossExposer::expose(GraphOp graph) {
  if (done.contains(graph))
    return success();
  if (!inProgress.insert(graph).second)
    return graph.emitError() << "graph @" << graph.getSymName()
                             << " calls itself (directly or through other "
                                "graphs); its losses cannot be exposed";
  OpBuilder builder(graph.getContext());
  SmallVector<Value> terms;
  for (Operation &op : llvm::make_early_inc_range(graph.getBody().front())) {
    builder.setInsertionPoint(&op);
    if (auto mark = dyn_cast<MarkLossOp>(op)) {
      // The location names the op the user wrote, for kernel names and
      // runtime errors (lowering/conversion/Origin.h).
      Location loc =
          NameLoc::get(mark->getName().getIdentifier(), mark.getLoc());
      auto loss = builder.create<LossTermsOp>(
          loc, mark.getLoss(), mark.getCustomInvNormFactor(), mark.getWeights(),
          mark.getNormalization());
      terms.append({loss.getSum(), loss.getInvNorm()});
      mark.erase();
      continue;
    }
    if (auto call = dyn_cast<CallOp>(op)) {
      auto callee = symbols.lookup<GraphOp>(call.getCallee());
      if (failed(expose(callee)))
        return failure();
      ArrayRef<Type> calleeResults = callee.getResultTypes();
      unsigned known = call.getNumResults();
      if (known == calleeResults.size())
        continue;
      // The terms are rank-0 f64 values: their types name no dims, so the
      // callee's types are the caller's.
      SmallVector<Type> resultTypes(call.getResultTypes());
      llvm::append_range(resultTypes, calleeResults.drop_front(known));
      auto extended = builder.create<CallOp>(
          call.getLoc(), resultTypes, call.getCalleeAttr(), call.getOperands());
      extended->setDiscardableAttrs(call->getDiscardableAttrDictionary());
      call.replaceAllUsesWith(extended.getResults().take_front(known));
      llvm::append_range(terms, extended.getResults().drop_front(known));
      call.erase();
      continue;
    }
    if (auto ret = dyn_cast<ReturnOp>(op); ret && !terms.empty()) {
      SmallVector<Value> results(ret.getOperands());
      llvm::append_range(results, terms);
      builder.create<ReturnOp>(ret.getLoc(), results);
      ret.erase();
      SmallVector<Type> resultTypes(graph.getResultTypes());
      for (Value term : terms)
        resultTypes.push_back(term.getType());
      graph.setFunctionTypeAttr(TypeAttr::get(
          builder.getFunctionType(graph.getArgumentTypes(), resultTypes)));
      if (ArrayAttr resultAttrs = graph.getResAttrsAttr()) {
        SmallVector<Attribute> attrs(resultAttrs.getValue());
        attrs.resize(resultTypes.size(), builder.getDictionaryAttr({}));
        graph.setResAttrsAttr(builder.getArrayAttr(attrs));
      }
    }
  }
  inProgress.erase(graph);
  done.insert(graph);
  return success();
}

LogicalResult mlir::nn::exposeLosses(ModuleOp module) {
  LossExposer exposer(module);
  for (GraphOp graph : module.getOps<GraphOp>())
    if (failed(exposer.expose(graph)))
      return failure();
  return success();
}
