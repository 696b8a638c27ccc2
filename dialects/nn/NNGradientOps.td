//===- NNGradientOps.td - gradient ops ---------------------*- tablegen -*-===//
//
// The gradient ops nn-autodiff builds for frame-wise layers and losses,
// and the generic pieces of a backward graph (the loss seed, sums over
// positions, zeroed padding). The gradients of sequence-mixing, CTC,
// transducer and fused loss-tail ops live with their forward ops.
//
//===----------------------------------------------------------------------===//

#ifndef NN_GRADIENT_OPS_TD
#define NN_GRADIENT_OPS_TD

include "dialects/nn/NNOpBase.td"

//===----------------------------------------------------------------------===//
// Gradients (built by nn-autodiff; docs/autodiff.md)
//===----------------------------------------------------------------------===//

def NN_LossSeedOp : NN_Op<"loss_seed", [Pure,
    AllTypesMatch<["loss", "result"]>]> {
  let summary = "the gradient of the training objective with respect to a loss";
  let description = [{
    `loss` is a marked loss value and `inv_norm` its inverse normalization
    factor (`nn.loss_terms`). The objective takes `scale * sum / inv_norm`
    (or `scale * sum` with `unnormalized`), so its gradient with respect to
    each valid position of `loss` is `scale / inv_norm` (0 when `inv_norm`
    is 0: a loss over no frames) or `scale`, times the position's weight
    where the mark has `weights`; padded positions get exactly 0.

    ```mlir
    %g = nn.loss_seed %ce, %inv_norm scale 1.000000e+00 : !nn.tensor<[B, T], f32>
    ```
  }];
  let arguments = (ins NN_FloatTensor:$loss, NN_F64Scalar:$inv_norm,
                       Optional<NN_FloatTensor>:$weights,
                       F64Attr:$scale, UnitAttr:$unnormalized);
  let results = (outs NN_FloatTensor:$result);
  let assemblyFormat = [{
    $loss `,` $inv_norm (`weights` $weights^)? `scale` $scale
    (`unnormalized` $unnormalized^)?
    attr-dict `:` qualified(type($loss)) (`weights` qualified(type($weights))^)?
  }];
  let hasVerifier = 1;
}

def NN_LinearGradInputOp : NN_FrameWiseOp<"linear_grad_input", [
    DeclareOpInterfaceMethods<InferTypeOpInterface>]> {
  let summary = "the input gradient of nn.linear: dy W";
  let description = [{
    `grad` `[P..., O]` is the gradient of a linear's result, `weight`
    `[O, I]` its weight; the result `[P..., I]` is the gradient of its
    input.

    ```mlir
    %dx = nn.linear_grad_input %dy, %w : !nn.tensor<[N, 1000], f32>, !nn.tensor<[1000, 512], f32>
    ```
  }];
  let arguments = (ins NN_FloatTensor:$grad, NN_FloatTensor:$weight);
  let results = (outs NN_FloatTensor:$result);
  let assemblyFormat = [{
    $grad `,` $weight attr-dict `:` qualified(type($grad)) `,`
    qualified(type($weight))
  }];
  let hasVerifier = 1;
}

def NN_LinearGradWeightOp : NN_Op<"linear_grad_weight", [Pure,
    DeclareOpInterfaceMethods<InferTypeOpInterface>]> {
  let summary = "the weight gradient of nn.linear: dy^T x over valid positions";
  let description = [{
    `grad` `[P..., O]` and `input` `[P..., I]` on the same positions; the
    result `[O, I]` sums `grad[p, o] * input[p, i]` over the valid
    positions only (padded positions are skipped, not multiplied, so
    whatever padding holds never reaches the sum).

    ```mlir
    %dw = nn.linear_grad_weight %dy, %x : !nn.tensor<[N, 1000], f32>, !nn.tensor<[N, 512], f32>
    ```
  }];
  let arguments = (ins NN_FloatTensor:$grad, NN_FloatTensor:$input);
  let results = (outs NN_FloatTensor:$result);
  let assemblyFormat = [{
    $grad `,` $input attr-dict `:` qualified(type($grad)) `,`
    qualified(type($input))
  }];
  let hasVerifier = 1;
}

