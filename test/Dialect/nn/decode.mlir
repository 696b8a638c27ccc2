// Round trip of the decoding ops and of computed dims: parse, print,
// parse again, and the generic form.
// RUN: nn-opt %s | nn-opt | FileCheck %s
// RUN: nn-opt %s --mlir-print-op-generic | nn-opt | FileCheck %s

// CHECK-LABEL: nn.graph @greedy
// CHECK-SAME: dims [B: batch, T: seq(B), Y: seq(B) computed, Y1: seq(B) = Y + 1, NY: packed(B, Y)]
// CHECK: %{{.*}}, %{{.*}} = nn.ctc_greedy_decode %{{.*}} from logits blank 0 : !nn.tensor<[B, T, 8], f32> -> !nn.tensor<[B, Y], i32>, !nn.tensor<[B], f32>
nn.graph @greedy(%z: !nn.tensor<[B, T, 8], f32>)
    -> (!nn.tensor<[B, Y], i32>, !nn.tensor<[B], f32>)
    dims [B: batch, T: seq(B), Y: seq(B) computed, Y1: seq(B) = Y + 1, NY: packed(B, Y)] {
  %y, %s = nn.ctc_greedy_decode %z from logits blank 0
      : !nn.tensor<[B, T, 8], f32> -> !nn.tensor<[B, Y], i32>, !nn.tensor<[B], f32>
  nn.return %y, %s : !nn.tensor<[B, Y], i32>, !nn.tensor<[B], f32>
}

// CHECK-LABEL: nn.graph @packed
// CHECK: nn.ctc_greedy_decode %{{.*}} from log_probs blank 3 : !nn.tensor<[N, 4], f64> -> !nn.tensor<[B, Y], i32>, !nn.tensor<[B], f64>
nn.graph @packed(%z: !nn.tensor<[N, 4], f64>) -> !nn.tensor<[B, Y], i32>
    dims [B: batch, T: seq(B), N: packed(B, T), Y: seq(B) computed] {
  %y, %s = nn.ctc_greedy_decode %z from log_probs blank 3
      : !nn.tensor<[N, 4], f64> -> !nn.tensor<[B, Y], i32>, !nn.tensor<[B], f64>
  nn.return %y : !nn.tensor<[B, Y], i32>
}

// CHECK-LABEL: nn.graph @beam
// CHECK: nn.ctc_beam_search %{{.*}} from logits blank 0 beam 8 merge sum : !nn.tensor<[B, T, 8], f32> -> !nn.tensor<[B, Y], i32>, !nn.tensor<[B], f32>
// CHECK: nn.ctc_beam_search %{{.*}} from log_probs blank 1 beam 2 merge max token_beam 4 token_threshold 1.000000e+01 score_beam 5.000000e+00 : !nn.tensor<[N, 8], f32> -> !nn.tensor<[B, Z], i32>, !nn.tensor<[B], f32>
nn.graph @beam(%z: !nn.tensor<[B, T, 8], f32>, %p: !nn.tensor<[N, 8], f32>) -> !nn.tensor<[B, Y], i32>
    dims [B: batch, T: seq(B), N: packed(B, T), Y: seq(B) computed, Z: seq(B) computed] {
  %y, %s = nn.ctc_beam_search %z from logits blank 0 beam 8 merge sum
      : !nn.tensor<[B, T, 8], f32> -> !nn.tensor<[B, Y], i32>, !nn.tensor<[B], f32>
  %q, %qs = nn.ctc_beam_search %p from log_probs blank 1 beam 2 merge max token_beam 4 token_threshold 10.0 score_beam 5.0
      : !nn.tensor<[N, 8], f32> -> !nn.tensor<[B, Z], i32>, !nn.tensor<[B], f32>
  nn.return %y : !nn.tensor<[B, Y], i32>
}

