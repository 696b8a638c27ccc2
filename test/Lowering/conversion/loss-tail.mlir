// RUN: nn-opt %s --split-input-file --nn-convert-to-linalg | FileCheck %s

// The fused loss tail (LossTailPatterns.cpp): linear_cross_entropy, its
// gradient and linear_cross_entropy_train lower to one sweep over blocks
// of rows (the positions flattened); each block's logits come from one
// GEMM and are reduced to a log-sum-exp and the target's logit, so no
// [rows, V] value exists beyond one block. A block holds a multiple of 16
// rows in [64, 4096], about 2560000 / V.

// Padded positions with a bias and label smoothing 0.1, V = 3 (4096 rows
// per block): per block, the bias broadcast into [n, V], x W^T on top of
// it, the row maximum, then one pass summing exp(z - max) and z, then per
// row lse = max + log(sum) and the smoothed loss
// -(0.9 lp(y) + 0.05 (sum_c lp(c) - lp(y))), sum_c lp(c) = sum z - 3 lse,
// written into the loss's rows; the rows go back to [B, T].
// CHECK-LABEL: func.func @forward
// CHECK-SAME: (%[[B:[a-z0-9]+]]: index, %[[T:[a-z0-9]+]]: index, %[[TLEN:[a-z0-9]+]]: tensor<?xi32>, %[[X:[a-z0-9]+]]: tensor<?x?x4xf32>, %[[W:[a-z0-9]+]]: tensor<3x4xf32>, %[[BIAS:[a-z0-9]+]]: tensor<3xf32>, %[[Y:[a-z0-9]+]]: tensor<?x?xi32>) -> tensor<?x?xf32>
// CHECK-NOT: tensor<?x?x3xf32>
// CHECK: %[[ROWSX:.+]] = tensor.collapse_shape %[[X]] {{\[}}[0, 1], [2]] : tensor<?x?x4xf32> into tensor<?x4xf32>
// CHECK-NEXT: %[[ROWSY:.+]] = tensor.collapse_shape %[[Y]] {{\[}}[0, 1]] : tensor<?x?xi32> into tensor<?xi32>
// CHECK: %[[ROWS:.+]] = tensor.dim %[[ROWSX]], %c0{{(_[0-9]+)?}} : tensor<?x4xf32>
// CHECK-NEXT: %[[LOSS0:.+]] = tensor.empty(%[[ROWS]]) : tensor<?xf32>
// CHECK: %[[STEP:.+]] = arith.constant 4096 : index
// CHECK-NEXT: %[[LOSSROWS:.+]] = scf.for %[[FIRST:.+]] = %{{.+}} to %[[ROWS]] step %[[STEP]] iter_args(%[[LOSSACC:.+]] = %[[LOSS0]]) -> (tensor<?xf32>) {
// CHECK-NEXT: %[[LEFT:.+]] = arith.subi %[[ROWS]], %[[FIRST]] : index
// CHECK-NEXT: %[[N:.+]] = arith.minsi %[[STEP]], %[[LEFT]] : index
// CHECK-NEXT: %[[XB:.+]] = tensor.extract_slice %[[ROWSX]][%[[FIRST]], 0] [%[[N]], 4] [1, 1] : tensor<?x4xf32> to tensor<?x4xf32>
// CHECK-NEXT: %[[YB:.+]] = tensor.extract_slice %[[ROWSY]][%[[FIRST]]] [%[[N]]] [1] : tensor<?xi32> to tensor<?xi32>
// CHECK: %[[BROADCAST:.+]] = linalg.generic {{{.+}}iterator_types = ["parallel", "parallel"]} ins(%[[BIAS]] : tensor<3xf32>) outs(%{{.+}} : tensor<?x3xf32>)
// CHECK: %[[Z:.+]] = linalg.matmul_transpose_b ins(%[[XB]], %[[W]] : tensor<?x4xf32>, tensor<3x4xf32>) outs(%[[BROADCAST]] : tensor<?x3xf32>) -> tensor<?x3xf32>
// CHECK: %[[MAX:.+]] = linalg.generic {{{.+}}iterator_types = ["parallel", "reduction"]} ins(%[[Z]] : tensor<?x3xf32>)
// CHECK: arith.maximumf
// CHECK: %[[SUMS:.+]]:2 = linalg.generic {{{.+}}iterator_types = ["parallel", "reduction"]} ins(%[[Z]], %[[MAX]] : tensor<?x3xf32>, tensor<?xf32>)
// CHECK-NEXT: ^bb0(%[[ZV:[a-z0-9_]+]]: f32, %[[MV:[a-z0-9_]+]]: f32, %[[SE:[a-z0-9_]+]]: f32, %[[SZ:[a-z0-9_]+]]: f32):
// CHECK-NEXT: %[[D:.+]] = arith.subf %[[ZV]], %[[MV]] : f32
// CHECK-NEXT: %[[E:.+]] = math.exp %[[D]] : f32
// CHECK-NEXT: %[[NSE:.+]] = arith.addf %[[SE]], %[[E]] fastmath<reassoc> : f32
// CHECK-NEXT: %[[NSZ:.+]] = arith.addf %[[SZ]], %[[ZV]] fastmath<reassoc> : f32
// CHECK-NEXT: linalg.yield %[[NSE]], %[[NSZ]] : f32, f32
// CHECK: %[[LOSSB:.+]] = tensor.extract_slice %[[LOSSACC]][%[[FIRST]]] [%[[N]]] [1] : tensor<?xf32> to tensor<?xf32>
// CHECK: %[[PERROW:.+]]:2 = linalg.generic {{{.+}}iterator_types = ["parallel"]} ins(%[[MAX]], %[[SUMS]]#0, %[[YB]], %[[SUMS]]#1 : tensor<?xf32>, tensor<?xf32>, tensor<?xi32>, tensor<?xf32>) outs(%[[LOSSB]], %{{.+}} : tensor<?xf32>, tensor<?xf32>)
// CHECK-NEXT: ^bb0(%[[RM:[a-z0-9_]+]]: f32, %[[RS:[a-z0-9_]+]]: f32, %[[RY:[a-z0-9_]+]]: i32, %[[RZ:[a-z0-9_]+]]: f32, %{{.+}}: f32, %{{.+}}: f32):
// CHECK-NEXT: %[[LOGSUM:.+]] = math.log %[[RS]] : f32
// CHECK-NEXT: %[[LSE:.+]] = arith.addf %[[RM]], %[[LOGSUM]] : f32
// CHECK-DAG: %[[ROW:.+]] = linalg.index 0 : index
// CHECK-DAG: %[[CLASS:.+]] = arith.maxsi %{{.+}}, %c0{{(_[0-9]+)?}} : index
// CHECK: %[[PICKED:.+]] = tensor.extract %[[Z]][%[[ROW]], %[[CLASS]]] : tensor<?x3xf32>
// CHECK-NEXT: %[[LP:.+]] = arith.subf %[[PICKED]], %[[LSE]] : f32
// CHECK: %[[VCONST:.+]] = arith.constant 3.000000e+00 : f32
// CHECK-NEXT: %[[VLSE:.+]] = arith.mulf %[[VCONST]], %[[LSE]] : f32
// CHECK-NEXT: %[[ALL:.+]] = arith.subf %[[RZ]], %[[VLSE]] : f32
// CHECK-NEXT: %[[OTHERS:.+]] = arith.subf %[[ALL]], %[[LP]] : f32
// CHECK-NEXT: %[[OFF:.+]] = arith.constant 5.000000e-02 : f32
// CHECK-NEXT: %[[OFFTERM:.+]] = arith.mulf %[[OFF]], %[[OTHERS]] : f32
// CHECK-NEXT: %[[ON:.+]] = arith.constant 0.899999976 : f32
// CHECK-NEXT: %[[ONTERM:.+]] = arith.mulf %[[ON]], %[[LP]] : f32
// CHECK-NEXT: %[[SUM:.+]] = arith.addf %[[ONTERM]], %[[OFFTERM]] : f32
// CHECK-NEXT: %[[LOSS:.+]] = arith.negf %[[SUM]] : f32
// CHECK-NEXT: linalg.yield %[[LOSS]], %[[LSE]] : f32, f32
// CHECK: %[[WRITTEN:.+]] = tensor.insert_slice %[[PERROW]]#0 into %[[LOSSACC]][%[[FIRST]]] [%{{.+}}] [1] : tensor<?xf32> into tensor<?xf32>
// CHECK-NEXT: scf.yield %[[WRITTEN]] : tensor<?xf32>
// CHECK: %[[SHAPE:.+]] = tensor.from_elements %[[B]], %[[T]] : tensor<2xindex>
// CHECK-NEXT: %[[RESULT:.+]] = tensor.reshape %[[LOSSROWS]](%[[SHAPE]]) : (tensor<?xf32>, tensor<2xindex>) -> tensor<?x?xf32>
// CHECK-NEXT: return %[[RESULT]] : tensor<?x?xf32>
nn.graph @forward(%x: !nn.tensor<[B, T, 4], f32>, %w: !nn.tensor<[3, 4], f32>, %b: !nn.tensor<[3], f32>, %y: !nn.tensor<[B, T], i32>) -> !nn.tensor<[B, T], f32>
    dims [B: batch, T: seq(B)] {
  %l = nn.linear_cross_entropy %x, %w, %b targets %y label_smoothing 0.1 : !nn.tensor<[B, T, 4], f32>, !nn.tensor<[3, 4], f32>, !nn.tensor<[B, T], i32>, !nn.tensor<[3], f32>
  nn.return %l : !nn.tensor<[B, T], f32>
}

