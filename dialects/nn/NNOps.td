//===- NNOps.td - ops of the nn dialect --------------------*- tablegen -*-===//
//
// Graph structure, parameters, frame-wise layers, sequence-mixing layers,
// losses and pack/unpack. Every op verifies its dims against the dims that
// the enclosing graph declares (see docs/dialect.md).
//
//===----------------------------------------------------------------------===//

#ifndef NN_OPS_TD
#define NN_OPS_TD

include "dialects/nn/NNBase.td"
include "dialects/nn/NNInterfaces.td"
include "mlir/IR/SymbolInterfaces.td"
include "mlir/Interfaces/CallInterfaces.td"
include "mlir/Interfaces/ControlFlowInterfaces.td"
include "mlir/Interfaces/FunctionInterfaces.td"
include "mlir/Interfaces/SideEffectInterfaces.td"
include "mlir/IR/OpAsmInterface.td"
include "mlir/Interfaces/InferTypeOpInterface.td"

/// Checks that every dim named by an operand or result type is declared by
/// the enclosing graph and that the position axes are well formed.
def NN_DimsDeclared : NativeOpTrait<"DimsDeclared"> {
  let cppNamespace = "::mlir::nn::OpTrait";
}

/// Ops inside a graph. The base class appends the dialect-wide dim check.
class NN_Op<string mnemonic, list<Trait> traits = []>
    : Op<NN_Dialect, mnemonic, !listconcat(traits, [NN_DimsDeclared])>;

/// A pure op that acts on each position independently.
class NN_FrameWiseOp<string mnemonic, list<Trait> traits = []>
    : NN_Op<mnemonic, !listconcat(traits,
        [Pure, NN_FrameWiseOpInterface])>;

/// `what` is the summary; `detail` says what is computed per element (or
/// per frame, for the ops that normalize the feature axis).
class NN_UnaryFrameWiseOp<string mnemonic, string what, string detail>
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
  let hasVerifier = 1;
}

//===----------------------------------------------------------------------===//
// Graph structure
//===----------------------------------------------------------------------===//

