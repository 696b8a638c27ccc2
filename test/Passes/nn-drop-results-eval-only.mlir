// RUN: nn-opt %s --split-input-file --nn-drop-results | FileCheck %s
// RUN: nn-opt %s --split-input-file --pass-pipeline='builtin.module(nn-optimize{grads=true train-step=true optimizer=sgd})' | FileCheck %s --check-prefix=STEP
// RUN: nn-opt %s --split-input-file --pass-pipeline='builtin.module(nn-optimize)' | FileCheck %s --check-prefix=EVAL

// Losses marked eval_only go from a train step, in every graph, with the
// ops only they used: here a Viterbi alignment standing for a decoding,
// and the edit distance that scores it. The trained CE and the reported
// frame error (as_error, not eval_only) stay. Evaluation keeps them all.
// CHECK-LABEL: nn.graph @scorer
// CHECK-NOT: nn.edit_distance
// CHECK-NOT: nn.mark_loss
// CHECK: nn.return
// CHECK-LABEL: nn.graph @g
// CHECK-NOT: nn.viterbi_align
// CHECK-NOT: nn.edit_distance
// CHECK: %[[L:.+]] = nn.linear
// CHECK-NOT: nn.viterbi_align
// CHECK-NOT: nn.edit_distance
// CHECK: %[[CE:.+]] = nn.cross_entropy %[[L]]
// CHECK-NEXT: nn.mark_loss %[[CE]] as "ce" normalize per_frame :
// CHECK-NEXT: %[[FE:.+]] = nn.frame_error %[[L]]
// CHECK-NEXT: nn.mark_loss %[[FE]] as "fer" normalize per_frame as_error :
// CHECK-NEXT: nn.call @scorer
// CHECK-NEXT: nn.return{{$}}

// In a train step the scorer, its eval_only loss gone, is inlined (into
// nothing) and erased (nn-inline-calls).
// STEP-NOT: nn.graph @scorer
// STEP-LABEL: nn.graph @g
// STEP-NOT: nn.viterbi_align
// STEP-NOT: nn.edit_distance
// STEP-NOT: nn.call
// STEP-NOT: "ler"
// STEP: nn.mark_loss %{{.+}} as "ce"
// STEP: nn.mark_loss %{{.+}} as "fer" normalize per_frame as_error
// STEP-NOT: "ler"
// STEP: nn.sgd_update

// EVAL-LABEL: nn.graph @scorer
// EVAL: nn.edit_distance
// EVAL: nn.mark_loss %{{.+}}, %{{.+}} as "callee_ler" normalize custom as_error eval_only
// EVAL-LABEL: nn.graph @g
// EVAL: nn.viterbi_align
// EVAL: nn.edit_distance
// EVAL: nn.mark_loss %{{.+}}, %{{.+}} as "ler" normalize custom as_error eval_only
nn.parameter @w : !nn.tensor<[3, 4], f32>
nn.graph @scorer(%hyp: !nn.tensor<[Bs, Ys], i32>, %ref: !nn.tensor<[Bs, Us], i32>)
    dims [Bs: batch, Ys: seq(Bs), Us: seq(Bs)] {
  %e, %n, %c = nn.edit_distance %hyp, %ref : !nn.tensor<[Bs, Ys], i32>, !nn.tensor<[Bs, Us], i32>
  nn.mark_loss %e, %n as "callee_ler" normalize custom as_error eval_only : !nn.tensor<[Bs], f32>, !nn.tensor<[Bs], f32>
  nn.return
}
nn.graph @g(%x: !nn.tensor<[B, T, 4], f32>, %y: !nn.tensor<[B, T], i32>, %labels: !nn.tensor<[B, U], i32>)
    dims [B: batch, T: seq(B), U: seq(B)] {
  %w = nn.param_ref @w : !nn.tensor<[3, 4], f32>
  %l = nn.linear %x, %w : !nn.tensor<[B, T, 4], f32>, !nn.tensor<[3, 4], f32>
  %path, %score = nn.viterbi_align %l, %labels from logits topology ctc blank 0 : !nn.tensor<[B, T, 3], f32>, !nn.tensor<[B, U], i32>
  %e, %n, %c = nn.edit_distance %path, %y : !nn.tensor<[B, T], i32>, !nn.tensor<[B, T], i32>
  %ce = nn.cross_entropy %l, %y from logits : !nn.tensor<[B, T, 3], f32>, !nn.tensor<[B, T], i32>
  nn.mark_loss %ce as "ce" normalize per_frame : !nn.tensor<[B, T], f32>
  nn.mark_loss %e, %n as "ler" normalize custom as_error eval_only : !nn.tensor<[B], f32>, !nn.tensor<[B], f32>
  %fe = nn.frame_error %l, %y : !nn.tensor<[B, T, 3], f32>, !nn.tensor<[B, T], i32>
  nn.mark_loss %fe as "fer" normalize per_frame as_error : !nn.tensor<[B, T], f32>
  nn.call @scorer(%y, %labels) : (!nn.tensor<[B, T], i32>, !nn.tensor<[B, U], i32>) -> ()
  nn.return
}

