//===- NNSequenceOps.td - sequence-mixing layers -----------*- tablegen -*-===//
//
// Layers that mix frames along a sequence axis, masked by its lengths
// (SequenceMixingOpInterface), and their gradients, which share their
// checks.
//
//===----------------------------------------------------------------------===//

#ifndef NN_SEQUENCE_OPS_TD
#define NN_SEQUENCE_OPS_TD

include "dialects/nn/NNOpBase.td"

//===----------------------------------------------------------------------===//
// Sequence-mixing layers
//===----------------------------------------------------------------------===//

def NN_LstmOp : NN_Op<"lstm", [Pure,
    DeclareOpInterfaceMethods<NN_SequenceMixingOpInterface,
                              ["hasPackedForm", "getPaddedFrameWork"]>,
    DeclareOpInterfaceMethods<NN_ParameterInitOpInterface>,
    DeclareOpInterfaceMethods<InferTypeOpInterface>,
    DeclareOpInterfaceMethods<NN_VjpOpInterface>]> {
  let summary = "LSTM over a sequence axis, masked by its lengths";
  let description = [{
    `input` `[B, T, I]` with `T` a sequence dim of `B`, or packed
    `[N, I]` with `N` declared `packed(B, T)`; the result has the input's
    position axes. Gate order i, f, g, o.
    Unidirectional (`forward`, `backward`): `input_weight` `[4H, I]`,
    `recurrent_weight` `[4H, H]`, `bias` `[4H]`, result `[B, T, H]`.
    `bidirectional`: the weights get a leading axis of size 2 (forward,
    backward) and the result is `[B, T, 2H]`, forward features first. The
    backward direction runs over each sequence within its own length;
    outputs on padded frames are zero. Packed and padded inputs give the
    same frames (both run on real frames only; `nn-pack-before-loss`
    moves an lstm behind the pack when that pays).

    ```mlir
    %h = nn.lstm bidirectional %x, %wi, %wh, %b : !nn.tensor<[B, T, 80], f32>,
       !nn.tensor<[2, 1024, 80], f32>, !nn.tensor<[2, 1024, 256], f32>,
       !nn.tensor<[2, 1024], f32>
    ```
  }];
  let arguments = (ins NN_LstmDirection:$direction, NN_FloatTensor:$input,
                       NN_FloatTensor:$input_weight,
                       NN_FloatTensor:$recurrent_weight,
                       NN_FloatTensor:$bias);
  let results = (outs NN_Tensor:$result);
  let assemblyFormat = [{
    $direction $input `,` $input_weight `,` $recurrent_weight `,` $bias
    attr-dict `:` qualified(type($input)) `,` qualified(type($input_weight)) `,`
    qualified(type($recurrent_weight)) `,` qualified(type($bias))
  }];
  let hasVerifier = 1;
}

def NN_LstmWithTapeOp : NN_SequenceMixingOp<"lstm_with_tape", [
    DeclareOpInterfaceMethods<NN_ParameterInitOpInterface>]> {
  let summary = "nn.lstm that also keeps what its backward reads (the tape)";
  let description = [{
    Computes `nn.lstm`'s result from the same operands and direction, and
    `tape` `[B, T, D * 6H]` (`[N, D * 6H]` for a packed input; D = 2 for
    `bidirectional`, else 1): per direction, six blocks of H features per
    frame, the cell state, the gate activations i, f, g, o and the output
    h. Its layout is the lowering's own: with the position axes read as
    one axis of rows, the first N rows (N real frames) hold the frames in the LSTM's step order
    (the sequences sorted by length, longest first; step s holds those
    longer than s, and a backward direction's step s of a sequence is its
    frame len - 1 - s); the other rows are never written or read. Only
    `nn-save-lstm-tape` creates it, after `nn-autodiff`, to hand the tape
    to the `nn.lstm_grad` of the same operands instead of recomputing the
    forward there (docs/autodiff.md).

    ```mlir
    %h, %tape = nn.lstm_with_tape forward %x, %wi, %wh, %b
        : !nn.tensor<[B, T, 80], f32>, !nn.tensor<[1024, 80], f32>,
          !nn.tensor<[1024, 256], f32>, !nn.tensor<[1024], f32>
        -> !nn.tensor<[B, T, 256], f32>, !nn.tensor<[B, T, 1536], f32>
    ```
  }];
  let arguments = (ins NN_LstmDirection:$direction, NN_FloatTensor:$input,
                       NN_FloatTensor:$input_weight,
                       NN_FloatTensor:$recurrent_weight,
                       NN_FloatTensor:$bias);
  let results = (outs NN_Tensor:$result, NN_Tensor:$tape);
  let assemblyFormat = [{
    $direction $input `,` $input_weight `,` $recurrent_weight `,` $bias
    attr-dict `:` qualified(type($input)) `,` qualified(type($input_weight)) `,`
    qualified(type($recurrent_weight)) `,` qualified(type($bias)) `->`
    qualified(type($result)) `,` qualified(type($tape))
  }];
  let extraClassDeclaration = [{
    /// The tape of an lstm whose result is `result`: six blocks of H per
    /// direction, six times the result's features.
    static NNTensorType getTapeType(NNTensorType result);
  }];
  let hasVerifier = 1;
}

