//===- RegisterAccumulators.cpp - accumulators in registers ---------------===//
//
// nn-register-accumulators: an scf.for that reduces into one memref
// element carries the element as an iter_arg instead, so that LLVM
// vectorizes the loop inside an outlined OpenMP body (where it can no
// longer prove the accumulator apart from the loop's inputs). Runs in
// every CPU pipeline, threaded or not. docs/lowering.md, "Threads".
//
//===----------------------------------------------------------------------===//

#include "lowering/Passes.h"

#include "mlir/Analysis/AliasAnalysis/LocalAliasAnalysis.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"

namespace mlir::nn {
#define DEBUG_TYPE "nn-register-accumulators"

#define GEN_PASS_DEF_NNREGISTERACCUMULATORS
#include "lowering/Passes.h.inc"
} // namespace mlir::nn

using namespace mlir;

namespace {

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

} // namespace
