// RUN: nn-opt %s --split-input-file --verify-diagnostics --nn-convert-to-linalg

// Every diagnostic of nn-convert-to-linalg (the graph ABI's checks; the
// patterns themselves meet only verified IR). leave-ops.mlir and
// leave-ops-attention.mlir test the option's own errors.

// expected-error @+1 {{argument 'x' has element type 'bf16', which the backends do not support yet (f32, f64, i32 and i64 are)}}
nn.graph @bf16_argument(%x: !nn.tensor<[B, 3], bf16>) -> !nn.tensor<[B, 3], bf16>
    dims [B: batch] {
  nn.return %x : !nn.tensor<[B, 3], bf16>
}

// -----

// expected-error @+1 {{parameter @w has element type 'f16', which the backends do not support yet (f32, f64, i32 and i64 are)}}
nn.parameter @w : !nn.tensor<[3], f16>
nn.graph @f16_parameter(%x: !nn.tensor<[B, 3], f32>) -> !nn.tensor<[B, 3], f32>
    dims [B: batch] {
  %w = nn.param_ref @w : !nn.tensor<[3], f16>
  nn.return %x : !nn.tensor<[B, 3], f32>
}

// -----

// expected-error @+1 {{graph @ping calls itself (directly or through other graphs); recursive graphs cannot be lowered}}
nn.graph @ping(%x: !nn.tensor<[B, 3], f32>) -> !nn.tensor<[B, 3], f32>
    dims [B: batch] {
  %y = nn.call @pong(%x) : (!nn.tensor<[B, 3], f32>) -> !nn.tensor<[B, 3], f32>
  nn.return %y : !nn.tensor<[B, 3], f32>
}
nn.graph @pong(%x: !nn.tensor<[B, 3], f32>) -> !nn.tensor<[B, 3], f32>
    dims [B: batch] {
  %y = nn.call @ping(%x) : (!nn.tensor<[B, 3], f32>) -> !nn.tensor<[B, 3], f32>
  nn.return %y : !nn.tensor<[B, 3], f32>
}

// -----

nn.graph @tail(%x: !nn.tensor<[B, T, 4], f32>, %y: !nn.tensor<[B, T], i32>)
    dims [B: batch, T: seq(B)] {
  %ce = nn.cross_entropy %x, %y from logits : !nn.tensor<[B, T, 4], f32>, !nn.tensor<[B, T], i32>
  nn.mark_loss %ce as "ce" normalize per_frame : !nn.tensor<[B, T], f32>
  nn.return
}
nn.graph @twice(%x: !nn.tensor<[B, T, 4], f32>, %y: !nn.tensor<[B, T], i32>)
    dims [B: batch, T: seq(B)] {
  nn.call @tail(%x, %y) : (!nn.tensor<[B, T, 4], f32>, !nn.tensor<[B, T], i32>) -> ()
  // expected-error @+1 {{loss "ce" is marked twice in graph @twice (through calls); loss names must be unique}}
  nn.call @tail(%x, %y) : (!nn.tensor<[B, T, 4], f32>, !nn.tensor<[B, T], i32>) -> ()
  nn.return
}

// -----

nn.graph @unbound(%x: !nn.tensor<[3], f32>) -> !nn.tensor<[3], f32>
    dims [B: batch] {
  nn.return %x : !nn.tensor<[3], f32>
}
nn.graph @caller(%x: !nn.tensor<[3], f32>) -> !nn.tensor<[3], f32>
    dims [B: batch] {
  // expected-error @+1 {{cannot bind dim 'B' of @unbound: no operand or result type names it}}
  %y = nn.call @unbound(%x) : (!nn.tensor<[3], f32>) -> !nn.tensor<[3], f32>
  nn.return %y : !nn.tensor<[3], f32>
}

