nn.graph @model(%x: !nn.tensor<[Bm, T, 3], f32>) -> !nn.tensor<[Bm, T, 3], f32>
    dims [Bm: batch, T: seq(Bm)] {
  %a = nn.dropout %x rate 1.000000e-01 : !nn.tensor<[Bm, T, 3], f32>
  %b = nn.dropout %a rate 5.000000e-01 : !nn.tensor<[Bm, T, 3], f32>
  %c = nn.dropout %b rate 0.000000e+00 : !nn.tensor<[Bm, T, 3], f32>
  nn.return %c : !nn.tensor<[Bm, T, 3], f32>
}
nn.graph @loss(%x: !nn.tensor<[B, U, 3], f32>, %y: !nn.tensor<[B, U], i32>)
    dims [B: batch, U: seq(B)] {
  %h = nn.call @model(%x) : (!nn.tensor<[B, U, 3], f32>) -> !nn.tensor<[B, U, 3], f32>
  %d = nn.dropout %h rate 2.500000e-01 : !nn.tensor<[B, U, 3], f32>
  %ce = nn.cross_entropy %d, %y from logits : !nn.tensor<[B, U, 3], f32>, !nn.tensor<[B, U], i32>
  nn.mark_loss %ce as "ce" normalize per_frame : !nn.tensor<[B, U], f32>
  nn.return
}
