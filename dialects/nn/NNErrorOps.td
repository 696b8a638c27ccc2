//===- NNErrorOps.td - error counts of recognized sequences -*- tablegen -*-===//
//
// Scoring a recognized label sequence against its reference inside a
// graph: the Levenshtein alignment per sequence, for label error rates
// reported beside the trained losses.
//
//===----------------------------------------------------------------------===//

#ifndef NN_ERROR_OPS_TD
#define NN_ERROR_OPS_TD

include "dialects/nn/NNOpBase.td"

def NN_EditDistanceOp : NN_SequenceMixingOp<"edit_distance", [
    DeclareOpInterfaceMethods<InferTypeOpInterface>,
    DeclareOpInterfaceMethods<NN_LossOpInterface>]> {
  let summary = "per-sequence Levenshtein distance of label sequences";
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
  }];
  let arguments = (ins NN_Tensor:$hyp, NN_Tensor:$ref);
  let results = (outs NN_Tensor:$errors, NN_Tensor:$ref_lengths,
                      NN_Tensor:$counts);
  let assemblyFormat = [{
    $hyp `,` $ref attr-dict `:` qualified(type($hyp)) `,` qualified(type($ref))
  }];
  let hasVerifier = 1;
}

#endif // NN_ERROR_OPS_TD
