// RUN: nn-opt %s --split-input-file --nn-approximate-math | FileCheck %s

// nn-approximate-math (CPU pipelines, after the loops): f32 exp, log, tanh
// and erf, scalar or vector, become MLIR's polynomial approximations
// (fma chains and bit manipulation, which LLVM vectorizes) instead of libm
// calls; f64 ones, and the ops LLVM has instructions for, stay.

// exp: a range reduction (floor), a polynomial, and 2^k built from its
// exponent bits.
// CHECK-LABEL: func.func @exp
// CHECK-SAME: (%[[X:[a-z0-9]+]]: f32) -> f32
// CHECK-NOT: math.exp
// CHECK: math.floor %{{.+}} : f32
// CHECK: math.fma
// CHECK: %[[BITS:.+]] = arith.shli %{{.+}}, %c23_i32 : i32
// CHECK-NEXT: arith.bitcast %[[BITS]] : i32 to f32
// CHECK-NOT: math.exp
// CHECK: return
func.func @exp(%x: f32) -> f32 {
  %0 = math.exp %x : f32
  return %0 : f32
}

// -----

// log: the exponent from the bits (shift by 23), a polynomial in the
// mantissa.
// CHECK-LABEL: func.func @log
// CHECK-NOT: math.log
// CHECK: %[[BITS:.+]] = arith.bitcast %{{.+}} : f32 to i32
// CHECK: arith.shrui %{{.+}}, %c23_i32 : i32
// CHECK: math.fma
// CHECK-NOT: math.log
// CHECK: return
func.func @log(%x: f32) -> f32 {
  %0 = math.log %x : f32
  return %0 : f32
}

// -----

// tanh: a rational approximation on |x| (math.fma chains and a division).
// CHECK-LABEL: func.func @tanh
// CHECK-NOT: math.tanh
// CHECK: math.absf
// CHECK: math.fma
// CHECK: arith.divf
// CHECK-NOT: math.tanh
// CHECK: return
func.func @tanh(%x: f32) -> f32 {
  %0 = math.tanh %x : f32
  return %0 : f32
}

// -----

// erf: polynomials on intervals chosen by selects, and a division.
// CHECK-LABEL: func.func @erf
// CHECK-NOT: math.erf
// CHECK: math.fma
// CHECK: arith.divf
// CHECK-NOT: math.erf
// CHECK: return
func.func @erf(%x: f32) -> f32 {
  %0 = math.erf %x : f32
  return %0 : f32
}

// -----

// Vectors of f32 the same way, lane-wise.
// CHECK-LABEL: func.func @vector
// CHECK-NOT: math.exp
// CHECK: math.floor %{{.+}} : vector<8xf32>
// CHECK: math.fma {{.+}} : vector<8xf32>
// CHECK: arith.shli %{{.+}}, %{{.+}} : vector<8xi32>
// CHECK-NOT: math.exp
// CHECK: return %{{.+}} : vector<8xf32>
func.func @vector(%x: vector<8xf32>) -> vector<8xf32> {
  %0 = math.exp %x : vector<8xf32>
  return %0 : vector<8xf32>
}

// -----

// Left alone: f64, and sqrt, rsqrt, abs and powf at f32.
// CHECK-LABEL: func.func @left_alone
// CHECK-SAME: (%[[X:[a-z0-9]+]]: f32, %[[D:[a-z0-9]+]]: f64)
// CHECK-NEXT: %[[E:.+]] = math.exp %[[D]] : f64
// CHECK-NEXT: %[[L:.+]] = math.log %[[D]] : f64
// CHECK-NEXT: %[[T:.+]] = math.tanh %[[D]] : f64
// CHECK-NEXT: %[[R:.+]] = math.erf %[[D]] : f64
// CHECK-NEXT: %[[S:.+]] = math.sqrt %[[X]] : f32
// CHECK-NEXT: %[[Q:.+]] = math.rsqrt %[[X]] : f32
// CHECK-NEXT: %[[A:.+]] = math.absf %[[X]] : f32
// CHECK-NEXT: %[[P:.+]] = math.powf %[[X]], %[[X]] : f32
// CHECK-NEXT: return %[[E]], %[[L]], %[[T]], %[[R]], %[[S]], %[[Q]], %[[A]], %[[P]]
func.func @left_alone(%x: f32, %d: f64) -> (f64, f64, f64, f64, f32, f32, f32, f32) {
  %0 = math.exp %d : f64
  %1 = math.log %d : f64
  %2 = math.tanh %d : f64
  %3 = math.erf %d : f64
  %4 = math.sqrt %x : f32
  %5 = math.rsqrt %x : f32
  %6 = math.absf %x : f32
  %7 = math.powf %x, %x : f32
  return %0, %1, %2, %3, %4, %5, %6, %7 : f64, f64, f64, f64, f32, f32, f32, f32
}
