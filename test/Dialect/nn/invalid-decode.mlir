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

// -----

// A callee batch with a sequence dim over it counts sequences, not rows:
// it cannot bind a packed dim.
nn.graph @seqs(%x: !nn.tensor<[S, 4], f32>) -> !nn.tensor<[S, 4], f32> dims [S: batch, V: seq(S)] {
  nn.return %x : !nn.tensor<[S, 4], f32>
}
nn.graph @g(%x: !nn.tensor<[N, 4], f32>) dims [B: batch, T: seq(B), N: packed(B, T)] {
  // expected-error @+1 {{callee dim 'S: batch' cannot bind caller dim 'N: packed(B, T)'}}
  %y = nn.call @seqs(%x) : (!nn.tensor<[N, 4], f32>) -> !nn.tensor<[N, 4], f32>
  nn.return
}

// -----

nn.graph @pred(%y: !nn.tensor<[S], i32>, %h: !nn.tensor<[S, 4], f32>) -> (!nn.tensor<[S, 4], f32>, !nn.tensor<[S, 4], f32>) dims [S: batch] {
  nn.return %h, %h : !nn.tensor<[S, 4], f32>, !nn.tensor<[S, 4], f32>
}
nn.parameter @w : !nn.tensor<[5, 4], f32>
nn.graph @joint(%h: !nn.tensor<[R, 4], f32>) -> !nn.tensor<[R, 5], f32> dims [R: batch] {
  %p = nn.param_ref @w : !nn.tensor<[5, 4], f32>
  %w = nn.linear %h, %p : !nn.tensor<[R, 4], f32>, !nn.tensor<[5, 4], f32>
  nn.return %w : !nn.tensor<[R, 5], f32>
}
nn.graph @g(%enc: !nn.tensor<[B, 4], f32>) dims [B: batch, T: seq(B), U: seq(B), Y: seq(B) computed] {
  // expected-error @+1 {{encoder must be}}
  %y, %s = nn.transducer_greedy_decode %enc predictor @pred joiner @joint topology rnnt blank 0 start 0 max_symbols 2 : !nn.tensor<[B, 4], f32> -> !nn.tensor<[B, Y], i32>, !nn.tensor<[B], f32>
  nn.return
}

// -----

nn.graph @pred(%y: !nn.tensor<[S], i32>, %h: !nn.tensor<[S, 4], f32>) -> (!nn.tensor<[S, 4], f32>, !nn.tensor<[S, 4], f32>) dims [S: batch] {
  nn.return %h, %h : !nn.tensor<[S, 4], f32>, !nn.tensor<[S, 4], f32>
}
nn.parameter @w : !nn.tensor<[5, 4], f32>
nn.graph @joint(%h: !nn.tensor<[R, 4], f32>) -> !nn.tensor<[R, 5], f32> dims [R: batch] {
  %p = nn.param_ref @w : !nn.tensor<[5, 4], f32>
  %w = nn.linear %h, %p : !nn.tensor<[R, 4], f32>, !nn.tensor<[5, 4], f32>
  nn.return %w : !nn.tensor<[R, 5], f32>
}
nn.graph @g(%enc: !nn.tensor<[B, T, 4], f32>) dims [B: batch, T: seq(B), U: seq(B), Y: seq(B) computed] {
  // expected-error @+1 {{labels runs over 'U', whose lengths the caller passes}}
  %y, %s = nn.transducer_greedy_decode %enc predictor @pred joiner @joint topology rnnt blank 0 start 0 max_symbols 2 : !nn.tensor<[B, T, 4], f32> -> !nn.tensor<[B, U], i32>, !nn.tensor<[B], f32>
  nn.return
}

// -----

