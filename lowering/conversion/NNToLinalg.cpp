//===- NNToLinalg.cpp - the nn-convert-to-linalg pass ---------------------===//
//
// Lowers each nn.graph to a func.func on builtin tensors with the calling
// convention of Abi.h, by a partial dialect conversion over the pattern
// families of Patterns.h. Losses are exposed as graph results first
// (nn-expose-losses), so every pattern rewrites one op. Named axes become
// dynamic sizes; each sequence dim becomes its padded size plus a
// tensor<?xi32> of lengths, which the lowered ops read to mask padding.
//
//===----------------------------------------------------------------------===//

#include "lowering/Passes.h"

#include "lowering/conversion/Patterns.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Bufferization/IR/Bufferization.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "passes/utils/GraphUtils.h"
#include "llvm/ADT/DenseSet.h"

namespace mlir::nn {
#define DEBUG_TYPE "nn-convert-to-linalg"

#define GEN_PASS_DEF_NNCONVERTTOLINALG
#include "lowering/Passes.h.inc"
} // namespace mlir::nn

using namespace mlir;
using namespace mlir::nn;

namespace {
struct NNConvertToLinalgPass
    : public mlir::nn::impl::NNConvertToLinalgBase<NNConvertToLinalgPass> {
  using NNConvertToLinalgBase::NNConvertToLinalgBase;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    MLIRContext *context = &getContext();
    ConversionTarget target(*context);
    target.addLegalDialect<arith::ArithDialect, func::FuncDialect,
                           linalg::LinalgDialect, math::MathDialect,
                           scf::SCFDialect, tensor::TensorDialect,
                           bufferization::BufferizationDialect,
                           memref::MemRefDialect, LLVM::LLVMDialect>();
    target.addLegalOp<UnrealizedConversionCastOp>();
    target.addIllegalDialect<NNDialect>();
    llvm::SmallDenseSet<TypeID> leftOps;
    for (const std::string &name : leaveOps) {
      std::optional<RegisteredOperationName> op =
          RegisteredOperationName::lookup(name, context);
      if (!op || op->getDialectNamespace() != "nn") {
        module.emitError() << "leave-ops: '" << name << "' is not an nn op";
        return signalPassFailure();
      }
      TypeID structural[] = {
          TypeID::get<GraphOp>(),     TypeID::get<ReturnOp>(),
          TypeID::get<CallOp>(),      TypeID::get<ParamRefOp>(),
          TypeID::get<ParameterOp>(), TypeID::get<MarkLossOp>(),
          TypeID::get<LossTermsOp>()};
      // A producer binds its computed dim for the ops after it.
      if (llvm::is_contained(structural, op->getTypeID()) ||
          op->hasInterface<DimProducerOpInterface>()) {
        module.emitError() << "leave-ops: '" << name
                           << "' cannot be left: graphs, calls, parameters, "
                              "losses and the ops that compute dims make the "
                              "lowered functions";
        return signalPassFailure();
      }
      target.addLegalOp(*op);
      leftOps.insert(op->getTypeID());
    }
    // The gradient's verifier wants its saved output and stats made by an
    // nn.attention_with_stats itself, not by a cast of its lowering.
    if (leftOps.contains(TypeID::get<AttentionGradOp>()) &&
        !leftOps.contains(TypeID::get<AttentionWithStatsOp>())) {
      WalkResult saved = module.walk([&](AttentionGradOp grad) {
        if (!grad.getSavedOutput())
          return WalkResult::advance();
        grad.emitError() << "leave-ops: this '"
                         << AttentionGradOp::getOperationName()
                         << "' reads the saved output of an '"
                         << AttentionWithStatsOp::getOperationName()
                         << "' that is converted: leave both, or neither";
        return WalkResult::interrupt();
      });
      if (saved.wasInterrupted())
        return signalPassFailure();
    }

    // Decoders call predictors in the step form (a no-op after the
    // optimize pipeline, which derives them first).
    if (failed(deriveStepGraphs(module)))
      return signalPassFailure();
    // The ABI (root dims, parameters) is read before the losses move.
    FailureOr<ModuleAbi> abis = ModuleAbi::compute(module);
    if (failed(abis) || failed(exposeLosses(module)))
      return signalPassFailure();

    NNTypeConverter converter;
    ConversionState state(context, *abis);
    RewritePatternSet patterns(context);
    populateNNToLinalgConversionPatterns(converter, state, patterns);
    if (failed(applyPartialConversion(module, target, std::move(patterns))))
      return signalPassFailure();
    state.markPartlyLowered();
  }
};
} // namespace
