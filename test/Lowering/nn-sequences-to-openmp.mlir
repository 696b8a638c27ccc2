// RUN: nn-opt %s --split-input-file --nn-sequences-to-openmp | FileCheck %s

// nn-sequences-to-openmp (the threaded CPU pipeline, after
// nn-parallel-loops): upstream convert-scf-to-openmp, then a dynamic
// schedule for the loops over sequences (marked nn.sequences), whose
// iterations cost a sequence each; the other loops keep the static one.

// A loop over sequences between two elementwise loops: only it is
// scheduled dynamically.
// CHECK-LABEL: func.func @mixed
// CHECK: omp.wsloop {
// CHECK-NEXT: omp.loop_nest
// CHECK: memref.store %{{.+}}, %{{.+}}[%{{.+}}] : memref<?xf32>
// CHECK: omp.wsloop schedule(dynamic) {
// CHECK-NEXT: omp.loop_nest (%[[SEQ:.+]]) : index
// CHECK: memref.load %{{.+}}[%[[SEQ]]] : memref<?xi32>
// CHECK: scf.for
// CHECK: omp.wsloop {
// CHECK-NEXT: omp.loop_nest
// CHECK-NOT: schedule
func.func @mixed(%lengths: memref<?xi32>, %x: memref<?xf32>, %out: memref<?xf32>, %n: index) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %one = arith.constant 1.0 : f32
  scf.parallel (%i) = (%c0) to (%n) step (%c1) {
    memref.store %one, %out[%i] : memref<?xf32>
    scf.reduce
  }
  %b = memref.dim %lengths, %c0 : memref<?xi32>
  scf.parallel (%s) = (%c0) to (%b) step (%c1) {
    %len32 = memref.load %lengths[%s] : memref<?xi32>
    %len = arith.index_cast %len32 : i32 to index
    scf.for %t = %c0 to %len step %c1 {
      %v = memref.load %x[%t] : memref<?xf32>
      memref.store %v, %out[%s] : memref<?xf32>
    }
    scf.reduce
  } {nn.sequences}
  scf.parallel (%i) = (%c0) to (%n) step (%c1) {
    %v = memref.load %x[%i] : memref<?xf32>
    memref.store %v, %out[%i] : memref<?xf32>
    scf.reduce
  }
  return
}

// -----

// A worksharing loop already in the input (here, before a loop over
// sequences) keeps its schedule, and does not shift which new loop is
// the loop over sequences.
// CHECK-LABEL: func.func @earlier_wsloop
// CHECK: omp.wsloop schedule(static) {
// CHECK: omp.wsloop schedule(dynamic) {
// CHECK-NEXT: omp.loop_nest (%[[SEQ:.+]]) : index
// CHECK: memref.load %{{.+}}[%[[SEQ]]] : memref<?xi32>
// CHECK: omp.wsloop {
func.func @earlier_wsloop(%lengths: memref<?xi32>, %out: memref<?xf32>, %n: index) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %one = arith.constant 1.0 : f32
  omp.parallel {
    omp.wsloop schedule(static) {
      omp.loop_nest (%i) : index = (%c0) to (%n) step (%c1) {
        memref.store %one, %out[%i] : memref<?xf32>
        omp.yield
      }
      omp.terminator
    }
    omp.terminator
  }
  %b = memref.dim %lengths, %c0 : memref<?xi32>
  scf.parallel (%s) = (%c0) to (%b) step (%c1) {
    %len32 = memref.load %lengths[%s] : memref<?xi32>
    %len = arith.sitofp %len32 : i32 to f32
    memref.store %len, %out[%s] : memref<?xf32>
    scf.reduce
  } {nn.sequences}
  scf.parallel (%i) = (%c0) to (%n) step (%c1) {
    memref.store %one, %out[%i] : memref<?xf32>
    scf.reduce
  }
  return
}
