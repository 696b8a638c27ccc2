// Round trip of nn.edit_distance (NNErrorOps.td) over labels and words and of a loss marked
// eval_only, in custom and in generic form; the generic form spells the
// inferred result types.
// RUN: nn-opt %s | nn-opt | FileCheck %s
// RUN: nn-opt %s --mlir-print-op-generic | nn-opt | FileCheck %s
// RUN: nn-opt %s --mlir-print-op-generic | FileCheck %s --check-prefix=GENERIC

// CHECK-LABEL: nn.graph @edit_distance
// CHECK-SAME: (%[[HYP:.+]]: !nn.tensor<[B, Y], i32>, %[[REF:.+]]: !nn.tensor<[B, U], i32>)
// CHECK: %[[E:.+]], %[[N:.+]], %[[C:.+]] = nn.edit_distance %[[HYP]], %[[REF]] : !nn.tensor<[B, Y], i32>, !nn.tensor<[B, U], i32>
// CHECK-NEXT: nn.mark_loss %[[E]], %[[N]] as "ler" normalize custom as_error eval_only : !nn.tensor<[B], f32>, !nn.tensor<[B], f32>
// CHECK-NEXT: %{{.+}}, %{{.+}}, %[[SC:.+]] = nn.edit_distance %[[HYP]], %[[HYP]] : !nn.tensor<[B, Y], i32>, !nn.tensor<[B, Y], i32>
// CHECK-NEXT: nn.mark_loss %{{.+}} as "self" normalize sum as_error : !nn.tensor<[B], f32>
// CHECK-NEXT: %[[WE:.+]], %[[WN:.+]], %{{.+}} = nn.edit_distance %[[HYP]], %[[REF]] words separator 1 : !nn.tensor<[B, Y], i32>, !nn.tensor<[B, U], i32>
// CHECK-NEXT: nn.mark_loss %[[WE]], %[[WN]] as "wer" normalize custom as_error eval_only : !nn.tensor<[B], f32>, !nn.tensor<[B], f32>
// CHECK-NEXT: nn.return %[[C]], %[[SC]] : !nn.tensor<[B, 3], i32>, !nn.tensor<[B, 3], i32>
// GENERIC: "nn.edit_distance"(%{{.+}}, %{{.+}}) : (!nn.tensor<[B, Y], i32>, !nn.tensor<[B, U], i32>) -> (!nn.tensor<[B], f32>, !nn.tensor<[B], f32>, !nn.tensor<[B, 3], i32>)
// GENERIC: "nn.mark_loss"(%{{.+}}, %{{.+}}) <{as_error, eval_only, name = "ler", normalization = 3 : i32
// GENERIC: "nn.edit_distance"(%{{.+}}, %{{.+}}) <{separator = 1 : i64}> : (!nn.tensor<[B, Y], i32>, !nn.tensor<[B, U], i32>) -> (!nn.tensor<[B], f32>, !nn.tensor<[B], f32>, !nn.tensor<[B, 3], i32>)
nn.graph @edit_distance(%hyp: !nn.tensor<[B, Y], i32>, %ref: !nn.tensor<[B, U], i32>)
    -> (!nn.tensor<[B, 3], i32>, !nn.tensor<[B, 3], i32>)
    dims [B: batch, Y: seq(B), U: seq(B)] {
  %e, %n, %c = nn.edit_distance %hyp, %ref : !nn.tensor<[B, Y], i32>, !nn.tensor<[B, U], i32>
  nn.mark_loss %e, %n as "ler" normalize custom as_error eval_only : !nn.tensor<[B], f32>, !nn.tensor<[B], f32>
  %se, %sn, %sc = nn.edit_distance %hyp, %hyp : !nn.tensor<[B, Y], i32>, !nn.tensor<[B, Y], i32>
  nn.mark_loss %se as "self" normalize sum as_error : !nn.tensor<[B], f32>
  %we, %wn, %wc = nn.edit_distance %hyp, %ref words separator 1 : !nn.tensor<[B, Y], i32>, !nn.tensor<[B, U], i32>
  nn.mark_loss %we, %wn as "wer" normalize custom as_error eval_only : !nn.tensor<[B], f32>, !nn.tensor<[B], f32>
  nn.return %c, %sc : !nn.tensor<[B, 3], i32>, !nn.tensor<[B, 3], i32>
}

