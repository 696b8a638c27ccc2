// How far back nn-pack-before-loss packs (its `pack` option): an lstm has
// a packed form, so pack=earliest moves it behind the pack, and so does
// pack=auto (the default) where the cost model says it pays; loss-tail
// (nn-pack-before-loss.mlir) never does.
// RUN: nn-opt %s --split-input-file --nn-pack-before-loss=pack=earliest | FileCheck %s --check-prefixes=CHECK,EARLIEST
// RUN: nn-opt %s --split-input-file --nn-pack-before-loss | FileCheck %s --check-prefixes=CHECK,AUTO
// RUN: nn-opt %s --split-input-file --nn-pack-before-loss=pack=loss-tail | FileCheck %s --check-prefixes=CHECK,TAIL
// The remarks say what the cost model estimated.
// RUN: nn-opt %s --split-input-file --nn-pack-before-loss=emit-remarks=true 2>&1 >/dev/null | FileCheck %s --check-prefix=REMARK
// With no padding expected, moving the second layer saves nothing.
// RUN: nn-opt %s --split-input-file --nn-pack-before-loss='expected-fill=1 emit-remarks=true' 2>&1 >/dev/null | FileCheck %s --check-prefix=FULL
// Idempotence.
// RUN: nn-opt %s --split-input-file --nn-pack-before-loss=pack=earliest > %t.once.mlir
// RUN: nn-opt %t.once.mlir --split-input-file --nn-pack-before-loss=pack=earliest > %t.twice.mlir
// RUN: diff %t.once.mlir %t.twice.mlir
// A fill outside (0, 1] is an error.
// RUN: not nn-opt %s --split-input-file --nn-pack-before-loss=expected-fill=0 2>&1 | FileCheck %s --check-prefix=BADFILL

// Two bidirectional layers with dropout between them and a frame-wise
// loss: earliest and auto pack the features and run both LSTMs, the
// dropout and the output layer on packed frames; loss-tail packs the
// second LSTM's output.

