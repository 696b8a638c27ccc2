// The RNN-T transducer of recipe.json (recipe-rna's networks, the RNN-T
// topology: a label stays on its frame, the blank moves to the next), every
// network written once: the encoder (a BLSTM of 32 units per direction
// over 16 features and a projection), the prediction network (an
// embedding and an LSTM over the start symbol and the labels) and the
// joint (tanh, output layer over 8 classes, 0 = silence = the blank) are
// graphs that each stage's entry calls:
//
//   @rnnt    stage 1: the full-sum RNN-T loss on the packed (t, u) grid
//            (dev evaluation also decodes and reports `ler`)
//   @align   stage 2: the best RNN-T path of each utterance through the
//            joint: T + U emissions over a computed dim A
//   @ce      stage 3: CE on the path, each of its positions meeting the
//            encoder frame it is on (the blanks before it) and the
//            prediction state after the labels before it, in chunks
//   @decode  stage 4: greedy RNN-T decoding (up to 3 labels a frame), the
//            search driving the same @predictor and @joiner, scored by its
//            label error rate

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

nn.graph @encoder(%features: !nn.tensor<[B, T, 16], f32>)
    -> !nn.tensor<[B, T, 32], f32> dims [B: batch, T: seq(B)] {
  %wi = nn.param_ref @"lstm.w_ih" : !nn.tensor<[2, 128, 16], f32>
  %wh = nn.param_ref @"lstm.w_hh" : !nn.tensor<[2, 128, 32], f32>
  %b = nn.param_ref @"lstm.b" : !nn.tensor<[2, 128], f32>
  %h = nn.lstm bidirectional %features, %wi, %wh, %b
      : !nn.tensor<[B, T, 16], f32>, !nn.tensor<[2, 128, 16], f32>,
        !nn.tensor<[2, 128, 32], f32>, !nn.tensor<[2, 128], f32>
  %ew = nn.param_ref @"enc.w" : !nn.tensor<[32, 64], f32>
  %eb = nn.param_ref @"enc.b" : !nn.tensor<[32], f32>
  %enc = nn.linear %h, %ew, %eb : !nn.tensor<[B, T, 64], f32>, !nn.tensor<[32, 64], f32>, !nn.tensor<[32], f32>
  nn.return %enc : !nn.tensor<[B, T, 32], f32>
}

// Over the labels after the start symbol (nn.prepend_start): position u
// is the state after the first u labels.
nn.graph @predictor(%labels: !nn.tensor<[S, U], i32>)
    -> !nn.tensor<[S, U, 32], f32> dims [S: batch, U: seq(S)] {
  %table = nn.param_ref @"embed" : !nn.tensor<[8, 16], f32>
  %emb = nn.embedding %labels, %table : !nn.tensor<[S, U], i32>, !nn.tensor<[8, 16], f32>
  %pi = nn.param_ref @"pred.w_ih" : !nn.tensor<[128, 16], f32>
  %ph = nn.param_ref @"pred.w_hh" : !nn.tensor<[128, 32], f32>
  %pb = nn.param_ref @"pred.b" : !nn.tensor<[128], f32>
  %pred = nn.lstm forward %emb, %pi, %ph, %pb
      : !nn.tensor<[S, U, 16], f32>, !nn.tensor<[128, 16], f32>,
        !nn.tensor<[128, 32], f32>, !nn.tensor<[128], f32>
  nn.return %pred : !nn.tensor<[S, U, 32], f32>
}

// On rows of encoder frame + prediction: the packed grid in training, the
// search's rows in decoding, the packed frames in frame-wise CE.
nn.graph @joiner(%joint: !nn.tensor<[R, 32], f32>)
    -> !nn.tensor<[R, 8], f32> dims [R: batch] {
  %ow = nn.param_ref @"out.w" : !nn.tensor<[8, 32], f32>
  %ob = nn.param_ref @"out.b" : !nn.tensor<[8], f32>
  %a = nn.tanh %joint : !nn.tensor<[R, 32], f32>
  %logits = nn.linear %a, %ow, %ob : !nn.tensor<[R, 32], f32>, !nn.tensor<[8, 32], f32>, !nn.tensor<[8], f32>
  nn.return %logits : !nn.tensor<[R, 8], f32>
}

