// A small Conformer for the spoken-word task (docs/speech-task.md), the
// counterpart of examples/speech/ctc.mlir's BLSTM with the same entries,
// inputs and 17 output classes (0 = the CTC blank, 1 = the word
// separator): convolutional subsampling (time / 2) to 96 channels, then
// two Conformer blocks (Gulati et al., 2020), each
//   feed-forward (layer norm, 96 -> 192, SiLU, 192 -> 96), half-step
//     residual (x + 1/2 FFN(x), nn.scale);
//   multi-head self-attention (4 heads) within each utterance with
//     Transformer-XL relative positions: content and position queries
//     share the query weight with their own biases (u, v), and
//     nn.relative_positions projects the sinusoids of the distances
//     -255 ... 255 (longer distances clip; after subsampling that is
//     5.1 s); residual;
//   convolution module: pointwise conv to 192 and GLU, depthwise conv
//     over time (kernel 15, never reading another utterance or padding),
//     layer norm (statistics of each frame, never of the batch), SiLU,
//     pointwise conv, residual;
//   feed-forward, half-step residual; layer norm.
// The paper's batch norm in the convolution module is a layer norm here,
// so that no statistic crosses utterances.
//
//   @ctc     training: the CTC loss over SpecAugment-masked features;
//            on dev also greedy decoding's character and word error
//            rates (eval_only)
//   @decode  greedy CTC hypotheses, for nn-decode --vocab
//   @decode_beam  the CTC prefix beam search's (beam 8), the same way
//
// Every op runs on each utterance's real frames only: nn-pack-before-loss
// packs the features after SpecAugment, and the subsampling convolution
// and both blocks run on packed rows (test/examples/pack-examples.mlir).

