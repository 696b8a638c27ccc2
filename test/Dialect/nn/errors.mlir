// Round trip of nn.edit_distance (NNErrorOps.td) and of a loss marked
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
// CHECK-NEXT: nn.return %[[C]], %[[SC]] : !nn.tensor<[B, 3], i32>, !nn.tensor<[B, 3], i32>
// GENERIC: "nn.edit_distance"(%{{.+}}, %{{.+}}) : (!nn.tensor<[B, Y], i32>, !nn.tensor<[B, U], i32>) -> (!nn.tensor<[B], f32>, !nn.tensor<[B], f32>, !nn.tensor<[B, 3], i32>)
// GENERIC: "nn.mark_loss"(%{{.+}}, %{{.+}}) <{as_error, eval_only, name = "ler", normalization = 3 : i32
nn.graph @edit_distance(%hyp: !nn.tensor<[B, Y], i32>, %ref: !nn.tensor<[B, U], i32>)
    -> (!nn.tensor<[B, 3], i32>, !nn.tensor<[B, 3], i32>)
    dims [B: batch, Y: seq(B), U: seq(B)] {
  %e, %n, %c = nn.edit_distance %hyp, %ref : !nn.tensor<[B, Y], i32>, !nn.tensor<[B, U], i32>
  nn.mark_loss %e, %n as "ler" normalize custom as_error eval_only : !nn.tensor<[B], f32>, !nn.tensor<[B], f32>
  %se, %sn, %sc = nn.edit_distance %hyp, %hyp : !nn.tensor<[B, Y], i32>, !nn.tensor<[B, Y], i32>
  nn.mark_loss %se as "self" normalize sum as_error : !nn.tensor<[B], f32>
  nn.return %c, %sc : !nn.tensor<[B, 3], i32>, !nn.tensor<[B, 3], i32>
}
