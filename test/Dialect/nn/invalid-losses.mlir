// Verifier errors of the losses and nn.mark_loss: one case per verifier branch.
// RUN: nn-opt %s --split-input-file --verify-diagnostics

nn.graph @g(%l: !nn.tensor<[B, T, 4], f32>, %t: !nn.tensor<[B, T], i32>) dims [B: batch, T: seq(B)] {
  %a = nn.cross_entropy %l, %t from logits : !nn.tensor<[B, T, 4], f32>, !nn.tensor<[B, T], i32>
  // expected-note @+1 {{first use here}}
  nn.mark_loss %a as "ce" normalize per_frame : !nn.tensor<[B, T], f32>
  // expected-error @+1 {{loss name 'ce' is used twice in graph @g}}
  nn.mark_loss %a as "ce" normalize sum : !nn.tensor<[B, T], f32>
  nn.return
}

// -----

nn.graph @g(%l: !nn.tensor<[B, T, 5], f32>, %t: !nn.tensor<[B, T], i32>) dims [B: batch, T: seq(B), U: seq(B), N: packed(B, T)] {
  // expected-error @+1 {{attribute 'label_smoothing' failed to satisfy constraint: 64-bit float attribute in [0, 1)}}
  %ce = nn.cross_entropy %l, %t from logits label_smoothing 1.0 : !nn.tensor<[B, T, 5], f32>, !nn.tensor<[B, T], i32>
  nn.return
}

// -----

nn.graph @g(%l: !nn.tensor<[B, T, 1], f32>, %t: !nn.tensor<[B, T], i32>) dims [B: batch, T: seq(B), U: seq(B), N: packed(B, T)] {
  // expected-error @+1 {{label smoothing needs at least 2 classes}}
  %ce = nn.cross_entropy %l, %t from logits label_smoothing 0.1 : !nn.tensor<[B, T, 1], f32>, !nn.tensor<[B, T], i32>
  nn.return
}

// -----

nn.graph @g(%l: !nn.tensor<[B, T, 5], f32>, %t: !nn.tensor<[B, U], i32>) dims [B: batch, T: seq(B), U: seq(B), N: packed(B, T)] {
  // expected-error @+1 {{targets [B, U] must be on the positions of the logits [B, T] (same batch and sequence dims)}}
  %ce = nn.cross_entropy %l, %t from logits : !nn.tensor<[B, T, 5], f32>, !nn.tensor<[B, U], i32>
  nn.return
}

// -----

nn.graph @g(%l: !nn.tensor<[N, 5], f32>, %t: !nn.tensor<[B, T], i32>) dims [B: batch, T: seq(B), U: seq(B), N: packed(B, T)] {
  // expected-error @+1 {{targets [B, T] must be on the positions of the logits [N] (same batch and sequence dims)}}
  %ce = nn.cross_entropy %l, %t from logits : !nn.tensor<[N, 5], f32>, !nn.tensor<[B, T], i32>
  nn.return
}

// -----

nn.graph @g(%l: !nn.tensor<[B, T, 5], f32>, %t: !nn.tensor<[B, T], f32>) dims [B: batch, T: seq(B), U: seq(B), N: packed(B, T)] {
  // expected-error @+1 {{operand #1 must be nn tensor of integers, but got '!nn.tensor<[B, T], f32>'}}
  %ce = nn.cross_entropy %l, %t from logits : !nn.tensor<[B, T, 5], f32>, !nn.tensor<[B, T], f32>
  nn.return
}

// -----

nn.graph @g(%l: !nn.tensor<[B, T, 5], f32>, %t: !nn.tensor<[B, T], i32>) dims [B: batch, T: seq(B), U: seq(B), N: packed(B, T)] {
  // expected-error @+1 {{result must be '!nn.tensor<[B, T], f32>', got '!nn.tensor<[B], f32>'}}
  %ce = "nn.cross_entropy"(%l, %t) <{input_kind = 0 : i32}> : (!nn.tensor<[B, T, 5], f32>, !nn.tensor<[B, T], i32>) -> !nn.tensor<[B], f32>
  nn.return
}

// -----

nn.graph @g(%p: !nn.tensor<[B, T, 5], f32>, %t: !nn.tensor<[B, T, 4], f32>) dims [B: batch, T: seq(B), U: seq(B), N: packed(B, T)] {
  // expected-error @+1 {{target type '!nn.tensor<[B, T, 4], f32>' must equal the prediction type '!nn.tensor<[B, T, 5], f32>'}}
  %e = nn.mse %p, %t : !nn.tensor<[B, T, 5], f32>, !nn.tensor<[B, T, 4], f32>
  nn.return
}