nn.parameter @"subsample.w" : !nn.tensor<[96, 3, 40], f32>
nn.parameter @"subsample.b" : !nn.tensor<[96], f32>
nn.parameter @"block1.ff1.norm.scale" : !nn.tensor<[96], f32>
nn.parameter @"block1.ff1.norm.bias" : !nn.tensor<[96], f32>
nn.parameter @"block1.ff1.w1.w" : !nn.tensor<[192, 96], f32>
nn.parameter @"block1.ff1.w1.b" : !nn.tensor<[192], f32>
nn.parameter @"block1.ff1.w2.w" : !nn.tensor<[96, 192], f32>
nn.parameter @"block1.ff1.w2.b" : !nn.tensor<[96], f32>
nn.parameter @"block1.mhsa.norm.scale" : !nn.tensor<[96], f32>
nn.parameter @"block1.mhsa.norm.bias" : !nn.tensor<[96], f32>
nn.parameter @"block1.mhsa.q.w" : !nn.tensor<[96, 96], f32>
nn.parameter @"block1.mhsa.q.b" : !nn.tensor<[96], f32>
nn.parameter @"block1.mhsa.pos_bias" : !nn.tensor<[96], f32>
nn.parameter @"block1.mhsa.k.w" : !nn.tensor<[96, 96], f32>
nn.parameter @"block1.mhsa.k.b" : !nn.tensor<[96], f32>
nn.parameter @"block1.mhsa.v.w" : !nn.tensor<[96, 96], f32>
nn.parameter @"block1.mhsa.v.b" : !nn.tensor<[96], f32>
nn.parameter @"block1.mhsa.pos.w" : !nn.tensor<[96, 96], f32>
nn.parameter @"block1.mhsa.out.w" : !nn.tensor<[96, 96], f32>
nn.parameter @"block1.mhsa.out.b" : !nn.tensor<[96], f32>
nn.parameter @"block1.conv.norm.scale" : !nn.tensor<[96], f32>
nn.parameter @"block1.conv.norm.bias" : !nn.tensor<[96], f32>
nn.parameter @"block1.conv.pw1.w" : !nn.tensor<[192, 96], f32>
nn.parameter @"block1.conv.pw1.b" : !nn.tensor<[192], f32>
nn.parameter @"block1.conv.dw.w" : !nn.tensor<[96, 15, 1], f32>
nn.parameter @"block1.conv.dw.b" : !nn.tensor<[96], f32>
nn.parameter @"block1.conv.dw.norm.scale" : !nn.tensor<[96], f32>
nn.parameter @"block1.conv.dw.norm.bias" : !nn.tensor<[96], f32>
nn.parameter @"block1.conv.pw2.w" : !nn.tensor<[96, 96], f32>
nn.parameter @"block1.conv.pw2.b" : !nn.tensor<[96], f32>
nn.parameter @"block1.ff2.norm.scale" : !nn.tensor<[96], f32>
nn.parameter @"block1.ff2.norm.bias" : !nn.tensor<[96], f32>
nn.parameter @"block1.ff2.w1.w" : !nn.tensor<[192, 96], f32>
nn.parameter @"block1.ff2.w1.b" : !nn.tensor<[192], f32>
nn.parameter @"block1.ff2.w2.w" : !nn.tensor<[96, 192], f32>
nn.parameter @"block1.ff2.w2.b" : !nn.tensor<[96], f32>
nn.parameter @"block1.final_norm.scale" : !nn.tensor<[96], f32>
nn.parameter @"block1.final_norm.bias" : !nn.tensor<[96], f32>
nn.parameter @"block2.ff1.norm.scale" : !nn.tensor<[96], f32>
nn.parameter @"block2.ff1.norm.bias" : !nn.tensor<[96], f32>
nn.parameter @"block2.ff1.w1.w" : !nn.tensor<[192, 96], f32>
nn.parameter @"block2.ff1.w1.b" : !nn.tensor<[192], f32>
nn.parameter @"block2.ff1.w2.w" : !nn.tensor<[96, 192], f32>
nn.parameter @"block2.ff1.w2.b" : !nn.tensor<[96], f32>
nn.parameter @"block2.mhsa.norm.scale" : !nn.tensor<[96], f32>
nn.parameter @"block2.mhsa.norm.bias" : !nn.tensor<[96], f32>
nn.parameter @"block2.mhsa.q.w" : !nn.tensor<[96, 96], f32>
nn.parameter @"block2.mhsa.q.b" : !nn.tensor<[96], f32>
nn.parameter @"block2.mhsa.pos_bias" : !nn.tensor<[96], f32>
nn.parameter @"block2.mhsa.k.w" : !nn.tensor<[96, 96], f32>
nn.parameter @"block2.mhsa.k.b" : !nn.tensor<[96], f32>
nn.parameter @"block2.mhsa.v.w" : !nn.tensor<[96, 96], f32>
nn.parameter @"block2.mhsa.v.b" : !nn.tensor<[96], f32>
nn.parameter @"block2.mhsa.pos.w" : !nn.tensor<[96, 96], f32>
nn.parameter @"block2.mhsa.out.w" : !nn.tensor<[96, 96], f32>
nn.parameter @"block2.mhsa.out.b" : !nn.tensor<[96], f32>
nn.parameter @"block2.conv.norm.scale" : !nn.tensor<[96], f32>
nn.parameter @"block2.conv.norm.bias" : !nn.tensor<[96], f32>
nn.parameter @"block2.conv.pw1.w" : !nn.tensor<[192, 96], f32>
nn.parameter @"block2.conv.pw1.b" : !nn.tensor<[192], f32>
nn.parameter @"block2.conv.dw.w" : !nn.tensor<[96, 15, 1], f32>
nn.parameter @"block2.conv.dw.b" : !nn.tensor<[96], f32>
nn.parameter @"block2.conv.dw.norm.scale" : !nn.tensor<[96], f32>
nn.parameter @"block2.conv.dw.norm.bias" : !nn.tensor<[96], f32>
nn.parameter @"block2.conv.pw2.w" : !nn.tensor<[96, 96], f32>
nn.parameter @"block2.conv.pw2.b" : !nn.tensor<[96], f32>
nn.parameter @"block2.ff2.norm.scale" : !nn.tensor<[96], f32>
nn.parameter @"block2.ff2.norm.bias" : !nn.tensor<[96], f32>
nn.parameter @"block2.ff2.w1.w" : !nn.tensor<[192, 96], f32>
nn.parameter @"block2.ff2.w1.b" : !nn.tensor<[192], f32>
nn.parameter @"block2.ff2.w2.w" : !nn.tensor<[96, 192], f32>
nn.parameter @"block2.ff2.w2.b" : !nn.tensor<[96], f32>
nn.parameter @"block2.final_norm.scale" : !nn.tensor<[96], f32>
nn.parameter @"block2.final_norm.bias" : !nn.tensor<[96], f32>
nn.parameter @"out.w" : !nn.tensor<[17, 96], f32>
nn.parameter @"out.b" : !nn.tensor<[17], f32>

