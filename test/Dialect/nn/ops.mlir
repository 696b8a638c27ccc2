// Round trip of every nn op, in custom and in generic form.
// RUN: nn-opt %s | nn-opt | FileCheck %s
// RUN: nn-opt %s --mlir-print-op-generic | nn-opt | FileCheck %s

// CHECK: nn.parameter @w : !nn.tensor<[16, 8], f32>
nn.parameter @prior : !nn.tensor<[5], f32>
nn.parameter @w : !nn.tensor<[16, 8], f32>

// CHECK-LABEL: nn.graph @frame_wise
// CHECK-SAME: (%[[X:.+]]: !nn.tensor<[B, T, 8], f32>, %[[IDS:.+]]: !nn.tensor<[B, T], i32>, %[[TABLE:.+]]: !nn.tensor<[100, 8], f32>, %[[G:.+]]: !nn.tensor<[16], f32>)
// CHECK-SAME: -> !nn.tensor<[B, T, 32], f32>
// CHECK-SAME: dims [B: batch, T: seq(B)]
nn.graph @frame_wise(%x: !nn.tensor<[B, T, 8], f32>, %ids: !nn.tensor<[B, T], i32>,
                     %table: !nn.tensor<[100, 8], f32>, %g: !nn.tensor<[16], f32>)
    -> !nn.tensor<[B, T, 32], f32> dims [B: batch, T: seq(B)] {
  // CHECK: %[[W:.+]] = nn.param_ref @w : !nn.tensor<[16, 8], f32>
  %w = nn.param_ref @w : !nn.tensor<[16, 8], f32>
  // CHECK: %[[L:.+]] = nn.linear %[[X]], %[[W]], %[[G]] : !nn.tensor<[B, T, 8], f32>, !nn.tensor<[16, 8], f32>, !nn.tensor<[16], f32>
  %l = nn.linear %x, %w, %g : !nn.tensor<[B, T, 8], f32>, !nn.tensor<[16, 8], f32>, !nn.tensor<[16], f32>
  // CHECK: %[[LN:.+]] = nn.linear %[[X]], %[[W]] : !nn.tensor<[B, T, 8], f32>, !nn.tensor<[16, 8], f32>
  %lnb = nn.linear %x, %w : !nn.tensor<[B, T, 8], f32>, !nn.tensor<[16, 8], f32>
  // CHECK: %[[A:.+]] = nn.add %[[L]], %[[LN]] : !nn.tensor<[B, T, 16], f32>
  %a = nn.add %l, %lnb : !nn.tensor<[B, T, 16], f32>
  // CHECK: %[[M:.+]] = nn.mul %[[A]], %[[L]] : !nn.tensor<[B, T, 16], f32>
  %m = nn.mul %a, %l : !nn.tensor<[B, T, 16], f32>
  // CHECK: %[[R:.+]] = nn.relu %[[M]] : !nn.tensor<[B, T, 16], f32>
  %r = nn.relu %m : !nn.tensor<[B, T, 16], f32>
  // CHECK: %[[T:.+]] = nn.tanh %[[R]] : !nn.tensor<[B, T, 16], f32>
  %t = nn.tanh %r : !nn.tensor<[B, T, 16], f32>
  // CHECK: %[[S:.+]] = nn.sigmoid %[[T]] : !nn.tensor<[B, T, 16], f32>
  %s = nn.sigmoid %t : !nn.tensor<[B, T, 16], f32>
  // CHECK: %[[GE:.+]] = nn.gelu %[[S]] : !nn.tensor<[B, T, 16], f32>
  %ge = nn.gelu %s : !nn.tensor<[B, T, 16], f32>
  // CHECK: nn.silu %[[GE]] : !nn.tensor<[B, T, 16], f32>
  %sw = nn.silu %ge : !nn.tensor<[B, T, 16], f32>
  // CHECK: nn.glu %{{.+}} : !nn.tensor<[B, T, 16], f32>
  %gl = nn.glu %sw : !nn.tensor<[B, T, 16], f32>
  // CHECK: nn.scale %{{.+}} by 5.000000e-01 : !nn.tensor<[B, T, 16], f32>
  %sc = nn.scale %sw by 0.5 : !nn.tensor<[B, T, 16], f32>
  // CHECK: %[[D:.+]] = nn.dropout %[[GE]] rate 2.500000e-01 : !nn.tensor<[B, T, 16], f32>
  %d = nn.dropout %ge rate 0.25 : !nn.tensor<[B, T, 16], f32>
  // CHECK: %[[N:.+]] = nn.layer_norm %[[D]], %[[G]], %[[G]] {epsilon = 1.000000e-03 : f64} : !nn.tensor<[B, T, 16], f32>, !nn.tensor<[16], f32>, !nn.tensor<[16], f32>
  %n = nn.layer_norm %d, %g, %g {epsilon = 1.0e-3 : f64} : !nn.tensor<[B, T, 16], f32>, !nn.tensor<[16], f32>, !nn.tensor<[16], f32>
  // CHECK: %[[SM:.+]] = nn.softmax %[[N]] : !nn.tensor<[B, T, 16], f32>
  %sm = nn.softmax %n : !nn.tensor<[B, T, 16], f32>
  // CHECK: %[[LSM:.+]] = nn.log_softmax %[[SM]] : !nn.tensor<[B, T, 16], f32>
  %lsm = nn.log_softmax %sm : !nn.tensor<[B, T, 16], f32>
  // CHECK: %[[E:.+]] = nn.embedding %[[IDS]], %[[TABLE]] : !nn.tensor<[B, T], i32>, !nn.tensor<[100, 8], f32>
  %e = nn.embedding %ids, %table : !nn.tensor<[B, T], i32>, !nn.tensor<[100, 8], f32>
  // CHECK: %[[C:.+]] = nn.concat %[[LSM]], %[[E]], %[[X]] : !nn.tensor<[B, T, 16], f32>, !nn.tensor<[B, T, 8], f32>, !nn.tensor<[B, T, 8], f32>
  %c = nn.concat %lsm, %e, %x : !nn.tensor<[B, T, 16], f32>, !nn.tensor<[B, T, 8], f32>, !nn.tensor<[B, T, 8], f32>
  // CHECK: nn.return %[[C]] : !nn.tensor<[B, T, 32], f32>
  nn.return %c : !nn.tensor<[B, T, 32], f32>
}

