// RUN: nn-opt %s --split-input-file --nn-convert-to-linalg | FileCheck %s

// The transducer family (TransducerPatterns.cpp): prepend_start, the join
// and its gradient, packed over the (t, u) grid and padded, the RNN-T and
// RNA losses, their gradient, the RNA alignment, and gather_states with
// its gradient. A grid dims declaration [B, T, U, U1 = U + 1] lowers to
// the arguments (B, T, T's lengths, U, U's lengths); U1's lengths are
// U's plus one.

// prepend_start: one generic over [B, U1]: the start class (7) at u = 0
// and past the labels, label u - 1 (its index clamped at 0) elsewhere.
// CHECK-LABEL: func.func @prepend_start
// CHECK-SAME: (%[[B:[a-z0-9]+]]: index, %[[U:[a-z0-9]+]]: index, %[[ULEN:[a-z0-9]+]]: tensor<?xi32>, %[[Y:[a-z0-9]+]]: tensor<?x?xi32>) -> tensor<?x?xi32>
// CHECK: %[[U1:.+]] = arith.addi %[[U]], %c1{{(_[0-9]+)?}} : index
// CHECK: %[[INIT:.+]] = tensor.empty(%[[B]], %[[U1]]) : tensor<?x?xi32>
// CHECK: linalg.generic {{{.+}}iterator_types = ["parallel", "parallel"]} outs(%[[INIT]] : tensor<?x?xi32>)
// CHECK-DAG: %[[BI:.+]] = linalg.index 0 : index
// CHECK-DAG: %[[UI:.+]] = linalg.index 1 : index
// CHECK-DAG: %[[LEN:.+]] = tensor.extract %[[ULEN]][%[[BI]]] : tensor<?xi32>
// CHECK-DAG: %[[COUNT:.+]] = arith.index_cast %[[LEN]] : i32 to index
// CHECK-DAG: %[[LABELED:.+]] = arith.cmpi slt, %{{.+}}, %[[COUNT]] : index
// CHECK-DAG: %[[AFTER:.+]] = arith.cmpi sge, %[[UI]], %c1{{(_[0-9]+)?}} : index
// CHECK-DAG: %[[LABEL:.+]] = tensor.extract %[[Y]][%[[BI]], %[[CLAMPED:[a-z0-9_]+]]] : tensor<?x?xi32>
// CHECK-DAG: %[[CLAMPED]] = arith.maxsi %[[PREV:[a-z0-9_]+]], %c0{{(_[0-9]+)?}} : index
// CHECK-DAG: %[[PREV]] = arith.subi %[[UI]], %c1{{(_[0-9]+)?}} : index
// CHECK-DAG: %[[INSIDE:.+]] = arith.andi %{{.+}}, %{{.+}} : i1
// CHECK: %[[V:.+]] = arith.select %[[INSIDE]], %[[LABEL]], %c7_i32{{(_[0-9]+)?}} : i32
// CHECK-NEXT: linalg.yield %[[V]] : i32
nn.graph @prepend_start(%y: !nn.tensor<[B, U], i32>) -> !nn.tensor<[B, U1], i32>
    dims [B: batch, U: seq(B), U1: seq(B) = U + 1] {
  %s = nn.prepend_start %y start 7 : !nn.tensor<[B, U], i32> -> !nn.tensor<[B, U1], i32>
  nn.return %s : !nn.tensor<[B, U1], i32>
}

// -----

// The padded join: one generic over [B, T, U1, D], encoder(b, t) +
// prediction(b, u) where t and u are both inside their sequences, 0
// elsewhere.
// CHECK-LABEL: func.func @join_padded
// CHECK-SAME: (%[[B:[a-z0-9]+]]: index, %[[T:[a-z0-9]+]]: index, %[[TLEN:[a-z0-9]+]]: tensor<?xi32>, %[[U:[a-z0-9]+]]: index, %[[ULEN:[a-z0-9]+]]: tensor<?xi32>, %[[E:[a-z0-9]+]]: tensor<?x?x4xf32>, %[[P:[a-z0-9]+]]: tensor<?x?x4xf32>) -> tensor<?x?x?x4xf32>
// CHECK: %[[U1:.+]] = arith.addi %[[U]], %c1{{(_[0-9]+)?}} : index
// CHECK: %[[U1LEN:.+]] = linalg.generic {{.+}} ins(%[[ULEN]] : tensor<?xi32>)
// CHECK: %[[INIT:.+]] = tensor.empty(%[[B]], %[[T]], %[[U1]]) : tensor<?x?x?x4xf32>
// CHECK: linalg.generic {{{.+}}iterator_types = ["parallel", "parallel", "parallel", "parallel"]} outs(%[[INIT]] : tensor<?x?x?x4xf32>)
// CHECK-DAG: %[[BI:.+]] = linalg.index 0 : index
// CHECK-DAG: %[[TI:.+]] = linalg.index 1 : index
// CHECK-DAG: %[[UI:.+]] = linalg.index 2 : index
// CHECK-DAG: %[[FI:.+]] = linalg.index 3 : index
// CHECK-DAG: %[[FRAMES:.+]] = tensor.extract %[[TLEN]][%[[BI]]] : tensor<?xi32>
// CHECK-DAG: %[[STATES:.+]] = tensor.extract %[[U1LEN]][%[[BI]]] : tensor<?xi32>
// CHECK-DAG: %[[ENC:.+]] = tensor.extract %[[E]][%[[BI]], %[[TI]], %[[FI]]] : tensor<?x?x4xf32>
// CHECK-DAG: %[[PRED:.+]] = tensor.extract %[[P]][%[[BI]], %[[UI]], %[[FI]]] : tensor<?x?x4xf32>
// CHECK-DAG: %[[VALID:.+]] = arith.andi %{{.+}}, %{{.+}} : i1
// CHECK: %[[SUM:.+]] = arith.addf %[[ENC]], %[[PRED]] : f32
// CHECK: %[[V:.+]] = arith.select %[[VALID]], %[[SUM]], %{{.+}} : f32
// CHECK-NEXT: linalg.yield %[[V]] : f32
nn.graph @join_padded(%e: !nn.tensor<[B, T, 4], f32>, %p: !nn.tensor<[B, U1, 4], f32>)
    -> !nn.tensor<[B, T, U1, 4], f32>
    dims [B: batch, T: seq(B), U: seq(B), U1: seq(B) = U + 1] {
  %j = nn.transducer_join %e, %p : !nn.tensor<[B, T, 4], f32>, !nn.tensor<[B, U1, 4], f32> -> !nn.tensor<[B, T, U1, 4], f32>
  nn.return %j : !nn.tensor<[B, T, U1, 4], f32>
}

// -----

// The packed join: J = sum_b T_b U1_b rows; per sequence one generic over
// its T_b U1_b rows (row j is (t, u) = (j / U1_b, j % U1_b)), inserted at
// the sequence's row offset, which grows by T_b U1_b.
// CHECK-LABEL: func.func @join_packed
// CHECK-SAME: (%[[B:[a-z0-9]+]]: index, %[[T:[a-z0-9]+]]: index, %[[TLEN:[a-z0-9]+]]: tensor<?xi32>, %[[U:[a-z0-9]+]]: index, %[[ULEN:[a-z0-9]+]]: tensor<?xi32>, %[[E:[a-z0-9]+]]: tensor<?x?x4xf32>, %[[P:[a-z0-9]+]]: tensor<?x?x4xf32>) -> tensor<?x4xf32>
// CHECK: %[[U1LEN:.+]] = linalg.generic {{.+}} ins(%[[ULEN]] : tensor<?xi32>)
// CHECK: %[[ROWS:.+]] = scf.for %{{.+}} = %{{.+}} to %[[B]] step %{{.+}} iter_args(%{{.+}} = %{{.+}}) -> (index) {
// CHECK: %[[JOINT:.+]] = tensor.empty(%[[ROWS]]) : tensor<?x4xf32>
// CHECK: %[[R:.+]]:2 = scf.for %[[BI:.+]] = %{{.+}} to %[[B]] step %{{.+}} iter_args(%[[ACC:.+]] = %[[JOINT]], %[[OFFSET:.+]] = %c0{{(_[0-9]+)?}}) -> (tensor<?x4xf32>, index) {
// CHECK-DAG: %[[FRAMES:.+]] = arith.index_cast %{{.+}} : i32 to index
// CHECK-DAG: %[[COLUMNS:.+]] = arith.index_cast %{{.+}} : i32 to index
// CHECK: %[[COUNT:.+]] = arith.muli %[[FRAMES]], %[[COLUMNS]] : index
// CHECK: %[[BLOCK:.+]] = tensor.empty(%[[COUNT]]) : tensor<?x4xf32>
// CHECK: %[[FILLED:.+]] = linalg.generic {{{.+}}iterator_types = ["parallel", "parallel"]} outs(%[[BLOCK]] : tensor<?x4xf32>)
// CHECK-DAG: %[[J:.+]] = linalg.index 0 : index
// CHECK-DAG: %[[F:.+]] = linalg.index 1 : index
// CHECK-DAG: %[[TI:.+]] = arith.divui %[[J]], %[[COLUMNS]] : index
// CHECK-DAG: %[[UI:.+]] = arith.remui %[[J]], %[[COLUMNS]] : index
// CHECK-DAG: %[[PRED:.+]] = tensor.extract %[[P]][%[[BI]], %[[UI]], %[[F]]] : tensor<?x?x4xf32>
// CHECK-DAG: %[[ENC:.+]] = tensor.extract %[[E]][%[[BI]], %[[TI]], %[[F]]] : tensor<?x?x4xf32>
// CHECK: %[[SUM:.+]] = arith.addf %[[ENC]], %[[PRED]] : f32
// CHECK-NEXT: linalg.yield %[[SUM]] : f32
// CHECK: %[[WRITTEN:.+]] = tensor.insert_slice %[[FILLED]] into %[[ACC]][%[[OFFSET]], 0] [%[[COUNT]], 4] [1, 1] : tensor<?x4xf32> into tensor<?x4xf32>
// CHECK: %[[NEXT:.+]] = arith.addi %[[OFFSET]], %[[COUNT]] : index
// CHECK: scf.yield %[[WRITTEN]], %[[NEXT]] : tensor<?x4xf32>, index
// CHECK: return %[[R]]#0 : tensor<?x4xf32>
nn.graph @join_packed(%e: !nn.tensor<[B, T, 4], f32>, %p: !nn.tensor<[B, U1, 4], f32>)
    -> !nn.tensor<[J, 4], f32>
    dims [B: batch, T: seq(B), U: seq(B), U1: seq(B) = U + 1, J: packed(B, T, U1)] {
  %j = nn.transducer_join %e, %p : !nn.tensor<[B, T, 4], f32>, !nn.tensor<[B, U1, 4], f32> -> !nn.tensor<[J, 4], f32>
  nn.return %j : !nn.tensor<[J, 4], f32>
}

