//===- StepGraphs.cpp - a predictor's step form from its sequence form ----===//
//
// A transducer decoder whose predictor is written in the sequence form
// (the network as training runs it, TransducerPredictor.h) gets a derived
// graph in the step form, which its lowering calls one label at a time:
//
//   @pred(y: [S, U] i32) -> [S, U, D]
//   ==> @"pred.step"(y: [S] i32, h_1: [S, H_1], c_1: [S, H_1], ...)
//           -> ([S, D], h_1', c_1', ...)
//
// Each op follows its step rule: frame-wise ops run on the label's row
// (their types lose the U axis), nn.dropout is the identity, and each
// forward nn.lstm becomes one cell step from the states it takes and
// returns, written in frame-wise ops (gate order i, f, g, o as nn.lstm
// documents it):
//
//   z  = x W_ih^T + b + h W_hh^T
//   c' = sigmoid(z_f) * c + sigmoid(z_i) * tanh(z_g)
//   h' = sigmoid(z_o) * tanh(c')
//
// The states start at zero and the first label is the start symbol, as
// nn.lstm's zero initial state and nn.prepend_start have it in training,
// so step k of the derived graph computes position k of the training
// network's output.
//
//===----------------------------------------------------------------------===//

#include "passes/utils/GraphUtils.h"

#include "dialects/nn/Dims.h"
#include "dialects/nn/TransducerPredictor.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/IR/SymbolTable.h"
#include "llvm/ADT/MapVector.h"

using namespace mlir;
using namespace mlir::nn;

namespace {

/// `type` without its axis named `labels` (unchanged when it has none).
NNTensorType dropLabelAxis(Type type, StringRef labels) {
  auto tensor = cast<NNTensorType>(type);
  SmallVector<Attribute> dims;
  for (Attribute dim : tensor.getDims())
    if (auto name = dyn_cast<StringAttr>(dim); !name || name != labels)
      dims.push_back(dim);
  return NNTensorType::get(dims, tensor.getElementType());
}

/// Writes the step form of one sequence-form predictor.
class StepGraphBuilder {
public:
  StepGraphBuilder(GraphOp predictor, SequencePredictorDims dims)
      : predictor(predictor), dims(dims), builder(predictor) {}

  /// The step graph, inserted after the predictor and named
  /// `<predictor>.step` (renamed by `symbols` on a clash).
  GraphOp build(SymbolTable &symbols);

private:
  /// `[S, width]` of `element`.
  NNTensorType rowType(int64_t width, Type element) {
    return NNTensorType::get(builder.getContext(), {dims.batch, StringRef()},
                             {-1, width}, element);
  }
  /// One cell step of `lstm` on its mapped input row from states `h`,
  /// `c`; returns (h', c').
  std::pair<Value, Value> cellStep(LstmOp lstm, Value h, Value c);

