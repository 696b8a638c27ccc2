// RUN: nn-opt %s --split-input-file --nn-convert-to-linalg | FileCheck %s

// Losses and their f64 terms (LossPatterns.cpp).

// Losses: each marked loss adds two f64 results, its masked sum (padded
// positions t >= len(b) are skipped) and its inverse normalization.
// CHECK-LABEL: func.func @losses
// CHECK-SAME: -> (tensor<f64>, tensor<f64>, tensor<f64>, tensor<f64>)
// Cross entropy: max, sum of exp, then -(x[y] - lse) per frame.
// CHECK: arith.maximumf
// CHECK: math.exp
// CHECK: math.log
// CHECK: tensor.extract %{{.+}}[%{{.+}}, %{{.+}}, %{{.+}}] : tensor<?x?x4xf32>
// The masked sum over [B, T]:
// CHECK: linalg.generic {{.+}}iterator_types = ["reduction", "reduction"]
// CHECK:   arith.extf
// CHECK:   arith.cmpi slt
// CHECK:   arith.select
// per_frame: the sum of the lengths.
// CHECK: linalg.generic {{.+}}iterator_types = ["reduction"]
// CTC: a loop over the batch, a loop over each sequence's own frames.
// CHECK: scf.for %[[BI:[a-z0-9_]+]] =
// CHECK:   %[[FRAMES:.+]] = arith.index_cast
// CHECK:   scf.for %{{.+}} = %{{.+}} to %[[FRAMES]]
// CHECK:     linalg.generic
// CHECK:   tensor.insert %{{.+}} into %{{.+}}[%[[BI]]]
// per_sequence: the batch size.
// CHECK: tensor.from_elements
// CHECK: return
nn.graph @losses(%x: !nn.tensor<[B, T, 4], f32>, %y: !nn.tensor<[B, T], i32>,
                 %l: !nn.tensor<[B, U], i32>)
    dims [B: batch, T: seq(B), U: seq(B)] {
  %ce = nn.cross_entropy %x, %y from logits : !nn.tensor<[B, T, 4], f32>, !nn.tensor<[B, T], i32>
  nn.mark_loss %ce as "ce" normalize per_frame : !nn.tensor<[B, T], f32>
  %c = nn.ctc_loss %x, %l from log_probs blank 0 : !nn.tensor<[B, T, 4], f32>, !nn.tensor<[B, U], i32>
  nn.mark_loss %c as "ctc" normalize per_sequence : !nn.tensor<[B], f32>
  nn.return
}

// -----

// The seed of a loss: scale / inv_norm at valid positions, 0 at padding;
// the logits gradient of cross entropy: g (softmax(x) - q).
// CHECK-LABEL: func.func @loss_grads
// CHECK: linalg.generic {{.+}} ins(%{{.+}}, %{{.+}} : tensor<f64>, tensor<?xi32>)
// CHECK:   arith.divf
// CHECK:   arith.truncf
// CHECK:   arith.cmpi slt
// CHECK:   arith.select
// CHECK: arith.maximumf
// CHECK: math.exp
// CHECK: math.log
// CHECK: linalg.generic
// CHECK:   arith.cmpi eq
// CHECK:   math.exp
// CHECK:   arith.subf
// CHECK:   arith.mulf
nn.graph @loss_grads(%l: !nn.tensor<[B, T], f32>, %inv: !nn.tensor<[], f64>,
                     %x: !nn.tensor<[B, T, 4], f32>, %y: !nn.tensor<[B, T], i32>)
    -> (!nn.tensor<[B, T], f32>, !nn.tensor<[B, T, 4], f32>)
    dims [B: batch, T: seq(B)] {
  %g = nn.loss_seed %l, %inv scale 1.000000e+00 : !nn.tensor<[B, T], f32>
  %dx = nn.cross_entropy_grad %g, %x, %y from logits : !nn.tensor<[B, T, 4], f32>, !nn.tensor<[B, T], i32>
  nn.return %g, %dx : !nn.tensor<[B, T], f32>, !nn.tensor<[B, T, 4], f32>
}

// -----

// CTC's gradient (CtcPatterns.cpp): per sequence, the forward recursion
// keeps every frame's alpha, the backward one runs from the last frame
// down and scatters each state's posterior onto its class (a scalar loop
// over the states); a final map gives g (softmax - gamma) at valid frames,
// 0 at padded ones and at infeasible sequences (zero_infinity).
// CHECK-LABEL: func.func @ctc_grad
// CHECK: scf.for %[[B:.+]] = {{.+}} iter_args(%[[GAMMA:.+]] = %{{.+}}, %{{.+}} = %{{.+}}) -> (tensor<?x?x3xf32>, tensor<?xf32>)
// CHECK:   scf.for
// CHECK:     tensor.insert_slice
// CHECK:   arith.cmpf ogt
// CHECK:   scf.for
// CHECK:     linalg.generic
// CHECK:     scf.for
// CHECK:       math.exp
// CHECK:       tensor.insert
// CHECK: linalg.generic
// CHECK:   math.exp
// CHECK:   arith.cmpf ogt
// CHECK:   arith.select
// CHECK: return
nn.graph @ctc_grad(%g: !nn.tensor<[B], f32>, %x: !nn.tensor<[B, T, 3], f32>,
                   %y: !nn.tensor<[B, U], i32>) -> !nn.tensor<[B, T, 3], f32>
    dims [B: batch, T: seq(B), U: seq(B)] {
  %d = nn.ctc_loss_grad %g, %x, %y from logits blank 0 zero_infinity : !nn.tensor<[B], f32>, !nn.tensor<[B, T, 3], f32>, !nn.tensor<[B, U], i32>
  nn.return %d : !nn.tensor<[B, T, 3], f32>
}

// -----

// Frame error: the row maximum (maximumf, which keeps NaN), then 0 where
// the target's score reaches it (an ordered compare: false with NaN).
// CHECK-LABEL: func.func @frame_error
// CHECK: %[[MAX:.+]] = linalg.generic {{.+}} iterator_types = ["parallel", "parallel", "reduction"]
// CHECK: arith.maximumf
// CHECK: linalg.generic {{.+}} ins(%{{.+}}, %[[MAX]] : tensor<?x?xi32>, tensor<?x?xf32>)
// CHECK: %[[PICKED:.+]] = tensor.extract
// CHECK: %[[REACHES:.+]] = arith.cmpf oge, %[[PICKED]], %{{.+}} : f32
// CHECK: arith.select %[[REACHES]], %{{.+}}, %{{.+}} : f32
nn.graph @frame_error(%x: !nn.tensor<[B, T, 5], f32>, %y: !nn.tensor<[B, T], i32>)
    dims [B: batch, T: seq(B)] {
  %e = nn.frame_error %x, %y : !nn.tensor<[B, T, 5], f32>, !nn.tensor<[B, T], i32>
  nn.mark_loss %e as "fer" normalize per_frame as_error : !nn.tensor<[B, T], f32>
  nn.return
}
