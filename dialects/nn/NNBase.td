//===- NNBase.td - nn dialect, enums, types and attributes -*- tablegen -*-===//
//
// The dialect definition and everything the ops share: the named-dim tensor
// type, the dim declarations of a graph, and the enums of op attributes.
//
//===----------------------------------------------------------------------===//

#ifndef NN_BASE_TD
#define NN_BASE_TD

include "mlir/IR/OpBase.td"
include "mlir/IR/AttrTypeBase.td"
include "mlir/IR/EnumAttr.td"

def NN_Dialect : Dialect {
  let name = "nn";
  let cppNamespace = "::mlir::nn";
  let summary = "Layers, losses and sequence axes of sequence neural networks";
  let description = [{
    The `nn` dialect describes models as graphs of layers and losses over
    padded batches of variable-length sequences. Every axis of every tensor
    is a named dim declared by the enclosing `nn.graph` (batch, sequence of a
    batch, derived sequence, packed) or a static size, so verifiers can
    check that two values share a sequence axis and that packed and padded
    values are never mixed up. See docs/dialect.md.
  }];
  // The attributes the passes and the compiler put on ops, graph results
  // and modules; code names them through the generated helpers
  // (NNDialect::GradientAttrHelper::getNameStr() is "nn.gradient").
  let discardableAttrs = (ins
    // Graph results (nn-autodiff, nn-train-step): the gradient of the
    // parameter named, of the input named, of the argument at the index.
    "::mlir::StringAttr":$gradient,
    "::mlir::StringAttr":$gradient_of_input,
    "::mlir::IntegerAttr":$gradient_of_argument,
    // Train-step results: the gradients' global norm, the updated values'
    // global norm, the new value of the parameter named.
    "::mlir::UnitAttr":$grad_norm,
    "::mlir::UnitAttr":$updated_norm,
    "::mlir::StringAttr":$update,
    // A parameter that holds optimizer state (nn-train-step adds them).
    "::mlir::UnitAttr":$optimizer_state,
    // Modules: the manifest text the artifact embeds (the compiler, for
    // nn-artifact-entry), the arguments host code reads per function
    // (nn-gpu-place-buffers, for the manifest).
    "::mlir::StringAttr":$manifest,
    "::mlir::DictionaryAttr":$host_visible_args
  );
  let useDefaultTypePrinterParser = 1;
  let useDefaultAttributePrinterParser = 1;
  let extraClassDeclaration = [{
    void registerTypes();
    void registerAttributes();

    /// The dims of a graph lowered to another function op, kept on that
    /// op while nn ops are left inside it (a partial lowering), so that
    /// they still verify and a later pass can read their dims.
    static constexpr ::llvm::StringLiteral kLoweredDimsAttrName = "nn.dims";
  }];
}

//===----------------------------------------------------------------------===//
// Enums
//===----------------------------------------------------------------------===//

def NN_DimKind : I32EnumAttr<"DimKind", "kind of a declared dim", [
    I32EnumAttrCase<"batch", 0>,
    I32EnumAttrCase<"seq", 1>,
    I32EnumAttrCase<"packed", 2>]> {
  let cppNamespace = "::mlir::nn";
}

def NN_LossInput : I32EnumAttr<"LossInput",
    "whether a loss reads unnormalized logits or log-probabilities", [
    I32EnumAttrCase<"logits", 0>,
    I32EnumAttrCase<"log_probs", 1>]> {
  let cppNamespace = "::mlir::nn";
}

def NN_CtcMerge : I32EnumAttr<"CtcMerge",
    "how a CTC prefix search combines the paths of one prefix", [
    I32EnumAttrCase<"sum", 0>,
    I32EnumAttrCase<"max", 1>]> {
  let cppNamespace = "::mlir::nn";
}

def NN_LstmDirection : I32EnumAttr<"LstmDirection", "direction of an LSTM", [
    I32EnumAttrCase<"forward", 0>,
    I32EnumAttrCase<"backward", 1>,
    I32EnumAttrCase<"bidirectional", 2>]> {
  let cppNamespace = "::mlir::nn";
}

def NN_TransducerTopology : I32EnumAttr<"TransducerTopology",
    "the lattice of a transducer loss over the (t, u) grid", [
    I32EnumAttrCase<"rnnt", 0>,
    I32EnumAttrCase<"rna", 1>]> {
  let cppNamespace = "::mlir::nn";
}

