// RUN: nn-opt %s --split-input-file --nn-convert-to-linalg | FileCheck %s

// nn.edit_distance (ErrorPatterns.cpp): per sequence (an scf.for over the
// batch) the Levenshtein table row by row as scalar loops over one row of
// counts ([U + 1, 3] i32: substitutions, insertions, deletions; a cell's
// cost is their sum). Row 0 is j deletions; row i starts with i
// insertions, and column j takes the diagonal (carried from column j - 1
// before it was overwritten) plus a mismatch, replaced by the deletion
// from (i, j - 1) only when strictly cheaper, then by the insertion from
// (i - 1, j) only when strictly cheaper than that. Only each sequence's
// own lengths bound the loops.
// CHECK-LABEL: func.func @edit_distance
// CHECK-SAME: (%[[B:[a-z0-9]+]]: index, %[[Y:[a-z0-9]+]]: index, %[[YLEN:[a-z0-9]+]]: tensor<?xi32>, %[[U:[a-z0-9]+]]: index, %[[ULEN:[a-z0-9]+]]: tensor<?xi32>, %[[HYP:[a-z0-9]+]]: tensor<?x?xi32>, %[[REF:[a-z0-9]+]]: tensor<?x?xi32>) -> (tensor<?xf32>, tensor<?xf32>, tensor<?x3xi32>)
// CHECK-NOT: linalg.generic
// CHECK: %[[COLUMNS:.+]] = arith.addi %[[U]], %c1{{(_[0-9]+)?}} : index
// CHECK-NEXT: %[[ROW:.+]] = tensor.empty(%[[COLUMNS]]) : tensor<?x3xi32>
// CHECK: %[[R:.+]]:4 = scf.for %[[BI:.+]] = %{{.+}} to %[[B]] step %{{.+}} iter_args(%[[ERR:.+]] = %{{.+}}, %[[LEN:.+]] = %{{.+}}, %[[CNT:.+]] = %{{.+}}, %[[ROWB:.+]] = %[[ROW]]) -> (tensor<?xf32>, tensor<?xf32>, tensor<?x3xi32>, tensor<?x3xi32>) {
// CHECK-NEXT: %[[YB:.+]] = tensor.extract %[[YLEN]][%[[BI]]] : tensor<?xi32>
// CHECK-NEXT: %[[UB:.+]] = tensor.extract %[[ULEN]][%[[BI]]] : tensor<?xi32>
// CHECK-NEXT: %[[ROWS:.+]] = arith.index_cast %[[YB]] : i32 to index
// CHECK-NEXT: %[[COLS:.+]] = arith.index_cast %[[UB]] : i32 to index
// Row 0: (0, 0, j) for j in [0, U_b].
// CHECK: %[[COLS1:.+]] = arith.addi %[[COLS]], %c1{{(_[0-9]+)?}} : index
// CHECK: %[[ROW0:.+]] = scf.for %[[J0:.+]] = %{{.+}} to %[[COLS1]] step %{{.+}} iter_args(%[[A0:.+]] = %[[ROWB]]) -> (tensor<?x3xi32>) {
// CHECK-NEXT: %[[J0I:.+]] = arith.index_cast %[[J0]] : index to i32
// CHECK: tensor.insert %c0_i32 into %[[A0]][%[[J0]], %c0{{(_[0-9]+)?}}]
// CHECK: tensor.insert %c0_i32 into %{{.+}}[%[[J0]], %c1{{(_[0-9]+)?}}]
// CHECK: tensor.insert %[[J0I]] into %{{.+}}[%[[J0]], %c2{{(_[0-9]+)?}}]
// Rows 1 .. Y_b.
// CHECK: %[[ROWS1:.+]] = arith.addi %[[ROWS]], %c1{{(_[0-9]+)?}} : index
// CHECK: %[[TABLE:.+]] = scf.for %[[I:.+]] = %c1{{(_[0-9]+)?}} to %[[ROWS1]] step %{{.+}} iter_args(%[[A:.+]] = %[[ROW0]]) -> (tensor<?x3xi32>) {
// CHECK: %[[IM1:.+]] = arith.subi %[[I]], %c1{{(_[0-9]+)?}} : index
// CHECK-NEXT: %[[H:.+]] = tensor.extract %[[HYP]][%[[BI]], %[[IM1]]] : tensor<?x?xi32>
// The old column 0 is column 1's diagonal; the new one is (0, i, 0).
// CHECK: %[[CS:.+]] = tensor.extract %[[A]][%[[Z:.+]], %{{.+}}] : tensor<?x3xi32>
// CHECK: %[[CI:.+]] = tensor.extract %[[A]][%[[Z]], %{{.+}}] : tensor<?x3xi32>
// CHECK: %[[CD:.+]] = tensor.extract %[[A]][%[[Z]], %{{.+}}] : tensor<?x3xi32>
// CHECK: %[[II:.+]] = arith.index_cast %[[I]] : index to i32
// CHECK: tensor.insert %[[II]] into
// CHECK: %[[SWEPT:.+]]:4 = scf.for %[[J:.+]] = %c1{{(_[0-9]+)?}} to %{{.+}} step %{{.+}} iter_args(%[[CUR:.+]] = %{{.+}}, %[[DS:.+]] = %[[CS]], %[[DI:.+]] = %[[CI]], %[[DD:.+]] = %[[CD]]) -> (tensor<?x3xi32>, i32, i32, i32) {
// (i - 1, j): not yet overwritten.
// CHECK-NEXT: %[[C0:.+]] = arith.constant 0 : index
// CHECK-NEXT: %[[US:.+]] = tensor.extract %[[CUR]][%[[J]], %[[C0]]] : tensor<?x3xi32>
// CHECK-NEXT: %[[C1:.+]] = arith.constant 1 : index
// CHECK-NEXT: %[[UI:.+]] = tensor.extract %[[CUR]][%[[J]], %[[C1]]] : tensor<?x3xi32>
// CHECK-NEXT: %[[C2:.+]] = arith.constant 2 : index
// CHECK-NEXT: %[[UD:.+]] = tensor.extract %[[CUR]][%[[J]], %[[C2]]] : tensor<?x3xi32>
// (i, j - 1): already written.
// CHECK: %[[JM1:.+]] = arith.subi %[[J]], %c1{{(_[0-9]+)?}} : index
// CHECK: %[[LS:.+]] = tensor.extract %[[CUR]][%[[JM1]], %{{.+}}] : tensor<?x3xi32>
// CHECK: %[[LI:.+]] = tensor.extract %[[CUR]][%[[JM1]], %{{.+}}] : tensor<?x3xi32>
// CHECK: %[[LD:.+]] = tensor.extract %[[CUR]][%[[JM1]], %{{.+}}] : tensor<?x3xi32>
// CHECK: %[[RL:.+]] = tensor.extract %[[REF]][%[[BI]], %{{.+}}] : tensor<?x?xi32>
// CHECK-NEXT: %[[NE:.+]] = arith.cmpi ne, %[[H]], %[[RL]] : i32
// CHECK-NEXT: %[[MIS:.+]] = arith.extui %[[NE]] : i1 to i32
// CHECK-NEXT: %[[DIAGS:.+]] = arith.addi %[[DS]], %[[MIS]] : i32
// CHECK-NEXT: %[[DSI:.+]] = arith.addi %[[DIAGS]], %[[DI]] : i32
// CHECK-NEXT: %[[DIAGC:.+]] = arith.addi %[[DSI]], %[[DD]] : i32
// CHECK: %[[LSI:.+]] = arith.addi %[[LS]], %[[LI]] : i32
// CHECK-NEXT: %[[LSID:.+]] = arith.addi %[[LSI]], %[[LD]] : i32
// CHECK-NEXT: %[[DELC:.+]] = arith.addi %[[LSID]], %[[ONE:.+]] : i32
// CHECK-NEXT: %[[DEL:.+]] = arith.cmpi slt, %[[DELC]], %[[DIAGC]] : i32
// CHECK-NEXT: %[[S1:.+]] = arith.select %[[DEL]], %[[LS]], %[[DIAGS]] : i32
// CHECK-NEXT: %[[I1:.+]] = arith.select %[[DEL]], %[[LI]], %[[DI]] : i32
// CHECK-NEXT: %[[LD1:.+]] = arith.addi %[[LD]], %[[ONE]] : i32
// CHECK-NEXT: %[[D1:.+]] = arith.select %[[DEL]], %[[LD1]], %[[DD]] : i32
// CHECK-NEXT: %[[BEST:.+]] = arith.select %[[DEL]], %[[DELC]], %[[DIAGC]] : i32
// CHECK-NEXT: %[[USI:.+]] = arith.addi %[[US]], %[[UI]] : i32
// CHECK-NEXT: %[[USID:.+]] = arith.addi %[[USI]], %[[UD]] : i32
// CHECK-NEXT: %[[INSC:.+]] = arith.addi %[[USID]], %[[ONE]] : i32
// CHECK-NEXT: %[[INS:.+]] = arith.cmpi slt, %[[INSC]], %[[BEST]] : i32
// CHECK-NEXT: %[[S2:.+]] = arith.select %[[INS]], %[[US]], %[[S1]] : i32
// CHECK-NEXT: %[[UI1:.+]] = arith.addi %[[UI]], %[[ONE]] : i32
// CHECK-NEXT: %[[I2:.+]] = arith.select %[[INS]], %[[UI1]], %[[I1]] : i32
// CHECK-NEXT: %[[D2:.+]] = arith.select %[[INS]], %[[UD]], %[[D1]] : i32
// CHECK: %[[W0:.+]] = tensor.insert %[[S2]] into %[[CUR]][%[[J]], %{{.+}}] : tensor<?x3xi32>
// CHECK: %[[W1:.+]] = tensor.insert %[[I2]] into %[[W0]][%[[J]], %{{.+}}] : tensor<?x3xi32>
// CHECK: %[[W2:.+]] = tensor.insert %[[D2]] into %[[W1]][%[[J]], %{{.+}}] : tensor<?x3xi32>
// CHECK-NEXT: scf.yield %[[W2]], %[[US]], %[[UI]], %[[UD]] : tensor<?x3xi32>, i32, i32, i32
// CHECK: scf.yield %[[SWEPT]]#0 : tensor<?x3xi32>
// The last cell, (Y_b, U_b): errors S + I + D, the reference length, the counts.
// CHECK: %[[FS:.+]] = tensor.extract %[[TABLE]][%[[COLS]], %{{.+}}] : tensor<?x3xi32>
// CHECK-NEXT: %{{.+}} = arith.constant 1 : index
// CHECK-NEXT: %[[FI:.+]] = tensor.extract %[[TABLE]][%[[COLS]], %{{.+}}] : tensor<?x3xi32>
// CHECK-NEXT: %{{.+}} = arith.constant 2 : index
// CHECK-NEXT: %[[FD:.+]] = tensor.extract %[[TABLE]][%[[COLS]], %{{.+}}] : tensor<?x3xi32>
// CHECK-NEXT: %[[FSI:.+]] = arith.addi %[[FS]], %[[FI]] : i32
// CHECK-NEXT: %[[TOTAL:.+]] = arith.addi %[[FSI]], %[[FD]] : i32
// CHECK-NEXT: %[[TOTALF:.+]] = arith.sitofp %[[TOTAL]] : i32 to f32
// CHECK-NEXT: %[[LENF:.+]] = arith.sitofp %[[UB]] : i32 to f32
// CHECK: %[[K0:.+]] = tensor.insert %[[FS]] into %[[CNT]][%[[BI]], %{{.+}}] : tensor<?x3xi32>
// CHECK: %[[K1:.+]] = tensor.insert %[[FI]] into %[[K0]][%[[BI]], %{{.+}}] : tensor<?x3xi32>
// CHECK: %[[K2:.+]] = tensor.insert %[[FD]] into %[[K1]][%[[BI]], %{{.+}}] : tensor<?x3xi32>
// CHECK-NEXT: %[[E1:.+]] = tensor.insert %[[TOTALF]] into %[[ERR]][%[[BI]]] : tensor<?xf32>
// CHECK-NEXT: %[[L1:.+]] = tensor.insert %[[LENF]] into %[[LEN]][%[[BI]]] : tensor<?xf32>
// CHECK-NEXT: scf.yield %[[E1]], %[[L1]], %[[K2]], %[[TABLE]] : tensor<?xf32>, tensor<?xf32>, tensor<?x3xi32>, tensor<?x3xi32>
// CHECK: return %[[R]]#0, %[[R]]#1, %[[R]]#2 : tensor<?xf32>, tensor<?xf32>, tensor<?x3xi32>
nn.graph @edit_distance(%hyp: !nn.tensor<[B, Y], i32>, %ref: !nn.tensor<[B, U], i32>)
    -> (!nn.tensor<[B], f32>, !nn.tensor<[B], f32>, !nn.tensor<[B, 3], i32>)
    dims [B: batch, Y: seq(B), U: seq(B)] {
  %e, %n, %c = nn.edit_distance %hyp, %ref : !nn.tensor<[B, Y], i32>, !nn.tensor<[B, U], i32>
  nn.return %e, %n, %c : !nn.tensor<[B], f32>, !nn.tensor<[B], f32>, !nn.tensor<[B, 3], i32>
}

