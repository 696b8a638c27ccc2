// Example 1: a two-layer BLSTM acoustic model over 80-dim features with a
// frame-wise cross-entropy loss on the output layer and an auxiliary CTC
// loss on the encoder (1000 frame classes, 500 labels + blank).
//
//   nn-opt examples/blstm_ce_ctc.mlir

nn.parameter @"lstm1.w_ih" : !nn.tensor<[2, 1024, 80], f32>
nn.parameter @"lstm1.w_hh" : !nn.tensor<[2, 1024, 256], f32>
nn.parameter @"lstm1.b" : !nn.tensor<[2, 1024], f32>
nn.parameter @"lstm2.w_ih" : !nn.tensor<[2, 1024, 512], f32>
nn.parameter @"lstm2.w_hh" : !nn.tensor<[2, 1024, 256], f32>
nn.parameter @"lstm2.b" : !nn.tensor<[2, 1024], f32>
nn.parameter @"out.w" : !nn.tensor<[1000, 512], f32>
nn.parameter @"out.b" : !nn.tensor<[1000], f32>
nn.parameter @"ctc.w" : !nn.tensor<[501, 512], f32>
nn.parameter @"ctc.b" : !nn.tensor<[501], f32>

nn.graph @blstm_am(%features: !nn.tensor<[B, T, 80], f32>,
                   %frame_labels: !nn.tensor<[B, T], i32>,
                   %labels: !nn.tensor<[B, U], i32>)
    -> !nn.tensor<[B, T, 1000], f32>
    dims [B: batch, T: seq(B), U: seq(B)] {
  %w1i = nn.param_ref @"lstm1.w_ih" : !nn.tensor<[2, 1024, 80], f32>
  %w1h = nn.param_ref @"lstm1.w_hh" : !nn.tensor<[2, 1024, 256], f32>
  %b1 = nn.param_ref @"lstm1.b" : !nn.tensor<[2, 1024], f32>
  %h1 = nn.lstm bidirectional %features, %w1i, %w1h, %b1
      : !nn.tensor<[B, T, 80], f32>, !nn.tensor<[2, 1024, 80], f32>,
        !nn.tensor<[2, 1024, 256], f32>, !nn.tensor<[2, 1024], f32>
  %d1 = nn.dropout %h1 rate 1.000000e-01 : !nn.tensor<[B, T, 512], f32>
  %w2i = nn.param_ref @"lstm2.w_ih" : !nn.tensor<[2, 1024, 512], f32>
  %w2h = nn.param_ref @"lstm2.w_hh" : !nn.tensor<[2, 1024, 256], f32>
  %b2 = nn.param_ref @"lstm2.b" : !nn.tensor<[2, 1024], f32>
  %h2 = nn.lstm bidirectional %d1, %w2i, %w2h, %b2
      : !nn.tensor<[B, T, 512], f32>, !nn.tensor<[2, 1024, 512], f32>,
        !nn.tensor<[2, 1024, 256], f32>, !nn.tensor<[2, 1024], f32>

  // Frame-wise output layer and cross entropy against a frame alignment.
  %wo = nn.param_ref @"out.w" : !nn.tensor<[1000, 512], f32>
  %bo = nn.param_ref @"out.b" : !nn.tensor<[1000], f32>
  %logits = nn.linear %h2, %wo, %bo
      : !nn.tensor<[B, T, 512], f32>, !nn.tensor<[1000, 512], f32>,
        !nn.tensor<[1000], f32>
  %ce = nn.cross_entropy %logits, %frame_labels from logits label_smoothing 1.000000e-01
      : !nn.tensor<[B, T, 1000], f32>, !nn.tensor<[B, T], i32>
  nn.mark_loss %ce as "ce" normalize per_frame : !nn.tensor<[B, T], f32>

  // Auxiliary CTC on the encoder, normalized per sequence, half weight.
  %wc = nn.param_ref @"ctc.w" : !nn.tensor<[501, 512], f32>
  %bc = nn.param_ref @"ctc.b" : !nn.tensor<[501], f32>
  %ctc_logits = nn.linear %h2, %wc, %bc
      : !nn.tensor<[B, T, 512], f32>, !nn.tensor<[501, 512], f32>,
        !nn.tensor<[501], f32>
  %ctc = nn.ctc_loss %ctc_logits, %labels from logits blank 500
      : !nn.tensor<[B, T, 501], f32>, !nn.tensor<[B, U], i32>
  nn.mark_loss %ctc as "ctc" normalize per_sequence scale 5.000000e-01
      : !nn.tensor<[B], f32>

  nn.return %logits : !nn.tensor<[B, T, 1000], f32>
}
