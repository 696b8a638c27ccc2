//===- SequencesToOpenMP.cpp - sequence loops on OpenMP -------------------===//
//
// nn-sequences-to-openmp: upstream convert-scf-to-openmp, then a dynamic
// schedule for the worksharing loops that were loops over sequences
// (marked by nn-parallel-loops). docs/lowering.md, "Threads".
//
//===----------------------------------------------------------------------===//

#include "lowering/Passes.h"

#include "mlir/Conversion/SCFToOpenMP/SCFToOpenMP.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/OpenMP/OpenMPDialect.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Pass/PassManager.h"
#include "llvm/ADT/SmallPtrSet.h"

namespace mlir::nn {
#define DEBUG_TYPE "nn-sequences-to-openmp"

#define GEN_PASS_DEF_NNSEQUENCESTOOPENMP
#include "lowering/Passes.h.inc"
} // namespace mlir::nn

using namespace mlir;

namespace {

/// Upstream's conversion, then a dynamic schedule for the sequences'
/// loops. The conversion keeps no attribute of an scf.parallel, but it
/// turns each into one omp.wsloop in its place: among the worksharing
/// loops it made, the n-th in the walk after is the n-th scf.parallel in
/// the walk before. Loops that were there before it are legal to the
/// conversion, never rebuilt: they are recognized and left as they are.
struct SequencesToOpenMPPass
    : public mlir::nn::impl::NNSequencesToOpenMPBase<SequencesToOpenMPPass> {
  void runOnOperation() override {
    SmallVector<bool> sequences;
    llvm::SmallPtrSet<Operation *, 4> earlier;
    getOperation().walk<WalkOrder::PreOrder>([&](Operation *op) {
      if (isa<scf::ParallelOp>(op))
        sequences.push_back(op->hasAttr(mlir::nn::kSequencesLoopAttr));
      else if (isa<omp::WsloopOp>(op))
        earlier.insert(op);
    });
    OpPassManager pm(ModuleOp::getOperationName());
    pm.addPass(createConvertSCFToOpenMPPass());
    if (failed(runPipeline(pm, getOperation())))
      return signalPassFailure();
    SmallVector<omp::WsloopOp> loops;
    getOperation().walk<WalkOrder::PreOrder>([&](omp::WsloopOp loop) {
      if (!earlier.contains(loop))
        loops.push_back(loop);
    });
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

} // namespace
