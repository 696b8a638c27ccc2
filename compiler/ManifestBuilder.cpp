//===- ManifestBuilder.cpp - the manifest of an entry graph ---------------===//

#include "compiler/ManifestBuilder.h"

#include "dialects/nn/NNInterfaces.h"
#include "dialects/nn/NNOps.h"
#include "lowering/conversion/Origin.h"

#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "llvm/ADT/DenseSet.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/raw_ostream.h"

using namespace mlir;
namespace ir = mlir::nn;

namespace {

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
    } else if (isa<ir::PackOp, ir::UnpackOp, ir::PrependStartOp>(user)) {
      // The same classes in another layout (prepend_start: after a start
      // symbol, for the prediction network's embedding).
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

/// How a fresh `parameter` is drawn: optimizer state starts at zero; a
/// model parameter as the first op reading it says
/// (ParameterInitOpInterface, in module order), else Glorot uniform over
/// its first and last axes when it has two or more, zeros when it has
/// fewer (a parameter only added or multiplied elementwise).
ir::ParameterInit parameterInit(ir::ParameterOp parameter, ModuleOp module) {
  if (parameter->hasAttr(
          mlir::nn::NNDialect::OptimizerStateAttrHelper::getNameStr()))
    return ir::ParameterInit::zeros();
  ir::ParameterInit found;
  module.walk([&](ir::ParamRefOp ref) {
    if (ref.getName() != parameter.getSymName())
      return WalkResult::advance();
    for (OpOperand &use : ref.getResult().getUses())
      if (auto op = dyn_cast<ir::ParameterInitOpInterface>(use.getOwner())) {
        found = op.getParameterInit(use);
        if (found.kind != ir::ParameterInit::Kind::none)
          return WalkResult::interrupt();
      }
    return WalkResult::advance();
  });
  if (found.kind != ir::ParameterInit::Kind::none)
    return found;
  auto type = cast<ir::NNTensorType>(parameter.getType());
  unsigned rank = type.getRank();
  if (rank < 2)
    return ir::ParameterInit::zeros();
  return ir::ParameterInit::glorot(type.getStaticSize(rank - 1),
                                   type.getStaticSize(0));
}

const char *initName(ir::ParameterInit::Kind kind) {
  switch (kind) {
  case ir::ParameterInit::Kind::ones:
    return "ones";
  case ir::ParameterInit::Kind::uniform:
    return "uniform";
  case ir::ParameterInit::Kind::normal:
    return "normal";
  case ir::ParameterInit::Kind::none:
  case ir::ParameterInit::Kind::zeros:
    break;
  }
  return "zeros";
}

/// The values the backward reads from the forward (saved activations), in
/// the order the forward computes them. The forward is what the losses and
/// the graph's own results (not its gradients, updates and norms) are
/// computed from; every other op is the backward (a train step's update
/// too). A forward op's result that a backward op reads is saved: a fused
/// loss's gradients, formed in the forward sweep, among them. Parameters
/// and the graph's arguments are counted apart (nn::trainStepFloor), so
/// param_ref results and block arguments are not. What a called graph's
/// VJP companion keeps inside the call is not seen.
std::vector<::nn::TensorInfo> savedActivations(ir::GraphOp graph) {
  std::vector<::nn::TensorInfo> saved;
  if (graph.getBody().empty())
    return saved;
  Block &body = graph.getBody().front();
  Operation *terminator = body.getTerminator();
  llvm::SmallVector<Value> roots;
  llvm::DenseSet<Operation *> forward;
  // A loss's marker is the forward's, so that a loss only the backward's
  // normalization reads is saved, and an as_error one is not.
  for (Operation &op : body)
    if (auto mark = dyn_cast<ir::MarkLossOp>(op)) {
      forward.insert(mark);
      // The loss and what normalizes or weights it.
      llvm::append_range(roots, mark->getOperands());
    }
  for (auto [index, value] : llvm::enumerate(terminator->getOperands())) {
    using Dialect = ir::NNDialect;
    bool isTraining = llvm::any_of(
        ArrayRef<StringRef>{Dialect::GradientAttrHelper::getNameStr(),
                            Dialect::GradientOfInputAttrHelper::getNameStr(),
                            Dialect::GradNormAttrHelper::getNameStr(),
                            Dialect::UpdatedNormAttrHelper::getNameStr(),
                            Dialect::UpdateAttrHelper::getNameStr()},
        [&](StringRef name) { return graph.getResultAttr(index, name); });
    if (!isTraining)
      roots.push_back(value);
  }
  while (!roots.empty()) {
    Operation *op = roots.pop_back_val().getDefiningOp();
    if (!op || !forward.insert(op).second)
      continue;
    roots.append(op->operand_begin(), op->operand_end());
  }
  llvm::DenseSet<Value> read;
  for (Operation &op : body) {
    if (forward.contains(&op) || &op == terminator)
      continue;
    for (Value operand : op.getOperands())
      if (Operation *from = operand.getDefiningOp();
          from && forward.contains(from) && !isa<ir::ParamRefOp>(from))
        read.insert(operand);
  }
  // Forward order, for a report that reads like the model.
  for (Operation &op : body)
    for (OpResult result : op.getResults()) {
      auto tensor = dyn_cast<ir::NNTensorType>(result.getType());
      if (!tensor || !read.contains(result))
        continue;
      std::string name = ir::describeOrigin(ir::originLoc(&op));
      if (op.getNumResults() > 1)
        name += " #" + std::to_string(result.getResultNumber());
      saved.push_back({name, toDType(tensor.getElementType()), toAxes(tensor)});
    }
  return saved;
}

} // namespace