// -----

// The padded join's gradient: two reductions over the grid into zeroed
// [B, T, D] and [B, U1, D], loops (b, outer, inner, d) with the features
// innermost; the encoder's sums g(b, t, u, d) over u, the prediction's
// over t, each only where both t and u are valid.
// CHECK-LABEL: func.func @join_grad_padded
// CHECK-SAME: %[[G:[a-z0-9]+]]: tensor<?x?x?x4xf32>) -> (tensor<?x?x4xf32>, tensor<?x?x4xf32>)
// CHECK: %[[ENC0:.+]] = linalg.fill ins(%{{.+}} : f32) outs(%{{.+}} : tensor<?x?x4xf32>)
// CHECK: %[[PRED0:.+]] = linalg.fill ins(%{{.+}} : f32) outs(%{{.+}} : tensor<?x?x4xf32>)
// CHECK: %[[DE:.+]] = linalg.generic {indexing_maps = [#{{.+}}, #[[OUT:.+]]], iterator_types = ["parallel", "parallel", "reduction", "parallel"]} ins(%{{.+}} : tensor<?x?x?x4xf32>) outs(%[[ENC0]] : tensor<?x?x4xf32>)
// CHECK-DAG: %[[BI:.+]] = linalg.index 0 : index
// CHECK-DAG: %[[TI:.+]] = linalg.index 1 : index
// CHECK-DAG: %[[UI:.+]] = linalg.index 2 : index
// CHECK-DAG: %[[FI:.+]] = linalg.index 3 : index
// CHECK-DAG: %[[VALID:.+]] = arith.andi %{{.+}}, %{{.+}} : i1
// CHECK-DAG: %[[X:.+]] = tensor.extract %[[G]][%[[BI]], %[[TI]], %[[UI]], %[[FI]]] : tensor<?x?x?x4xf32>
// CHECK: %[[TERM:.+]] = arith.select %[[VALID]], %[[X]], %{{.+}} : f32
// CHECK: %[[SUM:.+]] = arith.addf %{{.+}}, %[[TERM]] : f32
// CHECK-NEXT: linalg.yield %[[SUM]] : f32
// CHECK: %[[DP:.+]] = linalg.generic {indexing_maps = [#{{.+}}, #[[OUT]]], iterator_types = ["parallel", "parallel", "reduction", "parallel"]} ins(%{{.+}} : tensor<?x?x?x4xf32>) outs(%[[PRED0]] : tensor<?x?x4xf32>)
// CHECK-DAG: %[[BI2:.+]] = linalg.index 0 : index
// CHECK-DAG: %[[UI2:.+]] = linalg.index 1 : index
// CHECK-DAG: %[[TI2:.+]] = linalg.index 2 : index
// CHECK-DAG: %[[FI2:.+]] = linalg.index 3 : index
// CHECK-DAG: %[[X2:.+]] = tensor.extract %[[G]][%[[BI2]], %[[TI2]], %[[UI2]], %[[FI2]]] : tensor<?x?x?x4xf32>
// CHECK: arith.select %{{.+}}, %[[X2]], %{{.+}} : f32
// CHECK: return %[[DE]], %[[DP]]
nn.graph @join_grad_padded(%g: !nn.tensor<[B, T, U1, 4], f32>)
    -> (!nn.tensor<[B, T, 4], f32>, !nn.tensor<[B, U1, 4], f32>)
    dims [B: batch, T: seq(B), U: seq(B), U1: seq(B) = U + 1] {
  %de, %dp = nn.transducer_join_grad %g : !nn.tensor<[B, T, U1, 4], f32> -> !nn.tensor<[B, T, 4], f32>, !nn.tensor<[B, U1, 4], f32>
  nn.return %de, %dp : !nn.tensor<[B, T, 4], f32>, !nn.tensor<[B, U1, 4], f32>
}

// -----

// The packed join's gradient: per sequence, [T_b, D] summed over u and
// [U1_b, D] summed over t, both reading row offset + t U1_b + u, inserted
// at the sequence's index; the offset grows by T_b U1_b.
// CHECK-LABEL: func.func @join_grad_packed
// CHECK-SAME: %[[G:[a-z0-9]+]]: tensor<?x4xf32>) -> (tensor<?x?x4xf32>, tensor<?x?x4xf32>)
// CHECK: %[[R:.+]]:3 = scf.for %[[BI:.+]] = %{{.+}} to %{{.+}} step %{{.+}} iter_args(%[[DE:.+]] = %{{.+}}, %[[DP:.+]] = %{{.+}}, %[[OFFSET:.+]] = %c0{{(_[0-9]+)?}}) -> (tensor<?x?x4xf32>, tensor<?x?x4xf32>, index) {
// CHECK-DAG: %[[FRAMES:.+]] = arith.index_cast %{{.+}} : i32 to index
// CHECK-DAG: %[[COLUMNS:.+]] = arith.index_cast %{{.+}} : i32 to index
// CHECK: %[[ES:.+]] = linalg.generic {{{.+}}iterator_types = ["parallel", "reduction", "parallel"]}
// CHECK-DAG: %[[TI:.+]] = linalg.index 0 : index
// CHECK-DAG: %[[UI:.+]] = linalg.index 1 : index
// CHECK-DAG: %[[FI:.+]] = linalg.index 2 : index
// CHECK: %[[SCALED:.+]] = arith.muli %[[TI]], %[[COLUMNS]] : index
// CHECK: %[[LOCAL:.+]] = arith.addi %[[SCALED]], %[[UI]] : index
// CHECK: %[[ROW:.+]] = arith.addi %[[OFFSET]], %[[LOCAL]] : index
// CHECK: tensor.extract %[[G]][%[[ROW]], %[[FI]]] : tensor<?x4xf32>
// CHECK: %[[NEWDE:.+]] = tensor.insert_slice %[[ES]] into %[[DE]][%[[BI]], 0, 0] [1, %[[FRAMES]], 4] [1, 1, 1] : tensor<?x4xf32> into tensor<?x?x4xf32>
// CHECK: %[[PS:.+]] = linalg.generic {{{.+}}iterator_types = ["parallel", "reduction", "parallel"]}
// CHECK-DAG: %[[UI2:.+]] = linalg.index 0 : index
// CHECK-DAG: %[[TI2:.+]] = linalg.index 1 : index
// CHECK-DAG: %[[FI2:.+]] = linalg.index 2 : index
// CHECK: %[[SCALED2:.+]] = arith.muli %[[TI2]], %[[COLUMNS]] : index
// CHECK: %[[LOCAL2:.+]] = arith.addi %[[SCALED2]], %[[UI2]] : index
// CHECK: %[[ROW2:.+]] = arith.addi %[[OFFSET]], %[[LOCAL2]] : index
// CHECK: tensor.extract %[[G]][%[[ROW2]], %[[FI2]]] : tensor<?x4xf32>
// CHECK: %[[NEWDP:.+]] = tensor.insert_slice %[[PS]] into %[[DP]][%[[BI]], 0, 0] [1, %[[COLUMNS]], 4] [1, 1, 1] : tensor<?x4xf32> into tensor<?x?x4xf32>
// CHECK: %[[COUNT:.+]] = arith.muli %[[FRAMES]], %[[COLUMNS]] : index
// CHECK: %[[NEXT:.+]] = arith.addi %[[OFFSET]], %[[COUNT]] : index
// CHECK: scf.yield %[[NEWDE]], %[[NEWDP]], %[[NEXT]]
// CHECK: return %[[R]]#0, %[[R]]#1
nn.graph @join_grad_packed(%g: !nn.tensor<[J, 4], f32>)
    -> (!nn.tensor<[B, T, 4], f32>, !nn.tensor<[B, U1, 4], f32>)
    dims [B: batch, T: seq(B), U: seq(B), U1: seq(B) = U + 1, J: packed(B, T, U1)] {
  %de, %dp = nn.transducer_join_grad %g : !nn.tensor<[J, 4], f32> -> !nn.tensor<[B, T, 4], f32>, !nn.tensor<[B, U1, 4], f32>
  nn.return %de, %dp : !nn.tensor<[B, T, 4], f32>, !nn.tensor<[B, U1, 4], f32>
}

// -----

