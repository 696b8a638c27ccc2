// RUN: nn-opt %s --split-input-file --nn-convert-to-linalg | FileCheck %s

// The decoding family (DecodePatterns.cpp). ctc_greedy_decode: one
// reduction finds each frame's largest value (maxnumf: NaN ignored), one
// the lowest index holding it (a min over indices: any reduction order
// gives it), one sums exp(x - best) for the score from logits, then a
// loop over the batch collapses and counts. The count
// binds the computed dim Y (padded size: the longest count, at least 1);
// Y1 = Y + 1 is derived after it, and the function returns Y's lengths
// after its results and before the loss terms.

// CHECK-LABEL: func.func @decode
// CHECK-SAME: -> (tensor<?x?xi32>, tensor<?xf32>, tensor<?xi32>, tensor<f64>, tensor<f64>)
// CHECK: %[[BEST:.+]] = linalg.generic {{.*}}iterator_types = ["parallel", "parallel", "reduction"]
// CHECK: arith.maxnumf
// CHECK: linalg.generic {{.*}}ins(%{{.*}}, %[[BEST]] :
// CHECK: linalg.index 2
// CHECK: arith.cmpf oeq
// CHECK: arith.minsi
// CHECK: linalg.generic {{.*}}ins(%{{.*}}, %[[BEST]] :
// CHECK: math.exp
// CHECK: %[[LOOP:.+]]:5 = scf.for
// CHECK: scf.for
// CHECK: math.log
// CHECK: scf.if
// CHECK: tensor.insert
// CHECK: %[[HYP:.+]] = tensor.extract_slice %[[LOOP]]#0[0, 0] [%{{.*}}, %[[LOOP]]#3] [1, 1]
// Y1's lengths follow from Y's: + 1.
// CHECK: linalg.generic {{.*}}ins(%[[LOOP]]#1 : tensor<?xi32>)
// CHECK: arith.addi
// CHECK: return %{{.*}}, %[[LOOP]]#2, %[[LOOP]]#1, %{{.*}}, %{{.*}} : tensor<?x?xi32>, tensor<?xf32>, tensor<?xi32>, tensor<f64>, tensor<f64>
nn.graph @decode(%x: !nn.tensor<[B, T, 4], f32>) -> (!nn.tensor<[B, Y1], i32>, !nn.tensor<[B], f32>)
    dims [B: batch, T: seq(B), Y: seq(B) computed, Y1: seq(B) = Y + 1] {
  %y, %s = nn.ctc_greedy_decode %x from logits blank 0 : !nn.tensor<[B, T, 4], f32> -> !nn.tensor<[B, Y], i32>, !nn.tensor<[B], f32>
  %c = nn.ctc_loss %x, %y from logits blank 0 : !nn.tensor<[B, T, 4], f32>, !nn.tensor<[B, Y], i32>
  nn.mark_loss %c as "best" normalize per_sequence : !nn.tensor<[B], f32>
  %y1 = nn.prepend_start %y start 0 : !nn.tensor<[B, Y], i32> -> !nn.tensor<[B, Y1], i32>
  nn.return %y1, %s : !nn.tensor<[B, Y1], i32>, !nn.tensor<[B], f32>
}

// -----

// A callee that computes a dim it does not return still returns its
// lengths; the call drops them.

// CHECK-LABEL: func.func @score
// CHECK-SAME: -> (tensor<?xf32>, tensor<?xi32>)
// CHECK-LABEL: func.func @caller
// CHECK: %[[R:.+]]:2 = call @score({{.*}}) : ({{.*}}) -> (tensor<?xf32>, tensor<?xi32>)
// CHECK: return %[[R]]#0 : tensor<?xf32>
nn.graph @score(%x: !nn.tensor<[B, T, 4], f32>) -> !nn.tensor<[B], f32>
    dims [B: batch, T: seq(B), Y: seq(B) computed] {
  %y, %s = nn.ctc_greedy_decode %x from log_probs blank 0 : !nn.tensor<[B, T, 4], f32> -> !nn.tensor<[B, Y], i32>, !nn.tensor<[B], f32>
  nn.return %s : !nn.tensor<[B], f32>
}
nn.graph @caller(%x: !nn.tensor<[B, T, 4], f32>) -> !nn.tensor<[B], f32>
    dims [B: batch, T: seq(B)] {
  %s = nn.call @score(%x) : (!nn.tensor<[B, T, 4], f32>) -> !nn.tensor<[B], f32>
  nn.return %s : !nn.tensor<[B], f32>
}

// -----

// transducer_greedy_decode: the predictor's first step on the start
// symbol and zero states; a loop over frames, one over decision rounds
// (max_symbols) skipped once no row emits; per round the frame plus the
// prediction for the rows still deciding, the joiner called on all rows
// (its row batch bound to B, its parameter passed on), the best class as
// in greedy CTC, a loop over rows that scores and emits, and the predictor
// run only when a row emitted, its rows selected per emitting row. The
// label count binds Y.

