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
