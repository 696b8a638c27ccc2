// RUN: nn-opt %s --nn-convert-to-linalg | FileCheck %s

// nn.all_reduce (CollectivePatterns.cpp): the inputs flattened into one
// bucket, the bucket copied into a fresh contiguous buffer that the
// runtime sums in place (one call per op: a bucket is one collective),
// each result a reshaped slice of it.

// CHECK-DAG: llvm.mlir.global internal constant @nn_all_reduce_site0_origin("nn.all_reduce at {{.+}}collective.mlir:{{[0-9]+}}:14\00")
// CHECK-DAG: func.func private @nn_comm_all_reduce_v1(!llvm.ptr, i64, i64, i64, i32)
// CHECK-LABEL: func.func @sums
// CHECK-SAME: (%[[DW:.+]]: tensor<3x4xf32>, %[[DB:.+]]: tensor<3xf32>, %[[N:.+]]: tensor<f64>)
// CHECK: %[[EMPTY:.+]] = tensor.empty() : tensor<15xf32>
// CHECK: %[[FLAT:.+]] = tensor.collapse_shape %[[DW]] {{\[}}[0, 1]] : tensor<3x4xf32> into tensor<12xf32>
// CHECK: %[[B0:.+]] = tensor.insert_slice %[[FLAT]] into %[[EMPTY]][0] [12] [1]
// CHECK: %[[B1:.+]] = tensor.insert_slice %[[DB]] into %[[B0]][12] [3] [1]
// CHECK: %[[SEND:.+]] = bufferization.to_memref %[[B1]] read_only
// CHECK: %[[SUM:.+]] = memref.alloc(%{{.+}}) : memref<?xf32>
// CHECK: call @nn_all_reduce_site0(%[[SEND]], %[[SUM]])
// CHECK: %[[T:.+]] = bufferization.to_tensor %[[SUM]] restrict writable
// CHECK: %[[CAST:.+]] = tensor.cast %[[T]] : tensor<?xf32> to tensor<15xf32>
// CHECK: %[[S0:.+]] = tensor.extract_slice %[[CAST]][0] [12] [1]
// CHECK: %[[W:.+]] = tensor.expand_shape %[[S0]] {{\[}}[0, 1]] output_shape [3, 4]
// CHECK: %[[B:.+]] = tensor.extract_slice %[[CAST]][12] [3] [1]
// A rank-0 input is one element of its bucket.
// CHECK: tensor.expand_shape %[[N]] [] output_shape [1] : tensor<f64> into tensor<1xf64>
// CHECK: call @nn_all_reduce_site1
// CHECK: %[[NS:.+]] = tensor.collapse_shape %{{.+}} [] : tensor<1xf64> into tensor<f64>
// CHECK: return %[[W]], %[[B]], %[[NS]]
// The call site: copy, then the runtime sums 15 f32 in place, naming the op.
// CHECK-LABEL: func.func private @nn_all_reduce_site0
// CHECK-SAME: (%[[IN:.+]]: memref<15xf32, strided<[?], offset: ?>>, %[[OUT:.+]]: memref<?xf32>)
// CHECK: memref.copy %[[IN]], %[[OUT]]
// CHECK: arith.index_cast %{{.+}} : index to i64
// CHECK-NEXT: %[[ADDRESS:.+]] = arith.index_cast %{{.+}} : index to i64
// CHECK: %[[ORIGIN:.+]] = llvm.getelementptr
// CHECK: %[[COUNT:.+]] = arith.constant 15 : i64
// CHECK: %[[BITS:.+]] = arith.constant 32 : i32
// CHECK: call @nn_comm_all_reduce_v1(%[[ORIGIN]], %[[ADDRESS]], %[[ADDRESS]], %[[COUNT]], %[[BITS]])
// CHECK-LABEL: func.func private @nn_all_reduce_site1
// CHECK: arith.constant 1 : i64
// CHECK: arith.constant 64 : i32
nn.graph @sums(%dw: !nn.tensor<[3, 4], f32>, %db: !nn.tensor<[3], f32>, %n: !nn.tensor<[], f64>)
    -> (!nn.tensor<[3, 4], f32>, !nn.tensor<[3], f32>, !nn.tensor<[], f64>) dims [] {
  %sw, %sb = nn.all_reduce %dw, %db : !nn.tensor<[3, 4], f32>, !nn.tensor<[3], f32>
  %sn = nn.all_reduce %n : !nn.tensor<[], f64>
  nn.return %sw, %sb, %sn : !nn.tensor<[3, 4], f32>, !nn.tensor<[3], f32>, !nn.tensor<[], f64>
}
