// RUN: nn-opt %s --split-input-file --nn-convert-to-linalg | FileCheck %s

// Graphs, calls and parameters (GraphPatterns.cpp).

// The calling convention: root dims first (batch size; a sequence dim's
// padded size and lengths), then the graph arguments, then parameters.
// Derived dims are computed from their source, packed sizes from lengths.
// CHECK-LABEL: func.func @abi
// CHECK-SAME: (%[[B:.+]]: index, %[[T:.+]]: index, %[[LEN:.+]]: tensor<?xi32>, %[[X:.+]]: tensor<?x?x3xf32>, %[[Y:.+]]: tensor<?x?xi32>, %[[W:.+]]: tensor<5x3xf32>) -> tensor<?x?x5xf32>
// CHECK-SAME: llvm.emit_c_interface
// CHECK: arith.ceildivui %[[T]], %c2
// CHECK: linalg.generic
// CHECK: arith.ceildivsi
// CHECK: scf.for %{{.+}} = %{{.+}} to %[[B]] {{.+}} -> (index)
// CHECK:   tensor.extract %[[LEN]]
nn.parameter @w : !nn.tensor<[5, 3], f32>
nn.graph @abi(%x: !nn.tensor<[B, T, 3], f32>, %y: !nn.tensor<[B, T2], i32>)
    -> !nn.tensor<[B, T, 5], f32>
    dims [B: batch, T: seq(B), T2: seq(B) = ceildiv(T, 2), N: packed(B, T)] {
  %w = nn.param_ref @w : !nn.tensor<[5, 3], f32>
  %h = nn.linear %x, %w : !nn.tensor<[B, T, 3], f32>, !nn.tensor<[5, 3], f32>
  nn.return %h : !nn.tensor<[B, T, 5], f32>
}

// -----

// A call passes the caller's dims bound to the callee's roots, the operands
// and the callee's parameters; the callee's losses become caller results.
// CHECK-LABEL: func.func @callee
// CHECK-SAME: (%{{.+}}: index, %{{.+}}: index, %{{.+}}: tensor<?xi32>, %{{.+}}: tensor<?x?x2xf32>, %{{.+}}: tensor<2x2xf32>) -> (tensor<?x?x2xf32>, tensor<f64>, tensor<f64>)
// CHECK-LABEL: func.func @caller
// CHECK-SAME: (%[[B:.+]]: index, %[[T:.+]]: index, %[[LEN:.+]]: tensor<?xi32>, %[[X:.+]]: tensor<?x?x2xf32>, %[[W:.+]]: tensor<2x2xf32>) -> (tensor<?x?x2xf32>, tensor<f64>, tensor<f64>)
// CHECK: %[[R:.+]]:3 = call @callee(%[[B]], %[[T]], %[[LEN]], %[[X]], %[[W]])
// CHECK: return %[[R]]#0, %[[R]]#1, %[[R]]#2
nn.parameter @w : !nn.tensor<[2, 2], f32>
nn.graph @callee(%x: !nn.tensor<[Bc, Tc, 2], f32>) -> !nn.tensor<[Bc, Tc, 2], f32>
    dims [Bc: batch, Tc: seq(Bc)] {
  %w = nn.param_ref @w : !nn.tensor<[2, 2], f32>
  %y = nn.linear %x, %w : !nn.tensor<[Bc, Tc, 2], f32>, !nn.tensor<[2, 2], f32>
  %e = nn.mse %y, %x : !nn.tensor<[Bc, Tc, 2], f32>, !nn.tensor<[Bc, Tc, 2], f32>
  nn.mark_loss %e as "mse" normalize sum : !nn.tensor<[Bc, Tc], f32>
  nn.return %y : !nn.tensor<[Bc, Tc, 2], f32>
}
nn.graph @caller(%x: !nn.tensor<[B, T, 2], f32>) -> !nn.tensor<[B, T, 2], f32>
    dims [B: batch, T: seq(B)] {
  %y = nn.call @callee(%x) : (!nn.tensor<[B, T, 2], f32>) -> !nn.tensor<[B, T, 2], f32>
  nn.return %y : !nn.tensor<[B, T, 2], f32>
}
