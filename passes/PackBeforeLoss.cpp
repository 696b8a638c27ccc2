//===- PackBeforeLoss.cpp - run loss tails on packed frames ---------------===//
//
// For each frame-wise loss over padded frames [B, T], re-create the
// frame-wise chain that feeds it on packed frames [N] (N = packed(B, T)),
// starting from packs of its frontier values. See docs/passes.md.
//
//===----------------------------------------------------------------------===//

#include "passes/Passes.h"

#include "dialects/nn/Dims.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/IRMapping.h"
#include "llvm/ADT/SetVector.h"

namespace mlir::nn {
#define DEBUG_TYPE "nn-pack-before-loss"

#define GEN_PASS_DEF_NNPACKBEFORELOSS
#include "passes/Passes.h.inc"
} // namespace mlir::nn

using namespace mlir;
using namespace mlir::nn;

namespace {

/// The frontier rule: whether `op` can be re-created on packed frames.
/// Frame-wise ops can, with or without parameters; sequence-mixing ops
/// (SequenceMixingOpInterface) cannot yet. A packed implementation of one
/// would extend the interface with its rewrite, and a cost model this rule.
bool canMoveBehindPack(Operation *op) { return isa<FrameWiseOpInterface>(op); }

/// `type` with its leading [B, T] position axes replaced by `packedDim`.
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
  unsigned reusedValues = 0;
  SmallVector<std::string> newPacks;
};

/// Packs the loss tails of one graph.
class GraphPacker {
public:
  explicit GraphPacker(GraphOp graph)
      : graph(graph), builder(graph.getContext()) {}

  /// Fails only on IR that did not verify.
  LogicalResult run(bool emitRemarks);

private:
  /// The dim declared packed(batch, sequence), declared now if missing.
  StringAttr getOrDeclarePackedDim(StringRef batch, StringRef sequence);

  /// The packed twin of the padded value `value`: a clone of its frame-wise
  /// producer on packed operands, or a pack of it at the frontier.
  Value getPacked(Value value, StringAttr packedDim, LossPacking &report);

  /// Gives padded users of moved values an unpack of the packed twin and
  /// erases the padded ops that are no longer used.
  void replacePaddedChain(bool emitRemarks);

  GraphOp graph;
  OpBuilder builder;
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

Value GraphPacker::getPacked(Value value, StringAttr packedDim,
                             LossPacking &report) {
  if (Value packed = packedOf.lookup(value)) {
    if (createdForLoss.lookup(value) != currentLoss)
      ++report.reusedValues;
    return packed;
  }
  Operation *producer = value.getDefiningOp();
  if (producer && canMoveBehindPack(producer)) {
    auto frameWise = cast<FrameWiseOpInterface>(producer);
    IRMapping mapping;
    for (OpOperand &operand : producer->getOpOperands())
      if (frameWise.isFrameOperand(operand.getOperandNumber()))
        mapping.map(operand.get(), getPacked(operand.get(), packedDim, report));
    // Operands (packs, clones) are all placed before the padded producer.
    builder.setInsertionPoint(producer);
    Operation *clone = builder.clone(*producer, mapping);
    for (auto [padded, packed] :
         llvm::zip(producer->getResults(), clone->getResults())) {
      packed.setType(getPackedType(padded.getType(), packedDim));
      packedOf[padded] = packed;
      createdForLoss[padded] = currentLoss;
    }
    movedOps.insert(producer);
    ++report.movedOps;
    return packedOf.lookup(value);
  }
  // The frontier: pack the value right where it is made.
  if (producer)
    builder.setInsertionPointAfter(producer);
  else
    builder.setInsertionPointToStart(value.getParentBlock());
  Value packed = builder.create<PackOp>(
      value.getLoc(), getPackedType(value.getType(), packedDim), value);
  packedOf[value] = packed;
  createdForLoss[value] = currentLoss;
  report.newPacks.push_back(describeProducer(value));
  return packed;
}

void GraphPacker::replacePaddedChain(bool emitRemarks) {
  // Users come after their operands in movedOps: walking it backwards
  // erases a dead padded user before looking at its producers.
  for (Operation *padded : llvm::reverse(movedOps)) {
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

LogicalResult GraphPacker::run(bool emitRemarks) {
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
    if (!lossOp || !lossOp.isPerFrameLoss()) {
      skip("a per-sequence loss mixes time");
      continue;
    }
    if (!canMoveBehindPack(loss)) {
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
    StringAttr packedDim =
        getOrDeclarePackedDim(positions->batch, positions->sequences[0]);
    LossPacking report;
    ++currentLoss;
    Value packedLoss = getPacked(mark.getLoss(), packedDim, report);
    mark.getLossMutable().assign(packedLoss);
    if (emitRemarks) {
      InFlightDiagnostic remark = mark.emitRemark();
      remark << "loss '" << mark.getName() << "' runs on packed frames "
             << packedDim.getValue() << " = packed(" << positions->batch << ", "
             << positions->sequences[0] << "): " << report.movedOps
             << " frame-wise op(s) moved behind the pack; new pack(s) of: ";
      if (report.newPacks.empty())
        remark << "none";
      llvm::interleaveComma(report.newPacks, remark);
      remark << "; " << report.reusedValues
             << " value(s) shared with earlier losses";
    }
  }
  replacePaddedChain(emitRemarks);
  return success();
}

struct PackBeforeLossPass
    : public mlir::nn::impl::NNPackBeforeLossBase<PackBeforeLossPass> {
  using NNPackBeforeLossBase::NNPackBeforeLossBase;

  void runOnOperation() override {
    for (GraphOp graph : getOperation().getOps<GraphOp>())
      if (failed(GraphPacker(graph).run(emitRemarks)))
        return signalPassFailure();
  }
};

} // namespace
