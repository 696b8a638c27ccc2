//===- ApproximateMath.cpp - arithmetic LLVM vectorizes -------------------===//
//
// nn-approximate-math (MLIR's polynomial approximations of f32 exp, log,
// tanh, erf and the other transcendental ops) and
// nn-expand-divisions (only the integer divisions LLVM lacks), both for
// loops that LLVM's vectorizers can take.
//
//===----------------------------------------------------------------------===//

#include "lowering/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Arith/Transforms/Passes.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/Math/Transforms/Passes.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

namespace mlir::nn {
#define DEBUG_TYPE "nn-approximate-math"

#define GEN_PASS_DEF_NNAPPROXIMATEMATH
#define GEN_PASS_DEF_NNEXPANDDIVISIONS
#include "lowering/Passes.h.inc"
} // namespace mlir::nn

using namespace mlir;

namespace {
struct ApproximateMathPass
    : public mlir::nn::impl::NNApproximateMathBase<ApproximateMathPass> {
  void runOnOperation() override {
    RewritePatternSet patterns(&getContext());
    populateMathPolynomialApproximationPatterns(patterns);
    if (failed(
            applyPatternsAndFoldGreedily(getOperation(), std::move(patterns))))
      signalPassFailure();
  }
};

struct ExpandDivisionsPass
    : public mlir::nn::impl::NNExpandDivisionsBase<ExpandDivisionsPass> {
  void runOnOperation() override {
    RewritePatternSet patterns(&getContext());
    arith::populateCeilFloorDivExpandOpsPatterns(patterns);
    if (failed(
            applyPatternsAndFoldGreedily(getOperation(), std::move(patterns))))
      signalPassFailure();
  }
};
} // namespace
