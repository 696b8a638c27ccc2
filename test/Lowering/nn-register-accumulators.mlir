// RUN: nn-opt %s --split-input-file --nn-register-accumulators | FileCheck %s

// nn-register-accumulators (both CPU pipelines, after the loops): an
// scf.for whose body loads one memref element at indices defined outside
// the loop, updates it and stores it back, and reads nothing that may
// alias it, carries the element as an iter_arg instead: loaded before the
// loop, stored after it, the same operations in the same order. The loop
// may store elsewhere too, where that cannot alias the element. Anything
// else that could observe or change the element in memory keeps the loop
// as it is.

// A row sum into a fresh buffer (which no argument aliases).
// CHECK-LABEL: func.func @row_sum
// CHECK-SAME: (%[[A:[a-z0-9]+]]: memref<?x?xf32>, %[[N:[a-z0-9]+]]: index, %[[M:[a-z0-9]+]]: index)
// CHECK: %[[OUT:.+]] = memref.alloc(%[[N]]) : memref<?xf32>
// CHECK: scf.for %[[I:.+]] = %{{.+}} to %[[N]] step %{{.+}} {
// CHECK-NEXT: %[[INIT:.+]] = memref.load %[[OUT]][%[[I]]] : memref<?xf32>
// CHECK-NEXT: %[[SUM:.+]] = scf.for %[[J:.+]] = %{{.+}} to %[[M]] step %{{.+}} iter_args(%[[ACC:.+]] = %[[INIT]]) -> (f32) {
// CHECK-NEXT: %[[X:.+]] = memref.load %[[A]][%[[I]], %[[J]]] : memref<?x?xf32>
// CHECK-NEXT: %[[NEW:.+]] = arith.addf %[[ACC]], %[[X]] : f32
// CHECK-NEXT: scf.yield %[[NEW]] : f32
// CHECK-NEXT: }
// CHECK-NEXT: memref.store %[[SUM]], %[[OUT]][%[[I]]] : memref<?xf32>
// CHECK-NEXT: }
func.func @row_sum(%a: memref<?x?xf32>, %n: index, %m: index) -> memref<?xf32> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %out = memref.alloc(%n) : memref<?xf32>
  scf.for %i = %c0 to %n step %c1 {
    scf.for %j = %c0 to %m step %c1 {
      %acc = memref.load %out[%i] : memref<?xf32>
      %x = memref.load %a[%i, %j] : memref<?x?xf32>
      %s = arith.addf %acc, %x : f32
      memref.store %s, %out[%i] : memref<?xf32>
    }
  }
  return %out : memref<?xf32>
}

// -----

// Two reduction loops around the same element: the inner loop is
// rewritten first, then the loop around it carries the element too.
// CHECK-LABEL: func.func @nested
// CHECK: %[[OUT:.+]] = memref.alloc
// CHECK: scf.for %[[I:.+]] = %{{.+}} to %{{.+}} step %{{.+}} {
// CHECK-NEXT: %[[INIT:.+]] = memref.load %[[OUT]][%[[I]]] : memref<?xf32>
// CHECK-NEXT: %[[OUTER:.+]] = scf.for %{{.+}} = %{{.+}} to %{{.+}} step %{{.+}} iter_args(%[[ACC1:.+]] = %[[INIT]]) -> (f32) {
// CHECK-NEXT: %[[INNER:.+]] = scf.for %{{.+}} = %{{.+}} to %{{.+}} step %{{.+}} iter_args(%[[ACC2:.+]] = %[[ACC1]]) -> (f32) {
// CHECK-NEXT: %[[X:.+]] = memref.load
// CHECK-NEXT: %[[NEW:.+]] = arith.addf %[[ACC2]], %[[X]] : f32
// CHECK-NEXT: scf.yield %[[NEW]] : f32
// CHECK-NEXT: }
// CHECK-NEXT: scf.yield %[[INNER]] : f32
// CHECK-NEXT: }
// CHECK-NEXT: memref.store %[[OUTER]], %[[OUT]][%[[I]]] : memref<?xf32>
func.func @nested(%a: memref<?x?x?xf32>, %n: index, %m: index, %k: index) -> memref<?xf32> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %out = memref.alloc(%n) : memref<?xf32>
  scf.for %i = %c0 to %n step %c1 {
    scf.for %j = %c0 to %m step %c1 {
      scf.for %l = %c0 to %k step %c1 {
        %acc = memref.load %out[%i] : memref<?xf32>
        %x = memref.load %a[%i, %j, %l] : memref<?x?x?xf32>
        %s = arith.addf %acc, %x : f32
        memref.store %s, %out[%i] : memref<?xf32>
      }
    }
  }
  return %out : memref<?xf32>
}

