// Verifier errors of flattened batches, lifted dims, N-best layouts and
// the beam ops: one case per branch.
// RUN: nn-opt %s --split-input-file --verify-diagnostics

// expected-error @+1 {{dim 'H': 'K' is not a sequence dim of 'B' declared before it}}
nn.graph @g() dims [B: batch, C: batch, K: seq(C), H: batch = flatten(B, K)] {
  nn.return
}

// -----

// expected-error @+1 {{dim 'H2': 'H' is not a batch dim declared before it (one that is not itself flattened)}}
nn.graph @g() dims [B: batch, K: seq(B), H: batch = flatten(B, K), K2: seq(H) computed, H2: batch = flatten(H, K2)] {
  nn.return
}

// -----

// expected-error @+1 {{dims 'H' and 'G' both flatten (B, K)}}
nn.graph @g() dims [B: batch, K: seq(B), H: batch = flatten(B, K), G: batch = flatten(B, K)] {
  nn.return
}

// -----

// expected-error @+1 {{dim 'TH': 'C' is not a flattened batch, so 'T' cannot be lifted onto it}}
nn.graph @g() dims [B: batch, C: batch, T: seq(B), TH: seq(C) = T] {
  nn.return
}

// -----

// expected-error @+1 {{dim 'KH': 'K' is not a sequence dim of 'B' (other than 'K') declared before it}}
nn.graph @g() dims [B: batch, K: seq(B), H: batch = flatten(B, K), KH: seq(H) = K] {
  nn.return
}

// -----

// expected-error @+1 {{dim 'Y': a sequence dim of the flattened batch 'H' must be computed, lifted ('= SOURCE') or derived}}
nn.graph @g() dims [B: batch, K: seq(B), H: batch = flatten(B, K), Y: seq(H)] {
  nn.return
}

// -----

// expected-error @+1 {{dim 'U1': an offset must be at least 1, got 0}}
nn.graph @g() dims [B: batch, U: seq(B), U1: seq(B) = U + 0] {
  nn.return
}

// -----

// An N-best value reaches an op without the BeamLayout trait.
nn.graph @g(%x: !nn.tensor<[B, K, TH], f32>) dims [B: batch, T: seq(B), K: seq(B), H: batch = flatten(B, K), TH: seq(H) = T] {
  // expected-error @+1 {{type '!nn.tensor<[B, K, TH], f32>' is an N-best layout (its axes after 'K' are sequences of 'H'); flatten it with nn.flatten_beam}}
  %a = nn.tanh %x : !nn.tensor<[B, K, TH], f32>
  nn.return
}

// -----

nn.graph @g(%x: !nn.tensor<[B, K, U], i32>) dims [B: batch, K: seq(B), U: seq(B), H: batch = flatten(B, K), Y: seq(H) computed] {
  // expected-error @+1 {{the axes after 'K' must be sequence dims of 'H' (the N-best layout), got '!nn.tensor<[B, K, U], i32>'}}
  %c = nn.flatten_beam %x : !nn.tensor<[B, K, U], i32> -> !nn.tensor<[H], i32>
  nn.return
}

// -----

// expected-error @+1 {{axis 3 ('T') must be a sequence dim of 'H' (the N-best layout [B, K, Y...])}}
nn.graph @g(%x: !nn.tensor<[B, K, TH, T], f32>) dims [B: batch, T: seq(B), K: seq(B), H: batch = flatten(B, K), TH: seq(H) = T] {
  nn.return
}

// -----

nn.graph @g(%x: !nn.tensor<[B, K], f32>) dims [B: batch, K: seq(B)] {
  // expected-error @+1 {{no batch dim is declared 'flatten(B, K)'}}
  %f = nn.flatten_beam %x : !nn.tensor<[B, K], f32> -> !nn.tensor<[B], f32>
  nn.return
}

// -----

nn.graph @g(%x: !nn.tensor<[B], f32>) dims [B: batch, K: seq(B), H: batch = flatten(B, K)] {
  // expected-error @+1 {{input must be [B, K, ...] with K the hypotheses of each sequence}}
  %f = nn.flatten_beam %x : !nn.tensor<[B], f32> -> !nn.tensor<[H], f32>
  nn.return
}

// -----

nn.graph @g(%x: !nn.tensor<[B, K, 2], f32>) dims [B: batch, K: seq(B), H: batch = flatten(B, K)] {
  // expected-error @+1 {{result must be '!nn.tensor<[H, 2], f32>', got '!nn.tensor<[H, 2], f64>'}}
  %f = nn.flatten_beam %x : !nn.tensor<[B, K, 2], f32> -> !nn.tensor<[H, 2], f64>
  nn.return
}

// -----

