// The loss-tail frontier: frame-wise ops only (the other frontiers:
// nn-pack-before-loss-frontier.mlir).
// RUN: nn-opt %s --split-input-file --nn-pack-before-loss=pack=loss-tail | FileCheck %s
// Idempotence: a second run changes nothing.
// RUN: nn-opt %s --split-input-file --nn-pack-before-loss=pack=loss-tail > %t.once.mlir
// RUN: nn-opt %t.once.mlir --split-input-file --nn-pack-before-loss=pack=loss-tail > %t.twice.mlir
// RUN: diff %t.once.mlir %t.twice.mlir

// Cross entropy right after an LSTM: the LSTM output and the targets are
// the frontier; the loss is computed and marked on packed frames.

// CHECK-LABEL: nn.graph @ce_after_lstm
// CHECK-SAME: (%[[X:[^:]+]]: !nn.tensor<[B, T, 4], f32>, %[[Y:[^:]+]]: !nn.tensor<[B, T], i32>
// CHECK-SAME: dims [B: batch, T: seq(B), N_T: packed(B, T)]
// CHECK-NEXT: %[[PY:.+]] = nn.pack %[[Y]] : !nn.tensor<[B, T], i32> -> !nn.tensor<[N_T], i32>
// CHECK-NEXT: %[[H:.+]] = nn.lstm forward %[[X]]
// CHECK-NEXT: %[[PH:.+]] = nn.pack %[[H]] : !nn.tensor<[B, T, 4], f32> -> !nn.tensor<[N_T, 4], f32>
// CHECK-NEXT: %[[CE:.+]] = nn.cross_entropy %[[PH]], %[[PY]] from logits : !nn.tensor<[N_T, 4], f32>, !nn.tensor<[N_T], i32>
// CHECK-NEXT: nn.mark_loss %[[CE]] as "ce" normalize per_frame : !nn.tensor<[N_T], f32>
// CHECK-NEXT: nn.return
nn.graph @ce_after_lstm(%x: !nn.tensor<[B, T, 4], f32>, %y: !nn.tensor<[B, T], i32>,
                        %wi: !nn.tensor<[16, 4], f32>, %wh: !nn.tensor<[16, 4], f32>, %b: !nn.tensor<[16], f32>)
    dims [B: batch, T: seq(B)] {
  %h = nn.lstm forward %x, %wi, %wh, %b : !nn.tensor<[B, T, 4], f32>, !nn.tensor<[16, 4], f32>, !nn.tensor<[16, 4], f32>, !nn.tensor<[16], f32>
  %ce = nn.cross_entropy %h, %y from logits : !nn.tensor<[B, T, 4], f32>, !nn.tensor<[B, T], i32>
  nn.mark_loss %ce as "ce" normalize per_frame : !nn.tensor<[B, T], f32>
  nn.return
}

// -----

// A chain with parameters (linear -> relu -> linear -> log_softmax -> CE)
// moves behind the pack as a whole; the padded chain disappears.

