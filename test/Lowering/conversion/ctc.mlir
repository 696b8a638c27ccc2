// RUN: nn-opt %s --split-input-file --nn-convert-to-linalg | FileCheck %s

// The CTC family (CtcPatterns.cpp): ctc_loss, ctc_loss_grad and
// viterbi_align. Everything runs per sequence (an scf.for over the batch,
// an scf.forall for viterbi_align, whose sequences write disjoint rows)
// over the label states of the padded label count U: 2U + 1 for CTC
// (even states blanks, state 2u + 1 label u), U + 1 for RNA. Each frame
// is one generic over the states.

// ctc_loss from log-probabilities (read as they are: no log-softmax), the
// blank 2: alpha starts as a virtual state 0 before frame 0; frame t
// gives state s logaddexp(alpha(s), alpha(s - 1), alpha(s - 2) where s is
// a label different from label s - 2) plus the emission of s's class.
// log p = logaddexp(alpha(2L), alpha(2L - 1)) for the sequence's L
// labels; with zero_infinity a +inf loss becomes 0.
// CHECK-LABEL: func.func @ctc_loss
// CHECK-SAME: (%[[B:[a-z0-9]+]]: index, %[[T:[a-z0-9]+]]: index, %[[TLEN:[a-z0-9]+]]: tensor<?xi32>, %[[U:[a-z0-9]+]]: index, %[[ULEN:[a-z0-9]+]]: tensor<?xi32>, %[[X:[a-z0-9]+]]: tensor<?x?x3xf32>, %[[Y:[a-z0-9]+]]: tensor<?x?xi32>) -> tensor<?xf32>
// CHECK-NOT: linalg.generic
// CHECK: %[[TWICE:.+]] = arith.muli %[[U]], %c2{{(_[0-9]+)?}} : index
// CHECK-NEXT: %[[STATES:.+]] = arith.addi %[[TWICE]], %c1{{(_[0-9]+)?}} : index
// CHECK: %[[R:.+]] = scf.for %[[BI:.+]] = %{{.+}} to %[[B]] step %{{.+}} iter_args(%[[LOSSES:.+]] = %{{.+}}) -> (tensor<?xf32>) {
// CHECK-NEXT: %[[TB:.+]] = tensor.extract %[[TLEN]][%[[BI]]] : tensor<?xi32>
// CHECK-NEXT: %[[FRAMES:.+]] = arith.index_cast %[[TB]] : i32 to index
// CHECK-NEXT: %[[UB:.+]] = tensor.extract %[[ULEN]][%[[BI]]] : tensor<?xi32>
// CHECK-NEXT: %[[LABELS:.+]] = arith.index_cast %[[UB]] : i32 to index
// CHECK-NEXT: %[[E0:.+]] = tensor.empty(%[[STATES]]) : tensor<?xf32>
// CHECK-NEXT: %[[START:.+]] = linalg.generic {{{.+}}iterator_types = ["parallel"]} outs(%[[E0]] : tensor<?xf32>)
// CHECK: %[[S0:.+]] = linalg.index 0 : index
// CHECK-DAG: %[[NEGINF0:.+]] = arith.constant 0xFF800000 : f32
// CHECK-DAG: %[[ZERO0:.+]] = arith.constant 0.000000e+00 : f32
// CHECK-DAG: %[[FIRST:.+]] = arith.cmpi eq, %[[S0]], %c0{{(_[0-9]+)?}} : index
// CHECK: %[[V0:.+]] = arith.select %[[FIRST]], %[[ZERO0]], %[[NEGINF0]] : f32
// CHECK-NEXT: linalg.yield %[[V0]] : f32
// CHECK: %[[ALPHA:.+]] = scf.for %[[TI:.+]] = %{{.+}} to %[[FRAMES]] step %{{.+}} iter_args(%[[PREV:.+]] = %[[START]]) -> (tensor<?xf32>) {
// CHECK-NEXT: %[[E1:.+]] = tensor.empty(%[[STATES]]) : tensor<?xf32>
// CHECK-NEXT: %[[NEXT:.+]] = linalg.generic {{{.+}}iterator_types = ["parallel"]} outs(%[[E1]] : tensor<?xf32>)
// CHECK-NEXT: ^bb0
// CHECK-NEXT: %[[S:.+]] = linalg.index 0 : index
// CHECK-DAG: %[[STAY:.+]] = tensor.extract %[[PREV]][%[[S]]] : tensor<?xf32>
// CHECK-DAG: %[[HASPREV:.+]] = arith.cmpi sge, %[[S]], %c1{{(_[0-9]+)?}} : index
// CHECK-DAG: %[[PREVREAD:.+]] = tensor.extract %[[PREV]][%[[SAFEPREV:[a-z0-9_]+]]] : tensor<?xf32>
// CHECK-DAG: %[[SAFEPREV]] = arith.select %[[HASPREV]], %{{.+}}, %c0{{(_[0-9]+)?}} : index
// CHECK-DAG: %[[FROMPREV:.+]] = arith.select %[[HASPREV]], %[[PREVREAD]], %{{.+}} : f32
// CHECK-DAG: %[[MAYSKIP:.+]] = arith.andi %[[ISLABEL:[a-z0-9_]+]], %[[PASTTWO:[a-z0-9_]+]] : i1
// CHECK-DAG: %[[ISLABEL]] = arith.cmpi eq, %[[ODD:[a-z0-9_]+]], %c1{{(_[0-9]+)?}} : index
// CHECK-DAG: %[[ODD]] = arith.remui %[[S]], %c2{{(_[0-9]+)?}} : index
// CHECK-DAG: %[[PASTTWO]] = arith.cmpi sge, %[[S]], %c2{{(_[0-9]+)?}} : index
// CHECK-DAG: %[[SKIP:.+]] = arith.andi %[[MAYSKIP]], %[[DIFFER:[a-z0-9_]+]] : i1
// CHECK-DAG: %[[DIFFER]] = arith.cmpi ne, %{{.+}}, %{{.+}} : index
// CHECK-DAG: %[[SKIPREAD:.+]] = tensor.extract %[[PREV]][%[[SAFESKIP:[a-z0-9_]+]]] : tensor<?xf32>
// CHECK-DAG: %[[SAFESKIP]] = arith.select %[[SKIP]], %{{.+}}, %c0{{(_[0-9]+)?}} : index
// CHECK-DAG: %[[FROMSKIP:.+]] = arith.select %[[SKIP]], %[[SKIPREAD]], %{{.+}} : f32
// CHECK-DAG: %[[EMIT:.+]] = tensor.extract %[[X]][%[[BI]], %[[TI]], %[[CLASS:[a-z0-9_]+]]] : tensor<?x?x3xf32>
// The state's class: label s / 2, clamped into [0, 3), or the blank 2.
// CHECK-DAG: %[[CLASS]] = arith.select %{{.+}}, %{{.+}}, %c2{{(_[0-9]+)?}} : index
// CHECK: arith.maximumf %[[STAY]], %[[FROMPREV]] : f32
// CHECK: %[[TWO:.+]] = arith.select %{{.+}}, %{{.+}}, %{{.+}} : f32
// CHECK-NEXT: arith.maximumf %[[TWO]], %[[FROMSKIP]] : f32
// CHECK: %[[THREE:.+]] = arith.select %{{.+}}, %{{.+}}, %{{.+}} : f32
// CHECK-NEXT: %[[WITHEMIT:.+]] = arith.addf %[[THREE]], %[[EMIT]] : f32
// CHECK-NEXT: linalg.yield %[[WITHEMIT]] : f32
// CHECK: scf.yield %[[NEXT]] : tensor<?xf32>
// CHECK: %[[LASTSTATE:.+]] = arith.muli %[[LABELS]], %c2{{(_[0-9]+)?}} : index
// CHECK-NEXT: %[[ATLAST:.+]] = tensor.extract %[[ALPHA]][%[[LASTSTATE]]] : tensor<?xf32>
// CHECK: %[[BEFOREREAD:.+]] = tensor.extract %[[ALPHA]][%{{.+}}] : tensor<?xf32>
// CHECK: %[[BEFORE:.+]] = arith.select %{{.+}}, %[[BEFOREREAD]], %{{.+}} : f32
// CHECK-NEXT: arith.maximumf %[[ATLAST]], %[[BEFORE]] : f32
// CHECK: %[[LOGP:.+]] = arith.select %{{.+}}, %{{.+}}, %{{.+}} : f32
// CHECK-NEXT: %[[LOSS:.+]] = arith.negf %[[LOGP]] : f32
// CHECK-NEXT: %[[INF:.+]] = arith.constant 0x7F800000 : f32
// CHECK: %[[ISINF:.+]] = arith.cmpf oeq, %[[LOSS]], %[[INF]] : f32
// CHECK-NEXT: %[[ZEROED:.+]] = arith.select %[[ISINF]], %{{.+}}, %[[LOSS]] : f32
// CHECK-NEXT: %[[INSERTED:.+]] = tensor.insert %[[ZEROED]] into %[[LOSSES]][%[[BI]]] : tensor<?xf32>
// CHECK-NEXT: scf.yield %[[INSERTED]] : tensor<?xf32>
// CHECK: return %[[R]] : tensor<?xf32>
nn.graph @ctc_loss(%x: !nn.tensor<[B, T, 3], f32>, %y: !nn.tensor<[B, U], i32>) -> !nn.tensor<[B], f32>
    dims [B: batch, T: seq(B), U: seq(B)] {
  %c = nn.ctc_loss %x, %y from log_probs blank 2 zero_infinity : !nn.tensor<[B, T, 3], f32>, !nn.tensor<[B, U], i32>
  nn.return %c : !nn.tensor<[B], f32>
}