def NN_GraphOp : Op<NN_Dialect, "graph", [
    FunctionOpInterface, IsolatedFromAbove,
    DeclareOpInterfaceMethods<OpAsmOpInterface, ["getAsmBlockArgumentNames"]>]> {
  let summary = "a named model or loss graph with declared dims";
  let description = [{
    A graph is a function over `!nn.tensor` values. It declares every named
    dim that the types inside it use: the batch dim, sequence dims of a
    batch (their lengths are run-time inputs), derived sequence dims
    (`ceildiv(T, k)`, lengths computed from `T`'s) and packed dims (the
    frames of a batch's sequences, `sum(lengths)` rows). Graphs call each
    other with `nn.call`, which binds the callee's dims to the caller's.

    ```mlir
    nn.graph @encoder(%feat: !nn.tensor<[B, T, 80], f32>)
        -> !nn.tensor<[B, T2, 256], f32>
        dims [B: batch, T: seq(B), T2: seq(B) = ceildiv(T, 2)] {
      ...
      nn.return %h : !nn.tensor<[B, T2, 256], f32>
    }
    ```
  }];
  let arguments = (ins SymbolNameAttr:$sym_name,
                       TypeAttrOf<FunctionType>:$function_type,
                       NN_DimListAttr:$dims,
                       OptionalAttr<StrAttr>:$sym_visibility,
                       OptionalAttr<DictArrayAttr>:$arg_attrs,
                       OptionalAttr<DictArrayAttr>:$res_attrs,
                       OptionalAttr<StrArrayAttr>:$arg_names);
  let regions = (region AnyRegion:$body);
  let hasCustomAssemblyFormat = 1;
  let hasVerifier = 1;
  let hasRegionVerifier = 1;
  let extraClassDeclaration = [{
    /// FunctionOpInterface.
    ::mlir::Region *getCallableRegion() { return &getBody(); }
    ::llvm::ArrayRef<::mlir::Type> getArgumentTypes() {
      return getFunctionType().getInputs();
    }
    ::llvm::ArrayRef<::mlir::Type> getResultTypes() {
      return getFunctionType().getResults();
    }
    /// The name of argument `index` as written, or `arg<index>`.
    std::string getArgName(unsigned index);
  }];
}

def NN_ReturnOp : Op<NN_Dialect, "return", [
    Pure, HasParent<"GraphOp">, ReturnLike, Terminator, NN_DimsDeclared]> {
  let summary = "returns the results of a graph";
  let description = [{
    ```mlir
    nn.return %logits : !nn.tensor<[B, T, 500], f32>
    ```
  }];
  let arguments = (ins Variadic<NN_Tensor>:$operands);
  let assemblyFormat = "attr-dict ($operands^ `:` qualified(type($operands)))?";
  let hasVerifier = 1;
}

def NN_CallOp : NN_Op<"call", [
    CallOpInterface, DeclareOpInterfaceMethods<SymbolUserOpInterface>]> {
  let summary = "calls another graph, binding its dims to the caller's";
  let description = [{
    The callee's dims are bound to the caller's by unifying the argument
    and result types position by position (`B -> B'`, `T -> T'`). Each
    callee dim binds exactly one caller dim of the same kind: a batch binds
    a batch, `seq(B)` binds a sequence dim of the batch `B` binds (derived
    or not), a derived `ceildiv(T, k)` binds a dim derived from `T`'s image
    with the same `k`. Static sizes and element types must be equal.

    ```mlir
    %logits = nn.call @model(%feat) : (!nn.tensor<[B, T, 80], f32>)
        -> !nn.tensor<[B, T, 500], f32>
    ```
  }];
  let arguments = (ins FlatSymbolRefAttr:$callee, Variadic<NN_Tensor>:$operands);
  let results = (outs Variadic<NN_Tensor>:$results);
  let assemblyFormat = [{
    $callee `(` $operands `)` attr-dict `:` functional-type($operands, results)
  }];
  let extraClassDeclaration = [{
    /// CallOpInterface.
    ::mlir::CallInterfaceCallable getCallableForCallee() {
      return (*this)->getAttrOfType<::mlir::SymbolRefAttr>("callee");
    }
    void setCalleeFromCallable(::mlir::CallInterfaceCallable callee) {
      (*this)->setAttr("callee", ::llvm::cast<::mlir::SymbolRefAttr>(
                                     callee.get<::mlir::SymbolRefAttr>()));
    }
    ::mlir::Operation::operand_range getArgOperands() { return getOperands(); }
    ::mlir::MutableOperandRange getArgOperandsMutable() {
      return getOperandsMutable();
    }
  }];
}

//===----------------------------------------------------------------------===//
// Parameters
//===----------------------------------------------------------------------===//

def NN_ParameterOp : Op<NN_Dialect, "parameter", [Symbol]> {
  let summary = "declares a named trainable parameter (a checkpoint name)";
  let description = [{
    A module-level parameter with a static shape. Graphs read it with
    `nn.param_ref`, so a training and a decoding graph share it.

    ```mlir
    nn.parameter @"out.weight" : !nn.tensor<[500, 512], f32>
    ```
  }];
  let arguments = (ins SymbolNameAttr:$sym_name, TypeAttrOf<NN_Tensor>:$type);
  let assemblyFormat = "$sym_name attr-dict `:` $type";
  let hasVerifier = 1;
}

def NN_ParamRefOp : NN_Op<"param_ref", [
    Pure, DeclareOpInterfaceMethods<SymbolUserOpInterface>]> {
  let summary = "reads a declared parameter inside a graph";
  let description = [{
    The result type must equal the declared type of the parameter.

    ```mlir
    %w = nn.param_ref @"out.weight" : !nn.tensor<[500, 512], f32>
    ```
  }];
  let arguments = (ins FlatSymbolRefAttr:$name);
  let results = (outs NN_Tensor:$result);
  let assemblyFormat = "$name attr-dict `:` qualified(type($result))";
}

//===----------------------------------------------------------------------===//
// Frame-wise layers
//===----------------------------------------------------------------------===//

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
def NN_SoftmaxOp : NN_UnaryFrameWiseOp<"softmax", "softmax over the feature axis",
    "Each frame: `exp(x_i - max x) / sum_j exp(x_j - max x)` over the one "
    "static feature axis, which the input must have.">;
def NN_LogSoftmaxOp : NN_UnaryFrameWiseOp<"log_softmax",
    "log-softmax over the feature axis",
    "Each frame: `x_i - max x - log sum_j exp(x_j - max x)` over the one "
    "static feature axis, which the input must have.">;

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

//===----------------------------------------------------------------------===//
// Sequence-mixing layers
//===----------------------------------------------------------------------===//

class NN_SequenceMixingOp<string mnemonic, list<Trait> traits = []>
    : NN_Op<mnemonic, !listconcat(traits,
        [Pure, NN_SequenceMixingOpInterface])>;

def NN_LstmOp : NN_SequenceMixingOp<"lstm", [
    DeclareOpInterfaceMethods<NN_ParameterInitOpInterface>,
    DeclareOpInterfaceMethods<InferTypeOpInterface>,
    DeclareOpInterfaceMethods<NN_VjpOpInterface>]> {
  let summary = "LSTM over a sequence axis, masked by its lengths";
  let description = [{
    `input` `[B, T, I]` with `T` a sequence dim of `B`. Gate order i, f, g, o.
    Unidirectional (`forward`, `backward`): `input_weight` `[4H, I]`,
    `recurrent_weight` `[4H, H]`, `bias` `[4H]`, result `[B, T, H]`.
    `bidirectional`: the weights get a leading axis of size 2 (forward,
    backward) and the result is `[B, T, 2H]`, forward features first. The
    backward direction runs over each sequence within its own length;
    outputs on padded frames are zero.

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
    `tape` `[B, T, D * 6H]` (D = 2 for `bidirectional`, else 1): per
    direction, six blocks of H features per frame, the cell state, the
    gate activations i, f, g, o and the output h, zero on padded frames.
    The backward direction's blocks are in its own step order (frame t is
    its step t, over each sequence reversed within its length). Only
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

def NN_Conv1dOp : NN_SequenceMixingOp<"conv1d", [
    DeclareOpInterfaceMethods<NN_ParameterInitOpInterface>,
    DeclareOpInterfaceMethods<NN_VjpOpInterface>]> {
  let summary = "convolution over a sequence axis with 'same' padding";
  let description = [{
    `input` `[B, T, Cin]`, `weight` `[Cout, K, Cin]`, optional `bias`
    `[Cout]`. Output frame `t` sees input frames
    `t * stride - (K - 1) / 2 + k`, `k < K`; frames outside the sequence's
    own length read zero. The result is `[B, T', Cout]` with `T' = T` for
    stride 1, else a dim declared `seq(B) = ceildiv(T, stride)`.

    ```mlir
    %y = nn.conv1d %x, %w, %b stride 2 : (!nn.tensor<[B, T, 80], f32>,
        !nn.tensor<[256, 3, 80], f32>, !nn.tensor<[256], f32>)
        -> !nn.tensor<[B, T2, 256], f32>
    ```
  }];
  let arguments = (ins NN_FloatTensor:$input, NN_FloatTensor:$weight,
                       Optional<NN_FloatTensor>:$bias,
                       NN_PositiveI64Attr:$stride);
  let results = (outs NN_Tensor:$result);
  let assemblyFormat = [{
    $input `,` $weight (`,` $bias^)? `stride` $stride attr-dict `:`
    functional-type(operands, results)
  }];
  let hasVerifier = 1;
}

def NN_PoolOp : NN_SequenceMixingOp<"pool", [
    DeclareOpInterfaceMethods<NN_VjpOpInterface>]> {
  let summary = "max or average pooling over a sequence axis (downsampling)";
  let description = [{
    `input` `[B, T, C]`, windows of `window` frames every `stride` frames
    starting at frame 0, clipped to each sequence's own length (average
    over the frames inside). The result is `[B, T', C]`, `T'` declared
    `seq(B) = ceildiv(T, stride)` (or `T` itself for stride 1).

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
// Losses
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

def NN_LinearCrossEntropyOp : NN_FrameWiseOp<"linear_cross_entropy", [
    DeclareOpInterfaceMethods<InferTypeOpInterface>,
    DeclareOpInterfaceMethods<NN_VjpOpInterface>,
    DeclareOpInterfaceMethods<NN_LossOpInterface>,
    DeclareOpInterfaceMethods<NN_ClassIndexOpInterface>,
    DeclareOpInterfaceMethods<NN_ParameterInitOpInterface>]> {
  let summary = "a linear layer and cross entropy from its logits, fused";
  let description = [{
    `input` `[P..., I]`, `weight` `[V, I]`, optional `bias` `[V]`, `targets`
    `[P...]` class indices, result `[P...]`: what
    `nn.cross_entropy (nn.linear %input, %weight, %bias), %targets from
    logits` computes (label smoothing as there), without the `[P..., V]`
    logits. `nn-fuse-loss-tail` forms it; the lowering sweeps blocks of
    positions, each block's logits computed (one GEMM), reduced to a
    log-sum-exp and the target's logit, and dropped (docs/loss-tail.md).
    Padded positions compute whatever the padding holds and mean nothing.

    ```mlir
    %ce = nn.linear_cross_entropy %h, %w, %b targets %y
        : !nn.tensor<[N, 512], f32>, !nn.tensor<[1000, 512], f32>,
          !nn.tensor<[1000], f32>, !nn.tensor<[N], i32>
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
    qualified(type($input)) `,` qualified(type($weight))
    (`,` qualified(type($bias))^)? `,` qualified(type($targets))
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

def NN_CtcLossOp : NN_SequenceMixingOp<"ctc_loss", [
    DeclareOpInterfaceMethods<InferTypeOpInterface>,
    DeclareOpInterfaceMethods<NN_VjpOpInterface>,
    DeclareOpInterfaceMethods<NN_LossOpInterface>,
    DeclareOpInterfaceMethods<NN_ClassIndexOpInterface, ["getReservedClass"]>]> {
  let summary = "per-sequence CTC loss, -log p(labels | input)";
  let description = [{
    `logits` `[B, T, V]` over a sequence dim `T` (logits, or log-probs with
    `from log_probs`), `labels` `[B, U]` integer over an independent
    sequence dim `U` of the same batch, `blank` in `[0, V)`. The result
    `[B]` is the forward-algorithm value in log space over `2U + 1`
    states. An impossible alignment (too few frames) gives +inf, or 0 with
    `zero_infinity`.

    ```mlir
    %ctc = nn.ctc_loss %logits, %labels from logits blank 0
        : !nn.tensor<[B, T, 500], f32>, !nn.tensor<[B, U], i32>
    ```
  }];
  let arguments = (ins NN_FloatTensor:$logits, NN_IntegerTensor:$labels,
                       NN_LossInput:$input_kind, I64Attr:$blank,
                       UnitAttr:$zero_infinity);
  let results = (outs NN_Tensor:$result);
  let assemblyFormat = [{
    $logits `,` $labels `from` $input_kind `blank` $blank
    (`zero_infinity` $zero_infinity^)? attr-dict `:`
    qualified(type($logits)) `,` qualified(type($labels))
  }];
  let hasVerifier = 1;
}

def NN_ViterbiAlignOp : NN_SequenceMixingOp<"viterbi_align", [
    DeclareOpInterfaceMethods<InferTypeOpInterface>,
    DeclareOpInterfaceMethods<NN_ClassIndexOpInterface, ["getReservedClass"]>]> {
  let summary = "Viterbi forced alignment of label sequences to frames";
  let description = [{
    The best path through a topology's state graph, per sequence: `scores`
    `[B, T, V]` or packed `[N, V]` (logits, or log-probs with
    `from log_probs`; the path is
    the same for both, since every path takes each frame's normalizer
    once) and `labels` `[B, U]` integer over an independent sequence dim
    `U`, `blank` in `[0, V)`. Results: `alignment` on the scores' positions
    (`[B, T]` or `[N]`) i32, the class each frame emits on the best path
    (blank included), -1 on padded frames; `score` `[B]`, the path's
    summed log-probabilities.

    Topologies: `ctc`, states blank, l1, blank, l2, ..., blank, each frame
    staying, moving one state on, or skipping a blank between two
    different labels, ending in the last label or the blank after it;
    `rna` (recurrent neural aligner), one emission per frame, the blank
    or the next label, no loop: U labels need T >= U frames. A sequence no
    path fits (too few frames: T < U + repeated neighbours for `ctc`) gets
    score -inf and -1 on every frame: flagged, never a made-up path.

    Ties go to the predecessor with the higher state index, so that every
    label is emitted as early as the best score allows: staying before
    moving on before skipping; at the last frame, the final blank before
    the last label (docs/sequence-training.md).

    With `prior %p` (`[V]`, the scores' element type), the search scores
    class c on every frame by its log-probability minus `p[c]`: with `p` a
    scaled log prior, the alignment is less peaky (labels keep more of
    their frames, the blank fewer). The `score` stays the chosen path's
    log-probability, without the prior.

    ```mlir
    %a, %s = nn.viterbi_align %lp, %labels from log_probs topology ctc blank 0
        : !nn.tensor<[B, T, 500], f32>, !nn.tensor<[B, U], i32>
    %b, %t = nn.viterbi_align %z, %labels from logits topology ctc blank 0
        prior %p : !nn.tensor<[B, T, 500], f32>, !nn.tensor<[B, U], i32>,
        !nn.tensor<[500], f32>
    ```
  }];
  let arguments = (ins NN_FloatTensor:$scores, NN_IntegerTensor:$labels,
                       Optional<NN_FloatTensor>:$prior,
                       NN_LossInput:$input_kind, NN_AlignTopology:$topology,
                       I64Attr:$blank);
  let results = (outs NN_Tensor:$alignment, NN_Tensor:$score);
  let assemblyFormat = [{
    $scores `,` $labels `from` $input_kind `topology` $topology `blank` $blank
    (`prior` $prior^)? attr-dict `:` qualified(type($scores)) `,`
    qualified(type($labels)) (`,` qualified(type($prior))^)?
  }];
  let hasVerifier = 1;
}

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
    `U1_b - 1`. Frames past a sequence's length get 0. The joint is then
    evaluated only on the path: `encoder + gather_states`, frame-wise.

    ```mlir
    %g = nn.gather_states %pred, %align blank 0
        : !nn.tensor<[B, U1, 512], f32>, !nn.tensor<[B, T], i32>
        -> !nn.tensor<[B, T, 512], f32>
    ```
  }];
  let arguments = (ins NN_FloatTensor:$states, NN_IntegerTensor:$alignment,
                       I64Attr:$blank);
  let results = (outs NN_FloatTensor:$result);
  let assemblyFormat = [{
    $states `,` $alignment `blank` $blank attr-dict `:`
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
    DeclareOpInterfaceMethods<NN_ClassIndexOpInterface, ["getReservedClass"]>]> {
  let summary = "Viterbi forced alignment over a transducer's (frame, label) grid";
  let description = [{
    The best RNA path of each sequence through a transducer joint: `joint`
    packed `[J, V]` (`J: packed(B, T, U1)`) or padded `[B, T, U1, V]` as
    for `nn.transducer_loss` (logits, the log-softmax fused, or log-probs
    with `from log_probs`), `labels` `[B, U]`, `blank` in `[0, V)`. At
    (t, u) a frame emits the blank, to (t + 1, u), or label u + 1, to
    (t + 1, u + 1), each scored by the joint's row (t, u): unlike
    `nn.viterbi_align ... topology rna` on frame scores, the scores depend
    on the labels emitted before. Only `rna` has one emission per frame;
    `rnnt` is rejected.

    Results: `alignment` `[B, T]` i32, the class each frame emits on the
    best path (the blank or the next label; -1 on padded frames);
    `score` `[B]`, the path's log-probability. A sequence with T < U (no
    path) gets -inf and -1 on every frame. Ties go to the blank, so that
    each label is emitted as early as the best score allows (as
    `nn.viterbi_align` breaks them).

    ```mlir
    %a, %s = nn.transducer_align %logits, %labels from logits topology rna
        blank 0 : !nn.tensor<[J, 500], f32>, !nn.tensor<[B, U], i32>
        -> !nn.tensor<[B, T], i32>, !nn.tensor<[B], f32>
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

def NN_MarkLossOp : NN_Op<"mark_loss", [MemoryEffects<[MemWrite]>]> {
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
    per graph. `loss` must be produced by a loss op.

    ```mlir
    nn.mark_loss %ce as "ce" normalize per_frame scale 1.0
        : !nn.tensor<[B, T], f32>
    nn.mark_loss %ctc, %ulen as "ctc" normalize custom scale 0.5
        : !nn.tensor<[B], f32>, !nn.tensor<[B], f32>
    ```
  }];
  let arguments = (ins NN_Tensor:$loss,
                       Optional<NN_FloatTensor>:$custom_inv_norm_factor,
                       StrAttr:$name, NN_LossNormalization:$normalization,
                       DefaultValuedAttr<F64Attr, "1.0">:$scale,
                       DefaultValuedAttr<BoolAttr, "true">:$use_normalized_loss,
                       UnitAttr:$as_error);
  let assemblyFormat = [{
    $loss (`,` $custom_inv_norm_factor^)? `as` $name `normalize` $normalization
    (`scale` $scale^)? (`as_error` $as_error^)? attr-dict `:` qualified(type($loss))
    (`,` qualified(type($custom_inv_norm_factor))^)?
  }];
  let hasVerifier = 1;
}

def NN_LossTermsOp : NN_Op<"loss_terms", [Pure]> {
  let summary = "a marked loss as its two f64 terms";
  let description = [{
    What `nn.mark_loss` declares, as values: `sum` is the f64 sum of `loss`
    over its valid positions and `inv_norm` its inverse normalization
    factor (see `nn.mark_loss` for `normalization` and the custom factor).
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
                       NN_LossNormalization:$normalization);
  let results = (outs NN_F64Scalar:$sum, NN_F64Scalar:$inv_norm);
  let assemblyFormat = [{
    $loss (`,` $custom_inv_norm_factor^)? `normalize` $normalization attr-dict
    `:` qualified(type($loss)) (`,` qualified(type($custom_inv_norm_factor))^)?
  }];
  let hasVerifier = 1;
}

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
    is 0: a loss over no frames) or `scale`; padded positions get exactly 0.

    ```mlir
    %g = nn.loss_seed %ce, %inv_norm scale 1.000000e+00 : !nn.tensor<[B, T], f32>
    ```
  }];
  let arguments = (ins NN_FloatTensor:$loss, NN_F64Scalar:$inv_norm,
                       F64Attr:$scale, UnitAttr:$unnormalized);
  let results = (outs NN_FloatTensor:$result);
  let assemblyFormat = [{
    $loss `,` $inv_norm `scale` $scale (`unnormalized` $unnormalized^)?
    attr-dict `:` qualified(type($loss))
  }];
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
    `Phi(x) + x phi(x)`).

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
          !nn.tensor<[1000], f32>, !nn.tensor<[N], i32>
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
    qualified(type($input)) `,` qualified(type($weight))
    (`,` qualified(type($bias))^)? `,` qualified(type($targets))
  }];
  let hasVerifier = 1;
}