namespace nn::compiler {

std::map<std::string, ir::ParameterInit> parameterInits(ModuleOp module) {
  std::map<std::string, ir::ParameterInit> inits;
  for (ir::ParameterOp parameter : module.getOps<ir::ParameterOp>())
    inits[parameter.getSymName().str()] = parameterInit(parameter, module);
  return inits;
}

::nn::Manifest
buildManifest(const ir::GraphAbi &abi, SymbolTable &symbols,
              const std::map<std::string, ir::ParameterInit> &inits) {
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
      if (decl.isFlatten()) {
        dim.source = decl.getSource().str();
        dim.inner = decl.getInner().str();
      }
      break;
    case ir::DimKind::seq:
      dim.kind = ::nn::DimInfo::Kind::seq;
      dim.batch = decl.getBatch().str();
      dim.computed = decl.getComputed();
      if (decl.isLift()) {
        dim.lift = true;
        dim.source = decl.getSource().str();
        dim.factor = 1;
      } else if (decl.isDerived()) {
        dim.source = decl.getSource().str();
        dim.factor = decl.getFactor();
        dim.offset = decl.getOffset();
      }
      break;
    case ir::DimKind::packed:
      dim.kind = ::nn::DimInfo::Kind::packed;
      dim.batch = decl.getBatch().str();
      dim.sequence = decl.getSource().str();
      if (decl.isGridPacked())
        dim.inner = decl.getInner().str();
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
  auto module = graph->getParentOfType<ModuleOp>();
  for (ir::ParameterOp parameter : abi.parameters) {
    auto tensor = cast<ir::NNTensorType>(parameter.getType());
    ::nn::TensorInfo info{parameter.getSymName().str(),
                          toDType(tensor.getElementType()), toAxes(tensor)};
    auto given = inits.find(info.name);
    ir::ParameterInit init =
        given != inits.end() ? given->second : parameterInit(parameter, module);
    info.init = initName(init.kind);
    info.initScale = init.scale;
    manifest.parameters.push_back(info);
  }
  for (auto [index, type] :
       llvm::enumerate(graph.getResultTypes().take_front(abi.numResults))) {
    auto tensor = cast<ir::NNTensorType>(type);
    // nn-autodiff's gradient results name their parameter or input,
    // nn-train-step's its updates.
    std::string name = "result" + std::to_string(index);
    if (auto parameter = graph.getResultAttrOfType<StringAttr>(
            index, mlir::nn::NNDialect::GradientAttrHelper::getNameStr()))
      name = "grad:" + parameter.str();
    else if (auto updated = graph.getResultAttrOfType<StringAttr>(
                 index, mlir::nn::NNDialect::UpdateAttrHelper::getNameStr()))
      name = "update:" + updated.str();
    else if (graph.getResultAttr(
                 index, mlir::nn::NNDialect::GradNormAttrHelper::getNameStr()))
      name = "grad_norm";
    else if (graph.getResultAttr(
                 index,
                 mlir::nn::NNDialect::UpdatedNormAttrHelper::getNameStr()))
      name = "updated_norm";
    else if (auto input = graph.getResultAttrOfType<StringAttr>(
                 index,
                 mlir::nn::NNDialect::GradientOfInputAttrHelper::getNameStr()))
      name = "grad_input:" + input.str();
    manifest.outputs.push_back(
        {name, toDType(tensor.getElementType()), toAxes(tensor)});
  }
  // The lowered function returns these after the results (Abi.h).
  for (ir::DimDeclAttr dim : abi.computedDims)
    manifest.outputs.push_back({"lengths:" + dim.getName().str(),
                                ::nn::DType::i32,
                                {::nn::Axis{dim.getBatch().str()}}});
  manifest.saved = savedActivations(graph);
  manifest.dataParallel =
      graph.walk([](ir::AllReduceOp) { return WalkResult::interrupt(); })
          .wasInterrupted();
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

} // namespace nn::compiler
