// The ops a Conformer adds, with their gradients: nn.attention
// (self-attention with a causal mask and a left context over rotary
// position embeddings, chunked self-attention with relative positions
// from nn.relative_positions, cross-attention from a second sequence
// dim with dropout on its weights), a
// depthwise conv1d, glu and silu, compile for the GPU with --grads, and
// every kernel assembles with ptxas for sm_90 and sm_80. No GPU needed.
// REQUIRES: ptxas, cuda-toolkit
//
// RUN: rm -rf %t && mkdir -p %t
// RUN: nn-run %s --grads %t/g.npz --target=cuda --compile-only --emit-gpu-code=%t/a90 | FileCheck %s
// RUN: %pyexe %S/Inputs/ptxas_all.py %ptxas sm_90 %t/a90 | FileCheck %s --check-prefix=OK90
// RUN: nn-run %s --grads %t/g.npz --target=cuda --gpu-chip=sm_80 --compile-only --emit-gpu-code=%t/a80
// RUN: %pyexe %S/Inputs/ptxas_all.py %ptxas sm_80 %t/a80 | FileCheck %s --check-prefix=OK80
// CHECK: compiled @g for cuda:
// CHECK-DAG: kernel g_k{{[0-9]+}}_attention
// CHECK-DAG: kernel g_k{{[0-9]+}}_attention_grad
// CHECK-DAG: kernel g_k{{[0-9]+}}_glu_grad
// CHECK-DAG: kernel g_k{{[0-9]+}}_rotary
// CHECK-DAG: kernel g_k{{[0-9]+}}_relative_positions
// CHECK-DAG: kernel g_k{{[0-9]+}}_conv1d_grad
// CHECK-DAG: kernel g_k{{[0-9]+}}_activation_grad
// OK90: ptxas -arch=sm_90: {{[1-9][0-9]*}} kernel modules, 0 failed
// OK80: ptxas -arch=sm_80: {{[1-9][0-9]*}} kernel modules, 0 failed
nn.parameter @wq : !nn.tensor<[8, 4], f32>
nn.parameter @wu : !nn.tensor<[8, 3], f32>
nn.parameter @wo : !nn.tensor<[5, 8], f32>
nn.parameter @wg : !nn.tensor<[16, 8], f32>
nn.parameter @dw : !nn.tensor<[8, 3, 1], f32>
nn.parameter @wpos : !nn.tensor<[8, 6], f32>
nn.graph @g(%x: !nn.tensor<[B, T, 4], f32>, %y: !nn.tensor<[B, T], i32>,
            %z: !nn.tensor<[B, U, 3], f32>, %l: !nn.tensor<[B, U], i32>,
            %seed: !nn.tensor<[], i32>)
    dims [B: batch, T: seq(B), U: seq(B)] {
  %wq = nn.param_ref @wq : !nn.tensor<[8, 4], f32>
  %wu = nn.param_ref @wu : !nn.tensor<[8, 3], f32>
  %wo = nn.param_ref @wo : !nn.tensor<[5, 8], f32>
  %wg = nn.param_ref @wg : !nn.tensor<[16, 8], f32>
  %dw = nn.param_ref @dw : !nn.tensor<[8, 3, 1], f32>
  %wpos = nn.param_ref @wpos : !nn.tensor<[8, 6], f32>
  %rp = nn.relative_positions %wpos : !nn.tensor<[8, 6], f32> -> !nn.tensor<[9, 8], f32>
  %q = nn.linear %x, %wq : !nn.tensor<[B, T, 4], f32>, !nn.tensor<[8, 4], f32>
  %qr = nn.rotary %q heads 2 : !nn.tensor<[B, T, 8], f32>
  %a = nn.attention %qr, %qr, %q heads 2 causal left_context 8 : !nn.tensor<[B, T, 8], f32>, !nn.tensor<[B, T, 8], f32>, !nn.tensor<[B, T, 8], f32>
  %h = nn.attention %a, %a, %q relative %qr, %rp heads 2 chunk_size 4 left_chunks 1 : !nn.tensor<[B, T, 8], f32>, !nn.tensor<[B, T, 8], f32>, !nn.tensor<[B, T, 8], f32>, !nn.tensor<[B, T, 8], f32>, !nn.tensor<[9, 8], f32>
  %p = nn.linear %h, %wg : !nn.tensor<[B, T, 8], f32>, !nn.tensor<[16, 8], f32>
  %g = nn.glu %p : !nn.tensor<[B, T, 16], f32>
  %d = nn.conv1d %g, %dw stride 1 groups 8 : (!nn.tensor<[B, T, 8], f32>, !nn.tensor<[8, 3, 1], f32>) -> !nn.tensor<[B, T, 8], f32>
  %s = nn.silu %d : !nn.tensor<[B, T, 8], f32>
  %o = nn.linear %s, %wo : !nn.tensor<[B, T, 8], f32>, !nn.tensor<[5, 8], f32>
  %ce = nn.cross_entropy %o, %y from logits : !nn.tensor<[B, T, 5], f32>, !nn.tensor<[B, T], i32>
  nn.mark_loss %ce as "ce" normalize per_frame : !nn.tensor<[B, T], f32>
  %u = nn.linear %z, %wu : !nn.tensor<[B, U, 3], f32>, !nn.tensor<[8, 3], f32>
  %c = nn.attention %u, %h, %q seed %seed heads 1 dropout 2.500000e-01 dropout_key 1 : !nn.tensor<[B, U, 8], f32>, !nn.tensor<[B, T, 8], f32>, !nn.tensor<[B, T, 8], f32>, !nn.tensor<[], i32>
  %co = nn.linear %c, %wo : !nn.tensor<[B, U, 8], f32>, !nn.tensor<[5, 8], f32>
  %ce2 = nn.cross_entropy %co, %l from logits : !nn.tensor<[B, U, 5], f32>, !nn.tensor<[B, U], i32>
  nn.mark_loss %ce2 as "cross" normalize per_frame : !nn.tensor<[B, U], f32>
  nn.return
}
