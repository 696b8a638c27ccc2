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

// -----

// nn.add: one elementwise generic per layout on the operands as they are
// (no lengths: what padded frames hold is never read as valid); the packed
// result has N = sum(lengths) rows.
// CHECK-DAG: #[[ID3:.+]] = affine_map<(d0, d1, d2) -> (d0, d1, d2)>
// CHECK-DAG: #[[ID2:.+]] = affine_map<(d0, d1) -> (d0, d1)>
// CHECK-LABEL: func.func @add(
// CHECK-SAME: %[[B:[^:]+]]: index, %[[T:[^:]+]]: index, %[[LEN:[^:]+]]: tensor<?xi32>, %[[X:[^:]+]]: tensor<?x?x4xf32>, %[[Y:[^:]+]]: tensor<?x?x4xf32>, %[[P:[^:]+]]: tensor<?x4xf32>, %[[Q:[^:]+]]: tensor<?x4xf32>)
// CHECK: %[[N:.+]] = scf.for %{{.+}} = %{{.+}} to %[[B]] step
// CHECK: tensor.extract %[[LEN]]
// CHECK: %[[INIT:.+]] = tensor.empty(%[[B]], %[[T]]) : tensor<?x?x4xf32>
// CHECK-NEXT: %[[SUM:.+]] = linalg.generic {indexing_maps = [#[[ID3]], #[[ID3]], #[[ID3]]], iterator_types = ["parallel", "parallel", "parallel"]} ins(%[[X]], %[[Y]] : tensor<?x?x4xf32>, tensor<?x?x4xf32>) outs(%[[INIT]] : tensor<?x?x4xf32>)
// CHECK-NEXT: ^bb0(%[[XE:[^:]+]]: f32, %[[YE:[^:]+]]: f32, %{{[^:]+}}: f32):
// CHECK-NEXT: %[[R:.+]] = arith.addf %[[XE]], %[[YE]] : f32
// CHECK-NEXT: linalg.yield %[[R]] : f32
// CHECK-NEXT: } -> tensor<?x?x4xf32>
// CHECK-NEXT: %[[PINIT:.+]] = tensor.empty(%[[N]]) : tensor<?x4xf32>
// CHECK-NEXT: %[[PSUM:.+]] = linalg.generic {indexing_maps = [#[[ID2]], #[[ID2]], #[[ID2]]], iterator_types = ["parallel", "parallel"]} ins(%[[P]], %[[Q]] : tensor<?x4xf32>, tensor<?x4xf32>) outs(%[[PINIT]] : tensor<?x4xf32>)
// CHECK-NEXT: ^bb0(%[[PE:[^:]+]]: f32, %[[QE:[^:]+]]: f32, %{{[^:]+}}: f32):
// CHECK-NEXT: %[[PR:.+]] = arith.addf %[[PE]], %[[QE]] : f32
// CHECK-NEXT: linalg.yield %[[PR]] : f32
// CHECK-NEXT: } -> tensor<?x4xf32>
// CHECK-NEXT: return %[[SUM]], %[[PSUM]] : tensor<?x?x4xf32>, tensor<?x4xf32>
nn.graph @add(%x: !nn.tensor<[B, T, 4], f32>, %y: !nn.tensor<[B, T, 4], f32>,
              %p: !nn.tensor<[N, 4], f32>, %q: !nn.tensor<[N, 4], f32>)
    -> (!nn.tensor<[B, T, 4], f32>, !nn.tensor<[N, 4], f32>)
    dims [B: batch, T: seq(B), N: packed(B, T)] {
  %a = nn.add %x, %y : !nn.tensor<[B, T, 4], f32>
  %b = nn.add %p, %q : !nn.tensor<[N, 4], f32>
  nn.return %a, %b : !nn.tensor<[B, T, 4], f32>, !nn.tensor<[N, 4], f32>
}

// -----

