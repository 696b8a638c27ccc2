//===- NNTransducerOps.cpp - transducer ops -------------------------------===//
//
// Verifiers, result type inference and interfaces of the transducer ops
// and their gradients, which share the forward ops' checks.
//
//===----------------------------------------------------------------------===//

#include "dialects/nn/NNOps.h"

#include "dialects/nn/NNOpsUtils.h"

using namespace mlir;
using namespace mlir::nn;
using namespace mlir::nn::detail;

/// Requires `labels` to be `[B, U]` integer labels over one sequence dim and
/// returns their positions.
static FailureOr<Positions>
requireLabels(Operation *op, const DimContext &context, Value labels) {
  FailureOr<Positions> positions = context.positions(labels);
  if (failed(positions))
    return failure();
  NNTensorType type = tensorOf(labels);
  if (positions->kind != PositionKind::Padded ||
      positions->sequences.size() != 1 || type.getRank() != 2 ||
      !type.getElementType().isSignlessInteger())
    return op->emitOpError()
           << "labels must be integer [batch, label sequence], got " << type;
  return positions;
}

/// Requires `dim` to be declared `seq(B) = labelDim + 1`: the prediction
/// network's axis, the start symbol and then the labels.
static LogicalResult requireLabelPlusOne(Operation *op,
                                         const DimContext &context,
                                         StringRef dim, StringRef labelDim,
                                         StringRef what) {
  DimDeclAttr decl = context.getTable().lookup(dim);
  if (decl && decl.isDerived() && decl.getSource().getValue() == labelDim &&
      decl.getFactor() == 1 && decl.getOffset() == 1)
    return success();
  InFlightDiagnostic diag = op->emitOpError();
  diag << what << " '" << dim << "' must be declared 'seq(...) = " << labelDim
       << " + 1' (the start symbol, then the labels)";
  if (DimDeclAttr expected = context.getTable().findDerived(labelDim, 1, 1))
    diag << " (did you mean '" << expected.getName().getValue() << "'?)";
  return diag;
}

//===----------------------------------------------------------------------===//
// PrependStartOp
//===----------------------------------------------------------------------===//

LogicalResult PrependStartOp::verify() {
  FailureOr<DimContext> context = DimContext::get(*this);
  if (failed(context))
    return failure();
  FailureOr<Positions> in = requireLabels(*this, *context, getLabels());
  if (failed(in))
    return failure();
  // The attribute is a signless i64 that ODS hands out as uint64_t: a
  // negative start is only visible as a signed value.
  if (int64_t start = getStartAttr().getInt(); start < 0)
    return emitOpError() << "start " << start
                         << " is not a class index (negative)";
  NNTensorType labels = tensorOf(getLabels()), result = tensorOf(getResult());
  FailureOr<Positions> out = context->positions(getResult());
  if (failed(out))
    return failure();
  if (out->kind != PositionKind::Padded || out->sequences.size() != 1 ||
      result.getRank() != 2 || out->batch != in->batch ||
      result.getElementType() != labels.getElementType())
    return emitOpError() << "result must be [" << in->batch
                         << ", U1] of the labels' element type, got " << result;
  return requireLabelPlusOne(*this, *context, out->sequences[0],
                             in->sequences[0], "result axis");
}

//===----------------------------------------------------------------------===//
// TransducerJoinOp, GatherStatesOp
//===----------------------------------------------------------------------===//

/// The types of a transducer join: `encoder` [B, T, D] and `prediction`
/// [B, U1, D] over two different sequence dims of one batch, each padded
/// or packed ([N_T, D], [N_U1, D]), and `joint` [J, D] with
/// J = packed(B, T, U1), or [B, T, U1, D] when both are padded.
static LogicalResult verifyJoinTypes(Operation *op, Value encoder,
                                     Value prediction, Value joint,
                                     StringRef jointName) {
  FailureOr<DimContext> context = DimContext::get(op);
  if (failed(context))
    return failure();
  FailureOr<Positions> enc =
      requireSequenceFrames(op, *context, encoder, "encoder");
  if (failed(enc))
    return failure();
  FailureOr<Positions> pred =
      requireSequenceFrames(op, *context, prediction, "prediction");
  if (failed(pred) || failed(requireOneFeatureAxis(op, encoder, "encoder")) ||
      failed(requireOneFeatureAxis(op, prediction, "prediction")))
    return failure();
  NNTensorType encType = tensorOf(encoder), predType = tensorOf(prediction),
               jointType = tensorOf(joint);
  if (pred->batch != enc->batch || pred->sequences[0] == enc->sequences[0])
    return op->emitOpError()
           << "prediction must be over a second sequence dim of the "
              "encoder's batch '"
           << enc->batch << "', got " << predType;
  Type element = encType.getElementType();
  Attribute features = encType.getDims().back();
  if (featureSize(encType) != featureSize(predType) ||
      element != predType.getElementType())
    return op->emitOpError()
           << "encoder " << encType << " and prediction " << predType
           << " must have the same feature size and element "
              "type";
  StringRef frames = enc->sequences[0], states = pred->sequences[0];
  MLIRContext *ctx = op->getContext();
  SmallVector<Attribute> padded{StringAttr::get(ctx, enc->batch),
                                StringAttr::get(ctx, frames),
                                StringAttr::get(ctx, states), features};
  auto paddedType = NNTensorType::get(padded, element);
  bool bothPadded =
      enc->kind == PositionKind::Padded && pred->kind == PositionKind::Padded;
  if (bothPadded && jointType == paddedType)
    return success();
  DimDeclAttr grid = context->getTable().findPacked(enc->batch, frames, states);
  if (grid) {
    SmallVector<Attribute> packed{grid.getName(), features};
    if (jointType == NNTensorType::get(packed, element))
      return success();
  }
  InFlightDiagnostic diag = op->emitOpError();
  diag << jointName << " must be packed [J, " << featureSize(encType)
       << "] with J declared 'packed(" << enc->batch << ", " << frames << ", "
       << states << ")'";
  if (grid)
    diag << " ('" << grid.getName().getValue() << "')";
  if (bothPadded)
    diag << " or padded " << paddedType;
  else
    diag << " (packed operands need the packed grid)";
  diag << ", got " << jointType;
  return diag;
}