def NN_AlignTopology : I32EnumAttr<"AlignTopology",
    "the state graph of a forced alignment", [
    I32EnumAttrCase<"ctc", 0>,
    I32EnumAttrCase<"rna", 1>]> {
  let cppNamespace = "::mlir::nn";
}

def NN_PoolKind : I32EnumAttr<"PoolKind", "pooling over time", [
    I32EnumAttrCase<"max", 0>,
    I32EnumAttrCase<"avg", 1>]> {
  let cppNamespace = "::mlir::nn";
}

def NN_ReduceKind : I32EnumAttr<"ReduceKind",
    "masked reduction over a sequence axis", [
    I32EnumAttrCase<"sum", 0>,
    I32EnumAttrCase<"mean", 1>,
    I32EnumAttrCase<"max", 2>]> {
  let cppNamespace = "::mlir::nn";
}

def NN_Activation : I32EnumAttr<"Activation",
    "an elementwise activation, for its derivative", [
    I32EnumAttrCase<"relu", 0>,
    I32EnumAttrCase<"tanh", 1>,
    I32EnumAttrCase<"sigmoid", 2>,
    I32EnumAttrCase<"gelu", 3>,
    I32EnumAttrCase<"silu", 4>]> {
  let cppNamespace = "::mlir::nn";
}

def NN_LossNormalization : I32EnumAttr<"LossNormalization",
    "what a summed loss is divided by", [
    I32EnumAttrCase<"sum", 0>,
    I32EnumAttrCase<"per_frame", 1>,
    I32EnumAttrCase<"per_sequence", 2>,
    I32EnumAttrCase<"custom", 3>]> {
  let cppNamespace = "::mlir::nn";
}

//===----------------------------------------------------------------------===//
// Types
//===----------------------------------------------------------------------===//

def NN_TensorType : TypeDef<NN_Dialect, "NNTensor"> {
  let mnemonic = "tensor";
  let summary = "a tensor whose axes are named dims or static sizes";
  let description = [{
    `!nn.tensor<[B, T, 80], f32>`: each axis is either the name of a dim
    declared by the enclosing graph (`B`, `T`, a packed `N`) or a static
    size. Named dims come first (the *position* axes: `[B]`, `[B, T...]` or
    a packed `[N]`); static feature axes follow. Two values whose types name
    the same sequence dim share its lengths. A static size is at most
    2^31 - 1 (BLAS and cuBLAS take 32-bit sizes), and the static axes of one
    position take at most 2^40 bytes.
  }];
  let parameters = (ins
    ArrayRefParameter<"::mlir::Attribute", "named dims or static sizes">:$dims,
    "::mlir::Type":$elementType);
  let hasCustomAssemblyFormat = 1;
  let genVerifyDecl = 1;
  let skipDefaultBuilders = 1;
  let builders = [
    TypeBuilderWithInferredContext<(ins "::llvm::ArrayRef<::mlir::Attribute>":$dims,
                                        "::mlir::Type":$elementType), [{
      return $_get(elementType.getContext(), dims, elementType);
    }]>
  ];
  let extraClassDeclaration = [{
    /// The largest static size of an axis.
    static constexpr int64_t kMaxStaticSize = (int64_t{1} << 31) - 1;
    /// The most bytes the static axes of a type may take.
    static constexpr uint64_t kMaxStaticBytes = uint64_t{1} << 40;
    /// Builds a type from dim names and static sizes; a name is used where
    /// `names[i]` is non-empty, else `sizes[i]`.
    static NNTensorType get(::mlir::MLIRContext *context,
                          ::llvm::ArrayRef<::llvm::StringRef> names,
                          ::llvm::ArrayRef<int64_t> sizes,
                          ::mlir::Type elementType);
    /// The same type with other dims.
    NNTensorType withDims(::llvm::ArrayRef<::mlir::Attribute> dims) const;
    /// This type without its last axis (the positions of a per-frame loss
    /// over these features).
    NNTensorType withoutLastAxis() const {
      return getRank() == 0 ? *this : withDims(getDims().drop_back());
    }
    int64_t getRank() const { return getDims().size(); }
    bool isNamedDim(unsigned i) const {
      return ::llvm::isa<::mlir::StringAttr>(getDims()[i]);
    }
    /// The name of axis `i`; empty for a static axis.
    ::llvm::StringRef getDimName(unsigned i) const;
    /// The size of static axis `i`; -1 for a named axis.
    int64_t getStaticSize(unsigned i) const;
    /// The number of leading named (position) axes.
    unsigned getNumPositionDims() const;
    /// True when every axis is static (parameters are).
    bool hasStaticShape() const { return getNumPositionDims() == 0 &&
        ::llvm::all_of(getDims(), [](::mlir::Attribute a) {
          return ::llvm::isa<::mlir::IntegerAttr>(a); }); }
  }];
}

