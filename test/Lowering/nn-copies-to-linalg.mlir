// RUN: nn-opt %s --nn-copies-to-linalg | FileCheck %s

// CHECK-LABEL: func.func @copies
// CHECK-SAME: (%[[A:.+]]: memref<4x8xf32>, %[[B:.+]]: memref<4x8xf32>, %[[S:.+]]: memref<2x3xf32, strided<[8, 1], offset: ?>>, %[[D:.+]]: memref<2x3xf32>)
// Contiguous copies stay (they become a memcpy):
// CHECK: memref.copy %[[A]], %[[B]]
// Strided ones become loops, not calls of the memrefCopy helper:
// CHECK: linalg.copy ins(%[[S]] : memref<2x3xf32, strided<[8, 1], offset: ?>>) outs(%[[D]] : memref<2x3xf32>)
func.func @copies(%a: memref<4x8xf32>, %b: memref<4x8xf32>,
                  %s: memref<2x3xf32, strided<[8, 1], offset: ?>>, %d: memref<2x3xf32>) {
  memref.copy %a, %b : memref<4x8xf32> to memref<4x8xf32>
  memref.copy %s, %d : memref<2x3xf32, strided<[8, 1], offset: ?>> to memref<2x3xf32>
  return
}
