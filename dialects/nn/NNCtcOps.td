//===- NNCtcOps.td - CTC loss and forced alignment ---------*- tablegen -*-===//
//
// Per-sequence CTC over frame scores and labels: the loss, its gradient
// and the Viterbi forced alignment.
//
//===----------------------------------------------------------------------===//

#ifndef NN_CTC_OPS_TD
#define NN_CTC_OPS_TD

include "dialects/nn/NNOpBase.td"

//===----------------------------------------------------------------------===//
// CTC and alignment
//===----------------------------------------------------------------------===//

def NN_CtcLossOp : NN_Op<"ctc_loss", [Pure,
    DeclareOpInterfaceMethods<NN_SequenceMixingOpInterface,
        ["hasPackedForm", "getPaddedFrameWork", "isPackableOperand"]>,
    DeclareOpInterfaceMethods<InferTypeOpInterface>,
    DeclareOpInterfaceMethods<NN_VjpOpInterface>,
    DeclareOpInterfaceMethods<NN_LossOpInterface>,
    DeclareOpInterfaceMethods<NN_ClassIndexOpInterface, ["getReservedClass"]>]> {
  let summary = "per-sequence CTC loss, -log p(labels | input)";
  let description = [{
    `logits` `[B, T, V]` over a sequence dim `T`, or packed `[N, V]` with
    `N` declared `packed(B, T)` (logits, or log-probs with
    `from log_probs`), `labels` `[B, U]` integer over an independent
    sequence dim `U` of the same batch, `blank` in `[0, V)`. The result
    `[B]` is the forward-algorithm value in log space over `2U + 1`
    states. An impossible alignment (too few frames) gives +inf, or 0 with
    `zero_infinity`.

    ```mlir
    %ctc = nn.ctc_loss %logits, %labels from logits blank 0
        : !nn.tensor<[B, T, 500], f32>, !nn.tensor<[B, U], i32>
    ```
  }];
  let arguments = (ins NN_FloatTensor:$logits, NN_IntegerTensor:$labels,
                       NN_LossInput:$input_kind, I64Attr:$blank,
                       UnitAttr:$zero_infinity);
  let results = (outs NN_Tensor:$result);
  let assemblyFormat = [{
    $logits `,` $labels `from` $input_kind `blank` $blank
    (`zero_infinity` $zero_infinity^)? attr-dict `:`
    qualified(type($logits)) `,` qualified(type($labels))
  }];
  let hasVerifier = 1;
}

def NN_ViterbiAlignOp : NN_SequenceMixingOp<"viterbi_align", [
    DeclareOpInterfaceMethods<InferTypeOpInterface>,
    DeclareOpInterfaceMethods<NN_ClassIndexOpInterface, ["getReservedClass"]>]> {
  let summary = "Viterbi forced alignment of label sequences to frames";
  let description = [{
    The best path through a topology's state graph, per sequence: `scores`
    `[B, T, V]` or packed `[N, V]` (logits, or log-probs with
    `from log_probs`; the path is
    the same for both, since every path takes each frame's normalizer
    once) and `labels` `[B, U]` integer over an independent sequence dim
    `U`, `blank` in `[0, V)`. Results: `alignment` on the scores' positions
    (`[B, T]` or `[N]`) i32, the class each frame emits on the best path
    (blank included), -1 on padded frames; `score` `[B]`, the path's
    summed log-probabilities.

    Topologies: `ctc`, states blank, l1, blank, l2, ..., blank, each frame
    staying, moving one state on, or skipping a blank between two
    different labels, ending in the last label or the blank after it;
    `rna` (recurrent neural aligner), one emission per frame, the blank
    or the next label, no loop: U labels need T >= U frames. A sequence no
    path fits (too few frames: T < U + repeated neighbours for `ctc`) gets
    score -inf and -1 on every frame: flagged, never a made-up path.

    Ties go to the predecessor with the higher state index, so that every
    label is emitted as early as the best score allows: staying before
    moving on before skipping; at the last frame, the final blank before
    the last label (docs/sequence-training.md).

    With `prior %p` (`[V]`, the scores' element type), the search scores
    class c on every frame by its log-probability minus `p[c]`: with `p` a
    scaled log prior, the alignment is less peaky (labels keep more of
    their frames, the blank fewer). The `score` stays the chosen path's
    log-probability, without the prior.

    ```mlir
    %a, %s = nn.viterbi_align %lp, %labels from log_probs topology ctc blank 0
        : !nn.tensor<[B, T, 500], f32>, !nn.tensor<[B, U], i32>
    %b, %t = nn.viterbi_align %z, %labels from logits topology ctc blank 0
        prior %p : !nn.tensor<[B, T, 500], f32>, !nn.tensor<[B, U], i32>,
        !nn.tensor<[500], f32>
    ```
  }];
  let arguments = (ins NN_FloatTensor:$scores, NN_IntegerTensor:$labels,
                       Optional<NN_FloatTensor>:$prior,
                       NN_LossInput:$input_kind, NN_AlignTopology:$topology,
                       I64Attr:$blank);
  let results = (outs NN_Tensor:$alignment, NN_Tensor:$score);
  let assemblyFormat = [{
    $scores `,` $labels `from` $input_kind `topology` $topology `blank` $blank
    (`prior` $prior^)? attr-dict `:` qualified(type($scores)) `,`
    qualified(type($labels)) (`,` qualified(type($prior))^)?
  }];
  let hasVerifier = 1;
}

//===----------------------------------------------------------------------===//
// Gradients (built by nn-autodiff; docs/autodiff.md)
//===----------------------------------------------------------------------===//

def NN_CtcLossGradOp : NN_Op<"ctc_loss_grad", [Pure,
    AllTypesMatch<["logits", "result"]>]> {
  let summary = "the input gradient of nn.ctc_loss (forward-backward)";
  let description = [{
    `grad` `[B]` is the gradient of a ctc_loss's per-sequence result; the
    other operands and attributes are the loss's. With `gamma[t, c]` the
    posterior of class `c` at frame `t` (the log-space forward-backward
    occupancy of the states emitting `c`), the result at valid frames is
    `grad * (softmax(logits) - gamma)` from logits and `-grad * gamma`
    from log-probs; padded frames get 0. A class whose log-probability is
    -inf at a frame (a -inf logit) lies on no path, so `gamma` and the
    result are 0 there. A sequence whose labels cannot be aligned (its
    loss is +inf) gets 0 with `zero_infinity` and NaN without it.

    ```mlir
    %dx = nn.ctc_loss_grad %g, %logits, %labels from logits blank 0
        : !nn.tensor<[B], f32>, !nn.tensor<[B, T, 500], f32>, !nn.tensor<[B, U], i32>
    ```
  }];
  let arguments = (ins NN_FloatTensor:$grad, NN_FloatTensor:$logits,
                       NN_IntegerTensor:$labels, NN_LossInput:$input_kind,
                       I64Attr:$blank, UnitAttr:$zero_infinity);
  let results = (outs NN_FloatTensor:$result);
  let assemblyFormat = [{
    $grad `,` $logits `,` $labels `from` $input_kind `blank` $blank
    (`zero_infinity` $zero_infinity^)? attr-dict `:` qualified(type($grad))
    `,` qualified(type($logits)) `,` qualified(type($labels))
  }];
  let hasVerifier = 1;
}

#endif // NN_CTC_OPS_TD
