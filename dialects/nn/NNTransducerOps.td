//===- NNTransducerOps.td - transducer ops -----------------*- tablegen -*-===//
//
// The prediction network's input, the joint over the (frame, label) grid,
// RNN-T and RNA losses and alignment, and their gradients.
//
//===----------------------------------------------------------------------===//

#ifndef NN_TRANSDUCER_OPS_TD
#define NN_TRANSDUCER_OPS_TD

include "dialects/nn/NNOpBase.td"

//===----------------------------------------------------------------------===//
// Transducers
//===----------------------------------------------------------------------===//

def NN_PrependStartOp : NN_Op<"prepend_start", [Pure,
    DeclareOpInterfaceMethods<NN_VjpOpInterface>]> {
  let summary = "the prediction network's input: a start symbol, then the labels";
  let description = [{
    `labels` `[B, U]` integer, result `[B, U1]` of the same element type
    with `U1` declared `seq(B) = U + 1`: position 0 holds `start` (the
    blank, by convention), position u + 1 holds label u. A transducer's
    prediction network (embedding and LSTM over `U1`) reads it; its output
    at position u is the state after the first u labels.

    ```mlir
    %in = nn.prepend_start %labels start 0
        : !nn.tensor<[B, U], i32> -> !nn.tensor<[B, U1], i32>
    ```
  }];
  let arguments = (ins NN_IntegerTensor:$labels, I64Attr:$start);
  let results = (outs NN_IntegerTensor:$result);
  let assemblyFormat = [{
    $labels `start` $start attr-dict `:` qualified(type($labels)) `->`
    qualified(type($result))
  }];
  let hasVerifier = 1;
}

def NN_TransducerJoinOp : NN_Op<"transducer_join", [Pure,
    DeclareOpInterfaceMethods<NN_SequenceMixingOpInterface, ["hasPackedForm"]>,
    DeclareOpInterfaceMethods<NN_VjpOpInterface>]> {
  let summary = "a transducer joint's input: encoder frame + prediction state";
  let description = [{
    `encoder` `[B, T, D]` and `prediction` `[B, U1, D]` (two sequence dims
    of one batch) meet on every valid (t, u) pair: the result holds
    `encoder[b, t] + prediction[b, u]`. It is either **packed** `[J, D]`
    with `J` declared `packed(B, T, U1)`, only the `sum_b T_b * U1_b`
    valid pairs (sequence by sequence, t-major: row `offset_b + t * U1_b +
    u`), or padded `[B, T, U1, D]`, where pairs past a length are zero.
    The joint network (tanh, linear to the vocabulary, a transducer loss)
    then runs on the rows; packing is what keeps its `[*, V]` logits the
    size of the valid grid.

    With the packed grid, each operand may also be packed, `[N_T, D]`
    (`packed(B, T)`) or `[N_U1, D]` (`packed(B, U1)`): the same sums, read
    from the operand's rows. `nn-pack-before-loss` packs them, so that the
    encoder and the prediction network run on real frames only.

    ```mlir
    %j = nn.transducer_join %enc, %pred : !nn.tensor<[B, T, 512], f32>,
        !nn.tensor<[B, U1, 512], f32> -> !nn.tensor<[J, 512], f32>
    ```
  }];
  let arguments = (ins NN_FloatTensor:$encoder, NN_FloatTensor:$prediction);
  let results = (outs NN_FloatTensor:$result);
  let assemblyFormat = [{
    $encoder `,` $prediction attr-dict `:` qualified(type($encoder)) `,`
    qualified(type($prediction)) `->` qualified(type($result))
  }];
  let hasVerifier = 1;
}

