// Stage 2 of recipe.json: the stage-1 model's Viterbi alignment of each
// utterance to its labels (CTC topology), frame by frame, and the best
// path's score. The search subtracts @prior from each frame's class
// log-probabilities: the align stage fills it with a scaled log prior of
// the classes (their frequencies on the unscaled best paths).

nn.parameter @"lstm.w_ih" : !nn.tensor<[2, 128, 16], f32>
nn.parameter @"lstm.w_hh" : !nn.tensor<[2, 128, 32], f32>
nn.parameter @"lstm.b" : !nn.tensor<[2, 128], f32>
nn.parameter @"out.w" : !nn.tensor<[8, 64], f32>
nn.parameter @"out.b" : !nn.tensor<[8], f32>
nn.parameter @prior : !nn.tensor<[8], f32>

nn.graph @align(%features: !nn.tensor<[B, T, 16], f32>,
                %labels: !nn.tensor<[B, U], i32>)
    -> (!nn.tensor<[B, T], i32>, !nn.tensor<[B], f32>)
    dims [B: batch, T: seq(B), U: seq(B)] {
  %wi = nn.param_ref @"lstm.w_ih" : !nn.tensor<[2, 128, 16], f32>
  %wh = nn.param_ref @"lstm.w_hh" : !nn.tensor<[2, 128, 32], f32>
  %b = nn.param_ref @"lstm.b" : !nn.tensor<[2, 128], f32>
  %h = nn.lstm bidirectional %features, %wi, %wh, %b
      : !nn.tensor<[B, T, 16], f32>, !nn.tensor<[2, 128, 16], f32>,
        !nn.tensor<[2, 128, 32], f32>, !nn.tensor<[2, 128], f32>
  %wo = nn.param_ref @"out.w" : !nn.tensor<[8, 64], f32>
  %bo = nn.param_ref @"out.b" : !nn.tensor<[8], f32>
  %logits = nn.linear %h, %wo, %bo : !nn.tensor<[B, T, 64], f32>, !nn.tensor<[8, 64], f32>, !nn.tensor<[8], f32>
  %p = nn.param_ref @prior : !nn.tensor<[8], f32>
  %a, %s = nn.viterbi_align %logits, %labels from logits topology ctc blank 0
      prior %p : !nn.tensor<[B, T, 8], f32>, !nn.tensor<[B, U], i32>,
      !nn.tensor<[8], f32>
  nn.return %a, %s : !nn.tensor<[B, T], i32>, !nn.tensor<[B], f32>
}
