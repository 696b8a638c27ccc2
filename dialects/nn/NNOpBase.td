//===- NNOpBase.td - base classes of the nn ops ------------*- tablegen -*-===//
//
// The classes every op family builds on: NN_Op appends the dialect-wide
// dim check; NN_FrameWiseOp and NN_SequenceMixingOp add the interfaces
// that passes ask instead of lists of op names.
//
//===----------------------------------------------------------------------===//

#ifndef NN_OP_BASE_TD
#define NN_OP_BASE_TD

include "dialects/nn/NNBase.td"
include "dialects/nn/NNInterfaces.td"
include "mlir/IR/SymbolInterfaces.td"
include "mlir/Interfaces/CallInterfaces.td"
include "mlir/Interfaces/ControlFlowInterfaces.td"
include "mlir/Interfaces/FunctionInterfaces.td"
include "mlir/Interfaces/SideEffectInterfaces.td"
include "mlir/IR/OpAsmInterface.td"
include "mlir/Interfaces/InferTypeOpInterface.td"

/// Checks that every dim named by an operand or result type is declared by
/// the enclosing graph and that the position axes are well formed.
def NN_DimsDeclared : NativeOpTrait<"DimsDeclared"> {
  let cppNamespace = "::mlir::nn::OpTrait";
}

/// Ops that accept the N-best layout `[B, K, Y...]` (Positions::flat):
/// searches that produce it, the ops that flatten it, and nn.return. Every
/// other op works on the flattened batch, so none of their verifiers and
/// lowerings has to know nested lengths.
def NN_BeamLayout : NativeOpTrait<"BeamLayout"> {
  let cppNamespace = "::mlir::nn::OpTrait";
}

/// Ops inside a graph. The base class appends the dialect-wide dim check.
class NN_Op<string mnemonic, list<Trait> traits = []>
    : Op<NN_Dialect, mnemonic, !listconcat(traits, [NN_DimsDeclared])>;

/// A pure op that acts on each position independently.
class NN_FrameWiseOp<string mnemonic, list<Trait> traits = []>
    : NN_Op<mnemonic, !listconcat(traits,
        [Pure, NN_FrameWiseOpInterface])>;

/// A pure op that mixes the frames of a sequence axis, masked by its
/// lengths.
class NN_SequenceMixingOp<string mnemonic, list<Trait> traits = []>
    : NN_Op<mnemonic, !listconcat(traits,
        [Pure, NN_SequenceMixingOpInterface])>;

#endif // NN_OP_BASE_TD
