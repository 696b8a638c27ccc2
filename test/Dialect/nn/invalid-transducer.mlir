// Verifier errors of the transducer ops: one case per verifier branch.
// RUN: nn-opt %s --split-input-file --verify-diagnostics

nn.graph @g(%y: !nn.tensor<[B, U], i32>) dims [B: batch, U: seq(B), V: seq(B), U1: seq(B) = U + 1] {
  // expected-error @+1 {{result axis 'V' must be declared 'seq(...) = U + 1' (the start symbol, then the labels) (did you mean 'U1'?)}}
  %s = nn.prepend_start %y start 0 : !nn.tensor<[B, U], i32> -> !nn.tensor<[B, V], i32>
  nn.return
}

// -----

nn.graph @g(%y: !nn.tensor<[B, U], i32>) dims [B: batch, U: seq(B), U1: seq(B) = U + 1] {
  // expected-error @+1 {{'nn.prepend_start' op start -1 is not a class index (negative)}}
  %s = nn.prepend_start %y start -1 : !nn.tensor<[B, U], i32> -> !nn.tensor<[B, U1], i32>
  nn.return
}

// -----

nn.graph @g(%e: !nn.tensor<[B, T, 4], f32>, %p: !nn.tensor<[B, U1, 4], f32>) dims [B: batch, T: seq(B), U: seq(B), U1: seq(B) = U + 1, J: packed(B, T, U1), N: packed(B, T)] {
  // expected-error @+1 {{result must be packed [J, 4] with J declared 'packed(B, T, U1)' ('J') or padded '!nn.tensor<[B, T, U1, 4], f32>', got '!nn.tensor<[N, 4], f32>'}}
  %j = nn.transducer_join %e, %p : !nn.tensor<[B, T, 4], f32>, !nn.tensor<[B, U1, 4], f32> -> !nn.tensor<[N, 4], f32>
  nn.return
}

// -----

nn.graph @g(%e: !nn.tensor<[N, 4], f32>, %p: !nn.tensor<[B, U1, 4], f32>) dims [B: batch, T: seq(B), U: seq(B), U1: seq(B) = U + 1, J: packed(B, T, U1), N: packed(B, T)] {
  // expected-error @+1 {{result must be packed [J, 4] with J declared 'packed(B, T, U1)' ('J') (packed operands need the packed grid), got '!nn.tensor<[B, T, U1, 4], f32>'}}
  %j = nn.transducer_join %e, %p : !nn.tensor<[N, 4], f32>, !nn.tensor<[B, U1, 4], f32> -> !nn.tensor<[B, T, U1, 4], f32>
  nn.return
}

// -----

nn.graph @g(%g: !nn.tensor<[B, T, U1, 4], f32>) dims [B: batch, T: seq(B), U: seq(B), U1: seq(B) = U + 1, J: packed(B, T, U1), N: packed(B, T)] {
  // expected-error @+1 {{grad must be packed [J, 4] with J declared 'packed(B, T, U1)' ('J') (packed operands need the packed grid), got '!nn.tensor<[B, T, U1, 4], f32>'}}
  %de, %dp = nn.transducer_join_grad %g : !nn.tensor<[B, T, U1, 4], f32> -> !nn.tensor<[N, 4], f32>, !nn.tensor<[B, U1, 4], f32>
  nn.return
}

// -----

nn.graph @g(%e: !nn.tensor<[N, 4], f32>, %p: !nn.tensor<[B, U1, 4], f32>) dims [B: batch, T: seq(B), U: seq(B), U1: seq(B) = U + 1, N: packed(B, T)] {
  // expected-error @+1 {{result must be packed [J, 4] with J declared 'packed(B, T, U1)' (packed operands need the packed grid), got '!nn.tensor<[B, T, U1, 4], f32>'}}
  %j = nn.transducer_join %e, %p : !nn.tensor<[N, 4], f32>, !nn.tensor<[B, U1, 4], f32> -> !nn.tensor<[B, T, U1, 4], f32>
  nn.return
}

// -----

