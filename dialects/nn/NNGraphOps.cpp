//===- NNGraphOps.cpp - graphs, calls and parameters ----------------------===//
//
// The custom syntax of nn.graph (its dims and argument names), and the
// checks of graphs, returns, calls (binding the callee's dims to the
// caller's) and parameters.
//
//===----------------------------------------------------------------------===//

#include "dialects/nn/NNOps.h"

#include "dialects/nn/NNOpsUtils.h"
#include "mlir/IR/Builders.h"
#include "mlir/Interfaces/FunctionImplementation.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/ADT/StringSet.h"

using namespace mlir;
using namespace mlir::nn;
using namespace mlir::nn::detail;

//===----------------------------------------------------------------------===//
// GraphOp
//===----------------------------------------------------------------------===//

ParseResult GraphOp::parse(OpAsmParser &parser, OperationState &result) {
  Builder &builder = parser.getBuilder();
  StringAttr nameAttr;
  if (parser.parseSymbolName(nameAttr, getSymNameAttrName(result.name),
                             result.attributes))
    return failure();

  SmallVector<OpAsmParser::Argument> arguments;
  SmallVector<Type> resultTypes;
  SmallVector<DictionaryAttr> resultAttrs;
  bool isVariadic = false;
  if (function_interface_impl::parseFunctionSignature(
          parser, /*allowVariadic=*/false, arguments, isVariadic, resultTypes,
          resultAttrs))
    return failure();
  SmallVector<Type> argumentTypes;
  for (OpAsmParser::Argument &argument : arguments)
    argumentTypes.push_back(argument.type);
  result.addAttribute(
      getFunctionTypeAttrName(result.name),
      TypeAttr::get(builder.getFunctionType(argumentTypes, resultTypes)));

  SmallVector<Attribute> dims;
  auto parseDecl = [&]() -> ParseResult {
    DimDeclAttr decl = DimDeclAttr::parseBody(parser);
    if (!decl)
      return failure();
    dims.push_back(decl);
    return success();
  };
  if (parser.parseKeyword("dims") ||
      parser.parseCommaSeparatedList(OpAsmParser::Delimiter::Square, parseDecl,
                                     " in a graph's dims"))
    return failure();
  result.addAttribute(getDimsAttrName(result.name), builder.getArrayAttr(dims));

  if (parser.parseOptionalAttrDictWithKeyword(result.attributes))
    return failure();
  function_interface_impl::addArgAndResultAttrs(
      builder, result, arguments, resultAttrs, getArgAttrsAttrName(result.name),
      getResAttrsAttrName(result.name));

  // Keep the argument names as written: they name a compiled graph's inputs.
  // Numeric names (`%0`) carry nothing and fall back to `arg<i>`.
  SmallVector<Attribute> argNames;
  bool anyNamed = false;
  for (OpAsmParser::Argument &argument : arguments) {
    StringRef name = argument.ssaName.name.drop_front();
    bool named = !name.empty() && !llvm::isDigit(name.front());
    anyNamed |= named;
    argNames.push_back(builder.getStringAttr(named ? name : ""));
  }
  if (anyNamed)
    result.addAttribute(getArgNamesAttrName(result.name),
                        builder.getArrayAttr(argNames));
  return parser.parseRegion(*result.addRegion(), arguments,
                            /*enableNameShadowing=*/false);
}

std::string GraphOp::getArgName(unsigned index) {
  if (ArrayAttr names = getArgNamesAttr())
    if (index < names.size())
      if (StringRef name = cast<StringAttr>(names[index]).getValue();
          !name.empty())
        return name.str();
  return "arg" + std::to_string(index);
}

void GraphOp::getAsmBlockArgumentNames(Region &region,
                                       OpAsmSetValueNameFn setNameFn) {
  ArrayAttr names = getArgNamesAttr();
  if (!names || region.empty())
    return;
  for (auto [argument, name] : llvm::zip(region.getArguments(), names))
    if (StringRef text = cast<StringAttr>(name).getValue(); !text.empty())
      setNameFn(argument, text);
}

