// Verifier errors of the frame-wise layers: one case per verifier branch.
// RUN: nn-opt %s --split-input-file --verify-diagnostics

func.func @f(%x: !nn.tensor<[4], f32>) -> !nn.tensor<[4], f32> {
  // expected-error @+1 {{'nn.relu' op must be inside an nn.graph, which declares its dims}}
  %r = nn.relu %x : !nn.tensor<[4], f32>
  return %r : !nn.tensor<[4], f32>
}

// -----

nn.graph @g(%x: !nn.tensor<[B, 4], f32>, %w: !nn.tensor<[3, 4], f32>) dims [B: batch] {
  // expected-error @+1 {{names dim 'T', which the enclosing graph does not declare}}
  %r = "nn.linear"(%x, %w) : (!nn.tensor<[B, 4], f32>, !nn.tensor<[3, 4], f32>) -> !nn.tensor<[B, T, 3], f32>
  nn.return
}

// -----

nn.graph @g(%x: !nn.tensor<[B, T, 4], i32>) dims [B: batch, T: seq(B), U: seq(B), N: packed(B, T)] {
  // expected-error @+1 {{operand #0 must be nn tensor of floats, but got '!nn.tensor<[B, T, 4], i32>'}}
  %r = nn.relu %x : !nn.tensor<[B, T, 4], i32>
  nn.return
}

// -----

nn.graph @g(%x: !nn.tensor<[B, T], f32>) dims [B: batch, T: seq(B), U: seq(B), N: packed(B, T)] {
  // expected-error @+1 {{input must have position axes then one static feature axis, got '!nn.tensor<[B, T], f32>'}}
  %r = nn.log_softmax %x : !nn.tensor<[B, T], f32>
  nn.return
}

// -----

nn.graph @g(%x: !nn.tensor<[B, T], f32>) dims [B: batch, T: seq(B)] {
  // expected-error @+1 {{input must have position axes then one static feature axis, got '!nn.tensor<[B, T], f32>'}}
  %r = nn.softmax %x : !nn.tensor<[B, T], f32>
  nn.return
}

// -----

nn.graph @g(%x: !nn.tensor<[B, T, 4], f32>) dims [B: batch, T: seq(B), U: seq(B), N: packed(B, T)] {
  // expected-error @+1 {{attribute 'rate' failed to satisfy constraint: 64-bit float attribute in [0, 1)}}
  %r = nn.dropout %x rate 1.0 : !nn.tensor<[B, T, 4], f32>
  nn.return
}

// -----

nn.graph @g(%x: !nn.tensor<[B, T, 4], f32>, %y: !nn.tensor<[B, U, 4], f32>) dims [B: batch, T: seq(B), U: seq(B), N: packed(B, T)] {
  // expected-error @+1 {{requires the same type for all operands and results}}
  %r = "nn.add"(%x, %y) : (!nn.tensor<[B, T, 4], f32>, !nn.tensor<[B, U, 4], f32>) -> !nn.tensor<[B, T, 4], f32>
  nn.return
}

// -----

nn.graph @g(%x: !nn.tensor<[B, T, 4], f32>, %w: !nn.tensor<[3, 5], f32>) dims [B: batch, T: seq(B), U: seq(B), N: packed(B, T)] {
  // expected-error @+1 {{weight must be static [out, 4], got '!nn.tensor<[3, 5], f32>'}}
  %r = nn.linear %x, %w : !nn.tensor<[B, T, 4], f32>, !nn.tensor<[3, 5], f32>
  nn.return
}

// -----

nn.graph @g(%x: !nn.tensor<[B, T, 4], f32>, %w: !nn.tensor<[3, 4], f32>, %b: !nn.tensor<[4], f32>) dims [B: batch, T: seq(B), U: seq(B), N: packed(B, T)] {
  // expected-error @+1 {{bias must have the static shape [3], got '!nn.tensor<[4], f32>'}}
  %r = nn.linear %x, %w, %b : !nn.tensor<[B, T, 4], f32>, !nn.tensor<[3, 4], f32>, !nn.tensor<[4], f32>
  nn.return
}

// -----