nn.graph @pred(%y: !nn.tensor<[S], i32>, %h: !nn.tensor<[S, 4], f32>) -> (!nn.tensor<[S, 4], f32>, !nn.tensor<[S, 4], f32>) dims [S: batch] {
  nn.return %h, %h : !nn.tensor<[S, 4], f32>, !nn.tensor<[S, 4], f32>
}
nn.parameter @w : !nn.tensor<[5, 4], f32>
nn.graph @joint(%h: !nn.tensor<[R, 4], f32>) -> !nn.tensor<[R, 5], f32> dims [R: batch] {
  %p = nn.param_ref @w : !nn.tensor<[5, 4], f32>
  %w = nn.linear %h, %p : !nn.tensor<[R, 4], f32>, !nn.tensor<[5, 4], f32>
  nn.return %w : !nn.tensor<[R, 5], f32>
}
nn.graph @g(%enc: !nn.tensor<[B, T, 4], f32>) dims [B: batch, T: seq(B), U: seq(B), Y: seq(B) computed] {
  // expected-error @+1 {{score must be '!nn.tensor<[B], f32>', got '!nn.tensor<[B], f64>'}}
  %y, %s = nn.transducer_greedy_decode %enc predictor @pred joiner @joint topology rnnt blank 0 start 0 max_symbols 2 : !nn.tensor<[B, T, 4], f32> -> !nn.tensor<[B, Y], i32>, !nn.tensor<[B], f64>
  nn.return
}

// -----

nn.graph @pred(%y: !nn.tensor<[S], i32>, %h: !nn.tensor<[S, 4], f32>) -> (!nn.tensor<[S, 4], f32>, !nn.tensor<[S, 4], f32>) dims [S: batch] {
  nn.return %h, %h : !nn.tensor<[S, 4], f32>, !nn.tensor<[S, 4], f32>
}
nn.parameter @w : !nn.tensor<[5, 4], f32>
nn.graph @joint(%h: !nn.tensor<[R, 4], f32>) -> !nn.tensor<[R, 5], f32> dims [R: batch] {
  %p = nn.param_ref @w : !nn.tensor<[5, 4], f32>
  %w = nn.linear %h, %p : !nn.tensor<[R, 4], f32>, !nn.tensor<[5, 4], f32>
  nn.return %w : !nn.tensor<[R, 5], f32>
}
nn.graph @g(%enc: !nn.tensor<[B, T, 4], f32>) dims [B: batch, T: seq(B), U: seq(B), Y: seq(B) computed] {
  // expected-error @+1 {{blank and start must be classes (at least 0), got 0 and -1}}
  %y, %s = nn.transducer_greedy_decode %enc predictor @pred joiner @joint topology rnnt blank 0 start -1 max_symbols 2 : !nn.tensor<[B, T, 4], f32> -> !nn.tensor<[B, Y], i32>, !nn.tensor<[B], f32>
  nn.return
}

// -----

nn.graph @pred(%y: !nn.tensor<[S], i32>, %h: !nn.tensor<[S, 4], f32>) -> (!nn.tensor<[S, 4], f32>, !nn.tensor<[S, 4], f32>) dims [S: batch] {
  nn.return %h, %h : !nn.tensor<[S, 4], f32>, !nn.tensor<[S, 4], f32>
}
nn.parameter @w : !nn.tensor<[5, 4], f32>
nn.graph @joint(%h: !nn.tensor<[R, 4], f32>) -> !nn.tensor<[R, 5], f32> dims [R: batch] {
  %p = nn.param_ref @w : !nn.tensor<[5, 4], f32>
  %w = nn.linear %h, %p : !nn.tensor<[R, 4], f32>, !nn.tensor<[5, 4], f32>
  nn.return %w : !nn.tensor<[R, 5], f32>
}
nn.graph @g(%enc: !nn.tensor<[B, T, 4], f32>) dims [B: batch, T: seq(B), U: seq(B), Y: seq(B) computed] {
  // expected-error @+1 {{topology rnnt needs max_symbols}}
  %y, %s = nn.transducer_greedy_decode %enc predictor @pred joiner @joint topology rnnt blank 0 start 0 : !nn.tensor<[B, T, 4], f32> -> !nn.tensor<[B, Y], i32>, !nn.tensor<[B], f32>
  nn.return
}

// -----

nn.graph @pred(%y: !nn.tensor<[S], i32>, %h: !nn.tensor<[S, 4], f32>) -> (!nn.tensor<[S, 4], f32>, !nn.tensor<[S, 4], f32>) dims [S: batch] {
  nn.return %h, %h : !nn.tensor<[S, 4], f32>, !nn.tensor<[S, 4], f32>
}
nn.parameter @w : !nn.tensor<[5, 4], f32>
nn.graph @joint(%h: !nn.tensor<[R, 4], f32>) -> !nn.tensor<[R, 5], f32> dims [R: batch] {
  %p = nn.param_ref @w : !nn.tensor<[5, 4], f32>
  %w = nn.linear %h, %p : !nn.tensor<[R, 4], f32>, !nn.tensor<[5, 4], f32>
  nn.return %w : !nn.tensor<[R, 5], f32>
}
nn.graph @g(%enc: !nn.tensor<[B, T, 4], f32>) dims [B: batch, T: seq(B), U: seq(B), Y: seq(B) computed] {
  // expected-error @+1 {{topology rna emits at most one label per frame; max_symbols is for rnnt}}
  %y, %s = nn.transducer_greedy_decode %enc predictor @pred joiner @joint topology rna blank 0 start 0 max_symbols 2 : !nn.tensor<[B, T, 4], f32> -> !nn.tensor<[B, Y], i32>, !nn.tensor<[B], f32>
  nn.return
}

