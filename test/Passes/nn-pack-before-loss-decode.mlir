// A decoding op anchors packing like a loss: a decode-only graph (what
// nn-decode compiles) has no loss, and its model runs on real frames when
// the op that makes the search's input moves behind the pack. CTC
// searches read the packed scores; packing an input only to unpack it is
// never done.
// RUN: nn-opt %s --nn-pack-before-loss='emit-remarks=true' --verify-diagnostics | FileCheck %s

// CHECK-LABEL: nn.graph @greedy
// CHECK-SAME: N_T: packed(B, T)
// CHECK-NEXT: %[[P:.+]] = nn.pack %x : !nn.tensor<[B, T, 4], f32> -> !nn.tensor<[N_T, 4], f32>
// CHECK-NEXT: %[[H:.+]] = nn.relu %[[P]] : !nn.tensor<[N_T, 4], f32>
// CHECK-NEXT: %[[L:.+]] = nn.linear %[[H]], %w : !nn.tensor<[N_T, 4], f32>, !nn.tensor<[5, 4], f32>
// CHECK-NEXT: nn.ctc_greedy_decode %[[L]] from logits blank 0 : !nn.tensor<[N_T, 5], f32>
// CHECK-NOT: nn.unpack
nn.graph @greedy(%x: !nn.tensor<[B, T, 4], f32>, %w: !nn.tensor<[5, 4], f32>)
    -> (!nn.tensor<[B, Y], i32>, !nn.tensor<[B], f32>)
    dims [B: batch, T: seq(B), Y: seq(B) computed] {
  %h = nn.relu %x : !nn.tensor<[B, T, 4], f32>
  %l = nn.linear %h, %w : !nn.tensor<[B, T, 4], f32>, !nn.tensor<[5, 4], f32>
  // expected-remark @+1 {{reads packed scores: 2 frame-wise op(s) moved behind the pack; new pack(s) of: argument 0; 0 value(s) shared with earlier losses}}
  %y, %s = nn.ctc_greedy_decode %l from logits blank 0 : !nn.tensor<[B, T, 5], f32> -> !nn.tensor<[B, Y], i32>, !nn.tensor<[B], f32>
  nn.return %y, %s : !nn.tensor<[B, Y], i32>, !nn.tensor<[B], f32>
}

// The beam search too; the logits a graph result also returns padded are
// unpacked for it.
// CHECK-LABEL: nn.graph @beam_and_logits
// CHECK: %[[L:.+]] = nn.linear {{.+}} : !nn.tensor<[N_T, 4], f32>, !nn.tensor<[5, 4], f32>
// CHECK-NEXT: %[[U:.+]] = nn.unpack %[[L]] : !nn.tensor<[N_T, 5], f32> -> !nn.tensor<[B, T, 5], f32>
// CHECK-NEXT: nn.ctc_beam_search %[[L]] from logits blank 0 beam 4 merge sum : !nn.tensor<[N_T, 5], f32>
// CHECK: nn.return %{{.+}}, %[[U]]
nn.graph @beam_and_logits(%x: !nn.tensor<[B, T, 4], f32>, %w: !nn.tensor<[5, 4], f32>)
    -> (!nn.tensor<[B, Y], i32>, !nn.tensor<[B, T, 5], f32>)
    dims [B: batch, T: seq(B), Y: seq(B) computed] {
  %l = nn.linear %x, %w : !nn.tensor<[B, T, 4], f32>, !nn.tensor<[5, 4], f32>
  // expected-remark @+1 {{reads packed scores: 1 frame-wise op(s) moved behind the pack}}
  %h, %s = nn.ctc_beam_search %l from logits blank 0 beam 4 merge sum
      : !nn.tensor<[B, T, 5], f32> -> !nn.tensor<[B, Y], i32>, !nn.tensor<[B], f32>
  // expected-remark @+1 {{uses a value of a packed loss tail in padded form}}
  nn.return %h, %l : !nn.tensor<[B, Y], i32>, !nn.tensor<[B, T, 5], f32>
}

