// nn.viterbi_align (CTC and RNA topologies, from logits and log-probs,
// with a prior)
// compiles for the GPU, and every kernel assembles with ptxas for sm_90
// and sm_80. No GPU needed.
// REQUIRES: ptxas, cuda-toolkit
//
// RUN: rm -rf %t && mkdir -p %t
// RUN: nn-run %s --target=cuda --compile-only --emit-gpu-code=%t/a90 | FileCheck %s
// RUN: %pyexe %S/Inputs/ptxas_all.py %ptxas sm_90 %t/a90 | FileCheck %s --check-prefix=OK90
// RUN: nn-run %s --target=cuda --gpu-chip=sm_80 --compile-only --emit-gpu-code=%t/a80
// RUN: %pyexe %S/Inputs/ptxas_all.py %ptxas sm_80 %t/a80 | FileCheck %s --check-prefix=OK80
// CHECK: compiled @g for cuda:
// CHECK-DAG: kernel g_k{{[0-9]+}}_viterbi_align
// OK90: ptxas -arch=sm_90: {{[1-9][0-9]*}} kernel modules, 0 failed
// OK80: ptxas -arch=sm_80: {{[1-9][0-9]*}} kernel modules, 0 failed
nn.parameter @prior : !nn.tensor<[5], f32>
nn.graph @g(%x: !nn.tensor<[B, T, 5], f32>, %y: !nn.tensor<[B, U], i32>)
    -> (!nn.tensor<[B, T], i32>, !nn.tensor<[B], f32>, !nn.tensor<[B, T], i32>, !nn.tensor<[B], f32>, !nn.tensor<[B, T], i32>, !nn.tensor<[B], f32>)
    dims [B: batch, T: seq(B), U: seq(B)] {
  %p = nn.param_ref @prior : !nn.tensor<[5], f32>
  %ca, %cs = nn.viterbi_align %x, %y from logits topology ctc blank 0 : !nn.tensor<[B, T, 5], f32>, !nn.tensor<[B, U], i32>
  %ra, %rs = nn.viterbi_align %x, %y from log_probs topology rna blank 4 : !nn.tensor<[B, T, 5], f32>, !nn.tensor<[B, U], i32>
  %pa, %ps = nn.viterbi_align %x, %y from logits topology ctc blank 0 prior %p : !nn.tensor<[B, T, 5], f32>, !nn.tensor<[B, U], i32>, !nn.tensor<[5], f32>
  nn.return %ca, %cs, %ra, %rs, %pa, %ps : !nn.tensor<[B, T], i32>, !nn.tensor<[B], f32>, !nn.tensor<[B, T], i32>, !nn.tensor<[B], f32>, !nn.tensor<[B, T], i32>, !nn.tensor<[B], f32>
}
