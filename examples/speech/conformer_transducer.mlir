// A Conformer transducer (RNN-T) for the spoken-word task
// (docs/speech-task.md): the encoder of examples/speech/conformer_ctc.mlir
// (subsampling by 2 to 96 channels, two Conformer blocks with relative
// positions and half-step feed-forward residuals) projected to a 64-dim
// joint space, a prediction network (an embedding of the 17 classes and
// an LSTM of 64 units over the start symbol and the labels; 0 = blank =
// start, 1 = the word separator) and a joint network (tanh, output layer),
// each written once and called by the entries:
//
//   @rnnt    training: the full-sum RNN-T loss over the packed (t, u)
//            grid of SpecAugment-masked features; on dev also the
//            character and word error rates of RNN-T beam search
//            (eval_only)
//   @decode  the best hypothesis of RNN-T beam search (beam 4, up to 3
//            labels per frame), for nn-decode --vocab
//
// Beam search, not greedy decoding: after 1,000 steps on the small task
// this model's emissions are spread over frames, and greedy search (never
// taking a label whose probability is below blank's at one frame) ends
// most hypotheses early (word error rate 44% against 3.2% with beam 4 on
// the 60 dev utterances of test/examples/conformer-transducer-learns.mlir).
// That is the model, not the search: the compiled greedy decoder gives a
// plain float64 greedy decoder's hypotheses and scores
// (TransducerGreedyDecodeTest.RandomModelsMatchAPlainDecoder).
//
// No op of the encoder reads another utterance or padding, and the loss
// reads only each utterance's real (t, u) pairs. In training the encoder,
// its subsampling included, and the prediction network run on packed rows:
// nn-pack-before-loss packs the join's operands
// (test/examples/pack-examples.mlir).

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
nn.parameter @"enc.proj.w" : !nn.tensor<[64, 96], f32>
nn.parameter @"enc.proj.b" : !nn.tensor<[64], f32>

nn.graph @encoder(%features: !nn.tensor<[B, T, 40], f32>)
    -> !nn.tensor<[B, T2, 64], f32>
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

  %enc_proj_w = nn.param_ref @"enc.proj.w" : !nn.tensor<[64, 96], f32>
  %enc_proj_b = nn.param_ref @"enc.proj.b" : !nn.tensor<[64], f32>
  %l70 = nn.linear %n69, %enc_proj_w, %enc_proj_b : !nn.tensor<[B, T2, 96], f32>, !nn.tensor<[64, 96], f32>, !nn.tensor<[64], f32>
  nn.return %l70 : !nn.tensor<[B, T2, 64], f32>
}

nn.parameter @"embed" : !nn.tensor<[17, 64], f32>
nn.parameter @"pred.w_ih" : !nn.tensor<[256, 64], f32>
nn.parameter @"pred.w_hh" : !nn.tensor<[256, 64], f32>
nn.parameter @"pred.b" : !nn.tensor<[256], f32>
nn.parameter @"joint.w" : !nn.tensor<[17, 64], f32>
nn.parameter @"joint.b" : !nn.tensor<[17], f32>

// Over the labels after the start symbol (nn.prepend_start): position u
// is the state after the first u labels.
nn.graph @predictor(%labels: !nn.tensor<[S, U], i32>)
    -> !nn.tensor<[S, U, 64], f32> dims [S: batch, U: seq(S)] {
  %table = nn.param_ref @"embed" : !nn.tensor<[17, 64], f32>
  %emb = nn.embedding %labels, %table : !nn.tensor<[S, U], i32>, !nn.tensor<[17, 64], f32>
  %pi = nn.param_ref @"pred.w_ih" : !nn.tensor<[256, 64], f32>
  %ph = nn.param_ref @"pred.w_hh" : !nn.tensor<[256, 64], f32>
  %pb = nn.param_ref @"pred.b" : !nn.tensor<[256], f32>
  %pred = nn.lstm forward %emb, %pi, %ph, %pb
      : !nn.tensor<[S, U, 64], f32>, !nn.tensor<[256, 64], f32>,
        !nn.tensor<[256, 64], f32>, !nn.tensor<[256], f32>
  nn.return %pred : !nn.tensor<[S, U, 64], f32>
}

// On rows of encoder frame + prediction: the packed grid in training, the
// search's rows in decoding.
nn.graph @joiner(%joint: !nn.tensor<[R, 64], f32>)
    -> !nn.tensor<[R, 17], f32> dims [R: batch] {
  %a = nn.tanh %joint : !nn.tensor<[R, 64], f32>
  %ow = nn.param_ref @"joint.w" : !nn.tensor<[17, 64], f32>
  %ob = nn.param_ref @"joint.b" : !nn.tensor<[17], f32>
  %logits = nn.linear %a, %ow, %ob : !nn.tensor<[R, 64], f32>, !nn.tensor<[17, 64], f32>, !nn.tensor<[17], f32>
  nn.return %logits : !nn.tensor<[R, 17], f32>
}

nn.graph @rnnt(%features: !nn.tensor<[B, T, 40], f32>,
               %labels: !nn.tensor<[B, U], i32>)
    dims [B: batch, T: seq(B), U: seq(B), T2: seq(B) = ceildiv(T, 2),
          U1: seq(B) = U + 1, J: packed(B, T2, U1), Y: seq(B) computed] {
  // SpecAugment while training (the identity on dev), as in ctc.mlir.
  %masked = nn.spec_augment %features freq_masks 2 freq_width 8 time_masks 2
      time_width 10 time_ratio 2.000000e-01 : !nn.tensor<[B, T, 40], f32>
  %enc = nn.call @encoder(%masked) : (!nn.tensor<[B, T, 40], f32>) -> !nn.tensor<[B, T2, 64], f32>
  %start = nn.prepend_start %labels start 0 : !nn.tensor<[B, U], i32> -> !nn.tensor<[B, U1], i32>
  %pred = nn.call @predictor(%start) : (!nn.tensor<[B, U1], i32>) -> !nn.tensor<[B, U1, 64], f32>
  %j = nn.transducer_join %enc, %pred : !nn.tensor<[B, T2, 64], f32>,
      !nn.tensor<[B, U1, 64], f32> -> !nn.tensor<[J, 64], f32>
  %logits = nn.call @joiner(%j) : (!nn.tensor<[J, 64], f32>) -> !nn.tensor<[J, 17], f32>
  %loss = nn.transducer_loss %logits, %labels from logits topology rnnt blank 0
      : !nn.tensor<[J, 17], f32>, !nn.tensor<[B, U], i32>
  nn.mark_loss %loss as "rnnt" normalize per_sequence : !nn.tensor<[B], f32>
  // Dev evaluation only (the train step does not decode): the best
  // hypothesis of beam search.
  %hyp, %score = nn.transducer_beam_search %enc predictor @predictor joiner @joiner
      topology rnnt blank 0 start 0 beam 4 max_symbols 3
      : !nn.tensor<[B, T2, 64], f32> -> !nn.tensor<[B, Y], i32>, !nn.tensor<[B], f32>
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
  %enc = nn.call @encoder(%features) : (!nn.tensor<[B, T, 40], f32>) -> !nn.tensor<[B, T2, 64], f32>
  %hyp, %score = nn.transducer_beam_search %enc predictor @predictor joiner @joiner
      topology rnnt blank 0 start 0 beam 4 max_symbols 3
      : !nn.tensor<[B, T2, 64], f32> -> !nn.tensor<[B, Y], i32>, !nn.tensor<[B], f32>
  nn.return %hyp, %score : !nn.tensor<[B, Y], i32>, !nn.tensor<[B], f32>
}