nn.graph @acoustic(%features: !nn.tensor<[B, T, 40], f32>)
    -> !nn.tensor<[B, T2, 17], f32>
    dims [B: batch, T: seq(B), T2: seq(B) = ceildiv(T, 2)] {
  // Convolutional subsampling: 40 log-mel bins to 96 channels, time / 2.
  %subsample_w = nn.param_ref @"subsample.w" : !nn.tensor<[96, 3, 40], f32>
  %subsample_b = nn.param_ref @"subsample.b" : !nn.tensor<[96], f32>
  %sub = nn.conv1d %features, %subsample_w, %subsample_b stride 2 : (!nn.tensor<[B, T, 40], f32>, !nn.tensor<[96, 3, 40], f32>, !nn.tensor<[96], f32>) -> !nn.tensor<[B, T2, 96], f32>
  %si1 = nn.silu %sub : !nn.tensor<[B, T2, 96], f32>

  // Conformer block 1.
  // block1.ff1: layer norm, 96 -> 192 with SiLU, back to 96; half-step residual
  %block1_ff1_norm_scale = nn.param_ref @"block1.ff1.norm.scale" : !nn.tensor<[96], f32>
  %block1_ff1_norm_bias = nn.param_ref @"block1.ff1.norm.bias" : !nn.tensor<[96], f32>
  %n2 = nn.layer_norm %si1, %block1_ff1_norm_scale, %block1_ff1_norm_bias : !nn.tensor<[B, T2, 96], f32>, !nn.tensor<[96], f32>, !nn.tensor<[96], f32>
  %block1_ff1_w1_w = nn.param_ref @"block1.ff1.w1.w" : !nn.tensor<[192, 96], f32>
  %block1_ff1_w1_b = nn.param_ref @"block1.ff1.w1.b" : !nn.tensor<[192], f32>
  %l3 = nn.linear %n2, %block1_ff1_w1_w, %block1_ff1_w1_b : !nn.tensor<[B, T2, 96], f32>, !nn.tensor<[192, 96], f32>, !nn.tensor<[192], f32>
  %si4 = nn.silu %l3 : !nn.tensor<[B, T2, 192], f32>
  %block1_ff1_w2_w = nn.param_ref @"block1.ff1.w2.w" : !nn.tensor<[96, 192], f32>
  %block1_ff1_w2_b = nn.param_ref @"block1.ff1.w2.b" : !nn.tensor<[96], f32>
  %l5 = nn.linear %si4, %block1_ff1_w2_w, %block1_ff1_w2_b : !nn.tensor<[B, T2, 192], f32>, !nn.tensor<[96, 192], f32>, !nn.tensor<[96], f32>
  %d6 = nn.dropout %l5 rate 1.000000e-01 : !nn.tensor<[B, T2, 96], f32>
  %h7 = nn.scale %d6 by 5.000000e-01 : !nn.tensor<[B, T2, 96], f32>
  %r8 = nn.add %si1, %h7 : !nn.tensor<[B, T2, 96], f32>
  // Self-attention, 4 heads over each utterance's own frames, with
  // relative positions (Transformer-XL): content queries (bias u in q.b),
  // position queries (the same weight, bias v) and the projected
  // sinusoids of the distances -255 ... 255.
  %block1_mhsa_norm_scale = nn.param_ref @"block1.mhsa.norm.scale" : !nn.tensor<[96], f32>
  %block1_mhsa_norm_bias = nn.param_ref @"block1.mhsa.norm.bias" : !nn.tensor<[96], f32>
  %n9 = nn.layer_norm %r8, %block1_mhsa_norm_scale, %block1_mhsa_norm_bias : !nn.tensor<[B, T2, 96], f32>, !nn.tensor<[96], f32>, !nn.tensor<[96], f32>
  %block1_mhsa_q_w = nn.param_ref @"block1.mhsa.q.w" : !nn.tensor<[96, 96], f32>
  %block1_mhsa_q_b = nn.param_ref @"block1.mhsa.q.b" : !nn.tensor<[96], f32>
  %l10 = nn.linear %n9, %block1_mhsa_q_w, %block1_mhsa_q_b : !nn.tensor<[B, T2, 96], f32>, !nn.tensor<[96, 96], f32>, !nn.tensor<[96], f32>
  %block1_mhsa_pos_bias = nn.param_ref @"block1.mhsa.pos_bias" : !nn.tensor<[96], f32>
  %pq11 = nn.linear %n9, %block1_mhsa_q_w, %block1_mhsa_pos_bias : !nn.tensor<[B, T2, 96], f32>, !nn.tensor<[96, 96], f32>, !nn.tensor<[96], f32>
  %block1_mhsa_k_w = nn.param_ref @"block1.mhsa.k.w" : !nn.tensor<[96, 96], f32>
  %block1_mhsa_k_b = nn.param_ref @"block1.mhsa.k.b" : !nn.tensor<[96], f32>
  %l12 = nn.linear %n9, %block1_mhsa_k_w, %block1_mhsa_k_b : !nn.tensor<[B, T2, 96], f32>, !nn.tensor<[96, 96], f32>, !nn.tensor<[96], f32>
  %block1_mhsa_v_w = nn.param_ref @"block1.mhsa.v.w" : !nn.tensor<[96, 96], f32>
  %block1_mhsa_v_b = nn.param_ref @"block1.mhsa.v.b" : !nn.tensor<[96], f32>
  %l13 = nn.linear %n9, %block1_mhsa_v_w, %block1_mhsa_v_b : !nn.tensor<[B, T2, 96], f32>, !nn.tensor<[96, 96], f32>, !nn.tensor<[96], f32>
  %block1_mhsa_pos_w = nn.param_ref @"block1.mhsa.pos.w" : !nn.tensor<[96, 96], f32>
  %pos14 = nn.relative_positions %block1_mhsa_pos_w : !nn.tensor<[96, 96], f32> -> !nn.tensor<[511, 96], f32>
  %a15 = nn.attention %l10, %l12, %l13 relative %pq11, %pos14 heads 4 : !nn.tensor<[B, T2, 96], f32>, !nn.tensor<[B, T2, 96], f32>, !nn.tensor<[B, T2, 96], f32>, !nn.tensor<[B, T2, 96], f32>, !nn.tensor<[511, 96], f32>
  %block1_mhsa_out_w = nn.param_ref @"block1.mhsa.out.w" : !nn.tensor<[96, 96], f32>
  %block1_mhsa_out_b = nn.param_ref @"block1.mhsa.out.b" : !nn.tensor<[96], f32>
  %l16 = nn.linear %a15, %block1_mhsa_out_w, %block1_mhsa_out_b : !nn.tensor<[B, T2, 96], f32>, !nn.tensor<[96, 96], f32>, !nn.tensor<[96], f32>
  %d17 = nn.dropout %l16 rate 1.000000e-01 : !nn.tensor<[B, T2, 96], f32>
  %r18 = nn.add %r8, %d17 : !nn.tensor<[B, T2, 96], f32>
  // Convolution module: pointwise conv and GLU, depthwise conv over
  // time (kernel 15, within each utterance), layer norm, SiLU, pointwise.
  %block1_conv_norm_scale = nn.param_ref @"block1.conv.norm.scale" : !nn.tensor<[96], f32>
  %block1_conv_norm_bias = nn.param_ref @"block1.conv.norm.bias" : !nn.tensor<[96], f32>
  %n19 = nn.layer_norm %r18, %block1_conv_norm_scale, %block1_conv_norm_bias : !nn.tensor<[B, T2, 96], f32>, !nn.tensor<[96], f32>, !nn.tensor<[96], f32>
  %block1_conv_pw1_w = nn.param_ref @"block1.conv.pw1.w" : !nn.tensor<[192, 96], f32>
  %block1_conv_pw1_b = nn.param_ref @"block1.conv.pw1.b" : !nn.tensor<[192], f32>
  %l20 = nn.linear %n19, %block1_conv_pw1_w, %block1_conv_pw1_b : !nn.tensor<[B, T2, 96], f32>, !nn.tensor<[192, 96], f32>, !nn.tensor<[192], f32>
  %g21 = nn.glu %l20 : !nn.tensor<[B, T2, 192], f32>
  %block1_conv_dw_w = nn.param_ref @"block1.conv.dw.w" : !nn.tensor<[96, 15, 1], f32>
  %block1_conv_dw_b = nn.param_ref @"block1.conv.dw.b" : !nn.tensor<[96], f32>
  %c22 = nn.conv1d %g21, %block1_conv_dw_w, %block1_conv_dw_b stride 1 groups 96 : (!nn.tensor<[B, T2, 96], f32>, !nn.tensor<[96, 15, 1], f32>, !nn.tensor<[96], f32>) -> !nn.tensor<[B, T2, 96], f32>
  %block1_conv_dw_norm_scale = nn.param_ref @"block1.conv.dw.norm.scale" : !nn.tensor<[96], f32>
  %block1_conv_dw_norm_bias = nn.param_ref @"block1.conv.dw.norm.bias" : !nn.tensor<[96], f32>
  %n23 = nn.layer_norm %c22, %block1_conv_dw_norm_scale, %block1_conv_dw_norm_bias : !nn.tensor<[B, T2, 96], f32>, !nn.tensor<[96], f32>, !nn.tensor<[96], f32>
  %si24 = nn.silu %n23 : !nn.tensor<[B, T2, 96], f32>
  %block1_conv_pw2_w = nn.param_ref @"block1.conv.pw2.w" : !nn.tensor<[96, 96], f32>
  %block1_conv_pw2_b = nn.param_ref @"block1.conv.pw2.b" : !nn.tensor<[96], f32>
  %l25 = nn.linear %si24, %block1_conv_pw2_w, %block1_conv_pw2_b : !nn.tensor<[B, T2, 96], f32>, !nn.tensor<[96, 96], f32>, !nn.tensor<[96], f32>
  %d26 = nn.dropout %l25 rate 1.000000e-01 : !nn.tensor<[B, T2, 96], f32>
  %r27 = nn.add %r18, %d26 : !nn.tensor<[B, T2, 96], f32>
  // block1.ff2: layer norm, 96 -> 192 with SiLU, back to 96; half-step residual
  %block1_ff2_norm_scale = nn.param_ref @"block1.ff2.norm.scale" : !nn.tensor<[96], f32>
  %block1_ff2_norm_bias = nn.param_ref @"block1.ff2.norm.bias" : !nn.tensor<[96], f32>
  %n28 = nn.layer_norm %r27, %block1_ff2_norm_scale, %block1_ff2_norm_bias : !nn.tensor<[B, T2, 96], f32>, !nn.tensor<[96], f32>, !nn.tensor<[96], f32>
  %block1_ff2_w1_w = nn.param_ref @"block1.ff2.w1.w" : !nn.tensor<[192, 96], f32>
  %block1_ff2_w1_b = nn.param_ref @"block1.ff2.w1.b" : !nn.tensor<[192], f32>
  %l29 = nn.linear %n28, %block1_ff2_w1_w, %block1_ff2_w1_b : !nn.tensor<[B, T2, 96], f32>, !nn.tensor<[192, 96], f32>, !nn.tensor<[192], f32>
  %si30 = nn.silu %l29 : !nn.tensor<[B, T2, 192], f32>
  %block1_ff2_w2_w = nn.param_ref @"block1.ff2.w2.w" : !nn.tensor<[96, 192], f32>
  %block1_ff2_w2_b = nn.param_ref @"block1.ff2.w2.b" : !nn.tensor<[96], f32>
  %l31 = nn.linear %si30, %block1_ff2_w2_w, %block1_ff2_w2_b : !nn.tensor<[B, T2, 192], f32>, !nn.tensor<[96, 192], f32>, !nn.tensor<[96], f32>
  %d32 = nn.dropout %l31 rate 1.000000e-01 : !nn.tensor<[B, T2, 96], f32>
  %h33 = nn.scale %d32 by 5.000000e-01 : !nn.tensor<[B, T2, 96], f32>
  %r34 = nn.add %r27, %h33 : !nn.tensor<[B, T2, 96], f32>
  %block1_final_norm_scale = nn.param_ref @"block1.final_norm.scale" : !nn.tensor<[96], f32>
  %block1_final_norm_bias = nn.param_ref @"block1.final_norm.bias" : !nn.tensor<[96], f32>
  %n35 = nn.layer_norm %r34, %block1_final_norm_scale, %block1_final_norm_bias : !nn.tensor<[B, T2, 96], f32>, !nn.tensor<[96], f32>, !nn.tensor<[96], f32>

  // Conformer block 2.
  // block2.ff1: layer norm, 96 -> 192 with SiLU, back to 96; half-step residual
  %block2_ff1_norm_scale = nn.param_ref @"block2.ff1.norm.scale" : !nn.tensor<[96], f32>
  %block2_ff1_norm_bias = nn.param_ref @"block2.ff1.norm.bias" : !nn.tensor<[96], f32>
  %n36 = nn.layer_norm %n35, %block2_ff1_norm_scale, %block2_ff1_norm_bias : !nn.tensor<[B, T2, 96], f32>, !nn.tensor<[96], f32>, !nn.tensor<[96], f32>
  %block2_ff1_w1_w = nn.param_ref @"block2.ff1.w1.w" : !nn.tensor<[192, 96], f32>
  %block2_ff1_w1_b = nn.param_ref @"block2.ff1.w1.b" : !nn.tensor<[192], f32>
  %l37 = nn.linear %n36, %block2_ff1_w1_w, %block2_ff1_w1_b : !nn.tensor<[B, T2, 96], f32>, !nn.tensor<[192, 96], f32>, !nn.tensor<[192], f32>
  %si38 = nn.silu %l37 : !nn.tensor<[B, T2, 192], f32>
  %block2_ff1_w2_w = nn.param_ref @"block2.ff1.w2.w" : !nn.tensor<[96, 192], f32>
  %block2_ff1_w2_b = nn.param_ref @"block2.ff1.w2.b" : !nn.tensor<[96], f32>
  %l39 = nn.linear %si38, %block2_ff1_w2_w, %block2_ff1_w2_b : !nn.tensor<[B, T2, 192], f32>, !nn.tensor<[96, 192], f32>, !nn.tensor<[96], f32>
  %d40 = nn.dropout %l39 rate 1.000000e-01 : !nn.tensor<[B, T2, 96], f32>
  %h41 = nn.scale %d40 by 5.000000e-01 : !nn.tensor<[B, T2, 96], f32>
  %r42 = nn.add %n35, %h41 : !nn.tensor<[B, T2, 96], f32>
  // Self-attention, 4 heads over each utterance's own frames, with
  // relative positions (Transformer-XL): content queries (bias u in q.b),
  // position queries (the same weight, bias v) and the projected
  // sinusoids of the distances -255 ... 255.
  %block2_mhsa_norm_scale = nn.param_ref @"block2.mhsa.norm.scale" : !nn.tensor<[96], f32>
  %block2_mhsa_norm_bias = nn.param_ref @"block2.mhsa.norm.bias" : !nn.tensor<[96], f32>
  %n43 = nn.layer_norm %r42, %block2_mhsa_norm_scale, %block2_mhsa_norm_bias : !nn.tensor<[B, T2, 96], f32>, !nn.tensor<[96], f32>, !nn.tensor<[96], f32>
  %block2_mhsa_q_w = nn.param_ref @"block2.mhsa.q.w" : !nn.tensor<[96, 96], f32>
  %block2_mhsa_q_b = nn.param_ref @"block2.mhsa.q.b" : !nn.tensor<[96], f32>
  %l44 = nn.linear %n43, %block2_mhsa_q_w, %block2_mhsa_q_b : !nn.tensor<[B, T2, 96], f32>, !nn.tensor<[96, 96], f32>, !nn.tensor<[96], f32>
  %block2_mhsa_pos_bias = nn.param_ref @"block2.mhsa.pos_bias" : !nn.tensor<[96], f32>
  %pq45 = nn.linear %n43, %block2_mhsa_q_w, %block2_mhsa_pos_bias : !nn.tensor<[B, T2, 96], f32>, !nn.tensor<[96, 96], f32>, !nn.tensor<[96], f32>
  %block2_mhsa_k_w = nn.param_ref @"block2.mhsa.k.w" : !nn.tensor<[96, 96], f32>
  %block2_mhsa_k_b = nn.param_ref @"block2.mhsa.k.b" : !nn.tensor<[96], f32>
  %l46 = nn.linear %n43, %block2_mhsa_k_w, %block2_mhsa_k_b : !nn.tensor<[B, T2, 96], f32>, !nn.tensor<[96, 96], f32>, !nn.tensor<[96], f32>
  %block2_mhsa_v_w = nn.param_ref @"block2.mhsa.v.w" : !nn.tensor<[96, 96], f32>
  %block2_mhsa_v_b = nn.param_ref @"block2.mhsa.v.b" : !nn.tensor<[96], f32>
  %l47 = nn.linear %n43, %block2_mhsa_v_w, %block2_mhsa_v_b : !nn.tensor<[B, T2, 96], f32>, !nn.tensor<[96, 96], f32>, !nn.tensor<[96], f32>
  %block2_mhsa_pos_w = nn.param_ref @"block2.mhsa.pos.w" : !nn.tensor<[96, 96], f32>
  %pos48 = nn.relative_positions %block2_mhsa_pos_w : !nn.tensor<[96, 96], f32> -> !nn.tensor<[511, 96], f32>
  %a49 = nn.attention %l44, %l46, %l47 relative %pq45, %pos48 heads 4 : !nn.tensor<[B, T2, 96], f32>, !nn.tensor<[B, T2, 96], f32>, !nn.tensor<[B, T2, 96], f32>, !nn.tensor<[B, T2, 96], f32>, !nn.tensor<[511, 96], f32>
  %block2_mhsa_out_w = nn.param_ref @"block2.mhsa.out.w" : !nn.tensor<[96, 96], f32>
  %block2_mhsa_out_b = nn.param_ref @"block2.mhsa.out.b" : !nn.tensor<[96], f32>
  %l50 = nn.linear %a49, %block2_mhsa_out_w, %block2_mhsa_out_b : !nn.tensor<[B, T2, 96], f32>, !nn.tensor<[96, 96], f32>, !nn.tensor<[96], f32>
  %d51 = nn.dropout %l50 rate 1.000000e-01 : !nn.tensor<[B, T2, 96], f32>
  %r52 = nn.add %r42, %d51 : !nn.tensor<[B, T2, 96], f32>
  // Convolution module: pointwise conv and GLU, depthwise conv over
  // time (kernel 15, within each utterance), layer norm, SiLU, pointwise.
  %block2_conv_norm_scale = nn.param_ref @"block2.conv.norm.scale" : !nn.tensor<[96], f32>
  %block2_conv_norm_bias = nn.param_ref @"block2.conv.norm.bias" : !nn.tensor<[96], f32>
  %n53 = nn.layer_norm %r52, %block2_conv_norm_scale, %block2_conv_norm_bias : !nn.tensor<[B, T2, 96], f32>, !nn.tensor<[96], f32>, !nn.tensor<[96], f32>
  %block2_conv_pw1_w = nn.param_ref @"block2.conv.pw1.w" : !nn.tensor<[192, 96], f32>
  %block2_conv_pw1_b = nn.param_ref @"block2.conv.pw1.b" : !nn.tensor<[192], f32>
  %l54 = nn.linear %n53, %block2_conv_pw1_w, %block2_conv_pw1_b : !nn.tensor<[B, T2, 96], f32>, !nn.tensor<[192, 96], f32>, !nn.tensor<[192], f32>
  %g55 = nn.glu %l54 : !nn.tensor<[B, T2, 192], f32>
  %block2_conv_dw_w = nn.param_ref @"block2.conv.dw.w" : !nn.tensor<[96, 15, 1], f32>
  %block2_conv_dw_b = nn.param_ref @"block2.conv.dw.b" : !nn.tensor<[96], f32>
  %c56 = nn.conv1d %g55, %block2_conv_dw_w, %block2_conv_dw_b stride 1 groups 96 : (!nn.tensor<[B, T2, 96], f32>, !nn.tensor<[96, 15, 1], f32>, !nn.tensor<[96], f32>) -> !nn.tensor<[B, T2, 96], f32>
  %block2_conv_dw_norm_scale = nn.param_ref @"block2.conv.dw.norm.scale" : !nn.tensor<[96], f32>
  %block2_conv_dw_norm_bias = nn.param_ref @"block2.conv.dw.norm.bias" : !nn.tensor<[96], f32>
  %n57 = nn.layer_norm %c56, %block2_conv_dw_norm_scale, %block2_conv_dw_norm_bias : !nn.tensor<[B, T2, 96], f32>, !nn.tensor<[96], f32>, !nn.tensor<[96], f32>
  %si58 = nn.silu %n57 : !nn.tensor<[B, T2, 96], f32>
  %block2_conv_pw2_w = nn.param_ref @"block2.conv.pw2.w" : !nn.tensor<[96, 96], f32>
  %block2_conv_pw2_b = nn.param_ref @"block2.conv.pw2.b" : !nn.tensor<[96], f32>
  %l59 = nn.linear %si58, %block2_conv_pw2_w, %block2_conv_pw2_b : !nn.tensor<[B, T2, 96], f32>, !nn.tensor<[96, 96], f32>, !nn.tensor<[96], f32>
  %d60 = nn.dropout %l59 rate 1.000000e-01 : !nn.tensor<[B, T2, 96], f32>
  %r61 = nn.add %r52, %d60 : !nn.tensor<[B, T2, 96], f32>
  // block2.ff2: layer norm, 96 -> 192 with SiLU, back to 96; half-step residual
  %block2_ff2_norm_scale = nn.param_ref @"block2.ff2.norm.scale" : !nn.tensor<[96], f32>
  %block2_ff2_norm_bias = nn.param_ref @"block2.ff2.norm.bias" : !nn.tensor<[96], f32>
  %n62 = nn.layer_norm %r61, %block2_ff2_norm_scale, %block2_ff2_norm_bias : !nn.tensor<[B, T2, 96], f32>, !nn.tensor<[96], f32>, !nn.tensor<[96], f32>
  %block2_ff2_w1_w = nn.param_ref @"block2.ff2.w1.w" : !nn.tensor<[192, 96], f32>
  %block2_ff2_w1_b = nn.param_ref @"block2.ff2.w1.b" : !nn.tensor<[192], f32>
  %l63 = nn.linear %n62, %block2_ff2_w1_w, %block2_ff2_w1_b : !nn.tensor<[B, T2, 96], f32>, !nn.tensor<[192, 96], f32>, !nn.tensor<[192], f32>
  %si64 = nn.silu %l63 : !nn.tensor<[B, T2, 192], f32>
  %block2_ff2_w2_w = nn.param_ref @"block2.ff2.w2.w" : !nn.tensor<[96, 192], f32>
  %block2_ff2_w2_b = nn.param_ref @"block2.ff2.w2.b" : !nn.tensor<[96], f32>
  %l65 = nn.linear %si64, %block2_ff2_w2_w, %block2_ff2_w2_b : !nn.tensor<[B, T2, 192], f32>, !nn.tensor<[96, 192], f32>, !nn.tensor<[96], f32>
  %d66 = nn.dropout %l65 rate 1.000000e-01 : !nn.tensor<[B, T2, 96], f32>
  %h67 = nn.scale %d66 by 5.000000e-01 : !nn.tensor<[B, T2, 96], f32>
  %r68 = nn.add %r61, %h67 : !nn.tensor<[B, T2, 96], f32>
  %block2_final_norm_scale = nn.param_ref @"block2.final_norm.scale" : !nn.tensor<[96], f32>
  %block2_final_norm_bias = nn.param_ref @"block2.final_norm.bias" : !nn.tensor<[96], f32>
  %n69 = nn.layer_norm %r68, %block2_final_norm_scale, %block2_final_norm_bias : !nn.tensor<[B, T2, 96], f32>, !nn.tensor<[96], f32>, !nn.tensor<[96], f32>

  %out_w = nn.param_ref @"out.w" : !nn.tensor<[17, 96], f32>
  %out_b = nn.param_ref @"out.b" : !nn.tensor<[17], f32>
  %l70 = nn.linear %n69, %out_w, %out_b : !nn.tensor<[B, T2, 96], f32>, !nn.tensor<[17, 96], f32>, !nn.tensor<[17], f32>
  nn.return %l70 : !nn.tensor<[B, T2, 17], f32>
}

