// nn-derive-step-graphs: a decoder's predictor written as training runs it
// (the sequence form) gets one derived step graph, whatever number of
// decoders name it: frame-wise ops on the label's row, dropout gone, each
// forward LSTM one cell step from (h, c) states it takes and returns, in
// body order. A step-form predictor is left alone; running the pass twice
// changes nothing more.
// RUN: nn-opt %s --nn-derive-step-graphs | FileCheck %s
// RUN: nn-opt %s --nn-derive-step-graphs --nn-derive-step-graphs | FileCheck %s

// The training network stays as it is, for the training graphs that call
// it.
// CHECK-LABEL: nn.graph @predictor(%y: !nn.tensor<[S, U], i32>)
// CHECK: nn.dropout
// CHECK: nn.lstm forward
// CHECK: nn.lstm forward

// CHECK-LABEL: nn.graph @predictor.step(%y: !nn.tensor<[S], i32>, %h0: !nn.tensor<[S, 4], f32>, %c0: !nn.tensor<[S, 4], f32>, %h1: !nn.tensor<[S, 2], f32>, %c1: !nn.tensor<[S, 2], f32>)
// CHECK-SAME: -> (!nn.tensor<[S, 4], f32>, !nn.tensor<[S, 4], f32>, !nn.tensor<[S, 4], f32>, !nn.tensor<[S, 2], f32>, !nn.tensor<[S, 2], f32>) dims [S: batch]
// CHECK: %[[E:.+]] = nn.param_ref @embed
// CHECK: %[[X:.+]] = nn.embedding %y, %[[E]] : !nn.tensor<[S], i32>, !nn.tensor<[5, 3], f32>
// CHECK-NOT: nn.dropout
// CHECK: %[[WI:.+]] = nn.param_ref @l1.w_ih
// CHECK: %[[WH:.+]] = nn.param_ref @l1.w_hh
// CHECK: %[[B:.+]] = nn.param_ref @l1.b
// CHECK: %[[ZX:.+]] = nn.linear %[[X]], %[[WI]], %[[B]] : !nn.tensor<[S, 3], f32>
// CHECK: %[[ZH:.+]] = nn.linear %h0, %[[WH]] : !nn.tensor<[S, 4], f32>
// CHECK: %[[Z:.+]] = nn.add %[[ZX]], %[[ZH]] : !nn.tensor<[S, 16], f32>
// CHECK: %[[ZI:.+]] = nn.slice_features %[[Z]] offset 0 width 4
// CHECK: %[[I:.+]] = nn.sigmoid %[[ZI]]
// CHECK: %[[ZF:.+]] = nn.slice_features %[[Z]] offset 4 width 4
// CHECK: %[[F:.+]] = nn.sigmoid %[[ZF]]
// CHECK: %[[ZG:.+]] = nn.slice_features %[[Z]] offset 8 width 4
// CHECK: %[[G:.+]] = nn.tanh %[[ZG]]
// CHECK: %[[ZO:.+]] = nn.slice_features %[[Z]] offset 12 width 4
// CHECK: %[[O:.+]] = nn.sigmoid %[[ZO]]
// CHECK: %[[FC:.+]] = nn.mul %[[F]], %c0
// CHECK: %[[IG:.+]] = nn.mul %[[I]], %[[G]]
// CHECK: %[[C:.+]] = nn.add %[[FC]], %[[IG]]
// CHECK: %[[TC:.+]] = nn.tanh %[[C]]
// CHECK: %[[H:.+]] = nn.mul %[[O]], %[[TC]]
// CHECK: nn.linear %[[H]], {{.*}} : !nn.tensor<[S, 4], f32>, !nn.tensor<[8, 4], f32>
// CHECK: nn.linear %h1,
// CHECK: %[[FC2:.+]] = nn.mul {{.*}}, %c1
// CHECK: %[[C2:.+]] = nn.add %[[FC2]],
// CHECK: %[[TC2:.+]] = nn.tanh %[[C2]]
// CHECK: %[[H2:.+]] = nn.mul {{.*}}, %[[TC2]]
// CHECK: %[[OUT:.+]] = nn.linear %[[H2]], {{.*}} : !nn.tensor<[S, 2], f32>, !nn.tensor<[4, 2], f32>
// CHECK: nn.return %[[OUT]], %[[H]], %[[C]], %[[H2]], %[[C2]]
// CHECK-NOT: nn.graph @predictor.step