// RNN-T loss from logits, packed: the joint is read through each row's
// log-sum-exp (row max, sum of exp, max + log; never a [J, V]
// log-softmax). The sequences are independent (an scf.forall, threads on
// the CPU), each starting at its offset, the exclusive prefix sum of the
// grid sizes T_b U1_b computed before them. Per sequence, the forward
// recursion over the grid in float64 on one vector of its U_b + 1
// states: alpha(t, u) = logaddexp(alpha(t - 1, u) + blank(t - 1, u),
// alpha(t, u - 1) + label(t, u - 1)), rows at offset + t U1_b + u. The
// loss is -(alpha(T - 1, U) + blank(T - 1, U)), 0 instead of +inf with
// zero_infinity, inserted at b.
// CHECK-LABEL: func.func @loss_rnnt
// CHECK-SAME: (%[[B:[a-z0-9]+]]: index, %[[T:[a-z0-9]+]]: index, %[[TLEN:[a-z0-9]+]]: tensor<?xi32>, %[[U:[a-z0-9]+]]: index, %[[ULEN:[a-z0-9]+]]: tensor<?xi32>, %[[JOINT:[a-z0-9]+]]: tensor<?x4xf32>, %[[Y:[a-z0-9]+]]: tensor<?x?xi32>) -> tensor<?xf32>
// CHECK: %[[MAX:.+]] = linalg.generic {{{.+}}iterator_types = ["parallel", "reduction"]} ins(%[[JOINT]] : tensor<?x4xf32>)
// CHECK: arith.maximumf
// CHECK: %[[SUM:.+]] = linalg.generic {{{.+}}iterator_types = ["parallel", "reduction"]} ins(%[[JOINT]], %[[MAX]] : tensor<?x4xf32>, tensor<?xf32>)
// CHECK: math.exp
// CHECK: %[[LSE:.+]] = linalg.generic {{{.+}}iterator_types = ["parallel"]} ins(%[[MAX]], %[[SUM]] : tensor<?xf32>, tensor<?xf32>)
// CHECK: math.log
// CHECK-NOT: linalg.generic
// CHECK: %[[OFFSETS:.+]]:2 = scf.for %[[OB:.+]] = %{{.+}} to %[[B]] step %{{.+}} iter_args(%{{.+}} = %{{.+}}, %[[ROWS:.+]] = %c0{{(_[0-9]+)?}}) -> (tensor<?xi32>, index) {
// CHECK: %[[OGRID:.+]] = arith.muli %{{.+}}, %{{.+}} : index
// CHECK-NEXT: %[[ONEXT:.+]] = arith.addi %[[ROWS]], %[[OGRID]] : index
// CHECK: %[[R:.+]] = scf.forall (%[[BI:.+]]) in (%[[B]]) shared_outs(%[[LOSSES:.+]] = %{{.+}}) -> (tensor<?xf32>) {
// CHECK-NEXT: %[[OFFSETB:.+]] = tensor.extract %[[OFFSETS]]#0[%[[BI]]] : tensor<?xi32>
// CHECK-NEXT: %[[OFFSET:.+]] = arith.index_cast %[[OFFSETB]] : i32 to index
// CHECK: %[[TB:.+]] = tensor.extract %[[TLEN]][%[[BI]]] : tensor<?xi32>
// CHECK-NEXT: %[[FRAMES:.+]] = arith.index_cast %[[TB]] : i32 to index
// CHECK: %[[UB:.+]] = tensor.extract %[[ULEN]][%[[BI]]] : tensor<?xi32>
// CHECK-NEXT: %[[LABELS:.+]] = arith.index_cast %[[UB]] : i32 to index
// CHECK-NEXT: %[[COLUMNS:.+]] = arith.addi %[[LABELS]], %c1{{(_[0-9]+)?}} : index
// CHECK-NEXT: %[[ALPHA:.+]] = tensor.empty(%[[COLUMNS]]) : tensor<?xf64>
// CHECK: %[[LAST:.+]] = arith.subi %[[COLUMNS]], %c1{{(_[0-9]+)?}} : index
// CHECK: %[[FWD:.+]] = scf.for %[[TI:.+]] = %c0{{(_[0-9]+)?}} to %[[FRAMES]] step %{{.+}} iter_args(%[[AT:.+]] = %[[ALPHA]]) -> (tensor<?xf64>) {
// CHECK: %[[COLUMN:.+]] = scf.for %[[UI:.+]] = %c0{{(_[0-9]+)?}} to %[[COLUMNS]] step %{{.+}} iter_args(%[[AU:.+]] = %[[AT]]) -> (tensor<?xf64>) {
// The blank from (t - 1, u), t - 1 clamped at 0:
// CHECK-DAG: %[[TM1:.+]] = arith.subi %[[TI]], %c1{{(_[0-9]+)?}} : index
// CHECK-DAG: %[[TPREV:.+]] = arith.maxsi %[[TM1]], %c0{{(_[0-9]+)?}} : index
// CHECK-DAG: %[[BROW0:.+]] = arith.muli %[[TPREV]], %[[COLUMNS]] : index
// CHECK-DAG: %[[BROW1:.+]] = arith.addi %[[BROW0]], %[[UI]] : index
// CHECK-DAG: %[[BROW:.+]] = arith.addi %[[OFFSET]], %[[BROW1]] : index
// CHECK-DAG: %[[BX:.+]] = tensor.extract %[[JOINT]][%[[BROW]], %c0{{(_[0-9]+)?}}] : tensor<?x4xf32>
// CHECK-DAG: %[[BX64:.+]] = arith.extf %[[BX]] : f32 to f64
// CHECK-DAG: %[[BL:.+]] = tensor.extract %[[LSE]][%[[BROW]]] : tensor<?xf32>
// CHECK-DAG: %[[BL64:.+]] = arith.extf %[[BL]] : f32 to f64
// CHECK-DAG: %[[BLP:.+]] = arith.subf %[[BX64]], %[[BL64]] : f64
// CHECK-DAG: %[[BSTAY:.+]] = tensor.extract %[[AU]][%[[UI]]] : tensor<?xf64>
// CHECK-DAG: %[[BELOW:.+]] = arith.addf %[[BSTAY]], %[[BLP]] : f64
// CHECK-DAG: %[[HASBELOW:.+]] = arith.cmpi sge, %[[TI]], %c1{{(_[0-9]+)?}} : index
// CHECK-DAG: %[[BELOWOR:.+]] = arith.select %[[HASBELOW]], %[[BELOW]], %{{.+}} : f64
// Label u - 1 from (t, u - 1), its class clamped into [0, V):
// CHECK-DAG: %[[UM1:.+]] = arith.subi %[[UI]], %c1{{(_[0-9]+)?}} : index
// CHECK-DAG: %[[UPREV:.+]] = arith.maxsi %[[UM1]], %c0{{(_[0-9]+)?}} : index
// CHECK-DAG: %[[LROW0:.+]] = arith.muli %[[TI]], %[[COLUMNS]] : index
// CHECK-DAG: %[[LROW1:.+]] = arith.addi %[[LROW0]], %[[UPREV]] : index
// CHECK-DAG: %[[LROW:.+]] = arith.addi %[[OFFSET]], %[[LROW1]] : index
// CHECK-DAG: %[[LABEL:.+]] = tensor.extract %[[Y]][%[[BI]], %{{.+}}] : tensor<?x?xi32>
// CHECK-DAG: %[[CLASS0:.+]] = arith.index_cast %[[LABEL]] : i32 to index
// CHECK-DAG: %[[CLASS1:.+]] = arith.minsi %[[CLASS0]], %{{.+}} : index
// CHECK-DAG: %[[CLASS:.+]] = arith.maxsi %[[CLASS1]], %c0{{(_[0-9]+)?}} : index
// CHECK-DAG: %[[LX:.+]] = tensor.extract %[[JOINT]][%[[LROW]], %[[CLASS]]] : tensor<?x4xf32>
// CHECK-DAG: %[[LSTAY:.+]] = tensor.extract %[[AU]][%[[UPREV]]] : tensor<?xf64>
// CHECK-DAG: %[[LEFT:.+]] = arith.addf %[[LSTAY]], %{{.+}} : f64
// CHECK-DAG: %[[HASLEFT:.+]] = arith.cmpi sge, %[[UI]], %c1{{(_[0-9]+)?}} : index
// CHECK-DAG: %[[LEFTOR:.+]] = arith.select %[[HASLEFT]], %[[LEFT]], %{{.+}} : f64
// CHECK: %[[M:.+]] = arith.maximumf %[[BELOWOR]], %[[LEFTOR]] : f64
// CHECK: math.exp
// CHECK: math.exp
// CHECK: math.log
// CHECK: %[[NEW:.+]] = arith.select %{{.+}}, %{{.+}}, %{{.+}} : f64
// CHECK-NEXT: %[[WRITTEN:.+]] = tensor.insert %[[NEW]] into %[[AU]][%[[UI]]] : tensor<?xf64>
// CHECK-NEXT: scf.yield %[[WRITTEN]] : tensor<?xf64>
// CHECK: scf.yield %[[COLUMN]] : tensor<?xf64>
// The end: alpha(T - 1, U) + blank(T - 1, U); -inf without frames.
// CHECK: %[[ENDALPHA:.+]] = tensor.extract %[[FWD]][%[[LAST]]] : tensor<?xf64>
// CHECK-NEXT: %[[END:.+]] = arith.addf %[[ENDALPHA]], %{{.+}} : f64
// CHECK: %[[HASFRAMES:.+]] = arith.cmpi sge, %[[FRAMES]], %c1{{(_[0-9]+)?}} : index
// CHECK-NEXT: %[[LOGP:.+]] = arith.select %[[HASFRAMES]], %[[END]], %{{.+}} : f64
// CHECK-NEXT: %[[NEG:.+]] = arith.negf %[[LOGP]] : f64
// CHECK: %[[IMPOSSIBLE:.+]] = arith.cmpf oeq, %[[LOGP]], %{{.+}} : f64
// CHECK-NEXT: %[[LOSS:.+]] = arith.select %[[IMPOSSIBLE]], %{{.+}}, %[[NEG]] : f64
// CHECK-NEXT: %[[LOSS32:.+]] = arith.truncf %[[LOSS]] : f64 to f32
// CHECK-NEXT: %[[TILE:.+]] = tensor.from_elements %[[LOSS32]] : tensor<1xf32>
// CHECK-NEXT: scf.forall.in_parallel {
// CHECK-NEXT: tensor.parallel_insert_slice %[[TILE]] into %[[LOSSES]][%[[BI]]] [1] [1] : tensor<1xf32> into tensor<?xf32>
// CHECK: return %[[R]] : tensor<?xf32>
nn.graph @loss_rnnt(%j: !nn.tensor<[J, 4], f32>, %y: !nn.tensor<[B, U], i32>) -> !nn.tensor<[B], f32>
    dims [B: batch, T: seq(B), U: seq(B), U1: seq(B) = U + 1, J: packed(B, T, U1)] {
  %l = nn.transducer_loss %j, %y from logits topology rnnt blank 0 zero_infinity : !nn.tensor<[J, 4], f32>, !nn.tensor<[B, U], i32>
  nn.return %l : !nn.tensor<[B], f32>
}

// -----

