//===- TransducerPredictor.cpp - the two forms of a prediction network ----===//

#include "dialects/nn/TransducerPredictor.h"

#include "dialects/nn/Dims.h"

using namespace mlir;
using namespace mlir::nn;

std::optional<SequencePredictorDims>
mlir::nn::matchSequencePredictor(GraphOp graph) {
  DimTable table(graph.getDims());
  ArrayRef<DimDeclAttr> decls = table.getDecls();
  if (decls.size() != 2 || graph.getNumArguments() != 1)
    return std::nullopt;
  DimDeclAttr batch = decls[0], labels = decls[1];
  if (batch.getKind() != DimKind::batch || batch.isFlatten() ||
      labels.getKind() != DimKind::seq || labels.getSource() ||
      labels.getComputed() || labels.getBatch() != batch.getName())
    return std::nullopt;
  auto argument = dyn_cast<NNTensorType>(graph.getArgumentTypes()[0]);
  if (!argument || argument.getRank() != 2 || !argument.isNamedDim(0) ||
      !argument.isNamedDim(1) ||
      argument.getDimName(0) != batch.getName().getValue() ||
      argument.getDimName(1) != labels.getName().getValue() ||
      !argument.getElementType().isSignlessInteger(32))
    return std::nullopt;
  return SequencePredictorDims{batch.getName().getValue(),
                               labels.getName().getValue()};
}

std::optional<PredictorStepRule> mlir::nn::getPredictorStepRule(Operation *op) {
  if (isa<ParamRefOp>(op))
    return PredictorStepRule::Shared;
  if (isa<ReturnOp>(op))
    return PredictorStepRule::Return;
  if (isa<DropoutOp>(op))
    return PredictorStepRule::Identity;
  if (auto lstm = dyn_cast<LstmOp>(op))
    return lstm.getDirection() == LstmDirection::forward
               ? std::optional(PredictorStepRule::Recurrent)
               : std::nullopt;
  // Frame-wise ops act on each label's row alone; a loss has no place in
  // a scorer.
  if (isa<FrameWiseOpInterface>(op) && !isa<LossOpInterface>(op))
    return PredictorStepRule::PerLabel;
  return std::nullopt;
}
