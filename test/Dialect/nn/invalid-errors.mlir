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

nn.graph @g(%h: !nn.tensor<[B, Y], i32>, %r: !nn.tensor<[B, U], i32>) dims [B: batch, Y: seq(B), U: seq(B)] {
  // expected-error @+1 {{words separator must be a label (>= 0), got -1}}
  %e, %n, %c = nn.edit_distance %h, %r words separator -1 : !nn.tensor<[B, Y], i32>, !nn.tensor<[B, U], i32>
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

// -----

// nn.expected_risk and nn.expected_risk_grad.
nn.graph @g(%l: !nn.tensor<[B, K, 2], f32>, %e: !nn.tensor<[B, K], f32>) dims [B: batch, K: seq(B)] {
  // expected-error @+1 {{nll must be padded [batch, hypotheses] values, got '!nn.tensor<[B, K, 2], f32>'}}
  %r = nn.expected_risk %l, %e baseline mean : !nn.tensor<[B, K, 2], f32>, !nn.tensor<[B, K], f32>
  nn.return
}

// -----

nn.graph @g(%l: !nn.tensor<[B], f32>, %e: !nn.tensor<[B, K], f32>) dims [B: batch, K: seq(B)] {
  // expected-error @+1 {{nll must be padded [batch, hypotheses] values, got '!nn.tensor<[B], f32>'}}
  %r = nn.expected_risk %l, %e baseline mean : !nn.tensor<[B], f32>, !nn.tensor<[B, K], f32>
  nn.return
}

// -----

nn.graph @g(%l: !nn.tensor<[], f32>, %e: !nn.tensor<[B, K], f32>) dims [B: batch, K: seq(B)] {
  // expected-error @+1 {{nll must be [B, K], got '!nn.tensor<[], f32>'}}
  %r = nn.expected_risk %l, %e baseline mean : !nn.tensor<[], f32>, !nn.tensor<[B, K], f32>
  nn.return
}

// -----

nn.graph @g(%l: !nn.tensor<[B, K], f32>, %e: !nn.tensor<[B, K, 1], f32>) dims [B: batch, K: seq(B)] {
  // expected-error @+1 {{err must be padded [batch, hypotheses] values, got '!nn.tensor<[B, K, 1], f32>'}}
  %r = nn.expected_risk %l, %e baseline mean : !nn.tensor<[B, K], f32>, !nn.tensor<[B, K, 1], f32>
  nn.return
}

// -----

nn.graph @g(%l: !nn.tensor<[B, K, J], f32>, %e: !nn.tensor<[B, K, J], f32>) dims [B: batch, K: seq(B), J: seq(B)] {
  // expected-error @+1 {{nll must be padded [batch, hypotheses] values, got '!nn.tensor<[B, K, J], f32>'}}
  %r = nn.expected_risk %l, %e baseline mean : !nn.tensor<[B, K, J], f32>, !nn.tensor<[B, K, J], f32>
  nn.return
}

// -----

nn.graph @g(%l: !nn.tensor<[N], f32>, %e: !nn.tensor<[B, K], f32>) dims [B: batch, K: seq(B), N: packed(B, K)] {
  // expected-error @+1 {{nll must be padded [batch, hypotheses] values (packed values are not accepted), got '!nn.tensor<[N], f32>'}}
  %r = nn.expected_risk %l, %e baseline mean : !nn.tensor<[N], f32>, !nn.tensor<[B, K], f32>
  nn.return
}

// -----

nn.graph @g(%l: !nn.tensor<[B, K], f32>, %e: !nn.tensor<[N], f32>) dims [B: batch, K: seq(B), N: packed(B, K)] {
  // expected-error @+1 {{err must be padded [batch, hypotheses] values (packed values are not accepted), got '!nn.tensor<[N], f32>'}}
  %r = nn.expected_risk %l, %e baseline mean : !nn.tensor<[B, K], f32>, !nn.tensor<[N], f32>
  nn.return
}

// -----

nn.graph @g(%l: !nn.tensor<[B, K], f32>, %e: !nn.tensor<[B, J], f32>) dims [B: batch, K: seq(B), J: seq(B)] {
  // expected-error @+1 {{err must be over the dims of nll [B, K], got [B, J]}}
  %r = nn.expected_risk %l, %e baseline mean : !nn.tensor<[B, K], f32>, !nn.tensor<[B, J], f32>
  nn.return
}

// -----

nn.graph @g(%l: !nn.tensor<[B, K], f32>, %e: !nn.tensor<[C, J], f32>) dims [B: batch, K: seq(B), C: batch, J: seq(C)] {
  // expected-error @+1 {{err must be over the dims of nll [B, K], got [C, J]}}
  %r = nn.expected_risk %l, %e baseline mean : !nn.tensor<[B, K], f32>, !nn.tensor<[C, J], f32>
  nn.return
}

// -----

nn.graph @g(%l: !nn.tensor<[B, K], f32>, %e: !nn.tensor<[B, K], f64>) dims [B: batch, K: seq(B)] {
  // expected-error @+1 {{err element type 'f64' differs from the nll element type 'f32'}}
  %r = nn.expected_risk %l, %e baseline mean : !nn.tensor<[B, K], f32>, !nn.tensor<[B, K], f64>
  nn.return
}

// -----

nn.graph @g(%l: !nn.tensor<[B, K], i32>, %e: !nn.tensor<[B, K], i32>) dims [B: batch, K: seq(B)] {
  // expected-error @+1 {{operand #0 must be nn tensor of floats, but got '!nn.tensor<[B, K], i32>'}}
  %r = nn.expected_risk %l, %e baseline mean : !nn.tensor<[B, K], i32>, !nn.tensor<[B, K], i32>
  nn.return
}

// -----

nn.graph @g(%l: !nn.tensor<[B, K], f32>, %e: !nn.tensor<[B, K], f32>) dims [B: batch, K: seq(B)] {
  // expected-error @+1 {{expected string or keyword containing one of the following enum values for attribute 'baseline' [mean, none]}}
  %r = nn.expected_risk %l, %e baseline max : !nn.tensor<[B, K], f32>, !nn.tensor<[B, K], f32>
  nn.return
}

// -----

nn.graph @g(%l: !nn.tensor<[B, K], f32>, %e: !nn.tensor<[B, K], f32>) dims [B: batch, K: seq(B)] {
  // expected-error @+1 {{expected 'baseline'}}
  %r = nn.expected_risk %l, %e : !nn.tensor<[B, K], f32>, !nn.tensor<[B, K], f32>
  nn.return
}

// -----

// Result type, in the generic form.
nn.graph @g(%l: !nn.tensor<[B, K], f32>, %e: !nn.tensor<[B, K], f32>) dims [B: batch, K: seq(B)] {
  // expected-error @+1 {{result must be '!nn.tensor<[B], f32>', got '!nn.tensor<[B], f64>'}}
  %r = "nn.expected_risk"(%l, %e) <{baseline = 0 : i32}> : (!nn.tensor<[B, K], f32>, !nn.tensor<[B, K], f32>) -> !nn.tensor<[B], f64>
  nn.return
}

// -----

nn.graph @g(%g: !nn.tensor<[B], f64>, %l: !nn.tensor<[B, K], f32>, %e: !nn.tensor<[B, K], f32>) dims [B: batch, K: seq(B)] {
  // expected-error @+1 {{grad must be the loss's type '!nn.tensor<[B], f32>', got '!nn.tensor<[B], f64>'}}
  %d = nn.expected_risk_grad %g, %l, %e : !nn.tensor<[B], f64>, !nn.tensor<[B, K], f32>, !nn.tensor<[B, K], f32>
  nn.return
}

// -----

nn.graph @g(%g: !nn.tensor<[B], f32>, %l: !nn.tensor<[B, K], f32>, %e: !nn.tensor<[B, J], f32>) dims [B: batch, K: seq(B), J: seq(B)] {
  // expected-error @+1 {{err must be over the dims of nll [B, K], got [B, J]}}
  %d = nn.expected_risk_grad %g, %l, %e : !nn.tensor<[B], f32>, !nn.tensor<[B, K], f32>, !nn.tensor<[B, J], f32>
  nn.return
}

// -----

nn.graph @g(%g: !nn.tensor<[B], f32>, %l: !nn.tensor<[N], f32>, %e: !nn.tensor<[N], f32>) dims [B: batch, K: seq(B), N: packed(B, K)] {
  // expected-error @+1 {{nll must be padded [batch, hypotheses] values (packed values are not accepted), got '!nn.tensor<[N], f32>'}}
  %d = nn.expected_risk_grad %g, %l, %e : !nn.tensor<[B], f32>, !nn.tensor<[N], f32>, !nn.tensor<[N], f32>
  nn.return
}

// -----

nn.graph @g(%g: !nn.tensor<[B], f32>, %l: !nn.tensor<[B, K], f32>, %e: !nn.tensor<[B, K], f32>) dims [B: batch, K: seq(B)] {
  // expected-error @+1 {{failed to verify that all of {nll, result} have same type}}
  %d = "nn.expected_risk_grad"(%g, %l, %e) : (!nn.tensor<[B], f32>, !nn.tensor<[B, K], f32>, !nn.tensor<[B, K], f32>) -> !nn.tensor<[B, K], f64>
  nn.return
}