// CHECK-LABEL: nn.graph @blstm
// EARLIEST: %[[PX:.+]] = nn.pack %[[X:[^ ]+]] : !nn.tensor<[B, T, 3], f32> -> !nn.tensor<[N_T, 3], f32>
// EARLIEST: %[[H1:.+]] = nn.lstm bidirectional %[[PX]], {{.+}} : !nn.tensor<[N_T, 3], f32>
// EARLIEST: %[[D:.+]] = nn.dropout %[[H1]] {{.+}} : !nn.tensor<[N_T, 4], f32>
// EARLIEST: %[[H2:.+]] = nn.lstm bidirectional %[[D]], {{.+}} : !nn.tensor<[N_T, 4], f32>
// EARLIEST: nn.linear %[[H2]], {{.+}} : !nn.tensor<[N_T, 4], f32>
// EARLIEST-NOT: nn.unpack
// AUTO: %[[PX:.+]] = nn.pack %{{.+}} : !nn.tensor<[B, T, 3], f32> -> !nn.tensor<[N_T, 3], f32>
// AUTO: nn.lstm bidirectional %[[PX]], {{.+}} : !nn.tensor<[N_T, 3], f32>
// AUTO: nn.lstm bidirectional %{{.+}} : !nn.tensor<[N_T, 4], f32>
// AUTO-NOT: nn.unpack
// TAIL: nn.lstm bidirectional %{{.+}} : !nn.tensor<[B, T, 3], f32>
// TAIL: %[[H2:.+]] = nn.lstm bidirectional %{{.+}} : !nn.tensor<[B, T, 4], f32>
// TAIL: nn.pack %[[H2]] : !nn.tensor<[B, T, 4], f32> -> !nn.tensor<[N_T, 4], f32>
// CHECK: nn.mark_loss %{{.+}} as "ce" normalize per_frame : !nn.tensor<[N_T], f32>
// The second layer (per position: result R = 4 values, padded-frame work
// w = 4, the dropout before it U = 8, the frontier before it F = 4):
// packed 0.65 (w + U) + 2 * 0.65 F = 13 against padded w + 2 * 0.65 R + U
// = 17.2; then the first (F = 3, U = 0): 6.5 against 9.2.
// REMARK: remark: runs on packed frames (pack=auto): an estimated 13 element operations per position packed against 17.2 padded at fill 0.65
// REMARK: remark: runs on packed frames (pack=auto): an estimated 6.5 element operations per position packed against 9.2 padded at fill 0.65
// REMARK: remark: loss 'ce' runs on packed frames N_T = packed(B, T): 3 frame-wise and 2 sequence-mixing op(s) moved behind the pack; new pack(s) of: argument 0, argument 1
// FULL: remark: stays padded (pack=auto): an estimated 20 element operations per position packed against 20 padded at fill 1
// FULL: remark: loss 'ce' runs on packed frames N_T = packed(B, T): 2 frame-wise op(s) moved behind the pack; new pack(s) of: nn.lstm, argument 1
// BADFILL: error: nn-pack-before-loss: expected-fill must be in (0, 1], got 0.0
nn.graph @blstm(%x: !nn.tensor<[B, T, 3], f32>, %y: !nn.tensor<[B, T], i32>,
                %wi: !nn.tensor<[2, 8, 3], f32>, %wh: !nn.tensor<[2, 8, 2], f32>, %b: !nn.tensor<[2, 8], f32>,
                %wi2: !nn.tensor<[2, 8, 4], f32>, %wh2: !nn.tensor<[2, 8, 2], f32>, %b2: !nn.tensor<[2, 8], f32>,
                %wo: !nn.tensor<[5, 4], f32>)
    dims [B: batch, T: seq(B)] {
  %h1 = nn.lstm bidirectional %x, %wi, %wh, %b : !nn.tensor<[B, T, 3], f32>, !nn.tensor<[2, 8, 3], f32>, !nn.tensor<[2, 8, 2], f32>, !nn.tensor<[2, 8], f32>
  %d = nn.dropout %h1 rate 0.1 : !nn.tensor<[B, T, 4], f32>
  %h2 = nn.lstm bidirectional %d, %wi2, %wh2, %b2 : !nn.tensor<[B, T, 4], f32>, !nn.tensor<[2, 8, 4], f32>, !nn.tensor<[2, 8, 2], f32>, !nn.tensor<[2, 8], f32>
  %l = nn.linear %h2, %wo : !nn.tensor<[B, T, 4], f32>, !nn.tensor<[5, 4], f32>
  %ce = nn.cross_entropy %l, %y from logits : !nn.tensor<[B, T, 5], f32>, !nn.tensor<[B, T], i32>
  nn.mark_loss %ce as "ce" normalize per_frame : !nn.tensor<[B, T], f32>
  nn.return
}

// -----

// An lstm whose result is also used padded (a graph result) still moves;
// its padded users read an unpack of the packed result. A CTC loss has a
// packed form: it reads the packed result (earliest, auto), or the padded
// one at the loss-tail frontier.

// CHECK-LABEL: nn.graph @shared
// EARLIEST: %[[H:.+]] = nn.lstm forward %{{.+}} : !nn.tensor<[N_T, 3], f32>
// EARLIEST: %[[U:.+]] = nn.unpack %[[H]] : !nn.tensor<[N_T, 4], f32> -> !nn.tensor<[B, T, 4], f32>
// EARLIEST: nn.ctc_loss %[[H]], %{{.+}} : !nn.tensor<[N_T, 4], f32>, !nn.tensor<[B, U], i32>
// EARLIEST: nn.return %[[U]]
// AUTO: nn.ctc_loss %{{.+}} : !nn.tensor<[N_T, 4], f32>
// TAIL: %[[H:.+]] = nn.lstm forward %{{.+}} : !nn.tensor<[B, T, 3], f32>
// TAIL: nn.ctc_loss %[[H]]
// TAIL: nn.return %[[H]]
// REMARK: remark: loss 'ctc' runs on packed frames N_T = packed(B, T): 0 frame-wise op(s) moved behind the pack; new pack(s) of: none; 1 value(s) shared with earlier losses
nn.graph @shared(%x: !nn.tensor<[B, T, 3], f32>, %y: !nn.tensor<[B, T], i32>, %labels: !nn.tensor<[B, U], i32>,
                 %wi: !nn.tensor<[16, 3], f32>, %wh: !nn.tensor<[16, 4], f32>, %b: !nn.tensor<[16], f32>)
    -> !nn.tensor<[B, T, 4], f32>
    dims [B: batch, T: seq(B), U: seq(B)] {
  %h = nn.lstm forward %x, %wi, %wh, %b : !nn.tensor<[B, T, 3], f32>, !nn.tensor<[16, 3], f32>, !nn.tensor<[16, 4], f32>, !nn.tensor<[16], f32>
  %ce = nn.cross_entropy %h, %y from logits : !nn.tensor<[B, T, 4], f32>, !nn.tensor<[B, T], i32>
  nn.mark_loss %ce as "ce" normalize per_frame : !nn.tensor<[B, T], f32>
  %ctc = nn.ctc_loss %h, %labels from logits blank 0 : !nn.tensor<[B, T, 4], f32>, !nn.tensor<[B, U], i32>
  nn.mark_loss %ctc as "ctc" normalize per_sequence : !nn.tensor<[B], f32>
  nn.return %h : !nn.tensor<[B, T, 4], f32>
}