// -----

// A loop that already carries values: the element is appended after them.
// CHECK-LABEL: func.func @carried
// CHECK: %[[OUT:.+]] = memref.alloc() : memref<f32>
// CHECK-NEXT: %[[INIT:.+]] = memref.load %[[OUT]][] : memref<f32>
// CHECK-NEXT: %[[R:.+]]:2 = scf.for %{{.+}} = %{{.+}} to %{{.+}} step %{{.+}} iter_args(%[[COUNT:.+]] = %{{.+}}, %[[ACC:.+]] = %[[INIT]]) -> (index, f32) {
// CHECK: %[[MAX:.+]] = arith.maximumf %[[ACC]], %{{.+}} : f32
// CHECK: %[[NEXT:.+]] = arith.addi %[[COUNT]], %{{.+}} : index
// CHECK-NEXT: scf.yield %[[NEXT]], %[[MAX]] : index, f32
// CHECK: memref.store %[[R]]#1, %[[OUT]][] : memref<f32>
// CHECK-NEXT: return %[[OUT]], %[[R]]#0
func.func @carried(%a: memref<?xf32>, %n: index) -> (memref<f32>, index) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %out = memref.alloc() : memref<f32>
  %r = scf.for %j = %c0 to %n step %c1 iter_args(%count = %c0) -> (index) {
    %acc = memref.load %out[] : memref<f32>
    %x = memref.load %a[%j] : memref<?xf32>
    %s = arith.maximumf %acc, %x : f32
    memref.store %s, %out[] : memref<f32>
    %next = arith.addi %count, %c1 : index
    scf.yield %next : index
  }
  return %out, %r : memref<f32>, index
}

// -----

// Left in memory: the loop also reads another argument, which may be
// the same buffer.
// CHECK-LABEL: func.func @may_alias
// CHECK-SAME: (%[[A:[a-z0-9]+]]: memref<?xf32>, %[[OUT:[a-z0-9]+]]: memref<f32>,
// CHECK: scf.for %{{.+}} = %{{.+}} to %{{.+}} step %{{.+}} {
// CHECK-NEXT: memref.load %[[OUT]][] : memref<f32>
// CHECK-NOT: iter_args
func.func @may_alias(%a: memref<?xf32>, %out: memref<f32>, %n: index) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  scf.for %j = %c0 to %n step %c1 {
    %acc = memref.load %out[] : memref<f32>
    %x = memref.load %a[%j] : memref<?xf32>
    %s = arith.addf %acc, %x : f32
    memref.store %s, %out[] : memref<f32>
  }
  return
}

// -----

