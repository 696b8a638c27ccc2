//===- Autodiff.cpp - reverse-mode autodiff on nn graphs ------------------===//
//
// Seeds every trained loss with the gradient of the objective, sweeps the
// graph body backward asking each op for its VJP (VjpOpInterface), sums the
// gradients of values used more than once, and returns the gradient of
// every parameter that reaches the objective. docs/autodiff.md.
//
//===----------------------------------------------------------------------===//

#include "passes/Passes.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/SymbolTable.h"
#include "llvm/ADT/MapVector.h"

namespace mlir::nn {
#define DEBUG_TYPE "nn-autodiff"

#define GEN_PASS_DEF_NNAUTODIFF
#include "passes/Passes.h.inc"
} // namespace mlir::nn

using namespace mlir;
using namespace mlir::nn;

namespace {

/// The gradients of one graph's values, summed over their uses.
class GradientMap {
public:
  explicit GradientMap(OpBuilder &builder) : builder(builder) {}

  void add(Value value, Value gradient, Location loc) {
    if (!gradient)
      return;
    Value &sum = gradients[value];
    sum =
        sum ? builder.create<AddOp>(loc, sum, gradient).getResult() : gradient;
  }
  Value lookup(Value value) const { return gradients.lookup(value); }

private:
  OpBuilder &builder;
  llvm::DenseMap<Value, Value> gradients;
};

class Differentiator {
public:
  Differentiator(GraphOp graph, SymbolTable &symbols)
      : graph(graph), symbols(symbols), builder(graph.getContext()),
        gradients(builder) {}

  LogicalResult run();

private:
  LogicalResult seedLosses();
  LogicalResult sweep();
  void returnGradients();

  GraphOp graph;
  SymbolTable &symbols;
  OpBuilder builder;
  GradientMap gradients;
  /// Parameter gradients by parameter, summed over their param_refs.
  llvm::MapVector<ParameterOp, Value> parameterGradients;
};

} // namespace

/// Each loss that trains (not as_error, scale != 0) gets the gradient of
/// the objective with respect to its value.
LogicalResult Differentiator::seedLosses() {
  bool any = false;
  for (auto mark : graph.getBody().getOps<MarkLossOp>()) {
    double scale = mark.getScale().convertToDouble();
    if (mark.getAsError() || scale == 0.0)
      continue;
    Location loc = mark.getLoc();
    auto terms = builder.create<LossTermsOp>(loc, mark.getLoss(),
                                             mark.getCustomInvNormFactor(),
                                             mark.getNormalization());
    auto seed = builder.create<LossSeedOp>(
        loc, mark.getLoss(), terms.getInvNorm(), mark.getScaleAttr(),
        mark.getUseNormalizedLoss() ? UnitAttr() : builder.getUnitAttr());
    gradients.add(mark.getLoss(), seed, loc);
    any = true;
  }
  if (!any)
    return graph.emitError() << "graph @" << graph.getSymName()
                             << " has no loss to train (every marked loss is "
                                "as_error or has scale 0)";
  return success();
}

LogicalResult Differentiator::sweep() {
  Block &body = graph.getBody().front();
  SmallVector<Operation *> forward;
  for (Operation &op : body.without_terminator())
    forward.push_back(&op);
  for (Operation *op : llvm::reverse(forward)) {
    SmallVector<Value> resultGradients;
    bool reached = false;
    for (Value result : op->getResults()) {
      resultGradients.push_back(gradients.lookup(result));
      reached |= resultGradients.back() != nullptr;
    }
    if (!reached)
      continue;
    if (auto ref = dyn_cast<ParamRefOp>(op)) {
      auto parameter = symbols.lookup<ParameterOp>(ref.getName());
      Value &sum = parameterGradients[parameter];
      sum = sum ? builder.create<AddOp>(ref.getLoc(), sum, resultGradients[0])
                      .getResult()
                : resultGradients[0];
      continue;
    }
    if (isa<CallOp>(op))
      return op->emitOpError()
             << "is on the path to a loss; nn-autodiff does not "
                "differentiate through calls yet";
    auto vjp = dyn_cast<VjpOpInterface>(op);
    if (!vjp)
      return op->emitOpError()
             << "is on the path to a loss and has no vector-Jacobian product "
                "yet (VjpOpInterface)";
    SmallVector<Value> operandGradients;
    if (failed(vjp.buildVjp(builder, resultGradients, operandGradients)))
      return failure();
    assert(operandGradients.size() == op->getNumOperands() &&
           "one gradient (or null) per operand");
    for (auto [operand, gradient] :
         llvm::zip(op->getOperands(), operandGradients))
      gradients.add(operand, gradient, op->getLoc());
  }
  return success();
}

/// Appends the parameter gradients, in module order, to the results.
void Differentiator::returnGradients() {
  auto ret = cast<ReturnOp>(graph.getBody().front().getTerminator());
  SmallVector<Value> results(ret.getOperands());
  SmallVector<Type> resultTypes(graph.getResultTypes());
  SmallVector<Attribute> resultAttrs;
  if (ArrayAttr attrs = graph.getResAttrsAttr())
    resultAttrs.assign(attrs.begin(), attrs.end());
  resultAttrs.resize(resultTypes.size(), builder.getDictionaryAttr({}));
  auto module = graph->getParentOfType<ModuleOp>();
  for (ParameterOp parameter : module.getOps<ParameterOp>()) {
    Value gradient = parameterGradients.lookup(parameter);
    if (!gradient)
      continue;
    results.push_back(gradient);
    resultTypes.push_back(gradient.getType());
    resultAttrs.push_back(builder.getDictionaryAttr(
        builder.getNamedAttr("nn.gradient", parameter.getSymNameAttr())));
  }
  builder.setInsertionPoint(ret);
  builder.create<ReturnOp>(ret.getLoc(), results);
  ret.erase();
  graph.setFunctionTypeAttr(TypeAttr::get(
      builder.getFunctionType(graph.getArgumentTypes(), resultTypes)));
  graph.setResAttrsAttr(builder.getArrayAttr(resultAttrs));
}

LogicalResult Differentiator::run() {
  builder.setInsertionPoint(graph.getBody().front().getTerminator());
  if (failed(seedLosses()) || failed(sweep()))
    return failure();
  returnGradients();
  return success();
}

namespace {
struct NNAutodiffPass : public nn::impl::NNAutodiffBase<NNAutodiffPass> {
  using NNAutodiffBase::NNAutodiffBase;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    SymbolTable symbols(module);
    GraphOp graph;
    if (!graphName.empty()) {
      graph = symbols.lookup<GraphOp>(graphName);
      if (!graph) {
        module.emitError() << "nn-autodiff: no graph named @" << graphName;
        return signalPassFailure();
      }
    } else {
      llvm::DenseSet<Operation *> called;
      module.walk([&](CallOp call) {
        called.insert(symbols.lookup(call.getCallee()));
      });
      for (GraphOp candidate : module.getOps<GraphOp>()) {
        if (called.contains(candidate))
          continue;
        if (graph) {
          module.emitError() << "nn-autodiff: several graphs could be the "
                                "entry; choose one with graph=";
          return signalPassFailure();
        }
        graph = candidate;
      }
      if (!graph) {
        module.emitError() << "nn-autodiff: the module has no graph";
        return signalPassFailure();
      }
    }
    Differentiator differentiator(graph, symbols);
    if (failed(differentiator.run()))
      signalPassFailure();
  }
};
} // namespace
