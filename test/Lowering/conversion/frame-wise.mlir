// RUN: nn-opt %s --split-input-file --nn-convert-to-linalg | FileCheck %s

// Frame-wise ops (FrameWisePatterns.cpp).

// Padded linear: a contraction over (b, t, o, i) into the bias broadcast;
// packed linear: one named GEMM.
// CHECK-DAG: #[[X:.+]] = affine_map<(d0, d1, d2, d3) -> (d0, d1, d3)>
// CHECK-DAG: #[[W:.+]] = affine_map<(d0, d1, d2, d3) -> (d2, d3)>
// CHECK-DAG: #[[Y:.+]] = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2)>
// CHECK-DAG: #[[COL:.+]] = affine_map<(d0, d1, d2) -> (d2)>
// CHECK-DAG: #[[ID3:.+]] = affine_map<(d0, d1, d2) -> (d0, d1, d2)>
// CHECK-LABEL: func.func @linear
// CHECK-SAME: (%{{[^:]+}}: index, %{{[^:]+}}: index, %{{[^:]+}}: tensor<?xi32>, %[[XA:[^:]+]]: tensor<?x?x3xf32>, %[[PA:[^:]+]]: tensor<?x3xf32>, %[[WA:[^:]+]]: tensor<5x3xf32>, %[[BA:[^:]+]]: tensor<5xf32>)
// CHECK: %[[ZERO:.+]] = arith.constant 0.000000e+00 : f32
// CHECK-NEXT: %[[ZEROS:.+]] = linalg.fill ins(%[[ZERO]] : f32) outs(%{{.+}} : tensor<?x?x5xf32>)
// CHECK: %[[BIAS:.+]] = linalg.generic {indexing_maps = [#[[COL]], #[[ID3]]], iterator_types = ["parallel", "parallel", "parallel"]} ins(%[[BA]] : tensor<5xf32>)
// CHECK-SAME: outs(%[[ZEROS]] : tensor<?x?x5xf32>)
// CHECK-NEXT: ^bb0(%[[BE:[^:]+]]: f32, %{{[^:]+}}: f32):
// CHECK-NEXT: linalg.yield %[[BE]] : f32
// CHECK: %[[PADDED:.+]] = linalg.generic {indexing_maps = [#[[X]], #[[W]], #[[Y]]], iterator_types = ["parallel", "parallel", "parallel", "reduction"]} ins(%[[XA]], %[[WA]] : tensor<?x?x3xf32>, tensor<5x3xf32>) outs(%[[BIAS]] : tensor<?x?x5xf32>)
// CHECK-NEXT: ^bb0(%[[XE:[^:]+]]: f32, %[[WE:[^:]+]]: f32, %[[ACC:[^:]+]]: f32):
// CHECK-NEXT:   %[[PROD:.+]] = arith.mulf %[[XE]], %[[WE]] : f32
// CHECK-NEXT:   %[[SUM:.+]] = arith.addf %[[ACC]], %[[PROD]] : f32
// CHECK-NEXT: linalg.yield %[[SUM]] : f32
// No bias on the packed one: the GEMM accumulates into zeros.
// CHECK: %[[PZERO:.+]] = arith.constant 0.000000e+00 : f32
// CHECK-NEXT: %[[PZEROS:.+]] = linalg.fill ins(%[[PZERO]] : f32) outs(%{{.+}} : tensor<?x5xf32>)
// CHECK-NEXT: %[[PACKED:.+]] = linalg.matmul_transpose_b ins(%[[PA]], %[[WA]] : tensor<?x3xf32>, tensor<5x3xf32>)
// CHECK-SAME: outs(%[[PZEROS]] : tensor<?x5xf32>)
// CHECK-NEXT: return %[[PADDED]], %[[PACKED]] : tensor<?x?x5xf32>, tensor<?x5xf32>
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
// N, sum(lengths), is computed up front). gelu is the exact form,
// 0.5 x (1 + erf(x / sqrt(2))); the two factors of the final product are
// built in the C++ compiler's argument order.
// CHECK-DAG: #[[ID2:.+]] = affine_map<(d0, d1) -> (d0, d1)>
// CHECK-LABEL: func.func @packed_frame_wise
// CHECK-SAME: (%{{[^:]+}}: index, %{{[^:]+}}: index, %{{[^:]+}}: tensor<?xi32>, %[[X:[^:]+]]: tensor<?x4xf32>, %{{[^:]+}}: tensor<?x?xf32>)
// CHECK: %[[N:.+]] = scf.for
// CHECK: scf.yield
// CHECK-NOT: tensor.extract %{{.+}} : tensor<?xi32>
// CHECK: %[[INIT:.+]] = tensor.empty(%[[N]]) : tensor<?x4xf32>
// CHECK-NEXT: %[[GELU:.+]] = linalg.generic {indexing_maps = [#[[ID2]], #[[ID2]]], iterator_types = ["parallel", "parallel"]} ins(%[[X]] : tensor<?x4xf32>) outs(%[[INIT]] : tensor<?x4xf32>)
// CHECK-NEXT: ^bb0(%[[XE:[^:]+]]: f32, %{{[^:]+}}: f32):
// CHECK-NEXT: %[[RSQRT2:.+]] = arith.constant 0.707106769 : f32
// CHECK-NEXT: %[[SCALED:.+]] = arith.mulf %[[XE]], %[[RSQRT2]] : f32
// CHECK-NEXT: %[[ERF:.+]] = math.erf %[[SCALED]] : f32
// CHECK-DAG: %[[ONE:.+]] = arith.constant 1.000000e+00 : f32
// CHECK-DAG: %[[CDF2:.+]] = arith.addf %[[ONE]], %[[ERF]] : f32
// CHECK-DAG: %[[HALF:.+]] = arith.constant 5.000000e-01 : f32
// CHECK-DAG: %[[HALFX:.+]] = arith.mulf %[[HALF]], %[[XE]] : f32
// CHECK: %[[R:.+]] = arith.mulf %[[HALFX]], %[[CDF2]] : f32
// CHECK-NEXT: linalg.yield %[[R]] : f32
// CHECK-NEXT: } -> tensor<?x4xf32>
// CHECK-NEXT: return %[[GELU]] : tensor<?x4xf32>
nn.graph @packed_frame_wise(%x: !nn.tensor<[N, 4], f32>, %t: !nn.tensor<[B, T], f32>)
    -> !nn.tensor<[N, 4], f32> dims [B: batch, T: seq(B), N: packed(B, T)] {
  %g = nn.gelu %x : !nn.tensor<[N, 4], f32>
  nn.return %g : !nn.tensor<[N, 4], f32>
}