// CHECK-LABEL: nn.graph @sequence_mixing
// CHECK-SAME: dims [B: batch, T: seq(B), T2: seq(B) = ceildiv(T, 2), T4: seq(B) = ceildiv(T2, 2)]
nn.graph @sequence_mixing(%x: !nn.tensor<[B, T, 8], f32>,
                          %wi: !nn.tensor<[16, 8], f32>, %wh: !nn.tensor<[16, 4], f32>, %b: !nn.tensor<[16], f32>,
                          %bwi: !nn.tensor<[2, 16, 8], f32>, %bwh: !nn.tensor<[2, 16, 4], f32>, %bb: !nn.tensor<[2, 16], f32>,
                          %cw: !nn.tensor<[6, 3, 8], f32>, %cb: !nn.tensor<[6], f32>, %dww: !nn.tensor<[8, 3, 1], f32>)
    -> (!nn.tensor<[B, 8], f32>, !nn.tensor<[B, T4, 6], f32>)
    dims [B: batch, T: seq(B), T2: seq(B) = ceildiv(T, 2), T4: seq(B) = ceildiv(T2, 2)] {
  // CHECK: nn.lstm forward %{{.+}} : !nn.tensor<[B, T, 8], f32>, !nn.tensor<[16, 8], f32>, !nn.tensor<[16, 4], f32>, !nn.tensor<[16], f32>
  %f = nn.lstm forward %x, %wi, %wh, %b : !nn.tensor<[B, T, 8], f32>, !nn.tensor<[16, 8], f32>, !nn.tensor<[16, 4], f32>, !nn.tensor<[16], f32>
  // CHECK: nn.lstm backward %{{.+}} : !nn.tensor<[B, T, 8], f32>
  %k = nn.lstm backward %x, %wi, %wh, %b : !nn.tensor<[B, T, 8], f32>, !nn.tensor<[16, 8], f32>, !nn.tensor<[16, 4], f32>, !nn.tensor<[16], f32>
  // CHECK: %[[BI:.+]] = nn.lstm bidirectional %{{.+}} : !nn.tensor<[B, T, 8], f32>, !nn.tensor<[2, 16, 8], f32>
  %bi = nn.lstm bidirectional %x, %bwi, %bwh, %bb : !nn.tensor<[B, T, 8], f32>, !nn.tensor<[2, 16, 8], f32>, !nn.tensor<[2, 16, 4], f32>, !nn.tensor<[2, 16], f32>
  // CHECK: %[[CONV:.+]] = nn.conv1d %[[BI]], %{{.+}}, %{{.+}} stride 2 : {{.+}} -> !nn.tensor<[B, T2, 6], f32>
  %conv = nn.conv1d %bi, %cw, %cb stride 2 : (!nn.tensor<[B, T, 8], f32>, !nn.tensor<[6, 3, 8], f32>, !nn.tensor<[6], f32>) -> !nn.tensor<[B, T2, 6], f32>
  // CHECK: nn.conv1d %[[BI]], %{{[^,]+}} stride 1 : (!nn.tensor<[B, T, 8], f32>, !nn.tensor<[6, 3, 8], f32>) -> !nn.tensor<[B, T, 6], f32>
  %conv1 = nn.conv1d %bi, %cw stride 1 : (!nn.tensor<[B, T, 8], f32>, !nn.tensor<[6, 3, 8], f32>) -> !nn.tensor<[B, T, 6], f32>
  // CHECK: nn.conv1d %[[BI]], %{{[^,]+}} stride 1 groups 8 : (!nn.tensor<[B, T, 8], f32>, !nn.tensor<[8, 3, 1], f32>) -> !nn.tensor<[B, T, 8], f32>
  %dwc = nn.conv1d %bi, %dww stride 1 groups 8 : (!nn.tensor<[B, T, 8], f32>, !nn.tensor<[8, 3, 1], f32>) -> !nn.tensor<[B, T, 8], f32>
  // CHECK: %[[P:.+]] = nn.pool avg %[[CONV]] window 2 stride 2 : (!nn.tensor<[B, T2, 6], f32>) -> !nn.tensor<[B, T4, 6], f32>
  %p = nn.pool avg %conv window 2 stride 2 : (!nn.tensor<[B, T2, 6], f32>) -> !nn.tensor<[B, T4, 6], f32>
  // CHECK: nn.pool max %{{.+}} window 3 stride 1
  %pm = nn.pool max %conv window 3 stride 1 : (!nn.tensor<[B, T2, 6], f32>) -> !nn.tensor<[B, T2, 6], f32>
  // CHECK: %[[RS:.+]] = nn.reduce sum %[[BI]] over 1 : !nn.tensor<[B, T, 8], f32>
  %rs = nn.reduce sum %bi over 1 : !nn.tensor<[B, T, 8], f32>
  // CHECK: nn.reduce mean
  %rm = nn.reduce mean %bi over 1 : !nn.tensor<[B, T, 8], f32>
  // CHECK: nn.reduce max
  %rx = nn.reduce max %bi over 1 : !nn.tensor<[B, T, 8], f32>
  // CHECK: nn.return %[[RS]], %[[P]] : !nn.tensor<[B, 8], f32>, !nn.tensor<[B, T4, 6], f32>
  nn.return %rs, %p : !nn.tensor<[B, 8], f32>, !nn.tensor<[B, T4, 6], f32>
}

// CHECK-LABEL: nn.graph @attention
nn.graph @attention(%q: !nn.tensor<[B, T, 8], f32>, %v: !nn.tensor<[B, T, 6], f32>,
                    %u: !nn.tensor<[M, 8], f32>, %n: !nn.tensor<[N, 8], f32>, %nv: !nn.tensor<[N, 6], f32>,
                    %w: !nn.tensor<[8, 4], f32>, %seed: !nn.tensor<[], i32>)
    -> (!nn.tensor<[B, T, 6], f32>, !nn.tensor<[M, 6], f32>)
    dims [B: batch, T: seq(B), U: seq(B), N: packed(B, T), M: packed(B, U)] {
  // CHECK: %[[A:.+]] = nn.attention %{{.+}}, %{{.+}}, %{{.+}} heads 2 : !nn.tensor<[B, T, 8], f32>, !nn.tensor<[B, T, 8], f32>, !nn.tensor<[B, T, 6], f32>
  %a = nn.attention %q, %q, %v heads 2 : !nn.tensor<[B, T, 8], f32>, !nn.tensor<[B, T, 8], f32>, !nn.tensor<[B, T, 6], f32>
  // CHECK: nn.attention %{{.+}} heads 1 scale 2.500000e-01 causal left_context 16 : !nn.tensor<[B, T, 8], f32>
  %c = nn.attention %q, %q, %v heads 1 scale 2.500000e-01 causal left_context 16 : !nn.tensor<[B, T, 8], f32>, !nn.tensor<[B, T, 8], f32>, !nn.tensor<[B, T, 6], f32>
  // CHECK: nn.attention %{{.+}} heads 2 right_context 4 chunk_size 8 left_chunks 2 : !nn.tensor<[B, T, 8], f32>
  %h = nn.attention %q, %q, %v heads 2 right_context 4 chunk_size 8 left_chunks 2 : !nn.tensor<[B, T, 8], f32>, !nn.tensor<[B, T, 8], f32>, !nn.tensor<[B, T, 6], f32>
  // CHECK: nn.attention_grad %[[A]], %{{.+}} heads 2 causal : !nn.tensor<[B, T, 6], f32>, !nn.tensor<[B, T, 8], f32>, !nn.tensor<[B, T, 8], f32>, !nn.tensor<[B, T, 6], f32>
  %dq, %dk, %dv = nn.attention_grad %a, %q, %q, %v heads 2 causal : !nn.tensor<[B, T, 6], f32>, !nn.tensor<[B, T, 8], f32>, !nn.tensor<[B, T, 8], f32>, !nn.tensor<[B, T, 6], f32>
  // CHECK: %[[P:.+]] = nn.relative_positions %[[W:.+]] : !nn.tensor<[8, 4], f32> -> !nn.tensor<[9, 8], f32>
  %p = nn.relative_positions %w : !nn.tensor<[8, 4], f32> -> !nn.tensor<[9, 8], f32>
  // CHECK: nn.attention %{{.+}}, %{{.+}}, %{{.+}} relative %{{.+}}, %[[P]] heads 2 left_context 3 : !nn.tensor<[B, T, 8], f32>, !nn.tensor<[B, T, 8], f32>, !nn.tensor<[B, T, 6], f32>, !nn.tensor<[B, T, 8], f32>, !nn.tensor<[9, 8], f32>
  %rel = nn.attention %q, %q, %v relative %q, %p heads 2 left_context 3 : !nn.tensor<[B, T, 8], f32>, !nn.tensor<[B, T, 8], f32>, !nn.tensor<[B, T, 6], f32>, !nn.tensor<[B, T, 8], f32>, !nn.tensor<[9, 8], f32>
  // CHECK: %{{.+}}:2 = nn.attention_grad %{{.+}} relative %{{.+}}, %[[P]] heads 2 : !nn.tensor<[B, T, 6], f32>, !nn.tensor<[B, T, 8], f32>, !nn.tensor<[B, T, 8], f32>, !nn.tensor<[B, T, 6], f32>, !nn.tensor<[B, T, 8], f32>, !nn.tensor<[9, 8], f32>
  %rq, %rk, %rv, %rr, %rp = nn.attention_grad %rel, %q, %q, %v relative %q, %p heads 2 : !nn.tensor<[B, T, 6], f32>, !nn.tensor<[B, T, 8], f32>, !nn.tensor<[B, T, 8], f32>, !nn.tensor<[B, T, 6], f32>, !nn.tensor<[B, T, 8], f32>, !nn.tensor<[9, 8], f32>
  // CHECK: nn.attention %{{.+}} relative %{{.+}}, %[[P]] seed %[[S:.+]] heads 2 dropout 1.000000e-01 dropout_key 3 : !nn.tensor<[B, T, 8], f32>, !nn.tensor<[B, T, 8], f32>, !nn.tensor<[B, T, 6], f32>, !nn.tensor<[B, T, 8], f32>, !nn.tensor<[9, 8], f32>, !nn.tensor<[], i32>
  %dropped = nn.attention %q, %q, %v relative %q, %p seed %seed heads 2 dropout 0.1 dropout_key 3 : !nn.tensor<[B, T, 8], f32>, !nn.tensor<[B, T, 8], f32>, !nn.tensor<[B, T, 6], f32>, !nn.tensor<[B, T, 8], f32>, !nn.tensor<[9, 8], f32>, !nn.tensor<[], i32>
  // CHECK: nn.attention_grad %{{.+}} seed %[[S]] heads 2 dropout 1.000000e-01 dropout_key 3 : !nn.tensor<[B, T, 6], f32>, !nn.tensor<[B, T, 8], f32>, !nn.tensor<[B, T, 8], f32>, !nn.tensor<[B, T, 6], f32>, !nn.tensor<[], i32>
  %ddq, %ddk, %ddv = nn.attention_grad %dropped, %q, %q, %v seed %seed heads 2 dropout 0.1 dropout_key 3 : !nn.tensor<[B, T, 6], f32>, !nn.tensor<[B, T, 8], f32>, !nn.tensor<[B, T, 8], f32>, !nn.tensor<[B, T, 6], f32>, !nn.tensor<[], i32>
  // CHECK: nn.relative_positions_grad %{{.+}}#1, %[[W]] : !nn.tensor<[9, 8], f32>, !nn.tensor<[8, 4], f32>
  %dw = nn.relative_positions_grad %rp, %w : !nn.tensor<[9, 8], f32>, !nn.tensor<[8, 4], f32>
  // CHECK: nn.attention %{{.+}} heads 2 : !nn.tensor<[M, 8], f32>, !nn.tensor<[N, 8], f32>, !nn.tensor<[N, 6], f32>
  %x = nn.attention %u, %n, %nv heads 2 : !nn.tensor<[M, 8], f32>, !nn.tensor<[N, 8], f32>, !nn.tensor<[N, 6], f32>
  // The forward that keeps its log normalizers, and a gradient reading them
  // (nn-save-attention-stats).
  // CHECK: %[[SY:.+]], %[[SS:.+]] = nn.attention_with_stats %{{.+}} heads 2 causal : !nn.tensor<[B, T, 8], f32>, !nn.tensor<[B, T, 8], f32>, !nn.tensor<[B, T, 6], f32> -> !nn.tensor<[B, T, 6], f32>, !nn.tensor<[B, T, 2], f32>
  %sy, %ss = nn.attention_with_stats %q, %q, %v heads 2 causal : !nn.tensor<[B, T, 8], f32>, !nn.tensor<[B, T, 8], f32>, !nn.tensor<[B, T, 6], f32> -> !nn.tensor<[B, T, 6], f32>, !nn.tensor<[B, T, 2], f32>
  // CHECK: nn.attention_grad %{{.+}} saved %[[SY]], %[[SS]] heads 2 causal : !nn.tensor<[B, T, 6], f32>, !nn.tensor<[B, T, 8], f32>, !nn.tensor<[B, T, 8], f32>, !nn.tensor<[B, T, 6], f32>, !nn.tensor<[B, T, 6], f32>, !nn.tensor<[B, T, 2], f32>
  %sq, %sk, %sv = nn.attention_grad %sy, %q, %q, %v saved %sy, %ss heads 2 causal : !nn.tensor<[B, T, 6], f32>, !nn.tensor<[B, T, 8], f32>, !nn.tensor<[B, T, 8], f32>, !nn.tensor<[B, T, 6], f32>, !nn.tensor<[B, T, 6], f32>, !nn.tensor<[B, T, 2], f32>
  // The scale is compared by value: a gradient may state the forward's
  // default, 1 / sqrt(4).
  // CHECK: nn.attention_grad %{{.+}} saved %[[SY]], %[[SS]] heads 2 scale 5.000000e-01 causal :
  %tq, %tk, %tv = nn.attention_grad %sy, %q, %q, %v saved %sy, %ss heads 2 scale 0.5 causal : !nn.tensor<[B, T, 6], f32>, !nn.tensor<[B, T, 8], f32>, !nn.tensor<[B, T, 8], f32>, !nn.tensor<[B, T, 6], f32>, !nn.tensor<[B, T, 6], f32>, !nn.tensor<[B, T, 2], f32>
  // CHECK: nn.attention_with_stats %{{.+}} seed %[[S]] heads 4 dropout 1.000000e-01 : !nn.tensor<[N, 8], f32>, !nn.tensor<[N, 8], f32>, !nn.tensor<[N, 8], f32>, !nn.tensor<[], i32> -> !nn.tensor<[N, 8], f32>, !nn.tensor<[N, 4], f32>
  %py, %ps = nn.attention_with_stats %n, %n, %n seed %seed heads 4 dropout 0.1 : !nn.tensor<[N, 8], f32>, !nn.tensor<[N, 8], f32>, !nn.tensor<[N, 8], f32>, !nn.tensor<[], i32> -> !nn.tensor<[N, 8], f32>, !nn.tensor<[N, 4], f32>
  // CHECK: nn.rotary %{{.+}} heads 2 : !nn.tensor<[B, T, 8], f32>
  %ro = nn.rotary %q heads 2 : !nn.tensor<[B, T, 8], f32>
  // CHECK: nn.rotary %{{.+}} heads 4 base 1.000000e+02 inverse : !nn.tensor<[N, 8], f32>
  %ri = nn.rotary %n heads 4 base 1.000000e+02 inverse : !nn.tensor<[N, 8], f32>
  nn.return %a, %x : !nn.tensor<[B, T, 6], f32>, !nn.tensor<[M, 6], f32>
}

