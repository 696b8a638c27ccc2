//===- InlineCalls.cpp - called graphs into their callers -----------------===//
//
// Packing and loss-tail fusion look at one graph: a model behind nn.call is
// a frontier to them, so its layers run on padded frames even where
// packing them pays. This pass copies the body of each called graph into
// its caller, its types renamed into the caller's dims: each callee dim
// the call binds becomes the caller's dim it binds (when the callee's
// declaration can stand for the caller's), and each dim of the callee's
// own becomes the caller's dim declared the same way, or a new one. Calls
// that cannot be inlined stay, with a remark saying why.
//
// It runs after nn-dropout-training: an inlined dropout keeps its key and
// reads the seed the call passed, so its masks are those of the call.
//
//===----------------------------------------------------------------------===//

#include "passes/Passes.h"

#include "dialects/nn/Dims.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/IR/SymbolTable.h"
#include "llvm/ADT/SetVector.h"
#include "llvm/ADT/StringSet.h"

namespace mlir::nn {
#define DEBUG_TYPE "nn-inline-calls"

#define GEN_PASS_DEF_NNINLINECALLS
#include "passes/Passes.h.inc"
} // namespace mlir::nn

using namespace mlir;
using namespace mlir::nn;

namespace {

/// Rounds of inlining per graph: each round inlines the calls the one
/// before brought in, so a chain of calls this deep is flattened;
/// mutual recursion stops here (the lowering rejects what is left).
constexpr int kMaxInlineRounds = 16;

struct NNInlineCallsPass
    : public mlir::nn::impl::NNInlineCallsBase<NNInlineCallsPass> {
  using NNInlineCallsBase::NNInlineCallsBase;
  void runOnOperation() override;

  /// Inlines `call` into `caller` and returns true, or returns false and
  /// leaves it (with a remark when asked).
  bool inlineCall(GraphOp caller, CallOp call, SymbolTable &symbols);
};

} // namespace

/// `decl` with its name and the dims it refers to renamed by `names`, or
/// null when one of them has no name yet.
static DimDeclAttr renameDecl(DimDeclAttr decl, StringAttr name,
                              const llvm::StringMap<StringAttr> &names) {
  bool complete = true;
  auto rename = [&](StringAttr dim) -> StringAttr {
    if (!dim)
      return dim;
    StringAttr renamed = names.lookup(dim.getValue());
    complete &= bool(renamed);
    return renamed;
  };
  StringAttr batch = rename(decl.getBatch()), source = rename(decl.getSource()),
             inner = rename(decl.getInner());
  if (!complete)
    return {};
  return DimDeclAttr::get(decl.getContext(), name, decl.getKind(), batch,
                          source, decl.getFactor(), decl.getOffset(), inner,
                          decl.getComputed());
}

/// `decl` named `name`.
static DimDeclAttr withName(DimDeclAttr decl, StringAttr name) {
  return DimDeclAttr::get(decl.getContext(), name, decl.getKind(),
                          decl.getBatch(), decl.getSource(), decl.getFactor(),
                          decl.getOffset(), decl.getInner(),
                          decl.getComputed());
}

/// Whether a callee dim declared `renamed` (in the caller's names) may
/// stand for the caller's dim `mine`: the same declaration, or a plain
/// sequence dim of the same batch taking the caller's sequence dim's
/// lengths (a derived one, say), as a call lets it.
static bool standsFor(DimDeclAttr renamed, DimDeclAttr mine) {
  if (renamed == mine)
    return true;
  bool plainSequence = renamed.getKind() == DimKind::seq &&
                       !renamed.getSource() && !renamed.getComputed();
  return plainSequence && mine.getKind() == DimKind::seq &&
         !mine.getComputed() && mine.getBatch() == renamed.getBatch();
}

