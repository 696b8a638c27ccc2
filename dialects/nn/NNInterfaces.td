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
    stops at such ops unless they declare a packed implementation.
  }];
  let methods = [
    InterfaceMethod<[{
        Returns true when the op can run on packed frames (with per-sequence
        borders). A cost model may then pack before it.
      }],
      "bool", "hasPackedImplementation", (ins), [{}], [{ return false; }]>
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

#endif // NN_INTERFACES_TD
