// RUN: nn-opt %s --split-input-file --nn-gemm-to-blas | FileCheck %s

// A GEMM C[M, N] += A[M, K] B[N, K]^T becomes one row-major CBLAS call
// (layout 101, A not transposed 111, B transposed 112, alpha = beta = 1).
// CHECK: func.func private @cblas_sgemm(i32, i32, i32, i32, i32, i32, f32, i64, i32, i64, i32, f32, i64, i32)
// CHECK-LABEL: func.func @matmul
// CHECK-DAG: %[[ROW:.+]] = arith.constant 101 : i32
// CHECK-DAG: %[[NT:.+]] = arith.constant 111 : i32
// CHECK-DAG: %[[T:.+]] = arith.constant 112 : i32
// CHECK-DAG: %[[ONE:.+]] = arith.constant 1.000000e+00 : f32
// CHECK: call @cblas_sgemm(%[[ROW]], %[[NT]], %[[T]], %{{.+}}, %{{.+}}, %{{.+}}, %[[ONE]], %{{.+}}, %{{.+}}, %{{.+}}, %{{.+}}, %[[ONE]], %{{.+}}, %{{.+}})
// CHECK-NOT: linalg.matmul_transpose_b
func.func @matmul(%a: memref<?x8xf32>, %b: memref<6x8xf32>, %c: memref<?x6xf32>) {
  linalg.matmul_transpose_b ins(%a, %b : memref<?x8xf32>, memref<6x8xf32>) outs(%c : memref<?x6xf32>)
  return
}

// -----

