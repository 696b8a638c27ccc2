// RUN: nn-opt %s --split-input-file --nn-convert-to-linalg | FileCheck %s

// Recurrent layers (RecurrentPatterns.cpp).

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
// again and writes its tape (per frame six blocks of H = 2: cells, gates
// i, f, g, o, output h), then a loop from the last frame down carries dh
// and dc; frames past a sequence's length are selected away. The gate
// gradients feed the GEMMs of a linear's backward: dx, dWi, dWh (against
// the previous frame's output) and the bias sum.
// CHECK-LABEL: func.func @lstm_grad
// CHECK: scf.for {{.+}} -> (tensor<?x2xf32>, tensor<?x2xf32>, tensor<?x?x2xf32>, tensor<?x?x12xf32>)
// CHECK-COUNT-6: tensor.insert_slice %{{.+}} into %{{.+}}[0, %{{.+}}, {{[0-9]+}}] [%{{.+}}, 1, 2]
// CHECK: scf.for %[[S:.+]] = {{.+}} iter_args(%[[DH:.+]] = %{{.+}}, %[[DC:.+]] = %{{.+}}, %[[DG:.+]] = %{{.+}}) -> (tensor<?x2xf32>, tensor<?x2xf32>, tensor<?x?x8xf32>)
// CHECK:   %[[T:.+]] = arith.subi %{{.+}}, %[[S]]
// CHECK:   linalg.generic
// CHECK:     arith.cmpi slt, %[[T]]
// CHECK:     arith.select
// CHECK:   tensor.insert_slice %{{.+}} into %[[DG]][0, %[[T]], 0] [%{{.+}}, 1, 2]
// CHECK:   tensor.insert_slice %{{.+}} into %{{.+}}[0, %[[T]], 6] [%{{.+}}, 1, 2]
// CHECK:   linalg.matmul ins(%{{.+}}, %{{.+}} : tensor<?x8xf32>, tensor<8x2xf32>)
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
// direction's blocks from feature 6H = 12 on), nothing runs forward again:
// the only recurrences are the forward's two and the backward's two.
// CHECK-LABEL: func.func @lstm_with_tape
// CHECK: %[[TAPE:.+]] = tensor.empty(%{{.+}}, %{{.+}}) : tensor<?x?x24xf32>
// CHECK: scf.for {{.+}} iter_args({{.+}} = %[[TAPE]]) -> (tensor<?x2xf32>, tensor<?x2xf32>, tensor<?x?x2xf32>, tensor<?x?x24xf32>)
// CHECK: tensor.insert_slice %{{.+}} into %{{.+}}[0, %{{.+}}, 0] [%{{.+}}, 1, 2]
// CHECK: scf.for {{.+}} -> (tensor<?x2xf32>, tensor<?x2xf32>, tensor<?x?x2xf32>, tensor<?x?x24xf32>)
// CHECK: tensor.insert_slice %{{.+}} into %{{.+}}[0, %{{.+}}, 12] [%{{.+}}, 1, 2]
// CHECK-COUNT-2: scf.for {{.+}} -> (tensor<?x2xf32>, tensor<?x2xf32>, tensor<?x?x8xf32>)
// CHECK-NOT: scf.for
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
