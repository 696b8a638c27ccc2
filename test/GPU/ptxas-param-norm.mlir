// The parameter regularization loss nn.param_norm and its gradient
// (nn.param_norm_grad, built by --grads) compile for the GPU beside a CE
// loss, and every kernel assembles with ptxas for sm_90. No GPU needed.
// REQUIRES: ptxas, cuda-toolkit
//
// RUN: rm -rf %t && mkdir -p %t
// RUN: nn-run %s --target=cuda --compile-only --grads=%t/g.npz --emit-gpu-code=%t/a90 | FileCheck %s
// RUN: %pyexe %S/Inputs/ptxas_all.py %ptxas sm_90 %t/a90 | FileCheck %s --check-prefix=OK90
// CHECK: compiled @g for cuda:
// OK90: ptxas -arch=sm_90: {{[1-9][0-9]*}} kernel modules, 0 failed
nn.parameter @w : !nn.tensor<[3, 4], f32>
nn.parameter @b : !nn.tensor<[3], f32>
nn.graph @g(%x: !nn.tensor<[B, T, 4], f32>, %y: !nn.tensor<[B, T], i32>)
    dims [B: batch, T: seq(B)] {
  %w = nn.param_ref @w : !nn.tensor<[3, 4], f32>
  %b = nn.param_ref @b : !nn.tensor<[3], f32>
  %l = nn.linear %x, %w, %b : !nn.tensor<[B, T, 4], f32>, !nn.tensor<[3, 4], f32>, !nn.tensor<[3], f32>
  %ce = nn.cross_entropy %l, %y from logits : !nn.tensor<[B, T, 3], f32>, !nn.tensor<[B, T], i32>
  nn.mark_loss %ce as "ce" normalize per_frame : !nn.tensor<[B, T], f32>
  %n = nn.param_norm %w, %b : !nn.tensor<[3, 4], f32>, !nn.tensor<[3], f32>
  nn.mark_loss %n as "l2" normalize sum scale 5.000000e-03 : !nn.tensor<[], f32>
  nn.return
}
