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

#endif // NN_DECODE_OPS_TD
