//===- NNDecodeOps.td - label sequences from scores --------*- tablegen -*-===//
//
// Ops that turn frame scores into hypotheses: label sequences whose lengths
// the op computes (`computed` sequence dims, DimProducerOpInterface).
//
//===----------------------------------------------------------------------===//

#ifndef NN_DECODE_OPS_TD
#define NN_DECODE_OPS_TD

include "dialects/nn/NNOpBase.td"

def NN_CtcGreedyDecodeOp : NN_SequenceMixingOp<"ctc_greedy_decode", [
    DeclareOpInterfaceMethods<NN_DimProducerOpInterface>]> {
  let summary = "CTC best-path decoding: argmax per frame, collapse, drop blanks";
  let description = [{
    `scores` `[B, T, V]` or packed `[N, V]` (logits, or log-probabilities
    with `from log_probs`), `blank` in `[0, V)`. Per valid frame of each
    sequence, the class with the highest score (the lowest index among
    equal maxima; a NaN score never wins, and a frame of only NaN or -inf
    scores picks class 0); equal neighbours collapse to one, then blanks
    go. Results:

    * `labels` `[B, Y]` i32 over a `computed` sequence dim `Y` of the same
      batch: this op computes its lengths (each sequence's label count;
      the padded size is the longest). Padded positions hold 0.
    * `score` `[B]` (the scores' element type): the best path's
      log-probability, the sum over valid frames of each frame's largest
      log-probability (`from logits`: the largest logit minus the frame's
      log-sum-exp). A sequence without frames gets no labels and 0.

    ```mlir
    nn.graph @decode(%z: !nn.tensor<[B, T, 32], f32>)
        -> (!nn.tensor<[B, Y], i32>, !nn.tensor<[B], f32>)
        dims [B: batch, T: seq(B), Y: seq(B) computed] {
      %y, %s = nn.ctc_greedy_decode %z from logits blank 0
          : !nn.tensor<[B, T, 32], f32> -> !nn.tensor<[B, Y], i32>, !nn.tensor<[B], f32>
      nn.return %y, %s : !nn.tensor<[B, Y], i32>, !nn.tensor<[B], f32>
    }
    ```
  }];
  let arguments = (ins NN_FloatTensor:$scores, NN_LossInput:$input_kind,
                       I64Attr:$blank);
  let results = (outs NN_IntegerTensor:$labels, NN_FloatTensor:$score);
  let assemblyFormat = [{
    $scores `from` $input_kind `blank` $blank attr-dict `:`
    qualified(type($scores)) `->` qualified(type($labels)) `,`
    qualified(type($score))
  }];
  let hasVerifier = 1;
}

def NN_CtcBeamSearchOp : NN_SequenceMixingOp<"ctc_beam_search", [
    NN_BeamLayout, DeclareOpInterfaceMethods<NN_DimProducerOpInterface>,
    DeclareOpInterfaceMethods<NN_GraphCalleeOpInterface>,
    DeclareOpInterfaceMethods<SymbolUserOpInterface>]> {
  let summary = "CTC prefix beam search";
  let description = [{
    The standard CTC prefix search (Graves 2012; Hannun et al. 2014) over
    `scores` `[B, T, V]` or packed `[N, V]` (logits, or log-probabilities
    with `from log_probs`), `blank` in `[0, V)`, per sequence over its own
    frames. Each prefix keeps its blank-ending and label-ending scores;
    a blank keeps the prefix, a repeated last label collapses into it, any
    other label (or the same one after a blank) extends it, and extensions
    that spell the same prefix meet there: their scores combine by
    log-sum-exp (`merge sum`, the prefix probability; the default) or max
    (`merge max`, the best path; with `beam 1` this is greedy decoding).
    The `beam` best prefixes survive each frame. Scores are log-space f64
    inside; ties go to the shorter label sequence, then the
    lexicographically smaller one, so a sequence's result never depends on
    its batch-mates. Pruning, per sequence and off by default:
    `token_beam` (a frame extends prefixes only by its `token_beam` best
    classes, blank counted), `token_threshold` (... within this distance
    of the frame's best score), `score_beam` (prefixes ranked below the
    frame's best minus this are dropped). docs/decoding.md has the rules.

    Results: `labels` `[B, Y]` i32 over a `computed` sequence dim `Y` (the
    best hypothesis; padded positions hold 0) and `score` `[B]` (its log
    score: with `merge sum` and a wide enough beam, `-ctc_loss` of the
    labels). A sequence without frames gets the empty hypothesis and 0; one
    whose frames allow no path (every score -inf) gets the empty
    hypothesis and -inf.

    N-best: with `labels` `[B, K, Y]` i32 and `score` `[B, K]`, where
    `K: seq(B) computed` and `Y: seq(H) computed` for
    `H: batch = flatten(B, K)`, the op returns every surviving prefix,
    best first (the order above): `len_K(b)` is at most `beam` (fewer when
    fewer prefixes exist; 0 when no path exists; 1, the empty hypothesis,
    for a sequence without frames). `nn.flatten_beam` turns the list into
    one batch entry per hypothesis, e.g. to rescore it with `ctc_loss`.

    Shallow fusion with a label-level language model (`lm`, a graph of the
    module called one step at a time on all `B · beam` prefixes of the
    beam): extending prefix y by label c adds `weight · log p_lm(c | y)`
    (λ ≥ 0) to the prefix's LM score, and prefixes are ranked (and
    returned, scored) by `acoustic + λ·log P_lm(y) + length_bonus · |y|`.
    `end`, when given, adds `λ · log p_lm(end | y)` to each final
    hypothesis. The LM starts from zero states with the `start` symbol as
    its first input; its output row over the op's `V` classes is
    log-softmaxed with `from logits` or read as is with `from log_probs`
    (the blank's column is never read as a label score; `end` may name it).
    `weight 0` gives the search without a language model.
    `length_bonus` needs `lm`. Callee convention (checked here): exactly
    one dim, a row batch `S`, no loss;
    `(%y: [S] i32, %state_1: [S, ...] float, ...) -> ([S, V] float,
    %state_1': [S, ...], ...)`, each state returned with its argument's
    type.

    ```mlir
    // dims [B: batch, T: seq(B), K: seq(B) computed,
    //       H: batch = flatten(B, K), Y: seq(H) computed]
    %h, %hs = nn.ctc_beam_search %z from logits blank 0 beam 4 merge sum
        : !nn.tensor<[B, T, 500], f32>
        -> !nn.tensor<[B, K, Y], i32>, !nn.tensor<[B, K], f32>
    ```

    ```mlir
    %y, %s = nn.ctc_beam_search %z from logits blank 0 beam 8 merge sum
        token_beam 16 : !nn.tensor<[B, T, 500], f32>
        -> !nn.tensor<[B, Y], i32>, !nn.tensor<[B], f32>
    ```

    ```mlir
    // @lm: (!nn.tensor<[S], i32>, !nn.tensor<[S, 64], f32>)
    //      -> (!nn.tensor<[S, 500], f32>, !nn.tensor<[S, 64], f32>)
    %y, %s = nn.ctc_beam_search %z from logits blank 0 beam 8 merge sum
        lm @lm from logits weight 0.5 start 0 end 0 length_bonus 1.0
        : !nn.tensor<[B, T, 500], f32>
        -> !nn.tensor<[B, Y], i32>, !nn.tensor<[B], f32>
    ```
  }];
  let arguments = (ins NN_FloatTensor:$scores, NN_LossInput:$input_kind,
                       I64Attr:$blank, ConfinedAttr<I64Attr, [IntMinValue<1>]>:$beam,
                       DefaultValuedAttr<NN_CtcMerge, "::mlir::nn::CtcMerge::sum">:$merge,
                       OptionalAttr<ConfinedAttr<I64Attr, [IntMinValue<1>]>>:$token_beam,
                       OptionalAttr<F64Attr>:$token_threshold,
                       OptionalAttr<F64Attr>:$score_beam,
                       OptionalAttr<FlatSymbolRefAttr>:$lm,
                       OptionalAttr<NN_LossInput>:$lm_input,
                       OptionalAttr<F64Attr>:$lm_weight,
                       OptionalAttr<I64Attr>:$lm_start,
                       OptionalAttr<I64Attr>:$lm_end,
                       OptionalAttr<F64Attr>:$length_bonus);
  let results = (outs NN_IntegerTensor:$labels, NN_FloatTensor:$score);
  let assemblyFormat = [{
    $scores `from` $input_kind `blank` $blank `beam` $beam `merge` $merge
    (`token_beam` $token_beam^)? (`token_threshold` $token_threshold^)?
    (`score_beam` $score_beam^)?
    (`lm` $lm^ `from` $lm_input `weight` $lm_weight `start` $lm_start)?
    (`end` $lm_end^)? (`length_bonus` $length_bonus^)?
    attr-dict `:` qualified(type($scores)) `->`
    qualified(type($labels)) `,` qualified(type($score))
  }];
  let hasVerifier = 1;
}

def NN_TransducerGreedyDecodeOp : NN_SequenceMixingOp<"transducer_greedy_decode", [
    DeclareOpInterfaceMethods<NN_DimProducerOpInterface>,
    DeclareOpInterfaceMethods<NN_GraphCalleeOpInterface>,
    DeclareOpInterfaceMethods<SymbolUserOpInterface>]> {
  let summary = "greedy RNN-T / RNA decoding through predictor and joiner graphs";
  let description = [{
    Greedy decoding of a transducer whose prediction and joint networks are
    graphs of the module, named by symbol and called one step at a time on
    all `B` rows of the batch (rows that have nothing to do compute and are
    ignored). `encoder` is padded `[B, T, D]` float; each sequence runs
    over its own frames, and padded frames (which may hold anything, NaN
    included) are never read into a result.

    Callee conventions (checked here). The callees mark no loss. The
    joiner, and a predictor in the step form, declare exactly one dim, a
    batch `S` (the row batch) over which they declare no sequence dim.

    * `predictor`, in one of two forms:
      - the sequence form, the prediction network exactly as training
        calls it on the labels after `nn.prepend_start`: `(%y: [S, U] i32)
        -> [S, U, D] float` with dims `[S: batch, U: seq(S)]`, built from
        frame-wise ops (`nn.dropout` is the identity here) and forward
        `nn.lstm`s only, anything that reads later labels refused. The
        network is written once: `nn-derive-step-graphs` writes its step
        form for the search, each LSTM a cell step with its (h, c) state;
      - the step form: `(%y: [S] i32, %state_1: [S, ...] float, ...) ->
        ([S, D] float, %state_1': [S, ...], ...)`, one step of the
        prediction network on row labels `y` and its state (zero or more
        state tensors, each returned with its argument's type).

      The output has the encoder's `D` and element type. The state starts
      as zeros and the first input is `start`, so the first output is the
      network's output after the start symbol (position 0 of what
      `nn.prepend_start` feeds it in training).
    * `joiner`: `(%h: [S, D] float) -> [S, V]` logits over `V` classes
      (`blank` in `[0, V)`), applied to `encoder[b, t] + pred[b]`, the sum
      `nn.transducer_join` forms. Training calls the same graph on the
      join's packed `[J, D]` rows (`nn.call` binds a callee row batch to a
      caller's packed dim).

    At frame t the class with the highest logit is chosen (the lowest
    index among equal maxima; a NaN never wins, a row of only NaN or -inf
    picks class 0) and its log-probability (log-softmax of the logits) is
    added to the score, whether it is a label or the blank. A label is
    emitted and advances the predictor (its output and state; rows that
    emit nothing keep theirs); the blank moves to frame t + 1.

    * `topology rnnt` (needs `max_symbols` >= 1): up to `max_symbols`
      labels per frame; after the `max_symbols`-th label of a frame the
      decoder moves to t + 1 without a further decision (nothing is
      scored for it).
    * `topology rna` (no `max_symbols`): one decision per frame, a label
      or the blank, then t + 1.

    Results: `labels` `[B, Y]` i32 over a `computed` sequence dim `Y` of
    the batch (padded to the longest hypothesis, at least 1, with 0) and
    `score` `[B]` of the encoder's element type, the sum of the chosen
    classes' log-probabilities (accumulated in f64). A sequence without
    frames gets the empty hypothesis and 0. The result for a sequence
    never depends on its batch-mates.

    ```mlir
    nn.graph @pred(%y: !nn.tensor<[S], i32>, %h: !nn.tensor<[S, 8], f32>)
        -> (!nn.tensor<[S, 8], f32>, !nn.tensor<[S, 8], f32>)
        dims [S: batch] { ... }
    nn.graph @joint(%h: !nn.tensor<[S, 8], f32>) -> !nn.tensor<[S, 5], f32>
        dims [S: batch] { ... }
    nn.graph @decode(%enc: !nn.tensor<[B, T, 8], f32>)
        -> (!nn.tensor<[B, Y], i32>, !nn.tensor<[B], f32>)
        dims [B: batch, T: seq(B), Y: seq(B) computed] {
      %y, %s = nn.transducer_greedy_decode %enc predictor @pred joiner @joint
          topology rnnt blank 0 start 0 max_symbols 3
          : !nn.tensor<[B, T, 8], f32> -> !nn.tensor<[B, Y], i32>, !nn.tensor<[B], f32>
      nn.return %y, %s : !nn.tensor<[B, Y], i32>, !nn.tensor<[B], f32>
    }
    ```
  }];
  let arguments = (ins NN_FloatTensor:$encoder, FlatSymbolRefAttr:$predictor,
                       FlatSymbolRefAttr:$joiner,
                       NN_TransducerTopology:$topology, I64Attr:$blank,
                       I64Attr:$start,
                       OptionalAttr<ConfinedAttr<I64Attr, [IntMinValue<1>]>>:$max_symbols);
  let results = (outs NN_IntegerTensor:$labels, NN_FloatTensor:$score);
  let assemblyFormat = [{
    $encoder `predictor` $predictor `joiner` $joiner `topology` $topology
    `blank` $blank `start` $start (`max_symbols` $max_symbols^)? attr-dict
    `:` qualified(type($encoder)) `->` qualified(type($labels)) `,`
    qualified(type($score))
  }];
  let extraClassDeclaration = [{
    /// Decisions per frame at most: max_symbols for rnnt, 1 for rna.
    int64_t getRoundsPerFrame() {
      return getTopology() == ::mlir::nn::TransducerTopology::rnnt
                 ? static_cast<int64_t>(getMaxSymbols().value_or(1))
                 : 1;
    }
  }];
  let hasVerifier = 1;
}

def NN_TransducerBeamSearchOp : NN_SequenceMixingOp<"transducer_beam_search", [
    NN_BeamLayout, DeclareOpInterfaceMethods<NN_DimProducerOpInterface>,
    DeclareOpInterfaceMethods<NN_GraphCalleeOpInterface>,
    DeclareOpInterfaceMethods<SymbolUserOpInterface>]> {
  let summary = "transducer beam search through predictor and joiner graphs";
  let description = [{
    Beam search of a transducer whose prediction and joint networks are
    graphs of the module, called as `nn.transducer_greedy_decode` calls
    them (the same callee conventions, checked the same way) on one row per
    beam slot: `B · beam` rows. `encoder` is padded `[B, T, D]`; each
    sequence runs over its own frames, and padded frames (NaN included) are
    never read into a result. Scores are log-space f64 inside; each
    hypothesis's predictor state follows its labels (it starts as zeros
    after the `start` symbol), and `log p(c | t, y)` is the log-softmax of
    the joiner's logits on `encoder[b, t] + pred(y)`.

    * `topology rna` (frame-synchronous; no `max_symbols`): per frame each
      hypothesis y extends by the blank (to y) or by each label c (to
      y + c), scored score(y) + log p(c | t, y); extensions that spell the
      same labels merge by log-sum-exp; the `beam` best survive.
    * `topology rnnt` (time-synchronous, Saon et al. 2020; needs
      `max_symbols` >= 1): per frame up to `max_symbols` + 1 rounds. In a
      round each hypothesis's blank ends its frame: it joins the frame's
      result set (equal labels merge by log-sum-exp); its labels form the
      next round's hypotheses (merged, the `beam` best), except in the last
      round, so a frame emits `max_symbols` labels at most. The next frame
      starts from the `beam` best of the result set. With `max_symbols` at
      least a hypothesis's length and a beam wide enough that nothing is
      pruned, its score is the exact log P(y | x), `-transducer_loss`.

    The order of hypotheses, everywhere: the higher score, then the
    shorter, then the lexicographically smaller label sequence, so a
    sequence's result never depends on its batch-mates. With `beam 1`,
    `rna` is greedy decoding (when no two classes score exactly equal);
    `rnnt` is not: it picks the best of the chain of best labels each
    ending the frame with the blank.

    Results, as `nn.ctc_beam_search` returns them: `labels` `[B, Y]` i32
    over a `computed` dim `Y` (the best hypothesis) and `score` `[B]` (the
    encoder's element type), or the N-best layout `[B, K, Y]` and `[B, K]`
    with `K: seq(B) computed` and `Y: seq(H) computed` for
    `H: batch = flatten(B, K)`, best first, at most `beam` per sequence. A
    sequence without frames gets the empty hypothesis and 0; one whose
    every path has probability 0 gets none (the best-only form: the empty
    hypothesis and -inf).

    ```mlir
    // dims [B: batch, T: seq(B), K: seq(B) computed,
    //       H: batch = flatten(B, K), Y: seq(H) computed]
    %h, %hs = nn.transducer_beam_search %enc predictor @pred joiner @joint
        topology rnnt blank 0 start 0 beam 4 max_symbols 3
        : !nn.tensor<[B, T, 8], f32>
        -> !nn.tensor<[B, K, Y], i32>, !nn.tensor<[B, K], f32>
    ```
  }];
  let arguments = (ins NN_FloatTensor:$encoder, FlatSymbolRefAttr:$predictor,
                       FlatSymbolRefAttr:$joiner,
                       NN_TransducerTopology:$topology, I64Attr:$blank,
                       I64Attr:$start,
                       ConfinedAttr<I64Attr, [IntMinValue<1>]>:$beam,
                       OptionalAttr<ConfinedAttr<I64Attr, [IntMinValue<1>]>>:$max_symbols);
  let results = (outs NN_IntegerTensor:$labels, NN_FloatTensor:$score);
  let assemblyFormat = [{
    $encoder `predictor` $predictor `joiner` $joiner `topology` $topology
    `blank` $blank `start` $start `beam` $beam
    (`max_symbols` $max_symbols^)? attr-dict `:` qualified(type($encoder))
    `->` qualified(type($labels)) `,` qualified(type($score))
  }];
  let extraClassDeclaration = [{
    /// Joiner rounds per frame at most: max_symbols + 1 for rnnt (the last
    /// only ends hypotheses), 1 for rna.
    int64_t getRoundsPerFrame() {
      return getTopology() == ::mlir::nn::TransducerTopology::rnnt
                 ? static_cast<int64_t>(getMaxSymbols().value_or(1)) + 1
                 : 1;
    }
  }];
  let hasVerifier = 1;
}

#endif // NN_DECODE_OPS_TD
