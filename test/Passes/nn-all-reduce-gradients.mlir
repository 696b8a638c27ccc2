// RUN: nn-opt %s --split-input-file --nn-pack-before-loss --nn-fuse-loss-tail --nn-autodiff --nn-all-reduce-gradients --nn-fuse-loss-tail --nn-train-step --canonicalize --verify-diagnostics | FileCheck %s
// RUN: nn-opt %s --split-input-file --nn-autodiff --nn-all-reduce-gradients="bucket-mb=0.00005 overlap=false" --verify-diagnostics | FileCheck %s --check-prefix=BUCKETS
// RUN: nn-opt %s --split-input-file --nn-autodiff --nn-all-reduce-gradients="bucket-mb=0.0001" --verify-diagnostics | FileCheck %s --check-prefix=OVERLAP
// RUN: not nn-opt %s --split-input-file --nn-autodiff --nn-all-reduce-gradients="bucket-mb=0" 2>&1 | FileCheck %s --check-prefix=OPTION

// A data-parallel step: the per-frame loss divides by the frames of every
// process, counted from the lengths at the top of the graph and summed, so
// that the fused loss tail takes the sum in its sweep; the gradients are
// summed in one bucket before the norm and the updates read the sums.

// CHECK-LABEL: nn.graph @tail
// CHECK: %[[COUNT:.+]] = nn.loss_norm per_frame for !nn.tensor<[N_T], f32>
// CHECK-NEXT: %[[FRAMES:.+]] = nn.all_reduce %[[COUNT]] : !nn.tensor<[], f64>
// CHECK: %{{.+}}, %{{.+}}, %[[DW:.+]], %[[DB:.+]] = nn.linear_cross_entropy_train %{{.+}}, %{{.+}}, %{{.+}} targets %{{.+}} normalize per_frame inv_norm %[[FRAMES]] scale 1.000000e+00
// CHECK-NOT: nn.loss_seed
// CHECK: %[[DV:.+]] = nn.linear_grad_weight
// CHECK: %[[SUMS:.+]]:3 = nn.all_reduce %[[DW]], %[[DB]], %[[DV]] : !nn.tensor<[3, 4], f32>, !nn.tensor<[3], f32>, !nn.tensor<[4, 4], f32>
// CHECK-NEXT: nn.global_norm %[[SUMS]]#0, %[[SUMS]]#1, %[[SUMS]]#2
// CHECK: nn.adam_update %{{.+}}, %[[SUMS]]#0,
// CHECK: nn.adam_update %{{.+}}, %[[SUMS]]#1,
// CHECK: nn.adam_update %{{.+}}, %[[SUMS]]#2,

// Without overlap: buckets of at most 52 bytes in result order, [3, 4] f32
// (48 bytes) alone, then [3] and [4, 4] (12 + 64 bytes > 52) apart, summed
// after the whole backward.
// BUCKETS-LABEL: nn.graph @tail
// BUCKETS: %[[N:.+]] = nn.loss_norm per_frame for !nn.tensor<[B, T], f32>
// BUCKETS: nn.all_reduce %[[N]] : !nn.tensor<[], f64>
// BUCKETS: %[[A:.+]] = nn.all_reduce %{{.+}} : !nn.tensor<[3, 4], f32>
// BUCKETS-NEXT: %[[B:.+]] = nn.all_reduce %{{.+}} : !nn.tensor<[3], f32>
// BUCKETS-NEXT: %[[C:.+]] = nn.all_reduce %{{.+}} : !nn.tensor<[4, 4], f32>
// BUCKETS-NEXT: nn.return %[[A]], %[[B]], %[[C]]

// Overlapping (the default): buckets of at most 104 bytes in the order the
// backward finishes the gradients, each summed right after its last one:
// w's and b's gradients (48 + 12 bytes) as soon as b's is done, while the
// backward through the tanh and the first linear layer runs; v's after.
// OVERLAP-LABEL: nn.graph @tail
// OVERLAP: %[[DW:.+]] = nn.linear_grad_weight
// OVERLAP-NEXT: %[[DB:.+]] = nn.sum_positions
// OVERLAP-NEXT: %[[WB:.+]]:2 = nn.all_reduce %[[DW]], %[[DB]] : !nn.tensor<[3, 4], f32>, !nn.tensor<[3], f32>
// OVERLAP-NEXT: nn.activation_grad tanh
// OVERLAP-NEXT: nn.linear_grad_input
// OVERLAP-NEXT: %[[DV:.+]] = nn.linear_grad_weight
// OVERLAP-NEXT: %[[V:.+]] = nn.all_reduce %[[DV]] : !nn.tensor<[4, 4], f32>
// OVERLAP-NEXT: nn.return %[[WB]]#0, %[[WB]]#1, %[[V]]

