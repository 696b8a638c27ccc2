// RUN: nn-opt %s --nn-parallel-loops --split-input-file | FileCheck %s
// RUN: nn-opt %s --nn-parallel-loops=min-work=1 --split-input-file | FileCheck %s --check-prefix=ALL
// RUN: nn-opt %s --split-input-file --pass-pipeline="builtin.module(nn-parallel-loops,convert-scf-to-openmp,nn-inline-alloca-scopes)" | FileCheck %s --check-prefix=OMP
// RUN: nn-opt %s --nn-register-accumulators --split-input-file | FileCheck %s --check-prefix=REG

// One level of threads: the outer loop of a nest stays parallel, the inner
// one becomes scf.for (LLVM vectorizes it). A dynamic loop runs threaded
// only when its work, n x 512 here, reaches min-work (32768); a 4 x 4 loop
// never does and becomes sequential at compile time.
// CHECK-LABEL: func.func @nested
// CHECK: %[[WORK:.+]] = arith.muli %{{.+}}, %{{.+}} : index
// CHECK: %[[ENOUGH:.+]] = arith.cmpi sge, %[[WORK]], %{{.+}} : index
// CHECK: scf.if %[[ENOUGH]] {
// CHECK-NEXT: scf.parallel (%[[I:.+]]) =
// CHECK-NEXT: scf.for %{{.+}} = %{{.+}} to %{{.+}} step
// CHECK: } else {
// CHECK-NEXT: scf.for
// CHECK-NEXT: scf.for
// CHECK-NOT: scf.parallel
// CHECK: return
// A multi-dimensional loop keeps its first dimension parallel only:
// OpenMP would collapse both into one loop that divides to find its
// indices.
// ALL-LABEL: func.func @nested
// ALL: scf.parallel
// ALL: scf.parallel (%[[I:.+]]) = (%{{.+}}) to (%{{.+}}) step (%{{.+}}) {
// ALL-NEXT: scf.for %[[J:.+]] = %{{.+}} to %{{.+}} step %{{.+}} {
// ALL-NEXT: memref.load %{{.+}}[%[[I]], %[[J]]]
// The threaded loop after the OpenMP conversion: no alloca_scope left (its
// body allocates nothing on the stack).
// OMP-LABEL: func.func @nested
// OMP: omp.parallel
// OMP: omp.wsloop
// OMP-NEXT: omp.loop_nest (%{{.+}}) : index
// OMP-NOT: memref.alloca_scope

func.func @nested(%a: memref<?x512xf32>, %b: memref<?x512xf32>, %s: memref<4x4xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c4 = arith.constant 4 : index
  %c512 = arith.constant 512 : index
  %n = memref.dim %a, %c0 : memref<?x512xf32>
  scf.parallel (%i) = (%c0) to (%n) step (%c1) {
    scf.parallel (%j) = (%c0) to (%c512) step (%c1) {
      %x = memref.load %a[%i, %j] : memref<?x512xf32>
      memref.store %x, %b[%i, %j] : memref<?x512xf32>
      scf.reduce
    }
    scf.reduce
  }
  scf.parallel (%i, %j) = (%c0, %c0) to (%c4, %c4) step (%c1, %c1) {
    %x = memref.load %s[%i, %j] : memref<4x4xf32>
    %y = arith.addf %x, %x : f32
    memref.store %y, %s[%i, %j] : memref<4x4xf32>
    scf.reduce
  }
  return
}

// -----

// Inner loops with dynamic bounds count in the work: 8 x n x m.
// CHECK-LABEL: func.func @dynamic_inner
// CHECK-SAME: (%[[A:.+]]: memref<8x?x?xf32>
// CHECK-DAG: %[[N:.+]] = memref.dim %[[A]], %c1
// CHECK-DAG: %[[M:.+]] = memref.dim %[[A]], %c2
// CHECK: %[[NM:.+]] = arith.muli %{{.+}}, %{{.+}} : index
// CHECK: %[[WORK:.+]] = arith.muli %{{.+}}, %{{.+}} : index
// CHECK: arith.cmpi sge, %[[WORK]], %{{.+}} : index
// CHECK: scf.if
// CHECK-NEXT: scf.parallel

func.func @dynamic_inner(%a: memref<8x?x?xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %c8 = arith.constant 8 : index
  %zero = arith.constant 0.0 : f32
  %n = memref.dim %a, %c1 : memref<8x?x?xf32>
  %m = memref.dim %a, %c2 : memref<8x?x?xf32>
  scf.parallel (%i, %j, %k) = (%c0, %c0, %c0) to (%c8, %n, %m) step (%c1, %c1, %c1) {
    memref.store %zero, %a[%i, %j, %k] : memref<8x?x?xf32>
    scf.reduce
  }
  return
}

// -----

// A row sum into a separate allocation: the accumulator becomes an
// iter_arg (loaded before the loop, stored after it), in the same order of
// additions. In an outlined OpenMP body LLVM could not keep it in a
// register itself. (nn-register-accumulators, which runs in both CPU
// pipelines.)
// REG-LABEL: func.func @row_sum
// REG: scf.parallel (%[[I:.+]]) =
// REG: %[[INIT:.+]] = memref.load %[[OUT:.+]][%[[I]]] : memref<?xf32>
// REG-NEXT: %[[SUM:.+]] = scf.for %{{.+}} = %{{.+}} to %{{.+}} step %{{.+}} iter_args(%[[ACC:.+]] = %[[INIT]]) -> (f32) {
// REG-NEXT: %[[X:.+]] = memref.load
// REG-NEXT: %[[NEW:.+]] = arith.addf %[[ACC]], %[[X]] : f32
// REG-NEXT: scf.yield %[[NEW]] : f32
// REG: memref.store %[[SUM]], %[[OUT]][%[[I]]] : memref<?xf32>