// nn.expected_risk with both baselines, marked per sequence like any
// per-sequence loss, and its gradient; the generic form spells the inferred
// result type and the baseline's enum value.
// CHECK-LABEL: nn.graph @expected_risk
// CHECK-SAME: (%[[NLL:.+]]: !nn.tensor<[B, K], f32>, %[[ERR:.+]]: !nn.tensor<[B, K], f32>, %[[G:.+]]: !nn.tensor<[B], f32>)
// CHECK: %[[R:.+]] = nn.expected_risk %[[NLL]], %[[ERR]] baseline mean : !nn.tensor<[B, K], f32>, !nn.tensor<[B, K], f32>
// CHECK-NEXT: nn.mark_loss %[[R]] as "mwer" normalize per_sequence : !nn.tensor<[B], f32>
// CHECK-NEXT: %[[N:.+]] = nn.expected_risk %[[NLL]], %[[ERR]] baseline none : !nn.tensor<[B, K], f32>, !nn.tensor<[B, K], f32>
// CHECK-NEXT: %[[D:.+]] = nn.expected_risk_grad %[[G]], %[[NLL]], %[[ERR]] : !nn.tensor<[B], f32>, !nn.tensor<[B, K], f32>, !nn.tensor<[B, K], f32>
// CHECK-NEXT: nn.return %[[N]], %[[D]] : !nn.tensor<[B], f32>, !nn.tensor<[B, K], f32>
// GENERIC: "nn.expected_risk"(%{{.+}}, %{{.+}}) <{baseline = 0 : i32}> : (!nn.tensor<[B, K], f32>, !nn.tensor<[B, K], f32>) -> !nn.tensor<[B], f32>
// GENERIC: "nn.expected_risk"(%{{.+}}, %{{.+}}) <{baseline = 1 : i32}> : (!nn.tensor<[B, K], f32>, !nn.tensor<[B, K], f32>) -> !nn.tensor<[B], f32>
// GENERIC: "nn.expected_risk_grad"(%{{.+}}, %{{.+}}, %{{.+}}) : (!nn.tensor<[B], f32>, !nn.tensor<[B, K], f32>, !nn.tensor<[B, K], f32>) -> !nn.tensor<[B, K], f32>
nn.graph @expected_risk(%nll: !nn.tensor<[B, K], f32>, %err: !nn.tensor<[B, K], f32>, %g: !nn.tensor<[B], f32>)
    -> (!nn.tensor<[B], f32>, !nn.tensor<[B, K], f32>)
    dims [B: batch, K: seq(B)] {
  %r = nn.expected_risk %nll, %err baseline mean : !nn.tensor<[B, K], f32>, !nn.tensor<[B, K], f32>
  nn.mark_loss %r as "mwer" normalize per_sequence : !nn.tensor<[B], f32>
  %n = nn.expected_risk %nll, %err baseline none : !nn.tensor<[B, K], f32>, !nn.tensor<[B, K], f32>
  %d = nn.expected_risk_grad %g, %nll, %err : !nn.tensor<[B], f32>, !nn.tensor<[B, K], f32>, !nn.tensor<[B, K], f32>
  nn.return %n, %d : !nn.tensor<[B], f32>, !nn.tensor<[B, K], f32>
}

// f64 scores over a computed dim: each decoded label's cross entropy
// stands in for a hypothesis score and error; the result is f64.
// CHECK-LABEL: nn.graph @expected_risk_f64_computed
// CHECK: nn.expected_risk %[[S:.+]], %[[S]] baseline none : !nn.tensor<[B, Y], f64>, !nn.tensor<[B, Y], f64>
// CHECK-NEXT: nn.mark_loss %{{.+}} as "mwer" normalize sum : !nn.tensor<[B], f64>
nn.parameter @table : !nn.tensor<[4, 4], f64>
nn.graph @expected_risk_f64_computed(%x: !nn.tensor<[B, T, 4], f32>)
    dims [B: batch, T: seq(B), Y: seq(B) computed] {
  %y, %s = nn.ctc_greedy_decode %x from logits blank 0 : !nn.tensor<[B, T, 4], f32> -> !nn.tensor<[B, Y], i32>, !nn.tensor<[B], f32>
  %t = nn.param_ref @table : !nn.tensor<[4, 4], f64>
  %e = nn.embedding %y, %t : !nn.tensor<[B, Y], i32>, !nn.tensor<[4, 4], f64>
  %c = nn.cross_entropy %e, %y from logits : !nn.tensor<[B, Y, 4], f64>, !nn.tensor<[B, Y], i32>
  %r = nn.expected_risk %c, %c baseline none : !nn.tensor<[B, Y], f64>, !nn.tensor<[B, Y], f64>
  nn.mark_loss %r as "mwer" normalize sum : !nn.tensor<[B], f64>
  nn.return
}
