//===- Abi.cpp - how a lowered graph takes and returns its values ---------===//

#include "lowering/conversion/Abi.h"

#include "dialects/nn/Dims.h"
#include "mlir/IR/SymbolTable.h"
#include "llvm/ADT/SetVector.h"
#include "llvm/ADT/StringSet.h"

using namespace mlir;
using namespace mlir::nn;

RankedTensorType GraphAbi::loweredType(NNTensorType type) {
  SmallVector<int64_t> shape;
  for (unsigned i = 0, e = type.getRank(); i < e; ++i)
    shape.push_back(type.isNamedDim(i) ? ShapedType::kDynamic
                                       : type.getStaticSize(i));
  return RankedTensorType::get(shape, type.getElementType());
}

RankedTensorType GraphAbi::lengthsType(MLIRContext *context) {
  return RankedTensorType::get({ShapedType::kDynamic},
                               IntegerType::get(context, 32));
}

namespace {
/// Depth-first computation of graph ABIs in callee-before-caller order.
class AbiBuilder {
public:
  explicit AbiBuilder(ModuleOp module) : symbols(module) {
    for (auto [index, parameter] :
         llvm::enumerate(module.getOps<ParameterOp>()))
      parameterIndex[parameter] = index;
  }

  LogicalResult visit(GraphOp graph);

  std::vector<GraphAbi> abis;
  llvm::DenseMap<GraphOp, unsigned> indexByGraph;

private:
  LogicalResult checkElementType(Operation *op, Type type, StringRef what);

  SymbolTable symbols;
  llvm::DenseMap<ParameterOp, unsigned> parameterIndex;
  llvm::DenseSet<GraphOp> inProgress;
};
} // namespace

LogicalResult AbiBuilder::checkElementType(Operation *op, Type type,
                                           StringRef what) {
  Type element = cast<NNTensorType>(type).getElementType();
  if (element.isF32() || element.isF64() || element.isSignlessInteger(32) ||
      element.isSignlessInteger(64))
    return success();
  return op->emitError() << what << " has element type " << element
                         << ", which the backends do not support yet (f32, "
                            "f64, i32 and i64 are)";
}