// CHECK-LABEL: nn.graph @chain
// CHECK-SAME: dims [B: batch, T: seq(B), N: packed(B, T)]
// CHECK: %[[H:.+]] = nn.lstm
// CHECK-NEXT: %[[PH:.+]] = nn.pack %[[H]] : !nn.tensor<[B, T, 4], f32> -> !nn.tensor<[N, 4], f32>
// CHECK: %[[W1:.+]] = nn.param_ref @w1
// CHECK-NEXT: %[[L1:.+]] = nn.linear %[[PH]], %[[W1]] : !nn.tensor<[N, 4], f32>, !nn.tensor<[8, 4], f32>
// CHECK-NEXT: %[[R:.+]] = nn.relu %[[L1]] : !nn.tensor<[N, 8], f32>
// CHECK-NEXT: %[[W2:.+]] = nn.param_ref @w2
// CHECK-NEXT: %[[L2:.+]] = nn.linear %[[R]], %[[W2]], %{{.+}} : !nn.tensor<[N, 8], f32>, !nn.tensor<[6, 8], f32>, !nn.tensor<[6], f32>
// CHECK-NEXT: %[[LP:.+]] = nn.log_softmax %[[L2]] : !nn.tensor<[N, 6], f32>
// CHECK-NEXT: %[[CE:.+]] = nn.cross_entropy %[[LP]], %{{.+}} from log_probs : !nn.tensor<[N, 6], f32>, !nn.tensor<[N], i32>
// CHECK-NEXT: nn.mark_loss %[[CE]] as "ce" normalize per_frame scale 5.000000e-01 : !nn.tensor<[N], f32>
// CHECK-NOT: !nn.tensor<[B, T, 8], f32>
// CHECK: nn.return
nn.parameter @w1 : !nn.tensor<[8, 4], f32>
nn.parameter @w2 : !nn.tensor<[6, 8], f32>
nn.graph @chain(%x: !nn.tensor<[B, T, 4], f32>, %y: !nn.tensor<[B, T], i32>,
                %wi: !nn.tensor<[16, 4], f32>, %wh: !nn.tensor<[16, 4], f32>, %b: !nn.tensor<[16], f32>, %b2: !nn.tensor<[6], f32>)
    dims [B: batch, T: seq(B), N: packed(B, T)] {
  %h = nn.lstm forward %x, %wi, %wh, %b : !nn.tensor<[B, T, 4], f32>, !nn.tensor<[16, 4], f32>, !nn.tensor<[16, 4], f32>, !nn.tensor<[16], f32>
  %w1 = nn.param_ref @w1 : !nn.tensor<[8, 4], f32>
  %l1 = nn.linear %h, %w1 : !nn.tensor<[B, T, 4], f32>, !nn.tensor<[8, 4], f32>
  %r = nn.relu %l1 : !nn.tensor<[B, T, 8], f32>
  %w2 = nn.param_ref @w2 : !nn.tensor<[6, 8], f32>
  %l2 = nn.linear %r, %w2, %b2 : !nn.tensor<[B, T, 8], f32>, !nn.tensor<[6, 8], f32>, !nn.tensor<[6], f32>
  %lp = nn.log_softmax %l2 : !nn.tensor<[B, T, 6], f32>
  %ce = nn.cross_entropy %lp, %y from log_probs : !nn.tensor<[B, T, 6], f32>, !nn.tensor<[B, T], i32>
  nn.mark_loss %ce as "ce" normalize per_frame scale 0.5 : !nn.tensor<[B, T], f32>
  nn.return
}

// -----

// Two losses share a frontier and a hidden layer: one pack of the LSTM
// output, one packed tanh, two packed heads.

// CHECK-LABEL: nn.graph @shared_frontier
// CHECK: %[[H:.+]] = nn.lstm
// CHECK-NEXT: %[[PH:.+]] = nn.pack %[[H]]
// CHECK-NEXT: %[[A:.+]] = nn.tanh %[[PH]] : !nn.tensor<[N_T, 4], f32>
// CHECK-NEXT: %[[CE:.+]] = nn.cross_entropy %[[A]], %{{.+}} from logits
// CHECK-NEXT: nn.mark_loss %[[CE]] as "ce"
// CHECK-NEXT: %[[MSE:.+]] = nn.mse %[[A]], %{{.+}} : !nn.tensor<[N_T, 4], f32>, !nn.tensor<[N_T, 4], f32>
// CHECK-NEXT: nn.mark_loss %[[MSE]] as "mse"
// CHECK-NOT: nn.pack
// CHECK: nn.return
nn.graph @shared_frontier(%x: !nn.tensor<[B, T, 4], f32>, %y: !nn.tensor<[B, T], i32>, %z: !nn.tensor<[B, T, 4], f32>,
                          %wi: !nn.tensor<[16, 4], f32>, %wh: !nn.tensor<[16, 4], f32>, %b: !nn.tensor<[16], f32>)
    dims [B: batch, T: seq(B)] {
  %h = nn.lstm forward %x, %wi, %wh, %b : !nn.tensor<[B, T, 4], f32>, !nn.tensor<[16, 4], f32>, !nn.tensor<[16, 4], f32>, !nn.tensor<[16], f32>
  %a = nn.tanh %h : !nn.tensor<[B, T, 4], f32>
  %ce = nn.cross_entropy %a, %y from logits : !nn.tensor<[B, T, 4], f32>, !nn.tensor<[B, T], i32>
  nn.mark_loss %ce as "ce" normalize per_frame : !nn.tensor<[B, T], f32>
  %mse = nn.mse %a, %z : !nn.tensor<[B, T, 4], f32>, !nn.tensor<[B, T, 4], f32>
  nn.mark_loss %mse as "mse" normalize per_sequence : !nn.tensor<[B, T], f32>
  nn.return
}

