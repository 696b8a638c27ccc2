// RUN: nn-opt %s --nn-expose-losses | FileCheck %s
// RUN: nn-opt %s --nn-expose-losses --nn-expose-losses | FileCheck %s

// Each marked loss becomes nn.loss_terms, returned after the graph's own
// results; a call returns its callee's terms, which the caller returns in
// turn, in the order of the graph ABI (own losses in body order, a
// callee's at its call). Running it twice changes nothing.

// CHECK-LABEL: nn.graph @tail
// CHECK-SAME: -> (!nn.tensor<[], f64>, !nn.tensor<[], f64>)
// CHECK: %[[CE:.+]] = nn.cross_entropy
// CHECK: %[[SUM:.+]], %[[INV:.+]] = nn.loss_terms %[[CE]] normalize per_frame : !nn.tensor<[Bt, Tt], f32>
// CHECK-NOT: nn.mark_loss
// CHECK: nn.return %[[SUM]], %[[INV]] : !nn.tensor<[], f64>, !nn.tensor<[], f64>
nn.graph @tail(%x: !nn.tensor<[Bt, Tt, 4], f32>, %y: !nn.tensor<[Bt, Tt], i32>)
    dims [Bt: batch, Tt: seq(Bt)] {
  %ce = nn.cross_entropy %x, %y from logits : !nn.tensor<[Bt, Tt, 4], f32>, !nn.tensor<[Bt, Tt], i32>
  nn.mark_loss %ce as "ce" normalize per_frame : !nn.tensor<[Bt, Tt], f32>
  nn.return
}

// CHECK-LABEL: nn.graph @model
// CHECK-SAME: -> (!nn.tensor<[B, T, 4], f32>, !nn.tensor<[], f64>, !nn.tensor<[], f64>, !nn.tensor<[], f64>, !nn.tensor<[], f64>)
// CHECK: %[[MSE:.+]] = nn.mse
// CHECK: %[[S0:.+]], %[[I0:.+]] = nn.loss_terms %[[MSE]], %{{.+}} normalize custom : !nn.tensor<[B, T], f32>, !nn.tensor<[B], f32>
// CHECK: %[[CALL:.+]]:2 = nn.call @tail(%{{.+}}, %{{.+}}) : (!nn.tensor<[B, T, 4], f32>, !nn.tensor<[B, T], i32>) -> (!nn.tensor<[], f64>, !nn.tensor<[], f64>)
// CHECK: nn.return %{{.+}}, %[[S0]], %[[I0]], %[[CALL]]#0, %[[CALL]]#1
nn.graph @model(%x: !nn.tensor<[B, T, 4], f32>, %y: !nn.tensor<[B, T], i32>,
                %w: !nn.tensor<[B], f32>)
    -> !nn.tensor<[B, T, 4], f32>
    dims [B: batch, T: seq(B)] {
  %m = nn.mse %x, %x : !nn.tensor<[B, T, 4], f32>, !nn.tensor<[B, T, 4], f32>
  nn.mark_loss %m, %w as "mse" normalize custom : !nn.tensor<[B, T], f32>, !nn.tensor<[B], f32>
  nn.call @tail(%x, %y) : (!nn.tensor<[B, T, 4], f32>, !nn.tensor<[B, T], i32>) -> ()
  nn.return %x : !nn.tensor<[B, T, 4], f32>
}