// CHECK-LABEL: nn.graph @losses
nn.graph @losses(%logits: !nn.tensor<[B, T, 5], f32>, %targets: !nn.tensor<[B, T], i64>,
                 %labels: !nn.tensor<[B, U], i32>, %ref: !nn.tensor<[B, T, 5], f32>,
                 %norm: !nn.tensor<[B], f32>, %total: !nn.tensor<[], f32>)
    dims [B: batch, T: seq(B), U: seq(B)] {
  // CHECK: %[[CE:.+]] = nn.cross_entropy %{{.+}}, %{{.+}} from logits : !nn.tensor<[B, T, 5], f32>, !nn.tensor<[B, T], i64>
  %ce = nn.cross_entropy %logits, %targets from logits : !nn.tensor<[B, T, 5], f32>, !nn.tensor<[B, T], i64>
  // CHECK: %[[CES:.+]] = nn.cross_entropy %{{.+}}, %{{.+}} from log_probs label_smoothing 1.000000e-01 :
  %ces = nn.cross_entropy %logits, %targets from log_probs label_smoothing 0.1 : !nn.tensor<[B, T, 5], f32>, !nn.tensor<[B, T], i64>
  // CHECK: %[[MSE:.+]] = nn.mse
  %mse = nn.mse %logits, %ref : !nn.tensor<[B, T, 5], f32>, !nn.tensor<[B, T, 5], f32>
  // CHECK: %[[CTC:.+]] = nn.ctc_loss %{{.+}}, %{{.+}} from logits blank 4 zero_infinity : !nn.tensor<[B, T, 5], f32>, !nn.tensor<[B, U], i32>
  %ctc = nn.ctc_loss %logits, %labels from logits blank 4 zero_infinity : !nn.tensor<[B, T, 5], f32>, !nn.tensor<[B, U], i32>
  // CHECK: nn.ctc_loss %{{.+}}, %{{.+}} from log_probs blank 0 :
  %ctc2 = nn.ctc_loss %logits, %labels from log_probs blank 0 : !nn.tensor<[B, T, 5], f32>, !nn.tensor<[B, U], i32>
  // CHECK: %{{.+}}, %{{.+}} = nn.viterbi_align %{{.+}}, %{{.+}} from log_probs topology ctc blank 0 : !nn.tensor<[B, T, 5], f32>, !nn.tensor<[B, U], i32>
  %path, %best = nn.viterbi_align %logits, %labels from log_probs topology ctc blank 0 : !nn.tensor<[B, T, 5], f32>, !nn.tensor<[B, U], i32>
  // CHECK: nn.viterbi_align %{{.+}}, %{{.+}} from logits topology rna blank 4 :
  %rpath, %rbest = nn.viterbi_align %logits, %labels from logits topology rna blank 4 : !nn.tensor<[B, T, 5], f32>, !nn.tensor<[B, U], i32>
  // CHECK: nn.viterbi_align %{{.+}}, %{{.+}} from logits topology ctc blank 0 prior %{{.+}} : !nn.tensor<[B, T, 5], f32>, !nn.tensor<[B, U], i32>, !nn.tensor<[5], f32>
  %prior = nn.param_ref @prior : !nn.tensor<[5], f32>
  %ppath, %pbest = nn.viterbi_align %logits, %labels from logits topology ctc blank 0 prior %prior : !nn.tensor<[B, T, 5], f32>, !nn.tensor<[B, U], i32>, !nn.tensor<[5], f32>
  // CHECK: nn.mark_loss %[[CE]] as "ce" normalize per_frame : !nn.tensor<[B, T], f32>
  nn.mark_loss %ce as "ce" normalize per_frame : !nn.tensor<[B, T], f32>
  // CHECK: nn.mark_loss %[[CES]] as "ce_smoothed" normalize sum scale 0.000000e+00 as_error {use_normalized_loss = false} : !nn.tensor<[B, T], f32>
  nn.mark_loss %ces as "ce_smoothed" normalize sum scale 0.0 as_error {use_normalized_loss = false} : !nn.tensor<[B, T], f32>
  // CHECK: nn.mark_loss %[[MSE]] as "mse" normalize per_sequence scale 2.000000e+00 : !nn.tensor<[B, T], f32>
  nn.mark_loss %mse as "mse" normalize per_sequence scale 2.0 : !nn.tensor<[B, T], f32>
  // CHECK: nn.mark_loss %[[CTC]], %{{.+}} as "ctc" normalize custom : !nn.tensor<[B], f32>, !nn.tensor<[B], f32>
  nn.mark_loss %ctc, %norm as "ctc" normalize custom : !nn.tensor<[B], f32>, !nn.tensor<[B], f32>
  // CHECK: nn.mark_loss %{{.+}}, %{{.+}} as "ctc2" normalize custom : !nn.tensor<[B], f32>, !nn.tensor<[], f32>
  nn.mark_loss %ctc2, %total as "ctc2" normalize custom : !nn.tensor<[B], f32>, !nn.tensor<[], f32>
  // CHECK: nn.return{{$}}
  nn.return
}

