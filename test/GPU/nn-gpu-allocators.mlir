// GPU artifacts allocate host-code buffers through the CUDA backend.
// RUN: nn-opt %s --nn-gpu-allocators | FileCheck %s

// CHECK-DAG: llvm.func @nn_cuda_alloc(i64) -> !llvm.ptr
// CHECK-DAG: llvm.func @nn_cuda_free(!llvm.ptr)
// CHECK-NOT: _mlir_memref_to_llvm
// CHECK-LABEL: llvm.func @g
// CHECK: %[[P:.+]] = llvm.call @nn_cuda_alloc(%{{.+}})
// CHECK: llvm.call @nn_cuda_free(%[[P]])
llvm.func @_mlir_memref_to_llvm_alloc(i64) -> !llvm.ptr
llvm.func @_mlir_memref_to_llvm_free(!llvm.ptr)
llvm.func @g(%n: i64) {
  %p = llvm.call @_mlir_memref_to_llvm_alloc(%n) : (i64) -> !llvm.ptr
  llvm.call @_mlir_memref_to_llvm_free(%p) : (!llvm.ptr) -> ()
  llvm.return
}
