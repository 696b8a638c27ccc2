// Verifier errors of nn.transducer_beam_search: its own attributes and
// the N-best layout, and (one case each) the checks it shares with
// nn.transducer_greedy_decode.
// RUN: nn-opt %s --split-input-file --verify-diagnostics

nn.graph @pred(%y: !nn.tensor<[S], i32>, %h: !nn.tensor<[S, 4], f32>) -> (!nn.tensor<[S, 4], f32>, !nn.tensor<[S, 4], f32>) dims [S: batch] {
  nn.return %h, %h : !nn.tensor<[S, 4], f32>, !nn.tensor<[S, 4], f32>
}
nn.parameter @w : !nn.tensor<[5, 4], f32>
nn.graph @joint(%h: !nn.tensor<[R, 4], f32>) -> !nn.tensor<[R, 5], f32> dims [R: batch] {
  %p = nn.param_ref @w : !nn.tensor<[5, 4], f32>
  %w = nn.linear %h, %p : !nn.tensor<[R, 4], f32>, !nn.tensor<[5, 4], f32>
  nn.return %w : !nn.tensor<[R, 5], f32>
}
nn.graph @g(%enc: !nn.tensor<[B, T, 4], f32>) dims [B: batch, T: seq(B), U: seq(B), K: seq(B) computed, H: batch = flatten(B, K), Y: seq(H) computed] {
  // expected-error @+1 {{labels must be [B, Y] or the N-best layout [B, K, Y] i32}}
  %y, %s = nn.transducer_beam_search %enc predictor @pred joiner @joint topology rna blank 0 start 0 beam 4 : !nn.tensor<[B, T, 4], f32> -> !nn.tensor<[B, K, Y], i64>, !nn.tensor<[B, K], f32>
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
nn.graph @g(%enc: !nn.tensor<[B, T, 4], f32>) dims [B: batch, T: seq(B), U: seq(B), K: seq(B) computed, H: batch = flatten(B, K), Y: seq(H) computed] {
  // expected-error @+1 {{score must be '!nn.tensor<[B, K], f32>', got '!nn.tensor<[B], f32>'}}
  %y, %s = nn.transducer_beam_search %enc predictor @pred joiner @joint topology rna blank 0 start 0 beam 4 : !nn.tensor<[B, T, 4], f32> -> !nn.tensor<[B, K, Y], i32>, !nn.tensor<[B], f32>
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
nn.graph @g(%enc: !nn.tensor<[B, T, 4], f32>) dims [B: batch, T: seq(B), U: seq(B), K: seq(B) computed, H: batch = flatten(B, K), Y: seq(H) computed] {
  // expected-error @+1 {{labels runs over 'U', whose lengths the caller passes}}
  %y, %s = nn.transducer_beam_search %enc predictor @pred joiner @joint topology rna blank 0 start 0 beam 4 : !nn.tensor<[B, T, 4], f32> -> !nn.tensor<[B, U], i32>, !nn.tensor<[B], f32>
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
nn.graph @g(%enc: !nn.tensor<[B, T, 4], f32>) dims [B: batch, T: seq(B), U: seq(B), K: seq(B) computed, H: batch = flatten(B, K), Y: seq(H) computed] {
  // expected-error @+1 {{topology rnnt needs max_symbols}}
  %y, %s = nn.transducer_beam_search %enc predictor @pred joiner @joint topology rnnt blank 0 start 0 beam 4 : !nn.tensor<[B, T, 4], f32> -> !nn.tensor<[B, K, Y], i32>, !nn.tensor<[B, K], f32>
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
nn.graph @g(%enc: !nn.tensor<[B, T, 4], f32>) dims [B: batch, T: seq(B), U: seq(B), K: seq(B) computed, H: batch = flatten(B, K), Y: seq(H) computed] {
  // expected-error @+1 {{topology rna emits at most one label per frame; max_symbols is for rnnt}}
  %y, %s = nn.transducer_beam_search %enc predictor @pred joiner @joint topology rna blank 0 start 0 beam 4 max_symbols 2 : !nn.tensor<[B, T, 4], f32> -> !nn.tensor<[B, K, Y], i32>, !nn.tensor<[B, K], f32>
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
nn.graph @g(%enc: !nn.tensor<[B, T, 4], f32>) dims [B: batch, T: seq(B), U: seq(B), K: seq(B) computed, H: batch = flatten(B, K), Y: seq(H) computed] {
  // expected-error @+1 {{attribute 'beam' failed to satisfy constraint}}
  %y, %s = nn.transducer_beam_search %enc predictor @pred joiner @joint topology rna blank 0 start 0 beam 0 : !nn.tensor<[B, T, 4], f32> -> !nn.tensor<[B, K, Y], i32>, !nn.tensor<[B, K], f32>
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
nn.graph @g(%enc: !nn.tensor<[B, T, 4], f32>) dims [B: batch, T: seq(B), U: seq(B), K: seq(B) computed, H: batch = flatten(B, K), Y: seq(H) computed] {
  // expected-error @+1 {{blank and start must be classes (at least 0), got -1 and 0}}
  %y, %s = nn.transducer_beam_search %enc predictor @pred joiner @joint topology rna blank -1 start 0 beam 2 : !nn.tensor<[B, T, 4], f32> -> !nn.tensor<[B, K, Y], i32>, !nn.tensor<[B, K], f32>
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
nn.graph @g(%enc: !nn.tensor<[B, T, 4], f32>) dims [B: batch, T: seq(B), U: seq(B), K: seq(B) computed, H: batch = flatten(B, K), Y: seq(H) computed] {
  // expected-error @+1 {{blank 5 is not a class in [0, 5) of joiner @joint}}
  %y, %s = nn.transducer_beam_search %enc predictor @pred joiner @joint topology rna blank 5 start 0 beam 2 : !nn.tensor<[B, T, 4], f32> -> !nn.tensor<[B, K, Y], i32>, !nn.tensor<[B, K], f32>
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
nn.graph @g(%enc: !nn.tensor<[B, T, 4], f32>) dims [B: batch, T: seq(B), U: seq(B), K: seq(B) computed, H: batch = flatten(B, K), Y: seq(H) computed] {
  // expected-error @+1 {{joiner 'nothing' does not name an nn.graph}}
  %y, %s = nn.transducer_beam_search %enc predictor @pred joiner @nothing topology rna blank 0 start 0 beam 2 : !nn.tensor<[B, T, 4], f32> -> !nn.tensor<[B, K, Y], i32>, !nn.tensor<[B, K], f32>
  nn.return
}

// -----

nn.graph @pred(%h: !nn.tensor<[S, 4], f32>) -> (!nn.tensor<[S, 4], f32>) dims [S: batch] {
  nn.return %h : !nn.tensor<[S, 4], f32>
}
nn.parameter @w : !nn.tensor<[5, 4], f32>
nn.graph @joint(%h: !nn.tensor<[R, 4], f32>) -> !nn.tensor<[R, 5], f32> dims [R: batch] {
  %p = nn.param_ref @w : !nn.tensor<[5, 4], f32>
  %w = nn.linear %h, %p : !nn.tensor<[R, 4], f32>, !nn.tensor<[5, 4], f32>
  nn.return %w : !nn.tensor<[R, 5], f32>
}
nn.graph @g(%enc: !nn.tensor<[B, T, 4], f32>) dims [B: batch, T: seq(B), U: seq(B), K: seq(B) computed, H: batch = flatten(B, K), Y: seq(H) computed] {
  // expected-error @+1 {{predictor @pred must take the row labels}}
  %y, %s = nn.transducer_beam_search %enc predictor @pred joiner @joint topology rna blank 0 start 0 beam 2 : !nn.tensor<[B, T, 4], f32> -> !nn.tensor<[B, K, Y], i32>, !nn.tensor<[B, K], f32>
  nn.return
}
