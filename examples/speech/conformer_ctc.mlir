// A small Conformer for the spoken-word task (docs/speech-task.md), the
// counterpart of examples/speech/ctc.mlir's BLSTM with the same entries,
// inputs and 17 output classes (0 = the CTC blank, 1 = the word
// separator): convolutional subsampling (time / 2) to 96 channels, then
// two Conformer blocks (Gulati et al., 2020), each
//   feed-forward (layer norm, 96 -> 192, SiLU, 192 -> 96), residual;
//   multi-head self-attention (4 heads) within each utterance, residual;
//   convolution module: pointwise conv to 192 and GLU, depthwise conv
//     over time (kernel 15, never reading another utterance or padding),
//     layer norm (statistics of each frame, never of the batch), SiLU,
//     pointwise conv, residual;
//   feed-forward, residual; layer norm.
// Two departures from the paper: the feed-forward modules' half-step
// residual factor 1/2 is left to their second linear layer (the same
// functions; only the initialization differs by that factor), and the
// attention's queries and keys take rotary position embeddings
// (nn.rotary, by each frame's place in its own utterance) instead of
// Transformer-XL relative positions.
//
//   @ctc     training: the CTC loss over SpecAugment-masked features;
//            on dev also greedy decoding's character and word error
//            rates (eval_only)
//   @decode  greedy CTC hypotheses, for nn-decode --vocab
//
// Every op runs on each utterance's real frames only: nn-pack-before-loss
// packs the subsampled features and both blocks run on packed rows (the
// strided subsampling convolution stays padded;
// test/examples/pack-examples.mlir).

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
nn.parameter @"block1.mhsa.k.w" : !nn.tensor<[96, 96], f32>
nn.parameter @"block1.mhsa.k.b" : !nn.tensor<[96], f32>
nn.parameter @"block1.mhsa.v.w" : !nn.tensor<[96, 96], f32>
nn.parameter @"block1.mhsa.v.b" : !nn.tensor<[96], f32>
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
nn.parameter @"block2.mhsa.k.w" : !nn.tensor<[96, 96], f32>
nn.parameter @"block2.mhsa.k.b" : !nn.tensor<[96], f32>
nn.parameter @"block2.mhsa.v.w" : !nn.tensor<[96, 96], f32>
nn.parameter @"block2.mhsa.v.b" : !nn.tensor<[96], f32>
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
  %r7 = nn.add %si1, %d6 : !nn.tensor<[B, T2, 96], f32>
  // Self-attention, 4 heads over each utterance's own frames, queries and
  // keys turned by their frames' places (rotary position embeddings).
  %block1_mhsa_norm_scale = nn.param_ref @"block1.mhsa.norm.scale" : !nn.tensor<[96], f32>
  %block1_mhsa_norm_bias = nn.param_ref @"block1.mhsa.norm.bias" : !nn.tensor<[96], f32>
  %n8 = nn.layer_norm %r7, %block1_mhsa_norm_scale, %block1_mhsa_norm_bias : !nn.tensor<[B, T2, 96], f32>, !nn.tensor<[96], f32>, !nn.tensor<[96], f32>
  %block1_mhsa_q_w = nn.param_ref @"block1.mhsa.q.w" : !nn.tensor<[96, 96], f32>
  %block1_mhsa_q_b = nn.param_ref @"block1.mhsa.q.b" : !nn.tensor<[96], f32>
  %l9 = nn.linear %n8, %block1_mhsa_q_w, %block1_mhsa_q_b : !nn.tensor<[B, T2, 96], f32>, !nn.tensor<[96, 96], f32>, !nn.tensor<[96], f32>
  %block1_mhsa_k_w = nn.param_ref @"block1.mhsa.k.w" : !nn.tensor<[96, 96], f32>
  %block1_mhsa_k_b = nn.param_ref @"block1.mhsa.k.b" : !nn.tensor<[96], f32>
  %l10 = nn.linear %n8, %block1_mhsa_k_w, %block1_mhsa_k_b : !nn.tensor<[B, T2, 96], f32>, !nn.tensor<[96, 96], f32>, !nn.tensor<[96], f32>
  %block1_mhsa_v_w = nn.param_ref @"block1.mhsa.v.w" : !nn.tensor<[96, 96], f32>
  %block1_mhsa_v_b = nn.param_ref @"block1.mhsa.v.b" : !nn.tensor<[96], f32>
  %l11 = nn.linear %n8, %block1_mhsa_v_w, %block1_mhsa_v_b : !nn.tensor<[B, T2, 96], f32>, !nn.tensor<[96, 96], f32>, !nn.tensor<[96], f32>
  %qr12 = nn.rotary %l9 heads 4 : !nn.tensor<[B, T2, 96], f32>
  %kr13 = nn.rotary %l10 heads 4 : !nn.tensor<[B, T2, 96], f32>
  %a14 = nn.attention %qr12, %kr13, %l11 heads 4 : !nn.tensor<[B, T2, 96], f32>, !nn.tensor<[B, T2, 96], f32>, !nn.tensor<[B, T2, 96], f32>
  %block1_mhsa_out_w = nn.param_ref @"block1.mhsa.out.w" : !nn.tensor<[96, 96], f32>
  %block1_mhsa_out_b = nn.param_ref @"block1.mhsa.out.b" : !nn.tensor<[96], f32>
  %l15 = nn.linear %a14, %block1_mhsa_out_w, %block1_mhsa_out_b : !nn.tensor<[B, T2, 96], f32>, !nn.tensor<[96, 96], f32>, !nn.tensor<[96], f32>
  %d16 = nn.dropout %l15 rate 1.000000e-01 : !nn.tensor<[B, T2, 96], f32>
  %r17 = nn.add %r7, %d16 : !nn.tensor<[B, T2, 96], f32>
  // Convolution module: pointwise conv and GLU, depthwise conv over
  // time (kernel 15, within each utterance), layer norm, SiLU, pointwise.
  %block1_conv_norm_scale = nn.param_ref @"block1.conv.norm.scale" : !nn.tensor<[96], f32>
  %block1_conv_norm_bias = nn.param_ref @"block1.conv.norm.bias" : !nn.tensor<[96], f32>
  %n18 = nn.layer_norm %r17, %block1_conv_norm_scale, %block1_conv_norm_bias : !nn.tensor<[B, T2, 96], f32>, !nn.tensor<[96], f32>, !nn.tensor<[96], f32>
  %block1_conv_pw1_w = nn.param_ref @"block1.conv.pw1.w" : !nn.tensor<[192, 96], f32>
  %block1_conv_pw1_b = nn.param_ref @"block1.conv.pw1.b" : !nn.tensor<[192], f32>
  %l19 = nn.linear %n18, %block1_conv_pw1_w, %block1_conv_pw1_b : !nn.tensor<[B, T2, 96], f32>, !nn.tensor<[192, 96], f32>, !nn.tensor<[192], f32>
  %g20 = nn.glu %l19 : !nn.tensor<[B, T2, 192], f32>
  %block1_conv_dw_w = nn.param_ref @"block1.conv.dw.w" : !nn.tensor<[96, 15, 1], f32>
  %block1_conv_dw_b = nn.param_ref @"block1.conv.dw.b" : !nn.tensor<[96], f32>
  %c21 = nn.conv1d %g20, %block1_conv_dw_w, %block1_conv_dw_b stride 1 groups 96 : (!nn.tensor<[B, T2, 96], f32>, !nn.tensor<[96, 15, 1], f32>, !nn.tensor<[96], f32>) -> !nn.tensor<[B, T2, 96], f32>
  %block1_conv_dw_norm_scale = nn.param_ref @"block1.conv.dw.norm.scale" : !nn.tensor<[96], f32>
  %block1_conv_dw_norm_bias = nn.param_ref @"block1.conv.dw.norm.bias" : !nn.tensor<[96], f32>
  %n22 = nn.layer_norm %c21, %block1_conv_dw_norm_scale, %block1_conv_dw_norm_bias : !nn.tensor<[B, T2, 96], f32>, !nn.tensor<[96], f32>, !nn.tensor<[96], f32>
  %si23 = nn.silu %n22 : !nn.tensor<[B, T2, 96], f32>
  %block1_conv_pw2_w = nn.param_ref @"block1.conv.pw2.w" : !nn.tensor<[96, 96], f32>
  %block1_conv_pw2_b = nn.param_ref @"block1.conv.pw2.b" : !nn.tensor<[96], f32>
  %l24 = nn.linear %si23, %block1_conv_pw2_w, %block1_conv_pw2_b : !nn.tensor<[B, T2, 96], f32>, !nn.tensor<[96, 96], f32>, !nn.tensor<[96], f32>
  %d25 = nn.dropout %l24 rate 1.000000e-01 : !nn.tensor<[B, T2, 96], f32>
  %r26 = nn.add %r17, %d25 : !nn.tensor<[B, T2, 96], f32>
  // block1.ff2: layer norm, 96 -> 192 with SiLU, back to 96; half-step residual
  %block1_ff2_norm_scale = nn.param_ref @"block1.ff2.norm.scale" : !nn.tensor<[96], f32>
  %block1_ff2_norm_bias = nn.param_ref @"block1.ff2.norm.bias" : !nn.tensor<[96], f32>
  %n27 = nn.layer_norm %r26, %block1_ff2_norm_scale, %block1_ff2_norm_bias : !nn.tensor<[B, T2, 96], f32>, !nn.tensor<[96], f32>, !nn.tensor<[96], f32>
  %block1_ff2_w1_w = nn.param_ref @"block1.ff2.w1.w" : !nn.tensor<[192, 96], f32>
  %block1_ff2_w1_b = nn.param_ref @"block1.ff2.w1.b" : !nn.tensor<[192], f32>
  %l28 = nn.linear %n27, %block1_ff2_w1_w, %block1_ff2_w1_b : !nn.tensor<[B, T2, 96], f32>, !nn.tensor<[192, 96], f32>, !nn.tensor<[192], f32>
  %si29 = nn.silu %l28 : !nn.tensor<[B, T2, 192], f32>
  %block1_ff2_w2_w = nn.param_ref @"block1.ff2.w2.w" : !nn.tensor<[96, 192], f32>
  %block1_ff2_w2_b = nn.param_ref @"block1.ff2.w2.b" : !nn.tensor<[96], f32>
  %l30 = nn.linear %si29, %block1_ff2_w2_w, %block1_ff2_w2_b : !nn.tensor<[B, T2, 192], f32>, !nn.tensor<[96, 192], f32>, !nn.tensor<[96], f32>
  %d31 = nn.dropout %l30 rate 1.000000e-01 : !nn.tensor<[B, T2, 96], f32>
  %r32 = nn.add %r26, %d31 : !nn.tensor<[B, T2, 96], f32>
  %block1_final_norm_scale = nn.param_ref @"block1.final_norm.scale" : !nn.tensor<[96], f32>
  %block1_final_norm_bias = nn.param_ref @"block1.final_norm.bias" : !nn.tensor<[96], f32>
  %n33 = nn.layer_norm %r32, %block1_final_norm_scale, %block1_final_norm_bias : !nn.tensor<[B, T2, 96], f32>, !nn.tensor<[96], f32>, !nn.tensor<[96], f32>

  // Conformer block 2.
  // block2.ff1: layer norm, 96 -> 192 with SiLU, back to 96; half-step residual
  %block2_ff1_norm_scale = nn.param_ref @"block2.ff1.norm.scale" : !nn.tensor<[96], f32>
  %block2_ff1_norm_bias = nn.param_ref @"block2.ff1.norm.bias" : !nn.tensor<[96], f32>
  %n34 = nn.layer_norm %n33, %block2_ff1_norm_scale, %block2_ff1_norm_bias : !nn.tensor<[B, T2, 96], f32>, !nn.tensor<[96], f32>, !nn.tensor<[96], f32>
  %block2_ff1_w1_w = nn.param_ref @"block2.ff1.w1.w" : !nn.tensor<[192, 96], f32>
  %block2_ff1_w1_b = nn.param_ref @"block2.ff1.w1.b" : !nn.tensor<[192], f32>
  %l35 = nn.linear %n34, %block2_ff1_w1_w, %block2_ff1_w1_b : !nn.tensor<[B, T2, 96], f32>, !nn.tensor<[192, 96], f32>, !nn.tensor<[192], f32>
  %si36 = nn.silu %l35 : !nn.tensor<[B, T2, 192], f32>
  %block2_ff1_w2_w = nn.param_ref @"block2.ff1.w2.w" : !nn.tensor<[96, 192], f32>
  %block2_ff1_w2_b = nn.param_ref @"block2.ff1.w2.b" : !nn.tensor<[96], f32>
  %l37 = nn.linear %si36, %block2_ff1_w2_w, %block2_ff1_w2_b : !nn.tensor<[B, T2, 192], f32>, !nn.tensor<[96, 192], f32>, !nn.tensor<[96], f32>
  %d38 = nn.dropout %l37 rate 1.000000e-01 : !nn.tensor<[B, T2, 96], f32>
  %r39 = nn.add %n33, %d38 : !nn.tensor<[B, T2, 96], f32>
  // Self-attention, 4 heads over each utterance's own frames, queries and
  // keys turned by their frames' places (rotary position embeddings).
  %block2_mhsa_norm_scale = nn.param_ref @"block2.mhsa.norm.scale" : !nn.tensor<[96], f32>
  %block2_mhsa_norm_bias = nn.param_ref @"block2.mhsa.norm.bias" : !nn.tensor<[96], f32>
  %n40 = nn.layer_norm %r39, %block2_mhsa_norm_scale, %block2_mhsa_norm_bias : !nn.tensor<[B, T2, 96], f32>, !nn.tensor<[96], f32>, !nn.tensor<[96], f32>
  %block2_mhsa_q_w = nn.param_ref @"block2.mhsa.q.w" : !nn.tensor<[96, 96], f32>
  %block2_mhsa_q_b = nn.param_ref @"block2.mhsa.q.b" : !nn.tensor<[96], f32>
  %l41 = nn.linear %n40, %block2_mhsa_q_w, %block2_mhsa_q_b : !nn.tensor<[B, T2, 96], f32>, !nn.tensor<[96, 96], f32>, !nn.tensor<[96], f32>
  %block2_mhsa_k_w = nn.param_ref @"block2.mhsa.k.w" : !nn.tensor<[96, 96], f32>
  %block2_mhsa_k_b = nn.param_ref @"block2.mhsa.k.b" : !nn.tensor<[96], f32>
  %l42 = nn.linear %n40, %block2_mhsa_k_w, %block2_mhsa_k_b : !nn.tensor<[B, T2, 96], f32>, !nn.tensor<[96, 96], f32>, !nn.tensor<[96], f32>
  %block2_mhsa_v_w = nn.param_ref @"block2.mhsa.v.w" : !nn.tensor<[96, 96], f32>
  %block2_mhsa_v_b = nn.param_ref @"block2.mhsa.v.b" : !nn.tensor<[96], f32>
  %l43 = nn.linear %n40, %block2_mhsa_v_w, %block2_mhsa_v_b : !nn.tensor<[B, T2, 96], f32>, !nn.tensor<[96, 96], f32>, !nn.tensor<[96], f32>
  %qr44 = nn.rotary %l41 heads 4 : !nn.tensor<[B, T2, 96], f32>
  %kr45 = nn.rotary %l42 heads 4 : !nn.tensor<[B, T2, 96], f32>
  %a46 = nn.attention %qr44, %kr45, %l43 heads 4 : !nn.tensor<[B, T2, 96], f32>, !nn.tensor<[B, T2, 96], f32>, !nn.tensor<[B, T2, 96], f32>
  %block2_mhsa_out_w = nn.param_ref @"block2.mhsa.out.w" : !nn.tensor<[96, 96], f32>
  %block2_mhsa_out_b = nn.param_ref @"block2.mhsa.out.b" : !nn.tensor<[96], f32>
  %l47 = nn.linear %a46, %block2_mhsa_out_w, %block2_mhsa_out_b : !nn.tensor<[B, T2, 96], f32>, !nn.tensor<[96, 96], f32>, !nn.tensor<[96], f32>
  %d48 = nn.dropout %l47 rate 1.000000e-01 : !nn.tensor<[B, T2, 96], f32>
  %r49 = nn.add %r39, %d48 : !nn.tensor<[B, T2, 96], f32>
  // Convolution module: pointwise conv and GLU, depthwise conv over
  // time (kernel 15, within each utterance), layer norm, SiLU, pointwise.
  %block2_conv_norm_scale = nn.param_ref @"block2.conv.norm.scale" : !nn.tensor<[96], f32>
  %block2_conv_norm_bias = nn.param_ref @"block2.conv.norm.bias" : !nn.tensor<[96], f32>
  %n50 = nn.layer_norm %r49, %block2_conv_norm_scale, %block2_conv_norm_bias : !nn.tensor<[B, T2, 96], f32>, !nn.tensor<[96], f32>, !nn.tensor<[96], f32>
  %block2_conv_pw1_w = nn.param_ref @"block2.conv.pw1.w" : !nn.tensor<[192, 96], f32>
  %block2_conv_pw1_b = nn.param_ref @"block2.conv.pw1.b" : !nn.tensor<[192], f32>
  %l51 = nn.linear %n50, %block2_conv_pw1_w, %block2_conv_pw1_b : !nn.tensor<[B, T2, 96], f32>, !nn.tensor<[192, 96], f32>, !nn.tensor<[192], f32>
  %g52 = nn.glu %l51 : !nn.tensor<[B, T2, 192], f32>
  %block2_conv_dw_w = nn.param_ref @"block2.conv.dw.w" : !nn.tensor<[96, 15, 1], f32>
  %block2_conv_dw_b = nn.param_ref @"block2.conv.dw.b" : !nn.tensor<[96], f32>
  %c53 = nn.conv1d %g52, %block2_conv_dw_w, %block2_conv_dw_b stride 1 groups 96 : (!nn.tensor<[B, T2, 96], f32>, !nn.tensor<[96, 15, 1], f32>, !nn.tensor<[96], f32>) -> !nn.tensor<[B, T2, 96], f32>
  %block2_conv_dw_norm_scale = nn.param_ref @"block2.conv.dw.norm.scale" : !nn.tensor<[96], f32>
  %block2_conv_dw_norm_bias = nn.param_ref @"block2.conv.dw.norm.bias" : !nn.tensor<[96], f32>
  %n54 = nn.layer_norm %c53, %block2_conv_dw_norm_scale, %block2_conv_dw_norm_bias : !nn.tensor<[B, T2, 96], f32>, !nn.tensor<[96], f32>, !nn.tensor<[96], f32>
  %si55 = nn.silu %n54 : !nn.tensor<[B, T2, 96], f32>
  %block2_conv_pw2_w = nn.param_ref @"block2.conv.pw2.w" : !nn.tensor<[96, 96], f32>
  %block2_conv_pw2_b = nn.param_ref @"block2.conv.pw2.b" : !nn.tensor<[96], f32>
  %l56 = nn.linear %si55, %block2_conv_pw2_w, %block2_conv_pw2_b : !nn.tensor<[B, T2, 96], f32>, !nn.tensor<[96, 96], f32>, !nn.tensor<[96], f32>
  %d57 = nn.dropout %l56 rate 1.000000e-01 : !nn.tensor<[B, T2, 96], f32>
  %r58 = nn.add %r49, %d57 : !nn.tensor<[B, T2, 96], f32>
  // block2.ff2: layer norm, 96 -> 192 with SiLU, back to 96; half-step residual
  %block2_ff2_norm_scale = nn.param_ref @"block2.ff2.norm.scale" : !nn.tensor<[96], f32>
  %block2_ff2_norm_bias = nn.param_ref @"block2.ff2.norm.bias" : !nn.tensor<[96], f32>
  %n59 = nn.layer_norm %r58, %block2_ff2_norm_scale, %block2_ff2_norm_bias : !nn.tensor<[B, T2, 96], f32>, !nn.tensor<[96], f32>, !nn.tensor<[96], f32>
  %block2_ff2_w1_w = nn.param_ref @"block2.ff2.w1.w" : !nn.tensor<[192, 96], f32>
  %block2_ff2_w1_b = nn.param_ref @"block2.ff2.w1.b" : !nn.tensor<[192], f32>
  %l60 = nn.linear %n59, %block2_ff2_w1_w, %block2_ff2_w1_b : !nn.tensor<[B, T2, 96], f32>, !nn.tensor<[192, 96], f32>, !nn.tensor<[192], f32>
  %si61 = nn.silu %l60 : !nn.tensor<[B, T2, 192], f32>
  %block2_ff2_w2_w = nn.param_ref @"block2.ff2.w2.w" : !nn.tensor<[96, 192], f32>
  %block2_ff2_w2_b = nn.param_ref @"block2.ff2.w2.b" : !nn.tensor<[96], f32>
  %l62 = nn.linear %si61, %block2_ff2_w2_w, %block2_ff2_w2_b : !nn.tensor<[B, T2, 192], f32>, !nn.tensor<[96, 192], f32>, !nn.tensor<[96], f32>
  %d63 = nn.dropout %l62 rate 1.000000e-01 : !nn.tensor<[B, T2, 96], f32>
  %r64 = nn.add %r58, %d63 : !nn.tensor<[B, T2, 96], f32>
  %block2_final_norm_scale = nn.param_ref @"block2.final_norm.scale" : !nn.tensor<[96], f32>
  %block2_final_norm_bias = nn.param_ref @"block2.final_norm.bias" : !nn.tensor<[96], f32>
  %n65 = nn.layer_norm %r64, %block2_final_norm_scale, %block2_final_norm_bias : !nn.tensor<[B, T2, 96], f32>, !nn.tensor<[96], f32>, !nn.tensor<[96], f32>

  %out_w = nn.param_ref @"out.w" : !nn.tensor<[17, 96], f32>
  %out_b = nn.param_ref @"out.b" : !nn.tensor<[17], f32>
  %l66 = nn.linear %n65, %out_w, %out_b : !nn.tensor<[B, T2, 96], f32>, !nn.tensor<[17, 96], f32>, !nn.tensor<[17], f32>
  nn.return %l66 : !nn.tensor<[B, T2, 17], f32>
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
