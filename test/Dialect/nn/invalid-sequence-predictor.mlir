// Verifier errors of transducer decoders whose predictor is in the
// sequence form (the network as training calls it): every op must run one
// label at a time, and the output must fit the encoder.
// RUN: nn-opt %s --split-input-file --verify-diagnostics

nn.parameter @wi : !nn.tensor<[2, 16, 4], f32>
nn.parameter @wh : !nn.tensor<[2, 16, 4], f32>
nn.parameter @b : !nn.tensor<[2, 16], f32>
nn.parameter @embed : !nn.tensor<[5, 4], f32>
nn.parameter @w : !nn.tensor<[5, 8], f32>
nn.graph @pred(%y: !nn.tensor<[S, U], i32>) -> !nn.tensor<[S, U, 8], f32> dims [S: batch, U: seq(S)] {
  %e = nn.param_ref @embed : !nn.tensor<[5, 4], f32>
  %x = nn.embedding %y, %e : !nn.tensor<[S, U], i32>, !nn.tensor<[5, 4], f32>
  %wi = nn.param_ref @wi : !nn.tensor<[2, 16, 4], f32>
  %wh = nn.param_ref @wh : !nn.tensor<[2, 16, 4], f32>
  %b = nn.param_ref @b : !nn.tensor<[2, 16], f32>
  // expected-note @+1 {{this op}}
  %h = nn.lstm bidirectional %x, %wi, %wh, %b : !nn.tensor<[S, U, 4], f32>, !nn.tensor<[2, 16, 4], f32>, !nn.tensor<[2, 16, 4], f32>, !nn.tensor<[2, 16], f32>
  nn.return %h : !nn.tensor<[S, U, 8], f32>
}
nn.graph @joint(%h: !nn.tensor<[R, 8], f32>) -> !nn.tensor<[R, 5], f32> dims [R: batch] {
  %p = nn.param_ref @w : !nn.tensor<[5, 8], f32>
  %w = nn.linear %h, %p : !nn.tensor<[R, 8], f32>, !nn.tensor<[5, 8], f32>
  nn.return %w : !nn.tensor<[R, 5], f32>
}
nn.graph @g(%enc: !nn.tensor<[B, T, 8], f32>) dims [B: batch, T: seq(B), Y: seq(B) computed] {
  // expected-error @+1 {{predictor @pred cannot run one label at a time: 'nn.lstm' reads later labels (a sequence-form predictor may use frame-wise ops and forward LSTMs only)}}
  %y, %s = nn.transducer_greedy_decode %enc predictor @pred joiner @joint topology rnnt blank 0 start 0 max_symbols 2 : !nn.tensor<[B, T, 8], f32> -> !nn.tensor<[B, Y], i32>, !nn.tensor<[B], f32>
  nn.return
}

// -----

// A reduction over the labels mixes positions too.
nn.parameter @embed : !nn.tensor<[5, 4], f32>
nn.parameter @w : !nn.tensor<[5, 4], f32>
nn.graph @pred(%y: !nn.tensor<[S, U], i32>) -> !nn.tensor<[S, U, 4], f32> dims [S: batch, U: seq(S)] {
  %e = nn.param_ref @embed : !nn.tensor<[5, 4], f32>
  %x = nn.embedding %y, %e : !nn.tensor<[S, U], i32>, !nn.tensor<[5, 4], f32>
  // expected-note @+1 {{this op}}
  %r = nn.reduce mean %x over 1 : !nn.tensor<[S, U, 4], f32>
  %b = nn.broadcast_seq %r : !nn.tensor<[S, 4], f32> -> !nn.tensor<[S, U, 4], f32>
  nn.return %b : !nn.tensor<[S, U, 4], f32>
}
nn.graph @joint(%h: !nn.tensor<[R, 4], f32>) -> !nn.tensor<[R, 5], f32> dims [R: batch] {
  %p = nn.param_ref @w : !nn.tensor<[5, 4], f32>
  %w = nn.linear %h, %p : !nn.tensor<[R, 4], f32>, !nn.tensor<[5, 4], f32>
  nn.return %w : !nn.tensor<[R, 5], f32>
}
nn.graph @g(%enc: !nn.tensor<[B, T, 4], f32>) dims [B: batch, T: seq(B), K: seq(B) computed, H: batch = flatten(B, K), Y: seq(H) computed] {
  // expected-error @+1 {{predictor @pred cannot run one label at a time: 'nn.reduce' reads later labels}}
  %y, %s = nn.transducer_beam_search %enc predictor @pred joiner @joint topology rna blank 0 start 0 beam 2 : !nn.tensor<[B, T, 4], f32> -> !nn.tensor<[B, K, Y], i32>, !nn.tensor<[B, K], f32>
  nn.return
}

