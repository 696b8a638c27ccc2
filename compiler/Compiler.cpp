//===- Compiler.cpp - the compiler driver: nn text to an artifact ---------===//
//
// parse -> verify -> choose the entry, erase the graphs it does not run ->
// nn-optimize -> manifest from the graph ABI (ManifestBuilder) ->
// nn-to-buffers + nn-cpu-codegen (or nn-gpu-codegen) -> nn-artifact-entry
// (nn_manifest, nn_entry, nn_manifest_hash, nn_entry_arity, on the LLVM
// dialect) -> LLVM IR -> ObjectEmitter (O3, object code, `cc -shared`) -> an
// Artifact (the path and its manifest). Loading it is the runtime's. GPU
// artifacts carry their kernels as PTX or cubin inside the shared object.
//
//===----------------------------------------------------------------------===//

#include "nn/Compiler.h"
#include "nn/File.h"

#include "compiler/ManifestBuilder.h"
#include "compiler/ObjectEmitter.h"
#include "compiler/ScratchDir.h"
#include "compiler/Target.h"

#include "dialects/nn/NNOps.h"
#include "lowering/Passes.h"
#include "lowering/Pipelines.h"
#include "lowering/Registration.h"
#include "lowering/conversion/Abi.h"

#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/IR/SymbolTable.h"
#include "mlir/IR/Verifier.h"
#include "mlir/Parser/Parser.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Target/LLVMIR/Export.h"

#include "llvm/ADT/APFloat.h"
#include "llvm/ADT/SmallPtrSet.h"
#include "llvm/IR/Module.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/SourceMgr.h"

#include <cmath>
#include <map>
#include <set>
#include <sstream>

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

/// Makes exactly `trained` train (at their scales, where given) and every
/// other marked loss report only.
absl::Status
selectTrainedLosses(ModuleOp module,
                    const std::vector<::nn::TrainedLoss> &trained) {
  if (trained.empty())
    return absl::OkStatus();
  std::map<std::string, const ::nn::TrainedLoss *> wanted;
  for (const ::nn::TrainedLoss &loss : trained) {
    if (!wanted.emplace(loss.name, &loss).second)
      return absl::InvalidArgumentError("loss '" + loss.name +
                                        "' is listed twice");
    // NaN keeps the marked scale. The module was verified before the
    // scales are set here, so they are checked as the verifier would:
    // training minimizes scale * loss, and a negative scale trains the
    // loss up.
    if (!std::isnan(loss.scale) &&
        (!std::isfinite(loss.scale) || loss.scale < 0))
      return absl::InvalidArgumentError(
          "loss '" + loss.name + "': scale must be finite and >= 0, got " +
          (std::ostringstream() << loss.scale).str());
  }
  std::set<std::string> marked;
  std::string evalOnly;
  module.walk([&](ir::MarkLossOp mark) {
    std::string name = mark.getName().str();
    marked.insert(name);
    auto found = wanted.find(name);
    // Train steps drop eval_only losses (nn-drop-results).
    if (found != wanted.end() && mark.getEvalOnly() && evalOnly.empty())
      evalOnly = name;
    mark.setAsError(found == wanted.end());
    if (found != wanted.end() && !std::isnan(found->second->scale))
      mark.setScale(APFloat(found->second->scale));
  });
  if (!evalOnly.empty())
    return absl::InvalidArgumentError(
        "loss '" + evalOnly +
        "' is marked eval_only: it is reported by evaluation, never trained");
  for (const ::nn::TrainedLoss &loss : trained)
    if (!marked.count(loss.name)) {
      std::string list;
      for (const std::string &name : marked)
        list += (list.empty() ? "" : ", ") + name;
      return absl::InvalidArgumentError(
          "loss '" + loss.name + "' is marked nowhere in the model (" +
          (list.empty() ? "it marks no loss" : "it marks " + list) + ")");
    }
  return absl::OkStatus();
}

/// Sets the beam of the one beam search (nn.ctc_beam_search or
/// nn.transducer_beam_search) that `entry` runs, itself or through the
/// graphs it calls.
absl::Status setSearchBeam(ir::GraphOp entry, SymbolTable &symbols,
                           int64_t beam) {
  std::vector<Operation *> searches;
  llvm::SmallPtrSet<Operation *, 8> visited;
  std::vector<ir::GraphOp> pending{entry};
  while (!pending.empty()) {
    ir::GraphOp graph = pending.back();
    pending.pop_back();
    if (!visited.insert(graph).second)
      continue;
    graph.walk([&](Operation *op) {
      if (isa<ir::CtcBeamSearchOp, ir::TransducerBeamSearchOp>(op))
        searches.push_back(op);
      else if (auto call = dyn_cast<ir::CallOp>(op))
        pending.push_back(symbols.lookup<ir::GraphOp>(call.getCallee()));
    });
  }
  std::string graph = "graph @" + entry.getSymName().str();
  if (searches.empty())
    return absl::InvalidArgumentError(
        "a search beam is given, but " + graph +
        " runs no beam search (nn.ctc_beam_search, "
        "nn.transducer_beam_search)");
  if (searches.size() > 1)
    return absl::InvalidArgumentError(
        "a search beam is given, but " + graph + " runs " +
        std::to_string(searches.size()) +
        " beam searches; the beam to change is ambiguous");
  Operation *search = searches.front();
  if (auto ctc = dyn_cast<ir::CtcBeamSearchOp>(search))
    ctc.setBeam(beam);
  else
    cast<ir::TransducerBeamSearchOp>(search).setBeam(beam);
  if (failed(verify(search)))
    return absl::InvalidArgumentError("beam " + std::to_string(beam) +
                                      " does not verify for " + graph);
  return absl::OkStatus();
}

