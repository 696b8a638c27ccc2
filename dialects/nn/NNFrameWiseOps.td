//===- NNFrameWiseOps.td - frame-wise layers ---------------*- tablegen -*-===//
//
// Layers that act on each position independently (FrameWiseOpInterface):
// they commute with nn.pack and nn.unpack.
//
//===----------------------------------------------------------------------===//

#ifndef NN_FRAME_WISE_OPS_TD
#define NN_FRAME_WISE_OPS_TD

include "dialects/nn/NNOpBase.td"

//===----------------------------------------------------------------------===//
// Frame-wise layers
//===----------------------------------------------------------------------===//

/// `what` is the summary; `detail` says what is computed per element (or
/// per frame, for the ops that normalize the feature axis: those set
/// `needsFeatureAxis`, the only invariant that ODS does not check, so only
/// they declare a verifier).
class NN_UnaryFrameWiseOp<string mnemonic, string what, string detail,
                          bit needsFeatureAxis = 0>
    : NN_FrameWiseOp<mnemonic, [SameOperandsAndResultType,
                                 DeclareOpInterfaceMethods<NN_VjpOpInterface>]> {
  let summary = what;
  let description = "\n    " # detail # [{

    The input is a float tensor of any positions (padded `[B, T, F...]`,
    packed `[N, F...]`, per sequence `[B, F...]`); the result has its type.
    Padded positions are computed like the others and mean nothing.

    ```mlir
    %y = nn.}] # mnemonic # [{ %x : !nn.tensor<[B, T, 256], f32>
    ```
  }];
  let arguments = (ins NN_FloatTensor:$input);
  let results = (outs NN_Tensor:$result);
  let assemblyFormat = "$input attr-dict `:` qualified(type($result))";
  let hasVerifier = needsFeatureAxis;
}

def NN_LinearOp : NN_FrameWiseOp<"linear", [
    DeclareOpInterfaceMethods<NN_ParameterInitOpInterface>,
    DeclareOpInterfaceMethods<InferTypeOpInterface>,
    DeclareOpInterfaceMethods<NN_VjpOpInterface>]> {
  let summary = "affine map of the feature axis: x W^T + b";
  let description = [{
    `input` `[P..., I]`, `weight` `[O, I]`, optional `bias` `[O]`, result
    `[P..., O]` where `P...` are the position axes (padded or packed).

    ```mlir
    %y = nn.linear %x, %w, %b : !nn.tensor<[B, T, 512], f32>,
       !nn.tensor<[500, 512], f32>, !nn.tensor<[500], f32>
    ```
  }];
  let arguments = (ins NN_FloatTensor:$input, NN_FloatTensor:$weight,
                       Optional<NN_FloatTensor>:$bias);
  let results = (outs NN_Tensor:$result);
  let assemblyFormat = [{
    $input `,` $weight (`,` $bias^)? attr-dict `:` qualified(type($input)) `,`
    qualified(type($weight)) (`,` qualified(type($bias))^)?
  }];
  let hasVerifier = 1;
}

class NN_BinaryFrameWiseOp<string mnemonic, string what>
    : NN_FrameWiseOp<mnemonic, [Commutative, SameOperandsAndResultType,
                                 DeclareOpInterfaceMethods<NN_VjpOpInterface>]> {
  let summary = what;
  let description = [{
    Both operands and the result have one type: the same position axes
    (so the same sequence dims and lengths) and the same features.

    ```mlir
    %s = nn.}] # mnemonic # [{ %a, %b : !nn.tensor<[B, T, 256], f32>
    ```
  }];
  let arguments = (ins NN_Tensor:$lhs, NN_Tensor:$rhs);
  let results = (outs NN_Tensor:$result);
  let assemblyFormat = "$lhs `,` $rhs attr-dict `:` qualified(type($result))";
}

def NN_AddOp : NN_BinaryFrameWiseOp<"add", "elementwise sum">;
def NN_MulOp : NN_BinaryFrameWiseOp<"mul", "elementwise product">;

