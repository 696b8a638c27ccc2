//===- NNErrorOps.td - error counts of recognized sequences -*- tablegen -*-===//
//
// Scoring a recognized label sequence against its reference inside a
// graph: the Levenshtein alignment per sequence, for label error rates
// reported beside the trained losses; and the expected risk of an N-best
// list under the model's own scores (minimum expected error training),
// with its gradient.
//
//===----------------------------------------------------------------------===//

#ifndef NN_ERROR_OPS_TD
#define NN_ERROR_OPS_TD

include "dialects/nn/NNOpBase.td"

def NN_EditDistanceOp : NN_SequenceMixingOp<"edit_distance", [
    DeclareOpInterfaceMethods<InferTypeOpInterface>,
    DeclareOpInterfaceMethods<NN_LossOpInterface>]> {
  let summary = "per-sequence Levenshtein distance of label or word sequences";
  let description = [{
    `hyp` `[B, Y]` and `ref` `[B, U]`, padded i32 label sequences over two
    sequence dims of one batch (`Y` and `U` may be the same dim). Sequence
    b compares the first `len_Y(b)` hypothesis labels with the first
    `len_U(b)` reference labels; padded positions are never read and may
    hold anything. Packed operands are not accepted.

    Results, one row per sequence:
    * `errors` `[B]` f32: the edit distance with unit costs, S + I + D
      (substitutions, insertions, deletions): the per-sequence loss value
      (`LossOpInterface`);
    * `ref_lengths` `[B]` f32: `len_U(b)`, the number of reference labels;
    * `counts` `[B, 3]` i32: S, I and D of one minimal alignment.

    An insertion is a hypothesis label with no reference label, a deletion
    a reference label missing from the hypothesis: an empty hypothesis
    gives `len_U(b)` deletions, an empty reference `len_Y(b)` insertions.

    Several minimal alignments may split the total differently. The counts
    are those of the alignment the dynamic programme keeps: with `D(i, j)`
    the distance between the first `i` hypothesis and the first `j`
    reference labels, each cell takes, among its predecessors that reach
    its minimum, the diagonal (a match, or a substitution) first, then the
    deletion `D(i, j - 1) + 1`, then the insertion `D(i - 1, j) + 1`, and
    the counts of the path through the cells so chosen are reported (a
    backtrace from `D(len_Y, len_U)` that prefers the same moves in the
    same order walks that path). For hypothesis "sitting" and reference
    "kitten" as labels: 2 substitutions, 1 insertion, 0 deletions. The
    total, and so every error rate, does not depend on the rule; the split
    may differ from the host scorer's (`nn::editDistance` in
    `include/nn/ErrorRate.h` reports the minimal alignment with the fewest
    substitutions: hypothesis "aba", reference "bcab" gives 2, 0, 1 here
    and 0, 1, 2 there).

    The op has no gradient: its values can be reported (`as_error`), never
    trained. Marked with the reference lengths as the custom normalization
    factor (the divisor: `nn.mark_loss` divides the summed errors by the
    summed factor), the reported value is the label error rate
    `sum errors / sum ref_lengths` of the batch, and the dev evaluation,
    which adds both sums over its batches, reports the corpus rate.
    `eval_only` keeps the op out of compiled train steps.

    ```mlir
    %e, %n, %c = nn.edit_distance %hyp, %ref
        : !nn.tensor<[B, Y], i32>, !nn.tensor<[B, U], i32>
    nn.mark_loss %e, %n as "ler" normalize custom as_error eval_only
        : !nn.tensor<[B], f32>, !nn.tensor<[B], f32>
    ```

    **Words.** With `words separator S` the op compares words instead of
    labels: each sequence (of its own length) is split at the labels equal
    to `S`, a run of separators is one boundary, and separators at either
    end bound nothing, so there are no empty words. Two words are equal
    when their label spans are: the same labels in the same order. The
    programme, its tie rule and the results are those above with words
    for labels: `ref_lengths` counts the reference words, `counts` the
    word substitutions, insertions and deletions, and the marked rate is
    the word error rate. With a character vocabulary whose separator
    token is "▁" alone (`nn-data`'s character vocabularies) and whose
    other tokens differ, this is the word error rate `nn-decode --vocab`
    reports: equal spans spell equal words and unequal spans unequal
    ones. A vocabulary whose tokens carry "▁" inside them (SentencePiece
    pieces) spells one word with several spans, which this op would count
    as different; score those with `nn-decode --vocab`.

    ```mlir
    %e, %n, %c = nn.edit_distance %hyp, %ref words separator 1
        : !nn.tensor<[B, Y], i32>, !nn.tensor<[B, U], i32>
    nn.mark_loss %e, %n as "wer" normalize custom as_error eval_only
        : !nn.tensor<[B], f32>, !nn.tensor<[B], f32>
    ```
  }];
  let arguments = (ins NN_Tensor:$hyp, NN_Tensor:$ref,
                       OptionalAttr<I64Attr>:$separator);
  let results = (outs NN_Tensor:$errors, NN_Tensor:$ref_lengths,
                      NN_Tensor:$counts);
  let assemblyFormat = [{
    $hyp `,` $ref (`words` `separator` $separator^)? attr-dict `:`
    qualified(type($hyp)) `,` qualified(type($ref))
  }];
  let hasVerifier = 1;
}

