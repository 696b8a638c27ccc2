nn.graph @ce_after_lstm(%x: !nn.tensor<[B, T, 4], f32>, %y: !nn.tensor<[B, T], i32>,
                        %wi: !nn.tensor<[16, 4], f32>, %wh: !nn.tensor<[16, 4], f32>, %b: !nn.tensor<[16], f32>)
    dims [B: batch, T: seq(B)] {
  %h = nn.lstm forward %x, %wi, %wh, %b : !nn.tensor<[B, T, 4], f32>, !nn.tensor<[16, 4], f32>, !nn.tensor<[16, 4], f32>, !nn.tensor<[16], f32>
  %ce = nn.cross_entropy %h, %y from logits : !nn.tensor<[B, T, 4], f32>, !nn.tensor<[B, T], i32>
  nn.mark_loss %ce as "ce" normalize per_frame : !nn.tensor<[B, T], f32>
  nn.return
}