// RNA loss from log-probabilities, padded [B, T, U1, V]: read as they
// are (no log-sum-exp). Row 0 of alpha is the start [0, -inf, ...]; frame
// t - 1 leads from row t - 1 to row t, in place over one vector with u
// descending (u = U - step), so alpha_{t-1}(u - 1) is read before it is
// overwritten. The loss is -alpha_T(U), +inf left as it is.
// CHECK-LABEL: func.func @loss_rna
// CHECK-SAME: (%[[B:[a-z0-9]+]]: index, %[[T:[a-z0-9]+]]: index, %[[TLEN:[a-z0-9]+]]: tensor<?xi32>, %[[U:[a-z0-9]+]]: index, %[[ULEN:[a-z0-9]+]]: tensor<?xi32>, %[[JOINT:[a-z0-9]+]]: tensor<?x?x?x4xf32>, %[[Y:[a-z0-9]+]]: tensor<?x?xi32>) -> tensor<?xf32>
// CHECK-NOT: math.log
// CHECK: %[[R:.+]] = scf.forall (%[[BI:.+]]) in (%[[B]]) shared_outs(%[[LOSSES:.+]] = %{{.+}}) -> (tensor<?xf32>) {
// CHECK: %[[FRAMES:.+]] = arith.index_cast %{{.+}} : i32 to index
// CHECK: %[[COLUMNS:.+]] = arith.addi %{{.+}}, %c1{{(_[0-9]+)?}} : index
// CHECK-NEXT: %[[ALPHA:.+]] = tensor.empty(%[[COLUMNS]]) : tensor<?xf64>
// CHECK: %[[LAST:.+]] = arith.subi %[[COLUMNS]], %c1{{(_[0-9]+)?}} : index
// CHECK: %[[START:.+]] = scf.for %[[U0:.+]] = %c0{{(_[0-9]+)?}} to %[[COLUMNS]] step %{{.+}} iter_args(%[[A0:.+]] = %[[ALPHA]]) -> (tensor<?xf64>) {
// CHECK: %[[FIRST:.+]] = arith.cmpi eq, %[[U0]], %c0{{(_[0-9]+)?}} : index
// CHECK-NEXT: %[[V0:.+]] = arith.select %[[FIRST]], %{{.+}}, %{{.+}} : f64
// CHECK: tensor.insert %[[V0]] into %[[A0]][%[[U0]]] : tensor<?xf64>
// CHECK: %[[STOP:.+]] = arith.addi %[[FRAMES]], %c1{{(_[0-9]+)?}} : index
// CHECK: %[[FWD:.+]] = scf.for %[[TI:.+]] = %c1{{(_[0-9]+)?}} to %[[STOP]] step %{{.+}} iter_args(%[[AT:.+]] = %[[START]]) -> (tensor<?xf64>) {
// CHECK: %[[TPREV:.+]] = arith.subi %[[TI]], %c1{{(_[0-9]+)?}} : index
// CHECK: scf.for %[[STEP:.+]] = %c0{{(_[0-9]+)?}} to %[[COLUMNS]] step %{{.+}} iter_args(%[[AU:.+]] = %[[AT]]) -> (tensor<?xf64>) {
// CHECK-NEXT: %[[UI:.+]] = arith.subi %[[LAST]], %[[STEP]] : index
// CHECK-DAG: %[[BX:.+]] = tensor.extract %[[JOINT]][%[[BI]], %[[TPREV]], %[[UI]], %c3{{(_[0-9]+)?}}] : tensor<?x?x?x4xf32>
// CHECK-DAG: %[[BX64:.+]] = arith.extf %[[BX]] : f32 to f64
// CHECK-DAG: %[[BSTAY:.+]] = tensor.extract %[[AU]][%[[UI]]] : tensor<?xf64>
// CHECK-DAG: %[[STAY:.+]] = arith.addf %[[BSTAY]], %[[BX64]] : f64
// CHECK-DAG: %[[UPREV:.+]] = arith.maxsi %{{.+}}, %c0{{(_[0-9]+)?}} : index
// CHECK-DAG: %[[LX:.+]] = tensor.extract %[[JOINT]][%[[BI]], %[[TPREV]], %[[UPREV]], %{{.+}}] : tensor<?x?x?x4xf32>
// CHECK-DAG: %[[LX64:.+]] = arith.extf %[[LX]] : f32 to f64
// CHECK-DAG: %[[LSTAY:.+]] = tensor.extract %[[AU]][%[[UPREV]]] : tensor<?xf64>
// CHECK-DAG: %[[MOVE:.+]] = arith.addf %[[LSTAY]], %[[LX64]] : f64
// CHECK-DAG: %[[HASMOVE:.+]] = arith.cmpi sge, %[[UI]], %c1{{(_[0-9]+)?}} : index
// CHECK-DAG: %[[MOVEOR:.+]] = arith.select %[[HASMOVE]], %[[MOVE]], %{{.+}} : f64
// CHECK: arith.maximumf %[[STAY]], %[[MOVEOR]] : f64
// CHECK: %[[NEW:.+]] = arith.select %{{.+}}, %{{.+}}, %{{.+}} : f64
// CHECK-NEXT: tensor.insert %[[NEW]] into %[[AU]][%[[UI]]] : tensor<?xf64>
// CHECK: %[[LOGP:.+]] = tensor.extract %[[FWD]][%[[LAST]]] : tensor<?xf64>
// CHECK-NEXT: %[[NEG:.+]] = arith.negf %[[LOGP]] : f64
// CHECK-NEXT: %[[LOSS32:.+]] = arith.truncf %[[NEG]] : f64 to f32
// CHECK-NEXT: %[[TILE:.+]] = tensor.from_elements %[[LOSS32]] : tensor<1xf32>
// CHECK-NEXT: scf.forall.in_parallel {
// CHECK-NEXT: tensor.parallel_insert_slice %[[TILE]] into %[[LOSSES]][%[[BI]]] [1] [1] : tensor<1xf32> into tensor<?xf32>
// CHECK: return %[[R]] : tensor<?xf32>
nn.graph @loss_rna(%j: !nn.tensor<[B, T, U1, 4], f32>, %y: !nn.tensor<[B, U], i32>) -> !nn.tensor<[B], f32>
    dims [B: batch, T: seq(B), U: seq(B), U1: seq(B) = U + 1] {
  %l = nn.transducer_loss %j, %y from log_probs topology rna blank 3 : !nn.tensor<[B, T, U1, 4], f32>, !nn.tensor<[B, U], i32>
  nn.return %l : !nn.tensor<[B], f32>
}

// -----

