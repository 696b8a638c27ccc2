// Example 2: a convolutional encoder that downsamples time by 2 and then by
// 3, and a separate loss graph that calls it (decoupled, fairseq-criterion
// style). The model graph knows nothing of losses; @criterion binds the
// model's dims to its own through the call and declares the losses.
//
//   nn-opt examples/conv_encoder_decoupled_loss.mlir

nn.parameter @"conv1.w" : !nn.tensor<[256, 3, 80], f32>
nn.parameter @"conv1.b" : !nn.tensor<[256], f32>
nn.parameter @"conv2.w" : !nn.tensor<[256, 3, 256], f32>
nn.parameter @"conv2.b" : !nn.tensor<[256], f32>
nn.parameter @"norm.scale" : !nn.tensor<[256], f32>
nn.parameter @"norm.bias" : !nn.tensor<[256], f32>
nn.parameter @"out.w" : !nn.tensor<[128, 256], f32>
nn.parameter @"out.b" : !nn.tensor<[128], f32>

nn.graph @conv_encoder(%features: !nn.tensor<[B, T, 80], f32>)
    -> !nn.tensor<[B, T6, 128], f32>
    dims [B: batch, T: seq(B), T2: seq(B) = ceildiv(T, 2),
          T6: seq(B) = ceildiv(T2, 3)] {
  %w1 = nn.param_ref @"conv1.w" : !nn.tensor<[256, 3, 80], f32>
  %b1 = nn.param_ref @"conv1.b" : !nn.tensor<[256], f32>
  %c1 = nn.conv1d %features, %w1, %b1 stride 2
      : (!nn.tensor<[B, T, 80], f32>, !nn.tensor<[256, 3, 80], f32>,
         !nn.tensor<[256], f32>) -> !nn.tensor<[B, T2, 256], f32>
  %r1 = nn.relu %c1 : !nn.tensor<[B, T2, 256], f32>
  %w2 = nn.param_ref @"conv2.w" : !nn.tensor<[256, 3, 256], f32>
  %b2 = nn.param_ref @"conv2.b" : !nn.tensor<[256], f32>
  %c2 = nn.conv1d %r1, %w2, %b2 stride 1
      : (!nn.tensor<[B, T2, 256], f32>, !nn.tensor<[256, 3, 256], f32>,
         !nn.tensor<[256], f32>) -> !nn.tensor<[B, T2, 256], f32>
  %p = nn.pool max %c2 window 3 stride 3
      : (!nn.tensor<[B, T2, 256], f32>) -> !nn.tensor<[B, T6, 256], f32>
  %g = nn.param_ref @"norm.scale" : !nn.tensor<[256], f32>
  %gb = nn.param_ref @"norm.bias" : !nn.tensor<[256], f32>
  %n = nn.layer_norm %p, %g, %gb
      : !nn.tensor<[B, T6, 256], f32>, !nn.tensor<[256], f32>,
        !nn.tensor<[256], f32>
  %wo = nn.param_ref @"out.w" : !nn.tensor<[128, 256], f32>
  %bo = nn.param_ref @"out.b" : !nn.tensor<[128], f32>
  %logits = nn.linear %n, %wo, %bo
      : !nn.tensor<[B, T6, 256], f32>, !nn.tensor<[128, 256], f32>,
        !nn.tensor<[128], f32>
  nn.return %logits : !nn.tensor<[B, T6, 128], f32>
}

// The criterion: frame-wise cross entropy on the downsampled axis against
// a downsampled alignment, plus CTC normalized by the number of labels.
nn.graph @criterion(%feat: !nn.tensor<[Bc, Tc, 80], f32>,
                    %targets: !nn.tensor<[Bc, Tc6], i32>,
                    %labels: !nn.tensor<[Bc, Uc], i32>,
                    %label_counts: !nn.tensor<[Bc], f32>)
    dims [Bc: batch, Tc: seq(Bc), Tc2: seq(Bc) = ceildiv(Tc, 2),
          Tc6: seq(Bc) = ceildiv(Tc2, 3), Uc: seq(Bc)] {
  %logits = nn.call @conv_encoder(%feat) : (!nn.tensor<[Bc, Tc, 80], f32>)
      -> !nn.tensor<[Bc, Tc6, 128], f32>
  %ce = nn.cross_entropy %logits, %targets from logits
      : !nn.tensor<[Bc, Tc6, 128], f32>, !nn.tensor<[Bc, Tc6], i32>
  nn.mark_loss %ce as "ce" normalize per_frame : !nn.tensor<[Bc, Tc6], f32>
  %ctc = nn.ctc_loss %logits, %labels from logits blank 0 zero_infinity
      : !nn.tensor<[Bc, Tc6, 128], f32>, !nn.tensor<[Bc, Uc], i32>
  nn.mark_loss %ctc, %label_counts as "ctc" normalize custom
      : !nn.tensor<[Bc], f32>, !nn.tensor<[Bc], f32>
  nn.return
}
