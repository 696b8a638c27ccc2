//===- GraphUtils.cpp - graph-level helpers of passes and lowering --------===//

#include "passes/utils/GraphUtils.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/SymbolTable.h"
#include "llvm/ADT/DenseSet.h"

using namespace mlir;
using namespace mlir::nn;

FailureOr<GraphOp> mlir::nn::findEntryGraph(ModuleOp module, StringRef name,
                                            StringRef pass) {
  SymbolTable symbols(module);
  if (!name.empty()) {
    if (auto graph = symbols.lookup<GraphOp>(name))
      return graph;
    return module.emitError() << pass << ": no graph named @" << name;
  }
  // Graphs other graphs name (nn.call, a decoder's callee graphs) are not
  // entries.
  llvm::DenseSet<Operation *> called;
  if (auto uses = SymbolTable::getSymbolUses(&module.getBodyRegion()))
    for (const SymbolTable::SymbolUse &use : *uses)
      called.insert(symbols.lookup(use.getSymbolRef().getRootReference()));
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

FailureOr<Value> mlir::nn::appendArgument(GraphOp graph, StringRef name,
                                          Type type, StringRef pass) {
  for (unsigned i = 0; i < graph.getNumArguments(); ++i)
    if (graph.getArgName(i) == name)
      return graph.emitError()
             << pass << ": graph @" << graph.getSymName()
             << " already has an argument named '" << name << "'";
  OpBuilder builder(graph.getContext());
  Block &body = graph.getBody().front();
  Value argument = body.addArgument(type, graph.getLoc());
  SmallVector<Type> inputs(body.getArgumentTypes());
  graph.setFunctionTypeAttr(
      TypeAttr::get(builder.getFunctionType(inputs, graph.getResultTypes())));
  SmallVector<Attribute> names;
  for (unsigned i = 0; i + 1 < graph.getNumArguments(); ++i)
    names.push_back(builder.getStringAttr(graph.getArgName(i)));
  names.push_back(builder.getStringAttr(name));
  graph.setArgNamesAttr(builder.getArrayAttr(names));
  if (ArrayAttr argAttrs = graph.getArgAttrsAttr()) {
    SmallVector<Attribute> extended(argAttrs.begin(), argAttrs.end());
    extended.push_back(builder.getDictionaryAttr({}));
    graph.setArgAttrsAttr(builder.getArrayAttr(extended));
  }
  return argument;
}