// -----

// Feature-axis ops: row reductions then a map; embedding and concat.
// CHECK-DAG: #[[ID3:.+]] = affine_map<(d0, d1, d2) -> (d0, d1, d2)>
// CHECK-DAG: #[[ROW3:.+]] = affine_map<(d0, d1, d2) -> (d0, d1)>
// CHECK-DAG: #[[COL3:.+]] = affine_map<(d0, d1, d2) -> (d2)>
// CHECK-LABEL: func.func @feature_ops
// CHECK-SAME: (%[[B:[^:]+]]: index, %[[T:[^:]+]]: index, %{{[^:]+}}: tensor<?xi32>, %[[X:[^:]+]]: tensor<?x?x4xf32>, %[[IDS:[^:]+]]: tensor<?x?xi32>, %[[TABLE:[^:]+]]: tensor<10x4xf32>, %[[GAIN:[^:]+]]: tensor<4xf32>, %[[SHIFT:[^:]+]]: tensor<4xf32>)
// log_softmax: max, then sum of exp (reassociable: it stays within one
// frame, so it may vectorize), then x - max - log(sum).
// CHECK: %[[MAX:.+]] = linalg.generic {{.+}}iterator_types = ["parallel", "parallel", "reduction"]} ins(%[[X]] : tensor<?x?x4xf32>)
// CHECK-NEXT: ^bb0(%[[E:[^:]+]]: f32, %[[ACC:[^:]+]]: f32):
// CHECK-NEXT:   arith.maximumf %[[E]], %[[ACC]] : f32
// CHECK: %[[SUM:.+]] = linalg.generic {{.+}}iterator_types = ["parallel", "parallel", "reduction"]} ins(%[[X]], %[[MAX]] : tensor<?x?x4xf32>, tensor<?x?xf32>)
// CHECK-NEXT: ^bb0(%[[E:[^:]+]]: f32, %[[ME:[^:]+]]: f32, %[[ACC:[^:]+]]: f32):
// CHECK-NEXT: %[[SHIFTED:.+]] = arith.subf %[[E]], %[[ME]] : f32
// CHECK-NEXT:   %[[EXP:.+]] = math.exp %[[SHIFTED]] : f32
// CHECK-NEXT:   arith.addf %[[ACC]], %[[EXP]] fastmath<reassoc> : f32
// CHECK: %[[LS:.+]] = linalg.generic {{.+}}iterator_types = ["parallel", "parallel", "parallel"]} ins(%[[X]], %[[MAX]], %[[SUM]] : tensor<?x?x4xf32>, tensor<?x?xf32>, tensor<?x?xf32>)
// CHECK-NEXT: ^bb0(%[[E:[^:]+]]: f32, %[[ME:[^:]+]]: f32, %[[SE:[^:]+]]: f32, %{{[^:]+}}: f32):
// CHECK-NEXT:   %[[SHIFTED:.+]] = arith.subf %[[E]], %[[ME]] : f32
// CHECK-NEXT:   %[[LOG:.+]] = math.log %[[SE]] : f32
// CHECK-NEXT: arith.subf %[[SHIFTED]], %[[LOG]] : f32
// softmax is exp of it:
// CHECK: %[[SM:.+]] = linalg.generic {indexing_maps = [#[[ID3]], #[[ID3]]], iterator_types = ["parallel", "parallel", "parallel"]} ins(%[[LS]] : tensor<?x?x4xf32>)
// CHECK-NEXT: ^bb0(%[[E:[^:]+]]: f32, %{{[^:]+}}: f32):
// CHECK-NEXT: %[[P:.+]] = math.exp %[[E]] : f32
// CHECK-NEXT: linalg.yield %[[P]] : f32
// layer_norm: mean, variance, then (x - mean) * rsqrt(var + eps) * g + b.
// CHECK: %[[XSUM:.+]] = linalg.generic {{.+}} ins(%[[X]] : tensor<?x?x4xf32>)
// CHECK-NEXT: ^bb0(%[[E:[^:]+]]: f32, %[[ACC:[^:]+]]: f32):
// CHECK-NEXT: arith.addf %[[ACC]], %[[E]] fastmath<reassoc> : f32
// CHECK: %[[MEAN:.+]] = linalg.generic {{.+}} ins(%[[XSUM]] : tensor<?x?xf32>)
// CHECK-NEXT: ^bb0(%[[E:[^:]+]]: f32, %{{[^:]+}}: f32):
// CHECK-NEXT: %[[QUARTER:.+]] = arith.constant 2.500000e-01 : f32
// CHECK-NEXT: %[[M:.+]] = arith.mulf %[[E]], %[[QUARTER]] : f32
// CHECK-NEXT: linalg.yield %[[M]] : f32
// CHECK: %[[SQUARES:.+]] = linalg.generic {{.+}} ins(%[[X]], %[[MEAN]] : tensor<?x?x4xf32>, tensor<?x?xf32>)
// CHECK-NEXT: ^bb0(%[[E:[^:]+]]: f32, %[[ME:[^:]+]]: f32, %[[ACC:[^:]+]]: f32):
// CHECK-NEXT: %[[D:.+]] = arith.subf %[[E]], %[[ME]] : f32
// CHECK-NEXT: %[[D2:.+]] = arith.mulf %[[D]], %[[D]] : f32
// CHECK-NEXT: %[[NEXT:.+]] = arith.addf %[[ACC]], %[[D2]] fastmath<reassoc> : f32
// CHECK: %[[RSTD:.+]] = linalg.generic {{.+}} ins(%[[SQUARES]] : tensor<?x?xf32>)
// CHECK-NEXT: ^bb0(%[[E:[^:]+]]: f32, %{{[^:]+}}: f32):
// CHECK-NEXT: %[[QUARTER:.+]] = arith.constant 2.500000e-01 : f32
// CHECK-NEXT: %[[VAR:.+]] = arith.mulf %[[E]], %[[QUARTER]] : f32
// CHECK-NEXT: %[[EPS:.+]] = arith.constant 9.99999974E-6 : f32
// CHECK-NEXT: %[[VE:.+]] = arith.addf %[[VAR]], %[[EPS]] : f32
// CHECK-NEXT: %[[RS:.+]] = math.rsqrt %[[VE]] : f32
// CHECK-NEXT: linalg.yield %[[RS]] : f32
// CHECK: %[[LN:.+]] = linalg.generic {indexing_maps = [#[[ID3]], #[[ROW3]], #[[ROW3]], #[[COL3]], #[[COL3]], #[[ID3]]], iterator_types = ["parallel", "parallel", "parallel"]} ins(%[[X]], %[[MEAN]], %[[RSTD]], %[[GAIN]], %[[SHIFT]] : tensor<?x?x4xf32>, tensor<?x?xf32>, tensor<?x?xf32>, tensor<4xf32>, tensor<4xf32>)
// CHECK-NEXT: ^bb0(%[[XE:[^:]+]]: f32, %[[ME:[^:]+]]: f32, %[[RE:[^:]+]]: f32, %[[GE:[^:]+]]: f32, %[[BE:[^:]+]]: f32, %{{[^:]+}}: f32):
// CHECK-NEXT:   %[[C:.+]] = arith.subf %[[XE]], %[[ME]] : f32
// CHECK-NEXT:   %[[NORM:.+]] = arith.mulf %[[C]], %[[RE]] : f32
// CHECK-NEXT: %[[SCALED:.+]] = arith.mulf %[[NORM]], %[[GE]] : f32
// CHECK-NEXT: %[[SHIFTED:.+]] = arith.addf %[[SCALED]], %[[BE]] : f32
// CHECK-NEXT: linalg.yield %[[SHIFTED]] : f32
// embedding: the table row read by the clamped index (the clamp's
// constants come in the C++ compiler's argument order).
// CHECK: %[[EMB:.+]] = linalg.generic {indexing_maps = [#[[ROW3]], #[[ID3]]], iterator_types = ["parallel", "parallel", "parallel"]} ins(%[[IDS]] : tensor<?x?xi32>)
// CHECK-NEXT: ^bb0(%[[IE:[^:]+]]: i32, %{{[^:]+}}: f32):
// CHECK-NEXT: %[[VOCAB:.+]] = arith.constant 10 : index
// CHECK-NEXT: %[[ID:.+]] = arith.index_cast %[[IE]] : i32 to index
// CHECK-DAG: %[[ZEROI:.+]] = arith.constant 0 : index
// CHECK-DAG: %[[ONEI:.+]] = arith.constant 1 : index
// CHECK-DAG: %[[LAST:.+]] = arith.subi %[[VOCAB]], %[[ONEI]] : index
// CHECK-DAG:   %[[LOW:.+]] = arith.minsi %[[ID]], %[[LAST]] : index
// CHECK:   %[[ROW:.+]] = arith.maxsi %[[LOW]], %[[ZEROI]] : index
// CHECK-NEXT: %[[F:.+]] = linalg.index 2 : index
// CHECK-NEXT:   %[[V:.+]] = tensor.extract %[[TABLE]][%[[ROW]], %[[F]]] : tensor<10x4xf32>
// CHECK-NEXT: linalg.yield %[[V]] : f32
// concat: two slices of one result.
// CHECK: %[[CINIT:.+]] = tensor.empty(%[[B]], %[[T]]) : tensor<?x?x8xf32>
// CHECK-NEXT: %[[C0:.+]] = tensor.insert_slice %[[EMB]] into %[[CINIT]][0, 0, 0] [%[[B]], %[[T]], 4] [1, 1, 1]
// CHECK-NEXT: %[[C1:.+]] = tensor.insert_slice %[[LN]] into %[[C0]][0, 0, 4] [%[[B]], %[[T]], 4] [1, 1, 1]
// mse: a reduction of squared differences over the last axis.
// CHECK: %[[MZERO:.+]] = arith.constant 0.000000e+00 : f32
// CHECK-NEXT: %[[MINIT:.+]] = linalg.fill ins(%[[MZERO]] : f32) outs(%{{.+}} : tensor<?x?xf32>)
// CHECK-NEXT: %[[MSE:.+]] = linalg.generic {indexing_maps = [#[[ID3]], #[[ID3]], #[[ROW3]]], iterator_types = ["parallel", "parallel", "reduction"]} ins(%[[SM]], %[[LN]] : tensor<?x?x4xf32>, tensor<?x?x4xf32>) outs(%[[MINIT]] : tensor<?x?xf32>)
// CHECK-NEXT: ^bb0(%[[PE:[^:]+]]: f32, %[[TE:[^:]+]]: f32, %[[ACC:[^:]+]]: f32):
// CHECK-NEXT:   %[[D:.+]] = arith.subf %[[PE]], %[[TE]] : f32
// CHECK-NEXT:   %[[D2:.+]] = arith.mulf %[[D]], %[[D]] : f32
// CHECK-NEXT:   %[[NEXT:.+]] = arith.addf %[[ACC]], %[[D2]] fastmath<reassoc> : f32
// CHECK-NEXT: linalg.yield %[[NEXT]] : f32
// CHECK: return %[[SM]], %[[LN]], %[[C1]], %[[MSE]] :
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
// CHECK-DAG: #[[ID3:.+]] = affine_map<(d0, d1, d2) -> (d0, d1, d2)>
// CHECK-DAG: #[[BATCH3:.+]] = affine_map<(d0, d1, d2) -> (d0)>
// CHECK-DAG: #[[FEAT3:.+]] = affine_map<(d0, d1, d2) -> (d2)>
// CHECK-DAG: #[[DYMAP:.+]] = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2)>
// CHECK-DAG: #[[XMAP:.+]] = affine_map<(d0, d1, d2, d3) -> (d0, d1, d3)>
// CHECK-DAG: #[[DWMAP:.+]] = affine_map<(d0, d1, d2, d3) -> (d2, d3)>
// CHECK-LABEL: func.func @linear_grads
// CHECK-SAME: (%[[B:.+]]: index, %[[T:.+]]: index, %[[LEN:.+]]: tensor<?xi32>, %[[DY:.+]]: tensor<?x?x3xf32>, %[[X:.+]]: tensor<?x?x4xf32>, %[[PDY:.+]]: tensor<?x3xf32>, %[[W:.+]]: tensor<3x4xf32>)
// CHECK: %[[ZDX:.+]] = linalg.fill ins(%{{.+}} : f32) outs(%{{.+}} : tensor<?x4xf32>)
// CHECK-NEXT: %[[DX:.+]] = linalg.matmul ins(%[[PDY]], %[[W]] : tensor<?x3xf32>, tensor<3x4xf32>)
// CHECK-SAME: outs(%[[ZDX]] : tensor<?x4xf32>)
// CHECK: %[[MDY:.+]] = linalg.generic {indexing_maps = [#[[ID3]], #[[BATCH3]], #[[ID3]]], iterator_types = ["parallel", "parallel", "parallel"]} ins(%[[DY]], %[[LEN]] : tensor<?x?x3xf32>, tensor<?xi32>)
// CHECK-NEXT: ^bb0(%[[E:[^:]+]]: f32, %[[L:[^:]+]]: i32, %{{[^:]+}}: f32):
// CHECK-DAG: %[[LIMIT:.+]] = arith.index_cast %[[L]] : i32 to index
// CHECK-DAG: %[[FRAME:.+]] = linalg.index 1 : index
// CHECK:   %[[VALID:.+]] = arith.cmpi slt, %[[FRAME]], %[[LIMIT]] : index
// CHECK-NEXT: %[[ZERO:.+]] = arith.constant 0.000000e+00 : f32
// CHECK-NEXT:   %[[R:.+]] = arith.select %[[VALID]], %[[E]], %[[ZERO]] : f32
// CHECK-NEXT: linalg.yield %[[R]] : f32
// CHECK: %[[MX:.+]] = linalg.generic {indexing_maps = [#[[ID3]], #[[BATCH3]], #[[ID3]]], iterator_types = ["parallel", "parallel", "parallel"]} ins(%[[X]], %[[LEN]] : tensor<?x?x4xf32>, tensor<?xi32>)
// CHECK-NEXT: ^bb0(%[[E:[^:]+]]: f32, %[[L:[^:]+]]: i32, %{{[^:]+}}: f32):
// CHECK-DAG: %[[LIMIT:.+]] = arith.index_cast %[[L]] : i32 to index
// CHECK-DAG: %[[FRAME:.+]] = linalg.index 1 : index
// CHECK: %[[VALID:.+]] = arith.cmpi slt, %[[FRAME]], %[[LIMIT]] : index
// CHECK-NEXT: %[[ZERO:.+]] = arith.constant 0.000000e+00 : f32
// CHECK-NEXT:   %[[R:.+]] = arith.select %[[VALID]], %[[E]], %[[ZERO]] : f32
// CHECK-NEXT: linalg.yield %[[R]] : f32
// CHECK: %[[ZDW:.+]] = linalg.fill ins(%{{.+}} : f32) outs(%{{.+}} : tensor<3x4xf32>)
// CHECK-NEXT: %[[DW:.+]] = linalg.generic {indexing_maps = [#[[DYMAP]], #[[XMAP]], #[[DWMAP]]], iterator_types = ["reduction", "reduction", "parallel", "parallel"]} ins(%[[MDY]], %[[MX]] : tensor<?x?x3xf32>, tensor<?x?x4xf32>) outs(%[[ZDW]] : tensor<3x4xf32>)
// CHECK-NEXT: ^bb0(%[[DYE:[^:]+]]: f32, %[[XE:[^:]+]]: f32, %[[ACC:[^:]+]]: f32):
// CHECK-NEXT:   %[[PROD:.+]] = arith.mulf %[[DYE]], %[[XE]] : f32
// CHECK-NEXT:   %[[SUM:.+]] = arith.addf %[[ACC]], %[[PROD]] : f32
// CHECK-NEXT: linalg.yield %[[SUM]] : f32
// CHECK: %[[ZDB:.+]] = linalg.fill ins(%{{.+}} : f32) outs(%{{.+}} : tensor<3xf32>)
// CHECK-NEXT: %[[DB:.+]] = linalg.generic {indexing_maps = [#[[ID3]], #[[BATCH3]], #[[FEAT3]]], iterator_types = ["reduction", "reduction", "parallel"]} ins(%[[DY]], %[[LEN]] : tensor<?x?x3xf32>, tensor<?xi32>) outs(%[[ZDB]] : tensor<3xf32>)
// CHECK-NEXT: ^bb0(%[[E:[^:]+]]: f32, %[[L:[^:]+]]: i32, %[[ACC:[^:]+]]: f32):
// CHECK-NEXT: %[[SUM:.+]] = arith.addf %[[ACC]], %[[E]] : f32
// CHECK-DAG: %[[LIMIT:.+]] = arith.index_cast %[[L]] : i32 to index
// CHECK-DAG: %[[FRAME:.+]] = linalg.index 1 : index
// CHECK: %[[VALID:.+]] = arith.cmpi slt, %[[FRAME]], %[[LIMIT]] : index
// CHECK-NEXT:   %[[R:.+]] = arith.select %[[VALID]], %[[SUM]], %[[ACC]] : f32
// CHECK-NEXT: linalg.yield %[[R]] : f32
// tanh: dy (1 - tanh(x)^2).
// CHECK: %[[DA:.+]] = linalg.generic {indexing_maps = [#[[ID3]], #[[ID3]], #[[ID3]]], iterator_types = ["parallel", "parallel", "parallel"]} ins(%[[X]], %[[X]] : tensor<?x?x4xf32>, tensor<?x?x4xf32>)
// CHECK-NEXT: ^bb0(%[[DYE:[^:]+]]: f32, %[[XE:[^:]+]]: f32, %{{[^:]+}}: f32):
// CHECK-NEXT: %[[ONE:.+]] = arith.constant 1.000000e+00 : f32
// CHECK-NEXT:   %[[Y:.+]] = math.tanh %[[XE]] : f32
// CHECK-NEXT: %[[Y2:.+]] = arith.mulf %[[Y]], %[[Y]] : f32
// CHECK-NEXT:   %[[D:.+]] = arith.subf %[[ONE]], %[[Y2]] : f32
// CHECK-NEXT:   %[[R:.+]] = arith.mulf %[[DYE]], %[[D]] : f32
// CHECK-NEXT: linalg.yield %[[R]] : f32
// CHECK: return %[[DX]], %[[DW]], %[[DB]], %[[DA]] :
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
// CHECK-DAG: #[[ID3:.+]] = affine_map<(d0, d1, d2) -> (d0, d1, d2)>
// CHECK-DAG: #[[ROW3:.+]] = affine_map<(d0, d1, d2) -> (d0, d1)>
// CHECK-DAG: #[[COL3:.+]] = affine_map<(d0, d1, d2) -> (d2)>
// CHECK-DAG: #[[BATCH3:.+]] = affine_map<(d0, d1, d2) -> (d0)>
// CHECK-LABEL: func.func @more_grads
// CHECK-SAME: (%{{[^:]+}}: index, %{{[^:]+}}: index, %[[LEN:[^:]+]]: tensor<?xi32>, %[[DY:[^:]+]]: tensor<?x?x5xf32>, %[[X:[^:]+]]: tensor<?x?x5xf32>, %[[GAIN:[^:]+]]: tensor<5xf32>, %[[IDS:[^:]+]]: tensor<?x?xi32>)
// CHECK: %[[SLICE:.+]] = tensor.extract_slice %[[DY]][0, 0, 2] [%{{.+}}, %{{.+}}, 3] [1, 1, 1] : tensor<?x?x5xf32> to tensor<?x?x3xf32>
// layer_norm_grad_input: the statistics of x, then per frame sum(g) and
// sum(g xhat) with g = dy gain, then rstd (g - mean(g) - xhat mean(g xhat)).
// CHECK: %[[XSUM:.+]] = linalg.generic {{.+}} ins(%[[X]] : tensor<?x?x5xf32>)
// CHECK: %[[MEAN:.+]] = linalg.generic {{.+}} ins(%[[XSUM]] : tensor<?x?xf32>)
// CHECK: %[[SQUARES:.+]] = linalg.generic {{.+}} ins(%[[X]], %[[MEAN]] : tensor<?x?x5xf32>, tensor<?x?xf32>)
// CHECK: %[[RSTD:.+]] = linalg.generic {{.+}} ins(%[[SQUARES]] : tensor<?x?xf32>)
// CHECK: math.rsqrt
// CHECK: %[[SUMS:.+]]:2 = linalg.generic {{.+}}iterator_types = ["parallel", "parallel", "reduction"]} ins(%[[DY]], %[[GAIN]], %[[X]], %[[MEAN]], %[[RSTD]] : tensor<?x?x5xf32>, tensor<5xf32>, tensor<?x?x5xf32>, tensor<?x?xf32>, tensor<?x?xf32>)
// CHECK-NEXT: ^bb0(%[[DYE:[^:]+]]: f32, %[[GE:[^:]+]]: f32, %[[XE:[^:]+]]: f32, %[[ME:[^:]+]]: f32, %[[RE:[^:]+]]: f32, %[[SG:[^:]+]]: f32, %[[SGX:[^:]+]]: f32):
// CHECK-NEXT: %[[G:.+]] = arith.mulf %[[DYE]], %[[GE]] : f32
// CHECK-NEXT: %[[C:.+]] = arith.subf %[[XE]], %[[ME]] : f32
// CHECK-NEXT: %[[XHAT:.+]] = arith.mulf %[[C]], %[[RE]] : f32
// CHECK-NEXT: %[[NSG:.+]] = arith.addf %[[SG]], %[[G]] fastmath<reassoc> : f32
// CHECK-NEXT: %[[GX:.+]] = arith.mulf %[[G]], %[[XHAT]] : f32
// CHECK-NEXT: %[[NSGX:.+]] = arith.addf %[[SGX]], %[[GX]] fastmath<reassoc> : f32
// CHECK-NEXT: linalg.yield %[[NSG]], %[[NSGX]] : f32, f32
// CHECK: %[[LNDX:.+]] = linalg.generic {indexing_maps = [#[[ID3]], #[[COL3]], #[[ID3]], #[[ROW3]], #[[ROW3]], #[[ROW3]], #[[ROW3]], #[[ID3]]], iterator_types = ["parallel", "parallel", "parallel"]} ins(%[[DY]], %[[GAIN]], %[[X]], %[[MEAN]], %[[RSTD]], %[[SUMS]]#0, %[[SUMS]]#1 :
// CHECK-NEXT: ^bb0(%[[DYE:[^:]+]]: f32, %[[GE:[^:]+]]: f32, %[[XE:[^:]+]]: f32, %[[ME:[^:]+]]: f32, %[[RE:[^:]+]]: f32, %[[SG:[^:]+]]: f32, %[[SGX:[^:]+]]: f32, %{{[^:]+}}: f32):
// CHECK-NEXT: %[[G:.+]] = arith.mulf %[[DYE]], %[[GE]] : f32
// CHECK-NEXT: %[[C:.+]] = arith.subf %[[XE]], %[[ME]] : f32
// CHECK-NEXT: %[[XHAT:.+]] = arith.mulf %[[C]], %[[RE]] : f32
// CHECK-NEXT: %[[FIFTH:.+]] = arith.constant 2.000000e-01 : f32
// CHECK-NEXT: %[[MG:.+]] = arith.mulf %[[SG]], %[[FIFTH]] : f32
// CHECK-NEXT: %[[FIFTH2:.+]] = arith.constant 2.000000e-01 : f32
// CHECK-NEXT: %[[MGX:.+]] = arith.mulf %[[SGX]], %[[FIFTH2]] : f32
// CHECK-DAG: %[[PROJ:.+]] = arith.mulf %[[XHAT]], %[[MGX]] : f32
// CHECK-DAG: %[[CENTERED:.+]] = arith.subf %[[G]], %[[MG]] : f32
// CHECK: %[[INNER:.+]] = arith.subf %[[CENTERED]], %[[PROJ]] : f32
// CHECK-NEXT: %[[R:.+]] = arith.mulf %[[RE]], %[[INNER]] : f32
// CHECK-NEXT: linalg.yield %[[R]] : f32
// layer_norm_grad_scale: its own statistics of x, then dy xhat summed over
// valid positions.
// CHECK: %[[XSUM2:.+]] = linalg.generic {{.+}} ins(%[[X]] : tensor<?x?x5xf32>)
// CHECK: %[[MEAN2:.+]] = linalg.generic {{.+}} ins(%[[XSUM2]] : tensor<?x?xf32>)
// CHECK: %[[SQUARES2:.+]] = linalg.generic {{.+}} ins(%[[X]], %[[MEAN2]] : tensor<?x?x5xf32>, tensor<?x?xf32>)
// CHECK: %[[RSTD2:.+]] = linalg.generic {{.+}} ins(%[[SQUARES2]] : tensor<?x?xf32>)
// CHECK: math.rsqrt
// CHECK: %[[ZDG:.+]] = linalg.fill ins(%{{.+}} : f32) outs(%{{.+}} : tensor<5xf32>)
// CHECK-NEXT: %[[DG:.+]] = linalg.generic {indexing_maps = [#[[ID3]], #[[ID3]], #[[ROW3]], #[[ROW3]], #[[BATCH3]], #[[COL3]]], iterator_types = ["reduction", "reduction", "parallel"]} ins(%[[DY]], %[[X]], %[[MEAN2]], %[[RSTD2]], %[[LEN]] : tensor<?x?x5xf32>, tensor<?x?x5xf32>, tensor<?x?xf32>, tensor<?x?xf32>, tensor<?xi32>) outs(%[[ZDG]] : tensor<5xf32>)
// CHECK-NEXT: ^bb0(%[[DYE:[^:]+]]: f32, %[[XE:[^:]+]]: f32, %[[ME:[^:]+]]: f32, %[[RE:[^:]+]]: f32, %[[L:[^:]+]]: i32, %[[ACC:[^:]+]]: f32):
// CHECK-NEXT: %[[C:.+]] = arith.subf %[[XE]], %[[ME]] : f32
// CHECK-NEXT: %[[XHAT:.+]] = arith.mulf %[[C]], %[[RE]] : f32
// CHECK-NEXT: %[[TERM:.+]] = arith.mulf %[[DYE]], %[[XHAT]] : f32
// CHECK-NEXT: %[[SUM:.+]] = arith.addf %[[ACC]], %[[TERM]] : f32
// CHECK-DAG: %[[LIMIT:.+]] = arith.index_cast %[[L]] : i32 to index
// CHECK-DAG: %[[FRAME:.+]] = linalg.index 1 : index
// CHECK: %[[VALID:.+]] = arith.cmpi slt, %[[FRAME]], %[[LIMIT]] : index
// CHECK-NEXT:   %[[KEPT:.+]] = arith.select %[[VALID]], %[[SUM]], %[[ACC]] : f32
// CHECK-NEXT: linalg.yield %[[KEPT]] : f32
// embedding_grad: rows of ids in [0, 7) at t < len(b) add dy's row into
// the table; others get a feature loop of 0 trips.
// CHECK: %[[TABLE0:.+]] = linalg.fill ins(%{{.+}} : f32) outs(%{{.+}} : tensor<7x5xf32>)
// CHECK: %[[DT:.+]] = scf.for %[[BI:[^ ]+]] = {{.+}} iter_args(%{{[^ ]+}} = %[[TABLE0]])
// CHECK:   scf.for %[[TI:.+]] = {{.+}} iter_args
// CHECK:     %[[ID:.+]] = tensor.extract %[[IDS]][%[[BI]], %[[TI]]] : tensor<?x?xi32>
// CHECK-NEXT: %[[IDX:.+]] = arith.index_cast %[[ID]] : i32 to index
// CHECK-DAG: %[[VOCAB:.+]] = arith.constant 7 : index
// CHECK-DAG: %[[BELOW:.+]] = arith.cmpi slt, %[[IDX]], %[[VOCAB]] : index
// CHECK-DAG: %[[ZEROI:.+]] = arith.constant 0 : index
// CHECK-DAG: %[[NONNEG:.+]] = arith.cmpi sge, %[[IDX]], %[[ZEROI]] : index
// CHECK: %[[INRANGE:.+]] = arith.andi %[[NONNEG]], %[[BELOW]] : i1
// CHECK-NEXT: %[[LENB:.+]] = tensor.extract %[[LEN]][%[[BI]]] : tensor<?xi32>
// CHECK-NEXT: %[[LIMIT:.+]] = arith.index_cast %[[LENB]] : i32 to index
// CHECK-NEXT:     %[[VALID:.+]] = arith.cmpi slt, %[[TI]], %[[LIMIT]] : index
// CHECK-NEXT: %[[COUNTS:.+]] = arith.andi %[[INRANGE]], %[[VALID]] : i1
// CHECK: %[[ROW:.+]] = arith.select %[[COUNTS]], %[[IDX]], %{{.+}} : index
// CHECK:     %[[TRIPS:.+]] = arith.select %[[COUNTS]], %c5, %c0
// CHECK:     scf.for %[[F:.+]] = %c0{{.*}} to %[[TRIPS]] step %{{.+}} iter_args(%[[ACC:[^ ]+]] = %{{.+}})
// CHECK:       %[[G:.+]] = tensor.extract %[[DY]][%[[BI]], %[[TI]], %[[F]]]
// CHECK-NEXT: %[[OLD:.+]] = tensor.extract %[[ACC]][%[[ROW]], %[[F]]] : tensor<7x5xf32>
// CHECK-NEXT: %[[NEW:.+]] = arith.addf %[[OLD]], %[[G]] : f32
// CHECK-NEXT:       tensor.insert %[[NEW]] into %[[ACC]][%[[ROW]], %[[F]]] : tensor<7x5xf32>
// CHECK: return %[[SLICE]], %[[LNDX]], %[[DG]], %[[DT]] :
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
// CHECK-DAG: #[[ID1:.+]] = affine_map<(d0) -> (d0)>
// CHECK-DAG: #[[ID2:.+]] = affine_map<(d0, d1) -> (d0, d1)>
// CHECK-DAG: #[[SCALAR2:.+]] = affine_map<(d0, d1) -> ()>
// CHECK-DAG: #[[FIRST2:.+]] = affine_map<(d0, d1) -> (d0)>
// CHECK-LABEL: func.func @dropout_training
// CHECK-SAME: (%[[B:[^:]+]]: index, %{{[^:]+}}: index, %[[LEN:[^:]+]]: tensor<?xi32>, %[[X:[^:]+]]: tensor<?x3xf32>, %[[SEED:[^:]+]]: tensor<i32>)
// CHECK: %[[N:.+]] = scf.for
// CHECK: %[[S:.+]] = tensor.extract %[[SEED]][] : tensor<i32>
// Per row: the last sequence starting at or before it that is not empty,
// and the row's offset in it.
// CHECK: %[[ROWS:.+]]:2 = linalg.generic {indexing_maps = [#[[ID1]], #[[ID1]]], iterator_types = ["parallel"]} outs(%{{.+}}, %{{.+}} : tensor<?xi32>, tensor<?xi32>)
// CHECK-NEXT: ^bb0(
// CHECK-NEXT: %[[ROW:.+]] = linalg.index 0 : index
// CHECK:   %[[WALK:.+]]:3 = scf.for %[[SEQ:[^ ]+]] = %{{.+}} to %[[B]] step %{{.+}} iter_args(%[[HOLDER:[^ ]+]] = %{{[^,]+}}, %[[OFFSET:[^ ]+]] = %{{[^,]+}}, %[[START:[^ ]+]] = %{{[^,]+}}) -> (index, index, index)
// CHECK-NEXT: %[[LENGTH:.+]] = tensor.extract %[[LEN]][%[[SEQ]]] : tensor<?xi32>
// CHECK-NEXT: %[[LENGTHI:.+]] = arith.index_cast %[[LENGTH]] : i32 to index
// CHECK-NEXT: %[[STARTS:.+]] = arith.cmpi sge, %[[ROW]], %[[START]] : index
// CHECK-NEXT: %[[ZEROI:.+]] = arith.constant 0 : index
// CHECK-NEXT: %[[NONEMPTY:.+]] = arith.cmpi slt, %[[ZEROI]], %[[LENGTHI]] : index
// CHECK-NEXT: %[[HERE:.+]] = arith.andi %[[STARTS]], %[[NONEMPTY]] : i1
// CHECK-NEXT: %[[NEWHOLDER:.+]] = arith.select %[[HERE]], %[[SEQ]], %[[HOLDER]] : index
// CHECK-NEXT: %[[FROMSTART:.+]] = arith.subi %[[ROW]], %[[START]] : index
// CHECK-NEXT: %[[NEWOFFSET:.+]] = arith.select %[[HERE]], %[[FROMSTART]], %[[OFFSET]] : index
// CHECK-NEXT: %[[NEXTSTART:.+]] = arith.addi %[[START]], %[[LENGTHI]] : index
// CHECK-NEXT: scf.yield %[[NEWHOLDER]], %[[NEWOFFSET]], %[[NEXTSTART]] : index, index, index
// CHECK-NEXT: }
// CHECK-NEXT: %[[SEQI:.+]] = arith.index_cast %[[WALK]]#0 : index to i32
// CHECK-NEXT: %[[FRAMEI:.+]] = arith.index_cast %[[WALK]]#1 : index to i32
// CHECK-NEXT: linalg.yield %[[SEQI]], %[[FRAMEI]] : i32, i32
// CHECK: %[[INIT:.+]] = tensor.empty(%[[N]]) : tensor<?x3xf32>
// CHECK-NEXT: %[[DROPPED:.+]] = linalg.generic {indexing_maps = [#[[ID2]], #[[SCALAR2]], #[[FIRST2]], #[[FIRST2]], #[[ID2]]], iterator_types = ["parallel", "parallel"]} ins(%[[X]], %[[S]], %[[ROWS]]#0, %[[ROWS]]#1 : tensor<?x3xf32>, i32, tensor<?xi32>, tensor<?xi32>) outs(%[[INIT]] : tensor<?x3xf32>)
// CHECK-NEXT: ^bb0(%[[XE:[^:]+]]: f32, %[[SE:[^:]+]]: i32, %[[SEQE:[^:]+]]: i32, %[[FRAMEE:[^:]+]]: i32, %{{[^:]+}}: f32):
// CHECK-NEXT:   %[[GOLDEN:.+]] = arith.constant -1640531527 : i32
// CHECK-NEXT: %{{.+}} = arith.addi %[[SE]], %[[GOLDEN]] : i32
// CHECK:   arith.constant -2048144789 : i32
// CHECK:   arith.constant -1028477387 : i32
// The key, then the coordinates: sequence, frame, feature.
// CHECK: %[[KEY:.+]] = arith.constant 7 : i32
// CHECK-NEXT: arith.xori %{{.+}}, %[[KEY]] : i32
// CHECK: %[[FEAT:.+]] = linalg.index 1 : index
// CHECK-NEXT: %[[FEATI:.+]] = arith.index_cast %[[FEAT]] : index to i32
// CHECK-NEXT: arith.xori %{{.+}}, %[[SEQE]] : i32
// CHECK: arith.xori %{{.+}}, %[[FRAMEE]] : i32
// CHECK: %[[HF:.+]] = arith.xori %{{.+}}, %[[FEATI]] : i32
// The last mix in full: h ^= h >> 16; h *= 0x85ebca6b; h ^= h >> 13;
// h *= 0xc2b2ae35; h ^= h >> 16; then the top 24 bits.
// CHECK-NEXT: %[[C16:.+]] = arith.constant 16 : i32
// CHECK-NEXT: %[[S1:.+]] = arith.shrui %[[HF]], %[[C16]] : i32
// CHECK-NEXT: %[[X1:.+]] = arith.xori %[[HF]], %[[S1]] : i32
// CHECK-NEXT: %[[K1:.+]] = arith.constant -2048144789 : i32
// CHECK-NEXT: %[[M1:.+]] = arith.muli %[[X1]], %[[K1]] : i32
// CHECK-NEXT: %[[C13:.+]] = arith.constant 13 : i32
// CHECK-NEXT: %[[S2:.+]] = arith.shrui %[[M1]], %[[C13]] : i32
// CHECK-NEXT: %[[X2:.+]] = arith.xori %[[M1]], %[[S2]] : i32
// CHECK-NEXT: %[[K2:.+]] = arith.constant -1028477387 : i32
// CHECK-NEXT: %[[M2:.+]] = arith.muli %[[X2]], %[[K2]] : i32
// CHECK-NEXT: %[[C16B:.+]] = arith.constant 16 : i32
// CHECK-NEXT: %[[S3:.+]] = arith.shrui %[[M2]], %[[C16B]] : i32
// CHECK-NEXT: %[[H:.+]] = arith.xori %[[M2]], %[[S3]] : i32
// CHECK-NEXT: %[[EIGHT:.+]] = arith.constant 8 : i32
// CHECK-NEXT:   %[[DRAWN:.+]] = arith.shrui %[[H]], %[[EIGHT]] : i32
// CHECK:   %[[KEEP:.+]] = arith.cmpi uge, %[[DRAWN]], %c4194304_i32
// CHECK:   %[[SCALE:.+]] = arith.constant 1.33333337 : f32
// CHECK-NEXT: %[[KEPT:.+]] = arith.mulf %[[XE]], %[[SCALE]] : f32
// CHECK-NEXT: %[[ZERO:.+]] = arith.constant 0.000000e+00 : f32
// CHECK-NEXT:   %[[R:.+]] = arith.select %[[KEEP]], %[[KEPT]], %[[ZERO]] : f32
// CHECK-NEXT: linalg.yield %[[R]] : f32
// CHECK: return %[[DROPPED]] : tensor<?x3xf32>
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