// CHECK-LABEL: nn.graph @packing
// CHECK-SAME: dims [B: batch, T: seq(B), N: packed(B, T)]
nn.graph @packing(%x: !nn.tensor<[B, T, 8], f32>, %y: !nn.tensor<[B, T], i32>)
    -> !nn.tensor<[B, T, 8], f32> dims [B: batch, T: seq(B), N: packed(B, T)] {
  // CHECK: %[[PX:.+]] = nn.pack %{{.+}} : !nn.tensor<[B, T, 8], f32> -> !nn.tensor<[N, 8], f32>
  %px = nn.pack %x : !nn.tensor<[B, T, 8], f32> -> !nn.tensor<[N, 8], f32>
  // CHECK: %[[PY:.+]] = nn.pack %{{.+}} : !nn.tensor<[B, T], i32> -> !nn.tensor<[N], i32>
  %py = nn.pack %y : !nn.tensor<[B, T], i32> -> !nn.tensor<[N], i32>
  // CHECK: %[[CE:.+]] = nn.cross_entropy %[[PX]], %[[PY]] from logits : !nn.tensor<[N, 8], f32>, !nn.tensor<[N], i32>
  %ce = nn.cross_entropy %px, %py from logits : !nn.tensor<[N, 8], f32>, !nn.tensor<[N], i32>
  // CHECK: nn.mark_loss %[[CE]] as "ce" normalize per_frame : !nn.tensor<[N], f32>
  nn.mark_loss %ce as "ce" normalize per_frame : !nn.tensor<[N], f32>
  // CHECK: %[[U:.+]] = nn.unpack %[[PX]] : !nn.tensor<[N, 8], f32> -> !nn.tensor<[B, T, 8], f32>
  %u = nn.unpack %px : !nn.tensor<[N, 8], f32> -> !nn.tensor<[B, T, 8], f32>
  nn.return %u : !nn.tensor<[B, T, 8], f32>
}

// CHECK-LABEL: nn.graph @sequence_values
nn.graph @sequence_values(%spk: !nn.tensor<[B, 16], f32>, %ce: !nn.tensor<[B, T], f32>,
                          %f: !nn.tensor<[B], f32>)
    -> (!nn.tensor<[B, T, 16], f32>, !nn.tensor<[], f64>, !nn.tensor<[], f64>,
        !nn.tensor<[], f64>, !nn.tensor<[], f64>)
    dims [B: batch, T: seq(B)] {
  // CHECK: nn.broadcast_seq %{{.+}} : !nn.tensor<[B, 16], f32> -> !nn.tensor<[B, T, 16], f32>
  %s = nn.broadcast_seq %spk : !nn.tensor<[B, 16], f32> -> !nn.tensor<[B, T, 16], f32>
  // CHECK: %{{.+}}, %{{.+}} = nn.loss_terms %{{.+}} normalize per_frame : !nn.tensor<[B, T], f32>
  %sum, %inv = nn.loss_terms %ce normalize per_frame : !nn.tensor<[B, T], f32>
  // CHECK: nn.loss_terms %{{.+}}, %{{.+}} normalize custom : !nn.tensor<[B, T], f32>, !nn.tensor<[B], f32>
  %sum2, %inv2 = nn.loss_terms %ce, %f normalize custom : !nn.tensor<[B, T], f32>, !nn.tensor<[B], f32>
  nn.return %s, %sum, %inv, %sum2, %inv2 : !nn.tensor<[B, T, 16], f32>, !nn.tensor<[], f64>,
      !nn.tensor<[], f64>, !nn.tensor<[], f64>, !nn.tensor<[], f64>
}

// The gradient ops nn-autodiff builds.
// CHECK-LABEL: nn.graph @gradients
nn.graph @gradients(%l: !nn.tensor<[B, T], f32>, %inv: !nn.tensor<[], f64>,
                    %x: !nn.tensor<[B, T, 4], f32>, %y: !nn.tensor<[B, T], i32>,
                    %w: !nn.tensor<[3, 4], f32>, %dy: !nn.tensor<[B, T, 3], f32>,
                    %dw0: !nn.tensor<[4], f32>)
    dims [B: batch, T: seq(B)] {
  // CHECK: nn.loss_seed %{{.+}}, %{{.+}} scale 5.000000e-01 unnormalized : !nn.tensor<[B, T], f32>
  %g = nn.loss_seed %l, %inv scale 0.5 unnormalized : !nn.tensor<[B, T], f32>
  // CHECK: nn.linear_grad_input %{{.+}}, %{{.+}} : !nn.tensor<[B, T, 3], f32>, !nn.tensor<[3, 4], f32>
  %dx = nn.linear_grad_input %dy, %w : !nn.tensor<[B, T, 3], f32>, !nn.tensor<[3, 4], f32>
  // CHECK: nn.linear_grad_weight %{{.+}}, %{{.+}} : !nn.tensor<[B, T, 3], f32>, !nn.tensor<[B, T, 4], f32>
  %dw = nn.linear_grad_weight %dy, %x : !nn.tensor<[B, T, 3], f32>, !nn.tensor<[B, T, 4], f32>
  // CHECK: nn.sum_positions %{{.+}} : !nn.tensor<[B, T, 3], f32>
  %db = nn.sum_positions %dy : !nn.tensor<[B, T, 3], f32>
  // CHECK: nn.activation_grad gelu %{{.+}}, %{{.+}} : !nn.tensor<[B, T, 4], f32>
  %da = nn.activation_grad gelu %dx, %x : !nn.tensor<[B, T, 4], f32>
  // CHECK: nn.log_softmax_grad %{{.+}}, %{{.+}} : !nn.tensor<[B, T, 4], f32>
  %dl = nn.log_softmax_grad %dx, %x : !nn.tensor<[B, T, 4], f32>
  // CHECK: nn.softmax_grad %{{.+}}, %{{.+}} : !nn.tensor<[B, T, 4], f32>
  %ds = nn.softmax_grad %dx, %x : !nn.tensor<[B, T, 4], f32>
  // CHECK: nn.cross_entropy_grad %{{.+}}, %{{.+}}, %{{.+}} from log_probs label_smoothing 1.000000e-01 : !nn.tensor<[B, T, 4], f32>, !nn.tensor<[B, T], i32>
  %dc = nn.cross_entropy_grad %g, %x, %y from log_probs label_smoothing 0.1 : !nn.tensor<[B, T, 4], f32>, !nn.tensor<[B, T], i32>
  // CHECK: nn.mse_grad %{{.+}}, %{{.+}}, %{{.+}} : !nn.tensor<[B, T, 4], f32>
  %dm = nn.mse_grad %g, %x, %dx : !nn.tensor<[B, T, 4], f32>
  // CHECK: nn.slice_features %{{.+}} offset 1 width 2 : !nn.tensor<[B, T, 4], f32>
  %sl = nn.slice_features %dx offset 1 width 2 : !nn.tensor<[B, T, 4], f32>
  // CHECK: nn.layer_norm_grad_input %{{.+}}, %{{.+}}, %{{.+}} : !nn.tensor<[B, T, 4], f32>, !nn.tensor<[4], f32>
  %ln = nn.layer_norm_grad_input %dx, %x, %dw0 : !nn.tensor<[B, T, 4], f32>, !nn.tensor<[4], f32>
  // CHECK: nn.layer_norm_grad_scale %{{.+}}, %{{.+}} : !nn.tensor<[B, T, 4], f32>
  %lg = nn.layer_norm_grad_scale %dx, %x : !nn.tensor<[B, T, 4], f32>
  // CHECK: nn.embedding_grad %{{.+}}, %{{.+}} : !nn.tensor<[B, T, 4], f32>, !nn.tensor<[B, T], i32> -> !nn.tensor<[9, 4], f32>
  %et = nn.embedding_grad %dx, %y : !nn.tensor<[B, T, 4], f32>, !nn.tensor<[B, T], i32> -> !nn.tensor<[9, 4], f32>
  // CHECK: nn.reduce_grad mean %{{.+}}, %{{.+}}, %{{.+}} over 1 : !nn.tensor<[B, 4], f32>, !nn.tensor<[B, T, 4], f32>
  %rm = nn.reduce mean %x over 1 : !nn.tensor<[B, T, 4], f32>
  %rg = nn.reduce_grad mean %rm, %x, %rm over 1 : !nn.tensor<[B, 4], f32>, !nn.tensor<[B, T, 4], f32>
  // CHECK: nn.pool_grad max %{{.+}}, %{{.+}}, %{{.+}} window 2 stride 1 : !nn.tensor<[B, T, 4], f32>, !nn.tensor<[B, T, 4], f32>
  %pg = nn.pool_grad max %x, %x, %x window 2 stride 1 : !nn.tensor<[B, T, 4], f32>, !nn.tensor<[B, T, 4], f32>
  nn.return
}

