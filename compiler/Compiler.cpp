//===- Compiler.cpp - nn text to a loadable artifact ----------------------===//
//
// parse -> verify -> nn-optimize -> manifest from the graph ABI ->
// nn-to-buffers + nn-cpu-codegen (or nn-gpu-codegen) -> LLVM IR
// (+ nn_manifest, nn_entry, nn_manifest_hash, nn_entry_arity) -> O3 ->
// object code -> `cc -shared` -> an Artifact (the path and its manifest).
// Loading it is the runtime's. GPU artifacts carry their kernels as PTX or
// cubin inside the shared object.
//
//===----------------------------------------------------------------------===//

#include "nn/Compiler.h"

#include "dialects/nn/NNOps.h"
#include "lowering/Passes.h"
#include "lowering/Pipelines.h"
#include "lowering/Registration.h"
#include "lowering/conversion/Abi.h"
#include "lowering/conversion/Origin.h"

#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/IR/SymbolTable.h"
#include "mlir/IR/Verifier.h"
#include "mlir/Parser/Parser.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Target/LLVMIR/Export.h"

#include "llvm/ADT/StringMap.h"
#include "llvm/IR/LegacyPassManager.h"
#include "llvm/IR/Module.h"
#include "llvm/MC/TargetRegistry.h"
#include "llvm/Passes/PassBuilder.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/FileUtilities.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/Program.h"
#include "llvm/Support/SourceMgr.h"
#include "llvm/Support/TargetSelect.h"
#include "llvm/Target/TargetMachine.h"
#include "llvm/TargetParser/Host.h"

#include <optional>

using namespace mlir;
namespace ir = mlir::nn;