def NN_SumPositionsOp : NN_Op<"sum_positions", [Pure,
    DeclareOpInterfaceMethods<InferTypeOpInterface>]> {
  let summary = "the sum over valid positions (a bias gradient)";
  let description = [{
    `input` `[P..., F...]`; the result `[F...]` sums it over its valid
    positions, skipping padded ones.

    ```mlir
    %db = nn.sum_positions %dy : !nn.tensor<[B, T, 1000], f32>
    ```
  }];
  let arguments = (ins NN_FloatTensor:$input);
  let results = (outs NN_FloatTensor:$result);
  let assemblyFormat = "$input attr-dict `:` qualified(type($input))";
}

def NN_ActivationGradOp : NN_FrameWiseOp<"activation_grad", [
    AllTypesMatch<["grad", "input", "result"]>]> {
  let summary = "the input gradient of an activation: dy f'(x)";
  let description = [{
    `grad` is the gradient of the activation's result, `input` its input;
    the result is `grad * f'(input)` elementwise (relu: `x > 0`; tanh:
    `1 - tanh(x)^2`; sigmoid: `s(x)(1 - s(x))`; gelu, exact form:
    `Phi(x) + x phi(x)`; silu: `s(x)(1 + x (1 - s(x)))`).

    ```mlir
    %dx = nn.activation_grad tanh %dy, %x : !nn.tensor<[B, T, 256], f32>
    ```
  }];
  let arguments = (ins NN_Activation:$kind, NN_FloatTensor:$grad,
                       NN_FloatTensor:$input);
  let results = (outs NN_FloatTensor:$result);
  let assemblyFormat = [{
    $kind $grad `,` $input attr-dict `:` qualified(type($input))
  }];
}

def NN_GluGradOp : NN_FrameWiseOp<"glu_grad", [
    AllTypesMatch<["input", "result"]>]> {
  let summary = "the input gradient of nn.glu";
  let description = [{
    `grad` `[P..., C]` is the gradient of a glu's result, `input`
    `[P..., 2C]` its input `[a, b]`; the result is
    `[grad * s(b), grad * a * s(b) (1 - s(b))]` with `s` the sigmoid.

    ```mlir
    %dx = nn.glu_grad %dy, %x : !nn.tensor<[B, T, 256], f32>, !nn.tensor<[B, T, 512], f32>
    ```
  }];
  let arguments = (ins NN_FloatTensor:$grad, NN_FloatTensor:$input);
  let results = (outs NN_FloatTensor:$result);
  let assemblyFormat = [{
    $grad `,` $input attr-dict `:` qualified(type($grad)) `,`
    qualified(type($input))
  }];
  let hasVerifier = 1;
}

def NN_LogSoftmaxGradOp : NN_FrameWiseOp<"log_softmax_grad", [
    AllTypesMatch<["grad", "output", "result"]>]> {
  let summary = "the input gradient of log_softmax: dy - exp(y) sum(dy)";
  let description = [{
    `output` is the log_softmax's result `y`; per frame the result is
    `grad_i - exp(y_i) * sum_j grad_j` over the feature axis.

    ```mlir
    %dx = nn.log_softmax_grad %dy, %y : !nn.tensor<[N, 1000], f32>
    ```
  }];
  let arguments = (ins NN_FloatTensor:$grad, NN_FloatTensor:$output);
  let results = (outs NN_FloatTensor:$result);
  let assemblyFormat = "$grad `,` $output attr-dict `:` qualified(type($output))";
}

def NN_SoftmaxGradOp : NN_FrameWiseOp<"softmax_grad", [
    AllTypesMatch<["grad", "output", "result"]>]> {
  let summary = "the input gradient of softmax: y (dy - sum(dy y))";
  let description = [{
    `output` is the softmax's result `y`; per frame the result is
    `y_i * (grad_i - sum_j grad_j y_j)` over the feature axis.

    ```mlir
    %dx = nn.softmax_grad %dy, %y : !nn.tensor<[B, T, 10], f32>
    ```
  }];
  let arguments = (ins NN_FloatTensor:$grad, NN_FloatTensor:$output);
  let results = (outs NN_FloatTensor:$result);
  let assemblyFormat = "$grad `,` $output attr-dict `:` qualified(type($output))";
}

