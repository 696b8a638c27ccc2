// RUN: nn-opt %s --split-input-file --nn-fuse-loss-tail="emit-remarks=true" --verify-diagnostics | FileCheck %s
// RUN: nn-opt %s --split-input-file --nn-fuse-loss-tail --nn-fuse-loss-tail | FileCheck %s
// RUN: nn-opt %s --split-input-file --nn-pack-before-loss --nn-fuse-loss-tail --nn-autodiff --nn-fuse-loss-tail | FileCheck %s --check-prefix=SWEEP
// RUN: nn-opt %s --split-input-file --nn-pack-before-loss --nn-fuse-loss-tail="backward=recompute" --nn-autodiff --nn-fuse-loss-tail="backward=recompute" | FileCheck %s --check-prefix=RECOMPUTE
// RUN: not nn-opt %s --split-input-file --nn-fuse-loss-tail="backward=twice" 2>&1 | FileCheck %s --check-prefix=OPTION
// What the pass prints parses back, fused ops without a bias included:
// RUN: nn-opt %s --split-input-file --nn-pack-before-loss --nn-fuse-loss-tail --nn-autodiff --nn-fuse-loss-tail | nn-opt --split-input-file | FileCheck %s --check-prefix=SWEEP

// What nn-fuse-loss-tail fuses, what it leaves alone and why; the second
// RUN line shows it is idempotent. After nn-autodiff it merges a fused loss
// with its gradient into one sweep (SWEEP), unless asked to recompute.
// OPTION: for the --backward option: unknown loss tail backward 'twice' (expected sweep or recompute)

// A padded linear with bias and CE from logits with label smoothing.
// CHECK-LABEL: nn.graph @logits
// CHECK-NOT: nn.linear
// CHECK: %[[CE:.*]] = nn.linear_cross_entropy %x, %{{.*}}, %{{.*}} targets %y label_smoothing 1.000000e-01 : !nn.tensor<[B, T, 4], f32>, !nn.tensor<[3, 4], f32>, !nn.tensor<[B, T], i32>, !nn.tensor<[3], f32>
// CHECK-NEXT: nn.mark_loss %[[CE]] as "ce"
// SWEEP-LABEL: nn.graph @logits
// SWEEP: nn.pack %y
// SWEEP: %[[X:.*]] = nn.pack %x
// SWEEP: %[[LOSS:.*]], %{{.*}}, %[[DW:.*]], %[[DB:.*]] = nn.linear_cross_entropy_train %[[X]], %{{.*}}, %{{.*}} targets %{{.*}} normalize per_frame scale 1.000000e+00 label_smoothing 1.000000e-01 : !nn.tensor<[N_T, 4], f32>
// SWEEP-NOT: nn.loss_seed
// SWEEP: nn.mark_loss %[[LOSS]] as "ce"
// SWEEP: nn.return %[[DW]], %[[DB]]
// RECOMPUTE-LABEL: nn.graph @logits
// RECOMPUTE: %[[LOSS:.*]] = nn.linear_cross_entropy %{{.*}} targets
// RECOMPUTE: %[[SUM:.*]], %[[NORM:.*]] = nn.loss_terms %[[LOSS]] normalize per_frame
// RECOMPUTE: %[[SEED:.*]] = nn.loss_seed %[[LOSS]], %[[NORM]] scale 1.000000e+00
// RECOMPUTE: %{{.*}}, %[[DW:.*]], %[[DB:.*]] = nn.linear_cross_entropy_grad %[[SEED]], %{{.*}} targets %{{.*}} label_smoothing 1.000000e-01
// RECOMPUTE: nn.return %[[DW]], %[[DB]]
nn.parameter @w : !nn.tensor<[3, 4], f32>
nn.parameter @b : !nn.tensor<[3], f32>
nn.graph @logits(%x: !nn.tensor<[B, T, 4], f32>, %y: !nn.tensor<[B, T], i32>)
    dims [B: batch, T: seq(B)] {
  %w = nn.param_ref @w : !nn.tensor<[3, 4], f32>
  %b = nn.param_ref @b : !nn.tensor<[3], f32>
  %l = nn.linear %x, %w, %b : !nn.tensor<[B, T, 4], f32>, !nn.tensor<[3, 4], f32>, !nn.tensor<[3], f32>
  // expected-remark @below {{loss tail fused: linear -> cross_entropy}}
  %ce = nn.cross_entropy %l, %y from logits label_smoothing 1.000000e-01 : !nn.tensor<[B, T, 3], f32>, !nn.tensor<[B, T], i32>
  nn.mark_loss %ce as "ce" normalize per_frame : !nn.tensor<[B, T], f32>
  nn.return
}