// CHECK-LABEL: func.func @decode
// CHECK-SAME: (%[[B:.+]]: index, %[[T:.+]]: index, %[[LEN:.+]]: tensor<?xi32>, %[[ENC:.+]]: tensor<?x?x4xf32>, %[[EMBED:.+]]: tensor<5x4xf32>, %[[OUT:.+]]: tensor<5x4xf32>)
// CHECK-SAME: -> (tensor<?x?xi32>, tensor<?xf32>, tensor<?xi32>)
// CHECK: %[[P0:.+]]:2 = call @pred(%[[B]], %{{.*}}, %{{.*}}, %[[EMBED]])
// CHECK: %[[FRAMES:.+]]:6 = scf.for %[[TI:.+]] = %{{.*}} to %[[T]]
// CHECK: tensor.extract %[[LEN]]
// CHECK: scf.for %{{.*}} = %{{.*}} to %c3
// CHECK: scf.if
// CHECK: tensor.extract %[[ENC]][%{{.*}}, %[[TI]], %{{.*}}]
// CHECK: arith.addf
// CHECK: func.call @joint(%[[B]], %{{.*}}, %[[OUT]])
// CHECK: arith.maxnumf
// CHECK: arith.minsi
// CHECK: math.exp
// CHECK: %[[ROWS:.+]]:7 = scf.for %{{.*}} = %{{.*}} to %[[B]]
// CHECK: math.log
// CHECK: scf.if
// CHECK: tensor.insert
// CHECK: scf.if %[[ROWS]]#6
// CHECK: func.call @pred(%[[B]], %[[ROWS]]#4, %{{.*}}, %[[EMBED]])
// CHECK: linalg.generic {{.*}}ins(%[[ROWS]]#3,
// CHECK: arith.select
// CHECK: %[[HYP:.+]] = tensor.extract_slice %[[FRAMES]]#0[0, 0] [%[[B]], %[[FRAMES]]#3] [1, 1]
// CHECK: arith.truncf
// CHECK: return %[[HYP]], %{{.*}}, %[[FRAMES]]#1 : tensor<?x?xi32>, tensor<?xf32>, tensor<?xi32>
nn.parameter @embed : !nn.tensor<[5, 4], f32>
nn.graph @pred(%y: !nn.tensor<[S], i32>, %h: !nn.tensor<[S, 4], f32>)
    -> (!nn.tensor<[S, 4], f32>, !nn.tensor<[S, 4], f32>) dims [S: batch] {
  %e = nn.param_ref @embed : !nn.tensor<[5, 4], f32>
  %x = nn.embedding %y, %e : !nn.tensor<[S], i32>, !nn.tensor<[5, 4], f32>
  %a = nn.add %x, %h : !nn.tensor<[S, 4], f32>
  nn.return %a, %a : !nn.tensor<[S, 4], f32>, !nn.tensor<[S, 4], f32>
}
nn.parameter @out : !nn.tensor<[5, 4], f32>
nn.graph @joint(%h: !nn.tensor<[R, 4], f32>) -> !nn.tensor<[R, 5], f32> dims [R: batch] {
  %w = nn.param_ref @out : !nn.tensor<[5, 4], f32>
  %z = nn.linear %h, %w : !nn.tensor<[R, 4], f32>, !nn.tensor<[5, 4], f32>
  nn.return %z : !nn.tensor<[R, 5], f32>
}
nn.graph @decode(%enc: !nn.tensor<[B, T, 4], f32>)
    -> (!nn.tensor<[B, Y], i32>, !nn.tensor<[B], f32>)
    dims [B: batch, T: seq(B), Y: seq(B) computed] {
  %y, %s = nn.transducer_greedy_decode %enc predictor @pred joiner @joint topology rnnt blank 0 start 0 max_symbols 3
      : !nn.tensor<[B, T, 4], f32> -> !nn.tensor<[B, Y], i32>, !nn.tensor<[B], f32>
  nn.return %y, %s : !nn.tensor<[B, Y], i32>, !nn.tensor<[B], f32>
}

// -----

// The row-batch rule in the lowering: a callee's row batch bound to the
// caller's packed joint rows J is passed J's size.

// CHECK-LABEL: func.func @train
// CHECK: %[[J:.+]] = scf.for
// CHECK: tensor.empty(%[[J]]) : tensor<?x4xf32>
// CHECK: %[[JOIN:.+]]:2 = scf.for
// CHECK: call @rows(%[[J]], %[[JOIN]]#0) : (index, tensor<?x4xf32>) -> tensor<?x4xf32>
nn.graph @rows(%h: !nn.tensor<[R, 4], f32>) -> !nn.tensor<[R, 4], f32> dims [R: batch] {
  %t = nn.tanh %h : !nn.tensor<[R, 4], f32>
  nn.return %t : !nn.tensor<[R, 4], f32>
}
nn.graph @train(%enc: !nn.tensor<[B, T, 4], f32>, %pred: !nn.tensor<[B, U1, 4], f32>)
    -> !nn.tensor<[J, 4], f32>
    dims [B: batch, T: seq(B), U: seq(B), U1: seq(B) = U + 1, J: packed(B, T, U1)] {
  %j = nn.transducer_join %enc, %pred : !nn.tensor<[B, T, 4], f32>, !nn.tensor<[B, U1, 4], f32> -> !nn.tensor<[J, 4], f32>
  %z = nn.call @rows(%j) : (!nn.tensor<[J, 4], f32>) -> !nn.tensor<[J, 4], f32>
  nn.return %z : !nn.tensor<[J, 4], f32>
}