// -----

// A loss directly on graph inputs (no recurrent op): the inputs are the
// frontier, packed at the top of the graph.

// CHECK-LABEL: nn.graph @on_inputs
// CHECK-SAME: (%[[X:[^:]+]]: !nn.tensor<[B, T, 4], f32>, %[[Y:[^:]+]]: !nn.tensor<[B, T], i32>
// CHECK-NEXT: %[[PY:.+]] = nn.pack %[[Y]]
// CHECK-NEXT: %[[PX:.+]] = nn.pack %[[X]]
// CHECK-NEXT: %[[L:.+]] = nn.linear %[[PX]], %{{.+}} : !nn.tensor<[N_T, 4], f32>
// CHECK-NEXT: %[[CE:.+]] = nn.cross_entropy %[[L]], %[[PY]]
// CHECK-NEXT: nn.mark_loss %[[CE]]
nn.graph @on_inputs(%x: !nn.tensor<[B, T, 4], f32>, %y: !nn.tensor<[B, T], i32>, %w: !nn.tensor<[3, 4], f32>)
    dims [B: batch, T: seq(B)] {
  %l = nn.linear %x, %w : !nn.tensor<[B, T, 4], f32>, !nn.tensor<[3, 4], f32>
  %ce = nn.cross_entropy %l, %y from logits : !nn.tensor<[B, T, 3], f32>, !nn.tensor<[B, T], i32>
  nn.mark_loss %ce as "ce" normalize per_frame : !nn.tensor<[B, T], f32>
  nn.return
}

// -----

// CTC mixes time: left exactly as it is, and no packed dim is declared.

// CHECK-LABEL: nn.graph @ctc_untouched
// CHECK-SAME: dims [B: batch, T: seq(B), U: seq(B)] {
// CHECK-NEXT: %[[L:.+]] = nn.linear %{{.+}} : !nn.tensor<[B, T, 4], f32>
// CHECK-NEXT: %[[C:.+]] = nn.ctc_loss %[[L]], %{{.+}} from logits blank 0 : !nn.tensor<[B, T, 5], f32>
// CHECK-NEXT: nn.mark_loss %[[C]] as "ctc" normalize per_sequence : !nn.tensor<[B], f32>
// CHECK-NOT: nn.pack
nn.graph @ctc_untouched(%x: !nn.tensor<[B, T, 4], f32>, %labels: !nn.tensor<[B, U], i32>, %w: !nn.tensor<[5, 4], f32>)
    dims [B: batch, T: seq(B), U: seq(B)] {
  %l = nn.linear %x, %w : !nn.tensor<[B, T, 4], f32>, !nn.tensor<[5, 4], f32>
  %c = nn.ctc_loss %l, %labels from logits blank 0 : !nn.tensor<[B, T, 5], f32>, !nn.tensor<[B, U], i32>
  nn.mark_loss %c as "ctc" normalize per_sequence : !nn.tensor<[B], f32>
  nn.return
}

// -----

// A value used by a loss and returned (for decoding): computed once, on
// packed frames, and unpacked for the return.

