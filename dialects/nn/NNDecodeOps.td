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
    NN_BeamLayout, DeclareOpInterfaceMethods<NN_DimProducerOpInterface>]> {
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
  }];
  let arguments = (ins NN_FloatTensor:$scores, NN_LossInput:$input_kind,
                       I64Attr:$blank, ConfinedAttr<I64Attr, [IntMinValue<1>]>:$beam,
                       DefaultValuedAttr<NN_CtcMerge, "::mlir::nn::CtcMerge::sum">:$merge,
                       OptionalAttr<ConfinedAttr<I64Attr, [IntMinValue<1>]>>:$token_beam,
                       OptionalAttr<F64Attr>:$token_threshold,
                       OptionalAttr<F64Attr>:$score_beam);
  let results = (outs NN_IntegerTensor:$labels, NN_FloatTensor:$score);
  let assemblyFormat = [{
    $scores `from` $input_kind `blank` $blank `beam` $beam `merge` $merge
    (`token_beam` $token_beam^)? (`token_threshold` $token_threshold^)?
    (`score_beam` $score_beam^)? attr-dict `:` qualified(type($scores)) `->`
    qualified(type($labels)) `,` qualified(type($score))
  }];
  let hasVerifier = 1;
}

#endif // NN_DECODE_OPS_TD