LogicalResult AbiBuilder::visit(GraphOp graph) {
  if (indexByGraph.count(graph))
    return success();
  if (!inProgress.insert(graph).second)
    return graph.emitError() << "graph @" << graph.getSymName()
                             << " calls itself (directly or through other "
                                "graphs); recursive graphs cannot be lowered";

  GraphAbi abi;
  abi.graph = graph;
  DimTable table(graph.getDims());
  for (DimDeclAttr dim : table.getDecls()) {
    if (dim.getComputed())
      abi.computedDims.push_back(dim);
    else if ((dim.getKind() == DimKind::batch && !dim.isFlatten()) ||
             (dim.getKind() == DimKind::seq && !dim.getSource()))
      abi.rootDims.push_back(dim);
  }
  abi.numResults = graph.getNumResults();
  for (auto [index, type] : llvm::enumerate(graph.getArgumentTypes()))
    if (failed(checkElementType(graph, type,
                                "argument '" + graph.getArgName(index) + "'")))
      return failure();

  llvm::SetVector<ParameterOp> parameters;
  llvm::StringSet<> lossNames;
  auto addLoss = [&](Operation *at, const LossAbi &loss) -> LogicalResult {
    if (!lossNames.insert(loss.name).second)
      return at->emitError()
             << "loss \"" << loss.name << "\" is marked twice in graph @"
             << graph.getSymName()
             << " (through calls); loss names must be unique";
    abi.losses.push_back(loss);
    return success();
  };

  WalkResult walk = graph.getBody().walk([&](Operation *op) -> WalkResult {
    if (auto ref = dyn_cast<ParamRefOp>(op)) {
      auto parameter = symbols.lookup<ParameterOp>(ref.getName());
      if (failed(
              checkElementType(parameter, parameter.getType(),
                               "parameter @" + parameter.getSymName().str())))
        return WalkResult::interrupt();
      parameters.insert(parameter);
      return WalkResult::advance();
    }
    // A decoder's callee graphs run inside the lowered function: their
    // parameters are the caller's (they mark no loss; the verifier says so).
    if (auto decode = dyn_cast<GraphCalleeOpInterface>(op)) {
      for (FlatSymbolRefAttr name : decode.getCalleeGraphs()) {
        auto callee = symbols.lookup<GraphOp>(name.getValue());
        if (failed(visit(callee)))
          return WalkResult::interrupt();
        const GraphAbi &calleeAbi = abis[indexByGraph.lookup(callee)];
        parameters.insert(calleeAbi.parameters.begin(),
                          calleeAbi.parameters.end());
      }
      return WalkResult::advance();
    }
    if (auto call = dyn_cast<CallOp>(op)) {
      auto callee = symbols.lookup<GraphOp>(call.getCallee());
      if (failed(visit(callee)))
        return WalkResult::interrupt();
      const GraphAbi &calleeAbi = abis[indexByGraph.lookup(callee)];
      parameters.insert(calleeAbi.parameters.begin(),
                        calleeAbi.parameters.end());
      // The callee's losses, over the caller's dims: the entry's manifest
      // names only its own dims.
      DimTable calleeTable(callee.getDims());
      DimBinding binding(calleeTable, table);
      if (failed(binding.unifyCall(
              callee.getArgumentTypes(), call.getOperandTypes(),
              callee.getResultTypes(), call.getResultTypes(),
              [&] { return call.emitOpError(); })))
        return WalkResult::interrupt();
      // Every root dim of the callee is an argument of the lowered call.
      for (DimDeclAttr dim : calleeAbi.rootDims)
        if (binding.lookup(dim.getName().getValue()).empty()) {
          call.emitOpError()
              << "cannot bind dim '" << dim.getName().getValue() << "' of @"
              << callee.getSymName() << ": no operand or result type names it";
          return WalkResult::interrupt();
        }
      for (LossAbi loss : calleeAbi.losses) {
        bool bound = !loss.batch.empty();
        std::string batch = binding.lookup(loss.batch).str();
        bound = bound && !batch.empty();
        SmallVector<std::string, 2> sequences;
        for (const std::string &sequence : loss.sequences) {
          sequences.push_back(binding.lookup(sequence).str());
          bound = bound && !sequences.back().empty();
        }
        // A loss over callee dims no operand or result binds keeps its
        // value; only its frame counts are unknown to the caller.
        loss.batch = bound ? batch : "";
        loss.sequences = bound ? sequences : SmallVector<std::string, 2>{};
        if (failed(addLoss(call, loss)))
          return WalkResult::interrupt();
      }
      return WalkResult::advance();
    }
    auto mark = dyn_cast<MarkLossOp>(op);
    if (!mark)
      return WalkResult::advance();
    LossAbi loss;
    loss.name = mark.getName().str();
    loss.normalization = mark.getNormalization();
    loss.scale = mark.getScale().convertToDouble();
    loss.useNormalizedLoss = mark.getUseNormalizedLoss();
    loss.asError = mark.getAsError();
    FailureOr<Positions> positions =
        classifyPositions(cast<NNTensorType>(mark.getLoss().getType()), table,
                          [&] { return mark.emitOpError(); });
    if (failed(positions))
      return WalkResult::interrupt();
    loss.packed = positions->kind == PositionKind::Packed;
    loss.batch = positions->batch.str();
    for (StringRef sequence : positions->sequences)
      loss.sequences.push_back(sequence.str());
    return failed(addLoss(mark, loss)) ? WalkResult::interrupt()
                                       : WalkResult::advance();
  });
  if (walk.wasInterrupted())
    return failure();

  abi.parameters = parameters.takeVector();
  llvm::sort(abi.parameters, [&](ParameterOp a, ParameterOp b) {
    return parameterIndex.lookup(a) < parameterIndex.lookup(b);
  });
  inProgress.erase(graph);
  indexByGraph[graph] = abis.size();
  abis.push_back(std::move(abi));
  return success();
}

FailureOr<ModuleAbi> ModuleAbi::compute(ModuleOp module) {
  AbiBuilder builder(module);
  for (GraphOp graph : module.getOps<GraphOp>())
    if (failed(builder.visit(graph)))
      return failure();
  ModuleAbi result;
  result.abis = std::move(builder.abis);
  result.indexByGraph = std::move(builder.indexByGraph);
  for (auto [index, abi] : llvm::enumerate(result.abis))
    result.indexByName[abi.graph.getSymName()] = index;
  return result;
}