// -----

// A call has no step form (the derivation does not look into callees).
nn.parameter @embed : !nn.tensor<[5, 4], f32>
nn.parameter @w : !nn.tensor<[5, 4], f32>
nn.graph @inner(%x: !nn.tensor<[S, U, 4], f32>) -> !nn.tensor<[S, U, 4], f32> dims [S: batch, U: seq(S)] {
  nn.return %x : !nn.tensor<[S, U, 4], f32>
}
nn.graph @pred(%y: !nn.tensor<[S, U], i32>) -> !nn.tensor<[S, U, 4], f32> dims [S: batch, U: seq(S)] {
  %e = nn.param_ref @embed : !nn.tensor<[5, 4], f32>
  %x = nn.embedding %y, %e : !nn.tensor<[S, U], i32>, !nn.tensor<[5, 4], f32>
  // expected-note @+1 {{this op}}
  %c = nn.call @inner(%x) : (!nn.tensor<[S, U, 4], f32>) -> !nn.tensor<[S, U, 4], f32>
  nn.return %c : !nn.tensor<[S, U, 4], f32>
}
nn.graph @joint(%h: !nn.tensor<[R, 4], f32>) -> !nn.tensor<[R, 5], f32> dims [R: batch] {
  %p = nn.param_ref @w : !nn.tensor<[5, 4], f32>
  %w = nn.linear %h, %p : !nn.tensor<[R, 4], f32>, !nn.tensor<[5, 4], f32>
  nn.return %w : !nn.tensor<[R, 5], f32>
}
nn.graph @g(%enc: !nn.tensor<[B, T, 4], f32>) dims [B: batch, T: seq(B), Y: seq(B) computed] {
  // expected-error @+1 {{predictor @pred cannot run one label at a time: 'nn.call' has no step form}}
  %y, %s = nn.transducer_greedy_decode %enc predictor @pred joiner @joint topology rna blank 0 start 0 : !nn.tensor<[B, T, 4], f32> -> !nn.tensor<[B, Y], i32>, !nn.tensor<[B], f32>
  nn.return
}

// -----

// A loss has no place in a scorer.
nn.parameter @embed : !nn.tensor<[5, 4], f32>
nn.parameter @w : !nn.tensor<[5, 4], f32>
nn.graph @pred(%y: !nn.tensor<[S, U], i32>) -> !nn.tensor<[S, U, 4], f32> dims [S: batch, U: seq(S)] {
  %e = nn.param_ref @embed : !nn.tensor<[5, 4], f32>
  %x = nn.embedding %y, %e : !nn.tensor<[S, U], i32>, !nn.tensor<[5, 4], f32>
  // expected-note @+1 {{this op}}
  %ce = nn.cross_entropy %x, %y from logits : !nn.tensor<[S, U, 4], f32>, !nn.tensor<[S, U], i32>
  nn.return %x : !nn.tensor<[S, U, 4], f32>
}
nn.graph @joint(%h: !nn.tensor<[R, 4], f32>) -> !nn.tensor<[R, 5], f32> dims [R: batch] {
  %p = nn.param_ref @w : !nn.tensor<[5, 4], f32>
  %w = nn.linear %h, %p : !nn.tensor<[R, 4], f32>, !nn.tensor<[5, 4], f32>
  nn.return %w : !nn.tensor<[R, 5], f32>
}
nn.graph @g(%enc: !nn.tensor<[B, T, 4], f32>) dims [B: batch, T: seq(B), Y: seq(B) computed] {
  // expected-error @+1 {{'nn.cross_entropy' is a loss; a decoder's callee computes scores only}}
  %y, %s = nn.transducer_greedy_decode %enc predictor @pred joiner @joint topology rna blank 0 start 0 : !nn.tensor<[B, T, 4], f32> -> !nn.tensor<[B, Y], i32>, !nn.tensor<[B], f32>
  nn.return
}

// -----