// nn.mul: the same generic with a product.
// CHECK-DAG: #[[ID3:.+]] = affine_map<(d0, d1, d2) -> (d0, d1, d2)>
// CHECK-DAG: #[[ID2:.+]] = affine_map<(d0, d1) -> (d0, d1)>
// CHECK-LABEL: func.func @mul(
// CHECK-SAME: %[[B:[^:]+]]: index, %[[T:[^:]+]]: index, %{{[^:]+}}: tensor<?xi32>, %[[X:[^:]+]]: tensor<?x?x3xf32>, %[[Y:[^:]+]]: tensor<?x?x3xf32>, %[[P:[^:]+]]: tensor<?x2xf32>, %[[Q:[^:]+]]: tensor<?x2xf32>)
// CHECK: %[[N:.+]] = scf.for %{{.+}} = %{{.+}} to %[[B]] step
// CHECK: %[[INIT:.+]] = tensor.empty(%[[B]], %[[T]]) : tensor<?x?x3xf32>
// CHECK-NEXT: %[[PROD:.+]] = linalg.generic {indexing_maps = [#[[ID3]], #[[ID3]], #[[ID3]]], iterator_types = ["parallel", "parallel", "parallel"]} ins(%[[X]], %[[Y]] : tensor<?x?x3xf32>, tensor<?x?x3xf32>) outs(%[[INIT]] : tensor<?x?x3xf32>)
// CHECK-NEXT: ^bb0(%[[XE:[^:]+]]: f32, %[[YE:[^:]+]]: f32, %{{[^:]+}}: f32):
// CHECK-NEXT: %[[R:.+]] = arith.mulf %[[XE]], %[[YE]] : f32
// CHECK-NEXT: linalg.yield %[[R]] : f32
// CHECK-NEXT: } -> tensor<?x?x3xf32>
// CHECK-NEXT: %[[PINIT:.+]] = tensor.empty(%[[N]]) : tensor<?x2xf32>
// CHECK-NEXT: %[[PPROD:.+]] = linalg.generic {indexing_maps = [#[[ID2]], #[[ID2]], #[[ID2]]], iterator_types = ["parallel", "parallel"]} ins(%[[P]], %[[Q]] : tensor<?x2xf32>, tensor<?x2xf32>) outs(%[[PINIT]] : tensor<?x2xf32>)
// CHECK-NEXT: ^bb0(%[[PE:[^:]+]]: f32, %[[QE:[^:]+]]: f32, %{{[^:]+}}: f32):
// CHECK-NEXT: %[[PR:.+]] = arith.mulf %[[PE]], %[[QE]] : f32
// CHECK-NEXT: linalg.yield %[[PR]] : f32
// CHECK-NEXT: } -> tensor<?x2xf32>
// CHECK-NEXT: return %[[PROD]], %[[PPROD]] : tensor<?x?x3xf32>, tensor<?x2xf32>
nn.graph @mul(%x: !nn.tensor<[B, T, 3], f32>, %y: !nn.tensor<[B, T, 3], f32>,
              %p: !nn.tensor<[N, 2], f32>, %q: !nn.tensor<[N, 2], f32>)
    -> (!nn.tensor<[B, T, 3], f32>, !nn.tensor<[N, 2], f32>)
    dims [B: batch, T: seq(B), N: packed(B, T)] {
  %a = nn.mul %x, %y : !nn.tensor<[B, T, 3], f32>
  %b = nn.mul %p, %q : !nn.tensor<[N, 2], f32>
  nn.return %a, %b : !nn.tensor<[B, T, 3], f32>, !nn.tensor<[N, 2], f32>
}

// -----

