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
