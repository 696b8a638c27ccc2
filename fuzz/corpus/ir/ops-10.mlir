nn.parameter @w : !nn.tensor<[16, 8], f32>

nn.graph @frame_wise(%x: !nn.tensor<[B, T, 8], f32>, %ids: !nn.tensor<[B, T], i32>,
                     %table: !nn.tensor<[100, 8], f32>, %g: !nn.tensor<[16], f32>)
    -> !nn.tensor<[B, T, 32], f32> dims [B: batch, T: seq(B)] {
  %w = nn.param_ref @w : !nn.tensor<[16, 8], f32>
  %l = nn.linear %x, %w, %g : !nn.tensor<[B, T, 8], f32>, !nn.tensor<[16, 8], f32>, !nn.tensor<[16], f32>
  %lnb = nn.linear %x, %w : !nn.tensor<[B, T, 8], f32>, !nn.tensor<[16, 8], f32>
  %a = nn.add %l, %lnb : !nn.tensor<[B, T, 16], f32>
  %m = nn.mul %a, %l : !nn.tensor<[B, T, 16], f32>
  %r = nn.relu %m : !nn.tensor<[B, T, 16], f32>
  %t = nn.tanh %r : !nn.tensor<[B, T, 16], f32>
  %s = nn.sigmoid %t : !nn.tensor<[B, T, 16], f32>
  %ge = nn.gelu %s : !nn.tensor<[B, T, 16], f32>
  %d = nn.dropout %ge rate 0.25 : !nn.tensor<[B, T, 16], f32>
  %n = nn.layer_norm %d, %g, %g {epsilon = 1.0e-3 : f64} : !nn.tensor<[B, T, 16], f32>, !nn.tensor<[16], f32>, !nn.tensor<[16], f32>
  %sm = nn.softmax %n : !nn.tensor<[B, T, 16], f32>
  %lsm = nn.log_softmax %sm : !nn.tensor<[B, T, 16], f32>
  %e = nn.embedding %ids, %table : !nn.tensor<[B, T], i32>, !nn.tensor<[100, 8], f32>
  %c = nn.concat %lsm, %e, %x : !nn.tensor<[B, T, 16], f32>, !nn.tensor<[B, T, 8], f32>, !nn.tensor<[B, T, 8], f32>
  nn.return %c : !nn.tensor<[B, T, 32], f32>
}

nn.graph @sequence_mixing(%x: !nn.tensor<[B, T, 8], f32>,
                          %wi: !nn.tensor<[16, 8], f32>, %wh: !nn.tensor<[16, 4], f32>, %b: !nn.tensor<[16], f32>,
                          %bwi: !nn.tensor<[2, 16, 8], f32>, %bwh: !nn.tensor<[2, 16, 4], f32>, %bb: !nn.tensor<[2, 16], f32>,
                          %cw: !nn.tensor<[6, 3, 8], f32>, %cb: !nn.tensor<[6], f32>)
    -> (!nn.tensor<[B, 8], f32>, !nn.tensor<[B, T4, 6], f32>)
    dims [B: batch, T: seq(B), T2: seq(B) = ceildiv(T, 2), T4: seq(B) = ceildiv(T2, 2)] {
  %f = nn.lstm forward %x, %wi, %wh, %b : !nn.tensor<[B, T, 8], f32>, !nn.tensor<[16, 8], f32>, !nn.tensor<[16, 4], f32>, !nn.tensor<[16], f32>
  %k = nn.lstm backward %x, %wi, %wh, %b : !nn.tensor<[B, T, 8], f32>, !nn.tensor<[16, 8], f32>, !nn.tensor<[16, 4], f32>, !nn.tensor<[16], f32>
  %bi = nn.lstm bidirectional %x, %bwi, %bwh, %bb : !nn.tensor<[B, T, 8], f32>, !nn.tensor<[2, 16, 8], f32>, !nn.tensor<[2, 16, 4], f32>, !nn.tensor<[2, 16], f32>
  %conv = nn.conv1d %bi, %cw, %cb stride 2 : (!nn.tensor<[B, T, 8], f32>, !nn.tensor<[6, 3, 8], f32>, !nn.tensor<[6], f32>) -> !nn.tensor<[B, T2, 6], f32>
  %conv1 = nn.conv1d %bi, %cw stride 1 : (!nn.tensor<[B, T, 8], f32>, !nn.tensor<[6, 3, 8], f32>) -> !nn.tensor<[B, T, 6], f32>
  %p = nn.pool avg %conv window 2 stride 2 : (!nn.tensor<[B, T2, 6], f32>) -> !nn.tensor<[B, T4, 6], f32>
  %pm = nn.pool max %conv window 3 stride 1 : (!nn.tensor<[B, T2, 6], f32>) -> !nn.tensor<[B, T2, 6], f32>
  %rs = nn.reduce sum %bi over 1 : !nn.tensor<[B, T, 8], f32>
  %rm = nn.reduce mean %bi over 1 : !nn.tensor<[B, T, 8], f32>
  %rx = nn.reduce max %bi over 1 : !nn.tensor<[B, T, 8], f32>
  nn.return %rs, %p : !nn.tensor<[B, 8], f32>, !nn.tensor<[B, T4, 6], f32>
}

