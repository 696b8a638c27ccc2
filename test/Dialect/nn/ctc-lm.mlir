// CTC prefix beam search with shallow fusion: the language-model
// attributes round-trip, and the LM graph (an embedding + LSTM step written
// in the dialect) is a callee of the search.
// RUN: nn-opt %s | FileCheck %s
// RUN: nn-opt %s | nn-opt | FileCheck %s

nn.parameter @embed : !nn.tensor<[5, 3], f32>
nn.parameter @wi : !nn.tensor<[4, 7], f32>
nn.parameter @wf : !nn.tensor<[4, 7], f32>
nn.parameter @wg : !nn.tensor<[4, 7], f32>
nn.parameter @wo : !nn.tensor<[4, 7], f32>
nn.parameter @out : !nn.tensor<[5, 4], f32>
// CHECK-LABEL: nn.graph @lm
nn.graph @lm(%y: !nn.tensor<[S], i32>, %h: !nn.tensor<[S, 4], f32>, %c: !nn.tensor<[S, 4], f32>)
    -> (!nn.tensor<[S, 5], f32>, !nn.tensor<[S, 4], f32>, !nn.tensor<[S, 4], f32>) dims [S: batch] {
  %e = nn.param_ref @embed : !nn.tensor<[5, 3], f32>
  %x = nn.embedding %y, %e : !nn.tensor<[S], i32>, !nn.tensor<[5, 3], f32>
  %xh = nn.concat %x, %h : !nn.tensor<[S, 3], f32>, !nn.tensor<[S, 4], f32>
  %wi = nn.param_ref @wi : !nn.tensor<[4, 7], f32>
  %wf = nn.param_ref @wf : !nn.tensor<[4, 7], f32>
  %wg = nn.param_ref @wg : !nn.tensor<[4, 7], f32>
  %wo = nn.param_ref @wo : !nn.tensor<[4, 7], f32>
  %zi = nn.linear %xh, %wi : !nn.tensor<[S, 7], f32>, !nn.tensor<[4, 7], f32>
  %zf = nn.linear %xh, %wf : !nn.tensor<[S, 7], f32>, !nn.tensor<[4, 7], f32>
  %zg = nn.linear %xh, %wg : !nn.tensor<[S, 7], f32>, !nn.tensor<[4, 7], f32>
  %zo = nn.linear %xh, %wo : !nn.tensor<[S, 7], f32>, !nn.tensor<[4, 7], f32>
  %i = nn.sigmoid %zi : !nn.tensor<[S, 4], f32>
  %f = nn.sigmoid %zf : !nn.tensor<[S, 4], f32>
  %g = nn.tanh %zg : !nn.tensor<[S, 4], f32>
  %o = nn.sigmoid %zo : !nn.tensor<[S, 4], f32>
  %fc = nn.mul %f, %c : !nn.tensor<[S, 4], f32>
  %ig = nn.mul %i, %g : !nn.tensor<[S, 4], f32>
  %c1 = nn.add %fc, %ig : !nn.tensor<[S, 4], f32>
  %tc = nn.tanh %c1 : !nn.tensor<[S, 4], f32>
  %h1 = nn.mul %o, %tc : !nn.tensor<[S, 4], f32>
  %w = nn.param_ref @out : !nn.tensor<[5, 4], f32>
  %z = nn.linear %h1, %w : !nn.tensor<[S, 4], f32>, !nn.tensor<[5, 4], f32>
  nn.return %z, %h1, %c1 : !nn.tensor<[S, 5], f32>, !nn.tensor<[S, 4], f32>, !nn.tensor<[S, 4], f32>
}

// CHECK-LABEL: nn.graph @search
// CHECK: nn.ctc_beam_search %{{.*}} from logits blank 0 beam 4 merge sum lm @lm from logits weight 5.000000e-01 start 0 : !nn.tensor<[B, T, 5], f32> -> !nn.tensor<[B, Y], i32>, !nn.tensor<[B], f32>
// CHECK: nn.ctc_beam_search %{{.*}} from log_probs blank 4 beam 2 merge max token_beam 3 lm @lm from logits weight 1.250000e+00 start 4 end 4 length_bonus -5.000000e-01 : !nn.tensor<[B, T, 5], f32> -> !nn.tensor<[B, K, Z], i32>, !nn.tensor<[B, K], f32>
nn.graph @search(%z: !nn.tensor<[B, T, 5], f32>) -> (!nn.tensor<[B, Y], i32>, !nn.tensor<[B], f32>)
    dims [B: batch, T: seq(B), Y: seq(B) computed, K: seq(B) computed, H: batch = flatten(B, K), Z: seq(H) computed] {
  %y, %s = nn.ctc_beam_search %z from logits blank 0 beam 4 merge sum lm @lm from logits weight 0.5 start 0
      : !nn.tensor<[B, T, 5], f32> -> !nn.tensor<[B, Y], i32>, !nn.tensor<[B], f32>
  %n, %ns = nn.ctc_beam_search %z from log_probs blank 4 beam 2 merge max token_beam 3 lm @lm from logits weight 1.25 start 4 end 4 length_bonus -0.5
      : !nn.tensor<[B, T, 5], f32> -> !nn.tensor<[B, K, Z], i32>, !nn.tensor<[B, K], f32>
  nn.return %y, %s : !nn.tensor<[B, Y], i32>, !nn.tensor<[B], f32>
}
