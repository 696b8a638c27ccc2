// Verifier errors of computed dims and the decoding ops: one case per
// branch.
// RUN: nn-opt %s --split-input-file --verify-diagnostics

// expected-error @+1 {{argument 0 names dim 'Y1', whose lengths an op of the graph computes}}
nn.graph @g(%y: !nn.tensor<[B, Y1], i32>) dims [B: batch, Y: seq(B) computed, Y1: seq(B) = Y + 1] {
  nn.return
}

// -----

// expected-error @+1 {{declares dim 'Y' computed, but no op of the graph computes its lengths}}
nn.graph @g(%z: !nn.tensor<[B, T, 4], f32>) dims [B: batch, T: seq(B), Y: seq(B) computed] {
  nn.return
}

// -----

nn.graph @g(%z: !nn.tensor<[B, T, 4], f32>, %v: !nn.tensor<[B, 4], f32>) dims [B: batch, T: seq(B), Y: seq(B) computed, Y1: seq(B) = Y + 1] {
  // expected-error @+1 {{names dim 'Y1' before the op that computes the lengths of 'Y'}}
  %e = nn.broadcast_seq %v : !nn.tensor<[B, 4], f32> -> !nn.tensor<[B, Y1, 4], f32>
  %y, %s = nn.ctc_greedy_decode %z from logits blank 0 : !nn.tensor<[B, T, 4], f32> -> !nn.tensor<[B, Y], i32>, !nn.tensor<[B], f32>
  nn.return
}

// -----

nn.graph @g(%z: !nn.tensor<[B, T, 4], f32>) dims [B: batch, T: seq(B), Y: seq(B) computed] {
  // expected-note @+1 {{first computed here}}
  %y, %s = nn.ctc_greedy_decode %z from logits blank 0 : !nn.tensor<[B, T, 4], f32> -> !nn.tensor<[B, Y], i32>, !nn.tensor<[B], f32>
  // expected-error @+1 {{computes the lengths of dim 'Y', which another op computes already}}
  %y2, %s2 = nn.ctc_greedy_decode %z from logits blank 0 : !nn.tensor<[B, T, 4], f32> -> !nn.tensor<[B, Y], i32>, !nn.tensor<[B], f32>
  nn.return
}

// -----

nn.graph @g(%z: !nn.tensor<[B, T, 4], f32>, %u: !nn.tensor<[B, U], i32>) dims [B: batch, T: seq(B), U: seq(B)] {
  // expected-error @+1 {{labels runs over 'U', whose lengths the caller passes; the hypotheses' lengths are computed here: declare a new dim such as 'Y: seq(B) computed'}}
  %y, %s = nn.ctc_greedy_decode %z from logits blank 0 : !nn.tensor<[B, T, 4], f32> -> !nn.tensor<[B, U], i32>, !nn.tensor<[B], f32>
  nn.return
}

// -----

nn.graph @g(%z: !nn.tensor<[B, T, 4], f32>) dims [B: batch, T: seq(B), Y: seq(B) computed] {
  // expected-error @+1 {{labels must be [B, Y] i32 over a computed sequence dim Y, got '!nn.tensor<[B, Y], i64>'}}
  %y, %s = nn.ctc_greedy_decode %z from logits blank 0 : !nn.tensor<[B, T, 4], f32> -> !nn.tensor<[B, Y], i64>, !nn.tensor<[B], f32>
  nn.return
}

// -----

nn.graph @g(%z: !nn.tensor<[B, T, 4], f32>) dims [B: batch, C: batch, T: seq(B), Y: seq(C) computed] {
  // expected-error @+1 {{labels must be [B, Y] i32 over a computed sequence dim Y, got '!nn.tensor<[C, Y], i32>'}}
  %y, %s = nn.ctc_greedy_decode %z from logits blank 0 : !nn.tensor<[B, T, 4], f32> -> !nn.tensor<[C, Y], i32>, !nn.tensor<[B], f32>
  nn.return
}

// -----