// -----

// Packed rows, no bias, V = 10000: blocks of 2560000 / 10000 = 256 rows;
// the logits start from zeros; the loss is -(z[y] - lse) and stays [N]
// (no reshape). (Generic form: the custom form of a bias-less op does not
// parse back.)
// CHECK-LABEL: func.func @block_rows
// CHECK-SAME: %[[X:[a-z0-9]+]]: tensor<?x4xf32>, %[[W:[a-z0-9]+]]: tensor<10000x4xf32>, %[[Y:[a-z0-9]+]]: tensor<?xi32>) -> tensor<?xf32>
// CHECK-NOT: tensor.collapse_shape
// CHECK: %[[ROWS:.+]] = tensor.dim %[[X]], %c0{{(_[0-9]+)?}} : tensor<?x4xf32>
// CHECK: %[[STEP:.+]] = arith.constant 256 : index
// CHECK-NEXT: %[[LOSSROWS:.+]] = scf.for %[[FIRST:.+]] = %{{.+}} to %[[ROWS]] step %[[STEP]] iter_args(%{{.+}}) -> (tensor<?xf32>) {
// CHECK: %[[ZEROS:.+]] = linalg.fill ins(%{{.+}} : f32) outs(%{{.+}} : tensor<?x10000xf32>) -> tensor<?x10000xf32>
// CHECK-NEXT: %[[Z:.+]] = linalg.matmul_transpose_b ins(%{{.+}}, %[[W]] : tensor<?x4xf32>, tensor<10000x4xf32>) outs(%[[ZEROS]] : tensor<?x10000xf32>) -> tensor<?x10000xf32>
// CHECK: %[[PICKED:.+]] = tensor.extract %[[Z]][%{{.+}}, %{{.+}}] : tensor<?x10000xf32>
// CHECK-NEXT: %[[LP:.+]] = arith.subf %[[PICKED]], %{{.+}} : f32
// CHECK-NEXT: %[[LOSS:.+]] = arith.negf %[[LP]] : f32
// CHECK-NEXT: linalg.yield %[[LOSS]], %{{.+}} : f32, f32
// CHECK: return %[[LOSSROWS]] : tensor<?xf32>
nn.graph @block_rows(%x: !nn.tensor<[N, 4], f32>, %w: !nn.tensor<[10000, 4], f32>, %y: !nn.tensor<[N], i32>) -> !nn.tensor<[N], f32>
    dims [B: batch, T: seq(B), N: packed(B, T)] {
  %l = "nn.linear_cross_entropy"(%x, %w, %y) <{label_smoothing = 0.000000e+00 : f64}> : (!nn.tensor<[N, 4], f32>, !nn.tensor<[10000, 4], f32>, !nn.tensor<[N], i32>) -> !nn.tensor<[N], f32>
  nn.return %l : !nn.tensor<[N], f32>
}

