// CTC decoding compiles for the GPU, padded and packed: greedy (the
// per-frame best class is a kernel, the collapse a host loop over managed
// memory) and the prefix beam search (log-softmax kernels, then the
// runtime's search on managed memory); every kernel assembles with ptxas
// for sm_90. No GPU needed.
// REQUIRES: ptxas, cuda-toolkit
//
// RUN: rm -rf %t && mkdir -p %t
// RUN: nn-run %s --target=cuda --compile-only --emit-gpu-code=%t/a90 | FileCheck %s
// RUN: %pyexe %S/Inputs/ptxas_all.py %ptxas sm_90 %t/a90 | FileCheck %s --check-prefix=OK90
// CHECK: compiled @g for cuda:
// OK90: ptxas -arch=sm_90: {{[1-9][0-9]*}} kernel modules, 0 failed
nn.graph @g(%x: !nn.tensor<[B, T, 6], f32>)
    -> (!nn.tensor<[B, Y], i32>, !nn.tensor<[B], f32>, !nn.tensor<[B, Z], i32>, !nn.tensor<[B], f32>, !nn.tensor<[B, W], i32>)
    dims [B: batch, T: seq(B), N: packed(B, T), Y: seq(B) computed, Z: seq(B) computed, W: seq(B) computed] {
  %y, %s = nn.ctc_greedy_decode %x from logits blank 0 : !nn.tensor<[B, T, 6], f32> -> !nn.tensor<[B, Y], i32>, !nn.tensor<[B], f32>
  %p = nn.pack %x : !nn.tensor<[B, T, 6], f32> -> !nn.tensor<[N, 6], f32>
  %z, %zs = nn.ctc_greedy_decode %p from log_probs blank 5 : !nn.tensor<[N, 6], f32> -> !nn.tensor<[B, Z], i32>, !nn.tensor<[B], f32>
  %w, %ws = nn.ctc_beam_search %x from logits blank 0 beam 4 merge sum : !nn.tensor<[B, T, 6], f32> -> !nn.tensor<[B, W], i32>, !nn.tensor<[B], f32>
  nn.return %y, %s, %z, %zs, %w : !nn.tensor<[B, Y], i32>, !nn.tensor<[B], f32>, !nn.tensor<[B, Z], i32>, !nn.tensor<[B], f32>, !nn.tensor<[B, W], i32>
}