// -----

// A strided op changes the sequence dim (T -> T2 = ceildiv(T, 2)); each
// value packs over its own, so pack=earliest moves the pack through a
// stride-2 conv1d and the lstm before it to the input (the conv's packed
// form maps packed(B, T) to packed(B, T2)). pack=auto weighs the conv like
// any op with a packed form: its padded-frame work, 3 (2 * 3 * 2 + 1) = 39,
// against a pack of the lstm's 2 features instead of its own 3:
// 0.65 * 39 + 2 * 0.65 * 2 = 27.95 packed against 39 + 2 * 0.65 * 3 = 42.9
// padded. The lstm before it moves too, so auto packs at the input.

// CHECK-LABEL: nn.graph @strided
// EARLIEST: %[[PX:.+]] = nn.pack %{{.+}} : !nn.tensor<[B, T, 2], f32> -> !nn.tensor<[N_T, 2], f32>
// EARLIEST: %[[H:.+]] = nn.lstm forward %[[PX]], {{.+}} : !nn.tensor<[N_T, 2], f32>
// EARLIEST: nn.conv1d %[[H]], %{{.+}} stride 2 : (!nn.tensor<[N_T, 2], f32>, !nn.tensor<[3, 3, 2], f32>) -> !nn.tensor<[N_T2, 3], f32>
// AUTO: %[[PX:.+]] = nn.pack %{{.+}} : !nn.tensor<[B, T, 2], f32> -> !nn.tensor<[N_T, 2], f32>
// AUTO: %[[H:.+]] = nn.lstm forward %[[PX]], {{.+}} : !nn.tensor<[N_T, 2], f32>
// AUTO: nn.conv1d %[[H]], %{{.+}} stride 2 : (!nn.tensor<[N_T, 2], f32>, !nn.tensor<[3, 3, 2], f32>) -> !nn.tensor<[N_T2, 3], f32>
// TAIL: nn.lstm forward %{{.+}} : !nn.tensor<[B, T, 2], f32>
// TAIL: %[[C:.+]] = nn.conv1d {{.+}} -> !nn.tensor<[B, T2, 3], f32>
// TAIL: nn.pack %[[C]] : !nn.tensor<[B, T2, 3], f32> -> !nn.tensor<[N_T2, 3], f32>
// REMARK: remark: runs on packed frames (pack=auto): an estimated 27.95 element operations per position packed against 42.9 padded at fill 0.65
// REMARK: remark: runs on packed frames (pack=auto): an estimated 3.9 element operations per position packed against 4.6 padded at fill 0.65
// REMARK: remark: loss 'ce' runs on packed frames N_T2 = packed(B, T2): 1 frame-wise and 2 sequence-mixing op(s) moved behind the pack; new pack(s) of: argument 0, argument 1;
nn.graph @strided(%x: !nn.tensor<[B, T, 2], f32>, %y: !nn.tensor<[B, T2], i32>,
                  %wi: !nn.tensor<[8, 2], f32>, %wh: !nn.tensor<[8, 2], f32>, %b: !nn.tensor<[8], f32>,
                  %k: !nn.tensor<[3, 3, 2], f32>)
    dims [B: batch, T: seq(B), T2: seq(B) = ceildiv(T, 2)] {
  %h = nn.lstm forward %x, %wi, %wh, %b : !nn.tensor<[B, T, 2], f32>, !nn.tensor<[8, 2], f32>, !nn.tensor<[8, 2], f32>, !nn.tensor<[8], f32>
  %c = nn.conv1d %h, %k stride 2 : (!nn.tensor<[B, T, 2], f32>, !nn.tensor<[3, 3, 2], f32>) -> !nn.tensor<[B, T2, 3], f32>
  %ce = nn.cross_entropy %c, %y from logits : !nn.tensor<[B, T2, 3], f32>, !nn.tensor<[B, T2], i32>
  nn.mark_loss %ce as "ce" normalize per_frame : !nn.tensor<[B, T2], f32>
  nn.return
}

