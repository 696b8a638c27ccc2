//===- Passes.td - nn-level passes -------------------------*- tablegen -*-===//

#ifndef NN_PASSES_TD
#define NN_PASSES_TD

include "mlir/Pass/PassBase.td"

def NNPackBeforeLoss : Pass<"nn-pack-before-loss", "::mlir::ModuleOp"> {
  let summary = "Runs the frame-wise tail of each loss on packed frames only";
  let description = [{
    For each frame-wise loss marked with `nn.mark_loss` over padded frames
    `[B, T]`, walks backward through frame-wise ops (asking
    `FrameWiseOpInterface`) to the frontier: values made by other ops
    (sequence-mixing layers, calls) or graph arguments. Each frontier value
    is packed once (`nn.pack`, shared by all losses that reach it), the
    frame-wise chain is re-created on packed values `[N, ...]` with `N`
    declared `packed(B, T)`, and the loss is marked on the packed value, so
    its sum and normalization are those of the masked padded loss. A padded
    value of the chain that something else still uses (a graph result, a
    sequence-mixing op) gets an `nn.unpack` of its packed twin instead of a
    second padded computation. Per-sequence losses (CTC) and values without
    a sequence axis are left alone. The pass is idempotent. See
    docs/passes.md.
  }];
  let dependentDialects = ["::mlir::nn::NNDialect"];
  let options = [
    Option<"emitRemarks", "emit-remarks", "bool", /*default=*/"false",
           "Emit a remark per loss saying what was packed">
  ];
}

#endif // NN_PASSES_TD
