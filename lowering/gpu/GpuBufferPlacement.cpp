//===- GpuBufferPlacement.cpp - device or host-visible memory per buffer -===//
//
// After kernel outlining, host code still touches some buffers: loops read
// sequence lengths, CTC combines per-sequence scalars, deallocation keeps
// pointer lists, loss normalizations are stored, the runtime's searches
// (nn_search_*) read scores and write hypotheses. Kernels and cuBLAS touch
// the others. Device memory is fastest for the latter; host code cannot
// dereference it. So every buffer is classified through its aliases
// (views, loop-carried values, branch results, call arguments):
//
//   only kernels/cuBLAS touch it    memref.alloc stays: the GPU artifact's
//                                   allocator gives device memory
//   host code reads or writes it    gpu.alloc host_shared: CUDA managed
//                                   memory, visible to both
//
// Function arguments that host code touches are listed in the module
// attribute `nn.host_visible_args` ({function name: [argument indices]}):
// the runtime stages those in managed memory and the rest in device memory.
//
//===----------------------------------------------------------------------===//

#include "lowering/Passes.h"

#include "dialects/nn/NNDialect.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/IR/SymbolTable.h"
#include "mlir/Interfaces/ViewLikeInterface.h"

namespace mlir::nn {
#define DEBUG_TYPE "nn-gpu-place-buffers"

#define GEN_PASS_DEF_NNGPUPLACEBUFFERS
#include "lowering/Passes.h.inc"
} // namespace mlir::nn

using namespace mlir;