nn.graph @g(%x: !nn.tensor<[B, T, 4], f32>, %w: !nn.tensor<[3, 4], f16>) dims [B: batch, T: seq(B), U: seq(B), N: packed(B, T)] {
  // expected-error @+1 {{operands must have one element type}}
  %r = nn.linear %x, %w : !nn.tensor<[B, T, 4], f32>, !nn.tensor<[3, 4], f16>
  nn.return
}

// -----

nn.graph @g(%x: !nn.tensor<[B, T, 4], f32>, %w: !nn.tensor<[3, 4], f32>) dims [B: batch, T: seq(B), U: seq(B), N: packed(B, T)] {
  // expected-error @+1 {{result must be '!nn.tensor<[B, T, 3], f32>', got '!nn.tensor<[B, U, 3], f32>'}}
  %r = "nn.linear"(%x, %w) : (!nn.tensor<[B, T, 4], f32>, !nn.tensor<[3, 4], f32>) -> !nn.tensor<[B, U, 3], f32>
  nn.return
}

// -----

nn.graph @g(%x: !nn.tensor<[B, 2, 4], f32>, %w: !nn.tensor<[3, 4], f32>) dims [B: batch, T: seq(B), U: seq(B), N: packed(B, T)] {
  // expected-error @+1 {{input must have position axes then one static feature axis, got '!nn.tensor<[B, 2, 4], f32>'}}
  %r = nn.linear %x, %w : !nn.tensor<[B, 2, 4], f32>, !nn.tensor<[3, 4], f32>
  nn.return
}

// -----

nn.graph @g() dims [B: batch, T: seq(B), U: seq(B), N: packed(B, T)] {
  // expected-error @+1 {{needs at least one input}}
  %r = "nn.concat"() : () -> !nn.tensor<[B, T, 4], f32>
  nn.return
}

// -----

nn.graph @g(%x: !nn.tensor<[B, T, 4], f32>, %p: !nn.tensor<[N, 4], f32>) dims [B: batch, T: seq(B), U: seq(B), N: packed(B, T)] {
  // expected-error @+1 {{input 1 has positions [N] and 'f32', but input 0 has [B, T] and 'f32'; concat needs the same positions}}
  %r = nn.concat %x, %p : !nn.tensor<[B, T, 4], f32>, !nn.tensor<[N, 4], f32>
  nn.return
}

// -----

nn.graph @g(%x: !nn.tensor<[B, T, 4], f32>, %y: !nn.tensor<[B, T, 2], f32>) dims [B: batch, T: seq(B), U: seq(B), N: packed(B, T)] {
  // expected-error @+1 {{result must be '!nn.tensor<[B, T, 6], f32>', got '!nn.tensor<[B, T, 8], f32>'}}
  %r = "nn.concat"(%x, %y) : (!nn.tensor<[B, T, 4], f32>, !nn.tensor<[B, T, 2], f32>) -> !nn.tensor<[B, T, 8], f32>
  nn.return
}

// -----

nn.graph @g(%x: !nn.tensor<[B, T, 4], f32>, %g: !nn.tensor<[5], f32>) dims [B: batch, T: seq(B), U: seq(B), N: packed(B, T)] {
  // expected-error @+1 {{scale must have the static shape [4], got '!nn.tensor<[5], f32>'}}
  %r = nn.layer_norm %x, %g, %g : !nn.tensor<[B, T, 4], f32>, !nn.tensor<[5], f32>, !nn.tensor<[5], f32>
  nn.return
}

// -----

nn.graph @g(%x: !nn.tensor<[B, T, 4], f32>, %g: !nn.tensor<[4], f32>) dims [B: batch, T: seq(B), U: seq(B), N: packed(B, T)] {
  // expected-error @+1 {{attribute 'epsilon' failed to satisfy constraint: 64-bit float attribute positive}}
  %r = nn.layer_norm %x, %g, %g {epsilon = 0.0 : f64} : !nn.tensor<[B, T, 4], f32>, !nn.tensor<[4], f32>, !nn.tensor<[4], f32>
  nn.return
}

// -----

