// The align stage of stages.json: the CTC model's Viterbi alignment, a
// prior subtracted.
nn.parameter @"out.w" : !nn.tensor<[8, 16], f32>
nn.parameter @prior : !nn.tensor<[8], f32>
nn.graph @align(%features: !nn.tensor<[B, T, 16], f32>, %labels: !nn.tensor<[B, U], i32>)
    -> (!nn.tensor<[B, T], i32>, !nn.tensor<[B], f32>)
    dims [B: batch, T: seq(B), U: seq(B)] {
  %w = nn.param_ref @"out.w" : !nn.tensor<[8, 16], f32>
  %p = nn.param_ref @prior : !nn.tensor<[8], f32>
  %logits = nn.linear %features, %w : !nn.tensor<[B, T, 16], f32>, !nn.tensor<[8, 16], f32>
  %a, %s = nn.viterbi_align %logits, %labels from logits topology ctc blank 0 prior %p : !nn.tensor<[B, T, 8], f32>, !nn.tensor<[B, U], i32>, !nn.tensor<[8], f32>
  nn.return %a, %s : !nn.tensor<[B, T], i32>, !nn.tensor<[B], f32>
}
