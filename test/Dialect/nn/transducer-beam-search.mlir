// Round trip of nn.transducer_beam_search: parse, print, parse again, and
// the generic form; N-best and best-only results, RNA and RNN-T.
// RUN: nn-opt %s | nn-opt | FileCheck %s
// RUN: nn-opt %s --mlir-print-op-generic | nn-opt | FileCheck %s

// CHECK-LABEL: nn.graph @beam
// CHECK: nn.transducer_beam_search %{{.*}} predictor @pred joiner @joint topology rnnt blank 0 start 0 beam 4 max_symbols 3 : !nn.tensor<[B, T, 4], f32> -> !nn.tensor<[B, K, Y], i32>, !nn.tensor<[B, K], f32>
// CHECK: nn.transducer_beam_search %{{.*}} predictor @pred joiner @joint topology rna blank 4 start 1 beam 2 : !nn.tensor<[B, T, 4], f32> -> !nn.tensor<[B, Z], i32>, !nn.tensor<[B], f32>
nn.parameter @embed : !nn.tensor<[5, 4], f32>
nn.graph @pred(%y: !nn.tensor<[S], i32>, %h: !nn.tensor<[S, 4], f32>)
    -> (!nn.tensor<[S, 4], f32>, !nn.tensor<[S, 4], f32>) dims [S: batch] {
  %e = nn.param_ref @embed : !nn.tensor<[5, 4], f32>
  %x = nn.embedding %y, %e : !nn.tensor<[S], i32>, !nn.tensor<[5, 4], f32>
  %a = nn.add %x, %h : !nn.tensor<[S, 4], f32>
  %n = nn.tanh %a : !nn.tensor<[S, 4], f32>
  nn.return %n, %n : !nn.tensor<[S, 4], f32>, !nn.tensor<[S, 4], f32>
}
nn.parameter @out : !nn.tensor<[5, 4], f32>
nn.graph @joint(%h: !nn.tensor<[R, 4], f32>) -> !nn.tensor<[R, 5], f32> dims [R: batch] {
  %w = nn.param_ref @out : !nn.tensor<[5, 4], f32>
  %t = nn.tanh %h : !nn.tensor<[R, 4], f32>
  %z = nn.linear %t, %w : !nn.tensor<[R, 4], f32>, !nn.tensor<[5, 4], f32>
  nn.return %z : !nn.tensor<[R, 5], f32>
}
nn.graph @beam(%enc: !nn.tensor<[B, T, 4], f32>)
    -> (!nn.tensor<[B, K, Y], i32>, !nn.tensor<[B, K], f32>)
    dims [B: batch, T: seq(B), K: seq(B) computed, H: batch = flatten(B, K),
          Y: seq(H) computed, Z: seq(B) computed] {
  %y, %s = nn.transducer_beam_search %enc predictor @pred joiner @joint topology rnnt blank 0 start 0 beam 4 max_symbols 3
      : !nn.tensor<[B, T, 4], f32> -> !nn.tensor<[B, K, Y], i32>, !nn.tensor<[B, K], f32>
  %z, %zs = nn.transducer_beam_search %enc predictor @pred joiner @joint topology rna blank 4 start 1 beam 2
      : !nn.tensor<[B, T, 4], f32> -> !nn.tensor<[B, Z], i32>, !nn.tensor<[B], f32>
  nn.return %y, %s : !nn.tensor<[B, K, Y], i32>, !nn.tensor<[B, K], f32>
}
