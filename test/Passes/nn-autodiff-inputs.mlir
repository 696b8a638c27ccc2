// RUN: nn-opt %s --nn-autodiff="inputs=x" | FileCheck %s
// RUN: not nn-opt %s --nn-autodiff="inputs=z" 2>&1 | FileCheck %s --check-prefix=UNKNOWN
// RUN: not nn-opt %s --nn-autodiff="inputs=y" 2>&1 | FileCheck %s --check-prefix=INTEGER

// Gradients with respect to graph inputs on request: results after the
// parameters', marked nn.gradient_of_input.
// CHECK-LABEL: nn.graph @g
// CHECK-SAME: -> (!nn.tensor<[3, 4], f32> {nn.gradient = "w"}, !nn.tensor<[B, T, 4], f32> {nn.gradient_of_input = "x"})
// CHECK: %[[DX:.+]] = nn.linear_grad_input
// The input's gradient is exactly 0 at padded frames:
// CHECK: %[[ZERO:.+]] = nn.zero_padding %[[DX]] : !nn.tensor<[B, T, 4], f32>
// CHECK: nn.return %{{.+}}, %[[ZERO]]
// UNKNOWN: error: nn-autodiff: graph @g has no argument named 'z'
// INTEGER: error: nn-autodiff: argument 'y' of @g holds integers: it has no gradient
nn.parameter @w : !nn.tensor<[3, 4], f32>
nn.graph @g(%x: !nn.tensor<[B, T, 4], f32>, %y: !nn.tensor<[B, T], i32>)
    dims [B: batch, T: seq(B)] {
  %w = nn.param_ref @w : !nn.tensor<[3, 4], f32>
  %h = nn.linear %x, %w : !nn.tensor<[B, T, 4], f32>, !nn.tensor<[3, 4], f32>
  %ce = nn.cross_entropy %h, %y from logits : !nn.tensor<[B, T, 3], f32>, !nn.tensor<[B, T], i32>
  nn.mark_loss %ce as "ce" normalize per_frame : !nn.tensor<[B, T], f32>
  nn.return
}