/// Packed operands with the packed grid. Its padded form does no work on
/// padded frames (it reads only the valid pairs), so the cost model's
/// padded-frame work is the default 0.
bool TransducerJoinOp::hasPackedForm() { return true; }

LogicalResult TransducerJoinOp::verify() {
  return verifyJoinTypes(*this, getEncoder(), getPrediction(), getResult(),
                         "result");
}

LogicalResult TransducerJoinGradOp::verify() {
  return verifyJoinTypes(*this, getEncoder(), getPrediction(), getGrad(),
                         "grad");
}

/// The types of a gather of prediction states: `states` [B, U1, D] padded
/// over one sequence dim, `alignment` [B, T] integer over another,
/// `gathered` [B, T, D] of the states' element type.
static LogicalResult verifyGatherTypes(Operation *op, Value states,
                                       Value alignment, Value gathered) {
  FailureOr<DimContext> context = DimContext::get(op);
  if (failed(context))
    return failure();
  FailureOr<Positions> in = requirePaddedFrames(op, *context, states, "states");
  if (failed(in) || failed(requireOneFeatureAxis(op, states, "states")))
    return failure();
  FailureOr<Positions> frames = context->positions(alignment);
  if (failed(frames))
    return failure();
  NNTensorType statesType = tensorOf(states),
               alignmentType = tensorOf(alignment);
  if (frames->kind != PositionKind::Padded || frames->sequences.size() != 1 ||
      alignmentType.getRank() != 2 ||
      !alignmentType.getElementType().isSignlessInteger() ||
      frames->batch != in->batch || frames->sequences[0] == in->sequences[0])
    return op->emitOpError() << "alignment must be integer [" << in->batch
                             << ", T] over a frame dim other than the states' '"
                             << in->sequences[0] << "', got " << alignmentType;
  SmallVector<Attribute> dims(alignmentType.getDims());
  dims.push_back(statesType.getDims()[2]);
  auto want = NNTensorType::get(dims, statesType.getElementType());
  if (tensorOf(gathered) != want)
    return op->emitOpError() << "gathered states must be " << want << ", got "
                             << gathered.getType();
  return success();
}

LogicalResult GatherStatesOp::verify() {
  return verifyGatherTypes(*this, getStates(), getAlignment(), getResult());
}

LogicalResult GatherStatesGradOp::verify() {
  return verifyGatherTypes(*this, getResult(), getAlignment(), getGrad());
}

//===----------------------------------------------------------------------===//
// TransducerLossOp, TransducerAlignOp
//===----------------------------------------------------------------------===//

/// The checks nn.transducer_loss and its gradient share; returns the dims
/// of the per-sequence loss, `[B]`.
static FailureOr<ArrayRef<Attribute>> verifyTransducerOperands(Operation *op,
                                                               Value joint,
                                                               Value labels,
                                                               int64_t blank) {
  FailureOr<DimContext> context = DimContext::get(op);
  if (failed(context))
    return failure();
  FailureOr<Positions> grid = context->positions(joint);
  FailureOr<Positions> labelPositions = requireLabels(op, *context, labels);
  if (failed(grid) || failed(labelPositions) ||
      failed(requireOneFeatureAxis(op, joint, "joint")))
    return failure();
  NNTensorType jointType = tensorOf(joint);
  bool packed = grid->kind == PositionKind::Packed;
  if (grid->sequences.size() != 2 ||
      (!packed && grid->kind != PositionKind::Padded))
    return op->emitOpError()
           << "joint must be over the (frame, label + 1) grid: packed [J, V] "
              "with J declared 'packed(B, T, U1)', or padded [B, T, U1, V]; "
              "got "
           << jointType;
  if (grid->batch != labelPositions->batch)
    return op->emitOpError()
           << "labels batch '" << labelPositions->batch
           << "' differs from the joint's batch '" << grid->batch << "'";
  if (failed(requireLabelPlusOne(op, *context, grid->sequences[1],
                                 labelPositions->sequences[0],
                                 "the joint's label axis")))
    return failure();
  int64_t classes = featureSize(jointType);
  if (blank < 0 || blank >= classes)
    return op->emitOpError()
           << "blank " << blank << " is not a class in [0, " << classes << ")";
  return tensorOf(labels).getDims().take_front(1);
}

