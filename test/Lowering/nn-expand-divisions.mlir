// RUN: nn-opt %s --split-input-file --nn-expand-divisions | FileCheck %s

// nn-expand-divisions (CPU pipelines, after the loops): the integer
// ceil/floor divisions LLVM has no instruction for become plain integer
// arithmetic. Nothing else is expanded: max/min stay single ops, which
// LLVM vectorizes as reductions (upstream arith-expand would turn them
// into compares and selects).

// ceildivsi: (a + (b > 0 ? -1 : 1)) / b + 1 when a and b have the same
// sign, -((0 - a) / b) otherwise.
// CHECK-LABEL: func.func @ceildivsi
// CHECK-SAME: (%[[A:[a-z0-9]+]]: i32, %[[B:[a-z0-9]+]]: i32)
// CHECK-NOT: arith.ceildivsi
// CHECK-DAG: %[[POSB:.+]] = arith.cmpi sgt, %[[B]], %[[ZERO:[a-z0-9_]+]] : i32
// CHECK-DAG: %[[ZERO]] = arith.constant 0 : i32
// CHECK-DAG: %[[NUDGE:.+]] = arith.select %[[POSB]], %c-1_i32, %c1_i32 : i32
// CHECK-DAG: %[[NUDGED:.+]] = arith.addi %[[NUDGE]], %[[A]] : i32
// CHECK-DAG: %[[Q:.+]] = arith.divsi %[[NUDGED]], %[[B]] : i32
// CHECK-DAG: %[[UP:.+]] = arith.addi %[[Q]], %c1_i32 : i32
// CHECK-DAG: %[[NEGA:.+]] = arith.subi %[[ZERO]], %[[A]] : i32
// CHECK-DAG: %[[NQ:.+]] = arith.divsi %[[NEGA]], %[[B]] : i32
// CHECK-DAG: %[[DOWN:.+]] = arith.subi %[[ZERO]], %[[NQ]] : i32
// CHECK-DAG: %[[SAME:.+]] = arith.ori %{{.+}}, %{{.+}} : i1
// CHECK: %[[R:.+]] = arith.select %[[SAME]], %[[UP]], %[[DOWN]] : i32
// CHECK-NEXT: return %[[R]] : i32
func.func @ceildivsi(%a: i32, %b: i32) -> i32 {
  %0 = arith.ceildivsi %a, %b : i32
  return %0 : i32
}

// -----

// ceildivui: 0 for a = 0, else (a - 1) / b + 1.
// CHECK-LABEL: func.func @ceildivui
// CHECK-SAME: (%[[A:[a-z0-9]+]]: i32, %[[B:[a-z0-9]+]]: i32)
// CHECK-NOT: arith.ceildivui
// CHECK-DAG: %[[ISZERO:.+]] = arith.cmpi eq, %[[A]], %[[ZERO:[a-z0-9_]+]] : i32
// CHECK-DAG: %[[ZERO]] = arith.constant 0 : i32
// CHECK-DAG: %[[AM1:.+]] = arith.subi %[[A]], %[[ONE:[a-z0-9_]+]] : i32
// CHECK-DAG: %[[ONE]] = arith.constant 1 : i32
// CHECK-DAG: %[[Q:.+]] = arith.divui %[[AM1]], %[[B]] : i32
// CHECK-DAG: %[[UP:.+]] = arith.addi %[[Q]], %[[ONE]] : i32
// CHECK: %[[R:.+]] = arith.select %[[ISZERO]], %[[ZERO]], %[[UP]] : i32
// CHECK-NEXT: return %[[R]] : i32
func.func @ceildivui(%a: i32, %b: i32) -> i32 {
  %0 = arith.ceildivui %a, %b : i32
  return %0 : i32
}

// -----

