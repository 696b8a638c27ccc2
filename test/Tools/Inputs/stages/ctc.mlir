// The CTC stage of stages.json: a linear layer, CTC (zero_infinity: an
// utterance with too many labels adds nothing).
nn.parameter @"out.w" : !nn.tensor<[8, 16], f32>
nn.graph @ctc(%features: !nn.tensor<[B, T, 16], f32>, %labels: !nn.tensor<[B, U], i32>)
    dims [B: batch, T: seq(B), U: seq(B)] {
  %w = nn.param_ref @"out.w" : !nn.tensor<[8, 16], f32>
  %logits = nn.linear %features, %w : !nn.tensor<[B, T, 16], f32>, !nn.tensor<[8, 16], f32>
  %ctc = nn.ctc_loss %logits, %labels from logits blank 0 zero_infinity : !nn.tensor<[B, T, 8], f32>, !nn.tensor<[B, U], i32>
  nn.mark_loss %ctc as "ctc" normalize per_sequence : !nn.tensor<[B], f32>
  nn.return
}
