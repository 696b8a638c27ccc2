nn.graph @downsampled(%x: !nn.tensor<[B, T, 4], f32>, %y: !nn.tensor<[B, T2], i32>, %w: !nn.tensor<[4, 3, 4], f32>)
    dims [B: batch, T: seq(B), T2: seq(B) = ceildiv(T, 2)] {
  %c = nn.conv1d %x, %w stride 2 : (!nn.tensor<[B, T, 4], f32>, !nn.tensor<[4, 3, 4], f32>) -> !nn.tensor<[B, T2, 4], f32>
  %r = nn.relu %c : !nn.tensor<[B, T2, 4], f32>
  %ce = nn.cross_entropy %r, %y from logits : !nn.tensor<[B, T2, 4], f32>, !nn.tensor<[B, T2], i32>
  nn.mark_loss %ce as "ce" normalize per_frame : !nn.tensor<[B, T2], f32>
  nn.return
}
