// RUN: nn-opt %s --nn-linalg-to-gpu --verify-diagnostics

// Named ops must be generalized first (the pipeline runs
// linalg-generalize-named-ops before).
func.func @named(%a: memref<4xf32>) {
  %c = arith.constant 0.0 : f32
  // expected-error@+1 {{nn-linalg-to-gpu expects linalg.generic on memrefs}}
  linalg.fill ins(%c : f32) outs(%a : memref<4xf32>)
  return
}
