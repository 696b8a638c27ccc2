// Malformed text and bad input give a located diagnostic and a non-zero
// exit, never a crash.
// RUN: not nn-opt %s --split-input-file 2>&1 | FileCheck %s

// CHECK: split at {{.+}}bad-input.mlir:1 offset :6:27: error: unbalanced '[' character in pretty dialect name
nn.graph @g(%x: !nn.tensor<[B, T, 80 f32>) dims [B: batch, T: seq(B)] {
  nn.return
}

// -----

// CHECK: split at {{.+}}bad-input.mlir:10 offset :4:1: error: 'nn.graph' op type '!nn.tensor<[B, Q], f32>' names dim 'Q', which the enclosing graph does not declare
nn.graph @g(%x: !nn.tensor<[B, Q], f32>) dims [B: batch] {
  nn.return
}

// -----

// CHECK: split at {{.+}}bad-input.mlir:17 offset :5:3: error: 'nn.call' op 'nowhere' does not name an nn.graph
nn.graph @g() dims [] {
  nn.call @nowhere() : () -> ()
  nn.return
}

// -----

// CHECK: split at {{.+}}bad-input.mlir:25 offset :4:24: error: custom op 'nn.graph' expected dim kind 'batch', 'seq' or 'packed', got 'time'
nn.graph @g() dims [T: time] {
  nn.return
}