// -----

// Both sequences over one dim: both loops read its lengths, the row has
// T + 1 columns.
// CHECK-LABEL: func.func @same_dim
// CHECK-SAME: (%[[B:[a-z0-9]+]]: index, %[[T:[a-z0-9]+]]: index, %[[TLEN:[a-z0-9]+]]: tensor<?xi32>, %[[X:[a-z0-9]+]]: tensor<?x?xi32>, %[[Z:[a-z0-9]+]]: tensor<?x?xi32>)
// CHECK: %[[COLUMNS:.+]] = arith.addi %[[T]], %c1{{(_[0-9]+)?}} : index
// CHECK-NEXT: tensor.empty(%[[COLUMNS]]) : tensor<?x3xi32>
// CHECK: scf.for %[[BI:.+]] = %{{.+}} to %[[B]]
// CHECK-NEXT: tensor.extract %[[TLEN]][%[[BI]]] : tensor<?xi32>
// CHECK-NEXT: tensor.extract %[[TLEN]][%[[BI]]] : tensor<?xi32>
// CHECK: tensor.extract %[[X]][%[[BI]], %{{.+}}] : tensor<?x?xi32>
// CHECK: tensor.extract %[[Z]][%[[BI]], %{{.+}}] : tensor<?x?xi32>
nn.graph @same_dim(%x: !nn.tensor<[B, T], i32>, %z: !nn.tensor<[B, T], i32>)
    -> !nn.tensor<[B], f32>
    dims [B: batch, T: seq(B)] {
  %e, %n, %c = nn.edit_distance %x, %z : !nn.tensor<[B, T], i32>, !nn.tensor<[B, T], i32>
  nn.return %e : !nn.tensor<[B], f32>
}

