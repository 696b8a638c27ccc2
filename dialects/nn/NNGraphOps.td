//===- NNGraphOps.td - graphs, calls and parameters --------*- tablegen -*-===//
//
// The structure of a model: graphs with their declared dims, return and
// call, and the module-level parameters that graphs read.
//
//===----------------------------------------------------------------------===//

#ifndef NN_GRAPH_OPS_TD
#define NN_GRAPH_OPS_TD

include "dialects/nn/NNOpBase.td"

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
    Pure, HasParent<"GraphOp">, ReturnLike, Terminator, NN_DimsDeclared,
    NN_BeamLayout]> {
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
    with the same `k`. A plain batch may bind a flattened one (`flatten(B,
    K)`: the callee sees an N-best list's hypotheses as its batch), and a
    plain sequence dim any sequence dim of the bound batch, a lift
    included. Static sizes and element types must be equal. A
    callee batch over which the callee declares no sequence dim counts
    rows: it may bind a caller's packed dim too (a joint network's step
    graph called on the packed `[J, D]` rows of `nn.transducer_join`).

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

#endif // NN_GRAPH_OPS_TD
