//===- ParallelLoops.cpp - one level of threads for generated loops -------===//
//
// nn-parallel-loops runs after convert-linalg-to-parallel-loops, before
// nn-sequences-to-openmp (upstream convert-scf-to-openmp, then a dynamic
// schedule for the loops over sequences). Each scf.parallel that no other one
// encloses keeps its first dimension parallel; the other dimensions and
// the parallel loops inside become scf.for nests (one level of threads:
// the inner loops are what LLVM vectorizes). A loop whose work (its
// iterations times the trip counts of the loops it holds) is below
// min-work runs sequentially: known at compile time, it is rewritten;
// known only at run time, an scf.if picks the parallel loop or a
// sequential copy. An scf.forall (independent sequences) becomes an
// outermost parallel loop, marked nn.sequences, that needs only two
// iterations; nn-sequences-to-openmp gives those loops a dynamic schedule.
// docs/lowering.md, "Threads".
//
//===----------------------------------------------------------------------===//

#include "lowering/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Arith/Utils/Utils.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/SCF/Transforms/Transforms.h"
#include "mlir/IR/PatternMatch.h"

namespace mlir::nn {
#define DEBUG_TYPE "nn-parallel-loops"

#define GEN_PASS_DEF_NNPARALLELLOOPS
#include "lowering/Passes.h.inc"
} // namespace mlir::nn

using namespace mlir;