// -----

// The recomputing gradient, packed, only the weight gradient used: the
// row weights are the incoming gradient (packed rows have no padding to
// mask), no loss rows are kept, and per block dz = g (softmax - onehot)
// in place of the logits, then dW += dz^T x (loops (p, o, i), the rows
// contracted). No input-gradient GEMM, no bias sum; the unused gradients
// are empty tensors.
// CHECK-LABEL: func.func @grad_weight_only
// CHECK-SAME: %[[G:[a-z0-9]+]]: tensor<?xf32>, %[[X:[a-z0-9]+]]: tensor<?x4xf32>, %[[W:[a-z0-9]+]]: tensor<3x4xf32>, %[[Y:[a-z0-9]+]]: tensor<?xi32>) -> tensor<3x4xf32>
// CHECK: %[[WEIGHTS:.+]] = linalg.generic {{{.+}}iterator_types = ["parallel"]} ins(%[[G]] : tensor<?xf32>)
// CHECK-NEXT: ^bb0(%[[GV:[a-z0-9_]+]]: f32, %{{.+}}: f32):
// CHECK-NEXT: linalg.yield %[[GV]] : f32
// CHECK: %[[DW0:.+]] = linalg.fill ins(%{{.+}} : f32) outs(%{{.+}} : tensor<3x4xf32>) -> tensor<3x4xf32>
// CHECK: %[[DW:.+]] = scf.for %[[FIRST:.+]] = %{{.+}} to %{{.+}} step %{{.+}} iter_args(%[[DWACC:.+]] = %[[DW0]]) -> (tensor<3x4xf32>) {
// CHECK: %[[XB:.+]] = tensor.extract_slice %[[X]][%[[FIRST]], 0] [%{{.+}}, 4] [1, 1] : tensor<?x4xf32> to tensor<?x4xf32>
// CHECK: %[[YB:.+]] = tensor.extract_slice %[[Y]][%[[FIRST]]] [%{{.+}}] [1] : tensor<?xi32> to tensor<?xi32>
// CHECK: %[[WB:.+]] = tensor.extract_slice %[[WEIGHTS]][%[[FIRST]]] [%{{.+}}] [1] : tensor<?xf32> to tensor<?xf32>
// CHECK: %[[Z:.+]] = linalg.matmul_transpose_b ins(%[[XB]], %[[W]] : tensor<?x4xf32>, tensor<3x4xf32>)
// CHECK: %[[PERROW:.+]]:2 = linalg.generic
// CHECK: %[[DZ:.+]] = linalg.generic {indexing_maps = [#[[ROWMAP:map[0-9]*]], #[[ROWMAP]], #[[ROWMAP]], #{{.+}}], iterator_types = ["parallel", "parallel"]} ins(%[[PERROW]]#1, %[[WB]], %[[YB]] : tensor<?xf32>, tensor<?xf32>, tensor<?xi32>) outs(%[[Z]] : tensor<?x3xf32>)
// CHECK-NEXT: ^bb0(%[[LSE:[a-z0-9_]+]]: f32, %[[WV:[a-z0-9_]+]]: f32, %[[YV:[a-z0-9_]+]]: i32, %[[ZV:[a-z0-9_]+]]: f32):
// CHECK-NEXT: %[[SHIFTED:.+]] = arith.subf %[[ZV]], %[[LSE]] : f32
// CHECK-NEXT: %[[P:.+]] = math.exp %[[SHIFTED]] : f32
// CHECK-DAG: %[[CLASS:.+]] = linalg.index 1 : index
// CHECK-DAG: %[[TARGET:.+]] = arith.maxsi %{{.+}}, %c0{{(_[0-9]+)?}} : index
// CHECK: %[[ISTARGET:.+]] = arith.cmpi eq, %[[CLASS]], %[[TARGET]] : index
// CHECK-DAG: %[[OFFV:.+]] = arith.constant 0.000000e+00 : f32
// CHECK-DAG: %[[ONV:.+]] = arith.constant 1.000000e+00 : f32
// CHECK: %[[WANT:.+]] = arith.select %[[ISTARGET]], %[[ONV]], %[[OFFV]] : f32
// CHECK-NEXT: %[[DIFF:.+]] = arith.subf %[[P]], %[[WANT]] : f32
// CHECK-NEXT: %[[SCALED:.+]] = arith.mulf %[[WV]], %[[DIFF]] : f32
// CHECK-NEXT: linalg.yield %[[SCALED]] : f32
// CHECK-NOT: linalg.matmul
// CHECK: %[[NEWDW:.+]] = linalg.generic {indexing_maps = [#[[PO:map[0-9]*]], #[[PI:map[0-9]*]], #[[OI:map[0-9]*]]], iterator_types = ["reduction", "parallel", "parallel"]} ins(%[[DZ]], %[[XB]] : tensor<?x3xf32>, tensor<?x4xf32>) outs(%[[DWACC]] : tensor<3x4xf32>)
// CHECK-NEXT: ^bb0(%[[DZV:[a-z0-9_]+]]: f32, %[[XV:[a-z0-9_]+]]: f32, %[[ACC:[a-z0-9_]+]]: f32):
// CHECK-NEXT: %[[PROD:.+]] = arith.mulf %[[DZV]], %[[XV]] : f32
// CHECK-NEXT: %[[ADDED:.+]] = arith.addf %[[ACC]], %[[PROD]] : f32
// CHECK-NEXT: linalg.yield %[[ADDED]] : f32
// CHECK-NOT: linalg.generic
// CHECK: scf.yield %[[NEWDW]] : tensor<3x4xf32>
// CHECK-NOT: linalg.
// CHECK: return %[[DW]] : tensor<3x4xf32>
nn.graph @grad_weight_only(%g: !nn.tensor<[N], f32>, %x: !nn.tensor<[N, 4], f32>, %w: !nn.tensor<[3, 4], f32>, %y: !nn.tensor<[N], i32>) -> !nn.tensor<[3, 4], f32>
    dims [B: batch, T: seq(B), N: packed(B, T)] {
  %dx, %dw, %db = "nn.linear_cross_entropy_grad"(%g, %x, %w, %y) <{label_smoothing = 0.000000e+00 : f64}> : (!nn.tensor<[N], f32>, !nn.tensor<[N, 4], f32>, !nn.tensor<[3, 4], f32>, !nn.tensor<[N], i32>) -> (!nn.tensor<[N, 4], f32>, !nn.tensor<[3, 4], f32>, !nn.tensor<[3], f32>)
  nn.return %dw : !nn.tensor<[3, 4], f32>
}

