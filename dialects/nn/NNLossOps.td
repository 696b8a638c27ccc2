//===- NNLossOps.td - losses and marked losses -------------*- tablegen -*-===//
//
// The per-position losses, the fused loss tail (a linear layer and cross
// entropy in one sweep, with its gradients; docs/loss-tail.md) and the
// ops that declare a loss value a named loss.
//
//===----------------------------------------------------------------------===//

#ifndef NN_LOSS_OPS_TD
#define NN_LOSS_OPS_TD

include "dialects/nn/NNOpBase.td"

//===----------------------------------------------------------------------===//
// Per-position losses
//===----------------------------------------------------------------------===//

def NN_CrossEntropyOp : NN_FrameWiseOp<"cross_entropy", [
    DeclareOpInterfaceMethods<InferTypeOpInterface>,
    DeclareOpInterfaceMethods<NN_VjpOpInterface>,
    DeclareOpInterfaceMethods<NN_LossOpInterface>,
    DeclareOpInterfaceMethods<NN_ClassIndexOpInterface>]> {
  let summary = "per-frame cross entropy with sparse targets";
  let description = [{
    `logits` `[P..., V]` (unnormalized logits, or log-probabilities with
    `from log_probs`), `targets` `[P...]` integer class indices on the same
    positions, result `[P...]`: `-sum_c q(c) log p(c)` with `q` the target
    distribution. Label smoothing `eps` gives the target `1 - eps` and every
    other class `eps / (V - 1)` (RETURNN's convention; PyTorch spreads
    `eps / V` over all classes).

    ```mlir
    %ce = nn.cross_entropy %logits, %targets from logits
        : !nn.tensor<[B, T, 500], f32>, !nn.tensor<[B, T], i32>
    ```
  }];
  let arguments = (ins NN_FloatTensor:$logits, NN_IntegerTensor:$targets,
                       NN_LossInput:$input_kind,
                       DefaultValuedAttr<NN_UnitIntervalF64Attr, "0.0">:$label_smoothing);
  let results = (outs NN_Tensor:$result);
  let assemblyFormat = [{
    $logits `,` $targets `from` $input_kind
    (`label_smoothing` $label_smoothing^)? attr-dict `:`
    qualified(type($logits)) `,` qualified(type($targets))
  }];
  let hasVerifier = 1;
}

def NN_FrameErrorOp : NN_FrameWiseOp<"frame_error", [
    DeclareOpInterfaceMethods<InferTypeOpInterface>,
    DeclareOpInterfaceMethods<NN_LossOpInterface>,
    DeclareOpInterfaceMethods<NN_ClassIndexOpInterface>]> {
  let summary = "per-frame classification error (0 or 1)";
  let description = [{
    `scores` `[P..., V]` (logits, log-probabilities or probabilities: any
    monotone score), `targets` `[P...]` class indices on the same
    positions, result `[P...]`: 1 where some class scores strictly higher
    than the target, else 0 (a tie with the best class counts as right). A
    NaN score in the frame counts as an error. Marked `as_error` with
    `normalize per_frame` it is the frame error rate; it has no gradient,
    so it cannot be a trained loss.

    ```mlir
    %err = nn.frame_error %logits, %targets
        : !nn.tensor<[B, T, 500], f32>, !nn.tensor<[B, T], i32>
    nn.mark_loss %err as "fer" normalize per_frame as_error
        : !nn.tensor<[B, T], f32>
    ```
  }];
  let arguments = (ins NN_FloatTensor:$scores, NN_IntegerTensor:$targets);
  let results = (outs NN_Tensor:$result);
  let assemblyFormat = [{
    $scores `,` $targets attr-dict `:` qualified(type($scores)) `,`
    qualified(type($targets))
  }];
  let hasVerifier = 1;
}

