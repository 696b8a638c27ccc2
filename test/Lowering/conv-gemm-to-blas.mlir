// RUN: nn-opt %s --split-input-file --nn-to-buffers --nn-gemm-to-blas=runtime=onednn | FileCheck %s

// A one-group conv1d and both its gradients are GEMMs on the gathered
// input windows [b, t', K * C] against the weight as [O, K * C]
// (ConvPoolReducePatterns.cpp): the forward (windows W^T), the input
// gradient's taps (dy W) and the weight gradient (dy^T windows), each one
// BLAS call (A B^T, A B, A^T B), padded or packed.
// CHECK-LABEL: func.func @conv_padded
// CHECK: call @nn_cpu_sgemm(%{{[^,]+}}, %c101_i32{{[_0-9]*}}, %c111_i32{{[_0-9]*}}, %c112_i32
// CHECK: call @nn_cpu_sgemm(%{{[^,]+}}, %c101_i32{{[_0-9]*}}, %c111_i32{{[_0-9]*}}, %c111_i32
// CHECK: call @nn_cpu_sgemm(%{{[^,]+}}, %c101_i32{{[_0-9]*}}, %c112_i32{{[_0-9]*}}, %c111_i32
// CHECK-NOT: call @nn_cpu_sgemm
// CHECK: return
nn.graph @conv_padded(%x: !nn.tensor<[B, T, 2], f32>, %w: !nn.tensor<[3, 3, 2], f32>,
                      %dy: !nn.tensor<[B, T2, 3], f32>)
    -> (!nn.tensor<[B, T2, 3], f32>, !nn.tensor<[B, T, 2], f32>, !nn.tensor<[3, 3, 2], f32>)
    dims [B: batch, T: seq(B), T2: seq(B) = ceildiv(T, 2)] {
  %y = nn.conv1d %x, %w stride 2 : (!nn.tensor<[B, T, 2], f32>, !nn.tensor<[3, 3, 2], f32>) -> !nn.tensor<[B, T2, 3], f32>
  %dx, %dw = nn.conv1d_grad %dy, %x, %w stride 2 : !nn.tensor<[B, T2, 3], f32>, !nn.tensor<[B, T, 2], f32>, !nn.tensor<[3, 3, 2], f32>
  nn.return %y, %dx, %dw : !nn.tensor<[B, T2, 3], f32>, !nn.tensor<[B, T, 2], f32>, !nn.tensor<[3, 3, 2], f32>
}

// -----

// CHECK-LABEL: func.func @conv_packed
// CHECK: call @nn_cpu_sgemm(%{{[^,]+}}, %c101_i32{{[_0-9]*}}, %c111_i32{{[_0-9]*}}, %c112_i32
// CHECK: call @nn_cpu_sgemm(%{{[^,]+}}, %c101_i32{{[_0-9]*}}, %c111_i32{{[_0-9]*}}, %c111_i32
// CHECK: call @nn_cpu_sgemm(%{{[^,]+}}, %c101_i32{{[_0-9]*}}, %c112_i32{{[_0-9]*}}, %c111_i32
// CHECK-NOT: call @nn_cpu_sgemm
// CHECK: return
nn.graph @conv_packed(%x: !nn.tensor<[N, 2], f32>, %w: !nn.tensor<[3, 3, 2], f32>,
                      %dy: !nn.tensor<[N2, 3], f32>)
    -> (!nn.tensor<[N2, 3], f32>, !nn.tensor<[N, 2], f32>, !nn.tensor<[3, 3, 2], f32>)
    dims [B: batch, T: seq(B), T2: seq(B) = ceildiv(T, 2), N: packed(B, T), N2: packed(B, T2)] {
  %y = nn.conv1d %x, %w stride 2 : (!nn.tensor<[N, 2], f32>, !nn.tensor<[3, 3, 2], f32>) -> !nn.tensor<[N2, 3], f32>
  %dx, %dw = nn.conv1d_grad %dy, %x, %w stride 2 : !nn.tensor<[N2, 3], f32>, !nn.tensor<[N, 2], f32>, !nn.tensor<[3, 3, 2], f32>
  nn.return %y, %dx, %dw : !nn.tensor<[N2, 3], f32>, !nn.tensor<[N, 2], f32>, !nn.tensor<[3, 3, 2], f32>
}

// -----

// A grouped (depthwise) conv and its gradients stay loops: the
// contraction per output is K * C / groups.
// CHECK-LABEL: func.func @grouped
// CHECK-NOT: call @nn_cpu_sgemm
// CHECK: return
nn.graph @grouped(%x: !nn.tensor<[B, T, 4], f32>, %w: !nn.tensor<[4, 3, 1], f32>,
                  %dy: !nn.tensor<[B, T, 4], f32>)
    -> (!nn.tensor<[B, T, 4], f32>, !nn.tensor<[B, T, 4], f32>, !nn.tensor<[4, 3, 1], f32>)
    dims [B: batch, T: seq(B)] {
  %y = nn.conv1d %x, %w stride 1 groups 4 : (!nn.tensor<[B, T, 4], f32>, !nn.tensor<[4, 3, 1], f32>) -> !nn.tensor<[B, T, 4], f32>
  %dx, %dw = nn.conv1d_grad %dy, %x, %w stride 1 groups 4 : !nn.tensor<[B, T, 4], f32>, !nn.tensor<[B, T, 4], f32>, !nn.tensor<[4, 3, 1], f32>
  nn.return %y, %dx, %dw : !nn.tensor<[B, T, 4], f32>, !nn.tensor<[B, T, 4], f32>, !nn.tensor<[4, 3, 1], f32>
}