/// Erases the graphs `entry` never runs, itself or through the graphs it
/// names (nn.call, a decoder's predictor and joiner, a language model).
/// The whole module was verified first; lowering and LLVM then see only
/// what runs, so a file of many graphs compiles as fast as its entry alone.
/// Ops other than graphs stay, and so do the graphs they name.
void eraseGraphsNotRunBy(ir::GraphOp entry, ModuleOp module,
                         SymbolTable &symbols) {
  llvm::SmallPtrSet<Operation *, 8> reached{entry};
  SmallVector<Operation *> pending{entry};
  for (Operation &op : module.getBody()->getOperations())
    if (!isa<ir::GraphOp>(op))
      pending.push_back(&op);
  while (!pending.empty()) {
    pending.pop_back_val()->walk([&](Operation *op) {
      for (NamedAttribute attr : op->getAttrs())
        attr.getValue().walk([&](SymbolRefAttr ref) {
          Operation *named = symbols.lookup(ref.getRootReference());
          if (isa_and_nonnull<ir::GraphOp>(named) &&
              reached.insert(named).second)
            pending.push_back(named);
        });
    });
  }
  for (ir::GraphOp graph :
       llvm::make_early_inc_range(module.getOps<ir::GraphOp>()))
    if (!reached.contains(graph))
      symbols.erase(graph);
}

absl::StatusOr<::nn::Artifact>
compileModule(ModuleOp module, MLIRContext &context,
              DiagnosticCollector &diagnostics,
              const ::nn::CompileOptions &options) {
  absl::StatusOr<std::shared_ptr<const ::nn::compiler::Target>> target =
      ::nn::compiler::lookupTarget(options.target);
  if (!target.ok())
    return target.status();
  if (absl::Status status = (*target)->checkOptions(options); !status.ok())
    return status;
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
    // Graphs other graphs name (nn.call, a decoder's callee graphs) are
    // not entries.
    llvm::DenseSet<Operation *> called;
    if (auto uses = SymbolTable::getSymbolUses(&module.getBodyRegion()))
      for (const SymbolTable::SymbolUse &use : *uses)
        called.insert(symbols.lookup(use.getSymbolRef().getRootReference()));
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
  if (absl::Status status = selectTrainedLosses(module, options.trainedLosses);
      !status.ok())
    return status;
  if (options.searchBeam < 0)
    return absl::InvalidArgumentError("a search beam must be at least 1, got " +
                                      std::to_string(options.searchBeam));
  if (options.searchBeam > 0)
    if (absl::Status status = setSearchBeam(entry, symbols, options.searchBeam);
        !status.ok())
      return status;
  std::map<std::string, ir::ParameterInit> inits =
      ::nn::compiler::parameterInits(module);
  eraseGraphsNotRunBy(entry, module, symbols);
  // A loss marked only in graphs the entry does not run would train
  // nothing.
  for (const ::nn::TrainedLoss &loss : options.trainedLosses) {
    bool marked = false;
    module.walk(
        [&](ir::MarkLossOp mark) { marked |= mark.getName() == loss.name; });
    if (!marked)
      return absl::InvalidArgumentError("loss '" + loss.name +
                                        "' is marked only in graphs that @" +
                                        graphName + " does not run");
  }

  if (options.trainStep && !options.grads)
    return absl::InvalidArgumentError(
        "a train step needs gradients (CompileOptions::grads)");
  ir::PipelineSettings settings;
  settings.request.training = options.training;
  settings.request.grads = options.grads;
  settings.request.inputGrads = options.inputGradients;
  settings.request.trainStep = options.trainStep;
  settings.request.graph = graphName;
  settings.optimize = options.optimize;
  settings.optimizer = options.optimizer;
  settings.optimizer.allReduceOverlap &= (*target)->overlapsSums();
  PassManager optimize(&context);
  ir::buildOptimizePipeline(optimize, settings);
  if (failed(optimize.run(module)))
    return fail("nn-level passes failed", diagnostics.text);

  FailureOr<ir::ModuleAbi> abis = ir::ModuleAbi::compute(module);
  if (failed(abis))
    return fail("the model cannot be lowered", diagnostics.text);
  // The passes added symbols (nn-autodiff's companion graphs): a fresh
  // table sees them.
  SymbolTable optimized(module);
  entry = optimized.lookup<ir::GraphOp>(graphName);
  ::nn::Manifest manifest =
      ::nn::compiler::buildManifest(abis->lookup(entry), optimized, inits);

  PassManager lower(&context);
  ir::buildToBuffersPipeline(lower);
  (*target)->buildCodegenPipeline(lower, options);
  if (failed(lower.run(module)))
    return fail("lowering failed", diagnostics.text);
  if (absl::Status status =
          (*target)->finishManifest(module, graphName, options, manifest);
      !status.ok())
    return status;

  // The exported symbols: the manifest, the entry wrapper, the manifest's
  // checksum and the entry's arity (nn-artifact-entry).
  module->setAttr(ir::NNDialect::ManifestAttrHelper::getNameStr(),
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
    absl::StatusOr<std::string> temp =
        ::nn::compiler::createScratchFile("nn-artifact", "so");
    if (!temp.ok())
      return temp.status();
    path = *temp;
  }
  absl::Status status = ::nn::compiler::emitSharedObject(*llvmModule, path);
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

std::vector<std::string> registeredTargets() {
  return compiler::registeredTargets();
}

absl::StatusOr<Artifact> compileFile(const std::string &path,
                                     const ::nn::CompileOptions &options) {
  absl::StatusOr<std::string> source =
      readRegularFile(path, kMaxModelFileBytes);
  if (!source.ok())
    return withContext(source.status(), "cannot read the model: ");
  return compileSource(*source, path, options);
}

} // namespace nn
