//===- NNInterfaces.td - op interfaces of the nn dialect ---*- tablegen -*-===//
//
// Passes ask these interfaces, never lists of op names: a new frame-wise
// layer or a new loss works with pack-before-loss by implementing them.
//
//===----------------------------------------------------------------------===//

#ifndef NN_INTERFACES_TD
#define NN_INTERFACES_TD

include "mlir/IR/OpBase.td"

def NN_FrameWiseOpInterface : OpInterface<"FrameWiseOpInterface"> {
  let cppNamespace = "::mlir::nn";
  let description = [{
    An op that acts on each position (batch entry x frame) independently:
    its results have the position axes of its frame operands, and computing
    it on packed frames `[N, ...]` gives the packed form of its padded
    result. Such ops commute with `nn.pack` / `nn.unpack`. Operands without
    position axes (weights, biases) are shared by all positions.
  }];
  let methods = [
    InterfaceMethod<[{
        Returns true when operand `index` is indexed by positions (it must be
        packed together with the results), false for operands shared by all
        positions such as weights.
      }],
      "bool", "isFrameOperand", (ins "unsigned":$index), [{}], [{
        auto type = ::llvm::cast<::mlir::nn::NNTensorType>(
            $_op->getOperand(index).getType());
        return type.getNumPositionDims() != 0;
      }]>
  ];
}

def NN_SequenceMixingOpInterface : OpInterface<"SequenceMixingOpInterface"> {
  let cppNamespace = "::mlir::nn";
  let description = [{
    An op that looks across time (recurrences, convolution and pooling over
    time, reductions over a sequence axis, sequence-level losses). Packing
    stops at such ops unless the op has a packed form: then its operands
    with position axes may be packed `[N, ...]` (N = packed(B, T)), its
    results follow them (a transducer join's result is its packed grid
    either way), and the packed op computes the packed form of its
    padded result, as a frame-wise op would (`nn-pack-before-loss` clones
    it onto packed operands).
  }];
  let methods = [
    InterfaceMethod<[{
        Returns true when the op accepts packed frames in place of its
        padded ones (the same results, packed).
      }],
      "bool", "hasPackedForm", (ins), [{}], [{ return false; }]>,
    InterfaceMethod<[{
        With a packed form: whether operand `index` is one that may be
        packed (frames over the sequence dim the op mixes). By default every
        operand with position axes; a CTC loss's labels `[B, U]` are not.
      }],
      "bool", "isPackableOperand", (ins "unsigned":$index), [{}], [{
        auto type = ::llvm::dyn_cast<::mlir::nn::NNTensorType>(
            $_op->getOperand(index).getType());
        return type && type.getNumPositionDims() != 0;
      }]>,
    InterfaceMethod<[{
        The work the padded form does on each padded frame that the packed
        form skips, in element operations per frame of the batch (the
        cost model of `nn-pack-before-loss`, docs/passes.md). Only asked of
        ops with a packed form.
      }],
      "double", "getPaddedFrameWork", (ins), [{}], [{ return 0.0; }]>
  ];
}

def NN_LossOpInterface : OpInterface<"LossOpInterface"> {
  let cppNamespace = "::mlir::nn";
  let description = [{
    An op that computes a per-position loss: one value per frame (cross
    entropy, MSE: result `[B, T]` or packed `[N]`) or one per sequence (CTC:
    result `[B]`). `nn.mark_loss` only accepts values produced by these
    ops; it sums them over valid positions and normalizes as it says.
  }];
  let methods = [
    InterfaceMethod<"Returns the per-position loss value.",
      "::mlir::Value", "getLossValue", (ins), [{}], [{
        return $_op->getResult(0);
      }]>,
    InterfaceMethod<[{
        Returns true for one value per frame, false for one per sequence.
      }],
      "bool", "isPerFrameLoss", (ins)>
  ];
}