// -----

// With `words separator 5`: per sequence, a first pass over each of hyp
// and ref finds the words (a scratch [pad + 1, 2] of spans per operand,
// written branch-free: every position writes the current span at slot
// `count`, which moves on when a separator ends a word; a sequence ending
// inside a word closes it after the loop). The programme then runs over
// the word counts, and a cell's mismatch is a loop over the shorter word
// that ORs label differences into "the lengths differ". The reference
// length reported is the reference word count.
// CHECK-LABEL: func.func @words
// CHECK-SAME: (%[[B:[a-z0-9]+]]: index, %[[Y:[a-z0-9]+]]: index, %[[YLEN:[a-z0-9]+]]: tensor<?xi32>, %[[U:[a-z0-9]+]]: index, %[[ULEN:[a-z0-9]+]]: tensor<?xi32>, %[[HYP:[a-z0-9]+]]: tensor<?x?xi32>, %[[REF:[a-z0-9]+]]: tensor<?x?xi32>)
// CHECK: %[[YPAD:.+]] = arith.addi %[[Y]], %c1{{(_[0-9]+)?}} : index
// CHECK-NEXT: %[[HSPANS:.+]] = tensor.empty(%[[YPAD]]) : tensor<?x2xindex>
// CHECK: %[[UPAD:.+]] = arith.addi %[[U]], %c1{{(_[0-9]+)?}} : index
// CHECK-NEXT: %[[RSPANS:.+]] = tensor.empty(%[[UPAD]]) : tensor<?x2xindex>
// CHECK: scf.for %[[BI:.+]] = %{{.+}} to %[[B]] step %{{.+}} iter_args({{.+}}, %[[HS:.+]] = %[[HSPANS]], %[[RS:.+]] = %[[RSPANS]])
// CHECK: %[[SPLIT:.+]]:4 = scf.for %[[P:.+]] = %{{.+}} to %{{.+}} step %{{.+}} iter_args(%[[SP:.+]] = %[[HS]], %[[COUNT:.+]] = %{{.+}}, %[[START:.+]] = %{{.+}}, %[[IN:.+]] = %false{{(_[0-9]+)?}}) -> (tensor<?x2xindex>, index, index, i1) {
// CHECK-NEXT: %[[L:.+]] = tensor.extract %[[HYP]][%[[BI]], %[[P]]] : tensor<?x?xi32>
// CHECK-NEXT: %[[ISSEP:.+]] = arith.cmpi eq, %[[L]], %c5_i32 : i32
// CHECK: %[[NEWSTART:.+]] = arith.select %{{.+}}, %[[P]], %[[START]] : index
// CHECK: tensor.insert %[[NEWSTART]] into %[[SP]][%[[COUNT]], %{{.+}}] : tensor<?x2xindex>
// CHECK: tensor.insert %[[P]] into %{{.+}}[%[[COUNT]], %{{.+}}] : tensor<?x2xindex>
// CHECK: scf.yield
// CHECK: tensor.insert %[[SPLIT]]#2 into %[[SPLIT]]#0[%[[SPLIT]]#1, %{{.+}}] : tensor<?x2xindex>
// CHECK: arith.select %[[SPLIT]]#3
// CHECK: %[[RSPLIT:.+]]:4 = scf.for %{{.+}} iter_args(%{{.+}} = %[[RS]],
// CHECK-NEXT: tensor.extract %[[REF]][%[[BI]], %{{.+}}] : tensor<?x?xi32>
// CHECK: %[[RWORDS:.+]] = arith.addi %[[RSPLIT]]#1, %{{.+}} : index
// CHECK-NEXT: %[[RWORDS32:.+]] = arith.index_cast %[[RWORDS]] : index to i32
// CHECK: %[[DIFF:.+]] = arith.cmpi ne, %{{.+}}, %{{.+}} : index
// CHECK-NEXT: %[[SHORTER:.+]] = arith.minsi %{{.+}}, %{{.+}} : index
// CHECK: %[[ANY:.+]] = scf.for %{{.+}} = %{{.+}} to %[[SHORTER]] step %{{.+}} iter_args(%[[ACC:.+]] = %[[DIFF]]) -> (i1) {
// CHECK: tensor.extract %[[HYP]]
// CHECK: tensor.extract %[[REF]]
// CHECK: %[[NE:.+]] = arith.cmpi ne, %{{.+}}, %{{.+}} : i32
// CHECK-NEXT: %[[OR:.+]] = arith.ori %[[ACC]], %[[NE]] : i1
// CHECK-NEXT: scf.yield %[[OR]] : i1
// CHECK: arith.extui %[[ANY]] : i1 to i32
// CHECK: arith.sitofp %[[RWORDS32]] : i32 to f32
nn.graph @words(%hyp: !nn.tensor<[B, Y], i32>, %ref: !nn.tensor<[B, U], i32>)
    -> (!nn.tensor<[B], f32>, !nn.tensor<[B], f32>, !nn.tensor<[B, 3], i32>)
    dims [B: batch, Y: seq(B), U: seq(B)] {
  %e, %n, %c = nn.edit_distance %hyp, %ref words separator 5 : !nn.tensor<[B, Y], i32>, !nn.tensor<[B, U], i32>
  nn.return %e, %n, %c : !nn.tensor<[B], f32>, !nn.tensor<[B], f32>, !nn.tensor<[B, 3], i32>
}

