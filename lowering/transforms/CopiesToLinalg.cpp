//===- CopiesToLinalg.cpp - memref.copy to linalg.copy --------------------===//

#include "lowering/Passes.h"

#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/IR/Builders.h"

namespace mlir::nn {
#define DEBUG_TYPE "nn-copies-to-linalg"

#define GEN_PASS_DEF_NNCOPIESTOLINALG
#include "lowering/Passes.h.inc"
} // namespace mlir::nn

using namespace mlir;

namespace {
struct CopiesToLinalgPass
    : public mlir::nn::impl::NNCopiesToLinalgBase<CopiesToLinalgPass> {
  using NNCopiesToLinalgBase::NNCopiesToLinalgBase;

  void runOnOperation() override {
    SmallVector<memref::CopyOp> copies;
    // Unless `all`, copies between identity layouts stay: they lower to a
    // memcpy.
    getOperation().walk([&](memref::CopyOp copy) {
      auto contiguous = [](Value v) {
        return cast<MemRefType>(v.getType()).getLayout().isIdentity();
      };
      if (all || !contiguous(copy.getSource()) || !contiguous(copy.getTarget()))
        copies.push_back(copy);
    });
    for (memref::CopyOp copy : copies) {
      OpBuilder builder(copy);
      builder.create<linalg::CopyOp>(copy.getLoc(), copy.getSource(),
                                     copy.getTarget());
      copy.erase();
    }
  }
};
} // namespace
