//===- NNBeamOps.td - N-best lists as a batch -------------*- tablegen -*-===//
//
// Moving between the N-best layout [B, K, ...] (K hypotheses per
// sequence) and the flattened batch H = flatten(B, K) (one entry per
// hypothesis), so that every op that runs on a batch (ctc_loss,
// transducer_loss, edit_distance, ...) runs on the hypotheses.
//
//===----------------------------------------------------------------------===//

#ifndef NN_BEAM_OPS_TD
#define NN_BEAM_OPS_TD

include "dialects/nn/NNOpBase.td"

def NN_FlattenBeamOp : NN_Op<"flatten_beam", [Pure, NN_BeamLayout,
    DeclareOpInterfaceMethods<NN_VjpOpInterface>]> {
  let summary = "[B, K, ...] to [H, ...] with H = flatten(B, K)";
  let description = [{
    Entry `offset(b) + k` of the result is hypothesis `k < len_K(b)` of
    sequence `b` (b-major, `offset` the exclusive prefix sum of K's
    lengths). The input is `[B, K, F...]` (K a sequence dim of B) or the
    N-best layout `[B, K, Y..., F...]` (Y sequence dims of H, e.g. each
    hypothesis's labels); the result drops K and renames B to H, keeping
    Y and the static axes. Positions beyond a hypothesis's own lengths
    are copied as they are (padding may hold anything).

    ```mlir
    // dims [B: batch, K: seq(B) computed, H: batch = flatten(B, K),
    //       Y: seq(H) computed]
    %yh = nn.flatten_beam %hyps : !nn.tensor<[B, K, Y], i32> -> !nn.tensor<[H, Y], i32>
    %sh = nn.flatten_beam %scores : !nn.tensor<[B, K], f32> -> !nn.tensor<[H], f32>
    ```
  }];
  let arguments = (ins NN_Tensor:$input);
  let results = (outs NN_Tensor:$result);
  let assemblyFormat = "$input attr-dict `:` qualified(type($input)) `->` qualified(type($result))";
  let hasVerifier = 1;
}

def NN_UnflattenBeamOp : NN_Op<"unflatten_beam", [Pure, NN_BeamLayout,
    DeclareOpInterfaceMethods<NN_VjpOpInterface>]> {
  let summary = "[H, ...] to [B, K, ...], padding zero";
  let description = [{
    The inverse of `nn.flatten_beam`: `[H, S..., F...]` with
    `H = flatten(B, K)` and S sequence dims of H becomes
    `[B, K, S..., F...]`; hypotheses `k >= len_K(b)` are zero. Per-
    hypothesis values (a rescored loss, an error count) so return to
    their sequence, e.g. for `nn.expected_risk`.

    ```mlir
    %nll = nn.unflatten_beam %l : !nn.tensor<[H], f32> -> !nn.tensor<[B, K], f32>
    ```
  }];
  let arguments = (ins NN_Tensor:$input);
  let results = (outs NN_Tensor:$result);
  let assemblyFormat = "$input attr-dict `:` qualified(type($input)) `->` qualified(type($result))";
  let hasVerifier = 1;
}

def NN_RepeatBeamOp : NN_Op<"repeat_beam", [Pure,
    DeclareOpInterfaceMethods<NN_VjpOpInterface>]> {
  let summary = "[B, S..., F...] to [H, SH..., F...]: each sequence per hypothesis";
  let description = [{
    Entry h of `H = flatten(B, K)` gets sequence `owner(h)`'s value: the
    acoustic scores, the references, anything the hypotheses of a
    sequence share. Each sequence axis S of the input becomes the lift
    `SH: seq(H) = S` (declared by the graph), whose lengths are S's,
    repeated. Its gradient is `nn.sum_beam`.

    ```mlir
    // dims [..., TH: seq(H) = T]
    %zh = nn.repeat_beam %z : !nn.tensor<[B, T, 8], f32> -> !nn.tensor<[H, TH, 8], f32>
    ```
  }];
  let arguments = (ins NN_Tensor:$input);
  let results = (outs NN_Tensor:$result);
  let assemblyFormat = "$input attr-dict `:` qualified(type($input)) `->` qualified(type($result))";
  let hasVerifier = 1;
}

def NN_SumBeamOp : NN_Op<"sum_beam", [Pure,
    DeclareOpInterfaceMethods<NN_VjpOpInterface>]> {
  let summary = "[H, SH..., F...] to [B, S..., F...]: the sum over each sequence's hypotheses";
  let description = [{
    The adjoint of `nn.repeat_beam`: position `[b, s..., f...]` of the
    result is the sum of `[h, s..., f...]` over the entries h of sequence
    b (none: 0). The input's sequence axes are lifts (`SH: seq(H) = S`);
    the result has their sources. Float element types only.

    ```mlir
    %g = nn.sum_beam %gh : !nn.tensor<[H, TH, 8], f32> -> !nn.tensor<[B, T, 8], f32>
    ```
  }];
  let arguments = (ins NN_FloatTensor:$input);
  let results = (outs NN_FloatTensor:$result);
  let assemblyFormat = "$input attr-dict `:` qualified(type($input)) `->` qualified(type($result))";
  let hasVerifier = 1;
}

#endif // NN_BEAM_OPS_TD
