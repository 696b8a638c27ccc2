// RUN: nn-opt %s --split-input-file --nn-convert-to-linalg | FileCheck %s

// The calling convention: root dims first (batch size; a sequence dim's
// padded size and lengths), then the graph arguments, then parameters.
// Derived dims are computed from their source, packed sizes from lengths.
// CHECK-LABEL: func.func @abi
// CHECK-SAME: (%[[B:.+]]: index, %[[T:.+]]: index, %[[LEN:.+]]: tensor<?xi32>, %[[X:.+]]: tensor<?x?x3xf32>, %[[Y:.+]]: tensor<?x?xi32>, %[[W:.+]]: tensor<5x3xf32>) -> tensor<?x?x5xf32>
// CHECK-SAME: llvm.emit_c_interface
// CHECK: arith.ceildivui %[[T]], %c2
// CHECK: linalg.generic
// CHECK: arith.ceildivsi
// CHECK: scf.for %{{.+}} = %{{.+}} to %[[B]] {{.+}} -> (index)
// CHECK:   tensor.extract %[[LEN]]
nn.parameter @w : !nn.tensor<[5, 3], f32>
nn.graph @abi(%x: !nn.tensor<[B, T, 3], f32>, %y: !nn.tensor<[B, T2], i32>)
    -> !nn.tensor<[B, T, 5], f32>
    dims [B: batch, T: seq(B), T2: seq(B) = ceildiv(T, 2), N: packed(B, T)] {
  %w = nn.param_ref @w : !nn.tensor<[5, 3], f32>
  %h = nn.linear %x, %w : (!nn.tensor<[B, T, 3], f32>, !nn.tensor<[5, 3], f32>) -> !nn.tensor<[B, T, 5], f32>
  nn.return %h : !nn.tensor<[B, T, 5], f32>
}

// -----

// Padded linear: a contraction over (b, t, o, i) into the bias broadcast;
// packed linear: one named GEMM.
// CHECK-DAG: #[[X:.+]] = affine_map<(d0, d1, d2, d3) -> (d0, d1, d3)>
// CHECK-DAG: #[[W:.+]] = affine_map<(d0, d1, d2, d3) -> (d2, d3)>
// CHECK-DAG: #[[Y:.+]] = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2)>
// CHECK-LABEL: func.func @linear
// CHECK: %[[BIAS:.+]] = linalg.generic {{.+}} ins(%{{.+}} : tensor<5xf32>)
// CHECK: linalg.generic {indexing_maps = [#[[X]], #[[W]], #[[Y]]], iterator_types = ["parallel", "parallel", "parallel", "reduction"]} {{.+}} outs(%[[BIAS]] : tensor<?x?x5xf32>)
// CHECK:   arith.mulf
// CHECK:   arith.addf
// CHECK: linalg.matmul_transpose_b ins(%{{.+}}, %{{.+}} : tensor<?x3xf32>, tensor<5x3xf32>)
nn.graph @linear(%x: !nn.tensor<[B, T, 3], f32>, %p: !nn.tensor<[N, 3], f32>,
                 %w: !nn.tensor<[5, 3], f32>, %b: !nn.tensor<[5], f32>)
    -> (!nn.tensor<[B, T, 5], f32>, !nn.tensor<[N, 5], f32>)
    dims [B: batch, T: seq(B), N: packed(B, T)] {
  %y = nn.linear %x, %w, %b : (!nn.tensor<[B, T, 3], f32>, !nn.tensor<[5, 3], f32>, !nn.tensor<[5], f32>) -> !nn.tensor<[B, T, 5], f32>
  %z = nn.linear %p, %w : (!nn.tensor<[N, 3], f32>, !nn.tensor<[5, 3], f32>) -> !nn.tensor<[N, 5], f32>
  nn.return %y, %z : !nn.tensor<[B, T, 5], f32>, !nn.tensor<[N, 5], f32>
}

// -----