def NN_GatherStatesOp : NN_SequenceMixingOp<"gather_states", [
    DeclareOpInterfaceMethods<NN_VjpOpInterface>]> {
  let summary = "the prediction state each frame of an RNA alignment is in";
  let description = [{
    For frame-wise training on a fixed RNA alignment: `states` `[B, U1, D]`
    (the prediction network's output over `U1 = U + 1`) and `alignment`
    `[B, T]` integer (nn.viterbi_align's, topology rna: each frame emits
    the blank or the next label). The result `[B, T, D]` holds, at frame
    t, the state after the labels emitted before t: `states[b, n_t]` with
    `n_t` the number of frames before t whose class is neither `blank`
    nor negative (-1 marks padding and infeasible sequences), clamped to
    `U1_b - 1`. Frames past a sequence's length get 0, and so does every
    frame of a sequence without states (no gradient flows there). The joint is then
    evaluated only on the path: `encoder + gather_states`, frame-wise.

    `by_blanks` counts the blanks before t instead (clamped the same way):
    along an RNN-T alignment (`nn.transducer_align ... topology rnnt`,
    `[B, A]` with A = T + U positions, where a blank moves to the next
    frame and a label stays on it) that is the frame each position is on,
    so that `gather_states %enc, %path by_blanks` and
    `gather_states %pred, %path` give the encoder frame and the prediction
    state of every position of the path.

    ```mlir
    %g = nn.gather_states %pred, %align blank 0
        : !nn.tensor<[B, U1, 512], f32>, !nn.tensor<[B, T], i32>
        -> !nn.tensor<[B, T, 512], f32>
    %f = nn.gather_states %enc, %path blank 0 by_blanks
        : !nn.tensor<[B, T, 512], f32>, !nn.tensor<[B, A], i32>
        -> !nn.tensor<[B, A, 512], f32>
    ```
  }];
  let arguments = (ins NN_FloatTensor:$states, NN_IntegerTensor:$alignment,
                       I64Attr:$blank, UnitAttr:$by_blanks);
  let results = (outs NN_FloatTensor:$result);
  let assemblyFormat = [{
    $states `,` $alignment `blank` $blank (`by_blanks` $by_blanks^)? attr-dict `:`
    qualified(type($states)) `,` qualified(type($alignment)) `->`
    qualified(type($result))
  }];
  let hasVerifier = 1;
}

def NN_TransducerLossOp : NN_SequenceMixingOp<"transducer_loss", [
    DeclareOpInterfaceMethods<InferTypeOpInterface>,
    DeclareOpInterfaceMethods<NN_VjpOpInterface>,
    DeclareOpInterfaceMethods<NN_LossOpInterface>,
    DeclareOpInterfaceMethods<NN_ClassIndexOpInterface, ["getReservedClass"]>]> {
  let summary = "per-sequence RNN-T or RNA loss, -log p(labels | input)";
  let description = [{
    `joint` holds the joint network's output for every (t, u) pair:
    packed `[J, V]` with `J: packed(B, T, U1)` or padded `[B, T, U1, V]`,
    `U1` declared `seq(B) = U + 1` over the labels' dim; logits (the
    log-softmax over V is fused into the loss and its gradient), or
    log-probs with `from log_probs`. `labels` `[B, U]` integer, `blank` in
    `[0, V)`. The result `[B]` is -log of the sum over the topology's
    paths from (0, 0) to (T, U), in log space:

    * `rnnt` (Graves 2012): at (t, u) the blank moves to (t + 1, u), label
      u + 1 to (t, u + 1); a path ends with the blank at (T - 1, U).
    * `rna` (recurrent neural aligner, monotonic): one emission per frame;
      the blank moves to (t + 1, u), label u + 1 to (t + 1, u + 1). U
      labels need T >= U frames.

    An impossible sequence (rna with T < U, or T = 0) gives +inf, or 0
    with `zero_infinity`.

    ```mlir
    %l = nn.transducer_loss %logits, %labels from logits topology rnnt blank 0
        : !nn.tensor<[J, 500], f32>, !nn.tensor<[B, U], i32>
    ```
  }];
  let arguments = (ins NN_FloatTensor:$joint, NN_IntegerTensor:$labels,
                       NN_LossInput:$input_kind,
                       NN_TransducerTopology:$topology, I64Attr:$blank,
                       UnitAttr:$zero_infinity);
  let results = (outs NN_Tensor:$result);
  let assemblyFormat = [{
    $joint `,` $labels `from` $input_kind `topology` $topology `blank` $blank
    (`zero_infinity` $zero_infinity^)? attr-dict `:`
    qualified(type($joint)) `,` qualified(type($labels))
  }];
  let hasVerifier = 1;
}

