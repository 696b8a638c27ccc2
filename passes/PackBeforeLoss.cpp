//===- PackBeforeLoss.cpp - run loss tails on packed frames ---------------===//
//
// For each frame-wise loss over padded frames [B, T], re-create the chain
// that feeds it on packed frames [N] (N = packed(B, T)), starting from
// packs of its frontier values: frame-wise ops always, sequence-mixing ops
// with a packed form as the `pack` option says (up to the loss tail, as
// early as possible, or where a cost model says it pays). Each value packs
// over its own sequence dim (a strided conv's input over packed(B, T), its
// result over packed(B, T2)). Per-sequence losses with a packed form (CTC),
// the operands of transducer joins onto the packed grid and the inputs of
// decoding ops (a decode-only graph has no loss) are packed the same way.
// See docs/passes.md.
//
//===----------------------------------------------------------------------===//

#include "passes/Passes.h"

#include "dialects/nn/Dims.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/IRMapping.h"
#include "llvm/ADT/SetVector.h"
#include "llvm/Support/Format.h"
#include "llvm/Support/SaveAndRestore.h"

namespace mlir::nn {
#define DEBUG_TYPE "nn-pack-before-loss"

#define GEN_PASS_DEF_NNPACKBEFORELOSS
#include "passes/Passes.h.inc"
} // namespace mlir::nn

using namespace mlir;
using namespace mlir::nn;

namespace {

/// Whether operand `index` of `op` (frame-wise, or sequence-mixing with a
/// packed form) is indexed by positions and is packed with the results.
bool isFrameOperand(Operation *op, unsigned index) {
  if (auto frameWise = dyn_cast<FrameWiseOpInterface>(op))
    return frameWise.isFrameOperand(index);
  return cast<SequenceMixingOpInterface>(op).isPackableOperand(index);
}

/// Whether `value` is padded over a sequence axis (packed values are not).
bool isOverSequence(Value value) {
  return cast<NNTensorType>(value.getType()).getNumPositionDims() >= 2;
}

/// Values per position of `value`: the product of its feature axes.
double featuresOf(Value value) {
  auto type = cast<NNTensorType>(value.getType());
  double features = 1;
  for (unsigned i = type.getNumPositionDims(); i < type.getRank(); ++i)
    features *= type.getStaticSize(i);
  return features;
}

/// `value` to four significant digits, for remarks.
std::string fourDigits(double value) {
  std::string text;
  llvm::raw_string_ostream(text) << llvm::format("%.4g", value);
  return text;
}

/// The cost model's work of frame-wise `op` per position, in element
/// operations: the values it reads and writes per position, and a
/// linear's multiply-adds.
double frameWork(Operation *op) {
  double work = 0;
  for (OpOperand &operand : op->getOpOperands())
    if (isFrameOperand(op, operand.getOperandNumber()))
      work += featuresOf(operand.get());
  for (Value result : op->getResults())
    work += featuresOf(result);
  if (auto linear = dyn_cast<LinearOp>(op)) {
    auto weight = cast<NNTensorType>(linear.getWeight().getType());
    work += 2.0 * weight.getStaticSize(0) * weight.getStaticSize(1);
  }
  return work;
}

/// `type` with its leading [B, S] position axes replaced by `packedDim`.
NNTensorType getPackedType(Type type, StringAttr packedDim) {
  auto tensor = cast<NNTensorType>(type);
  SmallVector<Attribute> dims{packedDim};
  llvm::append_range(dims, tensor.getDims().drop_front(2));
  return NNTensorType::get(dims, tensor.getElementType());
}

/// Describes where a frontier value comes from, for remarks.
std::string describeProducer(Value value) {
  if (auto argument = dyn_cast<BlockArgument>(value))
    return "argument " + std::to_string(argument.getArgNumber());
  return value.getDefiningOp()->getName().getStringRef().str();
}

/// What packing one loss did, for its remark.
struct LossPacking {
  unsigned movedOps = 0;
  unsigned movedMixingOps = 0;
  unsigned reusedValues = 0;
  SmallVector<std::string> newPacks;
};

/// Packs the loss tails of one graph.
class GraphPacker {
public:
  GraphPacker(GraphOp graph, ::nn::PackFrontier frontier, double expectedFill,
              bool emitRemarks)
      : graph(graph), builder(graph.getContext()), frontier(frontier),
        expectedFill(expectedFill), emitRemarks(emitRemarks) {}