// -----

// A greedy CTC decoding scored against the labels, eval_only: the
// decoder goes, and with it its computed dim Y and the unused dim
// declared from it (the graph verifier wants a producer for every
// computed dim). The trained CTC loss stays.
// CHECK-LABEL: nn.graph @decoded
// CHECK-SAME: dims [B: batch, T: seq(B), U: seq(B)] {
// CHECK-NOT: nn.ctc_greedy_decode
// CHECK-NOT: nn.edit_distance
// CHECK: nn.mark_loss %{{.+}} as "ctc" normalize per_sequence :
// CHECK-NEXT: nn.return
// STEP-LABEL: nn.graph @decoded
// STEP-SAME: dims [B: batch, T: seq(B), U: seq(B), N_T: packed(B, T)] {
// STEP-NOT: nn.ctc_greedy_decode
// STEP-NOT: nn.edit_distance
// STEP: nn.ctc_loss_grad
// STEP: nn.sgd_update
// EVAL-LABEL: nn.graph @decoded
// EVAL-SAME: dims [B: batch, T: seq(B), U: seq(B), Y: seq(B) computed, Y1: seq(B) = Y + 1, N_T: packed(B, T)] {
// EVAL: nn.ctc_greedy_decode
// EVAL: nn.edit_distance
// EVAL: as "ler" normalize custom as_error eval_only
nn.parameter @w : !nn.tensor<[4, 3], f32>
nn.graph @decoded(%x: !nn.tensor<[B, T, 3], f32>, %labels: !nn.tensor<[B, U], i32>)
    dims [B: batch, T: seq(B), U: seq(B), Y: seq(B) computed, Y1: seq(B) = Y + 1] {
  %w = nn.param_ref @w : !nn.tensor<[4, 3], f32>
  %l = nn.linear %x, %w : !nn.tensor<[B, T, 3], f32>, !nn.tensor<[4, 3], f32>
  %ctc = nn.ctc_loss %l, %labels from logits blank 0 : !nn.tensor<[B, T, 4], f32>, !nn.tensor<[B, U], i32>
  nn.mark_loss %ctc as "ctc" normalize per_sequence : !nn.tensor<[B], f32>
  %y, %s = nn.ctc_greedy_decode %l from logits blank 0 : !nn.tensor<[B, T, 4], f32> -> !nn.tensor<[B, Y], i32>, !nn.tensor<[B], f32>
  %e, %n, %c = nn.edit_distance %y, %labels : !nn.tensor<[B, Y], i32>, !nn.tensor<[B, U], i32>
  nn.mark_loss %e, %n as "ler" normalize custom as_error eval_only : !nn.tensor<[B], f32>, !nn.tensor<[B], f32>
  nn.return
}
