// The decode stage of stages.json: the CTC model's greedy decoding, and
// its CTC loss reported.
nn.parameter @"out.w" : !nn.tensor<[8, 16], f32>
nn.graph @decode(%features: !nn.tensor<[B, T, 16], f32>, %labels: !nn.tensor<[B, U], i32>)
    -> (!nn.tensor<[B, Y], i32>, !nn.tensor<[B], f32>)
    dims [B: batch, T: seq(B), U: seq(B), Y: seq(B) computed] {
  %w = nn.param_ref @"out.w" : !nn.tensor<[8, 16], f32>
  %logits = nn.linear %features, %w : !nn.tensor<[B, T, 16], f32>, !nn.tensor<[8, 16], f32>
  %ctc = nn.ctc_loss %logits, %labels from logits blank 0 zero_infinity : !nn.tensor<[B, T, 8], f32>, !nn.tensor<[B, U], i32>
  nn.mark_loss %ctc as "ctc" normalize per_sequence : !nn.tensor<[B], f32>
  %y, %s = nn.ctc_greedy_decode %logits from logits blank 0 : !nn.tensor<[B, T, 8], f32> -> !nn.tensor<[B, Y], i32>, !nn.tensor<[B], f32>
  nn.return %y, %s : !nn.tensor<[B, Y], i32>, !nn.tensor<[B], f32>
}
