//===- GraphPatterns.cpp - graphs, calls and parameters to func -----------===//
//
// nn.graph becomes a func.func with the calling convention of Abi.h: the
// root dims first, then the graph's arguments, then the parameters it
// reads. The graph pattern binds every declared dim at function entry
// (derived and packed dims are computed there from the roots), so the
// patterns of the ops inside read sizes and lengths from one table.
//
//===----------------------------------------------------------------------===//

#include "lowering/conversion/Patterns.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"

using namespace mlir;
using namespace mlir::nn;

namespace {

/// Computes the derived and packed dims of `decls` from the roots already
/// bound, in declaration order.
void bindComputedDims(LinalgBuilder &b, BoundDims &dims) {
  OpBuilder &builder = b.getBuilder();
  Location loc = b.getLoc();
  for (DimDeclAttr dim : dims.getDecls().getDecls()) {
    if (dim.isDerived()) {
      // ceildiv(source, factor) + offset, for the size and each length.
      const DimValue &source = dims.lookup(dim.getSource().getValue());
      int64_t factor = dim.getFactor(), offset = dim.getOffset();
      Scalar outer = b.scalar();
      DimValue value;
      value.size = source.size;
      if (factor != 1)
        value.size = builder.create<arith::CeilDivUIOp>(loc, source.size,
                                                        outer.idx(factor));
      value.size = outer.add(value.size, outer.idx(offset));
      auto lengthsType = cast<RankedTensorType>(source.lengths.getType());
      value.lengths = b.map(
          NNTensorType::get(builder.getContext(), {dim.getBatch().getValue()},
                            {0}, lengthsType.getElementType()),
          source.lengths, [&](Scalar &s, ValueRange args) {
            Value length = args[0];
            if (factor != 1)
              length = s.b.create<arith::CeilDivSIOp>(
                  s.loc, length,
                  s.b.create<arith::ConstantIntOp>(s.loc, factor, 32));
            return s.b.create<arith::AddIOp>(
                s.loc, length,
                s.b.create<arith::ConstantIntOp>(s.loc, offset, 32));
          });
      dims.bind(dim.getName().getValue(), value);
    } else if (dim.getKind() == DimKind::packed) {
      // N = sum of the lengths of the packed sequence dim; a grid J sums
      // len(source) * len(inner).
      Value lengths = dims.lengths(dim.getSource().getValue());
      Value inner = dim.isGridPacked() ? dims.lengths(dim.getInner().getValue())
                                       : Value();
      Value batch = dims.size(dim.getBatch().getValue());
      Scalar outer = b.scalar();
      auto sum = builder.create<scf::ForOp>(
          loc, outer.idx(0), batch, outer.idx(1), ValueRange{outer.idx(0)},
          [&](OpBuilder &nested, Location l, Value i, ValueRange acc) {
            Scalar s{nested, l};
            Value rows =
                s.toIndex(nested.create<tensor::ExtractOp>(l, lengths, i));
            if (inner)
              rows = s.mul(rows, s.toIndex(nested.create<tensor::ExtractOp>(
                                     l, inner, i)));
            nested.create<scf::YieldOp>(l, s.add(acc[0], rows));
          });
      dims.bind(dim.getName().getValue(), DimValue{sum.getResult(0), {}});
    }
  }
}

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
    MLIRContext *context = getContext();
    auto lengthsType = RankedTensorType::get({ShapedType::kDynamic},
                                             IntegerType::get(context, 32));
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
    bindComputedDims(b, dims);
    rewriter.eraseOp(graph);
    return success();
  }

private:
  ConversionState &state;
};

class ReturnConversion : public NNConversionPattern<ReturnOp> {
public:
  using NNConversionPattern::NNConversionPattern;

  FailureOr<SmallVector<Value>> build(ReturnOp, OpAdaptor adaptor,
                                      LinalgBuilder &b) const override {
    b.getBuilder().create<func::ReturnOp>(b.getLoc(), adaptor.getOperands());
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
    auto call = b.getBuilder().create<func::CallOp>(b.getLoc(), op.getCallee(),
                                                    results, arguments);
    return SmallVector<Value>(call.getResults());
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
