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
// that takes it (views, casts, loops carrying it, calls), everything
// memref.extract_strided_metadata and memref.extract_aligned_pointer_as_index
// derive from it (the deallocation's own ownership checks compare such
// pointers: comparing after a free could match a new buffer at the same
// address), and the results of an op whose region yields it. A buffer
// that reaches a function's return, or is used from another block that
// is not nested in this one, keeps its dealloc where it is.
//
//===----------------------------------------------------------------------===//

#include "lowering/Passes.h"

#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/IR/Builders.h"
#include "llvm/ADT/SetVector.h"

namespace mlir::nn {
#define DEBUG_TYPE "nn-free-after-last-use"

#define GEN_PASS_DEF_NNFREEAFTERLASTUSE
#include "lowering/Passes.h.inc"
} // namespace mlir::nn

using namespace mlir;

namespace {

/// The last op of `block` but `dealloc` that uses `buffer` or a value that
/// may alias it (an op holding the use in its regions counts), or the
/// buffer's alloc when nothing does; failure when the buffer may escape the
/// block (returned, or used outside it).
FailureOr<Operation *> lastUseInBlock(Value buffer, Block *block,
                                      Operation *dealloc) {
  llvm::SetVector<Value> aliases;
  aliases.insert(buffer);
  Operation *last = buffer.getDefiningOp();
  auto addAliases = [&](ValueRange values, bool memrefsOnly) {
    for (Value value : values)
      if (!memrefsOnly || isa<BaseMemRefType>(value.getType()))
        aliases.insert(value);
  };
  for (size_t i = 0; i < aliases.size(); ++i) {
    for (OpOperand &use : aliases[i].getUses()) {
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
      if (isa<memref::ExtractStridedMetadataOp,
              memref::ExtractAlignedPointerAsIndexOp>(user))
        addAliases(user->getResults(), /*memrefsOnly=*/false);
      else
        addAliases(user->getResults(), /*memrefsOnly=*/true);
      // A region's terminator passes it on to the op holding the region.
      if (user->hasTrait<OpTrait::IsTerminator>() && user != inBlock)
        if (Operation *parent = user->getParentOp())
          addAliases(parent->getResults(), /*memrefsOnly=*/true);
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
