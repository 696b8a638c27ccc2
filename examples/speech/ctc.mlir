// The spoken-word task's acoustic model (docs/speech-task.md), written
// once and called by its two entries: two BLSTM layers (64 units per
// direction) over 40 log-mel bins, normalized at import (nn-data import
// --cmvn), and an output layer over the 17 character classes of the
// task's digits vocabulary (0 = the CTC blank, 1 = the word separator
// "▁").
//
//   @ctc     training: the CTC loss over SpecAugment-masked features
//            (nn.spec_augment; unmasked on dev); on dev also the
//            character and word error rates of greedy decoding (`cer`,
//            `wer`, eval_only: the train step does not decode; words are
//            split at the separator class 1, as nn-decode --vocab splits
//            them at "▁")
//   @decode  greedy CTC hypotheses, which nn-decode --vocab spells as
//            words and scores (the word error rate)

nn.parameter @"lstm1.w_ih" : !nn.tensor<[2, 256, 40], f32>
nn.parameter @"lstm1.w_hh" : !nn.tensor<[2, 256, 64], f32>
nn.parameter @"lstm1.b" : !nn.tensor<[2, 256], f32>
nn.parameter @"lstm2.w_ih" : !nn.tensor<[2, 256, 128], f32>
nn.parameter @"lstm2.w_hh" : !nn.tensor<[2, 256, 64], f32>
nn.parameter @"lstm2.b" : !nn.tensor<[2, 256], f32>
nn.parameter @"out.w" : !nn.tensor<[17, 128], f32>
nn.parameter @"out.b" : !nn.tensor<[17], f32>

nn.graph @acoustic(%features: !nn.tensor<[B, T, 40], f32>)
    -> !nn.tensor<[B, T, 17], f32> dims [B: batch, T: seq(B)] {
  %wi1 = nn.param_ref @"lstm1.w_ih" : !nn.tensor<[2, 256, 40], f32>
  %wh1 = nn.param_ref @"lstm1.w_hh" : !nn.tensor<[2, 256, 64], f32>
  %b1 = nn.param_ref @"lstm1.b" : !nn.tensor<[2, 256], f32>
  %h1 = nn.lstm bidirectional %features, %wi1, %wh1, %b1
      : !nn.tensor<[B, T, 40], f32>, !nn.tensor<[2, 256, 40], f32>,
        !nn.tensor<[2, 256, 64], f32>, !nn.tensor<[2, 256], f32>
  %wi2 = nn.param_ref @"lstm2.w_ih" : !nn.tensor<[2, 256, 128], f32>
  %wh2 = nn.param_ref @"lstm2.w_hh" : !nn.tensor<[2, 256, 64], f32>
  %b2 = nn.param_ref @"lstm2.b" : !nn.tensor<[2, 256], f32>
  %h2 = nn.lstm bidirectional %h1, %wi2, %wh2, %b2
      : !nn.tensor<[B, T, 128], f32>, !nn.tensor<[2, 256, 128], f32>,
        !nn.tensor<[2, 256, 64], f32>, !nn.tensor<[2, 256], f32>
  %wo = nn.param_ref @"out.w" : !nn.tensor<[17, 128], f32>
  %bo = nn.param_ref @"out.b" : !nn.tensor<[17], f32>
  %logits = nn.linear %h2, %wo, %bo : !nn.tensor<[B, T, 128], f32>, !nn.tensor<[17, 128], f32>, !nn.tensor<[17], f32>
  nn.return %logits : !nn.tensor<[B, T, 17], f32>
}

nn.graph @ctc(%features: !nn.tensor<[B, T, 40], f32>,
              %labels: !nn.tensor<[B, U], i32>)
    dims [B: batch, T: seq(B), U: seq(B), Y: seq(B) computed] {
  // SpecAugment while training (the identity on dev): two bands of up to
  // 8 of the 40 bins, two of up to 10 frames (at most a fifth of the
  // utterance) per utterance.
  %masked = nn.spec_augment %features freq_masks 2 freq_width 8 time_masks 2
      time_width 10 time_ratio 2.000000e-01 : !nn.tensor<[B, T, 40], f32>
  %logits = nn.call @acoustic(%masked) : (!nn.tensor<[B, T, 40], f32>) -> !nn.tensor<[B, T, 17], f32>
  %ctc = nn.ctc_loss %logits, %labels from logits blank 0
      : !nn.tensor<[B, T, 17], f32>, !nn.tensor<[B, U], i32>
  nn.mark_loss %ctc as "ctc" normalize per_sequence : !nn.tensor<[B], f32>
  %hyp, %score = nn.ctc_greedy_decode %logits from logits blank 0
      : !nn.tensor<[B, T, 17], f32> -> !nn.tensor<[B, Y], i32>, !nn.tensor<[B], f32>
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
    dims [B: batch, T: seq(B), Y: seq(B) computed] {
  %logits = nn.call @acoustic(%features) : (!nn.tensor<[B, T, 40], f32>) -> !nn.tensor<[B, T, 17], f32>
  %hyp, %score = nn.ctc_greedy_decode %logits from logits blank 0
      : !nn.tensor<[B, T, 17], f32> -> !nn.tensor<[B, Y], i32>, !nn.tensor<[B], f32>
  nn.return %hyp, %score : !nn.tensor<[B, Y], i32>, !nn.tensor<[B], f32>
}