bool NNInlineCallsPass::inlineCall(GraphOp caller, CallOp call,
                                   SymbolTable &symbols) {
  auto leave = [&](const Twine &why) {
    if (emitRemarks)
      call->emitRemark() << "not inlined: " << why;
    return false;
  };
  auto callee = symbols.lookup<GraphOp>(call.getCallee());
  if (!callee)
    return leave("the callee is not a graph");
  if (callee == caller)
    return leave("the callee is the caller");
  if (!callee.getBody().hasOneBlock())
    return leave("the callee's body is not one block");
  // A loss marked inside the callee is the callee's: exposing it through
  // the call (nn-expose-losses) is what its callers expect.
  if (callee.walk([](MarkLossOp) { return WalkResult::interrupt(); })
          .wasInterrupted())
    return leave("the callee marks a loss");

  DimTable calleeDims(callee.getDims()), callerDims(caller.getDims());
  DimBinding binding(calleeDims, callerDims);
  auto emitError = [&] { return call->emitOpError(); };
  // The verifier has checked this call already: this reads the binding
  // back, every dim a bound dim refers to included.
  if (failed(binding.unifyCall(callee.getArgumentTypes(),
                               call.getOperandTypes(), callee.getResultTypes(),
                               call.getResultTypes(), emitError)) ||
      failed(binding.verifyKinds(emitError))) {
    signalPassFailure();
    return false;
  }

  // Each callee dim's name in the caller: the dim the call binds it to,
  // or, for a dim of the callee's own, the caller's dim declared the same
  // way or a new one (the callee's name, made unique).
  MLIRContext *context = caller.getContext();
  llvm::StringMap<StringAttr> names;
  for (DimDeclAttr decl : calleeDims.getDecls())
    if (StringRef bound = binding.lookup(decl.getName().getValue());
        !bound.empty())
      names[decl.getName().getValue()] = StringAttr::get(context, bound);
  SmallVector<Attribute> dims(caller.getDims().begin(), caller.getDims().end());
  llvm::StringSet<> taken;
  for (DimDeclAttr decl : callerDims.getDecls())
    taken.insert(decl.getName().getValue());
  for (DimDeclAttr decl : calleeDims.getDecls()) {
    StringRef name = decl.getName().getValue();
    if (StringAttr bound = names.lookup(name)) {
      DimDeclAttr renamed = renameDecl(decl, bound, names);
      if (!renamed || !standsFor(renamed, callerDims.lookup(bound)))
        return leave("callee dim '" + name + "' cannot stand for caller dim '" +
                     bound.getValue() + "'");
      continue;
    }
    if (decl.getComputed())
      return leave("callee dim '" + name + "' is computed by the callee");
    // A batch or sequence dim no argument binds would be a new input of
    // the caller (the lowering rejects it in the callee for that reason).
    if ((decl.getKind() == DimKind::batch || decl.getKind() == DimKind::seq) &&
        !decl.getSource())
      return leave("callee dim '" + name + "' is bound by no argument");
    DimDeclAttr renamed = renameDecl(decl, decl.getName(), names);
    if (!renamed)
      return leave("callee dim '" + name +
                   "' refers to a dim the call does not bind");
    // A caller dim declared the same way is the same dim (a derived
    // length the caller declares too): two names for it would make the
    // inlined ops' types disagree with the caller's.
    auto same = llvm::find_if(callerDims.getDecls(), [&](DimDeclAttr mine) {
      return withName(renamed, mine.getName()) == mine;
    });
    if (same != callerDims.getDecls().end()) {
      names[name] = same->getName();
      continue;
    }
    std::string fresh = name.str();
    for (int suffix = 1; taken.contains(fresh); ++suffix)
      fresh = (name + "_" + Twine(suffix)).str();
    taken.insert(fresh);
    names[name] = StringAttr::get(context, fresh);
    dims.push_back(withName(renamed, names[name]));
  }

  // The callee's types in the caller's dims.
  auto renameType = [&](Type type) -> Type {
    auto tensor = dyn_cast<NNTensorType>(type);
    if (!tensor)
      return type;
    SmallVector<Attribute> axes;
    for (Attribute axis : tensor.getDims()) {
      auto dim = dyn_cast<StringAttr>(axis);
      StringAttr renamed = dim ? names.lookup(dim.getValue()) : StringAttr();
      axes.push_back(renamed ? renamed : axis);
    }
    return NNTensorType::get(axes, tensor.getElementType());
  };
  OpBuilder builder(call);
  IRMapping mapping;
  Block &body = callee.getBody().front();
  mapping.map(body.getArguments(), call.getOperands());
  for (Operation &op : body.without_terminator()) {
    Operation *copy = builder.clone(op, mapping);
    copy->walk([&](Operation *nested) {
      for (OpResult result : nested->getResults())
        result.setType(renameType(result.getType()));
      for (Region &region : nested->getRegions())
        for (BlockArgument argument : region.getArguments())
          argument.setType(renameType(argument.getType()));
    });
  }
  for (auto [result, returned] :
       llvm::zip_equal(call.getResults(), body.getTerminator()->getOperands()))
    result.replaceAllUsesWith(mapping.lookupOrDefault(returned));
  call.erase();
  caller.setDimsAttr(builder.getArrayAttr(dims));
  return true;
}

void NNInlineCallsPass::runOnOperation() {
  ModuleOp module = getOperation();
  SymbolTable symbols(module);
  // Graphs some call of which was inlined.
  llvm::SetVector<Operation *> inlinedCallees;
  for (GraphOp caller : llvm::to_vector(module.getOps<GraphOp>())) {
    // Calls looked at and left: not looked at again (one remark each).
    llvm::DenseSet<Operation *> left;
    for (int round = 0; round < kMaxInlineRounds; ++round) {
      SmallVector<CallOp> calls;
      caller.walk([&](CallOp call) {
        if (!left.contains(call))
          calls.push_back(call);
      });
      bool inlined = false;
      for (CallOp call : calls) {
        Operation *callee = symbols.lookup(call.getCallee());
        if (inlineCall(caller, call, symbols)) {
          inlined = true;
          inlinedCallees.insert(callee);
        } else {
          left.insert(call);
        }
      }
      if (!inlined)
        break;
    }
  }
  // A callee nothing refers to any more is gone, unless it is the entry:
  // left in the module it would be one more graph no other graph calls,
  // and the entry is the one such graph when none is named.
  for (Operation *callee : inlinedCallees)
    if (cast<GraphOp>(callee).getSymName() != graph &&
        SymbolTable::symbolKnownUseEmpty(callee, module))
      symbols.erase(callee);
}