// nn.log_softmax per frame, padded and packed alike: the row maximum (from
// -inf), the row sum of exp(x - max) (reassociable: it stays within one
// frame), then x - max - log(sum); no lengths are read.
// CHECK-DAG: #[[ID3:.+]] = affine_map<(d0, d1, d2) -> (d0, d1, d2)>
// CHECK-DAG: #[[ROW3:.+]] = affine_map<(d0, d1, d2) -> (d0, d1)>
// CHECK-DAG: #[[ID2:.+]] = affine_map<(d0, d1) -> (d0, d1)>
// CHECK-DAG: #[[ROW2:.+]] = affine_map<(d0, d1) -> (d0)>
// CHECK-LABEL: func.func @log_softmax(
// CHECK-SAME: %{{[^:]+}}: index, %{{[^:]+}}: index, %{{[^:]+}}: tensor<?xi32>, %[[X:[^:]+]]: tensor<?x?x4xf32>, %[[P:[^:]+]]: tensor<?x6xf32>)
// CHECK: %[[NEGINF:.+]] = arith.constant 0xFF800000 : f32
// CHECK-NEXT: %[[MAXINIT:.+]] = linalg.fill ins(%[[NEGINF]] : f32) outs(%{{.+}} : tensor<?x?xf32>)
// CHECK-NEXT: %[[MAX:.+]] = linalg.generic {indexing_maps = [#[[ID3]], #[[ROW3]]], iterator_types = ["parallel", "parallel", "reduction"]} ins(%[[X]] : tensor<?x?x4xf32>) outs(%[[MAXINIT]] : tensor<?x?xf32>)
// CHECK-NEXT: ^bb0(%[[E:[^:]+]]: f32, %[[ACC:[^:]+]]: f32):
// CHECK-NEXT: %[[M:.+]] = arith.maximumf %[[E]], %[[ACC]] : f32
// CHECK-NEXT: linalg.yield %[[M]] : f32
// CHECK: %[[ZERO:.+]] = arith.constant 0.000000e+00 : f32
// CHECK-NEXT: %[[SUMINIT:.+]] = linalg.fill ins(%[[ZERO]] : f32) outs(%{{.+}} : tensor<?x?xf32>)
// CHECK-NEXT: %[[SUM:.+]] = linalg.generic {indexing_maps = [#[[ID3]], #[[ROW3]], #[[ROW3]]], iterator_types = ["parallel", "parallel", "reduction"]} ins(%[[X]], %[[MAX]] : tensor<?x?x4xf32>, tensor<?x?xf32>) outs(%[[SUMINIT]] : tensor<?x?xf32>)
// CHECK-NEXT: ^bb0(%[[E:[^:]+]]: f32, %[[ME:[^:]+]]: f32, %[[ACC:[^:]+]]: f32):
// CHECK-NEXT: %[[SHIFTED:.+]] = arith.subf %[[E]], %[[ME]] : f32
// CHECK-NEXT: %[[EXP:.+]] = math.exp %[[SHIFTED]] : f32
// CHECK-NEXT: %[[NEXT:.+]] = arith.addf %[[ACC]], %[[EXP]] fastmath<reassoc> : f32
// CHECK-NEXT: linalg.yield %[[NEXT]] : f32
// CHECK: %[[INIT:.+]] = tensor.empty(%{{.+}}, %{{.+}}) : tensor<?x?x4xf32>
// CHECK-NEXT: %[[LS:.+]] = linalg.generic {indexing_maps = [#[[ID3]], #[[ROW3]], #[[ROW3]], #[[ID3]]], iterator_types = ["parallel", "parallel", "parallel"]} ins(%[[X]], %[[MAX]], %[[SUM]] : tensor<?x?x4xf32>, tensor<?x?xf32>, tensor<?x?xf32>) outs(%[[INIT]] : tensor<?x?x4xf32>)
// CHECK-NEXT: ^bb0(%[[E:[^:]+]]: f32, %[[ME:[^:]+]]: f32, %[[SE:[^:]+]]: f32, %{{[^:]+}}: f32):
// CHECK-NEXT: %[[SHIFTED:.+]] = arith.subf %[[E]], %[[ME]] : f32
// CHECK-NEXT: %[[LOG:.+]] = math.log %[[SE]] : f32
// CHECK-NEXT: %[[R:.+]] = arith.subf %[[SHIFTED]], %[[LOG]] : f32
// CHECK-NEXT: linalg.yield %[[R]] : f32
// The packed rows: the same three generics over (row, feature).
// CHECK: %[[NEGINF:.+]] = arith.constant 0xFF800000 : f32
// CHECK-NEXT: %[[MAXINIT:.+]] = linalg.fill ins(%[[NEGINF]] : f32) outs(%{{.+}} : tensor<?xf32>)
// CHECK-NEXT: %[[PMAX:.+]] = linalg.generic {indexing_maps = [#[[ID2]], #[[ROW2]]], iterator_types = ["parallel", "reduction"]} ins(%[[P]] : tensor<?x6xf32>) outs(%[[MAXINIT]] : tensor<?xf32>)
// CHECK-NEXT: ^bb0(%[[E:[^:]+]]: f32, %[[ACC:[^:]+]]: f32):
// CHECK-NEXT: %[[M:.+]] = arith.maximumf %[[E]], %[[ACC]] : f32
// CHECK-NEXT: linalg.yield %[[M]] : f32
// CHECK: %[[ZERO:.+]] = arith.constant 0.000000e+00 : f32
// CHECK-NEXT: %[[SUMINIT:.+]] = linalg.fill ins(%[[ZERO]] : f32) outs(%{{.+}} : tensor<?xf32>)
// CHECK-NEXT: %[[PSUM:.+]] = linalg.generic {indexing_maps = [#[[ID2]], #[[ROW2]], #[[ROW2]]], iterator_types = ["parallel", "reduction"]} ins(%[[P]], %[[PMAX]] : tensor<?x6xf32>, tensor<?xf32>) outs(%[[SUMINIT]] : tensor<?xf32>)
// CHECK-NEXT: ^bb0(%[[E:[^:]+]]: f32, %[[ME:[^:]+]]: f32, %[[ACC:[^:]+]]: f32):
// CHECK-NEXT: %[[SHIFTED:.+]] = arith.subf %[[E]], %[[ME]] : f32
// CHECK-NEXT: %[[EXP:.+]] = math.exp %[[SHIFTED]] : f32
// CHECK-NEXT: %[[NEXT:.+]] = arith.addf %[[ACC]], %[[EXP]] fastmath<reassoc> : f32
// CHECK-NEXT: linalg.yield %[[NEXT]] : f32
// CHECK: %[[INIT:.+]] = tensor.empty(%{{.+}}) : tensor<?x6xf32>
// CHECK-NEXT: %[[PLS:.+]] = linalg.generic {indexing_maps = [#[[ID2]], #[[ROW2]], #[[ROW2]], #[[ID2]]], iterator_types = ["parallel", "parallel"]} ins(%[[P]], %[[PMAX]], %[[PSUM]] : tensor<?x6xf32>, tensor<?xf32>, tensor<?xf32>) outs(%[[INIT]] : tensor<?x6xf32>)
// CHECK-NEXT: ^bb0(%[[E:[^:]+]]: f32, %[[ME:[^:]+]]: f32, %[[SE:[^:]+]]: f32, %{{[^:]+}}: f32):
// CHECK-NEXT: %[[SHIFTED:.+]] = arith.subf %[[E]], %[[ME]] : f32
// CHECK-NEXT: %[[LOG:.+]] = math.log %[[SE]] : f32
// CHECK-NEXT: %[[R:.+]] = arith.subf %[[SHIFTED]], %[[LOG]] : f32
// CHECK-NEXT: linalg.yield %[[R]] : f32
// CHECK: return %[[LS]], %[[PLS]] : tensor<?x?x4xf32>, tensor<?x6xf32>
nn.graph @log_softmax(%x: !nn.tensor<[B, T, 4], f32>, %p: !nn.tensor<[N, 6], f32>)
    -> (!nn.tensor<[B, T, 4], f32>, !nn.tensor<[N, 6], f32>)
    dims [B: batch, T: seq(B), N: packed(B, T)] {
  %a = nn.log_softmax %x : !nn.tensor<[B, T, 4], f32>
  %b = nn.log_softmax %p : !nn.tensor<[N, 6], f32>
  nn.return %a, %b : !nn.tensor<[B, T, 4], f32>, !nn.tensor<[N, 6], f32>
}