// -----

// A x6 front end, a stride-2 conv1d then a stride-3 pool (T6 derived from
// T2), before a CTC loss: pack=earliest packs the input and runs both on
// packed rows (packed(B, T) -> packed(B, T2) -> packed(B, T6)). At the
// default fill 0.65 the loss's own estimate keeps its frames padded (13
// against 12); at fill 0.4 the loss packs, then the pool (padded-frame
// work 3 * 4 + 4 = 16: 0.4 * 16 + 2 * 0.4 * 4 = 9.6 packed against
// 16 + 2 * 0.4 * 4 = 19.2 padded) and the conv (52: 0.4 * 52 + 2 * 0.4 * 2
// = 22.4 against 55.2), so the pack reaches the input.

// CHECK-LABEL: nn.graph @x6
// EARLIEST: %[[PX:.+]] = nn.pack %{{.+}} : !nn.tensor<[B, T, 2], f32> -> !nn.tensor<[N_T, 2], f32>
// EARLIEST: %[[C:.+]] = nn.conv1d %[[PX]], {{.+}} -> !nn.tensor<[N_T2, 4], f32>
// EARLIEST: %[[P:.+]] = nn.pool avg %[[C]] window 3 stride 3 : (!nn.tensor<[N_T2, 4], f32>) -> !nn.tensor<[N_T6, 4], f32>
// EARLIEST: nn.ctc_loss %[[P]]
// AUTO: nn.conv1d {{.+}} -> !nn.tensor<[B, T2, 4], f32>
// AUTO-NEXT: nn.pool avg {{.+}} -> !nn.tensor<[B, T6, 4], f32>
// AUTO-NEXT: nn.ctc_loss {{.+}} : !nn.tensor<[B, T6, 4], f32>
// REMARK: remark: stays padded (pack=auto): an estimated 13 element operations per position packed against 12 padded at fill 0.65
// REMARK: remark: loss 'ctc' left as it is: its frames stay padded
// RUN: nn-opt %s --split-input-file --nn-pack-before-loss='expected-fill=0.4 emit-remarks=true' 2>&1 >/dev/null | FileCheck %s --check-prefix=FILL40
// FILL40: remark: runs on packed frames (pack=auto): an estimated 8 element operations per position packed against 12 padded at fill 0.4
// FILL40: remark: runs on packed frames (pack=auto): an estimated 9.6 element operations per position packed against 19.2 padded at fill 0.4
// FILL40: remark: runs on packed frames (pack=auto): an estimated 22.4 element operations per position packed against 55.2 padded at fill 0.4
// FILL40: remark: loss 'ctc' runs on packed frames N_T6 = packed(B, T6): 0 frame-wise and 2 sequence-mixing op(s) moved behind the pack; new pack(s) of: argument 0;
nn.graph @x6(%x: !nn.tensor<[B, T, 2], f32>, %labels: !nn.tensor<[B, U], i32>,
             %k: !nn.tensor<[4, 3, 2], f32>)
    dims [B: batch, T: seq(B), U: seq(B), T2: seq(B) = ceildiv(T, 2),
          T6: seq(B) = ceildiv(T2, 3)] {
  %c = nn.conv1d %x, %k stride 2 : (!nn.tensor<[B, T, 2], f32>, !nn.tensor<[4, 3, 2], f32>) -> !nn.tensor<[B, T2, 4], f32>
  %p = nn.pool avg %c window 3 stride 3 : (!nn.tensor<[B, T2, 4], f32>) -> !nn.tensor<[B, T6, 4], f32>
  %ctc = nn.ctc_loss %p, %labels from logits blank 0 : !nn.tensor<[B, T6, 4], f32>, !nn.tensor<[B, U], i32>
  nn.mark_loss %ctc as "ctc" normalize per_sequence : !nn.tensor<[B], f32>
  nn.return
}

