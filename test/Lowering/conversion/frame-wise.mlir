// RUN: nn-opt %s --split-input-file --nn-convert-to-linalg | FileCheck %s

// Frame-wise ops (FrameWisePatterns.cpp).

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
  %y = nn.linear %x, %w, %b : !nn.tensor<[B, T, 3], f32>, !nn.tensor<[5, 3], f32>, !nn.tensor<[5], f32>
  %z = nn.linear %p, %w : !nn.tensor<[N, 3], f32>, !nn.tensor<[5, 3], f32>
  nn.return %y, %z : !nn.tensor<[B, T, 5], f32>, !nn.tensor<[N, 5], f32>
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
  %n = nn.layer_norm %x, %g, %b : !nn.tensor<[B, T, 4], f32>, !nn.tensor<[4], f32>, !nn.tensor<[4], f32>
  %e = nn.embedding %ids, %table : !nn.tensor<[B, T], i32>, !nn.tensor<[10, 4], f32>
  %c = nn.concat %e, %n : !nn.tensor<[B, T, 4], f32>, !nn.tensor<[B, T, 4], f32>
  %m = nn.mse %s, %n : !nn.tensor<[B, T, 4], f32>, !nn.tensor<[B, T, 4], f32>
  nn.return %s, %n, %c, %m : !nn.tensor<[B, T, 4], f32>, !nn.tensor<[B, T, 4], f32>, !nn.tensor<[B, T, 8], f32>, !nn.tensor<[B, T], f32>
}

// -----

// Gradients of linear: dy W (packed: a named matmul), dy^T x over valid
// positions only (padded: dy and x zeroed by select where t >= len(b),
// then a plain contraction, one GEMM for nn-gemm-to-blas), the bias
// gradient summed over valid positions; an activation's derivative
// elementwise.
// CHECK-LABEL: func.func @linear_grads
// CHECK-SAME: (%[[B:.+]]: index, %[[T:.+]]: index, %[[LEN:.+]]: tensor<?xi32>, %[[DY:.+]]: tensor<?x?x3xf32>, %[[X:.+]]: tensor<?x?x4xf32>, %[[PDY:.+]]: tensor<?x3xf32>, %[[W:.+]]: tensor<3x4xf32>)
// CHECK: linalg.matmul ins(%[[PDY]], %[[W]] : tensor<?x3xf32>, tensor<3x4xf32>)
// CHECK: %[[MDY:.+]] = linalg.generic {{.+}} ins(%[[DY]], %[[LEN]] : tensor<?x?x3xf32>, tensor<?xi32>)
// CHECK:   arith.cmpi slt
// CHECK:   arith.select
// CHECK: %[[MX:.+]] = linalg.generic {{.+}} ins(%[[X]], %[[LEN]] : tensor<?x?x4xf32>, tensor<?xi32>)
// CHECK:   arith.select
// CHECK: linalg.generic {{.+}}iterator_types = ["reduction", "reduction", "parallel", "parallel"]{{.+}} ins(%[[MDY]], %[[MX]] : tensor<?x?x3xf32>, tensor<?x?x4xf32>)
// CHECK-NEXT: ^bb0
// CHECK-NEXT:   arith.mulf
// CHECK-NEXT:   arith.addf
// CHECK: linalg.generic {{.+}}iterator_types = ["reduction", "reduction", "parallel"]{{.+}} ins(%[[DY]], %[[LEN]]
// CHECK:   arith.select
// CHECK: linalg.generic
// CHECK:   math.tanh
// CHECK:   arith.subf
// CHECK:   arith.mulf
nn.graph @linear_grads(%dy: !nn.tensor<[B, T, 3], f32>, %x: !nn.tensor<[B, T, 4], f32>,
                       %pdy: !nn.tensor<[N, 3], f32>, %w: !nn.tensor<[3, 4], f32>)
    -> (!nn.tensor<[N, 4], f32>, !nn.tensor<[3, 4], f32>, !nn.tensor<[3], f32>, !nn.tensor<[B, T, 4], f32>)
    dims [B: batch, T: seq(B), N: packed(B, T)] {
  %dx = nn.linear_grad_input %pdy, %w : !nn.tensor<[N, 3], f32>, !nn.tensor<[3, 4], f32>
  %dw = nn.linear_grad_weight %dy, %x : !nn.tensor<[B, T, 3], f32>, !nn.tensor<[B, T, 4], f32>
  %db = nn.sum_positions %dy : !nn.tensor<[B, T, 3], f32>
  %da = nn.activation_grad tanh %x, %x : !nn.tensor<[B, T, 4], f32>
  nn.return %dx, %dw, %db, %da : !nn.tensor<[N, 4], f32>, !nn.tensor<[3, 4], f32>, !nn.tensor<[3], f32>, !nn.tensor<[B, T, 4], f32>
}

