// The fused loss tail (nn-fuse-loss-tail) compiles for the GPU: its sweep
// over blocks of rows is a host loop whose GEMMs are cuBLAS calls and whose
// row reductions, log-sum-exp, target pick and logits gradient are
// kernels; every kernel assembles with ptxas for sm_90 and sm_80, forward
// alone and with the merged and the recomputing backward. No GPU needed.
// REQUIRES: ptxas, cuda-toolkit
//
// RUN: rm -rf %t && mkdir -p %t
// RUN: nn-run %s --target=cuda --compile-only --emit-gpu-code=%t/f90 | FileCheck %s --check-prefix=FWD
// RUN: %pyexe %S/Inputs/ptxas_all.py %ptxas sm_90 %t/f90 | FileCheck %s --check-prefix=OK90
// RUN: nn-run %s --grads %t/g.npz --input-grads=x --target=cuda --compile-only --emit-gpu-code=%t/g90 | FileCheck %s --check-prefix=SWEEP
// RUN: %pyexe %S/Inputs/ptxas_all.py %ptxas sm_90 %t/g90 | FileCheck %s --check-prefix=OK90
// RUN: nn-run %s --grads %t/g.npz --loss-tail-backward=recompute --target=cuda --gpu-chip=sm_80 --compile-only --emit-gpu-code=%t/r80 | FileCheck %s --check-prefix=RECOMPUTE
// RUN: %pyexe %S/Inputs/ptxas_all.py %ptxas sm_80 %t/r80 | FileCheck %s --check-prefix=OK80
// FWD: compiled @g for cuda:
// FWD-DAG: kernel g_k{{[0-9]+}}_linear_cross_entropy
// FWD-NOT: kernel {{.*}}_log_softmax
// SWEEP-DAG: kernel g_k{{[0-9]+}}_linear_cross_entropy_train
// SWEEP-NOT: kernel {{.*}}_loss_seed
// RECOMPUTE-DAG: kernel g_k{{[0-9]+}}_linear_cross_entropy_grad
// OK90: ptxas -arch=sm_90: {{[1-9][0-9]*}} kernel modules, 0 failed
// OK80: ptxas -arch=sm_80: {{[1-9][0-9]*}} kernel modules, 0 failed
nn.parameter @w : !nn.tensor<[50, 16], f32>
nn.parameter @b : !nn.tensor<[50], f32>
nn.graph @g(%x: !nn.tensor<[B, T, 16], f32>, %y: !nn.tensor<[B, T], i32>)
    dims [B: batch, T: seq(B)] {
  %w = nn.param_ref @w : !nn.tensor<[50, 16], f32>
  %b = nn.param_ref @b : !nn.tensor<[50], f32>
  %h = nn.tanh %x : !nn.tensor<[B, T, 16], f32>
  %z = nn.linear %h, %w, %b : !nn.tensor<[B, T, 16], f32>, !nn.tensor<[50, 16], f32>, !nn.tensor<[50], f32>
  %lp = nn.log_softmax %z : !nn.tensor<[B, T, 50], f32>
  %ce = nn.cross_entropy %lp, %y from log_probs label_smoothing 1.000000e-01 : !nn.tensor<[B, T, 50], f32>, !nn.tensor<[B, T], i32>
  nn.mark_loss %ce as "ce" normalize per_frame : !nn.tensor<[B, T], f32>
  nn.return
}