// The LSTM's tape (nn-save-lstm-tape): the forward keeps it, the gradient
// reads it.
// CHECK-LABEL: nn.graph @lstm_tape
nn.graph @lstm_tape(%x: !nn.tensor<[B, T, 8], f32>, %dy: !nn.tensor<[B, T, 4], f32>,
                    %wi: !nn.tensor<[16, 8], f32>, %wh: !nn.tensor<[16, 4], f32>,
                    %b: !nn.tensor<[16], f32>)
    dims [B: batch, T: seq(B)] {
  // CHECK: %{{.+}}, %[[TAPE:.+]] = nn.lstm_with_tape backward %{{.+}} : !nn.tensor<[B, T, 8], f32>, !nn.tensor<[16, 8], f32>, !nn.tensor<[16, 4], f32>, !nn.tensor<[16], f32> -> !nn.tensor<[B, T, 4], f32>, !nn.tensor<[B, T, 24], f32>
  %y, %tape = nn.lstm_with_tape backward %x, %wi, %wh, %b : !nn.tensor<[B, T, 8], f32>, !nn.tensor<[16, 8], f32>, !nn.tensor<[16, 4], f32>, !nn.tensor<[16], f32> -> !nn.tensor<[B, T, 4], f32>, !nn.tensor<[B, T, 24], f32>
  // CHECK: nn.lstm_grad backward %{{.+}} tape %[[TAPE]] : {{.+}}, !nn.tensor<[B, T, 24], f32>
  %dx, %dwi, %dwh, %db = nn.lstm_grad backward %dy, %x, %wi, %wh, %b tape %tape : !nn.tensor<[B, T, 4], f32>, !nn.tensor<[B, T, 8], f32>, !nn.tensor<[16, 8], f32>, !nn.tensor<[16, 4], f32>, !nn.tensor<[16], f32>, !nn.tensor<[B, T, 24], f32>
  nn.return
}

// conv1d and pool on packed frames: a strided one's result is packed over
// the strided dim.
// CHECK-LABEL: nn.graph @packed_conv_pool
nn.graph @packed_conv_pool(%x: !nn.tensor<[N, 8], f32>, %w: !nn.tensor<[6, 3, 8], f32>, %dy: !nn.tensor<[N2, 6], f32>,
                          %gwt: !nn.tensor<[6, 3, 4], f32>, %dg: !nn.tensor<[N, 4], f32>)
    dims [B: batch, T: seq(B), T2: seq(B) = ceildiv(T, 2), N: packed(B, T), N2: packed(B, T2)] {
  // CHECK: nn.conv1d %{{.+}} stride 2 : (!nn.tensor<[N, 8], f32>, !nn.tensor<[6, 3, 8], f32>) -> !nn.tensor<[N2, 6], f32>
  %c = nn.conv1d %x, %w stride 2 : (!nn.tensor<[N, 8], f32>, !nn.tensor<[6, 3, 8], f32>) -> !nn.tensor<[N2, 6], f32>
  // CHECK: nn.pool max %{{.+}} window 3 stride 1 : (!nn.tensor<[N2, 6], f32>) -> !nn.tensor<[N2, 6], f32>
  %p = nn.pool max %c window 3 stride 1 : (!nn.tensor<[N2, 6], f32>) -> !nn.tensor<[N2, 6], f32>
  // CHECK: nn.conv1d_grad %{{.+}} stride 2 : !nn.tensor<[N2, 6], f32>, !nn.tensor<[N, 8], f32>
  %dx, %dw = nn.conv1d_grad %dy, %x, %w stride 2 : !nn.tensor<[N2, 6], f32>, !nn.tensor<[N, 8], f32>, !nn.tensor<[6, 3, 8], f32>
  // CHECK: nn.conv1d_grad %{{.+}} stride 2 groups 2 : !nn.tensor<[N2, 6], f32>, !nn.tensor<[N, 8], f32>, !nn.tensor<[6, 3, 4], f32>
  %gx, %gw = nn.conv1d_grad %dy, %x, %gwt stride 2 groups 2 : !nn.tensor<[N2, 6], f32>, !nn.tensor<[N, 8], f32>, !nn.tensor<[6, 3, 4], f32>
  // CHECK: nn.glu_grad %{{.+}} : !nn.tensor<[N, 4], f32>, !nn.tensor<[N, 8], f32>
  %gl = nn.glu_grad %dg, %x : !nn.tensor<[N, 4], f32>, !nn.tensor<[N, 8], f32>
  nn.return
}

// An LSTM on packed frames: its result, tape and gradients are packed too.
// CHECK-LABEL: nn.graph @packed_lstm
nn.graph @packed_lstm(%x: !nn.tensor<[N, 8], f32>, %dy: !nn.tensor<[N, 8], f32>,
                      %wi: !nn.tensor<[2, 16, 8], f32>, %wh: !nn.tensor<[2, 16, 4], f32>,
                      %b: !nn.tensor<[2, 16], f32>)
    dims [B: batch, T: seq(B), N: packed(B, T)] {
  // CHECK: nn.lstm bidirectional %{{.+}} : !nn.tensor<[N, 8], f32>
  %h = nn.lstm bidirectional %x, %wi, %wh, %b : !nn.tensor<[N, 8], f32>, !nn.tensor<[2, 16, 8], f32>, !nn.tensor<[2, 16, 4], f32>, !nn.tensor<[2, 16], f32>
  // CHECK: nn.lstm_with_tape bidirectional {{.+}} -> !nn.tensor<[N, 8], f32>, !nn.tensor<[N, 48], f32>
  %y, %tape = nn.lstm_with_tape bidirectional %x, %wi, %wh, %b : !nn.tensor<[N, 8], f32>, !nn.tensor<[2, 16, 8], f32>, !nn.tensor<[2, 16, 4], f32>, !nn.tensor<[2, 16], f32> -> !nn.tensor<[N, 8], f32>, !nn.tensor<[N, 48], f32>
  // CHECK: nn.lstm_grad bidirectional {{.+}} tape %{{.+}} : !nn.tensor<[N, 8], f32>, !nn.tensor<[N, 8], f32>
  %dx, %dwi, %dwh, %db = nn.lstm_grad bidirectional %dy, %x, %wi, %wh, %b tape %tape : !nn.tensor<[N, 8], f32>, !nn.tensor<[N, 8], f32>, !nn.tensor<[2, 16, 8], f32>, !nn.tensor<[2, 16, 4], f32>, !nn.tensor<[2, 16], f32>, !nn.tensor<[N, 48], f32>
  nn.return
}

// CHECK-LABEL: nn.graph @caller
// CHECK: nn.call @packing(%{{.+}}, %{{.+}}) : (!nn.tensor<[Bc, Tc, 8], f32>, !nn.tensor<[Bc, Tc], i32>) -> !nn.tensor<[Bc, Tc, 8], f32>
nn.graph @caller(%x: !nn.tensor<[Bc, Tc, 8], f32>, %y: !nn.tensor<[Bc, Tc], i32>)
    -> !nn.tensor<[Bc, Tc, 8], f32> dims [Bc: batch, Tc: seq(Bc)] {
  %r = nn.call @packing(%x, %y) : (!nn.tensor<[Bc, Tc, 8], f32>, !nn.tensor<[Bc, Tc], i32>) -> !nn.tensor<[Bc, Tc, 8], f32>
  nn.return %r : !nn.tensor<[Bc, Tc, 8], f32>
}

// Argument names as written survive both forms: they name a compiled graph's
// inputs. A numeric name carries none.
// CHECK-LABEL: nn.graph @arg_names
// CHECK-SAME: (%features: !nn.tensor<[B, T, 4], f32>, %{{arg[0-9]+}}: !nn.tensor<[B], f32>)
nn.graph @arg_names(%features: !nn.tensor<[B, T, 4], f32>, %0: !nn.tensor<[B], f32>)
    dims [B: batch, T: seq(B)] {
  nn.return
}