void GraphOp::print(OpAsmPrinter &printer) {
  printer << ' ';
  printer.printSymbolName(getSymName());
  function_interface_impl::printFunctionSignature(
      printer, *this, getArgumentTypes(), /*isVariadic=*/false,
      getResultTypes());
  printer << " dims [";
  llvm::interleaveComma(getDims(), printer, [&](Attribute decl) {
    cast<DimDeclAttr>(decl).printBody(printer.getStream());
  });
  printer << "]";
  function_interface_impl::printFunctionAttributes(
      printer, *this,
      {getSymNameAttrName(), getFunctionTypeAttrName(), getDimsAttrName(),
       getArgAttrsAttrName(), getResAttrsAttrName(), getArgNamesAttrName()});
  printer << ' ';
  printer.printRegion(getBody(), /*printEntryBlockArgs=*/false,
                      /*printBlockTerminators=*/true);
}

LogicalResult GraphOp::verify() {
  if (ArrayAttr names = getArgNamesAttr();
      names && names.size() != getArgumentTypes().size())
    return emitOpError() << "has " << names.size() << " arg_names for "
                         << getArgumentTypes().size() << " arguments";
  llvm::StringSet<> names;
  for (Attribute attr : getDims())
    if (!names.insert(cast<DimDeclAttr>(attr).getName().getValue()).second)
      return emitOpError() << "declares dim '"
                           << cast<DimDeclAttr>(attr).getName().getValue()
                           << "' twice";
  DimTable table(getDims());
  if (failed(table.verify([&] { return emitOpError(); })))
    return failure();
  for (auto [index, type] : llvm::enumerate(getArgumentTypes())) {
    auto tensor = dyn_cast<NNTensorType>(type);
    if (!tensor)
      return emitOpError() << "argument " << index
                           << " must be an !nn.tensor, got " << type;
    if (failed(classifyPositions(tensor, table, [&] { return emitOpError(); })))
      return failure();
    for (unsigned i = 0, e = tensor.getNumPositionDims(); i < e; ++i)
      if (table.dependsOnComputed(tensor.getDimName(i)))
        return emitOpError()
               << "argument " << index << " names dim '" << tensor.getDimName(i)
               << "', whose lengths an op of the graph computes; arguments "
                  "name only dims whose lengths the caller passes";
  }
  for (auto [index, type] : llvm::enumerate(getResultTypes())) {
    auto tensor = dyn_cast<NNTensorType>(type);
    if (!tensor)
      return emitOpError() << "result " << index
                           << " must be an !nn.tensor, got " << type;
    if (failed(classifyPositions(tensor, table, [&] { return emitOpError(); })))
      return failure();
  }
  if (getBody().empty())
    return emitOpError("must have a body");
  if (!getBody().hasOneBlock())
    return emitOpError("must have a single block (graphs are dataflow)");
  return success();
}

/// Checks that each computed dim has one producer and that no op names it
/// before that producer: the lowering binds a computed dim where its
/// producer runs.
static LogicalResult verifyComputedDims(GraphOp graph) {
  DimTable table(graph.getDims());
  SmallVector<DimDeclAttr> computed = table.getComputedDims();
  if (computed.empty())
    return success();
  llvm::StringMap<Operation *> producerOf;
  auto checkType = [&](Operation *op, Type type,
                       ArrayRef<StringRef> producing) -> LogicalResult {
    auto tensor = dyn_cast<NNTensorType>(type);
    if (!tensor)
      return success();
    for (unsigned i = 0, e = tensor.getNumPositionDims(); i < e; ++i)
      for (StringRef source : table.computedSources(tensor.getDimName(i)))
        if (!producerOf.count(source) && !llvm::is_contained(producing, source))
          return op->emitOpError()
                 << "names dim '" << tensor.getDimName(i)
                 << "' before the op that computes the lengths of '" << source
                 << "'";
    return success();
  };
  for (Operation &op : graph.getBody().front()) {
    SmallVector<StringRef, 1> producing;
    if (auto producer = dyn_cast<DimProducerOpInterface>(op))
      producing = producer.getProducedDims();
    for (StringRef dim : producing) {
      auto [it, inserted] = producerOf.try_emplace(dim, &op);
      if (!inserted) {
        InFlightDiagnostic diag = op.emitOpError()
                                  << "computes the lengths of dim '" << dim
                                  << "', which another op computes already";
        diag.attachNote(it->second->getLoc()) << "first computed here";
        return diag;
      }
    }
    // Operands come from earlier ops; results may name what `op` produces.
    for (Type type : op.getOperandTypes())
      if (failed(checkType(&op, type, {})))
        return failure();
    for (Type type : op.getResultTypes())
      if (failed(checkType(&op, type, producing)))
        return failure();
  }
  for (DimDeclAttr dim : computed)
    if (!producerOf.count(dim.getName().getValue()))
      return graph.emitOpError()
             << "declares dim '" << dim.getName().getValue()
             << "' computed, but no op of the graph computes its lengths";
  return success();
}

