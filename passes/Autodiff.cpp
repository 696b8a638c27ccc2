//===- Autodiff.cpp - reverse-mode autodiff on nn graphs ------------------===//
//
// Seeds every trained loss with the gradient of the objective, sweeps the
// graph body backward asking each op for its VJP (VjpOpInterface), sums the
// gradients of values used more than once, and returns the gradient of
// every parameter that reaches the objective. docs/autodiff.md.
//
//===----------------------------------------------------------------------===//

#include "passes/Passes.h"
#include "passes/utils/GraphUtils.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/SymbolTable.h"
#include "llvm/ADT/MapVector.h"
#include "llvm/ADT/StringSet.h"

#include <map>

namespace mlir::nn {
#define DEBUG_TYPE "nn-autodiff"

#define GEN_PASS_DEF_NNAUTODIFF
#include "passes/Passes.h.inc"
} // namespace mlir::nn

using namespace mlir;
using namespace mlir::nn;

/// Result attributes: which parameter (entry graphs, companions) or which
/// argument (companions) a gradient result is the gradient of.
static constexpr StringLiteral kGradientAttrName =
    NNDialect::GradientAttrHelper::getNameStr();
static constexpr StringLiteral kGradientOfArgumentAttrName =
    NNDialect::GradientOfArgumentAttrHelper::getNameStr();
static constexpr StringLiteral kGradientOfInputAttrName =
    NNDialect::GradientOfInputAttrHelper::getNameStr();

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

/// Module-wide state: the VJP companions of called graphs. A call's VJP is
/// a call of its callee's companion, `@<callee>_vjp`: the callee's body
/// (its forward, recomputed), seeded with the gradients of the call's
/// results (extra arguments) and of the callee's own trained losses,
/// returning the gradients of its arguments (result attribute
/// `nn.gradient_of_argument`) and of the parameters it reads
/// (`nn.gradient`). One companion per callee and set of differentiated
/// results.
class AutodiffState {
public:
  explicit AutodiffState(SymbolTable &symbols) : symbols(symbols) {}

  SymbolTable &getSymbols() { return symbols; }
  /// The companion for `differentiated` results that returns the
  /// gradients of the `wanted` arguments; null when it would return
  /// nothing.
  FailureOr<GraphOp> companion(GraphOp callee, ArrayRef<bool> differentiated,
                               ArrayRef<bool> wanted, CallOp call);

private:
  SymbolTable &symbols;
  std::map<std::pair<std::string, std::string>, GraphOp> companions;
};

class Differentiator {
public:
  Differentiator(GraphOp graph, AutodiffState &state, bool isEntry)
      : graph(graph), state(state), symbols(state.getSymbols()),
        builder(graph.getContext()), gradients(builder), isEntry(isEntry) {}

  /// The entry graph: its parameter gradients, then those of the
  /// `inputs` it names, are appended to its results.
  LogicalResult run(ArrayRef<std::string> inputs);
  /// A companion: `seeds` pairs each differentiated result with the
  /// argument holding its gradient; the results become the gradients.
  LogicalResult runCompanion(ArrayRef<std::pair<Value, Value>> seeds,
                             ArrayRef<bool> wanted);

private:
  LogicalResult seedLosses(bool required);
  LogicalResult sweep();
  LogicalResult differentiateCall(CallOp call, ValueRange resultGradients);
  void addParameterGradient(ParameterOp parameter, Value gradient,
                            Location loc);
  LogicalResult returnGradients(ArrayRef<std::string> inputs);

  GraphOp graph;
  AutodiffState &state;
  SymbolTable &symbols;
  OpBuilder builder;
  GradientMap gradients;
  bool isEntry;
  /// Entry arguments whose gradients were asked for.
  llvm::StringSet<> requestedInputs;
  /// Parameter gradients by parameter, summed over their param_refs.
  llvm::MapVector<ParameterOp, Value> parameterGradients;
};

} // namespace

