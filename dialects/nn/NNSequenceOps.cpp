//===- NNSequenceOps.cpp - sequence-mixing layers -------------------------===//
//
// Verifiers, result type inference and parameter initialization of the
// layers that mix the frames of a sequence axis, and of their gradients
// (nn.lstm_grad and nn.conv1d_grad check what the forward op checks).
//
//===----------------------------------------------------------------------===//

#include "dialects/nn/NNOps.h"

#include "dialects/nn/NNOpsUtils.h"
#include "mlir/IR/Builders.h"

#include <cmath>

using namespace mlir;
using namespace mlir::nn;
using namespace mlir::nn::detail;

/// Checks that `output` is `input` over the sequence dim that a stride of
/// `stride` makes: the same dim for stride 1, else the dim declared
/// `seq(B) = ceildiv(T, stride)`. `outputName` names the output in errors.
static LogicalResult verifyStridedSequence(Operation *op,
                                           const DimContext &context,
                                           StringRef inputDim,
                                           StringRef outputDim, int64_t stride,
                                           StringRef outputName = "result") {
  if (stride == 1) {
    if (inputDim != outputDim)
      return op->emitOpError() << "with stride 1 the " << outputName
                               << " must keep sequence dim '" << inputDim
                               << "', got '" << outputDim << "'";
    return success();
  }
  DimDeclAttr decl = context.getTable().lookup(outputDim);
  if (!decl || !decl.isDerived() || decl.getSource().getValue() != inputDim ||
      decl.getFactor() != stride) {
    DimDeclAttr expected = context.getTable().findDerived(inputDim, stride);
    InFlightDiagnostic diag = op->emitOpError();
    diag << "with stride " << stride << " the " << outputName
         << "'s sequence dim must be "
         << "declared 'seq(...) = ceildiv(" << inputDim << ", " << stride
         << ")', got '" << outputDim << "'";
    if (expected)
      diag << " (did you mean '" << expected.getName().getValue() << "'?)";
    return diag;
  }
  return success();
}

//===----------------------------------------------------------------------===//
// LSTM
//===----------------------------------------------------------------------===//

/// The checks nn.lstm and nn.lstm_grad share: padded or packed frames of
/// one sequence dim with one feature axis in, weights of the direction's static
/// shapes. Returns the dims of the lstm's result.
static FailureOr<SmallVector<Attribute>>
verifyLstmOperands(Operation *op, LstmDirection direction, Value input,
                   Value inputWeight, Value recurrentWeight, Value bias) {
  FailureOr<DimContext> context = DimContext::get(op);
  if (failed(context))
    return failure();
  FailureOr<Positions> positions =
      requireSequenceFrames(op, *context, input, "input");
  if (failed(positions) || failed(requireOneFeatureAxis(op, input, "input")))
    return failure();
  int64_t inFeatures = featureSize(tensorOf(input));
  bool bidirectional = direction == LstmDirection::bidirectional;
  NNTensorType recurrent = tensorOf(recurrentWeight);
  int64_t rank = bidirectional ? 3 : 2;
  if (!recurrent.hasStaticShape() || recurrent.getRank() != rank ||
      recurrent.getStaticSize(rank - 2) % 4 != 0 ||
      recurrent.getStaticSize(rank - 2) / 4 !=
          recurrent.getStaticSize(rank - 1) ||
      (bidirectional && recurrent.getStaticSize(0) != 2))
    return op->emitOpError() << "recurrent_weight must be static "
                             << (bidirectional ? "[2, 4H, H]" : "[4H, H]")
                             << ", got " << recurrent;
  int64_t hidden = recurrent.getStaticSize(rank - 1);
  SmallVector<int64_t> inputShape, biasShape;
  if (bidirectional) {
    inputShape.push_back(2);
    biasShape.push_back(2);
  }
  inputShape.append({4 * hidden, inFeatures});
  biasShape.push_back(4 * hidden);
  if (failed(requireStaticShape(op, inputWeight, "input_weight", inputShape)) ||
      failed(requireStaticShape(op, bias, "bias", biasShape)))
    return failure();
  SmallVector<Attribute> dims(dropFeatureAxis(tensorOf(input)));
  dims.push_back(Builder(op->getContext())
                     .getI64IntegerAttr(bidirectional ? 2 * hidden : hidden));
  return dims;
}

