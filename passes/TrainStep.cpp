//===- TrainStep.cpp - one optimizer step as one graph --------------------===//
//
// After nn-autodiff the entry graph returns the gradient of every
// parameter that reaches a trained loss. This pass makes it return what a
// train step needs instead: the global gradient norm and the updated
// parameters and optimizer state, computed by the update ops from the
// gradients, the optimizer state (new parameters, so that checkpoints and
// the runtime treat them like any other) and the scalar inputs
// `learning_rate` and `step`, and the norm of all the updated values.
// Nothing per step leaves the device but the two norms and the losses;
// the runtime swaps the updated tensors in when everything is finite.
//
//===----------------------------------------------------------------------===//

#include "passes/Passes.h"
#include "passes/utils/GraphUtils.h"

#include "support/PassOptionBinder.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/SymbolTable.h"

#include <cmath>

namespace mlir::nn {
#define GEN_PASS_DEF_NNTRAINSTEP
#include "passes/Passes.h.inc"
} // namespace mlir::nn

using namespace mlir;
using namespace mlir::nn;

static constexpr StringLiteral kGradientAttr =
    NNDialect::GradientAttrHelper::getNameStr();
static constexpr StringLiteral kGradientOfInputAttr =
    NNDialect::GradientOfInputAttrHelper::getNameStr();
static constexpr StringLiteral kGradNormAttr =
    NNDialect::GradNormAttrHelper::getNameStr();
static constexpr StringLiteral kUpdatedNormAttr =
    NNDialect::UpdatedNormAttrHelper::getNameStr();
static constexpr StringLiteral kUpdateAttr =
    NNDialect::UpdateAttrHelper::getNameStr();
static constexpr StringLiteral kOptimizerStateAttr =
    NNDialect::OptimizerStateAttrHelper::getNameStr();

namespace {

struct NNTrainStepPass
    : public mlir::nn::impl::NNTrainStepBase<NNTrainStepPass> {
  // The optimizer's options are declared once, in nn/Options.h; the pass
  // holds them as pass options (after `graph`), and a copy (clonePass)
  // declares them again in the same order before the values are copied.
  NNTrainStepPass() { bound.declare(::nn::OptimizerOptions()); }
  explicit NNTrainStepPass(const NNTrainStepOptions &options)
      : NNTrainStepBase(options) {
    bound.declare(::nn::OptimizerOptions());
  }
  NNTrainStepPass(const NNTrainStepPass &other) : NNTrainStepBase(other) {
    bound.declare(::nn::OptimizerOptions());
  }

  void setOptimizer(const ::nn::OptimizerOptions &optimizer) {
    bound.write(optimizer);
  }
  void runOnOperation() override;

private:
  LogicalResult checkOptions(ModuleOp module,
                             const ::nn::OptimizerOptions &options);

  ::nn::support::PassOptionBinder<Pass> bound{*this};
};

} // namespace

LogicalResult
NNTrainStepPass::checkOptions(ModuleOp module,
                              const ::nn::OptimizerOptions &options) {
  auto fail = [&](const Twine &message) {
    return module.emitError() << "nn-train-step: " << message;
  };
  if (!(options.momentum >= 0 && options.momentum < 1))
    return fail("momentum must lie in [0, 1)");
  if (options.nesterov &&
      (options.kind != ::nn::OptimizerKind::sgd || options.momentum == 0))
    return fail("nesterov needs sgd with a momentum");
  if (!(options.beta1 >= 0 && options.beta1 < 1) ||
      !(options.beta2 >= 0 && options.beta2 < 1))
    return fail("beta1 and beta2 must lie in [0, 1)");
  // An infinite epsilon or decay freezes or wipes the parameters with
  // every gradient finite: no step would ever look wrong.
  if (!(options.epsilon > 0) || std::isinf(options.epsilon))
    return fail("epsilon must be a finite number > 0");
  if (!(options.weightDecay >= 0) || std::isinf(options.weightDecay))
    return fail("weight-decay must be a finite number >= 0");
  if (!(options.clipNorm >= 0) || std::isinf(options.clipNorm))
    return fail("clip-norm must be a finite number >= 0 (0: off)");
  return success();
}