// -----

// Packed rows, no bias, log_softmax then CE from log-probabilities; the
// loss summed at half weight (the seed's scale and normalization carry
// over).
// CHECK-LABEL: nn.graph @log_probs
// CHECK-NOT: nn.log_softmax
// CHECK: nn.linear_cross_entropy %x, %{{.*}} targets %y : !nn.tensor<[N, 4], f32>, !nn.tensor<[3, 4], f32>, !nn.tensor<[N], i32>
// SWEEP-LABEL: nn.graph @log_probs
// SWEEP: nn.linear_cross_entropy_train %x, %{{.*}} targets %y normalize sum scale 5.000000e-01 :
// RECOMPUTE-LABEL: nn.graph @log_probs
// RECOMPUTE: nn.linear_cross_entropy_grad
nn.parameter @w : !nn.tensor<[3, 4], f32>
nn.graph @log_probs(%x: !nn.tensor<[N, 4], f32>, %y: !nn.tensor<[N], i32>,
                    %t: !nn.tensor<[B, T], f32>)
    dims [B: batch, T: seq(B), N: packed(B, T)] {
  %w = nn.param_ref @w : !nn.tensor<[3, 4], f32>
  %l = nn.linear %x, %w : !nn.tensor<[N, 4], f32>, !nn.tensor<[3, 4], f32>
  %lp = nn.log_softmax %l : !nn.tensor<[N, 3], f32>
  // expected-remark @below {{loss tail fused: linear -> log_softmax -> cross_entropy}}
  %ce = nn.cross_entropy %lp, %y from log_probs : !nn.tensor<[N, 3], f32>, !nn.tensor<[N], i32>
  nn.mark_loss %ce as "ce" normalize sum scale 5.000000e-01 : !nn.tensor<[N], f32>
  nn.return
}

// -----

// Left alone: the logits are also a graph result, and a frame error reads
// the log-probabilities; both would have to exist anyway.
// CHECK-LABEL: nn.graph @shared
// CHECK-NOT: nn.linear_cross_entropy
// CHECK: nn.cross_entropy %{{.*}} from logits
// CHECK: nn.cross_entropy %{{.*}} from log_probs
nn.parameter @w : !nn.tensor<[3, 4], f32>
nn.graph @shared(%x: !nn.tensor<[B, T, 4], f32>, %y: !nn.tensor<[B, T], i32>)
    -> !nn.tensor<[B, T, 3], f32> dims [B: batch, T: seq(B)] {
  %w = nn.param_ref @w : !nn.tensor<[3, 4], f32>
  %l = nn.linear %x, %w : !nn.tensor<[B, T, 4], f32>, !nn.tensor<[3, 4], f32>
  // expected-remark @below {{loss tail not fused: the logits are also used by 'nn.return'}}
  %ce = nn.cross_entropy %l, %y from logits : !nn.tensor<[B, T, 3], f32>, !nn.tensor<[B, T], i32>
  nn.mark_loss %ce as "ce" normalize per_frame : !nn.tensor<[B, T], f32>
  %l2 = nn.linear %x, %w : !nn.tensor<[B, T, 4], f32>, !nn.tensor<[3, 4], f32>
  %lp = nn.log_softmax %l2 : !nn.tensor<[B, T, 3], f32>
  // expected-remark @below {{loss tail not fused: the log probabilities are also used by 'nn.frame_error'}}
  %ce2 = nn.cross_entropy %lp, %y from log_probs : !nn.tensor<[B, T, 3], f32>, !nn.tensor<[B, T], i32>
  %err = nn.frame_error %lp, %y : !nn.tensor<[B, T, 3], f32>, !nn.tensor<[B, T], i32>
  nn.mark_loss %ce2 as "ce2" normalize per_frame : !nn.tensor<[B, T], f32>
  nn.mark_loss %err as "fer" normalize per_frame as_error : !nn.tensor<[B, T], f32>
  nn.return %l : !nn.tensor<[B, T, 3], f32>
}

