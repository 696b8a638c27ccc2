// The grown model of grow.json: the hidden layer widened from 6 to 10 and
// a second hidden layer (new), CTC.
nn.parameter @"h1.w" : !nn.tensor<[10, 16], f32>
nn.parameter @"h1.b" : !nn.tensor<[10], f32>
nn.parameter @"h2.w" : !nn.tensor<[10, 10], f32>
nn.parameter @"out.w" : !nn.tensor<[8, 10], f32>
nn.graph @big(%features: !nn.tensor<[B, T, 16], f32>, %labels: !nn.tensor<[B, U], i32>)
    dims [B: batch, T: seq(B), U: seq(B)] {
  %w1 = nn.param_ref @"h1.w" : !nn.tensor<[10, 16], f32>
  %b1 = nn.param_ref @"h1.b" : !nn.tensor<[10], f32>
  %w2 = nn.param_ref @"h2.w" : !nn.tensor<[10, 10], f32>
  %w = nn.param_ref @"out.w" : !nn.tensor<[8, 10], f32>
  %h = nn.linear %features, %w1, %b1 : !nn.tensor<[B, T, 16], f32>, !nn.tensor<[10, 16], f32>, !nn.tensor<[10], f32>
  %r = nn.relu %h : !nn.tensor<[B, T, 10], f32>
  %h2 = nn.linear %r, %w2 : !nn.tensor<[B, T, 10], f32>, !nn.tensor<[10, 10], f32>
  %r2 = nn.relu %h2 : !nn.tensor<[B, T, 10], f32>
  %logits = nn.linear %r2, %w : !nn.tensor<[B, T, 10], f32>, !nn.tensor<[8, 10], f32>
  %ctc = nn.ctc_loss %logits, %labels from logits blank 0 zero_infinity : !nn.tensor<[B, T, 8], f32>, !nn.tensor<[B, U], i32>
  nn.mark_loss %ctc as "ctc" normalize per_sequence : !nn.tensor<[B], f32>
  nn.return
}
