//===- FreeAfterLastUse.cpp - memref.dealloc right after the last use -----===//
//
// Upstream's ownership-based buffer deallocation frees a buffer at the end
// of the block that allocates it. In a train step that block is the entry
// function: every buffer of the step stayed allocated until it returned,
// and the step's peak was the sum of all its buffers (docs/performance.md,
// "Memory of a train step"). This pass moves each unconditional
// memref.dealloc of a memref.alloc in the same block to just after the
// last op of that block that uses the buffer or anything that may alias
// it.
//
// What may alias a buffer, conservatively: the memref results of any op
// that takes it (views, casts, loops carrying it), everything
// memref.extract_strided_metadata and memref.extract_aligned_pointer_as_index
// derive from it and everything computed from those addresses (the
// deallocation's own ownership checks compare them: comparing after a
// free could match a new buffer at the same address), and the results of
// an op whose region yields any of these. A buffer keeps its dealloc
// where it is when it (or its address) reaches its block's terminator, a
// call, a store, another block not nested in this one, or an op whose
// results are neither memrefs nor scalars.
//
//===----------------------------------------------------------------------===//

#include "lowering/Passes.h"

#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/IR/Builders.h"
#include "mlir/Interfaces/CallInterfaces.h"
#include "llvm/ADT/SetVector.h"

namespace mlir::nn {
#define DEBUG_TYPE "nn-free-after-last-use"

#define GEN_PASS_DEF_NNFREEAFTERLASTUSE
#include "lowering/Passes.h.inc"
} // namespace mlir::nn

using namespace mlir;

namespace {

/// Whether values of `type` can carry no buffer: scalars and vectors.
bool isPlainValue(Type type) {
  return type.isIntOrIndexOrFloat() || isa<VectorType>(type);
}

/// The last op of `block` but `dealloc` that uses `buffer` or a value that
/// may alias it or hold its address (an op holding the use in its regions
/// counts), or the buffer's alloc when nothing does; failure when the
/// buffer may escape the block or what a use does with it is not known.
FailureOr<Operation *> lastUseInBlock(Value buffer, Block *block,
                                      Operation *dealloc) {
  llvm::SetVector<Value> aliases;
  aliases.insert(buffer);
  Operation *last = buffer.getDefiningOp();
  for (size_t i = 0; i < aliases.size(); ++i) {
    Value alias = aliases[i];
    bool isBuffer = isa<BaseMemRefType>(alias.getType());
    for (OpOperand &use : alias.getUses()) {
      Operation *user = use.getOwner();
      if (user == dealloc)
        continue;
      // Returned, or yielded out of the block's own region.
      if (user->hasTrait<OpTrait::IsTerminator>() && user->getBlock() == block)
        return failure();
      Operation *inBlock = block->findAncestorOpInBlock(*user);
      if (!inBlock)
        return failure();
      if (last->isBeforeInBlock(inBlock))
        last = inBlock;
      // A call could keep the buffer or its address; a stored address
      // outlives any use we can see.
      if (isa<CallOpInterface>(user) ||
          (!isBuffer && isa<memref::StoreOp>(user)))
        return failure();
      // A region's terminator passes it on to the op holding the region.
      if (user->hasTrait<OpTrait::IsTerminator>()) {
        aliases.insert(user->getParentOp()->result_begin(),
                       user->getParentOp()->result_end());
        continue;
      }
      // An address (and whatever is computed from it: ownership checks
      // compare addresses, and after a free a new buffer could have the
      // same one) is followed through every result.
      if (!isBuffer || isa<memref::ExtractStridedMetadataOp,
                           memref::ExtractAlignedPointerAsIndexOp>(user)) {
        aliases.insert(user->result_begin(), user->result_end());
        continue;
      }
      // A buffer's users: memref results may alias it (views, casts, loops
      // carrying it); scalar results (loads, dims) hold none of it; any
      // other result type (a cast to an LLVM struct, a token) is unknown.
      for (Value result : user->getResults()) {
        if (isa<BaseMemRefType>(result.getType()))
          aliases.insert(result);
        else if (!isPlainValue(result.getType()))
          return failure();
      }
    }
  }
  return last;
}

struct FreeAfterLastUsePass
    : public mlir::nn::impl::NNFreeAfterLastUseBase<FreeAfterLastUsePass> {
  using NNFreeAfterLastUseBase::NNFreeAfterLastUseBase;

  void runOnOperation() override {
    SmallVector<memref::DeallocOp> deallocs;
    getOperation().walk([&](memref::DeallocOp dealloc) {
      auto alloc = dealloc.getMemref().getDefiningOp<memref::AllocOp>();
      if (alloc && alloc->getBlock() == dealloc->getBlock())
        deallocs.push_back(dealloc);
    });
    for (memref::DeallocOp dealloc : deallocs) {
      Value buffer = dealloc.getMemref();
      FailureOr<Operation *> last =
          lastUseInBlock(buffer, dealloc->getBlock(), dealloc);
      // Only ever earlier: a use after the dealloc would be a bug upstream,
      // not something to paper over here.
      if (succeeded(last) && (*last)->isBeforeInBlock(dealloc))
        dealloc->moveAfter(*last);
    }
  }
};

} // namespace