// -----

// silu is x sigmoid(x); glu slices the feature halves and gates the first
// by the sigmoid of the second; glu_grad writes both halves' gradients
// side by side.
// CHECK-LABEL: func.func @silu_glu
// CHECK: linalg.generic
// CHECK:   arith.negf
// CHECK:   math.exp
// CHECK:   arith.mulf
// CHECK: %[[A:.+]] = tensor.extract_slice %[[X:arg[0-9]+]][0, 0, 0] [%{{.+}}, %{{.+}}, 2] [1, 1, 1] : tensor<?x?x4xf32> to tensor<?x?x2xf32>
// CHECK: %[[B:.+]] = tensor.extract_slice %[[X]][0, 0, 2] [%{{.+}}, %{{.+}}, 2] [1, 1, 1] : tensor<?x?x4xf32> to tensor<?x?x2xf32>
// CHECK: linalg.generic {{.+}} ins(%[[A]], %[[B]] : tensor<?x?x2xf32>, tensor<?x?x2xf32>)
// CHECK: tensor.insert_slice %{{.+}} into %{{.+}}[0, 0, 0] [%{{.+}}, %{{.+}}, 2] [1, 1, 1] : tensor<?x?x2xf32> into tensor<?x?x4xf32>
// CHECK: tensor.insert_slice %{{.+}} into %{{.+}}[0, 0, 2] [%{{.+}}, %{{.+}}, 2] [1, 1, 1] : tensor<?x?x2xf32> into tensor<?x?x4xf32>
nn.graph @silu_glu(%x: !nn.tensor<[B, T, 4], f32>, %dy: !nn.tensor<[B, T, 2], f32>)
    -> (!nn.tensor<[B, T, 4], f32>, !nn.tensor<[B, T, 2], f32>, !nn.tensor<[B, T, 4], f32>)
    dims [B: batch, T: seq(B)] {
  %s = nn.silu %x : !nn.tensor<[B, T, 4], f32>
  %g = nn.glu %x : !nn.tensor<[B, T, 4], f32>
  %dx = nn.glu_grad %dy, %x : !nn.tensor<[B, T, 2], f32>, !nn.tensor<[B, T, 4], f32>
  nn.return %s, %g, %dx : !nn.tensor<[B, T, 4], f32>, !nn.tensor<[B, T, 2], f32>, !nn.tensor<[B, T, 4], f32>
}