// -----

nn.graph @pred(%y: !nn.tensor<[S], i32>, %h: !nn.tensor<[S, 4], f32>) -> (!nn.tensor<[S, 4], f32>, !nn.tensor<[S, 4], f32>) dims [S: batch] {
  nn.return %h, %h : !nn.tensor<[S, 4], f32>, !nn.tensor<[S, 4], f32>
}
nn.parameter @w : !nn.tensor<[5, 4], f32>
nn.graph @joint(%h: !nn.tensor<[R, 4], f32>) -> !nn.tensor<[R, 5], f32> dims [R: batch] {
  %p = nn.param_ref @w : !nn.tensor<[5, 4], f32>
  %w = nn.linear %h, %p : !nn.tensor<[R, 4], f32>, !nn.tensor<[5, 4], f32>
  nn.return %w : !nn.tensor<[R, 5], f32>
}
nn.graph @g(%enc: !nn.tensor<[B, T, 4], f32>) dims [B: batch, T: seq(B), U: seq(B), Y: seq(B) computed] {
  // expected-error @+1 {{attribute 'max_symbols' failed to satisfy constraint}}
  %y, %s = nn.transducer_greedy_decode %enc predictor @pred joiner @joint topology rnnt blank 0 start 0 max_symbols 0 : !nn.tensor<[B, T, 4], f32> -> !nn.tensor<[B, Y], i32>, !nn.tensor<[B], f32>
  nn.return
}

// -----

nn.parameter @w : !nn.tensor<[5, 4], f32>
nn.graph @joint(%h: !nn.tensor<[R, 4], f32>) -> !nn.tensor<[R, 5], f32> dims [R: batch] {
  %p = nn.param_ref @w : !nn.tensor<[5, 4], f32>
  %w = nn.linear %h, %p : !nn.tensor<[R, 4], f32>, !nn.tensor<[5, 4], f32>
  nn.return %w : !nn.tensor<[R, 5], f32>
}
nn.graph @g(%enc: !nn.tensor<[B, T, 4], f32>) dims [B: batch, T: seq(B), U: seq(B), Y: seq(B) computed] {
  // expected-error @+1 {{predictor 'pred' does not name an nn.graph}}
  %y, %s = nn.transducer_greedy_decode %enc predictor @pred joiner @joint topology rnnt blank 0 start 0 max_symbols 2 : !nn.tensor<[B, T, 4], f32> -> !nn.tensor<[B, Y], i32>, !nn.tensor<[B], f32>
  nn.return
}

// -----

nn.graph @pred(%y: !nn.tensor<[S], i32>, %h: !nn.tensor<[S, 4], f32>) -> (!nn.tensor<[S, 4], f32>, !nn.tensor<[S, 4], f32>) dims [S: batch] {
  nn.return %h, %h : !nn.tensor<[S, 4], f32>, !nn.tensor<[S, 4], f32>
}
nn.graph @g(%enc: !nn.tensor<[B, T, 4], f32>) dims [B: batch, T: seq(B), U: seq(B), Y: seq(B) computed] {
  // expected-error @+1 {{joiner 'joint' does not name an nn.graph}}
  %y, %s = nn.transducer_greedy_decode %enc predictor @pred joiner @joint topology rnnt blank 0 start 0 max_symbols 2 : !nn.tensor<[B, T, 4], f32> -> !nn.tensor<[B, Y], i32>, !nn.tensor<[B], f32>
  nn.return
}

// -----

