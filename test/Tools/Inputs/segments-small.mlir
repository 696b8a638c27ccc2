// A small model for the segment task (nn-train's tests): a BLSTM with
// dropout, frame-wise CE with its frame error, and CTC on the encoder.
nn.parameter @"lstm.w_ih" : !nn.tensor<[2, 32, 12], f32>
nn.parameter @"lstm.w_hh" : !nn.tensor<[2, 32, 8], f32>
nn.parameter @"lstm.b" : !nn.tensor<[2, 32], f32>
nn.parameter @"out.w" : !nn.tensor<[6, 16], f32>
nn.parameter @"out.b" : !nn.tensor<[6], f32>
nn.parameter @"ctc.w" : !nn.tensor<[6, 16], f32>
nn.graph @am(%features: !nn.tensor<[B, T, 12], f32>,
             %frame_labels: !nn.tensor<[B, T], i32>,
             %labels: !nn.tensor<[B, U], i32>)
    dims [B: batch, T: seq(B), U: seq(B)] {
  %wi = nn.param_ref @"lstm.w_ih" : !nn.tensor<[2, 32, 12], f32>
  %wh = nn.param_ref @"lstm.w_hh" : !nn.tensor<[2, 32, 8], f32>
  %b = nn.param_ref @"lstm.b" : !nn.tensor<[2, 32], f32>
  %h = nn.lstm bidirectional %features, %wi, %wh, %b
      : !nn.tensor<[B, T, 12], f32>, !nn.tensor<[2, 32, 12], f32>,
        !nn.tensor<[2, 32, 8], f32>, !nn.tensor<[2, 32], f32>
  %d = nn.dropout %h rate 1.000000e-01 : !nn.tensor<[B, T, 16], f32>
  %wo = nn.param_ref @"out.w" : !nn.tensor<[6, 16], f32>
  %bo = nn.param_ref @"out.b" : !nn.tensor<[6], f32>
  %logits = nn.linear %d, %wo, %bo : !nn.tensor<[B, T, 16], f32>, !nn.tensor<[6, 16], f32>, !nn.tensor<[6], f32>
  %ce = nn.cross_entropy %logits, %frame_labels from logits
      : !nn.tensor<[B, T, 6], f32>, !nn.tensor<[B, T], i32>
  nn.mark_loss %ce as "ce" normalize per_frame : !nn.tensor<[B, T], f32>
  %err = nn.frame_error %logits, %frame_labels : !nn.tensor<[B, T, 6], f32>, !nn.tensor<[B, T], i32>
  nn.mark_loss %err as "fer" normalize per_frame as_error : !nn.tensor<[B, T], f32>
  %wc = nn.param_ref @"ctc.w" : !nn.tensor<[6, 16], f32>
  %cl = nn.linear %d, %wc : !nn.tensor<[B, T, 16], f32>, !nn.tensor<[6, 16], f32>
  %ctc = nn.ctc_loss %cl, %labels from logits blank 0
      : !nn.tensor<[B, T, 6], f32>, !nn.tensor<[B, U], i32>
  nn.mark_loss %ctc as "ctc" normalize per_sequence : !nn.tensor<[B], f32>
  nn.return
}
