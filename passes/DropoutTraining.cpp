//===- DropoutTraining.cpp - dropout masks from a seed input --------------===//
//
// Training mode. Every graph that holds a dropout of nonzero rate (an
// nn.dropout, or an nn.attention's dropout of its weights) or an
// nn.spec_augment that masks something, itself or through its calls, gets
// a last argument `dropout_seed` (a scalar i32 tensor) that its callers
// pass down; each such op reads it and gets a key unique in the module, so
// no two share a mask.
//
//===----------------------------------------------------------------------===//

#include "passes/Passes.h"
#include "passes/utils/GraphUtils.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/SymbolTable.h"

namespace mlir::nn {
#define DEBUG_TYPE "nn-dropout-training"

#define GEN_PASS_DEF_NNDROPOUTTRAINING
#include "passes/Passes.h.inc"
} // namespace mlir::nn

using namespace mlir;
using namespace mlir::nn;

static constexpr StringLiteral kSeedName = "dropout_seed";

namespace {

struct NNDropoutTrainingPass
    : public mlir::nn::impl::NNDropoutTrainingBase<NNDropoutTrainingPass> {
  using NNDropoutTrainingBase::NNDropoutTrainingBase;
  void runOnOperation() override;
};

/// Whether `op` draws random masks in training: a dropout that drops (of
/// units or of attention weights), a SpecAugment that masks.
bool isRandomMask(Operation *op) {
  if (auto dropout = dyn_cast<DropoutOp>(op))
    return !dropout.getRate().isZero();
  if (auto attention = dyn_cast<AttentionOp>(op))
    return attention.getDropout() && !attention.getDropout()->isZero();
  if (auto augment = dyn_cast<SpecAugmentOp>(op))
    return augment.masksAnything();
  return false;
}

/// Whether `graph` (or a graph it calls) has a random mask.
bool dropsUnits(GraphOp graph, SymbolTable &symbols,
                llvm::DenseMap<Operation *, bool> &memo) {
  auto [it, inserted] = memo.try_emplace(graph, false);
  if (!inserted)
    return it->second; // done, or on the call stack (recursion: the ABI
                       // rejects it later)
  bool drops = false;
  graph.walk([&](Operation *op) {
    if (isRandomMask(op))
      drops = true;
    else if (auto call = dyn_cast<CallOp>(op))
      if (auto callee = symbols.lookup<GraphOp>(call.getCallee()))
        drops |= dropsUnits(callee, symbols, memo);
  });
  memo[graph] = drops;
  return drops;
}

} // namespace

void NNDropoutTrainingPass::runOnOperation() {
  ModuleOp module = getOperation();
  SymbolTable symbols(module);
  llvm::DenseMap<Operation *, bool> memo;
  SmallVector<GraphOp> seeded;
  for (GraphOp graph : module.getOps<GraphOp>())
    if (dropsUnits(graph, symbols, memo))
      seeded.push_back(graph);

  OpBuilder builder(module.getContext());
  SmallVector<Attribute> seedDims;
  if (batchOffset)
    seedDims.push_back(builder.getI64IntegerAttr(2));
  auto seedType = NNTensorType::get(seedDims, builder.getIntegerType(32));
  llvm::DenseMap<Operation *, Value> seeds;
  for (GraphOp graph : seeded) {
    FailureOr<Value> seed =
        appendArgument(graph, kSeedName, seedType, "nn-dropout-training");
    if (failed(seed))
      return signalPassFailure();
    seeds[graph] = *seed;
  }

  int64_t key = 0;
  for (GraphOp graph : seeded) {
    Value seed = seeds.lookup(graph);
    graph.walk([&](Operation *op) {
      if (auto dropout = dyn_cast<DropoutOp>(op); dropout && isRandomMask(op)) {
        dropout.getSeedMutable().assign(seed);
        dropout.setKey(key++);
      } else if (auto attention = dyn_cast<AttentionOp>(op);
                 attention && isRandomMask(op)) {
        attention.getSeedMutable().assign(seed);
        attention.setDropoutKey(key++);
      } else if (auto augment = dyn_cast<SpecAugmentOp>(op);
                 augment && isRandomMask(op)) {
        augment.getSeedMutable().assign(seed);
        augment.setKey(key++);
      } else if (auto call = dyn_cast<CallOp>(op)) {
        if (Operation *callee = symbols.lookup(call.getCallee());
            callee && seeds.count(callee))
          call->insertOperands(call->getNumOperands(), seed);
      }
    });
  }
}
