//===- IrFuzzer.cpp - libFuzzer target: parse, verify, pack nn IR ---------===//
//
// Text in, as nn-opt reads it: parse, verify, and run
// nn-pack-before-loss on what verifies. Diagnostics are swallowed; a crash,
// a sanitizer report or a pass that leaves invalid IR is a finding.
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
  mlir::PassManager passes(&context);
  passes.addPass(mlir::nn::createNNPackBeforeLoss());
  // Verified here rather than by the pass manager, so that a pass that
  // breaks the IR is a finding and not a quiet failure.
  passes.enableVerifier(false);
  if (mlir::failed(passes.run(*module)))
    return 0;
  if (mlir::failed(mlir::verify(*module)))
    __builtin_trap();
  return 0;
}