nn.graph @pred(%y: !nn.tensor<[S], i32>, %h: !nn.tensor<[S, 4], f32>) -> (!nn.tensor<[S, 4], f32>, !nn.tensor<[S, 4], f32>) dims [S: batch] {
  nn.return %h, %h : !nn.tensor<[S, 4], f32>, !nn.tensor<[S, 4], f32>
}
nn.parameter @w : !nn.tensor<[5, 4], f32>
nn.graph @joint(%h: !nn.tensor<[R, 4], f32>) -> !nn.tensor<[R, 5], f32> dims [R: batch, Q: seq(R)] {
  %p = nn.param_ref @w : !nn.tensor<[5, 4], f32>
  %w = nn.linear %h, %p : !nn.tensor<[R, 4], f32>, !nn.tensor<[5, 4], f32>
  nn.return %w : !nn.tensor<[R, 5], f32>
}
nn.graph @g(%enc: !nn.tensor<[B, T, 4], f32>) dims [B: batch, T: seq(B), U: seq(B), Y: seq(B) computed] {
  // expected-error @+1 {{joiner @joint must declare exactly one dim, a row batch}}
  %y, %s = nn.transducer_greedy_decode %enc predictor @pred joiner @joint topology rnnt blank 0 start 0 max_symbols 2 : !nn.tensor<[B, T, 4], f32> -> !nn.tensor<[B, Y], i32>, !nn.tensor<[B], f32>
  nn.return
}

// -----

nn.graph @pred(%y: !nn.tensor<[S], i32>, %h: !nn.tensor<[S, 4], f32>) -> (!nn.tensor<[S, 4], f32>, !nn.tensor<[S, 4], f32>) dims [S: batch] {
  nn.return %h, %h : !nn.tensor<[S, 4], f32>, !nn.tensor<[S, 4], f32>
}
nn.parameter @w : !nn.tensor<[5, 4], f32>
nn.graph @joint(%h: !nn.tensor<[R, 4], f32>, %k: !nn.tensor<[R, 4], f32>) -> !nn.tensor<[R, 5], f32> dims [R: batch] {
  %p = nn.param_ref @w : !nn.tensor<[5, 4], f32>
  %w = nn.linear %h, %p : !nn.tensor<[R, 4], f32>, !nn.tensor<[5, 4], f32>
  nn.return %w : !nn.tensor<[R, 5], f32>
}
nn.graph @g(%enc: !nn.tensor<[B, T, 4], f32>) dims [B: batch, T: seq(B), U: seq(B), Y: seq(B) computed] {
  // expected-error @+1 {{joiner @joint must take one argument '!nn.tensor<[R, 4], f32>' (the encoder frame plus the predictor output)}}
  %y, %s = nn.transducer_greedy_decode %enc predictor @pred joiner @joint topology rnnt blank 0 start 0 max_symbols 2 : !nn.tensor<[B, T, 4], f32> -> !nn.tensor<[B, Y], i32>, !nn.tensor<[B], f32>
  nn.return
}

// -----

nn.graph @pred(%y: !nn.tensor<[S], i32>, %h: !nn.tensor<[S, 4], f32>) -> (!nn.tensor<[S, 4], f32>, !nn.tensor<[S, 4], f32>) dims [S: batch] {
  nn.return %h, %h : !nn.tensor<[S, 4], f32>, !nn.tensor<[S, 4], f32>
}
nn.parameter @c : !nn.tensor<[5], f32>
nn.graph @joint(%h: !nn.tensor<[R, 4], f32>) -> !nn.tensor<[5], f32> dims [R: batch] {
  %c = nn.param_ref @c : !nn.tensor<[5], f32>
  nn.return %c : !nn.tensor<[5], f32>
}
nn.graph @g(%enc: !nn.tensor<[B, T, 4], f32>) dims [B: batch, T: seq(B), U: seq(B), Y: seq(B) computed] {
  // expected-error @+1 {{joiner @joint result 0 must run over the rows [R, ...], got '!nn.tensor<[5], f32>'}}
  %y, %s = nn.transducer_greedy_decode %enc predictor @pred joiner @joint topology rnnt blank 0 start 0 max_symbols 2 : !nn.tensor<[B, T, 4], f32> -> !nn.tensor<[B, Y], i32>, !nn.tensor<[B], f32>
  nn.return
}

// -----

