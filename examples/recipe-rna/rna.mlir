// Stage 1 of recipe.json: an RNA transducer. A BLSTM encoder (32 units
// per direction) over 16 features, a prediction network (embedding and an
// LSTM over the start symbol and the labels), their joint on the packed
// (t, u) grid (tanh, output layer over 8 classes, 0 = silence = the
// blank), trained with the full-sum RNA loss.

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

nn.graph @rna(%features: !nn.tensor<[B, T, 16], f32>,
              %labels: !nn.tensor<[B, U], i32>)
    dims [B: batch, T: seq(B), U: seq(B), U1: seq(B) = U + 1,
          J: packed(B, T, U1)] {
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
  %j = nn.transducer_join %enc, %pred : !nn.tensor<[B, T, 32], f32>,
      !nn.tensor<[B, U1, 32], f32> -> !nn.tensor<[J, 32], f32>
  %a = nn.tanh %j : !nn.tensor<[J, 32], f32>
  %logits = nn.linear %a, %ow, %ob : !nn.tensor<[J, 32], f32>, !nn.tensor<[8, 32], f32>, !nn.tensor<[8], f32>
  %loss = nn.transducer_loss %logits, %labels from logits topology rna blank 0
      : !nn.tensor<[J, 8], f32>, !nn.tensor<[B, U], i32>
  nn.mark_loss %loss as "rna" normalize per_sequence : !nn.tensor<[B], f32>
  nn.return
}
