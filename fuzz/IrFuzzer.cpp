//===- IrFuzzer.cpp - libFuzzer target: parse, verify, transform nn IR ----===//
//
// Text in, as nn-opt reads it: parse, verify, and on what verifies run
// nn-pack-before-loss, and (on a copy) the training pipeline's nn-level
// passes: nn-dropout-training, nn-pack-before-loss, nn-autodiff.
// Diagnostics are swallowed; a crash, a sanitizer report or a pass that
// leaves invalid IR is a finding.
//
//===----------------------------------------------------------------------===//

#include "dialects/nn/NNDialect.h"
#include "passes/Passes.h"

#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/IR/Verifier.h"
#include "mlir/Parser/Parser.h"
#include "mlir/Pass/PassManager.h"

#include <cstddef>
#include <cstdint>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  static mlir::DialectRegistry *registry = [] {
    auto *registry = new mlir::DialectRegistry();
    registry->insert<mlir::nn::NNDialect>();
    return registry;
  }();
  mlir::MLIRContext context(*registry, mlir::MLIRContext::Threading::DISABLED);
  context.loadAllAvailableDialects();
  mlir::ScopedDiagnosticHandler quiet(
      &context, [](mlir::Diagnostic &) { return mlir::success(); });
  // MLIR's lexer relies on the NUL after the text, as a file read through
  // llvm::MemoryBuffer has: a std::string provides it.
  std::string text(reinterpret_cast<const char *>(data), size);
  mlir::ParserConfig config(&context);
  mlir::OwningOpRef<mlir::ModuleOp> module =
      mlir::parseSourceString<mlir::ModuleOp>(text, config);
  if (!module || mlir::failed(mlir::verify(*module)))
    return 0;
  mlir::OwningOpRef<mlir::ModuleOp> training = module->clone();
  // Verified here rather than by the pass manager, so that a pass that
  // breaks the IR is a finding and not a quiet failure.
  auto runChecked = [&](mlir::ModuleOp target, auto addPasses) {
    mlir::PassManager passes(&context);
    addPasses(passes);
    passes.enableVerifier(false);
    if (mlir::succeeded(passes.run(target)) &&
        mlir::failed(mlir::verify(target)))
      __builtin_trap();
  };
  runChecked(*module, [](mlir::PassManager &passes) {
    passes.addPass(mlir::nn::createNNPackBeforeLoss());
  });
  runChecked(*training, [](mlir::PassManager &passes) {
    passes.addPass(mlir::nn::createNNDropoutTraining());
    passes.addPass(mlir::nn::createNNPackBeforeLoss());
    passes.addPass(mlir::nn::createNNAutodiff());
  });
  return 0;
}