// The padded contraction of nn.linear: rows are B * T of the contiguous
// input and output.
// CHECK-LABEL: func.func @contraction
// CHECK-SAME: (%[[X:.+]]: memref<?x?x8xf64>, %[[W:.+]]: memref<6x8xf64>, %[[Y:.+]]: memref<?x?x6xf64>)
// CHECK-DAG: %[[B:.+]] = memref.dim %[[Y]], %c0
// CHECK-DAG: %[[TT:.+]] = memref.dim %[[Y]], %c1
// CHECK: %[[ROWS:.+]] = arith.muli %[[B]], %[[TT]]
// CHECK: %[[M:.+]] = arith.index_cast %[[ROWS]] : index to i32
// CHECK: call @cblas_dgemm(%{{.+}}, %{{.+}}, %{{.+}}, %[[M]],
#x = affine_map<(d0, d1, d2, d3) -> (d0, d1, d3)>
#w = affine_map<(d0, d1, d2, d3) -> (d2, d3)>
#y = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2)>
func.func @contraction(%x: memref<?x?x8xf64>, %w: memref<6x8xf64>, %y: memref<?x?x6xf64>) {
  linalg.generic {indexing_maps = [#x, #w, #y], iterator_types = ["parallel", "parallel", "parallel", "reduction"]}
      ins(%x, %w : memref<?x?x8xf64>, memref<6x8xf64>) outs(%y : memref<?x?x6xf64>) {
  ^bb0(%a: f64, %b: f64, %acc: f64):
    %p = arith.mulf %a, %b : f64
    %s = arith.addf %acc, %p : f64
    linalg.yield %s : f64
  }
  return
}

// -----

// Not a GEMM (a max instead of a sum), and a transposed inner stride: loops.
// CHECK-LABEL: func.func @not_gemm
// CHECK-NOT: call @cblas
// CHECK: linalg.generic
// CHECK: linalg.matmul_transpose_b
#x = affine_map<(d0, d1, d2, d3) -> (d0, d1, d3)>
#w = affine_map<(d0, d1, d2, d3) -> (d2, d3)>
#y = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2)>
func.func @not_gemm(%x: memref<?x?x8xf32>, %w: memref<6x8xf32>, %y: memref<?x?x6xf32>,
                    %a: memref<4x8xf32, strided<[1, 4]>>, %c: memref<4x6xf32>) {
  linalg.generic {indexing_maps = [#x, #w, #y], iterator_types = ["parallel", "parallel", "parallel", "reduction"]}
      ins(%x, %w : memref<?x?x8xf32>, memref<6x8xf32>) outs(%y : memref<?x?x6xf32>) {
  ^bb0(%a0: f32, %b0: f32, %acc: f32):
    %p = arith.mulf %a0, %b0 : f32
    %s = arith.maximumf %acc, %p : f32
    linalg.yield %s : f32
  }
  linalg.matmul_transpose_b ins(%a, %w : memref<4x8xf32, strided<[1, 4]>>, memref<6x8xf32>) outs(%c : memref<4x6xf32>)
  return
}

// -----

// A zero fill of C right before the GEMM is folded into beta = 0.
// CHECK-LABEL: func.func @zero_filled
// CHECK-NOT: linalg.fill
// CHECK: %[[ONE:.+]] = arith.constant 1.000000e+00 : f32
// CHECK-NEXT: %[[ZERO:.+]] = arith.constant 0.000000e+00 : f32
// CHECK: call @cblas_sgemm(%{{.+}}, %{{.+}}, %{{.+}}, %{{.+}}, %{{.+}}, %{{.+}}, %[[ONE]], %{{.+}}, %{{.+}}, %{{.+}}, %{{.+}}, %[[ZERO]], %{{.+}}, %{{.+}})
func.func @zero_filled(%a: memref<?x8xf32>, %b: memref<6x8xf32>, %c: memref<?x6xf32>) {
  %zero = arith.constant 0.0 : f32
  linalg.fill ins(%zero : f32) outs(%c : memref<?x6xf32>)
  linalg.matmul_transpose_b ins(%a, %b : memref<?x8xf32>, memref<6x8xf32>) outs(%c : memref<?x6xf32>)
  return
}

// -----

// The backward of a linear. Input gradient dy W: neither transposed
// (111, 111), the contracted size from W's rows. Packed rows are a named
// matmul; padded ones the contraction over (p..., i, o).
// CHECK-LABEL: func.func @grad_input
// CHECK-SAME: (%[[DY:.+]]: memref<?x6xf32>, %[[W:.+]]: memref<6x8xf32>, %[[DX:.+]]: memref<?x8xf32>)
// CHECK: %[[K:.+]] = memref.dim %[[W]], %c0
// CHECK: %[[KI:.+]] = arith.index_cast %[[K]] : index to i32
// CHECK: call @cblas_sgemm(%{{.+}}, %c111_i32{{[_0-9]*}}, %c111_i32{{[_0-9]*}}, %{{.+}}, %{{.+}}, %[[KI]],
// CHECK-NOT: linalg.matmul
// CHECK-LABEL: func.func @grad_input_padded
// CHECK: call @cblas_sgemm(%{{.+}}, %c111_i32{{[_0-9]*}}, %c111_i32{{[_0-9]*}},
// CHECK-NOT: linalg.generic
func.func @grad_input(%dy: memref<?x6xf32>, %w: memref<6x8xf32>, %dx: memref<?x8xf32>) {
  linalg.matmul ins(%dy, %w : memref<?x6xf32>, memref<6x8xf32>) outs(%dx : memref<?x8xf32>)
  return
}
#dy = affine_map<(d0, d1, d2, d3) -> (d0, d1, d3)>
#wt = affine_map<(d0, d1, d2, d3) -> (d3, d2)>
#dx = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2)>
func.func @grad_input_padded(%dy: memref<?x?x6xf32>, %w: memref<6x8xf32>, %dx: memref<?x?x8xf32>) {
  linalg.generic {indexing_maps = [#dy, #wt, #dx], iterator_types = ["parallel", "parallel", "parallel", "reduction"]}
      ins(%dy, %w : memref<?x?x6xf32>, memref<6x8xf32>) outs(%dx : memref<?x?x8xf32>) {
  ^bb0(%a: f32, %b: f32, %acc: f32):
    %p = arith.mulf %a, %b : f32
    %s = arith.addf %acc, %p : f32
    linalg.yield %s : f32
  }
  return
}

// -----

// Weight gradient over packed rows, dy^T x: A transposed (112, 111),
// M and N from dW, the contracted size the row count.
// CHECK-LABEL: func.func @grad_weight
// CHECK-SAME: (%[[DY:.+]]: memref<?x6xf32>, %[[X:.+]]: memref<?x8xf32>, %[[DW:.+]]: memref<6x8xf32>)
// CHECK: %[[P:.+]] = memref.dim %[[X]], %c0
// CHECK: %[[PI:.+]] = arith.index_cast %[[P]] : index to i32
// CHECK: call @cblas_sgemm(%{{.+}}, %c112_i32{{[_0-9]*}}, %c111_i32{{[_0-9]*}}, %{{.+}}, %{{.+}}, %[[PI]],
// CHECK-NOT: linalg.generic
#gy = affine_map<(d0, d1, d2) -> (d0, d1)>
#gx = affine_map<(d0, d1, d2) -> (d0, d2)>
#gw = affine_map<(d0, d1, d2) -> (d1, d2)>
func.func @grad_weight(%dy: memref<?x6xf32>, %x: memref<?x8xf32>, %dw: memref<6x8xf32>) {
  linalg.generic {indexing_maps = [#gy, #gx, #gw], iterator_types = ["reduction", "parallel", "parallel"]}
      ins(%dy, %x : memref<?x6xf32>, memref<?x8xf32>) outs(%dw : memref<6x8xf32>) {
  ^bb0(%a: f32, %b: f32, %acc: f32):
    %p = arith.mulf %a, %b : f32
    %s = arith.addf %acc, %p : f32
    linalg.yield %s : f32
  }
  return
}

// -----

// The weight gradient over padded positions (zeroed before): the rows
// B * T are contracted, so the depth is their product.
// CHECK-LABEL: func.func @grad_weight_padded
// CHECK-SAME: (%[[DY:.+]]: memref<?x?x6xf32>, %[[X:.+]]: memref<?x?x8xf32>, %[[DW:.+]]: memref<6x8xf32>)
// CHECK: %[[B:.+]] = memref.dim %[[X]], %c0
// CHECK: %[[T:.+]] = memref.dim %[[X]], %c1
// CHECK: %[[BT:.+]] = arith.muli %[[B]], %[[T]]
// CHECK: %[[K:.+]] = arith.index_cast %[[BT]] : index to i32
// CHECK: call @cblas_sgemm(%{{.+}}, %c112_i32{{[_0-9]*}}, %c111_i32{{[_0-9]*}}, %{{.+}}, %{{.+}}, %[[K]],
// CHECK-NOT: linalg.generic
#py = affine_map<(d0, d1, d2, d3) -> (d0, d1, d2)>
#px = affine_map<(d0, d1, d2, d3) -> (d0, d1, d3)>
#pw = affine_map<(d0, d1, d2, d3) -> (d2, d3)>
func.func @grad_weight_padded(%dy: memref<?x?x6xf32>, %x: memref<?x?x8xf32>, %dw: memref<6x8xf32>) {
  linalg.generic {indexing_maps = [#py, #px, #pw], iterator_types = ["reduction", "reduction", "parallel", "parallel"]}
      ins(%dy, %x : memref<?x?x6xf32>, memref<?x?x8xf32>) outs(%dw : memref<6x8xf32>) {
  ^bb0(%a: f32, %b: f32, %acc: f32):
    %p = arith.mulf %a, %b : f32
    %s = arith.addf %acc, %p : f32
    linalg.yield %s : f32
  }
  return
}