  /// Fails only on IR that did not verify.
  LogicalResult run();

private:
  /// A per-sequence loss with a packed form (ctc_loss): its frames are
  /// packed, as the frontier says, and its result stays per sequence.
  /// `skip` says why not.
  void packSequenceLoss(MarkLossOp mark, Operation *loss,
                        function_ref<void(StringRef)> skip);

  /// A transducer join whose result is the packed grid J: its padded
  /// encoder and prediction operands are packed, each over its own
  /// sequence dim, where the frontier lets them (as a per-sequence loss's
  /// frames: not at pack=loss-tail).
  void packJoin(TransducerJoinOp join);

  /// A decoding op of a graph: the model feeding its scores (or its
  /// transducer encoder) runs on packed frames as a loss's would, where
  /// the frontier moves the op that makes them. CTC searches read the
  /// packed scores; a transducer search, padded only, reads their unpack.
  void packDecoderInput(Operation *decoder, OpOperand &input);

  /// Says what packing one loss did.
  void remarkPacked(MarkLossOp mark, StringAttr packedDim,
                    const LossPacking &report);

  /// Appends the ops moved and the values packed to `remark`.
  static void describePacking(InFlightDiagnostic &remark,
                              const LossPacking &report);

  /// The frontier rule: whether `op`, producing a value of the chain
  /// being packed, is re-created on packed frames. Frame-wise ops always
  /// are; sequence-mixing ops with a packed form as `frontier` says.
  bool movesBehindPack(Operation *op);

  /// pack=auto: whether moving sequence-mixing `op` behind the pack costs
  /// less than packing its results (docs/passes.md, the cost model).
  bool packingPays(SequenceMixingOpInterface op);

  /// The frame-wise ops that would move with a value's packing and the
  /// values that would be packed for them, for the cost model: adds their
  /// work per position to `chainWork` and the frontier's values per
  /// position to `frontierWidth`.
  void estimateUpstream(Value value, DenseSet<Value> &seen, double &chainWork,
                        double &frontierWidth) const;

  /// The dim declared packed(batch, sequence), declared now if missing.
  StringAttr getOrDeclarePackedDim(StringRef batch, StringRef sequence);

  /// The packed dim of the padded value `value` ([B, S, ...]): packed(B, S).
  /// Each value packs over its own sequence dim, so a strided op between
  /// the loss and the frontier (T -> T2 = ceildiv(T, 2)) can move too.
  StringAttr getPackedDimOf(Value value);

  /// The packed twin of the padded value `value`: a clone of its frame-wise
  /// producer on packed operands, or a pack of it at the frontier.
  Value getPacked(Value value, LossPacking &report);

  /// Gives padded users of moved values an unpack of the packed twin and
  /// erases the padded ops that are no longer used.
  void replacePaddedChain();

