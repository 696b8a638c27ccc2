//===- EntryGraph.cpp - the graph a whole-program pass works on -----------===//

#include "passes/Passes.h"

#include "mlir/IR/SymbolTable.h"
#include "llvm/ADT/DenseSet.h"

using namespace mlir;
using namespace mlir::nn;

FailureOr<GraphOp> nn::findEntryGraph(ModuleOp module, StringRef name,
                                      StringRef pass) {
  SymbolTable symbols(module);
  if (!name.empty()) {
    if (auto graph = symbols.lookup<GraphOp>(name))
      return graph;
    return module.emitError() << pass << ": no graph named @" << name;
  }
  llvm::DenseSet<Operation *> called;
  module.walk(
      [&](CallOp call) { called.insert(symbols.lookup(call.getCallee())); });
  GraphOp entry;
  for (GraphOp candidate : module.getOps<GraphOp>()) {
    if (called.contains(candidate))
      continue;
    if (entry)
      return module.emitError()
             << pass << ": several graphs could be the entry; choose one "
             << "with graph=";
    entry = candidate;
  }
  if (!entry)
    return module.emitError() << pass << ": the module has no graph";
  return entry;
}