def NN_TransducerAlignOp : NN_SequenceMixingOp<"transducer_align", [
    DeclareOpInterfaceMethods<NN_ClassIndexOpInterface, ["getReservedClass"]>,
    DeclareOpInterfaceMethods<NN_DimProducerOpInterface>]> {
  let summary = "Viterbi forced alignment over a transducer's (frame, label) grid";
  let description = [{
    The best path of each sequence through a transducer joint: `joint`
    packed `[J, V]` (`J: packed(B, T, U1)`) or padded `[B, T, U1, V]` as
    for `nn.transducer_loss` (logits, the log-softmax fused, or log-probs
    with `from log_probs`), `labels` `[B, U]`, `blank` in `[0, V)`. Every
    step is scored by the joint's row (t, u) it leaves: unlike
    `nn.viterbi_align` on frame scores, the scores depend on the labels
    emitted before.

    `rna`: at (t, u) a frame emits the blank, to (t + 1, u), or label
    u + 1, to (t + 1, u + 1). `alignment` is `[B, T]` i32, the class each
    frame emits on the best path (the blank or the next label; -1 on
    padded frames). A sequence with T < U (no path) gets -inf and -1 on
    every frame.

    `rnnt`: at (t, u) the blank moves to the next frame, (t + 1, u), and
    label u + 1 stays on the frame, (t, u + 1); the path ends with the
    blank of the last frame at (T - 1, U). `alignment` is `[B, A]` i32 over
    a computed sequence dim A (declare `A: seq(B) computed`): the path's
    T + U emissions in order, the blank or a label each (RETURNN's
    linear RNN-T alignment); -1 on padding. A sequence without frames has
    no path: length 0 and score -inf.

    `score` `[B]` is the path's log-probability (-inf when no path has a
    probability above 0, the alignment then -1 throughout). Ties go to the
    blank, so that each label is emitted as early as the best score allows
    (as `nn.viterbi_align` breaks them).

    ```mlir
    %a, %s = nn.transducer_align %logits, %labels from logits topology rna
        blank 0 : !nn.tensor<[J, 500], f32>, !nn.tensor<[B, U], i32>
        -> !nn.tensor<[B, T], i32>, !nn.tensor<[B], f32>
    %p, %r = nn.transducer_align %logits, %labels from logits topology rnnt
        blank 0 : !nn.tensor<[J, 500], f32>, !nn.tensor<[B, U], i32>
        -> !nn.tensor<[B, A], i32>, !nn.tensor<[B], f32>
    ```
  }];
  let arguments = (ins NN_FloatTensor:$joint, NN_IntegerTensor:$labels,
                       NN_LossInput:$input_kind,
                       NN_TransducerTopology:$topology, I64Attr:$blank);
  let results = (outs NN_Tensor:$alignment, NN_Tensor:$score);
  let assemblyFormat = [{
    $joint `,` $labels `from` $input_kind `topology` $topology `blank` $blank
    attr-dict `:` qualified(type($joint)) `,` qualified(type($labels)) `->`
    qualified(type($alignment)) `,` qualified(type($score))
  }];
  let hasVerifier = 1;
}

//===----------------------------------------------------------------------===//
// Gradients (built by nn-autodiff; docs/autodiff.md)
//===----------------------------------------------------------------------===//