def NN_CrossEntropyGradOp : NN_FrameWiseOp<"cross_entropy_grad", [
    AllTypesMatch<["logits", "result"]>,
    TypesMatchWith<"grad is on the positions of logits", "logits", "grad",
                   "::llvm::cast<::mlir::nn::NNTensorType>($_self).withoutLastAxis()">]> {
  let summary = "the logits gradient of cross_entropy";
  let description = [{
    `grad` `[P...]` is the gradient of the per-position loss, `logits` and
    `targets` the cross entropy's operands, `input_kind` and
    `label_smoothing` its attributes. With `q` the smoothed target
    distribution (`1 - eps` on the target, `eps / (C - 1)` elsewhere), the
    result is `grad * (softmax(x) - q)` from logits and `-grad * q` from
    log-probabilities.

    ```mlir
    %dx = nn.cross_entropy_grad %dl, %x, %y from logits
        : !nn.tensor<[N, 1000], f32>, !nn.tensor<[N], i32>
    ```
  }];
  let arguments = (ins NN_FloatTensor:$grad, NN_FloatTensor:$logits,
                       NN_IntegerTensor:$targets, NN_LossInput:$input_kind,
                       DefaultValuedAttr<NN_UnitIntervalF64Attr, "0.0">:$label_smoothing);
  let results = (outs NN_FloatTensor:$result);
  let assemblyFormat = [{
    $grad `,` $logits `,` $targets `from` $input_kind
    (`label_smoothing` $label_smoothing^)? attr-dict `:`
    qualified(type($logits)) `,` qualified(type($targets))
  }];
  let hasVerifier = 1;
}

def NN_MseGradOp : NN_FrameWiseOp<"mse_grad", [
    AllTypesMatch<["prediction", "target", "result"]>,
    TypesMatchWith<"grad is on the positions of prediction", "prediction",
                   "grad",
                   "::llvm::cast<::mlir::nn::NNTensorType>($_self).withoutLastAxis()">]> {
  let summary = "the prediction gradient of mse: 2 dy (prediction - target)";
  let description = [{
    ```mlir
    %dp = nn.mse_grad %dl, %p, %t : !nn.tensor<[B, T, 80], f32>
    ```
  }];
  let arguments = (ins NN_FloatTensor:$grad, NN_FloatTensor:$prediction,
                       NN_FloatTensor:$target);
  let results = (outs NN_FloatTensor:$result);
  let assemblyFormat = [{
    $grad `,` $prediction `,` $target attr-dict `:` qualified(type($prediction))
  }];
  let hasVerifier = 1;
}

def NN_ParamNormGradOp : NN_Op<"param_norm_grad", [Pure,
    AllTypesMatch<["input", "result"]>]> {
  let summary = "the gradient of nn.param_norm for one input: 2 dy x";
  let description = [{
    `grad` is the rank-0 gradient of the loss.

    ```mlir
    %dw = nn.param_norm_grad %dl, %w : !nn.tensor<[10, 4], f32>
    ```
  }];
  let arguments = (ins NN_F32Scalar:$grad, NN_FloatTensor:$input);
  let results = (outs NN_FloatTensor:$result);
  let assemblyFormat = [{
    $grad `,` $input attr-dict `:` qualified(type($input))
  }];
  let hasVerifier = 1;
}