// A map fused with the reduction: the loop also stores each element it
// makes, into another fresh buffer, which cannot alias the accumulator.
// CHECK-LABEL: func.func @map_and_reduce
// CHECK: %[[ACC:.+]] = memref.alloc() : memref<f32>
// CHECK: %[[COPY:.+]] = memref.alloc(%{{.+}}) : memref<?xf32>
// CHECK-NEXT: %[[INIT:.+]] = memref.load %[[ACC]][] : memref<f32>
// CHECK-NEXT: %[[SUM:.+]] = scf.for %[[J:.+]] = %{{.+}} to %{{.+}} step %{{.+}} iter_args(%[[A:.+]] = %[[INIT]]) -> (f32) {
// CHECK-NEXT: %[[X:.+]] = memref.load %{{.+}}[%[[J]]] : memref<?xf32>
// CHECK-NEXT: %[[E:.+]] = math.exp %[[X]] : f32
// CHECK-NEXT: %[[S:.+]] = arith.addf %[[A]], %[[E]] : f32
// CHECK-NEXT: memref.store %[[E]], %[[COPY]][%[[J]]] : memref<?xf32>
// CHECK-NEXT: scf.yield %[[S]] : f32
// CHECK-NEXT: }
// CHECK-NEXT: memref.store %[[SUM]], %[[ACC]][] : memref<f32>
func.func @map_and_reduce(%a: memref<?xf32>, %n: index) -> (memref<f32>, memref<?xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %acc0 = memref.alloc() : memref<f32>
  %copy = memref.alloc(%n) : memref<?xf32>
  scf.for %j = %c0 to %n step %c1 {
    %acc = memref.load %acc0[] : memref<f32>
    %x = memref.load %a[%j] : memref<?xf32>
    %e = math.exp %x : f32
    %s = arith.addf %acc, %e : f32
    memref.store %s, %acc0[] : memref<f32>
    memref.store %e, %copy[%j] : memref<?xf32>
  }
  return %acc0, %copy : memref<f32>, memref<?xf32>
}

// -----

// Left in memory: a second store, into the accumulator's own buffer.
// CHECK-LABEL: func.func @store_beside
// CHECK: %[[BUF:.+]] = memref.alloc
// CHECK: scf.for %[[J:.+]] = %{{.+}} to %{{.+}} step %{{.+}} {
// CHECK-NEXT: memref.load %[[BUF]][%{{.+}}] : memref<?xf32>
// CHECK-NOT: iter_args
func.func @store_beside(%a: memref<?xf32>, %n: index) -> memref<?xf32> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %buf = memref.alloc(%n) : memref<?xf32>
  scf.for %j = %c1 to %n step %c1 {
    %acc = memref.load %buf[%c0] : memref<?xf32>
    %x = memref.load %a[%j] : memref<?xf32>
    %s = arith.addf %acc, %x : f32
    memref.store %s, %buf[%c0] : memref<?xf32>
    memref.store %x, %buf[%j] : memref<?xf32>
  }
  return %buf : memref<?xf32>
}

// -----

// Left in memory: a second store, into an argument that may be the
// accumulator's buffer.
// CHECK-LABEL: func.func @store_may_alias
// CHECK-SAME: (%[[OUT:[a-z0-9]+]]: memref<f32>,
// CHECK: scf.for %{{.+}} = %{{.+}} to %{{.+}} step %{{.+}} {
// CHECK-NEXT: memref.load %[[OUT]][] : memref<f32>
// CHECK-NOT: iter_args
func.func @store_may_alias(%out: memref<f32>, %other: memref<?xf32>, %n: index) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  // A fresh input, so that only the second store may alias.
  %a = memref.alloc(%n) : memref<?xf32>
  scf.for %j = %c0 to %n step %c1 {
    %acc = memref.load %out[] : memref<f32>
    %x = memref.load %a[%j] : memref<?xf32>
    %s = arith.addf %acc, %x : f32
    memref.store %s, %out[] : memref<f32>
    memref.store %x, %other[%j] : memref<?xf32>
  }
  return
}

// -----

// Left in memory: two stores to loop-invariant places, neither of them
// known to be the only accumulator.
// CHECK-LABEL: func.func @two_accumulators
// CHECK: %[[SUM:.+]] = memref.alloc() : memref<f32>
// CHECK: scf.for %{{.+}} = %{{.+}} to %{{.+}} step %{{[a-z0-9_]+}} {
// CHECK-NEXT: memref.load %[[SUM]][] : memref<f32>
func.func @two_accumulators(%a: memref<?xf32>, %n: index) -> (memref<f32>, memref<f32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %sum0 = memref.alloc() : memref<f32>
  %max0 = memref.alloc() : memref<f32>
  scf.for %j = %c0 to %n step %c1 {
    %sum = memref.load %sum0[] : memref<f32>
    %max = memref.load %max0[] : memref<f32>
    %x = memref.load %a[%j] : memref<?xf32>
    %s = arith.addf %sum, %x : f32
    %m = arith.maximumf %max, %x : f32
    memref.store %s, %sum0[] : memref<f32>
    memref.store %m, %max0[] : memref<f32>
  }
  return %sum0, %max0 : memref<f32>, memref<f32>
}