// -----

// From logits: the recursion reads log-softmax (row max, sum of exp,
// x - max - log sum), computed once for all frames; without
// zero_infinity the loss is -log p as it is.
// CHECK-LABEL: func.func @ctc_loss_logits
// CHECK-SAME: %[[X:[a-z0-9]+]]: tensor<?x?x3xf32>, %[[Y:[a-z0-9]+]]: tensor<?x?xi32>) -> tensor<?xf32>
// CHECK: %[[MAX:.+]] = linalg.generic {{{.+}}iterator_types = ["parallel", "parallel", "reduction"]} ins(%[[X]] : tensor<?x?x3xf32>)
// CHECK: arith.maximumf
// CHECK: linalg.generic {{{.+}}iterator_types = ["parallel", "parallel", "reduction"]} ins(%[[X]], %[[MAX]] : tensor<?x?x3xf32>, tensor<?x?xf32>)
// CHECK: math.exp
// CHECK: %[[LOGPROBS:.+]] = linalg.generic {{{.+}}iterator_types = ["parallel", "parallel", "parallel"]} ins(%[[X]], %[[MAX]], %{{.+}} : tensor<?x?x3xf32>, tensor<?x?xf32>, tensor<?x?xf32>)
// CHECK: math.log
// CHECK: arith.subf
// CHECK: scf.for %[[BI:.+]] = %{{.+}} to %{{.+}} step %{{.+}} iter_args(%[[LOSSES:.+]] = %{{.+}}) -> (tensor<?xf32>) {
// CHECK: scf.for %[[TI:.+]] = %{{.+}} to %{{.+}} step %{{.+}} iter_args(%{{.+}}) -> (tensor<?xf32>) {
// CHECK: tensor.extract %[[LOGPROBS]][%[[BI]], %[[TI]], %{{.+}}] : tensor<?x?x3xf32>
// CHECK: %[[LOSS:.+]] = arith.negf %{{.+}} : f32
// CHECK-NEXT: %[[INSERTED:.+]] = tensor.insert %[[LOSS]] into %[[LOSSES]][%[[BI]]] : tensor<?xf32>
// CHECK-NEXT: scf.yield %[[INSERTED]] : tensor<?xf32>
nn.graph @ctc_loss_logits(%x: !nn.tensor<[B, T, 3], f32>, %y: !nn.tensor<[B, U], i32>) -> !nn.tensor<[B], f32>
    dims [B: batch, T: seq(B), U: seq(B)] {
  %c = nn.ctc_loss %x, %y from logits blank 0 : !nn.tensor<[B, T, 3], f32>, !nn.tensor<[B, U], i32>
  nn.return %c : !nn.tensor<[B], f32>
}