// Transducer greedy decoding through callee graphs over a row batch: an
// LSTM-free predictor with one state, a joiner, RNN-T and RNA.
// CHECK-LABEL: nn.graph @transducer_pred
// CHECK-LABEL: nn.graph @transducer_greedy
// CHECK: nn.transducer_greedy_decode %{{.*}} predictor @transducer_pred joiner @transducer_joint topology rnnt blank 0 start 0 max_symbols 3 : !nn.tensor<[B, T, 4], f32> -> !nn.tensor<[B, Y], i32>, !nn.tensor<[B], f32>
// CHECK: nn.transducer_greedy_decode %{{.*}} predictor @transducer_pred joiner @transducer_joint topology rna blank 4 start 1 : !nn.tensor<[B, T, 4], f32> -> !nn.tensor<[B, Z], i32>, !nn.tensor<[B], f32>
nn.parameter @transducer_embed : !nn.tensor<[5, 4], f32>
nn.graph @transducer_pred(%y: !nn.tensor<[S], i32>, %h: !nn.tensor<[S, 4], f32>)
    -> (!nn.tensor<[S, 4], f32>, !nn.tensor<[S, 4], f32>) dims [S: batch] {
  %e = nn.param_ref @transducer_embed : !nn.tensor<[5, 4], f32>
  %x = nn.embedding %y, %e : !nn.tensor<[S], i32>, !nn.tensor<[5, 4], f32>
  %a = nn.add %x, %h : !nn.tensor<[S, 4], f32>
  %n = nn.tanh %a : !nn.tensor<[S, 4], f32>
  nn.return %n, %n : !nn.tensor<[S, 4], f32>, !nn.tensor<[S, 4], f32>
}
nn.parameter @transducer_out : !nn.tensor<[5, 4], f32>
nn.graph @transducer_joint(%h: !nn.tensor<[R, 4], f32>) -> !nn.tensor<[R, 5], f32> dims [R: batch] {
  %w = nn.param_ref @transducer_out : !nn.tensor<[5, 4], f32>
  %t = nn.tanh %h : !nn.tensor<[R, 4], f32>
  %z = nn.linear %t, %w : !nn.tensor<[R, 4], f32>, !nn.tensor<[5, 4], f32>
  nn.return %z : !nn.tensor<[R, 5], f32>
}
nn.graph @transducer_greedy(%enc: !nn.tensor<[B, T, 4], f32>)
    -> (!nn.tensor<[B, Y], i32>, !nn.tensor<[B], f32>)
    dims [B: batch, T: seq(B), Y: seq(B) computed, Z: seq(B) computed] {
  %y, %s = nn.transducer_greedy_decode %enc predictor @transducer_pred joiner @transducer_joint topology rnnt blank 0 start 0 max_symbols 3
      : !nn.tensor<[B, T, 4], f32> -> !nn.tensor<[B, Y], i32>, !nn.tensor<[B], f32>
  %z, %zs = nn.transducer_greedy_decode %enc predictor @transducer_pred joiner @transducer_joint topology rna blank 4 start 1
      : !nn.tensor<[B, T, 4], f32> -> !nn.tensor<[B, Z], i32>, !nn.tensor<[B], f32>
  nn.return %y, %s : !nn.tensor<[B, Y], i32>, !nn.tensor<[B], f32>
}

// Written once, used in training: the same joiner called on the packed
// joint rows [J, 4] of nn.transducer_join (its row batch R binds the
// caller's packed J: a batch over which the callee declares no sequence
// dim counts rows).
// CHECK-LABEL: nn.graph @transducer_train
// CHECK: %[[J:.+]] = nn.transducer_join
// CHECK: nn.call @transducer_joint(%[[J]]) : (!nn.tensor<[J, 4], f32>) -> !nn.tensor<[J, 5], f32>
nn.graph @transducer_train(%enc: !nn.tensor<[B, T, 4], f32>, %pred: !nn.tensor<[B, U1, 4], f32>, %l: !nn.tensor<[B, U], i32>)
    -> !nn.tensor<[B], f32>
    dims [B: batch, T: seq(B), U: seq(B), U1: seq(B) = U + 1, J: packed(B, T, U1)] {
  %j = nn.transducer_join %enc, %pred : !nn.tensor<[B, T, 4], f32>, !nn.tensor<[B, U1, 4], f32> -> !nn.tensor<[J, 4], f32>
  %z = nn.call @transducer_joint(%j) : (!nn.tensor<[J, 4], f32>) -> !nn.tensor<[J, 5], f32>
  %loss = nn.transducer_loss %z, %l from logits topology rnnt blank 0 : !nn.tensor<[J, 5], f32>, !nn.tensor<[B, U], i32>
  nn.return %loss : !nn.tensor<[B], f32>
}
