// N-best lists compile for the GPU: the prefix search's N-best results
// (the runtime's search on managed memory, the lengths of K and Y host
// loops), the beam ops (flatten and unflatten as host copies, repeat and
// sum_beam as kernels that gather through the flattened batch), a CTC
// loss over the hypotheses and the MWER loss (expected_risk over their
// edit distances) with their gradients; every kernel assembles with ptxas
// for sm_90. No GPU needed; nothing here has run on a GPU.
// REQUIRES: ptxas, cuda-toolkit
//
// RUN: rm -rf %t && mkdir -p %t
// RUN: nn-run %s --target=cuda --compile-only --grads=%t/g.npz --emit-gpu-code=%t/a90 | FileCheck %s
// RUN: %pyexe %S/Inputs/ptxas_all.py %ptxas sm_90 %t/a90 | FileCheck %s --check-prefix=OK90
// CHECK: compiled @g for cuda:
// OK90: ptxas -arch=sm_90: {{[1-9][0-9]*}} kernel modules, 0 failed
nn.parameter @w : !nn.tensor<[6, 6], f32>
nn.graph @g(%x: !nn.tensor<[B, T, 6], f32>, %r: !nn.tensor<[B, U], i32>)
    -> (!nn.tensor<[B, K, Y], i32>, !nn.tensor<[B, K], f32>)
    dims [B: batch, T: seq(B), U: seq(B), K: seq(B) computed,
          H: batch = flatten(B, K), Y: seq(H) computed, TH: seq(H) = T,
          UH: seq(H) = U] {
  %w = nn.param_ref @w : !nn.tensor<[6, 6], f32>
  %z = nn.linear %x, %w : !nn.tensor<[B, T, 6], f32>, !nn.tensor<[6, 6], f32>
  %y, %s = nn.ctc_beam_search %z from logits blank 0 beam 4 merge sum : !nn.tensor<[B, T, 6], f32> -> !nn.tensor<[B, K, Y], i32>, !nn.tensor<[B, K], f32>
  %yh = nn.flatten_beam %y : !nn.tensor<[B, K, Y], i32> -> !nn.tensor<[H, Y], i32>
  %zh = nn.repeat_beam %z : !nn.tensor<[B, T, 6], f32> -> !nn.tensor<[H, TH, 6], f32>
  %c = nn.ctc_loss %zh, %yh from logits blank 0 zero_infinity : !nn.tensor<[H, TH, 6], f32>, !nn.tensor<[H, Y], i32>
  nn.mark_loss %c as "rescored" normalize per_sequence : !nn.tensor<[H], f32>
  %ck = nn.unflatten_beam %c : !nn.tensor<[H], f32> -> !nn.tensor<[B, K], f32>
  %rh = nn.repeat_beam %r : !nn.tensor<[B, U], i32> -> !nn.tensor<[H, UH], i32>
  %e, %n, %counts = nn.edit_distance %yh, %rh : !nn.tensor<[H, Y], i32>, !nn.tensor<[H, UH], i32>
  %ek = nn.unflatten_beam %e : !nn.tensor<[H], f32> -> !nn.tensor<[B, K], f32>
  %risk = nn.expected_risk %ck, %ek baseline mean : !nn.tensor<[B, K], f32>, !nn.tensor<[B, K], f32>
  nn.mark_loss %risk as "mwer" normalize per_sequence : !nn.tensor<[B], f32>
  nn.return %y, %ck : !nn.tensor<[B, K, Y], i32>, !nn.tensor<[B, K], f32>
}
