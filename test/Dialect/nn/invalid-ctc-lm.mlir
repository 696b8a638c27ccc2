// Verifier errors of nn.ctc_beam_search's language-model fusion: one case
// per branch.
// RUN: nn-opt %s --split-input-file --verify-diagnostics

nn.graph @g(%z: !nn.tensor<[B, T, 5], f32>) dims [B: batch, T: seq(B), Y: seq(B) computed] {
  // expected-error @+1 {{has language-model settings (from, weight, start, end) but no 'lm' graph}}
  %y, %s = nn.ctc_beam_search %z from logits blank 0 beam 2 merge sum end 0 : !nn.tensor<[B, T, 5], f32> -> !nn.tensor<[B, Y], i32>, !nn.tensor<[B], f32>
  nn.return
}

// -----

nn.graph @g(%z: !nn.tensor<[B, T, 5], f32>) dims [B: batch, T: seq(B), Y: seq(B) computed] {
  // expected-error @+1 {{length_bonus needs a language model ('lm @graph from ... weight ... start ...')}}
  %y, %s = nn.ctc_beam_search %z from logits blank 0 beam 2 merge sum length_bonus 1.0 : !nn.tensor<[B, T, 5], f32> -> !nn.tensor<[B, Y], i32>, !nn.tensor<[B], f32>
  nn.return
}

// -----

nn.graph @g(%z: !nn.tensor<[B, T, 5], f32>) dims [B: batch, T: seq(B), Y: seq(B) computed] {
  // expected-error @+1 {{has language-model settings (from, weight, start, end) but no 'lm' graph}}
  %y, %s = nn.ctc_beam_search %z from logits blank 0 beam 2 merge sum {lm_weight = 0.5 : f64} : !nn.tensor<[B, T, 5], f32> -> !nn.tensor<[B, Y], i32>, !nn.tensor<[B], f32>
  nn.return
}

// -----

nn.graph @lm(%y: !nn.tensor<[S], i32>, %h: !nn.tensor<[S, 5], f32>) -> (!nn.tensor<[S, 5], f32>, !nn.tensor<[S, 5], f32>) dims [S: batch] {
  nn.return %h, %h : !nn.tensor<[S, 5], f32>, !nn.tensor<[S, 5], f32>
}
nn.graph @g(%z: !nn.tensor<[B, T, 5], f32>) dims [B: batch, T: seq(B), Y: seq(B) computed] {
  // expected-error @+1 {{lm @lm needs its output kind, weight and start symbol}}
  %y, %s = nn.ctc_beam_search %z from logits blank 0 beam 2 merge sum {lm = @lm, lm_input = 0 : i32, lm_start = 0 : i64} : !nn.tensor<[B, T, 5], f32> -> !nn.tensor<[B, Y], i32>, !nn.tensor<[B], f32>
  nn.return
}

// -----

nn.graph @lm(%y: !nn.tensor<[S], i32>, %h: !nn.tensor<[S, 5], f32>) -> (!nn.tensor<[S, 5], f32>, !nn.tensor<[S, 5], f32>) dims [S: batch] {
  nn.return %h, %h : !nn.tensor<[S, 5], f32>, !nn.tensor<[S, 5], f32>
}
nn.graph @g(%z: !nn.tensor<[B, T, 5], f32>) dims [B: batch, T: seq(B), Y: seq(B) computed] {
  // expected-error @+1 {{lm weight must be finite and at least 0, got -5.000000e-01}}
  %y, %s = nn.ctc_beam_search %z from logits blank 0 beam 2 merge sum lm @lm from logits weight -0.5 start 0 : !nn.tensor<[B, T, 5], f32> -> !nn.tensor<[B, Y], i32>, !nn.tensor<[B], f32>
  nn.return
}

// -----

nn.graph @lm(%y: !nn.tensor<[S], i32>, %h: !nn.tensor<[S, 5], f32>) -> (!nn.tensor<[S, 5], f32>, !nn.tensor<[S, 5], f32>) dims [S: batch] {
  nn.return %h, %h : !nn.tensor<[S, 5], f32>, !nn.tensor<[S, 5], f32>
}
nn.graph @g(%z: !nn.tensor<[B, T, 5], f32>) dims [B: batch, T: seq(B), Y: seq(B) computed] {
  // expected-error @+1 {{lm weight must be finite and at least 0, got INF}}
  %y, %s = nn.ctc_beam_search %z from logits blank 0 beam 2 merge sum lm @lm from logits weight 0x7FF0000000000000 start 0 : !nn.tensor<[B, T, 5], f32> -> !nn.tensor<[B, Y], i32>, !nn.tensor<[B], f32>
  nn.return
}

// -----

nn.graph @lm(%y: !nn.tensor<[S], i32>, %h: !nn.tensor<[S, 5], f32>) -> (!nn.tensor<[S, 5], f32>, !nn.tensor<[S, 5], f32>) dims [S: batch] {
  nn.return %h, %h : !nn.tensor<[S, 5], f32>, !nn.tensor<[S, 5], f32>
}
nn.graph @g(%z: !nn.tensor<[B, T, 5], f32>) dims [B: batch, T: seq(B), Y: seq(B) computed] {
  // expected-error @+1 {{length_bonus must be finite, got nan}}
  %y, %s = nn.ctc_beam_search %z from logits blank 0 beam 2 merge sum lm @lm from logits weight 0.5 start 0 length_bonus 0x7FF8000000000000 : !nn.tensor<[B, T, 5], f32> -> !nn.tensor<[B, Y], i32>, !nn.tensor<[B], f32>
  nn.return
}

