// RUN: nn-opt %s --split-input-file --nn-convert-to-linalg | FileCheck %s

// Losses and their f64 terms (LossPatterns.cpp).

// Losses: each marked loss adds two f64 results, its masked sum (padded
// positions t >= len(b) are skipped) and its inverse normalization.
// CHECK-DAG: #[[ID2:.+]] = affine_map<(d0, d1) -> (d0, d1)>
// CHECK-DAG: #[[BATCH2:.+]] = affine_map<(d0, d1) -> (d0)>
// CHECK-DAG: #[[ALL2:.+]] = affine_map<(d0, d1) -> ()>
// CHECK-DAG: #[[ID1:.+]] = affine_map<(d0) -> (d0)>
// CHECK-DAG: #[[ALL1:.+]] = affine_map<(d0) -> ()>
// CHECK-LABEL: func.func @losses
// CHECK-SAME: (%[[B:[^:]+]]: index, %{{[^:]+}}: index, %[[TLEN:[^:]+]]: tensor<?xi32>, %{{[^:]+}}: index, %[[ULEN:[^:]+]]: tensor<?xi32>, %[[X:[^:]+]]: tensor<?x?x4xf32>, %[[Y:[^:]+]]: tensor<?x?xi32>, %[[L:[^:]+]]: tensor<?x?xi32>)
// CHECK-SAME: -> (tensor<f64>, tensor<f64>, tensor<f64>, tensor<f64>)
// Cross entropy: max, sum of exp, then -(x[y] - lse) per frame.
// CHECK: %[[MAX:.+]] = linalg.generic {{.+}} ins(%[[X]] : tensor<?x?x4xf32>)
// CHECK-NEXT: ^bb0(%[[E:[^:]+]]: f32, %[[ACC:[^:]+]]: f32):
// CHECK-NEXT: arith.maximumf %[[E]], %[[ACC]] : f32
// CHECK: %[[SUM:.+]] = linalg.generic {{.+}} ins(%[[X]], %[[MAX]] : tensor<?x?x4xf32>, tensor<?x?xf32>)
// CHECK-NEXT: ^bb0(%[[E:[^:]+]]: f32, %[[ME:[^:]+]]: f32, %[[ACC:[^:]+]]: f32):
// CHECK-NEXT: %[[SHIFTED:.+]] = arith.subf %[[E]], %[[ME]] : f32
// CHECK-NEXT: %[[EXP:.+]] = math.exp %[[SHIFTED]] : f32
// CHECK-NEXT: arith.addf %[[ACC]], %[[EXP]] fastmath<reassoc> : f32
// CHECK: %[[LSE:.+]] = linalg.generic {indexing_maps = [#[[ID2]], #[[ID2]], #[[ID2]]], iterator_types = ["parallel", "parallel"]} ins(%[[MAX]], %[[SUM]] : tensor<?x?xf32>, tensor<?x?xf32>)
// CHECK-NEXT: ^bb0(%[[ME:[^:]+]]: f32, %[[SE:[^:]+]]: f32, %{{[^:]+}}: f32):
// CHECK-NEXT: %[[LOG:.+]] = math.log %[[SE]] : f32
// CHECK-NEXT: %[[LSEV:.+]] = arith.addf %[[ME]], %[[LOG]] : f32
// CHECK-NEXT: linalg.yield %[[LSEV]] : f32
// The target's score, its class clamped into [0, 4) (the clamp's
// constants come in the C++ compiler's argument order).
// CHECK: %[[CE:.+]] = linalg.generic {indexing_maps = [#[[ID2]], #[[ID2]], #[[ID2]]], iterator_types = ["parallel", "parallel"]} ins(%[[Y]], %[[LSE]] : tensor<?x?xi32>, tensor<?x?xf32>)
// CHECK-NEXT: ^bb0(%[[YE:[^:]+]]: i32, %[[LSEE:[^:]+]]: f32, %{{[^:]+}}: f32):
// CHECK-NEXT: %[[BE:.+]] = linalg.index 0 : index
// CHECK-NEXT: %[[TE:.+]] = linalg.index 1 : index
// CHECK-NEXT: %[[CLASSES:.+]] = arith.constant 4 : index
// CHECK-NEXT: %[[YI:.+]] = arith.index_cast %[[YE]] : i32 to index
// CHECK-DAG: %[[ZEROI:.+]] = arith.constant 0 : index
// CHECK-DAG: %[[ONEI:.+]] = arith.constant 1 : index
// CHECK-DAG: %[[LAST:.+]] = arith.subi %[[CLASSES]], %[[ONEI]] : index
// CHECK-DAG: %[[LOW:.+]] = arith.minsi %[[YI]], %[[LAST]] : index
// CHECK: %[[CLASS:.+]] = arith.maxsi %[[LOW]], %[[ZEROI]] : index
// CHECK-NEXT: %[[PICKED:.+]] = tensor.extract %[[X]][%[[BE]], %[[TE]], %[[CLASS]]] : tensor<?x?x4xf32>
// CHECK: %[[LP:.+]] = arith.subf %[[PICKED]], %[[LSEE]] : f32
// CHECK-NEXT: %[[NLL:.+]] = arith.negf %[[LP]] : f32
// CHECK-NEXT: linalg.yield %[[NLL]] : f32
// The masked sum over [B, T]:
// CHECK: %[[CESUM:.+]] = linalg.generic {{.+}}iterator_types = ["reduction", "reduction"]} ins(%[[CE]], %[[TLEN]] : tensor<?x?xf32>, tensor<?xi32>)
// CHECK-NEXT: ^bb0(%[[E:[^:]+]]: f32, %[[LE:[^:]+]]: i32, %[[ACC:[^:]+]]: f64):
// CHECK-NEXT:   %[[WIDE:.+]] = arith.extf %[[E]] : f32 to f64
// CHECK-NEXT: %[[NEXT:.+]] = arith.addf %[[ACC]], %[[WIDE]] : f64
// CHECK-DAG: %[[LIMIT:.+]] = arith.index_cast %[[LE]] : i32 to index
// CHECK-DAG: %[[FRAME:.+]] = linalg.index 1 : index
// CHECK:   %[[VALID:.+]] = arith.cmpi slt, %[[FRAME]], %[[LIMIT]] : index
// CHECK-NEXT:   %[[KEPT:.+]] = arith.select %[[VALID]], %[[NEXT]], %[[ACC]] : f64
// CHECK-NEXT: linalg.yield %[[KEPT]] : f64
// per_frame: the sum of the lengths.
// CHECK: %[[CENORM:.+]] = linalg.generic {indexing_maps = [#[[ID1]], #[[ALL1]]], iterator_types = ["reduction"]} ins(%[[TLEN]] : tensor<?xi32>)
// CHECK-NEXT: ^bb0(%[[LE:[^:]+]]: i32, %[[ACC:[^:]+]]: f64):
// CHECK-NEXT: %[[LF:.+]] = arith.sitofp %[[LE]] : i32 to f64
// CHECK-NEXT: %[[NEXT:.+]] = arith.addf %[[ACC]], %[[LF]] : f64
// CHECK-NEXT: linalg.yield %[[NEXT]] : f64
// CTC: a loop over the batch, a loop over each sequence's own frames, and
// the negated log-likelihood of its two final states stored at [b].
// CHECK: %[[CTC:.+]] = scf.for %[[BI:[a-z0-9_]+]] =
// CHECK-NEXT: %[[TB:.+]] = tensor.extract %[[TLEN]][%[[BI]]] : tensor<?xi32>
// CHECK-NEXT:   %[[FRAMES:.+]] = arith.index_cast %[[TB]] : i32 to index
// CHECK-NEXT: %[[UB:.+]] = tensor.extract %[[ULEN]][%[[BI]]] : tensor<?xi32>
// CHECK-NEXT: %[[LABELS:.+]] = arith.index_cast %[[UB]] : i32 to index
// CHECK:   scf.for %{{.+}} = %{{.+}} to %[[FRAMES]]
// CHECK:     linalg.generic
// CHECK: %[[FINAL:.+]] = arith.muli %[[LABELS]], %c2{{(_[0-9]+)?}} : index
// CHECK-NEXT: tensor.extract %{{.+}}[%[[FINAL]]] : tensor<?xf32>
// CHECK: %[[CTCNLL:.+]] = arith.negf %{{.+}} : f32
// CHECK-NEXT:   tensor.insert %[[CTCNLL]] into %{{.+}}[%[[BI]]]
// The CTC loss [B] sums every sequence.
// CHECK: %[[CTCSUM:.+]] = linalg.generic {indexing_maps = [#[[ID1]], #[[ALL1]]], iterator_types = ["reduction"]} ins(%[[CTC]] : tensor<?xf32>)
// CHECK-NEXT: ^bb0(%[[E:[^:]+]]: f32, %[[ACC:[^:]+]]: f64):
// CHECK-NEXT: %[[WIDE:.+]] = arith.extf %[[E]] : f32 to f64
// CHECK-NEXT: %[[NEXT:.+]] = arith.addf %[[ACC]], %[[WIDE]] : f64
// CHECK-NEXT: linalg.yield %[[NEXT]] : f64
// per_sequence: the batch size.
// CHECK: %[[BI64:.+]] = arith.index_cast %[[B]] : index to i64
// CHECK-NEXT: %[[BF:.+]] = arith.sitofp %[[BI64]] : i64 to f64
// CHECK-NEXT: %[[CTCNORM:.+]] = tensor.from_elements %[[BF]] : tensor<f64>
// CHECK-NEXT: return %[[CESUM]], %[[CENORM]], %[[CTCSUM]], %[[CTCNORM]] :
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