def NN_ConcatOp : NN_FrameWiseOp<"concat", [
    DeclareOpInterfaceMethods<InferTypeOpInterface>,
    DeclareOpInterfaceMethods<NN_VjpOpInterface>]> {
  let summary = "concatenates the feature axes of values on the same positions";
  let description = [{
    All inputs have the same position axes and element type and one static
    feature axis; the result's feature size is the sum.

    ```mlir
    %c = nn.concat %a, %b : !nn.tensor<[B, T, 256], f32>,
       !nn.tensor<[B, T, 128], f32>
    ```
  }];
  let arguments = (ins Variadic<NN_Tensor>:$inputs);
  let results = (outs NN_Tensor:$result);
  let assemblyFormat = "$inputs attr-dict `:` qualified(type($inputs))";
  let hasVerifier = 1;
}

def NN_ReluOp : NN_UnaryFrameWiseOp<"relu", "max(x, 0)",
    "Each element: `max(x, 0)`.">;
def NN_TanhOp : NN_UnaryFrameWiseOp<"tanh", "hyperbolic tangent",
    "Each element: `tanh(x)`.">;
def NN_SigmoidOp : NN_UnaryFrameWiseOp<"sigmoid", "logistic function",
    "Each element: `1 / (1 + exp(-x))`.">;
def NN_GeluOp : NN_UnaryFrameWiseOp<"gelu", "GELU, exact (erf) form",
    "Each element: `x / 2 * (1 + erf(x / sqrt(2)))` (the exact form, not "
    "the tanh approximation).">;
def NN_SiluOp : NN_UnaryFrameWiseOp<"silu", "SiLU (Swish), x sigmoid(x)",
    "Each element: `x / (1 + exp(-x))`, the Conformer's activation.">;