// Pack copies each sequence's first len(b) rows to a running offset;
// unpack copies them back into zeros.
// CHECK-LABEL: func.func @pack_unpack
// CHECK-SAME: (%[[B:.+]]: index, %{{.+}}: index, %[[LEN:.+]]: tensor<?xi32>, %[[X:.+]]: tensor<?x?x2xf32>)
// CHECK: %[[N:.+]] = scf.for
// CHECK: %[[EMPTY:.+]] = tensor.empty(%[[N]]) : tensor<?x2xf32>
// CHECK: %[[PACKED:.+]]:2 = scf.for %[[I:.+]] = %{{.+}} to %[[B]] {{.+}} iter_args(%[[ACC:.+]] = %[[EMPTY]], %[[OFF:.+]] = %{{.+}})
// CHECK:   %[[L:.+]] = tensor.extract %[[LEN]][%[[I]]]
// CHECK:   %[[ROWS:.+]] = tensor.extract_slice %[[X]][%[[I]], 0, 0] [1, %[[LI:.+]], 2] [1, 1, 1] : tensor<?x?x2xf32> to tensor<?x2xf32>
// CHECK:   tensor.insert_slice %[[ROWS]] into %[[ACC]][%[[OFF]], 0] [%[[LI]], 2] [1, 1]
// CHECK: linalg.fill
// CHECK: scf.for
// CHECK:   tensor.extract_slice %[[PACKED]]#0
// CHECK:   tensor.insert_slice {{.+}} : tensor<?x2xf32> into tensor<?x?x2xf32>
nn.graph @pack_unpack(%x: !nn.tensor<[B, T, 2], f32>) -> !nn.tensor<[B, T, 2], f32>
    dims [B: batch, T: seq(B), N: packed(B, T)] {
  %p = nn.pack %x : !nn.tensor<[B, T, 2], f32> -> !nn.tensor<[N, 2], f32>
  %u = nn.unpack %p : !nn.tensor<[N, 2], f32> -> !nn.tensor<[B, T, 2], f32>
  nn.return %u : !nn.tensor<[B, T, 2], f32>
}

// -----

// An LSTM: one GEMM for the input projection of all frames, then a loop over
// the padded time whose step updates only running sequences (t < len).
// Backward runs forward on each sequence reversed within its own length.
// CHECK-LABEL: func.func @lstm
// CHECK: linalg.generic {{.+}}iterator_types = ["parallel", "parallel", "parallel", "reduction"]
// CHECK: scf.for %[[T:.+]] = {{.+}} iter_args(%[[H:.+]] = %{{.+}}, %[[C:.+]] = %{{.+}}, %[[Y:.+]] = %{{.+}}) -> (tensor<?x2xf32>, tensor<?x2xf32>, tensor<?x?x2xf32>)
// CHECK:   tensor.extract_slice %{{.+}}[0, %[[T]], 0] [%{{.+}}, 1, 8]
// CHECK:   linalg.matmul_transpose_b ins(%[[H]], %{{.+}} : tensor<?x2xf32>, tensor<8x2xf32>)
// CHECK:   linalg.generic
// CHECK:     arith.cmpi slt, %[[T]]
// CHECK:     math.tanh
// CHECK:     arith.select
// CHECK:   tensor.insert_slice %{{.+}} into %[[Y]][0, %[[T]], 0]
// CHECK-LABEL: func.func @backward
// The reversal: frame t of sequence b reads frame len(b) - 1 - t.
// CHECK: linalg.generic
// CHECK:   %[[L:.+]] = arith.index_cast %{{.+}} : i32 to index
// CHECK:   %[[T:.+]] = linalg.index 1
// CHECK:   arith.cmpi slt, %[[T]], %[[L]]
// CHECK:   arith.subi
// CHECK:   tensor.extract
// CHECK: scf.for
// CHECK: linalg.generic
// CHECK:   tensor.extract
nn.graph @lstm(%x: !nn.tensor<[B, T, 3], f32>, %wi: !nn.tensor<[8, 3], f32>,
               %wh: !nn.tensor<[8, 2], f32>, %b: !nn.tensor<[8], f32>)
    -> !nn.tensor<[B, T, 2], f32> dims [B: batch, T: seq(B)] {
  %h = nn.lstm forward %x, %wi, %wh, %b : (!nn.tensor<[B, T, 3], f32>, !nn.tensor<[8, 3], f32>, !nn.tensor<[8, 2], f32>, !nn.tensor<[8], f32>) -> !nn.tensor<[B, T, 2], f32>
  nn.return %h : !nn.tensor<[B, T, 2], f32>
}
nn.graph @backward(%x: !nn.tensor<[B, T, 3], f32>, %wi: !nn.tensor<[8, 3], f32>,
                   %wh: !nn.tensor<[8, 2], f32>, %b: !nn.tensor<[8], f32>)
    -> !nn.tensor<[B, T, 2], f32> dims [B: batch, T: seq(B)] {
  %h = nn.lstm backward %x, %wi, %wh, %b : (!nn.tensor<[B, T, 3], f32>, !nn.tensor<[8, 3], f32>, !nn.tensor<[8, 2], f32>, !nn.tensor<[8], f32>) -> !nn.tensor<[B, T, 2], f32>
  nn.return %h : !nn.tensor<[B, T, 2], f32>
}

