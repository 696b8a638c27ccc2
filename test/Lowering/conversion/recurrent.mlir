// RUN: nn-opt %s --split-input-file --nn-convert-to-linalg | FileCheck %s

// Recurrent layers (RecurrentPatterns.cpp).

// An LSTM runs in step order (PyTorch's packed sequences): each sequence's
// place among the sequences sorted by length (longest first, ties in batch
// order); the first row of each step, start(s) = sum_b min(len_b, s); each
// row's step by bisection over them. The real frames are gathered into
// rows, one GEMM projects them all, and each step of the loop works on the
// leading `running` rows of the state and on its own rows of the
// projection, with nothing masked. A generic puts the rows back in the
// padded layout, zero on padded frames (which it never reads).
// CHECK-LABEL: func.func @lstm
// CHECK: %[[PLACE:.+]] = linalg.generic {{.+}}iterator_types = ["parallel", "reduction"]
// CHECK:   arith.cmpi sgt
// CHECK: linalg.generic {{.+}}ins(%[[PLACE]]
// CHECK: %[[STARTS:.+]] = linalg.generic {{.+}}iterator_types = ["parallel", "reduction"]
// CHECK:   arith.minsi
// CHECK: %[[N:.+]] = tensor.extract %[[STARTS]][%{{.+}}] : tensor<?xi32>
// CHECK: scf.for {{.+}} = %c0{{.*}} to %c32
// CHECK:   arith.divui
// CHECK: %[[X:.+]] = tensor.collapse_shape %{{.+}} {{\[\[}}0, 1], [2]] : tensor<?x?x3xf32> into tensor<?x3xf32>
// CHECK: %[[ROWS:.+]] = linalg.generic
// CHECK:   tensor.extract %[[X]]
// CHECK: %[[PROJ:.+]] = linalg.matmul_transpose_b ins(%[[ROWS]], %{{.+}} : tensor<?x3xf32>, tensor<8x3xf32>)
// CHECK: scf.for %[[S:.+]] = {{.+}} iter_args(%[[H:.+]] = %{{.+}}, %[[C:.+]] = %{{.+}}, %[[Y:.+]] = %{{.+}}) -> (tensor<?x2xf32>, tensor<?x2xf32>, tensor<?x2xf32>)
// CHECK:   %[[START:.+]] = arith.index_cast
// CHECK:   %[[RUNNING:.+]] = arith.subi
// CHECK:   %[[HA:.+]] = tensor.extract_slice %[[H]][%{{.+}}, 0] [%[[RUNNING]], 2]
// CHECK:   tensor.extract_slice %[[PROJ]][%[[START]], 0] [%[[RUNNING]], 8]
// CHECK:   linalg.matmul_transpose_b ins(%[[HA]], %{{.+}} : tensor<?x2xf32>, tensor<8x2xf32>)
// CHECK:   linalg.generic
// CHECK-NOT: arith.select
// CHECK:     math.tanh
// CHECK:   tensor.insert_slice %{{.+}} into %[[Y]][%[[START]], 0]
// CHECK: linalg.generic
// CHECK:   scf.if
// CHECK:     tensor.extract %[[STARTS]]
// CHECK-LABEL: func.func @backward
// A backward direction's rows: step s of a sequence is its frame
// len - 1 - s.
// CHECK: linalg.generic
// CHECK:   %[[K:.+]] = arith.subi
// CHECK:   %[[SEQ:.+]] = arith.index_cast %{{.+}} : i32 to index
// CHECK:   %[[LEN:.+]] = arith.index_cast %{{.+}} : i32 to index
// CHECK:   %[[LAST:.+]] = arith.subi %[[LEN]], %c1
// CHECK:   arith.subi %[[LAST]]
// CHECK: scf.for
// CHECK: linalg.generic
// CHECK:   scf.if
nn.graph @lstm(%x: !nn.tensor<[B, T, 3], f32>, %wi: !nn.tensor<[8, 3], f32>,
               %wh: !nn.tensor<[8, 2], f32>, %b: !nn.tensor<[8], f32>)
    -> !nn.tensor<[B, T, 2], f32> dims [B: batch, T: seq(B)] {
  %h = nn.lstm forward %x, %wi, %wh, %b : !nn.tensor<[B, T, 3], f32>, !nn.tensor<[8, 3], f32>, !nn.tensor<[8, 2], f32>, !nn.tensor<[8], f32>
  nn.return %h : !nn.tensor<[B, T, 2], f32>
}
nn.graph @backward(%x: !nn.tensor<[B, T, 3], f32>, %wi: !nn.tensor<[8, 3], f32>,
                   %wh: !nn.tensor<[8, 2], f32>, %b: !nn.tensor<[8], f32>)
    -> !nn.tensor<[B, T, 2], f32> dims [B: batch, T: seq(B)] {
  %h = nn.lstm backward %x, %wi, %wh, %b : !nn.tensor<[B, T, 3], f32>, !nn.tensor<[8, 3], f32>, !nn.tensor<[8, 2], f32>, !nn.tensor<[8], f32>
  nn.return %h : !nn.tensor<[B, T, 2], f32>
}