// RNN-T gradient from logits, packed. Per sequence: alpha into a
// [T + 1, U + 1] float64 table, log p as in the loss, and the backward
// recursion from the last frame down (t = T_b - 1 - step, u descending)
// into one vector beta. Each row (t, u), at offset + t U1_b + u, gets
// the posteriors of its blank and of label u, exp(alpha + term - log p)
// times the sequence's incoming gradient (NaN for an impossible
// sequence), each flushed to 0 below the smallest normal f32, their sum,
// and label u (-1 at u = U). One generic over [J, V] then gives
// occ * softmax - gamma, exactly 0 on rows without posterior.
// CHECK-LABEL: func.func @loss_grad_rnnt
// CHECK-SAME: (%[[B:[a-z0-9]+]]: index, %[[T:[a-z0-9]+]]: index, %[[TLEN:[a-z0-9]+]]: tensor<?xi32>, %[[U:[a-z0-9]+]]: index, %[[ULEN:[a-z0-9]+]]: tensor<?xi32>, %[[G:[a-z0-9]+]]: tensor<?xf32>, %[[JOINT:[a-z0-9]+]]: tensor<?x4xf32>, %[[Y:[a-z0-9]+]]: tensor<?x?xi32>) -> tensor<?x4xf32>
// CHECK: %[[LSE:.+]] = linalg.generic {{{.+}}iterator_types = ["parallel"]} ins(%{{.+}}, %{{.+}} : tensor<?xf32>, tensor<?xf32>)
// CHECK: %[[OFFSETS:.+]]:2 = scf.for %{{.+}} = %{{.+}} to %[[B]] step %{{.+}} iter_args(%{{.+}} = %{{.+}}, %{{.+}} = %c0{{(_[0-9]+)?}}) -> (tensor<?xi32>, index) {
// CHECK: %[[R:.+]]:4 = scf.forall (%[[BI:.+]]) in (%[[B]]) shared_outs(%[[OCCALL:.+]] = %{{.+}}, %[[BLANKALL:.+]] = %{{.+}}, %[[LABELALL:.+]] = %{{.+}}, %[[ROWLABELSALL:.+]] = %{{.+}}) -> (tensor<?xf32>, tensor<?xf32>, tensor<?xf32>, tensor<?xi32>) {
// CHECK-NEXT: %[[OFFSETB:.+]] = tensor.extract %[[OFFSETS]]#0[%[[BI]]] : tensor<?xi32>
// CHECK-NEXT: %[[OFFSET:.+]] = arith.index_cast %[[OFFSETB]] : i32 to index
// CHECK: %[[FRAMES:.+]] = arith.index_cast %{{.+}} : i32 to index
// CHECK: %[[COLUMNS:.+]] = arith.addi %{{.+}}, %c1{{(_[0-9]+)?}} : index
// Packed, the sequence's tiles are its T_b U1_b rows, each written by
// the backward recursion: not filled.
// CHECK-NEXT: %[[GRID:.+]] = arith.muli %[[FRAMES]], %[[COLUMNS]] : index
// CHECK-NEXT: %[[OCC:.+]] = tensor.empty(%[[GRID]]) : tensor<?xf32>
// CHECK-NEXT: %[[BLANKP:.+]] = tensor.empty(%[[GRID]]) : tensor<?xf32>
// CHECK-NEXT: %[[LABELP:.+]] = tensor.empty(%[[GRID]]) : tensor<?xf32>
// CHECK-NEXT: %[[ROWLABELS:.+]] = tensor.empty(%[[GRID]]) : tensor<?xi32>
// CHECK: %[[FRAMES1:.+]] = arith.addi %[[FRAMES]], %c1{{(_[0-9]+)?}} : index
// CHECK-NEXT: %[[TABLE:.+]] = tensor.empty(%[[FRAMES1]], %[[COLUMNS]]) : tensor<?x?xf64>
// The forward recursion writes the table at (t, u):
// CHECK: %[[ALPHAS:.+]] = scf.for %[[TI:.+]] = %{{.+}} to %[[FRAMES]] step %{{.+}} iter_args(%[[AT:.+]] = %[[TABLE]]) -> (tensor<?x?xf64>) {
// CHECK: scf.for %[[UI:.+]] = %{{.+}} to %[[COLUMNS]] step %{{.+}} iter_args(%[[AU:.+]] = %[[AT]]) -> (tensor<?x?xf64>) {
// CHECK: tensor.insert %{{.+}} into %[[AU]][%[[TI]], %[[UI]]] : tensor<?x?xf64>
// CHECK: %[[LOGP:.+]] = arith.select %{{.+}}, %{{.+}}, %{{.+}} : f64
// CHECK: %[[LAST:.+]] = arith.subi %[[COLUMNS]], %c1{{(_[0-9]+)?}} : index
// CHECK: %[[FEASIBLE:.+]] = arith.cmpf ogt, %[[LOGP]], %{{.+}} : f64
// CHECK: %[[GRADB:.+]] = tensor.extract %[[G]][%[[BI]]] : tensor<?xf32>
// CHECK-NEXT: %[[GRADB64:.+]] = arith.extf %[[GRADB]] : f32 to f64
// CHECK-NEXT: %[[NAN:.+]] = arith.constant 0x7FF8000000000000 : f64
// CHECK-NEXT: %[[SCALE:.+]] = arith.select %[[FEASIBLE]], %[[GRADB64]], %[[NAN]] : f64
// CHECK: %[[SAFELOGP:.+]] = arith.select %[[FEASIBLE]], %[[LOGP]], %{{.+}} : f64
// beta's initial vector: 0 at U, -inf elsewhere.
// CHECK: %[[BETA:.+]] = tensor.empty(%[[COLUMNS]]) : tensor<?xf64>
// CHECK: %[[BETAINIT:.+]] = scf.for %[[UB:.+]] = %{{.+}} to %[[COLUMNS]] step %{{.+}} iter_args(%[[BV:.+]] = %[[BETA]]) -> (tensor<?xf64>) {
// CHECK: %[[ATEND:.+]] = arith.cmpi eq, %[[UB]], %[[LAST]] : index
// CHECK-NEXT: %[[BINIT:.+]] = arith.select %[[ATEND]], %{{.+}}, %{{.+}} : f64
// CHECK-NEXT: tensor.insert %[[BINIT]] into %[[BV]][%[[UB]]] : tensor<?xf64>
// CHECK: %[[BWD:.+]]:5 = scf.for %[[STEP:.+]] = %{{.+}} to %[[FRAMES]] step %{{.+}} iter_args(%[[O1:.+]] = %[[OCC]], %[[B1:.+]] = %[[BLANKP]], %[[L1:.+]] = %[[LABELP]], %[[RL1:.+]] = %[[ROWLABELS]], %[[BETAT:.+]] = %[[BETAINIT]])
// CHECK: %[[TM:.+]] = arith.subi %[[FRAMES]], %c1{{(_[0-9]+)?}} : index
// CHECK-NEXT: %[[TB:.+]] = arith.subi %[[TM]], %[[STEP]] : index
// CHECK: %[[TN:.+]] = arith.addi %[[TB]], %c1{{(_[0-9]+)?}} : index
// CHECK-NEXT: %[[HASNEXT:.+]] = arith.cmpi slt, %[[TN]], %[[FRAMES]] : index
// CHECK: scf.for %[[IU:.+]] = %{{.+}} to %[[COLUMNS]] step %{{.+}} iter_args(%[[O2:.+]] = %[[O1]], %[[B2:.+]] = %[[B1]], %[[L2:.+]] = %[[L1]], %[[RL2:.+]] = %[[RL1]], %[[BETAU:.+]] = %[[BETAT]])
// CHECK-NEXT: %[[UI:.+]] = arith.subi %[[LAST]], %[[IU]] : index
// CHECK-DAG: %[[HASLABEL:.+]] = arith.cmpi slt, %[[UI]], %[[LAST]] : index
// CHECK-DAG: %[[BHERE:.+]] = tensor.extract %[[BETAU]][%[[UI]]] : tensor<?xf64>
// CHECK-DAG: %[[AFTERBLANK:.+]] = arith.select %[[HASNEXT]], %[[BHERE]], %{{.+}} : f64
// CHECK-DAG: %[[BLANKTERM:.+]] = arith.addf %{{.+}}, %[[AFTERBLANK]] : f64
// CHECK-DAG: %[[LABELTERM:.+]] = arith.select %[[HASLABEL]], %{{.+}}, %{{.+}} : f64
// CHECK-DAG: %[[ALPHA:.+]] = tensor.extract %[[ALPHAS]][%[[TB]], %[[UI]]] : tensor<?x?xf64>
// CHECK-DAG: %[[PB0:.+]] = arith.addf %[[ALPHA]], %[[BLANKTERM]] : f64
// CHECK-DAG: %[[PB1:.+]] = arith.subf %[[PB0]], %[[SAFELOGP]] : f64
// CHECK-DAG: %[[PB2:.+]] = math.exp %[[PB1]] : f64
// CHECK-DAG: %[[PB3:.+]] = arith.select %[[FEASIBLE]], %[[PB2]], %{{.+}} : f64
// CHECK-DAG: %[[PBLANK:.+]] = arith.mulf %[[PB3]], %[[SCALE]] : f64
// CHECK-DAG: %[[PL0:.+]] = arith.addf %[[ALPHA]], %[[LABELTERM]] : f64
// CHECK-DAG: %[[PL1:.+]] = arith.subf %[[PL0]], %[[SAFELOGP]] : f64
// CHECK-DAG: %[[PL2:.+]] = math.exp %[[PL1]] : f64
// CHECK-DAG: %[[PL3:.+]] = arith.select %[[FEASIBLE]], %[[PL2]], %{{.+}} : f64
// CHECK-DAG: %[[PLABEL:.+]] = arith.mulf %[[PL3]], %[[SCALE]] : f64
// CHECK-DAG: %[[NEWBETA:.+]] = tensor.insert %[[NEXTBETA:[a-z0-9_]+]] into %[[BETAU]][%[[UI]]] : tensor<?xf64>
// CHECK-DAG: %[[NEXTBETA]] = arith.select %{{.+}}, %{{.+}}, %{{.+}} : f64
// The row, its total posterior, flushed; the joint's row is offset +
// t U1_b + u, the tile's t U1_b + u:
// CHECK-DAG: %[[NEWRL:.+]] = tensor.insert %[[ROWLABEL:[a-z0-9_]+]] into %[[RL2]][%[[ROW:[a-z0-9_]+]]] : tensor<?xi32>
// CHECK-DAG: %[[JROW:.+]] = arith.addi %[[OFFSET]], %{{.+}} : index
// CHECK-DAG: tensor.extract %[[JOINT]][%[[JROW]], %{{.+}}] : tensor<?x4xf32>
// CHECK-DAG: %[[ROW]] = arith.addi %[[ROW0:[a-z0-9_]+]], %[[UI]] : index
// CHECK-DAG: %[[ROW0]] = arith.muli %[[TB]], %[[COLUMNS]] : index
// CHECK-DAG: %[[POST:.+]] = arith.addf %[[PBLANK]], %[[PLABEL]] : f64
// CHECK-DAG: %[[ABS:.+]] = math.absf %[[POST]] : f64
// CHECK-DAG: %[[SMALL:.+]] = arith.cmpf olt, %[[ABS]], %[[TINY:[a-z0-9_]+]] : f64
// CHECK-DAG: %[[TINY]] = arith.constant 1.1754943508222875E-38 : f64
// CHECK-DAG: %[[FLUSHED:.+]] = arith.select %[[SMALL]], %{{.+}}, %[[POST]] : f64
// CHECK-DAG: %[[POST32:.+]] = arith.truncf %[[FLUSHED]] : f64 to f32
// CHECK-DAG: %[[NEWOCC:.+]] = tensor.insert %[[POST32]] into %[[O2]][%[[ROW]]] : tensor<?xf32>
// CHECK-DAG: %[[ABSB:.+]] = math.absf %[[PBLANK]] : f64
// CHECK-DAG: %[[SMALLB:.+]] = arith.cmpf olt, %[[ABSB]], %{{.+}} : f64
// CHECK-DAG: %[[FLUSHEDB:.+]] = arith.select %[[SMALLB]], %{{.+}}, %[[PBLANK]] : f64
// CHECK-DAG: %[[BLANK32:.+]] = arith.truncf %[[FLUSHEDB]] : f64 to f32
// CHECK-DAG: %[[NEWBLANK:.+]] = tensor.insert %[[BLANK32]] into %[[B2]][%[[ROW]]] : tensor<?xf32>
// CHECK-DAG: %[[ABSL:.+]] = math.absf %[[PLABEL]] : f64
// CHECK-DAG: %[[SMALLL:.+]] = arith.cmpf olt, %[[ABSL]], %{{.+}} : f64
// CHECK-DAG: %[[FLUSHEDL:.+]] = arith.select %[[SMALLL]], %{{.+}}, %[[PLABEL]] : f64
// CHECK-DAG: %[[LABEL32:.+]] = arith.truncf %[[FLUSHEDL]] : f64 to f32
// CHECK-DAG: %[[NEWLABEL:.+]] = tensor.insert %[[LABEL32]] into %[[L2]][%[[ROW]]] : tensor<?xf32>
// CHECK-DAG: %[[ROWLABEL]] = arith.select %[[HASLABEL]], %{{.+}}, %c-1_i32{{(_[0-9]+)?}} : i32
// CHECK: scf.yield %[[NEWOCC]], %[[NEWBLANK]], %[[NEWLABEL]], %[[NEWRL]], %[[NEWBETA]] :
// CHECK: scf.forall.in_parallel {
// CHECK-NEXT: tensor.parallel_insert_slice %[[BWD]]#0 into %[[OCCALL]][%[[OFFSET]]] [%[[GRID]]] [1] : tensor<?xf32> into tensor<?xf32>
// CHECK-NEXT: tensor.parallel_insert_slice %[[BWD]]#1 into %[[BLANKALL]][%[[OFFSET]]] [%[[GRID]]] [1] : tensor<?xf32> into tensor<?xf32>
// CHECK-NEXT: tensor.parallel_insert_slice %[[BWD]]#2 into %[[LABELALL]][%[[OFFSET]]] [%[[GRID]]] [1] : tensor<?xf32> into tensor<?xf32>
// CHECK-NEXT: tensor.parallel_insert_slice %[[BWD]]#3 into %[[ROWLABELSALL]][%[[OFFSET]]] [%[[GRID]]] [1] : tensor<?xi32> into tensor<?xi32>
// CHECK: %[[INIT:.+]] = tensor.empty(%{{.+}}) : tensor<?x4xf32>
// CHECK: %[[DJ:.+]] = linalg.generic {indexing_maps = [#[[ID:map[0-9]*]], #[[ROWMAP:map[0-9]*]], #[[ROWMAP]], #[[ROWMAP]], #[[ROWMAP]], #[[ROWMAP]], #[[ID]]], iterator_types = ["parallel", "parallel"]} ins(%[[JOINT]], %[[R]]#0, %[[R]]#1, %[[R]]#2, %[[R]]#3, %[[LSE]] : tensor<?x4xf32>, tensor<?xf32>, tensor<?xf32>, tensor<?xf32>, tensor<?xi32>, tensor<?xf32>) outs(%[[INIT]] : tensor<?x4xf32>)
// CHECK-NEXT: ^bb0(%[[X:[a-z0-9_]+]]: f32, %[[OC:[a-z0-9_]+]]: f32, %[[PB:[a-z0-9_]+]]: f32, %[[PL:[a-z0-9_]+]]: f32, %[[LB:[a-z0-9_]+]]: i32, %[[LS:[a-z0-9_]+]]: f32, %{{.+}}: f32):
// CHECK-DAG: %[[K:.+]] = linalg.index 1 : index
// CHECK-DAG: %[[LK:.+]] = arith.index_cast %[[LB]] : i32 to index
// CHECK-DAG: %[[ISLABEL:.+]] = arith.cmpi eq, %[[K]], %[[LK]] : index
// CHECK-DAG: %[[GL:.+]] = arith.select %[[ISLABEL]], %[[PL]], %{{.+}} : f32
// CHECK-DAG: %[[ISBLANK:.+]] = arith.cmpi eq, %[[K]], %c0{{(_[0-9]+)?}} : index
// CHECK-DAG: %[[GBL:.+]] = arith.select %[[ISBLANK]], %[[PB]], %{{.+}} : f32
// CHECK-DAG: %[[GAMMA:.+]] = arith.addf %[[GBL]], %[[GL]] : f32
// CHECK-DAG: %[[SHIFTED:.+]] = arith.subf %[[X]], %[[LS]] : f32
// CHECK-DAG: %[[SOFTMAX:.+]] = math.exp %[[SHIFTED]] : f32
// CHECK-DAG: %[[SCALED:.+]] = arith.mulf %[[OC]], %[[SOFTMAX]] : f32
// CHECK-DAG: %[[VALUE:.+]] = arith.subf %[[SCALED]], %[[GAMMA]] : f32
// CHECK-DAG: %[[NOPOST:.+]] = arith.cmpf oeq, %[[OC]], %{{.+}} : f32
// CHECK-DAG: %[[MASKED:.+]] = arith.select %[[NOPOST]], %{{.+}}, %[[VALUE]] : f32
// CHECK-DAG: %[[ABSV:.+]] = math.absf %[[MASKED]] : f32
// CHECK-DAG: %[[SMALLV:.+]] = arith.cmpf olt, %[[ABSV]], %[[TINYV:[a-z0-9_]+]] : f32
// CHECK-DAG: %[[TINYV]] = arith.constant 1.17549435E-38 : f32
// CHECK: %[[OUT:.+]] = arith.select %[[SMALLV]], %{{.+}}, %[[MASKED]] : f32
// CHECK-NEXT: linalg.yield %[[OUT]] : f32
// CHECK: return %[[DJ]] : tensor<?x4xf32>
nn.graph @loss_grad_rnnt(%g: !nn.tensor<[B], f32>, %j: !nn.tensor<[J, 4], f32>, %y: !nn.tensor<[B, U], i32>) -> !nn.tensor<[J, 4], f32>
    dims [B: batch, T: seq(B), U: seq(B), U1: seq(B) = U + 1, J: packed(B, T, U1)] {
  %d = nn.transducer_loss_grad %g, %j, %y from logits topology rnnt blank 0 : !nn.tensor<[B], f32>, !nn.tensor<[J, 4], f32>, !nn.tensor<[B, U], i32>
  nn.return %d : !nn.tensor<[J, 4], f32>
}

