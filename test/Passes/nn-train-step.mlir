// RUN: nn-opt %s --split-input-file --nn-autodiff --nn-train-step --cse | FileCheck %s --check-prefix=ADAM
// RUN: nn-opt %s --split-input-file --nn-autodiff --nn-train-step="optimizer=adamw weight-decay=0.01 clip-norm=1" --cse | FileCheck %s --check-prefix=ADAMW
// RUN: nn-opt %s --split-input-file --nn-autodiff --nn-train-step="optimizer=sgd" --cse | FileCheck %s --check-prefix=SGD
// RUN: nn-opt %s --split-input-file --nn-autodiff --nn-train-step="optimizer=sgd momentum=0.9 nesterov=true" --cse | FileCheck %s --check-prefix=MOMENTUM

// One train step: the gradients feed the updates, the graph's own result
// (the logits) and the gradients are no longer returned, the optimizer
// state becomes zero-initialized parameters next to each parameter, and
// the step reads the learning rate (and, for Adam, the step number). It
// returns the norm of every updated value too, which is finite exactly
// when they all are.

// ADAM: nn.parameter @w : !nn.tensor<[3, 4], f32>
// ADAM-NEXT: nn.parameter @"optimizer/adam_m/w" {nn.optimizer_state} : !nn.tensor<[3, 4], f32>
// ADAM-NEXT: nn.parameter @"optimizer/adam_v/w" {nn.optimizer_state} : !nn.tensor<[3, 4], f32>
// ADAM-NEXT: nn.parameter @b : !nn.tensor<[3], f32>
// ADAM-NEXT: nn.parameter @"optimizer/adam_m/b" {nn.optimizer_state}
// ADAM-NEXT: nn.parameter @"optimizer/adam_v/b" {nn.optimizer_state}
// ADAM: nn.graph @tail(%x: {{.+}}, %y: {{.+}}, %learning_rate: !nn.tensor<[], f32>, %step: !nn.tensor<[], i32>)
// ADAM-SAME: -> (!nn.tensor<[], f32> {nn.grad_norm}, !nn.tensor<[], f32> {nn.updated_norm}, !nn.tensor<[3, 4], f32> {nn.update = "w"}, !nn.tensor<[3, 4], f32> {nn.update = "optimizer/adam_m/w"}, !nn.tensor<[3, 4], f32> {nn.update = "optimizer/adam_v/w"}, !nn.tensor<[3], f32> {nn.update = "b"}, !nn.tensor<[3], f32> {nn.update = "optimizer/adam_m/b"}, !nn.tensor<[3], f32> {nn.update = "optimizer/adam_v/b"})
// ADAM: %[[DW:.+]] = nn.linear_grad_weight
// ADAM: %[[DB:.+]] = nn.sum_positions
// ADAM: %[[NORM:.+]] = nn.global_norm %[[DW]], %[[DB]] : !nn.tensor<[3, 4], f32>, !nn.tensor<[3], f32>
// ADAM-NOT: nn.clip_factor
// ADAM: %[[M:.+]] = nn.param_ref @"optimizer/adam_m/w"
// ADAM: %[[V:.+]] = nn.param_ref @"optimizer/adam_v/w"
// ADAM: %[[P:.+]], %[[M1:.+]], %[[V1:.+]] = nn.adam_update %{{.+}}, %[[DW]], %[[M]], %[[V]] lr %learning_rate step %step beta1 9.000000e-01 beta2 0.99899999999999999 epsilon 1.000000e-08 : !nn.tensor<[3, 4], f32>
// ADAM: %[[PB:.+]], %[[MB:.+]], %[[VB:.+]] = nn.adam_update %{{.+}}, %[[DB]],
// ADAM: %[[UPDATED:.+]] = nn.global_norm %[[P]], %[[M1]], %[[V1]], %[[PB]], %[[MB]], %[[VB]] :
// ADAM: nn.return %[[NORM]], %[[UPDATED]], %[[P]], %[[M1]], %[[V1]],

// ADAMW: nn.graph @tail(
// ADAMW: %[[NORM:.+]] = nn.global_norm
// ADAMW: %[[SCALE:.+]] = nn.clip_factor %[[NORM]] max_norm 1.000000e+00
// ADAMW: nn.adam_update {{.+}} step %step scale %[[SCALE]] beta1 {{.+}} weight_decay 1.000000e-02 decoupled

// SGD-NOT: optimizer/
// SGD: nn.graph @tail({{.+}}, %learning_rate: !nn.tensor<[], f32>)
// SGD-SAME: -> (!nn.tensor<[], f32> {nn.grad_norm}, !nn.tensor<[], f32> {nn.updated_norm}, !nn.tensor<[3, 4], f32> {nn.update = "w"}, !nn.tensor<[3], f32> {nn.update = "b"})
// SGD: nn.sgd_update %{{.+}}, %{{.+}} lr %learning_rate : !nn.tensor<[3, 4], f32>

// MOMENTUM: nn.parameter @"optimizer/velocity/w" {nn.optimizer_state}
// MOMENTUM: nn.momentum_update %{{.+}}, %{{.+}}, %{{.+}} lr %learning_rate momentum 9.000000e-01 nesterov : !nn.tensor<[3, 4], f32>
nn.parameter @w : !nn.tensor<[3, 4], f32>
nn.parameter @b : !nn.tensor<[3], f32>
nn.graph @tail(%x: !nn.tensor<[B, T, 4], f32>, %y: !nn.tensor<[B, T], i32>)
    -> !nn.tensor<[B, T, 3], f32>
    dims [B: batch, T: seq(B)] {
  %w = nn.param_ref @w : !nn.tensor<[3, 4], f32>
  %b = nn.param_ref @b : !nn.tensor<[3], f32>
  %h = nn.tanh %x : !nn.tensor<[B, T, 4], f32>
  %l = nn.linear %h, %w, %b : !nn.tensor<[B, T, 4], f32>, !nn.tensor<[3, 4], f32>, !nn.tensor<[3], f32>
  %ce = nn.cross_entropy %l, %y from logits : !nn.tensor<[B, T, 3], f32>, !nn.tensor<[B, T], i32>
  nn.mark_loss %ce as "ce" normalize per_frame : !nn.tensor<[B, T], f32>
  nn.return %l : !nn.tensor<[B, T, 3], f32>
}