nn.graph @ctc(%features: !nn.tensor<[B, T, 40], f32>,
              %labels: !nn.tensor<[B, U], i32>)
    dims [B: batch, T: seq(B), U: seq(B), T2: seq(B) = ceildiv(T, 2),
          Y: seq(B) computed] {
  // SpecAugment while training (the identity on dev), as in ctc.mlir.
  %masked = nn.spec_augment %features freq_masks 2 freq_width 8 time_masks 2
      time_width 10 time_ratio 2.000000e-01 : !nn.tensor<[B, T, 40], f32>
  %logits = nn.call @acoustic(%masked) : (!nn.tensor<[B, T, 40], f32>) -> !nn.tensor<[B, T2, 17], f32>
  %ctc = nn.ctc_loss %logits, %labels from logits blank 0
      : !nn.tensor<[B, T2, 17], f32>, !nn.tensor<[B, U], i32>
  nn.mark_loss %ctc as "ctc" normalize per_sequence : !nn.tensor<[B], f32>
  %hyp, %score = nn.ctc_greedy_decode %logits from logits blank 0
      : !nn.tensor<[B, T2, 17], f32> -> !nn.tensor<[B, Y], i32>, !nn.tensor<[B], f32>
  %edits, %ref_len, %counts = nn.edit_distance %hyp, %labels
      : !nn.tensor<[B, Y], i32>, !nn.tensor<[B, U], i32>
  nn.mark_loss %edits, %ref_len as "cer" normalize custom as_error eval_only
      : !nn.tensor<[B], f32>, !nn.tensor<[B], f32>
  %word_edits, %words, %word_counts = nn.edit_distance %hyp, %labels words separator 1
      : !nn.tensor<[B, Y], i32>, !nn.tensor<[B, U], i32>
  nn.mark_loss %word_edits, %words as "wer" normalize custom as_error eval_only
      : !nn.tensor<[B], f32>, !nn.tensor<[B], f32>
  nn.return
}