// -----

// RNA gradient from log-probabilities, padded, with zero_infinity: an
// impossible sequence's scale is 0, not NaN; the backward recursion runs
// u ascending (beta_{t+1}(u + 1) is still the next row's) and the blank
// term reads beta_{t+1}(u) at every frame (the initial vector is
// beta_T); the sequence's tiles are [T, U1] (rows past its grid keep
// 0 and -1), inserted at [b, 0, 0]. The last generic has no
// log-sum-exp: -gamma.
// CHECK-LABEL: func.func @loss_grad_rna
// CHECK-SAME: %[[G:[a-z0-9]+]]: tensor<?xf32>, %[[JOINT:[a-z0-9]+]]: tensor<?x?x?x4xf32>, %[[Y:[a-z0-9]+]]: tensor<?x?xi32>) -> tensor<?x?x?x4xf32>
// CHECK-NOT: math.log
// CHECK: %[[R:.+]]:4 = scf.forall (%[[BI:.+]]) in (%{{.+}}) shared_outs(%[[OCCALL:.+]] = %{{.+}}, %{{.+}} = %{{.+}}, %{{.+}} = %{{.+}}, %{{.+}} = %{{.+}}) -> (tensor<?x?x?xf32>, tensor<?x?x?xf32>, tensor<?x?x?xf32>, tensor<?x?x?xi32>) {
// CHECK: %[[OCC0:.+]] = linalg.fill ins(%{{.+}} : f32) outs(%{{.+}} : tensor<?x?xf32>)
// CHECK: linalg.fill ins(%{{.+}} : f32) outs(%{{.+}} : tensor<?x?xf32>)
// CHECK: linalg.fill ins(%{{.+}} : f32) outs(%{{.+}} : tensor<?x?xf32>)
// CHECK: linalg.fill ins(%c-1_i32{{(_[0-9]+)?}} : i32) outs(%{{.+}} : tensor<?x?xi32>)
// CHECK: %[[FEASIBLE:.+]] = arith.cmpf ogt, %{{.+}}, %{{.+}} : f64
// CHECK: %[[GRADB:.+]] = tensor.extract %[[G]][%[[BI]]] : tensor<?xf32>
// CHECK-NEXT: %[[GRADB64:.+]] = arith.extf %[[GRADB]] : f32 to f64
// CHECK-NEXT: %[[ZERO:.+]] = arith.constant 0.000000e+00 : f64
// CHECK-NEXT: %[[SCALE:.+]] = arith.select %[[FEASIBLE]], %[[GRADB64]], %[[ZERO]] : f64
// CHECK: %[[BWD:.+]]:5 = scf.for %[[STEP:.+]] = %{{.+}} to %[[FRAMES:.+]] step %{{.+}} iter_args(%[[O1:.+]] = %[[OCC0]], %{{.+}} = %{{.+}}, %{{.+}} = %{{.+}}, %{{.+}} = %{{.+}}, %{{.+}} = %{{.+}})
// CHECK: %[[TM:.+]] = arith.subi %[[FRAMES]], %c1{{(_[0-9]+)?}} : index
// CHECK-NEXT: %[[TB:.+]] = arith.subi %[[TM]], %[[STEP]] : index
// CHECK: scf.for %[[UI:.+]] = %{{.+}} to %{{.+}} step %{{.+}} iter_args(%[[O2:.+]] = %[[O1]], %{{.+}} = %{{.+}}, %{{.+}} = %{{.+}}, %{{.+}} = %{{.+}}, %[[BETAU:.+]] = %{{.+}})
// CHECK-NOT: arith.subi %{{.+}}, %[[UI]] : index
// CHECK-DAG: %[[BHERE:.+]] = tensor.extract %[[BETAU]][%[[UI]]] : tensor<?xf64>
// CHECK-DAG: %[[BX:.+]] = tensor.extract %[[JOINT]][%[[BI]], %[[TB]], %[[UI]], %c3{{(_[0-9]+)?}}] : tensor<?x?x?x4xf32>
// CHECK-DAG: %[[BX64:.+]] = arith.extf %[[BX]] : f32 to f64
// CHECK-DAG: %[[BLANKTERM:.+]] = arith.addf %[[BX64]], %[[BHERE]] : f64
// CHECK-DAG: tensor.insert %{{.+}} into %[[O2]][%[[TB]], %[[UI]]] : tensor<?x?xf32>
// CHECK: tensor.insert %{{.+}} into %[[BETAU]][%[[UI]]] : tensor<?xf64>
// CHECK: scf.forall.in_parallel {
// CHECK-NEXT: tensor.parallel_insert_slice %[[BWD]]#0 into %[[OCCALL]][%[[BI]], 0, 0] [1, %{{.+}}, %{{.+}}] [1, 1, 1] : tensor<?x?xf32> into tensor<?x?x?xf32>
// CHECK: linalg.generic {{{.+}}iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%[[JOINT]], %{{.+}}, %{{.+}}, %{{.+}}, %{{.+}} : tensor<?x?x?x4xf32>, tensor<?x?x?xf32>, tensor<?x?x?xf32>, tensor<?x?x?xf32>, tensor<?x?x?xi32>)
// CHECK-NEXT: ^bb0(%{{.+}}: f32, %[[OC:[a-z0-9_]+]]: f32, %[[PB:[a-z0-9_]+]]: f32, %[[PL:[a-z0-9_]+]]: f32, %[[LB:[a-z0-9_]+]]: i32, %{{.+}}: f32):
// CHECK-DAG: %[[K:.+]] = linalg.index 3 : index
// CHECK-DAG: %[[ISBLANK:.+]] = arith.cmpi eq, %[[K]], %c3{{(_[0-9]+)?}} : index
// CHECK-DAG: %[[GBL:.+]] = arith.select %[[ISBLANK]], %[[PB]], %{{.+}} : f32
// CHECK-DAG: %[[GL:.+]] = arith.select %{{.+}}, %[[PL]], %{{.+}} : f32
// CHECK-DAG: %[[GAMMA:.+]] = arith.addf %[[GBL]], %[[GL]] : f32
// CHECK-DAG: %[[NEG:.+]] = arith.negf %[[GAMMA]] : f32
// CHECK-NOT: math.exp
// CHECK: %[[NOPOST:.+]] = arith.cmpf oeq, %[[OC]], %{{.+}} : f32
// CHECK-NEXT: arith.select %[[NOPOST]], %{{.+}}, %[[NEG]] : f32
nn.graph @loss_grad_rna(%g: !nn.tensor<[B], f32>, %j: !nn.tensor<[B, T, U1, 4], f32>, %y: !nn.tensor<[B, U], i32>) -> !nn.tensor<[B, T, U1, 4], f32>
    dims [B: batch, T: seq(B), U: seq(B), U1: seq(B) = U + 1] {
  %d = nn.transducer_loss_grad %g, %j, %y from log_probs topology rna blank 3 zero_infinity : !nn.tensor<[B], f32>, !nn.tensor<[B, T, U1, 4], f32>, !nn.tensor<[B, U], i32>
  nn.return %d : !nn.tensor<[B, T, U1, 4], f32>
}

// -----