// -----

nn.graph @lm(%y: !nn.tensor<[S], i32>, %h: !nn.tensor<[S, 5], f32>) -> (!nn.tensor<[S, 5], f32>, !nn.tensor<[S, 5], f32>) dims [S: batch] {
  nn.return %h, %h : !nn.tensor<[S, 5], f32>, !nn.tensor<[S, 5], f32>
}
nn.graph @g(%z: !nn.tensor<[B, T, 5], f32>) dims [B: batch, T: seq(B), Y: seq(B) computed] {
  // expected-error @+1 {{lm start symbol 5 is not a class in [0, 5)}}
  %y, %s = nn.ctc_beam_search %z from logits blank 0 beam 2 merge sum lm @lm from logits weight 0.5 start 5 : !nn.tensor<[B, T, 5], f32> -> !nn.tensor<[B, Y], i32>, !nn.tensor<[B], f32>
  nn.return
}

// -----

nn.graph @lm(%y: !nn.tensor<[S], i32>, %h: !nn.tensor<[S, 5], f32>) -> (!nn.tensor<[S, 5], f32>, !nn.tensor<[S, 5], f32>) dims [S: batch] {
  nn.return %h, %h : !nn.tensor<[S, 5], f32>, !nn.tensor<[S, 5], f32>
}
nn.graph @g(%z: !nn.tensor<[B, T, 5], f32>) dims [B: batch, T: seq(B), Y: seq(B) computed] {
  // expected-error @+1 {{lm end symbol -1 is not a class in [0, 5)}}
  %y, %s = nn.ctc_beam_search %z from logits blank 0 beam 2 merge sum lm @lm from logits weight 0.5 start 0 end -1 : !nn.tensor<[B, T, 5], f32> -> !nn.tensor<[B, Y], i32>, !nn.tensor<[B], f32>
  nn.return
}

// -----

nn.graph @lm(%y: !nn.tensor<[S], i32>, %h: !nn.tensor<[S, 5], f32>) -> (!nn.tensor<[S, 5], f32>, !nn.tensor<[S, 5], f32>) dims [S: batch] {
  nn.return %h, %h : !nn.tensor<[S, 5], f32>, !nn.tensor<[S, 5], f32>
}
nn.graph @g(%z: !nn.tensor<[B, T, 5], f32>) dims [B: batch, T: seq(B), Y: seq(B) computed] {
  // expected-error @+1 {{lm 'nope' does not name an nn.graph}}
  %y, %s = nn.ctc_beam_search %z from logits blank 0 beam 2 merge sum lm @nope from log_probs weight 0.5 start 0 : !nn.tensor<[B, T, 5], f32> -> !nn.tensor<[B, Y], i32>, !nn.tensor<[B], f32>
  nn.return
}

// -----

nn.graph @lm(%y: !nn.tensor<[S], i32>, %h: !nn.tensor<[S, 5], f32>) -> (!nn.tensor<[S, 5], f32>, !nn.tensor<[S, 5], f32>) dims [S: batch, R: batch] {
  nn.return %h, %h : !nn.tensor<[S, 5], f32>, !nn.tensor<[S, 5], f32>
}
nn.graph @g(%z: !nn.tensor<[B, T, 5], f32>) dims [B: batch, T: seq(B), Y: seq(B) computed] {
  // expected-error @+1 {{lm @lm must declare exactly one dim, a row batch such as 'S: batch'}}
  %y, %s = nn.ctc_beam_search %z from logits blank 0 beam 2 merge sum lm @lm from logits weight 0.5 start 0 : !nn.tensor<[B, T, 5], f32> -> !nn.tensor<[B, Y], i32>, !nn.tensor<[B], f32>
  nn.return
}

// -----

nn.graph @lm(%y: !nn.tensor<[S], i32>, %h: !nn.tensor<[5], f32>) -> !nn.tensor<[S, 5], f32> dims [S: batch] {
  %w = nn.param_ref @emb : !nn.tensor<[5, 5], f32>
  %e = nn.embedding %y, %w : !nn.tensor<[S], i32>, !nn.tensor<[5, 5], f32>
  nn.return %e : !nn.tensor<[S, 5], f32>
}
nn.parameter @emb : !nn.tensor<[5, 5], f32>
nn.graph @g(%z: !nn.tensor<[B, T, 5], f32>) dims [B: batch, T: seq(B), Y: seq(B) computed] {
  // expected-error @+1 {{lm @lm argument 1 must run over the rows [S, ...], got '!nn.tensor<[5], f32>'}}
  %y, %s = nn.ctc_beam_search %z from logits blank 0 beam 2 merge sum lm @lm from logits weight 0.5 start 0 : !nn.tensor<[B, T, 5], f32> -> !nn.tensor<[B, Y], i32>, !nn.tensor<[B], f32>
  nn.return
}

