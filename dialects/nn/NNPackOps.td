//===- NNPackOps.td - pack, unpack and broadcast -----------*- tablegen -*-===//
//
// Conversions between padded frames, packed frames and per-sequence
// values.
//
//===----------------------------------------------------------------------===//

#ifndef NN_PACK_OPS_TD
#define NN_PACK_OPS_TD

include "dialects/nn/NNOpBase.td"

//===----------------------------------------------------------------------===//
// Pack / unpack
//===----------------------------------------------------------------------===//

def NN_PackOp : NN_Op<"pack", [Pure,
    DeclareOpInterfaceMethods<NN_VjpOpInterface>]> {
  let summary = "padded [B, T, F...] to packed [N, F...], batch-major";
  let description = [{
    Keeps the first `len(b)` frames of each sequence `b`, in batch order;
    `N` is declared `packed(B, T)`.

    ```mlir
    %p = nn.pack %h : !nn.tensor<[B, T, 512], f32> -> !nn.tensor<[N, 512], f32>
    ```
  }];
  let arguments = (ins NN_Tensor:$input);
  let results = (outs NN_Tensor:$result);
  let assemblyFormat = "$input attr-dict `:` qualified(type($input)) `->` qualified(type($result))";
  let hasVerifier = 1;
  // pack(unpack(p)) is p: unpacking only adds padding that packing drops.
  let hasFolder = 1;
}

def NN_UnpackOp : NN_Op<"unpack", [Pure,
    DeclareOpInterfaceMethods<NN_VjpOpInterface>]> {
  let summary = "packed [N, F...] to padded [B, T, F...], padding zero";
  let description = [{
    The inverse of `nn.pack`; padded frames are zero.

    ```mlir
    %u = nn.unpack %p : !nn.tensor<[N, 512], f32> -> !nn.tensor<[B, T, 512], f32>
    ```
  }];
  let arguments = (ins NN_Tensor:$input);
  let results = (outs NN_Tensor:$result);
  let assemblyFormat = "$input attr-dict `:` qualified(type($input)) `->` qualified(type($result))";
  let hasVerifier = 1;
}

def NN_BroadcastSeqOp : NN_Op<"broadcast_seq", [Pure,
    DeclareOpInterfaceMethods<NN_VjpOpInterface>]> {
  let summary = "per-sequence [B, F...] to padded [B, T, F...], padding zero";
  let description = [{
    Repeats each sequence's value on every frame of that sequence: frame
    `t < len(b)` of the result is `input[b]`, later frames are zero (as
    `nn.unpack` leaves them). `T` must be a sequence dim of `B`. Joins a
    per-utterance value (a speaker embedding, a pooled summary) to the
    frames of its utterance.

    ```mlir
    %s = nn.broadcast_seq %spk : !nn.tensor<[B, 64], f32> -> !nn.tensor<[B, T, 64], f32>
    ```
  }];
  let arguments = (ins NN_Tensor:$input);
  let results = (outs NN_Tensor:$result);
  let assemblyFormat = "$input attr-dict `:` qualified(type($input)) `->` qualified(type($result))";
  let hasVerifier = 1;
}

#endif // NN_PACK_OPS_TD