LogicalResult LstmOp::verify() {
  FailureOr<SmallVector<Attribute>> dims =
      verifyLstmOperands(*this, getDirection(), getInput(), getInputWeight(),
                         getRecurrentWeight(), getBias());
  if (failed(dims))
    return failure();
  return requireResultDims(*this, *dims, tensorOf(getInput()).getElementType());
}

LogicalResult
LstmOp::inferReturnTypes(MLIRContext *context, std::optional<Location> location,
                         ValueRange operands, DictionaryAttr attributes,
                         OpaqueProperties properties, RegionRange regions,
                         SmallVectorImpl<Type> &inferred) {
  Adaptor adaptor(operands, attributes, properties, regions);
  FailureOr<NNTensorType> input =
      inferenceOperand(location, operands, 0, "input");
  FailureOr<NNTensorType> recurrent =
      inferenceOperand(location, operands, 2, "recurrent_weight");
  if (failed(input) || failed(recurrent))
    return failure();
  FailureOr<int64_t> hidden = inferenceStaticSize(
      location, *recurrent, -1, "recurrent_weight must be static [..., 4H, H]");
  if (failed(hidden))
    return failure();
  int64_t directions =
      adaptor.getDirection() == LstmDirection::bidirectional ? 2 : 1;
  inferred.push_back(inferredType(context, input->getDims(), true,
                                  directions * *hidden,
                                  input->getElementType()));
  return success();
}

bool LstmOp::hasPackedForm() { return true; }

/// The padded form writes every padded frame's output (zero); its
/// recurrence and GEMMs already run on real frames only.
double LstmOp::getPaddedFrameWork() {
  return featureSize(tensorOf(getResult()));
}

NNTensorType LstmWithTapeOp::getTapeType(NNTensorType result) {
  SmallVector<Attribute> dims(result.getDims());
  auto features = cast<IntegerAttr>(dims.back());
  dims.back() = IntegerAttr::get(features.getType(), 6 * features.getInt());
  return NNTensorType::get(dims, result.getElementType());
}

LogicalResult LstmWithTapeOp::verify() {
  FailureOr<SmallVector<Attribute>> dims =
      verifyLstmOperands(*this, getDirection(), getInput(), getInputWeight(),
                         getRecurrentWeight(), getBias());
  if (failed(dims))
    return failure();
  Type element = tensorOf(getInput()).getElementType();
  auto result = NNTensorType::get(*dims, element);
  if (tensorOf(getResult()) != result)
    return emitOpError() << "result must be " << result << ", got "
                         << getResult().getType();
  NNTensorType tape = LstmWithTapeOp::getTapeType(result);
  if (tensorOf(getTape()) != tape)
    return emitOpError() << "tape must be " << tape << ", got "
                         << getTape().getType();
  return success();
}

LogicalResult LstmGradOp::verify() {
  FailureOr<SmallVector<Attribute>> dims =
      verifyLstmOperands(*this, getDirection(), getInput(), getInputWeight(),
                         getRecurrentWeight(), getBias());
  if (failed(dims))
    return failure();
  Type element = tensorOf(getInput()).getElementType();
  NNTensorType grad = tensorOf(getGrad());
  auto want = NNTensorType::get(*dims, element);
  if (grad != want)
    return emitOpError() << "grad must be the lstm's result type " << want
                         << ", got " << grad;
  if (Value tape = getTape()) {
    NNTensorType wantTape = LstmWithTapeOp::getTapeType(want);
    if (tensorOf(tape) != wantTape)
      return emitOpError() << "tape must be " << wantTape << ", got "
                           << tape.getType();
  }
  return success();
}

/// An LSTM's weights and bias, with or without its tape: PyTorch's
/// uniform(1/sqrt(H)) for the weights, zero biases.
static ParameterInit lstmParameterInit(OpOperand &operand, Value inputWeight,
                                       Value recurrentWeight, Value bias) {
  NNTensorType recurrent = tensorOf(recurrentWeight);
  int64_t hidden = recurrent.getStaticSize(recurrent.getRank() - 1);
  if (operand.get() == inputWeight || operand.get() == recurrentWeight)
    return ParameterInit::uniform(1.0 / std::sqrt((double)hidden));
  return operand.get() == bias ? ParameterInit::zeros() : ParameterInit();
}

ParameterInit LstmOp::getParameterInit(OpOperand &operand) {
  return lstmParameterInit(operand, getInputWeight(), getRecurrentWeight(),
                           getBias());
}

