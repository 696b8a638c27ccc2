//===- ObjectEmitter.cpp - LLVM IR to a shared object ---------------------===//

#include "compiler/ObjectEmitter.h"

#include "compiler/LlvmTargets.h"
#include "compiler/ScratchDir.h"

#include "llvm/ADT/SmallString.h"
#include "llvm/IR/LegacyPassManager.h"
#include "llvm/IR/Module.h"
#include "llvm/MC/TargetRegistry.h"
#include "llvm/Passes/PassBuilder.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/FileUtilities.h"
#include "llvm/Support/Program.h"
#include "llvm/Support/TargetSelect.h"
#include "llvm/Target/TargetMachine.h"
#include "llvm/TargetParser/Host.h"

#include <optional>

using llvm::StringRef;

absl::Status nn::compiler::emitSharedObject(llvm::Module &module,
                                            const std::string &path) {
  initializeLlvmTargets();
  std::string triple = llvm::sys::getDefaultTargetTriple();
  std::string error;
  const llvm::Target *target =
      llvm::TargetRegistry::lookupTarget(triple, error);
  if (!target)
    return absl::InternalError("no LLVM target for " + triple + ": " + error);
  // Tuned for this machine: artifacts are compiled where they run.
  std::string features;
  for (const auto &feature : llvm::sys::getHostCPUFeatures())
    features += (features.empty() ? "" : ",") +
                std::string(feature.second ? "+" : "-") + feature.first().str();
  llvm::TargetOptions targetOptions;
  std::unique_ptr<llvm::TargetMachine> machine(target->createTargetMachine(
      triple, llvm::sys::getHostCPUName(), features, targetOptions,
      llvm::Reloc::PIC_, std::nullopt, llvm::CodeGenOptLevel::Aggressive));
  module.setDataLayout(machine->createDataLayout());
  module.setTargetTriple(triple);

  // O3 with the vectorizers on (the PassBuilder defaults leave them off).
  llvm::PipelineTuningOptions tuning;
  tuning.LoopVectorization = true;
  tuning.SLPVectorization = true;
  tuning.LoopUnrolling = true;
  llvm::PassBuilder passBuilder(machine.get(), tuning);
  llvm::LoopAnalysisManager lam;
  llvm::FunctionAnalysisManager fam;
  llvm::CGSCCAnalysisManager cgam;
  llvm::ModuleAnalysisManager mam;
  passBuilder.registerModuleAnalyses(mam);
  passBuilder.registerCGSCCAnalyses(cgam);
  passBuilder.registerFunctionAnalyses(fam);
  passBuilder.registerLoopAnalyses(lam);
  passBuilder.crossRegisterProxies(lam, fam, cgam, mam);
  passBuilder.buildPerModuleDefaultPipeline(llvm::OptimizationLevel::O3)
      .run(module, mam);

  absl::StatusOr<std::string> scratch =
      nn::compiler::createScratchFile("nn-artifact", "o");
  if (!scratch.ok())
    return scratch.status();
  llvm::SmallString<128> objectPath(*scratch);
  llvm::FileRemover removeObject(objectPath);
  {
    std::error_code ec;
    llvm::raw_fd_ostream object(objectPath, ec);
    if (ec)
      return absl::InternalError("cannot write " + objectPath.str().str() +
                                 ": " + ec.message());
    llvm::legacy::PassManager codegen;
    if (machine->addPassesToEmitFile(codegen, object, nullptr,
                                     llvm::CodeGenFileType::ObjectFile))
      return absl::InternalError("LLVM cannot emit object code for " + triple);
    codegen.run(module);
  }
  auto linker = llvm::sys::findProgramByName("cc");
  if (!linker)
    return absl::InternalError("no C compiler driver 'cc' on PATH to link the "
                               "artifact (install gcc)");
  std::string message;
  std::vector<StringRef> arguments{*linker, "-shared", "-o", path,
                                   objectPath.str()};
  // CBLAS calls (f64 GEMMs, or every GEMM with gemm-library=openblas) link
  // OpenBLAS; oneDNN and cuBLAS GEMMs go through the runtime. Threaded
  // loops call LLVM's OpenMP runtime (__kmpc_fork_call), the one the
  // runtime loads for oneDNN's threads too: one pool, one thread setting.
  bool blas = false, openmp = false;
  for (const llvm::Function &function : module) {
    if (!function.isDeclaration())
      continue;
    blas |= function.getName().starts_with("cblas_");
    openmp |= function.getName().starts_with("__kmpc_");
  }
  if (blas)
    arguments.push_back("-lopenblas");
  std::string ompDir = std::string("-L") + NN_OPENMP_LIBRARY_DIR;
  std::string ompRpath = std::string("-Wl,-rpath,") + NN_OPENMP_LIBRARY_DIR;
  if (openmp) {
    arguments.push_back(ompDir);
    arguments.push_back(ompRpath);
    arguments.push_back("-lomp");
  }
  arguments.push_back("-lm");
  int rc = llvm::sys::ExecuteAndWait(*linker, arguments, std::nullopt, {}, 0, 0,
                                     &message);
  if (rc != 0)
    return absl::InternalError("linking the artifact with " + *linker +
                               " failed (exit " + std::to_string(rc) + ") " +
                               message);
  return absl::OkStatus();
}