func.func @row_sum(%a: memref<?x512xf32>) -> memref<?xf32> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c512 = arith.constant 512 : index
  %n = memref.dim %a, %c0 : memref<?x512xf32>
  %out = memref.alloc(%n) : memref<?xf32>
  scf.parallel (%i) = (%c0) to (%n) step (%c1) {
    scf.for %j = %c0 to %c512 step %c1 {
      %acc = memref.load %out[%i] : memref<?xf32>
      %x = memref.load %a[%i, %j] : memref<?x512xf32>
      %s = arith.addf %acc, %x : f32
      memref.store %s, %out[%i] : memref<?xf32>
    }
    scf.reduce
  }
  return %out : memref<?xf32>
}

// -----

// Left in memory: the loop also reads a buffer that may be the
// accumulator's (two function arguments), or stores twice.
// REG-LABEL: func.func @may_alias
// REG-NOT: iter_args
// REG: return

func.func @may_alias(%a: memref<?x512xf32>, %out: memref<?xf32>, %other: memref<?xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c512 = arith.constant 512 : index
  %n = memref.dim %a, %c0 : memref<?x512xf32>
  scf.parallel (%i) = (%c0) to (%n) step (%c1) {
    scf.for %j = %c0 to %c512 step %c1 {
      %acc = memref.load %out[%i] : memref<?xf32>
      %x = memref.load %a[%i, %j] : memref<?x512xf32>
      %s = arith.addf %acc, %x : f32
      memref.store %s, %out[%i] : memref<?xf32>
    }
    scf.for %j = %c0 to %c512 step %c1 {
      %acc = memref.load %other[%i] : memref<?xf32>
      %x = memref.load %a[%i, %j] : memref<?x512xf32>
      %s = arith.addf %acc, %x : f32
      memref.store %s, %other[%i] : memref<?xf32>
      memref.store %x, %a[%i, %j] : memref<?x512xf32>
    }
    scf.reduce
  }
  return
}

// -----

// Loops over independent sequences (scf.forall on memrefs, as the
// lowering of viterbi_align leaves them after bufferization) become
// outermost parallel loops that stay parallel whatever their estimated
// work: each iteration is a whole sequence's recursion over a length read
// inside it. One sequence known at compile time runs as a plain loop.
// CHECK-LABEL: func.func @sequences
// CHECK-NOT: scf.forall
// CHECK-NOT: scf.if
// CHECK: scf.parallel (%[[B:.+]]) = (%{{.+}}) to (%{{.+}}) step (%{{.+}}) {
// CHECK-NEXT: %[[LEN:.+]] = memref.load %{{.+}}[%[[B]]] : memref<?xindex>
// CHECK-NEXT: scf.for %{{.+}} = %{{.+}} to %[[LEN]] step
// CHECK: } {nn.sequences}
// CHECK-LABEL: func.func @one_sequence
// CHECK-NOT: scf.parallel
// CHECK: scf.for
// CHECK: return
// A two-dimensional forall (sequences by heads) keeps its first dimension
// parallel, and the mark goes with it to the loop that stays.
// CHECK-LABEL: func.func @sequences_by_heads
// CHECK-NOT: scf.if
// CHECK: scf.parallel (%[[S:.+]]) = (%{{.+}}) to (%{{.+}}) step (%{{.+}}) {
// CHECK-NEXT: scf.for %{{.+}} = %{{.+}} to %{{.+}} step
// CHECK-NEXT: memref.load %{{.+}}[%[[S]]] : memref<?xindex>
// CHECK: } {nn.sequences}
// OMP-LABEL: func.func @sequences
// OMP: omp.parallel
// OMP: omp.wsloop

func.func @sequences(%lengths: memref<?xindex>, %out: memref<?xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %one = arith.constant 1.0 : f32
  %zero = arith.constant 0.0 : f32
  %b = memref.dim %lengths, %c0 : memref<?xindex>
  scf.forall (%i) in (%b) {
    %n = memref.load %lengths[%i] : memref<?xindex>
    %sum = scf.for %t = %c0 to %n step %c1 iter_args(%acc = %zero) -> (f32) {
      %next = arith.addf %acc, %one : f32
      scf.yield %next : f32
    }
    memref.store %sum, %out[%i] : memref<?xf32>
  }
  return
}

func.func @one_sequence(%lengths: memref<1xindex>, %out: memref<1xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %one = arith.constant 1.0 : f32
  %zero = arith.constant 0.0 : f32
  scf.forall (%i) in (1) {
    %n = memref.load %lengths[%i] : memref<1xindex>
    %sum = scf.for %t = %c0 to %n step %c1 iter_args(%acc = %zero) -> (f32) {
      %next = arith.addf %acc, %one : f32
      scf.yield %next : f32
    }
    memref.store %sum, %out[%i] : memref<1xf32>
  }
  return
}

func.func @sequences_by_heads(%lengths: memref<?xindex>, %out: memref<?x4xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %one = arith.constant 1.0 : f32
  %zero = arith.constant 0.0 : f32
  %b = memref.dim %lengths, %c0 : memref<?xindex>
  scf.forall (%i, %h) in (%b, 4) {
    %n = memref.load %lengths[%i] : memref<?xindex>
    %sum = scf.for %t = %c0 to %n step %c1 iter_args(%acc = %zero) -> (f32) {
      %next = arith.addf %acc, %one : f32
      scf.yield %next : f32
    }
    memref.store %sum, %out[%i, %h] : memref<?x4xf32>
  }
  return
}
