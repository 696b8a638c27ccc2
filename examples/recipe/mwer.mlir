// Minimum expected risk (MWER) fine-tuning of the CTC model of stage 1,
// the seed design's recipe: the N-best list of a CTC prefix search in the
// training graph (the search itself is not differentiated), each
// hypothesis rescored by the model's own CTC loss as one entry of the
// flattened batch H, the scores renormalized over each sequence's list,
// and the loss sum_k P(y_k | x) (E(y_k, y*) - mean_k E), E the label
// edit distance. `ctc` stays marked so a stage can mix it in at a scale;
// `ler` (greedy decoding, eval_only) is the dev label error rate as in
// ctc.mlir.

nn.parameter @"lstm.w_ih" : !nn.tensor<[2, 128, 16], f32>
nn.parameter @"lstm.w_hh" : !nn.tensor<[2, 128, 32], f32>
nn.parameter @"lstm.b" : !nn.tensor<[2, 128], f32>
nn.parameter @"out.w" : !nn.tensor<[8, 64], f32>
nn.parameter @"out.b" : !nn.tensor<[8], f32>

nn.graph @mwer(%features: !nn.tensor<[B, T, 16], f32>,
               %labels: !nn.tensor<[B, U], i32>)
    dims [B: batch, T: seq(B), U: seq(B), K: seq(B) computed,
          H: batch = flatten(B, K), Z: seq(H) computed, TH: seq(H) = T,
          UH: seq(H) = U, Y: seq(B) computed] {
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

  // The N-best list, one batch entry per hypothesis.
  %nbest, %scores = nn.ctc_beam_search %logits from logits blank 0 beam 4 merge sum
      : !nn.tensor<[B, T, 8], f32> -> !nn.tensor<[B, K, Z], i32>, !nn.tensor<[B, K], f32>
  %hyps = nn.flatten_beam %nbest : !nn.tensor<[B, K, Z], i32> -> !nn.tensor<[H, Z], i32>
  // Each hypothesis rescored by the model (the gradient's path), and its
  // errors against the reference.
  %logits_h = nn.repeat_beam %logits : !nn.tensor<[B, T, 8], f32> -> !nn.tensor<[H, TH, 8], f32>
  %nll = nn.ctc_loss %logits_h, %hyps from logits blank 0 zero_infinity
      : !nn.tensor<[H, TH, 8], f32>, !nn.tensor<[H, Z], i32>
  %refs = nn.repeat_beam %labels : !nn.tensor<[B, U], i32> -> !nn.tensor<[H, UH], i32>
  %errors, %ref_len_h, %counts_h = nn.edit_distance %hyps, %refs
      : !nn.tensor<[H, Z], i32>, !nn.tensor<[H, UH], i32>
  %nll_k = nn.unflatten_beam %nll : !nn.tensor<[H], f32> -> !nn.tensor<[B, K], f32>
  %errors_k = nn.unflatten_beam %errors : !nn.tensor<[H], f32> -> !nn.tensor<[B, K], f32>
  %risk = nn.expected_risk %nll_k, %errors_k baseline mean
      : !nn.tensor<[B, K], f32>, !nn.tensor<[B, K], f32>
  nn.mark_loss %risk as "mwer" normalize per_sequence : !nn.tensor<[B], f32>

  %hyp, %score = nn.ctc_greedy_decode %logits from logits blank 0
      : !nn.tensor<[B, T, 8], f32> -> !nn.tensor<[B, Y], i32>, !nn.tensor<[B], f32>
  %edits, %ref_len, %counts = nn.edit_distance %hyp, %labels
      : !nn.tensor<[B, Y], i32>, !nn.tensor<[B, U], i32>
  nn.mark_loss %edits, %ref_len as "ler" normalize custom as_error eval_only
      : !nn.tensor<[B], f32>, !nn.tensor<[B], f32>
  nn.return
}