/// Whether `graph` or a graph it calls declares a loss.
static bool declaresLosses(GraphOp graph, SymbolTable &symbols,
                           llvm::DenseSet<Operation *> &visited) {
  if (!visited.insert(graph).second)
    return false;
  bool found = false;
  graph.walk([&](Operation *op) {
    if (isa<MarkLossOp>(op))
      found = true;
    else if (auto call = dyn_cast<CallOp>(op))
      if (auto callee = symbols.lookup<GraphOp>(call.getCallee()))
        found |= declaresLosses(callee, symbols, visited);
  });
  return found;
}

FailureOr<GraphOp> AutodiffState::companion(GraphOp callee,
                                            ArrayRef<bool> differentiated,
                                            ArrayRef<bool> wanted,
                                            CallOp call) {
  std::string mask;
  for (bool d : differentiated)
    mask.push_back(d ? '1' : '0');
  mask.push_back(':');
  for (bool w : wanted)
    mask.push_back(w ? '1' : '0');
  auto key = std::make_pair(callee.getSymName().str(), mask);
  if (auto it = companions.find(key); it != companions.end())
    return it->second;
  // The companion recomputes the callee's forward, calls included; a
  // nested callee's losses would then be reported twice.
  for (auto nested : callee.getBody().getOps<CallOp>()) {
    llvm::DenseSet<Operation *> visited;
    auto target = symbols.lookup<GraphOp>(nested.getCallee());
    if (target && declaresLosses(target, symbols, visited))
      return call.emitOpError()
             << "differentiates @" << callee.getSymName()
             << ", whose backward recomputes its call of @"
             << target.getSymName()
             << ", which declares losses; nn-autodiff does not support that "
                "yet (its losses would be reported twice)";
  }
  OpBuilder b(callee);
  b.setInsertionPointAfter(callee);
  auto clone = cast<GraphOp>(b.clone(*callee.getOperation()));
  clone.setSymName((callee.getSymName() + "_vjp").str());
  symbols.insert(clone); // renames on a clash
  Block &body = clone.getBody().front();
  auto ret = cast<ReturnOp>(body.getTerminator());
  SmallVector<std::pair<Value, Value>> seeds;
  for (auto [i, type] : llvm::enumerate(callee.getResultTypes()))
    if (differentiated[i])
      seeds.emplace_back(ret.getOperand(i),
                         body.addArgument(type, callee.getLoc()));
  Differentiator differentiator(clone, *this, /*isEntry=*/false);
  if (failed(differentiator.runCompanion(seeds, wanted)))
    return failure();
  // Nothing to return (no parameters, only data arguments): no companion.
  if (clone.getNumResults() == 0) {
    symbols.erase(clone);
    clone = GraphOp();
  }
  companions[key] = clone;
  return clone;
}

/// Each loss that trains (not as_error, scale != 0) gets the gradient of
/// the objective with respect to its value.
LogicalResult Differentiator::seedLosses(bool required) {
  bool any = false;
  for (auto mark : graph.getBody().getOps<MarkLossOp>()) {
    double scale = mark.getScale().convertToDouble();
    if (mark.getAsError() || scale == 0.0)
      continue;
    Location loc = mark.getLoc();
    auto terms = builder.create<LossTermsOp>(
        loc, mark.getLoss(), mark.getCustomInvNormFactor(), mark.getWeights(),
        mark.getNormalization());
    auto seed = builder.create<LossSeedOp>(
        loc, mark.getLoss(), terms.getInvNorm(), mark.getWeights(),
        mark.getScaleAttr(),
        mark.getUseNormalizedLoss() ? UnitAttr() : builder.getUnitAttr());
    gradients.add(mark.getLoss(), seed, loc);
    any = true;
  }
  if (!any && required)
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
      addParameterGradient(symbols.lookup<ParameterOp>(ref.getName()),
                           resultGradients[0], ref.getLoc());
      continue;
    }
    if (auto call = dyn_cast<CallOp>(op)) {
      if (failed(differentiateCall(call, resultGradients)))
        return failure();
      continue;
    }
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

void Differentiator::addParameterGradient(ParameterOp parameter, Value gradient,
                                          Location loc) {
  Value &sum = parameterGradients[parameter];
  sum = sum ? builder.create<AddOp>(loc, sum, gradient).getResult() : gradient;
}