// -----

// The VJPs of concat (a slice), layer_norm (input and scale) and
// embedding (a scatter-add of the rows of valid positions).
// CHECK-LABEL: func.func @more_grads
// CHECK: tensor.extract_slice %{{.+}}[0, 0, 2] [%{{.+}}, %{{.+}}, 3] [1, 1, 1] : tensor<?x?x5xf32> to tensor<?x?x3xf32>
// CHECK: math.rsqrt
// CHECK: linalg.generic {{.+}}iterator_types = ["parallel", "parallel", "reduction"]
// CHECK: math.rsqrt
// CHECK: linalg.generic {{.+}}iterator_types = ["reduction", "reduction", "parallel"]
// CHECK:   arith.select
// CHECK: scf.for %[[BI:.+]] = {{.+}} iter_args
// CHECK:   scf.for %[[TI:.+]] = {{.+}} iter_args
// CHECK:     %[[ID:.+]] = tensor.extract %{{.+}}[%[[BI]], %[[TI]]] : tensor<?x?xi32>
// CHECK:     arith.cmpi slt, %[[TI]]
// CHECK:     %[[TRIPS:.+]] = arith.select %{{.+}}, %c5, %c0
// CHECK:     scf.for %[[F:.+]] = %c0{{.*}} to %[[TRIPS]]
// CHECK:       tensor.extract %{{.+}}[%[[BI]], %[[TI]], %[[F]]]
// CHECK:       tensor.insert
nn.graph @more_grads(%dy: !nn.tensor<[B, T, 5], f32>, %x: !nn.tensor<[B, T, 5], f32>,
                     %gain: !nn.tensor<[5], f32>, %ids: !nn.tensor<[B, T], i32>)
    -> (!nn.tensor<[B, T, 3], f32>, !nn.tensor<[B, T, 5], f32>, !nn.tensor<[5], f32>, !nn.tensor<[7, 5], f32>)
    dims [B: batch, T: seq(B)] {
  %s = nn.slice_features %dy offset 2 width 3 : !nn.tensor<[B, T, 5], f32>
  %dx = nn.layer_norm_grad_input %dy, %x, %gain : !nn.tensor<[B, T, 5], f32>, !nn.tensor<[5], f32>
  %dg = nn.layer_norm_grad_scale %dy, %x : !nn.tensor<[B, T, 5], f32>
  %dt = nn.embedding_grad %dy, %ids : !nn.tensor<[B, T, 5], f32>, !nn.tensor<[B, T], i32> -> !nn.tensor<[7, 5], f32>
  nn.return %s, %dx, %dg, %dt : !nn.tensor<[B, T, 3], f32>, !nn.tensor<[B, T, 5], f32>, !nn.tensor<[5], f32>, !nn.tensor<[7, 5], f32>
}

// -----

// Dropout in training mode: a hash of seed, key and logical position
// (MurmurHash3's finalizer) against an integer threshold, ceil(rate 2^24);
// kept elements scaled by 1 / (1 - rate). A packed value first finds the
// (sequence, frame) of each row by walking the lengths.
// CHECK-LABEL: func.func @dropout_training
// CHECK: tensor.extract %{{.+}}[] : tensor<i32>
// CHECK: linalg.generic
// CHECK:   scf.for
// CHECK: linalg.generic
// CHECK:   arith.constant -1640531527 : i32
// CHECK:   arith.constant -2048144789 : i32
// CHECK:   arith.constant -1028477387 : i32
// CHECK:   arith.shrui
// CHECK:   arith.cmpi uge, %{{.+}}, %c4194304_i32
// CHECK:   arith.constant 1.33333337 : f32
// CHECK:   arith.select
nn.graph @dropout_training(%x: !nn.tensor<[N, 3], f32>, %s: !nn.tensor<[], i32>)
    -> !nn.tensor<[N, 3], f32> dims [B: batch, T: seq(B), N: packed(B, T)] {
  %d = nn.dropout %x seed %s rate 2.500000e-01 key 7 : !nn.tensor<[N, 3], f32>, !nn.tensor<[], i32>
  nn.return %d : !nn.tensor<[N, 3], f32>
}