// OPTION: error: nn-all-reduce-gradients: bucket-mb must be a number > 0, got 0
nn.parameter @w : !nn.tensor<[3, 4], f32>
nn.parameter @b : !nn.tensor<[3], f32>
nn.parameter @v : !nn.tensor<[4, 4], f32>
nn.graph @tail(%x: !nn.tensor<[B, T, 4], f32>, %y: !nn.tensor<[B, T], i32>)
    dims [B: batch, T: seq(B)] {
  %w = nn.param_ref @w : !nn.tensor<[3, 4], f32>
  %b = nn.param_ref @b : !nn.tensor<[3], f32>
  %v = nn.param_ref @v : !nn.tensor<[4, 4], f32>
  %h0 = nn.linear %x, %v : !nn.tensor<[B, T, 4], f32>, !nn.tensor<[4, 4], f32>
  %h = nn.tanh %h0 : !nn.tensor<[B, T, 4], f32>
  %l = nn.linear %h, %w, %b : !nn.tensor<[B, T, 4], f32>, !nn.tensor<[3, 4], f32>, !nn.tensor<[3], f32>
  %ce = nn.cross_entropy %l, %y from logits : !nn.tensor<[B, T, 3], f32>, !nn.tensor<[B, T], i32>
  nn.mark_loss %ce as "ce" normalize per_frame : !nn.tensor<[B, T], f32>
  nn.return
}

// -----

// A plain sum needs no normalization sum; a per-sequence loss counts the
// sequences; two losses on the same positions with the same normalization
// share one sum; a weighted loss sums its own factor (the weights),
// after it.

// CHECK-LABEL: nn.graph @kinds
// CHECK: %[[SEQS:.+]] = nn.loss_norm per_sequence for !nn.tensor<[B], f32>
// CHECK-NEXT: %[[ALL:.+]] = nn.all_reduce %[[SEQS]]
// CHECK-NOT: nn.loss_norm
// CHECK: nn.loss_seed %{{.+}}, %[[ALL]] scale 1.000000e+00
// CHECK: nn.loss_seed %{{.+}}, %[[ALL]] scale 5.000000e-01
// CHECK: %{{.+}}, %[[WEIGHTED:.+]] = nn.loss_terms %{{.+}} weights %{{.+}} normalize per_frame
// CHECK-NEXT: %[[WALL:.+]] = nn.all_reduce %[[WEIGHTED]]
// CHECK: nn.loss_seed %{{.+}}, %[[WALL]] weights
// CHECK: %{{.+}}, %[[ONE:.+]] = nn.loss_terms %{{.+}} normalize sum
// CHECK-NEXT: nn.loss_seed %{{.+}}, %[[ONE]] scale 2.000000e+00
nn.parameter @w : !nn.tensor<[3, 4], f32>
nn.graph @kinds(%x: !nn.tensor<[B, T, 4], f32>, %t: !nn.tensor<[B, 4], f32>,
                %ref: !nn.tensor<[B, T, 3], f32>, %weights: !nn.tensor<[B, T], f32>)
    dims [B: batch, T: seq(B)] {
  %w = nn.param_ref @w : !nn.tensor<[3, 4], f32>
  %h = nn.linear %x, %w : !nn.tensor<[B, T, 4], f32>, !nn.tensor<[3, 4], f32>
  %r = nn.reduce sum %h over 1 : !nn.tensor<[B, T, 3], f32>
  %p = nn.linear %t, %w : !nn.tensor<[B, 4], f32>, !nn.tensor<[3, 4], f32>
  %e1 = nn.mse %r, %p : !nn.tensor<[B, 3], f32>, !nn.tensor<[B, 3], f32>
  %e2 = nn.mse %p, %r : !nn.tensor<[B, 3], f32>, !nn.tensor<[B, 3], f32>
  %e3 = nn.mse %h, %ref : !nn.tensor<[B, T, 3], f32>, !nn.tensor<[B, T, 3], f32>
  nn.mark_loss %e1 as "a" normalize per_sequence : !nn.tensor<[B], f32>
  nn.mark_loss %e2 as "b" normalize per_sequence scale 0.5 : !nn.tensor<[B], f32>
  nn.mark_loss %e3 weights %weights as "c" normalize per_frame : !nn.tensor<[B, T], f32> weights !nn.tensor<[B, T], f32>
  nn.mark_loss %e3 as "d" normalize sum scale 2.0 : !nn.tensor<[B, T], f32>
  nn.return
}

// -----

// A loss of the parameters alone is the same on every rank: each would
// add all of its gradient.
nn.parameter @w : !nn.tensor<[3, 4], f32>
nn.graph @penalty(%x: !nn.tensor<[B, T, 4], f32>, %ref: !nn.tensor<[B, T, 3], f32>)
    dims [B: batch, T: seq(B)] {
  %w = nn.param_ref @w : !nn.tensor<[3, 4], f32>
  %h = nn.linear %x, %w : !nn.tensor<[B, T, 4], f32>, !nn.tensor<[3, 4], f32>
  %e = nn.mse %h, %ref : !nn.tensor<[B, T, 3], f32>, !nn.tensor<[B, T, 3], f32>
  nn.mark_loss %e as "mse" normalize per_frame : !nn.tensor<[B, T], f32>
  // expected-error @+1 {{nn-all-reduce-gradients: this trained loss reads no input of the batch (parameters only: the same on every rank), so a data-parallel step would add its gradient once per rank; not supported yet}}
  %n = nn.param_norm %w : !nn.tensor<[3, 4], f32>
  nn.mark_loss %n as "l2" normalize sum scale 0.01 : !nn.tensor<[], f32>
  nn.return
}