bool TransducerLossOp::isPerFrameLoss() { return false; }

LogicalResult TransducerLossOp::verify() {
  FailureOr<ArrayRef<Attribute>> dims = verifyTransducerOperands(
      *this, getJoint(), getLabels(), static_cast<int64_t>(getBlank()));
  if (failed(dims))
    return failure();
  return requireResultDims(*this, *dims, tensorOf(getJoint()).getElementType());
}

LogicalResult TransducerLossOp::inferReturnTypes(
    MLIRContext *, std::optional<Location> location, ValueRange operands,
    DictionaryAttr, OpaqueProperties, RegionRange,
    SmallVectorImpl<Type> &inferred) {
  FailureOr<NNTensorType> joint =
      inferenceOperand(location, operands, 0, "joint");
  FailureOr<NNTensorType> labels =
      inferenceOperand(location, operands, 1, "labels");
  if (failed(joint) || failed(labels))
    return failure();
  if (labels->getRank() == 0)
    return emitOptionalError(location, "labels must be [B, U], got ", *labels);
  inferred.push_back(NNTensorType::get(labels->getDims().take_front(1),
                                       joint->getElementType()));
  return success();
}

int64_t TransducerLossOp::getNumClasses(OpOperand &operand) {
  return operand.get() == getLabels() ? featureSize(tensorOf(getJoint())) : 0;
}

int64_t TransducerLossOp::getReservedClass(OpOperand &operand) {
  return operand.get() == getLabels() ? (int64_t)getBlank() : -1;
}

LogicalResult TransducerLossGradOp::verify() {
  FailureOr<ArrayRef<Attribute>> dims = verifyTransducerOperands(
      *this, getJoint(), getLabels(), static_cast<int64_t>(getBlank()));
  if (failed(dims))
    return failure();
  return requireLossGradType(*this, getGrad(), *dims, getJoint());
}

LogicalResult TransducerAlignOp::verify() {
  FailureOr<ArrayRef<Attribute>> batch = verifyTransducerOperands(
      *this, getJoint(), getLabels(), static_cast<int64_t>(getBlank()));
  if (failed(batch))
    return failure();
  FailureOr<DimContext> context = DimContext::get(*this);
  NNTensorType alignmentType = tensorOf(getAlignment());
  if (getTopology() == TransducerTopology::rnnt) {
    // T + U emissions: lengths only the alignment knows.
    bool fits = alignmentType.getRank() == 2 &&
                alignmentType.getElementType().isSignlessInteger(32) &&
                alignmentType.getDims()[0] == (*batch)[0] &&
                alignmentType.isNamedDim(1);
    DimDeclAttr path =
        fits ? context->getTable().lookup(alignmentType.getDimName(1))
             : DimDeclAttr();
    if (!path || path.getKind() != DimKind::seq || !path.getComputed() ||
        path.getBatch() != cast<StringAttr>((*batch)[0]))
      return emitOpError()
             << "an rnnt alignment is ["
             << cast<StringAttr>((*batch)[0]).getValue()
             << ", A] i32 over a computed sequence dim A of its emissions "
                "(T + U per sequence; declare 'A: seq("
             << cast<StringAttr>((*batch)[0]).getValue() << ") computed'), got "
             << getAlignment().getType();
  } else {
    // The frames: the grid's first sequence dim.
    FailureOr<Positions> grid = context->positions(getJoint());
    Attribute frames = StringAttr::get(getContext(), grid->sequences[0]);
    SmallVector<Attribute> dims(*batch);
    dims.push_back(frames);
    auto alignment =
        NNTensorType::get(dims, IntegerType::get(getContext(), 32));
    if (alignmentType != alignment)
      return emitOpError() << "alignment must be " << alignment
                           << " (a class per frame), got "
                           << getAlignment().getType();
  }
  auto score = NNTensorType::get(*batch, tensorOf(getJoint()).getElementType());
  if (tensorOf(getScore()) != score)
    return emitOpError() << "score must be " << score << ", got "
                         << getScore().getType();
  return success();
}

SmallVector<StringRef, 1> TransducerAlignOp::getProducedDims() {
  if (getTopology() != TransducerTopology::rnnt)
    return {};
  return {tensorOf(getAlignment()).getDimName(1)};
}

int64_t TransducerAlignOp::getNumClasses(OpOperand &operand) {
  return operand.get() == getLabels() ? featureSize(tensorOf(getJoint())) : 0;
}

int64_t TransducerAlignOp::getReservedClass(OpOperand &operand) {
  return operand.get() == getLabels() ? (int64_t)getBlank() : -1;
}
