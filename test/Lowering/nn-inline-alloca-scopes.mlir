// RUN: nn-opt %s --split-input-file --nn-inline-alloca-scopes | FileCheck %s
// RUN: nn-opt %s --split-input-file --pass-pipeline="builtin.module(convert-scf-to-openmp,nn-inline-alloca-scopes)" | FileCheck %s --check-prefix=OMP

// nn-inline-alloca-scopes (threaded CPU pipeline, after
// convert-scf-to-openmp): a memref.alloca_scope whose body allocates
// nothing on the stack is replaced by its body, its results by what the
// body returns; a scope that holds an alloca, at any depth, stays.

// CHECK-LABEL: func.func @no_alloca
// CHECK-SAME: (%[[A:[a-z0-9]+]]: memref<?xf32>, %[[I:[a-z0-9]+]]: index) -> f32
// CHECK-NEXT: %[[X:.+]] = memref.load %[[A]][%[[I]]] : memref<?xf32>
// CHECK-NEXT: %[[Y:.+]] = arith.addf %[[X]], %[[X]] : f32
// CHECK-NEXT: return %[[Y]] : f32
func.func @no_alloca(%a: memref<?xf32>, %i: index) -> f32 {
  %r = memref.alloca_scope -> (f32) {
    %x = memref.load %a[%i] : memref<?xf32>
    %y = arith.addf %x, %x : f32
    memref.alloca_scope.return %y : f32
  }
  return %r : f32
}

// -----

// CHECK-LABEL: func.func @with_alloca
// CHECK: %[[R:.+]] = memref.alloca_scope -> (f32) {
// CHECK-NEXT: memref.alloca() : memref<4xf32>
// CHECK: memref.alloca_scope.return
// CHECK: return %[[R]] : f32
func.func @with_alloca(%a: memref<?xf32>, %i: index) -> f32 {
  %r = memref.alloca_scope -> (f32) {
    %t = memref.alloca() : memref<4xf32>
    %x = memref.load %a[%i] : memref<?xf32>
    memref.store %x, %t[%i] : memref<4xf32>
    %y = memref.load %t[%i] : memref<4xf32>
    memref.alloca_scope.return %y : f32
  }
  return %r : f32
}

// -----

// The alloca sits in a loop inside the scope: the scope stays.
// CHECK-LABEL: func.func @nested_alloca
// CHECK: memref.alloca_scope {
// CHECK-NEXT: scf.for
// CHECK-NEXT: memref.alloca() : memref<4xf32>
func.func @nested_alloca(%a: memref<?xf32>, %n: index) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  memref.alloca_scope {
    scf.for %i = %c0 to %n step %c1 {
      %t = memref.alloca() : memref<4xf32>
      %x = memref.load %a[%i] : memref<?xf32>
      memref.store %x, %t[%c0] : memref<4xf32>
    }
  }
  return
}

// -----

// What the pass is for: convert-scf-to-openmp wraps each threaded loop
// body in a scope; nn's bodies allocate on the heap only, so the loop
// nest's body is the loop body again.
// OMP-LABEL: func.func @threaded
// OMP: omp.loop_nest (%[[I:.+]]) : index = (%{{.+}}) to (%{{.+}}) step (%{{.+}}) {
// OMP-NEXT: %[[X:.+]] = memref.load %{{.+}}[%[[I]]] : memref<?xf32>
// OMP-NEXT: %[[Y:.+]] = arith.addf %[[X]], %[[X]] : f32
// OMP-NEXT: memref.store %[[Y]], %{{.+}}[%[[I]]] : memref<?xf32>
// OMP-NEXT: omp.yield
// OMP-NOT: memref.alloca_scope
func.func @threaded(%a: memref<?xf32>, %n: index) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  scf.parallel (%i) = (%c0) to (%n) step (%c1) {
    %x = memref.load %a[%i] : memref<?xf32>
    %y = arith.addf %x, %x : f32
    memref.store %y, %a[%i] : memref<?xf32>
    scf.reduce
  }
  return
}
