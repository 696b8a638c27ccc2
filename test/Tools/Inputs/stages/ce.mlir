// The frame-wise stage of stages.json: CE on the alignments.
nn.parameter @"out.w" : !nn.tensor<[8, 16], f32>
nn.graph @ce(%features: !nn.tensor<[B, T, 16], f32>, %alignment: !nn.tensor<[B, T], i32>)
    dims [B: batch, T: seq(B)] {
  %w = nn.param_ref @"out.w" : !nn.tensor<[8, 16], f32>
  %logits = nn.linear %features, %w : !nn.tensor<[B, T, 16], f32>, !nn.tensor<[8, 16], f32>
  %ce = nn.cross_entropy %logits, %alignment from logits : !nn.tensor<[B, T, 8], f32>, !nn.tensor<[B, T], i32>
  nn.mark_loss %ce as "ce" normalize per_frame : !nn.tensor<[B, T], f32>
  %err = nn.frame_error %logits, %alignment : !nn.tensor<[B, T, 8], f32>, !nn.tensor<[B, T], i32>
  nn.mark_loss %err as "fer" normalize per_frame as_error : !nn.tensor<[B, T], f32>
  nn.return
}
