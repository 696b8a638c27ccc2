// RUN: nn-opt %s --split-input-file --verify-diagnostics --nn-autodiff

// expected-error @+1 {{graph @nothing has no loss to train (every marked loss is as_error or has scale 0)}}
nn.graph @nothing(%x: !nn.tensor<[B, 3], f32>, %y: !nn.tensor<[B], i32>) dims [B: batch] {
  %ce = nn.cross_entropy %x, %y from logits : !nn.tensor<[B, 3], f32>, !nn.tensor<[B], i32>
  nn.mark_loss %ce as "err" normalize sum as_error : !nn.tensor<[B], f32>
  nn.return
}

// -----

// Gradient ops have no VJP of their own (no second derivatives).
nn.parameter @w : !nn.tensor<[3, 4], f32>
nn.graph @no_vjp(%x: !nn.tensor<[B, T, 4], f32>, %y: !nn.tensor<[B, T], i32>)
    dims [B: batch, T: seq(B)] {
  %w = nn.param_ref @w : !nn.tensor<[3, 4], f32>
  %h = nn.linear %x, %w : !nn.tensor<[B, T, 4], f32>, !nn.tensor<[3, 4], f32>
  // expected-error @+1 {{'nn.activation_grad' op is on the path to a loss and has no vector-Jacobian product yet (VjpOpInterface)}}
  %d = nn.activation_grad tanh %h, %h : !nn.tensor<[B, T, 3], f32>
  %ce = nn.cross_entropy %d, %y from logits : !nn.tensor<[B, T, 3], f32>, !nn.tensor<[B, T], i32>
  nn.mark_loss %ce as "ce" normalize per_frame : !nn.tensor<[B, T], f32>
  nn.return
}

// -----

nn.graph @inner(%x: !nn.tensor<[Bi, 3], f32>, %y: !nn.tensor<[Bi], i32>) -> !nn.tensor<[Bi, 3], f32> dims [Bi: batch] {
  %ce = nn.cross_entropy %x, %y from logits : !nn.tensor<[Bi, 3], f32>, !nn.tensor<[Bi], i32>
  nn.mark_loss %ce as "inner" normalize sum : !nn.tensor<[Bi], f32>
  nn.return %x : !nn.tensor<[Bi, 3], f32>
}
nn.graph @model(%x: !nn.tensor<[Bm, 3], f32>, %y: !nn.tensor<[Bm], i32>) -> !nn.tensor<[Bm, 3], f32> dims [Bm: batch] {
  %h = nn.call @inner(%x, %y) : (!nn.tensor<[Bm, 3], f32>, !nn.tensor<[Bm], i32>) -> !nn.tensor<[Bm, 3], f32>
  nn.return %h : !nn.tensor<[Bm, 3], f32>
}
nn.graph @loss(%x: !nn.tensor<[B, 3], f32>, %y: !nn.tensor<[B], i32>) dims [B: batch] {
  // expected-error @+1 {{'nn.call' op differentiates @model, whose backward recomputes its call of @inner, which declares losses; nn-autodiff does not support that yet (its losses would be reported twice)}}
  %l = nn.call @model(%x, %y) : (!nn.tensor<[B, 3], f32>, !nn.tensor<[B], i32>) -> !nn.tensor<[B, 3], f32>
  %ce = nn.cross_entropy %l, %y from logits : !nn.tensor<[B, 3], f32>, !nn.tensor<[B], i32>
  nn.mark_loss %ce as "ce" normalize sum : !nn.tensor<[B], f32>
  nn.return
}

// -----

// expected-error @+1 {{nn-autodiff: several graphs could be the entry; choose one with graph=}}
module {
  nn.graph @a() dims [] {
    nn.return
  }
  nn.graph @b() dims [] {
    nn.return
  }
}

// -----

// nn.edit_distance has no gradient: a trained loss on its errors is
// refused (as_error, the way to report it, trains nothing).
nn.parameter @w : !nn.tensor<[3, 4], f32>
nn.graph @edit_distance(%x: !nn.tensor<[B, T, 4], f32>, %y: !nn.tensor<[B, T], i32>,
                        %hyp: !nn.tensor<[B, Y], i32>, %ref: !nn.tensor<[B, U], i32>)
    dims [B: batch, T: seq(B), Y: seq(B), U: seq(B)] {
  %w = nn.param_ref @w : !nn.tensor<[3, 4], f32>
  %l = nn.linear %x, %w : !nn.tensor<[B, T, 4], f32>, !nn.tensor<[3, 4], f32>
  %ce = nn.cross_entropy %l, %y from logits : !nn.tensor<[B, T, 3], f32>, !nn.tensor<[B, T], i32>
  nn.mark_loss %ce as "ce" normalize per_frame : !nn.tensor<[B, T], f32>
  // expected-error @+1 {{'nn.edit_distance' op is on the path to a loss and has no vector-Jacobian product yet (VjpOpInterface)}}
  %e, %n, %c = nn.edit_distance %hyp, %ref : !nn.tensor<[B, Y], i32>, !nn.tensor<[B, U], i32>
  nn.mark_loss %e, %n as "ler" normalize custom : !nn.tensor<[B], f32>, !nn.tensor<[B], f32>
  nn.return
}
