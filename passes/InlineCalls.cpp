//===- InlineCalls.cpp - called graphs into their callers -----------------===//
//
// Packing and loss-tail fusion look at one graph: a model behind nn.call is
// a frontier to them, so its layers run on padded frames even where
// packing them pays. This pass copies the body of each called graph into
// its caller when the call binds every callee dim to the caller's dim of
// the same name and declaration, so that no type needs renaming; the
// callee's own dims that the call does not bind (a subsampled length, say)
// join the caller's when the name is free there. Other calls stay, with a
// remark naming the dim that would need renaming.
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

namespace mlir::nn {
#define DEBUG_TYPE "nn-inline-calls"

#define GEN_PASS_DEF_NNINLINECALLS
#include "passes/Passes.h.inc"
} // namespace mlir::nn

using namespace mlir;
using namespace mlir::nn;

namespace {

/// Rounds of inlining per graph: each round inlines the calls of the one
/// before, so a chain of calls this deep is flattened; recursion stops
/// here (a recursive graph is not a model anyone can run).
constexpr int kMaxDepth = 16;

struct NNInlineCallsPass
    : public mlir::nn::impl::NNInlineCallsBase<NNInlineCallsPass> {
  using NNInlineCallsBase::NNInlineCallsBase;
  void runOnOperation() override;

  /// Inlines `call` into `caller` and returns true, or returns false and
  /// leaves it (with a remark when asked).
  bool inlineCall(GraphOp caller, CallOp call, SymbolTable &symbols);
};

} // namespace

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
  if (callee.getBody().getBlocks().size() != 1)
    return leave("the callee has more than one block");
  // A loss marked inside the callee is the callee's: exposing it through
  // the call (nn-expose-losses) is what its callers expect.
  if (callee.walk([](MarkLossOp) { return WalkResult::interrupt(); })
          .wasInterrupted())
    return leave("the callee marks a loss");

  DimTable calleeDims(callee.getDims()), callerDims(caller.getDims());
  DimBinding binding(calleeDims, callerDims);
  auto emitError = [&] { return call->emitOpError(); };
  // The verifier has unified this call already; this only reads the
  // binding back.
  if (failed(binding.unifyCall(callee.getArgumentTypes(),
                               call.getOperandTypes(), callee.getResultTypes(),
                               call.getResultTypes(), emitError)))
    return false;
  SmallVector<Attribute> dims(caller.getDims().begin(), caller.getDims().end());
  for (Attribute entry : callee.getDims()) {
    auto decl = dyn_cast<DimDeclAttr>(entry);
    if (!decl)
      return leave("the callee has a dim that is not a declaration");
    StringRef name = decl.getName().getValue();
    StringRef bound = binding.lookup(name);
    DimDeclAttr mine = callerDims.lookup(name);
    if (!bound.empty() && bound != name)
      return leave("callee dim '" + name + "' binds caller dim '" + bound +
                   "' (renaming dims is not supported)");
    if (mine && mine != decl)
      return leave("callee dim '" + name +
                   "' is declared differently in the caller");
    // A dim of the callee's own that the caller lacks.
    if (!mine)
      dims.push_back(decl);
  }

  OpBuilder builder(call);
  IRMapping mapping;
  Block &body = callee.getBody().front();
  mapping.map(body.getArguments(), call.getOperands());
  for (Operation &op : body.without_terminator())
    builder.clone(op, mapping);
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
  for (GraphOp caller : llvm::to_vector(module.getOps<GraphOp>())) {
    // Calls looked at and left: not looked at again (one remark each).
    llvm::DenseSet<Operation *> left;
    for (int round = 0; round < kMaxDepth; ++round) {
      SmallVector<CallOp> calls;
      caller.walk([&](CallOp call) {
        if (!left.contains(call))
          calls.push_back(call);
      });
      bool inlined = false;
      for (CallOp call : calls) {
        if (inlineCall(caller, call, symbols))
          inlined = true;
        else
          left.insert(call);
      }
      if (!inlined)
        break;
    }
  }
}
