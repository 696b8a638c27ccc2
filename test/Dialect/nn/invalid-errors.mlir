// Verifier errors of nn.edit_distance and of marking its results, and of
// eval_only: one case per verifier branch.
// RUN: nn-opt %s --split-input-file --verify-diagnostics

nn.graph @g(%h: !nn.tensor<[B, Y], f32>, %r: !nn.tensor<[B, U], i32>) dims [B: batch, Y: seq(B), U: seq(B)] {
  // expected-error @+1 {{hyp must be padded i32 labels [batch, sequence], got '!nn.tensor<[B, Y], f32>'}}
  %e, %n, %c = nn.edit_distance %h, %r : !nn.tensor<[B, Y], f32>, !nn.tensor<[B, U], i32>
  nn.return
}

// -----

nn.graph @g(%h: !nn.tensor<[B, Y], i32>, %r: !nn.tensor<[B, U], i64>) dims [B: batch, Y: seq(B), U: seq(B)] {
  // expected-error @+1 {{ref must be padded i32 labels [batch, sequence], got '!nn.tensor<[B, U], i64>'}}
  %e, %n, %c = nn.edit_distance %h, %r : !nn.tensor<[B, Y], i32>, !nn.tensor<[B, U], i64>
  nn.return
}

// -----

nn.graph @g(%h: !nn.tensor<[B, Y], i32>, %r: !nn.tensor<[C, V], i32>) dims [B: batch, Y: seq(B), C: batch, V: seq(C)] {
  // expected-error @+1 {{ref batch 'C' differs from the hyp batch 'B'}}
  %e, %n, %c = nn.edit_distance %h, %r : !nn.tensor<[B, Y], i32>, !nn.tensor<[C, V], i32>
  nn.return
}

// -----

nn.graph @g(%h: !nn.tensor<[N], i32>, %r: !nn.tensor<[B, U], i32>) dims [B: batch, Y: seq(B), U: seq(B), N: packed(B, Y)] {
  // expected-error @+1 {{hyp must be padded i32 labels [batch, sequence] (packed labels are not accepted), got '!nn.tensor<[N], i32>'}}
  %e, %n, %c = nn.edit_distance %h, %r : !nn.tensor<[N], i32>, !nn.tensor<[B, U], i32>
  nn.return
}

// -----

nn.graph @g(%h: !nn.tensor<[B, Y], i32>, %r: !nn.tensor<[N], i32>) dims [B: batch, Y: seq(B), U: seq(B), N: packed(B, U)] {
  // expected-error @+1 {{ref must be padded i32 labels [batch, sequence] (packed labels are not accepted), got '!nn.tensor<[N], i32>'}}
  %e, %n, %c = nn.edit_distance %h, %r : !nn.tensor<[B, Y], i32>, !nn.tensor<[N], i32>
  nn.return
}

// -----

nn.graph @g(%h: !nn.tensor<[B, Y, 2], i32>, %r: !nn.tensor<[B, U], i32>) dims [B: batch, Y: seq(B), U: seq(B)] {
  // expected-error @+1 {{hyp must be padded i32 labels [batch, sequence], got '!nn.tensor<[B, Y, 2], i32>'}}
  %e, %n, %c = nn.edit_distance %h, %r : !nn.tensor<[B, Y, 2], i32>, !nn.tensor<[B, U], i32>
  nn.return
}

// -----

nn.graph @g(%h: !nn.tensor<[B, Y], i32>, %r: !nn.tensor<[B, Y, U], i32>) dims [B: batch, Y: seq(B), U: seq(B)] {
  // expected-error @+1 {{ref must be padded i32 labels [batch, sequence], got '!nn.tensor<[B, Y, U], i32>'}}
  %e, %n, %c = nn.edit_distance %h, %r : !nn.tensor<[B, Y], i32>, !nn.tensor<[B, Y, U], i32>
  nn.return
}

// -----