// Train-step ops: the gradient norm, its clipping factor and the updates.
// CHECK-LABEL: nn.graph @optimizer_updates
// CHECK: %[[N:.+]] = nn.global_norm %{{.+}}, %{{.+}} : !nn.tensor<[3, 4], f32>, !nn.tensor<[3], f32>
// CHECK: %[[S:.+]] = nn.clip_factor %[[N]] max_norm 5.000000e+00
// CHECK: nn.sgd_update %{{.+}}, %{{.+}} lr %{{.+}} : !nn.tensor<[3], f32>
// CHECK: nn.sgd_update %{{.+}}, %{{.+}} lr %{{.+}} scale %[[S]] weight_decay 1.000000e-02 : !nn.tensor<[3], f32>
// CHECK: nn.momentum_update %{{.+}}, %{{.+}}, %{{.+}} lr %{{.+}} momentum 9.000000e-01 nesterov : !nn.tensor<[3, 4], f32>
// CHECK: nn.adam_update %{{.+}}, %{{.+}}, %{{.+}}, %{{.+}} lr %{{.+}} step %{{.+}} scale %[[S]] beta1 9.000000e-01 beta2 5.000000e-01 epsilon 1.000000e-08 weight_decay 1.000000e-02 decoupled : !nn.tensor<[3, 4], f32>
nn.graph @optimizer_updates(%w: !nn.tensor<[3, 4], f32>, %dw: !nn.tensor<[3, 4], f32>,
                            %b: !nn.tensor<[3], f32>, %db: !nn.tensor<[3], f32>,
                            %lr: !nn.tensor<[], f32>, %t: !nn.tensor<[], i32>)
    -> (!nn.tensor<[3], f32>, !nn.tensor<[3], f32>, !nn.tensor<[3, 4], f32>, !nn.tensor<[3, 4], f32>) dims [] {
  %n = nn.global_norm %dw, %db : !nn.tensor<[3, 4], f32>, !nn.tensor<[3], f32>
  %s = nn.clip_factor %n max_norm 5.0
  %b1 = nn.sgd_update %b, %db lr %lr : !nn.tensor<[3], f32>
  %b2 = nn.sgd_update %b, %db lr %lr scale %s weight_decay 0.01 : !nn.tensor<[3], f32>
  %w1, %v1 = nn.momentum_update %w, %dw, %dw lr %lr momentum 0.9 nesterov : !nn.tensor<[3, 4], f32>
  %w2, %m2, %v2 = nn.adam_update %w, %dw, %w, %dw lr %lr step %t scale %s beta1 0.9 beta2 0.5 epsilon 1.0e-8 weight_decay 0.01 decoupled : !nn.tensor<[3, 4], f32>
  nn.return %b1, %b2, %w1, %w2 : !nn.tensor<[3], f32>, !nn.tensor<[3], f32>, !nn.tensor<[3, 4], f32>, !nn.tensor<[3, 4], f32>
}

// The parameter regularization loss and its gradient.
// CHECK-LABEL: nn.graph @param_norm
// CHECK: %[[PN:.+]] = nn.param_norm %{{.+}}, %{{.+}} : !nn.tensor<[3, 4], f32>, !nn.tensor<[3], f32>
// CHECK: nn.mark_loss %[[PN]] as "l2" normalize sum scale 5.000000e-02 : !nn.tensor<[], f32>
// CHECK: nn.param_norm_grad %{{.+}}, %{{.+}} : !nn.tensor<[3, 4], f32>
nn.graph @param_norm(%w: !nn.tensor<[3, 4], f32>, %b: !nn.tensor<[3], f32>, %dl: !nn.tensor<[], f32>)
    -> !nn.tensor<[3, 4], f32> dims [] {
  %n = nn.param_norm %w, %b : !nn.tensor<[3, 4], f32>, !nn.tensor<[3], f32>
  nn.mark_loss %n as "l2" normalize sum scale 0.05 : !nn.tensor<[], f32>
  %dw = nn.param_norm_grad %dl, %w : !nn.tensor<[3, 4], f32>
  nn.return %dw : !nn.tensor<[3, 4], f32>
}

// CHECK-LABEL: nn.graph @frame_error
// CHECK: %[[E:.+]] = nn.frame_error %{{.+}}, %{{.+}} : !nn.tensor<[B, T, 5], f32>, !nn.tensor<[B, T], i32>
// CHECK: nn.mark_loss %[[E]] as "fer" normalize per_frame as_error
nn.graph @frame_error(%x: !nn.tensor<[B, T, 5], f32>, %y: !nn.tensor<[B, T], i32>)
    dims [B: batch, T: seq(B)] {
  %e = nn.frame_error %x, %y : !nn.tensor<[B, T, 5], f32>, !nn.tensor<[B, T], i32>
  nn.mark_loss %e as "fer" normalize per_frame as_error : !nn.tensor<[B, T], f32>
  nn.return
}

// Transducers: the prediction network's U + 1 axis and the joint's grid,
// packed and padded.
// CHECK-LABEL: nn.graph @transducer
// CHECK-SAME: dims [B: batch, T: seq(B), U: seq(B), U1: seq(B) = U + 1, J: packed(B, T, U1)]
nn.graph @transducer(%e: !nn.tensor<[B, T, 4], f32>, %p: !nn.tensor<[B, U1, 4], f32>, %y: !nn.tensor<[B, U], i32>, %g: !nn.tensor<[B], f32>)
    dims [B: batch, T: seq(B), U: seq(B), U1: seq(B) = U + 1, J: packed(B, T, U1)] {
  // CHECK: nn.prepend_start %{{.+}} start 0 : !nn.tensor<[B, U], i32> -> !nn.tensor<[B, U1], i32>
  %s = nn.prepend_start %y start 0 : !nn.tensor<[B, U], i32> -> !nn.tensor<[B, U1], i32>
  // CHECK: %[[JP:.+]] = nn.transducer_join %{{.+}}, %{{.+}} : !nn.tensor<[B, T, 4], f32>, !nn.tensor<[B, U1, 4], f32> -> !nn.tensor<[J, 4], f32>
  %jp = nn.transducer_join %e, %p : !nn.tensor<[B, T, 4], f32>, !nn.tensor<[B, U1, 4], f32> -> !nn.tensor<[J, 4], f32>
  // CHECK: nn.transducer_join %{{.+}}, %{{.+}} : !nn.tensor<[B, T, 4], f32>, !nn.tensor<[B, U1, 4], f32> -> !nn.tensor<[B, T, U1, 4], f32>
  %jd = nn.transducer_join %e, %p : !nn.tensor<[B, T, 4], f32>, !nn.tensor<[B, U1, 4], f32> -> !nn.tensor<[B, T, U1, 4], f32>
  // CHECK: nn.transducer_loss %[[JP]], %{{.+}} from logits topology rnnt blank 0 zero_infinity : !nn.tensor<[J, 4], f32>, !nn.tensor<[B, U], i32>
  %l = nn.transducer_loss %jp, %y from logits topology rnnt blank 0 zero_infinity : !nn.tensor<[J, 4], f32>, !nn.tensor<[B, U], i32>
  // CHECK: nn.transducer_loss %{{.+}}, %{{.+}} from log_probs topology rna blank 3 : !nn.tensor<[B, T, U1, 4], f32>, !nn.tensor<[B, U], i32>
  %l2 = nn.transducer_loss %jd, %y from log_probs topology rna blank 3 : !nn.tensor<[B, T, U1, 4], f32>, !nn.tensor<[B, U], i32>
  // CHECK: nn.transducer_align %[[JP]], %{{.+}} from logits topology rna blank 0 : !nn.tensor<[J, 4], f32>, !nn.tensor<[B, U], i32> -> !nn.tensor<[B, T], i32>, !nn.tensor<[B], f32>
  %al, %as = nn.transducer_align %jp, %y from logits topology rna blank 0 : !nn.tensor<[J, 4], f32>, !nn.tensor<[B, U], i32> -> !nn.tensor<[B, T], i32>, !nn.tensor<[B], f32>
  // CHECK: nn.transducer_align %{{.+}}, %{{.+}} from log_probs topology rna blank 3 : !nn.tensor<[B, T, U1, 4], f32>, !nn.tensor<[B, U], i32> -> !nn.tensor<[B, T], i32>, !nn.tensor<[B], f32>
  %dl, %ds = nn.transducer_align %jd, %y from log_probs topology rna blank 3 : !nn.tensor<[B, T, U1, 4], f32>, !nn.tensor<[B, U], i32> -> !nn.tensor<[B, T], i32>, !nn.tensor<[B], f32>
  // CHECK: %[[DJ:.+]] = nn.transducer_loss_grad %{{.+}}, %[[JP]], %{{.+}} from logits topology rnnt blank 0 : !nn.tensor<[B], f32>, !nn.tensor<[J, 4], f32>, !nn.tensor<[B, U], i32>
  %dj = nn.transducer_loss_grad %g, %jp, %y from logits topology rnnt blank 0 : !nn.tensor<[B], f32>, !nn.tensor<[J, 4], f32>, !nn.tensor<[B, U], i32>
  // CHECK: nn.transducer_join_grad %[[DJ]] : !nn.tensor<[J, 4], f32> -> !nn.tensor<[B, T, 4], f32>, !nn.tensor<[B, U1, 4], f32>
  %de, %dp = nn.transducer_join_grad %dj : !nn.tensor<[J, 4], f32> -> !nn.tensor<[B, T, 4], f32>, !nn.tensor<[B, U1, 4], f32>
  nn.return
}

