//===- DeriveStepGraphs.cpp - the nn-derive-step-graphs pass --------------===//
//
// A thin driver over deriveStepGraphs (passes/utils/GraphUtils.h), which
// nn-convert-to-linalg runs too.
//
//===----------------------------------------------------------------------===//

#include "passes/Passes.h"
#include "passes/utils/GraphUtils.h"

namespace mlir::nn {
#define DEBUG_TYPE "nn-derive-step-graphs"

#define GEN_PASS_DEF_NNDERIVESTEPGRAPHS
#include "passes/Passes.h.inc"
} // namespace mlir::nn

using namespace mlir;
using namespace mlir::nn;

namespace {
struct NNDeriveStepGraphsPass
    : public mlir::nn::impl::NNDeriveStepGraphsBase<NNDeriveStepGraphsPass> {
  void runOnOperation() override {
    if (failed(deriveStepGraphs(getOperation())))
      signalPassFailure();
  }
};
} // namespace
