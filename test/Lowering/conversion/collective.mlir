// RUN: nn-opt %s --split-input-file --nn-convert-to-linalg | FileCheck %s
// RUN: nn-opt %s --split-input-file --nn-to-buffers --nn-free-after-last-use | FileCheck %s --check-prefix=BUFFERS

// nn.all_reduce (CollectivePatterns.cpp): the inputs flattened into one
// bucket, the bucket copied into a fresh contiguous buffer that the
// runtime sums in place in two halves (one collective per op: a bucket is
// one sum), started where the op is and finished before the first op that
// reads a result; each result a reshaped slice of the buffer.

// CHECK-DAG: llvm.mlir.global internal constant @nn_all_reduce_start_site0_origin("nn.all_reduce at {{.+}}collective.mlir{{.+}}:14\00")
// CHECK-DAG: llvm.mlir.global internal constant @nn_all_reduce_finish_site0_origin("nn.all_reduce at {{.+}}collective.mlir{{.+}}:14\00")
// CHECK-DAG: func.func private @nn_comm_all_reduce_start_v1(!llvm.ptr, i64, i64, i64, i32) -> i64
// CHECK-DAG: func.func private @nn_comm_all_reduce_finish_v1(!llvm.ptr, i64)
// CHECK-LABEL: func.func @sums
// CHECK-SAME: (%[[DW:.+]]: tensor<3x4xf32>, %[[DB:.+]]: tensor<3xf32>, %[[N:.+]]: tensor<f64>)
// CHECK: %[[EMPTY:.+]] = tensor.empty() : tensor<15xf32>
// CHECK: %[[FLAT:.+]] = tensor.collapse_shape %[[DW]] {{\[}}[0, 1]] : tensor<3x4xf32> into tensor<12xf32>
// CHECK: %[[B0:.+]] = tensor.insert_slice %[[FLAT]] into %[[EMPTY]][0] [12] [1]
// CHECK: %[[B1:.+]] = tensor.insert_slice %[[DB]] into %[[B0]][12] [3] [1]
// CHECK: %[[SEND:.+]] = bufferization.to_memref %[[B1]] read_only
// CHECK: %[[SUM:.+]] = memref.alloc(%{{.+}}) : memref<?xf32>
// CHECK: %[[TICKET:.+]] = call @nn_all_reduce_start_site0(%[[SEND]], %[[SUM]]) : ({{.+}}) -> i64
// A rank-0 input is one element of its bucket; the second sum starts
// before the first is waited for (no op between reads the first).
// CHECK: tensor.expand_shape %[[N]] [] output_shape [1] : tensor<f64> into tensor<1xf64>
// CHECK: %[[TICKET1:.+]] = call @nn_all_reduce_start_site1
// The finishes come before the return, the first op that reads them.
// CHECK: call @nn_all_reduce_finish_site0(%[[SUM]], %[[TICKET]])
// CHECK: %[[T:.+]] = bufferization.to_tensor %[[SUM]] restrict writable
// CHECK: %[[CAST:.+]] = tensor.cast %[[T]] : tensor<?xf32> to tensor<15xf32>
// CHECK: %[[S0:.+]] = tensor.extract_slice %[[CAST]][0] [12] [1]
// CHECK: %[[W:.+]] = tensor.expand_shape %[[S0]] {{\[}}[0, 1]] output_shape [3, 4]
// CHECK: %[[B:.+]] = tensor.extract_slice %[[CAST]][12] [3] [1]
// CHECK: call @nn_all_reduce_finish_site1(%{{.+}}, %[[TICKET1]])
// CHECK: %[[NS:.+]] = tensor.collapse_shape %{{.+}} [] : tensor<1xf64> into tensor<f64>
// CHECK: return %[[W]], %[[B]], %[[NS]]
// The start: copy, then the runtime starts the sum of 15 f32 in place,
// naming the op, and the ticket is returned.
// CHECK-LABEL: func.func private @nn_all_reduce_start_site0
// CHECK-SAME: (%[[IN:.+]]: memref<15xf32, strided<[?], offset: ?>>, %[[OUT:.+]]: memref<?xf32>) -> i64
// CHECK: memref.copy %[[IN]], %[[OUT]]
// CHECK: arith.index_cast %{{.+}} : index to i64
// CHECK-NEXT: %[[ADDRESS:.+]] = arith.index_cast %{{.+}} : index to i64
// CHECK: %[[ORIGIN:.+]] = llvm.getelementptr
// CHECK: %[[COUNT:.+]] = arith.constant 15 : i64
// CHECK: %[[BITS:.+]] = arith.constant 32 : i32
// CHECK: %[[STARTED:.+]] = call @nn_comm_all_reduce_start_v1(%[[ORIGIN]], %[[ADDRESS]], %[[ADDRESS]], %[[COUNT]], %[[BITS]])
// CHECK: return %[[STARTED]] : i64
// The finish takes the buffer (alive until it returns) and the ticket.
// CHECK-LABEL: func.func private @nn_all_reduce_finish_site0
// CHECK-SAME: (%{{.+}}: memref<?xf32>, %[[GOT:.+]]: i64)
// CHECK: %[[WHERE:.+]] = llvm.getelementptr
// CHECK: call @nn_comm_all_reduce_finish_v1(%[[WHERE]], %[[GOT]])
// CHECK-LABEL: func.func private @nn_all_reduce_start_site1
// CHECK: arith.constant 1 : i64
// CHECK: arith.constant 64 : i32
nn.graph @sums(%dw: !nn.tensor<[3, 4], f32>, %db: !nn.tensor<[3], f32>, %n: !nn.tensor<[], f64>)
    -> (!nn.tensor<[3, 4], f32>, !nn.tensor<[3], f32>, !nn.tensor<[], f64>) dims [] {
  %sw, %sb = nn.all_reduce %dw, %db : !nn.tensor<[3, 4], f32>, !nn.tensor<[3], f32>
  %sn = nn.all_reduce %n : !nn.tensor<[], f64>
  nn.return %sw, %sb, %sn : !nn.tensor<[3, 4], f32>, !nn.tensor<[3], f32>, !nn.tensor<[], f64>
}

