// RUN: nn-opt %s --split-input-file --nn-free-after-last-use | FileCheck %s

// A buffer is freed right after its last use, a view's use included.
// CHECK-LABEL: func.func @after_last_use
// CHECK: %[[A:.+]] = memref.alloc() : memref<8xf32>
// CHECK-NEXT: linalg.fill {{.*}} outs(%[[A]] : memref<8xf32>)
// CHECK-NEXT: %[[V:.+]] = memref.subview %[[A]]
// CHECK-NEXT: memref.copy %[[V]], %arg0
// CHECK-NEXT: memref.dealloc %[[A]]
// CHECK-NEXT: %[[B:.+]] = memref.alloc() : memref<4xf32>
// CHECK-NEXT: linalg.fill {{.*}} outs(%[[B]] : memref<4xf32>)
// CHECK-NEXT: memref.copy %[[B]], %arg0
// CHECK-NEXT: memref.dealloc %[[B]]
// CHECK-NEXT: return
func.func @after_last_use(%out: memref<4xf32>) {
  %c = arith.constant 1.0 : f32
  %a = memref.alloc() : memref<8xf32>
  linalg.fill ins(%c : f32) outs(%a : memref<8xf32>)
  %v = memref.subview %a[0] [4] [1] : memref<8xf32> to memref<4xf32, strided<[1]>>
  memref.copy %v, %out : memref<4xf32, strided<[1]>> to memref<4xf32>
  %b = memref.alloc() : memref<4xf32>
  linalg.fill ins(%c : f32) outs(%b : memref<4xf32>)
  memref.copy %b, %out : memref<4xf32> to memref<4xf32>
  memref.dealloc %a : memref<8xf32>
  memref.dealloc %b : memref<4xf32>
  return
}

// -----

// A loop carrying the buffer may return it: the loop's result is an
// alias, and its last use decides. A use inside a region counts as its
// op's.
// CHECK-LABEL: func.func @loop_result
// CHECK: %[[A:.+]] = memref.alloc()
// CHECK: %[[R:.+]] = scf.for
// CHECK: memref.copy %[[R]], %arg0
// CHECK-NEXT: memref.dealloc %[[A]]
// CHECK-NEXT: scf.for
// CHECK: return
func.func @loop_result(%out: memref<4xf32>, %n: index) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %f = arith.constant 2.0 : f32
  %a = memref.alloc() : memref<4xf32>
  %r = scf.for %i = %c0 to %n step %c1 iter_args(%x = %a) -> (memref<4xf32>) {
    linalg.fill ins(%f : f32) outs(%x : memref<4xf32>)
    scf.yield %x : memref<4xf32>
  }
  memref.copy %r, %out : memref<4xf32> to memref<4xf32>
  scf.for %i = %c0 to %n step %c1 {
    linalg.fill ins(%f : f32) outs(%out : memref<4xf32>)
  }
  memref.dealloc %a : memref<4xf32>
  return
}

// -----

// A buffer an scf.if yields: the if's result aliases it.
// CHECK-LABEL: func.func @yielded_by_region
// CHECK: %[[A:.+]] = memref.alloc()
// CHECK: %[[R:.+]] = scf.if
// CHECK: linalg.fill {{.*}} outs(%[[R]]
// CHECK-NEXT: memref.dealloc %[[A]]
// CHECK-NEXT: memref.copy
func.func @yielded_by_region(%out: memref<4xf32>, %p: i1) {
  %f = arith.constant 2.0 : f32
  %a = memref.alloc() : memref<4xf32>
  %r = scf.if %p -> (memref<4xf32>) {
    scf.yield %a : memref<4xf32>
  } else {
    scf.yield %out : memref<4xf32>
  }
  linalg.fill ins(%f : f32) outs(%r : memref<4xf32>)
  memref.copy %out, %out : memref<4xf32> to memref<4xf32>
  memref.dealloc %a : memref<4xf32>
  return
}

// -----

// A pointer taken from the buffer is compared later: the compare, and
// the scf.if it decides, are uses (after a free, a new buffer at the same
// address would compare equal).
// CHECK-LABEL: func.func @pointer_compared
// CHECK: %[[P:.+]] = memref.extract_aligned_pointer_as_index %[[A:[^ ]+]]
// CHECK: linalg.fill
// CHECK: arith.cmpi eq, %[[P]]
// CHECK-NEXT: scf.if
// CHECK: }
// CHECK-NEXT: memref.dealloc %[[A]]
// CHECK-NEXT: linalg.fill
func.func @pointer_compared(%out: memref<4xf32>) {
  %f = arith.constant 2.0 : f32
  %a = memref.alloc() : memref<4xf32>
  %p = memref.extract_aligned_pointer_as_index %a : memref<4xf32> -> index
  linalg.fill ins(%f : f32) outs(%out : memref<4xf32>)
  %q = memref.extract_aligned_pointer_as_index %out : memref<4xf32> -> index
  %same = arith.cmpi eq, %p, %q : index
  scf.if %same {
    linalg.fill ins(%f : f32) outs(%out : memref<4xf32>)
  }
  linalg.fill ins(%f : f32) outs(%out : memref<4xf32>)
  memref.dealloc %a : memref<4xf32>
  return
}