nn.graph @g(%h: !nn.tensor<[B], i32>, %r: !nn.tensor<[B, U], i32>) dims [B: batch, U: seq(B)] {
  // expected-error @+1 {{hyp must be padded i32 labels [batch, sequence], got '!nn.tensor<[B], i32>'}}
  %e, %n, %c = nn.edit_distance %h, %r : !nn.tensor<[B], i32>, !nn.tensor<[B, U], i32>
  nn.return
}

// -----

nn.graph @g(%h: !nn.tensor<[], i32>, %r: !nn.tensor<[B, U], i32>) dims [B: batch, U: seq(B)] {
  // expected-error @+1 {{hyp must be [B, Y], got '!nn.tensor<[], i32>'}}
  %e, %n, %c = nn.edit_distance %h, %r : !nn.tensor<[], i32>, !nn.tensor<[B, U], i32>
  nn.return
}

// -----

// Result types, in the generic form.
nn.graph @g(%h: !nn.tensor<[B, Y], i32>, %r: !nn.tensor<[B, U], i32>) dims [B: batch, Y: seq(B), U: seq(B)] {
  // expected-error @+1 {{errors must be '!nn.tensor<[B], f32>', got '!nn.tensor<[B], f64>'}}
  %e:3 = "nn.edit_distance"(%h, %r) : (!nn.tensor<[B, Y], i32>, !nn.tensor<[B, U], i32>) -> (!nn.tensor<[B], f64>, !nn.tensor<[B], f32>, !nn.tensor<[B, 3], i32>)
  nn.return
}

// -----

nn.graph @g(%h: !nn.tensor<[B, Y], i32>, %r: !nn.tensor<[B, U], i32>) dims [B: batch, Y: seq(B), U: seq(B)] {
  // expected-error @+1 {{ref_lengths must be '!nn.tensor<[B], f32>', got '!nn.tensor<[B], i32>'}}
  %e:3 = "nn.edit_distance"(%h, %r) : (!nn.tensor<[B, Y], i32>, !nn.tensor<[B, U], i32>) -> (!nn.tensor<[B], f32>, !nn.tensor<[B], i32>, !nn.tensor<[B, 3], i32>)
  nn.return
}

// -----

nn.graph @g(%h: !nn.tensor<[B, Y], i32>, %r: !nn.tensor<[B, U], i32>) dims [B: batch, Y: seq(B), U: seq(B)] {
  // expected-error @+1 {{counts must be '!nn.tensor<[B, 3], i32>', got '!nn.tensor<[B, U], i32>'}}
  %e:3 = "nn.edit_distance"(%h, %r) : (!nn.tensor<[B, Y], i32>, !nn.tensor<[B, U], i32>) -> (!nn.tensor<[B], f32>, !nn.tensor<[B], f32>, !nn.tensor<[B, U], i32>)
  nn.return
}

// -----

// Only the errors are a loss value.
nn.graph @g(%h: !nn.tensor<[B, Y], i32>, %r: !nn.tensor<[B, U], i32>) dims [B: batch, Y: seq(B), U: seq(B)] {
  %e, %n, %c = nn.edit_distance %h, %r : !nn.tensor<[B, Y], i32>, !nn.tensor<[B, U], i32>
  // expected-error @+1 {{marks result #1 of 'nn.edit_distance', which is not its loss value (result #0)}}
  nn.mark_loss %n as "lengths" normalize sum as_error : !nn.tensor<[B], f32>
  nn.return
}

// -----

nn.graph @g(%h: !nn.tensor<[B, Y], i32>, %r: !nn.tensor<[B, U], i32>) dims [B: batch, Y: seq(B), U: seq(B)] {
  %e, %n, %c = nn.edit_distance %h, %r : !nn.tensor<[B, Y], i32>, !nn.tensor<[B, U], i32>
  // expected-error @+1 {{eval_only needs as_error: 'ler' is left out of train steps, so it cannot be trained}}
  nn.mark_loss %e, %n as "ler" normalize custom eval_only : !nn.tensor<[B], f32>, !nn.tensor<[B], f32>
  nn.return
}
