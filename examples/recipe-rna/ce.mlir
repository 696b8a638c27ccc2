// Stage 3 of recipe.json: the same transducer trained frame-wise on the
// stage-2 alignments. Each frame meets the prediction state after the
// labels the alignment emitted before it (nn.gather_states): the joint
// runs on T rows, not the T x (U + 1) grid, and pack-before-loss runs it
// and the cross entropy on the real frames only.

nn.parameter @"lstm.w_ih" : !nn.tensor<[2, 128, 16], f32>
nn.parameter @"lstm.w_hh" : !nn.tensor<[2, 128, 32], f32>
nn.parameter @"lstm.b" : !nn.tensor<[2, 128], f32>
nn.parameter @"enc.w" : !nn.tensor<[32, 64], f32>
nn.parameter @"enc.b" : !nn.tensor<[32], f32>
nn.parameter @"embed" : !nn.tensor<[8, 16], f32>
nn.parameter @"pred.w_ih" : !nn.tensor<[128, 16], f32>
nn.parameter @"pred.w_hh" : !nn.tensor<[128, 32], f32>
nn.parameter @"pred.b" : !nn.tensor<[128], f32>
nn.parameter @"out.w" : !nn.tensor<[8, 32], f32>
nn.parameter @"out.b" : !nn.tensor<[8], f32>

nn.graph @ce(%features: !nn.tensor<[B, T, 16], f32>,
             %labels: !nn.tensor<[B, U], i32>,
             %alignment: !nn.tensor<[B, T], i32>)
    dims [B: batch, T: seq(B), U: seq(B), U1: seq(B) = U + 1] {
  %wi = nn.param_ref @"lstm.w_ih" : !nn.tensor<[2, 128, 16], f32>
  %wh = nn.param_ref @"lstm.w_hh" : !nn.tensor<[2, 128, 32], f32>
  %b = nn.param_ref @"lstm.b" : !nn.tensor<[2, 128], f32>
  %h = nn.lstm bidirectional %features, %wi, %wh, %b
      : !nn.tensor<[B, T, 16], f32>, !nn.tensor<[2, 128, 16], f32>,
        !nn.tensor<[2, 128, 32], f32>, !nn.tensor<[2, 128], f32>
  %ew = nn.param_ref @"enc.w" : !nn.tensor<[32, 64], f32>
  %eb = nn.param_ref @"enc.b" : !nn.tensor<[32], f32>
  %enc = nn.linear %h, %ew, %eb : !nn.tensor<[B, T, 64], f32>, !nn.tensor<[32, 64], f32>, !nn.tensor<[32], f32>
  %start = nn.prepend_start %labels start 0 : !nn.tensor<[B, U], i32> -> !nn.tensor<[B, U1], i32>
  %table = nn.param_ref @"embed" : !nn.tensor<[8, 16], f32>
  %emb = nn.embedding %start, %table : !nn.tensor<[B, U1], i32>, !nn.tensor<[8, 16], f32>
  %pi = nn.param_ref @"pred.w_ih" : !nn.tensor<[128, 16], f32>
  %ph = nn.param_ref @"pred.w_hh" : !nn.tensor<[128, 32], f32>
  %pb = nn.param_ref @"pred.b" : !nn.tensor<[128], f32>
  %pred = nn.lstm forward %emb, %pi, %ph, %pb
      : !nn.tensor<[B, U1, 16], f32>, !nn.tensor<[128, 16], f32>,
        !nn.tensor<[128, 32], f32>, !nn.tensor<[128], f32>
  %ow = nn.param_ref @"out.w" : !nn.tensor<[8, 32], f32>
  %ob = nn.param_ref @"out.b" : !nn.tensor<[8], f32>
  %g = nn.gather_states %pred, %alignment blank 0 : !nn.tensor<[B, U1, 32], f32>,
      !nn.tensor<[B, T], i32> -> !nn.tensor<[B, T, 32], f32>
  %j = nn.add %enc, %g : !nn.tensor<[B, T, 32], f32>
  %a = nn.tanh %j : !nn.tensor<[B, T, 32], f32>
  %logits = nn.linear %a, %ow, %ob : !nn.tensor<[B, T, 32], f32>, !nn.tensor<[8, 32], f32>, !nn.tensor<[8], f32>
  %ce = nn.cross_entropy %logits, %alignment from logits
      : !nn.tensor<[B, T, 8], f32>, !nn.tensor<[B, T], i32>
  nn.mark_loss %ce as "ce" normalize per_frame : !nn.tensor<[B, T], f32>
  %err = nn.frame_error %logits, %alignment
      : !nn.tensor<[B, T, 8], f32>, !nn.tensor<[B, T], i32>
  nn.mark_loss %err as "fer" normalize per_frame as_error
      : !nn.tensor<[B, T], f32>
  nn.return
}