// -----

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
  %ce = nn.cross_entropy %x, %y from logits : (!nn.tensor<[B, T, 4], f32>, !nn.tensor<[B, T], i32>) -> !nn.tensor<[B, T], f32>
  nn.mark_loss %ce as "ce" normalize per_frame : !nn.tensor<[B, T], f32>
  %c = nn.ctc_loss %x, %l from log_probs blank 0 : (!nn.tensor<[B, T, 4], f32>, !nn.tensor<[B, U], i32>) -> !nn.tensor<[B], f32>
  nn.mark_loss %c as "ctc" normalize per_sequence : !nn.tensor<[B], f32>
  nn.return
}

// -----

// Convolution reads frames t * stride - (K - 1) / 2 + k only inside
// [0, len(b)); pooling reads only t < len(b); reduce masks the reduced axis.
// CHECK-LABEL: func.func @conv
// CHECK: linalg.generic {{.+}}iterator_types = ["parallel", "parallel", "parallel", "reduction", "reduction"]
// CHECK-DAG:   arith.cmpi sge
// CHECK-DAG:   arith.cmpi slt
// CHECK:   tensor.extract %{{.+}} : tensor<?x?x2xf32>
nn.graph @conv(%x: !nn.tensor<[B, T, 2], f32>, %w: !nn.tensor<[3, 3, 2], f32>)
    -> !nn.tensor<[B, T2, 3], f32>
    dims [B: batch, T: seq(B), T2: seq(B) = ceildiv(T, 2)] {
  %c = nn.conv1d %x, %w stride 2 : (!nn.tensor<[B, T, 2], f32>, !nn.tensor<[3, 3, 2], f32>) -> !nn.tensor<[B, T2, 3], f32>
  nn.return %c : !nn.tensor<[B, T2, 3], f32>
}
// CHECK-LABEL: func.func @pool
// CHECK: linalg.generic {{.+}}iterator_types = ["parallel", "parallel", "parallel", "reduction"]
// CHECK:   arith.cmpi slt
// CHECK:   arith.maximumf
nn.graph @pool(%x: !nn.tensor<[B, T, 2], f32>) -> !nn.tensor<[B, T2, 2], f32>
    dims [B: batch, T: seq(B), T2: seq(B) = ceildiv(T, 2)] {
  %p = nn.pool max %x window 2 stride 2 : (!nn.tensor<[B, T, 2], f32>) -> !nn.tensor<[B, T2, 2], f32>
  nn.return %p : !nn.tensor<[B, T2, 2], f32>
}
// CHECK-LABEL: func.func @reduce
// CHECK: linalg.generic {{.+}}iterator_types = ["parallel", "reduction", "parallel"]
// CHECK:   arith.cmpi slt
// CHECK:   arith.select
nn.graph @reduce(%x: !nn.tensor<[B, T, 2], f32>) -> !nn.tensor<[B, 2], f32>
    dims [B: batch, T: seq(B)] {
  %r = nn.reduce sum %x over 1 : (!nn.tensor<[B, T, 2], f32>) -> !nn.tensor<[B, 2], f32>
  nn.return %r : !nn.tensor<[B, 2], f32>
}

// -----