// -----

// nn.log_softmax_grad per frame: the row sum of dy, then dy - exp(y) sum.
// CHECK-DAG: #[[ID3:.+]] = affine_map<(d0, d1, d2) -> (d0, d1, d2)>
// CHECK-DAG: #[[ROW3:.+]] = affine_map<(d0, d1, d2) -> (d0, d1)>
// CHECK-DAG: #[[ID2:.+]] = affine_map<(d0, d1) -> (d0, d1)>
// CHECK-DAG: #[[ROW2:.+]] = affine_map<(d0, d1) -> (d0)>
// CHECK-LABEL: func.func @log_softmax_grad(
// CHECK-SAME: %[[B:[^:]+]]: index, %[[T:[^:]+]]: index, %{{[^:]+}}: tensor<?xi32>, %[[DY:[^:]+]]: tensor<?x?x4xf32>, %[[Y:[^:]+]]: tensor<?x?x4xf32>, %[[PDY:[^:]+]]: tensor<?x6xf32>, %[[PY:[^:]+]]: tensor<?x6xf32>)
// CHECK: %[[N:.+]] = scf.for
// CHECK: %[[ZERO:.+]] = arith.constant 0.000000e+00 : f32
// CHECK-NEXT: %[[SUMINIT:.+]] = linalg.fill ins(%[[ZERO]] : f32) outs(%{{.+}} : tensor<?x?xf32>)
// CHECK-NEXT: %[[SUM:.+]] = linalg.generic {indexing_maps = [#[[ID3]], #[[ROW3]]], iterator_types = ["parallel", "parallel", "reduction"]} ins(%[[DY]] : tensor<?x?x4xf32>) outs(%[[SUMINIT]] : tensor<?x?xf32>)
// CHECK-NEXT: ^bb0(%[[E:[^:]+]]: f32, %[[ACC:[^:]+]]: f32):
// CHECK-NEXT: %[[NEXT:.+]] = arith.addf %[[ACC]], %[[E]] fastmath<reassoc> : f32
// CHECK-NEXT: linalg.yield %[[NEXT]] : f32
// CHECK: %[[INIT:.+]] = tensor.empty(%[[B]], %[[T]]) : tensor<?x?x4xf32>
// CHECK-NEXT: %[[DX:.+]] = linalg.generic {indexing_maps = [#[[ID3]], #[[ID3]], #[[ROW3]], #[[ID3]]], iterator_types = ["parallel", "parallel", "parallel"]} ins(%[[DY]], %[[Y]], %[[SUM]] : tensor<?x?x4xf32>, tensor<?x?x4xf32>, tensor<?x?xf32>) outs(%[[INIT]] : tensor<?x?x4xf32>)
// CHECK-NEXT: ^bb0(%[[DYE:[^:]+]]: f32, %[[YE:[^:]+]]: f32, %[[SE:[^:]+]]: f32, %{{[^:]+}}: f32):
// CHECK-NEXT: %[[P:.+]] = math.exp %[[YE]] : f32
// CHECK-NEXT: %[[SCALED:.+]] = arith.mulf %[[P]], %[[SE]] : f32
// CHECK-NEXT: %[[R:.+]] = arith.subf %[[DYE]], %[[SCALED]] : f32
// CHECK-NEXT: linalg.yield %[[R]] : f32
// CHECK: %[[ZERO:.+]] = arith.constant 0.000000e+00 : f32
// CHECK-NEXT: %[[SUMINIT:.+]] = linalg.fill ins(%[[ZERO]] : f32) outs(%{{.+}} : tensor<?xf32>)
// CHECK-NEXT: %[[PSUM:.+]] = linalg.generic {indexing_maps = [#[[ID2]], #[[ROW2]]], iterator_types = ["parallel", "reduction"]} ins(%[[PDY]] : tensor<?x6xf32>) outs(%[[SUMINIT]] : tensor<?xf32>)
// CHECK-NEXT: ^bb0(%[[E:[^:]+]]: f32, %[[ACC:[^:]+]]: f32):
// CHECK-NEXT: %[[NEXT:.+]] = arith.addf %[[ACC]], %[[E]] fastmath<reassoc> : f32
// CHECK-NEXT: linalg.yield %[[NEXT]] : f32
// CHECK: %[[INIT:.+]] = tensor.empty(%[[N]]) : tensor<?x6xf32>
// CHECK-NEXT: %[[PDX:.+]] = linalg.generic {indexing_maps = [#[[ID2]], #[[ID2]], #[[ROW2]], #[[ID2]]], iterator_types = ["parallel", "parallel"]} ins(%[[PDY]], %[[PY]], %[[PSUM]] : tensor<?x6xf32>, tensor<?x6xf32>, tensor<?xf32>) outs(%[[INIT]] : tensor<?x6xf32>)
// CHECK-NEXT: ^bb0(%[[DYE:[^:]+]]: f32, %[[YE:[^:]+]]: f32, %[[SE:[^:]+]]: f32, %{{[^:]+}}: f32):
// CHECK-NEXT: %[[P:.+]] = math.exp %[[YE]] : f32
// CHECK-NEXT: %[[SCALED:.+]] = arith.mulf %[[P]], %[[SE]] : f32
// CHECK-NEXT: %[[R:.+]] = arith.subf %[[DYE]], %[[SCALED]] : f32
// CHECK-NEXT: linalg.yield %[[R]] : f32
// CHECK: return %[[DX]], %[[PDX]] : tensor<?x?x4xf32>, tensor<?x6xf32>
nn.graph @log_softmax_grad(%dy: !nn.tensor<[B, T, 4], f32>, %y: !nn.tensor<[B, T, 4], f32>,
                           %pdy: !nn.tensor<[N, 6], f32>, %py: !nn.tensor<[N, 6], f32>)
    -> (!nn.tensor<[B, T, 4], f32>, !nn.tensor<[N, 6], f32>)
    dims [B: batch, T: seq(B), N: packed(B, T)] {
  %a = nn.log_softmax_grad %dy, %y : !nn.tensor<[B, T, 4], f32>
  %b = nn.log_softmax_grad %pdy, %py : !nn.tensor<[N, 6], f32>
  nn.return %a, %b : !nn.tensor<[B, T, 4], f32>, !nn.tensor<[N, 6], f32>
}