def NN_ClassIndexOpInterface : OpInterface<"ClassIndexOpInterface"> {
  let cppNamespace = "::mlir::nn";
  let description = [{
    An op that reads an integer operand as class indices (cross-entropy
    targets, CTC labels, embedding indices). The compiler writes the bound
    into the artifact's manifest, and the runtime refuses inputs that hold
    an index outside it at a valid position before anything runs.
  }];
  let methods = [
    InterfaceMethod<[{
        Returns the number of classes `operand` indexes, or 0 when the
        operand is not a class index.
      }],
      "int64_t", "getNumClasses", (ins "::mlir::OpOperand &":$operand)>,
    InterfaceMethod<[{
        Returns a class `operand` may not hold at valid positions (CTC's
        blank among labels), or -1 when there is none.
      }],
      "int64_t", "getReservedClass", (ins "::mlir::OpOperand &":$operand),
      [{}], [{ return -1; }]>
  ];
}

def NN_ParameterInitOpInterface : OpInterface<"ParameterInitOpInterface"> {
  let cppNamespace = "::mlir::nn";
  let description = [{
    An op that knows how a parameter it reads is usually initialized
    (Glorot for weights, zeros for biases, ones for a layer-norm scale).
    The compiler asks the ops that read each parameter and writes the
    answer into the artifact's manifest; `nn::initializeParameters` draws
    fresh parameters from it (docs/training.md).
  }];
  let methods = [
    InterfaceMethod<[{
        Returns how the parameter read as `operand` is initialized, or a
        ParameterInit of kind `none` when this op has no opinion.
      }],
      "::mlir::nn::ParameterInit", "getParameterInit",
      (ins "::mlir::OpOperand &":$operand)>
  ];
}

def NN_VjpOpInterface : OpInterface<"VjpOpInterface"> {
  let cppNamespace = "::mlir::nn";
  let description = [{
    An op that states its vector-Jacobian product as nn ops, for
    reverse-mode autodiff (`nn-autodiff`): given the gradient of the
    objective with respect to each result, it builds the gradient with
    respect to each operand. Gradients have their value's type; their
    entries at padded positions are unspecified, like the forward values
    there, and every op that sums over positions masks them.
  }];
  let methods = [
    InterfaceMethod<[{
        Builds, at `builder`'s insertion point, the gradient with respect to
        each operand from `resultGradients` (one per result; null where a
        result does not reach the objective). Appends one value per operand
        to `operandGradients`: null where there is none (integer operands,
        operands the results do not depend on differentiably). Fails with a
        diagnostic on the op when it cannot.
      }],
      "::llvm::LogicalResult", "buildVjp",
      (ins "::mlir::OpBuilder &":$builder,
           "::mlir::ValueRange":$resultGradients,
           "::llvm::SmallVectorImpl<::mlir::Value> &":$operandGradients)>
  ];
}

def NN_DimProducerOpInterface : OpInterface<"DimProducerOpInterface"> {
  let cppNamespace = "::mlir::nn";
  let description = [{
    An op that computes the lengths of `computed` sequence dims (a decoder:
    a hypothesis ends where the search says). Each computed dim of a graph
    has exactly one producer; ops before it may not name the dim. Its
    lowering binds the dim's padded size and lengths (the longest and each
    sequence's count), and the graph returns the lengths after its
    results (`lengths:<dim>` in the manifest).
  }];
  let methods = [
    InterfaceMethod<[{
        Returns the computed dims whose lengths this op determines: the
        computed dims its result types name.
      }],
      "::llvm::SmallVector<::llvm::StringRef, 1>", "getProducedDims", (ins)>
  ];
}

def NN_GraphCalleeOpInterface : OpInterface<"GraphCalleeOpInterface"> {
  let cppNamespace = "::mlir::nn";
  let description = [{
    An op other than `nn.call` that runs graphs of the module, named by
    symbol, inside its own lowering: a decoder's scorers (a language model,
    a transducer's predictor and joiner), called one step at a time on a
    row batch. Their parameters are the calling graph's parameters (the
    ABI and the manifest include them); the callees mark no loss, and
    autodiff never differentiates through them (the op has no VJP).
  }];
  let methods = [
    InterfaceMethod<[{
        Returns the symbols of the graphs this op calls, in the order of
        its attributes (a callee named twice appears twice).
      }],
      "::llvm::SmallVector<::mlir::FlatSymbolRefAttr, 2>", "getCalleeGraphs",
      (ins)>
  ];
}

#endif // NN_INTERFACES_TD