// -----

// Bidirectional: the weights of each direction are slices of the stacked
// ones; the two directions' rows land side by side in the padded result,
// forward first. Unary activations
// are maps; dropout is the identity (no op at all).
// CHECK-LABEL: func.func @bidirectional
// CHECK: tensor.extract_slice %{{.+}}[0, 0, 0] [1, 8, 3] [1, 1, 1] : tensor<2x8x3xf32> to tensor<8x3xf32>
// CHECK: %[[FWD:.+]]:3 = scf.for
// CHECK: tensor.extract_slice %{{.+}}[1, 0, 0] [1, 8, 3] [1, 1, 1] : tensor<2x8x3xf32> to tensor<8x3xf32>
// CHECK: %[[BWD:.+]]:3 = scf.for
// CHECK: linalg.generic
// CHECK:   scf.if
// CHECK:     tensor.extract %[[FWD]]#2
// CHECK:     tensor.extract %[[BWD]]#2
// CHECK:     arith.select
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
  %h = nn.lstm bidirectional %x, %wi, %wh, %bias : !nn.tensor<[B, T, 3], f32>, !nn.tensor<[2, 8, 3], f32>, !nn.tensor<[2, 8, 2], f32>, !nn.tensor<[2, 8], f32>
  %r = nn.relu %h : !nn.tensor<[B, T, 4], f32>
  %t = nn.tanh %r : !nn.tensor<[B, T, 4], f32>
  %s = nn.sigmoid %t : !nn.tensor<[B, T, 4], f32>
  %g = nn.gelu %s : !nn.tensor<[B, T, 4], f32>
  %d = nn.dropout %g rate 5.000000e-01 : !nn.tensor<[B, T, 4], f32>
  nn.return %d : !nn.tensor<[B, T, 4], f32>
}

// -----