// The join and its gradient on packed operands (onto the packed grid).
// CHECK-LABEL: nn.graph @transducer_packed_operands
nn.graph @transducer_packed_operands(%e: !nn.tensor<[N_T, 4], f32>, %p: !nn.tensor<[N_U1, 4], f32>)
    dims [B: batch, T: seq(B), U: seq(B), U1: seq(B) = U + 1, J: packed(B, T, U1), N_T: packed(B, T), N_U1: packed(B, U1)] {
  // CHECK: %[[J:.+]] = nn.transducer_join %{{.+}}, %{{.+}} : !nn.tensor<[N_T, 4], f32>, !nn.tensor<[N_U1, 4], f32> -> !nn.tensor<[J, 4], f32>
  %j = nn.transducer_join %e, %p : !nn.tensor<[N_T, 4], f32>, !nn.tensor<[N_U1, 4], f32> -> !nn.tensor<[J, 4], f32>
  // CHECK: nn.transducer_join_grad %[[J]] : !nn.tensor<[J, 4], f32> -> !nn.tensor<[N_T, 4], f32>, !nn.tensor<[N_U1, 4], f32>
  %de, %dp = nn.transducer_join_grad %j : !nn.tensor<[J, 4], f32> -> !nn.tensor<[N_T, 4], f32>, !nn.tensor<[N_U1, 4], f32>
  nn.return
}

// CHECK-LABEL: nn.graph @gather_states
nn.graph @gather_states(%s: !nn.tensor<[B, U1, 4], f32>, %a: !nn.tensor<[B, T], i32>, %g: !nn.tensor<[B, T, 4], f32>)
    dims [B: batch, T: seq(B), U: seq(B), U1: seq(B) = U + 1] {
  // CHECK: nn.gather_states %{{.+}}, %{{.+}} blank 0 : !nn.tensor<[B, U1, 4], f32>, !nn.tensor<[B, T], i32> -> !nn.tensor<[B, T, 4], f32>
  %x = nn.gather_states %s, %a blank 0 : !nn.tensor<[B, U1, 4], f32>, !nn.tensor<[B, T], i32> -> !nn.tensor<[B, T, 4], f32>
  // CHECK: nn.gather_states_grad %{{.+}}, %{{.+}} blank 0 : !nn.tensor<[B, T, 4], f32>, !nn.tensor<[B, T], i32> -> !nn.tensor<[B, U1, 4], f32>
  %d = nn.gather_states_grad %g, %a blank 0 : !nn.tensor<[B, T, 4], f32>, !nn.tensor<[B, T], i32> -> !nn.tensor<[B, U1, 4], f32>
  nn.return
}

// RNN-T paths: the alignment over a computed dim A, and the two gathers
// along it (encoder frames by the blanks, prediction states by the labels).
// CHECK-LABEL: nn.graph @rnnt_path
// CHECK: nn.transducer_align %{{.+}}, %{{.+}} from logits topology rnnt blank 0 : !nn.tensor<[J, 4], f32>, !nn.tensor<[B, U], i32> -> !nn.tensor<[B, A], i32>, !nn.tensor<[B], f32>
// CHECK: nn.gather_states %{{.+}}, %{{.+}} blank 0 by_blanks : !nn.tensor<[B, T, 4], f32>, !nn.tensor<[B, A], i32> -> !nn.tensor<[B, A, 4], f32>
// CHECK: nn.gather_states_grad %{{.+}}, %{{.+}} blank 0 by_blanks : !nn.tensor<[B, A, 4], f32>, !nn.tensor<[B, A], i32> -> !nn.tensor<[B, T, 4], f32>
nn.graph @rnnt_path(%j: !nn.tensor<[J, 4], f32>, %y: !nn.tensor<[B, U], i32>, %e: !nn.tensor<[B, T, 4], f32>)
    -> !nn.tensor<[B, T, 4], f32>
    dims [B: batch, T: seq(B), U: seq(B), U1: seq(B) = U + 1, J: packed(B, T, U1), A: seq(B) computed] {
  %a, %s = nn.transducer_align %j, %y from logits topology rnnt blank 0 : !nn.tensor<[J, 4], f32>, !nn.tensor<[B, U], i32> -> !nn.tensor<[B, A], i32>, !nn.tensor<[B], f32>
  %f = nn.gather_states %e, %a blank 0 by_blanks : !nn.tensor<[B, T, 4], f32>, !nn.tensor<[B, A], i32> -> !nn.tensor<[B, A, 4], f32>
  %d = nn.gather_states_grad %f, %a blank 0 by_blanks : !nn.tensor<[B, A, 4], f32>, !nn.tensor<[B, A], i32> -> !nn.tensor<[B, T, 4], f32>
  nn.return %d : !nn.tensor<[B, T, 4], f32>
}

