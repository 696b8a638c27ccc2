// RUN: nn-opt %s --nn-gpu-place-buffers | FileCheck %s

// Buffers only kernels and cuBLAS touch stay memref.alloc (device memory);
// buffers host code loads from or stores to, through any alias, become
// gpu.alloc host_shared (managed memory). Arguments host code reads are
// listed for the runtime.

// CHECK: module attributes {gpu.container_module, nn.host_visible_args = {place = array<i64: 1>, site = array<i64: 0>}}
module attributes {gpu.container_module} {
  gpu.module @kernels {
    gpu.func @k(%a: memref<?xf32>) kernel {
      gpu.return
    }
  }
  func.func private @nn_cuda_sgemm(i64)
  func.func private @nn_search_ctc_prefix_v1(i64)

  // A search call site: its pointer goes to the runtime's host code.
  func.func private @site(%buffer: memref<?xf32>) {
    %p = memref.extract_aligned_pointer_as_index %buffer : memref<?xf32> -> index
    %q = arith.index_cast %p : index to i64
    func.call @nn_search_ctc_prefix_v1(%q) : (i64) -> ()
    return
  }

  // CHECK-LABEL: func.func @place
  //  CHECK-SAME: (%[[N:.*]]: index, %[[LENGTHS:.*]]: memref<?xi32>, %[[X:.*]]: memref<?xf32>)
  func.func @place(%n: index, %lengths: memref<?xi32>, %x: memref<?xf32>) -> memref<f64> {
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    // Kernel only: device memory.
    // CHECK: %[[DEVICE:.*]] = memref.alloc(%[[N]]) : memref<?xf32>
    %device = memref.alloc(%n) : memref<?xf32>
    gpu.launch_func @kernels::@k blocks in (%c1, %c1, %c1) threads in (%c1, %c1, %c1) args(%device : memref<?xf32>)
    // Written by a kernel, read by the host through a subview: managed.
    // CHECK: %[[SHARED:.*]] = gpu.alloc host_shared (%[[N]]) : memref<?xf32>
    %shared = memref.alloc(%n) : memref<?xf32>
    gpu.launch_func @kernels::@k blocks in (%c1, %c1, %c1) threads in (%c1, %c1, %c1) args(%shared : memref<?xf32>)
    %view = memref.subview %shared[1] [2] [1] : memref<?xf32> to memref<2xf32, strided<[1], offset: 1>>
    %v = memref.load %view[%c0] : memref<2xf32, strided<[1], offset: 1>>
    // Carried through a loop and stored by the host on the way: managed,
    // and so is the value it starts from.
    // CHECK: %[[START:.*]] = gpu.alloc host_shared () : memref<f64>
    %start = memref.alloc() : memref<f64>
    %sum = scf.for %i = %c0 to %n step %c1 iter_args(%acc = %start) -> (memref<f64>) {
      %length = memref.load %lengths[%i] : memref<?xi32>
      %f = arith.constant 1.0 : f64
      memref.store %f, %acc[] : memref<f64>
      scf.yield %acc : memref<f64>
    }
    // Its pointer goes to cuBLAS: device memory.
    // CHECK: %[[GEMM:.*]] = memref.alloc(%[[N]]) : memref<?xf32>
    %gemm = memref.alloc(%n) : memref<?xf32>
    %p = memref.extract_aligned_pointer_as_index %gemm : memref<?xf32> -> index
    %q = arith.index_cast %p : index to i64
    func.call @nn_cuda_sgemm(%q) : (i64) -> ()
    // Written by a kernel, handed to the runtime's search through a call
    // site: managed.
    // CHECK: %[[SEARCHED:.*]] = gpu.alloc host_shared (%[[N]]) : memref<?xf32>
    %searched = memref.alloc(%n) : memref<?xf32>
    gpu.launch_func @kernels::@k blocks in (%c1, %c1, %c1) threads in (%c1, %c1, %c1) args(%searched : memref<?xf32>)
    func.call @site(%searched) : (memref<?xf32>) -> ()
    memref.dealloc %searched : memref<?xf32>
    // Deallocation only handles pointers.
    // CHECK: memref.dealloc %[[DEVICE]]
    memref.dealloc %device : memref<?xf32>
    memref.dealloc %shared : memref<?xf32>
    memref.dealloc %gemm : memref<?xf32>
    return %sum : memref<f64>
  }
}