// -----

// Buffers that leave the block keep their dealloc; so do conditional
// deallocs and deallocs of values no memref.alloc made.
// CHECK-LABEL: func.func @stays
// CHECK: scf.for
// CHECK: linalg.fill
// CHECK-NEXT: memref.copy %arg0, %arg0
// CHECK-NEXT: memref.dealloc %[[L:[^ ]+]]
// CHECK-NEXT: scf.yield %[[L]]
// CHECK: scf.if
// CHECK-NEXT: memref.dealloc
// CHECK: linalg.fill
// CHECK-NEXT: memref.copy %arg0, %arg0
// CHECK-NEXT: memref.dealloc %arg0
// CHECK-NEXT: return
func.func @stays(%in: memref<4xf32>, %n: index, %p: i1) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %f = arith.constant 2.0 : f32
  %r = scf.for %i = %c0 to %n step %c1 iter_args(%x = %in) -> (memref<4xf32>) {
    %l = memref.alloc() : memref<4xf32>
    linalg.fill ins(%f : f32) outs(%l : memref<4xf32>)
    memref.copy %in, %in : memref<4xf32> to memref<4xf32>
    // (Not valid deallocation, but it shows the yielded buffer stays put.)
    memref.dealloc %l : memref<4xf32>
    scf.yield %l : memref<4xf32>
  }
  %a = memref.alloc() : memref<4xf32>
  scf.if %p {
    memref.dealloc %a : memref<4xf32>
  }
  linalg.fill ins(%f : f32) outs(%in : memref<4xf32>)
  memref.copy %in, %in : memref<4xf32> to memref<4xf32>
  memref.dealloc %in : memref<4xf32>
  return
}

// -----

// A returned buffer keeps its place (the dealloc here stands for one a
// faulty input would have; the pass never moves it before the return's
// use).
// CHECK-LABEL: func.func @returned
// CHECK: linalg.fill
// CHECK-NEXT: memref.copy %arg0, %arg0
// CHECK-NEXT: memref.dealloc
// CHECK-NEXT: return
func.func @returned(%in: memref<4xf32>) -> memref<4xf32> {
  %f = arith.constant 2.0 : f32
  %a = memref.alloc() : memref<4xf32>
  linalg.fill ins(%f : f32) outs(%a : memref<4xf32>)
  memref.copy %in, %in : memref<4xf32> to memref<4xf32>
  memref.dealloc %a : memref<4xf32>
  return %a : memref<4xf32>
}

// -----

// An address and what is computed from it are uses; a buffer passed to a
// call, or whose address is stored, keeps its dealloc.
// CHECK-LABEL: func.func @addresses
// CHECK: %[[A:.+]] = memref.alloc() : memref<4xf32>
// CHECK: %[[B:.+]] = memref.alloc() : memref<4xf32>
// CHECK: %[[C:.+]] = memref.alloc() : memref<4xf32>
// CHECK: arith.cmpi eq
// CHECK-NEXT: scf.if
// CHECK: }
// CHECK-NEXT: memref.dealloc %[[A]]
// CHECK: call @keep(%[[B]])
// CHECK: memref.store
// CHECK: linalg.fill
// CHECK-NEXT: memref.dealloc %[[B]]
// CHECK-NEXT: memref.dealloc %[[C]]
// CHECK-NEXT: return
func.func private @keep(memref<4xf32>)
func.func @addresses(%out: memref<4xf32>, %slots: memref<1xindex>) {
  %f = arith.constant 2.0 : f32
  %c0 = arith.constant 0 : index
  %a = memref.alloc() : memref<4xf32>
  %b = memref.alloc() : memref<4xf32>
  %c = memref.alloc() : memref<4xf32>
  %p = memref.extract_aligned_pointer_as_index %a : memref<4xf32> -> index
  %i = arith.index_cast %p : index to i64
  %q = arith.index_cast %c0 : index to i64
  %same = arith.cmpi eq, %i, %q : i64
  scf.if %same {
    linalg.fill ins(%f : f32) outs(%out : memref<4xf32>)
  }
  func.call @keep(%b) : (memref<4xf32>) -> ()
  %r = memref.extract_aligned_pointer_as_index %c : memref<4xf32> -> index
  memref.store %r, %slots[%c0] : memref<1xindex>
  linalg.fill ins(%f : f32) outs(%out : memref<4xf32>)
  memref.dealloc %a : memref<4xf32>
  memref.dealloc %b : memref<4xf32>
  memref.dealloc %c : memref<4xf32>
  return
}