// The LSTM's backward (nn.lstm_grad) without a tape: the forward runs
// again and writes its tape rows (six blocks of H = 2: cells, gates i, f,
// g, o, output h), then a loop from the last step down carries dh and dc
// of the running sequences; only the cell before step 0 is selected away.
// The gate gradients [N, 4H] feed the GEMMs of a linear's backward: dx,
// dWi, dWh (against the previous step's output) and the bias sum; dx goes
// back to the padded layout.
// CHECK-LABEL: func.func @lstm_grad
// CHECK: scf.for {{.+}} -> (tensor<?x2xf32>, tensor<?x2xf32>, tensor<?x2xf32>, tensor<?x12xf32>)
// CHECK-COUNT-6: tensor.insert_slice %{{.+}} into %{{.+}}[%{{.+}}, {{[0-9]+}}] [%{{.+}}, 2]
// CHECK: scf.for %[[I:.+]] = {{.+}} iter_args(%[[DH:.+]] = %{{.+}}, %[[DC:.+]] = %{{.+}}, %[[DG:.+]] = %{{.+}}) -> (tensor<?x2xf32>, tensor<?x2xf32>, tensor<?x8xf32>)
// CHECK:   %[[S:.+]] = arith.subi %{{.+}}, %[[I]]
// CHECK:   %[[FIRST:.+]] = arith.cmpi slt, %[[S]], %c1
// CHECK:   linalg.generic
// CHECK:     arith.select %[[FIRST]]
// CHECK:   tensor.insert_slice %{{.+}} into %[[DG]][%[[START:.+]], 0] [%{{.+}}, 2]
// CHECK:   tensor.insert_slice %{{.+}} into %{{.+}}[%[[START]], 6] [%{{.+}}, 2]
// CHECK:   linalg.matmul ins(%{{.+}}, %{{.+}} : tensor<?x8xf32>, tensor<8x2xf32>)
// CHECK: linalg.matmul ins(%{{.+}}, %{{.+}} : tensor<?x8xf32>, tensor<8x3xf32>)
// CHECK: scf.if
// CHECK: return
nn.graph @lstm_grad(%dy: !nn.tensor<[B, T, 2], f32>, %x: !nn.tensor<[B, T, 3], f32>,
                    %wi: !nn.tensor<[8, 3], f32>, %wh: !nn.tensor<[8, 2], f32>,
                    %b: !nn.tensor<[8], f32>)
    -> (!nn.tensor<[B, T, 3], f32>, !nn.tensor<[8, 3], f32>, !nn.tensor<[8, 2], f32>, !nn.tensor<[8], f32>)
    dims [B: batch, T: seq(B)] {
  %dx, %dwi, %dwh, %db = nn.lstm_grad forward %dy, %x, %wi, %wh, %b : !nn.tensor<[B, T, 2], f32>, !nn.tensor<[B, T, 3], f32>, !nn.tensor<[8, 3], f32>, !nn.tensor<[8, 2], f32>, !nn.tensor<[8], f32>
  nn.return %dx, %dwi, %dwh, %db : !nn.tensor<[B, T, 3], f32>, !nn.tensor<[8, 3], f32>, !nn.tensor<[8, 2], f32>, !nn.tensor<[8], f32>
}

// -----

// With its forward's tape (nn.lstm_with_tape, bidirectional: the backward
// direction's blocks from feature 6H = 12 on, rows in step order in the
// first N of the tape's B * T), nothing runs forward again: the only
// recurrences are the forward's two and the backward's two.
// CHECK-LABEL: func.func @lstm_with_tape
// CHECK: %[[TAPE:.+]] = tensor.empty(%{{.+}}, %{{.+}}) : tensor<?x?x24xf32>
// CHECK: %[[TROWS:.+]] = tensor.collapse_shape %[[TAPE]] {{\[\[}}0, 1], [2]]
// CHECK: scf.for {{.+}} iter_args({{.+}} = %[[TROWS]]) -> (tensor<?x2xf32>, tensor<?x2xf32>, tensor<?x2xf32>, tensor<?x24xf32>)
// CHECK: tensor.insert_slice %{{.+}} into %{{.+}}[%{{.+}}, 0] [%{{.+}}, 2]
// CHECK: scf.for {{.+}} -> (tensor<?x2xf32>, tensor<?x2xf32>, tensor<?x2xf32>, tensor<?x24xf32>)
// CHECK: tensor.insert_slice %{{.+}} into %{{.+}}[%{{.+}}, 12] [%{{.+}}, 2]
// CHECK: tensor.reshape
// CHECK-COUNT-2: scf.for {{.+}} -> (tensor<?x2xf32>, tensor<?x2xf32>, tensor<?x8xf32>)
// CHECK-NOT: scf.for {{.+}} -> (tensor
// CHECK: return
nn.graph @lstm_with_tape(%x: !nn.tensor<[B, T, 3], f32>, %dy: !nn.tensor<[B, T, 4], f32>,
                         %wi: !nn.tensor<[2, 8, 3], f32>, %wh: !nn.tensor<[2, 8, 2], f32>,
                         %b: !nn.tensor<[2, 8], f32>)
    -> (!nn.tensor<[B, T, 4], f32>, !nn.tensor<[B, T, 3], f32>, !nn.tensor<[2, 8, 3], f32>)
    dims [B: batch, T: seq(B)] {
  %y, %tape = nn.lstm_with_tape bidirectional %x, %wi, %wh, %b : !nn.tensor<[B, T, 3], f32>, !nn.tensor<[2, 8, 3], f32>, !nn.tensor<[2, 8, 2], f32>, !nn.tensor<[2, 8], f32> -> !nn.tensor<[B, T, 4], f32>, !nn.tensor<[B, T, 24], f32>
  %dx, %dwi, %dwh, %db = nn.lstm_grad bidirectional %dy, %x, %wi, %wh, %b tape %tape : !nn.tensor<[B, T, 4], f32>, !nn.tensor<[B, T, 3], f32>, !nn.tensor<[2, 8, 3], f32>, !nn.tensor<[2, 8, 2], f32>, !nn.tensor<[2, 8], f32>, !nn.tensor<[B, T, 24], f32>
  nn.return %y, %dx, %dwi : !nn.tensor<[B, T, 4], f32>, !nn.tensor<[B, T, 3], f32>, !nn.tensor<[2, 8, 3], f32>
}

