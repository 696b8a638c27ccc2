//===- InlineAllocaScopes.cpp - inline empty alloca scopes ----------------===//
//
// nn-inline-alloca-scopes: convert-scf-to-openmp wraps each threaded loop
// body in a memref.alloca_scope, which must keep one block; nn's loop
// bodies allocate on the heap only, so such scopes are inlined before
// their loops become control flow.
//
//===----------------------------------------------------------------------===//

#include "lowering/Passes.h"

#include "mlir/Dialect/MemRef/IR/MemRef.h"

namespace mlir::nn {
#define DEBUG_TYPE "nn-inline-alloca-scopes"

#define GEN_PASS_DEF_NNINLINEALLOCASCOPES
#include "lowering/Passes.h.inc"
} // namespace mlir::nn

using namespace mlir;

namespace {

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