// -----

// Left in memory: the element's index changes with the loop.
// CHECK-LABEL: func.func @varying_index
// CHECK: %[[BUF:.+]] = memref.alloc
// CHECK: scf.for %[[J:.+]] = %{{.+}} to %{{.+}} step %{{.+}} {
// CHECK-NEXT: memref.load %[[BUF]][%[[J]]] : memref<?xf32>
// CHECK-NOT: iter_args
func.func @varying_index(%a: memref<?xf32>, %n: index) -> memref<?xf32> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %buf = memref.alloc(%n) : memref<?xf32>
  scf.for %j = %c0 to %n step %c1 {
    %acc = memref.load %buf[%j] : memref<?xf32>
    %x = memref.load %a[%j] : memref<?xf32>
    %s = arith.addf %acc, %x : f32
    memref.store %s, %buf[%j] : memref<?xf32>
  }
  return %buf : memref<?xf32>
}

// -----

// Left in memory: a call, which may read or write the element.
// CHECK-LABEL: func.func @opaque
// CHECK: %[[ACC:.+]] = memref.alloc() : memref<f32>
// CHECK: scf.for %{{.+}} = %{{.+}} to %{{.+}} step %{{.+}} {
// CHECK-NEXT: memref.load %[[ACC]][] : memref<f32>
// CHECK-NOT: iter_args
func.func @opaque(%a: memref<?xf32>, %n: index) -> memref<f32> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %acc0 = memref.alloc() : memref<f32>
  scf.for %j = %c0 to %n step %c1 {
    %acc = memref.load %acc0[] : memref<f32>
    %x = memref.load %a[%j] : memref<?xf32>
    %s = arith.addf %acc, %x : f32
    memref.store %s, %acc0[] : memref<f32>
    func.call @touch(%acc0) : (memref<f32>) -> ()
  }
  return %acc0 : memref<f32>
}
func.func private @touch(memref<f32>)

// -----

// Left in memory: the element is read again after the store.
// CHECK-LABEL: func.func @read_back
// CHECK: %[[ACC:.+]] = memref.alloc() : memref<f32>
// CHECK: scf.for %{{.+}} = %{{.+}} to %{{.+}} step %{{.+}} iter_args(%{{[^,]+}}) -> (f32) {
// CHECK-NEXT: memref.load %[[ACC]][] : memref<f32>
func.func @read_back(%a: memref<?xf32>, %n: index) -> (memref<f32>, f32) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %zero = arith.constant 0.0 : f32
  %acc0 = memref.alloc() : memref<f32>
  %r = scf.for %j = %c0 to %n step %c1 iter_args(%t = %zero) -> (f32) {
    %acc = memref.load %acc0[] : memref<f32>
    %x = memref.load %a[%j] : memref<?xf32>
    %s = arith.addf %acc, %x : f32
    memref.store %s, %acc0[] : memref<f32>
    %again = memref.load %acc0[] : memref<f32>
    %t2 = arith.addf %t, %again : f32
    scf.yield %t2 : f32
  }
  return %acc0, %r : memref<f32>, f32
}

// -----

// Left in memory: the store is conditional.
// CHECK-LABEL: func.func @conditional
// CHECK: %[[ACC:.+]] = memref.alloc() : memref<f32>
// CHECK: scf.for %{{.+}} = %{{.+}} to %{{.+}} step %{{.+}} {
// CHECK-NEXT: memref.load %[[ACC]][] : memref<f32>
// CHECK-NOT: iter_args
func.func @conditional(%a: memref<?xf32>, %n: index, %flag: i1) -> memref<f32> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %acc0 = memref.alloc() : memref<f32>
  scf.for %j = %c0 to %n step %c1 {
    %acc = memref.load %acc0[] : memref<f32>
    %x = memref.load %a[%j] : memref<?xf32>
    %s = arith.addf %acc, %x : f32
    scf.if %flag {
      memref.store %s, %acc0[] : memref<f32>
    }
  }
  return %acc0 : memref<f32>
}
