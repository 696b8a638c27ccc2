// Gradient graphs (nn-run --grads) compile for the GPU, and every kernel
// of the backward assembles with ptxas for sm_90 and sm_80. No GPU needed.
// The loss tail is left unfused: ptxas-loss-tail.mlir has the fused one.
// (The packed tail's weight gradient is a cuBLAS GEMM, not a kernel; so
// are the conv's GEMMs. With the input gradient of x the conv's gradient
// has a kernel of its own, the scatter of its taps into the input frames;
// its weight gradient reads the forward's gathered windows.)
// REQUIRES: ptxas, cuda-toolkit
//
// RUN: rm -rf %t && mkdir -p %t
// RUN: nn-run %s --grads %t/g.npz --input-grads=x --no-fuse-loss-tail --target=cuda --compile-only --emit-gpu-code=%t/g90 | FileCheck %s
// RUN: %pyexe %S/Inputs/ptxas_all.py %ptxas sm_90 %t/g90 | FileCheck %s --check-prefix=OK90
// RUN: nn-run %s --grads %t/g.npz --input-grads=x --no-fuse-loss-tail --target=cuda --gpu-chip=sm_80 --compile-only --emit-gpu-code=%t/g80
// RUN: %pyexe %S/Inputs/ptxas_all.py %ptxas sm_80 %t/g80 | FileCheck %s --check-prefix=OK80
// CHECK: compiled @g for cuda:
// CHECK-DAG: kernel g_k{{[0-9]+}}_loss_seed
// CHECK-DAG: kernel g_k{{[0-9]+}}_cross_entropy_grad
// CHECK-DAG: kernel g_k{{[0-9]+}}_layer_norm_grad_input
// CHECK-DAG: kernel g_k{{[0-9]+}}_embedding_grad
// CHECK-DAG: kernel g_k{{[0-9]+}}_reduce_grad
// CHECK-DAG: kernel g_k{{[0-9]+}}_activation_grad
// CHECK-DAG: kernel g_k{{[0-9]+}}_lstm_grad
// CHECK-DAG: kernel g_k{{[0-9]+}}_conv1d_grad
// CHECK-DAG: kernel g_k{{[0-9]+}}_ctc_loss_grad
// OK90: ptxas -arch=sm_90: {{[1-9][0-9]*}} kernel modules, 0 failed
// OK80: ptxas -arch=sm_80: {{[1-9][0-9]*}} kernel modules, 0 failed

nn.parameter @table : !nn.tensor<[6, 2], f32>
nn.parameter @gain : !nn.tensor<[5], f32>
nn.parameter @shift : !nn.tensor<[5], f32>
nn.parameter @w : !nn.tensor<[3, 10], f32>
nn.parameter @v : !nn.tensor<[3, 4], f32>
nn.parameter @wi : !nn.tensor<[2, 8, 3], f32>
nn.parameter @wh : !nn.tensor<[2, 8, 2], f32>
nn.parameter @bl : !nn.tensor<[2, 8], f32>
nn.parameter @k : !nn.tensor<[3, 3, 3], f32>
nn.graph @g(%x: !nn.tensor<[B, T, 3], f32>, %ids: !nn.tensor<[B, T], i32>,
            %y: !nn.tensor<[B, T], i32>, %r: !nn.tensor<[B, T, 3], f32>,
            %lab: !nn.tensor<[B, U], i32>)
    dims [B: batch, T: seq(B), U: seq(B)] {
  %table = nn.param_ref @table : !nn.tensor<[6, 2], f32>
  %gain = nn.param_ref @gain : !nn.tensor<[5], f32>
  %shift = nn.param_ref @shift : !nn.tensor<[5], f32>
  %w = nn.param_ref @w : !nn.tensor<[3, 10], f32>
  %v = nn.param_ref @v : !nn.tensor<[3, 4], f32>
  %wi = nn.param_ref @wi : !nn.tensor<[2, 8, 3], f32>
  %wh = nn.param_ref @wh : !nn.tensor<[2, 8, 2], f32>
  %bl = nn.param_ref @bl : !nn.tensor<[2, 8], f32>
  %k = nn.param_ref @k : !nn.tensor<[3, 3, 3], f32>
  %e = nn.embedding %ids, %table : !nn.tensor<[B, T], i32>, !nn.tensor<[6, 2], f32>
  %c = nn.concat %x, %e : !nn.tensor<[B, T, 3], f32>, !nn.tensor<[B, T, 2], f32>
  %n = nn.layer_norm %c, %gain, %shift : !nn.tensor<[B, T, 5], f32>, !nn.tensor<[5], f32>, !nn.tensor<[5], f32>
  %t = nn.tanh %n : !nn.tensor<[B, T, 5], f32>
  %m = nn.reduce max %t over 1 : !nn.tensor<[B, T, 5], f32>
  %mb = nn.broadcast_seq %m : !nn.tensor<[B, 5], f32> -> !nn.tensor<[B, T, 5], f32>
  %h = nn.concat %t, %mb : !nn.tensor<[B, T, 5], f32>, !nn.tensor<[B, T, 5], f32>
  %l = nn.linear %h, %w : !nn.tensor<[B, T, 10], f32>, !nn.tensor<[3, 10], f32>
  %ce = nn.cross_entropy %l, %y from logits : !nn.tensor<[B, T, 3], f32>, !nn.tensor<[B, T], i32>
  nn.mark_loss %ce as "ce" normalize per_frame : !nn.tensor<[B, T], f32>
  %cv = nn.conv1d %x, %k stride 1 : (!nn.tensor<[B, T, 3], f32>, !nn.tensor<[3, 3, 3], f32>) -> !nn.tensor<[B, T, 3], f32>
  %rec = nn.lstm bidirectional %cv, %wi, %wh, %bl : !nn.tensor<[B, T, 3], f32>, !nn.tensor<[2, 8, 3], f32>, !nn.tensor<[2, 8, 2], f32>, !nn.tensor<[2, 8], f32>
  %p = nn.linear %rec, %v : !nn.tensor<[B, T, 4], f32>, !nn.tensor<[3, 4], f32>
  %s = nn.softmax %p : !nn.tensor<[B, T, 3], f32>
  %mse = nn.mse %s, %r : !nn.tensor<[B, T, 3], f32>, !nn.tensor<[B, T, 3], f32>
  nn.mark_loss %mse as "mse" normalize per_sequence : !nn.tensor<[B, T], f32>
  %ctc = nn.ctc_loss %p, %lab from logits blank 0 zero_infinity : !nn.tensor<[B, T, 3], f32>, !nn.tensor<[B, U], i32>
  nn.mark_loss %ctc as "ctc" normalize per_sequence : !nn.tensor<[B], f32>
  nn.return
}
