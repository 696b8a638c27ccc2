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
// outermost parallel loop that needs only two iterations;
// nn-sequences-to-openmp gives those loops a dynamic schedule.
// nn-register-accumulators keeps reduction accumulators
// in registers, which outlined loop bodies need to vectorize.
// docs/lowering.md, "Threads".
//
//===----------------------------------------------------------------------===//

#include "lowering/Passes.h"

#include "mlir/Analysis/AliasAnalysis/LocalAliasAnalysis.h"
#include "mlir/Conversion/SCFToOpenMP/SCFToOpenMP.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Arith/Utils/Utils.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/OpenMP/OpenMPDialect.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/SCF/Transforms/Transforms.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "mlir/Pass/PassManager.h"

namespace mlir::nn {
#define DEBUG_TYPE "nn-parallel-loops"

#define GEN_PASS_DEF_NNPARALLELLOOPS
#define GEN_PASS_DEF_NNINLINEALLOCASCOPES
#define GEN_PASS_DEF_NNREGISTERACCUMULATORS
#define GEN_PASS_DEF_NNSEQUENCESTOOPENMP
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

/// Whether `op`, apart from memref loads and stores, touches no memory
/// (nested ops are checked by the caller's walk).
bool touchesNoOtherMemory(Operation *op) {
  if (isa<memref::LoadOp, memref::StoreOp>(op) ||
      op->hasTrait<OpTrait::HasRecursiveMemoryEffects>())
    return true;
  auto effects = dyn_cast<MemoryEffectOpInterface>(op);
  return effects && effects.hasNoEffect();
}

/// Keeps a reduction's accumulator in a register. An scf.for whose body
/// loads, then stores, one memref element at indices defined outside the
/// loop, and touches no memory that may alias it otherwise, carries the
/// element as an iter_arg instead: loaded before the loop, stored after
/// it. In the same order of operations, so results do not change. Inside
/// an outlined OpenMP body LLVM could no longer prove the accumulator
/// apart from the loop's inputs, and would load and store it in every
/// iteration, unvectorized. The body may store elsewhere too (a map fused
/// with the reduction writes its elements), where that cannot alias the
/// accumulator.
void keepAccumulatorInRegister(scf::ForOp loop, LocalAliasAnalysis &aliases) {
  SmallVector<memref::LoadOp> loads;
  SmallVector<memref::StoreOp> stores;
  bool opaque = false;
  loop.getBody()->walk([&](Operation *op) {
    if (auto load = dyn_cast<memref::LoadOp>(op))
      loads.push_back(load);
    else if (auto store = dyn_cast<memref::StoreOp>(op))
      stores.push_back(store);
    else if (!touchesNoOtherMemory(op))
      opaque = true;
  });
  if (opaque)
    return;
  auto invariant = [&](Value value) {
    return loop.isDefinedOutsideOfLoop(value);
  };
  // The accumulator: the one store of the body to a loop-invariant place.
  memref::StoreOp store;
  for (memref::StoreOp candidate : stores) {
    if (candidate->getBlock() != loop.getBody() ||
        !invariant(candidate.getMemRef()) ||
        !llvm::all_of(candidate.getIndices(), invariant))
      continue;
    if (store)
      return;
    store = candidate;
  }
  if (!store)
    return;
  Value accumulator = store.getMemRef();
  for (memref::StoreOp other : stores)
    if (other != store && !aliases.alias(other.getMemRef(), accumulator).isNo())
      return;
  memref::LoadOp read;
  for (memref::LoadOp load : loads) {
    if (load.getMemRef() == accumulator &&
        load.getIndices() == store.getIndices() &&
        load->getBlock() == loop.getBody() && load->isBeforeInBlock(store) &&
        !read) {
      read = load;
      continue;
    }
    if (!aliases.alias(load.getMemRef(), accumulator).isNo())
      return;
  }
  if (!read)
    return;

  IRRewriter rewriter(loop);
  Location loc = loop.getLoc();
  Value initial =
      rewriter.create<memref::LoadOp>(loc, accumulator, store.getIndices());
  Value stored = store.getValueToStore();
  FailureOr<LoopLikeOpInterface> carried = loop.replaceWithAdditionalYields(
      rewriter, initial, /*replaceInitOperandUsesInLoop=*/false,
      [&](OpBuilder &, Location, ArrayRef<BlockArgument>) {
        return SmallVector<Value>{stored};
      });
  if (failed(carried))
    return;
  auto newLoop = cast<scf::ForOp>(carried->getOperation());
  rewriter.replaceOp(read, newLoop.getRegionIterArgs().back());
  rewriter.setInsertionPointAfter(newLoop);
  rewriter.create<memref::StoreOp>(loc, newLoop.getResults().back(),
                                   accumulator, store.getIndices());
  rewriter.eraseOp(store);
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

/// Marks the parallel loops that were scf.forall loops over sequences.
constexpr llvm::StringLiteral kSequencesAttr = "nn.sequences";

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
      parallel->setAttr(kSequencesAttr, rewriter.getUnitAttr());
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
    if (parallel->hasAttr(kSequencesAttr)) {
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

struct RegisterAccumulatorsPass
    : public mlir::nn::impl::NNRegisterAccumulatorsBase<
          RegisterAccumulatorsPass> {
  void runOnOperation() override {
    LocalAliasAnalysis aliases;
    SmallVector<scf::ForOp> loops;
    getOperation().walk([&](scf::ForOp loop) { loops.push_back(loop); });
    // Post-order: an inner loop is rewritten before the loop around it.
    for (scf::ForOp loop : loops)
      keepAccumulatorInRegister(loop, aliases);
  }
};

/// Upstream's conversion, then a dynamic schedule for the sequences'
/// loops. The conversion keeps no attribute of an scf.parallel, but it
/// turns each into one omp.wsloop in its place: the n-th loop in the
/// walk before is the n-th after.
struct SequencesToOpenMPPass
    : public mlir::nn::impl::NNSequencesToOpenMPBase<SequencesToOpenMPPass> {
  void runOnOperation() override {
    SmallVector<bool> sequences;
    getOperation().walk<WalkOrder::PreOrder>([&](scf::ParallelOp parallel) {
      sequences.push_back(parallel->hasAttr(kSequencesAttr));
    });
    OpPassManager pm(ModuleOp::getOperationName());
    pm.addPass(createConvertSCFToOpenMPPass());
    if (failed(runPipeline(pm, getOperation())))
      return signalPassFailure();
    SmallVector<omp::WsloopOp> loops;
    getOperation().walk<WalkOrder::PreOrder>(
        [&](omp::WsloopOp loop) { loops.push_back(loop); });
    if (loops.size() != sequences.size()) {
      getOperation().emitError() << "convert-scf-to-openmp made "
                                 << loops.size() << " worksharing loops of "
                                 << sequences.size() << " scf.parallel loops";
      return signalPassFailure();
    }
    for (auto [loop, overSequences] : llvm::zip(loops, sequences))
      if (overSequences)
        loop.setScheduleVal(omp::ClauseScheduleKind::Dynamic);
  }
};

/// Inlines each memref.alloca_scope that holds no alloca.
struct InlineAllocaScopesPass
    : public mlir::nn::impl::NNInlineAllocaScopesBase<InlineAllocaScopesPass> {
  void runOnOperation() override {
    SmallVector<memref::AllocaScopeOp> scopes;
    getOperation().walk([&](memref::AllocaScopeOp scope) {
      bool allocates = false;
      scope.walk([&](memref::AllocaOp) { allocates = true; });
      if (!allocates && scope.getBodyRegion().hasOneBlock())
        scopes.push_back(scope);
    });
    for (memref::AllocaScopeOp scope : scopes) {
      Block &body = scope.getBodyRegion().front();
      auto terminator = cast<memref::AllocaScopeReturnOp>(body.getTerminator());
      scope->replaceAllUsesWith(terminator.getResults());
      scope->getBlock()->getOperations().splice(
          scope->getIterator(), body.getOperations(), body.begin(),
          std::prev(body.end()));
      scope.erase();
    }
  }
};

} // namespace