// -----

nn.graph @g(%l: !nn.tensor<[B, T, 5], f32>, %y: !nn.tensor<[B], i32>) dims [B: batch, T: seq(B), U: seq(B), C: batch, V: seq(C), N: packed(B, T)] {
  // expected-error @+1 {{labels must be [batch, label sequence], got '!nn.tensor<[B], i32>'}}
  %c = nn.ctc_loss %l, %y from logits blank 0 : !nn.tensor<[B, T, 5], f32>, !nn.tensor<[B], i32>
  nn.return
}

// -----

nn.graph @g(%l: !nn.tensor<[B, T, 5], f32>, %y: !nn.tensor<[C, V], i32>) dims [B: batch, T: seq(B), U: seq(B), C: batch, V: seq(C), N: packed(B, T)] {
  // expected-error @+1 {{labels batch 'C' differs from the logits batch 'B'}}
  %c = nn.ctc_loss %l, %y from logits blank 0 : !nn.tensor<[B, T, 5], f32>, !nn.tensor<[C, V], i32>
  nn.return
}

// -----

nn.graph @g(%l: !nn.tensor<[B, T, 5], f32>, %y: !nn.tensor<[B, U], i32>) dims [B: batch, T: seq(B), U: seq(B), C: batch, V: seq(C), N: packed(B, T)] {
  // expected-error @+1 {{blank 5 is not a class in [0, 5)}}
  %c = nn.ctc_loss %l, %y from logits blank 5 : !nn.tensor<[B, T, 5], f32>, !nn.tensor<[B, U], i32>
  nn.return
}

// -----

// Packed logits are one sequence's frames, not a transducer grid's.
nn.graph @g(%l: !nn.tensor<[J, 5], f32>, %y: !nn.tensor<[B, U], i32>) dims [B: batch, T: seq(B), U: seq(B), J: packed(B, T, U)] {
  // expected-error @+1 {{logits must be the frames of one sequence dim, padded [batch, sequence, ...] or packed [packed(batch, sequence), ...], got '!nn.tensor<[J, 5], f32>'}}
  %c = nn.ctc_loss %l, %y from logits blank 0 : !nn.tensor<[J, 5], f32>, !nn.tensor<[B, U], i32>
  nn.return
}

// -----

nn.graph @g(%l: !nn.tensor<[B, T, 5], f32>, %y: !nn.tensor<[B, U], i32>) dims [B: batch, T: seq(B), U: seq(B), C: batch, V: seq(C), N: packed(B, T)] {
  // expected-error @+1 {{result must be '!nn.tensor<[B], f32>', got '!nn.tensor<[B, T], f32>'}}
  %c = "nn.ctc_loss"(%l, %y) <{input_kind = 0 : i32, blank = 0 : i64}> : (!nn.tensor<[B, T, 5], f32>, !nn.tensor<[B, U], i32>) -> !nn.tensor<[B, T], f32>
  nn.return
}

// -----

nn.graph @g(%l: !nn.tensor<[B, T, 5], f32>, %t: !nn.tensor<[B, T], i32>, %y: !nn.tensor<[B, U], i32>, %f: !nn.tensor<[B], f32>, %x: !nn.tensor<[B, T], f32>) dims [B: batch, T: seq(B), U: seq(B), N: packed(B, T)] {
  %ce = nn.cross_entropy %l, %t from logits : !nn.tensor<[B, T, 5], f32>, !nn.tensor<[B, T], i32>
  %ctc = nn.ctc_loss %l, %y from logits blank 0 : !nn.tensor<[B, T, 5], f32>, !nn.tensor<[B, U], i32>
  // expected-error @+1 {{marks a value that no loss op produced; mark the result of a loss op (cross_entropy, mse, ctc_loss, ...)}}
  nn.mark_loss %x as "x" normalize sum : !nn.tensor<[B, T], f32>
  nn.return
}

// -----

nn.graph @g(%l: !nn.tensor<[B, T, 5], f32>, %t: !nn.tensor<[B, T], i32>, %y: !nn.tensor<[B, U], i32>, %f: !nn.tensor<[B], f32>, %x: !nn.tensor<[B, T], f32>) dims [B: batch, T: seq(B), U: seq(B), N: packed(B, T)] {
  %ce = nn.cross_entropy %l, %t from logits : !nn.tensor<[B, T, 5], f32>, !nn.tensor<[B, T], i32>
  %ctc = nn.ctc_loss %l, %y from logits blank 0 : !nn.tensor<[B, T, 5], f32>, !nn.tensor<[B, U], i32>
  // expected-error @+1 {{loss name must not be empty}}
  nn.mark_loss %ce as "" normalize sum : !nn.tensor<[B, T], f32>
  nn.return
}