namespace {

/// Union-find over memref values: a class is a buffer and its aliases.
class AliasClasses {
public:
  Value find(Value v) {
    auto it = parent.find(v);
    if (it == parent.end() || it->second == v)
      return v;
    Value root = find(it->second);
    parent[v] = root;
    return root;
  }
  void unite(Value a, Value b) {
    if (!isa<MemRefType>(a.getType()) || !isa<MemRefType>(b.getType()))
      return;
    Value ra = find(a), rb = find(b);
    if (ra != rb)
      parent[ra] = rb;
  }

private:
  DenseMap<Value, Value> parent;
};

/// Whether `index` (an aligned pointer as index) reaches a call of a
/// function whose name starts with `prefix` through integer arithmetic
/// and casts.
bool reachesCall(Value index, StringRef prefix, int depth = 0) {
  if (depth > 6)
    return false;
  for (Operation *user : index.getUsers()) {
    if (auto call = dyn_cast<func::CallOp>(user))
      if (call.getCallee().starts_with(prefix))
        return true;
    if (user->getNumResults() == 1 &&
        isa<arith::AddIOp, arith::MulIOp, arith::IndexCastOp>(user) &&
        reachesCall(user->getResult(0), prefix, depth + 1))
      return true;
  }
  return false;
}

struct PlaceBuffersPass
    : public mlir::nn::impl::NNGpuPlaceBuffersBase<PlaceBuffersPass> {
  void runOnOperation() override {
    ModuleOp module = getOperation();
    SymbolTable symbols(module);
    AliasClasses classes;

    // Aliases.
    module.walk([&](Operation *op) {
      if (op->getParentOfType<gpu::GPUModuleOp>())
        return;
      if (auto view = dyn_cast<ViewLikeOpInterface>(op)) {
        for (Value result : op->getResults())
          classes.unite(view.getViewSource(), result);
      } else if (auto castOp = dyn_cast<memref::CastOp>(op)) {
        classes.unite(castOp.getSource(), castOp.getResult());
      } else if (auto metadata =
                     dyn_cast<memref::ExtractStridedMetadataOp>(op)) {
        classes.unite(metadata.getSource(), metadata.getBaseBuffer());
      } else if (auto loop = dyn_cast<scf::ForOp>(op)) {
        auto yield = cast<scf::YieldOp>(loop.getBody()->getTerminator());
        for (auto [init, arg, result, yielded] :
             llvm::zip(loop.getInitArgs(), loop.getRegionIterArgs(),
                       loop.getResults(), yield.getOperands())) {
          classes.unite(init, arg);
          classes.unite(arg, result);
          classes.unite(yielded, result);
        }
      } else if (auto branch = dyn_cast<scf::IfOp>(op)) {
        for (Region *region :
             {&branch.getThenRegion(), &branch.getElseRegion()})
          if (!region->empty())
            for (auto [yielded, result] :
                 llvm::zip(region->front().getTerminator()->getOperands(),
                           branch.getResults()))
              classes.unite(yielded, result);
      } else if (auto call = dyn_cast<func::CallOp>(op)) {
        auto callee = symbols.lookup<func::FuncOp>(call.getCallee());
        if (!callee || callee.isExternal())
          return;
        for (auto [operand, argument] :
             llvm::zip(call.getOperands(), callee.getArguments()))
          classes.unite(operand, argument);
        callee.walk([&](func::ReturnOp ret) {
          for (auto [returned, result] :
               llvm::zip(ret.getOperands(), call.getResults()))
            classes.unite(returned, result);
        });
      }
    });

    // Who touches each class.
    DenseSet<Value> onDevice, onHost;
    auto touch = [&](DenseSet<Value> &set, Value v) {
      if (isa<MemRefType>(v.getType()))
        set.insert(classes.find(v));
    };
    module.walk([&](Operation *op) {
      if (op->getParentOfType<gpu::GPUModuleOp>() || isa<gpu::GPUModuleOp>(op))
        return;
      if (isa<gpu::LaunchFuncOp>(op)) {
        for (Value operand : op->getOperands())
          touch(onDevice, operand);
        return;
      }
      if (auto pointer = dyn_cast<memref::ExtractAlignedPointerAsIndexOp>(op)) {
        // A pointer kept for deallocation reads nothing; one passed to
        // cuBLAS is a device access, one passed to the runtime's searches
        // (host code) a host access.
        if (reachesCall(pointer.getResult(), "nn_cuda_"))
          touch(onDevice, pointer.getSource());
        else if (reachesCall(pointer.getResult(), "nn_search_"))
          touch(onHost, pointer.getSource());
        return;
      }
      // Ops that only handle descriptors, or plumb values already united.
      if (isa<ViewLikeOpInterface, memref::CastOp,
              memref::ExtractStridedMetadataOp, memref::DimOp, memref::RankOp,
              memref::AllocOp, memref::DeallocOp, func::ReturnOp, func::CallOp,
              scf::YieldOp, scf::ForOp, scf::IfOp>(op))
        return;
      // Anything else with a memref operand (loads, stores, ...) runs on
      // the host and touches the buffer.
      for (Value operand : op->getOperands())
        touch(onHost, operand);
    });

    // Buffers host code touches become host-visible (managed) memory.
    SmallVector<memref::AllocOp> allocs;
    module.walk([&](memref::AllocOp alloc) { allocs.push_back(alloc); });
    for (memref::AllocOp alloc : allocs) {
      if (!onHost.contains(classes.find(alloc.getResult())))
        continue;
      OpBuilder b(alloc);
      auto shared = b.create<gpu::AllocOp>(
          alloc.getLoc(), alloc.getType(), /*asyncToken=*/Type(),
          /*asyncDependencies=*/ValueRange(), alloc.getDynamicSizes(),
          alloc.getSymbolOperands(), /*hostShared=*/true);
      alloc.getResult().replaceAllUsesWith(shared.getMemref());
      alloc.erase();
    }

    // Arguments the runtime must stage in host-visible memory.
    SmallVector<NamedAttribute> hostVisible;
    Builder b(module.getContext());
    for (auto function : module.getOps<func::FuncOp>()) {
      if (function.isExternal())
        continue;
      SmallVector<int64_t> indices;
      for (BlockArgument argument : function.getArguments())
        if (isa<MemRefType>(argument.getType()) &&
            onHost.contains(classes.find(argument)))
          indices.push_back(argument.getArgNumber());
      hostVisible.push_back(
          b.getNamedAttr(function.getName(), b.getDenseI64ArrayAttr(indices)));
    }
    module->setAttr(
        mlir::nn::NNDialect::HostVisibleArgsAttrHelper::getNameStr(),
        b.getDictionaryAttr(hostVisible));
  }
};

} // namespace
