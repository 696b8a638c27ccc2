// A frame-wise model for chunked training: a BLSTM and CE on the frame
// labels, weighted by chunk_weights so that overlapping chunks count each
// frame once.
nn.parameter @"lstm.w_ih" : !nn.tensor<[2, 32, 12], f32>
nn.parameter @"lstm.w_hh" : !nn.tensor<[2, 32, 8], f32>
nn.parameter @"lstm.b" : !nn.tensor<[2, 32], f32>
nn.parameter @"out.w" : !nn.tensor<[6, 16], f32>
nn.parameter @"out.b" : !nn.tensor<[6], f32>
nn.graph @am(%features: !nn.tensor<[B, T, 12], f32>,
             %frame_labels: !nn.tensor<[B, T], i32>,
             %chunk_weights: !nn.tensor<[B, T], f32>)
    dims [B: batch, T: seq(B)] {
  %wi = nn.param_ref @"lstm.w_ih" : !nn.tensor<[2, 32, 12], f32>
  %wh = nn.param_ref @"lstm.w_hh" : !nn.tensor<[2, 32, 8], f32>
  %b = nn.param_ref @"lstm.b" : !nn.tensor<[2, 32], f32>
  %h = nn.lstm bidirectional %features, %wi, %wh, %b
      : !nn.tensor<[B, T, 12], f32>, !nn.tensor<[2, 32, 12], f32>,
        !nn.tensor<[2, 32, 8], f32>, !nn.tensor<[2, 32], f32>
  %wo = nn.param_ref @"out.w" : !nn.tensor<[6, 16], f32>
  %bo = nn.param_ref @"out.b" : !nn.tensor<[6], f32>
  %logits = nn.linear %h, %wo, %bo : !nn.tensor<[B, T, 16], f32>, !nn.tensor<[6, 16], f32>, !nn.tensor<[6], f32>
  %ce = nn.cross_entropy %logits, %frame_labels from logits
      : !nn.tensor<[B, T, 6], f32>, !nn.tensor<[B, T], i32>
  nn.mark_loss %ce weights %chunk_weights as "ce" normalize per_frame
      : !nn.tensor<[B, T], f32> weights !nn.tensor<[B, T], f32>
  %err = nn.frame_error %logits, %frame_labels : !nn.tensor<[B, T, 6], f32>, !nn.tensor<[B, T], i32>
  nn.mark_loss %err weights %chunk_weights as "fer" normalize per_frame as_error
      : !nn.tensor<[B, T], f32> weights !nn.tensor<[B, T], f32>
  nn.return
}