// -----

// ctc_loss_grad from log-probabilities, without zero_infinity. Per
// sequence: the forward recursion keeps every frame's alpha in a
// [T, 2U + 1] table; beta runs from the last frame down (t = T_b - 1 -
// step), the last frame's beta being its emission at the two final
// states (2L - 1, 2L); states past 2L are -inf. Each frame's posteriors
// exp(alpha + beta - emit - log p) (0 where the emission is -inf) are
// added onto their classes at [b, t, class] by a loop over the 2L + 1
// states, none for an infeasible sequence. Then -g gamma at valid
// frames, NaN for an infeasible sequence, 0 at padded frames.
// CHECK-LABEL: func.func @ctc_grad
// CHECK-SAME: (%[[B:[a-z0-9]+]]: index, %[[T:[a-z0-9]+]]: index, %[[TLEN:[a-z0-9]+]]: tensor<?xi32>, %[[U:[a-z0-9]+]]: index, %[[ULEN:[a-z0-9]+]]: tensor<?xi32>, %[[G:[a-z0-9]+]]: tensor<?xf32>, %[[X:[a-z0-9]+]]: tensor<?x?x3xf32>, %[[Y:[a-z0-9]+]]: tensor<?x?xi32>) -> tensor<?x?x3xf32>
// CHECK: %[[STATES:.+]] = arith.addi %{{.+}}, %c1{{(_[0-9]+)?}} : index
// CHECK: %[[GAMMA0:.+]] = linalg.fill ins(%{{.+}} : f32) outs(%{{.+}} : tensor<?x?x3xf32>)
// CHECK: %[[LOGLIK0:.+]] = tensor.empty(%[[B]]) : tensor<?xf32>
// CHECK: %[[R:.+]]:2 = scf.for %[[BI:.+]] = %{{.+}} to %[[B]] step %{{.+}} iter_args(%[[GAMMA:.+]] = %[[GAMMA0]], %[[LOGLIK:.+]] = %[[LOGLIK0]]) -> (tensor<?x?x3xf32>, tensor<?xf32>) {
// CHECK: %[[FRAMES:.+]] = arith.index_cast %{{.+}} : i32 to index
// CHECK: %[[LABELS:.+]] = arith.index_cast %{{.+}} : i32 to index
// CHECK: %[[LASTSTATE:.+]] = arith.muli %[[LABELS]], %c2{{(_[0-9]+)?}} : index
// CHECK: %[[TABLE0:.+]] = tensor.empty(%[[T]], %[[STATES]]) : tensor<?x?xf32>
// CHECK: %[[FWD:.+]]:2 = scf.for %[[TI:.+]] = %{{.+}} to %[[FRAMES]] step %{{.+}} iter_args(%{{.+}} = %{{.+}}, %[[TABLE:.+]] = %[[TABLE0]]) -> (tensor<?xf32>, tensor<?x?xf32>) {
// CHECK: %[[ROW:.+]] = tensor.insert_slice %[[ALPHAT:.+]] into %[[TABLE]][%[[TI]], 0] [1, %[[STATES]]] [1, 1] : tensor<?xf32> into tensor<?x?xf32>
// CHECK-NEXT: scf.yield %[[ALPHAT]], %[[ROW]] : tensor<?xf32>, tensor<?x?xf32>
// CHECK: math.log
// CHECK: %[[LOGP:.+]] = arith.select %{{.+}}, %{{.+}}, %{{.+}} : f32
// CHECK-NEXT: %[[NEGINF:.+]] = arith.constant 0xFF800000 : f32
// CHECK-NEXT: %[[FEASIBLE:.+]] = arith.cmpf ogt, %[[LOGP]], %[[NEGINF]] : f32
// CHECK: %[[ALLSTATES:.+]] = arith.addi %[[LASTSTATE]], %c1{{(_[0-9]+)?}} : index
// CHECK-NEXT: %[[SCATTERED:.+]] = arith.select %[[FEASIBLE]], %[[ALLSTATES]], %c0{{(_[0-9]+)?}} : index
// CHECK: %[[BETA0:.+]] = linalg.generic
// CHECK: %[[BWD:.+]]:2 = scf.for %[[STEP:.+]] = %{{.+}} to %[[FRAMES]] step %{{.+}} iter_args(%[[BETANEXT:.+]] = %[[BETA0]], %[[ACC:.+]] = %[[GAMMA]]) -> (tensor<?xf32>, tensor<?x?x3xf32>) {
// CHECK: %[[TM:.+]] = arith.subi %[[FRAMES]], %c1{{(_[0-9]+)?}} : index
// CHECK-NEXT: %[[TB:.+]] = arith.subi %[[TM]], %[[STEP]] : index
// CHECK: %[[ISLAST:.+]] = arith.cmpi eq, %[[STEP]], %c0{{(_[0-9]+)?}} : index
// CHECK: %[[BETA:.+]] = linalg.generic {{{.+}}iterator_types = ["parallel"]}
// CHECK-NEXT: ^bb0
// CHECK-NEXT: %[[S:.+]] = linalg.index 0 : index
// CHECK-DAG: %[[STAY:.+]] = tensor.extract %[[BETANEXT]][%[[S]]] : tensor<?xf32>
// CHECK-DAG: %[[HASNEXT:.+]] = arith.cmpi slt, %[[S]], %[[LASTSTATE]] : index
// CHECK-DAG: %[[SUM:.+]] = arith.select %[[ISLAST]], %[[ATEND:[a-z0-9_]+]], %{{.+}} : f32
// CHECK-DAG: %[[ATEND]] = arith.select %[[FINAL:[a-z0-9_]+]], %{{.+}}, %{{.+}} : f32
// CHECK-DAG: %[[FINAL]] = arith.andi %[[NOTPAST:[a-z0-9_]+]], %[[REACHES:[a-z0-9_]+]] : i1
// CHECK-DAG: %[[NOTPAST]] = arith.cmpi sle, %[[S]], %[[LASTSTATE]] : index
// CHECK-DAG: %[[REACHES]] = arith.cmpi sge, %{{.+}}, %[[LASTSTATE]] : index
// CHECK-DAG: %[[INSIDE:.+]] = arith.cmpi sle, %[[S]], %[[LASTSTATE]] : index
// CHECK-DAG: %[[EMIT:.+]] = tensor.extract %[[X]][%[[BI]], %[[TB]], %{{.+}}] : tensor<?x?x3xf32>
// CHECK: %[[WITHEMIT:.+]] = arith.addf %[[SUM]], %[[EMIT]] : f32
// CHECK-NEXT: %[[BETAS:.+]] = arith.select %[[INSIDE]], %[[WITHEMIT]], %{{.+}} : f32
// CHECK-NEXT: linalg.yield %[[BETAS]] : f32
// CHECK: %[[SCATTER:.+]] = scf.for %[[SS:.+]] = %{{.+}} to %[[SCATTERED]] step %{{.+}} iter_args(%[[SACC:.+]] = %[[ACC]]) -> (tensor<?x?x3xf32>) {
// CHECK-DAG: %[[A:.+]] = tensor.extract %[[FWD]]#1[%[[TB]], %[[SS]]] : tensor<?x?xf32>
// CHECK-DAG: %[[BE:.+]] = tensor.extract %[[BETA]][%[[SS]]] : tensor<?xf32>
// CHECK-DAG: %[[SEMIT:.+]] = tensor.extract %[[X]][%[[BI]], %[[TB]], %[[C:[a-z0-9_]+]]] : tensor<?x?x3xf32>
// CHECK-DAG: %[[AB:.+]] = arith.addf %[[A]], %[[BE]] : f32
// CHECK-DAG: %[[ABE:.+]] = arith.subf %[[AB]], %[[SEMIT]] : f32
// CHECK-DAG: %[[ABEP:.+]] = arith.subf %[[ABE]], %[[LOGP]] : f32
// CHECK-DAG: %[[POST:.+]] = math.exp %[[ABEP]] : f32
// CHECK-DAG: %[[RULEDOUT:.+]] = arith.cmpf oeq, %[[SEMIT]], %{{.+}} : f32
// CHECK-DAG: %[[P:.+]] = arith.select %[[RULEDOUT]], %{{.+}}, %[[POST]] : f32
// CHECK-DAG: %[[OLD:.+]] = tensor.extract %[[SACC]][%[[BI]], %[[TB]], %[[C]]] : tensor<?x?x3xf32>
// CHECK: %[[NEW:.+]] = arith.addf %[[OLD]], %[[P]] : f32
// CHECK-NEXT: %[[ADDED:.+]] = tensor.insert %[[NEW]] into %[[SACC]][%[[BI]], %[[TB]], %[[C]]] : tensor<?x?x3xf32>
// CHECK-NEXT: scf.yield %[[ADDED]] : tensor<?x?x3xf32>
// CHECK: scf.yield %[[BETA]], %[[SCATTER]] : tensor<?xf32>, tensor<?x?x3xf32>
// CHECK: %[[LL:.+]] = tensor.insert %[[LOGP]] into %[[LOGLIK]][%[[BI]]] : tensor<?xf32>
// CHECK-NEXT: scf.yield %[[BWD]]#1, %[[LL]] : tensor<?x?x3xf32>, tensor<?xf32>
// CHECK: %[[DX:.+]] = linalg.generic {indexing_maps = [#[[ID:map[0-9]*]], #[[ID]], #[[BATCH:map[0-9]*]], #[[BATCH]], #[[BATCH]], #[[ID]]], iterator_types = ["parallel", "parallel", "parallel"]} ins(%[[R]]#0, %[[X]], %[[G]], %[[R]]#1, %[[TLEN]] : tensor<?x?x3xf32>, tensor<?x?x3xf32>, tensor<?xf32>, tensor<?xf32>, tensor<?xi32>)
// CHECK-NEXT: ^bb0(%[[GA:[a-z0-9_]+]]: f32, %{{.+}}: f32, %[[GB:[a-z0-9_]+]]: f32, %[[LLB:[a-z0-9_]+]]: f32, %[[LEN:[a-z0-9_]+]]: i32, %{{.+}}: f32):
// CHECK-NEXT: %[[GG:.+]] = arith.mulf %[[GB]], %[[GA]] : f32
// CHECK-NEXT: %[[NEGGG:.+]] = arith.negf %[[GG]] : f32
// CHECK: %[[OK:.+]] = arith.cmpf ogt, %[[LLB]], %{{.+}} : f32
// CHECK: %[[NAN:.+]] = arith.constant 0x7FC00000 : f32
// CHECK: %[[FINITE:.+]] = arith.select %[[OK]], %[[NEGGG]], %[[NAN]] : f32
// CHECK-DAG: %[[FRAME:.+]] = linalg.index 1 : index
// CHECK-DAG: %[[N:.+]] = arith.index_cast %[[LEN]] : i32 to index
// CHECK-DAG: %[[VALID:.+]] = arith.cmpi slt, %[[FRAME]], %[[N]] : index
// CHECK: %[[OUT:.+]] = arith.select %[[VALID]], %[[FINITE]], %{{.+}} : f32
// CHECK-NEXT: linalg.yield %[[OUT]] : f32
// CHECK: return %[[DX]] : tensor<?x?x3xf32>
nn.graph @ctc_grad(%g: !nn.tensor<[B], f32>, %x: !nn.tensor<[B, T, 3], f32>, %y: !nn.tensor<[B, U], i32>) -> !nn.tensor<[B, T, 3], f32>
    dims [B: batch, T: seq(B), U: seq(B)] {
  %d = nn.ctc_loss_grad %g, %x, %y from log_probs blank 0 : !nn.tensor<[B], f32>, !nn.tensor<[B, T, 3], f32>, !nn.tensor<[B, U], i32>
  nn.return %d : !nn.tensor<[B, T, 3], f32>
}