// Scores that are a graph argument stay as they are: a pack alone would
// gain nothing.
// CHECK-LABEL: nn.graph @scores_given
// CHECK-NOT: nn.pack
// CHECK: nn.ctc_greedy_decode %z from logits blank 0 : !nn.tensor<[B, T, 5], f32>
nn.graph @scores_given(%z: !nn.tensor<[B, T, 5], f32>)
    -> (!nn.tensor<[B, Y], i32>, !nn.tensor<[B], f32>)
    dims [B: batch, T: seq(B), Y: seq(B) computed] {
  // expected-remark @+1 {{its input left as it is: its producer stays padded}}
  %y, %s = nn.ctc_greedy_decode %z from logits blank 0 : !nn.tensor<[B, T, 5], f32> -> !nn.tensor<[B, Y], i32>, !nn.tensor<[B], f32>
  nn.return %y, %s : !nn.tensor<[B, Y], i32>, !nn.tensor<[B], f32>
}

// After a CTC loss that packed the logits, the search reads the same
// packed twin: nothing more is packed or unpacked.
// CHECK-LABEL: nn.graph @after_a_loss
// CHECK: %[[L:.+]] = nn.linear {{.+}} : !nn.tensor<[N_T, 4], f32>, !nn.tensor<[5, 4], f32>
// CHECK-NEXT: nn.ctc_loss %[[L]]
// CHECK-NOT: nn.unpack
// CHECK: nn.ctc_greedy_decode %[[L]]
nn.graph @after_a_loss(%x: !nn.tensor<[B, T, 4], f32>, %w: !nn.tensor<[5, 4], f32>, %labels: !nn.tensor<[B, U], i32>)
    -> (!nn.tensor<[B, Y], i32>, !nn.tensor<[B], f32>)
    dims [B: batch, T: seq(B), U: seq(B), Y: seq(B) computed] {
  %l = nn.linear %x, %w : !nn.tensor<[B, T, 4], f32>, !nn.tensor<[5, 4], f32>
  // expected-remark @+1 {{runs on packed frames (pack=auto)}}
  %ctc = nn.ctc_loss %l, %labels from logits blank 0 : !nn.tensor<[B, T, 5], f32>, !nn.tensor<[B, U], i32>
  // expected-remark @+1 {{loss 'ctc' runs on packed frames N_T = packed(B, T): 1 frame-wise op(s) moved behind the pack; new pack(s) of: argument 0; 0 value(s) shared with earlier losses}}
  nn.mark_loss %ctc as "ctc" normalize per_sequence : !nn.tensor<[B], f32>
  // expected-remark @+1 {{reads packed scores: 0 frame-wise op(s) moved behind the pack; new pack(s) of: none; 1 value(s) shared with earlier losses}}
  %y, %s = nn.ctc_greedy_decode %l from logits blank 0 : !nn.tensor<[B, T, 5], f32> -> !nn.tensor<[B, Y], i32>, !nn.tensor<[B], f32>
  nn.return %y, %s : !nn.tensor<[B, Y], i32>, !nn.tensor<[B], f32>
}

// Scores straight from an op with a packed form: the cost model decides
// once, and says so once.
// CHECK-LABEL: nn.graph @scores_from_a_conv
// CHECK: nn.conv1d {{.+}} : (!nn.tensor<[N_T, 4], f32>
nn.graph @scores_from_a_conv(%x: !nn.tensor<[B, T, 4], f32>, %w: !nn.tensor<[5, 3, 4], f32>)
    -> (!nn.tensor<[B, Y], i32>, !nn.tensor<[B], f32>)
    dims [B: batch, T: seq(B), Y: seq(B) computed] {
  // expected-remark @+1 {{runs on packed frames (pack=auto)}}
  %l = nn.conv1d %x, %w stride 1 : (!nn.tensor<[B, T, 4], f32>, !nn.tensor<[5, 3, 4], f32>) -> !nn.tensor<[B, T, 5], f32>
  // expected-remark @+1 {{reads packed scores: 0 frame-wise and 1 sequence-mixing op(s) moved behind the pack; new pack(s) of: argument 0}}
  %y, %s = nn.ctc_greedy_decode %l from logits blank 0 : !nn.tensor<[B, T, 5], f32> -> !nn.tensor<[B, Y], i32>, !nn.tensor<[B], f32>
  nn.return %y, %s : !nn.tensor<[B, Y], i32>, !nn.tensor<[B], f32>
}

// pack=loss-tail packs loss tails alone.
// RUN: nn-opt %s --nn-pack-before-loss='pack=loss-tail emit-remarks=true' 2>&1 | FileCheck %s --check-prefix=TAIL
// TAIL: remark: its input left as it is: pack=loss-tail packs loss tails only
// TAIL-LABEL: nn.graph @greedy
// TAIL-NOT: nn.pack
// TAIL: nn.ctc_greedy_decode {{.+}} : !nn.tensor<[B, T, 5], f32>
