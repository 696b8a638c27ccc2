//===- ArtifactEntry.cpp - an artifact's exported symbols -----------------===//
//
// nn-artifact-entry and nn-gpu-allocators: the last edits to the host code
// before translation, as passes on the LLVM dialect, so that nn-opt shows
// them and lit tests them.
//
//===----------------------------------------------------------------------===//

#include "lowering/Passes.h"

#include "dialects/nn/NNDialect.h"

#include "nn/Manifest.h"

#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/SymbolTable.h"

#define DEBUG_TYPE "nn-artifact-entry"

namespace mlir::nn {
#define GEN_PASS_DEF_NNARTIFACTENTRY
#define GEN_PASS_DEF_NNGPUALLOCATORS
#include "lowering/Passes.h.inc"
} // namespace mlir::nn

using namespace mlir;

namespace {

/// A function `name` of type `type` with an entry block, at the end of
/// `module`.
LLVM::LLVMFuncOp addFunction(ModuleOp module, StringRef name,
                             LLVM::LLVMFunctionType type, OpBuilder &builder) {
  builder.setInsertionPointToEnd(module.getBody());
  auto function = builder.create<LLVM::LLVMFuncOp>(module.getLoc(), name, type);
  builder.setInsertionPointToStart(function.addEntryBlock(builder));
  return function;
}

/// Declares the allocation functions' results `noalias`, as malloc's:
/// every buffer is fresh (the runtime reuses a block only after its free),
/// which lets LLVM tell apart buffers allocated in one function. (On the
/// loss tail it measured no change by itself: there the scalar row maxima
/// came from arith-expand, docs/performance.md.)
void markAllocationsNoAlias(ModuleOp module) {
  for (StringRef name :
       {"_mlir_memref_to_llvm_alloc", "_mlir_memref_to_llvm_aligned_alloc",
        "nn_cuda_alloc", "nn_cuda_aligned_alloc"})
    if (auto function = module.lookupSymbol<LLVM::LLVMFuncOp>(name))
      function.setResultAttr(0, LLVM::LLVMDialect::getNoAliasAttrName(),
                             UnitAttr::get(module.getContext()));
}

struct NNArtifactEntryPass
    : public mlir::nn::impl::NNArtifactEntryBase<NNArtifactEntryPass> {
  using Base::Base;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    markAllocationsNoAlias(module);
    auto manifest = module->getAttrOfType<StringAttr>(
        mlir::nn::NNDialect::ManifestAttrHelper::getNameStr());
    if (!manifest) {
      module.emitError("nn-artifact-entry needs the manifest text in the "
                       "module attribute nn.manifest");
      return signalPassFailure();
    }
    std::string entryName = "_mlir_ciface_" + graph;
    auto target = module.lookupSymbol<LLVM::LLVMFuncOp>(entryName);
    if (!target) {
      module.emitError() << "no C interface @" << entryName
                         << " for the entry graph '" << graph << "'";
      return signalPassFailure();
    }
    for (StringRef exported :
         {"nn_manifest", "nn_entry", "nn_manifest_hash", "nn_entry_arity"})
      if (module.lookupSymbol(exported)) {
        module.emitError() << "the module already defines @" << exported;
        return signalPassFailure();
      }

    // Only the symbols added below are exported.
    for (auto function : module.getOps<LLVM::LLVMFuncOp>())
      if (!function.isExternal())
        function.setVisibility_(LLVM::Visibility::Hidden);
    for (auto global : module.getOps<LLVM::GlobalOp>())
      if (global.getValueOrNull() || !global.getInitializerRegion().empty())
        global.setVisibility_(LLVM::Visibility::Hidden);

    MLIRContext *context = &getContext();
    OpBuilder builder(context);
    Location loc = module.getLoc();
    auto ptr = LLVM::LLVMPointerType::get(context);
    auto i64 = IntegerType::get(context, 64);

    std::string text = manifest.getValue().str();
    builder.setInsertionPointToEnd(module.getBody());
    builder.create<LLVM::GlobalOp>(
        loc,
        LLVM::LLVMArrayType::get(IntegerType::get(context, 8), text.size() + 1),
        /*isConstant=*/true, LLVM::Linkage::External, "nn_manifest",
        builder.getStringAttr(text + std::string(1, '\0')));

    LLVM::LLVMFunctionType targetType = target.getFunctionType();
    addFunction(
        module, "nn_entry",
        LLVM::LLVMFunctionType::get(LLVM::LLVMVoidType::get(context), {ptr}),
        builder);
    auto entry = module.lookupSymbol<LLVM::LLVMFuncOp>("nn_entry");
    Value argv = entry.getArgument(0);
    SmallVector<Value> arguments;
    for (auto [index, type] : llvm::enumerate(targetType.getParams())) {
      Value slot = builder.create<LLVM::GEPOp>(
          loc, ptr, ptr, argv, ArrayRef<LLVM::GEPArg>{(int32_t)index});
      Value value = builder.create<LLVM::LoadOp>(loc, ptr, slot);
      if (isa<IntegerType>(type)) {
        value = builder.create<LLVM::PtrToIntOp>(loc, type, value);
      } else if (!isa<LLVM::LLVMPointerType>(type)) {
        target.emitError() << "parameter " << index << " of @" << entryName
                           << " is " << type
                           << "; the entry passes pointers and integers";
        return signalPassFailure();
      }
      arguments.push_back(value);
    }
    builder.create<LLVM::CallOp>(loc, target, arguments);
    builder.create<LLVM::ReturnOp>(loc, ValueRange{});

    auto constant = [&](StringRef name, uint64_t value) {
      addFunction(module, name, LLVM::LLVMFunctionType::get(i64, {}), builder);
      Value result = builder.create<LLVM::ConstantOp>(
          loc, i64, builder.getI64IntegerAttr((int64_t)value));
      builder.create<LLVM::ReturnOp>(loc, result);
    };
    constant("nn_manifest_hash", ::nn::Manifest::hash(text));
    constant("nn_entry_arity", targetType.getNumParams());
    module->removeAttr(mlir::nn::NNDialect::ManifestAttrHelper::getNameStr());
  }
};

struct NNGpuAllocatorsPass
    : public mlir::nn::impl::NNGpuAllocatorsBase<NNGpuAllocatorsPass> {
  void runOnOperation() override {
    ModuleOp module = getOperation();
    for (auto [from, to] :
         {std::pair{"_mlir_memref_to_llvm_alloc", "nn_cuda_alloc"},
          std::pair{"_mlir_memref_to_llvm_aligned_alloc",
                    "nn_cuda_aligned_alloc"},
          std::pair{"_mlir_memref_to_llvm_free", "nn_cuda_free"}}) {
      auto function = module.lookupSymbol<LLVM::LLVMFuncOp>(from);
      if (!function)
        continue;
      StringAttr name = StringAttr::get(&getContext(), to);
      if (failed(SymbolTable::replaceAllSymbolUses(function, name, module)))
        return signalPassFailure();
      function.setSymName(to);
    }
  }
};

} // namespace