// The seed of a loss: scale / inv_norm at valid positions (0 where
// inv_norm is 0), 0 at padding; the logits gradient of cross entropy:
// g (softmax(x) - q). Where the C++ compiler's argument order decides the
// order of sibling ops, they are CHECK-DAG.
// CHECK-DAG: #[[ALL2:.+]] = affine_map<(d0, d1) -> ()>
// CHECK-DAG: #[[BATCH2:.+]] = affine_map<(d0, d1) -> (d0)>
// CHECK-DAG: #[[ID2:.+]] = affine_map<(d0, d1) -> (d0, d1)>
// CHECK-DAG: #[[ID3:.+]] = affine_map<(d0, d1, d2) -> (d0, d1, d2)>
// CHECK-DAG: #[[ROW3:.+]] = affine_map<(d0, d1, d2) -> (d0, d1)>
// CHECK-LABEL: func.func @loss_grads
// CHECK-SAME: (%{{[^:]+}}: index, %{{[^:]+}}: index, %[[LEN:[^:]+]]: tensor<?xi32>, %{{[^:]+}}: tensor<?x?xf32>, %[[INV:[^:]+]]: tensor<f64>, %[[X:[^:]+]]: tensor<?x?x4xf32>, %[[Y:[^:]+]]: tensor<?x?xi32>)
// CHECK: %[[SEED:.+]] = linalg.generic {indexing_maps = [#[[ALL2]], #[[BATCH2]], #[[ID2]]], iterator_types = ["parallel", "parallel"]} ins(%[[INV]], %[[LEN]] : tensor<f64>, tensor<?xi32>)
// CHECK-NEXT: ^bb0(%[[NORM:[^:]+]]: f64, %[[LE:[^:]+]]: i32, %{{[^:]+}}: f32):
// CHECK-NEXT: %[[SCALE:.+]] = arith.constant 1.000000e+00 : f64
// CHECK-NEXT: %[[ZERO:.+]] = arith.constant 0.000000e+00 : f64
// CHECK-DAG:   %[[RATIO:.+]] = arith.divf %[[SCALE]], %[[NORM]] : f64
// CHECK-DAG: %[[NONE:.+]] = arith.cmpf oeq, %[[NORM]], %[[ZERO]] : f64
// CHECK: %[[SEED64:.+]] = arith.select %[[NONE]], %[[ZERO]], %[[RATIO]] : f64
// CHECK-NEXT:   %[[SEED32:.+]] = arith.truncf %[[SEED64]] : f64 to f32
// CHECK-DAG: %[[LIMIT:.+]] = arith.index_cast %[[LE]] : i32 to index
// CHECK-DAG: %[[FRAME:.+]] = linalg.index 1 : index
// CHECK:   %[[VALID:.+]] = arith.cmpi slt, %[[FRAME]], %[[LIMIT]] : index
// CHECK-NEXT: %[[ZERO32:.+]] = arith.constant 0.000000e+00 : f32
// CHECK-NEXT:   %[[G:.+]] = arith.select %[[VALID]], %[[SEED32]], %[[ZERO32]] : f32
// CHECK-NEXT: linalg.yield %[[G]] : f32
// CHECK: %[[MAX:.+]] = linalg.generic {{.+}} ins(%[[X]] : tensor<?x?x4xf32>)
// CHECK-NEXT: ^bb0(
// CHECK-NEXT: arith.maximumf
// CHECK: %[[SUM:.+]] = linalg.generic {{.+}} ins(%[[X]], %[[MAX]] : tensor<?x?x4xf32>, tensor<?x?xf32>)
// CHECK-NEXT: ^bb0(
// CHECK-NEXT: arith.subf
// CHECK-NEXT: math.exp
// CHECK: %[[LSE:.+]] = linalg.generic {{.+}} ins(%[[MAX]], %[[SUM]] : tensor<?x?xf32>, tensor<?x?xf32>)
// CHECK-NEXT: ^bb0(%[[ME:[^:]+]]: f32, %[[SE:[^:]+]]: f32, %{{[^:]+}}: f32):
// CHECK-NEXT: %[[LOG:.+]] = math.log %[[SE]] : f32
// CHECK-NEXT: %[[LSEV:.+]] = arith.addf %[[ME]], %[[LOG]] : f32
// CHECK: %[[DX:.+]] = linalg.generic {indexing_maps = [#[[ID3]], #[[ROW3]], #[[ROW3]], #[[ROW3]], #[[ID3]]], iterator_types = ["parallel", "parallel", "parallel"]} ins(%[[X]], %[[SEED]], %[[Y]], %[[LSE]] : tensor<?x?x4xf32>, tensor<?x?xf32>, tensor<?x?xi32>, tensor<?x?xf32>)
// CHECK-NEXT: ^bb0(%[[XE:[^:]+]]: f32, %[[GE:[^:]+]]: f32, %[[YE:[^:]+]]: i32, %[[LSEE:[^:]+]]: f32, %{{[^:]+}}: f32):
// CHECK-NEXT: %[[CLASSES:.+]] = arith.constant 4 : index
// CHECK-NEXT: %[[YI:.+]] = arith.index_cast %[[YE]] : i32 to index
// CHECK-DAG: %[[ZEROI:.+]] = arith.constant 0 : index
// CHECK-DAG: %[[ONEI:.+]] = arith.constant 1 : index
// CHECK-DAG: %[[LAST:.+]] = arith.subi %[[CLASSES]], %[[ONEI]] : index
// CHECK-DAG: %[[LOW:.+]] = arith.minsi %[[YI]], %[[LAST]] : index
// CHECK: %[[CLASS:.+]] = arith.maxsi %[[LOW]], %[[ZEROI]] : index
// CHECK-NEXT: %[[C:.+]] = linalg.index 2 : index
// CHECK-NEXT:   %[[IS:.+]] = arith.cmpi eq, %[[C]], %[[CLASS]] : index
// CHECK-DAG: %[[OFF:.+]] = arith.constant 0.000000e+00 : f32
// CHECK-DAG: %[[ON:.+]] = arith.constant 1.000000e+00 : f32
// CHECK: %[[Q:.+]] = arith.select %[[IS]], %[[ON]], %[[OFF]] : f32
// CHECK-NEXT: %[[SHIFTED:.+]] = arith.subf %[[XE]], %[[LSEE]] : f32
// CHECK-NEXT:   %[[P:.+]] = math.exp %[[SHIFTED]] : f32
// CHECK-NEXT:   %[[D:.+]] = arith.subf %[[P]], %[[Q]] : f32
// CHECK-NEXT:   %[[R:.+]] = arith.mulf %[[GE]], %[[D]] : f32
// CHECK-NEXT: linalg.yield %[[R]] : f32
// CHECK: return %[[SEED]], %[[DX]] :
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
// CHECK-DAG: #[[ID3:.+]] = affine_map<(d0, d1, d2) -> (d0, d1, d2)>
// CHECK-DAG: #[[BATCH3:.+]] = affine_map<(d0, d1, d2) -> (d0)>
// CHECK-LABEL: func.func @ctc_grad
// CHECK-SAME: (%{{[^:]+}}: index, %{{[^:]+}}: index, %[[LEN:[^:]+]]: tensor<?xi32>, %{{[^:]+}}: index, %{{[^:]+}}: tensor<?xi32>, %[[G:[^:]+]]: tensor<?xf32>, %[[X:[^:]+]]: tensor<?x?x3xf32>, %{{[^:]+}}: tensor<?x?xi32>)
// CHECK: %[[LP:.+]] = linalg.generic {{.+}} ins(%[[X]], %{{.+}}, %{{.+}} : tensor<?x?x3xf32>, tensor<?x?xf32>, tensor<?x?xf32>)
// CHECK: %[[LOOP:.+]]:2 = scf.for %[[B:.+]] = {{.+}} iter_args(%[[GAMMA:.+]] = %{{.+}}, %{{.+}} = %{{.+}}) -> (tensor<?x?x3xf32>, tensor<?xf32>)
// CHECK:   scf.for
// CHECK:     tensor.insert_slice
// CHECK:   arith.cmpf ogt
// CHECK:   scf.for
// CHECK:     linalg.generic
// CHECK:     scf.for
// CHECK:       math.exp
// CHECK:       tensor.insert
// CHECK: %[[DX:.+]] = linalg.generic {indexing_maps = [#[[ID3]], #[[ID3]], #[[BATCH3]], #[[BATCH3]], #[[BATCH3]], #[[ID3]]], iterator_types = ["parallel", "parallel", "parallel"]} ins(%[[LOOP]]#0, %[[LP]], %[[G]], %[[LOOP]]#1, %[[LEN]] : tensor<?x?x3xf32>, tensor<?x?x3xf32>, tensor<?xf32>, tensor<?xf32>, tensor<?xi32>)
// CHECK-NEXT: ^bb0(%[[GAMMAE:[^:]+]]: f32, %[[LPE:[^:]+]]: f32, %[[GE:[^:]+]]: f32, %[[LLE:[^:]+]]: f32, %[[LE:[^:]+]]: i32, %{{[^:]+}}: f32):
// CHECK-NEXT:   %[[P:.+]] = math.exp %[[LPE]] : f32
// CHECK-NEXT: %[[D:.+]] = arith.subf %[[P]], %[[GAMMAE]] : f32
// CHECK-NEXT: %[[GD:.+]] = arith.mulf %[[GE]], %[[D]] : f32
// CHECK-NEXT: %[[NEGINF:.+]] = arith.constant 0xFF800000 : f32
// CHECK-NEXT:   %[[FEASIBLE:.+]] = arith.cmpf ogt, %[[LLE]], %[[NEGINF]] : f32
// CHECK-NEXT: %[[ZERO:.+]] = arith.constant 0.000000e+00 : f32
// CHECK-NEXT:   %[[KEPT:.+]] = arith.select %[[FEASIBLE]], %[[GD]], %[[ZERO]] : f32
// CHECK-DAG: %[[LIMIT:.+]] = arith.index_cast %[[LE]] : i32 to index
// CHECK-DAG: %[[FRAME:.+]] = linalg.index 1 : index
// CHECK: %[[VALID:.+]] = arith.cmpi slt, %[[FRAME]], %[[LIMIT]] : index
// CHECK-NEXT: %[[ZERO2:.+]] = arith.constant 0.000000e+00 : f32
// CHECK-NEXT: %[[R:.+]] = arith.select %[[VALID]], %[[KEPT]], %[[ZERO2]] : f32
// CHECK-NEXT: linalg.yield %[[R]] : f32
// CHECK: return %[[DX]]
nn.graph @ctc_grad(%g: !nn.tensor<[B], f32>, %x: !nn.tensor<[B, T, 3], f32>,
                   %y: !nn.tensor<[B, U], i32>) -> !nn.tensor<[B, T, 3], f32>
    dims [B: batch, T: seq(B), U: seq(B)] {
  %d = nn.ctc_loss_grad %g, %x, %y from logits blank 0 zero_infinity : !nn.tensor<[B], f32>, !nn.tensor<[B, T, 3], f32>, !nn.tensor<[B, U], i32>
  nn.return %d : !nn.tensor<[B, T, 3], f32>
}