def NN_Conv1dOp : NN_Op<"conv1d", [Pure,
    DeclareOpInterfaceMethods<NN_SequenceMixingOpInterface,
                              ["hasPackedForm", "getPaddedFrameWork"]>,
    DeclareOpInterfaceMethods<NN_ParameterInitOpInterface>,
    DeclareOpInterfaceMethods<NN_VjpOpInterface>]> {
  let summary = "convolution over a sequence axis with 'same' padding";
  let description = [{
    `input` `[B, T, Cin]`, `weight` `[Cout, K, Cin / groups]`, optional
    `bias` `[Cout]`. Output frame `t` sees input frames
    `t * stride - (K - 1) / 2 + k`, `k < K`; frames outside the sequence's
    own length read zero. With `groups G` (default 1; it must divide `Cin`
    and `Cout`), output channel `o` reads only the input channels of its
    group, `[g Cin / G, (g + 1) Cin / G)` with `g = o / (Cout / G)`:
    `groups Cin` with `Cout = Cin` is a depthwise convolution (the
    Conformer's convolution module). The result is `[B, T', Cout]` with `T' = T` for
    stride 1, else a dim declared `seq(B) = ceildiv(T, stride)`. Packed
    input `[N, Cin]` (`N` declared `packed(B, T)`) gives packed output
    `[N', Cout]` (`N'` declared `packed(B, T')`), the same frames: a window
    never reads another sequence's rows.

    ```mlir
    %y = nn.conv1d %x, %w, %b stride 2 : (!nn.tensor<[B, T, 80], f32>,
        !nn.tensor<[256, 3, 80], f32>, !nn.tensor<[256], f32>)
        -> !nn.tensor<[B, T2, 256], f32>
    %d = nn.conv1d %y, %dw stride 1 groups 256 : (!nn.tensor<[B, T2, 256], f32>,
        !nn.tensor<[256, 31, 1], f32>) -> !nn.tensor<[B, T2, 256], f32>
    ```
  }];
  let arguments = (ins NN_FloatTensor:$input, NN_FloatTensor:$weight,
                       Optional<NN_FloatTensor>:$bias,
                       NN_PositiveI64Attr:$stride,
                       DefaultValuedAttr<NN_PositiveI64Attr, "1">:$groups);
  let results = (outs NN_Tensor:$result);
  let assemblyFormat = [{
    $input `,` $weight (`,` $bias^)? `stride` $stride (`groups` $groups^)?
    attr-dict `:` functional-type(operands, results)
  }];
  let hasVerifier = 1;
}

def NN_PoolOp : NN_Op<"pool", [Pure,
    DeclareOpInterfaceMethods<NN_SequenceMixingOpInterface,
                              ["hasPackedForm", "getPaddedFrameWork"]>,
    DeclareOpInterfaceMethods<NN_VjpOpInterface>]> {
  let summary = "max or average pooling over a sequence axis (downsampling)";
  let description = [{
    `input` `[B, T, C]`, windows of `window` frames every `stride` frames
    starting at frame 0, clipped to each sequence's own length (average
    over the frames inside). The result is `[B, T', C]`, `T'` declared
    `seq(B) = ceildiv(T, stride)` (or `T` itself for stride 1). Packed
    input `[N, C]` gives packed output `[N', C]` (`N'` declared
    `packed(B, T')`), the same frames.

    ```mlir
    %p = nn.pool max %x window 3 stride 3 : (!nn.tensor<[B, T2, 256], f32>)
        -> !nn.tensor<[B, T6, 256], f32>
    ```
  }];
  let arguments = (ins NN_PoolKind:$kind, NN_FloatTensor:$input,
                       NN_PositiveI64Attr:$window, NN_PositiveI64Attr:$stride);
  let results = (outs NN_Tensor:$result);
  let assemblyFormat = [{
    $kind $input `window` $window `stride` $stride attr-dict `:`
    functional-type(operands, results)
  }];
  let hasVerifier = 1;
}

