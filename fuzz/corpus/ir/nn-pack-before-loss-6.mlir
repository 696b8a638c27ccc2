nn.graph @model(%x: !nn.tensor<[B, T, 4], f32>, %w: !nn.tensor<[3, 4], f32>) -> !nn.tensor<[B, T, 3], f32>
    dims [B: batch, T: seq(B)] {
  %l = nn.linear %x, %w : !nn.tensor<[B, T, 4], f32>, !nn.tensor<[3, 4], f32>
  nn.return %l : !nn.tensor<[B, T, 3], f32>
}
nn.graph @criterion(%x: !nn.tensor<[C, S, 4], f32>, %y: !nn.tensor<[C, S], i32>, %w: !nn.tensor<[3, 4], f32>)
    dims [C: batch, S: seq(C)] {
  %logits = nn.call @model(%x, %w) : (!nn.tensor<[C, S, 4], f32>, !nn.tensor<[3, 4], f32>) -> !nn.tensor<[C, S, 3], f32>
  %ce = nn.cross_entropy %logits, %y from logits : !nn.tensor<[C, S, 3], f32>, !nn.tensor<[C, S], i32>
  nn.mark_loss %ce as "ce" normalize per_frame : !nn.tensor<[C, S], f32>
  nn.return
}