nn.graph @pred(%y: !nn.tensor<[S], i32>, %h: !nn.tensor<[S, 4], f32>) -> (!nn.tensor<[S, 4], f32>, !nn.tensor<[S, 4], f32>) dims [S: batch] {
  nn.return %h, %h : !nn.tensor<[S, 4], f32>, !nn.tensor<[S, 4], f32>
}
nn.parameter @w : !nn.tensor<[5, 4], f32>
nn.graph @joint(%h: !nn.tensor<[R, 4], f32>) -> !nn.tensor<[R, 5], f32> dims [R: batch] {
  %p = nn.param_ref @w : !nn.tensor<[5, 4], f32>
  %w = nn.linear %h, %p : !nn.tensor<[R, 4], f32>, !nn.tensor<[5, 4], f32>
  %l2 = nn.param_norm %p : !nn.tensor<[5, 4], f32>
  nn.mark_loss %l2 as "l2" normalize sum : !nn.tensor<[], f32>
  nn.return %w : !nn.tensor<[R, 5], f32>
}
nn.graph @g(%enc: !nn.tensor<[B, T, 4], f32>) dims [B: batch, T: seq(B), U: seq(B), Y: seq(B) computed] {
  // expected-error @+1 {{joiner @joint marks a loss; a decoder's callee computes scores only}}
  %y, %s = nn.transducer_greedy_decode %enc predictor @pred joiner @joint topology rnnt blank 0 start 0 max_symbols 2 : !nn.tensor<[B, T, 4], f32> -> !nn.tensor<[B, Y], i32>, !nn.tensor<[B], f32>
  nn.return
}

// -----

nn.graph @pred(%y: !nn.tensor<[S], i32>, %h: !nn.tensor<[S, 4], f32>) -> (!nn.tensor<[S, 4], f32>, !nn.tensor<[S, 4], f32>) dims [S: batch] {
  nn.return %h, %h : !nn.tensor<[S, 4], f32>, !nn.tensor<[S, 4], f32>
}
nn.parameter @w : !nn.tensor<[5, 4], f32>
nn.graph @joint(%h: !nn.tensor<[R, 4], f32>) -> !nn.tensor<[R, 5], f32> dims [R: batch] {
  %p = nn.param_ref @w : !nn.tensor<[5, 4], f32>
  %w = nn.linear %h, %p : !nn.tensor<[R, 4], f32>, !nn.tensor<[5, 4], f32>
  nn.return %w : !nn.tensor<[R, 5], f32>
}
nn.graph @g(%enc: !nn.tensor<[B, T, 4], f32>) dims [B: batch, T: seq(B), U: seq(B), Y: seq(B) computed] {
  // expected-error @+1 {{blank 5 is not a class in [0, 5) of joiner @joint}}
  %y, %s = nn.transducer_greedy_decode %enc predictor @pred joiner @joint topology rnnt blank 5 start 0 max_symbols 2 : !nn.tensor<[B, T, 4], f32> -> !nn.tensor<[B, Y], i32>, !nn.tensor<[B], f32>
  nn.return
}

// -----

nn.graph @pred(%y: !nn.tensor<[S], i64>, %h: !nn.tensor<[S, 4], f32>) -> (!nn.tensor<[S, 4], f32>, !nn.tensor<[S, 4], f32>) dims [S: batch] {
  nn.return %h, %h : !nn.tensor<[S, 4], f32>, !nn.tensor<[S, 4], f32>
}
nn.parameter @w : !nn.tensor<[5, 4], f32>
nn.graph @joint(%h: !nn.tensor<[R, 4], f32>) -> !nn.tensor<[R, 5], f32> dims [R: batch] {
  %p = nn.param_ref @w : !nn.tensor<[5, 4], f32>
  %w = nn.linear %h, %p : !nn.tensor<[R, 4], f32>, !nn.tensor<[5, 4], f32>
  nn.return %w : !nn.tensor<[R, 5], f32>
}
nn.graph @g(%enc: !nn.tensor<[B, T, 4], f32>) dims [B: batch, T: seq(B), U: seq(B), Y: seq(B) computed] {
  // expected-error @+1 {{predictor @pred must take the row labels '!nn.tensor<[S], i32>' first}}
  %y, %s = nn.transducer_greedy_decode %enc predictor @pred joiner @joint topology rnnt blank 0 start 0 max_symbols 2 : !nn.tensor<[B, T, 4], f32> -> !nn.tensor<[B, Y], i32>, !nn.tensor<[B], f32>
  nn.return
}

// -----