// -----

nn.graph @g(%l: !nn.tensor<[B, T, 5], f32>, %t: !nn.tensor<[B, T], i32>, %y: !nn.tensor<[B, U], i32>, %f: !nn.tensor<[B], f32>, %x: !nn.tensor<[B, T], f32>) dims [B: batch, T: seq(B), U: seq(B), N: packed(B, T)] {
  %ce = nn.cross_entropy %l, %t from logits : !nn.tensor<[B, T, 5], f32>, !nn.tensor<[B, T], i32>
  %ctc = nn.ctc_loss %l, %y from logits blank 0 : !nn.tensor<[B, T, 5], f32>, !nn.tensor<[B, U], i32>
  // expected-error @+1 {{scale must be finite, got INF}}
  nn.mark_loss %ce as "ce" normalize sum scale 0x7FF0000000000000 : !nn.tensor<[B, T], f32>
  nn.return
}

// -----

// Training minimizes scale * loss: a negative scale would train it up.
nn.graph @g(%l: !nn.tensor<[B, T, 5], f32>, %t: !nn.tensor<[B, T], i32>) dims [B: batch, T: seq(B)] {
  %ce = nn.cross_entropy %l, %t from logits : !nn.tensor<[B, T, 5], f32>, !nn.tensor<[B, T], i32>
  // expected-error @+1 {{scale must be >= 0 (a negative scale trains 'ce' up), got -1.000000e+00}}
  nn.mark_loss %ce as "ce" normalize sum scale -1.0 : !nn.tensor<[B, T], f32>
  nn.return
}

// -----

nn.graph @g(%l: !nn.tensor<[B, T, 5], f32>, %t: !nn.tensor<[B, T], i32>, %y: !nn.tensor<[B, U], i32>, %f: !nn.tensor<[B], f32>, %x: !nn.tensor<[B, T], f32>) dims [B: batch, T: seq(B), U: seq(B), N: packed(B, T)] {
  %ce = nn.cross_entropy %l, %t from logits : !nn.tensor<[B, T, 5], f32>, !nn.tensor<[B, T], i32>
  %ctc = nn.ctc_loss %l, %y from logits blank 0 : !nn.tensor<[B, T, 5], f32>, !nn.tensor<[B, U], i32>
  // expected-error @+1 {{per_frame normalization needs a per-frame loss over a sequence axis, got '!nn.tensor<[B], f32>'}}
  nn.mark_loss %ctc as "ctc" normalize per_frame : !nn.tensor<[B], f32>
  nn.return
}

// -----

nn.graph @g(%l: !nn.tensor<[5], f32>, %t: !nn.tensor<[], i32>) dims [B: batch, T: seq(B), U: seq(B), N: packed(B, T)] {
  %ce = nn.cross_entropy %l, %t from logits : !nn.tensor<[5], f32>, !nn.tensor<[], i32>
  // expected-error @+1 {{per_sequence normalization needs a loss with a batch axis, got '!nn.tensor<[], f32>'}}
  nn.mark_loss %ce as "ce" normalize per_sequence : !nn.tensor<[], f32>
  nn.return
}

// -----

nn.graph @g(%l: !nn.tensor<[B, T, 5], f32>, %t: !nn.tensor<[B, T], i32>, %y: !nn.tensor<[B, U], i32>, %f: !nn.tensor<[B], f32>, %x: !nn.tensor<[B, T], f32>) dims [B: batch, T: seq(B), U: seq(B), N: packed(B, T)] {
  %ce = nn.cross_entropy %l, %t from logits : !nn.tensor<[B, T, 5], f32>, !nn.tensor<[B, T], i32>
  %ctc = nn.ctc_loss %l, %y from logits blank 0 : !nn.tensor<[B, T, 5], f32>, !nn.tensor<[B, U], i32>
  // expected-error @+1 {{custom normalization needs a custom_inv_norm_factor operand}}
  nn.mark_loss %ctc as "ctc" normalize custom : !nn.tensor<[B], f32>
  nn.return
}

// -----

