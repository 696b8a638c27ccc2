// The pass reports what it did per loss when asked to.
// RUN: nn-opt %s --nn-pack-before-loss='pack=loss-tail emit-remarks=true' --verify-diagnostics | FileCheck %s
// Without the option it says nothing.
// RUN: nn-opt %s --nn-pack-before-loss 2>&1 >/dev/null | count 0

// CHECK-LABEL: nn.graph @am
nn.graph @am(%x: !nn.tensor<[B, T, 4], f32>, %y: !nn.tensor<[B, T], i32>, %labels: !nn.tensor<[B, U], i32>,
             %w: !nn.tensor<[5, 4], f32>, %wi: !nn.tensor<[16, 4], f32>, %wh: !nn.tensor<[16, 4], f32>,
             %b: !nn.tensor<[16], f32>) -> !nn.tensor<[B, T, 5], f32>
    dims [B: batch, T: seq(B), U: seq(B)] {
  %h = nn.lstm forward %x, %wi, %wh, %b : !nn.tensor<[B, T, 4], f32>, !nn.tensor<[16, 4], f32>, !nn.tensor<[16, 4], f32>, !nn.tensor<[16], f32>
  %l = nn.linear %h, %w : !nn.tensor<[B, T, 4], f32>, !nn.tensor<[5, 4], f32>
  %lp = nn.log_softmax %l : !nn.tensor<[B, T, 5], f32>
  %ce = nn.cross_entropy %lp, %y from log_probs : !nn.tensor<[B, T, 5], f32>, !nn.tensor<[B, T], i32>
  // expected-remark @+1 {{loss 'ce' runs on packed frames N_T = packed(B, T): 3 frame-wise op(s) moved behind the pack; new pack(s) of: nn.lstm, argument 1; 0 value(s) shared with earlier losses}}
  nn.mark_loss %ce as "ce" normalize per_frame : !nn.tensor<[B, T], f32>
  %ce2 = nn.cross_entropy %l, %y from logits : !nn.tensor<[B, T, 5], f32>, !nn.tensor<[B, T], i32>
  // expected-remark @+1 {{loss 'ce_logits' runs on packed frames N_T = packed(B, T): 1 frame-wise op(s) moved behind the pack; new pack(s) of: none; 2 value(s) shared with earlier losses}}
  nn.mark_loss %ce2 as "ce_logits" normalize per_frame : !nn.tensor<[B, T], f32>
  // The CTC loss reads the padded logits: they are unpacked for it.
  // expected-remark @+1 {{uses a value of a packed loss tail in padded form: unpacked from its packed twin instead of computing it twice}}
  %ctc = nn.ctc_loss %l, %labels from logits blank 0 : !nn.tensor<[B, T, 5], f32>, !nn.tensor<[B, U], i32>
  // expected-remark @+1 {{loss 'ctc' left as it is: a per-sequence loss mixes time}}
  nn.mark_loss %ctc as "ctc" normalize per_sequence : !nn.tensor<[B], f32>
  %l2 = nn.param_norm %w : !nn.tensor<[5, 4], f32>
  // expected-remark @+1 {{loss 'l2' left as it is: its loss has no positions}}
  nn.mark_loss %l2 as "l2" normalize sum scale 0.01 : !nn.tensor<[], f32>
  // expected-remark @+1 {{uses a value of a packed loss tail in padded form}}
  nn.return %l : !nn.tensor<[B, T, 5], f32>
}
// CHECK: %[[L:.+]] = nn.linear %{{.+}} : !nn.tensor<[N_T, {{[0-9]+}}], f32>
// CHECK-NEXT: %[[U:.+]] = nn.unpack %[[L]] : !nn.tensor<[N_T, 5], f32> -> !nn.tensor<[B, T, 5], f32>
// CHECK: nn.ctc_loss %[[U]]
// CHECK: nn.return %[[U]]
