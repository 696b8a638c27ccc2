// Verifier errors of the gradient ops: one case per verifier branch.
// RUN: nn-opt %s --split-input-file --verify-diagnostics

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

// -----

nn.graph @g(%x: !nn.tensor<[B, T, 4], f32>, %dy: !nn.tensor<[B, T, 4], f32>) dims [B: batch, T: seq(B), T2: seq(B) = ceildiv(T, 2)] {
  // expected-error @+1 {{with stride 2 the output's sequence dim must be declared 'seq(...) = ceildiv(T, 2)', got 'T' (did you mean 'T2'?)}}
  %dx = nn.pool_grad avg %dy, %x, %dy window 2 stride 2 : !nn.tensor<[B, T, 4], f32>, !nn.tensor<[B, T, 4], f32>
  nn.return
}

// -----

nn.graph @g(%x: !nn.tensor<[B, T, 4], f32>, %dy: !nn.tensor<[B, T2, 5], f32>) dims [B: batch, T: seq(B), T2: seq(B) = ceildiv(T, 2)] {
  // expected-error @+1 {{output must keep the input's 4 'f32' features, got '!nn.tensor<[B, T2, 5], f32>'}}
  %dx = nn.pool_grad max %dy, %x, %dy window 2 stride 2 : !nn.tensor<[B, T2, 5], f32>, !nn.tensor<[B, T, 4], f32>
  nn.return
}
