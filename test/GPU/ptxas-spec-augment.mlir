// nn.spec_augment with a seed, padded and packed, compiles for the GPU
// (one kernel per op: every element hashes its own masks) and every
// kernel assembles with ptxas for sm_90 and sm_80. No GPU needed; nothing
// here has run on a GPU.
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

nn.graph @g(%x: !nn.tensor<[B, T, 40], f32>, %seed: !nn.tensor<[], i32>)
    -> (!nn.tensor<[B, T, 40], f32>, !nn.tensor<[N, 40], f32>)
    dims [B: batch, T: seq(B), N: packed(B, T)] {
  %a = nn.spec_augment %x seed %seed freq_masks 2 freq_width 8 time_masks 2 time_width 20 time_ratio 2.000000e-01 : !nn.tensor<[B, T, 40], f32>, !nn.tensor<[], i32>
  %p = nn.pack %x : !nn.tensor<[B, T, 40], f32> -> !nn.tensor<[N, 40], f32>
  %c = nn.spec_augment %p seed %seed freq_masks 2 freq_width 8 time_masks 2 time_width 20 key 1 : !nn.tensor<[N, 40], f32>, !nn.tensor<[], i32>
  nn.return %a, %c : !nn.tensor<[B, T, 40], f32>, !nn.tensor<[N, 40], f32>
}