def NN_ReduceOp : NN_SequenceMixingOp<"reduce", [
    DeclareOpInterfaceMethods<InferTypeOpInterface>,
    DeclareOpInterfaceMethods<NN_VjpOpInterface>]> {
  let summary = "masked sum, mean or max over a sequence axis";
  let description = [{
    Reduces axis `axis` (a sequence dim) over each sequence's valid frames;
    the result drops that axis. `mean` of an empty sequence is 0 and `max`
    of one is -inf.

    ```mlir
    %s = nn.reduce mean %h over 1 : !nn.tensor<[B, T, 512], f32>
    ```
  }];
  let arguments = (ins NN_ReduceKind:$kind, NN_FloatTensor:$input,
                       I64Attr:$axis);
  let results = (outs NN_Tensor:$result);
  let assemblyFormat = [{
    $kind $input `over` $axis attr-dict `:` qualified(type($input))
  }];
  let hasVerifier = 1;
}

//===----------------------------------------------------------------------===//
// Gradients (built by nn-autodiff; docs/autodiff.md)
//===----------------------------------------------------------------------===//

def NN_LstmGradOp : NN_Op<"lstm_grad", [Pure,
    AllTypesMatch<["input", "input_grad"]>,
    AllTypesMatch<["input_weight", "input_weight_grad"]>,
    AllTypesMatch<["recurrent_weight", "recurrent_weight_grad"]>,
    AllTypesMatch<["bias", "bias_grad"]>]> {
  let summary = "the gradients of nn.lstm: backpropagation through time";
  let description = [{
    `grad` is the gradient of an lstm's result; the other operands and the
    direction are the lstm's. The results are the gradients of its input
    and of its three weights. Each direction runs backward through time
    from each sequence's own last real frame (the backward direction from
    its first), so nothing reaches or leaves a padded frame: the input
    gradient is exactly 0 there, and `grad` at padded frames is ignored.
    The forward's cells and gates are recomputed from the operands unless
    `tape` (an `nn.lstm_with_tape`'s of the same operands) holds them
    (docs/autodiff.md).

    ```mlir
    %dx, %dwi, %dwh, %db = nn.lstm_grad forward %dy, %x, %wi, %wh, %b
        : !nn.tensor<[B, T, 64], f32>, !nn.tensor<[B, T, 80], f32>,
          !nn.tensor<[256, 80], f32>, !nn.tensor<[256, 64], f32>,
          !nn.tensor<[256], f32>
    ```
  }];
  let arguments = (ins NN_LstmDirection:$direction, NN_FloatTensor:$grad,
                       NN_FloatTensor:$input, NN_FloatTensor:$input_weight,
                       NN_FloatTensor:$recurrent_weight,
                       NN_FloatTensor:$bias,
                       Optional<NN_FloatTensor>:$tape);
  let results = (outs NN_FloatTensor:$input_grad,
                      NN_FloatTensor:$input_weight_grad,
                      NN_FloatTensor:$recurrent_weight_grad,
                      NN_FloatTensor:$bias_grad);
  let assemblyFormat = [{
    $direction $grad `,` $input `,` $input_weight `,` $recurrent_weight `,`
    $bias (`tape` $tape^)? attr-dict `:` qualified(type($grad)) `,`
    qualified(type($input)) `,` qualified(type($input_weight)) `,`
    qualified(type($recurrent_weight)) `,` qualified(type($bias))
    (`,` qualified(type($tape))^)?
  }];
  let hasVerifier = 1;
}

