//===- AllReduceGradients.cpp - a data-parallel step's sums ---------------===//
//
// Each process of a data-parallel run computes the step on its own part of
// the batch. Two sums over the processes make that step equal to one
// process on the whole batch: the normalization factor each loss seed
// divides by (a per-frame loss averages over every process's frames), and
// the parameter gradients (each process's gradient is its part's share of
// the whole batch's). Both become nn.all_reduce ops here; the runtime
// carries them out over its communicator (include/nn/Communicator.h).
//
//===----------------------------------------------------------------------===//

#include "passes/Passes.h"
#include "passes/utils/GraphUtils.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/SymbolTable.h"

#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/MapVector.h"
#include "llvm/ADT/SmallPtrSet.h"

namespace mlir::nn {
#define GEN_PASS_DEF_NNALLREDUCEGRADIENTS
#include "passes/Passes.h.inc"
} // namespace mlir::nn

using namespace mlir;
using namespace mlir::nn;

static constexpr StringLiteral kGradientAttr =
    NNDialect::GradientAttrHelper::getNameStr();

namespace {

struct NNAllReduceGradientsPass
    : public mlir::nn::impl::NNAllReduceGradientsBase<
          NNAllReduceGradientsPass> {
  using NNAllReduceGradientsBase::NNAllReduceGradientsBase;

  void runOnOperation() override;

private:
  /// Every normalized loss seed divides by its factor summed over the
  /// processes.
  void reduceNormalizations(ModuleOp module);
  /// The entry graph returns its parameter gradients summed, in buckets.
  void reduceGradients(GraphOp graph);
  /// A loss of the parameters alone (an L2 penalty) is an error: every
  /// rank would add all of it.
  LogicalResult refuseBatchFreeLosses(ModuleOp module);
};

} // namespace

/// Whether `value` depends on a graph input (the batch), through the ops
/// of its block: a value computed from parameters alone does not. A call's
/// result counts as depending on its inputs.
static bool readsTheBatch(Value value) {
  llvm::SmallPtrSet<Operation *, 16> seen;
  SmallVector<Value> work{value};
  while (!work.empty()) {
    Value next = work.pop_back_val();
    Operation *op = next.getDefiningOp();
    if (!op || isa<CallOp>(op))
      return true;
    if (seen.insert(op).second)
      llvm::append_range(work, op->getOperands());
  }
  return false;
}

LogicalResult NNAllReduceGradientsPass::refuseBatchFreeLosses(ModuleOp module) {
  WalkResult result = module.walk([&](LossSeedOp seed) {
    if (readsTheBatch(seed.getLoss()))
      return WalkResult::advance();
    seed.getLoss().getDefiningOp()->emitError()
        << "nn-all-reduce-gradients: this trained loss reads no input of "
           "the batch (parameters only: the same on every rank), so a "
           "data-parallel step would add its gradient once per rank; "
           "not supported yet";
    return WalkResult::interrupt();
  });
  return failure(result.wasInterrupted());
}

void NNAllReduceGradientsPass::reduceNormalizations(ModuleOp module) {
  // One sum per factor: by value, and by (positions, normalization) for
  // the factors counted from the lengths.
  llvm::DenseMap<Value, Value> reduced;
  llvm::DenseMap<std::pair<Type, unsigned>, Value> counted;
  module.walk([&](LossSeedOp seed) {
    if (seed.getUnnormalized())
      return;
    Value invNorm = seed.getInvNorm();
    auto terms = invNorm.getDefiningOp<LossTermsOp>();
    // A plain sum's factor is 1 on every process: summing the gradients
    // is all a sum needs.
    if (terms && terms.getNormalization() == LossNormalization::sum)
      return;
    bool fromLengths = terms && !terms.getWeights() &&
                       terms.getNormalization() != LossNormalization::custom;
    Value &sum =
        fromLengths ? counted[{terms.getLoss().getType(),
                               static_cast<unsigned>(terms.getNormalization())}]
                    : reduced[invNorm];
    // Counted at the top of the seed's graph: shared within that graph.
    if (sum && sum.getParentBlock() == seed->getBlock()) {
      seed.getInvNormMutable().assign(sum);
      return;
    }
    OpBuilder builder(seed.getContext());
    Location loc = invNorm.getLoc();
    Value local = invNorm;
    if (fromLengths) {
      // Frames or sequences come from the lengths alone: counted at the
      // top of the graph, the sum is there before the loss, so that a
      // fused loss tail can divide by it in the sweep that computes the
      // loss (nn-fuse-loss-tail).
      builder.setInsertionPointToStart(seed->getBlock());
      local =
          builder.create<LossNormOp>(loc, terms.getNormalizationAttr(),
                                     TypeAttr::get(terms.getLoss().getType()));
    } else {
      // Weighted frames, a custom factor: sum the factor itself.
      builder.setInsertionPointAfterValue(invNorm);
    }
    sum = builder.create<AllReduceOp>(loc, ValueRange{local}).getResult(0);
    seed.getInvNormMutable().assign(sum);
  });
}

