// Every integer label type the verifier accepts (the backends take i32
// and i64) lowers through the whole CPU pipeline, forward and backward,
// for every op that reads labels, targets or indices. The transducer
// gradient's row labels are i32: i64 labels are truncated into them
// (they failed to lower: arith.select between i64 and i32).
// RUN: nn-opt %s --split-input-file --pass-pipeline='builtin.module(nn-cpu)' | FileCheck %s

// CHECK-LABEL: llvm.func @transducer_i64
// CHECK: llvm.trunc %{{.+}} : i64 to i32
nn.graph @transducer_i64(%g: !nn.tensor<[B], f32>, %j: !nn.tensor<[B, T, U1, 4], f32>, %y: !nn.tensor<[B, U], i64>)
    -> (!nn.tensor<[B], f32>, !nn.tensor<[B, T, U1, 4], f32>, !nn.tensor<[B], f32>, !nn.tensor<[B, T, U1, 4], f32>,
        !nn.tensor<[B, T], i32>, !nn.tensor<[B], f32>, !nn.tensor<[B, U1], i64>)
    dims [B: batch, T: seq(B), U: seq(B), U1: seq(B) = U + 1] {
  %l = nn.transducer_loss %j, %y from logits topology rnnt blank 0 : !nn.tensor<[B, T, U1, 4], f32>, !nn.tensor<[B, U], i64>
  %d = nn.transducer_loss_grad %g, %j, %y from logits topology rnnt blank 0 : !nn.tensor<[B], f32>, !nn.tensor<[B, T, U1, 4], f32>, !nn.tensor<[B, U], i64>
  %l2 = nn.transducer_loss %j, %y from log_probs topology rna blank 3 zero_infinity : !nn.tensor<[B, T, U1, 4], f32>, !nn.tensor<[B, U], i64>
  %d2 = nn.transducer_loss_grad %g, %j, %y from log_probs topology rna blank 3 zero_infinity : !nn.tensor<[B], f32>, !nn.tensor<[B, T, U1, 4], f32>, !nn.tensor<[B, U], i64>
  %a, %s = nn.transducer_align %j, %y from logits topology rna blank 0 : !nn.tensor<[B, T, U1, 4], f32>, !nn.tensor<[B, U], i64> -> !nn.tensor<[B, T], i32>, !nn.tensor<[B], f32>
  %p = nn.prepend_start %y start 0 : !nn.tensor<[B, U], i64> -> !nn.tensor<[B, U1], i64>
  nn.return %l, %d, %l2, %d2, %a, %s, %p : !nn.tensor<[B], f32>, !nn.tensor<[B, T, U1, 4], f32>, !nn.tensor<[B], f32>, !nn.tensor<[B, T, U1, 4], f32>, !nn.tensor<[B, T], i32>, !nn.tensor<[B], f32>, !nn.tensor<[B, U1], i64>
}

// -----

// The packed joint, i64 labels.
// CHECK-LABEL: llvm.func @transducer_packed_i64
nn.graph @transducer_packed_i64(%g: !nn.tensor<[B], f32>, %j: !nn.tensor<[J, 4], f32>, %y: !nn.tensor<[B, U], i64>)
    -> (!nn.tensor<[B], f32>, !nn.tensor<[J, 4], f32>, !nn.tensor<[J, 4], f32>)
    dims [B: batch, T: seq(B), U: seq(B), U1: seq(B) = U + 1, J: packed(B, T, U1)] {
  %l = nn.transducer_loss %j, %y from logits topology rnnt blank 0 : !nn.tensor<[J, 4], f32>, !nn.tensor<[B, U], i64>
  %d = nn.transducer_loss_grad %g, %j, %y from logits topology rnnt blank 0 : !nn.tensor<[B], f32>, !nn.tensor<[J, 4], f32>, !nn.tensor<[B, U], i64>
  %d2 = nn.transducer_loss_grad %g, %j, %y from logits topology rna blank 0 : !nn.tensor<[B], f32>, !nn.tensor<[J, 4], f32>, !nn.tensor<[B, U], i64>
  nn.return %l, %d, %d2 : !nn.tensor<[B], f32>, !nn.tensor<[J, 4], f32>, !nn.tensor<[J, 4], f32>
}