nn.graph @decode(%features: !nn.tensor<[B, T, 40], f32>)
    -> (!nn.tensor<[B, Y], i32>, !nn.tensor<[B], f32>)
    dims [B: batch, T: seq(B), T2: seq(B) = ceildiv(T, 2), Y: seq(B) computed] {
  %logits = nn.call @acoustic(%features) : (!nn.tensor<[B, T, 40], f32>) -> !nn.tensor<[B, T2, 17], f32>
  %hyp, %score = nn.ctc_greedy_decode %logits from logits blank 0
      : !nn.tensor<[B, T2, 17], f32> -> !nn.tensor<[B, Y], i32>, !nn.tensor<[B], f32>
  nn.return %hyp, %score : !nn.tensor<[B, Y], i32>, !nn.tensor<[B], f32>
}

// The CTC prefix beam search (`nn-decode --entry decode_beam`): 8 prefixes
// kept per frame, the paths that collapse to the same prefix summed.
nn.graph @decode_beam(%features: !nn.tensor<[B, T, 40], f32>)
    -> (!nn.tensor<[B, Y], i32>, !nn.tensor<[B], f32>)
    dims [B: batch, T: seq(B), T2: seq(B) = ceildiv(T, 2), Y: seq(B) computed] {
  %logits = nn.call @acoustic(%features) : (!nn.tensor<[B, T, 40], f32>) -> !nn.tensor<[B, T2, 17], f32>
  %hyp, %score = nn.ctc_beam_search %logits from logits blank 0 beam 8 merge sum
      : !nn.tensor<[B, T2, 17], f32> -> !nn.tensor<[B, Y], i32>, !nn.tensor<[B], f32>
  nn.return %hyp, %score : !nn.tensor<[B, Y], i32>, !nn.tensor<[B], f32>
}