def NN_RiskBaseline : I32EnumAttr<"RiskBaseline",
    "what nn.expected_risk subtracts from each hypothesis's error", [
    I32EnumAttrCase<"mean", 0>,
    I32EnumAttrCase<"none", 1>]> {
  let cppNamespace = "::mlir::nn";
}

def NN_ExpectedRiskOp : NN_SequenceMixingOp<"expected_risk", [
    DeclareOpInterfaceMethods<InferTypeOpInterface>,
    DeclareOpInterfaceMethods<NN_VjpOpInterface>,
    DeclareOpInterfaceMethods<NN_LossOpInterface>]> {
  let summary = "expected error of an N-best list under its renormalized scores";
  let description = [{
    The loss of minimum expected error (MWER, risk) training. `nll` and
    `err` are `[B, K]`, padded over a batch dim `B` and one sequence dim
    `K` of it (the hypotheses of each sequence's N-best list, usually a
    computed dim from a beam search; any `K: seq(B)` works), of one float
    element type: `nll[b, k]` is the model's negative log-likelihood of
    hypothesis k (a full-sum loss, `nn.ctc_loss` or `nn.transducer_loss`
    over the B·K batch), `err[b, k]` its error against the reference (an
    edit distance). Packed operands and feature axes are not accepted.

    For sequence b, over its `n = len_K(b)` hypotheses:

    * `P_k = exp(-nll_k) / sum_j exp(-nll_j)`, the scores renormalized over
      the list (computed from `nll_k - min_j nll_j`, which cannot
      overflow);
    * the baseline `e = mean_k err_k` (`baseline mean`) or 0
      (`baseline none`);
    * the result `risk[b] = sum_k P_k (err_k - e)`, of the operands'
      element type.

    With `baseline mean` the result is the expected error relative to the
    list's average; the baseline does not change the gradient. A
    hypothesis with `nll = +inf` (one the model cannot produce: a CTC loss
    without `zero_infinity` whose labels do not fit the frames) gets
    `P_k = 0`. A sequence with no hypotheses, or whose every `nll` is
    +inf, gets 0 and no gradient. A NaN `nll` among the valid hypotheses makes
    the sequence's result NaN. Padded positions are never used and may
    hold anything, NaN included.

    It is a per-sequence loss value (`LossOpInterface`); unlike
    `nn.edit_distance` it can be trained: its gradient with respect to
    `nll` is `nn.expected_risk_grad`, and `err` gets none (an error count
    is not differentiable).

    ```mlir
    %r = nn.expected_risk %nll, %err baseline mean
        : !nn.tensor<[B, K], f32>, !nn.tensor<[B, K], f32>
    nn.mark_loss %r as "mwer" normalize per_sequence : !nn.tensor<[B], f32>
    ```
  }];
  let arguments = (ins NN_FloatTensor:$nll, NN_FloatTensor:$err,
                       NN_RiskBaseline:$baseline);
  let results = (outs NN_FloatTensor:$risk);
  let assemblyFormat = [{
    $nll `,` $err `baseline` $baseline attr-dict `:` qualified(type($nll))
    `,` qualified(type($err))
  }];
  let hasVerifier = 1;
}

//===----------------------------------------------------------------------===//
// Gradients (built by nn-autodiff; docs/autodiff.md)
//===----------------------------------------------------------------------===//

def NN_ExpectedRiskGradOp : NN_Op<"expected_risk_grad", [Pure,
    AllTypesMatch<["nll", "result"]>]> {
  let summary = "the nll gradient of nn.expected_risk";
  let description = [{
    `grad` `[B]` is the gradient of an expected_risk's result, `nll` and
    `err` its operands. With `P` the renormalized scores of sequence b's
    hypotheses, the result at a valid hypothesis j is
    `-grad[b] * P_j * (err_j - sum_k P_k err_k)`, whatever the baseline
    (its term, `-e * sum_k P_k = -e`, does not depend on `nll`). Padded
    positions, hypotheses with `nll = +inf`, and the sequences whose result
    is 0 by rule (no hypotheses, or every `nll` +inf) get 0; a NaN `nll`
    among the valid hypotheses makes the sequence's valid entries NaN.

    ```mlir
    %dnll = nn.expected_risk_grad %g, %nll, %err
        : !nn.tensor<[B], f32>, !nn.tensor<[B, K], f32>, !nn.tensor<[B, K], f32>
    ```
  }];
  let arguments = (ins NN_FloatTensor:$grad, NN_FloatTensor:$nll,
                       NN_FloatTensor:$err);
  let results = (outs NN_FloatTensor:$result);
  let assemblyFormat = [{
    $grad `,` $nll `,` $err attr-dict `:` qualified(type($grad)) `,`
    qualified(type($nll)) `,` qualified(type($err))
  }];
  let hasVerifier = 1;
}

#endif // NN_ERROR_OPS_TD
