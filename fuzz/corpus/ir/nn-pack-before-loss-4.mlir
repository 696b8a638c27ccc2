nn.graph @ctc_untouched(%x: !nn.tensor<[B, T, 4], f32>, %labels: !nn.tensor<[B, U], i32>, %w: !nn.tensor<[5, 4], f32>)
    dims [B: batch, T: seq(B), U: seq(B)] {
  %l = nn.linear %x, %w : !nn.tensor<[B, T, 4], f32>, !nn.tensor<[5, 4], f32>
  %c = nn.ctc_loss %l, %labels from logits blank 0 : !nn.tensor<[B, T, 5], f32>, !nn.tensor<[B, U], i32>
  nn.mark_loss %c as "ctc" normalize per_sequence : !nn.tensor<[B], f32>
  nn.return
}
