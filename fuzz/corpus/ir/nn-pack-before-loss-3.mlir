nn.graph @on_inputs(%x: !nn.tensor<[B, T, 4], f32>, %y: !nn.tensor<[B, T], i32>, %w: !nn.tensor<[3, 4], f32>)
    dims [B: batch, T: seq(B)] {
  %l = nn.linear %x, %w : !nn.tensor<[B, T, 4], f32>, !nn.tensor<[3, 4], f32>
  %ce = nn.cross_entropy %l, %y from logits : !nn.tensor<[B, T, 3], f32>, !nn.tensor<[B, T], i32>
  nn.mark_loss %ce as "ce" normalize per_frame : !nn.tensor<[B, T], f32>
  nn.return
}