// A call passes the caller's dims bound to the callee's roots, the operands
// and the callee's parameters; the callee's losses become caller results.
// CHECK-LABEL: func.func @callee
// CHECK-SAME: (%{{.+}}: index, %{{.+}}: index, %{{.+}}: tensor<?xi32>, %{{.+}}: tensor<?x?x2xf32>, %{{.+}}: tensor<2x2xf32>) -> (tensor<?x?x2xf32>, tensor<f64>, tensor<f64>)
// CHECK-LABEL: func.func @caller
// CHECK-SAME: (%[[B:.+]]: index, %[[T:.+]]: index, %[[LEN:.+]]: tensor<?xi32>, %[[X:.+]]: tensor<?x?x2xf32>, %[[W:.+]]: tensor<2x2xf32>) -> (tensor<?x?x2xf32>, tensor<f64>, tensor<f64>)
// CHECK: %[[R:.+]]:3 = call @callee(%[[B]], %[[T]], %[[LEN]], %[[X]], %[[W]])
// CHECK: return %[[R]]#0, %[[R]]#1, %[[R]]#2
nn.parameter @w : !nn.tensor<[2, 2], f32>
nn.graph @callee(%x: !nn.tensor<[Bc, Tc, 2], f32>) -> !nn.tensor<[Bc, Tc, 2], f32>
    dims [Bc: batch, Tc: seq(Bc)] {
  %w = nn.param_ref @w : !nn.tensor<[2, 2], f32>
  %y = nn.linear %x, %w : (!nn.tensor<[Bc, Tc, 2], f32>, !nn.tensor<[2, 2], f32>) -> !nn.tensor<[Bc, Tc, 2], f32>
  %e = nn.mse %y, %x : (!nn.tensor<[Bc, Tc, 2], f32>, !nn.tensor<[Bc, Tc, 2], f32>) -> !nn.tensor<[Bc, Tc], f32>
  nn.mark_loss %e as "mse" normalize sum : !nn.tensor<[Bc, Tc], f32>
  nn.return %y : !nn.tensor<[Bc, Tc, 2], f32>
}
nn.graph @caller(%x: !nn.tensor<[B, T, 2], f32>) -> !nn.tensor<[B, T, 2], f32>
    dims [B: batch, T: seq(B)] {
  %y = nn.call @callee(%x) : (!nn.tensor<[B, T, 2], f32>) -> !nn.tensor<[B, T, 2], f32>
  nn.return %y : !nn.tensor<[B, T, 2], f32>
}

// -----

// Frame-wise ops on packed positions never read lengths (only the size of
// N, sum(lengths), is computed up front).
// CHECK-LABEL: func.func @packed_frame_wise
// CHECK: scf.yield
// CHECK-NOT: tensor.extract %{{.+}} : tensor<?xi32>
// CHECK: math.erf
// CHECK: return
nn.graph @packed_frame_wise(%x: !nn.tensor<[N, 4], f32>, %t: !nn.tensor<[B, T], f32>)
    -> !nn.tensor<[N, 4], f32> dims [B: batch, T: seq(B), N: packed(B, T)] {
  %g = nn.gelu %x : !nn.tensor<[N, 4], f32>
  nn.return %g : !nn.tensor<[N, 4], f32>
}

// -----