// -----

// The training sweep, padded, normalize per_frame scale 2: the seed is
// 2 / (sum of the lengths), 0 for no frames, at valid positions and 0 at
// padded ones. Each block's input rows are copied with the unweighted
// (padded) ones zeroed, so that NaN in padding reaches no sum; that copy
// feeds the logits GEMM and the weight gradient. Per block: the loss
// rows, dx = dz W into the input gradient's rows (zeroed first), dW +=
// dz^T x, db += the column sums of dz. The loss and the input gradient
// go back to [B, T] and [B, T, 4].
// CHECK-LABEL: func.func @train
// CHECK-SAME: (%[[B:[a-z0-9]+]]: index, %[[T:[a-z0-9]+]]: index, %[[TLEN:[a-z0-9]+]]: tensor<?xi32>, %[[X:[a-z0-9]+]]: tensor<?x?x4xf32>, %[[W:[a-z0-9]+]]: tensor<3x4xf32>, %[[BIAS:[a-z0-9]+]]: tensor<3xf32>, %[[Y:[a-z0-9]+]]: tensor<?x?xi32>) -> (tensor<?x?xf32>, tensor<?x?x4xf32>, tensor<3x4xf32>, tensor<3xf32>)
// CHECK: %[[FRAMES:.+]] = linalg.generic {{{.+}}iterator_types = ["reduction"]} ins(%[[TLEN]] : tensor<?xi32>) outs(%{{.+}} : tensor<f64>)
// CHECK: arith.sitofp
// CHECK: %[[SEED:.+]] = linalg.generic {{{.+}}iterator_types = []} ins(%[[FRAMES]] : tensor<f64>) outs(%{{.+}} : tensor<f64>)
// CHECK-NEXT: ^bb0(%[[NF:[a-z0-9_]+]]: f64, %{{.+}}: f64):
// CHECK-DAG: %[[SCALE:.+]] = arith.constant 2.000000e+00 : f64
// CHECK-DAG: %[[RATIO:.+]] = arith.divf %[[SCALE]], %[[NF]] : f64
// CHECK-DAG: %[[NONE:.+]] = arith.cmpf oeq, %[[NF]], %{{.+}} : f64
// CHECK: %[[SEEDV:.+]] = arith.select %[[NONE]], %{{.+}}, %[[RATIO]] : f64
// CHECK-NEXT: linalg.yield %[[SEEDV]] : f64
// CHECK: %[[ROWSX:.+]] = tensor.collapse_shape %[[X]]
// CHECK: %[[ROWSY:.+]] = tensor.collapse_shape %[[Y]]
// CHECK: %[[WEIGHTS:.+]] = linalg.generic {{{.+}}iterator_types = ["parallel", "parallel"]} ins(%[[SEED]], %[[TLEN]] : tensor<f64>, tensor<?xi32>) outs(%{{.+}} : tensor<?x?xf32>)
// CHECK-NEXT: ^bb0(%[[SV:[a-z0-9_]+]]: f64, %[[LEN:[a-z0-9_]+]]: i32, %{{.+}}: f32):
// CHECK-NEXT: %[[S32:.+]] = arith.truncf %[[SV]] : f64 to f32
// CHECK-DAG: %[[N:.+]] = arith.index_cast %[[LEN]] : i32 to index
// CHECK-DAG: %[[FRAME:.+]] = linalg.index 1 : index
// CHECK: %[[VALID:.+]] = arith.cmpi slt, %[[FRAME]], %[[N]] : index
// CHECK: %[[WV:.+]] = arith.select %[[VALID]], %[[S32]], %{{.+}} : f32
// CHECK-NEXT: linalg.yield %[[WV]] : f32
// CHECK: %[[ROWSW:.+]] = tensor.collapse_shape %[[WEIGHTS]] {{\[}}[0, 1]] : tensor<?x?xf32> into tensor<?xf32>
// CHECK: %[[DB0:.+]] = linalg.fill ins(%{{.+}} : f32) outs(%{{.+}} : tensor<3xf32>) -> tensor<3xf32>
// CHECK: %[[SWEEP:.+]]:4 = scf.for %[[FIRST:.+]] = %{{.+}} to %{{.+}} step %{{.+}} iter_args(%[[LOSSACC:.+]] = %{{.+}}, %[[DXACC:.+]] = %{{.+}}, %[[DWACC:.+]] = %{{.+}}, %[[DBACC:.+]] = %[[DB0]]) -> (tensor<?xf32>, tensor<?x4xf32>, tensor<3x4xf32>, tensor<3xf32>) {
// CHECK: %[[XB:.+]] = tensor.extract_slice %[[ROWSX]][%[[FIRST]], 0]
// CHECK: %[[WB:.+]] = tensor.extract_slice %[[ROWSW]][%[[FIRST]]]
// CHECK: %[[MASKED:.+]] = linalg.generic {{{.+}}iterator_types = ["parallel", "parallel"]} ins(%[[XB]], %[[WB]] : tensor<?x4xf32>, tensor<?xf32>)
// CHECK-NEXT: ^bb0(%[[XV:[a-z0-9_]+]]: f32, %[[WEIGHT:[a-z0-9_]+]]: f32, %{{.+}}: f32):
// CHECK-NEXT: %[[ZERO:.+]] = arith.constant 0.000000e+00 : f32
// CHECK-NEXT: %[[UNWEIGHTED:.+]] = arith.cmpf oeq, %[[WEIGHT]], %[[ZERO]] : f32
// CHECK-NEXT: %[[KEPT:.+]] = arith.select %[[UNWEIGHTED]], %[[ZERO]], %[[XV]] : f32
// CHECK-NEXT: linalg.yield %[[KEPT]] : f32
// CHECK: %[[Z:.+]] = linalg.matmul_transpose_b ins(%[[MASKED]], %[[W]] : tensor<?x4xf32>, tensor<3x4xf32>)
// CHECK: %[[PERROW:.+]]:2 = linalg.generic
// CHECK: %[[LOSSES:.+]] = tensor.insert_slice %[[PERROW]]#0 into %[[LOSSACC]][%[[FIRST]]]
// CHECK: %[[DZ:.+]] = linalg.generic {{.+}} ins(%[[PERROW]]#1, %[[WB]], %{{.+}} : tensor<?xf32>, tensor<?xf32>, tensor<?xi32>) outs(%[[Z]] : tensor<?x3xf32>)
// CHECK: %[[DXB:.+]] = tensor.extract_slice %[[DXACC]][%[[FIRST]], 0] [%{{.+}}, 4] [1, 1] : tensor<?x4xf32> to tensor<?x4xf32>
// CHECK-NEXT: %{{.+}} = arith.constant 0.000000e+00 : f32
// CHECK-NEXT: %[[DXZERO:.+]] = linalg.fill ins(%{{.+}} : f32) outs(%[[DXB]] : tensor<?x4xf32>) -> tensor<?x4xf32>
// CHECK-NEXT: %[[DXROWS:.+]] = linalg.matmul ins(%[[DZ]], %[[W]] : tensor<?x3xf32>, tensor<3x4xf32>) outs(%[[DXZERO]] : tensor<?x4xf32>) -> tensor<?x4xf32>
// CHECK: %[[DX:.+]] = tensor.insert_slice %[[DXROWS]] into %[[DXACC]][%[[FIRST]], 0] [%{{.+}}, 4] [1, 1] : tensor<?x4xf32> into tensor<?x4xf32>
// CHECK-NEXT: %[[DW:.+]] = linalg.generic {{{.+}}iterator_types = ["reduction", "parallel", "parallel"]} ins(%[[DZ]], %[[MASKED]] : tensor<?x3xf32>, tensor<?x4xf32>) outs(%[[DWACC]] : tensor<3x4xf32>)
// CHECK: %[[DB:.+]] = linalg.generic {indexing_maps = [#{{.+}}, #[[COLUMN:map[0-9]*]]], iterator_types = ["reduction", "parallel"]} ins(%[[DZ]] : tensor<?x3xf32>) outs(%[[DBACC]] : tensor<3xf32>)
// CHECK-NEXT: ^bb0(%[[DZV:[a-z0-9_]+]]: f32, %[[DBV:[a-z0-9_]+]]: f32):
// CHECK-NEXT: %[[DBSUM:.+]] = arith.addf %[[DBV]], %[[DZV]] : f32
// CHECK-NEXT: linalg.yield %[[DBSUM]] : f32
// CHECK: scf.yield %[[LOSSES]], %[[DX]], %[[DW]], %[[DB]] : tensor<?xf32>, tensor<?x4xf32>, tensor<3x4xf32>, tensor<3xf32>
// CHECK: %[[LOSSSHAPE:.+]] = tensor.from_elements %[[B]], %[[T]] : tensor<2xindex>
// CHECK-NEXT: %[[LOSS:.+]] = tensor.reshape %[[SWEEP]]#0(%[[LOSSSHAPE]]) : (tensor<?xf32>, tensor<2xindex>) -> tensor<?x?xf32>
// CHECK: %[[DXSHAPE:.+]] = tensor.from_elements %[[B]], %[[T]], %c4{{(_[0-9]+)?}} : tensor<3xindex>
// CHECK-NEXT: %[[DXOUT:.+]] = tensor.reshape %[[SWEEP]]#1(%[[DXSHAPE]]) : (tensor<?x4xf32>, tensor<3xindex>) -> tensor<?x?x4xf32>
// CHECK-NEXT: return %[[LOSS]], %[[DXOUT]], %[[SWEEP]]#2, %[[SWEEP]]#3
nn.graph @train(%x: !nn.tensor<[B, T, 4], f32>, %w: !nn.tensor<[3, 4], f32>, %b: !nn.tensor<[3], f32>, %y: !nn.tensor<[B, T], i32>) -> (!nn.tensor<[B, T], f32>, !nn.tensor<[B, T, 4], f32>, !nn.tensor<[3, 4], f32>, !nn.tensor<[3], f32>)
    dims [B: batch, T: seq(B)] {
  %l, %dx, %dw, %db = nn.linear_cross_entropy_train %x, %w, %b targets %y normalize per_frame scale 2.0 : !nn.tensor<[B, T, 4], f32>, !nn.tensor<[3, 4], f32>, !nn.tensor<[B, T], i32>, !nn.tensor<[3], f32>
  nn.return %l, %dx, %dw, %db : !nn.tensor<[B, T], f32>, !nn.tensor<[B, T, 4], f32>, !nn.tensor<[3, 4], f32>, !nn.tensor<[3], f32>
}