// RNA alignment, packed log-probabilities: delta is a [T + 1, U + 1]
// float64 table, row 0 the start; frame t - 1 leads from row t - 1 to
// row t, keeping the label move only where it scores strictly higher
// (ties stay on the blank). The backtrace from (T, U) runs only for a
// feasible sequence, recomputes both candidates from the table and writes
// label u - 1 or the blank (2) at frame t - 1 of the sequence's row
// (-1 elsewhere), moving to u - 1 when the label won. The score is
// delta(T, U). The sequences are an scf.forall (threads on the CPU), each
// with its own table, inserting its row and score.
// CHECK-LABEL: func.func @align
// CHECK-SAME: (%[[B:[a-z0-9]+]]: index, %[[T:[a-z0-9]+]]: index, %[[TLEN:[a-z0-9]+]]: tensor<?xi32>, %[[U:[a-z0-9]+]]: index, %[[ULEN:[a-z0-9]+]]: tensor<?xi32>, %[[JOINT:[a-z0-9]+]]: tensor<?x4xf32>, %[[Y:[a-z0-9]+]]: tensor<?x?xi32>) -> (tensor<?x?xi32>, tensor<?xf32>)
// CHECK: %[[OFFSETS:.+]]:2 = scf.for %{{.+}} = %{{.+}} to %[[B]] step %{{.+}} iter_args(%{{.+}} = %{{.+}}, %{{.+}} = %c0{{(_[0-9]+)?}}) -> (tensor<?xi32>, index) {
// CHECK: %[[R:.+]]:2 = scf.forall (%[[BI:.+]]) in (%[[B]]) shared_outs(%[[ALIGNMENT:.+]] = %{{.+}}, %[[SCORES:.+]] = %{{.+}}) -> (tensor<?x?xi32>, tensor<?xf32>) {
// CHECK-NEXT: %[[OFFSETB:.+]] = tensor.extract %[[OFFSETS]]#0[%[[BI]]] : tensor<?xi32>
// CHECK-NEXT: %[[OFFSET:.+]] = arith.index_cast %[[OFFSETB]] : i32 to index
// CHECK: %[[FRAMES:.+]] = arith.index_cast %{{.+}} : i32 to index
// CHECK: %[[COLUMNS:.+]] = arith.addi %{{.+}}, %c1{{(_[0-9]+)?}} : index
// CHECK: %[[LAST:.+]] = arith.subi %[[COLUMNS]], %c1{{(_[0-9]+)?}} : index
// CHECK: %[[FRAMES1:.+]] = arith.addi %[[FRAMES]], %c1{{(_[0-9]+)?}} : index
// CHECK-NEXT: %[[TABLE:.+]] = tensor.empty(%[[FRAMES1]], %[[COLUMNS]]) : tensor<?x?xf64>
// CHECK: %[[START:.+]] = scf.for %[[U0:.+]] = %{{.+}} to %[[COLUMNS]] step %{{.+}} iter_args(%[[D0:.+]] = %[[TABLE]]) -> (tensor<?x?xf64>) {
// CHECK: tensor.insert %{{.+}} into %[[D0]][%c0{{(_[0-9]+)?}}, %[[U0]]] : tensor<?x?xf64>
// CHECK: %[[STOP:.+]] = arith.addi %[[FRAMES]], %c1{{(_[0-9]+)?}} : index
// CHECK: %[[DELTA:.+]] = scf.for %[[TI:.+]] = %c1{{(_[0-9]+)?}} to %[[STOP]] step %{{.+}} iter_args(%[[DT:.+]] = %[[START]]) -> (tensor<?x?xf64>) {
// CHECK: scf.for %[[UI:.+]] = %{{.+}} to %[[COLUMNS]] step %{{.+}} iter_args(%[[DU:.+]] = %[[DT]]) -> (tensor<?x?xf64>) {
// CHECK-DAG: %[[TPREV:.+]] = arith.subi %[[TI]], %c1{{(_[0-9]+)?}} : index
// CHECK-DAG: %[[BX:.+]] = tensor.extract %[[JOINT]][%[[BROW:[a-z0-9_]+]], %c2{{(_[0-9]+)?}}] : tensor<?x4xf32>
// CHECK-DAG: %[[BROW]] = arith.addi %[[OFFSET]], %[[BROW1:[a-z0-9_]+]] : index
// CHECK-DAG: %[[BROW1]] = arith.addi %[[BROW0:[a-z0-9_]+]], %[[UI]] : index
// CHECK-DAG: %[[BROW0]] = arith.muli %[[TPREV]], %[[COLUMNS]] : index
// CHECK-DAG: %[[BX64:.+]] = arith.extf %[[BX]] : f32 to f64
// CHECK-DAG: %[[DSTAY:.+]] = tensor.extract %[[DU]][%[[TPREV]], %[[UI]]] : tensor<?x?xf64>
// CHECK-DAG: %[[STAY:.+]] = arith.addf %[[DSTAY]], %[[BX64]] : f64
// CHECK-DAG: %[[DMOVE:.+]] = tensor.extract %[[DU]][%[[TPREV]], %{{.+}}] : tensor<?x?xf64>
// CHECK-DAG: %[[MOVE0:.+]] = arith.addf %[[DMOVE]], %{{.+}} : f64
// CHECK-DAG: %[[MOVE:.+]] = arith.select %{{.+}}, %[[MOVE0]], %{{.+}} : f64
// CHECK: %[[BETTER:.+]] = arith.cmpf ogt, %[[MOVE]], %[[STAY]] : f64
// CHECK-NEXT: %[[BEST:.+]] = arith.select %[[BETTER]], %[[MOVE]], %[[STAY]] : f64
// CHECK-NEXT: tensor.insert %[[BEST]] into %[[DU]][%[[TI]], %[[UI]]] : tensor<?x?xf64>
// CHECK: %[[SCORE:.+]] = tensor.extract %[[DELTA]][%[[FRAMES]], %[[LAST]]] : tensor<?x?xf64>
// CHECK: %[[FEASIBLE:.+]] = arith.cmpf ogt, %[[SCORE]], %{{.+}} : f64
// CHECK: %[[TRACED:.+]] = arith.select %[[FEASIBLE]], %[[FRAMES]], %c0{{(_[0-9]+)?}} : index
// CHECK: %[[ROWEMPTY:.+]] = tensor.empty(%[[T]]) : tensor<?xi32>
// CHECK: %[[UNALIGNED:.+]] = linalg.fill ins(%c-1_i32{{(_[0-9]+)?}} : i32) outs(%[[ROWEMPTY]] : tensor<?xi32>)
// CHECK: %[[PATH:.+]]:2 = scf.for %[[STEP:.+]] = %{{.+}} to %[[TRACED]] step %{{.+}} iter_args(%[[UC:.+]] = %[[LAST]], %[[AC:.+]] = %[[UNALIGNED]]) -> (index, tensor<?xi32>) {
// CHECK-NEXT: %[[TC:.+]] = arith.subi %[[FRAMES]], %[[STEP]] : index
// CHECK: %[[EMITS:.+]] = arith.cmpf ogt, %{{.+}}, %{{.+}} : f64
// CHECK: %[[LABEL:.+]] = tensor.extract %[[Y]][%[[BI]], %{{.+}}] : tensor<?x?xi32>
// CHECK: %[[CLASS:.+]] = arith.select %[[EMITS]], %[[LABEL]], %c2_i32{{(_[0-9]+)?}} : i32
// CHECK: %[[FRAME:.+]] = arith.subi %[[TC]], %c1{{(_[0-9]+)?}} : index
// CHECK-NEXT: %[[WRITTEN:.+]] = tensor.insert %[[CLASS]] into %[[AC]][%[[FRAME]]] : tensor<?xi32>
// CHECK: %[[UPREV:.+]] = arith.maxsi %{{.+}}, %c0{{(_[0-9]+)?}} : index
// CHECK-NEXT: %[[UNEXT:.+]] = arith.select %[[EMITS]], %[[UPREV]], %[[UC]] : index
// CHECK-NEXT: scf.yield %[[UNEXT]], %[[WRITTEN]] : index, tensor<?xi32>
// CHECK: %[[SCORE32:.+]] = arith.truncf %[[SCORE]] : f64 to f32
// CHECK-NEXT: %[[SCORED:.+]] = tensor.from_elements %[[SCORE32]] : tensor<1xf32>
// CHECK-NEXT: scf.forall.in_parallel {
// CHECK-NEXT: tensor.parallel_insert_slice %[[PATH]]#1 into %[[ALIGNMENT]][%[[BI]], 0] [1, %[[T]]] [1, 1] : tensor<?xi32> into tensor<?x?xi32>
// CHECK-NEXT: tensor.parallel_insert_slice %[[SCORED]] into %[[SCORES]][%[[BI]]] [1] [1] : tensor<1xf32> into tensor<?xf32>
// CHECK: return %[[R]]#0, %[[R]]#1 : tensor<?x?xi32>, tensor<?xf32>
nn.graph @align(%j: !nn.tensor<[J, 4], f32>, %y: !nn.tensor<[B, U], i32>) -> (!nn.tensor<[B, T], i32>, !nn.tensor<[B], f32>)
    dims [B: batch, T: seq(B), U: seq(B), U1: seq(B) = U + 1, J: packed(B, T, U1)] {
  %a, %s = nn.transducer_align %j, %y from log_probs topology rna blank 2 : !nn.tensor<[J, 4], f32>, !nn.tensor<[B, U], i32> -> !nn.tensor<[B, T], i32>, !nn.tensor<[B], f32>
  nn.return %a, %s : !nn.tensor<[B, T], i32>, !nn.tensor<[B], f32>
}

// -----