// -----

// nn.expected_risk (ErrorPatterns.cpp), baseline mean: row reductions over
// the hypotheses k of each sequence (k a reduction loop), in f64, each
// valid hypothesis (k < len_K(b)) selected into the accumulators, padded
// ones never. Pass 1: the smallest nll (minimumf: NaN propagates; +inf
// for a row without hypotheses) and the summed errors; the mean error
// (0 without hypotheses); pass 2: the weights exp(min - nll) and their sum
// over err - mean; the result is 0 where the smallest nll is +inf, else
// the ratio, back in f32.
// CHECK-LABEL: func.func @expected_risk
// CHECK-SAME: (%[[B:[a-z0-9]+]]: index, %[[K:[a-z0-9]+]]: index, %[[KLEN:[a-z0-9]+]]: tensor<?xi32>, %[[NLL:[a-z0-9]+]]: tensor<?x?xf32>, %[[ERR:[a-z0-9]+]]: tensor<?x?xf32>) -> tensor<?xf32>
// CHECK: %[[INF:.+]] = arith.constant 0x7FF0000000000000 : f64
// CHECK: %[[MIN0:.+]] = linalg.fill ins(%[[INF]] : f64) outs(%{{.+}} : tensor<?xf64>)
// CHECK: %[[SUM0:.+]] = linalg.fill ins(%{{.+}} : f64) outs(%{{.+}} : tensor<?xf64>)
// CHECK: %[[STATS:.+]]:2 = linalg.generic {indexing_maps = [#[[FULL:.+]], #[[FULL]], #[[ROW:.+]], #[[ROW]], #[[ROW]]], iterator_types = ["parallel", "reduction"]} ins(%[[NLL]], %[[ERR]], %[[KLEN]] : tensor<?x?xf32>, tensor<?x?xf32>, tensor<?xi32>) outs(%[[MIN0]], %[[SUM0]] : tensor<?xf64>, tensor<?xf64>)
// CHECK-NEXT: ^bb0(%[[N1:.+]]: f32, %[[E1:.+]]: f32, %[[L1:.+]]: i32, %[[M1:.+]]: f64, %[[S1:.+]]: f64):
// CHECK-DAG: %[[E1W:.+]] = arith.extf %[[E1]] : f32 to f64
// CHECK-DAG: %[[N1W:.+]] = arith.extf %[[N1]] : f32 to f64
// CHECK: %[[MIN:.+]] = arith.minimumf %[[M1]], %[[N1W]] : f64
// CHECK: %[[SUM:.+]] = arith.addf %[[S1]], %[[E1W]] : f64
// CHECK: %[[LEN1:.+]] = arith.index_cast %[[L1]] : i32 to index
// CHECK-NEXT: %[[K1:.+]] = linalg.index 1 : index
// CHECK-NEXT: %[[VALID1:.+]] = arith.cmpi slt, %[[K1]], %[[LEN1]] : index
// CHECK-NEXT: %[[MINSEL:.+]] = arith.select %[[VALID1]], %[[MIN]], %[[M1]] : f64
// CHECK-NEXT: %[[SUMSEL:.+]] = arith.select %[[VALID1]], %[[SUM]], %[[S1]] : f64
// CHECK-NEXT: linalg.yield %[[MINSEL]], %[[SUMSEL]] : f64, f64
// CHECK: %[[MEAN:.+]] = linalg.generic {{.+}} ins(%[[STATS]]#1, %[[KLEN]] : tensor<?xf64>, tensor<?xi32>)
// CHECK-NEXT: ^bb0(%[[ES:.+]]: f64, %[[L2:.+]]: i32, %{{.+}}: f64):
// CHECK-NEXT: %[[COUNT:.+]] = arith.sitofp %[[L2]] : i32 to f64
// CHECK: %[[DIV:.+]] = arith.divf %[[ES]], %[[COUNT]] : f64
// CHECK: %[[EMPTY:.+]] = arith.cmpf oeq, %[[COUNT]], %{{.+}} : f64
// CHECK-NEXT: arith.select %[[EMPTY]], %{{.+}}, %[[DIV]] : f64
// CHECK: %[[SUMS:.+]]:2 = linalg.generic {indexing_maps = [#[[FULL]], #[[FULL]], #[[ROW]], #[[ROW]], #[[ROW]], #[[ROW]], #[[ROW]]], iterator_types = ["parallel", "reduction"]} ins(%[[NLL]], %[[ERR]], %[[KLEN]], %[[STATS]]#0, %[[MEAN]] : {{.+}}) outs(
// CHECK-NEXT: ^bb0(%[[N2:.+]]: f32, %[[E2:.+]]: f32, %[[L3:.+]]: i32, %[[M2:.+]]: f64, %[[MEAN2:.+]]: f64, %[[Z:.+]]: f64, %[[S2:.+]]: f64):
// CHECK-DAG: %[[E2W:.+]] = arith.extf %[[E2]] : f32 to f64
// CHECK-DAG: %[[N2W:.+]] = arith.extf %[[N2]] : f32 to f64
// CHECK: %[[SHIFT:.+]] = arith.subf %[[M2]], %[[N2W]] : f64
// CHECK-NEXT: %[[W:.+]] = math.exp %[[SHIFT]] : f64
// CHECK-NEXT: %[[REL:.+]] = arith.subf %[[E2W]], %[[MEAN2]] : f64
// CHECK-NEXT: %[[ZN:.+]] = arith.addf %[[Z]], %[[W]] : f64
// CHECK-NEXT: %[[TERM:.+]] = arith.mulf %[[W]], %[[REL]] : f64
// CHECK-NEXT: %[[SN:.+]] = arith.addf %[[S2]], %[[TERM]] : f64
// CHECK: %[[VALID2:.+]] = arith.cmpi slt
// CHECK-NEXT: arith.select %[[VALID2]], %[[ZN]], %[[Z]] : f64
// CHECK-NEXT: arith.select %[[VALID2]], %[[SN]], %[[S2]] : f64
// CHECK: %[[RISK:.+]] = linalg.generic {{.+}} ins(%[[STATS]]#0, %[[SUMS]]#0, %[[SUMS]]#1 : tensor<?xf64>, tensor<?xf64>, tensor<?xf64>) outs(%{{.+}} : tensor<?xf32>)
// CHECK-NEXT: ^bb0(%[[M3:.+]]: f64, %[[Z3:.+]]: f64, %[[S3:.+]]: f64, %{{.+}}: f32):
// CHECK: %[[RATIO:.+]] = arith.divf %[[S3]], %[[Z3]] : f64
// CHECK: %[[NONE:.+]] = arith.cmpf oeq, %[[M3]], %{{.+}} : f64
// CHECK-NEXT: %[[R:.+]] = arith.select %[[NONE]], %{{.+}}, %[[RATIO]] : f64
// CHECK-NEXT: %[[RF:.+]] = arith.truncf %[[R]] : f64 to f32
// CHECK-NEXT: linalg.yield %[[RF]] : f32
// CHECK: return %[[RISK]] : tensor<?xf32>
nn.graph @expected_risk(%nll: !nn.tensor<[B, K], f32>, %err: !nn.tensor<[B, K], f32>)
    -> !nn.tensor<[B], f32>
    dims [B: batch, K: seq(B)] {
  %r = nn.expected_risk %nll, %err baseline mean : !nn.tensor<[B, K], f32>, !nn.tensor<[B, K], f32>
  nn.return %r : !nn.tensor<[B], f32>
}