// -----

// Left alone: CE from log-probabilities that no log_softmax made, and CE
// from logits of something other than a linear.
// CHECK-LABEL: nn.graph @other
// CHECK-NOT: nn.linear_cross_entropy
nn.parameter @w : !nn.tensor<[3, 4], f32>
nn.graph @other(%x: !nn.tensor<[B, T, 4], f32>, %y: !nn.tensor<[B, T], i32>)
    dims [B: batch, T: seq(B)] {
  %w = nn.param_ref @w : !nn.tensor<[3, 4], f32>
  %l = nn.linear %x, %w : !nn.tensor<[B, T, 4], f32>, !nn.tensor<[3, 4], f32>
  // expected-remark @below {{loss tail not fused: the log probabilities do not come from nn.log_softmax}}
  %ce = nn.cross_entropy %l, %y from log_probs : !nn.tensor<[B, T, 3], f32>, !nn.tensor<[B, T], i32>
  nn.mark_loss %ce as "ce" normalize per_frame : !nn.tensor<[B, T], f32>
  %t = nn.tanh %l : !nn.tensor<[B, T, 3], f32>
  // expected-remark @below {{loss tail not fused: the logits do not come from nn.linear}}
  %ce2 = nn.cross_entropy %t, %y from logits : !nn.tensor<[B, T, 3], f32>, !nn.tensor<[B, T], i32>
  nn.mark_loss %ce2 as "ce2" normalize per_frame : !nn.tensor<[B, T], f32>
  nn.return
}

// -----

// Fused, but the gradient recomputes the logits: the loss is marked twice
// (its seeds add), and a custom normalization factor.
// CHECK-LABEL: nn.graph @twice
// CHECK: nn.linear_cross_entropy
// CHECK-LABEL: nn.graph @custom
// CHECK: nn.linear_cross_entropy
// SWEEP-LABEL: nn.graph @twice
// SWEEP: nn.linear_cross_entropy_grad
// SWEEP-LABEL: nn.graph @custom
// SWEEP: nn.linear_cross_entropy_grad
nn.parameter @w : !nn.tensor<[3, 4], f32>
nn.graph @twice(%x: !nn.tensor<[B, T, 4], f32>, %y: !nn.tensor<[B, T], i32>)
    dims [B: batch, T: seq(B)] {
  %w = nn.param_ref @w : !nn.tensor<[3, 4], f32>
  %l = nn.linear %x, %w : !nn.tensor<[B, T, 4], f32>, !nn.tensor<[3, 4], f32>
  // expected-remark @below {{loss tail fused: linear -> cross_entropy}}
  %ce = nn.cross_entropy %l, %y from logits : !nn.tensor<[B, T, 3], f32>, !nn.tensor<[B, T], i32>
  nn.mark_loss %ce as "ce" normalize per_frame : !nn.tensor<[B, T], f32>
  nn.mark_loss %ce as "ce_sum" normalize sum : !nn.tensor<[B, T], f32>
  nn.return
}

// -----

nn.parameter @w : !nn.tensor<[3, 4], f32>
nn.graph @custom(%x: !nn.tensor<[B, T, 4], f32>, %y: !nn.tensor<[B, T], i32>,
                 %f: !nn.tensor<[B], f32>)
    dims [B: batch, T: seq(B)] {
  %w = nn.param_ref @w : !nn.tensor<[3, 4], f32>
  %l = nn.linear %x, %w : !nn.tensor<[B, T, 4], f32>, !nn.tensor<[3, 4], f32>
  // expected-remark @below {{loss tail fused: linear -> cross_entropy}}
  %ce = nn.cross_entropy %l, %y from logits : !nn.tensor<[B, T, 3], f32>, !nn.tensor<[B, T], i32>
  nn.mark_loss %ce, %f as "ce" normalize custom : !nn.tensor<[B, T], f32>, !nn.tensor<[B], f32>
  nn.return
}