  GraphOp graph;
  OpBuilder builder;
  ::nn::PackFrontier frontier;
  double expectedFill;
  bool emitRemarks;
  /// The padded axes [B, T] of the loss (or the join's encoder, or the
  /// decoder's input) being packed: the batch every moved value must be
  /// over, and the dim remarks name.
  StringRef lossBatch, lossSequence;
  /// Padded value -> its packed twin, shared by all losses of the graph.
  DenseMap<Value, Value> packedOf;
  /// Padded value -> index of the loss whose packing created its twin.
  DenseMap<Value, unsigned> createdForLoss;
  unsigned currentLoss = 0;
  /// Padded ops that got a packed twin, operands before users.
  llvm::SetVector<Operation *> movedOps;
};

StringAttr GraphPacker::getOrDeclarePackedDim(StringRef batch,
                                              StringRef sequence) {
  DimTable table(graph.getDims());
  if (DimDeclAttr decl = table.findPacked(batch, sequence))
    return decl.getName();
  MLIRContext *context = graph.getContext();
  std::string name = ("N_" + sequence).str();
  for (unsigned suffix = 1; table.lookup(name); ++suffix)
    name = ("N_" + sequence + "_" + Twine(suffix)).str();
  auto decl =
      DimDeclAttr::get(context, StringAttr::get(context, name), DimKind::packed,
                       StringAttr::get(context, batch),
                       StringAttr::get(context, sequence), 0, 0, StringAttr(),
                       /*computed=*/false);
  SmallVector<Attribute> dims(graph.getDims().getValue());
  dims.push_back(decl);
  graph.setDimsAttr(ArrayAttr::get(context, dims));
  return decl.getName();
}

StringAttr GraphPacker::getPackedDimOf(Value value) {
  auto type = cast<NNTensorType>(value.getType());
  return getOrDeclarePackedDim(type.getDimName(0), type.getDimName(1));
}

Value GraphPacker::getPacked(Value value, LossPacking &report) {
  if (Value packed = packedOf.lookup(value)) {
    if (createdForLoss.lookup(value) != currentLoss)
      ++report.reusedValues;
    return packed;
  }
  Operation *producer = value.getDefiningOp();
  if (producer && movesBehindPack(producer)) {
    IRMapping mapping;
    for (OpOperand &operand : producer->getOpOperands())
      if (isFrameOperand(producer, operand.getOperandNumber()))
        mapping.map(operand.get(), getPacked(operand.get(), report));
    // Operands (packs, clones) are all placed before the padded producer.
    builder.setInsertionPoint(producer);
    Operation *clone = builder.clone(*producer, mapping);
    for (auto [padded, packed] :
         llvm::zip(producer->getResults(), clone->getResults())) {
      if (!isOverSequence(padded))
        continue;
      packed.setType(getPackedType(padded.getType(), getPackedDimOf(padded)));
      packedOf[padded] = packed;
      createdForLoss[padded] = currentLoss;
    }
    movedOps.insert(producer);
    ++(isa<FrameWiseOpInterface>(producer) ? report.movedOps
                                           : report.movedMixingOps);
    return packedOf.lookup(value);
  }
  // The frontier: pack the value right where it is made.
  if (producer)
    builder.setInsertionPointAfter(producer);
  else
    builder.setInsertionPointToStart(value.getParentBlock());
  Value packed = builder.create<PackOp>(
      value.getLoc(), getPackedType(value.getType(), getPackedDimOf(value)),
      value);
  packedOf[value] = packed;
  createdForLoss[value] = currentLoss;
  report.newPacks.push_back(describeProducer(value));
  return packed;
}

bool GraphPacker::movesBehindPack(Operation *op) {
  if (isa<FrameWiseOpInterface>(op))
    return true;
  auto mixing = dyn_cast<SequenceMixingOpInterface>(op);
  if (!mixing || !mixing.hasPackedForm())
    return false;
  // Its packed operands, and its results with a sequence axis, must be
  // padded over the loss's batch B and one sequence dim each: each packs
  // over its own, packed(B, S) (a strided conv's result is over T2, its
  // input over T; packed forms map [B, S] to packed(B, S) throughout).
  auto overLossBatch = [&](Value value) {
    auto type = cast<NNTensorType>(value.getType());
    return type.getNumPositionDims() == 2 && type.getDimName(0) == lossBatch;
  };
  for (OpOperand &operand : op->getOpOperands())
    if (isFrameOperand(op, operand.getOperandNumber()) &&
        !overLossBatch(operand.get()))
      return false;
  for (Value result : op->getResults())
    if (isOverSequence(result) && !overLossBatch(result))
      return false;
  switch (frontier) {
  case ::nn::PackFrontier::lossTail:
    return false;
  case ::nn::PackFrontier::earliest:
    if (emitRemarks)
      op->emitRemark() << "runs on packed frames (pack=earliest)";
    return true;
  case ::nn::PackFrontier::cost:
    return packingPays(mixing);
  }
  llvm_unreachable("unknown pack frontier");
}

void GraphPacker::estimateUpstream(Value value, DenseSet<Value> &seen,
                                   double &chainWork,
                                   double &frontierWidth) const {
  if (!seen.insert(value).second || packedOf.count(value))
    return;
  Operation *producer = value.getDefiningOp();
  if (producer && isa<FrameWiseOpInterface>(producer)) {
    chainWork += frameWork(producer);
    for (OpOperand &operand : producer->getOpOperands())
      if (isFrameOperand(producer, operand.getOperandNumber()))
        estimateUpstream(operand.get(), seen, chainWork, frontierWidth);
    return;
  }
  frontierWidth += featuresOf(value);
}

// Per position of the padded batch (B * T_max of them, a share `fill` of
// them real), what changes when `op` moves behind the pack:
//   padded: its padded-frame work w on every position, a pack of its
//           results (read and write, 2 * R per real frame), and the
//           frame-wise ops before it on every position (U);
//   packed: w and U on real frames only, and a pack of the values at the
//           frontier before it (2 * F per real frame).
// Its recurrences and GEMMs run on real frames either way and cancel.
bool GraphPacker::packingPays(SequenceMixingOpInterface op) {
  double fill = expectedFill;
  // Results without a sequence axis (a per-sequence loss) need no pack.
  double results = 0;
  for (Value result : op->getResults())
    if (isOverSequence(result))
      results += featuresOf(result);
  double chainWork = 0, frontierWidth = 0;
  DenseSet<Value> seen;
  for (OpOperand &operand : op->getOpOperands())
    if (isFrameOperand(op, operand.getOperandNumber()))
      estimateUpstream(operand.get(), seen, chainWork, frontierWidth);
  double work = op.getPaddedFrameWork();
  double padded = work + 2 * fill * results + chainWork;
  double packed = fill * (work + chainWork) + 2 * fill * frontierWidth;
  bool pays = packed < padded;
  if (emitRemarks)
    op->emitRemark() << (pays ? "runs on packed frames" : "stays padded")
                     << " (pack=auto): an estimated " << fourDigits(packed)
                     << " element operations per position packed against "
                     << fourDigits(padded) << " padded at fill "
                     << fourDigits(fill);
  return pays;
}

void GraphPacker::replacePaddedChain() {
  // Users come after their operands in movedOps: walking it backwards
  // erases a dead padded user before looking at its producers.
  for (Operation *padded : llvm::reverse(movedOps)) {
    // A used result without a packed twin (no sequence axis) keeps the
    // padded op.
    if (llvm::any_of(padded->getResults(), [&](Value result) {
          return !result.use_empty() && !packedOf.count(result);
        }))
      continue;
    for (Value result : padded->getResults()) {
      if (result.use_empty())
        continue;
      // A user outside the loss tails still needs the padded value: one
      // gather of the packed twin is never more work than recomputing the
      // op on padded frames, which writes the same padded output.
      builder.setInsertionPointAfter(padded);
      Value unpacked = builder.create<UnpackOp>(
          padded->getLoc(), result.getType(), packedOf.lookup(result));
      if (emitRemarks)
        for (Operation *user : result.getUsers())
          user->emitRemark() << "uses a value of a packed loss tail in "
                                "padded form: unpacked from its packed twin "
                                "instead of computing it twice";
      result.replaceAllUsesWith(unpacked);
    }
    padded->erase();
  }
}

LogicalResult GraphPacker::run() {
  SmallVector<MarkLossOp> marks(graph.getBody().getOps<MarkLossOp>());
  for (MarkLossOp mark : marks) {
    auto skip = [&](StringRef why) {
      if (emitRemarks)
        mark.emitRemark() << "loss '" << mark.getName()
                          << "' left as it is: " << why;
    };
    Operation *loss = mark.getLoss().getDefiningOp();
    auto lossOp = dyn_cast_or_null<LossOpInterface>(loss);
    if (lossOp &&
        cast<NNTensorType>(lossOp.getLossValue().getType()).getRank() == 0) {
      skip("its loss has no positions");
      continue;
    }
    if (!lossOp) {
      skip("a per-sequence loss mixes time");
      continue;
    }
    if (!lossOp.isPerFrameLoss()) {
      packSequenceLoss(mark, loss, skip);
      continue;
    }
    if (!isa<FrameWiseOpInterface>(loss)) {
      skip("its loss op cannot run on packed frames");
      continue;
    }
    DimTable table(graph.getDims());
    FailureOr<Positions> positions =
        classifyPositions(cast<NNTensorType>(mark.getLoss().getType()), table,
                          [&] { return mark.emitError(); });
    if (failed(positions))
      return failure();
    if (positions->kind == PositionKind::Packed) {
      skip("already packed");
      continue;
    }
    if (positions->kind != PositionKind::Padded ||
        positions->sequences.size() != 1) {
      skip("not over exactly one sequence axis");
      continue;
    }
    lossBatch = positions->batch;
    lossSequence = positions->sequences[0];
    StringAttr packedDim = getOrDeclarePackedDim(lossBatch, lossSequence);
    LossPacking report;
    ++currentLoss;
    Value packedLoss = getPacked(mark.getLoss(), report);
    mark.getLossMutable().assign(packedLoss);
    if (Value weights = mark.getWeights())
      mark.getWeightsMutable().assign(getPacked(weights, report));
    if (emitRemarks)
      remarkPacked(mark, packedDim, report);
  }
  for (TransducerJoinOp join :
       llvm::to_vector(graph.getBody().getOps<TransducerJoinOp>()))
    packJoin(join);
  // After the losses: a search over logits a CTC loss packed reads the
  // same packed twin.
  for (Operation &op : llvm::make_early_inc_range(graph.getBody().getOps())) {
    if (auto greedy = dyn_cast<CtcGreedyDecodeOp>(op))
      packDecoderInput(greedy, greedy.getScoresMutable());
    else if (auto beam = dyn_cast<CtcBeamSearchOp>(op))
      packDecoderInput(beam, beam.getScoresMutable());
    else if (auto greedy = dyn_cast<TransducerGreedyDecodeOp>(op))
      packDecoderInput(greedy, greedy.getEncoderMutable());
    else if (auto beam = dyn_cast<TransducerBeamSearchOp>(op))
      packDecoderInput(beam, beam.getEncoderMutable());
  }
  replacePaddedChain();
  return success();
}

void GraphPacker::packDecoderInput(Operation *decoder, OpOperand &input) {
  auto skip = [&](StringRef why) {
    if (emitRemarks)
      decoder->emitRemark() << "its input left as it is: " << why;
  };
  if (frontier == ::nn::PackFrontier::lossTail) {
    skip("pack=loss-tail packs loss tails only");
    return;
  }
  Value value = input.get();
  if (!isOverSequence(value)) {
    skip("already packed");
    return;
  }
  auto type = cast<NNTensorType>(value.getType());
  lossBatch = type.getDimName(0);
  lossSequence = type.getDimName(1);
  // Packing an input only to unpack it again would be all cost: the op
  // that makes it must move behind the pack (or have moved for a loss).
  // As for a per-frame loss, a producer that moves is reason enough: the
  // search's own work is the same packed or padded. Asked quietly: if it
  // moves, getPacked asks again and says so.
  Operation *producer = value.getDefiningOp();
  bool moves = packedOf.count(value) != 0;
  if (!moves && producer) {
    llvm::SaveAndRestore<bool> quiet(emitRemarks, false);
    moves = movesBehindPack(producer);
  }
  if (!moves) {
    skip("its producer stays padded");
    return;
  }
  LossPacking report;
  ++currentLoss;
  Value packed = getPacked(value, report);
  bool readsPacked = isa<CtcGreedyDecodeOp, CtcBeamSearchOp>(decoder);
  if (readsPacked)
    input.set(packed);
  if (!emitRemarks)
    return;
  InFlightDiagnostic remark = decoder->emitRemark();
  remark << (readsPacked ? "reads packed scores: "
                         : "reads the unpack of a packed encoder: ");
  describePacking(remark, report);
}

void GraphPacker::packJoin(TransducerJoinOp join) {
  auto skip = [&](StringRef why) {
    if (emitRemarks)
      join.emitRemark() << "encoder and prediction left as they are: " << why;
  };
  if (cast<NNTensorType>(join.getResult().getType()).getNumPositionDims() !=
      1) {
    skip("the joint is the padded grid");
    return;
  }
  if (!isOverSequence(join.getEncoder()) ||
      !isOverSequence(join.getPrediction())) {
    skip("already packed");
    return;
  }
  if (frontier == ::nn::PackFrontier::lossTail) {
    skip("pack=loss-tail packs loss tails only");
    return;
  }
  auto encoder = cast<NNTensorType>(join.getEncoder().getType());
  lossBatch = encoder.getDimName(0);
  lossSequence = encoder.getDimName(1);
  if (!movesBehindPack(join)) {
    skip("they stay padded");
    return;
  }
  LossPacking report;
  ++currentLoss;
  for (OpOperand &operand : join->getOpOperands())
    operand.set(getPacked(operand.get(), report));
  if (!emitRemarks)
    return;
  InFlightDiagnostic remark = join.emitRemark();
  remark << "encoder and prediction run on packed frames: ";
  describePacking(remark, report);
}

void GraphPacker::packSequenceLoss(MarkLossOp mark, Operation *loss,
                                   function_ref<void(StringRef)> skip) {
  auto mixing = dyn_cast<SequenceMixingOpInterface>(loss);
  if (!mixing || !mixing.hasPackedForm() ||
      frontier == ::nn::PackFrontier::lossTail) {
    skip("a per-sequence loss mixes time");
    return;
  }
  SmallVector<OpOperand *> framesOperands;
  for (OpOperand &operand : loss->getOpOperands())
    if (mixing.isPackableOperand(operand.getOperandNumber()))
      framesOperands.push_back(&operand);
  if (framesOperands.empty()) {
    skip("it has no frames operand to pack");
    return;
  }
  // The verifier has checked the operand's positions.
  auto type = cast<NNTensorType>(framesOperands.front()->get().getType());
  if (type.getNumPositionDims() != 2) {
    skip("already packed");
    return;
  }
  lossBatch = type.getDimName(0);
  lossSequence = type.getDimName(1);
  if (!movesBehindPack(loss)) {
    skip("its frames stay padded");
    return;
  }
  StringAttr packedDim = getOrDeclarePackedDim(lossBatch, lossSequence);
  LossPacking report;
  ++currentLoss;
  for (OpOperand *operand : framesOperands)
    operand->set(getPacked(operand->get(), report));
  if (emitRemarks)
    remarkPacked(mark, packedDim, report);
}

void GraphPacker::remarkPacked(MarkLossOp mark, StringAttr packedDim,
                               const LossPacking &report) {
  InFlightDiagnostic remark = mark.emitRemark();
  remark << "loss '" << mark.getName() << "' runs on packed frames "
         << packedDim.getValue() << " = packed(" << lossBatch << ", "
         << lossSequence << "): ";
  describePacking(remark, report);
}

void GraphPacker::describePacking(InFlightDiagnostic &remark,
                                  const LossPacking &report) {
  remark << report.movedOps << " frame-wise";
  if (report.movedMixingOps)
    remark << " and " << report.movedMixingOps << " sequence-mixing";
  remark << " op(s) moved behind the pack; new pack(s) of: ";
  if (report.newPacks.empty())
    remark << "none";
  llvm::interleaveComma(report.newPacks, remark);
  remark << "; " << report.reusedValues
         << " value(s) shared with earlier losses";
}

struct PackBeforeLossPass
    : public mlir::nn::impl::NNPackBeforeLossBase<PackBeforeLossPass> {
  using NNPackBeforeLossBase::NNPackBeforeLossBase;

  void runOnOperation() override {
    if (!(expectedFill > 0 && expectedFill <= 1)) {
      getOperation().emitError()
          << "nn-pack-before-loss: expected-fill must be in (0, 1], got "
          << expectedFill.getValue();
      return signalPassFailure();
    }
    for (GraphOp graph : getOperation().getOps<GraphOp>())
      if (failed(GraphPacker(graph, pack, expectedFill, emitRemarks).run()))
        return signalPassFailure();
  }
};

} // namespace
