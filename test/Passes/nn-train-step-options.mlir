// RUN: not nn-opt %s --nn-autodiff --nn-train-step="optimizer=lion" 2>&1 | FileCheck %s --check-prefix=KIND
// RUN: not nn-opt %s --nn-autodiff --nn-train-step="optimizer=adam nesterov=true" 2>&1 | FileCheck %s --check-prefix=NESTEROV
// RUN: not nn-opt %s --nn-autodiff --nn-train-step="clip-norm=-1" 2>&1 | FileCheck %s --check-prefix=CLIP
// RUN: not nn-opt %s --nn-autodiff --nn-train-step="optimizer=sgd momentum=1" 2>&1 | FileCheck %s --check-prefix=MOMENTUM
// RUN: not nn-opt %s --nn-autodiff --nn-train-step="epsilon=inf" 2>&1 | FileCheck %s --check-prefix=EPSILON
// RUN: not nn-opt %s --nn-autodiff --nn-train-step="weight-decay=inf" 2>&1 | FileCheck %s --check-prefix=DECAY

// The pass's options are checked before anything changes.
// KIND: for the --optimizer option: unknown optimizer 'lion' (expected sgd, adam or adamw)
// NESTEROV: nn-train-step: nesterov needs sgd with a momentum
// CLIP: nn-train-step: clip-norm must be a finite number >= 0 (0: off)
// MOMENTUM: nn-train-step: momentum must lie in [0, 1)
// An infinite epsilon freezes every parameter, an infinite decay wipes
// them, with every gradient finite.
// EPSILON: nn-train-step: epsilon must be a finite number > 0
// DECAY: nn-train-step: weight-decay must be a finite number >= 0
nn.parameter @w : !nn.tensor<[3, 4], f32>
nn.graph @g(%x: !nn.tensor<[B, T, 4], f32>, %y: !nn.tensor<[B, T], i32>)
    dims [B: batch, T: seq(B)] {
  %w = nn.param_ref @w : !nn.tensor<[3, 4], f32>
  %l = nn.linear %x, %w : !nn.tensor<[B, T, 4], f32>, !nn.tensor<[3, 4], f32>
  %ce = nn.cross_entropy %l, %y from logits : !nn.tensor<[B, T, 3], f32>, !nn.tensor<[B, T], i32>
  nn.mark_loss %ce as "ce" normalize per_frame : !nn.tensor<[B, T], f32>
  nn.return
}