void NNAllReduceGradientsPass::reduceGradients(GraphOp graph) {
  Block &body = graph.getBody().front();
  auto ret = cast<ReturnOp>(body.getTerminator());
  // Where each value is finished in the block: block arguments first.
  llvm::DenseMap<Operation *, unsigned> position;
  for (auto [index, op] : llvm::enumerate(body))
    position[&op] = index + 1;
  auto readyAt = [&](unsigned result) -> unsigned {
    Operation *op = ret.getOperand(result).getDefiningOp();
    return op ? position.lookup(body.findAncestorOpInBlock(*op)) : 0;
  };

  SmallVector<unsigned> gradients;
  for (unsigned i = 0; i < graph.getNumResults(); ++i)
    if (graph.getResultAttr(i, kGradientAttr))
      gradients.push_back(i);
  // Overlapping: buckets fill in the order the backward finishes the
  // gradients (a stable sort keeps result order among ties), so that the
  // first bucket is complete as early as it can be.
  if (overlap)
    llvm::stable_sort(gradients, [&](unsigned a, unsigned b) {
      return readyAt(a) < readyAt(b);
    });

  // One open bucket per element type: what one collective sums.
  struct Bucket {
    SmallVector<unsigned> results;
    int64_t bytes = 0;
  };
  SmallVector<Bucket> closed;
  llvm::MapVector<Type, Bucket> open;
  const double limit = bucketMb * 1024 * 1024;
  for (unsigned i : gradients) {
    auto type = cast<NNTensorType>(ret.getOperand(i).getType());
    Type element = type.getElementType();
    int64_t bytes = element.getIntOrFloatBitWidth() / 8;
    for (unsigned axis = 0; axis < type.getRank(); ++axis)
      bytes *= type.getStaticSize(axis);
    Bucket &bucket = open[element];
    if (!bucket.results.empty() && bucket.bytes + bytes > limit) {
      closed.push_back(std::move(bucket));
      bucket = Bucket();
    }
    bucket.results.push_back(i);
    bucket.bytes += bytes;
  }
  for (auto &entry : open)
    if (!entry.second.results.empty())
      closed.push_back(std::move(entry.second));
  // The collectives' order follows the module alone: by where their
  // last gradient is finished (overlap), else by their first result.
  auto key = [&](const Bucket &bucket) {
    if (!overlap)
      return bucket.results.front();
    unsigned last = 0;
    for (unsigned i : bucket.results)
      last = std::max(last, readyAt(i));
    return last;
  };
  llvm::stable_sort(closed, [&](const Bucket &a, const Bucket &b) {
    return key(a) < key(b);
  });

  OpBuilder builder(ret);
  for (const Bucket &bucket : closed) {
    SmallVector<Value> inputs;
    for (unsigned i : bucket.results)
      inputs.push_back(ret.getOperand(i));
    if (overlap) {
      // Right after its last gradient (the block's start when every one
      // is an argument), and after the sums already placed there: two
      // buckets that one op finishes keep their order.
      Operation *after = nullptr;
      for (Value input : inputs)
        if (Operation *op = input.getDefiningOp()) {
          op = body.findAncestorOpInBlock(*op);
          if (!after || after->isBeforeInBlock(op))
            after = op;
        }
      Block::iterator at =
          after ? std::next(Block::iterator(after)) : body.begin();
      while (at != body.end() && isa<AllReduceOp>(*at))
        ++at;
      builder.setInsertionPoint(&body, at);
    }
    auto sum = builder.create<AllReduceOp>(ret.getLoc(), inputs);
    for (auto [i, result] : llvm::zip(bucket.results, sum.getResults()))
      ret.setOperand(i, result);
  }
}

void NNAllReduceGradientsPass::runOnOperation() {
  ModuleOp module = getOperation();
  if (!(bucketMb > 0)) {
    module.emitError() << "nn-all-reduce-gradients: bucket-mb must be a "
                          "number > 0, got "
                       << bucketMb;
    return signalPassFailure();
  }
  FailureOr<GraphOp> graph =
      findEntryGraph(module, graphName, "nn-all-reduce-gradients");
  if (failed(graph))
    return signalPassFailure();
  if (failed(refuseBatchFreeLosses(module)))
    return signalPassFailure();
  reduceNormalizations(module);
  reduceGradients(*graph);
}
