//===- GraphPatterns.cpp - graphs, calls and parameters to func -----------===//
//
// nn.graph becomes a func.func with the calling convention of Abi.h: the
// root dims first, then the graph's arguments, then the parameters it
// reads. The graph pattern binds the declared dims at function entry
// (derived and packed dims are computed there from the roots; computed
// dims where their producer runs), so the patterns of the ops inside read
// sizes and lengths from one table. The function returns the lengths of
// its computed dims after its results.
//
//===----------------------------------------------------------------------===//

#include "lowering/conversion/Patterns.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"

using namespace mlir;
using namespace mlir::nn;

namespace {

class GraphConversion : public OpConversionPattern<GraphOp> {
public:
  GraphConversion(const TypeConverter &converter, ConversionState &state)
      : OpConversionPattern(converter, state.getContext()), state(state) {}

  LogicalResult
  matchAndRewrite(GraphOp graph, OpAdaptor,
                  ConversionPatternRewriter &rewriter) const override {
    const GraphAbi *abi = state.getAbis().lookup(graph.getSymName());
    if (!abi)
      return rewriter.notifyMatchFailure(graph, "graph without an ABI");
    RankedTensorType lengthsType = GraphAbi::lengthsType(getContext());
    TypeConverter::SignatureConversion signature(graph.getNumArguments());
    for (DimDeclAttr dim : abi->rootDims) {
      signature.addInputs(rewriter.getIndexType());
      if (dim.getKind() == DimKind::seq)
        signature.addInputs(lengthsType);
    }
    for (auto [index, type] : llvm::enumerate(graph.getArgumentTypes())) {
      Type converted = getTypeConverter()->convertType(type);
      if (!converted)
        return rewriter.notifyMatchFailure(graph, "argument type");
      signature.addInputs(index, converted);
    }
    for (ParameterOp parameter : abi->parameters)
      signature.addInputs(
          GraphAbi::loweredType(cast<NNTensorType>(parameter.getType())));
    SmallVector<Type> results;
    if (failed(
            getTypeConverter()->convertTypes(graph.getResultTypes(), results)))
      return rewriter.notifyMatchFailure(graph, "result types");
    results.insert(results.begin() + abi->numResults, abi->computedDims.size(),
                   lengthsType);

    auto func = rewriter.create<func::FuncOp>(
        graph.getLoc(), graph.getSymName(),
        rewriter.getFunctionType(signature.getConvertedTypes(), results));
    func->setAttr("llvm.emit_c_interface", rewriter.getUnitAttr());
    rewriter.inlineRegionBefore(graph.getBody(), func.getBody(), func.end());
    Block *entry = rewriter.applySignatureConversion(
        &func.getBody().front(), signature, getTypeConverter());

    BoundDims &dims = state.bindFunction(func, graph);
    unsigned next = 0;
    for (DimDeclAttr dim : abi->rootDims) {
      DimValue value{entry->getArgument(next++), {}};
      if (dim.getKind() == DimKind::seq)
        value.lengths = entry->getArgument(next++);
      dims.bind(dim.getName().getValue(), value);
    }
    next += graph.getNumArguments();
    for (ParameterOp parameter : abi->parameters)
      dims.bindParameter(parameter.getSymNameAttr(),
                         entry->getArgument(next++));
    rewriter.setInsertionPointToStart(entry);
    LinalgBuilder b(rewriter, graph.getLoc(), dims);
    deriveBoundDims(b, dims);
    rewriter.eraseOp(graph);
    return success();
  }

private:
  ConversionState &state;
};

class ReturnConversion : public NNConversionPattern<ReturnOp> {
public:
  using NNConversionPattern::NNConversionPattern;

