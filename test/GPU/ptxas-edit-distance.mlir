// nn.edit_distance, over labels and over words, compiles for the GPU
// beside a loss it is reported with (its dynamic programme runs as host
// loops over managed memory; the losses' reductions are kernels), and every kernel assembles with ptxas
// for sm_90 and sm_80. No GPU needed; nothing here has run on a GPU.
// REQUIRES: ptxas, cuda-toolkit
//
// RUN: rm -rf %t && mkdir -p %t
// RUN: nn-run %s --target=cuda --compile-only --emit-gpu-code=%t/a90 | FileCheck %s
// RUN: %pyexe %S/Inputs/ptxas_all.py %ptxas sm_90 %t/a90 | FileCheck %s --check-prefix=OK90
// RUN: nn-run %s --target=cuda --gpu-chip=sm_80 --compile-only --emit-gpu-code=%t/a80
// RUN: %pyexe %S/Inputs/ptxas_all.py %ptxas sm_80 %t/a80 | FileCheck %s --check-prefix=OK80
// CHECK: compiled @g for cuda:
// OK90: ptxas -arch=sm_90: {{[1-9][0-9]*}} kernel modules, 0 failed
// OK80: ptxas -arch=sm_80: {{[1-9][0-9]*}} kernel modules, 0 failed
nn.graph @g(%hyp: !nn.tensor<[B, Y], i32>, %ref: !nn.tensor<[B, U], i32>)
    -> (!nn.tensor<[B], f32>, !nn.tensor<[B, 3], i32>)
    dims [B: batch, Y: seq(B), U: seq(B)] {
  %e, %n, %c = nn.edit_distance %hyp, %ref : !nn.tensor<[B, Y], i32>, !nn.tensor<[B, U], i32>
  nn.mark_loss %e, %n as "ler" normalize custom as_error : !nn.tensor<[B], f32>, !nn.tensor<[B], f32>
  %we, %wn, %wc = nn.edit_distance %hyp, %ref words separator 1 : !nn.tensor<[B, Y], i32>, !nn.tensor<[B, U], i32>
  nn.mark_loss %we, %wn as "wer" normalize custom as_error : !nn.tensor<[B], f32>, !nn.tensor<[B], f32>
  nn.return %e, %c : !nn.tensor<[B], f32>, !nn.tensor<[B, 3], i32>
}
