nn.parameter @w : !nn.tensor<[3, 4], f32>
nn.parameter @v : !nn.tensor<[3, 3], f32>
nn.graph @model(%x: !nn.tensor<[Bm, T, 4], f32>, %y: !nn.tensor<[Bm, T], i32>)
    -> !nn.tensor<[Bm, T, 3], f32> dims [Bm: batch, T: seq(Bm)] {
  %w = nn.param_ref @w : !nn.tensor<[3, 4], f32>
  %h = nn.linear %x, %w : !nn.tensor<[Bm, T, 4], f32>, !nn.tensor<[3, 4], f32>
  %ce = nn.cross_entropy %h, %y from logits : !nn.tensor<[Bm, T, 3], f32>, !nn.tensor<[Bm, T], i32>
  nn.mark_loss %ce as "inner" normalize per_frame : !nn.tensor<[Bm, T], f32>
  nn.return %h : !nn.tensor<[Bm, T, 3], f32>
}
nn.graph @criterion(%x: !nn.tensor<[B, U, 4], f32>, %y: !nn.tensor<[B, U], i32>)
    dims [B: batch, U: seq(B)] {
  %v = nn.param_ref @v : !nn.tensor<[3, 3], f32>
  %h = nn.call @model(%x, %y) : (!nn.tensor<[B, U, 4], f32>, !nn.tensor<[B, U], i32>) -> !nn.tensor<[B, U, 3], f32>
  %o = nn.linear %h, %v : !nn.tensor<[B, U, 3], f32>, !nn.tensor<[3, 3], f32>
  %ce = nn.cross_entropy %o, %y from logits : !nn.tensor<[B, U, 3], f32>, !nn.tensor<[B, U], i32>
  nn.mark_loss %ce as "outer" normalize per_frame : !nn.tensor<[B, U], f32>
  nn.return
}