// -----

// scale multiplies each element by its constant.
// CHECK-LABEL: func.func @scale
// CHECK: linalg.generic
// CHECK:   %[[F:.+]] = arith.constant 5.000000e-01 : f32
// CHECK:   arith.mulf %{{.+}}, %[[F]] : f32
nn.graph @scale(%x: !nn.tensor<[B, T, 4], f32>) -> !nn.tensor<[B, T, 4], f32>
    dims [B: batch, T: seq(B)] {
  %h = nn.scale %x by 0.5 : !nn.tensor<[B, T, 4], f32>
  nn.return %h : !nn.tensor<[B, T, 4], f32>
}

// -----

// A seed with the batch offset (a data-parallel rank's part of a batch):
// the offset is added to the sequence index before it is hashed, so each
// sequence draws the mask it has in the whole batch.
// CHECK-LABEL: func.func @dropout_with_offset
// CHECK-SAME: %[[SEED:[^:]+]]: tensor<2xi32>)
// CHECK: %[[S:.+]] = tensor.extract %[[SEED]][%{{.+}}] : tensor<2xi32>
// CHECK: %[[OFF:.+]] = tensor.extract %[[SEED]][%{{.+}}] : tensor<2xi32>
// CHECK: linalg.generic {{.+}} ins(%{{.+}}, %[[S]], %[[OFF]] : tensor<?x?x3xf32>, i32, i32)
// CHECK-NEXT: ^bb0(%{{[^:]+}}: f32, %{{[^:]+}}: i32, %[[OFFE:[^:]+]]: i32,
// CHECK: %[[SEQ:.+]] = linalg.index 0 : index
// CHECK-NEXT: %[[SEQI:.+]] = arith.index_cast %[[SEQ]] : index to i32
// CHECK: %[[GLOBAL:.+]] = arith.addi %[[SEQI]], %[[OFFE]] : i32
// CHECK-NEXT: arith.xori %{{.+}}, %[[GLOBAL]] : i32
nn.graph @dropout_with_offset(%x: !nn.tensor<[B, T, 3], f32>, %s: !nn.tensor<[2], i32>)
    -> !nn.tensor<[B, T, 3], f32> dims [B: batch, T: seq(B)] {
  %d = nn.dropout %x seed %s rate 2.500000e-01 : !nn.tensor<[B, T, 3], f32>, !nn.tensor<[2], i32>
  nn.return %d : !nn.tensor<[B, T, 3], f32>
}

