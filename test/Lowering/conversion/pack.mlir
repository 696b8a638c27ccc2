// RUN: nn-opt %s --split-input-file --nn-convert-to-linalg | FileCheck %s

// pack, unpack and broadcast_seq (PackPatterns.cpp).

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

// broadcast_seq: frame t of sequence b is input[b] while t < len(b), zero
// after.
// CHECK-DAG: #[[IN:.+]] = affine_map<(d0, d1, d2) -> (d0, d2)>
// CHECK-DAG: #[[BATCH:.+]] = affine_map<(d0, d1, d2) -> (d0)>
// CHECK-DAG: #[[OUT:.+]] = affine_map<(d0, d1, d2) -> (d0, d1, d2)>
// CHECK-LABEL: func.func @broadcast_seq
// CHECK-SAME: (%[[B:.+]]: index, %[[T:.+]]: index, %[[LEN:.+]]: tensor<?xi32>, %[[S:.+]]: tensor<?x4xf32>)
// CHECK: %[[E:.+]] = tensor.empty(%[[B]], %[[T]]) : tensor<?x?x4xf32>
// CHECK: linalg.generic {indexing_maps = [#[[IN]], #[[BATCH]], #[[OUT]]], iterator_types = ["parallel", "parallel", "parallel"]} ins(%[[S]], %[[LEN]] : tensor<?x4xf32>, tensor<?xi32>) outs(%[[E]] : tensor<?x?x4xf32>)
// CHECK:   %[[FRAME:.+]] = linalg.index 1
// CHECK:   %[[VALID:.+]] = arith.cmpi slt, %[[FRAME]]
// CHECK:   arith.select %[[VALID]]
nn.graph @broadcast_seq(%s: !nn.tensor<[B, 4], f32>) -> !nn.tensor<[B, T, 4], f32>
    dims [B: batch, T: seq(B)] {
  %y = nn.broadcast_seq %s : !nn.tensor<[B, 4], f32> -> !nn.tensor<[B, T, 4], f32>
  nn.return %y : !nn.tensor<[B, T, 4], f32>
}