nn.graph @losses(%logits: !nn.tensor<[B, T, 5], f32>, %targets: !nn.tensor<[B, T], i64>,
                 %labels: !nn.tensor<[B, U], i32>, %ref: !nn.tensor<[B, T, 5], f32>,
                 %norm: !nn.tensor<[B], f32>, %total: !nn.tensor<[], f32>)
    dims [B: batch, T: seq(B), U: seq(B)] {
  %ce = nn.cross_entropy %logits, %targets from logits : !nn.tensor<[B, T, 5], f32>, !nn.tensor<[B, T], i64>
  %ces = nn.cross_entropy %logits, %targets from log_probs label_smoothing 0.1 : !nn.tensor<[B, T, 5], f32>, !nn.tensor<[B, T], i64>
  %mse = nn.mse %logits, %ref : !nn.tensor<[B, T, 5], f32>, !nn.tensor<[B, T, 5], f32>
  %ctc = nn.ctc_loss %logits, %labels from logits blank 4 zero_infinity : !nn.tensor<[B, T, 5], f32>, !nn.tensor<[B, U], i32>
  %ctc2 = nn.ctc_loss %logits, %labels from log_probs blank 0 : !nn.tensor<[B, T, 5], f32>, !nn.tensor<[B, U], i32>
  nn.mark_loss %ce as "ce" normalize per_frame : !nn.tensor<[B, T], f32>
  nn.mark_loss %ces as "ce_smoothed" normalize sum scale 0.0 as_error {use_normalized_loss = false} : !nn.tensor<[B, T], f32>
  nn.mark_loss %mse as "mse" normalize per_sequence scale 2.0 : !nn.tensor<[B, T], f32>
  nn.mark_loss %ctc, %norm as "ctc" normalize custom : !nn.tensor<[B], f32>, !nn.tensor<[B], f32>
  nn.mark_loss %ctc2, %total as "ctc2" normalize custom : !nn.tensor<[B], f32>, !nn.tensor<[], f32>
  nn.return
}

nn.graph @packing(%x: !nn.tensor<[B, T, 8], f32>, %y: !nn.tensor<[B, T], i32>)
    -> !nn.tensor<[B, T, 8], f32> dims [B: batch, T: seq(B), N: packed(B, T)] {
  %px = nn.pack %x : !nn.tensor<[B, T, 8], f32> -> !nn.tensor<[N, 8], f32>
  %py = nn.pack %y : !nn.tensor<[B, T], i32> -> !nn.tensor<[N], i32>
  %ce = nn.cross_entropy %px, %py from logits : !nn.tensor<[N, 8], f32>, !nn.tensor<[N], i32>
  nn.mark_loss %ce as "ce" normalize per_frame : !nn.tensor<[N], f32>
  %u = nn.unpack %px : !nn.tensor<[N, 8], f32> -> !nn.tensor<[B, T, 8], f32>
  nn.return %u : !nn.tensor<[B, T, 8], f32>
}

nn.graph @caller(%x: !nn.tensor<[Bc, Tc, 8], f32>, %y: !nn.tensor<[Bc, Tc], i32>)
    -> !nn.tensor<[Bc, Tc, 8], f32> dims [Bc: batch, Tc: seq(Bc)] {
  %r = nn.call @packing(%x, %y) : (!nn.tensor<[Bc, Tc, 8], f32>, !nn.tensor<[Bc, Tc], i32>) -> !nn.tensor<[Bc, Tc, 8], f32>
  nn.return %r : !nn.tensor<[Bc, Tc, 8], f32>
}

nn.graph @arg_names(%features: !nn.tensor<[B, T, 4], f32>, %0: !nn.tensor<[B], f32>)
    dims [B: batch, T: seq(B)] {
  nn.return
}