def NN_Tensor : Type<CPred<"::llvm::isa<::mlir::nn::NNTensorType>($_self)">,
                     "nn tensor", "::mlir::nn::NNTensorType">;

/// nn tensors by element type: the element-type constraints of the ops.
def NN_FloatTensor : Type<
    And<[NN_Tensor.predicate,
         CPred<"::llvm::isa<::mlir::FloatType>(::llvm::cast<"
               "::mlir::nn::NNTensorType>($_self).getElementType())">]>,
    "nn tensor of floats", "::mlir::nn::NNTensorType">;
def NN_IntegerTensor : Type<
    And<[NN_Tensor.predicate,
         CPred<"::llvm::isa<::mlir::IntegerType>(::llvm::cast<"
               "::mlir::nn::NNTensorType>($_self).getElementType())">]>,
    "nn tensor of integers", "::mlir::nn::NNTensorType">;

/// Attribute ranges the ops share.
def NN_PositiveI64Attr : ConfinedAttr<I64Attr, [IntMinValue<1>]>;
def NN_UnitIntervalF64Attr : ConfinedAttr<F64Attr, [AttrConstraint<
    CPred<"::llvm::cast<::mlir::FloatAttr>($_self).getValueAsDouble() >= 0.0 "
          "&& ::llvm::cast<::mlir::FloatAttr>($_self).getValueAsDouble() < 1.0">,
    "in [0, 1)">]>;
def NN_PositiveF64Attr : ConfinedAttr<F64Attr, [AttrConstraint<
    CPred<"::llvm::cast<::mlir::FloatAttr>($_self).getValueAsDouble() > 0.0">,
    "positive">]>;

def NN_NonNegativeF64Attr : ConfinedAttr<F64Attr, [AttrConstraint<
    CPred<"::llvm::cast<::mlir::FloatAttr>($_self).getValueAsDouble() >= 0.0">,
    "non-negative">]>;

/// `!nn.tensor<[], f32>` and `!nn.tensor<[], i32>`: the scalars a train
/// step reads (learning rate, gradient scale, step counter). Buildable, so
/// ops need not spell them.
def NN_F32Scalar : Type<
    And<[NN_Tensor.predicate,
         CPred<"::llvm::cast<::mlir::nn::NNTensorType>($_self).getRank() == 0">,
         CPred<"::llvm::cast<::mlir::nn::NNTensorType>($_self)"
               ".getElementType().isF32()">]>,
    "rank-0 f32 nn tensor", "::mlir::nn::NNTensorType">,
    BuildableType<"::mlir::nn::NNTensorType::get($_builder.getContext(), {}, "
                  "{}, $_builder.getF32Type())">;
def NN_I32Scalar : Type<
    And<[NN_Tensor.predicate,
         CPred<"::llvm::cast<::mlir::nn::NNTensorType>($_self).getRank() == 0">,
         CPred<"::llvm::cast<::mlir::nn::NNTensorType>($_self)"
               ".getElementType().isSignlessInteger(32)">]>,
    "rank-0 i32 nn tensor", "::mlir::nn::NNTensorType">,
    BuildableType<"::mlir::nn::NNTensorType::get($_builder.getContext(), {}, "
                  "{}, $_builder.getIntegerType(32))">;

/// `!nn.tensor<[], f64>`: one double-precision number, as loss sums and
/// normalization factors are accumulated. Buildable, so ops whose results
/// have this type need not spell it.
def NN_F64Scalar : Type<
    And<[NN_Tensor.predicate,
         CPred<"::llvm::cast<::mlir::nn::NNTensorType>($_self).getRank() == 0">,
         CPred<"::llvm::cast<::mlir::nn::NNTensorType>($_self)"
               ".getElementType().isF64()">]>,
    "rank-0 f64 nn tensor", "::mlir::nn::NNTensorType">,
    BuildableType<"::mlir::nn::NNTensorType::get($_builder.getContext(), {}, "
                  "{}, $_builder.getF64Type())">;