nn.graph @g(%i: !nn.tensor<[B, T], f32>, %e: !nn.tensor<[10, 4], f32>) dims [B: batch, T: seq(B), U: seq(B), N: packed(B, T)] {
  // expected-error @+1 {{operand #0 must be nn tensor of integers, but got '!nn.tensor<[B, T], f32>'}}
  %r = nn.embedding %i, %e : !nn.tensor<[B, T], f32>, !nn.tensor<[10, 4], f32>
  nn.return
}

// -----

nn.graph @g(%i: !nn.tensor<[B, T, 2], i32>, %e: !nn.tensor<[10, 4], f32>) dims [B: batch, T: seq(B), U: seq(B), N: packed(B, T)] {
  // expected-error @+1 {{indices must have position axes only, got '!nn.tensor<[B, T, 2], i32>'}}
  %r = nn.embedding %i, %e : !nn.tensor<[B, T, 2], i32>, !nn.tensor<[10, 4], f32>
  nn.return
}

// -----

nn.graph @g(%i: !nn.tensor<[B, T], i32>, %e: !nn.tensor<[10], f32>) dims [B: batch, T: seq(B), U: seq(B), N: packed(B, T)] {
  // expected-error @+1 {{table must be static [vocabulary, features], got '!nn.tensor<[10], f32>'}}
  %r = nn.embedding %i, %e : !nn.tensor<[B, T], i32>, !nn.tensor<[10], f32>
  nn.return
}

// -----

nn.graph @g(%i: !nn.tensor<[B, T], i32>, %e: !nn.tensor<[10, 4], f32>) dims [B: batch, T: seq(B), U: seq(B), N: packed(B, T)] {
  // expected-error @+1 {{result must be '!nn.tensor<[B, T, 4], f32>', got '!nn.tensor<[B, T, 5], f32>'}}
  %r = "nn.embedding"(%i, %e) : (!nn.tensor<[B, T], i32>, !nn.tensor<[10, 4], f32>) -> !nn.tensor<[B, T, 5], f32>
  nn.return
}

// -----

nn.graph @g(%x: !nn.tensor<[B, T, 5], f32>) dims [B: batch, T: seq(B)] {
  // expected-error @+1 {{input must have an even number of features, got '!nn.tensor<[B, T, 5], f32>'}}
  %y = nn.glu %x : !nn.tensor<[B, T, 5], f32>
  nn.return
}

// -----

nn.graph @g(%x: !nn.tensor<[B, T, 4], f32>) dims [B: batch, T: seq(B)] {
  // expected-error @+1 {{result must be '!nn.tensor<[B, T, 2], f32>', got '!nn.tensor<[B, T, 4], f32>'}}
  %y = "nn.glu"(%x) : (!nn.tensor<[B, T, 4], f32>) -> !nn.tensor<[B, T, 4], f32>
  nn.return
}

// -----

nn.graph @g(%dy: !nn.tensor<[B, T, 4], f32>, %x: !nn.tensor<[B, T, 4], f32>) dims [B: batch, T: seq(B)] {
  // expected-error @+1 {{grad must be the glu's result type '!nn.tensor<[B, T, 2], f32>', got '!nn.tensor<[B, T, 4], f32>'}}
  %dx = nn.glu_grad %dy, %x : !nn.tensor<[B, T, 4], f32>, !nn.tensor<[B, T, 4], f32>
  nn.return
}

// -----

nn.graph @g(%x: !nn.tensor<[B, T, 2, 4], f32>) dims [B: batch, T: seq(B)] {
  // expected-error @+1 {{input must have position axes then one feature axis of even size, got '!nn.tensor<[B, T, 2, 4], f32>'}}
  %y = nn.glu %x : !nn.tensor<[B, T, 2, 4], f32>
  nn.return
}

// -----

nn.graph @g(%x: !nn.tensor<[B, 4], f32>, %s: !nn.tensor<[3], i32>) dims [B: batch] {
  // expected-error @+1 {{seed must be a scalar !nn.tensor<[], i32> (or !nn.tensor<[2], i32>: the seed and the batch offset), got '!nn.tensor<[3], i32>'}}
  %d = nn.dropout %x seed %s rate 0.1 : !nn.tensor<[B, 4], f32>, !nn.tensor<[3], i32>
  nn.return
}
