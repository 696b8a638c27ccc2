nn.parameter @w1 : !nn.tensor<[8, 4], f32>
nn.parameter @w2 : !nn.tensor<[6, 8], f32>
nn.graph @chain(%x: !nn.tensor<[B, T, 4], f32>, %y: !nn.tensor<[B, T], i32>,
                %wi: !nn.tensor<[16, 4], f32>, %wh: !nn.tensor<[16, 4], f32>, %b: !nn.tensor<[16], f32>, %b2: !nn.tensor<[6], f32>)
    dims [B: batch, T: seq(B), N: packed(B, T)] {
  %h = nn.lstm forward %x, %wi, %wh, %b : !nn.tensor<[B, T, 4], f32>, !nn.tensor<[16, 4], f32>, !nn.tensor<[16, 4], f32>, !nn.tensor<[16], f32>
  %w1 = nn.param_ref @w1 : !nn.tensor<[8, 4], f32>
  %l1 = nn.linear %h, %w1 : !nn.tensor<[B, T, 4], f32>, !nn.tensor<[8, 4], f32>
  %r = nn.relu %l1 : !nn.tensor<[B, T, 8], f32>
  %w2 = nn.param_ref @w2 : !nn.tensor<[6, 8], f32>
  %l2 = nn.linear %r, %w2, %b2 : !nn.tensor<[B, T, 8], f32>, !nn.tensor<[6, 8], f32>, !nn.tensor<[6], f32>
  %lp = nn.log_softmax %l2 : !nn.tensor<[B, T, 6], f32>
  %ce = nn.cross_entropy %lp, %y from log_probs : !nn.tensor<[B, T, 6], f32>, !nn.tensor<[B, T], i32>
  nn.mark_loss %ce as "ce" normalize per_frame scale 0.5 : !nn.tensor<[B, T], f32>
  nn.return
}