// The fused loss tail (nn-fuse-loss-tail), the conv1d and CTC gradients,
// and the padding mask nn-autodiff puts on input gradients; the fused ops
// with and without a bias (its type listed last, after the targets').
// CHECK-LABEL: nn.graph @loss_tail_and_gradients
// CHECK-SAME: (%[[X:[a-z0-9_]+]]: !nn.tensor<[B, T, 8], f32>, %[[DY:[a-z0-9_]+]]: !nn.tensor<[B, T2, 6], f32>, %[[CW:[a-z0-9_]+]]: !nn.tensor<[6, 3, 8], f32>, %[[LOGITS:[a-z0-9_]+]]: !nn.tensor<[B, T, 5], f32>, %[[LABELS:[a-z0-9_]+]]: !nn.tensor<[B, U], i32>, %[[G:[a-z0-9_]+]]: !nn.tensor<[B], f32>, %[[H:[a-z0-9_]+]]: !nn.tensor<[B, T, 4], f32>, %[[W:[a-z0-9_]+]]: !nn.tensor<[3, 4], f32>, %[[BIAS:[a-z0-9_]+]]: !nn.tensor<[3], f32>, %[[Y:[a-z0-9_]+]]: !nn.tensor<[B, T], i32>, %[[DL:[a-z0-9_]+]]: !nn.tensor<[B, T], f32>)
// CHECK: %[[DX:.+]], %[[DCW:.+]] = nn.conv1d_grad %[[DY]], %[[X]], %[[CW]] stride 2 : !nn.tensor<[B, T2, 6], f32>, !nn.tensor<[B, T, 8], f32>, !nn.tensor<[6, 3, 8], f32>
// CHECK: %[[DCTC:.+]] = nn.ctc_loss_grad %[[G]], %[[LOGITS]], %[[LABELS]] from logits blank 4 zero_infinity : !nn.tensor<[B], f32>, !nn.tensor<[B, T, 5], f32>, !nn.tensor<[B, U], i32>
// CHECK: %[[DCTC2:.+]] = nn.ctc_loss_grad %[[G]], %[[LOGITS]], %[[LABELS]] from log_probs blank 0 : !nn.tensor<[B], f32>, !nn.tensor<[B, T, 5], f32>, !nn.tensor<[B, U], i32>
// CHECK: %[[CE:.+]] = nn.linear_cross_entropy %[[H]], %[[W]], %[[BIAS]] targets %[[Y]] label_smoothing 1.000000e-01 : !nn.tensor<[B, T, 4], f32>, !nn.tensor<[3, 4], f32>, !nn.tensor<[B, T], i32>, !nn.tensor<[3], f32>
// CHECK: nn.mark_loss %[[CE]] as "ce" normalize per_frame
// CHECK: nn.linear_cross_entropy %[[H]], %[[W]], %[[BIAS]] targets %[[Y]] : !nn.tensor<[B, T, 4], f32>
// CHECK: %[[DH:.+]], %{{.+}}, %{{.+}} = nn.linear_cross_entropy_grad %[[DL]], %[[H]], %[[W]], %[[BIAS]] targets %[[Y]] label_smoothing 1.000000e-01 : !nn.tensor<[B, T, 4], f32>, !nn.tensor<[3, 4], f32>, !nn.tensor<[B, T], i32>, !nn.tensor<[3], f32>
// CHECK: %[[L:.+]], %{{.+}}, %{{.+}}, %{{.+}} = nn.linear_cross_entropy_train %[[H]], %[[W]], %[[BIAS]] targets %[[Y]] normalize per_frame scale 1.000000e+00 label_smoothing 1.000000e-01 : !nn.tensor<[B, T, 4], f32>, !nn.tensor<[3, 4], f32>, !nn.tensor<[B, T], i32>, !nn.tensor<[3], f32>
// CHECK: nn.mark_loss %[[L]] as "ce_train" normalize per_frame
// CHECK: nn.linear_cross_entropy_train %[[H]], %[[W]], %[[BIAS]] targets %[[Y]] normalize sum scale 5.000000e-01 unnormalized : !nn.tensor<[B, T, 4], f32>
// CHECK: nn.linear_cross_entropy %[[H]], %[[W]] targets %[[Y]] : !nn.tensor<[B, T, 4], f32>, !nn.tensor<[3, 4], f32>, !nn.tensor<[B, T], i32>{{$}}
// CHECK: nn.linear_cross_entropy_grad %[[DL]], %[[H]], %[[W]] targets %[[Y]] : !nn.tensor<[B, T, 4], f32>, !nn.tensor<[3, 4], f32>, !nn.tensor<[B, T], i32>{{$}}
// CHECK: nn.linear_cross_entropy_train %[[H]], %[[W]] targets %[[Y]] normalize per_frame scale 1.000000e+00 : !nn.tensor<[B, T, 4], f32>, !nn.tensor<[3, 4], f32>, !nn.tensor<[B, T], i32>{{$}}
// CHECK: nn.linear_cross_entropy_train %[[H]], %[[W]] targets %[[Y]] normalize per_frame inv_norm %{{.+}} scale 1.000000e+00 : !nn.tensor<[B, T, 4], f32>, !nn.tensor<[3, 4], f32>, !nn.tensor<[B, T], i32>{{$}}
// CHECK: %[[Z:.+]] = nn.zero_padding %[[DH]] : !nn.tensor<[B, T, 4], f32>
// CHECK: nn.return %[[DX]], %[[DCW]], %[[DCTC]], %[[DCTC2]], %[[Z]] :
nn.graph @loss_tail_and_gradients(%x: !nn.tensor<[B, T, 8], f32>, %dy: !nn.tensor<[B, T2, 6], f32>,
                                  %cw: !nn.tensor<[6, 3, 8], f32>, %logits: !nn.tensor<[B, T, 5], f32>,
                                  %labels: !nn.tensor<[B, U], i32>, %g: !nn.tensor<[B], f32>,
                                  %h: !nn.tensor<[B, T, 4], f32>, %w: !nn.tensor<[3, 4], f32>,
                                  %bias: !nn.tensor<[3], f32>, %y: !nn.tensor<[B, T], i32>,
                                  %dl: !nn.tensor<[B, T], f32>)
    -> (!nn.tensor<[B, T, 8], f32>, !nn.tensor<[6, 3, 8], f32>, !nn.tensor<[B, T, 5], f32>,
        !nn.tensor<[B, T, 5], f32>, !nn.tensor<[B, T, 4], f32>)
    dims [B: batch, T: seq(B), T2: seq(B) = ceildiv(T, 2), U: seq(B)] {
  %dx, %dcw = nn.conv1d_grad %dy, %x, %cw stride 2 : !nn.tensor<[B, T2, 6], f32>, !nn.tensor<[B, T, 8], f32>, !nn.tensor<[6, 3, 8], f32>
  %dctc = nn.ctc_loss_grad %g, %logits, %labels from logits blank 4 zero_infinity : !nn.tensor<[B], f32>, !nn.tensor<[B, T, 5], f32>, !nn.tensor<[B, U], i32>
  %dctc2 = nn.ctc_loss_grad %g, %logits, %labels from log_probs blank 0 : !nn.tensor<[B], f32>, !nn.tensor<[B, T, 5], f32>, !nn.tensor<[B, U], i32>
  %ce = nn.linear_cross_entropy %h, %w, %bias targets %y label_smoothing 0.1 : !nn.tensor<[B, T, 4], f32>, !nn.tensor<[3, 4], f32>, !nn.tensor<[B, T], i32>, !nn.tensor<[3], f32>
  nn.mark_loss %ce as "ce" normalize per_frame : !nn.tensor<[B, T], f32>
  %ce2 = nn.linear_cross_entropy %h, %w, %bias targets %y : !nn.tensor<[B, T, 4], f32>, !nn.tensor<[3, 4], f32>, !nn.tensor<[B, T], i32>, !nn.tensor<[3], f32>
  nn.mark_loss %ce2 as "ce2" normalize per_sequence : !nn.tensor<[B, T], f32>
  %dh, %dw, %db = nn.linear_cross_entropy_grad %dl, %h, %w, %bias targets %y label_smoothing 0.1 : !nn.tensor<[B, T, 4], f32>, !nn.tensor<[3, 4], f32>, !nn.tensor<[B, T], i32>, !nn.tensor<[3], f32>
  %l, %dh2, %dw2, %db2 = nn.linear_cross_entropy_train %h, %w, %bias targets %y normalize per_frame scale 1.0 label_smoothing 0.1 : !nn.tensor<[B, T, 4], f32>, !nn.tensor<[3, 4], f32>, !nn.tensor<[B, T], i32>, !nn.tensor<[3], f32>
  nn.mark_loss %l as "ce_train" normalize per_frame : !nn.tensor<[B, T], f32>
  %l2, %dh3, %dw3, %db3 = nn.linear_cross_entropy_train %h, %w, %bias targets %y normalize sum scale 0.5 unnormalized : !nn.tensor<[B, T, 4], f32>, !nn.tensor<[3, 4], f32>, !nn.tensor<[B, T], i32>, !nn.tensor<[3], f32>
  %ce3 = nn.linear_cross_entropy %h, %w targets %y : !nn.tensor<[B, T, 4], f32>, !nn.tensor<[3, 4], f32>, !nn.tensor<[B, T], i32>
  nn.mark_loss %ce3 as "ce3" normalize per_frame : !nn.tensor<[B, T], f32>
  %dh4, %dw4, %db4 = nn.linear_cross_entropy_grad %dl, %h, %w targets %y : !nn.tensor<[B, T, 4], f32>, !nn.tensor<[3, 4], f32>, !nn.tensor<[B, T], i32>
  %l3, %dh5, %dw5, %db5 = nn.linear_cross_entropy_train %h, %w targets %y normalize per_frame scale 1.0 : !nn.tensor<[B, T, 4], f32>, !nn.tensor<[3, 4], f32>, !nn.tensor<[B, T], i32>
  %frames = nn.loss_norm per_frame for !nn.tensor<[B, T], f32>
  %l4, %dh6, %dw6, %db6 = nn.linear_cross_entropy_train %h, %w targets %y normalize per_frame inv_norm %frames scale 1.0 : !nn.tensor<[B, T, 4], f32>, !nn.tensor<[3, 4], f32>, !nn.tensor<[B, T], i32>
  %z = nn.zero_padding %dh : !nn.tensor<[B, T, 4], f32>
  nn.return %dx, %dcw, %dctc, %dctc2, %z : !nn.tensor<[B, T, 8], f32>, !nn.tensor<[6, 3, 8], f32>, !nn.tensor<[B, T, 5], f32>,
      !nn.tensor<[B, T, 5], f32>, !nn.tensor<[B, T, 4], f32>
}

// Data-parallel steps: the sums over the processes of a run, and a loss's
// normalization counted from its positions alone.
// CHECK-LABEL: nn.graph @data_parallel
// CHECK: %[[N:.+]] = nn.loss_norm per_frame for !nn.tensor<[B, T], f32>
// CHECK: nn.loss_norm per_sequence for !nn.tensor<[B, T], f32>
// CHECK: %{{.+}}:2 = nn.all_reduce %{{.+}}, %{{.+}} : !nn.tensor<[3, 4], f32>, !nn.tensor<[3], f32>
// CHECK: nn.all_reduce %[[N]] : !nn.tensor<[], f64>
nn.graph @data_parallel(%dw: !nn.tensor<[3, 4], f32>, %db: !nn.tensor<[3], f32>)
    -> (!nn.tensor<[3, 4], f32>, !nn.tensor<[3], f32>, !nn.tensor<[], f64>, !nn.tensor<[], f64>)
    dims [B: batch, T: seq(B)] {
  %n = nn.loss_norm per_frame for !nn.tensor<[B, T], f32>
  %m = nn.loss_norm per_sequence for !nn.tensor<[B, T], f32>
  %sw, %sb = nn.all_reduce %dw, %db : !nn.tensor<[3, 4], f32>, !nn.tensor<[3], f32>
  %sn = nn.all_reduce %n : !nn.tensor<[], f64>
  nn.return %sw, %sb, %sn, %m : !nn.tensor<[3, 4], f32>, !nn.tensor<[3], f32>, !nn.tensor<[], f64>, !nn.tensor<[], f64>
}

// A mask seed may carry the batch offset of a data-parallel rank's part.
// CHECK-LABEL: nn.graph @seed_with_offset
// CHECK: nn.dropout %{{.+}} seed %{{.+}} rate 1.000000e-01 : !nn.tensor<[B, T, 4], f32>, !nn.tensor<[2], i32>
nn.graph @seed_with_offset(%x: !nn.tensor<[B, T, 4], f32>, %s: !nn.tensor<[2], i32>)
    -> !nn.tensor<[B, T, 4], f32> dims [B: batch, T: seq(B)] {
  %d = nn.dropout %x seed %s rate 0.1 : !nn.tensor<[B, T, 4], f32>, !nn.tensor<[2], i32>
  nn.return %d : !nn.tensor<[B, T, 4], f32>
}