def NN_TransducerJoinGradOp : NN_Op<"transducer_join_grad", [Pure]> {
  let summary = "the input gradients of nn.transducer_join";
  let description = [{
    `grad` has the join's result type; the results have the types of its
    encoder and prediction operands (padded or packed): the encoder frame
    (b, t) gets the sum of `grad` over u < U1_b, the prediction state
    (b, u) the sum over t < T_b; padded positions past a length get 0.

    ```mlir
    %de, %dp = nn.transducer_join_grad %dj : !nn.tensor<[J, 512], f32>
        -> !nn.tensor<[B, T, 512], f32>, !nn.tensor<[B, U1, 512], f32>
    ```
  }];
  let arguments = (ins NN_FloatTensor:$grad);
  let results = (outs NN_FloatTensor:$encoder, NN_FloatTensor:$prediction);
  let assemblyFormat = [{
    $grad attr-dict `:` qualified(type($grad)) `->` qualified(type($encoder))
    `,` qualified(type($prediction))
  }];
  let hasVerifier = 1;
}

def NN_GatherStatesGradOp : NN_Op<"gather_states_grad", [Pure]> {
  let summary = "the states gradient of nn.gather_states: a scatter-add";
  let description = [{
    `grad` `[B, T, D]` has the gather's result type; the result has the
    type of its states operand: state (b, u) gets the sum of `grad` over
    the valid frames that gathered it (counted as the gather counts them,
    `by_blanks` or not).

    ```mlir
    %ds = nn.gather_states_grad %dg, %align blank 0
        : !nn.tensor<[B, T, 512], f32>, !nn.tensor<[B, T], i32>
        -> !nn.tensor<[B, U1, 512], f32>
    ```
  }];
  let arguments = (ins NN_FloatTensor:$grad, NN_IntegerTensor:$alignment,
                       I64Attr:$blank, UnitAttr:$by_blanks);
  let results = (outs NN_FloatTensor:$result);
  let assemblyFormat = [{
    $grad `,` $alignment `blank` $blank (`by_blanks` $by_blanks^)? attr-dict `:` qualified(type($grad))
    `,` qualified(type($alignment)) `->` qualified(type($result))
  }];
  let hasVerifier = 1;
}

def NN_TransducerLossGradOp : NN_Op<"transducer_loss_grad", [Pure,
    AllTypesMatch<["joint", "result"]>]> {
  let summary = "the joint gradient of nn.transducer_loss (forward-backward)";
  let description = [{
    `grad` `[B]` is the gradient of a transducer_loss's per-sequence
    result; the other operands and attributes are the loss's. With
    `alpha`, `beta` the log-space forward and backward variables and
    `gamma_k(t, u)` the posterior of emitting class k at (t, u), the
    result at a valid row is `grad * (occ(t, u) * softmax(joint) -
    gamma)`, where `occ(t, u) = exp(alpha + beta - log p)` is the row's
    total posterior, from logits, and `-grad * gamma` from log-probs.
    Rows no path visits and padded rows get 0; an impossible sequence
    gets 0 with `zero_infinity` and NaN without it. `labels` has any
    integer type the loss takes (graph inputs: i32 or i64), with the same
    result bit for bit.

    ```mlir
    %dj = nn.transducer_loss_grad %g, %logits, %labels from logits
        topology rnnt blank 0 : !nn.tensor<[B], f32>,
        !nn.tensor<[J, 500], f32>, !nn.tensor<[B, U], i32>
    ```
  }];
  let arguments = (ins NN_FloatTensor:$grad, NN_FloatTensor:$joint,
                       NN_IntegerTensor:$labels, NN_LossInput:$input_kind,
                       NN_TransducerTopology:$topology, I64Attr:$blank,
                       UnitAttr:$zero_infinity);
  let results = (outs NN_FloatTensor:$result);
  let assemblyFormat = [{
    $grad `,` $joint `,` $labels `from` $input_kind `topology` $topology
    `blank` $blank (`zero_infinity` $zero_infinity^)? attr-dict `:`
    qualified(type($grad)) `,` qualified(type($joint)) `,`
    qualified(type($labels))
  }];
  let hasVerifier = 1;
}

#endif // NN_TRANSDUCER_OPS_TD
