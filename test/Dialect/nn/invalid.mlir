// One case per verifier branch of the nn dialect.
// RUN: nn-opt %s --split-input-file --verify-diagnostics

// expected-error @+1 {{dim 'T': 'X' is not a batch dim declared before it}}
nn.graph @g() dims [T: seq(X)] {
  nn.return
}

// -----

// expected-error @+1 {{dim 'T': 'B' is not a batch dim declared before it}}
nn.graph @g() dims [T: seq(B), B: batch] {
  nn.return
}

// -----

// expected-error @+1 {{dim 'T2': 'Z' is not a sequence dim declared before it}}
nn.graph @g() dims [B: batch, T2: seq(B) = ceildiv(Z, 2)] {
  nn.return
}

// -----

// expected-error @+1 {{dim 'T2': its source 'T' is a sequence of another batch than 'B'}}
nn.graph @g() dims [B: batch, C: batch, T: seq(C), T2: seq(B) = ceildiv(T, 2)] {
  nn.return
}

// -----

// expected-error @+1 {{dim 'T1': ceildiv factor must be at least 2, got 1}}
nn.graph @g() dims [B: batch, T: seq(B), T1: seq(B) = ceildiv(T, 1)] {
  nn.return
}

// -----

// expected-error @+1 {{dim 'N': 'T' is not a batch dim declared before it}}
nn.graph @g() dims [B: batch, T: seq(B), N: packed(T, T)] {
  nn.return
}

// -----

// expected-error @+1 {{dim 'N': 'B' is not a sequence dim of 'B' declared before it}}
nn.graph @g() dims [B: batch, N: packed(B, B)] {
  nn.return
}

// -----

// expected-error @+1 {{dims 'N' and 'M' both pack (B, T)}}
nn.graph @g() dims [B: batch, T: seq(B), N: packed(B, T), M: packed(B, T)] {
  nn.return
}

// -----

// expected-error @+1 {{declares dim 'T' twice}}
nn.graph @g() dims [B: batch, T: seq(B), T: seq(B)] {
  nn.return
}

// -----

// expected-error @+1 {{expected dim kind 'batch', 'seq' or 'packed', got 'sequence'}}
nn.graph @g() dims [B: batch, T: sequence(B)] {
  nn.return
}

// -----

// expected-error @+1 {{names dim 'T' after a static size; named (position) axes must come first}}
nn.graph @g(%x: !nn.tensor<[B, 4, T], f32>) dims [B: batch, T: seq(B)] {
  nn.return
}

// -----

// expected-error @+1 {{names dim 'U', which the enclosing graph does not declare}}
nn.graph @g(%x: !nn.tensor<[B, U, 4], f32>) dims [B: batch, T: seq(B)] {
  nn.return
}

// -----

// expected-error @+1 {{packed dim 'N' must be the only position axis}}
nn.graph @g(%x: !nn.tensor<[N, T, 4], f32>) dims [B: batch, T: seq(B), N: packed(B, T)] {
  nn.return
}

// -----

// expected-error @+1 {{the first axis 'T' must be a batch or packed dim}}
nn.graph @g(%x: !nn.tensor<[T, 4], f32>) dims [B: batch, T: seq(B)] {
  nn.return
}

// -----

// expected-error @+1 {{axis 1 ('T') must be a sequence dim of 'B'}}
nn.graph @g(%x: !nn.tensor<[B, T, 4], f32>) dims [B: batch, C: batch, T: seq(C)] {
  nn.return
}

// -----

// expected-error @+1 {{names sequence dim 'T' twice}}
nn.graph @g(%x: !nn.tensor<[B, T, T], f32>) dims [B: batch, T: seq(B)] {
  nn.return
}

// -----

// expected-error @+1 {{static size must be non-negative, got -3}}
nn.graph @g(%x: !nn.tensor<[B, -3], f32>) dims [B: batch] {
  nn.return
}

// -----

// expected-error @+1 {{static size 4294967296 exceeds the largest supported size 2147483647}}
nn.parameter @w : !nn.tensor<[4294967296, 3], f32>

// -----

// expected-error @+1 {{static size 4611686018427387904 exceeds the largest supported size}}
nn.graph @g(%x: !nn.tensor<[B, 4611686018427387904], f32>) dims [B: batch] {
  nn.return
}

// -----

// expected-error @+1 {{static sizes need more than 2^40 bytes per position}}
nn.parameter @w : !nn.tensor<[2147483647, 2147483647], f32>

// -----

// expected-error @+1 {{element type must be a float or an integer, got 'index'}}
nn.graph @g(%x: !nn.tensor<[B], index>) dims [B: batch] {
  nn.return
}

// -----

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

// expected-error @+1 {{argument 0 must be an !nn.tensor, got 'f32'}}
nn.graph @g(%x: f32) dims [] {
  nn.return
}

// -----

// expected-error @+1 {{result 0 must be an !nn.tensor, got 'f32'}}
nn.graph @g() -> f32 dims [] {
  nn.return
}

// -----

// expected-error @+1 {{must have a body}}
nn.graph @g() dims [] {
}

// -----

// expected-error @+1 {{must have a single block (graphs are dataflow)}}
nn.graph @g() dims [] {
  nn.return
^bb1:
  nn.return
}

// -----

nn.graph @g(%x: !nn.tensor<[B, 4], f32>) -> !nn.tensor<[B, 4], f32> dims [B: batch] {
  // expected-error @+1 {{returns 0 values, but graph @g declares 1 results}}
  nn.return
}

// -----

nn.graph @g(%x: !nn.tensor<[B, 4], f32>) -> !nn.tensor<[B, 5], f32> dims [B: batch] {
  // expected-error @+1 {{operand 0 has type '!nn.tensor<[B, 4], f32>', but graph @g declares result type '!nn.tensor<[B, 5], f32>'}}
  nn.return %x : !nn.tensor<[B, 4], f32>
}

// -----

nn.graph @g(%l: !nn.tensor<[B, T, 4], f32>, %t: !nn.tensor<[B, T], i32>) dims [B: batch, T: seq(B)] {
  %a = nn.cross_entropy %l, %t from logits : !nn.tensor<[B, T, 4], f32>, !nn.tensor<[B, T], i32>
  // expected-note @+1 {{first use here}}
  nn.mark_loss %a as "ce" normalize per_frame : !nn.tensor<[B, T], f32>
  // expected-error @+1 {{loss name 'ce' is used twice in graph @g}}
  nn.mark_loss %a as "ce" normalize sum : !nn.tensor<[B, T], f32>
  nn.return
}

// -----

nn.graph @g(%x: !nn.tensor<[B], f32>) dims [B: batch] {
  // expected-error @+1 {{'missing' does not name an nn.graph}}
  nn.call @missing(%x) : (!nn.tensor<[B], f32>) -> ()
  nn.return
}

// -----

nn.graph @model(%x: !nn.tensor<[B, T, 4], f32>) -> !nn.tensor<[B, T2, 4], f32>
    dims [B: batch, T: seq(B), T2: seq(B) = ceildiv(T, 2)] {
  %p = nn.pool max %x window 2 stride 2 : (!nn.tensor<[B, T, 4], f32>) -> !nn.tensor<[B, T2, 4], f32>
  nn.return %p : !nn.tensor<[B, T2, 4], f32>
}
nn.graph @g(%x: !nn.tensor<[C, S, 4], f32>) dims [C: batch, S: seq(C)] {
  // expected-error @+1 {{has 1 operands and 0 results, but @model takes 1 and returns 1}}
  nn.call @model(%x) : (!nn.tensor<[C, S, 4], f32>) -> ()
  nn.return
}

// -----

nn.graph @model(%x: !nn.tensor<[B, T, 4], f32>) -> !nn.tensor<[B, T2, 4], f32>
    dims [B: batch, T: seq(B), T2: seq(B) = ceildiv(T, 2)] {
  %p = nn.pool max %x window 2 stride 2 : (!nn.tensor<[B, T, 4], f32>) -> !nn.tensor<[B, T2, 4], f32>
  nn.return %p : !nn.tensor<[B, T2, 4], f32>
}
nn.graph @g(%x: !nn.tensor<[C, S, 4], f16>) dims [C: batch, S: seq(C), S2: seq(C) = ceildiv(S, 2)] {
  // expected-error @+1 {{operand 0: type '!nn.tensor<[C, S, 4], f16>' does not match the callee's '!nn.tensor<[B, T, 4], f32>'}}
  %r = nn.call @model(%x) : (!nn.tensor<[C, S, 4], f16>) -> !nn.tensor<[C, S2, 4], f32>
  nn.return
}

// -----

nn.graph @model(%x: !nn.tensor<[B, T, 4], f32>) -> !nn.tensor<[B, T2, 4], f32>
    dims [B: batch, T: seq(B), T2: seq(B) = ceildiv(T, 2)] {
  %p = nn.pool max %x window 2 stride 2 : (!nn.tensor<[B, T, 4], f32>) -> !nn.tensor<[B, T2, 4], f32>
  nn.return %p : !nn.tensor<[B, T2, 4], f32>
}
nn.graph @g(%x: !nn.tensor<[C, S, 5], f32>) dims [C: batch, S: seq(C), S2: seq(C) = ceildiv(S, 2)] {
  // expected-error @+1 {{operand 0: axis 2 of '!nn.tensor<[C, S, 5], f32>' does not match the callee's '!nn.tensor<[B, T, 4], f32>'}}
  %r = nn.call @model(%x) : (!nn.tensor<[C, S, 5], f32>) -> !nn.tensor<[C, S2, 4], f32>
  nn.return
}