nn.graph @g(%z: !nn.tensor<[B, T, 4], f32>) dims [B: batch, T: seq(B), Y: seq(B) computed] {
  // expected-error @+1 {{blank 4 is not a class in [0, 4)}}
  %y, %s = nn.ctc_greedy_decode %z from logits blank 4 : !nn.tensor<[B, T, 4], f32> -> !nn.tensor<[B, Y], i32>, !nn.tensor<[B], f32>
  nn.return
}

// -----

nn.graph @g(%z: !nn.tensor<[B, T, 4], f32>) dims [B: batch, T: seq(B), Y: seq(B) computed] {
  // expected-error @+1 {{score must be '!nn.tensor<[B], f32>', got '!nn.tensor<[B], f64>'}}
  %y, %s = nn.ctc_greedy_decode %z from logits blank 0 : !nn.tensor<[B, T, 4], f32> -> !nn.tensor<[B, Y], i32>, !nn.tensor<[B], f64>
  nn.return
}

// -----

nn.graph @g(%z: !nn.tensor<[B, 4], f32>) dims [B: batch, Y: seq(B) computed] {
  // expected-error @+1 {{scores must be padded frames [batch, sequence, ...]}}
  %y, %s = nn.ctc_greedy_decode %z from logits blank 0 : !nn.tensor<[B, 4], f32> -> !nn.tensor<[B, Y], i32>, !nn.tensor<[B], f32>
  nn.return
}

// -----

nn.graph @f(%z: !nn.tensor<[B, T, 4], f32>) -> !nn.tensor<[B, Y], i32> dims [B: batch, T: seq(B), Y: seq(B) computed] {
  %y, %s = nn.ctc_greedy_decode %z from logits blank 0 : !nn.tensor<[B, T, 4], f32> -> !nn.tensor<[B, Y], i32>, !nn.tensor<[B], f32>
  nn.return %y : !nn.tensor<[B, Y], i32>
}

nn.graph @g(%z: !nn.tensor<[B, T, 4], f32>) dims [B: batch, T: seq(B), U: seq(B)] {
  // expected-error @+1 {{callee dim 'Y' is computed by the callee; calling a graph whose results have computed lengths is not supported yet}}
  %y = nn.call @f(%z) : (!nn.tensor<[B, T, 4], f32>) -> !nn.tensor<[B, U], i32>
  nn.return
}

// -----

nn.graph @g(%z: !nn.tensor<[B, T, 4], f32>) dims [B: batch, T: seq(B), Y: seq(B) computed] {
  // expected-error @+1 {{token_beam 5 exceeds the 4 classes}}
  %y, %s = nn.ctc_beam_search %z from logits blank 0 beam 2 merge sum token_beam 5 : !nn.tensor<[B, T, 4], f32> -> !nn.tensor<[B, Y], i32>, !nn.tensor<[B], f32>
  nn.return
}

// -----

nn.graph @g(%z: !nn.tensor<[B, T, 4], f32>) dims [B: batch, T: seq(B), Y: seq(B) computed] {
  // expected-error @+1 {{score_beam must be at least 0, got -1}}
  %y, %s = nn.ctc_beam_search %z from logits blank 0 beam 2 merge sum score_beam -1.0 : !nn.tensor<[B, T, 4], f32> -> !nn.tensor<[B, Y], i32>, !nn.tensor<[B], f32>
  nn.return
}

// -----

nn.graph @g(%z: !nn.tensor<[B, T, 4], f32>) dims [B: batch, T: seq(B), Y: seq(B) computed] {
  // expected-error @+1 {{attribute 'beam' failed to satisfy constraint: 64-bit signless integer attribute whose minimum value is 1}}
  %y, %s = nn.ctc_beam_search %z from logits blank 0 beam 0 merge sum : !nn.tensor<[B, T, 4], f32> -> !nn.tensor<[B, Y], i32>, !nn.tensor<[B], f32>
  nn.return
}

// -----

nn.graph @g(%z: !nn.tensor<[B, T, 4], f32>) dims [B: batch, T: seq(B), Y: seq(B) computed] {
  // expected-error @+1 {{blank -1 is not a class in [0, 4)}}
  %y, %s = nn.ctc_beam_search %z from logits blank -1 beam 2 merge sum : !nn.tensor<[B, T, 4], f32> -> !nn.tensor<[B, Y], i32>, !nn.tensor<[B], f32>
  nn.return
}
