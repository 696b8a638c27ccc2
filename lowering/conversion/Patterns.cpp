//===- Patterns.cpp - the type converter and the shared conversion state --===//

#include "lowering/conversion/Patterns.h"

#include "mlir/IR/BuiltinOps.h"

using namespace mlir;
using namespace mlir::nn;

NNTypeConverter::NNTypeConverter() {
  addConversion([](Type type) { return type; });
  addConversion(
      [](NNTensorType type) -> Type { return GraphAbi::loweredType(type); });
  auto cast = [](OpBuilder &builder, Type type, ValueRange inputs,
                 Location loc) -> std::optional<Value> {
    if (inputs.size() != 1)
      return std::nullopt;
    return builder.create<UnrealizedConversionCastOp>(loc, type, inputs)
        .getResult(0);
  };
  addSourceMaterialization(cast);
  addTargetMaterialization(cast);
  addArgumentMaterialization(cast);
}

BoundDims &ConversionState::bindFunction(func::FuncOp function, GraphOp graph) {
  std::unique_ptr<BoundDims> &dims = byFunction[function];
  dims = std::make_unique<BoundDims>(graph.getDims());
  return *dims;
}

const BoundDims *ConversionState::lookup(Operation *op) const {
  auto function = op->getParentOfType<func::FuncOp>();
  auto it = byFunction.find(function);
  return it == byFunction.end() ? nullptr : it->second.get();
}

void ConversionState::bindComputed(Operation *op, StringRef dim, DimValue value,
                                   LinalgBuilder &b) {
  auto function = op->getParentOfType<func::FuncOp>();
  BoundDims &dims = *byFunction.at(function);
  assert(dims.getDecls().lookup(dim).getComputed() && !dims.isBound(dim) &&
         "a computed dim is bound once, by its producer");
  dims.bind(dim, value);
  deriveBoundDims(b, dims);
}

void mlir::nn::populateNNToLinalgConversionPatterns(
    const TypeConverter &converter, ConversionState &state,
    RewritePatternSet &patterns) {
  populateGraphConversionPatterns(converter, state, patterns);
  populateFrameWiseConversionPatterns(converter, state, patterns);
  populateRecurrentConversionPatterns(converter, state, patterns);
  populateConvPoolReduceConversionPatterns(converter, state, patterns);
  populateAttentionConversionPatterns(converter, state, patterns);
  populateLossConversionPatterns(converter, state, patterns);
  populateCtcConversionPatterns(converter, state, patterns);
  populateErrorConversionPatterns(converter, state, patterns);
  populateTransducerConversionPatterns(converter, state, patterns);
  populateDecodeConversionPatterns(converter, state, patterns);
  populateTransducerDecodeConversionPatterns(converter, state, patterns);
  populateLossTailConversionPatterns(converter, state, patterns);
  populatePackConversionPatterns(converter, state, patterns);
  populateOptimizerConversionPatterns(converter, state, patterns);
  populateCollectiveConversionPatterns(converter, state, patterns);
}

void ConversionState::markPartlyLowered() const {
  for (const auto &[function, dims] : byFunction) {
    bool leftOps = false;
    function->walk([&](Operation *op) {
      leftOps |= isa_and_nonnull<NNDialect>(op->getDialect());
    });
    if (leftOps)
      function->setAttr(NNDialect::kLoweredDimsAttrName, dims->getDeclAttr());
  }
}