namespace {

/// Collects diagnostics as text, with locations.
class DiagnosticCollector {
public:
  explicit DiagnosticCollector(MLIRContext &context)
      : stream(text), handler(sourceMgr, &context, stream) {}
  llvm::SourceMgr sourceMgr;
  std::string text;
  llvm::raw_string_ostream stream;
  SourceMgrDiagnosticHandler handler;
};

/// `what` and the diagnostics; the model's fault unless `code` says
/// otherwise.
absl::Status fail(const std::string &what, const std::string &diagnostics,
                  absl::StatusCode code = absl::StatusCode::kInvalidArgument) {
  std::string message = what;
  if (!diagnostics.empty())
    message += ":\n" + diagnostics;
  while (!message.empty() && message.back() == '\n')
    message.pop_back();
  return absl::Status(code, message);
}

::nn::DType toDType(Type type) {
  if (type.isF64())
    return ::nn::DType::f64;
  if (type.isSignlessInteger(32))
    return ::nn::DType::i32;
  if (type.isSignlessInteger(64))
    return ::nn::DType::i64;
  return ::nn::DType::f32;
}

std::vector<::nn::Axis> toAxes(ir::NNTensorType type) {
  std::vector<::nn::Axis> axes;
  for (unsigned i = 0, e = type.getRank(); i < e; ++i) {
    ::nn::Axis axis;
    if (type.isNamedDim(i))
      axis.dim = type.getDimName(i).str();
    else
      axis.size = type.getStaticSize(i);
    axes.push_back(axis);
  }
  return axes;
}

/// What a value's uses say about it as a class index: the number of classes
/// it indexes (as class targets, embedding indices or CTC labels; the
/// smallest over its uses, 0 when it is not an index) and a class it may
/// not hold (CTC's blank; -1 when none).
struct ClassBound {
  int64_t classes = 0;
  int64_t reserved = -1;
};

ClassBound classBound(Value value, SymbolTable &symbols, int depth = 0) {
  ClassBound bound;
  if (depth > 32)
    return bound;
  auto merge = [&](ClassBound other) {
    if (other.classes > 0 &&
        (bound.classes == 0 || other.classes < bound.classes))
      bound.classes = other.classes;
    if (other.reserved >= 0)
      bound.reserved = other.reserved;
  };
  for (OpOperand &use : value.getUses()) {
    Operation *user = use.getOwner();
    if (auto indexing = dyn_cast<ir::ClassIndexOpInterface>(user)) {
      merge({indexing.getNumClasses(use), indexing.getReservedClass(use)});
    } else if (isa<ir::PackOp, ir::UnpackOp>(user)) {
      merge(classBound(user->getResult(0), symbols, depth + 1));
    } else if (auto call = dyn_cast<ir::CallOp>(user)) {
      auto callee = symbols.lookup<ir::GraphOp>(call.getCallee());
      merge(classBound(callee.getArgument(use.getOperandNumber()), symbols,
                       depth + 1));
    }
  }
  // A reserved class outside the bound (a smaller use wins) constrains
  // nothing more.
  if (bound.reserved >= bound.classes)
    bound.reserved = -1;
  return bound;
}

::nn::Manifest buildManifest(const ir::GraphAbi &abi, SymbolTable &symbols) {
  ::nn::Manifest manifest;
  ir::GraphOp graph = abi.graph;
  manifest.graph = graph.getSymName().str();
  for (Attribute attr : graph.getDims()) {
    auto decl = cast<ir::DimDeclAttr>(attr);
    ::nn::DimInfo dim;
    dim.name = decl.getName().str();
    switch (decl.getKind()) {
    case ir::DimKind::batch:
      dim.kind = ::nn::DimInfo::Kind::batch;
      break;
    case ir::DimKind::seq:
      dim.kind = ::nn::DimInfo::Kind::seq;
      dim.batch = decl.getBatch().str();
      if (decl.isDerived()) {
        dim.source = decl.getSource().str();
        dim.factor = decl.getFactor();
      }
      break;
    case ir::DimKind::packed:
      dim.kind = ::nn::DimInfo::Kind::packed;
      dim.batch = decl.getBatch().str();
      dim.sequence = decl.getSource().str();
      break;
    }
    manifest.dims.push_back(dim);
  }
  for (ir::DimDeclAttr root : abi.rootDims)
    manifest.rootDims.push_back(root.getName().str());
  for (auto [index, type] : llvm::enumerate(graph.getArgumentTypes())) {
    auto tensor = cast<ir::NNTensorType>(type);
    ::nn::TensorInfo info{graph.getArgName(index),
                          toDType(tensor.getElementType()), toAxes(tensor)};
    if (tensor.getElementType().isSignlessInteger()) {
      ClassBound bound = classBound(graph.getArgument(index), symbols);
      info.classes = bound.classes;
      info.reservedClass = bound.reserved;
    }
    manifest.inputs.push_back(info);
  }
  for (ir::ParameterOp parameter : abi.parameters) {
    auto tensor = cast<ir::NNTensorType>(parameter.getType());
    manifest.parameters.push_back({parameter.getSymName().str(),
                                   toDType(tensor.getElementType()),
                                   toAxes(tensor)});
  }
  for (auto [index, type] : llvm::enumerate(graph.getResultTypes())) {
    auto tensor = cast<ir::NNTensorType>(type);
    manifest.outputs.push_back({"result" + std::to_string(index),
                                toDType(tensor.getElementType()),
                                toAxes(tensor)});
  }
  for (const ir::LossAbi &loss : abi.losses) {
    ::nn::LossInfo info;
    info.name = loss.name;
    info.normalization =
        ir::stringifyLossNormalization(loss.normalization).str();
    info.scale = loss.scale;
    info.useNormalizedLoss = loss.useNormalizedLoss;
    info.asError = loss.asError;
    info.packed = loss.packed;
    info.batch = loss.batch;
    info.sequences.assign(loss.sequences.begin(), loss.sequences.end());
    manifest.losses.push_back(info);
  }
  return manifest;
}

/// The kernels of a GPU module and the nn ops they compute, for the
/// manifest; writes each kernel image to `directory` when one is given.
absl::Status collectKernels(ModuleOp module, const std::string &directory,
                            ::nn::Manifest &manifest) {
  module.walk([&](gpu::LaunchFuncOp launch) {
    manifest.kernels.push_back(
        {launch.getKernelName().str(), ir::describeOrigin(launch.getLoc())});
  });
  if (directory.empty())
    return absl::OkStatus();
  if (std::error_code ec = llvm::sys::fs::create_directories(directory))
    return absl::InternalError("cannot create '" + directory +
                               "': " + ec.message());
  for (auto binary : module.getOps<gpu::BinaryOp>()) {
    for (Attribute attr : binary.getObjects()) {
      auto object = cast<gpu::ObjectAttr>(attr);
      bool ptx = object.getFormat() == gpu::CompilationTarget::Assembly;
      StringRef bytes = object.getObject().getValue();
      // The stored PTX ends in a NUL for cuModuleLoadData; ptxas reads
      // files without one.
      if (ptx)
        bytes = bytes.rtrim(StringRef("\0", 1));
      llvm::SmallString<256> path(directory);
      llvm::sys::path::append(path,
                              binary.getSymName() + (ptx ? ".ptx" : ".cubin"));
      std::error_code ec;
      llvm::raw_fd_ostream out(path, ec);
      if (ec)
        return absl::InternalError("cannot write " + path.str().str() + ": " +
                                   ec.message());
      out << bytes;
    }
  }
  return absl::OkStatus();
}

absl::Status emitSharedObject(llvm::Module &module, const std::string &path,
                              bool withBlas) {
  static bool initialized = [] {
    llvm::InitializeNativeTarget();
    llvm::InitializeNativeTargetAsmPrinter();
    return true;
  }();
  (void)initialized;
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

  llvm::SmallString<128> objectPath;
  if (std::error_code ec =
          llvm::sys::fs::createTemporaryFile("nn-artifact", "o", objectPath))
    return absl::InternalError("cannot create a temporary file: " +
                               ec.message());
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
  // GPU artifacts call cuBLAS through the runtime, not OpenBLAS.
  std::vector<StringRef> arguments{*linker, "-shared", "-o", path,
                                   objectPath.str()};
  if (withBlas)
    arguments.push_back("-lopenblas");
  arguments.push_back("-lm");
  int rc = llvm::sys::ExecuteAndWait(*linker, arguments, std::nullopt, {}, 0, 0,
                                     &message);
  if (rc != 0)
    return absl::InternalError("linking the artifact with " + *linker +
                               " failed (exit " + std::to_string(rc) + ") " +
                               message);
  return absl::OkStatus();
}

absl::StatusOr<::nn::Artifact>
compileModule(ModuleOp module, MLIRContext &context,
              DiagnosticCollector &diagnostics,
              const ::nn::CompileOptions &options) {
  bool gpu = options.target == "cuda";
  if (options.target != "cpu" && !gpu)
    return absl::InvalidArgumentError("unknown target '" + options.target +
                                      "' (expected cpu or cuda)");
  if (gpu && options.gpuBinary != "ptx" && options.gpuBinary != "cubin")
    return absl::InvalidArgumentError("unknown GPU binary format '" +
                                      options.gpuBinary +
                                      "' (expected ptx or cubin)");
  if (gpu && ir::findCudaToolkit().empty())
    return absl::FailedPreconditionError(
        "the cuda target needs the CUDA toolkit's libdevice "
        "(nvvm/libdevice/libdevice.10.bc) for math in kernels: none under "
        "$CUDA_ROOT, $CUDA_HOME, $CUDA_PATH or /usr/local/cuda");
  if (gpu && !StringRef(options.gpuChip).starts_with("sm_"))
    return absl::InvalidArgumentError(
        "unknown GPU architecture '" + options.gpuChip +
        "' (expected sm_NN, such as sm_80 or sm_90)");
  if (failed(verify(module)))
    return fail("the model does not verify", diagnostics.text);

  // The entry graph: given, or the one graph nothing calls.
  SymbolTable symbols(module);
  ir::GraphOp entry;
  if (!options.entry.empty()) {
    entry = symbols.lookup<ir::GraphOp>(options.entry);
    if (!entry)
      return absl::InvalidArgumentError("no graph named @" + options.entry);
  } else {
    llvm::DenseSet<Operation *> called;
    module.walk([&](ir::CallOp call) {
      called.insert(symbols.lookup(call.getCallee()));
    });
    std::vector<std::string> candidates;
    for (ir::GraphOp graph : module.getOps<ir::GraphOp>())
      if (!called.count(graph)) {
        entry = graph;
        candidates.push_back("@" + graph.getSymName().str());
      }
    if (candidates.empty())
      return absl::InvalidArgumentError("the module has no graph to run");
    if (candidates.size() > 1) {
      std::string list;
      for (const std::string &name : candidates)
        list += (list.empty() ? "" : ", ") + name;
      return absl::InvalidArgumentError("several graphs could be the entry (" +
                                        list + "); choose one");
    }
  }
  std::string graphName = entry.getSymName().str();

  ir::NNPipelineOptions pipelineOptions;
  pipelineOptions.pack = options.pack;
  pipelineOptions.blas = options.blas;
  pipelineOptions.chip = options.gpuChip;
  pipelineOptions.gpuFormat = options.gpuBinary == "cubin" ? "bin" : "isa";
  PassManager optimize(&context);
  ir::buildOptimizePipeline(optimize, pipelineOptions);
  if (failed(optimize.run(module)))
    return fail("nn-level passes failed", diagnostics.text);

  FailureOr<ir::ModuleAbi> abis = ir::ModuleAbi::compute(module);
  if (failed(abis))
    return fail("the model cannot be lowered", diagnostics.text);
  entry = symbols.lookup<ir::GraphOp>(graphName);
  ::nn::Manifest manifest = buildManifest(abis->lookup(entry), symbols);

  PassManager lower(&context);
  ir::buildToBuffersPipeline(lower);
  if (gpu)
    ir::buildGpuCodegenPipeline(lower, pipelineOptions);
  else
    ir::buildCpuCodegenPipeline(lower, pipelineOptions);
  if (failed(lower.run(module)))
    return fail("lowering failed", diagnostics.text);
  if (gpu) {
    manifest.target = "cuda";
    absl::Status status = collectKernels(module, options.gpuCodeDir, manifest);
    if (!status.ok())
      return status;
    // nn-gpu-place-buffers says which arguments host code reads.
    if (auto placement =
            module->getAttrOfType<DictionaryAttr>("nn.host_visible_args")) {
      if (auto indices = placement.getAs<DenseI64ArrayAttr>(graphName))
        manifest.hostVisibleArguments.assign(indices.asArrayRef().begin(),
                                             indices.asArrayRef().end());
      module->removeAttr("nn.host_visible_args");
    }
  }

  // The exported symbols: the manifest, the entry wrapper, the manifest's
  // checksum and the entry's arity (nn-artifact-entry).
  module->setAttr("nn.manifest",
                  StringAttr::get(&context, manifest.serialize()));
  PassManager entryPoints(&context);
  ir::NNArtifactEntryOptions entryOptions;
  entryOptions.graph = graphName;
  entryPoints.addPass(ir::createNNArtifactEntry(entryOptions));
  if (failed(entryPoints.run(module)))
    return fail("adding the artifact's entry points failed", diagnostics.text,
                absl::StatusCode::kInternal);

  llvm::LLVMContext llvmContext;
  std::unique_ptr<llvm::Module> llvmModule =
      translateModuleToLLVMIR(module, llvmContext, graphName);
  if (!llvmModule)
    return fail("translation to LLVM IR failed", diagnostics.text,
                absl::StatusCode::kInternal);

  std::string path = options.artifactPath;
  bool temporary = path.empty();
  if (temporary) {
    llvm::SmallString<128> temp;
    if (std::error_code ec =
            llvm::sys::fs::createTemporaryFile("nn-artifact", "so", temp))
      return absl::InternalError("cannot create a temporary file: " +
                                 ec.message());
    path = temp.str().str();
  }
  absl::Status status = emitSharedObject(*llvmModule, path, /*withBlas=*/!gpu);
  if (!status.ok()) {
    if (temporary)
      llvm::sys::fs::remove(path);
    return status;
  }
  return ::nn::Artifact(path, std::move(manifest), temporary);
}

} // namespace