nn.graph @rnnt(%features: !nn.tensor<[B, T, 16], f32>,
               %labels: !nn.tensor<[B, U], i32>)
    dims [B: batch, T: seq(B), U: seq(B), U1: seq(B) = U + 1,
          J: packed(B, T, U1), Y: seq(B) computed] {
  %enc = nn.call @encoder(%features) : (!nn.tensor<[B, T, 16], f32>) -> !nn.tensor<[B, T, 32], f32>
  %start = nn.prepend_start %labels start 0 : !nn.tensor<[B, U], i32> -> !nn.tensor<[B, U1], i32>
  %pred = nn.call @predictor(%start) : (!nn.tensor<[B, U1], i32>) -> !nn.tensor<[B, U1, 32], f32>
  %j = nn.transducer_join %enc, %pred : !nn.tensor<[B, T, 32], f32>,
      !nn.tensor<[B, U1, 32], f32> -> !nn.tensor<[J, 32], f32>
  %logits = nn.call @joiner(%j) : (!nn.tensor<[J, 32], f32>) -> !nn.tensor<[J, 8], f32>
  %loss = nn.transducer_loss %logits, %labels from logits topology rnnt blank 0
      : !nn.tensor<[J, 8], f32>, !nn.tensor<[B, U], i32>
  nn.mark_loss %loss as "rnnt" normalize per_sequence : !nn.tensor<[B], f32>
  // Dev evaluation only (the train step does not decode): the label error
  // rate of greedy decoding, the number the decode stage reports.
  %y, %s = nn.transducer_greedy_decode %enc predictor @predictor joiner @joiner
      topology rnnt blank 0 start 0 max_symbols 3
      : !nn.tensor<[B, T, 32], f32> -> !nn.tensor<[B, Y], i32>, !nn.tensor<[B], f32>
  %edits, %ref_len, %counts = nn.edit_distance %y, %labels
      : !nn.tensor<[B, Y], i32>, !nn.tensor<[B, U], i32>
  nn.mark_loss %edits, %ref_len as "ler" normalize custom as_error eval_only
      : !nn.tensor<[B], f32>, !nn.tensor<[B], f32>
  nn.return
}

// The path's T + U emissions in order (RETURNN's linear RNN-T alignment):
// their count is each utterance's own, a computed dim.
nn.graph @align(%features: !nn.tensor<[B, T, 16], f32>,
                %labels: !nn.tensor<[B, U], i32>)
    -> (!nn.tensor<[B, A], i32>, !nn.tensor<[B], f32>)
    dims [B: batch, T: seq(B), U: seq(B), U1: seq(B) = U + 1,
          J: packed(B, T, U1), A: seq(B) computed] {
  %enc = nn.call @encoder(%features) : (!nn.tensor<[B, T, 16], f32>) -> !nn.tensor<[B, T, 32], f32>
  %start = nn.prepend_start %labels start 0 : !nn.tensor<[B, U], i32> -> !nn.tensor<[B, U1], i32>
  %pred = nn.call @predictor(%start) : (!nn.tensor<[B, U1], i32>) -> !nn.tensor<[B, U1, 32], f32>
  %j = nn.transducer_join %enc, %pred : !nn.tensor<[B, T, 32], f32>,
      !nn.tensor<[B, U1, 32], f32> -> !nn.tensor<[J, 32], f32>
  %logits = nn.call @joiner(%j) : (!nn.tensor<[J, 32], f32>) -> !nn.tensor<[J, 8], f32>
  %path, %score = nn.transducer_align %logits, %labels from logits topology rnnt
      blank 0 : !nn.tensor<[J, 8], f32>, !nn.tensor<[B, U], i32>
      -> !nn.tensor<[B, A], i32>, !nn.tensor<[B], f32>
  nn.return %path, %score : !nn.tensor<[B, A], i32>, !nn.tensor<[B], f32>
}