// -----

// Frame error: the row maximum (maximumf, which keeps NaN), then 0 where
// the target's score reaches it (an ordered compare: false with NaN), 1
// elsewhere; the compare and both constants come in the C++ compiler's
// argument order.
// CHECK-LABEL: func.func @frame_error
// CHECK-SAME: (%{{[^:]+}}: index, %{{[^:]+}}: index, %[[LEN:[^:]+]]: tensor<?xi32>, %[[X:[^:]+]]: tensor<?x?x5xf32>, %[[Y:[^:]+]]: tensor<?x?xi32>)
// CHECK: %[[MAX:.+]] = linalg.generic {{.+}} iterator_types = ["parallel", "parallel", "reduction"]
// CHECK: arith.maximumf
// CHECK: %[[ERR:.+]] = linalg.generic {{.+}} ins(%[[Y]], %[[MAX]] : tensor<?x?xi32>, tensor<?x?xf32>)
// CHECK-NEXT: ^bb0(%[[YE:[^:]+]]: i32, %[[MAXE:[^:]+]]: f32, %{{[^:]+}}: f32):
// CHECK-NEXT: %[[BE:.+]] = linalg.index 0 : index
// CHECK-NEXT: %[[TE:.+]] = linalg.index 1 : index
// CHECK-NEXT: %[[CLASSES:.+]] = arith.constant 5 : index
// CHECK-NEXT: %[[YI:.+]] = arith.index_cast %[[YE]] : i32 to index
// CHECK-DAG: %[[ZEROI:.+]] = arith.constant 0 : index
// CHECK-DAG: %[[ONEI:.+]] = arith.constant 1 : index
// CHECK-DAG: %[[LAST:.+]] = arith.subi %[[CLASSES]], %[[ONEI]] : index
// CHECK-DAG: %[[LOW:.+]] = arith.minsi %[[YI]], %[[LAST]] : index
// CHECK: %[[CLASS:.+]] = arith.maxsi %[[LOW]], %[[ZEROI]] : index
// CHECK-NEXT: %[[PICKED:.+]] = tensor.extract %[[X]][%[[BE]], %[[TE]], %[[CLASS]]] : tensor<?x?x5xf32>
// CHECK-DAG: %[[ONE:.+]] = arith.constant 1.000000e+00 : f32
// CHECK-DAG: %[[ZERO:.+]] = arith.constant 0.000000e+00 : f32
// CHECK-DAG: %[[REACHES:.+]] = arith.cmpf oge, %[[PICKED]], %[[MAXE]] : f32
// CHECK: %[[WRONG:.+]] = arith.select %[[REACHES]], %[[ZERO]], %[[ONE]] : f32
// CHECK-NEXT: linalg.yield %[[WRONG]] : f32
// Its terms: the masked sum and the number of valid frames.
// CHECK: %[[SUM:.+]] = linalg.generic {{.+}} ins(%[[ERR]], %[[LEN]] : tensor<?x?xf32>, tensor<?xi32>)
// CHECK: arith.select %{{.+}}, %{{.+}}, %{{.+}} : f64
// CHECK: %[[COUNT:.+]] = linalg.generic {{.+}} ins(%[[LEN]] : tensor<?xi32>)
// CHECK: return %[[SUM]], %[[COUNT]] : tensor<f64>, tensor<f64>
nn.graph @frame_error(%x: !nn.tensor<[B, T, 5], f32>, %y: !nn.tensor<[B, T], i32>)
    dims [B: batch, T: seq(B)] {
  %e = nn.frame_error %x, %y : !nn.tensor<[B, T, 5], f32>, !nn.tensor<[B, T], i32>
  nn.mark_loss %e as "fer" normalize per_frame as_error : !nn.tensor<[B, T], f32>
  nn.return
}

