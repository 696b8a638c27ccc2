// Stage 4 of recipe.json: the stage-1 CTC model (ctc.mlir's BLSTM and
// output layer, the same parameters) decoding greedily: per frame the
// best class, repeats merged, blanks (0) dropped. The hypotheses run over
// Y, whose lengths the decoder computes. Reported alongside, as stage 1's
// dev evaluation reports them: the CTC loss of the references and `ler`,
// the hypotheses' label error rate (the rate the stage computes from the
// hypotheses it writes).

nn.parameter @"lstm.w_ih" : !nn.tensor<[2, 128, 16], f32>
nn.parameter @"lstm.w_hh" : !nn.tensor<[2, 128, 32], f32>
nn.parameter @"lstm.b" : !nn.tensor<[2, 128], f32>
nn.parameter @"out.w" : !nn.tensor<[8, 64], f32>
nn.parameter @"out.b" : !nn.tensor<[8], f32>

nn.graph @decode(%features: !nn.tensor<[B, T, 16], f32>,
                 %labels: !nn.tensor<[B, U], i32>)
    -> (!nn.tensor<[B, Y], i32>, !nn.tensor<[B], f32>)
    dims [B: batch, T: seq(B), U: seq(B), Y: seq(B) computed] {
  %wi = nn.param_ref @"lstm.w_ih" : !nn.tensor<[2, 128, 16], f32>
  %wh = nn.param_ref @"lstm.w_hh" : !nn.tensor<[2, 128, 32], f32>
  %b = nn.param_ref @"lstm.b" : !nn.tensor<[2, 128], f32>
  %h = nn.lstm bidirectional %features, %wi, %wh, %b
      : !nn.tensor<[B, T, 16], f32>, !nn.tensor<[2, 128, 16], f32>,
        !nn.tensor<[2, 128, 32], f32>, !nn.tensor<[2, 128], f32>
  %wo = nn.param_ref @"out.w" : !nn.tensor<[8, 64], f32>
  %bo = nn.param_ref @"out.b" : !nn.tensor<[8], f32>
  %logits = nn.linear %h, %wo, %bo : !nn.tensor<[B, T, 64], f32>, !nn.tensor<[8, 64], f32>, !nn.tensor<[8], f32>
  %ctc = nn.ctc_loss %logits, %labels from logits blank 0
      : !nn.tensor<[B, T, 8], f32>, !nn.tensor<[B, U], i32>
  nn.mark_loss %ctc as "ctc" normalize per_sequence : !nn.tensor<[B], f32>
  %y, %s = nn.ctc_greedy_decode %logits from logits blank 0
      : !nn.tensor<[B, T, 8], f32> -> !nn.tensor<[B, Y], i32>, !nn.tensor<[B], f32>
  %edits, %ref_len, %counts = nn.edit_distance %y, %labels
      : !nn.tensor<[B, Y], i32>, !nn.tensor<[B, U], i32>
  nn.mark_loss %edits, %ref_len as "ler" normalize custom as_error
      : !nn.tensor<[B], f32>, !nn.tensor<[B], f32>
  nn.return %y, %s : !nn.tensor<[B, Y], i32>, !nn.tensor<[B], f32>
}