/// The VJP of a call: a call of the callee's companion with the call's
/// operands and the gradients of its differentiated results. Result types
/// are the caller's: an argument's gradient has its operand's type.
LogicalResult Differentiator::differentiateCall(CallOp call,
                                                ValueRange resultGradients) {
  auto callee = symbols.lookup<GraphOp>(call.getCallee());
  // The entry's own arguments are data: their gradients are wanted only
  // on request. A companion forwards its arguments' gradients to its
  // caller.
  SmallVector<bool> wanted;
  for (Value operand : call.getOperands()) {
    auto argument = dyn_cast<BlockArgument>(operand);
    wanted.push_back(
        !argument || !isEntry ||
        requestedInputs.contains(graph.getArgName(argument.getArgNumber())));
  }
  SmallVector<bool> differentiated;
  SmallVector<Value> operands(call.getOperands());
  for (Value gradient : resultGradients) {
    differentiated.push_back(gradient != nullptr);
    if (gradient)
      operands.push_back(gradient);
  }
  FailureOr<GraphOp> companion =
      state.companion(callee, differentiated, wanted, call);
  if (failed(companion))
    return failure();
  if (!*companion)
    return success();
  SmallVector<Type> types;
  SmallVector<std::pair<Value, ParameterOp>> targets;
  ArrayAttr resultAttrs = companion->getResAttrsAttr();
  for (auto [i, type] : llvm::enumerate(companion->getResultTypes())) {
    auto attrs = cast<DictionaryAttr>(resultAttrs[i]);
    if (auto argument = attrs.getAs<IntegerAttr>(kGradientOfArgumentAttrName)) {
      Value operand = call.getOperand(argument.getInt());
      types.push_back(operand.getType());
      targets.emplace_back(operand, ParameterOp());
    } else {
      types.push_back(type);
      targets.emplace_back(Value(),
                           symbols.lookup<ParameterOp>(
                               attrs.getAs<StringAttr>(kGradientAttrName)));
    }
  }
  auto vjp = builder.create<CallOp>(call.getLoc(), types,
                                    companion->getSymName(), operands);
  for (auto [result, target] : llvm::zip(vjp.getResults(), targets)) {
    if (target.first)
      gradients.add(target.first, result, call.getLoc());
    else
      addParameterGradient(target.second, result, call.getLoc());
  }
  return success();
}

/// Appends the parameter gradients, in module order, then those of the
/// named inputs, to the results.
LogicalResult Differentiator::returnGradients(ArrayRef<std::string> inputs) {
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
        builder.getNamedAttr(kGradientAttrName, parameter.getSymNameAttr())));
  }
  for (const std::string &name : inputs) {
    std::optional<unsigned> index;
    for (unsigned i = 0; i < graph.getNumArguments(); ++i)
      if (graph.getArgName(i) == name)
        index = i;
    if (!index)
      return graph.emitError() << "nn-autodiff: graph @" << graph.getSymName()
                               << " has no argument named '" << name << "'";
    Value argument = graph.getArgument(*index);
    Value gradient = gradients.lookup(argument);
    if (!gradient)
      return graph.emitError()
             << "nn-autodiff: argument '" << name << "' of @"
             << graph.getSymName()
             << (isa<FloatType>(
                     cast<NNTensorType>(argument.getType()).getElementType())
                     ? " does not reach a trained loss"
                     : " holds integers: it has no gradient");
    // Exactly 0 at padded frames, whatever the backward left there (an
    // elementwise VJP multiplies dy = 0 by its derivative at the padding,
    // NaN for NaN padding).
    builder.setInsertionPoint(ret);
    gradient = builder.create<ZeroPaddingOp>(ret.getLoc(), gradient.getType(),
                                             gradient);
    results.push_back(gradient);
    resultTypes.push_back(gradient.getType());
    resultAttrs.push_back(builder.getDictionaryAttr(builder.getNamedAttr(
        kGradientOfInputAttrName, builder.getStringAttr(name))));
  }
  builder.setInsertionPoint(ret);
  builder.create<ReturnOp>(ret.getLoc(), results);
  ret.erase();
  graph.setFunctionTypeAttr(TypeAttr::get(
      builder.getFunctionType(graph.getArgumentTypes(), resultTypes)));
  graph.setResAttrsAttr(builder.getArrayAttr(resultAttrs));
  return success();
}