// floordivsi: q = a / b, minus 1 where it truncated (a != q b) towards
// zero from below (the signs of a and b differ).
// CHECK-LABEL: func.func @floordivsi
// CHECK-SAME: (%[[A:[a-z0-9]+]]: i32, %[[B:[a-z0-9]+]]: i32)
// CHECK-NOT: arith.floordivsi
// CHECK: %[[Q:.+]] = arith.divsi %[[A]], %[[B]] : i32
// CHECK-NEXT: %[[QB:.+]] = arith.muli %[[Q]], %[[B]] : i32
// CHECK-NEXT: %[[INEXACT:.+]] = arith.cmpi ne, %[[A]], %[[QB]] : i32
// CHECK-NEXT: %[[NEGA:.+]] = arith.cmpi slt, %[[A]], %{{.+}} : i32
// CHECK-NEXT: %[[NEGB:.+]] = arith.cmpi slt, %[[B]], %{{.+}} : i32
// CHECK-NEXT: %[[SIGNS:.+]] = arith.cmpi ne, %[[NEGA]], %[[NEGB]] : i1
// CHECK-NEXT: %[[FIX:.+]] = arith.andi %[[INEXACT]], %[[SIGNS]] : i1
// CHECK-NEXT: %[[QM1:.+]] = arith.addi %[[Q]], %c-1_i32 : i32
// CHECK-NEXT: %[[R:.+]] = arith.select %[[FIX]], %[[QM1]], %[[Q]] : i32
// CHECK-NEXT: return %[[R]] : i32
func.func @floordivsi(%a: i32, %b: i32) -> i32 {
  %0 = arith.floordivsi %a, %b : i32
  return %0 : i32
}

// -----

// On index, what nn-parallel-loops' trip counts use.
// CHECK-LABEL: func.func @trip_count
// CHECK-NOT: arith.ceildivsi
// CHECK: arith.divsi %{{.+}}, %{{.+}} : index
// CHECK: arith.select %{{.+}}, %{{.+}}, %{{.+}} : index
// CHECK: return
func.func @trip_count(%lower: index, %upper: index, %step: index) -> index {
  %span = arith.subi %upper, %lower : index
  %0 = arith.ceildivsi %span, %step : index
  return %0 : index
}

// -----

// Left alone: max and min in every flavour (scalar and vector), and the
// divisions and remainders LLVM has.
// CHECK-LABEL: func.func @left_alone
// CHECK-SAME: (%[[X:[a-z0-9]+]]: f32, %[[Y:[a-z0-9]+]]: f32, %[[V:[a-z0-9]+]]: vector<8xf32>, %[[W:[a-z0-9]+]]: vector<8xf32>, %[[A:[a-z0-9]+]]: i32, %[[B:[a-z0-9]+]]: i32)
// CHECK-NEXT: %[[R0:.+]] = arith.maximumf %[[X]], %[[Y]] : f32
// CHECK-NEXT: %[[R1:.+]] = arith.maxnumf %[[X]], %[[Y]] : f32
// CHECK-NEXT: %[[R2:.+]] = arith.minimumf %[[X]], %[[Y]] : f32
// CHECK-NEXT: %[[R3:.+]] = arith.minnumf %[[X]], %[[Y]] : f32
// CHECK-NEXT: %[[R4:.+]] = arith.maximumf %[[V]], %[[W]] : vector<8xf32>
// CHECK-NEXT: %[[R5:.+]] = arith.divsi %[[A]], %[[B]] : i32
// CHECK-NEXT: %[[R6:.+]] = arith.divui %[[A]], %[[B]] : i32
// CHECK-NEXT: %[[R7:.+]] = arith.remsi %[[A]], %[[B]] : i32
// CHECK-NEXT: %[[R8:.+]] = arith.maxsi %[[A]], %[[B]] : i32
// CHECK-NEXT: return %[[R0]], %[[R1]], %[[R2]], %[[R3]], %[[R4]], %[[R5]], %[[R6]], %[[R7]], %[[R8]]
func.func @left_alone(%x: f32, %y: f32, %v: vector<8xf32>, %w: vector<8xf32>, %a: i32, %b: i32)
    -> (f32, f32, f32, f32, vector<8xf32>, i32, i32, i32, i32) {
  %0 = arith.maximumf %x, %y : f32
  %1 = arith.maxnumf %x, %y : f32
  %2 = arith.minimumf %x, %y : f32
  %3 = arith.minnumf %x, %y : f32
  %4 = arith.maximumf %v, %w : vector<8xf32>
  %5 = arith.divsi %a, %b : i32
  %6 = arith.divui %a, %b : i32
  %7 = arith.remsi %a, %b : i32
  %8 = arith.maxsi %a, %b : i32
  return %0, %1, %2, %3, %4, %5, %6, %7, %8 : f32, f32, f32, f32, vector<8xf32>, i32, i32, i32, i32
}