nn.graph @g(%e: !nn.tensor<[J, 4], f32>, %p: !nn.tensor<[B, U1, 4], f32>) dims [B: batch, T: seq(B), U: seq(B), U1: seq(B) = U + 1, J: packed(B, T, U1)] {
  // expected-error @+1 {{encoder must be}}
  %j = nn.transducer_join %e, %p : !nn.tensor<[J, 4], f32>, !nn.tensor<[B, U1, 4], f32> -> !nn.tensor<[J, 4], f32>
  nn.return
}

// -----

nn.graph @g(%e: !nn.tensor<[B, T, 4], f32>, %p: !nn.tensor<[B, T, 4], f32>) dims [B: batch, T: seq(B)] {
  // expected-error @+1 {{prediction must be over a second sequence dim of the encoder's batch 'B', got '!nn.tensor<[B, T, 4], f32>'}}
  %j = nn.transducer_join %e, %p : !nn.tensor<[B, T, 4], f32>, !nn.tensor<[B, T, 4], f32> -> !nn.tensor<[B, T, 4], f32>
  nn.return
}

// -----

nn.graph @g(%j: !nn.tensor<[B, T, U, 4], f32>, %y: !nn.tensor<[B, U], i32>) dims [B: batch, T: seq(B), U: seq(B), U1: seq(B) = U + 1] {
  // expected-error @+1 {{the joint's label axis 'U' must be declared 'seq(...) = U + 1' (the start symbol, then the labels) (did you mean 'U1'?)}}
  %l = nn.transducer_loss %j, %y from logits topology rnnt blank 0 : !nn.tensor<[B, T, U, 4], f32>, !nn.tensor<[B, U], i32>
  nn.return
}

// -----

nn.graph @g(%j: !nn.tensor<[B, T, 4], f32>, %y: !nn.tensor<[B, U], i32>) dims [B: batch, T: seq(B), U: seq(B)] {
  // expected-error @+1 {{joint must be over the (frame, label + 1) grid: packed [J, V] with J declared 'packed(B, T, U1)', or padded [B, T, U1, V]; got '!nn.tensor<[B, T, 4], f32>'}}
  %l = nn.transducer_loss %j, %y from logits topology rna blank 0 : !nn.tensor<[B, T, 4], f32>, !nn.tensor<[B, U], i32>
  nn.return
}

// -----

nn.graph @g(%j: !nn.tensor<[B, T, U1, 4], f32>, %y: !nn.tensor<[B, U], i32>) dims [B: batch, T: seq(B), U: seq(B), U1: seq(B) = U + 1] {
  // expected-error @+1 {{blank 4 is not a class in [0, 4)}}
  %l = nn.transducer_loss %j, %y from logits topology rna blank 4 : !nn.tensor<[B, T, U1, 4], f32>, !nn.tensor<[B, U], i32>
  nn.return
}

// -----

nn.graph @g(%s: !nn.tensor<[B, T, 4], f32>, %a: !nn.tensor<[B, T], i32>) dims [B: batch, T: seq(B)] {
  // expected-error @+1 {{alignment must be integer [B, T] over a frame dim other than the states' 'T', got '!nn.tensor<[B, T], i32>'}}
  %x = nn.gather_states %s, %a blank 0 : !nn.tensor<[B, T, 4], f32>, !nn.tensor<[B, T], i32> -> !nn.tensor<[B, T, 4], f32>
  nn.return
}

// -----

nn.graph @g(%s: !nn.tensor<[B, U1, 4], f32>, %a: !nn.tensor<[B, T], i32>) dims [B: batch, T: seq(B), U: seq(B), U1: seq(B) = U + 1] {
  // expected-error @+1 {{gathered states must be '!nn.tensor<[B, T, 4], f32>', got '!nn.tensor<[B, T, 3], f32>'}}
  %x = nn.gather_states %s, %a blank 0 : !nn.tensor<[B, U1, 4], f32>, !nn.tensor<[B, T], i32> -> !nn.tensor<[B, T, 3], f32>
  nn.return
}