LogicalResult Differentiator::run(ArrayRef<std::string> inputs) {
  builder.setInsertionPoint(graph.getBody().front().getTerminator());
  requestedInputs.insert(inputs.begin(), inputs.end());
  if (failed(seedLosses(/*required=*/true)) || failed(sweep()))
    return failure();
  return returnGradients(inputs);
}

LogicalResult
Differentiator::runCompanion(ArrayRef<std::pair<Value, Value>> seeds,
                             ArrayRef<bool> wanted) {
  Block &body = graph.getBody().front();
  auto ret = cast<ReturnOp>(body.getTerminator());
  builder.setInsertionPoint(ret);
  if (failed(seedLosses(/*required=*/false)))
    return failure();
  for (auto [value, gradient] : seeds)
    gradients.add(value, gradient, graph.getLoc());
  if (failed(sweep()))
    return failure();
  // Results: the arguments' gradients, then the parameters'.
  SmallVector<Value> results;
  SmallVector<Attribute> resultAttrs;
  for (auto [i, want] : llvm::enumerate(wanted))
    if (Value gradient =
            want ? gradients.lookup(body.getArgument(i)) : Value()) {
      results.push_back(gradient);
      resultAttrs.push_back(builder.getDictionaryAttr(builder.getNamedAttr(
          kGradientOfArgumentAttrName, builder.getI64IntegerAttr(i))));
    }
  auto module = graph->getParentOfType<ModuleOp>();
  for (ParameterOp parameter : module.getOps<ParameterOp>())
    if (Value gradient = parameterGradients.lookup(parameter)) {
      results.push_back(gradient);
      resultAttrs.push_back(builder.getDictionaryAttr(
          builder.getNamedAttr(kGradientAttrName, parameter.getSymNameAttr())));
    }
  builder.create<ReturnOp>(ret.getLoc(), results);
  ret.erase();
  // The caller reports the callee's losses from its forward call; here
  // they only seed (their nn.loss_terms stay).
  for (auto mark : llvm::make_early_inc_range(body.getOps<MarkLossOp>()))
    mark.erase();
  SmallVector<Type> argumentTypes(body.getArgumentTypes());
  SmallVector<Type> resultTypes;
  for (Value result : results)
    resultTypes.push_back(result.getType());
  graph.setFunctionTypeAttr(
      TypeAttr::get(builder.getFunctionType(argumentTypes, resultTypes)));
  if (ArrayAttr names = graph.getArgNamesAttr()) {
    SmallVector<Attribute> extended(names.begin(), names.end());
    for (unsigned i = names.size(); i < argumentTypes.size(); ++i)
      extended.push_back(builder.getStringAttr(
          "grad_result" + std::to_string(i - names.size())));
    graph.setArgNamesAttr(builder.getArrayAttr(extended));
  }
  if (ArrayAttr argAttrs = graph.getArgAttrsAttr()) {
    SmallVector<Attribute> extended(argAttrs.begin(), argAttrs.end());
    extended.resize(argumentTypes.size(), builder.getDictionaryAttr({}));
    graph.setArgAttrsAttr(builder.getArrayAttr(extended));
  }
  graph.setResAttrsAttr(builder.getArrayAttr(resultAttrs));
  return success();
}

namespace {
struct NNAutodiffPass : public mlir::nn::impl::NNAutodiffBase<NNAutodiffPass> {
  using NNAutodiffBase::NNAutodiffBase;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    SymbolTable symbols(module);
    FailureOr<GraphOp> graph = findEntryGraph(module, graphName, "nn-autodiff");
    if (failed(graph))
      return signalPassFailure();
    AutodiffState state(symbols);
    Differentiator differentiator(*graph, state, /*isEntry=*/true);
    if (failed(differentiator.run(inputNames)))
      signalPassFailure();
  }
};
} // namespace