nn.graph @g(%x: !nn.tensor<[B, 2], f32>) dims [B: batch, K: seq(B), H: batch = flatten(B, K)] {
  // expected-error @+1 {{'B' is not a flattened batch (declare 'H: batch = flatten(B, K)')}}
  %u = nn.unflatten_beam %x : !nn.tensor<[B, 2], f32> -> !nn.tensor<[B, K, 2], f32>
  nn.return
}

// -----

nn.graph @g(%x: !nn.tensor<[N, 2], f32>) dims [B: batch, K: seq(B), N: packed(B, K), H: batch = flatten(B, K)] {
  // expected-error @+1 {{input must be [B, ...] or [B, T..., ...] over a batch dim}}
  %u = nn.unflatten_beam %x : !nn.tensor<[N, 2], f32> -> !nn.tensor<[B, K, 2], f32>
  nn.return
}

// -----

nn.graph @g(%x: !nn.tensor<[B, T, 2], f32>) dims [B: batch, T: seq(B), U: seq(B), K: seq(B), H: batch = flatten(B, K), UH: seq(H) = U] {
  // expected-error @+1 {{no dim lifts 'T' onto 'H' (declare 'S: seq(H) = T')}}
  %r = nn.repeat_beam %x : !nn.tensor<[B, T, 2], f32> -> !nn.tensor<[H, UH, 2], f32>
  nn.return
}

// -----

nn.graph @g(%x: !nn.tensor<[C, 2], f32>) dims [B: batch, C: batch, K: seq(B), H: batch = flatten(B, K)] {
  // expected-error @+1 {{'H' flattens 'B', not the input's batch 'C'}}
  %r = nn.repeat_beam %x : !nn.tensor<[C, 2], f32> -> !nn.tensor<[H, 2], f32>
  nn.return
}

// -----

nn.graph @g(%x: !nn.tensor<[B, 2], f32>) dims [B: batch, K: seq(B), H: batch = flatten(B, K)] {
  // expected-error @+1 {{result must be over a flattened batch of 'B'}}
  %r = nn.repeat_beam %x : !nn.tensor<[B, 2], f32> -> !nn.tensor<[2], f32>
  nn.return
}

// -----

nn.graph @g(%x: !nn.tensor<[H, TH2, 2], f32>) dims [B: batch, T: seq(B), K: seq(B), H: batch = flatten(B, K), TH: seq(H) = T, TH2: seq(H) = ceildiv(TH, 2)] {
  // expected-error @+1 {{'TH2' is not lifted from a sequence dim of 'B'; only lifted axes can be summed back}}
  %s = nn.sum_beam %x : !nn.tensor<[H, TH2, 2], f32> -> !nn.tensor<[B, T, 2], f32>
  nn.return
}

// -----

nn.graph @g(%x: !nn.tensor<[B, T, 3], f32>) dims [B: batch, T: seq(B), K: seq(B), H: batch = flatten(B, K), Y: seq(H) computed] {
  // expected-error @+1 {{labels run over 'K', whose lengths the caller passes; the search computes the number of hypotheses and their lengths}}
  %y, %s = nn.ctc_beam_search %x from logits blank 0 beam 2 merge sum : !nn.tensor<[B, T, 3], f32> -> !nn.tensor<[B, K, Y], i32>, !nn.tensor<[B, K], f32>
  nn.return
}

// -----

nn.graph @g(%x: !nn.tensor<[B, T, 3], f32>) dims [B: batch, T: seq(B), K: seq(B) computed, H: batch = flatten(B, K), Y: seq(H) computed] {
  // expected-error @+1 {{score must be '!nn.tensor<[B, K], f32>', got '!nn.tensor<[B], f32>'}}
  %y, %s = nn.ctc_beam_search %x from logits blank 0 beam 2 merge sum : !nn.tensor<[B, T, 3], f32> -> !nn.tensor<[B, K, Y], i32>, !nn.tensor<[B], f32>
  nn.return
}

// -----

nn.graph @g(%x: !nn.tensor<[B, T, 3], f32>) dims [B: batch, T: seq(B), K: seq(B) computed, H: batch = flatten(B, K), Y: seq(H) computed] {
  // expected-error @+1 {{labels must be [B, Y] or the N-best layout [B, K, Y] i32 (Y a sequence dim of flatten(B, K))}}
  %y, %s = nn.ctc_beam_search %x from logits blank 0 beam 2 merge sum : !nn.tensor<[B, T, 3], f32> -> !nn.tensor<[B, K, T], i32>, !nn.tensor<[B, K], f32>
  nn.return
}

// -----

// expected-error @+1 {{argument 0 names dim 'H', whose lengths an op of the graph computes}}
nn.graph @g(%x: !nn.tensor<[H, TH], f32>) dims [B: batch, T: seq(B), K: seq(B) computed, H: batch = flatten(B, K), TH: seq(H) = T] {
  nn.return
}
