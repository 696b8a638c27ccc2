nn.parameter @w : !nn.tensor<[4, 4], f32>
nn.graph @shared(%x: !nn.tensor<[B, 4], f32>, %y: !nn.tensor<[B], i32>)
    dims [B: batch] {
  %w = nn.param_ref @w : !nn.tensor<[4, 4], f32>
  %h = nn.linear %x, %w : !nn.tensor<[B, 4], f32>, !nn.tensor<[4, 4], f32>
  %h2 = nn.linear %h, %w : !nn.tensor<[B, 4], f32>, !nn.tensor<[4, 4], f32>
  %ce = nn.cross_entropy %h2, %y from logits : !nn.tensor<[B, 4], f32>, !nn.tensor<[B], i32>
  nn.mark_loss %ce as "ce" normalize sum {use_normalized_loss = false} : !nn.tensor<[B], f32>
  %err = nn.cross_entropy %h, %y from logits : !nn.tensor<[B, 4], f32>, !nn.tensor<[B], i32>
  nn.mark_loss %err as "err" normalize sum as_error : !nn.tensor<[B], f32>
  nn.return
}