// -----

// CHECK-LABEL: llvm.func @transducer_i32
nn.graph @transducer_i32(%g: !nn.tensor<[B], f32>, %j: !nn.tensor<[B, T, U1, 4], f32>, %y: !nn.tensor<[B, U], i32>)
    -> (!nn.tensor<[B], f32>, !nn.tensor<[B, T, U1, 4], f32>, !nn.tensor<[B, T, U1, 4], f32>)
    dims [B: batch, T: seq(B), U: seq(B), U1: seq(B) = U + 1] {
  %l = nn.transducer_loss %j, %y from logits topology rnnt blank 0 : !nn.tensor<[B, T, U1, 4], f32>, !nn.tensor<[B, U], i32>
  %d = nn.transducer_loss_grad %g, %j, %y from logits topology rnnt blank 0 : !nn.tensor<[B], f32>, !nn.tensor<[B, T, U1, 4], f32>, !nn.tensor<[B, U], i32>
  %d2 = nn.transducer_loss_grad %g, %j, %y from log_probs topology rna blank 3 : !nn.tensor<[B], f32>, !nn.tensor<[B, T, U1, 4], f32>, !nn.tensor<[B, U], i32>
  nn.return %l, %d, %d2 : !nn.tensor<[B], f32>, !nn.tensor<[B, T, U1, 4], f32>, !nn.tensor<[B, T, U1, 4], f32>
}

// -----

// CHECK-LABEL: llvm.func @ctc_i64
nn.graph @ctc_i64(%g: !nn.tensor<[B], f32>, %x: !nn.tensor<[B, T, 4], f32>, %y: !nn.tensor<[B, U], i64>)
    -> (!nn.tensor<[B], f32>, !nn.tensor<[B, T, 4], f32>, !nn.tensor<[B, T, 4], f32>, !nn.tensor<[B, T], i32>, !nn.tensor<[B], f32>, !nn.tensor<[B, T], i32>, !nn.tensor<[B], f32>)
    dims [B: batch, T: seq(B), U: seq(B)] {
  %l = nn.ctc_loss %x, %y from logits blank 0 : !nn.tensor<[B, T, 4], f32>, !nn.tensor<[B, U], i64>
  %d = nn.ctc_loss_grad %g, %x, %y from logits blank 0 : !nn.tensor<[B], f32>, !nn.tensor<[B, T, 4], f32>, !nn.tensor<[B, U], i64>
  %d2 = nn.ctc_loss_grad %g, %x, %y from log_probs blank 3 zero_infinity : !nn.tensor<[B], f32>, !nn.tensor<[B, T, 4], f32>, !nn.tensor<[B, U], i64>
  %a, %s = nn.viterbi_align %x, %y from log_probs topology ctc blank 0 : !nn.tensor<[B, T, 4], f32>, !nn.tensor<[B, U], i64>
  %b, %t = nn.viterbi_align %x, %y from logits topology rna blank 0 : !nn.tensor<[B, T, 4], f32>, !nn.tensor<[B, U], i64>
  nn.return %l, %d, %d2, %a, %s, %b, %t : !nn.tensor<[B], f32>, !nn.tensor<[B, T, 4], f32>, !nn.tensor<[B, T, 4], f32>, !nn.tensor<[B, T], i32>, !nn.tensor<[B], f32>, !nn.tensor<[B, T], i32>, !nn.tensor<[B], f32>
}

// -----