// CHECK-LABEL: nn.graph @used_and_returned
// CHECK: %[[H:.+]] = nn.lstm
// CHECK-NEXT: %[[PH:.+]] = nn.pack %[[H]]
// CHECK-NEXT: %[[L:.+]] = nn.linear %[[PH]], %{{.+}} : !nn.tensor<[N_T, {{[0-9]+}}], f32>
// CHECK-NEXT: %[[U:.+]] = nn.unpack %[[L]] : !nn.tensor<[N_T, 3], f32> -> !nn.tensor<[B, T, 3], f32>
// CHECK-NEXT: %[[CE:.+]] = nn.cross_entropy %[[L]]
// CHECK-NEXT: nn.mark_loss %[[CE]]
// CHECK-NEXT: nn.return %[[U]] : !nn.tensor<[B, T, 3], f32>
nn.graph @used_and_returned(%x: !nn.tensor<[B, T, 4], f32>, %y: !nn.tensor<[B, T], i32>, %w: !nn.tensor<[3, 4], f32>,
                            %wi: !nn.tensor<[16, 4], f32>, %wh: !nn.tensor<[16, 4], f32>, %b: !nn.tensor<[16], f32>)
    -> !nn.tensor<[B, T, 3], f32> dims [B: batch, T: seq(B)] {
  %h = nn.lstm forward %x, %wi, %wh, %b : !nn.tensor<[B, T, 4], f32>, !nn.tensor<[16, 4], f32>, !nn.tensor<[16, 4], f32>, !nn.tensor<[16], f32>
  %l = nn.linear %h, %w : !nn.tensor<[B, T, 4], f32>, !nn.tensor<[3, 4], f32>
  %ce = nn.cross_entropy %l, %y from logits : !nn.tensor<[B, T, 3], f32>, !nn.tensor<[B, T], i32>
  nn.mark_loss %ce as "ce" normalize per_frame : !nn.tensor<[B, T], f32>
  nn.return %l : !nn.tensor<[B, T, 3], f32>
}

// -----

// A decoupled loss graph calling the model graph: the call's result is the
// frontier of the criterion's loss; the model graph has no loss and stays.

// CHECK-LABEL: nn.graph @model
// CHECK-NOT: nn.pack
// CHECK: nn.return
// CHECK-LABEL: nn.graph @criterion
// CHECK-SAME: dims [C: batch, S: seq(C), N_S: packed(C, S)]
// CHECK: %[[LOGITS:.+]] = nn.call @model
// CHECK-NEXT: %[[P:.+]] = nn.pack %[[LOGITS]] : !nn.tensor<[C, S, 3], f32> -> !nn.tensor<[N_S, 3], f32>
// CHECK-NEXT: %[[CE:.+]] = nn.cross_entropy %[[P]]
// CHECK-NEXT: nn.mark_loss %[[CE]] as "ce" normalize per_frame : !nn.tensor<[N_S], f32>
nn.graph @model(%x: !nn.tensor<[B, T, 4], f32>, %w: !nn.tensor<[3, 4], f32>) -> !nn.tensor<[B, T, 3], f32>
    dims [B: batch, T: seq(B)] {
  %l = nn.linear %x, %w : !nn.tensor<[B, T, 4], f32>, !nn.tensor<[3, 4], f32>
  nn.return %l : !nn.tensor<[B, T, 3], f32>
}
nn.graph @criterion(%x: !nn.tensor<[C, S, 4], f32>, %y: !nn.tensor<[C, S], i32>, %w: !nn.tensor<[3, 4], f32>)
    dims [C: batch, S: seq(C)] {
  %logits = nn.call @model(%x, %w) : (!nn.tensor<[C, S, 4], f32>, !nn.tensor<[3, 4], f32>) -> !nn.tensor<[C, S, 3], f32>
  %ce = nn.cross_entropy %logits, %y from logits : !nn.tensor<[C, S, 3], f32>, !nn.tensor<[C, S], i32>
  nn.mark_loss %ce as "ce" normalize per_frame : !nn.tensor<[C, S], f32>
  nn.return
}

// -----

// A loss on a downsampled axis packs on that axis with its lengths.