// -----

// unnormalized: the seed is the scale itself (no sum of lengths); only
// the loss and the bias gradient are used, so the sweep computes neither
// the input nor the weight gradient.
// CHECK-LABEL: func.func @train_unnormalized
// CHECK: %[[SCALE:.+]] = arith.constant 5.000000e-01 : f64
// CHECK-NEXT: %[[SEED:.+]] = tensor.from_elements %[[SCALE]] : tensor<f64>
// CHECK: linalg.generic {{.+}} ins(%[[SEED]], %{{.+}} : tensor<f64>, tensor<?xi32>)
// CHECK: scf.for %{{.+}} = %{{.+}} to %{{.+}} step %{{.+}} iter_args(%{{.+}} = %{{.+}}, %{{.+}} = %{{.+}}) -> (tensor<?xf32>, tensor<3xf32>) {
// CHECK-NOT: linalg.matmul ins
// CHECK-NOT: iterator_types = ["reduction", "parallel", "parallel"]
// CHECK: linalg.generic {{{.+}}iterator_types = ["reduction", "parallel"]} ins(%{{.+}} : tensor<?x3xf32>) outs(%{{.+}} : tensor<3xf32>)
// CHECK-NEXT: ^bb0
// CHECK-NEXT: arith.addf
// CHECK-NEXT: linalg.yield
// CHECK-NOT: linalg.generic
// CHECK: scf.yield
nn.graph @train_unnormalized(%x: !nn.tensor<[B, T, 4], f32>, %w: !nn.tensor<[3, 4], f32>, %b: !nn.tensor<[3], f32>, %y: !nn.tensor<[B, T], i32>) -> (!nn.tensor<[B, T], f32>, !nn.tensor<[3], f32>)
    dims [B: batch, T: seq(B)] {
  %l, %dx, %dw, %db = nn.linear_cross_entropy_train %x, %w, %b targets %y normalize per_frame scale 0.5 unnormalized : !nn.tensor<[B, T, 4], f32>, !nn.tensor<[3, 4], f32>, !nn.tensor<[B, T], i32>, !nn.tensor<[3], f32>
  nn.return %l, %db : !nn.tensor<[B, T], f32>, !nn.tensor<[3], f32>
}