// -----

// nn.mse_grad per position, padded and packed alike: 2 g (prediction -
// target), g read once per frame; no lengths are read.
// CHECK-DAG: #[[ID3:.+]] = affine_map<(d0, d1, d2) -> (d0, d1, d2)>
// CHECK-DAG: #[[ROW3:.+]] = affine_map<(d0, d1, d2) -> (d0, d1)>
// CHECK-DAG: #[[ID2:.+]] = affine_map<(d0, d1) -> (d0, d1)>
// CHECK-DAG: #[[ROW2:.+]] = affine_map<(d0, d1) -> (d0)>
// CHECK-LABEL: func.func @mse_grad(
// CHECK-SAME: %[[B:[^:]+]]: index, %[[T:[^:]+]]: index, %{{[^:]+}}: tensor<?xi32>, %[[G:[^:]+]]: tensor<?x?xf32>, %[[X:[^:]+]]: tensor<?x?x4xf32>, %[[Y:[^:]+]]: tensor<?x?x4xf32>, %[[PG:[^:]+]]: tensor<?xf32>, %[[PX:[^:]+]]: tensor<?x3xf32>, %[[PY:[^:]+]]: tensor<?x3xf32>)
// CHECK: %[[N:.+]] = scf.for
// CHECK: %[[INIT:.+]] = tensor.empty(%[[B]], %[[T]]) : tensor<?x?x4xf32>
// CHECK-NEXT: %[[DX:.+]] = linalg.generic {indexing_maps = [#[[ID3]], #[[ID3]], #[[ROW3]], #[[ID3]]], iterator_types = ["parallel", "parallel", "parallel"]} ins(%[[X]], %[[Y]], %[[G]] : tensor<?x?x4xf32>, tensor<?x?x4xf32>, tensor<?x?xf32>) outs(%[[INIT]] : tensor<?x?x4xf32>)
// CHECK-NEXT: ^bb0(%[[XE:[^:]+]]: f32, %[[YE:[^:]+]]: f32, %[[GE:[^:]+]]: f32, %{{[^:]+}}: f32):
// CHECK-NEXT: %[[D:.+]] = arith.subf %[[XE]], %[[YE]] : f32
// CHECK-NEXT: %[[TWO:.+]] = arith.constant 2.000000e+00 : f32
// CHECK-NEXT: %[[G2:.+]] = arith.mulf %[[GE]], %[[TWO]] : f32
// CHECK-NEXT: %[[R:.+]] = arith.mulf %[[G2]], %[[D]] : f32
// CHECK-NEXT: linalg.yield %[[R]] : f32
// CHECK-NEXT: } -> tensor<?x?x4xf32>
// CHECK-NEXT: %[[PINIT:.+]] = tensor.empty(%[[N]]) : tensor<?x3xf32>
// CHECK-NEXT: %[[PDX:.+]] = linalg.generic {indexing_maps = [#[[ID2]], #[[ID2]], #[[ROW2]], #[[ID2]]], iterator_types = ["parallel", "parallel"]} ins(%[[PX]], %[[PY]], %[[PG]] : tensor<?x3xf32>, tensor<?x3xf32>, tensor<?xf32>) outs(%[[PINIT]] : tensor<?x3xf32>)
// CHECK-NEXT: ^bb0(%[[XE:[^:]+]]: f32, %[[YE:[^:]+]]: f32, %[[GE:[^:]+]]: f32, %{{[^:]+}}: f32):
// CHECK-NEXT: %[[D:.+]] = arith.subf %[[XE]], %[[YE]] : f32
// CHECK-NEXT: %[[TWO:.+]] = arith.constant 2.000000e+00 : f32
// CHECK-NEXT: %[[G2:.+]] = arith.mulf %[[GE]], %[[TWO]] : f32
// CHECK-NEXT: %[[R:.+]] = arith.mulf %[[G2]], %[[D]] : f32
// CHECK-NEXT: linalg.yield %[[R]] : f32
// CHECK-NEXT: } -> tensor<?x3xf32>
// CHECK-NEXT: return %[[DX]], %[[PDX]] : tensor<?x?x4xf32>, tensor<?x3xf32>
nn.graph @mse_grad(%g: !nn.tensor<[B, T], f32>, %x: !nn.tensor<[B, T, 4], f32>,
                   %y: !nn.tensor<[B, T, 4], f32>, %pg: !nn.tensor<[N], f32>,
                   %px: !nn.tensor<[N, 3], f32>, %py: !nn.tensor<[N, 3], f32>)
    -> (!nn.tensor<[B, T, 4], f32>, !nn.tensor<[N, 3], f32>)
    dims [B: batch, T: seq(B), N: packed(B, T)] {
  %a = nn.mse_grad %g, %x, %y : !nn.tensor<[B, T, 4], f32>
  %b = nn.mse_grad %pg, %px, %py : !nn.tensor<[N, 3], f32>
  nn.return %a, %b : !nn.tensor<[B, T, 4], f32>, !nn.tensor<[N, 3], f32>
}