  GraphOp predictor;
  SequencePredictorDims dims;
  OpBuilder builder;
  /// The predictor's values -> the step graph's.
  IRMapping mapping;
};

std::pair<Value, Value> StepGraphBuilder::cellStep(LstmOp lstm, Value h,
                                                   Value c) {
  Location loc = lstm.getLoc();
  auto stateType = cast<NNTensorType>(h.getType());
  int64_t hidden = stateType.getStaticSize(1);
  NNTensorType gatesType = rowType(4 * hidden, stateType.getElementType());
  Value fromInput = builder.create<LinearOp>(
      loc, gatesType, mapping.lookup(lstm.getInput()),
      mapping.lookup(lstm.getInputWeight()), mapping.lookup(lstm.getBias()));
  Value fromState = builder.create<LinearOp>(
      loc, gatesType, h, mapping.lookup(lstm.getRecurrentWeight()), Value());
  Value z = builder.create<AddOp>(loc, gatesType, fromInput, fromState);
  auto gate = [&](int64_t index) -> Value {
    return builder.create<SliceFeaturesOp>(loc, stateType, z, index * hidden,
                                           hidden);
  };
  Value i = builder.create<SigmoidOp>(loc, stateType, gate(0));
  Value f = builder.create<SigmoidOp>(loc, stateType, gate(1));
  Value g = builder.create<TanhOp>(loc, stateType, gate(2));
  Value o = builder.create<SigmoidOp>(loc, stateType, gate(3));
  Value kept = builder.create<MulOp>(loc, stateType, f, c);
  Value added = builder.create<MulOp>(loc, stateType, i, g);
  Value cNext = builder.create<AddOp>(loc, stateType, kept, added);
  Value squashed = builder.create<TanhOp>(loc, stateType, cNext);
  Value hNext = builder.create<MulOp>(loc, stateType, o, squashed);
  return {hNext, cNext};
}

GraphOp StepGraphBuilder::build(SymbolTable &symbols) {
  Block &source = predictor.getBody().front();
  MLIRContext *context = builder.getContext();

  // The signature: the label row, then (h, c) per LSTM in body order.
  SmallVector<LstmOp> lstms(source.getOps<LstmOp>());
  SmallVector<Type> states;
  SmallVector<Attribute> names{StringAttr::get(context, "y")};
  for (auto [index, lstm] : llvm::enumerate(lstms)) {
    auto result = cast<NNTensorType>(lstm.getResult().getType());
    NNTensorType state =
        rowType(result.getStaticSize(2), result.getElementType());
    states.append({state, state});
    names.push_back(StringAttr::get(context, "h" + std::to_string(index)));
    names.push_back(StringAttr::get(context, "c" + std::to_string(index)));
  }
  SmallVector<Type> inputs{NNTensorType::get(context, {dims.batch}, {-1},
                                             IntegerType::get(context, 32))};
  llvm::append_range(inputs, states);
  SmallVector<Type> outputs{
      dropLabelAxis(predictor.getResultTypes()[0], dims.labels)};
  llvm::append_range(outputs, states);
  DimDeclAttr batch = DimTable(predictor.getDims()).getDecls().front();

  builder.setInsertionPointAfter(predictor);
  auto step = builder.create<GraphOp>(
      predictor.getLoc(), (predictor.getSymName() + ".step").str(),
      FunctionType::get(context, inputs, outputs),
      ArrayAttr::get(context, {batch}), /*sym_visibility=*/StringAttr(),
      /*arg_attrs=*/ArrayAttr(), /*res_attrs=*/ArrayAttr(),
      ArrayAttr::get(context, names));
  symbols.insert(step); // renames on a clash
  Block *body = builder.createBlock(&step.getBody());
  for (Type type : inputs)
    body->addArgument(type, predictor.getLoc());
  mapping.map(source.getArgument(0), body->getArgument(0));

  SmallVector<Value> nextStates;
  unsigned nextState = 1;
  for (Operation &op : source) {
    switch (*getPredictorStepRule(&op)) {
    case PredictorStepRule::Shared:
      builder.clone(op, mapping);
      break;
    case PredictorStepRule::PerLabel: {
      Operation *clone = builder.clone(op, mapping);
      for (OpResult result : clone->getResults())
        result.setType(dropLabelAxis(result.getType(), dims.labels));
      break;
    }
    case PredictorStepRule::Identity:
      mapping.map(op.getResult(0), mapping.lookup(op.getOperand(0)));
      break;
    case PredictorStepRule::Recurrent: {
      auto lstm = cast<LstmOp>(op);
      auto [h, c] = cellStep(lstm, body->getArgument(nextState),
                             body->getArgument(nextState + 1));
      nextState += 2;
      mapping.map(lstm.getResult(), h);
      nextStates.append({h, c});
      break;
    }
    case PredictorStepRule::Return: {
      SmallVector<Value> results{mapping.lookup(op.getOperand(0))};
      llvm::append_range(results, nextStates);
      builder.create<ReturnOp>(op.getLoc(), results);
      break;
    }
    }
  }
  return step;
}

} // namespace

LogicalResult mlir::nn::deriveStepGraphs(ModuleOp module) {
  SymbolTable symbols(module);
  llvm::MapVector<Operation *, GraphOp> derived;
  WalkResult walk = module.walk([&](Operation *op) {
    if (!isa<TransducerGreedyDecodeOp, TransducerBeamSearchOp>(op))
      return WalkResult::advance();
    auto attr = op->getAttrOfType<FlatSymbolRefAttr>("predictor");
    auto predictor = symbols.lookup<GraphOp>(attr.getValue());
    std::optional<SequencePredictorDims> dims =
        predictor ? matchSequencePredictor(predictor) : std::nullopt;
    if (!dims)
      return WalkResult::advance(); // the step form already
    // The decoders' verifier gave every op a step rule.
    for (Operation &inner : predictor.getBody().front())
      if (!getPredictorStepRule(&inner)) {
        op->emitOpError() << "predictor @" << predictor.getSymName()
                          << " has no step form";
        return WalkResult::interrupt();
      }
    GraphOp &step = derived[predictor];
    if (!step)
      step = StepGraphBuilder(predictor, *dims).build(symbols);
    op->setAttr("predictor", FlatSymbolRefAttr::get(step.getSymNameAttr()));
    return WalkResult::advance();
  });
  return failure(walk.wasInterrupted());
}
