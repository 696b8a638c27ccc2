// Verifier errors of pack, unpack and broadcast_seq: one case per verifier branch.
// RUN: nn-opt %s --split-input-file --verify-diagnostics

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

nn.graph @g(%x: !nn.tensor<[B, T, 4], f32>) dims [B: batch, T: seq(B), U: seq(B), U1: seq(B) = U + 1, J: packed(B, T, U1)] {
  // expected-error @+1 {{result is over the grid-packed dim 'J'; nn.pack and nn.unpack pack one sequence dim (a joint's grid comes from nn.transducer_join)}}
  %p = nn.pack %x : !nn.tensor<[B, T, 4], f32> -> !nn.tensor<[J, 4], f32>
  nn.return
}
