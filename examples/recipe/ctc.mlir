// Stage 1 of recipe.json: a BLSTM (32 units per direction) over 16
// features with an output layer over 8 classes (0 = silence = the CTC
// blank), trained with CTC. Reported, not trained: the frame error
// against the segment task's true frame labels, and the label error rate
// of greedy decoding (`ler`: edit distance to the labels over the
// labels' count, summed over the dev set; eval_only, so train steps do
// not decode).

nn.parameter @"lstm.w_ih" : !nn.tensor<[2, 128, 16], f32>
nn.parameter @"lstm.w_hh" : !nn.tensor<[2, 128, 32], f32>
nn.parameter @"lstm.b" : !nn.tensor<[2, 128], f32>
nn.parameter @"out.w" : !nn.tensor<[8, 64], f32>
nn.parameter @"out.b" : !nn.tensor<[8], f32>

nn.graph @ctc(%features: !nn.tensor<[B, T, 16], f32>,
              %labels: !nn.tensor<[B, U], i32>,
              %frame_labels: !nn.tensor<[B, T], i32>)
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
  %err = nn.frame_error %logits, %frame_labels
      : !nn.tensor<[B, T, 8], f32>, !nn.tensor<[B, T], i32>
  nn.mark_loss %err as "fer_true" normalize per_frame as_error
      : !nn.tensor<[B, T], f32>
  %hyp, %score = nn.ctc_greedy_decode %logits from logits blank 0
      : !nn.tensor<[B, T, 8], f32> -> !nn.tensor<[B, Y], i32>, !nn.tensor<[B], f32>
  %edits, %ref_len, %counts = nn.edit_distance %hyp, %labels
      : !nn.tensor<[B, Y], i32>, !nn.tensor<[B, U], i32>
  nn.mark_loss %edits, %ref_len as "ler" normalize custom as_error eval_only
      : !nn.tensor<[B], f32>, !nn.tensor<[B], f32>
  nn.return
}