def NN_LinearCrossEntropyTrainOp : NN_FrameWiseOp<"linear_cross_entropy_train", [
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

    ```mlir
    %ce, %dx, %dw, %db = nn.linear_cross_entropy_train %h, %w, %b targets %y
        normalize per_frame scale 1.000000e+00
        : !nn.tensor<[N, 512], f32>, !nn.tensor<[1000, 512], f32>,
          !nn.tensor<[1000], f32>, !nn.tensor<[N], i32>
    ```
  }];
  let arguments = (ins NN_FloatTensor:$input, NN_FloatTensor:$weight,
                       Optional<NN_FloatTensor>:$bias,
                       NN_IntegerTensor:$targets,
                       NN_LossNormalization:$normalization, F64Attr:$scale,
                       UnitAttr:$unnormalized,
                       DefaultValuedAttr<NN_UnitIntervalF64Attr, "0.0">:$label_smoothing);
  let results = (outs NN_Tensor:$result, NN_FloatTensor:$input_grad,
                      NN_FloatTensor:$weight_grad, NN_FloatTensor:$bias_grad);
  let assemblyFormat = [{
    $input `,` $weight (`,` $bias^)? `targets` $targets
    `normalize` $normalization `scale` $scale (`unnormalized` $unnormalized^)?
    (`label_smoothing` $label_smoothing^)? attr-dict `:`
    qualified(type($input)) `,` qualified(type($weight))
    (`,` qualified(type($bias))^)? `,` qualified(type($targets))
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
  }];
}

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
    `weight` and `stride` are the conv's. Valid output frame `t'` read
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
                       NN_FloatTensor:$weight, NN_PositiveI64Attr:$stride);
  let results = (outs NN_FloatTensor:$input_grad,
                      NN_FloatTensor:$weight_grad);
  let assemblyFormat = [{
    $grad `,` $input `,` $weight `stride` $stride attr-dict `:`
    qualified(type($grad)) `,` qualified(type($input)) `,`
    qualified(type($weight))
  }];
  let hasVerifier = 1;
}

def NN_CtcLossGradOp : NN_Op<"ctc_loss_grad", [Pure,
    AllTypesMatch<["logits", "result"]>]> {
  let summary = "the input gradient of nn.ctc_loss (forward-backward)";
  let description = [{
    `grad` `[B]` is the gradient of a ctc_loss's per-sequence result; the
    other operands and attributes are the loss's. With `gamma[t, c]` the
    posterior of class `c` at frame `t` (the log-space forward-backward
    occupancy of the states emitting `c`), the result at valid frames is
    `grad * (softmax(logits) - gamma)` from logits and `-grad * gamma`
    from log-probs; padded frames get 0. A class whose log-probability is
    -inf at a frame (a -inf logit) lies on no path, so `gamma` and the
    result are 0 there. A sequence whose labels cannot be aligned (its
    loss is +inf) gets 0 with `zero_infinity` and NaN without it.

    ```mlir
    %dx = nn.ctc_loss_grad %g, %logits, %labels from logits blank 0
        : !nn.tensor<[B], f32>, !nn.tensor<[B, T, 500], f32>, !nn.tensor<[B, U], i32>
    ```
  }];
  let arguments = (ins NN_FloatTensor:$grad, NN_FloatTensor:$logits,
                       NN_IntegerTensor:$labels, NN_LossInput:$input_kind,
                       I64Attr:$blank, UnitAttr:$zero_infinity);
  let results = (outs NN_FloatTensor:$result);
  let assemblyFormat = [{
    $grad `,` $logits `,` $labels `from` $input_kind `blank` $blank
    (`zero_infinity` $zero_infinity^)? attr-dict `:` qualified(type($grad))
    `,` qualified(type($logits)) `,` qualified(type($labels))
  }];
  let hasVerifier = 1;
}

def NN_TransducerJoinGradOp : NN_Op<"transducer_join_grad", [Pure]> {
  let summary = "the input gradients of nn.transducer_join";
  let description = [{
    `grad` has the join's result type; the results have the types of its
    encoder and prediction operands: the encoder frame (b, t) gets the sum
    of `grad` over u < U1_b, the prediction state (b, u) the sum over
    t < T_b; positions past a length get 0.

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
    the valid frames that gathered it.

    ```mlir
    %ds = nn.gather_states_grad %dg, %align blank 0
        : !nn.tensor<[B, T, 512], f32>, !nn.tensor<[B, T], i32>
        -> !nn.tensor<[B, U1, 512], f32>
    ```
  }];
  let arguments = (ins NN_FloatTensor:$grad, NN_IntegerTensor:$alignment,
                       I64Attr:$blank);
  let results = (outs NN_FloatTensor:$result);
  let assemblyFormat = [{
    $grad `,` $alignment `blank` $blank attr-dict `:` qualified(type($grad))
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

//===----------------------------------------------------------------------===//
// Optimizer updates (nn-train-step)
//===----------------------------------------------------------------------===//

def NN_GlobalNormOp : NN_Op<"global_norm", [Pure]> {
  let summary = "the L2 norm of several tensors taken together";
  let description = [{
    `sqrt(sum over every element of every input of x^2)`, the squares
    accumulated in f64: the gradient norm of a train step (clipping and
    the report). The inputs are parameter gradients (static shapes). A NaN
    or infinite element gives a NaN or infinite norm.

    ```mlir
    %n = nn.global_norm %dw, %db : !nn.tensor<[10, 4], f32>, !nn.tensor<[10], f32>
    ```
  }];
  let arguments = (ins Variadic<NN_FloatTensor>:$inputs);
  let results = (outs NN_F32Scalar:$norm);
  let assemblyFormat = "$inputs attr-dict `:` qualified(type($inputs))";
  let hasVerifier = 1;
}

def NN_ClipFactorOp : NN_Op<"clip_factor", [Pure]> {
  let summary = "the gradient scale of clipping by global norm";
  let description = [{
    `min(1, max_norm / (norm + 1e-6))`, computed in f64: gradients scaled by
    it have a global norm of at most `max_norm` (PyTorch's
    `clip_grad_norm_` rule). A NaN norm gives NaN, an infinite one 0.

    ```mlir
    %s = nn.clip_factor %n max_norm 5.000000e+00
    ```
  }];
  let arguments = (ins NN_F32Scalar:$norm, NN_PositiveF64Attr:$max_norm);
  let results = (outs NN_F32Scalar:$factor);
  let assemblyFormat = "$norm `max_norm` $max_norm attr-dict";
}

class NN_UpdateOp<string mnemonic, list<string> matching>
    : NN_Op<mnemonic, [Pure, AllTypesMatch<matching>]> {
  let hasVerifier = 1;
}

def NN_SgdUpdateOp : NN_UpdateOp<"sgd_update",
                                 ["param", "grad", "new_param"]> {
  let summary = "one step of plain stochastic gradient descent";
  let description = [{
    With `g = grad * grad_scale` (`grad_scale` 1 when absent) and
    `weight_decay` the L2 coefficient:
    `new_param = param - lr * (g + weight_decay * param)`. Element-wise
    in f32; `lr` is this step's learning rate.

    ```mlir
    %p1 = nn.sgd_update %p, %g lr %lr : !nn.tensor<[10, 4], f32>
    ```
  }];
  let arguments = (ins NN_FloatTensor:$param, NN_FloatTensor:$grad,
                       NN_F32Scalar:$lr, Optional<NN_F32Scalar>:$grad_scale,
                       DefaultValuedAttr<NN_NonNegativeF64Attr, "0.0">:$weight_decay);
  let results = (outs NN_FloatTensor:$new_param);
  let assemblyFormat = [{
    $param `,` $grad `lr` $lr (`scale` $grad_scale^)?
    (`weight_decay` $weight_decay^)? attr-dict `:` qualified(type($param))
  }];
}

def NN_MomentumUpdateOp : NN_UpdateOp<"momentum_update",
    ["param", "grad", "velocity", "new_param", "new_velocity"]> {
  let summary = "one step of SGD with (Nesterov) momentum";
  let description = [{
    PyTorch's `SGD(momentum, nesterov, dampening=0)`: with
    `g = grad * grad_scale + weight_decay * param`,
    `new_velocity = momentum * velocity + g`, and
    `new_param = param - lr * d` where `d = g + momentum * new_velocity`
    with `nesterov`, `d = new_velocity` without. The velocity starts at 0
    (which equals PyTorch's first-step rule when dampening is 0).

    ```mlir
    %p1, %v1 = nn.momentum_update %p, %g, %v lr %lr momentum 9.000000e-01
        nesterov : !nn.tensor<[10, 4], f32>
    ```
  }];
  let arguments = (ins NN_FloatTensor:$param, NN_FloatTensor:$grad,
                       NN_FloatTensor:$velocity, NN_F32Scalar:$lr,
                       Optional<NN_F32Scalar>:$grad_scale,
                       NN_UnitIntervalF64Attr:$momentum, UnitAttr:$nesterov,
                       DefaultValuedAttr<NN_NonNegativeF64Attr, "0.0">:$weight_decay);
  let results = (outs NN_FloatTensor:$new_param, NN_FloatTensor:$new_velocity);
  let assemblyFormat = [{
    $param `,` $grad `,` $velocity `lr` $lr (`scale` $grad_scale^)?
    `momentum` $momentum (`nesterov` $nesterov^)?
    (`weight_decay` $weight_decay^)? attr-dict `:` qualified(type($param))
  }];
}

def NN_AdamUpdateOp : NN_UpdateOp<"adam_update",
    ["param", "grad", "m", "v", "new_param", "new_m", "new_v"]> {
  let summary = "one step of Adam, or AdamW with `decoupled`";
  let description = [{
    PyTorch's `Adam` / `AdamW` (no amsgrad). `step` is the number of this
    update, counting from 1. With `g = grad * grad_scale`, plus
    `weight_decay * param` unless `decoupled`:
    `new_m = beta1 m + (1 - beta1) g`,
    `new_v = beta2 v + (1 - beta2) g^2`,
    `new_param = p - (lr / c1) new_m / (sqrt(new_v) / sqrt(c2) + epsilon)`
    with the bias corrections `c1 = 1 - beta1^step`, `c2 = 1 - beta2^step`
    (computed in f64, once per step), and `p = param` or, `decoupled`,
    `p = param (1 - lr weight_decay)`. The moments start at 0.

    ```mlir
    %p1, %m1, %v1 = nn.adam_update %p, %g, %m, %v lr %lr step %t
        beta1 9.000000e-01 beta2 9.990000e-01 epsilon 1.000000e-08
        : !nn.tensor<[10, 4], f32>
    ```
  }];
  let arguments = (ins NN_FloatTensor:$param, NN_FloatTensor:$grad,
                       NN_FloatTensor:$m, NN_FloatTensor:$v, NN_F32Scalar:$lr,
                       NN_I32Scalar:$step, Optional<NN_F32Scalar>:$grad_scale,
                       NN_UnitIntervalF64Attr:$beta1,
                       NN_UnitIntervalF64Attr:$beta2,
                       NN_PositiveF64Attr:$epsilon,
                       DefaultValuedAttr<NN_NonNegativeF64Attr, "0.0">:$weight_decay,
                       UnitAttr:$decoupled);
  let results = (outs NN_FloatTensor:$new_param, NN_FloatTensor:$new_m,
                      NN_FloatTensor:$new_v);
  let assemblyFormat = [{
    $param `,` $grad `,` $m `,` $v `lr` $lr `step` $step
    (`scale` $grad_scale^)? `beta1` $beta1 `beta2` $beta2 `epsilon` $epsilon
    (`weight_decay` $weight_decay^)? (`decoupled` $decoupled^)? attr-dict `:`
    qualified(type($param))
  }];
}

#endif // NN_OPS_TD
