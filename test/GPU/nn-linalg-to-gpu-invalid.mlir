// RUN: nn-opt %s --split-input-file --nn-linalg-to-gpu --verify-diagnostics

// Named ops must be generalized first (the pipeline runs
// linalg-generalize-named-ops before).
func.func @named(%a: memref<4xf32>, %b: memref<4xf32>) {
  // expected-error@+1 {{nn-linalg-to-gpu expects linalg.generic on memrefs}}
  linalg.copy ins(%a : memref<4xf32>) outs(%b : memref<4xf32>)
  return
}

// -----

// Only splat constants can move to the device.
memref.global "private" constant @table : memref<2xf32> = dense<[1.0, 2.0]>
func.func @reads_table(%out: memref<2xf32>) {
  // expected-error@+1 {{the GPU target supports only splat constants}}
  %g = memref.get_global @table : memref<2xf32>
  return
}