LogicalResult GraphOp::verifyRegions() {
  if (failed(verifyComputedDims(*this)))
    return failure();
  llvm::StringMap<MarkLossOp> lossByName;
  WalkResult result = walk([&](MarkLossOp mark) {
    auto [it, inserted] = lossByName.try_emplace(mark.getName(), mark);
    if (inserted)
      return WalkResult::advance();
    InFlightDiagnostic diag = mark.emitOpError()
                              << "loss name '" << mark.getName()
                              << "' is used twice in graph @" << getSymName();
    diag.attachNote(it->second.getLoc()) << "first use here";
    return WalkResult::interrupt();
  });
  return failure(result.wasInterrupted());
}

//===----------------------------------------------------------------------===//
// ReturnOp, CallOp
//===----------------------------------------------------------------------===//

LogicalResult ReturnOp::verify() {
  auto graph = (*this)->getParentOfType<GraphOp>();
  ArrayRef<Type> expected = graph.getResultTypes();
  if (getNumOperands() != expected.size())
    return emitOpError() << "returns " << getNumOperands()
                         << " values, but graph @" << graph.getSymName()
                         << " declares " << expected.size() << " results";
  for (auto [index, type] : llvm::enumerate(getOperandTypes()))
    if (type != expected[index])
      return emitOpError() << "operand " << index << " has type " << type
                           << ", but graph @" << graph.getSymName()
                           << " declares result type " << expected[index];
  return success();
}

LogicalResult CallOp::verifySymbolUses(SymbolTableCollection &symbolTable) {
  auto callee =
      symbolTable.lookupNearestSymbolFrom<GraphOp>(*this, getCalleeAttr());
  if (!callee)
    return emitOpError() << "'" << getCallee() << "' does not name an nn.graph";
  if (getNumOperands() != callee.getNumArguments() ||
      getNumResults() != callee.getNumResults())
    return emitOpError() << "has " << getNumOperands() << " operands and "
                         << getNumResults() << " results, but @" << getCallee()
                         << " takes " << callee.getNumArguments()
                         << " and returns " << callee.getNumResults();
  DimTable calleeDims(callee.getDims());
  FailureOr<DimTable> callerDims = DimTable::forOp(*this);
  if (failed(callerDims))
    return failure();
  DimBinding binding(calleeDims, *callerDims);
  auto emit = [&] { return emitOpError(); };
  if (failed(binding.unifyCall(callee.getArgumentTypes(), getOperandTypes(),
                               callee.getResultTypes(), getResultTypes(),
                               emit)))
    return failure();
  return binding.verifyKinds(emit);
}

//===----------------------------------------------------------------------===//
// Parameters
//===----------------------------------------------------------------------===//

LogicalResult ParameterOp::verify() {
  auto type = cast<NNTensorType>(getType());
  if (!type.hasStaticShape())
    return emitOpError() << "parameter @" << getSymName()
                         << " must have a static shape, got " << type;
  if (!isa<FloatType>(type.getElementType()))
    return emitOpError() << "parameter @" << getSymName()
                         << " must have a float element type, got "
                         << type.getElementType();
  return success();
}

LogicalResult ParamRefOp::verifySymbolUses(SymbolTableCollection &symbolTable) {
  auto parameter =
      symbolTable.lookupNearestSymbolFrom<ParameterOp>(*this, getNameAttr());
  if (!parameter)
    return emitOpError() << "'" << getName()
                         << "' does not name an nn.parameter";
  if (parameter.getType() != getType())
    return emitOpError() << "result type " << getType()
                         << " differs from the type of @" << getName() << ", "
                         << parameter.getType();
  return success();
}