// -----

// Packed input [N, I]: the same step order, its rows found through each
// sequence's first packed row (the exclusive prefix sum of the lengths):
// the gather reads the packed input itself (no collapse), a backward
// direction's row is offset(b) + len(b) - 1 - step, and the scatter is a
// generic over the packed rows, each finding its sequence by bisection
// over the offsets, with no padded frame to branch around.
// CHECK-LABEL: func.func @packed_lstm
// CHECK-SAME: %[[LEN:[^:]+]]: tensor<?xi32>, %[[X:[^:]+]]: tensor<?x3xf32>
// CHECK: %[[OFFSETS:.+]]:2 = scf.for
// CHECK:   tensor.insert
// The step of each row, then the sequence of each packed row.
// CHECK: scf.for {{.+}} = %c0{{.*}} to %c32
// CHECK: %[[SEQ:.+]] = linalg.generic
// CHECK:   scf.for {{.+}} = %c0{{.*}} to %c32
// CHECK:     tensor.extract %[[OFFSETS]]#0
// CHECK: %[[SOURCE:.+]] = linalg.generic
// CHECK:   tensor.extract %[[LEN]]
// CHECK:   arith.subi
// CHECK:   %[[FIRST:.+]] = tensor.extract %[[OFFSETS]]#0
// CHECK:   arith.addi
// CHECK-NOT: tensor.collapse_shape
// CHECK: linalg.generic {{.+}} ins(%[[SOURCE]] : tensor<?xi32>)
// CHECK:   tensor.extract %[[X]]
// CHECK: linalg.matmul_transpose_b
// CHECK: %[[OUT:.+]] = linalg.generic {{.+}} ins(%[[SEQ]] : tensor<?xi32>) outs(%{{.+}} : tensor<?x2xf32>)
// CHECK-NOT: scf.if
// CHECK:   tensor.extract %[[OFFSETS]]#0
// CHECK: return %[[OUT]] : tensor<?x2xf32>
nn.graph @packed_lstm(%x: !nn.tensor<[N, 3], f32>, %wi: !nn.tensor<[8, 3], f32>, %wh: !nn.tensor<[8, 2], f32>, %b: !nn.tensor<[8], f32>) -> !nn.tensor<[N, 2], f32>
    dims [B: batch, T: seq(B), N: packed(B, T)] {
  %h = nn.lstm backward %x, %wi, %wh, %b : !nn.tensor<[N, 3], f32>, !nn.tensor<[8, 3], f32>, !nn.tensor<[8, 2], f32>, !nn.tensor<[8], f32>
  nn.return %h : !nn.tensor<[N, 2], f32>
}