ParameterInit LstmWithTapeOp::getParameterInit(OpOperand &operand) {
  return lstmParameterInit(operand, getInputWeight(), getRecurrentWeight(),
                           getBias());
}

//===----------------------------------------------------------------------===//
// Conv1d
//===----------------------------------------------------------------------===//

/// The frames a strided sequence op (conv1d, pool and their gradients)
/// maps: `input` and `output` frames of one batch with one feature axis,
/// both padded or both packed, the output's sequence the input's strided
/// by `stride`. `output` names the output in messages ("result", "grad",
/// ...).
static LogicalResult verifyStridedFrames(Operation *op, Value input,
                                         Value outputValue, StringRef output,
                                         int64_t stride) {
  FailureOr<DimContext> context = DimContext::get(op);
  if (failed(context))
    return failure();
  FailureOr<Positions> in = requireSequenceFrames(op, *context, input, "input");
  if (failed(in) || failed(requireOneFeatureAxis(op, input, "input")))
    return failure();
  FailureOr<Positions> out =
      requireSequenceFrames(op, *context, outputValue, output);
  if (failed(out))
    return failure();
  if (out->kind != in->kind)
    return op->emitOpError()
           << output << " must be "
           << (in->kind == PositionKind::Packed ? "packed like the input"
                                                : "padded like the input")
           << ", got " << outputValue.getType();
  if (out->batch != in->batch)
    return op->emitOpError()
           << output << " batch '" << out->batch
           << "' differs from the input's '" << in->batch << "'";
  return verifyStridedSequence(op, *context, in->sequences[0],
                               out->sequences[0], stride, output);
}

/// The checks nn.conv1d and nn.conv1d_grad share; `output` is the conv's
/// result or the gradient of it, named `outputName`.
static LogicalResult verifyConv1dOperands(Operation *op, Value input,
                                          Value weightValue, Value bias,
                                          Value output, StringRef outputName,
                                          int64_t stride, int64_t groups) {
  if (failed(verifyStridedFrames(op, input, output, outputName, stride)))
    return failure();
  NNTensorType weight = tensorOf(weightValue);
  int64_t inChannels = featureSize(tensorOf(input));
  if (inChannels % groups != 0)
    return op->emitOpError() << groups << " groups must divide the input's "
                             << inChannels << " channels";
  if (!weight.hasStaticShape() || weight.getRank() != 3 ||
      weight.getStaticSize(2) != inChannels / groups ||
      weight.getStaticSize(1) < 1)
    return op->emitOpError() << "weight must be static [out, kernel, "
                             << inChannels / groups << "], got " << weight;
  int64_t outChannels = weight.getStaticSize(0);
  if (outChannels % groups != 0)
    return op->emitOpError() << groups << " groups must divide the "
                             << outChannels << " output channels";
  if (bias && failed(requireStaticShape(op, bias, "bias", {outChannels})))
    return failure();
  NNTensorType result = tensorOf(output);
  if (featureSize(result) != outChannels ||
      result.getElementType() != tensorOf(input).getElementType())
    return op->emitOpError()
           << outputName << " must have " << outChannels << " "
           << tensorOf(input).getElementType() << " features, got " << result;
  return success();
}

bool Conv1dOp::hasPackedForm() { return true; }

/// The padded form computes every padded output frame: a K-tap window of
/// Cin / groups channels for each of Cout outputs.
double Conv1dOp::getPaddedFrameWork() {
  NNTensorType weight = tensorOf(getWeight());
  double outputs = weight.getStaticSize(0);
  return outputs *
         (2.0 * weight.getStaticSize(1) * weight.getStaticSize(2) + 1.0);
}

LogicalResult Conv1dOp::verify() {
  return verifyConv1dOperands(
      *this, getInput(), getWeight(), getBias(), getResult(), "result",
      static_cast<int64_t>(getStride()), static_cast<int64_t>(getGroups()));
}

LogicalResult Conv1dGradOp::verify() {
  return verifyConv1dOperands(
      *this, getInput(), getWeight(), Value(), getGrad(), "grad",
      static_cast<int64_t>(getStride()), static_cast<int64_t>(getGroups()));
}