// -----

nn.graph @two(%x: !nn.tensor<[B, T, 4], f32>, %y: !nn.tensor<[B, T, 4], f32>) dims [B: batch, T: seq(B)] {
  nn.return
}
nn.graph @g(%x: !nn.tensor<[C, S, 4], f32>, %y: !nn.tensor<[C, R, 4], f32>) dims [C: batch, S: seq(C), R: seq(C)] {
  // expected-error @+1 {{operand 1: callee dim 'T' is bound to both 'S' and 'R'}}
  nn.call @two(%x, %y) : (!nn.tensor<[C, S, 4], f32>, !nn.tensor<[C, R, 4], f32>) -> ()
  nn.return
}

// -----

nn.graph @model(%x: !nn.tensor<[B, T, 4], f32>) -> !nn.tensor<[B, T2, 4], f32>
    dims [B: batch, T: seq(B), T2: seq(B) = ceildiv(T, 2)] {
  %p = nn.pool max %x window 2 stride 2 : (!nn.tensor<[B, T, 4], f32>) -> !nn.tensor<[B, T2, 4], f32>
  nn.return %p : !nn.tensor<[B, T2, 4], f32>
}
nn.graph @g(%x: !nn.tensor<[C, S, 4], f32>) dims [C: batch, S: seq(C), R: seq(C)] {
  // expected-error @+1 {{callee dim 'T2: seq(B) = ceildiv(T, 2)' cannot bind caller dim 'R: seq(C)'}}
  %r = nn.call @model(%x) : (!nn.tensor<[C, S, 4], f32>) -> !nn.tensor<[C, R, 4], f32>
  nn.return
}

// -----

nn.graph @model(%x: !nn.tensor<[B, T, 4], f32>) -> !nn.tensor<[B, T2, 4], f32>
    dims [B: batch, T: seq(B), T2: seq(B) = ceildiv(T, 2)] {
  %p = nn.pool max %x window 2 stride 2 : (!nn.tensor<[B, T, 4], f32>) -> !nn.tensor<[B, T2, 4], f32>
  nn.return %p : !nn.tensor<[B, T2, 4], f32>
}
nn.graph @g(%x: !nn.tensor<[C, S, 4], f32>) dims [C: batch, S: seq(C), S3: seq(C) = ceildiv(S, 3)] {
  // expected-error @+1 {{callee dim 'T2: seq(B) = ceildiv(T, 2)' cannot bind caller dim 'S3: seq(C) = ceildiv(S, 3)'}}
  %r = nn.call @model(%x) : (!nn.tensor<[C, S, 4], f32>) -> !nn.tensor<[C, S3, 4], f32>
  nn.return
}

// -----

nn.graph @model(%x: !nn.tensor<[B, T, 4], f32>) -> !nn.tensor<[B, T2, 4], f32>
    dims [B: batch, T: seq(B), T2: seq(B) = ceildiv(T, 2)] {
  %p = nn.pool max %x window 2 stride 2 : (!nn.tensor<[B, T, 4], f32>) -> !nn.tensor<[B, T2, 4], f32>
  nn.return %p : !nn.tensor<[B, T2, 4], f32>
}
nn.graph @g(%x: !nn.tensor<[C, S, 4], f32>, %y: !nn.tensor<[C, R, 4], f32>) dims [C: batch, S: seq(C), R: seq(C), R2: seq(C) = ceildiv(R, 2)] {
  // expected-error @+1 {{dim binding: callee dim 'T' is bound to both 'S' and 'R'}}
  %r = nn.call @model(%x) : (!nn.tensor<[C, S, 4], f32>) -> !nn.tensor<[C, R2, 4], f32>
  nn.return
}

// -----

// expected-error @+1 {{parameter @p must have a static shape, got '!nn.tensor<[B, 4], f32>'}}
nn.parameter @p : !nn.tensor<[B, 4], f32>

// -----

// expected-error @+1 {{parameter @p must have a float element type, got 'i32'}}
nn.parameter @p : !nn.tensor<[4], i32>

// -----

nn.graph @g() dims [] {
  // expected-error @+1 {{'q' does not name an nn.parameter}}
  %w = nn.param_ref @q : !nn.tensor<[4], f32>
  nn.return
}

// -----