// -----

// nn.softmax_grad per frame: dy y, its row sum, then y (dy - sum).
// CHECK-DAG: #[[ID3:.+]] = affine_map<(d0, d1, d2) -> (d0, d1, d2)>
// CHECK-DAG: #[[ROW3:.+]] = affine_map<(d0, d1, d2) -> (d0, d1)>
// CHECK-DAG: #[[ID2:.+]] = affine_map<(d0, d1) -> (d0, d1)>
// CHECK-DAG: #[[ROW2:.+]] = affine_map<(d0, d1) -> (d0)>
// CHECK-LABEL: func.func @softmax_grad(
// CHECK-SAME: %[[B:[^:]+]]: index, %[[T:[^:]+]]: index, %{{[^:]+}}: tensor<?xi32>, %[[DY:[^:]+]]: tensor<?x?x4xf32>, %[[Y:[^:]+]]: tensor<?x?x4xf32>, %[[PDY:[^:]+]]: tensor<?x6xf32>, %[[PY:[^:]+]]: tensor<?x6xf32>)
// CHECK: %[[N:.+]] = scf.for
// CHECK: %[[INIT:.+]] = tensor.empty(%[[B]], %[[T]]) : tensor<?x?x4xf32>
// CHECK-NEXT: %[[PROD:.+]] = linalg.generic {indexing_maps = [#[[ID3]], #[[ID3]], #[[ID3]]], iterator_types = ["parallel", "parallel", "parallel"]} ins(%[[DY]], %[[Y]] : tensor<?x?x4xf32>, tensor<?x?x4xf32>) outs(%[[INIT]] : tensor<?x?x4xf32>)
// CHECK-NEXT: ^bb0(%[[DYE:[^:]+]]: f32, %[[YE:[^:]+]]: f32, %{{[^:]+}}: f32):
// CHECK-NEXT: %[[R:.+]] = arith.mulf %[[DYE]], %[[YE]] : f32
// CHECK-NEXT: linalg.yield %[[R]] : f32
// CHECK: %[[ZERO:.+]] = arith.constant 0.000000e+00 : f32
// CHECK-NEXT: %[[SUMINIT:.+]] = linalg.fill ins(%[[ZERO]] : f32) outs(%{{.+}} : tensor<?x?xf32>)
// CHECK-NEXT: %[[SUM:.+]] = linalg.generic {indexing_maps = [#[[ID3]], #[[ROW3]]], iterator_types = ["parallel", "parallel", "reduction"]} ins(%[[PROD]] : tensor<?x?x4xf32>) outs(%[[SUMINIT]] : tensor<?x?xf32>)
// CHECK-NEXT: ^bb0(%[[E:[^:]+]]: f32, %[[ACC:[^:]+]]: f32):
// CHECK-NEXT: %[[NEXT:.+]] = arith.addf %[[ACC]], %[[E]] fastmath<reassoc> : f32
// CHECK-NEXT: linalg.yield %[[NEXT]] : f32
// CHECK: %[[INIT:.+]] = tensor.empty(%[[B]], %[[T]]) : tensor<?x?x4xf32>
// CHECK-NEXT: %[[DX:.+]] = linalg.generic {indexing_maps = [#[[ID3]], #[[ID3]], #[[ROW3]], #[[ID3]]], iterator_types = ["parallel", "parallel", "parallel"]} ins(%[[DY]], %[[Y]], %[[SUM]] : tensor<?x?x4xf32>, tensor<?x?x4xf32>, tensor<?x?xf32>) outs(%[[INIT]] : tensor<?x?x4xf32>)
// CHECK-NEXT: ^bb0(%[[DYE:[^:]+]]: f32, %[[YE:[^:]+]]: f32, %[[SE:[^:]+]]: f32, %{{[^:]+}}: f32):
// CHECK-NEXT: %[[CENTERED:.+]] = arith.subf %[[DYE]], %[[SE]] : f32
// CHECK-NEXT: %[[R:.+]] = arith.mulf %[[YE]], %[[CENTERED]] : f32
// CHECK-NEXT: linalg.yield %[[R]] : f32
// CHECK: %[[INIT:.+]] = tensor.empty(%[[N]]) : tensor<?x6xf32>
// CHECK-NEXT: %[[PPROD:.+]] = linalg.generic {indexing_maps = [#[[ID2]], #[[ID2]], #[[ID2]]], iterator_types = ["parallel", "parallel"]} ins(%[[PDY]], %[[PY]] : tensor<?x6xf32>, tensor<?x6xf32>) outs(%[[INIT]] : tensor<?x6xf32>)
// CHECK-NEXT: ^bb0(%[[DYE:[^:]+]]: f32, %[[YE:[^:]+]]: f32, %{{[^:]+}}: f32):
// CHECK-NEXT: %[[R:.+]] = arith.mulf %[[DYE]], %[[YE]] : f32
// CHECK-NEXT: linalg.yield %[[R]] : f32
// CHECK: %[[ZERO:.+]] = arith.constant 0.000000e+00 : f32
// CHECK-NEXT: %[[SUMINIT:.+]] = linalg.fill ins(%[[ZERO]] : f32) outs(%{{.+}} : tensor<?xf32>)
// CHECK-NEXT: %[[PSUM:.+]] = linalg.generic {indexing_maps = [#[[ID2]], #[[ROW2]]], iterator_types = ["parallel", "reduction"]} ins(%[[PPROD]] : tensor<?x6xf32>) outs(%[[SUMINIT]] : tensor<?xf32>)
// CHECK-NEXT: ^bb0(%[[E:[^:]+]]: f32, %[[ACC:[^:]+]]: f32):
// CHECK-NEXT: %[[NEXT:.+]] = arith.addf %[[ACC]], %[[E]] fastmath<reassoc> : f32
// CHECK-NEXT: linalg.yield %[[NEXT]] : f32
// CHECK: %[[INIT:.+]] = tensor.empty(%[[N]]) : tensor<?x6xf32>
// CHECK-NEXT: %[[PDX:.+]] = linalg.generic {indexing_maps = [#[[ID2]], #[[ID2]], #[[ROW2]], #[[ID2]]], iterator_types = ["parallel", "parallel"]} ins(%[[PDY]], %[[PY]], %[[PSUM]] : tensor<?x6xf32>, tensor<?x6xf32>, tensor<?xf32>) outs(%[[INIT]] : tensor<?x6xf32>)
// CHECK-NEXT: ^bb0(%[[DYE:[^:]+]]: f32, %[[YE:[^:]+]]: f32, %[[SE:[^:]+]]: f32, %{{[^:]+}}: f32):
// CHECK-NEXT: %[[CENTERED:.+]] = arith.subf %[[DYE]], %[[SE]] : f32
// CHECK-NEXT: %[[R:.+]] = arith.mulf %[[YE]], %[[CENTERED]] : f32
// CHECK-NEXT: linalg.yield %[[R]] : f32
// CHECK: return %[[DX]], %[[PDX]] : tensor<?x?x4xf32>, tensor<?x6xf32>
nn.graph @softmax_grad(%dy: !nn.tensor<[B, T, 4], f32>, %y: !nn.tensor<[B, T, 4], f32>,
                       %pdy: !nn.tensor<[N, 6], f32>, %py: !nn.tensor<[N, 6], f32>)
    -> (!nn.tensor<[B, T, 4], f32>, !nn.tensor<[N, 6], f32>)
    dims [B: batch, T: seq(B), N: packed(B, T)] {
  %a = nn.softmax_grad %dy, %y : !nn.tensor<[B, T, 4], f32>
  %b = nn.softmax_grad %pdy, %py : !nn.tensor<[N, 6], f32>
  nn.return %a, %b : !nn.tensor<[B, T, 4], f32>, !nn.tensor<[N, 6], f32>
}