namespace {

/// `parallel` as a nest of scf.for with the same bounds and body (it
/// carries no values: linalg's loops reduce through memory).
void sequentialize(scf::ParallelOp parallel) {
  OpBuilder builder(parallel);
  Location loc = parallel.getLoc();
  SmallVector<Value> ivs;
  Block *innermost = nullptr;
  for (auto [lower, upper, step] :
       llvm::zip(parallel.getLowerBound(), parallel.getUpperBound(),
                 parallel.getStep())) {
    auto loop = builder.create<scf::ForOp>(loc, lower, upper, step);
    ivs.push_back(loop.getInductionVar());
    innermost = loop.getBody();
    builder.setInsertionPoint(innermost->getTerminator());
  }
  Block *body = parallel.getBody();
  for (auto [argument, iv] : llvm::zip(body->getArguments(), ivs))
    argument.replaceAllUsesWith(iv);
  innermost->getOperations().splice(innermost->getTerminator()->getIterator(),
                                    body->getOperations(), body->begin(),
                                    std::prev(body->end()));
  parallel.erase();
}

/// Keeps only the first dimension of a multi-dimensional `parallel`
/// parallel; the others become an scf.for nest inside it. OpenMP would
/// collapse all of them into one linear loop, recomputing every index by
/// division in each iteration, which LLVM cannot vectorize.
scf::ParallelOp parallelizeFirstDimension(scf::ParallelOp parallel) {
  if (parallel.getNumLoops() == 1)
    return parallel;
  OpBuilder builder(parallel);
  Location loc = parallel.getLoc();
  auto outer = builder.create<scf::ParallelOp>(
      loc, parallel.getLowerBound().take_front(),
      parallel.getUpperBound().take_front(), parallel.getStep().take_front());
  outer->setDiscardableAttrs(parallel->getDiscardableAttrDictionary());
  builder.setInsertionPoint(outer.getBody()->getTerminator());
  auto inner = builder.create<scf::ParallelOp>(
      loc, parallel.getLowerBound().drop_front(),
      parallel.getUpperBound().drop_front(), parallel.getStep().drop_front());
  Block *body = parallel.getBody();
  body->getArgument(0).replaceAllUsesWith(outer.getInductionVars().front());
  for (auto [argument, iv] :
       llvm::zip(body->getArguments().drop_front(), inner.getInductionVars()))
    argument.replaceAllUsesWith(iv);
  Block *innerBody = inner.getBody();
  innerBody->getOperations().splice(innerBody->getTerminator()->getIterator(),
                                    body->getOperations(), body->begin(),
                                    std::prev(body->end()));
  parallel.erase();
  sequentialize(inner);
  return outer;
}

/// The trip count of a loop range, built before the loop `at` (folded to
/// a constant where static). A range with a bound defined inside `at` is
/// not known there and counts 1.
Value tripCount(OpBuilder &builder, Location loc, Operation *at, Value lower,
                Value upper, Value step) {
  auto outside = [&](Value value) {
    return !at->isAncestor(value.getParentRegion()->getParentOp());
  };
  if (!outside(lower) || !outside(upper) || !outside(step))
    return builder.create<arith::ConstantIndexOp>(loc, 1);
  Value span = builder.createOrFold<arith::SubIOp>(loc, upper, lower);
  Value trips = builder.createOrFold<arith::CeilDivSIOp>(loc, span, step);
  return builder.createOrFold<arith::MaxSIOp>(
      loc, trips, builder.create<arith::ConstantIndexOp>(loc, 0));
}

/// The iterations of the loops inside `op` along its largest nest, built
/// before the loop `at`.
Value innerWork(OpBuilder &builder, Location loc, Operation *at,
                Operation *op) {
  Value best = builder.create<arith::ConstantIndexOp>(loc, 1);
  for (Region &region : op->getRegions())
    for (Operation &nested : region.getOps()) {
      if (nested.getNumRegions() == 0)
        continue;
      Value trips = builder.create<arith::ConstantIndexOp>(loc, 1);
      if (auto loop = dyn_cast<scf::ForOp>(nested))
        trips = tripCount(builder, loc, at, loop.getLowerBound(),
                          loop.getUpperBound(), loop.getStep());
      else if (auto parallel = dyn_cast<scf::ParallelOp>(nested))
        for (auto [l, u, s] :
             llvm::zip(parallel.getLowerBound(), parallel.getUpperBound(),
                       parallel.getStep()))
          trips = builder.createOrFold<arith::MulIOp>(
              loc, trips, tripCount(builder, loc, at, l, u, s));
      Value work = builder.createOrFold<arith::MulIOp>(
          loc, trips, innerWork(builder, loc, at, &nested));
      best = builder.createOrFold<arith::MaxSIOp>(loc, best, work);
    }
  return best;
}

struct ParallelLoopsPass
    : public mlir::nn::impl::NNParallelLoopsBase<ParallelLoopsPass> {
  using NNParallelLoopsBase::NNParallelLoopsBase;

  void runOnOperation() override {
    // Loops over independent sequences: parallel whatever their estimated
    // work (see guard).
    SmallVector<scf::ForallOp> foralls;
    getOperation().walk(
        [&](scf::ForallOp forall) { foralls.push_back(forall); });
    IRRewriter rewriter(&getContext());
    for (scf::ForallOp forall : foralls) {
      rewriter.setInsertionPoint(forall);
      scf::ParallelOp parallel;
      if (failed(scf::forallToParallelLoop(rewriter, forall, &parallel))) {
        forall.emitError("expected an scf.forall on buffers (after "
                         "bufferization) without shared outputs");
        return signalPassFailure();
      }
      parallel->setAttr(mlir::nn::kSequencesLoopAttr, rewriter.getUnitAttr());
    }
    SmallVector<scf::ParallelOp> outermost, inner;
    getOperation().walk([&](scf::ParallelOp parallel) {
      if (parallel->getParentOfType<scf::ParallelOp>())
        inner.push_back(parallel);
      else
        outermost.push_back(parallel);
    });
    // The walk is post-order: innermost first.
    for (scf::ParallelOp parallel : inner)
      sequentialize(parallel);
    for (scf::ParallelOp parallel : outermost)
      guard(parallel);
  }

  /// Keeps `parallel` parallel (its first dimension) only where its work
  /// reaches the threshold.
  void guard(scf::ParallelOp parallel) {
    parallel = parallelizeFirstDimension(parallel);
    OpBuilder builder(parallel);
    Location loc = parallel.getLoc();
    Value trips =
        tripCount(builder, loc, parallel, parallel.getLowerBound().front(),
                  parallel.getUpperBound().front(), parallel.getStep().front());
    std::optional<int64_t> staticTrips = getConstantIntValue(trips);
    if (parallel->hasAttr(mlir::nn::kSequencesLoopAttr)) {
      // Each iteration is a sequence's recursion over its frames.
      if (staticTrips && *staticTrips < 2)
        sequentialize(parallel);
      return;
    }
    Value work = builder.createOrFold<arith::MulIOp>(
        loc, trips, innerWork(builder, loc, parallel, parallel));
    std::optional<int64_t> staticWork = getConstantIntValue(work);
    if ((staticTrips && *staticTrips < 2) ||
        (staticWork && *staticWork < minWork)) {
      sequentialize(parallel);
      return;
    }
    if (staticWork)
      return;
    // Known at run time only: an scf.if picks the threads or a sequential
    // copy.
    Value enough = builder.create<arith::CmpIOp>(
        loc, arith::CmpIPredicate::sge, work,
        builder.create<arith::ConstantIndexOp>(loc, minWork));
    auto choice = builder.create<scf::IfOp>(loc, enough, /*withElse=*/true);
    parallel->moveBefore(choice.thenBlock()->getTerminator());
    builder.setInsertionPoint(choice.elseBlock()->getTerminator());
    auto copy = cast<scf::ParallelOp>(builder.clone(*parallel));
    sequentialize(copy);
  }
};

} // namespace
