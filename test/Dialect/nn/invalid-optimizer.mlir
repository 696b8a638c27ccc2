// Verifier errors of the optimizer ops: one case per verifier branch.
// RUN: nn-opt %s --split-input-file --verify-diagnostics

nn.graph @g(%x: !nn.tensor<[B, T, 3], f32>) dims [B: batch, T: seq(B)] {
  // expected-error @+1 {{input 0 must have a static shape (a parameter or its gradient), got '!nn.tensor<[B, T, 3], f32>'}}
  %n = nn.global_norm %x : !nn.tensor<[B, T, 3], f32>
  nn.return
}

// -----

nn.graph @g() dims [] {
  // expected-error @+1 {{needs at least one input}}
  %n = "nn.global_norm"() : () -> !nn.tensor<[], f32>
  nn.return
}

// -----

nn.graph @g(%x: !nn.tensor<[B, 3], f32>, %lr: !nn.tensor<[], f32>) dims [B: batch] {
  // expected-error @+1 {{param must have a static shape (a parameter or its gradient), got '!nn.tensor<[B, 3], f32>'}}
  %p = nn.sgd_update %x, %x lr %lr : !nn.tensor<[B, 3], f32>
  nn.return
}

// -----

nn.graph @g(%x: !nn.tensor<[B, 3], f32>, %lr: !nn.tensor<[], f32>) dims [B: batch] {
  // expected-error @+1 {{param must have a static shape (a parameter or its gradient), got '!nn.tensor<[B, 3], f32>'}}
  %p, %v = nn.momentum_update %x, %x, %x lr %lr momentum 0.9 : !nn.tensor<[B, 3], f32>
  nn.return
}

// -----

nn.graph @g(%x: !nn.tensor<[B, 3], f32>, %lr: !nn.tensor<[], f32>, %t: !nn.tensor<[], i32>) dims [B: batch] {
  // expected-error @+1 {{param must have a static shape (a parameter or its gradient), got '!nn.tensor<[B, 3], f32>'}}
  %p, %m, %v = nn.adam_update %x, %x, %x, %x lr %lr step %t beta1 0.9 beta2 0.999 epsilon 1.0e-8 : !nn.tensor<[B, 3], f32>
  nn.return
}

// -----

nn.graph @g(%x: !nn.tensor<[3], f32>, %lr: !nn.tensor<[], f32>, %t: !nn.tensor<[], i32>) dims [] {
  // expected-error @+1 {{attribute 'beta1' failed to satisfy constraint: 64-bit float attribute in [0, 1)}}
  %p, %m, %v = nn.adam_update %x, %x, %x, %x lr %lr step %t beta1 1.0 beta2 0.999 epsilon 1.0e-8 : !nn.tensor<[3], f32>
  nn.return
}

// -----

nn.graph @g(%x: !nn.tensor<[3], f32>, %lr: !nn.tensor<[], f32>) dims [] {
  // expected-error @+1 {{attribute 'weight_decay' failed to satisfy constraint: 64-bit float attribute non-negative}}
  %p = nn.sgd_update %x, %x lr %lr weight_decay -1.0 : !nn.tensor<[3], f32>
  nn.return
}

// -----

nn.graph @g(%x: !nn.tensor<[B, 3], f32>) dims [B: batch] {
  // expected-error @+1 {{input 0 must have a static shape (a parameter or its gradient), got '!nn.tensor<[B, 3], f32>'}}
  %s = nn.all_reduce %x : !nn.tensor<[B, 3], f32>
  nn.return
}

// -----

nn.graph @g() dims [] {
  // expected-error @+1 {{needs at least one input}}
  "nn.all_reduce"() : () -> ()
  nn.return
}

// -----

nn.graph @g(%x: !nn.tensor<[3], f32>, %y: !nn.tensor<[], f64>) dims [] {
  // expected-error @+1 {{inputs travel as one buffer and must share one element type, got 'f32' and 'f64'}}
  %s:2 = nn.all_reduce %x, %y : !nn.tensor<[3], f32>, !nn.tensor<[], f64>
  nn.return
}

// -----

nn.graph @g(%x: !nn.tensor<[3], f16>) dims [] {
  // expected-error @+1 {{sums f32 or f64 tensors, got 'f16'}}
  %s = nn.all_reduce %x : !nn.tensor<[3], f16>
  nn.return
}