// -----

// A conv1d and a pool of stride 1 have packed forms: earliest packs the
// input and runs both on packed frames; auto weighs each (a 3-tap conv of
// 2 -> 4 channels does 4 (2 * 3 * 2 + 1) = 52 element operations per
// padded frame, a 2-frame pool of 4 channels 4 * 3 = 12).

// CHECK-LABEL: nn.graph @conv_pool
// EARLIEST: %[[PX:.+]] = nn.pack %{{.+}} : !nn.tensor<[B, T, 2], f32> -> !nn.tensor<[N_T, 2], f32>
// EARLIEST: %[[C:.+]] = nn.conv1d %[[PX]], %{{.+}} stride 1 : (!nn.tensor<[N_T, 2], f32>, !nn.tensor<[4, 3, 2], f32>) -> !nn.tensor<[N_T, 4], f32>
// EARLIEST: nn.pool avg %[[C]] window 2 stride 1 : (!nn.tensor<[N_T, 4], f32>) -> !nn.tensor<[N_T, 4], f32>
// AUTO: nn.conv1d %{{.+}} : (!nn.tensor<[N_T, 2], f32>
// AUTO: nn.pool avg %{{.+}} : (!nn.tensor<[N_T, 4], f32>
// TAIL: %[[P:.+]] = nn.pool avg %{{.+}} : (!nn.tensor<[B, T, 4], f32>
// TAIL: nn.pack %[[P]]
// REMARK: remark: runs on packed frames (pack=auto): an estimated 13 element operations per position packed against 17.2 padded at fill 0.65
// REMARK: remark: runs on packed frames (pack=auto): an estimated 36.4 element operations per position packed against 57.2 padded at fill 0.65
nn.graph @conv_pool(%x: !nn.tensor<[B, T, 2], f32>, %y: !nn.tensor<[B, T], i32>, %k: !nn.tensor<[4, 3, 2], f32>)
    dims [B: batch, T: seq(B)] {
  %c = nn.conv1d %x, %k stride 1 : (!nn.tensor<[B, T, 2], f32>, !nn.tensor<[4, 3, 2], f32>) -> !nn.tensor<[B, T, 4], f32>
  %p = nn.pool avg %c window 2 stride 1 : (!nn.tensor<[B, T, 4], f32>) -> !nn.tensor<[B, T, 4], f32>
  %ce = nn.cross_entropy %p, %y from logits : !nn.tensor<[B, T, 4], f32>, !nn.tensor<[B, T], i32>
  nn.mark_loss %ce as "ce" normalize per_frame : !nn.tensor<[B, T], f32>
  nn.return
}

// -----

// A transducer: the joint's grid rows are packed already (J), and the
// join's encoder and prediction operands pack each over its own dim, the
// frame-wise encoder projection and the prediction network (embedding,
// LSTM) moving behind the packs (not at loss-tail). The graph's result,
// the padded encoder output (as a decoder would read it), is an unpack
// of its packed twin.