// -----

// nn.loss_terms itself: the f64 sum over valid positions (each sequence
// axis against its own lengths; packed and per-sequence values have no
// padding) and the inverse normalization: a custom factor's sum, N for
// per_frame on packed frames, 1 for sum, B for per_sequence.
// CHECK-DAG: #[[ID2:.+]] = affine_map<(d0, d1) -> (d0, d1)>
// CHECK-DAG: #[[BATCH2:.+]] = affine_map<(d0, d1) -> (d0)>
// CHECK-DAG: #[[ALL2:.+]] = affine_map<(d0, d1) -> ()>
// CHECK-DAG: #[[ID1:.+]] = affine_map<(d0) -> (d0)>
// CHECK-DAG: #[[ALL1:.+]] = affine_map<(d0) -> ()>
// CHECK-DAG: #[[ID3:.+]] = affine_map<(d0, d1, d2) -> (d0, d1, d2)>
// CHECK-DAG: #[[BATCH3:.+]] = affine_map<(d0, d1, d2) -> (d0)>
// CHECK-DAG: #[[ALL3:.+]] = affine_map<(d0, d1, d2) -> ()>
// CHECK-LABEL: func.func @loss_terms(
// CHECK-SAME: %[[B:[^:]+]]: index, %{{[^:]+}}: index, %[[TLEN:[^:]+]]: tensor<?xi32>, %{{[^:]+}}: index, %[[ULEN:[^:]+]]: tensor<?xi32>, %[[L:[^:]+]]: tensor<?x?xf32>, %[[F:[^:]+]]: tensor<?xf32>, %[[PL:[^:]+]]: tensor<?xf32>, %[[J:[^:]+]]: tensor<?x?x?xf32>, %[[Q:[^:]+]]: tensor<?xf32>)
// CHECK-SAME: -> (tensor<f64>, tensor<f64>, tensor<f64>, tensor<f64>, tensor<f64>, tensor<f64>, tensor<f64>, tensor<f64>)
// CHECK: %[[N:.+]] = scf.for
// The padded loss [B, T]: t < len(b) keeps the sum, else the accumulator.
// CHECK: %[[ZERO:.+]] = arith.constant 0.000000e+00 : f64
// CHECK-NEXT: %[[INIT:.+]] = linalg.fill ins(%[[ZERO]] : f64) outs(%{{.+}} : tensor<f64>)
// CHECK-NEXT: %[[SUM:.+]] = linalg.generic {indexing_maps = [#[[ID2]], #[[BATCH2]], #[[ALL2]]], iterator_types = ["reduction", "reduction"]} ins(%[[L]], %[[TLEN]] : tensor<?x?xf32>, tensor<?xi32>) outs(%[[INIT]] : tensor<f64>)
// CHECK-NEXT: ^bb0(%[[E:[^:]+]]: f32, %[[LE:[^:]+]]: i32, %[[ACC:[^:]+]]: f64):
// CHECK-NEXT: %[[WIDE:.+]] = arith.extf %[[E]] : f32 to f64
// CHECK-NEXT: %[[NEXT:.+]] = arith.addf %[[ACC]], %[[WIDE]] : f64
// CHECK-DAG: %[[LIMIT:.+]] = arith.index_cast %[[LE]] : i32 to index
// CHECK-DAG: %[[FRAME:.+]] = linalg.index 1 : index
// CHECK: %[[VALID:.+]] = arith.cmpi slt, %[[FRAME]], %[[LIMIT]] : index
// CHECK-NEXT: %[[KEPT:.+]] = arith.select %[[VALID]], %[[NEXT]], %[[ACC]] : f64
// CHECK-NEXT: linalg.yield %[[KEPT]] : f64
// The custom factor [B]: a plain f64 sum.
// CHECK: %[[ZERO:.+]] = arith.constant 0.000000e+00 : f64
// CHECK-NEXT: %[[INIT:.+]] = linalg.fill ins(%[[ZERO]] : f64) outs(%{{.+}} : tensor<f64>)
// CHECK-NEXT: %[[FSUM:.+]] = linalg.generic {indexing_maps = [#[[ID1]], #[[ALL1]]], iterator_types = ["reduction"]} ins(%[[F]] : tensor<?xf32>) outs(%[[INIT]] : tensor<f64>)
// CHECK-NEXT: ^bb0(%[[E:[^:]+]]: f32, %[[ACC:[^:]+]]: f64):
// CHECK-NEXT: %[[WIDE:.+]] = arith.extf %[[E]] : f32 to f64
// CHECK-NEXT: %[[NEXT:.+]] = arith.addf %[[ACC]], %[[WIDE]] : f64
// CHECK-NEXT: linalg.yield %[[NEXT]] : f64
// The packed loss [N]: every row counts; N frames.
// CHECK: %[[ZERO:.+]] = arith.constant 0.000000e+00 : f64
// CHECK-NEXT: %[[INIT:.+]] = linalg.fill ins(%[[ZERO]] : f64) outs(%{{.+}} : tensor<f64>)
// CHECK-NEXT: %[[PSUM:.+]] = linalg.generic {indexing_maps = [#[[ID1]], #[[ALL1]]], iterator_types = ["reduction"]} ins(%[[PL]] : tensor<?xf32>) outs(%[[INIT]] : tensor<f64>)
// CHECK-NEXT: ^bb0(%[[E:[^:]+]]: f32, %[[ACC:[^:]+]]: f64):
// CHECK-NEXT: %[[WIDE:.+]] = arith.extf %[[E]] : f32 to f64
// CHECK-NEXT: %[[NEXT:.+]] = arith.addf %[[ACC]], %[[WIDE]] : f64
// CHECK-NEXT: linalg.yield %[[NEXT]] : f64
// CHECK: %[[NI:.+]] = arith.index_cast %[[N]] : index to i64
// CHECK-NEXT: %[[NF:.+]] = arith.sitofp %[[NI]] : i64 to f64
// CHECK-NEXT: %[[PNORM:.+]] = tensor.from_elements %[[NF]] : tensor<f64>
// The padded loss [B, T, U] with normalization sum: both lengths mask it.
// CHECK: %[[ZERO:.+]] = arith.constant 0.000000e+00 : f64
// CHECK-NEXT: %[[INIT:.+]] = linalg.fill ins(%[[ZERO]] : f64) outs(%{{.+}} : tensor<f64>)
// CHECK-NEXT: %[[JSUM:.+]] = linalg.generic {indexing_maps = [#[[ID3]], #[[BATCH3]], #[[BATCH3]], #[[ALL3]]], iterator_types = ["reduction", "reduction", "reduction"]} ins(%[[J]], %[[TLEN]], %[[ULEN]] : tensor<?x?x?xf32>, tensor<?xi32>, tensor<?xi32>) outs(%[[INIT]] : tensor<f64>)
// CHECK-NEXT: ^bb0(%[[E:[^:]+]]: f32, %[[LT:[^:]+]]: i32, %[[LU:[^:]+]]: i32, %[[ACC:[^:]+]]: f64):
// CHECK-NEXT: %[[WIDE:.+]] = arith.extf %[[E]] : f32 to f64
// CHECK-NEXT: %[[NEXT:.+]] = arith.addf %[[ACC]], %[[WIDE]] : f64
// CHECK-DAG: %[[LIMIT:.+]] = arith.index_cast %[[LT]] : i32 to index
// CHECK-DAG: %[[FRAME:.+]] = linalg.index 1 : index
// CHECK: %[[VALIDT:.+]] = arith.cmpi slt, %[[FRAME]], %[[LIMIT]] : index
// CHECK-DAG: %[[LIMITU:.+]] = arith.index_cast %[[LU]] : i32 to index
// CHECK-DAG: %[[FRAMEU:.+]] = linalg.index 2 : index
// CHECK: %[[VALIDU:.+]] = arith.cmpi slt, %[[FRAMEU]], %[[LIMITU]] : index
// CHECK-NEXT: %[[VALID:.+]] = arith.andi %[[VALIDT]], %[[VALIDU]] : i1
// CHECK-NEXT: %[[KEPT:.+]] = arith.select %[[VALID]], %[[NEXT]], %[[ACC]] : f64
// CHECK-NEXT: linalg.yield %[[KEPT]] : f64
// CHECK: %[[ONE:.+]] = arith.constant 1.000000e+00 : f64
// CHECK-NEXT: %[[JNORM:.+]] = tensor.from_elements %[[ONE]] : tensor<f64>
// The per-sequence loss [B]: a plain sum; B sequences.
// CHECK: %[[QSUM:.+]] = linalg.generic {indexing_maps = [#[[ID1]], #[[ALL1]]], iterator_types = ["reduction"]} ins(%[[Q]] : tensor<?xf32>)
// CHECK: %[[BI:.+]] = arith.index_cast %[[B]] : index to i64
// CHECK-NEXT: %[[BF:.+]] = arith.sitofp %[[BI]] : i64 to f64
// CHECK-NEXT: %[[QNORM:.+]] = tensor.from_elements %[[BF]] : tensor<f64>
// CHECK-NEXT: return %[[SUM]], %[[FSUM]], %[[PSUM]], %[[PNORM]], %[[JSUM]], %[[JNORM]], %[[QSUM]], %[[QNORM]] :
nn.graph @loss_terms(%l: !nn.tensor<[B, T], f32>, %f: !nn.tensor<[B], f32>,
                     %pl: !nn.tensor<[N], f32>, %j: !nn.tensor<[B, T, U], f32>,
                     %q: !nn.tensor<[B], f32>)
    -> (!nn.tensor<[], f64>, !nn.tensor<[], f64>, !nn.tensor<[], f64>, !nn.tensor<[], f64>,
        !nn.tensor<[], f64>, !nn.tensor<[], f64>, !nn.tensor<[], f64>, !nn.tensor<[], f64>)
    dims [B: batch, T: seq(B), U: seq(B), N: packed(B, T)] {
  %s, %i = nn.loss_terms %l, %f normalize custom : !nn.tensor<[B, T], f32>, !nn.tensor<[B], f32>
  %ps, %pi = nn.loss_terms %pl normalize per_frame : !nn.tensor<[N], f32>
  %js, %ji = nn.loss_terms %j normalize sum : !nn.tensor<[B, T, U], f32>
  %qs, %qi = nn.loss_terms %q normalize per_sequence : !nn.tensor<[B], f32>
  nn.return %s, %i, %ps, %pi, %js, %ji, %qs, %qi
      : !nn.tensor<[], f64>, !nn.tensor<[], f64>, !nn.tensor<[], f64>, !nn.tensor<[], f64>,
        !nn.tensor<[], f64>, !nn.tensor<[], f64>, !nn.tensor<[], f64>, !nn.tensor<[], f64>
}