// CHECK-LABEL: nn.graph @downsampled
// CHECK-SAME: N_T2: packed(B, T2)]
// CHECK: %[[C:.+]] = nn.conv1d %{{.+}} stride 2
// CHECK-NEXT: %[[P:.+]] = nn.pack %[[C]] : !nn.tensor<[B, T2, 4], f32> -> !nn.tensor<[N_T2, 4], f32>
// CHECK-NEXT: %[[R:.+]] = nn.relu %[[P]] : !nn.tensor<[N_T2, 4], f32>
// CHECK-NEXT: %[[CE:.+]] = nn.cross_entropy %[[R]], %{{.+}} : !nn.tensor<[N_T2, 4], f32>, !nn.tensor<[N_T2], i32>
nn.graph @downsampled(%x: !nn.tensor<[B, T, 4], f32>, %y: !nn.tensor<[B, T2], i32>, %w: !nn.tensor<[4, 3, 4], f32>)
    dims [B: batch, T: seq(B), T2: seq(B) = ceildiv(T, 2)] {
  %c = nn.conv1d %x, %w stride 2 : (!nn.tensor<[B, T, 4], f32>, !nn.tensor<[4, 3, 4], f32>) -> !nn.tensor<[B, T2, 4], f32>
  %r = nn.relu %c : !nn.tensor<[B, T2, 4], f32>
  %ce = nn.cross_entropy %r, %y from logits : !nn.tensor<[B, T2, 4], f32>, !nn.tensor<[B, T2], i32>
  nn.mark_loss %ce as "ce" normalize per_frame : !nn.tensor<[B, T2], f32>
  nn.return
}

// -----

// An add of two branches from different recurrent ops packs each branch at
// its own frontier.

// CHECK-LABEL: nn.graph @two_branches
// CHECK: %[[F:.+]] = nn.lstm forward
// CHECK-NEXT: %[[PF:.+]] = nn.pack %[[F]]
// CHECK-NEXT: %[[K:.+]] = nn.lstm backward
// CHECK-NEXT: %[[PK:.+]] = nn.pack %[[K]]
// CHECK-NEXT: %[[S:.+]] = nn.add %[[PF]], %[[PK]] : !nn.tensor<[N_T, 4], f32>
// CHECK-NEXT: %[[CE:.+]] = nn.cross_entropy %[[S]]
nn.graph @two_branches(%x: !nn.tensor<[B, T, 4], f32>, %y: !nn.tensor<[B, T], i32>,
                       %wi: !nn.tensor<[16, 4], f32>, %wh: !nn.tensor<[16, 4], f32>, %b: !nn.tensor<[16], f32>)
    dims [B: batch, T: seq(B)] {
  %f = nn.lstm forward %x, %wi, %wh, %b : !nn.tensor<[B, T, 4], f32>, !nn.tensor<[16, 4], f32>, !nn.tensor<[16, 4], f32>, !nn.tensor<[16], f32>
  %k = nn.lstm backward %x, %wi, %wh, %b : !nn.tensor<[B, T, 4], f32>, !nn.tensor<[16, 4], f32>, !nn.tensor<[16, 4], f32>, !nn.tensor<[16], f32>
  %s = nn.add %f, %k : !nn.tensor<[B, T, 4], f32>
  %ce = nn.cross_entropy %s, %y from logits : !nn.tensor<[B, T, 4], f32>, !nn.tensor<[B, T], i32>
  nn.mark_loss %ce as "ce" normalize per_frame : !nn.tensor<[B, T], f32>
  nn.return
}

// -----

// No sequence axes: a per-sequence classifier is left as it is.

// CHECK-LABEL: nn.graph @no_sequence_axes
// CHECK-SAME: dims [B: batch] {
// CHECK-NEXT: nn.linear %{{.+}} : !nn.tensor<[B, 4], f32>
// CHECK-NEXT: nn.cross_entropy %{{.+}} : !nn.tensor<[B, 3], f32>, !nn.tensor<[B], i32>
// CHECK-NOT: nn.pack
nn.graph @no_sequence_axes(%x: !nn.tensor<[B, 4], f32>, %y: !nn.tensor<[B], i32>, %w: !nn.tensor<[3, 4], f32>)
    dims [B: batch] {
  %l = nn.linear %x, %w : !nn.tensor<[B, 4], f32>, !nn.tensor<[3, 4], f32>
  %ce = nn.cross_entropy %l, %y from logits : !nn.tensor<[B, 3], f32>, !nn.tensor<[B], i32>
  nn.mark_loss %ce as "ce" normalize per_sequence : !nn.tensor<[B], f32>
  nn.return
}