def NN_ScaleOp : NN_FrameWiseOp<"scale", [SameOperandsAndResultType,
    DeclareOpInterfaceMethods<NN_VjpOpInterface>]> {
  let summary = "multiplies every element by a constant";
  let description = [{
    Each element: `factor * x`, a constant of the model (the Conformer's
    half-step residual `x + 1/2 FFN(x)` is `nn.add` of `x` and
    `nn.scale` of the module's output by 0.5). Any positions; padded
    positions are computed like the others. Scaling by 1 folds away.

    ```mlir
    %h = nn.scale %f by 5.000000e-01 : !nn.tensor<[B, T, 256], f32>
    ```
  }];
  let arguments = (ins NN_FloatTensor:$input, F64Attr:$factor);
  let results = (outs NN_Tensor:$result);
  let assemblyFormat = "$input `by` $factor attr-dict `:` qualified(type($result))";
  let hasFolder = 1;
}

def NN_SoftmaxOp : NN_UnaryFrameWiseOp<"softmax", "softmax over the feature axis",
    "Each frame: `exp(x_i - max x) / sum_j exp(x_j - max x)` over the one "
    "static feature axis, which the input must have.",
    /*needsFeatureAxis=*/1>;
def NN_LogSoftmaxOp : NN_UnaryFrameWiseOp<"log_softmax",
    "log-softmax over the feature axis",
    "Each frame: `x_i - max x - log sum_j exp(x_j - max x)` over the one "
    "static feature axis, which the input must have.",
    /*needsFeatureAxis=*/1>;

def NN_DropoutOp : NN_FrameWiseOp<"dropout", [
    AllTypesMatch<["input", "result"]>,
    DeclareOpInterfaceMethods<NN_VjpOpInterface>]> {
  let summary = "inverted dropout while training; the identity otherwise";
  let description = [{
    Without `seed` (evaluation) the identity. With `seed` (training mode,
    set by `nn-dropout-training`): each element is kept with probability
    `1 - rate` and scaled by `1 / (1 - rate)`, else zeroed; `0 <= rate <
    1`. Whether an element is kept depends only on the seed, the op's
    `key` and the element's *logical* position (sequence, frames,
    features), never on the layout, so a packed run drops exactly the
    units a padded run drops, and the VJP (the same op on the gradient)
    reuses the mask. The rule, in 32-bit unsigned arithmetic with
    `mix(h)` MurmurHash3's finalizer (`h ^= h >> 16; h *= 0x85ebca6b;
    h ^= h >> 13; h *= 0xc2b2ae35; h ^= h >> 16`): `h = mix(seed +
    0x9e3779b9)`, `h = mix(h ^ key)`, then `h = mix(h ^ c)` for each
    coordinate `c` of the position in order (batch index, frame index of
    each sequence axis, feature indices); kept iff `(h >> 8) * 2^-24 >=
    rate`.

    ```mlir
    %d = nn.dropout %x rate 1.000000e-01 : !nn.tensor<[B, T, 512], f32>
    %t = nn.dropout %x seed %s rate 1.000000e-01 key 2
        : !nn.tensor<[B, T, 512], f32>, !nn.tensor<[], i32>
    ```
  }];
  let arguments = (ins NN_FloatTensor:$input, Optional<NN_IntegerTensor>:$seed,
                       NN_UnitIntervalF64Attr:$rate,
                       DefaultValuedAttr<I64Attr, "0">:$key);
  let results = (outs NN_Tensor:$result);
  let assemblyFormat = [{
    $input (`seed` $seed^)? `rate` $rate (`key` $key^)? attr-dict `:`
    qualified(type($result)) (`,` qualified(type($seed))^)?
  }];
  let hasVerifier = 1;
  // Rate 0 drops nothing, in training and evaluation alike.
  let hasFolder = 1;
}

def NN_LayerNormOp : NN_FrameWiseOp<"layer_norm", [
    DeclareOpInterfaceMethods<NN_ParameterInitOpInterface>,
    AllTypesMatch<["input", "result"]>,
    DeclareOpInterfaceMethods<NN_VjpOpInterface>]> {
  let summary = "normalizes the feature axis, then scales and shifts it";
  let description = [{
    `input` `[P..., F]`, `scale` and `bias` `[F]`; `epsilon > 0`.

    ```mlir
    %n = nn.layer_norm %x, %g, %b : !nn.tensor<[B, T, 512], f32>,
       !nn.tensor<[512], f32>, !nn.tensor<[512], f32>
    ```
  }];
  let arguments = (ins NN_FloatTensor:$input, NN_FloatTensor:$scale,
                       NN_FloatTensor:$bias,
                       DefaultValuedAttr<NN_PositiveF64Attr, "1.0e-5">:$epsilon);
  let results = (outs NN_Tensor:$result);
  let assemblyFormat = [{
    $input `,` $scale `,` $bias attr-dict `:` qualified(type($input)) `,`
    qualified(type($scale)) `,` qualified(type($bias))
  }];
  let hasVerifier = 1;
}

def NN_GluOp : NN_FrameWiseOp<"glu", [
    DeclareOpInterfaceMethods<InferTypeOpInterface>,
    DeclareOpInterfaceMethods<NN_VjpOpInterface>]> {
  let summary = "gated linear unit over the feature axis";
  let description = [{
    `input` `[P..., 2C]`, result `[P..., C]`: `a * sigmoid(b)` with `a` the
    features `[0, C)` and `b` the features `[C, 2C)` (PyTorch's
    `glu(x, dim=-1)`; the gate of the Conformer's convolution module).

    ```mlir
    %g = nn.glu %x : !nn.tensor<[B, T, 512], f32>
    ```
  }];
  let arguments = (ins NN_FloatTensor:$input);
  let results = (outs NN_Tensor:$result);
  let assemblyFormat = "$input attr-dict `:` qualified(type($input))";
  let hasVerifier = 1;
}

def NN_EmbeddingOp : NN_FrameWiseOp<"embedding", [
    DeclareOpInterfaceMethods<NN_ParameterInitOpInterface>,
    DeclareOpInterfaceMethods<InferTypeOpInterface>,
    DeclareOpInterfaceMethods<NN_VjpOpInterface>,
    DeclareOpInterfaceMethods<NN_ClassIndexOpInterface>]> {
  let summary = "looks up rows of a table by integer index";
  let description = [{
    `indices` `[P...]` (integer), `table` `[V, D]`, result `[P..., D]`.
    An index outside `[0, V)` is a run-time error.

    ```mlir
    %e = nn.embedding %ids, %table : !nn.tensor<[B, U], i32>,
       !nn.tensor<[1000, 256], f32>
    ```
  }];
  let arguments = (ins NN_IntegerTensor:$indices, NN_FloatTensor:$table);
  let results = (outs NN_Tensor:$result);
  let assemblyFormat = [{
    $indices `,` $table attr-dict `:` qualified(type($indices)) `,`
    qualified(type($table))
  }];
  let hasVerifier = 1;
}

#endif // NN_FRAME_WISE_OPS_TD