// -----

// Baseline none, f64: no error sum, no mean; the weights multiply err
// itself, and nothing is converted.
// CHECK-LABEL: func.func @expected_risk_none
// CHECK-SAME: %[[NLL:[a-z0-9]+]]: tensor<?x?xf64>, %[[ERR:[a-z0-9]+]]: tensor<?x?xf64>) -> tensor<?xf64>
// CHECK-NOT: arith.extf
// CHECK: %[[MIN:.+]] = linalg.generic {{.+}} iterator_types = ["parallel", "reduction"]} ins(%[[NLL]], %[[ERR]], %{{.+}} : tensor<?x?xf64>, tensor<?x?xf64>, tensor<?xi32>) outs(%{{.+}} : tensor<?xf64>)
// CHECK: arith.minimumf
// CHECK: %[[SUMS:.+]]:2 = linalg.generic {{.+}} ins(%[[NLL]], %[[ERR]], %{{.+}}, %[[MIN]] : tensor<?x?xf64>, tensor<?x?xf64>, tensor<?xi32>, tensor<?xf64>)
// CHECK-NEXT: ^bb0(%[[N:.+]]: f64, %[[E:.+]]: f64, %{{.+}}: i32, %[[M:.+]]: f64, %{{.+}}: f64, %{{.+}}: f64):
// CHECK: %[[SHIFT:.+]] = arith.subf %[[M]], %[[N]] : f64
// CHECK-NEXT: %[[W:.+]] = math.exp %[[SHIFT]] : f64
// CHECK: arith.mulf %[[W]], %[[E]] : f64
// CHECK: %[[RISK:.+]] = linalg.generic {{.+}} ins(%[[MIN]], %[[SUMS]]#0, %[[SUMS]]#1 : {{.+}}) outs(%{{.+}} : tensor<?xf64>)
// CHECK-NOT: arith.truncf
// CHECK: return %[[RISK]] : tensor<?xf64>
nn.graph @expected_risk_none(%nll: !nn.tensor<[B, K], f64>, %err: !nn.tensor<[B, K], f64>)
    -> !nn.tensor<[B], f64>
    dims [B: batch, K: seq(B)] {
  %r = nn.expected_risk %nll, %err baseline none : !nn.tensor<[B, K], f64>, !nn.tensor<[B, K], f64>
  nn.return %r : !nn.tensor<[B], f64>
}