// -----

// nn.loss_norm: the factor of nn.loss_terms from the lengths alone (here
// the frames: the sum of the lengths, in f64).
// CHECK-LABEL: func.func @loss_norm
// CHECK-SAME: (%[[B:[a-z0-9]+]]: index, %{{[a-z0-9]+}}: index, %[[LEN:[a-z0-9]+]]: tensor<?xi32>)
// CHECK: %[[FRAMES:.+]] = linalg.generic {{{.+}}iterator_types = ["reduction"]} ins(%[[LEN]] : tensor<?xi32>) outs(%{{.+}} : tensor<f64>)
// CHECK: %[[BF:.+]] = arith.index_cast %[[B]] : index to i64
// CHECK-NEXT: %[[SEQS:.+]] = arith.sitofp %[[BF]] : i64 to f64
// CHECK-NEXT: %[[N:.+]] = tensor.from_elements %[[SEQS]] : tensor<f64>
// CHECK: return %[[FRAMES]], %[[N]]
nn.graph @loss_norm() -> (!nn.tensor<[], f64>, !nn.tensor<[], f64>)
    dims [B: batch, T: seq(B)] {
  %f = nn.loss_norm per_frame for !nn.tensor<[B, T], f32>
  %s = nn.loss_norm per_sequence for !nn.tensor<[B, T], f32>
  nn.return %f, %s : !nn.tensor<[], f64>, !nn.tensor<[], f64>
}