// Glorot/Xavier uniform weights with the fans counted PyTorch's way
// (torch.nn.init._calculate_fan_in_and_fan_out: the kernel times the input
// channels of one group in, times all output channels out), zero biases.
ParameterInit Conv1dOp::getParameterInit(OpOperand &operand) {
  if (operand.get() == getWeight()) {
    NNTensorType weight = tensorOf(getWeight()); // [Cout, K, Cin / G]
    int64_t kernel = weight.getStaticSize(1);
    return ParameterInit::glorot(kernel * weight.getStaticSize(2),
                                 kernel * weight.getStaticSize(0));
  }
  return operand.get() == getBias() ? ParameterInit::zeros() : ParameterInit();
}

//===----------------------------------------------------------------------===//
// Pool, reduce
//===----------------------------------------------------------------------===//

/// A pool's input and its pooled frames: padded frames of one batch, the
/// pooled sequence the input's strided by `stride`, the same features.
/// `pooled` names the pooled value in messages ("result", "output").
static LogicalResult verifyPooled(Operation *op, Value input, Value pooledValue,
                                  int64_t stride, StringRef pooled) {
  if (failed(verifyStridedFrames(op, input, pooledValue, pooled, stride)))
    return failure();
  NNTensorType inputType = tensorOf(input), result = tensorOf(pooledValue);
  if (featureSize(result) != featureSize(inputType) ||
      result.getElementType() != inputType.getElementType())
    return op->emitOpError()
           << pooled << " must keep the input's " << featureSize(inputType)
           << " " << inputType.getElementType() << " features, got " << result;
  return success();
}

bool PoolOp::hasPackedForm() { return true; }

/// The padded form reduces a window for every padded output frame.
double PoolOp::getPaddedFrameWork() {
  return featureSize(tensorOf(getResult())) * (getWindow() + 1.0);
}

LogicalResult PoolOp::verify() {
  return verifyPooled(*this, getInput(), getResult(),
                      static_cast<int64_t>(getStride()), "result");
}

LogicalResult PoolGradOp::verify() {
  return verifyPooled(*this, getInput(), getOutput(),
                      static_cast<int64_t>(getStride()), "output");
}

LogicalResult ReduceOp::verify() {
  FailureOr<DimContext> context = DimContext::get(*this);
  if (failed(context))
    return failure();
  FailureOr<Positions> positions = context->positions(getInput());
  if (failed(positions))
    return failure();
  NNTensorType input = tensorOf(getInput());
  int64_t axis = static_cast<int64_t>(getAxis());
  if (axis < 0 || axis >= input.getRank())
    return emitOpError() << "axis " << axis << " is out of range for " << input;
  if (positions->kind != PositionKind::Padded || axis == 0 ||
      axis >= (int64_t)positions->getNumAxes())
    return emitOpError() << "axis " << axis << " of " << input
                         << " must be a sequence axis of padded frames"
                         << (positions->kind == PositionKind::Packed
                                 ? " (a packed value cannot be used here)"
                                 : "");
  SmallVector<Attribute> dims(input.getDims());
  dims.erase(dims.begin() + axis);
  return requireResultDims(*this, dims, input.getElementType());
}

LogicalResult ReduceOp::inferReturnTypes(
    MLIRContext *context, std::optional<Location> location, ValueRange operands,
    DictionaryAttr attributes, OpaqueProperties properties, RegionRange regions,
    SmallVectorImpl<Type> &inferred) {
  Adaptor adaptor(operands, attributes, properties, regions);
  FailureOr<NNTensorType> input =
      inferenceOperand(location, operands, 0, "input");
  if (failed(input))
    return failure();
  int64_t axis = static_cast<int64_t>(adaptor.getAxis());
  if (axis < 0 || axis >= input->getRank())
    return emitOptionalError(location, "axis ", axis, " is out of range for ",
                             *input);
  SmallVector<Attribute> dims(input->getDims());
  dims.erase(dims.begin() + axis);
  inferred.push_back(NNTensorType::get(dims, input->getElementType()));
  return success();
}

LogicalResult ReduceGradOp::verify() {
  NNTensorType input = tensorOf(getInput());
  int64_t axis = static_cast<int64_t>(getAxis());
  if (axis < 1 || axis >= input.getRank() || !input.isNamedDim(axis))
    return emitOpError() << "axis " << axis << " is not a sequence axis of "
                         << input;
  SmallVector<Attribute> reduced(input.getDims());
  reduced.erase(reduced.begin() + axis);
  if (tensorOf(getGrad()).getDims() != ArrayRef<Attribute>(reduced))
    return emitOpError("grad and output must be the input without its axis");
  return success();
}