// -----

// viterbi_align, CTC topology, from logits, padded. Each sequence
// normalizes its own frames (a [frames, V] slice of the scores, never the
// padding and never the whole tensor): each frame's max and log of the sum
// of exp, so that class c's log-probability is (x - max) - log(sum). The
// class of each state and whether the CTC skip into it is allowed are
// computed once per sequence. Frame t's generic computes for every state
// the best of staying, coming from s - 1 and the CTC skip (each plus the
// same emission) and the move that won (0, 1, 2; ties keep the lower),
// written into row t of a [T, 2U + 1] i32 table. The final state is the last label 2L - 1 when it scores strictly
// higher than the final blank 2L. The backtrace, only for a feasible
// sequence, writes each frame's class from the last frame down into the
// sequence's own row and steps back by the recorded move; frames it does
// not reach stay -1. The sequences are independent: an scf.forall whose
// iterations each insert their row and score (threads on the CPU through
// nn-parallel-loops).
// CHECK-LABEL: func.func @viterbi_ctc
// CHECK-SAME: (%[[B:[a-z0-9]+]]: index, %[[T:[a-z0-9]+]]: index, %[[TLEN:[a-z0-9]+]]: tensor<?xi32>, %[[U:[a-z0-9]+]]: index, %[[ULEN:[a-z0-9]+]]: tensor<?xi32>, %[[X:[a-z0-9]+]]: tensor<?x?x5xf32>, %[[Y:[a-z0-9]+]]: tensor<?x?xi32>) -> (tensor<?x?xi32>, tensor<?xf32>)
// CHECK-NOT: linalg.generic
// CHECK: %[[TWICE:.+]] = arith.muli %[[U]], %c2{{(_[0-9]+)?}} : index
// CHECK: %[[STATES:.+]] = arith.addi %[[TWICE]], %c1{{(_[0-9]+)?}} : index
// CHECK: %[[EMPTY:.+]] = tensor.empty(%[[B]], %[[T]]) : tensor<?x?xi32>
// CHECK-NOT: linalg.generic
// CHECK: %[[R:.+]]:2 = scf.forall (%[[BI:.+]]) in (%[[B]]) shared_outs(%[[ALIGNMENT:.+]] = %[[EMPTY]], %[[SCORES:.+]] = %{{.+}}) -> (tensor<?x?xi32>, tensor<?xf32>) {
// CHECK: %[[FRAMES:.+]] = arith.index_cast %{{.+}} : i32 to index
// CHECK: %[[LABELS:.+]] = arith.index_cast %{{.+}} : i32 to index
// CHECK: %[[ROWS:.+]] = tensor.extract_slice %[[X]][%[[BI]], 0, 0] [1, %[[FRAMES]], 5] [1, 1, 1] : tensor<?x?x5xf32> to tensor<?x5xf32>
// CHECK: %[[MAX:.+]] = linalg.generic {{{.+}}iterator_types = ["parallel", "reduction"]} ins(%[[ROWS]] : tensor<?x5xf32>)
// CHECK: arith.maximumf
// CHECK: %[[SUM:.+]] = linalg.generic {{{.+}}iterator_types = ["parallel", "reduction"]} ins(%[[ROWS]], %[[MAX]] : tensor<?x5xf32>, tensor<?xf32>)
// CHECK: math.exp
// CHECK: %[[LOGSUM:.+]] = linalg.generic {{{.+}}iterator_types = ["parallel"]} ins(%[[SUM]] : tensor<?xf32>)
// CHECK-NEXT: ^bb0
// CHECK-NEXT: math.log
// CHECK: %[[CLASSES:.+]] = linalg.generic {{{.+}}iterator_types = ["parallel"]} outs(%{{.+}} : tensor<?xi32>)
// CHECK: %[[SKIPS:.+]] = linalg.generic {{{.+}}iterator_types = ["parallel"]} outs(%{{.+}} : tensor<?xi1>)
// CHECK: %[[NOMOVES:.+]] = tensor.empty(%[[T]], %[[STATES]]) : tensor<?x?xi32>
// CHECK: %[[FWD:.+]]:2 = scf.for %[[TI:.+]] = %{{.+}} to %[[FRAMES]] step %{{.+}} iter_args(%[[PREV:.+]] = %{{.+}}, %[[MOVES:.+]] = %[[NOMOVES]]) -> (tensor<?xf32>, tensor<?x?xi32>) {
// CHECK: %[[MOVEROW:.+]] = tensor.extract_slice %[[MOVES]][%[[TI]], 0] [1, %[[STATES]]] [1, 1] : tensor<?x?xi32> to tensor<?xi32>
// CHECK: %[[STEP:.+]]:2 = linalg.generic {{{.+}}iterator_types = ["parallel"]} outs(%{{.+}}, %[[MOVEROW]] : tensor<?xf32>, tensor<?xi32>)
// CHECK: %[[S:.+]] = linalg.index 0 : index
// CHECK: %[[CLASS32:.+]] = tensor.extract %[[CLASSES]][%[[S]]] : tensor<?xi32>
// CHECK: %[[CLASS:.+]] = arith.index_cast %[[CLASS32]] : i32 to index
// CHECK-DAG: %[[STAY:.+]] = tensor.extract %[[PREV]][%[[S]]] : tensor<?xf32>
// CHECK-DAG: %[[SKIP:.+]] = tensor.extract %[[SKIPS]][%[[S]]] : tensor<?xi1>
// CHECK-DAG: %[[SKIPFROM:.+]] = arith.select %[[SKIP]], %{{.+}}, %c0{{(_[0-9]+)?}} : index
// CHECK-DAG: %[[LOGIT:.+]] = tensor.extract %[[ROWS]][%[[TI]], %[[CLASS]]] : tensor<?x5xf32>
// CHECK-DAG: %[[FRAMEMAX:.+]] = tensor.extract %[[MAX]][%[[TI]]] : tensor<?xf32>
// CHECK-DAG: %[[FRAMELOGSUM:.+]] = tensor.extract %[[LOGSUM]][%[[TI]]] : tensor<?xf32>
// CHECK: %[[SHIFTED:.+]] = arith.subf %[[LOGIT]], %[[FRAMEMAX]] : f32
// CHECK: %[[EMIT:.+]] = arith.subf %[[SHIFTED]], %[[FRAMELOGSUM]] : f32
// CHECK: %[[C0:.+]] = arith.addf %[[STAY]], %[[EMIT]] : f32
// CHECK: %[[C1:.+]] = arith.addf %{{.+}}, %[[EMIT]] : f32
// CHECK: %[[C2:.+]] = arith.addf %{{.+}}, %[[EMIT]] : f32
// CHECK: %[[B1:.+]] = arith.cmpf ogt, %[[C1]], %[[C0]] : f32
// CHECK: %[[BEST1:.+]] = arith.select %[[B1]], %[[C1]], %[[C0]] : f32
// CHECK: %[[MOVE1:.+]] = arith.select %[[B1]], %c1_i32{{(_[0-9]+)?}}, %c0_i32{{(_[0-9]+)?}} : i32
// CHECK: %[[B2:.+]] = arith.cmpf ogt, %[[C2]], %[[BEST1]] : f32
// CHECK: %[[BEST2:.+]] = arith.select %[[B2]], %[[C2]], %[[BEST1]] : f32
// CHECK: %[[MOVE2:.+]] = arith.select %[[B2]], %c2_i32{{(_[0-9]+)?}}, %[[MOVE1]] : i32
// CHECK-NEXT: linalg.yield %[[BEST2]], %[[MOVE2]] : f32, i32
// CHECK: %[[RECORDED:.+]] = tensor.insert_slice %[[STEP]]#1 into %[[MOVES]][%[[TI]], 0] [1, %[[STATES]]] [1, 1] : tensor<?xi32> into tensor<?x?xi32>
// CHECK-NEXT: scf.yield %[[STEP]]#0, %[[RECORDED]] : tensor<?xf32>, tensor<?x?xi32>
// CHECK: %[[LASTBLANK:.+]] = arith.muli %[[LABELS]], %c2{{(_[0-9]+)?}} : index
// CHECK: %[[BLANKSCORE:.+]] = tensor.extract %[[FWD]]#0[%[[LASTBLANK]]] : tensor<?xf32>
// CHECK: %[[LASTLABEL:.+]] = arith.subi %[[LASTBLANK]], %c1{{(_[0-9]+)?}} : index
// CHECK: %[[LABELSCORE:.+]] = arith.select %{{.+}}, %{{.+}}, %{{.+}} : f32
// CHECK: %[[USELABEL:.+]] = arith.cmpf ogt, %[[LABELSCORE]], %[[BLANKSCORE]] : f32
// CHECK: %[[FINALSTATE:.+]] = arith.select %[[USELABEL]], %[[LASTLABEL]], %[[LASTBLANK]] : index
// CHECK: %[[SCORE:.+]] = arith.select %[[USELABEL]], %[[LABELSCORE]], %[[BLANKSCORE]] : f32
// CHECK: %[[FEASIBLE:.+]] = arith.cmpf ogt, %[[SCORE]], %{{.+}} : f32
// CHECK: %[[TRACED:.+]] = arith.select %[[FEASIBLE]], %[[FRAMES]], %c0{{(_[0-9]+)?}} : index
// CHECK: %[[ROWEMPTY:.+]] = tensor.empty(%[[T]]) : tensor<?xi32>
// CHECK: %[[UNALIGNED:.+]] = linalg.fill ins(%c-1_i32{{(_[0-9]+)?}} : i32) outs(%[[ROWEMPTY]] : tensor<?xi32>)
// CHECK: %[[PATH:.+]]:3 = scf.for %[[BS:.+]] = %{{.+}} to %[[TRACED]] step %{{.+}} iter_args(%[[ST:.+]] = %[[FINALSTATE]], %[[AC:.+]] = %[[UNALIGNED]], %{{.+}} = %{{.+}}) -> (index, tensor<?xi32>, f32) {
// CHECK: %[[TM:.+]] = arith.subi %[[FRAMES]], %c1{{(_[0-9]+)?}} : index
// CHECK: %[[TB:.+]] = arith.subi %[[TM]], %[[BS]] : index
// CHECK: %[[M32:.+]] = tensor.extract %[[FWD]]#1[%[[TB]], %[[ST]]] : tensor<?x?xi32>
// CHECK: %[[M:.+]] = arith.index_cast %[[M32]] : i32 to index
// CHECK: %[[CLASS:.+]] = arith.select %{{.+}}, %{{.+}}, %c0{{(_[0-9]+)?}} : index
// CHECK: %[[CLASS32:.+]] = arith.index_cast %[[CLASS]] : index to i32
// CHECK: %[[WRITTEN:.+]] = tensor.insert %[[CLASS32]] into %[[AC]][%[[TB]]] : tensor<?xi32>
// CHECK: %[[BACK:.+]] = arith.subi %[[ST]], %[[M]] : index
// CHECK-NEXT: scf.yield %[[BACK]], %[[WRITTEN]], %{{.+}} : index, tensor<?xi32>, f32
// CHECK: %[[SCORED:.+]] = tensor.from_elements %[[SCORE]] : tensor<1xf32>
// CHECK-NEXT: scf.forall.in_parallel {
// CHECK-NEXT: tensor.parallel_insert_slice %[[PATH]]#1 into %[[ALIGNMENT]][%[[BI]], 0] [1, %[[T]]] [1, 1] : tensor<?xi32> into tensor<?x?xi32>
// CHECK-NEXT: tensor.parallel_insert_slice %[[SCORED]] into %[[SCORES]][%[[BI]]] [1] [1] : tensor<1xf32> into tensor<?xf32>
// CHECK: return %[[R]]#0, %[[R]]#1 : tensor<?x?xi32>, tensor<?xf32>
nn.graph @viterbi_ctc(%x: !nn.tensor<[B, T, 5], f32>, %y: !nn.tensor<[B, U], i32>) -> (!nn.tensor<[B, T], i32>, !nn.tensor<[B], f32>)
    dims [B: batch, T: seq(B), U: seq(B)] {
  %a, %s = nn.viterbi_align %x, %y from logits topology ctc blank 0 : !nn.tensor<[B, T, 5], f32>, !nn.tensor<[B, U], i32>
  nn.return %a, %s : !nn.tensor<[B, T], i32>, !nn.tensor<[B], f32>
}

