// Verifier errors of dims, graphs, calls and parameters: one case per verifier branch.
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

// expected-error @+1 {{has 1 arg_names for 2 arguments}}
"nn.graph"() <{arg_names = ["x"], dims = [#nn.dim<B: batch>], function_type = (!nn.tensor<[B], f32>, !nn.tensor<[B], f32>) -> (), sym_name = "g"}> ({
^bb0(%a: !nn.tensor<[B], f32>, %b: !nn.tensor<[B], f32>):
  nn.return
}) : () -> ()

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
