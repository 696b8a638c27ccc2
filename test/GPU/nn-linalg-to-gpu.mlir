// RUN: nn-opt %s --split-input-file --nn-linalg-to-gpu | FileCheck %s
// RUN: nn-opt %s --split-input-file --nn-linalg-to-gpu --gpu-kernel-outlining --nn-name-gpu-kernels | FileCheck %s --check-prefix=NAMES

// No reduction: a thread per element, 256 per block, the innermost loop
// fastest (consecutive threads, consecutive addresses). Unused outputs are
// not loaded.
#id2 = affine_map<(d0, d1) -> (d0, d1)>
// CHECK-LABEL: func.func @elementwise
//  CHECK-SAME: (%[[A:.*]]: memref<?x?xf32>, %[[B:.*]]: memref<?x?xf32>)
//   CHECK-DAG: %[[ROWS:.*]] = memref.dim %[[A]], %c0
//   CHECK-DAG: %[[COLS:.*]] = memref.dim %[[A]], %c1
//       CHECK: %[[N0:.*]] = arith.muli %{{.*}}, %[[ROWS]]
//       CHECK: %[[N:.*]] = arith.muli %[[N0]], %[[COLS]]
//       CHECK: %[[BLOCKS:.*]] = arith.ceildivui %[[N]], %c256
//       CHECK: %[[GRID:.*]] = arith.maxui %{{.*}}, %[[BLOCKS]]
//       CHECK: gpu.launch blocks(%[[BX:.*]], %{{.*}}, %{{.*}}) in (%{{.*}} = %[[GRID]], {{.*}} threads(%[[TX:.*]], %{{.*}}, %{{.*}}) in (%{{.*}} = %c256
//       CHECK:   %[[BASE:.*]] = arith.muli %[[BX]], %{{.*}}
//       CHECK:   %[[LINEAR:.*]] = arith.addi %[[BASE]], %[[TX]]
//       CHECK:   %[[IN:.*]] = arith.cmpi ult, %[[LINEAR]], %[[N]]
//       CHECK:   scf.if %[[IN]] {
//       CHECK:     %[[J:.*]] = arith.remui %[[LINEAR]], %[[COLS]]
//       CHECK:     %[[I:.*]] = arith.divui %[[LINEAR]], %[[COLS]]
//   CHECK-NOT:     memref.load %[[B]]
//       CHECK:     %[[X:.*]] = memref.load %[[A]][%[[I]], %[[J]]]
//       CHECK:     %[[E:.*]] = math.exp %[[X]]
//       CHECK:     memref.store %[[E]], %[[B]][%[[I]], %[[J]]]
//   CHECK-NOT: linalg.generic
// The kernel and its module are named after the function, a counter and
// the nn op (none here: the input is linalg).
// NAMES-LABEL: func.func @elementwise
//       NAMES: gpu.launch_func @elementwise_k0_linalg::@elementwise_k0_linalg
//       NAMES: gpu.module @elementwise_k0_linalg
//       NAMES: gpu.func @elementwise_k0_linalg({{.*}}) kernel attributes {known_block_size = array<i32: 256, 1, 1>}
func.func @elementwise(%a: memref<?x?xf32>, %b: memref<?x?xf32>) {
  linalg.generic {indexing_maps = [#id2, #id2], iterator_types = ["parallel", "parallel"]}
      ins(%a : memref<?x?xf32>) outs(%b : memref<?x?xf32>) {
  ^bb0(%in: f32, %out: f32):
    %e = math.exp %in : f32
    linalg.yield %e : f32
  }
  return
}

// -----

// A reduction over the innermost loop: a block per row. Each thread keeps
// a partial over a stride of the row, gpu.all_reduce combines them, and
// thread 0 combines the result with the output's old value.
#id2 = affine_map<(d0, d1) -> (d0, d1)>
#row = affine_map<(d0, d1) -> (d0)>
// CHECK-LABEL: func.func @row_max
//  CHECK-SAME: (%[[X:.*]]: memref<?x1000xf32>, %[[M:.*]]: memref<?xf32>)
//       CHECK: %[[ROWS:.*]] = arith.muli %{{.*}}, %{{.*}}
//       CHECK: %[[GRID:.*]] = arith.maxui %{{.*}}, %[[ROWS]]
//       CHECK: gpu.launch blocks(%[[BX:.*]], %{{.*}}, %{{.*}}) in (%{{.*}} = %[[GRID]], {{.*}} threads(%[[TX:.*]], %{{.*}}, %{{.*}}) in (%{{.*}} = %c256
//       CHECK:   %[[UNIFORM:.*]] = arith.cmpi ult, %[[BX]], %[[ROWS]]
//       CHECK:   scf.if %[[UNIFORM]] {
//       CHECK:     %[[NEGINF:.*]] = arith.constant 0xFF800000 : f32
//       CHECK:     %[[V:.*]] = arith.muli %{{.*}}, %c1000
//       CHECK:     %[[PARTIAL:.*]] = scf.for %[[K:.*]] = %[[TX]] to %[[V]] step %c256{{.*}} iter_args(%[[ACC:.*]] = %[[NEGINF]])
//       CHECK:       %[[E:.*]] = memref.load %[[X]][%[[BX]], %[[K]]]
//       CHECK:       %[[NEXT:.*]] = arith.maximumf %[[E]], %[[ACC]]
//       CHECK:       scf.yield %[[NEXT]]
//       CHECK:     %[[TOTAL:.*]] = gpu.all_reduce maximumf %[[PARTIAL]] uniform
//       CHECK:     %[[FIRST:.*]] = arith.cmpi eq, %[[TX]], %c0
//       CHECK:     scf.if %[[FIRST]] {
//       CHECK:       %[[OLD:.*]] = memref.load %[[M]][%[[BX]]]
//       CHECK:       %[[NEW:.*]] = arith.maximumf %[[TOTAL]], %[[OLD]]
//       CHECK:       memref.store %[[NEW]], %[[M]][%[[BX]]]
func.func @row_max(%a: memref<?x1000xf32>, %m: memref<?xf32>) {
  linalg.generic {indexing_maps = [#id2, #row], iterator_types = ["parallel", "reduction"]}
      ins(%a : memref<?x1000xf32>) outs(%m : memref<?xf32>) {
  ^bb0(%in: f32, %out: f32):
    %r = arith.maximumf %in, %out : f32
    linalg.yield %r : f32
  }
  return
}

// -----

// A loss sum: everything reduces to a scalar, in f64. One block of 1024
// threads; the payload before the combiner (extf) runs per element.
#id1 = affine_map<(d0) -> (d0)>
#scalar = affine_map<(d0) -> ()>
// CHECK-LABEL: func.func @loss_sum
//       CHECK: gpu.launch {{.*}} threads({{.*}}) in (%{{.*}} = %c1024
//       CHECK:   %[[ZERO:.*]] = arith.constant 0.000000e+00 : f64
//       CHECK:   scf.for {{.*}} step %c1024{{.*}} iter_args(%[[ACC:.*]] = %[[ZERO]]) -> (f64)
//       CHECK:     %[[X:.*]] = memref.load
//       CHECK:     %[[W:.*]] = arith.extf %[[X]] : f32 to f64
//       CHECK:     arith.addf %[[ACC]], %[[W]] : f64
//       CHECK:   gpu.all_reduce add %{{.*}} uniform
//       CHECK:   memref.load %{{.*}}[] : memref<f64>
//       CHECK:   memref.store %{{.*}}, %{{.*}}[] : memref<f64>
func.func @loss_sum(%x: memref<?xf32>, %sum: memref<f64>) {
  linalg.generic {indexing_maps = [#id1, #scalar], iterator_types = ["reduction"]}
      ins(%x : memref<?xf32>) outs(%sum : memref<f64>) {
  ^bb0(%in: f32, %out: f64):
    %w = arith.extf %in : f32 to f64
    %s = arith.addf %out, %w : f64
    linalg.yield %s : f64
  }
  return
}

// -----

// A sum over time with features innermost: blocks of 32 x 8 threads, x on
// 32 consecutive outputs (b, d), y on interleaved time steps. The partials
// meet in workgroup memory; after the barrier, row y = 0 adds them to the
// output. Threads past the end still reach the barrier.
#x = affine_map<(d0, d1, d2) -> (d0, d1, d2)>
#y = affine_map<(d0, d1, d2) -> (d0, d2)>
// CHECK-LABEL: func.func @sum_over_time
//  CHECK-SAME: (%[[X:.*]]: memref<?x?x64xf32>, %[[Y:.*]]: memref<?x64xf32>)
//       CHECK: %[[T:.*]] = memref.dim %[[X]], %c1
//       CHECK: %[[OUTS:.*]] = arith.muli %{{.*}}, %c64
//       CHECK: %[[BLOCKS:.*]] = arith.ceildivui %[[OUTS]], %c32
//       CHECK: gpu.launch blocks(%[[BX:.*]], %{{.*}}, %{{.*}}) in ({{.*}}) threads(%[[TX:.*]], %[[TY:.*]], %{{.*}}) in (%{{.*}} = %c32{{.*}}, %{{.*}} = %c8{{.*}}, %{{.*}}) workgroup(%[[SHARED:.*]] : memref<8x32xf32, #gpu.address_space<workgroup>>)
//       CHECK:   %[[LINEAR:.*]] = arith.addi %{{.*}}, %[[TX]]
//       CHECK:   %[[IN:.*]] = arith.cmpi ult, %[[LINEAR]], %[[OUTS]]
//       CHECK:   %[[ZERO:.*]] = arith.constant 0.000000e+00 : f32
//       CHECK:   %[[PARTIAL:.*]] = scf.if %[[IN]] -> (f32) {
//       CHECK:     %[[D:.*]] = arith.remui %[[LINEAR]], %c64
//       CHECK:     %[[B:.*]] = arith.divui %[[LINEAR]], %c64
//       CHECK:     %[[STEPS:.*]] = arith.muli %{{.*}}, %[[T]]
//       CHECK:     scf.for %[[TT:.*]] = %[[TY]] to %[[STEPS]] step %c8{{.*}} iter_args(%[[ACC:.*]] = %{{.*}})
//       CHECK:       %[[V:.*]] = memref.load %[[X]][%[[B]], %[[TT]], %[[D]]]
//       CHECK:       arith.addf %[[V]], %[[ACC]]
//       CHECK:   } else {
//       CHECK:     scf.yield %[[ZERO]]
//       CHECK:   memref.store %[[PARTIAL]], %[[SHARED]][%[[TY]], %[[TX]]]
//       CHECK:   gpu.barrier
//       CHECK:   %[[ROW0:.*]] = arith.cmpi eq, %[[TY]], %c0
//       CHECK:   %[[WRITE:.*]] = arith.andi %[[ROW0]], %[[IN]]
//       CHECK:   scf.if %[[WRITE]] {
//       CHECK:     %[[OLD:.*]] = memref.load %[[Y]]
//       CHECK:     %[[P0:.*]] = memref.load %[[SHARED]][%c0{{.*}}, %[[TX]]]
//       CHECK:     %[[S0:.*]] = arith.addf %[[P0]], %[[OLD]]
// CHECK-COUNT-7:   memref.load %[[SHARED]]
//       CHECK:     memref.store %{{.*}}, %[[Y]]
//   CHECK-NOT: gpu.all_reduce
func.func @sum_over_time(%x: memref<?x?x64xf32>, %y: memref<?x64xf32>) {
  linalg.generic {indexing_maps = [#x, #y], iterator_types = ["parallel", "reduction", "parallel"]}
      ins(%x : memref<?x?x64xf32>) outs(%y : memref<?x64xf32>) {
  ^bb0(%in: f32, %out: f32):
    %s = arith.addf %in, %out : f32
    linalg.yield %s : f32
  }
  return
}

// -----

// linalg.index, a scalar input and a gather from a captured buffer (the
// reversal of sequences within their lengths) carry over into the kernel;
// affine maps with offsets become affine.apply.
#out = affine_map<(d0, d1) -> (d0, d1)>
#len = affine_map<(d0, d1) -> (d0)>
#shifted = affine_map<(d0, d1) -> (d0, d1 + 256)>
#none = affine_map<(d0, d1) -> ()>
// CHECK-LABEL: func.func @index_and_gather
//       CHECK: gpu.launch
//       CHECK:   %[[J:.*]] = arith.remui
//       CHECK:   %[[I:.*]] = arith.divui
//       CHECK:   memref.load %{{.*}}[%[[I]]] : memref<?xi32>
//       CHECK:   %[[SHIFT:.*]] = affine.apply #{{.*}}(%[[I]], %[[J]])
//       CHECK:   memref.load %{{.*}}[%[[I]], %[[SHIFT]]] : memref<?x512xf32>
//       CHECK:   arith.cmpi slt, %[[J]], %{{.*}}
//       CHECK:   memref.load %{{.*}}[%[[I]], %{{.*}}] : memref<?x256xf32>
//       CHECK:   arith.select
func.func @index_and_gather(%len: memref<?xi32>, %wide: memref<?x512xf32>, %src: memref<?x256xf32>, %scale: f32, %y: memref<?x256xf32>) {
  linalg.generic {indexing_maps = [#len, #shifted, #none, #out], iterator_types = ["parallel", "parallel"]}
      ins(%len, %wide, %scale : memref<?xi32>, memref<?x512xf32>, f32) outs(%y : memref<?x256xf32>) {
  ^bb0(%l: i32, %w: f32, %s: f32, %out: f32):
    %n = arith.index_cast %l : i32 to index
    %j = linalg.index 1 : index
    %i = linalg.index 0 : index
    %valid = arith.cmpi slt, %j, %n : index
    %c1 = arith.constant 1 : index
    %last = arith.subi %n, %c1 : index
    %r = arith.subi %last, %j : index
    %c0 = arith.constant 0 : index
    %rr = arith.select %valid, %r, %c0 : index
    %v = memref.load %src[%i, %rr] : memref<?x256xf32>
    %m = arith.mulf %v, %s : f32
    %a = arith.addf %m, %w : f32
    %zero = arith.constant 0.0 : f32
    %res = arith.select %valid, %a, %zero : f32
    linalg.yield %res : f32
  }
  return
}


// -----

// Constants bufferization placed in host globals: kernels cannot read
// them, so each becomes a device buffer filled at entry (a kernel) and
// freed before the return.
memref.global "private" constant @__constant_xf64 : memref<f64> = dense<1.000000e+00>
#scalar = affine_map<() -> ()>
// CHECK-LABEL: func.func @splat_constant
//  CHECK-SAME: (%[[OUT:.*]]: memref<f64>)
//   CHECK-NOT: memref.get_global
//       CHECK: %[[BUF:.*]] = memref.alloc() : memref<f64>
//       CHECK: %[[ONE:.*]] = arith.constant 1.000000e+00 : f64
//       CHECK: gpu.launch
//       CHECK:   memref.store %[[ONE]], %[[BUF]][]
//       CHECK: gpu.launch
//       CHECK:   %[[V:.*]] = memref.load %[[BUF]][]
//       CHECK:   memref.store %[[V]], %[[OUT]][]
//       CHECK: memref.dealloc %[[BUF]]
//  CHECK-NEXT: return
//   CHECK-NOT: memref.global
func.func @splat_constant(%out: memref<f64>) {
  %g = memref.get_global @__constant_xf64 : memref<f64>
  linalg.generic {indexing_maps = [#scalar, #scalar], iterator_types = []}
      ins(%g : memref<f64>) outs(%out : memref<f64>) {
  ^bb0(%in: f64, %o: f64):
    linalg.yield %in : f64
  }
  return
}

// -----

// A reduction with two outputs (no single combiner): a thread per output
// element with the reduction as a loop from the outputs' values.
#x2 = affine_map<(d0, d1) -> (d0, d1)>
#r2 = affine_map<(d0, d1) -> (d0)>
// CHECK-LABEL: func.func @two_outputs
//       CHECK: gpu.launch {{.*}} threads({{.*}}) in (%{{.*}} = %c256
//       CHECK:   scf.if
//       CHECK:     %[[S0:.*]] = memref.load %{{.*}}[%[[ROW:.*]]] : memref<?xf32>
//       CHECK:     %[[M0:.*]] = memref.load %{{.*}}[%[[ROW]]] : memref<?xf32>
//       CHECK:     %[[R:.*]]:2 = scf.for {{.*}} iter_args(%{{.*}} = %[[S0]], %{{.*}} = %[[M0]]) -> (f32, f32)
//       CHECK:     memref.store %[[R]]#0
//       CHECK:     memref.store %[[R]]#1
//   CHECK-NOT: gpu.all_reduce
func.func @two_outputs(%x: memref<?x?xf32>, %s: memref<?xf32>, %m: memref<?xf32>) {
  linalg.generic {indexing_maps = [#x2, #r2, #r2], iterator_types = ["parallel", "reduction"]}
      ins(%x : memref<?x?xf32>) outs(%s, %m : memref<?xf32>, memref<?xf32>) {
  ^bb0(%in: f32, %sum: f32, %max: f32):
    %a = arith.addf %in, %sum : f32
    %b = arith.maximumf %in, %max : f32
    linalg.yield %a, %b : f32, f32
  }
  return
}

// -----

// A map fused with a row reduction (attention's mask with the row
// maximum): output 0 has an element per iteration, read and written in
// the loop at (row, column); only the maximum is carried.
#x2 = affine_map<(d0, d1) -> (d0, d1)>
#r2 = affine_map<(d0, d1) -> (d0)>
// CHECK-LABEL: func.func @map_and_reduce
//  CHECK-SAME: (%[[S:.*]]: memref<?x?xf32>, %[[M:.*]]: memref<?xf32>)
//       CHECK: gpu.launch
//       CHECK:   scf.if
//       CHECK:     %[[M0:.*]] = memref.load %[[M]][%[[ROW:.*]]] : memref<?xf32>
//       CHECK:     %[[R:.*]] = scf.for %[[COL:.*]] = %{{.*}} to %{{.*}} step %{{.*}} iter_args(%[[ACC:.*]] = %[[M0]]) -> (f32)
//       CHECK:       %[[X:.*]] = memref.load %[[S]][%[[ROW]], %[[COL]]] : memref<?x?xf32>
//       CHECK:       %[[Y:.*]] = arith.mulf %[[X]], %{{.*}} : f32
//       CHECK:       %[[NEXT:.*]] = arith.maximumf %[[ACC]], %[[Y]] : f32
//       CHECK:       memref.store %[[Y]], %[[S]][%[[ROW]], %[[COL]]] : memref<?x?xf32>
//       CHECK:       scf.yield %[[NEXT]] : f32
//       CHECK:     memref.store %[[R]], %[[M]][%[[ROW]]] : memref<?xf32>
//   CHECK-NOT: gpu.all_reduce
func.func @map_and_reduce(%s: memref<?x?xf32>, %m: memref<?xf32>) {
  %scale = arith.constant 0.125 : f32
  linalg.generic {indexing_maps = [#x2, #r2], iterator_types = ["parallel", "reduction"]}
      outs(%s, %m : memref<?x?xf32>, memref<?xf32>) {
  ^bb0(%score: f32, %max: f32):
    %y = arith.mulf %score, %scale : f32
    %n = arith.maximumf %max, %y : f32
    linalg.yield %y, %n : f32, f32
  }
  return
}

// -----

// The masked form `select(valid, out + x, out)` (how reductions over
// padded sequence axes lower) reduces `select(valid, x, 0)`: a padded loss
// sum is one block of 1024 threads, not one thread.
#bt = affine_map<(d0, d1) -> (d0, d1)>
#b = affine_map<(d0, d1) -> (d0)>
#none = affine_map<(d0, d1) -> ()>
// CHECK-LABEL: func.func @masked_loss_sum
//       CHECK: gpu.launch {{.*}} threads({{.*}}) in (%{{.*}} = %c1024
//       CHECK:   %[[ZERO:.*]] = arith.constant 0.000000e+00 : f64
//       CHECK:   scf.for {{.*}} iter_args(%[[ACC:.*]] = %[[ZERO]]) -> (f64)
//       CHECK:     %[[X:.*]] = memref.load
//       CHECK:     %[[VALID:.*]] = arith.cmpi slt
//       CHECK:     %[[W:.*]] = arith.extf %[[X]] : f32 to f64
//       CHECK:     %[[IDENTITY:.*]] = arith.constant 0.000000e+00 : f64
//       CHECK:     %[[MASKED:.*]] = arith.select %[[VALID]], %[[W]], %[[IDENTITY]] : f64
//       CHECK:     arith.addf %[[ACC]], %[[MASKED]] : f64
//       CHECK:   gpu.all_reduce add
func.func @masked_loss_sum(%x: memref<?x?xf32>, %len: memref<?xi32>, %sum: memref<f64>) {
  linalg.generic {indexing_maps = [#bt, #b, #none], iterator_types = ["reduction", "reduction"]}
      ins(%x, %len : memref<?x?xf32>, memref<?xi32>) outs(%sum : memref<f64>) {
  ^bb0(%in: f32, %l: i32, %out: f64):
    %n = arith.index_cast %l : i32 to index
    %t = linalg.index 1 : index
    %valid = arith.cmpi slt, %t, %n : index
    %w = arith.extf %in : f32 to f64
    %s = arith.addf %out, %w : f64
    %r = arith.select %valid, %s, %out : f64
    linalg.yield %r : f64
  }
  return
}