nn.graph @g(%l: !nn.tensor<[B, T, 5], f32>, %t: !nn.tensor<[B, T], i32>, %y: !nn.tensor<[B, U], i32>, %f: !nn.tensor<[B], f32>, %x: !nn.tensor<[B, T], f32>) dims [B: batch, T: seq(B), U: seq(B), N: packed(B, T)] {
  %ce = nn.cross_entropy %l, %t from logits : !nn.tensor<[B, T, 5], f32>, !nn.tensor<[B, T], i32>
  %ctc = nn.ctc_loss %l, %y from logits blank 0 : !nn.tensor<[B, T, 5], f32>, !nn.tensor<[B, U], i32>
  // expected-error @+1 {{custom_inv_norm_factor is only allowed with custom normalization}}
  nn.mark_loss %ctc, %f as "ctc" normalize sum : !nn.tensor<[B], f32>, !nn.tensor<[B], f32>
  nn.return
}

// -----

nn.graph @g(%l: !nn.tensor<[B, T, 5], f32>, %t: !nn.tensor<[B, T], i32>, %y: !nn.tensor<[B, U], i32>, %f: !nn.tensor<[B], f32>, %x: !nn.tensor<[B, T], f32>) dims [B: batch, T: seq(B), U: seq(B), N: packed(B, T)] {
  %ce = nn.cross_entropy %l, %t from logits : !nn.tensor<[B, T, 5], f32>, !nn.tensor<[B, T], i32>
  %ctc = nn.ctc_loss %l, %y from logits blank 0 : !nn.tensor<[B, T, 5], f32>, !nn.tensor<[B, U], i32>
  // expected-error @+1 {{custom_inv_norm_factor must be a scalar [] or one value per sequence [B], got '!nn.tensor<[B, T], f32>'}}
  nn.mark_loss %ce, %x as "ce" normalize custom : !nn.tensor<[B, T], f32>, !nn.tensor<[B, T], f32>
  nn.return
}

// -----

nn.graph @g(%l: !nn.tensor<[B, T, 5], f32>, %t: !nn.tensor<[B, T], i32>, %y: !nn.tensor<[B, U], i32>, %f: !nn.tensor<[B], f32>, %x: !nn.tensor<[B, T], f32>, %i: !nn.tensor<[B], i32>) dims [B: batch, T: seq(B), U: seq(B), N: packed(B, T)] {
  %ce = nn.cross_entropy %l, %t from logits : !nn.tensor<[B, T, 5], f32>, !nn.tensor<[B, T], i32>
  %ctc = nn.ctc_loss %l, %y from logits blank 0 : !nn.tensor<[B, T, 5], f32>, !nn.tensor<[B, U], i32>
  // expected-error @+1 {{operand #1 must be nn tensor of floats, but got '!nn.tensor<[B], i32>'}}
  nn.mark_loss %ctc, %i as "ctc" normalize custom : !nn.tensor<[B], f32>, !nn.tensor<[B], i32>
  nn.return
}

// -----

nn.graph @g(%l: !nn.tensor<[B, T, 5], f32>, %y: !nn.tensor<[B, U], i32>) dims [B: batch, T: seq(B), U: seq(B)] {
  // expected-error @+1 {{blank -1 is not a class in [0, 5)}}
  %c = nn.ctc_loss %l, %y from logits blank -1 : !nn.tensor<[B, T, 5], f32>, !nn.tensor<[B, U], i32>
  nn.return
}

// -----

nn.graph @g(%x: !nn.tensor<[B], f32>) dims [B: batch] {
  // expected-error @+1 {{per_frame normalization needs a per-frame loss over a sequence axis, got '!nn.tensor<[B], f32>'}}
  %s, %i = nn.loss_terms %x normalize per_frame : !nn.tensor<[B], f32>
  nn.return
}

// -----

nn.graph @g(%x: !nn.tensor<[B], i32>) dims [B: batch] {
  // expected-error @+1 {{operand #0 must be nn tensor of floats, but got '!nn.tensor<[B], i32>'}}
  %s, %i = nn.loss_terms %x normalize sum : !nn.tensor<[B], i32>
  nn.return
}

// -----

nn.graph @g(%x: !nn.tensor<[B], f32>) dims [B: batch] {
  // expected-error @+1 {{result #0 must be rank-0 f64 nn tensor}}
  %s, %i = "nn.loss_terms"(%x) <{normalization = 0 : i32, operandSegmentSizes = array<i32: 1, 0, 0>}> : (!nn.tensor<[B], f32>) -> (!nn.tensor<[], f32>, !nn.tensor<[], f64>)
  nn.return
}

// -----