// -----

// The ops between the sum and its first reader run while it does: the
// tanh is computed between the start and the finish, the add after.

// CHECK-LABEL: func.func @overlap
// CHECK: %[[TICKET:.+]] = call @nn_all_reduce_start_site0
// CHECK: linalg.generic
// CHECK: math.tanh
// CHECK: call @nn_all_reduce_finish_site0(%{{.+}}, %[[TICKET]])
// CHECK: linalg.generic
// CHECK: arith.addf
// CHECK: return
// Bufferized, and each buffer freed after its last use: still in that
// order, the sum's buffer alive from the start through the add.
// BUFFERS-LABEL: func.func @overlap
// BUFFERS: %[[SUM:.+]] = memref.alloc() : memref<3xf32>
// BUFFERS: %[[CAST:.+]] = memref.cast %[[SUM]]
// BUFFERS: %[[TICKET:.+]] = call @nn_all_reduce_start_site0(%{{.+}}, %[[CAST]])
// BUFFERS: linalg.generic
// BUFFERS: math.tanh
// BUFFERS: call @nn_all_reduce_finish_site0(%[[CAST]], %[[TICKET]])
// BUFFERS: linalg.generic
// BUFFERS-SAME: ins(%[[SUM]],
// BUFFERS: arith.addf
// BUFFERS: memref.dealloc %[[SUM]]
nn.graph @overlap(%g: !nn.tensor<[3], f32>, %x: !nn.tensor<[3], f32>)
    -> (!nn.tensor<[3], f32>) dims [] {
  %s = nn.all_reduce %g : !nn.tensor<[3], f32>
  %y = nn.tanh %x : !nn.tensor<[3], f32>
  %z = nn.add %s, %y : !nn.tensor<[3], f32>
  nn.return %z : !nn.tensor<[3], f32>
}
