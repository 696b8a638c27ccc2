nn.graph @no_sequence_axes(%x: !nn.tensor<[B, 4], f32>, %y: !nn.tensor<[B], i32>, %w: !nn.tensor<[3, 4], f32>)
    dims [B: batch] {
  %l = nn.linear %x, %w : !nn.tensor<[B, 4], f32>, !nn.tensor<[3, 4], f32>
  %ce = nn.cross_entropy %l, %y from logits : !nn.tensor<[B, 3], f32>, !nn.tensor<[B], i32>
  nn.mark_loss %ce as "ce" normalize per_sequence : !nn.tensor<[B], f32>
  nn.return
}
