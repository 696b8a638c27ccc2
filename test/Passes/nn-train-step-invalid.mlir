// RUN: nn-opt %s --split-input-file --verify-diagnostics --nn-autodiff --nn-train-step

// Every diagnostic of nn-train-step on the module.

// A graph whose trained loss reaches no parameter has nothing to train.
// expected-error @+1 {{nn-train-step: graph @fixed returns no parameter gradients}}
nn.graph @fixed(%x: !nn.tensor<[B, T, 3], f32>, %y: !nn.tensor<[B, T], i32>)
    dims [B: batch, T: seq(B)] {
  %ce = nn.cross_entropy %x, %y from logits : !nn.tensor<[B, T, 3], f32>, !nn.tensor<[B, T], i32>
  nn.mark_loss %ce as "ce" normalize per_frame : !nn.tensor<[B, T], f32>
  nn.return
}

// -----

// The scalar inputs the step adds must not clash with the graph's own.
nn.parameter @w : !nn.tensor<[3, 4], f32>
// expected-error @+1 {{nn-train-step: graph @clash already has an argument named 'learning_rate'}}
nn.graph @clash(%x: !nn.tensor<[B, T, 4], f32>, %y: !nn.tensor<[B, T], i32>,
                %learning_rate: !nn.tensor<[], f32>)
    dims [B: batch, T: seq(B)] {
  %w = nn.param_ref @w : !nn.tensor<[3, 4], f32>
  %l = nn.linear %x, %w : !nn.tensor<[B, T, 4], f32>, !nn.tensor<[3, 4], f32>
  %ce = nn.cross_entropy %l, %y from logits : !nn.tensor<[B, T, 3], f32>, !nn.tensor<[B, T], i32>
  nn.mark_loss %ce as "ce" normalize per_frame : !nn.tensor<[B, T], f32>
  nn.return
}

// -----

// The optimizer state's names must be free.
nn.parameter @w : !nn.tensor<[3, 4], f32>
// expected-error @+1 {{nn-train-step: the optimizer state 'optimizer/adam_m/w' is already a symbol of the module}}
nn.parameter @"optimizer/adam_m/w" : !nn.tensor<[3, 4], f32>
nn.graph @taken(%x: !nn.tensor<[B, T, 4], f32>, %y: !nn.tensor<[B, T], i32>)
    dims [B: batch, T: seq(B)] {
  %w = nn.param_ref @w : !nn.tensor<[3, 4], f32>
  %l = nn.linear %x, %w : !nn.tensor<[B, T, 4], f32>, !nn.tensor<[3, 4], f32>
  %ce = nn.cross_entropy %l, %y from logits : !nn.tensor<[B, T, 3], f32>, !nn.tensor<[B, T], i32>
  nn.mark_loss %ce as "ce" normalize per_frame : !nn.tensor<[B, T], f32>
  nn.return
}