// The output must have the encoder's width.
nn.parameter @embed : !nn.tensor<[5, 3], f32>
nn.parameter @w : !nn.tensor<[5, 4], f32>
nn.graph @pred(%y: !nn.tensor<[S, U], i32>) -> !nn.tensor<[S, U, 3], f32> dims [S: batch, U: seq(S)] {
  %e = nn.param_ref @embed : !nn.tensor<[5, 3], f32>
  %x = nn.embedding %y, %e : !nn.tensor<[S, U], i32>, !nn.tensor<[5, 3], f32>
  nn.return %x : !nn.tensor<[S, U, 3], f32>
}
nn.graph @joint(%h: !nn.tensor<[R, 4], f32>) -> !nn.tensor<[R, 5], f32> dims [R: batch] {
  %p = nn.param_ref @w : !nn.tensor<[5, 4], f32>
  %w = nn.linear %h, %p : !nn.tensor<[R, 4], f32>, !nn.tensor<[5, 4], f32>
  nn.return %w : !nn.tensor<[R, 5], f32>
}
nn.graph @g(%enc: !nn.tensor<[B, T, 4], f32>) dims [B: batch, T: seq(B), Y: seq(B) computed] {
  // expected-error @+1 {{predictor @pred (a sequence-form predictor over the labels [S, U]) must return one '!nn.tensor<[S, U, 4], f32>' (the encoder's width and element type)}}
  %y, %s = nn.transducer_greedy_decode %enc predictor @pred joiner @joint topology rna blank 0 start 0 : !nn.tensor<[B, T, 4], f32> -> !nn.tensor<[B, Y], i32>, !nn.tensor<[B], f32>
  nn.return
}

// -----

// Valid: a graph over a batch calls the sequence-form predictor on an
// N-best list's hypotheses (a flattened batch) and their labels after the
// start symbol (a derived dim of it).
nn.parameter @embed : !nn.tensor<[5, 4], f32>
nn.graph @pred(%y: !nn.tensor<[S, U], i32>) -> !nn.tensor<[S, U, 4], f32> dims [S: batch, U: seq(S)] {
  %e = nn.param_ref @embed : !nn.tensor<[5, 4], f32>
  %x = nn.embedding %y, %e : !nn.tensor<[S, U], i32>, !nn.tensor<[5, 4], f32>
  nn.return %x : !nn.tensor<[S, U, 4], f32>
}
nn.graph @g(%z: !nn.tensor<[B, T, 5], f32>) -> !nn.tensor<[H, Y1, 4], f32>
    dims [B: batch, T: seq(B), K: seq(B) computed, H: batch = flatten(B, K),
          Y: seq(H) computed, Y1: seq(H) = Y + 1] {
  %y, %sc = nn.ctc_beam_search %z from logits blank 0 beam 2 merge sum : !nn.tensor<[B, T, 5], f32> -> !nn.tensor<[B, K, Y], i32>, !nn.tensor<[B, K], f32>
  %f = nn.flatten_beam %y : !nn.tensor<[B, K, Y], i32> -> !nn.tensor<[H, Y], i32>
  %s = nn.prepend_start %f start 0 : !nn.tensor<[H, Y], i32> -> !nn.tensor<[H, Y1], i32>
  %p = nn.call @pred(%s) : (!nn.tensor<[H, Y1], i32>) -> !nn.tensor<[H, Y1, 4], f32>
  nn.return %p : !nn.tensor<[H, Y1, 4], f32>
}

// -----

// Valid: a plain callee sequence dim binds a lift of a flattened batch
// (each hypothesis's copy of its utterance's frames).
nn.graph @frames(%x: !nn.tensor<[S, U, 4], f32>) -> !nn.tensor<[S, U, 4], f32> dims [S: batch, U: seq(S)] {
  %t = nn.tanh %x : !nn.tensor<[S, U, 4], f32>
  nn.return %t : !nn.tensor<[S, U, 4], f32>
}
nn.graph @g(%z: !nn.tensor<[B, T, 4], f32>) -> !nn.tensor<[H, TH, 4], f32>
    dims [B: batch, T: seq(B), K: seq(B) computed, H: batch = flatten(B, K),
          Y: seq(H) computed, TH: seq(H) = T] {
  %y, %sc = nn.ctc_beam_search %z from logits blank 0 beam 2 merge sum : !nn.tensor<[B, T, 4], f32> -> !nn.tensor<[B, K, Y], i32>, !nn.tensor<[B, K], f32>
  %r = nn.repeat_beam %z : !nn.tensor<[B, T, 4], f32> -> !nn.tensor<[H, TH, 4], f32>
  %p = nn.call @frames(%r) : (!nn.tensor<[H, TH, 4], f32>) -> !nn.tensor<[H, TH, 4], f32>
  nn.return %p : !nn.tensor<[H, TH, 4], f32>
}