//===----------------------------------------------------------------------===//
// Attributes
//===----------------------------------------------------------------------===//

def NN_DimDeclAttr : AttrDef<NN_Dialect, "DimDecl"> {
  let mnemonic = "dim";
  let summary = "the declaration of one named dim of a graph";
  let description = [{
    `B: batch`, `T: seq(B)`, `T2: seq(B) = ceildiv(T, 2)`,
    `U1: seq(B) = U + 1`, `N: packed(B, T)`, `J: packed(B, T, U1)`,
    `Y: seq(B) computed`, `H: batch = flatten(B, K)` or `TH: seq(H) = T`.
    Graphs print their list of these without the `#nn.dim<...>` wrapper.

    A derived sequence dim has the lengths `ceildiv(source, factor) +
    offset`: `ceildiv(T, k)` is factor k >= 2 and offset 0, `U + c` is
    factor 1 and offset c >= 1. A packed dim packs one sequence dim (its
    size is the sum of the lengths) or, with `inner`, the grid of two
    (the sum over the batch of `len(source) * len(inner)`: a transducer
    joint's valid (t, u) pairs, t-major within each sequence).

    A `computed` sequence dim has lengths that no caller passes: one op of
    the graph (a DimProducerOpInterface, e.g. a decoder whose hypotheses
    end where the search says) computes them. No argument may name it or
    a dim derived from it, and no op may use it before its producer.

    N-best lists: `H: batch = flatten(B, K)` is the batch of the valid
    (b, k) pairs of a sequence dim K of B (b-major, `sum_b len_K(b)`
    entries): K hypotheses per sequence become one batch entry each. A
    sequence dim of H is either computed (`Y: seq(H) computed`, each
    hypothesis's own length) or lifted from a sequence dim of B
    (`TH: seq(H) = T`: entry (b, k) has the length of sequence b). A type
    `[B, K, Y]` with Y a sequence dim of `flatten(B, K)` is the N-best
    layout: sequence b holds `len_K(b)` hypotheses, hypothesis k has
    `len_Y` of its flat entry.
  }];
  let parameters = (ins
    "::mlir::StringAttr":$name,
    "::mlir::nn::DimKind":$kind,
    OptionalParameter<"::mlir::StringAttr">:$batch,
    OptionalParameter<"::mlir::StringAttr">:$source,
    DefaultValuedParameter<"int64_t", "0">:$factor,
    DefaultValuedParameter<"int64_t", "0">:$offset,
    OptionalParameter<"::mlir::StringAttr">:$inner,
    DefaultValuedParameter<"bool", "false">:$computed);
  let hasCustomAssemblyFormat = 1;
  let extraClassDeclaration = [{
    /// Parses `NAME: KIND...`, the text inside `#nn.dim<...>`.
    static DimDeclAttr parseBody(::mlir::AsmParser &parser);
    void printBody(::llvm::raw_ostream &os) const;
    /// A sequence dim computed from another one of the same batch
    /// (`ceildiv(T, k)` or `U + c`).
    bool isDerived() const {
      return getKind() == DimKind::seq && getSource() && !isLift();
    }
    /// `TH: seq(H) = T`: the lengths of T, repeated for each entry of the
    /// flattened batch H.
    bool isLift() const {
      return getKind() == DimKind::seq && getSource() && getFactor() == 1 &&
             getOffset() == 0;
    }
    /// `H: batch = flatten(B, K)`: source B, inner K.
    bool isFlatten() const {
      return getKind() == DimKind::batch && getSource();
    }
    /// A packed dim over the (source, inner) grid of two sequence dims.
    bool isGridPacked() const {
      return getKind() == DimKind::packed && getInner();
    }
    /// The length a derived dim has for a source length `n`.
    int64_t deriveLength(int64_t n) const {
      return (n + getFactor() - 1) / getFactor() + getOffset();
    }
  }];
}

def NN_DimListAttr : TypedArrayAttrBase<NN_DimDeclAttr, "list of dim declarations">;

#endif // NN_BASE_TD
