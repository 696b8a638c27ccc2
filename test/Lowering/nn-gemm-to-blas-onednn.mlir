// RUN: nn-opt %s --split-input-file --nn-gemm-to-blas=runtime=onednn | FileCheck %s
// RUN: not nn-opt %s --nn-gemm-to-blas=runtime=mkl 2>&1 | FileCheck %s --check-prefix=UNKNOWN

// With runtime=onednn an f32 GEMM calls the runtime's nn_cpu_sgemm (oneDNN):
// CBLAS's arguments after a NUL-terminated string naming the op, for its
// error messages.
// CHECK: llvm.mlir.global internal constant @nn_gemm_origin_0("nn.linear at model.mlir:7:3\00")
// CHECK: func.func private @nn_cpu_sgemm(!llvm.ptr, i32, i32, i32, i32, i32, i32, f32, i64, i32, i64, i32, f32, i64, i32)
// CHECK-LABEL: func.func @matmul
// CHECK: %[[ORIGIN:.+]] = llvm.mlir.addressof @nn_gemm_origin_0
// CHECK: call @nn_cpu_sgemm(%{{.+}}, %c101_i32, %c111_i32, %c112_i32,
// CHECK-NOT: cblas
func.func @matmul(%a: memref<?x8xf32>, %b: memref<6x8xf32>, %c: memref<?x6xf32>) {
  linalg.matmul_transpose_b ins(%a, %b : memref<?x8xf32>, memref<6x8xf32>) outs(%c : memref<?x6xf32>) loc("nn.linear"("model.mlir":7:3))
  return
}

// -----

// oneDNN has no f64 GEMM: those stay OpenBLAS calls.
// CHECK: func.func private @cblas_dgemm(i32, i32, i32, i32, i32, i32, f64, i64, i32, i64, i32, f64, i64, i32)
// CHECK-LABEL: func.func @f64
// CHECK: call @cblas_dgemm(
// CHECK-NOT: nn_cpu_sgemm
func.func @f64(%a: memref<?x8xf64>, %b: memref<6x8xf64>, %c: memref<?x6xf64>) {
  linalg.matmul_transpose_b ins(%a, %b : memref<?x8xf64>, memref<6x8xf64>) outs(%c : memref<?x6xf64>)
  return
}

// UNKNOWN: for the --runtime option: unknown GEMM runtime 'mkl' (expected cblas, onednn or cuda)