// -----

// viterbi_align, RNA topology, packed log-probabilities [N, V] with a
// prior: U + 1 states; sequence b's frames are rows offset_b + t, the
// offsets the lengths' exclusive prefix sum, computed before the
// sequences so that they can run in any order. Log-probabilities are
// read as they are (no normalization). Staying emits the blank (4),
// moving from s - 1 emits label s - 1 (the labels of the moves computed
// once per sequence); the frame loop reads nothing outside its generic
// (on a GPU that would be host code reading device data); the search reads
// log-probabilities minus the prior, and the backtrace adds the prior of
// each emitted class back so that the score is the path's
// log-probability. The final state is L.
// CHECK-LABEL: func.func @viterbi_rna_packed
// CHECK-SAME: (%[[B:[a-z0-9]+]]: index, %[[T:[a-z0-9]+]]: index, %[[TLEN:[a-z0-9]+]]: tensor<?xi32>, %[[U:[a-z0-9]+]]: index, %[[ULEN:[a-z0-9]+]]: tensor<?xi32>, %[[X:[a-z0-9]+]]: tensor<?x5xf32>, %[[Y:[a-z0-9]+]]: tensor<?x?xi32>, %[[PRIOR:[a-z0-9]+]]: tensor<5xf32>) -> (tensor<?xi32>, tensor<?xf32>)
// CHECK-NOT: linalg.generic
// CHECK: %[[STATES:.+]] = arith.addi %[[U]], %c1{{(_[0-9]+)?}} : index
// CHECK: %[[OFFSETS:.+]]:2 = scf.for %{{.+}} = %{{.+}} to %[[B]] step %{{.+}} iter_args(%{{.+}} = %{{.+}}, %{{.+}} = %c0{{(_[0-9]+)?}}) -> (tensor<?xi32>, index) {
// CHECK: %[[R:.+]]:2 = scf.forall (%[[BI:.+]]) in (%[[B]]) shared_outs(%[[ALIGNMENT:.+]] = %{{.+}}, %[[SCORES:.+]] = %{{.+}}) -> (tensor<?xi32>, tensor<?xf32>) {
// CHECK: %[[FRAMES:.+]] = arith.index_cast %{{.+}} : i32 to index
// CHECK-NEXT: %[[OFFSETB:.+]] = tensor.extract %[[OFFSETS]]#0[%[[BI]]] : tensor<?xi32>
// CHECK-NEXT: %[[OFFSET:.+]] = arith.index_cast %[[OFFSETB]] : i32 to index
// CHECK: %[[LABELS:.+]] = arith.index_cast %{{.+}} : i32 to index
// CHECK: %[[ROWS:.+]] = tensor.extract_slice %[[X]][%[[OFFSET]], 0] [%[[FRAMES]], 5] [1, 1] : tensor<?x5xf32> to tensor<?x5xf32>
// CHECK-NOT: math.exp
// CHECK: %[[CLASSES:.+]] = linalg.generic {{{.+}}iterator_types = ["parallel"]} outs(%{{.+}} : tensor<?xi32>)
// CHECK: %[[FWD:.+]]:2 = scf.for %[[TI:.+]] = %{{.+}} to %[[FRAMES]] step %{{.+}} iter_args(%[[PREV:.+]] = %{{.+}}, %[[MOVES:.+]] = %{{.+}}) -> (tensor<?xf32>, tensor<?x?xi32>) {
// CHECK-NOT: tensor.extract {{.+}} : tensor<?x5xf32>
// CHECK: linalg.generic {{{.+}}iterator_types = ["parallel"]} outs(%{{.+}}, %{{.+}} : tensor<?xf32>, tensor<?xi32>)
// CHECK: %[[S:.+]] = linalg.index 0 : index
// CHECK: %[[CLASS32:.+]] = tensor.extract %[[CLASSES]][%[[S]]] : tensor<?xi32>
// CHECK: %[[CLASS:.+]] = arith.index_cast %[[CLASS32]] : i32 to index
// CHECK-DAG: %[[STAY:.+]] = tensor.extract %[[PREV]][%[[S]]] : tensor<?xf32>
// CHECK-DAG: %[[BLANKLP:.+]] = tensor.extract %[[ROWS]][%[[TI]], %c4{{(_[0-9]+)?}}] : tensor<?x5xf32>
// CHECK-DAG: %[[BLANKPRIOR:.+]] = tensor.extract %[[PRIOR]][%c4{{(_[0-9]+)?}}] : tensor<5xf32>
// CHECK-DAG: %[[BLANKE:.+]] = arith.subf %[[BLANKLP]], %[[BLANKPRIOR]] : f32
// CHECK-DAG: %[[C0:.+]] = arith.addf %[[STAY]], %[[BLANKE]] : f32
// CHECK-DAG: %[[LABELLP:.+]] = tensor.extract %[[ROWS]][%[[TI]], %[[CLASS]]] : tensor<?x5xf32>
// CHECK-DAG: %[[LABELPRIOR:.+]] = tensor.extract %[[PRIOR]][%[[CLASS]]] : tensor<5xf32>
// CHECK-DAG: %[[LABELE:.+]] = arith.subf %[[LABELLP]], %[[LABELPRIOR]] : f32
// CHECK-DAG: %[[C1:.+]] = arith.addf %{{.+}}, %[[LABELE]] : f32
// CHECK: %[[B1:.+]] = arith.cmpf ogt, %[[C1]], %[[C0]] : f32
// CHECK: %[[BEST:.+]] = arith.select %[[B1]], %[[C1]], %[[C0]] : f32
// CHECK: %[[MOVE:.+]] = arith.select %[[B1]], %c1_i32{{(_[0-9]+)?}}, %c0_i32{{(_[0-9]+)?}} : i32
// CHECK-NEXT: linalg.yield %[[BEST]], %[[MOVE]] : f32, i32
// CHECK: %[[BEST:.+]] = tensor.extract %[[FWD]]#0[%[[LABELS]]] : tensor<?xf32>
// CHECK: %[[FEASIBLE:.+]] = arith.cmpf ogt, %[[BEST]], %{{.+}} : f32
// CHECK: %[[TRACED:.+]] = arith.select %[[FEASIBLE]], %[[FRAMES]], %c0{{(_[0-9]+)?}} : index
// CHECK: %[[ROWEMPTY:.+]] = tensor.empty(%[[FRAMES]]) : tensor<?xi32>
// CHECK: %[[UNALIGNED:.+]] = linalg.fill ins(%c-1_i32{{(_[0-9]+)?}} : i32) outs(%[[ROWEMPTY]] : tensor<?xi32>)
// CHECK: %[[PATH:.+]]:3 = scf.for %[[BS:.+]] = %{{.+}} to %[[TRACED]] step %{{.+}} iter_args(%[[ST:.+]] = %[[LABELS]], %[[AC:.+]] = %[[UNALIGNED]], %[[PRIORSUM:.+]] = %{{.+}}) -> (index, tensor<?xi32>, f32) {
// CHECK: %[[TB:.+]] = arith.subi %{{.+}}, %[[BS]] : index
// CHECK: %[[M32:.+]] = tensor.extract %[[FWD]]#1[%[[TB]], %[[ST]]] : tensor<?x?xi32>
// CHECK: %[[M:.+]] = arith.index_cast %[[M32]] : i32 to index
// CHECK: %[[STAYED:.+]] = arith.cmpi eq, %[[M]], %c0{{(_[0-9]+)?}} : index
// CHECK: %[[EMITTED:.+]] = arith.select %[[STAYED]], %c4{{(_[0-9]+)?}}, %{{.+}} : index
// CHECK: %[[EMITTED32:.+]] = arith.index_cast %[[EMITTED]] : index to i32
// CHECK: %[[WRITTEN:.+]] = tensor.insert %[[EMITTED32]] into %[[AC]][%[[TB]]] : tensor<?xi32>
// CHECK: %[[P:.+]] = tensor.extract %[[PRIOR]][%[[EMITTED]]] : tensor<5xf32>
// CHECK: %[[SUM:.+]] = arith.addf %[[PRIORSUM]], %[[P]] : f32
// CHECK: %[[BACK:.+]] = arith.subi %[[ST]], %[[M]] : index
// CHECK-NEXT: scf.yield %[[BACK]], %[[WRITTEN]], %[[SUM]] : index, tensor<?xi32>, f32
// CHECK: %[[SCORE:.+]] = arith.addf %[[BEST]], %[[PATH]]#2 : f32
// CHECK: %[[SCORED:.+]] = tensor.from_elements %[[SCORE]] : tensor<1xf32>
// CHECK-NEXT: scf.forall.in_parallel {
// CHECK-NEXT: tensor.parallel_insert_slice %[[PATH]]#1 into %[[ALIGNMENT]][%[[OFFSET]]] [%[[FRAMES]]] [1] : tensor<?xi32> into tensor<?xi32>
// CHECK-NEXT: tensor.parallel_insert_slice %[[SCORED]] into %[[SCORES]][%[[BI]]] [1] [1] : tensor<1xf32> into tensor<?xf32>
// CHECK: return %[[R]]#0, %[[R]]#1 : tensor<?xi32>, tensor<?xf32>
nn.parameter @prior : !nn.tensor<[5], f32>
nn.graph @viterbi_rna_packed(%x: !nn.tensor<[N, 5], f32>, %y: !nn.tensor<[B, U], i32>) -> (!nn.tensor<[N], i32>, !nn.tensor<[B], f32>)
    dims [B: batch, T: seq(B), U: seq(B), N: packed(B, T)] {
  %p = nn.param_ref @prior : !nn.tensor<[5], f32>
  %a, %s = nn.viterbi_align %x, %y from log_probs topology rna blank 4 prior %p : !nn.tensor<[N, 5], f32>, !nn.tensor<[B, U], i32>, !nn.tensor<[5], f32>
  nn.return %a, %s : !nn.tensor<[N], i32>, !nn.tensor<[B], f32>
}