// -----

nn.graph @lm(%h: !nn.tensor<[S, 5], f32>) -> !nn.tensor<[S, 5], f32> dims [S: batch] {
  nn.return %h : !nn.tensor<[S, 5], f32>
}
nn.graph @g(%z: !nn.tensor<[B, T, 5], f32>) dims [B: batch, T: seq(B), Y: seq(B) computed] {
  // expected-error @+1 {{lm @lm must take the row labels '!nn.tensor<[S], i32>' first}}
  %y, %s = nn.ctc_beam_search %z from logits blank 0 beam 2 merge sum lm @lm from logits weight 0.5 start 0 : !nn.tensor<[B, T, 5], f32> -> !nn.tensor<[B, Y], i32>, !nn.tensor<[B], f32>
  nn.return
}

// -----

nn.graph @lm(%y: !nn.tensor<[S], i32>, %h: !nn.tensor<[S, 4], f32>) -> (!nn.tensor<[S, 4], f32>, !nn.tensor<[S, 4], f32>) dims [S: batch] {
  nn.return %h, %h : !nn.tensor<[S, 4], f32>, !nn.tensor<[S, 4], f32>
}
nn.graph @g(%z: !nn.tensor<[B, T, 5], f32>) dims [B: batch, T: seq(B), Y: seq(B) computed] {
  // expected-error @+1 {{lm @lm must return its scores [S, 5] float first (one per class of the scores)}}
  %y, %s = nn.ctc_beam_search %z from logits blank 0 beam 2 merge sum lm @lm from logits weight 0.5 start 0 : !nn.tensor<[B, T, 5], f32> -> !nn.tensor<[B, Y], i32>, !nn.tensor<[B], f32>
  nn.return
}

// -----

nn.graph @lm(%y: !nn.tensor<[S], i32>, %h: !nn.tensor<[S, 5], f32>) -> !nn.tensor<[S, 5], f32> dims [S: batch] {
  nn.return %h : !nn.tensor<[S, 5], f32>
}
nn.graph @g(%z: !nn.tensor<[B, T, 5], f32>) dims [B: batch, T: seq(B), Y: seq(B) computed] {
  // expected-error @+1 {{lm @lm takes 1 state tensors and returns 0; each state comes back with its type}}
  %y, %s = nn.ctc_beam_search %z from logits blank 0 beam 2 merge sum lm @lm from logits weight 0.5 start 0 : !nn.tensor<[B, T, 5], f32> -> !nn.tensor<[B, Y], i32>, !nn.tensor<[B], f32>
  nn.return
}

// -----

nn.parameter @p : !nn.tensor<[6, 5], f32>
nn.graph @lm(%y: !nn.tensor<[S], i32>, %h: !nn.tensor<[S, 5], f32>) -> (!nn.tensor<[S, 5], f32>, !nn.tensor<[S, 6], f32>) dims [S: batch] {
  %p = nn.param_ref @p : !nn.tensor<[6, 5], f32>
  %g = nn.linear %h, %p : !nn.tensor<[S, 5], f32>, !nn.tensor<[6, 5], f32>
  nn.return %h, %g : !nn.tensor<[S, 5], f32>, !nn.tensor<[S, 6], f32>
}
nn.graph @g(%z: !nn.tensor<[B, T, 5], f32>) dims [B: batch, T: seq(B), Y: seq(B) computed] {
  // expected-error @+1 {{lm @lm state 0 must be a float [S, ...] tensor returned with the same type, got '!nn.tensor<[S, 5], f32>' -> '!nn.tensor<[S, 6], f32>'}}
  %y, %s = nn.ctc_beam_search %z from logits blank 0 beam 2 merge sum lm @lm from logits weight 0.5 start 0 : !nn.tensor<[B, T, 5], f32> -> !nn.tensor<[B, Y], i32>, !nn.tensor<[B], f32>
  nn.return
}

// -----

nn.parameter @w : !nn.tensor<[5, 4], f32>
nn.graph @lm(%y: !nn.tensor<[S], i32>, %h: !nn.tensor<[S, 5], f32>) -> !nn.tensor<[S, 5], f32> dims [S: batch] {
  %p = nn.param_ref @w : !nn.tensor<[5, 4], f32>
  %l2 = nn.param_norm %p : !nn.tensor<[5, 4], f32>
  nn.mark_loss %l2 as "l2" normalize sum : !nn.tensor<[], f32>
  nn.return %h : !nn.tensor<[S, 5], f32>
}
nn.graph @g(%z: !nn.tensor<[B, T, 5], f32>) dims [B: batch, T: seq(B), Y: seq(B) computed] {
  // expected-error @+1 {{lm @lm marks a loss; a decoder's callee computes scores only}}
  %y, %s = nn.ctc_beam_search %z from logits blank 0 beam 2 merge sum lm @lm from logits weight 0.5 start 0 : !nn.tensor<[B, T, 5], f32> -> !nn.tensor<[B, Y], i32>, !nn.tensor<[B], f32>
  nn.return
}