// -----

// nn.zero_padding: frames at t >= len(b) selected to 0, each sequence axis
// against its own lengths (both must hold); packed and per-sequence values
// have no padding and come back unchanged.
// CHECK-DAG: #[[ID3:.+]] = affine_map<(d0, d1, d2) -> (d0, d1, d2)>
// CHECK-DAG: #[[BATCH3:.+]] = affine_map<(d0, d1, d2) -> (d0)>
// CHECK-DAG: #[[ID4:.+]] = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>
// CHECK-DAG: #[[BATCH4:.+]] = affine_map<(d0, d1, d2, d3) -> (d0)>
// CHECK-LABEL: func.func @zero_padding(
// CHECK-SAME: %{{[^:]+}}: index, %{{[^:]+}}: index, %[[TLEN:[^:]+]]: tensor<?xi32>, %{{[^:]+}}: index, %[[ULEN:[^:]+]]: tensor<?xi32>, %[[X:[^:]+]]: tensor<?x?x4xf32>, %[[P:[^:]+]]: tensor<?x4xf32>, %[[S:[^:]+]]: tensor<?x4xf32>, %[[G:[^:]+]]: tensor<?x?x?x2xf32>)
// CHECK: %[[INIT:.+]] = tensor.empty(%{{.+}}, %{{.+}}) : tensor<?x?x4xf32>
// CHECK-NEXT: %[[ZX:.+]] = linalg.generic {indexing_maps = [#[[ID3]], #[[BATCH3]], #[[ID3]]], iterator_types = ["parallel", "parallel", "parallel"]} ins(%[[X]], %[[TLEN]] : tensor<?x?x4xf32>, tensor<?xi32>) outs(%[[INIT]] : tensor<?x?x4xf32>)
// CHECK-NEXT: ^bb0(%[[E:[^:]+]]: f32, %[[L:[^:]+]]: i32, %{{[^:]+}}: f32):
// CHECK-DAG: %[[LIMIT:.+]] = arith.index_cast %[[L]] : i32 to index
// CHECK-DAG: %[[FRAME:.+]] = linalg.index 1 : index
// CHECK: %[[VALID:.+]] = arith.cmpi slt, %[[FRAME]], %[[LIMIT]] : index
// CHECK-NEXT: %[[ZERO:.+]] = arith.constant 0.000000e+00 : f32
// CHECK-NEXT: %[[R:.+]] = arith.select %[[VALID]], %[[E]], %[[ZERO]] : f32
// CHECK-NEXT: linalg.yield %[[R]] : f32
// CHECK-NEXT: } -> tensor<?x?x4xf32>
// Two sequence axes: t < len_T(b) and u < len_U(b).
// CHECK: %[[INIT:.+]] = tensor.empty(%{{.+}}, %{{.+}}, %{{.+}}) : tensor<?x?x?x2xf32>
// CHECK-NEXT: %[[ZG:.+]] = linalg.generic {indexing_maps = [#[[ID4]], #[[BATCH4]], #[[BATCH4]], #[[ID4]]], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%[[G]], %[[TLEN]], %[[ULEN]] : tensor<?x?x?x2xf32>, tensor<?xi32>, tensor<?xi32>) outs(%[[INIT]] : tensor<?x?x?x2xf32>)
// CHECK-NEXT: ^bb0(%[[E:[^:]+]]: f32, %[[LT:[^:]+]]: i32, %[[LU:[^:]+]]: i32, %{{[^:]+}}: f32):
// CHECK-DAG: %[[LIMIT:.+]] = arith.index_cast %[[LT]] : i32 to index
// CHECK-DAG: %[[FRAME:.+]] = linalg.index 1 : index
// CHECK: %[[VALIDT:.+]] = arith.cmpi slt, %[[FRAME]], %[[LIMIT]] : index
// CHECK-DAG: %[[LIMITU:.+]] = arith.index_cast %[[LU]] : i32 to index
// CHECK-DAG: %[[FRAMEU:.+]] = linalg.index 2 : index
// CHECK: %[[VALIDU:.+]] = arith.cmpi slt, %[[FRAMEU]], %[[LIMITU]] : index
// CHECK-NEXT: %[[VALID:.+]] = arith.andi %[[VALIDT]], %[[VALIDU]] : i1
// CHECK-NEXT: %[[ZERO:.+]] = arith.constant 0.000000e+00 : f32
// CHECK-NEXT: %[[R:.+]] = arith.select %[[VALID]], %[[E]], %[[ZERO]] : f32
// CHECK-NEXT: linalg.yield %[[R]] : f32
// CHECK-NEXT: } -> tensor<?x?x?x2xf32>
// CHECK-NEXT: return %[[ZX]], %[[P]], %[[S]], %[[ZG]] : tensor<?x?x4xf32>, tensor<?x4xf32>, tensor<?x4xf32>, tensor<?x?x?x2xf32>
nn.graph @zero_padding(%x: !nn.tensor<[B, T, 4], f32>, %p: !nn.tensor<[N, 4], f32>,
                       %s: !nn.tensor<[B, 4], f32>, %g: !nn.tensor<[B, T, U, 2], f32>)
    -> (!nn.tensor<[B, T, 4], f32>, !nn.tensor<[N, 4], f32>, !nn.tensor<[B, 4], f32>, !nn.tensor<[B, T, U, 2], f32>)
    dims [B: batch, T: seq(B), U: seq(B), N: packed(B, T)] {
  %a = nn.zero_padding %x : !nn.tensor<[B, T, 4], f32>
  %b = nn.zero_padding %p : !nn.tensor<[N, 4], f32>
  %c = nn.zero_padding %s : !nn.tensor<[B, 4], f32>
  %d = nn.zero_padding %g : !nn.tensor<[B, T, U, 2], f32>
  nn.return %a, %b, %c, %d : !nn.tensor<[B, T, 4], f32>, !nn.tensor<[N, 4], f32>, !nn.tensor<[B, 4], f32>, !nn.tensor<[B, T, U, 2], f32>
}