// -----

// nn.expected_risk_grad: the smallest nll, the sums of w and w err per
// row, then one parallel map over [B, K]: -g P (err - sum P err), 0 where
// the smallest nll is +inf, 0 at padded positions (selected).
// CHECK-LABEL: func.func @expected_risk_grad
// CHECK-SAME: (%[[B:[a-z0-9]+]]: index, %[[K:[a-z0-9]+]]: index, %[[KLEN:[a-z0-9]+]]: tensor<?xi32>, %[[G:[a-z0-9]+]]: tensor<?xf32>, %[[NLL:[a-z0-9]+]]: tensor<?x?xf32>, %[[ERR:[a-z0-9]+]]: tensor<?x?xf32>) -> tensor<?x?xf32>
// CHECK: %[[MIN:.+]] = linalg.generic {{.+}} iterator_types = ["parallel", "reduction"]} ins(%[[NLL]], %[[ERR]], %[[KLEN]] : {{.+}}) outs(%{{.+}} : tensor<?xf64>)
// CHECK: %[[SUMS:.+]]:2 = linalg.generic {{.+}} iterator_types = ["parallel", "reduction"]} ins(%[[NLL]], %[[ERR]], %[[KLEN]], %[[MIN]] : {{.+}})
// CHECK: %[[INIT:.+]] = tensor.empty(%[[B]], %[[K]]) : tensor<?x?xf32>
// CHECK: %[[GRAD:.+]] = linalg.generic {indexing_maps = [#[[ROW:.+]], #[[FULL:.+]], #[[FULL]], #[[ROW]], #[[ROW]], #[[ROW]], #[[ROW]], #[[FULL]]], iterator_types = ["parallel", "parallel"]} ins(%[[G]], %[[NLL]], %[[ERR]], %[[KLEN]], %[[MIN]], %[[SUMS]]#0, %[[SUMS]]#1 : {{.+}}) outs(%[[INIT]] : tensor<?x?xf32>)
// CHECK-NEXT: ^bb0(%[[GI:.+]]: f32, %[[NI:.+]]: f32, %[[EI:.+]]: f32, %[[LI:.+]]: i32, %[[MI:.+]]: f64, %[[ZI:.+]]: f64, %[[SI:.+]]: f64, %{{.+}}: f32):
// CHECK-NEXT: %[[GW:.+]] = arith.extf %[[GI]] : f32 to f64
// CHECK-NEXT: %[[NW:.+]] = arith.extf %[[NI]] : f32 to f64
// CHECK-NEXT: %[[EW:.+]] = arith.extf %[[EI]] : f32 to f64
// CHECK-NEXT: %[[SHIFT:.+]] = arith.subf %[[MI]], %[[NW]] : f64
// CHECK-NEXT: %[[W:.+]] = math.exp %[[SHIFT]] : f64
// CHECK-NEXT: %[[P:.+]] = arith.divf %[[W]], %[[ZI]] : f64
// CHECK-NEXT: %[[EXPECTED:.+]] = arith.divf %[[SI]], %[[ZI]] : f64
// CHECK-NEXT: %[[DIFF:.+]] = arith.subf %[[EW]], %[[EXPECTED]] : f64
// CHECK-NEXT: %[[PD:.+]] = arith.mulf %[[P]], %[[DIFF]] : f64
// CHECK-NEXT: %[[GPD:.+]] = arith.mulf %[[GW]], %[[PD]] : f64
// CHECK-NEXT: %[[NEG:.+]] = arith.negf %[[GPD]] : f64
// CHECK: %[[NONE:.+]] = arith.cmpf oeq, %[[MI]], %{{.+}} : f64
// CHECK-NEXT: %[[KEPT:.+]] = arith.select %[[NONE]], %{{.+}}, %[[NEG]] : f64
// CHECK-NEXT: %[[LEN:.+]] = arith.index_cast %[[LI]] : i32 to index
// CHECK-NEXT: %[[KI:.+]] = linalg.index 1 : index
// CHECK-NEXT: %[[VALID:.+]] = arith.cmpi slt, %[[KI]], %[[LEN]] : index
// CHECK-NEXT: %[[OUT:.+]] = arith.select %[[VALID]], %[[KEPT]], %{{.+}} : f64
// CHECK-NEXT: %[[OUTF:.+]] = arith.truncf %[[OUT]] : f64 to f32
// CHECK-NEXT: linalg.yield %[[OUTF]] : f32
// CHECK: return %[[GRAD]] : tensor<?x?xf32>
nn.graph @expected_risk_grad(%g: !nn.tensor<[B], f32>, %nll: !nn.tensor<[B, K], f32>, %err: !nn.tensor<[B, K], f32>)
    -> !nn.tensor<[B, K], f32>
    dims [B: batch, K: seq(B)] {
  %d = nn.expected_risk_grad %g, %nll, %err : !nn.tensor<[B], f32>, !nn.tensor<[B, K], f32>, !nn.tensor<[B, K], f32>
  nn.return %d : !nn.tensor<[B, K], f32>
}
