// RUN: nn-opt %s --nn-convert-to-linalg="leave-ops=nn.lstm" | FileCheck %s
// RUN: not nn-opt %s --nn-convert-to-linalg="leave-ops=linalg.matmul" 2>&1 | FileCheck %s --check-prefix=FOREIGN
// RUN: not nn-opt %s --nn-convert-to-linalg="leave-ops=nn.call" 2>&1 | FileCheck %s --check-prefix=STRUCTURAL

// A partial conversion: the op left for a later pass keeps its nn types,
// meeting the lowered IR through unrealized casts; everything around it is
// lowered.
// CHECK-LABEL: func.func @encoder
// CHECK-SAME: (%{{.+}}: index, %{{.+}}: index, %{{.+}}: tensor<?xi32>, %[[X:.+]]: tensor<?x?x3xf32>, %[[WI:.+]]: tensor<8x3xf32>
// The function keeps the graph's dims, so that the left op still verifies.
// CHECK-SAME: nn.dims = [#nn.dim<B: batch>, #nn.dim<T: seq(B)>]
// CHECK-DAG: %[[XN:.+]] = builtin.unrealized_conversion_cast %[[X]] : tensor<?x?x3xf32> to !nn.tensor<[B, T, 3], f32>
// CHECK-DAG: %[[WIN:.+]] = builtin.unrealized_conversion_cast %[[WI]] : tensor<8x3xf32> to !nn.tensor<[8, 3], f32>
// CHECK: %[[H:.+]] = nn.lstm forward %[[XN]], %[[WIN]]
// CHECK: %[[HT:.+]] = builtin.unrealized_conversion_cast %[[H]] : !nn.tensor<[B, T, 2], f32> to tensor<?x?x2xf32>
// CHECK: linalg.generic {{.+}} ins(%[[HT]] : tensor<?x?x2xf32>)
// CHECK:   math.tanh
// CHECK-NOT: nn.
// CHECK: return
// FOREIGN: error: leave-ops: 'linalg.matmul' is not an nn op
// STRUCTURAL: error: leave-ops: 'nn.call' cannot be left
nn.graph @encoder(%x: !nn.tensor<[B, T, 3], f32>, %wi: !nn.tensor<[8, 3], f32>,
                  %wh: !nn.tensor<[8, 2], f32>, %b: !nn.tensor<[8], f32>)
    -> !nn.tensor<[B, T, 2], f32>
    dims [B: batch, T: seq(B)] {
  %h = nn.lstm forward %x, %wi, %wh, %b : !nn.tensor<[B, T, 3], f32>, !nn.tensor<[8, 3], f32>, !nn.tensor<[8, 2], f32>, !nn.tensor<[8], f32>
  %y = nn.tanh %h : !nn.tensor<[B, T, 2], f32>
  nn.return %y : !nn.tensor<[B, T, 2], f32>
}