// Feature-axis ops: row reductions then a map; embedding and concat.
// CHECK-LABEL: func.func @feature_ops
// log_softmax: max, then sum of exp (reassociable: it stays within one
// frame, so it may vectorize), then x - max - log(sum).
// CHECK: linalg.generic {{.+}}iterator_types = ["parallel", "parallel", "reduction"]
// CHECK:   arith.maximumf
// CHECK: linalg.generic {{.+}}iterator_types = ["parallel", "parallel", "reduction"]
// CHECK:   math.exp
// CHECK:   arith.addf {{.+}} fastmath<reassoc>
// CHECK: linalg.generic {{.+}}iterator_types = ["parallel", "parallel", "parallel"]
// CHECK:   arith.subf
// CHECK:   math.log
// softmax is exp of it:
// CHECK: math.exp
// layer_norm: mean, variance, then (x - mean) * rsqrt(var + eps) * g + b.
// CHECK: math.rsqrt
// CHECK: linalg.generic
// CHECK:   arith.subf
// CHECK:   arith.mulf
// embedding: the table row read by the clamped index.
// CHECK: linalg.generic
// CHECK:   arith.minsi
// CHECK:   arith.maxsi
// CHECK:   tensor.extract %{{.+}} : tensor<10x4xf32>
// concat: two slices of one result.
// CHECK: tensor.insert_slice %{{.+}} into %{{.+}}[0, 0, 0] [%{{.+}}, %{{.+}}, 4] [1, 1, 1]
// CHECK: tensor.insert_slice %{{.+}} into %{{.+}}[0, 0, 4] [%{{.+}}, %{{.+}}, 4] [1, 1, 1]
// mse: a reduction of squared differences over the last axis.
// CHECK: linalg.generic {{.+}}iterator_types = ["parallel", "parallel", "reduction"]
// CHECK:   arith.subf
// CHECK:   arith.mulf
// CHECK:   arith.addf
nn.graph @feature_ops(%x: !nn.tensor<[B, T, 4], f32>, %ids: !nn.tensor<[B, T], i32>,
                      %table: !nn.tensor<[10, 4], f32>, %g: !nn.tensor<[4], f32>,
                      %b: !nn.tensor<[4], f32>)
    -> (!nn.tensor<[B, T, 4], f32>, !nn.tensor<[B, T, 4], f32>, !nn.tensor<[B, T, 8], f32>, !nn.tensor<[B, T], f32>)
    dims [B: batch, T: seq(B)] {
  %s = nn.softmax %x : !nn.tensor<[B, T, 4], f32>
  %n = nn.layer_norm %x, %g, %b : (!nn.tensor<[B, T, 4], f32>, !nn.tensor<[4], f32>, !nn.tensor<[4], f32>) -> !nn.tensor<[B, T, 4], f32>
  %e = nn.embedding %ids, %table : (!nn.tensor<[B, T], i32>, !nn.tensor<[10, 4], f32>) -> !nn.tensor<[B, T, 4], f32>
  %c = nn.concat %e, %n : (!nn.tensor<[B, T, 4], f32>, !nn.tensor<[B, T, 4], f32>) -> !nn.tensor<[B, T, 8], f32>
  %m = nn.mse %s, %n : (!nn.tensor<[B, T, 4], f32>, !nn.tensor<[B, T, 4], f32>) -> !nn.tensor<[B, T], f32>
  nn.return %s, %n, %c, %m : !nn.tensor<[B, T, 4], f32>, !nn.tensor<[B, T, 4], f32>, !nn.tensor<[B, T, 8], f32>, !nn.tensor<[B, T], f32>
}

// -----

// Bidirectional: the weights of each direction are slices of the stacked
// ones; the two outputs are concatenated, forward first. Unary activations
// are maps; dropout is the identity (no op at all).
// CHECK-LABEL: func.func @bidirectional
// CHECK-DAG: tensor.extract_slice %{{.+}}[0, 0, 0] [1, 8, 3] [1, 1, 1] : tensor<2x8x3xf32> to tensor<8x3xf32>
// CHECK-DAG: tensor.extract_slice %{{.+}}[1, 0, 0] [1, 8, 3] [1, 1, 1] : tensor<2x8x3xf32> to tensor<8x3xf32>
// CHECK: tensor.insert_slice %{{.+}} into %{{.+}}[0, 0, 0] [%{{.+}}, %{{.+}}, 2]
// CHECK: tensor.insert_slice %{{.+}} into %{{.+}}[0, 0, 2] [%{{.+}}, %{{.+}}, 2]
// CHECK: linalg.generic
// CHECK:   arith.maximumf
// CHECK: linalg.generic
// CHECK:   math.tanh
// CHECK: linalg.generic
// CHECK:   arith.negf
// CHECK:   math.exp
// CHECK: linalg.generic
// CHECK:   math.erf
// CHECK-NOT: linalg.generic
// CHECK: return
nn.graph @bidirectional(%x: !nn.tensor<[B, T, 3], f32>, %wi: !nn.tensor<[2, 8, 3], f32>,
                        %wh: !nn.tensor<[2, 8, 2], f32>, %bias: !nn.tensor<[2, 8], f32>)
    -> !nn.tensor<[B, T, 4], f32> dims [B: batch, T: seq(B)] {
  %h = nn.lstm bidirectional %x, %wi, %wh, %bias : (!nn.tensor<[B, T, 3], f32>, !nn.tensor<[2, 8, 3], f32>, !nn.tensor<[2, 8, 2], f32>, !nn.tensor<[2, 8], f32>) -> !nn.tensor<[B, T, 4], f32>
  %r = nn.relu %h : !nn.tensor<[B, T, 4], f32>
  %t = nn.tanh %r : !nn.tensor<[B, T, 4], f32>
  %s = nn.sigmoid %t : !nn.tensor<[B, T, 4], f32>
  %g = nn.gelu %s : !nn.tensor<[B, T, 4], f32>
  %d = nn.dropout %g rate 5.000000e-01 : !nn.tensor<[B, T, 4], f32>
  nn.return %d : !nn.tensor<[B, T, 4], f32>
}
