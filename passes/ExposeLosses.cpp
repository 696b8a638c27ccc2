//===- ExposeLosses.cpp - the nn-expose-losses pass -----------------------===//
//
// A thin driver over exposeLosses (passes/utils/GraphUtils.h), which
// nn-convert-to-linalg runs too.
//
//===----------------------------------------------------------------------===//

#include "passes/Passes.h"
#include "passes/utils/GraphUtils.h"

namespace mlir::nn {
#define DEBUG_TYPE "nn-expose-losses"

#define GEN_PASS_DEF_NNEXPOSELOSSES
#include "passes/Passes.h.inc"
} // namespace mlir::nn

using namespace mlir;
using namespace mlir::nn;

namespace {
struct NNExposeLossesPass
    : public mlir::nn::impl::NNExposeLossesBase<NNExposeLossesPass> {
  void runOnOperation() override {
    if (failed(exposeLosses(getOperation())))
      signalPassFailure();
  }
};
} // namespace