def NN_ZeroPaddingOp : NN_FrameWiseOp<"zero_padding", [
    SameOperandsAndResultType]> {
  let summary = "the input with its padded positions set to 0";
  let description = [{
    Each padded position (a frame past its sequence's length) becomes 0,
    selected: whatever it held (NaN) is gone. Other values (packed, per
    sequence, static) are unchanged. `nn-autodiff` applies it to the
    gradients of graph inputs it returns, which are exactly 0 at padded
    frames. It folds away where its input's padding is already 0 by
    construction (`nn.unpack`, `nn.broadcast_seq`, another
    `nn.zero_padding`).

    ```mlir
    %g = nn.zero_padding %dx : !nn.tensor<[B, T, 80], f32>
    ```
  }];
  let arguments = (ins NN_FloatTensor:$input);
  let results = (outs NN_FloatTensor:$result);
  let assemblyFormat = "$input attr-dict `:` qualified(type($input))";
  let hasFolder = 1;
}

def NN_SliceFeaturesOp : NN_FrameWiseOp<"slice_features", [
    DeclareOpInterfaceMethods<InferTypeOpInterface>]> {
  let summary = "features [offset, offset + width) of each position";
  let description = [{
    The VJP of `nn.concat`: each input's gradient is its slice of the
    result's.

    ```mlir
    %a = nn.slice_features %dy offset 0 width 256 : !nn.tensor<[B, T, 512], f32>
    ```
  }];
  let arguments = (ins NN_FloatTensor:$input,
                       ConfinedAttr<I64Attr, [IntMinValue<0>]>:$offset,
                       NN_PositiveI64Attr:$width);
  let results = (outs NN_FloatTensor:$result);
  let assemblyFormat = [{
    $input `offset` $offset `width` $width attr-dict `:` qualified(type($input))
  }];
  let hasVerifier = 1;
}

def NN_LayerNormGradInputOp : NN_FrameWiseOp<"layer_norm_grad_input", [
    AllTypesMatch<["grad", "input", "result"]>]> {
  let summary = "the input gradient of layer_norm";
  let description = [{
    With `xhat = (x - mean) * rstd` and `g = grad * scale` per frame:
    `rstd * (g - mean(g) - xhat * mean(g * xhat))` over the feature axis.

    ```mlir
    %dx = nn.layer_norm_grad_input %dy, %x, %scale : !nn.tensor<[B, T, 256], f32>, !nn.tensor<[256], f32>
    ```
  }];
  let arguments = (ins NN_FloatTensor:$grad, NN_FloatTensor:$input,
                       NN_FloatTensor:$scale,
                       DefaultValuedAttr<NN_PositiveF64Attr, "1.0e-5">:$epsilon);
  let results = (outs NN_FloatTensor:$result);
  let assemblyFormat = [{
    $grad `,` $input `,` $scale attr-dict `:` qualified(type($input)) `,`
    qualified(type($scale))
  }];
}

def NN_LayerNormGradScaleOp : NN_Op<"layer_norm_grad_scale", [Pure,
    AllTypesMatch<["grad", "input"]>,
    DeclareOpInterfaceMethods<InferTypeOpInterface>]> {
  let summary = "the scale gradient of layer_norm: sum of grad * xhat";
  let description = [{
    The sum over valid positions of `grad * xhat`, `xhat` the normalized
    input; padded positions are skipped.

    ```mlir
    %ds = nn.layer_norm_grad_scale %dy, %x : !nn.tensor<[B, T, 256], f32>
    ```
  }];
  let arguments = (ins NN_FloatTensor:$grad, NN_FloatTensor:$input,
                       DefaultValuedAttr<NN_PositiveF64Attr, "1.0e-5">:$epsilon);
  let results = (outs NN_FloatTensor:$result);
  let assemblyFormat = [{
    $grad `,` $input attr-dict `:` qualified(type($input))
  }];
  let hasVerifier = 1;
}

def NN_EmbeddingGradOp : NN_Op<"embedding_grad", [Pure]> {
  let summary = "the table gradient of embedding: a scatter-add of rows";
  let description = [{
    Row `v` of the result sums `grad` over the valid positions whose index
    is `v`; padded positions are skipped.

    ```mlir
    %dt = nn.embedding_grad %dy, %ids : !nn.tensor<[B, U, 256], f32>, !nn.tensor<[B, U], i32> -> !nn.tensor<[1000, 256], f32>
    ```
  }];
  let arguments = (ins NN_FloatTensor:$grad, NN_IntegerTensor:$indices);
  let results = (outs NN_FloatTensor:$result);
  let assemblyFormat = [{
    $grad `,` $indices attr-dict `:` qualified(type($grad)) `,`
    qualified(type($indices)) `->` qualified(type($result))
  }];
  let hasVerifier = 1;
}

#endif // NN_GRADIENT_OPS_TD
