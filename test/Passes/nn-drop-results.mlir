// RUN: nn-opt %s --nn-drop-results | FileCheck %s
// RUN: nn-opt %s --pass-pipeline='builtin.module(nn-optimize{grads=true train-step=true optimizer=sgd})' | FileCheck %s --check-prefix=STEP

// The graph's own results go, with the pure ops only they used; the loss
// stays. In a train step the loss tail whose logits were a result fuses.
// CHECK-LABEL: nn.graph @g(
// CHECK-SAME: dims
// CHECK-NOT: ->
// CHECK: %[[L:.*]] = nn.linear
// CHECK-NOT: nn.tanh
// CHECK: nn.cross_entropy %[[L]]
// CHECK: nn.return{{$}}
// STEP: nn.linear_cross_entropy_train
// STEP-NOT: nn.unpack
nn.parameter @w : !nn.tensor<[3, 4], f32>
nn.graph @g(%x: !nn.tensor<[B, T, 4], f32>, %y: !nn.tensor<[B, T], i32>)
    -> (!nn.tensor<[B, T, 3], f32>, !nn.tensor<[B, T, 3], f32>)
    dims [B: batch, T: seq(B)] {
  %w = nn.param_ref @w : !nn.tensor<[3, 4], f32>
  %l = nn.linear %x, %w : !nn.tensor<[B, T, 4], f32>, !nn.tensor<[3, 4], f32>
  %t = nn.tanh %l : !nn.tensor<[B, T, 3], f32>
  %ce = nn.cross_entropy %l, %y from logits : !nn.tensor<[B, T, 3], f32>, !nn.tensor<[B, T], i32>
  nn.mark_loss %ce as "ce" normalize per_frame : !nn.tensor<[B, T], f32>
  nn.return %l, %t : !nn.tensor<[B, T, 3], f32>, !nn.tensor<[B, T, 3], f32>
}