// CHECK-LABEL: nn.graph @stepwise(
// CHECK-LABEL: nn.graph @decode(
// CHECK: nn.transducer_greedy_decode %enc predictor @predictor.step joiner @joiner
// CHECK: nn.transducer_beam_search %enc predictor @predictor.step joiner @joiner
// CHECK: nn.transducer_greedy_decode %enc predictor @stepwise joiner @joiner
nn.parameter @embed : !nn.tensor<[5, 3], f32>
nn.parameter @"l1.w_ih" : !nn.tensor<[16, 3], f32>
nn.parameter @"l1.w_hh" : !nn.tensor<[16, 4], f32>
nn.parameter @"l1.b" : !nn.tensor<[16], f32>
nn.parameter @"l2.w_ih" : !nn.tensor<[8, 4], f32>
nn.parameter @"l2.w_hh" : !nn.tensor<[8, 2], f32>
nn.parameter @"l2.b" : !nn.tensor<[8], f32>
nn.parameter @proj : !nn.tensor<[4, 2], f32>
nn.parameter @out : !nn.tensor<[5, 4], f32>
nn.graph @predictor(%y: !nn.tensor<[S, U], i32>) -> !nn.tensor<[S, U, 4], f32>
    dims [S: batch, U: seq(S)] {
  %e = nn.param_ref @embed : !nn.tensor<[5, 3], f32>
  %x = nn.embedding %y, %e : !nn.tensor<[S, U], i32>, !nn.tensor<[5, 3], f32>
  %d = nn.dropout %x rate 0.1 : !nn.tensor<[S, U, 3], f32>
  %wi = nn.param_ref @"l1.w_ih" : !nn.tensor<[16, 3], f32>
  %wh = nn.param_ref @"l1.w_hh" : !nn.tensor<[16, 4], f32>
  %b = nn.param_ref @"l1.b" : !nn.tensor<[16], f32>
  %h1 = nn.lstm forward %d, %wi, %wh, %b : !nn.tensor<[S, U, 3], f32>, !nn.tensor<[16, 3], f32>, !nn.tensor<[16, 4], f32>, !nn.tensor<[16], f32>
  %wi2 = nn.param_ref @"l2.w_ih" : !nn.tensor<[8, 4], f32>
  %wh2 = nn.param_ref @"l2.w_hh" : !nn.tensor<[8, 2], f32>
  %b2 = nn.param_ref @"l2.b" : !nn.tensor<[8], f32>
  %h2 = nn.lstm forward %h1, %wi2, %wh2, %b2 : !nn.tensor<[S, U, 4], f32>, !nn.tensor<[8, 4], f32>, !nn.tensor<[8, 2], f32>, !nn.tensor<[8], f32>
  %p = nn.param_ref @proj : !nn.tensor<[4, 2], f32>
  %o = nn.linear %h2, %p : !nn.tensor<[S, U, 2], f32>, !nn.tensor<[4, 2], f32>
  nn.return %o : !nn.tensor<[S, U, 4], f32>
}
nn.graph @joiner(%h: !nn.tensor<[R, 4], f32>) -> !nn.tensor<[R, 5], f32> dims [R: batch] {
  %w = nn.param_ref @out : !nn.tensor<[5, 4], f32>
  %t = nn.tanh %h : !nn.tensor<[R, 4], f32>
  %z = nn.linear %t, %w : !nn.tensor<[R, 4], f32>, !nn.tensor<[5, 4], f32>
  nn.return %z : !nn.tensor<[R, 5], f32>
}
nn.graph @stepwise(%y: !nn.tensor<[S], i32>) -> !nn.tensor<[S, 4], f32> dims [S: batch] {
  %w = nn.param_ref @out : !nn.tensor<[5, 4], f32>
  %e = nn.embedding %y, %w : !nn.tensor<[S], i32>, !nn.tensor<[5, 4], f32>
  nn.return %e : !nn.tensor<[S, 4], f32>
}
nn.graph @decode(%enc: !nn.tensor<[B, T, 4], f32>)
    -> (!nn.tensor<[B, Y], i32>, !nn.tensor<[B, Z], i32>, !nn.tensor<[B, X], i32>)
    dims [B: batch, T: seq(B), Y: seq(B) computed, Z: seq(B) computed, X: seq(B) computed] {
  %y, %s = nn.transducer_greedy_decode %enc predictor @predictor joiner @joiner topology rnnt blank 0 start 0 max_symbols 2
      : !nn.tensor<[B, T, 4], f32> -> !nn.tensor<[B, Y], i32>, !nn.tensor<[B], f32>
  %z, %zs = nn.transducer_beam_search %enc predictor @predictor joiner @joiner topology rna blank 0 start 0 beam 2
      : !nn.tensor<[B, T, 4], f32> -> !nn.tensor<[B, Z], i32>, !nn.tensor<[B], f32>
  %x, %xs = nn.transducer_greedy_decode %enc predictor @stepwise joiner @joiner topology rna blank 0 start 0
      : !nn.tensor<[B, T, 4], f32> -> !nn.tensor<[B, X], i32>, !nn.tensor<[B], f32>
  nn.return %y, %z, %x : !nn.tensor<[B, Y], i32>, !nn.tensor<[B, Z], i32>, !nn.tensor<[B, X], i32>
}
