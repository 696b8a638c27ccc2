// Stage 3 of recipe.json: the same model trained frame-wise with cross
// entropy on the stage-2 alignments (pack-before-loss runs the output
// layer and the loss on the real frames only). Reported: the frame error
// against the alignments and against the task's true frame labels, and
// the label error rate of its frame classes read as CTC outputs (greedy:
// repeats merged, silence dropped), comparable with stage 1's `ler`.

nn.parameter @"lstm.w_ih" : !nn.tensor<[2, 128, 16], f32>
nn.parameter @"lstm.w_hh" : !nn.tensor<[2, 128, 32], f32>
nn.parameter @"lstm.b" : !nn.tensor<[2, 128], f32>
nn.parameter @"out.w" : !nn.tensor<[8, 64], f32>
nn.parameter @"out.b" : !nn.tensor<[8], f32>

nn.graph @ce(%features: !nn.tensor<[B, T, 16], f32>,
             %alignment: !nn.tensor<[B, T], i32>,
             %frame_labels: !nn.tensor<[B, T], i32>,
             %labels: !nn.tensor<[B, U], i32>)
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
  %ce = nn.cross_entropy %logits, %alignment from logits
      : !nn.tensor<[B, T, 8], f32>, !nn.tensor<[B, T], i32>
  nn.mark_loss %ce as "ce" normalize per_frame : !nn.tensor<[B, T], f32>
  %err = nn.frame_error %logits, %alignment
      : !nn.tensor<[B, T, 8], f32>, !nn.tensor<[B, T], i32>
  nn.mark_loss %err as "fer" normalize per_frame as_error
      : !nn.tensor<[B, T], f32>
  %true = nn.frame_error %logits, %frame_labels
      : !nn.tensor<[B, T, 8], f32>, !nn.tensor<[B, T], i32>
  nn.mark_loss %true as "fer_true" normalize per_frame as_error
      : !nn.tensor<[B, T], f32>
  %hyp, %score = nn.ctc_greedy_decode %logits from logits blank 0
      : !nn.tensor<[B, T, 8], f32> -> !nn.tensor<[B, Y], i32>, !nn.tensor<[B], f32>
  %edits, %ref_len, %counts = nn.edit_distance %hyp, %labels
      : !nn.tensor<[B, Y], i32>, !nn.tensor<[B, U], i32>
  nn.mark_loss %edits, %ref_len as "ler" normalize custom as_error eval_only
      : !nn.tensor<[B], f32>, !nn.tensor<[B], f32>
  nn.return
}