nn.graph @pred(%y: !nn.tensor<[S], i32>, %h: !nn.tensor<[S, 2], f32>) -> (!nn.tensor<[S, 2], f32>, !nn.tensor<[S, 2], f32>) dims [S: batch] {
  nn.return %h, %h : !nn.tensor<[S, 2], f32>, !nn.tensor<[S, 2], f32>
}
nn.parameter @w : !nn.tensor<[5, 4], f32>
nn.graph @joint(%h: !nn.tensor<[R, 4], f32>) -> !nn.tensor<[R, 5], f32> dims [R: batch] {
  %p = nn.param_ref @w : !nn.tensor<[5, 4], f32>
  %w = nn.linear %h, %p : !nn.tensor<[R, 4], f32>, !nn.tensor<[5, 4], f32>
  nn.return %w : !nn.tensor<[R, 5], f32>
}
nn.graph @g(%enc: !nn.tensor<[B, T, 4], f32>) dims [B: batch, T: seq(B), U: seq(B), Y: seq(B) computed] {
  // expected-error @+1 {{predictor @pred must return its output '!nn.tensor<[S, 4], f32>' first (the encoder's width and element type)}}
  %y, %s = nn.transducer_greedy_decode %enc predictor @pred joiner @joint topology rnnt blank 0 start 0 max_symbols 2 : !nn.tensor<[B, T, 4], f32> -> !nn.tensor<[B, Y], i32>, !nn.tensor<[B], f32>
  nn.return
}

// -----

nn.graph @pred(%y: !nn.tensor<[S], i32>, %h: !nn.tensor<[S, 4], f32>) -> !nn.tensor<[S, 4], f32> dims [S: batch] {
  nn.return %h : !nn.tensor<[S, 4], f32>
}
nn.parameter @w : !nn.tensor<[5, 4], f32>
nn.graph @joint(%h: !nn.tensor<[R, 4], f32>) -> !nn.tensor<[R, 5], f32> dims [R: batch] {
  %p = nn.param_ref @w : !nn.tensor<[5, 4], f32>
  %w = nn.linear %h, %p : !nn.tensor<[R, 4], f32>, !nn.tensor<[5, 4], f32>
  nn.return %w : !nn.tensor<[R, 5], f32>
}
nn.graph @g(%enc: !nn.tensor<[B, T, 4], f32>) dims [B: batch, T: seq(B), U: seq(B), Y: seq(B) computed] {
  // expected-error @+1 {{predictor @pred takes 1 state tensors and returns 0; each state comes back with its type}}
  %y, %s = nn.transducer_greedy_decode %enc predictor @pred joiner @joint topology rnnt blank 0 start 0 max_symbols 2 : !nn.tensor<[B, T, 4], f32> -> !nn.tensor<[B, Y], i32>, !nn.tensor<[B], f32>
  nn.return
}

// -----

nn.graph @pred(%y: !nn.tensor<[S], i32>, %h: !nn.tensor<[S, 4], f32>, %c: !nn.tensor<[S, 2], i32>) -> (!nn.tensor<[S, 4], f32>, !nn.tensor<[S, 4], f32>, !nn.tensor<[S, 2], i32>) dims [S: batch] {
  nn.return %h, %h, %c : !nn.tensor<[S, 4], f32>, !nn.tensor<[S, 4], f32>, !nn.tensor<[S, 2], i32>
}
nn.parameter @w : !nn.tensor<[5, 4], f32>
nn.graph @joint(%h: !nn.tensor<[R, 4], f32>) -> !nn.tensor<[R, 5], f32> dims [R: batch] {
  %p = nn.param_ref @w : !nn.tensor<[5, 4], f32>
  %w = nn.linear %h, %p : !nn.tensor<[R, 4], f32>, !nn.tensor<[5, 4], f32>
  nn.return %w : !nn.tensor<[R, 5], f32>
}
nn.graph @g(%enc: !nn.tensor<[B, T, 4], f32>) dims [B: batch, T: seq(B), U: seq(B), Y: seq(B) computed] {
  // expected-error @+1 {{predictor @pred state 1 must be a float [S, ...] tensor returned with the same type}}
  %y, %s = nn.transducer_greedy_decode %enc predictor @pred joiner @joint topology rnnt blank 0 start 0 max_symbols 2 : !nn.tensor<[B, T, 4], f32> -> !nn.tensor<[B, Y], i32>, !nn.tensor<[B], f32>
  nn.return
}