namespace nn {

Artifact::Artifact(std::string path, Manifest manifest, bool temporary)
    : path_(std::move(path)), manifest_(std::move(manifest)),
      temporary_(temporary) {}

Artifact::~Artifact() {
  if (temporary_)
    llvm::sys::fs::remove(path_);
}

Artifact::Artifact(Artifact &&other) noexcept
    : path_(std::move(other.path_)), manifest_(std::move(other.manifest_)),
      temporary_(other.temporary_) {
  other.temporary_ = false;
}

Artifact &Artifact::operator=(Artifact &&other) noexcept {
  if (this != &other) {
    if (temporary_)
      llvm::sys::fs::remove(path_);
    path_ = std::move(other.path_);
    manifest_ = std::move(other.manifest_);
    temporary_ = other.temporary_;
    other.temporary_ = false;
  }
  return *this;
}

absl::StatusOr<Artifact> compileSource(const std::string &source,
                                       const std::string &bufferName,
                                       const ::nn::CompileOptions &options) {
  DialectRegistry registry;
  ir::registerPipelineDialects(registry);
  MLIRContext context(registry);
  context.loadAllAvailableDialects();
  DiagnosticCollector diagnostics(context);
  diagnostics.sourceMgr.AddNewSourceBuffer(
      llvm::MemoryBuffer::getMemBufferCopy(source, bufferName), llvm::SMLoc());
  OwningOpRef<ModuleOp> module =
      parseSourceFile<ModuleOp>(diagnostics.sourceMgr, &context);
  if (!module)
    return fail("cannot parse " + bufferName, diagnostics.text);
  return compileModule(*module, context, diagnostics, options);
}

absl::StatusOr<Artifact> compileFile(const std::string &path,
                                     const ::nn::CompileOptions &options) {
  auto buffer = llvm::MemoryBuffer::getFile(path);
  if (!buffer)
    return absl::NotFoundError("cannot read '" + path +
                               "': " + buffer.getError().message());
  return compileSource((*buffer)->getBuffer().str(), path, options);
}

} // namespace nn