// gather_states: first, per sequence, the prediction state each frame is
// in, the labels the alignment emitted before it (class neither the blank
// 0 nor negative, inside the sequence), clamped to U (-1 when there are no
// states); then one generic over [B, T, D] reads states[b, position, d]
// at valid frames with a state, 0 elsewhere. Its gradient scatters each
// such frame's row back onto the state it read (scalar loops over b,
// t < T_b and d, the last empty for a frame without a state).
// CHECK-LABEL: func.func @gather_states
// CHECK-SAME: (%[[B:[a-z0-9]+]]: index, %[[T:[a-z0-9]+]]: index, %[[TLEN:[a-z0-9]+]]: tensor<?xi32>, %[[U:[a-z0-9]+]]: index, %[[ULEN:[a-z0-9]+]]: tensor<?xi32>, %[[S:[a-z0-9]+]]: tensor<?x?x4xf32>, %[[A:[a-z0-9]+]]: tensor<?x?xi32>, %[[DY:[a-z0-9]+]]: tensor<?x?x4xf32>) -> (tensor<?x?x4xf32>, tensor<?x?x4xf32>)
// CHECK: %[[U1LEN:.+]] = linalg.generic {{.+}} ins(%[[ULEN]] : tensor<?xi32>)
// CHECK: %[[POSITIONS:.+]] = scf.for %[[BI:.+]] = %{{.+}} to %[[B]] step %{{.+}} iter_args(%{{.+}}) -> (tensor<?x?xi32>) {
// CHECK: %[[FRAMES:.+]] = arith.index_cast %{{.+}} : i32 to index
// CHECK: %[[STATES:.+]] = tensor.extract %[[U1LEN]][%[[BI]]] : tensor<?xi32>
// CHECK-NEXT: %[[STATECOUNT:.+]] = arith.index_cast %[[STATES]] : i32 to index
// CHECK-NEXT: %[[LAST:.+]] = arith.subi %[[STATECOUNT]], %c1{{(_[0-9]+)?}} : index
// CHECK: scf.for %[[TI:.+]] = %{{.+}} to %[[T]] step %{{.+}} iter_args(%[[PT:.+]] = %{{.+}}, %[[EMITTED:.+]] = %c0{{(_[0-9]+)?}}) -> (tensor<?x?xi32>, index) {
// CHECK: %[[HERE:.+]] = arith.minsi %[[EMITTED]], %[[LAST]] : index
// CHECK-NEXT: %[[HERE32:.+]] = arith.index_cast %[[HERE]] : index to i32
// CHECK-NEXT: %[[WRITTEN:.+]] = tensor.insert %[[HERE32]] into %[[PT]][%[[BI]], %[[TI]]] : tensor<?x?xi32>
// CHECK-NEXT: %[[CLS32:.+]] = tensor.extract %[[A]][%[[BI]], %[[TI]]] : tensor<?x?xi32>
// CHECK-NEXT: %[[CLS:.+]] = arith.index_cast %[[CLS32]] : i32 to index
// CHECK-DAG: %[[NOTNEG:.+]] = arith.cmpi sge, %[[CLS]], %c0{{(_[0-9]+)?}} : index
// CHECK-DAG: %[[NOTBLANK:.+]] = arith.cmpi ne, %[[CLS]], %c0{{(_[0-9]+)?}} : index
// CHECK: %[[LABEL:.+]] = arith.andi %[[NOTBLANK]], %[[NOTNEG]] : i1
// CHECK: %[[INSIDE:.+]] = arith.cmpi slt, %[[TI]], %[[FRAMES]] : index
// CHECK: %[[EMITS:.+]] = arith.andi %[[INSIDE]], %[[LABEL]] : i1
// CHECK: %[[MORE:.+]] = arith.addi %[[EMITTED]], %c1{{(_[0-9]+)?}} : index
// CHECK-NEXT: %[[COUNT:.+]] = arith.select %[[EMITS]], %[[MORE]], %[[EMITTED]] : index
// CHECK-NEXT: scf.yield %[[WRITTEN]], %[[COUNT]] : tensor<?x?xi32>, index
// CHECK: %[[GATHERED:.+]] = linalg.generic {{{.+}}iterator_types = ["parallel", "parallel", "parallel"]} ins(%[[POSITIONS]] : tensor<?x?xi32>)
// CHECK-NEXT: ^bb0(%[[POS:[a-z0-9_]+]]: i32, %{{.+}}: f32):
// CHECK-DAG: %[[GB:.+]] = linalg.index 0 : index
// CHECK-DAG: %[[GT:.+]] = linalg.index 1 : index
// CHECK-DAG: %[[GF:.+]] = linalg.index 2 : index
// CHECK-DAG: %[[STATE:.+]] = arith.index_cast %[[POS]] : i32 to index
// CHECK-DAG: %[[HASSTATE:.+]] = arith.cmpi sge, %[[STATE]], %c0{{(_[0-9]+)?}} : index
// CHECK-DAG: %[[GFRAMES:.+]] = tensor.extract %[[TLEN]][%[[GB]]] : tensor<?xi32>
// CHECK-DAG: %[[INFRAME:.+]] = arith.cmpi slt, %[[GT]], %{{.+}} : index
// CHECK-DAG: %[[GVALID:.+]] = arith.andi %[[INFRAME]], %[[HASSTATE]] : i1
// CHECK-DAG: %[[CLAMPED:.+]] = arith.maxsi %[[STATE]], %c0{{(_[0-9]+)?}} : index
// CHECK-DAG: %[[READ:.+]] = tensor.extract %[[S]][%[[GB]], %[[CLAMPED]], %[[GF]]] : tensor<?x?x4xf32>
// CHECK: %[[GOUT:.+]] = arith.select %[[GVALID]], %[[READ]], %{{.+}} : f32
// CHECK-NEXT: linalg.yield %[[GOUT]] : f32
// The gradient recomputes the positions, then scatters:
// CHECK: %[[POSITIONS2:.+]] = scf.for
// CHECK: %[[ZEROS:.+]] = linalg.fill ins(%{{.+}} : f32) outs(%{{.+}} : tensor<?x?x4xf32>)
// CHECK: %[[SCATTERED:.+]] = scf.for %[[SB:.+]] = %{{.+}} to %[[B]] step %{{.+}} iter_args(%[[S0:.+]] = %[[ZEROS]]) -> (tensor<?x?x4xf32>) {
// CHECK: %[[SFRAMES:.+]] = arith.index_cast %{{.+}} : i32 to index
// CHECK: scf.for %[[ST:.+]] = %{{.+}} to %[[SFRAMES]] step %{{.+}} iter_args(%[[S1:.+]] = %[[S0]]) -> (tensor<?x?x4xf32>) {
// CHECK-NEXT: %[[SP32:.+]] = tensor.extract %[[POSITIONS2]][%[[SB]], %[[ST]]] : tensor<?x?xi32>
// CHECK-NEXT: %[[SPOS:.+]] = arith.index_cast %[[SP32]] : i32 to index
// CHECK: %[[GATHERS:.+]] = arith.cmpi sge, %[[SPOS]], %c0{{(_[0-9]+)?}} : index
// CHECK: %[[SP:.+]] = arith.maxsi %[[SPOS]], %c0{{(_[0-9]+)?}} : index
// CHECK: %[[WIDTH:.+]] = arith.select %[[GATHERS]], %c4{{(_[0-9]+)?}}, %c0{{(_[0-9]+)?}} : index
// CHECK: scf.for %[[SF:.+]] = %{{.+}} to %[[WIDTH]] step %{{.+}} iter_args(%[[S2:.+]] = %[[S1]]) -> (tensor<?x?x4xf32>) {
// CHECK-DAG: %[[DYV:.+]] = tensor.extract %[[DY]][%[[SB]], %[[ST]], %[[SF]]] : tensor<?x?x4xf32>
// CHECK-DAG: %[[OLD:.+]] = tensor.extract %[[S2]][%[[SB]], %[[SP]], %[[SF]]] : tensor<?x?x4xf32>
// CHECK: %[[SUM:.+]] = arith.addf %[[OLD]], %[[DYV]] : f32
// CHECK-NEXT: tensor.insert %[[SUM]] into %[[S2]][%[[SB]], %[[SP]], %[[SF]]] : tensor<?x?x4xf32>
// CHECK: return %[[GATHERED]], %[[SCATTERED]]
nn.graph @gather_states(%s: !nn.tensor<[B, U1, 4], f32>, %a: !nn.tensor<[B, T], i32>, %g: !nn.tensor<[B, T, 4], f32>)
    -> (!nn.tensor<[B, T, 4], f32>, !nn.tensor<[B, U1, 4], f32>)
    dims [B: batch, T: seq(B), U: seq(B), U1: seq(B) = U + 1] {
  %x = nn.gather_states %s, %a blank 0 : !nn.tensor<[B, U1, 4], f32>, !nn.tensor<[B, T], i32> -> !nn.tensor<[B, T, 4], f32>
  %d = nn.gather_states_grad %g, %a blank 0 : !nn.tensor<[B, T, 4], f32>, !nn.tensor<[B, T], i32> -> !nn.tensor<[B, U1, 4], f32>
  nn.return %x, %d : !nn.tensor<[B, T, 4], f32>, !nn.tensor<[B, U1, 4], f32>
}

// -----

// transducer_align, rnnt: the computed dim A's lengths (T + U, 0 without
// frames) and its padded size (the longest, at least 1) come first; the
// sequences then write rows of that width, and the function returns the
// lengths after its results (the ABI of computed dims).
// CHECK-LABEL: func.func @align_rnnt
// CHECK-SAME: (%[[B:[a-z0-9]+]]: index, %{{[a-z0-9]+}}: index, %[[TLEN:[a-z0-9]+]]: tensor<?xi32>, %{{[a-z0-9]+}}: index, %[[ULEN:[a-z0-9]+]]: tensor<?xi32>, %{{.+}}) -> (tensor<?x?xi32>, tensor<?xf32>, tensor<?xi32>)
// CHECK: %[[COUNTED:.+]]:2 = scf.for %[[BI:.+]] = %{{.+}} to %[[B]] step %{{.+}} iter_args(%[[LENS:.+]] = %{{.+}}, %[[LONGEST:.+]] = %c1{{(_[0-9]+)?}}) -> (tensor<?xi32>, index) {
// CHECK: %[[T:.+]] = arith.index_cast %{{.+}} : i32 to index
// CHECK: %[[U:.+]] = arith.index_cast %{{.+}} : i32 to index
// CHECK: %[[SUM:.+]] = arith.addi %[[T]], %[[U]] : index
// CHECK: %[[ANY:.+]] = arith.cmpi slt, %c0{{(_[0-9]+)?}}, %[[T]] : index
// CHECK-NEXT: %[[N:.+]] = arith.select %[[ANY]], %[[SUM]], %c0{{(_[0-9]+)?}} : index
// CHECK: %[[MAX:.+]] = arith.maxsi %[[LONGEST]], %[[N]] : index
// CHECK: %[[PATHS:.+]] = tensor.empty(%[[B]], %[[COUNTED]]#1) : tensor<?x?xi32>
// CHECK: %[[R:.+]]:2 = scf.forall (%[[SB:.+]]) in (%[[B]]) shared_outs(%[[OUT:.+]] = %[[PATHS]], %{{.+}} = %{{.+}})
// CHECK: tensor.parallel_insert_slice %{{.+}} into %[[OUT]][%[[SB]], 0] [1, %[[COUNTED]]#1] [1, 1] : tensor<?xi32> into tensor<?x?xi32>
// CHECK: return %[[R]]#0, %[[R]]#1, %[[COUNTED]]#0 : tensor<?x?xi32>, tensor<?xf32>, tensor<?xi32>
nn.graph @align_rnnt(%j: !nn.tensor<[J, 4], f32>, %y: !nn.tensor<[B, U], i32>) -> (!nn.tensor<[B, A], i32>, !nn.tensor<[B], f32>)
    dims [B: batch, T: seq(B), U: seq(B), U1: seq(B) = U + 1, J: packed(B, T, U1), A: seq(B) computed] {
  %a, %s = nn.transducer_align %j, %y from logits topology rnnt blank 0 : !nn.tensor<[J, 4], f32>, !nn.tensor<[B, U], i32> -> !nn.tensor<[B, A], i32>, !nn.tensor<[B], f32>
  nn.return %a, %s : !nn.tensor<[B, A], i32>, !nn.tensor<[B], f32>
}
