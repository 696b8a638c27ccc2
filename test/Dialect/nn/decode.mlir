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