// Class targets, embedding indices and alignments as i64.
// CHECK-LABEL: llvm.func @targets_i64
nn.graph @targets_i64(%dl: !nn.tensor<[B, T], f32>, %x: !nn.tensor<[B, T, 5], f32>, %y: !nn.tensor<[B, T], i64>, %h: !nn.tensor<[B, T, 3], f32>, %w: !nn.tensor<[5, 3], f32>, %bias: !nn.tensor<[5], f32>, %table: !nn.tensor<[7, 3], f32>, %dy: !nn.tensor<[B, T, 3], f32>)
    -> (!nn.tensor<[B, T], f32>, !nn.tensor<[B, T, 5], f32>, !nn.tensor<[B, T], f32>, !nn.tensor<[B, T, 3], f32>, !nn.tensor<[5, 3], f32>, !nn.tensor<[5], f32>, !nn.tensor<[B, T], f32>, !nn.tensor<[B, T, 3], f32>, !nn.tensor<[7, 3], f32>)
    dims [B: batch, T: seq(B)] {
  %ce = nn.cross_entropy %x, %y from logits label_smoothing 1.000000e-01 : !nn.tensor<[B, T, 5], f32>, !nn.tensor<[B, T], i64>
  %dx = nn.cross_entropy_grad %dl, %x, %y from logits label_smoothing 1.000000e-01 : !nn.tensor<[B, T, 5], f32>, !nn.tensor<[B, T], i64>
  %lce = nn.linear_cross_entropy %h, %w, %bias targets %y : !nn.tensor<[B, T, 3], f32>, !nn.tensor<[5, 3], f32>, !nn.tensor<[B, T], i64>, !nn.tensor<[5], f32>
  %dh, %dw, %db = nn.linear_cross_entropy_grad %dl, %h, %w, %bias targets %y : !nn.tensor<[B, T, 3], f32>, !nn.tensor<[5, 3], f32>, !nn.tensor<[B, T], i64>, !nn.tensor<[5], f32>
  %err = nn.frame_error %x, %y : !nn.tensor<[B, T, 5], f32>, !nn.tensor<[B, T], i64>
  %e = nn.embedding %y, %table : !nn.tensor<[B, T], i64>, !nn.tensor<[7, 3], f32>
  %dt = nn.embedding_grad %dy, %y : !nn.tensor<[B, T, 3], f32>, !nn.tensor<[B, T], i64> -> !nn.tensor<[7, 3], f32>
  nn.return %ce, %dx, %lce, %dh, %dw, %db, %err, %e, %dt : !nn.tensor<[B, T], f32>, !nn.tensor<[B, T, 5], f32>, !nn.tensor<[B, T], f32>, !nn.tensor<[B, T, 3], f32>, !nn.tensor<[5, 3], f32>, !nn.tensor<[5], f32>, !nn.tensor<[B, T], f32>, !nn.tensor<[B, T, 3], f32>, !nn.tensor<[7, 3], f32>
}

// -----

// CHECK-LABEL: llvm.func @gather_states_i64
nn.graph @gather_states_i64(%s: !nn.tensor<[B, U1, 3], f32>, %a: !nn.tensor<[B, T], i64>, %dg: !nn.tensor<[B, T, 3], f32>)
    -> (!nn.tensor<[B, T, 3], f32>, !nn.tensor<[B, U1, 3], f32>)
    dims [B: batch, T: seq(B), U: seq(B), U1: seq(B) = U + 1] {
  %g = nn.gather_states %s, %a blank 0 : !nn.tensor<[B, U1, 3], f32>, !nn.tensor<[B, T], i64> -> !nn.tensor<[B, T, 3], f32>
  %ds = nn.gather_states_grad %dg, %a blank 0 : !nn.tensor<[B, T, 3], f32>, !nn.tensor<[B, T], i64> -> !nn.tensor<[B, U1, 3], f32>
  nn.return %g, %ds : !nn.tensor<[B, T, 3], f32>, !nn.tensor<[B, U1, 3], f32>
}