def NN_MseOp : NN_FrameWiseOp<"mse", [
    DeclareOpInterfaceMethods<InferTypeOpInterface>,
    DeclareOpInterfaceMethods<NN_VjpOpInterface>,
    DeclareOpInterfaceMethods<NN_LossOpInterface>]> {
  let summary = "per-frame squared error summed over the feature axis";
  let description = [{
    `prediction` and `target` `[P..., F]` of one type, result `[P...]`:
    `sum_f (prediction - target)^2`.

    ```mlir
    %e = nn.mse %y, %ref : !nn.tensor<[B, T, 80], f32>,
       !nn.tensor<[B, T, 80], f32>
    ```
  }];
  let arguments = (ins NN_FloatTensor:$prediction, NN_FloatTensor:$target);
  let results = (outs NN_Tensor:$result);
  let assemblyFormat = [{
    $prediction `,` $target attr-dict `:` qualified(type($prediction)) `,`
    qualified(type($target))
  }];
  let hasVerifier = 1;
}

def NN_ParamNormOp : NN_Op<"param_norm", [Pure,
    DeclareOpInterfaceMethods<NN_VjpOpInterface>,
    DeclareOpInterfaceMethods<NN_LossOpInterface>]> {
  let summary = "the sum of squares of parameters: an L2 regularization loss";
  let description = [{
    `sum over every element of every input of x^2`, accumulated in f64 and
    returned as a rank-0 f32 loss. The inputs are parameters (static
    shapes). Marked with `normalize sum`, the loss is reported and trained
    like any other; with `scale s` its gradient is `2 s w`, so SGD on it
    is SGD with weight decay `2 s` (PyTorch's `weight_decay`). Its
    gradient enters the optimizer like every loss's (in-model); a loss of
    the training objective, it is counted in the gradient norm that
    clipping sees.

    ```mlir
    %w = nn.param_ref @w : !nn.tensor<[10, 4], f32>
    %l2 = nn.param_norm %w : !nn.tensor<[10, 4], f32>
    nn.mark_loss %l2 as "l2" normalize sum scale 5.000000e-05
        : !nn.tensor<[], f32>
    ```
  }];
  let arguments = (ins Variadic<NN_FloatTensor>:$inputs);
  let results = (outs NN_F32Scalar:$result);
  let assemblyFormat = "$inputs attr-dict `:` qualified(type($inputs))";
  let hasVerifier = 1;
}

//===----------------------------------------------------------------------===//
// Fused loss tail
//===----------------------------------------------------------------------===//

def NN_LinearCrossEntropyOp : NN_FrameWiseOp<"linear_cross_entropy", [
    DeclareOpInterfaceMethods<InferTypeOpInterface>,
    DeclareOpInterfaceMethods<NN_VjpOpInterface>,
    DeclareOpInterfaceMethods<NN_LossOpInterface>,
    DeclareOpInterfaceMethods<NN_ClassIndexOpInterface>,
    DeclareOpInterfaceMethods<NN_ParameterInitOpInterface>]> {
  let summary = "a linear layer and cross entropy from its logits, fused";
  let description = [{
    `input` `[P..., I]`, `weight` `[V, I]`, optional `bias` `[V]`, `targets`
    `[P...]` class indices, result `[P...]` (the types list the bias last,
    after the targets', so that a form without it parses): what
    `nn.cross_entropy (nn.linear %input, %weight, %bias), %targets from
    logits` computes (label smoothing as there), without the `[P..., V]`
    logits. `nn-fuse-loss-tail` forms it; the lowering sweeps blocks of
    positions, each block's logits computed (one GEMM), reduced to a
    log-sum-exp and the target's logit, and dropped (docs/loss-tail.md).
    Padded positions compute whatever the padding holds and mean nothing.

    ```mlir
    %ce = nn.linear_cross_entropy %h, %w, %b targets %y
        : !nn.tensor<[N, 512], f32>, !nn.tensor<[1000, 512], f32>,
          !nn.tensor<[N], i32>, !nn.tensor<[1000], f32>
    ```
  }];
  let arguments = (ins NN_FloatTensor:$input, NN_FloatTensor:$weight,
                       Optional<NN_FloatTensor>:$bias,
                       NN_IntegerTensor:$targets,
                       DefaultValuedAttr<NN_UnitIntervalF64Attr, "0.0">:$label_smoothing);
  let results = (outs NN_Tensor:$result);
  let assemblyFormat = [{
    $input `,` $weight (`,` $bias^)? `targets` $targets
    (`label_smoothing` $label_smoothing^)? attr-dict `:`
    qualified(type($input)) `,` qualified(type($weight)) `,`
    qualified(type($targets)) (`,` qualified(type($bias))^)?
  }];
  let hasVerifier = 1;
}

def NN_LinearCrossEntropyGradOp : NN_FrameWiseOp<"linear_cross_entropy_grad", [
    TypesMatchWith<"grad is on the positions of input", "input", "grad",
                   "::llvm::cast<::mlir::nn::NNTensorType>($_self).withoutLastAxis()">,
    DeclareOpInterfaceMethods<InferTypeOpInterface>,
    DeclareOpInterfaceMethods<NN_ClassIndexOpInterface>]> {
  let summary = "the gradients of linear_cross_entropy, logits recomputed";
  let description = [{
    `grad` `[P...]` is the gradient of the per-position loss; `input`,
    `weight`, `bias`, `targets` and `label_smoothing` are the fused op's.
    Results: the gradients of the input `[P..., I]`, the weight `[V, I]`
    and the bias `[V]` (computed only when used). With `q` the smoothed
    target distribution, the logits' gradient `grad (softmax(z) - q)` is
    formed block by block from logits computed again (three GEMMs per
    block: the logits, `dz W` and `dz^T x`), never for all positions at
    once. Padded positions get a zero input gradient and add nothing to
    the weight and bias gradients, whatever they hold.

    ```mlir
    %dx, %dw, %db = nn.linear_cross_entropy_grad %dl, %h, %w, %b targets %y
        : !nn.tensor<[N, 512], f32>, !nn.tensor<[1000, 512], f32>,
          !nn.tensor<[N], i32>, !nn.tensor<[1000], f32>
    ```
  }];
  let arguments = (ins NN_FloatTensor:$grad, NN_FloatTensor:$input,
                       NN_FloatTensor:$weight, Optional<NN_FloatTensor>:$bias,
                       NN_IntegerTensor:$targets,
                       DefaultValuedAttr<NN_UnitIntervalF64Attr, "0.0">:$label_smoothing);
  let results = (outs NN_FloatTensor:$input_grad, NN_FloatTensor:$weight_grad,
                      NN_FloatTensor:$bias_grad);
  let assemblyFormat = [{
    $grad `,` $input `,` $weight (`,` $bias^)? `targets` $targets
    (`label_smoothing` $label_smoothing^)? attr-dict `:`
    qualified(type($input)) `,` qualified(type($weight)) `,`
    qualified(type($targets)) (`,` qualified(type($bias))^)?
  }];
  let hasVerifier = 1;
}

def NN_LinearCrossEntropyTrainOp : NN_FrameWiseOp<"linear_cross_entropy_train", [
    AttrSizedOperandSegments,
    DeclareOpInterfaceMethods<InferTypeOpInterface>,
    DeclareOpInterfaceMethods<NN_LossOpInterface>,
    DeclareOpInterfaceMethods<NN_ClassIndexOpInterface>,
    DeclareOpInterfaceMethods<NN_ParameterInitOpInterface>]> {
  let summary = "linear_cross_entropy and its gradients in one sweep";
  let description = [{
    The loss of `nn.linear_cross_entropy` and, in the same sweep over blocks
    of positions, the gradients of the training objective with respect to
    its input, weight and bias, for the seed `nn.loss_seed` would give that
    loss when it is marked with `normalize` and trained with `scale`
    (`unnormalized`: the objective takes the plain sum): `scale /
    inv_norm` at every valid position, 0 at padded ones. The seed depends
    on the lengths only, so each block's logits serve the loss and the
    gradients (three GEMMs per block in all). `nn-fuse-loss-tail` forms it
    after `nn-autodiff` from a `linear_cross_entropy` and its
    `linear_cross_entropy_grad` when the loss is marked once (custom
    normalization stays unfused).

    `inv_norm`, when given, is the factor to divide by instead of the one
    `normalization` gives over this op's own positions: a data-parallel
    step's frames summed over every process (`nn.all_reduce`).

    ```mlir
    %ce, %dx, %dw, %db = nn.linear_cross_entropy_train %h, %w, %b targets %y
        normalize per_frame scale 1.000000e+00
        : !nn.tensor<[N, 512], f32>, !nn.tensor<[1000, 512], f32>,
          !nn.tensor<[N], i32>, !nn.tensor<[1000], f32>
    ```
  }];
  let arguments = (ins NN_FloatTensor:$input, NN_FloatTensor:$weight,
                       Optional<NN_FloatTensor>:$bias,
                       NN_IntegerTensor:$targets,
                       Optional<NN_F64Scalar>:$inv_norm,
                       NN_LossNormalization:$normalization, F64Attr:$scale,
                       UnitAttr:$unnormalized,
                       DefaultValuedAttr<NN_UnitIntervalF64Attr, "0.0">:$label_smoothing);
  let results = (outs NN_Tensor:$result, NN_FloatTensor:$input_grad,
                      NN_FloatTensor:$weight_grad, NN_FloatTensor:$bias_grad);
  let assemblyFormat = [{
    $input `,` $weight (`,` $bias^)? `targets` $targets
    `normalize` $normalization (`inv_norm` $inv_norm^)? `scale` $scale
    (`unnormalized` $unnormalized^)?
    (`label_smoothing` $label_smoothing^)? attr-dict `:`
    qualified(type($input)) `,` qualified(type($weight)) `,`
    qualified(type($targets)) (`,` qualified(type($bias))^)?
  }];
  let hasVerifier = 1;
}

//===----------------------------------------------------------------------===//
// Marked losses
//===----------------------------------------------------------------------===//

def NN_MarkLossOp : NN_Op<"mark_loss", [MemoryEffects<[MemWrite]>,
    AttrSizedOperandSegments]> {
  let summary = "declares a per-position loss value as a named loss";
  let description = [{
    The loss is the sum of `loss` over its valid positions (padding is
    masked; packed values have none). Its inverse normalization factor is
    the number of frames (`per_frame`), of sequences (`per_sequence`), 1
    (`sum`) or the sum of `custom_inv_norm_factor` (`custom`). `scale`
    (finite, >= 0: training minimizes the objective, and a negative scale
    would train the loss up) multiplies its contribution to the training
    objective (0 removes it), which uses the normalized value unless
    `use_normalized_loss = false`;
    `as_error` losses are reported, never trained on. Loss names are unique
    per graph. `loss` must be the loss value of a loss op (its first
    result).

    `weights` (optional, the type of `loss`) weights each position: the
    loss is the sum of `weights * loss` over the valid positions, and
    `per_frame` normalization divides by the sum of the weights instead of
    the number of frames (the other normalizations are unchanged). The
    weights get no gradient. A weight of 0 takes a position out of the
    loss entirely: chunked training (`nn-train --chunking size:step`)
    gives the frames that an overlapping chunk shares with its neighbour
    weight 0 in all but one of them, so that every frame counts once.

    `eval_only` (with `as_error` only) reports the loss in evaluation but
    leaves it out of compiled train steps: `nn-drop-results` erases the
    mark when a train step is compiled, and the ops that only it used
    (a decoding, an `nn.edit_distance`) are removed with it, so a step
    never computes them. The step reports the other losses; evaluation
    graphs (nn-train's dev evaluation, nn-run) report this one too.

    ```mlir
    nn.mark_loss %ce as "ce" normalize per_frame scale 1.0
        : !nn.tensor<[B, T], f32>
    nn.mark_loss %ctc, %ulen as "ctc" normalize custom scale 0.5
        : !nn.tensor<[B], f32>, !nn.tensor<[B], f32>
    nn.mark_loss %errors, %ref_lengths as "ler" normalize custom as_error
        eval_only : !nn.tensor<[B], f32>, !nn.tensor<[B], f32>
    nn.mark_loss %ce weights %counted as "ce" normalize per_frame
        : !nn.tensor<[N], f32> weights !nn.tensor<[N], f32>
    ```
  }];
  let arguments = (ins NN_Tensor:$loss,
                       Optional<NN_FloatTensor>:$custom_inv_norm_factor,
                       Optional<NN_FloatTensor>:$weights,
                       StrAttr:$name, NN_LossNormalization:$normalization,
                       DefaultValuedAttr<F64Attr, "1.0">:$scale,
                       DefaultValuedAttr<BoolAttr, "true">:$use_normalized_loss,
                       UnitAttr:$as_error, UnitAttr:$eval_only);
  let assemblyFormat = [{
    $loss (`,` $custom_inv_norm_factor^)? (`weights` $weights^)? `as` $name
    `normalize` $normalization
    (`scale` $scale^)? (`as_error` $as_error^)? (`eval_only` $eval_only^)?
    attr-dict `:` qualified(type($loss))
    (`,` qualified(type($custom_inv_norm_factor))^)?
    (`weights` qualified(type($weights))^)?
  }];
  let hasVerifier = 1;
}

def NN_LossTermsOp : NN_Op<"loss_terms", [Pure, AttrSizedOperandSegments]> {
  let summary = "a marked loss as its two f64 terms";
  let description = [{
    What `nn.mark_loss` declares, as values: `sum` is the f64 sum of `loss`
    (times `weights` where given) over its valid positions and `inv_norm`
    its inverse normalization factor (see `nn.mark_loss` for
    `normalization`, the custom factor and the weights).
    `nn-expose-losses` replaces each `nn.mark_loss` by this op and returns
    both terms from the graph (a caller returns its callees' terms too), so
    that the lowering of every op stays local; the loss's name and training
    scale stay on the graph's ABI.

    ```mlir
    %sum, %inv_norm = nn.loss_terms %ce normalize per_frame
        : !nn.tensor<[B, T], f32>
    ```
  }];
  let arguments = (ins NN_FloatTensor:$loss,
                       Optional<NN_FloatTensor>:$custom_inv_norm_factor,
                       Optional<NN_FloatTensor>:$weights,
                       NN_LossNormalization:$normalization);
  let results = (outs NN_F64Scalar:$sum, NN_F64Scalar:$inv_norm);
  let assemblyFormat = [{
    $loss (`,` $custom_inv_norm_factor^)? (`weights` $weights^)? `normalize`
    $normalization attr-dict
    `:` qualified(type($loss)) (`,` qualified(type($custom_inv_norm_factor))^)?
    (`weights` qualified(type($weights))^)?
  }];
  let hasVerifier = 1;
}

def NN_LossNormOp : NN_Op<"loss_norm", [Pure]> {
  let summary = "a loss's normalization factor from its positions alone";
  let description = [{
    The `inv_norm` `nn.loss_terms` gives a loss of type `positions` marked
    `normalize` `per_frame` (its valid positions) or `per_sequence` (its
    sequences), from the dims' lengths alone. It reads no loss value, so it
    can come before the loss: a data-parallel step sums it over the
    processes (`nn.all_reduce`) and the fused loss tail divides by that sum
    in the sweep that computes the loss (`nn-all-reduce-gradients`).

    ```mlir
    %n = nn.loss_norm per_frame for !nn.tensor<[B, T], f32>
    ```
  }];
  let arguments = (ins NN_LossNormalization:$normalization,
                       TypeAttrOf<NN_Tensor>:$positions);
  let results = (outs NN_F64Scalar:$inv_norm);
  let assemblyFormat = "$normalization `for` $positions attr-dict";
  let hasVerifier = 1;
}

#endif // NN_LOSS_OPS_TD