// -----

// SpecAugment with the batch offset: the whole batch's sequence index
// keys the masks, the part's own index reads the part's lengths.
// CHECK-LABEL: func.func @augment_with_offset
// CHECK-SAME: %[[LENS:[^:]+]]: tensor<?xi32>, %{{[^:]+}}: tensor<?x?x4xf32>, %[[SEED:[^:]+]]: tensor<2xi32>)
// CHECK: ^bb0(%{{[^:]+}}: f32, %{{[^:]+}}: i32, %[[OFFE:[^:]+]]: i32,
// CHECK: %[[SEQ:.+]] = linalg.index 0 : index
// CHECK-NEXT: %[[SEQI:.+]] = arith.index_cast %[[SEQ]] : index to i32
// CHECK: %[[GLOBAL:.+]] = arith.addi %[[SEQI]], %[[OFFE]] : i32
// CHECK-NEXT: %[[LOCAL:.+]] = arith.index_cast %[[SEQI]] : i32 to index
// CHECK-NEXT: tensor.extract %[[LENS]][%[[LOCAL]]] : tensor<?xi32>
// CHECK-NEXT: arith.xori %{{.+}}, %[[GLOBAL]] : i32
nn.graph @augment_with_offset(%x: !nn.tensor<[B, T, 4], f32>, %s: !nn.tensor<[2], i32>)
    -> !nn.tensor<[B, T, 4], f32> dims [B: batch, T: seq(B)] {
  %d = nn.spec_augment %x seed %s freq_masks 0 freq_width 0 time_masks 1 time_width 2 : !nn.tensor<[B, T, 4], f32>, !nn.tensor<[2], i32>
  nn.return %d : !nn.tensor<[B, T, 4], f32>
}
