// Verifier errors of the alignment ops: one case per verifier branch.
// RUN: nn-opt %s --split-input-file --verify-diagnostics

nn.graph @g(%l: !nn.tensor<[B, T, 5], f32>, %y: !nn.tensor<[B, U], i32>) dims [B: batch, T: seq(B), U: seq(B)] {
  // expected-error @+1 {{blank 7 is not a class in [0, 5)}}
  %a, %s = nn.viterbi_align %l, %y from log_probs topology rna blank 7 : !nn.tensor<[B, T, 5], f32>, !nn.tensor<[B, U], i32>
  nn.return
}

// -----

nn.graph @g(%l: !nn.tensor<[B, 5], f32>, %y: !nn.tensor<[B, U], i32>) dims [B: batch, U: seq(B)] {
  // expected-error @+1 {{scores must be the frames of one sequence dim, padded [batch, sequence, ...] or packed [packed(batch, sequence), ...], got '!nn.tensor<[B, 5], f32>'}}
  %a, %s = "nn.viterbi_align"(%l, %y) {input_kind = 1 : i32, topology = 0 : i32, blank = 0} : (!nn.tensor<[B, 5], f32>, !nn.tensor<[B, U], i32>) -> (!nn.tensor<[B], i32>, !nn.tensor<[B], f32>)
  nn.return
}

// -----

nn.graph @g(%l: !nn.tensor<[N, 5], f32>, %y: !nn.tensor<[C, U], i32>) dims [B: batch, T: seq(B), C: batch, U: seq(C), N: packed(B, T)] {
  // expected-error @+1 {{labels batch 'C' differs from the scores batch 'B'}}
  %a, %s = nn.viterbi_align %l, %y from log_probs topology ctc blank 0 : !nn.tensor<[N, 5], f32>, !nn.tensor<[C, U], i32>
  nn.return
}

// -----

nn.graph @g(%l: !nn.tensor<[B, T, 5], f32>, %y: !nn.tensor<[B, U], i32>) dims [B: batch, T: seq(B), U: seq(B)] {
  // expected-error @+1 {{alignment must be '!nn.tensor<[B, T], i32>', got '!nn.tensor<[B, T], f32>'}}
  %a, %s = "nn.viterbi_align"(%l, %y) {input_kind = 1 : i32, topology = 0 : i32, blank = 0} : (!nn.tensor<[B, T, 5], f32>, !nn.tensor<[B, U], i32>) -> (!nn.tensor<[B, T], f32>, !nn.tensor<[B], f32>)
  nn.return
}

// -----

nn.parameter @prior : !nn.tensor<[4], f32>
nn.graph @g(%l: !nn.tensor<[B, T, 5], f32>, %y: !nn.tensor<[B, U], i32>) dims [B: batch, T: seq(B), U: seq(B)] {
  %p = nn.param_ref @prior : !nn.tensor<[4], f32>
  // expected-error @+1 {{prior must be '!nn.tensor<[5], f32>' (one value per class), got '!nn.tensor<[4], f32>'}}
  %a, %s = nn.viterbi_align %l, %y from logits topology ctc blank 0 prior %p : !nn.tensor<[B, T, 5], f32>, !nn.tensor<[B, U], i32>, !nn.tensor<[4], f32>
  nn.return
}

// -----

nn.graph @g(%l: !nn.tensor<[B, T, 5], f32>, %y: !nn.tensor<[B, U], i32>) dims [B: batch, T: seq(B), U: seq(B)] {
  // expected-error @+1 {{score must be '!nn.tensor<[B], f32>', got '!nn.tensor<[B, T], f32>'}}
  %a, %s = "nn.viterbi_align"(%l, %y) {input_kind = 1 : i32, topology = 0 : i32, blank = 0} : (!nn.tensor<[B, T, 5], f32>, !nn.tensor<[B, U], i32>) -> (!nn.tensor<[B, T], i32>, !nn.tensor<[B, T], f32>)
  nn.return
}

// -----

nn.graph @g(%j: !nn.tensor<[J, 4], f32>, %y: !nn.tensor<[B, U], i32>) dims [B: batch, T: seq(B), U: seq(B), U1: seq(B) = U + 1, J: packed(B, T, U1)] {
  // expected-error @+1 {{an rnnt alignment is [B, A] i32 over a computed sequence dim A of its emissions (T + U per sequence; declare 'A: seq(B) computed'), got '!nn.tensor<[B, T], i32>'}}
  %a, %s = nn.transducer_align %j, %y from logits topology rnnt blank 0 : !nn.tensor<[J, 4], f32>, !nn.tensor<[B, U], i32> -> !nn.tensor<[B, T], i32>, !nn.tensor<[B], f32>
  nn.return
}

// -----

nn.graph @g(%j: !nn.tensor<[J, 4], f32>, %y: !nn.tensor<[B, U], i32>) -> !nn.tensor<[B, A], i64> dims [B: batch, T: seq(B), U: seq(B), U1: seq(B) = U + 1, J: packed(B, T, U1), A: seq(B) computed] {
  // expected-error @+1 {{an rnnt alignment is [B, A] i32 over a computed sequence dim A of its emissions}}
  %a, %s = nn.transducer_align %j, %y from logits topology rnnt blank 0 : !nn.tensor<[J, 4], f32>, !nn.tensor<[B, U], i32> -> !nn.tensor<[B, A], i64>, !nn.tensor<[B], f32>
  nn.return %a : !nn.tensor<[B, A], i64>
}

// -----

nn.graph @g(%j: !nn.tensor<[J, 4], f32>, %y: !nn.tensor<[B, U], i32>) dims [B: batch, T: seq(B), U: seq(B), U1: seq(B) = U + 1, J: packed(B, T, U1)] {
  // expected-error @+1 {{alignment must be '!nn.tensor<[B, T], i32>' (a class per frame), got '!nn.tensor<[B, U1], i32>'}}
  %a, %s = nn.transducer_align %j, %y from logits topology rna blank 0 : !nn.tensor<[J, 4], f32>, !nn.tensor<[B, U], i32> -> !nn.tensor<[B, U1], i32>, !nn.tensor<[B], f32>
  nn.return
}

// -----

nn.graph @g(%j: !nn.tensor<[B, T, U1, 4], f32>, %y: !nn.tensor<[B, U], i32>) dims [B: batch, T: seq(B), U: seq(B), U1: seq(B) = U + 1] {
  // expected-error @+1 {{score must be '!nn.tensor<[B], f32>', got '!nn.tensor<[B], f64>'}}
  %a, %s = nn.transducer_align %j, %y from log_probs topology rna blank 0 : !nn.tensor<[B, T, U1, 4], f32>, !nn.tensor<[B, U], i32> -> !nn.tensor<[B, T], i32>, !nn.tensor<[B], f64>
  nn.return
}

// -----

nn.graph @g(%j: !nn.tensor<[B, T, 4], f32>, %y: !nn.tensor<[B, U], i32>) dims [B: batch, T: seq(B), U: seq(B)] {
  // expected-error @+1 {{joint must be over the (frame, label + 1) grid}}
  %a, %s = nn.transducer_align %j, %y from logits topology rna blank 0 : !nn.tensor<[B, T, 4], f32>, !nn.tensor<[B, U], i32> -> !nn.tensor<[B, T], i32>, !nn.tensor<[B], f32>
  nn.return
}