nn.graph @g(%x: !nn.tensor<[B, T, 5], f32>, %y: !nn.tensor<[B], i32>) dims [B: batch, T: seq(B)] {
  // expected-error @+1 {{targets [B] must be on the positions of the scores [B, T] (same batch and sequence dims)}}
  %e = nn.frame_error %x, %y : !nn.tensor<[B, T, 5], f32>, !nn.tensor<[B], i32>
  nn.return
}

// -----

nn.graph @g(%x: !nn.tensor<[B, T, 3], f32>) dims [B: batch, T: seq(B)] {
  // expected-error @+1 {{input 0 must have a static shape (a parameter or its gradient), got '!nn.tensor<[B, T, 3], f32>'}}
  %n = nn.param_norm %x : !nn.tensor<[B, T, 3], f32>
  nn.return
}

// -----

nn.graph @g() dims [] {
  // expected-error @+1 {{needs at least one input}}
  %n = "nn.param_norm"() : () -> !nn.tensor<[], f32>
  nn.return
}

// -----

nn.graph @g(%w: !nn.tensor<[3], f32>) dims [] {
  %n = nn.param_norm %w : !nn.tensor<[3], f32>
  // expected-error @+1 {{per_frame normalization needs a per-frame loss over a sequence axis, got '!nn.tensor<[], f32>'}}
  nn.mark_loss %n as "l2" normalize per_frame : !nn.tensor<[], f32>
  nn.return
}

// -----

nn.graph @g(%dl: !nn.tensor<[], f32>, %x: !nn.tensor<[B, 3], f32>) dims [B: batch] {
  // expected-error @+1 {{input must have a static shape (a parameter or its gradient), got '!nn.tensor<[B, 3], f32>'}}
  %d = nn.param_norm_grad %dl, %x : !nn.tensor<[B, 3], f32>
  nn.return
}

// -----

nn.graph @g(%l: !nn.tensor<[B, T, 4], f32>, %t: !nn.tensor<[B, T], i32>,
            %w: !nn.tensor<[B], f32>) dims [B: batch, T: seq(B)] {
  %a = nn.cross_entropy %l, %t from logits : !nn.tensor<[B, T, 4], f32>, !nn.tensor<[B, T], i32>
  // expected-error @+1 {{weights must have the loss's type '!nn.tensor<[B, T], f32>', got '!nn.tensor<[B], f32>'}}
  nn.mark_loss %a weights %w as "ce" normalize per_frame : !nn.tensor<[B, T], f32> weights !nn.tensor<[B], f32>
  nn.return
}

// -----

nn.graph @g(%l: !nn.tensor<[B, T, 4], f32>, %t: !nn.tensor<[B, T], i32>,
            %w: !nn.tensor<[B, T], f64>) dims [B: batch, T: seq(B)] {
  %a = nn.cross_entropy %l, %t from logits : !nn.tensor<[B, T, 4], f32>, !nn.tensor<[B, T], i32>
  // expected-error @+1 {{weights must have the loss's type '!nn.tensor<[B, T], f32>', got '!nn.tensor<[B, T], f64>'}}
  %s, %n = nn.loss_terms %a weights %w normalize per_frame : !nn.tensor<[B, T], f32> weights !nn.tensor<[B, T], f64>
  nn.return
}

// -----

nn.graph @g(%l: !nn.tensor<[B, T], f32>, %n: !nn.tensor<[], f64>,
            %w: !nn.tensor<[B], f32>) dims [B: batch, T: seq(B)] {
  // expected-error @+1 {{weights must have the loss's type '!nn.tensor<[B, T], f32>', got '!nn.tensor<[B], f32>'}}
  %s = nn.loss_seed %l, %n weights %w scale 1.000000e+00 : !nn.tensor<[B, T], f32> weights !nn.tensor<[B], f32>
  nn.return
}

// -----

nn.graph @g() dims [B: batch, T: seq(B)] {
  // expected-error @+1 {{takes per_frame or per_sequence normalization, got custom}}
  %n = nn.loss_norm custom for !nn.tensor<[B, T], f32>
  nn.return
}

// -----

nn.graph @g() dims [B: batch] {
  // expected-error @+1 {{per_frame normalization needs positions over a sequence axis, got '!nn.tensor<[B], f32>'}}
  %n = nn.loss_norm per_frame for !nn.tensor<[B], f32>
  nn.return
}

// -----

nn.graph @g() dims [B: batch] {
  // expected-error @+1 {{per_sequence normalization needs positions over a batch, got '!nn.tensor<[3], f32>'}}
  %n = nn.loss_norm per_sequence for !nn.tensor<[3], f32>
  nn.return
}