def NN_Conv1dGradOp : NN_Op<"conv1d_grad", [Pure,
    AllTypesMatch<["input", "input_grad"]>,
    AllTypesMatch<["weight", "weight_grad"]>]> {
  let summary = "the input and weight gradients of nn.conv1d";
  let description = [{
    `grad` `[B, T', Cout]` is the gradient of a conv1d's result; `input`,
    `weight`, `stride` and `groups` are the conv's. Valid output frame `t'` read
    input frame `s = t' * stride - (K - 1) / 2 + k` through weight tap `k`
    when `s` was inside its sequence; each such pair contributes
    `grad[t'] w[k]` to the input gradient at `s` and `grad[t'] x[s]` to
    the weight gradient at `k`. Padded frames of `grad` are never read,
    and the input gradient is exactly 0 at padded input frames. The bias
    gradient is `nn.sum_positions` of `grad`.

    ```mlir
    %dx, %dw = nn.conv1d_grad %dy, %x, %w stride 2 : !nn.tensor<[B, T2, 256], f32>,
        !nn.tensor<[B, T, 80], f32>, !nn.tensor<[256, 3, 80], f32>
    ```
  }];
  let arguments = (ins NN_FloatTensor:$grad, NN_FloatTensor:$input,
                       NN_FloatTensor:$weight, NN_PositiveI64Attr:$stride,
                       DefaultValuedAttr<NN_PositiveI64Attr, "1">:$groups);
  let results = (outs NN_FloatTensor:$input_grad,
                      NN_FloatTensor:$weight_grad);
  let assemblyFormat = [{
    $grad `,` $input `,` $weight `stride` $stride (`groups` $groups^)?
    attr-dict `:`
    qualified(type($grad)) `,` qualified(type($input)) `,`
    qualified(type($weight))
  }];
  let hasVerifier = 1;
}

def NN_PoolGradOp : NN_Op<"pool_grad", [Pure,
    AllTypesMatch<["input", "result"]>, AllTypesMatch<["grad", "output"]>]> {
  let summary = "the input gradient of nn.pool";
  let description = [{
    `grad` is the gradient of a pool's result `output`, `input` its input.
    Each valid input frame collects, over the valid windows it lies in,
    `grad / count` (avg: `count` the valid frames of the window) or `grad`
    when it is the first frame holding the window's maximum (max); padded
    frames get 0.

    ```mlir
    %dx = nn.pool_grad max %dy, %x, %y window 3 stride 3
        : !nn.tensor<[B, T6, 256], f32>, !nn.tensor<[B, T2, 256], f32>
    ```
  }];
  let arguments = (ins NN_PoolKind:$kind, NN_FloatTensor:$grad,
                       NN_FloatTensor:$input, NN_FloatTensor:$output,
                       NN_PositiveI64Attr:$window, NN_PositiveI64Attr:$stride);
  let results = (outs NN_FloatTensor:$result);
  let assemblyFormat = [{
    $kind $grad `,` $input `,` $output `window` $window `stride` $stride
    attr-dict `:` qualified(type($grad)) `,` qualified(type($input))
  }];  let hasVerifier = 1;
}

def NN_ReduceGradOp : NN_Op<"reduce_grad", [Pure,
    AllTypesMatch<["input", "result"]>, AllTypesMatch<["grad", "output"]>]> {
  let summary = "the input gradient of nn.reduce";
  let description = [{
    `grad` is the gradient of a reduce's result, `input` its input and
    `output` its result, `kind` and `axis` its attributes. At valid frames
    of the reduced axis: `grad` (sum), `grad / len` (mean), `grad` at the
    first frame holding the maximum and 0 at the others (max); padded
    frames get 0.

    ```mlir
    %dx = nn.reduce_grad mean %dy, %x, %y over 1 : !nn.tensor<[B, 8], f32>, !nn.tensor<[B, T, 8], f32>
    ```
  }];
  let arguments = (ins NN_ReduceKind:$kind, NN_FloatTensor:$grad,
                       NN_FloatTensor:$input, NN_FloatTensor:$output,
                       I64Attr:$axis);
  let results = (outs NN_FloatTensor:$result);
  let assemblyFormat = [{
    $kind $grad `,` $input `,` $output `over` $axis attr-dict `:`
    qualified(type($grad)) `,` qualified(type($input))
  }];
  let hasVerifier = 1;
}

#endif // NN_SEQUENCE_OPS_TD