// -----

// A given inv_norm (a data-parallel step's frames of every rank): the
// seed divides the scale by it, and no sum of this batch's lengths is
// made.
// CHECK-LABEL: func.func @train_given_norm
// CHECK-SAME: %[[NORM:[a-z0-9]+]]: tensor<f64>)
// CHECK-NOT: iterator_types = ["reduction"]
// CHECK: linalg.generic {{{.+}}iterator_types = []} ins(%[[NORM]] : tensor<f64>) outs(%{{.+}} : tensor<f64>)
// CHECK-NEXT: ^bb0(%[[NF:[a-z0-9_]+]]: f64, %{{.+}}: f64):
// CHECK: arith.divf %{{.+}}, %[[NF]] : f64
nn.graph @train_given_norm(%x: !nn.tensor<[B, T, 4], f32>, %w: !nn.tensor<[3, 4], f32>, %y: !nn.tensor<[B, T], i32>, %n: !nn.tensor<[], f64>) -> (!nn.tensor<[B, T], f32>, !nn.tensor<[3, 4], f32>)
    dims [B: batch, T: seq(B)] {
  %l, %dx, %dw, %db = nn.linear_cross_entropy_train %x, %w targets %y normalize per_frame inv_norm %n scale 1.0 : !nn.tensor<[B, T, 4], f32>, !nn.tensor<[3, 4], f32>, !nn.tensor<[B, T], i32>
  nn.return %l, %dw : !nn.tensor<[B, T], f32>, !nn.tensor<[3, 4], f32>
}