// The joint runs on the path's T + U positions only (packed), not the
// T x (U + 1) grid: position k meets encoder frame t_k (the blanks
// before it) and prediction state u_k (the labels before it), and its
// target is the path's class there. Trained on overlapping chunks (the
// stage's "chunking"), each position counts once: batches fill
// `chunk_weights` along the path, 0 at the positions of the frames a
// neighbouring chunk counts (1 everywhere in whole utterances).
nn.graph @ce(%features: !nn.tensor<[B, T, 16], f32>,
             %labels: !nn.tensor<[B, U], i32>,
             %alignment: !nn.tensor<[B, A], i32>,
             %chunk_weights: !nn.tensor<[B, A], f32>)
    dims [B: batch, T: seq(B), U: seq(B), U1: seq(B) = U + 1, A: seq(B),
          N: packed(B, A)] {
  %enc = nn.call @encoder(%features) : (!nn.tensor<[B, T, 16], f32>) -> !nn.tensor<[B, T, 32], f32>
  %start = nn.prepend_start %labels start 0 : !nn.tensor<[B, U], i32> -> !nn.tensor<[B, U1], i32>
  %pred = nn.call @predictor(%start) : (!nn.tensor<[B, U1], i32>) -> !nn.tensor<[B, U1, 32], f32>
  %frames = nn.gather_states %enc, %alignment blank 0 by_blanks
      : !nn.tensor<[B, T, 32], f32>, !nn.tensor<[B, A], i32> -> !nn.tensor<[B, A, 32], f32>
  %states = nn.gather_states %pred, %alignment blank 0
      : !nn.tensor<[B, U1, 32], f32>, !nn.tensor<[B, A], i32> -> !nn.tensor<[B, A, 32], f32>
  %j = nn.add %frames, %states : !nn.tensor<[B, A, 32], f32>
  %rows = nn.pack %j : !nn.tensor<[B, A, 32], f32> -> !nn.tensor<[N, 32], f32>
  %targets = nn.pack %alignment : !nn.tensor<[B, A], i32> -> !nn.tensor<[N], i32>
  %counted = nn.pack %chunk_weights : !nn.tensor<[B, A], f32> -> !nn.tensor<[N], f32>
  %logits = nn.call @joiner(%rows) : (!nn.tensor<[N, 32], f32>) -> !nn.tensor<[N, 8], f32>
  %ce = nn.cross_entropy %logits, %targets from logits
      : !nn.tensor<[N, 8], f32>, !nn.tensor<[N], i32>
  nn.mark_loss %ce weights %counted as "ce" normalize per_frame
      : !nn.tensor<[N], f32> weights !nn.tensor<[N], f32>
  %err = nn.frame_error %logits, %targets
      : !nn.tensor<[N, 8], f32>, !nn.tensor<[N], i32>
  nn.mark_loss %err weights %counted as "per" normalize per_frame as_error
      : !nn.tensor<[N], f32> weights !nn.tensor<[N], f32>
  nn.return
}

// Reported with the hypotheses: `ler`, their label error rate against the
// references, and stage 1's `rnnt` loss of the references.
nn.graph @decode(%features: !nn.tensor<[B, T, 16], f32>,
                 %labels: !nn.tensor<[B, U], i32>)
    -> (!nn.tensor<[B, Y], i32>, !nn.tensor<[B], f32>)
    dims [B: batch, T: seq(B), U: seq(B), U1: seq(B) = U + 1,
          J: packed(B, T, U1), Y: seq(B) computed] {
  %enc = nn.call @encoder(%features) : (!nn.tensor<[B, T, 16], f32>) -> !nn.tensor<[B, T, 32], f32>
  %start = nn.prepend_start %labels start 0 : !nn.tensor<[B, U], i32> -> !nn.tensor<[B, U1], i32>
  %pred = nn.call @predictor(%start) : (!nn.tensor<[B, U1], i32>) -> !nn.tensor<[B, U1, 32], f32>
  %j = nn.transducer_join %enc, %pred : !nn.tensor<[B, T, 32], f32>,
      !nn.tensor<[B, U1, 32], f32> -> !nn.tensor<[J, 32], f32>
  %logits = nn.call @joiner(%j) : (!nn.tensor<[J, 32], f32>) -> !nn.tensor<[J, 8], f32>
  %loss = nn.transducer_loss %logits, %labels from logits topology rnnt blank 0
      : !nn.tensor<[J, 8], f32>, !nn.tensor<[B, U], i32>
  nn.mark_loss %loss as "rnnt" normalize per_sequence : !nn.tensor<[B], f32>
  %y, %s = nn.transducer_greedy_decode %enc predictor @predictor joiner @joiner
      topology rnnt blank 0 start 0 max_symbols 3
      : !nn.tensor<[B, T, 32], f32> -> !nn.tensor<[B, Y], i32>, !nn.tensor<[B], f32>
  %edits, %ref_len, %counts = nn.edit_distance %y, %labels
      : !nn.tensor<[B, Y], i32>, !nn.tensor<[B, U], i32>
  nn.mark_loss %edits, %ref_len as "ler" normalize custom as_error
      : !nn.tensor<[B], f32>, !nn.tensor<[B], f32>
  nn.return %y, %s : !nn.tensor<[B, Y], i32>, !nn.tensor<[B], f32>
}