nn.parameter @p : !nn.tensor<[4], f32>
nn.graph @g() dims [] {
  // expected-error @+1 {{result type '!nn.tensor<[5], f32>' differs from the type of @p, '!nn.tensor<[4], f32>'}}
  %w = nn.param_ref @p : !nn.tensor<[5], f32>
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

nn.graph @g(%x: !nn.tensor<[N, 4], f32>, %wi: !nn.tensor<[16, 4], f32>, %wh: !nn.tensor<[16, 4], f32>, %b: !nn.tensor<[16], f32>) dims [B: batch, T: seq(B), U: seq(B), N: packed(B, T)] {
  // expected-error @+1 {{input must be padded frames [batch, sequence, ...] (a packed value cannot be used here), got '!nn.tensor<[N, 4], f32>'}}
  %h = nn.lstm forward %x, %wi, %wh, %b : !nn.tensor<[N, 4], f32>, !nn.tensor<[16, 4], f32>, !nn.tensor<[16, 4], f32>, !nn.tensor<[16], f32>
  nn.return
}

// -----

nn.graph @g(%x: !nn.tensor<[B, T, 4], f32>, %wi: !nn.tensor<[16, 4], f32>, %wh: !nn.tensor<[16, 5], f32>, %b: !nn.tensor<[16], f32>) dims [B: batch, T: seq(B), U: seq(B), N: packed(B, T)] {
  // expected-error @+1 {{recurrent_weight must be static [4H, H], got '!nn.tensor<[16, 5], f32>'}}
  %h = nn.lstm forward %x, %wi, %wh, %b : !nn.tensor<[B, T, 4], f32>, !nn.tensor<[16, 4], f32>, !nn.tensor<[16, 5], f32>, !nn.tensor<[16], f32>
  nn.return
}

// -----

nn.graph @g(%x: !nn.tensor<[B, T, 4], f32>, %wi: !nn.tensor<[16, 4], f32>, %wh: !nn.tensor<[16, 4], f32>, %b: !nn.tensor<[16], f32>) dims [B: batch, T: seq(B), U: seq(B), N: packed(B, T)] {
  // expected-error @+1 {{recurrent_weight must be static [2, 4H, H], got '!nn.tensor<[16, 4], f32>'}}
  %h = nn.lstm bidirectional %x, %wi, %wh, %b : !nn.tensor<[B, T, 4], f32>, !nn.tensor<[16, 4], f32>, !nn.tensor<[16, 4], f32>, !nn.tensor<[16], f32>
  nn.return
}

// -----

nn.graph @g(%x: !nn.tensor<[B, T, 3], f32>, %wi: !nn.tensor<[16, 4], f32>, %wh: !nn.tensor<[16, 4], f32>, %b: !nn.tensor<[16], f32>) dims [B: batch, T: seq(B), U: seq(B), N: packed(B, T)] {
  // expected-error @+1 {{input_weight must have the static shape [16, 3], got '!nn.tensor<[16, 4], f32>'}}
  %h = nn.lstm forward %x, %wi, %wh, %b : !nn.tensor<[B, T, 3], f32>, !nn.tensor<[16, 4], f32>, !nn.tensor<[16, 4], f32>, !nn.tensor<[16], f32>
  nn.return
}

// -----

nn.graph @g(%x: !nn.tensor<[B, T, 4], f32>, %wi: !nn.tensor<[16, 4], f32>, %wh: !nn.tensor<[16, 4], f32>, %b: !nn.tensor<[16], f32>) dims [B: batch, T: seq(B), U: seq(B), N: packed(B, T)] {
  // expected-error @+1 {{result must be '!nn.tensor<[B, T, 4], f32>', got '!nn.tensor<[B, T, 8], f32>'}}
  %h = "nn.lstm"(%x, %wi, %wh, %b) <{direction = 0 : i32}> : (!nn.tensor<[B, T, 4], f32>, !nn.tensor<[16, 4], f32>, !nn.tensor<[16, 4], f32>, !nn.tensor<[16], f32>) -> !nn.tensor<[B, T, 8], f32>
  nn.return
}

// -----

nn.graph @g(%x: !nn.tensor<[B, T, 4], i32>, %wi: !nn.tensor<[16, 4], f32>, %wh: !nn.tensor<[16, 4], f32>, %b: !nn.tensor<[16], f32>) dims [B: batch, T: seq(B), U: seq(B), N: packed(B, T)] {
  // expected-error @+1 {{operand #0 must be nn tensor of floats, but got '!nn.tensor<[B, T, 4], i32>'}}
  %h = nn.lstm forward %x, %wi, %wh, %b : !nn.tensor<[B, T, 4], i32>, !nn.tensor<[16, 4], f32>, !nn.tensor<[16, 4], f32>, !nn.tensor<[16], f32>
  nn.return
}

// -----

nn.graph @g(%x: !nn.tensor<[B, T, 4], f32>, %w: !nn.tensor<[6, 3, 4], f32>) dims [B: batch, T: seq(B), T2: seq(B) = ceildiv(T, 2), T3: seq(B) = ceildiv(T, 3), C: batch, S: seq(C)] {
  // expected-error @+1 {{attribute 'stride' failed to satisfy constraint: 64-bit signless integer attribute whose minimum value is 1}}
  %y = nn.conv1d %x, %w stride 0 : (!nn.tensor<[B, T, 4], f32>, !nn.tensor<[6, 3, 4], f32>) -> !nn.tensor<[B, T, 6], f32>
  nn.return
}

// -----

nn.graph @g(%x: !nn.tensor<[B, T, 4], f32>, %w: !nn.tensor<[6, 3, 5], f32>) dims [B: batch, T: seq(B), T2: seq(B) = ceildiv(T, 2), T3: seq(B) = ceildiv(T, 3), C: batch, S: seq(C)] {
  // expected-error @+1 {{weight must be static [out, kernel, 4], got '!nn.tensor<[6, 3, 5], f32>'}}
  %y = nn.conv1d %x, %w stride 1 : (!nn.tensor<[B, T, 4], f32>, !nn.tensor<[6, 3, 5], f32>) -> !nn.tensor<[B, T, 6], f32>
  nn.return
}

// -----

nn.graph @g(%x: !nn.tensor<[B, T, 4], f32>, %w: !nn.tensor<[6, 3, 4], f32>, %b: !nn.tensor<[5], f32>) dims [B: batch, T: seq(B), T2: seq(B) = ceildiv(T, 2), T3: seq(B) = ceildiv(T, 3), C: batch, S: seq(C)] {
  // expected-error @+1 {{bias must have the static shape [6], got '!nn.tensor<[5], f32>'}}
  %y = nn.conv1d %x, %w, %b stride 1 : (!nn.tensor<[B, T, 4], f32>, !nn.tensor<[6, 3, 4], f32>, !nn.tensor<[5], f32>) -> !nn.tensor<[B, T, 6], f32>
  nn.return
}

// -----

nn.graph @g(%x: !nn.tensor<[B, T, 4], f32>, %w: !nn.tensor<[6, 3, 4], f32>) dims [B: batch, T: seq(B), T2: seq(B) = ceildiv(T, 2), T3: seq(B) = ceildiv(T, 3), C: batch, S: seq(C)] {
  // expected-error @+1 {{result batch 'C' differs from the input's 'B'}}
  %y = nn.conv1d %x, %w stride 1 : (!nn.tensor<[B, T, 4], f32>, !nn.tensor<[6, 3, 4], f32>) -> !nn.tensor<[C, S, 6], f32>
  nn.return
}

// -----

nn.graph @g(%x: !nn.tensor<[B, T, 4], f32>, %w: !nn.tensor<[6, 3, 4], f32>) dims [B: batch, T: seq(B), T2: seq(B) = ceildiv(T, 2), T3: seq(B) = ceildiv(T, 3), C: batch, S: seq(C)] {
  // expected-error @+1 {{with stride 1 the result must keep sequence dim 'T', got 'T2'}}
  %y = nn.conv1d %x, %w stride 1 : (!nn.tensor<[B, T, 4], f32>, !nn.tensor<[6, 3, 4], f32>) -> !nn.tensor<[B, T2, 6], f32>
  nn.return
}

// -----

nn.graph @g(%x: !nn.tensor<[B, T, 4], f32>, %w: !nn.tensor<[6, 3, 4], f32>) dims [B: batch, T: seq(B), T2: seq(B) = ceildiv(T, 2), T3: seq(B) = ceildiv(T, 3), C: batch, S: seq(C)] {
  // expected-error @+1 {{with stride 2 the result's sequence dim must be declared 'seq(...) = ceildiv(T, 2)', got 'T3' (did you mean 'T2'?)}}
  %y = nn.conv1d %x, %w stride 2 : (!nn.tensor<[B, T, 4], f32>, !nn.tensor<[6, 3, 4], f32>) -> !nn.tensor<[B, T3, 6], f32>
  nn.return
}

// -----

nn.graph @g(%x: !nn.tensor<[B, T, 4], f32>, %w: !nn.tensor<[6, 3, 4], f32>) dims [B: batch, T: seq(B), T2: seq(B) = ceildiv(T, 2), T3: seq(B) = ceildiv(T, 3), C: batch, S: seq(C)] {
  // expected-error @+1 {{with stride 4 the result's sequence dim must be declared 'seq(...) = ceildiv(T, 4)', got 'T2'}}
  %y = nn.conv1d %x, %w stride 4 : (!nn.tensor<[B, T, 4], f32>, !nn.tensor<[6, 3, 4], f32>) -> !nn.tensor<[B, T2, 6], f32>
  nn.return
}

// -----

nn.graph @g(%x: !nn.tensor<[B, T, 4], f32>, %w: !nn.tensor<[6, 3, 4], f32>) dims [B: batch, T: seq(B), T2: seq(B) = ceildiv(T, 2), T3: seq(B) = ceildiv(T, 3), C: batch, S: seq(C)] {
  // expected-error @+1 {{result must have 6 'f32' features, got '!nn.tensor<[B, T, 7], f32>'}}
  %y = nn.conv1d %x, %w stride 1 : (!nn.tensor<[B, T, 4], f32>, !nn.tensor<[6, 3, 4], f32>) -> !nn.tensor<[B, T, 7], f32>
  nn.return
}

// -----

nn.graph @g(%x: !nn.tensor<[B, T, 4], f32>, %w: !nn.tensor<[6, 3, 4], f32>) dims [B: batch, T: seq(B), T2: seq(B) = ceildiv(T, 2), T3: seq(B) = ceildiv(T, 3), C: batch, S: seq(C)] {
  // expected-error @+1 {{result must be padded frames [batch, sequence, ...], got '!nn.tensor<[B, 6], f32>'}}
  %y = nn.conv1d %x, %w stride 1 : (!nn.tensor<[B, T, 4], f32>, !nn.tensor<[6, 3, 4], f32>) -> !nn.tensor<[B, 6], f32>
  nn.return
}

// -----

nn.graph @g(%x: !nn.tensor<[B, T, 4], f32>) dims [B: batch, T: seq(B), T2: seq(B) = ceildiv(T, 2), T3: seq(B) = ceildiv(T, 3), C: batch, S: seq(C)] {
  // expected-error @+1 {{attribute 'window' failed to satisfy constraint: 64-bit signless integer attribute whose minimum value is 1}}
  %y = nn.pool max %x window 0 stride 1 : (!nn.tensor<[B, T, 4], f32>) -> !nn.tensor<[B, T, 4], f32>
  nn.return
}

// -----

nn.graph @g(%x: !nn.tensor<[B, T, 4], f32>) dims [B: batch, T: seq(B)] {
  // expected-error @+1 {{attribute 'stride' failed to satisfy constraint: 64-bit signless integer attribute whose minimum value is 1}}
  %y = nn.pool avg %x window 2 stride 0 : (!nn.tensor<[B, T, 4], f32>) -> !nn.tensor<[B, T, 4], f32>
  nn.return
}

// -----

nn.graph @g(%x: !nn.tensor<[B, T, 4], f32>) dims [B: batch, T: seq(B), T2: seq(B) = ceildiv(T, 2), T3: seq(B) = ceildiv(T, 3), C: batch, S: seq(C)] {
  // expected-error @+1 {{result must keep the input's 4 'f32' features, got '!nn.tensor<[B, T2, 5], f32>'}}
  %y = nn.pool avg %x window 2 stride 2 : (!nn.tensor<[B, T, 4], f32>) -> !nn.tensor<[B, T2, 5], f32>
  nn.return
}

// -----

nn.graph @g(%x: !nn.tensor<[B, T, 4], f32>) dims [B: batch, T: seq(B), T2: seq(B) = ceildiv(T, 2), T3: seq(B) = ceildiv(T, 3), C: batch, S: seq(C)] {
  // expected-error @+1 {{result batch 'C' differs from the input's 'B'}}
  %y = nn.pool avg %x window 2 stride 2 : (!nn.tensor<[B, T, 4], f32>) -> !nn.tensor<[C, S, 4], f32>
  nn.return
}

// -----

nn.graph @g(%x: !nn.tensor<[B, T, 4], f32>) dims [B: batch, T: seq(B), T2: seq(B) = ceildiv(T, 2), T3: seq(B) = ceildiv(T, 3), C: batch, S: seq(C)] {
  // expected-error @+1 {{axis 3 is out of range for '!nn.tensor<[B, T, 4], f32>'}}
  %y = nn.reduce sum %x over 3 : !nn.tensor<[B, T, 4], f32>
  nn.return
}

// -----

nn.graph @g(%x: !nn.tensor<[B, T, 4], f32>) dims [B: batch, T: seq(B), T2: seq(B) = ceildiv(T, 2), T3: seq(B) = ceildiv(T, 3), C: batch, S: seq(C)] {
  // expected-error @+1 {{axis 2 of '!nn.tensor<[B, T, 4], f32>' must be a sequence axis of padded frames}}
  %y = nn.reduce sum %x over 2 : !nn.tensor<[B, T, 4], f32>
  nn.return
}

// -----

nn.graph @g(%x: !nn.tensor<[N, 4], f32>) dims [B: batch, T: seq(B), U: seq(B), N: packed(B, T)] {
  // expected-error @+1 {{axis 0 of '!nn.tensor<[N, 4], f32>' must be a sequence axis of padded frames (a packed value cannot be used here)}}
  %y = nn.reduce max %x over 0 : !nn.tensor<[N, 4], f32>
  nn.return
}

// -----

nn.graph @g(%x: !nn.tensor<[B, T, 4], f32>) dims [B: batch, T: seq(B), T2: seq(B) = ceildiv(T, 2), T3: seq(B) = ceildiv(T, 3), C: batch, S: seq(C)] {
  // expected-error @+1 {{result must be '!nn.tensor<[B, 4], f32>', got '!nn.tensor<[B, 5], f32>'}}
  %y = "nn.reduce"(%x) <{kind = 1 : i32, axis = 1 : i64}> : (!nn.tensor<[B, T, 4], f32>) -> !nn.tensor<[B, 5], f32>
  nn.return
}

// -----

nn.graph @g(%l: !nn.tensor<[B, T, 5], f32>, %t: !nn.tensor<[B, T], i32>) dims [B: batch, T: seq(B), U: seq(B), N: packed(B, T)] {
  // expected-error @+1 {{attribute 'label_smoothing' failed to satisfy constraint: 64-bit float attribute in [0, 1)}}
  %ce = nn.cross_entropy %l, %t from logits label_smoothing 1.0 : !nn.tensor<[B, T, 5], f32>, !nn.tensor<[B, T], i32>
  nn.return
}

// -----

nn.graph @g(%l: !nn.tensor<[B, T, 1], f32>, %t: !nn.tensor<[B, T], i32>) dims [B: batch, T: seq(B), U: seq(B), N: packed(B, T)] {
  // expected-error @+1 {{label smoothing needs at least 2 classes}}
  %ce = nn.cross_entropy %l, %t from logits label_smoothing 0.1 : !nn.tensor<[B, T, 1], f32>, !nn.tensor<[B, T], i32>
  nn.return
}

// -----

nn.graph @g(%l: !nn.tensor<[B, T, 5], f32>, %t: !nn.tensor<[B, U], i32>) dims [B: batch, T: seq(B), U: seq(B), N: packed(B, T)] {
  // expected-error @+1 {{targets [B, U] must be on the positions of the logits [B, T] (same batch and sequence dims)}}
  %ce = nn.cross_entropy %l, %t from logits : !nn.tensor<[B, T, 5], f32>, !nn.tensor<[B, U], i32>
  nn.return
}

// -----

nn.graph @g(%l: !nn.tensor<[N, 5], f32>, %t: !nn.tensor<[B, T], i32>) dims [B: batch, T: seq(B), U: seq(B), N: packed(B, T)] {
  // expected-error @+1 {{targets [B, T] must be on the positions of the logits [N] (same batch and sequence dims)}}
  %ce = nn.cross_entropy %l, %t from logits : !nn.tensor<[N, 5], f32>, !nn.tensor<[B, T], i32>
  nn.return
}

// -----

nn.graph @g(%l: !nn.tensor<[B, T, 5], f32>, %t: !nn.tensor<[B, T], f32>) dims [B: batch, T: seq(B), U: seq(B), N: packed(B, T)] {
  // expected-error @+1 {{operand #1 must be nn tensor of integers, but got '!nn.tensor<[B, T], f32>'}}
  %ce = nn.cross_entropy %l, %t from logits : !nn.tensor<[B, T, 5], f32>, !nn.tensor<[B, T], f32>
  nn.return
}

// -----

nn.graph @g(%l: !nn.tensor<[B, T, 5], f32>, %t: !nn.tensor<[B, T], i32>) dims [B: batch, T: seq(B), U: seq(B), N: packed(B, T)] {
  // expected-error @+1 {{result must be '!nn.tensor<[B, T], f32>', got '!nn.tensor<[B], f32>'}}
  %ce = "nn.cross_entropy"(%l, %t) <{input_kind = 0 : i32}> : (!nn.tensor<[B, T, 5], f32>, !nn.tensor<[B, T], i32>) -> !nn.tensor<[B], f32>
  nn.return
}

// -----

nn.graph @g(%p: !nn.tensor<[B, T, 5], f32>, %t: !nn.tensor<[B, T, 4], f32>) dims [B: batch, T: seq(B), U: seq(B), N: packed(B, T)] {
  // expected-error @+1 {{target type '!nn.tensor<[B, T, 4], f32>' must equal the prediction type '!nn.tensor<[B, T, 5], f32>'}}
  %e = nn.mse %p, %t : !nn.tensor<[B, T, 5], f32>, !nn.tensor<[B, T, 4], f32>
  nn.return
}

// -----

nn.graph @g(%l: !nn.tensor<[B, T, 5], f32>, %y: !nn.tensor<[B], i32>) dims [B: batch, T: seq(B), U: seq(B), C: batch, V: seq(C), N: packed(B, T)] {
  // expected-error @+1 {{labels must be [batch, label sequence], got '!nn.tensor<[B], i32>'}}
  %c = nn.ctc_loss %l, %y from logits blank 0 : !nn.tensor<[B, T, 5], f32>, !nn.tensor<[B], i32>
  nn.return
}

// -----

nn.graph @g(%l: !nn.tensor<[B, T, 5], f32>, %y: !nn.tensor<[C, V], i32>) dims [B: batch, T: seq(B), U: seq(B), C: batch, V: seq(C), N: packed(B, T)] {
  // expected-error @+1 {{labels batch 'C' differs from the logits batch 'B'}}
  %c = nn.ctc_loss %l, %y from logits blank 0 : !nn.tensor<[B, T, 5], f32>, !nn.tensor<[C, V], i32>
  nn.return
}

// -----

nn.graph @g(%l: !nn.tensor<[B, T, 5], f32>, %y: !nn.tensor<[B, U], i32>) dims [B: batch, T: seq(B), U: seq(B), C: batch, V: seq(C), N: packed(B, T)] {
  // expected-error @+1 {{blank 5 is not a class in [0, 5)}}
  %c = nn.ctc_loss %l, %y from logits blank 5 : !nn.tensor<[B, T, 5], f32>, !nn.tensor<[B, U], i32>
  nn.return
}

// -----

nn.graph @g(%l: !nn.tensor<[B, T, 5], f32>, %y: !nn.tensor<[B, U], i32>) dims [B: batch, T: seq(B), U: seq(B)] {
  // expected-error @+1 {{blank 7 is not a class in [0, 5)}}
  %a, %s = nn.viterbi_align %l, %y from log_probs topology rna blank 7 : !nn.tensor<[B, T, 5], f32>, !nn.tensor<[B, U], i32>
  nn.return
}

// -----

nn.graph @g(%l: !nn.tensor<[B, 5], f32>, %y: !nn.tensor<[B, U], i32>) dims [B: batch, U: seq(B)] {
  // expected-error @+1 {{scores must be padded frames [batch, sequence, ...], got '!nn.tensor<[B, 5], f32>'}}
  %a, %s = "nn.viterbi_align"(%l, %y) {input_kind = 1 : i32, topology = 0 : i32, blank = 0} : (!nn.tensor<[B, 5], f32>, !nn.tensor<[B, U], i32>) -> (!nn.tensor<[B], i32>, !nn.tensor<[B], f32>)
  nn.return
}

// -----

nn.graph @g(%l: !nn.tensor<[N, 5], f32>, %y: !nn.tensor<[C, U], i32>) dims [B: batch, T: seq(B), C: batch, U: seq(C), N: packed(B, T)] {
  // expected-error @+1 {{labels batch 'C' differs from the scores batch 'B'}}
  %a, %s = nn.viterbi_align %l, %y from log_probs topology ctc blank 0 : !nn.tensor<[N, 5], f32>, !nn.tensor<[C, U], i32>
  nn.return
}

// -----

nn.graph @g(%l: !nn.tensor<[B, T, 5], f32>, %y: !nn.tensor<[B, U], i32>) dims [B: batch, T: seq(B), U: seq(B)] {
  // expected-error @+1 {{alignment must be '!nn.tensor<[B, T], i32>', got '!nn.tensor<[B, T], f32>'}}
  %a, %s = "nn.viterbi_align"(%l, %y) {input_kind = 1 : i32, topology = 0 : i32, blank = 0} : (!nn.tensor<[B, T, 5], f32>, !nn.tensor<[B, U], i32>) -> (!nn.tensor<[B, T], f32>, !nn.tensor<[B], f32>)
  nn.return
}

// -----

nn.parameter @prior : !nn.tensor<[4], f32>
nn.graph @g(%l: !nn.tensor<[B, T, 5], f32>, %y: !nn.tensor<[B, U], i32>) dims [B: batch, T: seq(B), U: seq(B)] {
  %p = nn.param_ref @prior : !nn.tensor<[4], f32>
  // expected-error @+1 {{prior must be '!nn.tensor<[5], f32>' (one value per class), got '!nn.tensor<[4], f32>'}}
  %a, %s = nn.viterbi_align %l, %y from logits topology ctc blank 0 prior %p : !nn.tensor<[B, T, 5], f32>, !nn.tensor<[B, U], i32>, !nn.tensor<[4], f32>
  nn.return
}

// -----

nn.graph @g(%l: !nn.tensor<[B, T, 5], f32>, %y: !nn.tensor<[B, U], i32>) dims [B: batch, T: seq(B), U: seq(B)] {
  // expected-error @+1 {{score must be '!nn.tensor<[B], f32>', got '!nn.tensor<[B, T], f32>'}}
  %a, %s = "nn.viterbi_align"(%l, %y) {input_kind = 1 : i32, topology = 0 : i32, blank = 0} : (!nn.tensor<[B, T, 5], f32>, !nn.tensor<[B, U], i32>) -> (!nn.tensor<[B, T], i32>, !nn.tensor<[B, T], f32>)
  nn.return
}

// -----

nn.graph @g(%l: !nn.tensor<[N, 5], f32>, %y: !nn.tensor<[B, U], i32>) dims [B: batch, T: seq(B), U: seq(B), C: batch, V: seq(C), N: packed(B, T)] {
  // expected-error @+1 {{logits must be padded frames [batch, sequence, ...] (a packed value cannot be used here), got '!nn.tensor<[N, 5], f32>'}}
  %c = nn.ctc_loss %l, %y from logits blank 0 : !nn.tensor<[N, 5], f32>, !nn.tensor<[B, U], i32>
  nn.return
}

// -----

nn.graph @g(%l: !nn.tensor<[B, T, 5], f32>, %y: !nn.tensor<[B, U], i32>) dims [B: batch, T: seq(B), U: seq(B), C: batch, V: seq(C), N: packed(B, T)] {
  // expected-error @+1 {{result must be '!nn.tensor<[B], f32>', got '!nn.tensor<[B, T], f32>'}}
  %c = "nn.ctc_loss"(%l, %y) <{input_kind = 0 : i32, blank = 0 : i64}> : (!nn.tensor<[B, T, 5], f32>, !nn.tensor<[B, U], i32>) -> !nn.tensor<[B, T], f32>
  nn.return
}

// -----

nn.graph @g(%l: !nn.tensor<[B, T, 5], f32>, %t: !nn.tensor<[B, T], i32>, %y: !nn.tensor<[B, U], i32>, %f: !nn.tensor<[B], f32>, %x: !nn.tensor<[B, T], f32>) dims [B: batch, T: seq(B), U: seq(B), N: packed(B, T)] {
  %ce = nn.cross_entropy %l, %t from logits : !nn.tensor<[B, T, 5], f32>, !nn.tensor<[B, T], i32>
  %ctc = nn.ctc_loss %l, %y from logits blank 0 : !nn.tensor<[B, T, 5], f32>, !nn.tensor<[B, U], i32>
  // expected-error @+1 {{marks a value that no loss op produced; mark the result of a loss op (cross_entropy, mse, ctc_loss, ...)}}
  nn.mark_loss %x as "x" normalize sum : !nn.tensor<[B, T], f32>
  nn.return
}

// -----

nn.graph @g(%l: !nn.tensor<[B, T, 5], f32>, %t: !nn.tensor<[B, T], i32>, %y: !nn.tensor<[B, U], i32>, %f: !nn.tensor<[B], f32>, %x: !nn.tensor<[B, T], f32>) dims [B: batch, T: seq(B), U: seq(B), N: packed(B, T)] {
  %ce = nn.cross_entropy %l, %t from logits : !nn.tensor<[B, T, 5], f32>, !nn.tensor<[B, T], i32>
  %ctc = nn.ctc_loss %l, %y from logits blank 0 : !nn.tensor<[B, T, 5], f32>, !nn.tensor<[B, U], i32>
  // expected-error @+1 {{loss name must not be empty}}
  nn.mark_loss %ce as "" normalize sum : !nn.tensor<[B, T], f32>
  nn.return
}

// -----

nn.graph @g(%l: !nn.tensor<[B, T, 5], f32>, %t: !nn.tensor<[B, T], i32>, %y: !nn.tensor<[B, U], i32>, %f: !nn.tensor<[B], f32>, %x: !nn.tensor<[B, T], f32>) dims [B: batch, T: seq(B), U: seq(B), N: packed(B, T)] {
  %ce = nn.cross_entropy %l, %t from logits : !nn.tensor<[B, T, 5], f32>, !nn.tensor<[B, T], i32>
  %ctc = nn.ctc_loss %l, %y from logits blank 0 : !nn.tensor<[B, T, 5], f32>, !nn.tensor<[B, U], i32>
  // expected-error @+1 {{scale must be finite, got INF}}
  nn.mark_loss %ce as "ce" normalize sum scale 0x7FF0000000000000 : !nn.tensor<[B, T], f32>
  nn.return
}

// -----

// Training minimizes scale * loss: a negative scale would train it up.
nn.graph @g(%l: !nn.tensor<[B, T, 5], f32>, %t: !nn.tensor<[B, T], i32>) dims [B: batch, T: seq(B)] {
  %ce = nn.cross_entropy %l, %t from logits : !nn.tensor<[B, T, 5], f32>, !nn.tensor<[B, T], i32>
  // expected-error @+1 {{scale must be >= 0 (a negative scale trains 'ce' up), got -1.000000e+00}}
  nn.mark_loss %ce as "ce" normalize sum scale -1.0 : !nn.tensor<[B, T], f32>
  nn.return
}

// -----

nn.graph @g(%l: !nn.tensor<[B, T, 5], f32>, %t: !nn.tensor<[B, T], i32>, %y: !nn.tensor<[B, U], i32>, %f: !nn.tensor<[B], f32>, %x: !nn.tensor<[B, T], f32>) dims [B: batch, T: seq(B), U: seq(B), N: packed(B, T)] {
  %ce = nn.cross_entropy %l, %t from logits : !nn.tensor<[B, T, 5], f32>, !nn.tensor<[B, T], i32>
  %ctc = nn.ctc_loss %l, %y from logits blank 0 : !nn.tensor<[B, T, 5], f32>, !nn.tensor<[B, U], i32>
  // expected-error @+1 {{per_frame normalization needs a per-frame loss over a sequence axis, got '!nn.tensor<[B], f32>'}}
  nn.mark_loss %ctc as "ctc" normalize per_frame : !nn.tensor<[B], f32>
  nn.return
}

// -----

nn.graph @g(%l: !nn.tensor<[5], f32>, %t: !nn.tensor<[], i32>) dims [B: batch, T: seq(B), U: seq(B), N: packed(B, T)] {
  %ce = nn.cross_entropy %l, %t from logits : !nn.tensor<[5], f32>, !nn.tensor<[], i32>
  // expected-error @+1 {{per_sequence normalization needs a loss with a batch axis, got '!nn.tensor<[], f32>'}}
  nn.mark_loss %ce as "ce" normalize per_sequence : !nn.tensor<[], f32>
  nn.return
}

// -----

nn.graph @g(%l: !nn.tensor<[B, T, 5], f32>, %t: !nn.tensor<[B, T], i32>, %y: !nn.tensor<[B, U], i32>, %f: !nn.tensor<[B], f32>, %x: !nn.tensor<[B, T], f32>) dims [B: batch, T: seq(B), U: seq(B), N: packed(B, T)] {
  %ce = nn.cross_entropy %l, %t from logits : !nn.tensor<[B, T, 5], f32>, !nn.tensor<[B, T], i32>
  %ctc = nn.ctc_loss %l, %y from logits blank 0 : !nn.tensor<[B, T, 5], f32>, !nn.tensor<[B, U], i32>
  // expected-error @+1 {{custom normalization needs a custom_inv_norm_factor operand}}
  nn.mark_loss %ctc as "ctc" normalize custom : !nn.tensor<[B], f32>
  nn.return
}

// -----

nn.graph @g(%l: !nn.tensor<[B, T, 5], f32>, %t: !nn.tensor<[B, T], i32>, %y: !nn.tensor<[B, U], i32>, %f: !nn.tensor<[B], f32>, %x: !nn.tensor<[B, T], f32>) dims [B: batch, T: seq(B), U: seq(B), N: packed(B, T)] {
  %ce = nn.cross_entropy %l, %t from logits : !nn.tensor<[B, T, 5], f32>, !nn.tensor<[B, T], i32>
  %ctc = nn.ctc_loss %l, %y from logits blank 0 : !nn.tensor<[B, T, 5], f32>, !nn.tensor<[B, U], i32>
  // expected-error @+1 {{custom_inv_norm_factor is only allowed with custom normalization}}
  nn.mark_loss %ctc, %f as "ctc" normalize sum : !nn.tensor<[B], f32>, !nn.tensor<[B], f32>
  nn.return
}

// -----

nn.graph @g(%l: !nn.tensor<[B, T, 5], f32>, %t: !nn.tensor<[B, T], i32>, %y: !nn.tensor<[B, U], i32>, %f: !nn.tensor<[B], f32>, %x: !nn.tensor<[B, T], f32>) dims [B: batch, T: seq(B), U: seq(B), N: packed(B, T)] {
  %ce = nn.cross_entropy %l, %t from logits : !nn.tensor<[B, T, 5], f32>, !nn.tensor<[B, T], i32>
  %ctc = nn.ctc_loss %l, %y from logits blank 0 : !nn.tensor<[B, T, 5], f32>, !nn.tensor<[B, U], i32>
  // expected-error @+1 {{custom_inv_norm_factor must be a scalar [] or one value per sequence [B], got '!nn.tensor<[B, T], f32>'}}
  nn.mark_loss %ce, %x as "ce" normalize custom : !nn.tensor<[B, T], f32>, !nn.tensor<[B, T], f32>
  nn.return
}

// -----

nn.graph @g(%l: !nn.tensor<[B, T, 5], f32>, %t: !nn.tensor<[B, T], i32>, %y: !nn.tensor<[B, U], i32>, %f: !nn.tensor<[B], f32>, %x: !nn.tensor<[B, T], f32>, %i: !nn.tensor<[B], i32>) dims [B: batch, T: seq(B), U: seq(B), N: packed(B, T)] {
  %ce = nn.cross_entropy %l, %t from logits : !nn.tensor<[B, T, 5], f32>, !nn.tensor<[B, T], i32>
  %ctc = nn.ctc_loss %l, %y from logits blank 0 : !nn.tensor<[B, T, 5], f32>, !nn.tensor<[B, U], i32>
  // expected-error @+1 {{operand #1 must be nn tensor of floats, but got '!nn.tensor<[B], i32>'}}
  nn.mark_loss %ctc, %i as "ctc" normalize custom : !nn.tensor<[B], f32>, !nn.tensor<[B], i32>
  nn.return
}

// -----

nn.graph @g(%p: !nn.tensor<[N, 4], f32>) dims [B: batch, T: seq(B), U: seq(B), N: packed(B, T), M: packed(B, U)] {
  // expected-error @+1 {{input must be padded frames [batch, sequence, ...] (a packed value cannot be used here), got '!nn.tensor<[N, 4], f32>'}}
  %q = nn.pack %p : !nn.tensor<[N, 4], f32> -> !nn.tensor<[N, 4], f32>
  nn.return
}

// -----

nn.graph @g(%x: !nn.tensor<[B, T, 4], f32>) dims [B: batch, T: seq(B), U: seq(B), N: packed(B, T), M: packed(B, U)] {
  // expected-error @+1 {{result must be packed frames [N, ...], got '!nn.tensor<[B, 4], f32>'}}
  %q = nn.pack %x : !nn.tensor<[B, T, 4], f32> -> !nn.tensor<[B, 4], f32>
  nn.return
}

// -----

nn.graph @g(%x: !nn.tensor<[B, T, 4], f32>) dims [B: batch, T: seq(B), U: seq(B), N: packed(B, T), M: packed(B, U)] {
  // expected-error @+1 {{packed dim 'M' packs (B, U), but the padded value is over (B, T) (did you mean 'N'?)}}
  %q = nn.pack %x : !nn.tensor<[B, T, 4], f32> -> !nn.tensor<[M, 4], f32>
  nn.return
}

// -----

nn.graph @g(%x: !nn.tensor<[B, T, 4], f32>) dims [B: batch, T: seq(B), U: seq(B), N: packed(B, T), M: packed(B, U)] {
  // expected-error @+1 {{feature axes and element type of '!nn.tensor<[N, 5], f32>' must equal those of '!nn.tensor<[B, T, 4], f32>'}}
  %q = nn.pack %x : !nn.tensor<[B, T, 4], f32> -> !nn.tensor<[N, 5], f32>
  nn.return
}

// -----

nn.graph @g(%x: !nn.tensor<[B, T, 4], f32>) dims [B: batch, T: seq(B), U: seq(B), N: packed(B, T), M: packed(B, U)] {
  // expected-error @+1 {{input must be packed frames [N, ...], got '!nn.tensor<[B, T, 4], f32>'}}
  %q = nn.unpack %x : !nn.tensor<[B, T, 4], f32> -> !nn.tensor<[B, T, 4], f32>
  nn.return
}

// -----

nn.graph @g(%p: !nn.tensor<[N, 4], f32>) dims [B: batch, T: seq(B), U: seq(B), N: packed(B, T), M: packed(B, U)] {
  // expected-error @+1 {{result must be padded frames [batch, sequence, ...] (a packed value cannot be used here), got '!nn.tensor<[N, 4], f32>'}}
  %q = nn.unpack %p : !nn.tensor<[N, 4], f32> -> !nn.tensor<[N, 4], f32>
  nn.return
}

// -----

nn.graph @g(%x: !nn.tensor<[B, T, 4], f32>, %w: !nn.tensor<[6, 3, 4], f32>) dims [B: batch, T: seq(B)] {
  // expected-error @+1 {{attribute 'stride' failed to satisfy constraint: 64-bit signless integer attribute whose minimum value is 1}}
  %y = nn.conv1d %x, %w stride -2 : (!nn.tensor<[B, T, 4], f32>, !nn.tensor<[6, 3, 4], f32>) -> !nn.tensor<[B, T, 6], f32>
  nn.return
}

// -----

nn.graph @g(%l: !nn.tensor<[B, T, 5], f32>, %y: !nn.tensor<[B, U], i32>) dims [B: batch, T: seq(B), U: seq(B)] {
  // expected-error @+1 {{blank -1 is not a class in [0, 5)}}
  %c = nn.ctc_loss %l, %y from logits blank -1 : !nn.tensor<[B, T, 5], f32>, !nn.tensor<[B, U], i32>
  nn.return
}

// -----

// expected-error @+1 {{has 1 arg_names for 2 arguments}}
"nn.graph"() <{arg_names = ["x"], dims = [#nn.dim<B: batch>], function_type = (!nn.tensor<[B], f32>, !nn.tensor<[B], f32>) -> (), sym_name = "g"}> ({
^bb0(%a: !nn.tensor<[B], f32>, %b: !nn.tensor<[B], f32>):
  nn.return
}) : () -> ()

// -----

nn.graph @g(%x: !nn.tensor<[B, T, 4], f32>) dims [B: batch, T: seq(B)] {
  // expected-error @+1 {{input must be one value per sequence [batch, ...], got '!nn.tensor<[B, T, 4], f32>'}}
  %y = nn.broadcast_seq %x : !nn.tensor<[B, T, 4], f32> -> !nn.tensor<[B, T, 4], f32>
  nn.return
}

// -----

nn.graph @g(%x: !nn.tensor<[B, 4], f32>) dims [B: batch, C: batch, T: seq(C), N: packed(C, T)] {
  // expected-error @+1 {{result frames are sequences of 'C', but the input is over 'B'}}
  %y = nn.broadcast_seq %x : !nn.tensor<[B, 4], f32> -> !nn.tensor<[C, T, 4], f32>
  nn.return
}

// -----

nn.graph @g(%x: !nn.tensor<[B, 4], f32>) dims [B: batch, T: seq(B), N: packed(B, T)] {
  // expected-error @+1 {{result must be padded frames [batch, sequence, ...] (a packed value cannot be used here), got '!nn.tensor<[N, 4], f32>'}}
  %y = nn.broadcast_seq %x : !nn.tensor<[B, 4], f32> -> !nn.tensor<[N, 4], f32>
  nn.return
}

// -----

nn.graph @g(%x: !nn.tensor<[B, 4], f32>) dims [B: batch, T: seq(B)] {
  // expected-error @+1 {{feature axes and element type of '!nn.tensor<[B, T, 4], f64>' must equal those of '!nn.tensor<[B, 4], f32>'}}
  %y = nn.broadcast_seq %x : !nn.tensor<[B, 4], f32> -> !nn.tensor<[B, T, 4], f64>
  nn.return
}

// -----

nn.graph @g(%x: !nn.tensor<[B], f32>) dims [B: batch] {
  // expected-error @+1 {{per_frame normalization needs a per-frame loss over a sequence axis, got '!nn.tensor<[B], f32>'}}
  %s, %i = nn.loss_terms %x normalize per_frame : !nn.tensor<[B], f32>
  nn.return
}

// -----

nn.graph @g(%x: !nn.tensor<[B], i32>) dims [B: batch] {
  // expected-error @+1 {{operand #0 must be nn tensor of floats, but got '!nn.tensor<[B], i32>'}}
  %s, %i = nn.loss_terms %x normalize sum : !nn.tensor<[B], i32>
  nn.return
}

// -----

nn.graph @g(%x: !nn.tensor<[B], f32>) dims [B: batch] {
  // expected-error @+1 {{result #0 must be rank-0 f64 nn tensor}}
  %s, %i = "nn.loss_terms"(%x) <{normalization = 0 : i32}> : (!nn.tensor<[B], f32>) -> (!nn.tensor<[], f32>, !nn.tensor<[], f64>)
  nn.return
}

// -----

nn.graph @g(%dy: !nn.tensor<[B, 3], f32>, %w: !nn.tensor<[5, 4], f32>) dims [B: batch] {
  // expected-error @+1 {{weight must be static [3, in], got '!nn.tensor<[5, 4], f32>'}}
  %dx = nn.linear_grad_input %dy, %w : !nn.tensor<[B, 3], f32>, !nn.tensor<[5, 4], f32>
  nn.return
}

// -----

nn.graph @g(%dy: !nn.tensor<[B, T, 3], f32>, %x: !nn.tensor<[B, U, 4], f32>) dims [B: batch, T: seq(B), U: seq(B)] {
  // expected-error @+1 {{must be [P..., O] and [P..., I] on the same positions with static features}}
  %dw = nn.linear_grad_weight %dy, %x : !nn.tensor<[B, T, 3], f32>, !nn.tensor<[B, U, 4], f32>
  nn.return
}

// -----

nn.graph @g(%g: !nn.tensor<[B, T], f32>, %x: !nn.tensor<[B, T, 4], f32>, %y: !nn.tensor<[B, U], i32>) dims [B: batch, T: seq(B), U: seq(B)] {
  // expected-error @+1 {{targets must be on the positions of the logits}}
  %d = nn.cross_entropy_grad %g, %x, %y from logits : !nn.tensor<[B, T, 4], f32>, !nn.tensor<[B, U], i32>
  nn.return
}

// -----

nn.graph @g(%x: !nn.tensor<[B, 4], f32>) dims [B: batch] {
  // expected-error @+1 {{features [3, 5) are not within '!nn.tensor<[B, 4], f32>'}}
  %s = nn.slice_features %x offset 3 width 2 : !nn.tensor<[B, 4], f32>
  nn.return
}

// -----

nn.graph @g(%dy: !nn.tensor<[B, 4], f32>, %ids: !nn.tensor<[B], i32>) dims [B: batch] {
  // expected-error @+1 {{result must be a static table [vocabulary, 4] of 'f32', got '!nn.tensor<[9, 5], f32>'}}
  %t = nn.embedding_grad %dy, %ids : !nn.tensor<[B, 4], f32>, !nn.tensor<[B], i32> -> !nn.tensor<[9, 5], f32>
  nn.return
}

// -----

nn.graph @g(%dy: !nn.tensor<[B, 4], f32>, %x: !nn.tensor<[B, T, 4], f32>) dims [B: batch, T: seq(B)] {
  // expected-error @+1 {{axis 2 is not a sequence axis of '!nn.tensor<[B, T, 4], f32>'}}
  %d = nn.reduce_grad sum %dy, %x, %dy over 2 : !nn.tensor<[B, 4], f32>, !nn.tensor<[B, T, 4], f32>
  nn.return
}

// -----

nn.graph @g(%dy: !nn.tensor<[B, T, 8], f32>, %x: !nn.tensor<[B, T, 4], f32>, %wi: !nn.tensor<[16, 4], f32>, %wh: !nn.tensor<[16, 4], f32>, %b: !nn.tensor<[16], f32>) dims [B: batch, T: seq(B)] {
  // expected-error @+1 {{grad must be the lstm's result type '!nn.tensor<[B, T, 4], f32>', got '!nn.tensor<[B, T, 8], f32>'}}
  %dx, %dwi, %dwh, %db = nn.lstm_grad forward %dy, %x, %wi, %wh, %b : !nn.tensor<[B, T, 8], f32>, !nn.tensor<[B, T, 4], f32>, !nn.tensor<[16, 4], f32>, !nn.tensor<[16, 4], f32>, !nn.tensor<[16], f32>
  nn.return
}

// -----

nn.graph @g(%dy: !nn.tensor<[B, T, 4], f32>, %x: !nn.tensor<[B, T, 4], f32>, %wi: !nn.tensor<[16, 4], f32>, %wh: !nn.tensor<[16, 4], f32>, %b: !nn.tensor<[16], f32>, %tape: !nn.tensor<[B, T, 20], f32>) dims [B: batch, T: seq(B)] {
  // expected-error @+1 {{tape must be '!nn.tensor<[B, T, 24], f32>', got '!nn.tensor<[B, T, 20], f32>'}}
  %dx, %dwi, %dwh, %db = nn.lstm_grad forward %dy, %x, %wi, %wh, %b tape %tape : !nn.tensor<[B, T, 4], f32>, !nn.tensor<[B, T, 4], f32>, !nn.tensor<[16, 4], f32>, !nn.tensor<[16, 4], f32>, !nn.tensor<[16], f32>, !nn.tensor<[B, T, 20], f32>
  nn.return
}

// -----

nn.graph @g(%x: !nn.tensor<[B, T, 4], f32>, %wi: !nn.tensor<[16, 4], f32>, %wh: !nn.tensor<[16, 4], f32>, %b: !nn.tensor<[16], f32>) dims [B: batch, T: seq(B)] {
  // expected-error @+1 {{tape must be '!nn.tensor<[B, T, 24], f32>', got '!nn.tensor<[B, T, 4], f32>'}}
  %y, %tape = nn.lstm_with_tape forward %x, %wi, %wh, %b : !nn.tensor<[B, T, 4], f32>, !nn.tensor<[16, 4], f32>, !nn.tensor<[16, 4], f32>, !nn.tensor<[16], f32> -> !nn.tensor<[B, T, 4], f32>, !nn.tensor<[B, T, 4], f32>
  nn.return
}

// -----

nn.graph @g(%x: !nn.tensor<[B, T, 4], f32>, %wi: !nn.tensor<[16, 4], f32>, %wh: !nn.tensor<[16, 4], f32>, %b: !nn.tensor<[16], f32>) dims [B: batch, T: seq(B)] {
  // expected-error @+1 {{result must be '!nn.tensor<[B, T, 4], f32>', got '!nn.tensor<[B, T, 8], f32>'}}
  %y, %tape = nn.lstm_with_tape forward %x, %wi, %wh, %b : !nn.tensor<[B, T, 4], f32>, !nn.tensor<[16, 4], f32>, !nn.tensor<[16, 4], f32>, !nn.tensor<[16], f32> -> !nn.tensor<[B, T, 8], f32>, !nn.tensor<[B, T, 24], f32>
  nn.return
}

// -----

nn.graph @g(%dy: !nn.tensor<[B, T, 4], f32>, %x: !nn.tensor<[B, T, 4], f32>, %wi: !nn.tensor<[16, 4], f32>, %wh: !nn.tensor<[16, 4], f32>, %b: !nn.tensor<[16], f32>) dims [B: batch, T: seq(B)] {
  // expected-error @+1 {{recurrent_weight must be static [2, 4H, H], got '!nn.tensor<[16, 4], f32>'}}
  %dx, %dwi, %dwh, %db = nn.lstm_grad bidirectional %dy, %x, %wi, %wh, %b : !nn.tensor<[B, T, 4], f32>, !nn.tensor<[B, T, 4], f32>, !nn.tensor<[16, 4], f32>, !nn.tensor<[16, 4], f32>, !nn.tensor<[16], f32>
  nn.return
}

// -----

nn.graph @g(%dy: !nn.tensor<[B, T, 4], f32>, %x: !nn.tensor<[B, T, 3], f32>, %w: !nn.tensor<[4, 2, 3], f32>) dims [B: batch, T: seq(B)] {
  // expected-error @+1 {{with stride 2 the grad's sequence dim must be declared 'seq(...) = ceildiv(T, 2)', got 'T'}}
  %dx, %dw = nn.conv1d_grad %dy, %x, %w stride 2 : !nn.tensor<[B, T, 4], f32>, !nn.tensor<[B, T, 3], f32>, !nn.tensor<[4, 2, 3], f32>
  nn.return
}

// -----

nn.graph @g(%dy: !nn.tensor<[B, T, 5], f32>, %x: !nn.tensor<[B, T, 3], f32>, %w: !nn.tensor<[4, 2, 3], f32>) dims [B: batch, T: seq(B)] {
  // expected-error @+1 {{grad must have 4 'f32' features, got '!nn.tensor<[B, T, 5], f32>'}}
  %dx, %dw = nn.conv1d_grad %dy, %x, %w stride 1 : !nn.tensor<[B, T, 5], f32>, !nn.tensor<[B, T, 3], f32>, !nn.tensor<[4, 2, 3], f32>
  nn.return
}

// -----

nn.graph @g(%g: !nn.tensor<[B, T], f32>, %x: !nn.tensor<[B, T, 3], f32>, %y: !nn.tensor<[B, U], i32>) dims [B: batch, T: seq(B), U: seq(B)] {
  // expected-error @+1 {{grad must be the loss's type '!nn.tensor<[B], f32>', got '!nn.tensor<[B, T], f32>'}}
  %d = nn.ctc_loss_grad %g, %x, %y from logits blank 0 : !nn.tensor<[B, T], f32>, !nn.tensor<[B, T, 3], f32>, !nn.tensor<[B, U], i32>
  nn.return
}

// -----

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

nn.graph @g(%x: !nn.tensor<[B, T, 5], f32>, %y: !nn.tensor<[B], i32>) dims [B: batch, T: seq(B)] {
  // expected-error @+1 {{targets [B] must be on the positions of the scores [B, T] (same batch and sequence dims)}}
  %e = nn.frame_error %x, %y : !nn.tensor<[B, T, 5], f32>, !nn.tensor<[B], i32>
  nn.return
}

// -----

// expected-error @+1 {{dim 'U1': an offset must be at least 1, got -1}}
nn.graph @g() dims [B: batch, U: seq(B), U1: seq(B) = U + -1] {
  nn.return
}

// -----

// expected-error @+1 {{dim 'J': 'T' is not a second sequence dim of 'B' declared before it}}
nn.graph @g() dims [B: batch, T: seq(B), J: packed(B, T, T)] {
  nn.return
}

// -----

// expected-error @+1 {{dims 'J' and 'K' both pack (B, T, U)}}
nn.graph @g() dims [B: batch, T: seq(B), U: seq(B), J: packed(B, T, U), K: packed(B, T, U)] {
  nn.return
}

// -----

nn.graph @g(%y: !nn.tensor<[B, U], i32>) dims [B: batch, U: seq(B), V: seq(B), U1: seq(B) = U + 1] {
  // expected-error @+1 {{result axis 'V' must be declared 'seq(...) = U + 1' (the start symbol, then the labels) (did you mean 'U1'?)}}
  %s = nn.prepend_start %y start 0 : !nn.tensor<[B, U], i32> -> !nn.tensor<[B, V], i32>
  nn.return
}

// -----

nn.graph @g(%e: !nn.tensor<[B, T, 4], f32>, %p: !nn.tensor<[B, U1, 4], f32>) dims [B: batch, T: seq(B), U: seq(B), U1: seq(B) = U + 1, J: packed(B, T, U1), N: packed(B, T)] {
  // expected-error @+1 {{result must be packed [J, 4] with J declared 'packed(B, T, U1)' ('J') or padded '!nn.tensor<[B, T, U1, 4], f32>', got '!nn.tensor<[N, 4], f32>'}}
  %j = nn.transducer_join %e, %p : !nn.tensor<[B, T, 4], f32>, !nn.tensor<[B, U1, 4], f32> -> !nn.tensor<[N, 4], f32>
  nn.return
}

// -----

nn.graph @g(%e: !nn.tensor<[B, T, 4], f32>, %p: !nn.tensor<[B, T, 4], f32>) dims [B: batch, T: seq(B)] {
  // expected-error @+1 {{prediction must be over a second sequence dim of the encoder's batch 'B', got '!nn.tensor<[B, T, 4], f32>'}}
  %j = nn.transducer_join %e, %p : !nn.tensor<[B, T, 4], f32>, !nn.tensor<[B, T, 4], f32> -> !nn.tensor<[B, T, 4], f32>
  nn.return
}

// -----

nn.graph @g(%j: !nn.tensor<[B, T, U, 4], f32>, %y: !nn.tensor<[B, U], i32>) dims [B: batch, T: seq(B), U: seq(B), U1: seq(B) = U + 1] {
  // expected-error @+1 {{the joint's label axis 'U' must be declared 'seq(...) = U + 1' (the start symbol, then the labels) (did you mean 'U1'?)}}
  %l = nn.transducer_loss %j, %y from logits topology rnnt blank 0 : !nn.tensor<[B, T, U, 4], f32>, !nn.tensor<[B, U], i32>
  nn.return
}

// -----

nn.graph @g(%j: !nn.tensor<[B, T, 4], f32>, %y: !nn.tensor<[B, U], i32>) dims [B: batch, T: seq(B), U: seq(B)] {
  // expected-error @+1 {{joint must be over the (frame, label + 1) grid: packed [J, V] with J declared 'packed(B, T, U1)', or padded [B, T, U1, V]; got '!nn.tensor<[B, T, 4], f32>'}}
  %l = nn.transducer_loss %j, %y from logits topology rna blank 0 : !nn.tensor<[B, T, 4], f32>, !nn.tensor<[B, U], i32>
  nn.return
}

// -----

nn.graph @g(%j: !nn.tensor<[B, T, U1, 4], f32>, %y: !nn.tensor<[B, U], i32>) dims [B: batch, T: seq(B), U: seq(B), U1: seq(B) = U + 1] {
  // expected-error @+1 {{blank 4 is not a class in [0, 4)}}
  %l = nn.transducer_loss %j, %y from logits topology rna blank 4 : !nn.tensor<[B, T, U1, 4], f32>, !nn.tensor<[B, U], i32>
  nn.return
}

// -----

nn.graph @g(%j: !nn.tensor<[J, 4], f32>, %y: !nn.tensor<[B, U], i32>) dims [B: batch, T: seq(B), U: seq(B), U1: seq(B) = U + 1, J: packed(B, T, U1)] {
  // expected-error @+1 {{aligns the rna topology only: an rnnt path emits labels without consuming frames, so it has no class per frame}}
  %a, %s = nn.transducer_align %j, %y from logits topology rnnt blank 0 : !nn.tensor<[J, 4], f32>, !nn.tensor<[B, U], i32> -> !nn.tensor<[B, T], i32>, !nn.tensor<[B], f32>
  nn.return
}

// -----

nn.graph @g(%j: !nn.tensor<[J, 4], f32>, %y: !nn.tensor<[B, U], i32>) dims [B: batch, T: seq(B), U: seq(B), U1: seq(B) = U + 1, J: packed(B, T, U1)] {
  // expected-error @+1 {{alignment must be '!nn.tensor<[B, T], i32>' (a class per frame), got '!nn.tensor<[B, U1], i32>'}}
  %a, %s = nn.transducer_align %j, %y from logits topology rna blank 0 : !nn.tensor<[J, 4], f32>, !nn.tensor<[B, U], i32> -> !nn.tensor<[B, U1], i32>, !nn.tensor<[B], f32>
  nn.return
}

// -----

nn.graph @g(%j: !nn.tensor<[B, T, U1, 4], f32>, %y: !nn.tensor<[B, U], i32>) dims [B: batch, T: seq(B), U: seq(B), U1: seq(B) = U + 1] {
  // expected-error @+1 {{score must be '!nn.tensor<[B], f32>', got '!nn.tensor<[B], f64>'}}
  %a, %s = nn.transducer_align %j, %y from log_probs topology rna blank 0 : !nn.tensor<[B, T, U1, 4], f32>, !nn.tensor<[B, U], i32> -> !nn.tensor<[B, T], i32>, !nn.tensor<[B], f64>
  nn.return
}

// -----

nn.graph @g(%j: !nn.tensor<[B, T, 4], f32>, %y: !nn.tensor<[B, U], i32>) dims [B: batch, T: seq(B), U: seq(B)] {
  // expected-error @+1 {{joint must be over the (frame, label + 1) grid}}
  %a, %s = nn.transducer_align %j, %y from logits topology rna blank 0 : !nn.tensor<[B, T, 4], f32>, !nn.tensor<[B, U], i32> -> !nn.tensor<[B, T], i32>, !nn.tensor<[B], f32>
  nn.return
}

// -----

nn.graph @g(%x: !nn.tensor<[B, T, 4], f32>) dims [B: batch, T: seq(B), U: seq(B), U1: seq(B) = U + 1, J: packed(B, T, U1)] {
  // expected-error @+1 {{result is over the grid-packed dim 'J'; nn.pack and nn.unpack pack one sequence dim (a joint's grid comes from nn.transducer_join)}}
  %p = nn.pack %x : !nn.tensor<[B, T, 4], f32> -> !nn.tensor<[J, 4], f32>
  nn.return
}

// -----

nn.graph @g(%s: !nn.tensor<[B, T, 4], f32>, %a: !nn.tensor<[B, T], i32>) dims [B: batch, T: seq(B)] {
  // expected-error @+1 {{alignment must be integer [B, T] over a frame dim other than the states' 'T', got '!nn.tensor<[B, T], i32>'}}
  %x = nn.gather_states %s, %a blank 0 : !nn.tensor<[B, T, 4], f32>, !nn.tensor<[B, T], i32> -> !nn.tensor<[B, T, 4], f32>
  nn.return
}

// -----

nn.graph @g(%s: !nn.tensor<[B, U1, 4], f32>, %a: !nn.tensor<[B, T], i32>) dims [B: batch, T: seq(B), U: seq(B), U1: seq(B) = U + 1] {
  // expected-error @+1 {{gathered states must be '!nn.tensor<[B, T, 4], f32>', got '!nn.tensor<[B, T, 3], f32>'}}
  %x = nn.gather_states %s, %a blank 0 : !nn.tensor<[B, U1, 4], f32>, !nn.tensor<[B, T], i32> -> !nn.tensor<[B, T, 3], f32>
  nn.return
}

// -----

nn.graph @g(%g: !nn.tensor<[B, T], f32>, %j: !nn.tensor<[B, T, U1, 4], f32>, %y: !nn.tensor<[B, U], i32>) dims [B: batch, T: seq(B), U: seq(B), U1: seq(B) = U + 1] {
  // expected-error @+1 {{grad must be the loss's type '!nn.tensor<[B], f32>', got '!nn.tensor<[B, T], f32>'}}
  %d = nn.transducer_loss_grad %g, %j, %y from logits topology rnnt blank 0 : !nn.tensor<[B, T], f32>, !nn.tensor<[B, T, U1, 4], f32>, !nn.tensor<[B, U], i32>
  nn.return
}

// -----

nn.graph @g(%g: !nn.tensor<[J, 4], f32>) dims [B: batch, T: seq(B), U: seq(B), U1: seq(B) = U + 1, J: packed(B, T, U1)] {
  // expected-error @+1 {{prediction must be over a second sequence dim of the encoder's batch 'B', got '!nn.tensor<[B, T, 4], f32>'}}
  %de, %dp = nn.transducer_join_grad %g : !nn.tensor<[J, 4], f32> -> !nn.tensor<[B, T, 4], f32>, !nn.tensor<[B, T, 4], f32>
  nn.return
}