void NNTrainStepPass::runOnOperation() {
  ModuleOp module = getOperation();
  ::nn::OptimizerOptions options = bound.read<::nn::OptimizerOptions>();
  if (failed(checkOptions(module, options)))
    return signalPassFailure();
  FailureOr<GraphOp> found = findEntryGraph(module, graphName, "nn-train-step");
  if (failed(found))
    return signalPassFailure();
  GraphOp graph = *found;
  SymbolTable symbols(module);
  Block &body = graph.getBody().front();
  auto ret = cast<ReturnOp>(body.getTerminator());

  // The parameters and their gradients, in result (module) order; input
  // gradients stay results.
  SmallVector<std::pair<ParameterOp, Value>> gradients;
  SmallVector<std::pair<Value, DictionaryAttr>> inputGradients;
  for (unsigned i = 0; i < graph.getNumResults(); ++i) {
    Value result = ret.getOperand(i);
    if (auto name = graph.getResultAttrOfType<StringAttr>(i, kGradientAttr))
      gradients.push_back({symbols.lookup<ParameterOp>(name), result});
    else if (graph.getResultAttr(i, kGradientOfInputAttr))
      inputGradients.push_back({result, graph.getResultAttrDict(i)});
  }
  if (gradients.empty()) {
    graph.emitError() << "nn-train-step: graph @" << graph.getSymName()
                      << " returns no parameter gradients (run nn-autodiff "
                         "first; a graph whose losses reach no parameter "
                         "has nothing to train)";
    return signalPassFailure();
  }

  OpBuilder builder(module.getContext());
  Type f32 = builder.getF32Type();
  auto f32Scalar = NNTensorType::get(ArrayRef<Attribute>{}, f32);
  auto i32Scalar =
      NNTensorType::get(ArrayRef<Attribute>{}, builder.getIntegerType(32));
  bool adam = options.kind != ::nn::OptimizerKind::sgd;
  FailureOr<Value> lr =
      appendArgument(graph, "learning_rate", f32Scalar, "nn-train-step");
  if (failed(lr))
    return signalPassFailure();
  Value step;
  if (adam) {
    FailureOr<Value> added =
        appendArgument(graph, "step", i32Scalar, "nn-train-step");
    if (failed(added))
      return signalPassFailure();
    step = *added;
  }

  // Optimizer state: zero-initialized parameters after each parameter.
  SmallVector<StringRef> slots;
  if (adam)
    slots = {"adam_m", "adam_v"};
  else if (options.momentum > 0)
    slots = {"velocity"};
  SmallVector<SmallVector<ParameterOp>> states;
  for (auto [parameter, gradient] : gradients) {
    SmallVector<ParameterOp> &own = states.emplace_back();
    builder.setInsertionPointAfter(parameter);
    for (StringRef slot : slots) {
      std::string name =
          ("optimizer/" + slot + "/" + parameter.getSymName()).str();
      if (Operation *taken = symbols.lookup(name)) {
        taken->emitError() << "nn-train-step: the optimizer state '" << name
                           << "' is already a symbol of the module";
        return signalPassFailure();
      }
      auto state = builder.create<ParameterOp>(
          parameter.getLoc(), builder.getStringAttr(name), parameter.getType());
      state->setAttr(kOptimizerStateAttr, builder.getUnitAttr());
      symbols.insert(state);
      own.push_back(state);
    }
  }

  Location loc = ret.getLoc();
  builder.setInsertionPoint(ret);
  auto read = [&](ParameterOp parameter) {
    return builder
        .create<ParamRefOp>(loc, parameter.getType(), parameter.getSymName())
        .getResult();
  };
  SmallVector<Value> allGradients;
  for (auto &entry : gradients)
    allGradients.push_back(entry.second);
  Value norm = builder.create<GlobalNormOp>(loc, f32Scalar, allGradients);
  Value scale;
  if (options.clipNorm > 0)
    scale = builder.create<ClipFactorOp>(
        loc, f32Scalar, norm, builder.getF64FloatAttr(options.clipNorm));

  SmallVector<Value> results{norm};
  SmallVector<Attribute> resultAttrs{builder.getDictionaryAttr(
      builder.getNamedAttr(kGradNormAttr, builder.getUnitAttr()))};
  auto addResult = [&](Value value, ParameterOp target) {
    results.push_back(value);
    resultAttrs.push_back(builder.getDictionaryAttr(
        builder.getNamedAttr(kUpdateAttr, target.getSymNameAttr())));
  };
  auto decayAttr = builder.getF64FloatAttr(options.weightDecay);
  for (auto [entry, own] : llvm::zip(gradients, states)) {
    auto [parameter, gradient] = entry;
    // Read in a fixed order (argument evaluation order is not).
    Value param = read(parameter);
    SmallVector<Value> state;
    for (ParameterOp slot : own)
      state.push_back(read(slot));
    Type type = param.getType();
    if (adam) {
      auto update = builder.create<AdamUpdateOp>(
          loc, TypeRange{type, type, type}, param, gradient, state[0], state[1],
          *lr, step, scale, builder.getF64FloatAttr(options.beta1),
          builder.getF64FloatAttr(options.beta2),
          builder.getF64FloatAttr(options.epsilon), decayAttr,
          options.kind == ::nn::OptimizerKind::adamw ? builder.getUnitAttr()
                                                     : UnitAttr());
      addResult(update.getNewParam(), parameter);
      addResult(update.getNewM(), own[0]);
      addResult(update.getNewV(), own[1]);
    } else if (options.momentum > 0) {
      auto update = builder.create<MomentumUpdateOp>(
          loc, TypeRange{type, type}, param, gradient, state[0], *lr, scale,
          builder.getF64FloatAttr(options.momentum),
          options.nesterov ? builder.getUnitAttr() : UnitAttr(), decayAttr);
      addResult(update.getNewParam(), parameter);
      addResult(update.getNewVelocity(), own[0]);
    } else {
      auto update = builder.create<SgdUpdateOp>(loc, type, param, gradient, *lr,
                                                scale, decayAttr);
      addResult(update.getNewParam(), parameter);
    }
  }
  // The norm of everything the step writes back: the runtime applies the
  // step only when it is finite, so that no update (an overflowing
  // learning rate, an Adam moment past the float range) leaves a
  // non-finite parameter or state behind. Sums of squares accumulate in
  // f64, so every finite f32 value keeps the norm finite short of the
  // f32 range itself.
  SmallVector<Value> updated(results.begin() + 1, results.end());
  Value updatedNorm = builder.create<GlobalNormOp>(loc, f32Scalar, updated);
  results.insert(results.begin() + 1, updatedNorm);
  resultAttrs.insert(resultAttrs.begin() + 1,
                     builder.getDictionaryAttr(builder.getNamedAttr(
                         kUpdatedNormAttr, builder.getUnitAttr())));
  for (auto [value, attrs] : inputGradients) {
    results.push_back(value);
    resultAttrs.push_back(attrs);
  }

  builder.create<ReturnOp>(loc, results);
  ret.erase();
  SmallVector<Type> resultTypes;
  for (Value result : results)
    resultTypes.push_back(result.getType());
  graph.setFunctionTypeAttr(TypeAttr::get(
      builder.getFunctionType(body.getArgumentTypes(), resultTypes)));
  graph.setResAttrsAttr(builder.getArrayAttr(resultAttrs));
}

std::unique_ptr<Pass>
mlir::nn::createNNTrainStep(const NNTrainStepOptions &options,
                            const ::nn::OptimizerOptions &optimizer) {
  auto pass = std::make_unique<NNTrainStepPass>(options);
  pass->setOptimizer(optimizer);
  return pass;
}