// CHECK-LABEL: nn.graph @transducer
// EARLIEST: %[[PX:.+]] = nn.pack %{{.+}} : !nn.tensor<[B, T, 3], f32> -> !nn.tensor<[N_T, 3], f32>
// EARLIEST: %[[S:.+]] = nn.prepend_start
// EARLIEST: %[[PS:.+]] = nn.pack %[[S]] : !nn.tensor<[B, U1], i32> -> !nn.tensor<[N_U1], i32>
// EARLIEST: %[[E:.+]] = nn.embedding %[[PS]], {{.+}} : !nn.tensor<[N_U1], i32>
// EARLIEST: %[[P:.+]] = nn.lstm forward %[[E]], {{.+}} : !nn.tensor<[N_U1, 3], f32>
// EARLIEST: %[[ENC:.+]] = nn.linear %[[PX]], {{.+}} : !nn.tensor<[N_T, 3], f32>
// AUTO: nn.transducer_join %{{.+}}, %{{.+}} : !nn.tensor<[N_T, 3], f32>, !nn.tensor<[N_U1, 3], f32> -> !nn.tensor<[J, 3], f32>
// TAIL: nn.transducer_join %{{.+}}, %{{.+}} : !nn.tensor<[B, T, 3], f32>, !nn.tensor<[B, U1, 3], f32> -> !nn.tensor<[J, 3], f32>
// EARLIEST: %[[OUT:.+]] = nn.unpack %[[ENC]] : !nn.tensor<[N_T, 3], f32> -> !nn.tensor<[B, T, 3], f32>
// EARLIEST: nn.transducer_join %[[ENC]], %[[P]] : !nn.tensor<[N_T, 3], f32>, !nn.tensor<[N_U1, 3], f32> -> !nn.tensor<[J, 3], f32>
// EARLIEST: nn.return %[[OUT]]
// The join's estimate: its own padded-frame work is zero, the projection
// that moves with it does 3 + 3 + 2 * 3 * 3 = 24 element operations per
// position, and the frontier packs the input's and the LSTM's 3 values
// each: 0.65 * 24 + 2 * 0.65 * 6 = 23.4 < 24. Then the LSTM is weighed.
// REMARK: remark: runs on packed frames (pack=auto): an estimated 23.4 element operations per position packed against 24 padded at fill 0.65
// REMARK: remark: encoder and prediction run on packed frames: 2 frame-wise and 1 sequence-mixing op(s) moved behind the pack; new pack(s) of: argument 0, nn.prepend_start
nn.graph @transducer(%x: !nn.tensor<[B, T, 3], f32>, %y: !nn.tensor<[B, U], i32>,
                     %emb: !nn.tensor<[4, 3], f32>, %wi: !nn.tensor<[12, 3], f32>,
                     %wh: !nn.tensor<[12, 3], f32>, %bl: !nn.tensor<[12], f32>,
                     %we: !nn.tensor<[3, 3], f32>, %wo: !nn.tensor<[4, 3], f32>)
    -> !nn.tensor<[B, T, 3], f32>
    dims [B: batch, T: seq(B), U: seq(B), U1: seq(B) = U + 1, J: packed(B, T, U1)] {
  %s = nn.prepend_start %y start 0 : !nn.tensor<[B, U], i32> -> !nn.tensor<[B, U1], i32>
  %e = nn.embedding %s, %emb : !nn.tensor<[B, U1], i32>, !nn.tensor<[4, 3], f32>
  %p = nn.lstm forward %e, %wi, %wh, %bl : !nn.tensor<[B, U1, 3], f32>, !nn.tensor<[12, 3], f32>, !nn.tensor<[12, 3], f32>, !nn.tensor<[12], f32>
  %enc = nn.linear %x, %we : !nn.tensor<[B, T, 3], f32>, !nn.tensor<[3, 3], f32>
  %j = nn.transducer_join %enc, %p : !nn.tensor<[B, T, 3], f32>, !nn.tensor<[B, U1, 3], f32> -> !nn.tensor<[J, 3], f32>
  %a = nn.tanh %j : !nn.tensor<[J, 3], f32>
  %z = nn.linear %a, %wo : !nn.tensor<[J, 3], f32>, !nn.tensor<[4, 3], f32>
  %l = nn.transducer_loss %z, %y from logits topology rnnt blank 0 : !nn.tensor<[J, 4], f32>, !nn.tensor<[B, U], i32>
  nn.mark_loss %l as "rnnt" normalize per_sequence : !nn.tensor<[B], f32>
  nn.return %enc : !nn.tensor<[B, T, 3], f32>
}