  FailureOr<SmallVector<Value>> build(ReturnOp op, OpAdaptor adaptor,
                                      LinalgBuilder &b) const override {
    auto function = op->getParentOfType<func::FuncOp>();
    const GraphAbi *abi = state.getAbis().lookup(function.getSymName());
    if (!abi)
      return failure();
    // The computed dims' lengths go between the results and the loss
    // terms nn-expose-losses appended.
    SmallVector<Value> results(adaptor.getOperands());
    SmallVector<Value> lengths;
    for (DimDeclAttr dim : abi->computedDims)
      lengths.push_back(b.getDims().lengths(dim.getName().getValue()));
    results.insert(results.begin() + abi->numResults, lengths.begin(),
                   lengths.end());
    b.getBuilder().create<func::ReturnOp>(b.getLoc(), results);
    return SmallVector<Value>{};
  }
};

/// A call passes the callee's root dims (bound through the call's types),
/// the operands and the parameters the callee reads.
class CallConversion : public NNConversionPattern<CallOp> {
public:
  using NNConversionPattern::NNConversionPattern;

  FailureOr<SmallVector<Value>> build(CallOp op, OpAdaptor adaptor,
                                      LinalgBuilder &b) const override {
    const GraphAbi *calleeAbi = state.getAbis().lookup(op.getCallee());
    if (!calleeAbi)
      return failure();
    const BoundDims &dims = b.getDims();
    DimTable calleeTable(calleeAbi->graph.getDims());
    DimBinding binding(calleeTable, dims.getDecls());
    if (failed(binding.unifyCall(
            calleeAbi->graph.getArgumentTypes(), op->getOperandTypes(),
            calleeAbi->graph.getResultTypes(), op->getResultTypes(),
            [&] { return op.emitOpError(); })))
      return failure();

    SmallVector<Value> arguments;
    for (DimDeclAttr dim : calleeAbi->rootDims) {
      StringRef bound = binding.lookup(dim.getName().getValue());
      assert(!bound.empty() && "ModuleAbi::compute checks every root dim");
      arguments.push_back(dims.size(bound));
      if (dim.getKind() == DimKind::seq)
        arguments.push_back(dims.lengths(bound));
    }
    llvm::append_range(arguments, adaptor.getOperands());
    for (ParameterOp parameter : calleeAbi->parameters)
      arguments.push_back(dims.lookupParameter(parameter.getSymNameAttr()));
    SmallVector<Type> results;
    if (failed(getTypeConverter()->convertTypes(op.getResultTypes(), results)))
      return failure();
    // The callee returns the lengths of the dims it computes after its
    // results; no type of the call names them (DimBinding::verifyKinds).
    unsigned numLengths = calleeAbi->computedDims.size();
    results.insert(results.begin() + calleeAbi->numResults, numLengths,
                   GraphAbi::lengthsType(getContext()));
    auto call = b.getBuilder().create<func::CallOp>(b.getLoc(), op.getCallee(),
                                                    results, arguments);
    SmallVector<Value> values(call.getResults());
    values.erase(values.begin() + calleeAbi->numResults,
                 values.begin() + calleeAbi->numResults + numLengths);
    return values;
  }
};

class ParamRefConversion : public NNConversionPattern<ParamRefOp> {
public:
  using NNConversionPattern::NNConversionPattern;

  FailureOr<SmallVector<Value>> build(ParamRefOp op, OpAdaptor,
                                      LinalgBuilder &b) const override {
    return SmallVector<Value>{
        b.getDims().lookupParameter(op.getNameAttr().getAttr())};
  }
};

/// Parameters become function arguments; their declarations go.
class ParameterConversion : public OpConversionPattern<ParameterOp> {
public:
  using OpConversionPattern::OpConversionPattern;

  LogicalResult
  matchAndRewrite(ParameterOp op, OpAdaptor,
                  ConversionPatternRewriter &rewriter) const override {
    rewriter.eraseOp(op);
    return success();
  }
};

} // namespace

void mlir::nn::populateGraphConversionPatterns(const TypeConverter &converter,
                                               ConversionState &state,
                                               RewritePatternSet &patterns) {
  patterns.add<GraphConversion, ReturnConversion, CallConversion,
               ParamRefConversion>(converter, state);
  patterns.add<ParameterConversion>(converter, state.getContext());
}
