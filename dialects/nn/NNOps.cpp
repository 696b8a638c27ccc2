//===- NNOps.cpp - ops of the nn dialect: syntax and verifiers ------------===//
//
// Each verifier checks the op's shape relation in terms of named dims: the
// enclosing graph's DimTable says what each dim is, classifyPositions says
// what a value's position axes are.
//
//===----------------------------------------------------------------------===//

#include "dialects/nn/NNOps.h"

#include "dialects/nn/Dims.h"
#include "mlir/IR/Builders.h"
#include "mlir/Interfaces/FunctionImplementation.h"
#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/ADT/StringSet.h"

#include <cmath>

using namespace mlir;
using namespace mlir::nn;

//===----------------------------------------------------------------------===//
// Helpers
//===----------------------------------------------------------------------===//

static NNTensorType tensorOf(Value value) {
  return cast<NNTensorType>(value.getType());
}

namespace {
/// What verifiers need to know about dims: the enclosing graph's table,
/// and the op that reports errors.
class DimContext {
public:
  static FailureOr<DimContext> get(Operation *op) {
    FailureOr<DimTable> table = DimTable::forOp(op);
    if (failed(table))
      return failure();
    return DimContext(op, std::move(*table));
  }

  FailureOr<Positions> positions(Value value) const {
    return classifyPositions(tensorOf(value), table,
                             [&] { return op->emitOpError(); });
  }

  const DimTable &getTable() const { return table; }

private:
  DimContext(Operation *op, DimTable table) : op(op), table(std::move(table)) {}
  Operation *op;
  DimTable table;
};
} // namespace

/// `[a, b, ...]` of a type's dims, for diagnostics.
static std::string formatDims(ArrayRef<Attribute> dims) {
  std::string text;
  llvm::raw_string_ostream os(text);
  os << "[";
  llvm::interleaveComma(dims, os, [&](Attribute dim) {
    if (auto size = dyn_cast<IntegerAttr>(dim))
      os << size.getInt();
    else
      os << cast<StringAttr>(dim).getValue();
  });
  os << "]";
  return text;
}

/// The dims of `type` without its last (feature) axis.
static ArrayRef<Attribute> dropFeatureAxis(NNTensorType type) {
  return type.getDims().drop_back();
}

/// The static size of the last axis, or -1 when it is absent or named.
static int64_t featureSize(NNTensorType type) {
  if (type.getRank() == 0)
    return -1;
  return type.getStaticSize(type.getRank() - 1);
}

/// Requires `value` to have the static shape `shape` (parameters, weights).
static LogicalResult requireStaticShape(Operation *op, Value value,
                                        StringRef what,
                                        ArrayRef<int64_t> shape) {
  NNTensorType type = tensorOf(value);
  bool matches =
      type.hasStaticShape() && type.getRank() == (int64_t)shape.size();
  for (unsigned i = 0; matches && i < shape.size(); ++i)
    matches = type.getStaticSize(i) == shape[i];
  if (matches)
    return success();
  InFlightDiagnostic diag = op->emitOpError();
  diag << what << " must have the static shape [";
  llvm::interleaveComma(shape, diag);
  diag << "], got " << type;
  return diag;
}

/// Requires the result to be `dims` with the element type `elementType`.
static LogicalResult requireResultDims(Operation *op, ArrayRef<Attribute> dims,
                                       Type elementType) {
  NNTensorType result = tensorOf(op->getResult(0));
  if (result.getDims() == dims && result.getElementType() == elementType)
    return success();
  return op->emitOpError() << "result must be "
                           << NNTensorType::get(dims, elementType) << ", got "
                           << result;
}

//===----------------------------------------------------------------------===//
// Result type inference
//
// Inference runs when an op is built or parsed, before it is verified, so
// it is lenient: it needs only what the result type follows from (the
// positions of one operand, one static size of another) and leaves every
// other check to the verifier, whose messages say more. It fails only
// where no type follows at all.
//===----------------------------------------------------------------------===//

/// Operand `index` as an nn tensor, or failure with an error at `location`.
static FailureOr<NNTensorType>
inferenceOperand(std::optional<Location> location, ValueRange operands,
                 unsigned index, StringRef what) {
  auto type = index < operands.size()
                  ? dyn_cast<NNTensorType>(operands[index].getType())
                  : NNTensorType();
  if (!type)
    return emitOptionalError(location, what, " must be an nn tensor");
  return type;
}

/// The static size of axis `axis` of `type` (negative: from the end), or
/// failure with the error "`expected`, got <type>" at `location`.
static FailureOr<int64_t> inferenceStaticSize(std::optional<Location> location,
                                              NNTensorType type, int64_t axis,
                                              StringRef expected) {
  int64_t rank = type.getRank();
  int64_t index = axis < 0 ? rank + axis : axis;
  if (index < 0 || index >= rank || type.getStaticSize(index) < 0)
    return emitOptionalError(location, expected, ", got ", type);
  return type.getStaticSize(index);
}

/// `dims` (without the feature axis of `from`, if `dropLast`) followed by
/// `appended` static sizes, with `element`.
static NNTensorType inferredType(MLIRContext *context, ArrayRef<Attribute> dims,
                                 bool dropLast, ArrayRef<int64_t> appended,
                                 Type element) {
  SmallVector<Attribute> result(dropLast && !dims.empty() ? dims.drop_back()
                                                          : dims);
  Builder builder(context);
  for (int64_t size : appended)
    result.push_back(builder.getI64IntegerAttr(size));
  return NNTensorType::get(result, element);
}

LogicalResult LinearOp::inferReturnTypes(MLIRContext *context,
                                         std::optional<Location> location,
                                         ValueRange operands, DictionaryAttr,
                                         OpaqueProperties, RegionRange,
                                         SmallVectorImpl<Type> &inferred) {
  FailureOr<NNTensorType> input =
      inferenceOperand(location, operands, 0, "input");
  FailureOr<NNTensorType> weight =
      inferenceOperand(location, operands, 1, "weight");
  if (failed(input) || failed(weight))
    return failure();
  FailureOr<int64_t> out = inferenceStaticSize(
      location, *weight, 0, "weight must be static [out, in]");
  if (failed(out))
    return failure();
  inferred.push_back(inferredType(context, input->getDims(), true, *out,
                                  input->getElementType()));
  return success();
}

LogicalResult ConcatOp::inferReturnTypes(MLIRContext *context,
                                         std::optional<Location> location,
                                         ValueRange operands, DictionaryAttr,
                                         OpaqueProperties, RegionRange,
                                         SmallVectorImpl<Type> &inferred) {
  if (operands.empty())
    return emitOptionalError(location, "concat needs at least one input");
  int64_t total = 0;
  NNTensorType first;
  for (unsigned i = 0; i < operands.size(); ++i) {
    std::string what = "input " + std::to_string(i);
    FailureOr<NNTensorType> input =
        inferenceOperand(location, operands, i, what);
    if (failed(input))
      return failure();
    FailureOr<int64_t> width = inferenceStaticSize(
        location, *input, -1, what + " must have a static feature axis");
    if (failed(width))
      return failure();
    first = first ? first : *input;
    total += *width;
  }
  inferred.push_back(inferredType(context, first.getDims(), true, total,
                                  first.getElementType()));
  return success();
}

LogicalResult EmbeddingOp::inferReturnTypes(MLIRContext *context,
                                            std::optional<Location> location,
                                            ValueRange operands, DictionaryAttr,
                                            OpaqueProperties, RegionRange,
                                            SmallVectorImpl<Type> &inferred) {
  FailureOr<NNTensorType> indices =
      inferenceOperand(location, operands, 0, "indices");
  FailureOr<NNTensorType> table =
      inferenceOperand(location, operands, 1, "table");
  if (failed(indices) || failed(table))
    return failure();
  FailureOr<int64_t> width = inferenceStaticSize(
      location, *table, 1, "table must be static [vocabulary, features]");
  if (failed(width))
    return failure();
  inferred.push_back(inferredType(context, indices->getDims(), false, *width,
                                  table->getElementType()));
  return success();
}

LogicalResult
LstmOp::inferReturnTypes(MLIRContext *context, std::optional<Location> location,
                         ValueRange operands, DictionaryAttr attributes,
                         OpaqueProperties properties, RegionRange regions,
                         SmallVectorImpl<Type> &inferred) {
  Adaptor adaptor(operands, attributes, properties, regions);
  FailureOr<NNTensorType> input =
      inferenceOperand(location, operands, 0, "input");
  FailureOr<NNTensorType> recurrent =
      inferenceOperand(location, operands, 2, "recurrent_weight");
  if (failed(input) || failed(recurrent))
    return failure();
  FailureOr<int64_t> hidden = inferenceStaticSize(
      location, *recurrent, -1, "recurrent_weight must be static [..., 4H, H]");
  if (failed(hidden))
    return failure();
  int64_t directions =
      adaptor.getDirection() == LstmDirection::bidirectional ? 2 : 1;
  inferred.push_back(inferredType(context, input->getDims(), true,
                                  directions * *hidden,
                                  input->getElementType()));
  return success();
}

LogicalResult ReduceOp::inferReturnTypes(
    MLIRContext *context, std::optional<Location> location, ValueRange operands,
    DictionaryAttr attributes, OpaqueProperties properties, RegionRange regions,
    SmallVectorImpl<Type> &inferred) {
  Adaptor adaptor(operands, attributes, properties, regions);
  FailureOr<NNTensorType> input =
      inferenceOperand(location, operands, 0, "input");
  if (failed(input))
    return failure();
  int64_t axis = static_cast<int64_t>(adaptor.getAxis());
  if (axis < 0 || axis >= input->getRank())
    return emitOptionalError(location, "axis ", axis, " is out of range for ",
                             *input);
  SmallVector<Attribute> dims(input->getDims());
  dims.erase(dims.begin() + axis);
  inferred.push_back(NNTensorType::get(dims, input->getElementType()));
  return success();
}

/// Losses per position: the positions of their first operand.
static LogicalResult inferPerPositionLoss(std::optional<Location> location,
                                          ValueRange operands,
                                          SmallVectorImpl<Type> &inferred) {
  FailureOr<NNTensorType> input =
      inferenceOperand(location, operands, 0, "the first operand");
  if (failed(input))
    return failure();
  if (input->getRank() == 0)
    return emitOptionalError(location,
                             "the first operand needs a feature "
                             "axis, got ",
                             *input);
  inferred.push_back(
      NNTensorType::get(input->getDims().drop_back(), input->getElementType()));
  return success();
}

LogicalResult FrameErrorOp::inferReturnTypes(MLIRContext *,
                                             std::optional<Location> location,
                                             ValueRange operands,
                                             DictionaryAttr, OpaqueProperties,
                                             RegionRange,
                                             SmallVectorImpl<Type> &inferred) {
  return inferPerPositionLoss(location, operands, inferred);
}

LogicalResult CrossEntropyOp::inferReturnTypes(
    MLIRContext *, std::optional<Location> location, ValueRange operands,
    DictionaryAttr, OpaqueProperties, RegionRange,
    SmallVectorImpl<Type> &inferred) {
  return inferPerPositionLoss(location, operands, inferred);
}

LogicalResult LinearCrossEntropyOp::inferReturnTypes(
    MLIRContext *, std::optional<Location> location, ValueRange operands,
    DictionaryAttr, OpaqueProperties, RegionRange,
    SmallVectorImpl<Type> &inferred) {
  return inferPerPositionLoss(location, operands, inferred);
}

/// The gradients of a fused loss tail: the input's type, the weight's, and
/// the bias's ([V], the weight's element type).
static LogicalResult inferLossTailGradients(std::optional<Location> location,
                                            ValueRange operands,
                                            unsigned inputIndex,
                                            SmallVectorImpl<Type> &inferred) {
  FailureOr<NNTensorType> input =
      inferenceOperand(location, operands, inputIndex, "input");
  FailureOr<NNTensorType> weight =
      inferenceOperand(location, operands, inputIndex + 1, "weight");
  if (failed(input) || failed(weight))
    return failure();
  FailureOr<int64_t> classes = inferenceStaticSize(
      location, *weight, 0, "weight must be static [classes, in]");
  if (failed(classes))
    return failure();
  inferred.push_back(*input);
  inferred.push_back(*weight);
  SmallVector<Attribute> biasDims{
      Builder(input->getContext()).getI64IntegerAttr(*classes)};
  inferred.push_back(NNTensorType::get(biasDims, weight->getElementType()));
  return success();
}

LogicalResult LinearCrossEntropyGradOp::inferReturnTypes(
    MLIRContext *, std::optional<Location> location, ValueRange operands,
    DictionaryAttr, OpaqueProperties, RegionRange,
    SmallVectorImpl<Type> &inferred) {
  return inferLossTailGradients(location, operands, 1, inferred);
}

LogicalResult LinearCrossEntropyTrainOp::inferReturnTypes(
    MLIRContext *, std::optional<Location> location, ValueRange operands,
    DictionaryAttr, OpaqueProperties, RegionRange,
    SmallVectorImpl<Type> &inferred) {
  if (failed(inferPerPositionLoss(location, operands, inferred)))
    return failure();
  return inferLossTailGradients(location, operands, 0, inferred);
}

LogicalResult MseOp::inferReturnTypes(MLIRContext *,
                                      std::optional<Location> location,
                                      ValueRange operands, DictionaryAttr,
                                      OpaqueProperties, RegionRange,
                                      SmallVectorImpl<Type> &inferred) {
  return inferPerPositionLoss(location, operands, inferred);
}

LogicalResult ViterbiAlignOp::inferReturnTypes(
    MLIRContext *context, std::optional<Location> location, ValueRange operands,
    DictionaryAttr, OpaqueProperties, RegionRange,
    SmallVectorImpl<Type> &inferred) {
  // The alignment has the scores' positions ([B, T] or packed [N]), the
  // score one value per sequence of the labels' batch.
  FailureOr<NNTensorType> scores =
      inferenceOperand(location, operands, 0, "scores");
  FailureOr<NNTensorType> labels =
      inferenceOperand(location, operands, 1, "labels");
  if (failed(scores) || failed(labels))
    return failure();
  if (scores->getRank() < 2 || labels->getRank() == 0)
    return emitOptionalError(location, "scores must be [B, T, V] or [N, V] ",
                             "and labels [B, U], got ", *scores, " and ",
                             *labels);
  inferred.push_back(NNTensorType::get(scores->getDims().drop_back(),
                                       IntegerType::get(context, 32)));
  inferred.push_back(NNTensorType::get(labels->getDims().take_front(1),
                                       scores->getElementType()));
  return success();
}

LogicalResult CtcLossOp::inferReturnTypes(MLIRContext *,
                                          std::optional<Location> location,
                                          ValueRange operands, DictionaryAttr,
                                          OpaqueProperties, RegionRange,
                                          SmallVectorImpl<Type> &inferred) {
  FailureOr<NNTensorType> logits =
      inferenceOperand(location, operands, 0, "logits");
  if (failed(logits))
    return failure();
  if (logits->getRank() == 0)
    return emitOptionalError(location, "logits must be [B, T, C], got ",
                             *logits);
  inferred.push_back(NNTensorType::get(logits->getDims().take_front(1),
                                       logits->getElementType()));
  return success();
}

LogicalResult TransducerLossOp::inferReturnTypes(
    MLIRContext *, std::optional<Location> location, ValueRange operands,
    DictionaryAttr, OpaqueProperties, RegionRange,
    SmallVectorImpl<Type> &inferred) {
  FailureOr<NNTensorType> joint =
      inferenceOperand(location, operands, 0, "joint");
  FailureOr<NNTensorType> labels =
      inferenceOperand(location, operands, 1, "labels");
  if (failed(joint) || failed(labels))
    return failure();
  if (labels->getRank() == 0)
    return emitOptionalError(location, "labels must be [B, U], got ", *labels);
  inferred.push_back(NNTensorType::get(labels->getDims().take_front(1),
                                       joint->getElementType()));
  return success();
}

/// Requires a value with feature axes to have exactly one, static, after its
/// position axes: `[P..., F]`.
static LogicalResult requireOneFeatureAxis(Operation *op, Value value,
                                           StringRef what) {
  NNTensorType type = tensorOf(value);
  if (type.getRank() == 0 || featureSize(type) < 0 ||
      type.getNumPositionDims() != type.getRank() - 1)
    return op->emitOpError() << what
                             << " must have position axes then one static "
                                "feature axis, got "
                             << type;
  return success();
}

/// Requires `value` to be padded frames over exactly one sequence dim,
/// `[B, T, F]`, and returns its positions.
static FailureOr<Positions> requirePaddedFrames(Operation *op,
                                                const DimContext &context,
                                                Value value, StringRef what) {
  FailureOr<Positions> positions = context.positions(value);
  if (failed(positions))
    return failure();
  if (positions->kind != PositionKind::Padded ||
      positions->sequences.size() != 1) {
    op->emitOpError() << what << " must be padded frames [batch, sequence, ...]"
                      << (positions->kind == PositionKind::Packed
                              ? " (a packed value cannot be used here)"
                              : "")
                      << ", got " << value.getType();
    return failure();
  }
  return positions;
}

/// Checks that `output` is `input` over the sequence dim that a stride of
/// `stride` makes: the same dim for stride 1, else the dim declared
/// `seq(B) = ceildiv(T, stride)`. `outputName` names the output in errors.
static LogicalResult verifyStridedSequence(Operation *op,
                                           const DimContext &context,
                                           StringRef inputDim,
                                           StringRef outputDim, int64_t stride,
                                           StringRef outputName = "result") {
  if (stride == 1) {
    if (inputDim != outputDim)
      return op->emitOpError() << "with stride 1 the " << outputName
                               << " must keep sequence dim '" << inputDim
                               << "', got '" << outputDim << "'";
    return success();
  }
  DimDeclAttr decl = context.getTable().lookup(outputDim);
  if (!decl || !decl.isDerived() || decl.getSource().getValue() != inputDim ||
      decl.getFactor() != stride) {
    DimDeclAttr expected = context.getTable().findDerived(inputDim, stride);
    InFlightDiagnostic diag = op->emitOpError();
    diag << "with stride " << stride << " the " << outputName
         << "'s sequence dim must be "
         << "declared 'seq(...) = ceildiv(" << inputDim << ", " << stride
         << ")', got '" << outputDim << "'";
    if (expected)
      diag << " (did you mean '" << expected.getName().getValue() << "'?)";
    return diag;
  }
  return success();
}

//===----------------------------------------------------------------------===//
// DimsDeclared trait
//===----------------------------------------------------------------------===//

LogicalResult mlir::nn::detail::verifyDimsDeclared(Operation *op) {
  FailureOr<DimTable> table = DimTable::forOp(op);
  if (failed(table))
    return failure();
  auto check = [&](Type type) -> LogicalResult {
    auto tensor = dyn_cast<NNTensorType>(type);
    if (!tensor)
      return success();
    return classifyPositions(tensor, *table, [&] { return op->emitOpError(); });
  };
  for (Type type : op->getOperandTypes())
    if (failed(check(type)))
      return failure();
  for (Type type : op->getResultTypes())
    if (failed(check(type)))
      return failure();
  return success();
}

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

LogicalResult GraphOp::verifyRegions() {
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

//===----------------------------------------------------------------------===//
// Frame-wise layers
//===----------------------------------------------------------------------===//

/// Shared by the unary frame-wise ops (a float input, declared in ODS);
/// `needsFeatures` for ops that normalize over the feature axis.
static LogicalResult verifyUnaryFrameWise(Operation *op, bool needsFeatures) {
  if (needsFeatures &&
      failed(requireOneFeatureAxis(op, op->getOperand(0), "input")))
    return failure();
  return success();
}

LogicalResult ReluOp::verify() { return verifyUnaryFrameWise(*this, false); }
LogicalResult TanhOp::verify() { return verifyUnaryFrameWise(*this, false); }
LogicalResult SigmoidOp::verify() { return verifyUnaryFrameWise(*this, false); }
LogicalResult GeluOp::verify() { return verifyUnaryFrameWise(*this, false); }
LogicalResult SoftmaxOp::verify() { return verifyUnaryFrameWise(*this, true); }
LogicalResult LogSoftmaxOp::verify() {
  return verifyUnaryFrameWise(*this, true);
}

OpFoldResult DropoutOp::fold(FoldAdaptor) {
  return getRate().isZero() ? getInput() : nullptr;
}

LogicalResult DropoutOp::verify() {
  if (Value seed = getSeed()) {
    NNTensorType type = tensorOf(seed);
    if (type.getRank() != 0 || !type.getElementType().isSignlessInteger(32))
      return emitOpError() << "seed must be a scalar !nn.tensor<[], i32>, got "
                           << type;
  }
  if (failed(verifyUnaryFrameWise(*this, false)))
    return failure();
  // The mask is keyed by (sequence, frame); a row of a grid-packed joint
  // has two frame indices.
  FailureOr<DimTable> table = DimTable::forOp(*this);
  if (failed(table))
    return failure();
  FailureOr<Positions> positions = classifyPositions(
      tensorOf(getInput()), *table, [&] { return emitOpError(); });
  if (failed(positions))
    return failure();
  if (positions->kind == PositionKind::Packed &&
      positions->sequences.size() != 1)
    return emitOpError() << "input over the grid-packed dim '"
                         << positions->packed
                         << "' is not supported; apply dropout before "
                            "nn.transducer_join";
  return success();
}

LogicalResult LinearOp::verify() {
  if (failed(requireOneFeatureAxis(*this, getInput(), "input")))
    return failure();
  NNTensorType weight = tensorOf(getWeight());
  int64_t inFeatures = featureSize(tensorOf(getInput()));
  if (!weight.hasStaticShape() || weight.getRank() != 2 ||
      weight.getStaticSize(1) != inFeatures)
    return emitOpError() << "weight must be static [out, " << inFeatures
                         << "], got " << weight;
  int64_t outFeatures = weight.getStaticSize(0);
  if (getBias() &&
      failed(requireStaticShape(*this, getBias(), "bias", {outFeatures})))
    return failure();
  for (Value value : getOperands())
    if (tensorOf(value).getElementType() !=
        tensorOf(getInput()).getElementType())
      return emitOpError("operands must have one element type");
  SmallVector<Attribute> dims(dropFeatureAxis(tensorOf(getInput())));
  dims.push_back(Builder(getContext()).getI64IntegerAttr(outFeatures));
  return requireResultDims(*this, dims, tensorOf(getInput()).getElementType());
}

LogicalResult ConcatOp::verify() {
  if (getInputs().empty())
    return emitOpError("needs at least one input");
  NNTensorType first = tensorOf(getInputs().front());
  int64_t total = 0;
  for (auto [index, input] : llvm::enumerate(getInputs())) {
    NNTensorType type = tensorOf(input);
    std::string what = "input " + std::to_string(index);
    if (failed(requireOneFeatureAxis(*this, input, what)))
      return failure();
    if (dropFeatureAxis(type) != dropFeatureAxis(first) ||
        type.getElementType() != first.getElementType())
      return emitOpError() << what << " has positions "
                           << formatDims(dropFeatureAxis(type)) << " and "
                           << type.getElementType() << ", but input 0 has "
                           << formatDims(dropFeatureAxis(first)) << " and "
                           << first.getElementType()
                           << "; concat needs the same positions";
    total += featureSize(type);
  }
  SmallVector<Attribute> dims(dropFeatureAxis(first));
  dims.push_back(Builder(getContext()).getI64IntegerAttr(total));
  return requireResultDims(*this, dims, first.getElementType());
}

LogicalResult LayerNormOp::verify() {
  if (failed(requireOneFeatureAxis(*this, getInput(), "input")))
    return failure();
  int64_t features = featureSize(tensorOf(getInput()));
  if (failed(requireStaticShape(*this, getScale(), "scale", {features})) ||
      failed(requireStaticShape(*this, getBias(), "bias", {features})))
    return failure();
  return requireResultDims(*this, tensorOf(getInput()).getDims(),
                           tensorOf(getInput()).getElementType());
}

LogicalResult EmbeddingOp::verify() {
  NNTensorType indices = tensorOf(getIndices());
  if (indices.getNumPositionDims() != indices.getRank())
    return emitOpError() << "indices must have position axes only, got "
                         << indices;
  NNTensorType table = tensorOf(getTable());
  if (!table.hasStaticShape() || table.getRank() != 2)
    return emitOpError() << "table must be static [vocabulary, features], got "
                         << table;
  SmallVector<Attribute> dims(indices.getDims());
  dims.push_back(
      Builder(getContext()).getI64IntegerAttr(table.getStaticSize(1)));
  return requireResultDims(*this, dims, table.getElementType());
}

//===----------------------------------------------------------------------===//
// Sequence-mixing layers
//===----------------------------------------------------------------------===//

/// The checks nn.lstm and nn.lstm_grad share: padded frames with one
/// feature axis in, weights of the direction's static shapes. Returns the
/// dims of the lstm's result.
static FailureOr<SmallVector<Attribute>>
verifyLstmOperands(Operation *op, LstmDirection direction, Value input,
                   Value inputWeight, Value recurrentWeight, Value bias) {
  FailureOr<DimContext> context = DimContext::get(op);
  if (failed(context))
    return failure();
  FailureOr<Positions> positions =
      requirePaddedFrames(op, *context, input, "input");
  if (failed(positions) || failed(requireOneFeatureAxis(op, input, "input")))
    return failure();
  int64_t inFeatures = featureSize(tensorOf(input));
  bool bidirectional = direction == LstmDirection::bidirectional;
  NNTensorType recurrent = tensorOf(recurrentWeight);
  int64_t rank = bidirectional ? 3 : 2;
  if (!recurrent.hasStaticShape() || recurrent.getRank() != rank ||
      recurrent.getStaticSize(rank - 2) % 4 != 0 ||
      recurrent.getStaticSize(rank - 2) / 4 !=
          recurrent.getStaticSize(rank - 1) ||
      (bidirectional && recurrent.getStaticSize(0) != 2))
    return op->emitOpError() << "recurrent_weight must be static "
                             << (bidirectional ? "[2, 4H, H]" : "[4H, H]")
                             << ", got " << recurrent;
  int64_t hidden = recurrent.getStaticSize(rank - 1);
  SmallVector<int64_t> inputShape, biasShape;
  if (bidirectional) {
    inputShape.push_back(2);
    biasShape.push_back(2);
  }
  inputShape.append({4 * hidden, inFeatures});
  biasShape.push_back(4 * hidden);
  if (failed(requireStaticShape(op, inputWeight, "input_weight", inputShape)) ||
      failed(requireStaticShape(op, bias, "bias", biasShape)))
    return failure();
  SmallVector<Attribute> dims(dropFeatureAxis(tensorOf(input)));
  dims.push_back(Builder(op->getContext())
                     .getI64IntegerAttr(bidirectional ? 2 * hidden : hidden));
  return dims;
}

LogicalResult LstmOp::verify() {
  FailureOr<SmallVector<Attribute>> dims =
      verifyLstmOperands(*this, getDirection(), getInput(), getInputWeight(),
                         getRecurrentWeight(), getBias());
  if (failed(dims))
    return failure();
  return requireResultDims(*this, *dims, tensorOf(getInput()).getElementType());
}

NNTensorType LstmWithTapeOp::getTapeType(NNTensorType result) {
  SmallVector<Attribute> dims(result.getDims());
  auto features = cast<IntegerAttr>(dims.back());
  dims.back() = IntegerAttr::get(features.getType(), 6 * features.getInt());
  return NNTensorType::get(dims, result.getElementType());
}

LogicalResult LstmWithTapeOp::verify() {
  FailureOr<SmallVector<Attribute>> dims =
      verifyLstmOperands(*this, getDirection(), getInput(), getInputWeight(),
                         getRecurrentWeight(), getBias());
  if (failed(dims))
    return failure();
  Type element = tensorOf(getInput()).getElementType();
  auto result = NNTensorType::get(*dims, element);
  if (tensorOf(getResult()) != result)
    return emitOpError() << "result must be " << result << ", got "
                         << getResult().getType();
  NNTensorType tape = LstmWithTapeOp::getTapeType(result);
  if (tensorOf(getTape()) != tape)
    return emitOpError() << "tape must be " << tape << ", got "
                         << getTape().getType();
  return success();
}

LogicalResult LstmGradOp::verify() {
  FailureOr<SmallVector<Attribute>> dims =
      verifyLstmOperands(*this, getDirection(), getInput(), getInputWeight(),
                         getRecurrentWeight(), getBias());
  if (failed(dims))
    return failure();
  Type element = tensorOf(getInput()).getElementType();
  NNTensorType grad = tensorOf(getGrad());
  auto want = NNTensorType::get(*dims, element);
  if (grad != want)
    return emitOpError() << "grad must be the lstm's result type " << want
                         << ", got " << grad;
  if (Value tape = getTape()) {
    NNTensorType wantTape = LstmWithTapeOp::getTapeType(want);
    if (tensorOf(tape) != wantTape)
      return emitOpError() << "tape must be " << wantTape << ", got "
                           << tape.getType();
  }
  return success();
}

/// The checks nn.conv1d and nn.conv1d_grad share; `output` is the conv's
/// result or the gradient of it, named `outputName`.
static LogicalResult verifyConv1dOperands(Operation *op, Value input,
                                          Value weightValue, Value bias,
                                          Value output, StringRef outputName,
                                          int64_t stride) {
  FailureOr<DimContext> context = DimContext::get(op);
  if (failed(context))
    return failure();
  FailureOr<Positions> in = requirePaddedFrames(op, *context, input, "input");
  if (failed(in) || failed(requireOneFeatureAxis(op, input, "input")))
    return failure();
  FailureOr<Positions> out =
      requirePaddedFrames(op, *context, output, outputName);
  if (failed(out))
    return failure();
  NNTensorType weight = tensorOf(weightValue);
  int64_t inChannels = featureSize(tensorOf(input));
  if (!weight.hasStaticShape() || weight.getRank() != 3 ||
      weight.getStaticSize(2) != inChannels || weight.getStaticSize(1) < 1)
    return op->emitOpError() << "weight must be static [out, kernel, "
                             << inChannels << "], got " << weight;
  int64_t outChannels = weight.getStaticSize(0);
  if (bias && failed(requireStaticShape(op, bias, "bias", {outChannels})))
    return failure();
  if (out->batch != in->batch)
    return op->emitOpError()
           << outputName << " batch '" << out->batch
           << "' differs from the input's '" << in->batch << "'";
  if (failed(verifyStridedSequence(op, *context, in->sequences[0],
                                   out->sequences[0], stride, outputName)))
    return failure();
  NNTensorType result = tensorOf(output);
  if (featureSize(result) != outChannels ||
      result.getElementType() != tensorOf(input).getElementType())
    return op->emitOpError()
           << outputName << " must have " << outChannels << " "
           << tensorOf(input).getElementType() << " features, got " << result;
  return success();
}

LogicalResult Conv1dOp::verify() {
  return verifyConv1dOperands(*this, getInput(), getWeight(), getBias(),
                              getResult(), "result",
                              static_cast<int64_t>(getStride()));
}

LogicalResult Conv1dGradOp::verify() {
  return verifyConv1dOperands(*this, getInput(), getWeight(), Value(),
                              getGrad(), "grad",
                              static_cast<int64_t>(getStride()));
}

LogicalResult PoolOp::verify() {
  FailureOr<DimContext> context = DimContext::get(*this);
  if (failed(context))
    return failure();
  FailureOr<Positions> in =
      requirePaddedFrames(*this, *context, getInput(), "input");
  if (failed(in) || failed(requireOneFeatureAxis(*this, getInput(), "input")))
    return failure();
  FailureOr<Positions> out =
      requirePaddedFrames(*this, *context, getResult(), "result");
  if (failed(out))
    return failure();
  if (out->batch != in->batch)
    return emitOpError() << "result batch '" << out->batch
                         << "' differs from the input's '" << in->batch << "'";
  if (failed(verifyStridedSequence(*this, *context, in->sequences[0],
                                   out->sequences[0],
                                   static_cast<int64_t>(getStride()))))
    return failure();
  NNTensorType input = tensorOf(getInput()), result = tensorOf(getResult());
  if (featureSize(result) != featureSize(input) ||
      result.getElementType() != input.getElementType())
    return emitOpError() << "result must keep the input's "
                         << featureSize(input) << " " << input.getElementType()
                         << " features, got " << result;
  return success();
}

LogicalResult ReduceOp::verify() {
  FailureOr<DimContext> context = DimContext::get(*this);
  if (failed(context))
    return failure();
  FailureOr<Positions> positions = context->positions(getInput());
  if (failed(positions))
    return failure();
  NNTensorType input = tensorOf(getInput());
  int64_t axis = static_cast<int64_t>(getAxis());
  if (axis < 0 || axis >= input.getRank())
    return emitOpError() << "axis " << axis << " is out of range for " << input;
  if (positions->kind != PositionKind::Padded || axis == 0 ||
      axis >= (int64_t)positions->getNumAxes())
    return emitOpError() << "axis " << axis << " of " << input
                         << " must be a sequence axis of padded frames"
                         << (positions->kind == PositionKind::Packed
                                 ? " (a packed value cannot be used here)"
                                 : "");
  SmallVector<Attribute> dims(input.getDims());
  dims.erase(dims.begin() + axis);
  return requireResultDims(*this, dims, input.getElementType());
}

//===----------------------------------------------------------------------===//
// Losses
//===----------------------------------------------------------------------===//

bool CrossEntropyOp::isPerFrameLoss() { return true; }
bool LinearCrossEntropyOp::isPerFrameLoss() { return true; }
bool LinearCrossEntropyTrainOp::isPerFrameLoss() { return true; }
bool FrameErrorOp::isPerFrameLoss() { return true; }
bool MseOp::isPerFrameLoss() { return true; }
bool CtcLossOp::isPerFrameLoss() { return false; }
bool TransducerLossOp::isPerFrameLoss() { return false; }

//===----------------------------------------------------------------------===//
// Class indices
//===----------------------------------------------------------------------===//

int64_t CrossEntropyOp::getNumClasses(OpOperand &operand) {
  return operand.get() == getTargets() ? featureSize(tensorOf(getLogits())) : 0;
}

int64_t LinearCrossEntropyOp::getNumClasses(OpOperand &operand) {
  return operand.get() == getTargets() ? tensorOf(getWeight()).getStaticSize(0)
                                       : 0;
}

int64_t LinearCrossEntropyGradOp::getNumClasses(OpOperand &operand) {
  return operand.get() == getTargets() ? tensorOf(getWeight()).getStaticSize(0)
                                       : 0;
}

int64_t LinearCrossEntropyTrainOp::getNumClasses(OpOperand &operand) {
  return operand.get() == getTargets() ? tensorOf(getWeight()).getStaticSize(0)
                                       : 0;
}

int64_t FrameErrorOp::getNumClasses(OpOperand &operand) {
  return operand.get() == getTargets() ? featureSize(tensorOf(getScores())) : 0;
}

int64_t CtcLossOp::getNumClasses(OpOperand &operand) {
  return operand.get() == getLabels() ? featureSize(tensorOf(getLogits())) : 0;
}

int64_t CtcLossOp::getReservedClass(OpOperand &operand) {
  return operand.get() == getLabels() ? (int64_t)getBlank() : -1;
}

int64_t ViterbiAlignOp::getNumClasses(OpOperand &operand) {
  return operand.get() == getLabels() ? featureSize(tensorOf(getScores())) : 0;
}

int64_t ViterbiAlignOp::getReservedClass(OpOperand &operand) {
  return operand.get() == getLabels() ? (int64_t)getBlank() : -1;
}

int64_t TransducerLossOp::getNumClasses(OpOperand &operand) {
  return operand.get() == getLabels() ? featureSize(tensorOf(getJoint())) : 0;
}

int64_t TransducerLossOp::getReservedClass(OpOperand &operand) {
  return operand.get() == getLabels() ? (int64_t)getBlank() : -1;
}

int64_t TransducerAlignOp::getNumClasses(OpOperand &operand) {
  return operand.get() == getLabels() ? featureSize(tensorOf(getJoint())) : 0;
}

int64_t TransducerAlignOp::getReservedClass(OpOperand &operand) {
  return operand.get() == getLabels() ? (int64_t)getBlank() : -1;
}

int64_t EmbeddingOp::getNumClasses(OpOperand &operand) {
  return operand.get() == getIndices() ? tensorOf(getTable()).getStaticSize(0)
                                       : 0;
}

LogicalResult FrameErrorOp::verify() {
  if (failed(requireOneFeatureAxis(*this, getScores(), "scores")))
    return failure();
  NNTensorType scores = tensorOf(getScores());
  NNTensorType targets = tensorOf(getTargets());
  if (targets.getDims() != dropFeatureAxis(scores))
    return emitOpError() << "targets " << formatDims(targets.getDims())
                         << " must be on the positions of the scores "
                         << formatDims(dropFeatureAxis(scores))
                         << " (same batch and sequence dims)";
  return requireResultDims(*this, dropFeatureAxis(scores),
                           scores.getElementType());
}

LogicalResult CrossEntropyOp::verify() {
  if (failed(requireOneFeatureAxis(*this, getLogits(), "logits")))
    return failure();
  double smoothing = getLabelSmoothing().convertToDouble();
  NNTensorType logits = tensorOf(getLogits());
  if (smoothing > 0.0 && featureSize(logits) < 2)
    return emitOpError("label smoothing needs at least 2 classes");
  NNTensorType targets = tensorOf(getTargets());
  if (targets.getDims() != dropFeatureAxis(logits))
    return emitOpError() << "targets " << formatDims(targets.getDims())
                         << " must be on the positions of the logits "
                         << formatDims(dropFeatureAxis(logits))
                         << " (same batch and sequence dims)";
  return requireResultDims(*this, dropFeatureAxis(logits),
                           logits.getElementType());
}

/// The operands of a fused loss tail: `input` [P..., I], `weight` [V, I],
/// `bias` [V] (optional), `targets` [P...], one float element type.
static LogicalResult verifyLossTail(Operation *op, Value input, Value weight,
                                    Value bias, Value targets,
                                    double smoothing) {
  if (failed(requireOneFeatureAxis(op, input, "input")))
    return failure();
  NNTensorType inputType = tensorOf(input);
  NNTensorType weightType = tensorOf(weight);
  int64_t inFeatures = featureSize(inputType);
  if (!weightType.hasStaticShape() || weightType.getRank() != 2 ||
      weightType.getStaticSize(1) != inFeatures)
    return op->emitOpError() << "weight must be static [classes, " << inFeatures
                             << "], got " << weightType;
  int64_t classes = weightType.getStaticSize(0);
  if (bias && failed(requireStaticShape(op, bias, "bias", {classes})))
    return failure();
  for (Value value : {weight, bias})
    if (value && tensorOf(value).getElementType() != inputType.getElementType())
      return op->emitOpError("input, weight and bias must have one element "
                             "type");
  if (smoothing > 0.0 && classes < 2)
    return op->emitOpError("label smoothing needs at least 2 classes");
  NNTensorType targetsType = tensorOf(targets);
  if (targetsType.getDims() != dropFeatureAxis(inputType))
    return op->emitOpError() << "targets " << formatDims(targetsType.getDims())
                             << " must be on the positions of the input "
                             << formatDims(dropFeatureAxis(inputType))
                             << " (same batch and sequence dims)";
  return success();
}

LogicalResult LinearCrossEntropyOp::verify() {
  if (failed(verifyLossTail(*this, getInput(), getWeight(), getBias(),
                            getTargets(),
                            getLabelSmoothing().convertToDouble())))
    return failure();
  NNTensorType input = tensorOf(getInput());
  return requireResultDims(*this, dropFeatureAxis(input),
                           input.getElementType());
}

LogicalResult LinearCrossEntropyGradOp::verify() {
  if (failed(verifyLossTail(*this, getInput(), getWeight(), getBias(),
                            getTargets(),
                            getLabelSmoothing().convertToDouble())))
    return failure();
  NNTensorType input = tensorOf(getInput());
  NNTensorType grad = tensorOf(getGrad());
  if (grad.getDims() != dropFeatureAxis(input) ||
      grad.getElementType() != input.getElementType())
    return emitOpError() << "grad must be "
                         << NNTensorType::get(dropFeatureAxis(input),
                                              input.getElementType())
                         << " (the loss's type), got " << grad;
  return success();
}

LogicalResult LinearCrossEntropyTrainOp::verify() {
  if (failed(verifyLossTail(*this, getInput(), getWeight(), getBias(),
                            getTargets(),
                            getLabelSmoothing().convertToDouble())))
    return failure();
  if (getNormalization() == LossNormalization::custom)
    return emitOpError("custom normalization needs its factor, which this "
                       "op does not take");
  NNTensorType input = tensorOf(getInput());
  return requireResultDims(*this, dropFeatureAxis(input),
                           input.getElementType());
}

LogicalResult MseOp::verify() {
  if (failed(requireOneFeatureAxis(*this, getPrediction(), "prediction")))
    return failure();
  if (getPrediction().getType() != getTarget().getType())
    return emitOpError() << "target type " << getTarget().getType()
                         << " must equal the prediction type "
                         << getPrediction().getType();
  NNTensorType prediction = tensorOf(getPrediction());
  return requireResultDims(*this, dropFeatureAxis(prediction),
                           prediction.getElementType());
}

/// The checks nn.ctc_loss, nn.ctc_loss_grad and nn.viterbi_align share
/// (`name` names the score operand, which may be packed frames with
/// `allowPacked`); returns the dims of the per-sequence loss, `[B]`.
static FailureOr<ArrayRef<Attribute>>
verifyCtcOperands(Operation *op, Value logits, Value labels, int64_t blank,
                  StringRef name = "logits", bool allowPacked = false) {
  FailureOr<DimContext> context = DimContext::get(op);
  if (failed(context))
    return failure();
  FailureOr<Positions> frames = context->positions(logits);
  if (failed(frames))
    return failure();
  if (!allowPacked || frames->kind != PositionKind::Packed)
    frames = requirePaddedFrames(op, *context, logits, name);
  if (failed(frames) || failed(requireOneFeatureAxis(op, logits, name)))
    return failure();
  FailureOr<Positions> labelPositions = context->positions(labels);
  if (failed(labelPositions))
    return failure();
  NNTensorType labelType = tensorOf(labels);
  if (labelPositions->kind != PositionKind::Padded ||
      labelPositions->sequences.size() != 1 || labelType.getRank() != 2)
    return op->emitOpError()
           << "labels must be [batch, label sequence], got " << labelType;
  if (labelPositions->batch != frames->batch)
    return op->emitOpError()
           << "labels batch '" << labelPositions->batch << "' differs from the "
           << name << " batch '" << frames->batch << "'";
  int64_t classes = featureSize(tensorOf(logits));
  if (blank < 0 || blank >= classes)
    return op->emitOpError()
           << "blank " << blank << " is not a class in [0, " << classes << ")";
  return labelType.getDims().take_front(1);
}

LogicalResult CtcLossOp::verify() {
  FailureOr<ArrayRef<Attribute>> dims = verifyCtcOperands(
      *this, getLogits(), getLabels(), static_cast<int64_t>(getBlank()));
  if (failed(dims))
    return failure();
  return requireResultDims(*this, *dims,
                           tensorOf(getLogits()).getElementType());
}

LogicalResult ViterbiAlignOp::verify() {
  FailureOr<ArrayRef<Attribute>> batch = verifyCtcOperands(
      *this, getScores(), getLabels(), static_cast<int64_t>(getBlank()),
      "scores", /*allowPacked=*/true);
  if (failed(batch))
    return failure();
  NNTensorType scores = tensorOf(getScores());
  auto alignment = NNTensorType::get(scores.getDims().drop_back(),
                                     IntegerType::get(getContext(), 32));
  if (tensorOf(getAlignment()) != alignment)
    return emitOpError() << "alignment must be " << alignment << ", got "
                         << getAlignment().getType();
  auto score = NNTensorType::get(*batch, scores.getElementType());
  if (tensorOf(getScore()) != score)
    return emitOpError() << "score must be " << score << ", got "
                         << getScore().getType();
  if (Value prior = getPrior()) {
    auto classes = cast<IntegerAttr>(scores.getDims().back());
    auto want = NNTensorType::get({classes}, scores.getElementType());
    if (tensorOf(prior) != want)
      return emitOpError() << "prior must be " << want
                           << " (one value per class), got " << prior.getType();
  }
  return success();
}

/// A per-sequence loss's gradient `grad` must have the loss's type: `dims`
/// (`[B]`) of the scores' element type.
static LogicalResult requireLossGradType(Operation *op, Value grad,
                                         ArrayRef<Attribute> dims,
                                         Value scores) {
  auto want = NNTensorType::get(dims, tensorOf(scores).getElementType());
  if (tensorOf(grad) != want)
    return op->emitOpError() << "grad must be the loss's type " << want
                             << ", got " << tensorOf(grad);
  return success();
}

LogicalResult CtcLossGradOp::verify() {
  FailureOr<ArrayRef<Attribute>> dims = verifyCtcOperands(
      *this, getLogits(), getLabels(), static_cast<int64_t>(getBlank()));
  if (failed(dims))
    return failure();
  return requireLossGradType(*this, getGrad(), *dims, getLogits());
}

//===----------------------------------------------------------------------===//
// Transducers
//===----------------------------------------------------------------------===//

/// Requires `labels` to be `[B, U]` integer labels over one sequence dim and
/// returns their positions.
static FailureOr<Positions>
requireLabels(Operation *op, const DimContext &context, Value labels) {
  FailureOr<Positions> positions = context.positions(labels);
  if (failed(positions))
    return failure();
  NNTensorType type = tensorOf(labels);
  if (positions->kind != PositionKind::Padded ||
      positions->sequences.size() != 1 || type.getRank() != 2 ||
      !type.getElementType().isSignlessInteger())
    return op->emitOpError()
           << "labels must be integer [batch, label sequence], got " << type;
  return positions;
}

/// Requires `dim` to be declared `seq(B) = labelDim + 1`: the prediction
/// network's axis, the start symbol and then the labels.
static LogicalResult requireLabelPlusOne(Operation *op,
                                         const DimContext &context,
                                         StringRef dim, StringRef labelDim,
                                         StringRef what) {
  DimDeclAttr decl = context.getTable().lookup(dim);
  if (decl && decl.isDerived() && decl.getSource().getValue() == labelDim &&
      decl.getFactor() == 1 && decl.getOffset() == 1)
    return success();
  InFlightDiagnostic diag = op->emitOpError();
  diag << what << " '" << dim << "' must be declared 'seq(...) = " << labelDim
       << " + 1' (the start symbol, then the labels)";
  if (DimDeclAttr expected = context.getTable().findDerived(labelDim, 1, 1))
    diag << " (did you mean '" << expected.getName().getValue() << "'?)";
  return diag;
}

LogicalResult PrependStartOp::verify() {
  FailureOr<DimContext> context = DimContext::get(*this);
  if (failed(context))
    return failure();
  FailureOr<Positions> in = requireLabels(*this, *context, getLabels());
  if (failed(in))
    return failure();
  if (getStart() < 0)
    return emitOpError() << "start " << getStart()
                         << " is not a class index (negative)";
  NNTensorType labels = tensorOf(getLabels()), result = tensorOf(getResult());
  FailureOr<Positions> out = context->positions(getResult());
  if (failed(out))
    return failure();
  if (out->kind != PositionKind::Padded || out->sequences.size() != 1 ||
      result.getRank() != 2 || out->batch != in->batch ||
      result.getElementType() != labels.getElementType())
    return emitOpError() << "result must be [" << in->batch
                         << ", U1] of the labels' element type, got " << result;
  return requireLabelPlusOne(*this, *context, out->sequences[0],
                             in->sequences[0], "result axis");
}

/// The types of a transducer join: `encoder` [B, T, D] and `prediction`
/// [B, U1, D] padded over two different sequence dims of one batch, and
/// `joint` [J, D] with J = packed(B, T, U1) or [B, T, U1, D].
static LogicalResult verifyJoinTypes(Operation *op, Value encoder,
                                     Value prediction, Value joint,
                                     StringRef jointName) {
  FailureOr<DimContext> context = DimContext::get(op);
  if (failed(context))
    return failure();
  FailureOr<Positions> enc =
      requirePaddedFrames(op, *context, encoder, "encoder");
  if (failed(enc))
    return failure();
  FailureOr<Positions> pred =
      requirePaddedFrames(op, *context, prediction, "prediction");
  if (failed(pred) || failed(requireOneFeatureAxis(op, encoder, "encoder")) ||
      failed(requireOneFeatureAxis(op, prediction, "prediction")))
    return failure();
  NNTensorType encType = tensorOf(encoder), predType = tensorOf(prediction),
               jointType = tensorOf(joint);
  if (pred->batch != enc->batch || pred->sequences[0] == enc->sequences[0])
    return op->emitOpError()
           << "prediction must be over a second sequence dim of the "
              "encoder's batch '"
           << enc->batch << "', got " << predType;
  if (featureSize(encType) != featureSize(predType) ||
      encType.getElementType() != predType.getElementType())
    return op->emitOpError()
           << "encoder " << encType << " and prediction " << predType
           << " must have the same feature size and element "
              "type";
  StringRef frames = enc->sequences[0], states = pred->sequences[0];
  SmallVector<Attribute> padded{encType.getDims()[0], encType.getDims()[1],
                                predType.getDims()[1], encType.getDims()[2]};
  if (jointType == NNTensorType::get(padded, encType.getElementType()))
    return success();
  DimDeclAttr grid = context->getTable().findPacked(enc->batch, frames, states);
  if (grid) {
    SmallVector<Attribute> packed{grid.getName(), encType.getDims()[2]};
    if (jointType == NNTensorType::get(packed, encType.getElementType()))
      return success();
  }
  InFlightDiagnostic diag = op->emitOpError();
  diag << jointName << " must be packed [J, " << featureSize(encType)
       << "] with J declared 'packed(" << enc->batch << ", " << frames << ", "
       << states << ")'";
  if (grid)
    diag << " ('" << grid.getName().getValue() << "')";
  diag << " or padded " << NNTensorType::get(padded, encType.getElementType())
       << ", got " << jointType;
  return diag;
}

LogicalResult TransducerJoinOp::verify() {
  return verifyJoinTypes(*this, getEncoder(), getPrediction(), getResult(),
                         "result");
}

LogicalResult TransducerJoinGradOp::verify() {
  return verifyJoinTypes(*this, getEncoder(), getPrediction(), getGrad(),
                         "grad");
}

/// The types of a gather of prediction states: `states` [B, U1, D] padded
/// over one sequence dim, `alignment` [B, T] integer over another,
/// `gathered` [B, T, D] of the states' element type.
static LogicalResult verifyGatherTypes(Operation *op, Value states,
                                       Value alignment, Value gathered) {
  FailureOr<DimContext> context = DimContext::get(op);
  if (failed(context))
    return failure();
  FailureOr<Positions> in = requirePaddedFrames(op, *context, states, "states");
  if (failed(in) || failed(requireOneFeatureAxis(op, states, "states")))
    return failure();
  FailureOr<Positions> frames = context->positions(alignment);
  if (failed(frames))
    return failure();
  NNTensorType statesType = tensorOf(states),
               alignmentType = tensorOf(alignment);
  if (frames->kind != PositionKind::Padded || frames->sequences.size() != 1 ||
      alignmentType.getRank() != 2 ||
      !alignmentType.getElementType().isSignlessInteger() ||
      frames->batch != in->batch || frames->sequences[0] == in->sequences[0])
    return op->emitOpError() << "alignment must be integer [" << in->batch
                             << ", T] over a frame dim other than the states' '"
                             << in->sequences[0] << "', got " << alignmentType;
  SmallVector<Attribute> dims(alignmentType.getDims());
  dims.push_back(statesType.getDims()[2]);
  auto want = NNTensorType::get(dims, statesType.getElementType());
  if (tensorOf(gathered) != want)
    return op->emitOpError() << "gathered states must be " << want << ", got "
                             << gathered.getType();
  return success();
}

LogicalResult GatherStatesOp::verify() {
  return verifyGatherTypes(*this, getStates(), getAlignment(), getResult());
}

LogicalResult GatherStatesGradOp::verify() {
  return verifyGatherTypes(*this, getResult(), getAlignment(), getGrad());
}

/// The checks nn.transducer_loss and its gradient share; returns the dims
/// of the per-sequence loss, `[B]`.
static FailureOr<ArrayRef<Attribute>> verifyTransducerOperands(Operation *op,
                                                               Value joint,
                                                               Value labels,
                                                               int64_t blank) {
  FailureOr<DimContext> context = DimContext::get(op);
  if (failed(context))
    return failure();
  FailureOr<Positions> grid = context->positions(joint);
  FailureOr<Positions> labelPositions = requireLabels(op, *context, labels);
  if (failed(grid) || failed(labelPositions) ||
      failed(requireOneFeatureAxis(op, joint, "joint")))
    return failure();
  NNTensorType jointType = tensorOf(joint);
  bool packed = grid->kind == PositionKind::Packed;
  if (grid->sequences.size() != 2 ||
      (!packed && grid->kind != PositionKind::Padded))
    return op->emitOpError()
           << "joint must be over the (frame, label + 1) grid: packed [J, V] "
              "with J declared 'packed(B, T, U1)', or padded [B, T, U1, V]; "
              "got "
           << jointType;
  if (grid->batch != labelPositions->batch)
    return op->emitOpError()
           << "labels batch '" << labelPositions->batch
           << "' differs from the joint's batch '" << grid->batch << "'";
  if (failed(requireLabelPlusOne(op, *context, grid->sequences[1],
                                 labelPositions->sequences[0],
                                 "the joint's label axis")))
    return failure();
  int64_t classes = featureSize(jointType);
  if (blank < 0 || blank >= classes)
    return op->emitOpError()
           << "blank " << blank << " is not a class in [0, " << classes << ")";
  return tensorOf(labels).getDims().take_front(1);
}

LogicalResult TransducerLossOp::verify() {
  FailureOr<ArrayRef<Attribute>> dims = verifyTransducerOperands(
      *this, getJoint(), getLabels(), static_cast<int64_t>(getBlank()));
  if (failed(dims))
    return failure();
  return requireResultDims(*this, *dims, tensorOf(getJoint()).getElementType());
}

LogicalResult TransducerAlignOp::verify() {
  if (getTopology() != TransducerTopology::rna)
    return emitOpError("aligns the rna topology only: an rnnt path emits "
                       "labels without consuming frames, so it has no "
                       "class per frame");
  FailureOr<ArrayRef<Attribute>> batch = verifyTransducerOperands(
      *this, getJoint(), getLabels(), static_cast<int64_t>(getBlank()));
  if (failed(batch))
    return failure();
  // The frames: the grid's first sequence dim.
  FailureOr<DimContext> context = DimContext::get(*this);
  FailureOr<Positions> grid = context->positions(getJoint());
  Attribute frames = StringAttr::get(getContext(), grid->sequences[0]);
  SmallVector<Attribute> dims(*batch);
  dims.push_back(frames);
  auto alignment = NNTensorType::get(dims, IntegerType::get(getContext(), 32));
  if (tensorOf(getAlignment()) != alignment)
    return emitOpError() << "alignment must be " << alignment
                         << " (a class per frame), got "
                         << getAlignment().getType();
  auto score = NNTensorType::get(*batch, tensorOf(getJoint()).getElementType());
  if (tensorOf(getScore()) != score)
    return emitOpError() << "score must be " << score << ", got "
                         << getScore().getType();
  return success();
}

LogicalResult TransducerLossGradOp::verify() {
  FailureOr<ArrayRef<Attribute>> dims = verifyTransducerOperands(
      *this, getJoint(), getLabels(), static_cast<int64_t>(getBlank()));
  if (failed(dims))
    return failure();
  return requireLossGradType(*this, getGrad(), *dims, getJoint());
}

/// The normalization of a loss value: what `nn.mark_loss` and
/// `nn.loss_terms` both require of `loss` and the custom factor.
static LogicalResult verifyLossNormalization(Operation *op, Value loss,
                                             LossNormalization normalization,
                                             Value factor) {
  FailureOr<DimContext> context = DimContext::get(op);
  if (failed(context))
    return failure();
  FailureOr<Positions> positions = context->positions(loss);
  if (failed(positions))
    return failure();
  switch (normalization) {
  case LossNormalization::sum:
    break;
  case LossNormalization::per_frame:
    if (!positions->hasSequenceAxis())
      return op->emitOpError() << "per_frame normalization needs a per-frame "
                                  "loss over a sequence axis, got "
                               << loss.getType();
    break;
  case LossNormalization::per_sequence:
    if (positions->kind == PositionKind::None)
      return op->emitOpError()
             << "per_sequence normalization needs a loss with "
                "a batch axis, got "
             << loss.getType();
    break;
  case LossNormalization::custom:
    if (!factor)
      return op->emitOpError("custom normalization needs a "
                             "custom_inv_norm_factor operand");
    break;
  }
  if (factor) {
    if (normalization != LossNormalization::custom)
      return op->emitOpError("custom_inv_norm_factor is only allowed with "
                             "custom normalization");
    NNTensorType factorType = tensorOf(factor);
    bool perBatch = factorType.getRank() == 1 && factorType.isNamedDim(0) &&
                    factorType.getDimName(0) == positions->batch;
    if (factorType.getRank() != 0 && !perBatch)
      return op->emitOpError()
             << "custom_inv_norm_factor must be a scalar [] or "
                "one value per sequence ["
             << positions->batch << "], got " << factorType;
  }
  return success();
}

LogicalResult MarkLossOp::verify() {
  auto producer = getLoss().getDefiningOp<LossOpInterface>();
  if (!producer)
    return emitOpError() << "marks a value that no loss op produced; mark "
                            "the result of a loss op (cross_entropy, mse, "
                            "ctc_loss, ...)";
  if (getName().empty())
    return emitOpError("loss name must not be empty");
  double scale = getScale().convertToDouble();
  if (!std::isfinite(scale))
    return emitOpError() << "scale must be finite, got " << scale;
  // Training minimizes scale * loss: a negative scale would train the
  // loss up.
  if (scale < 0)
    return emitOpError() << "scale must be >= 0 (a negative scale trains '"
                         << getName() << "' up), got " << scale;
  return verifyLossNormalization(*this, getLoss(), getNormalization(),
                                 getCustomInvNormFactor());
}

LogicalResult LossTermsOp::verify() {
  return verifyLossNormalization(*this, getLoss(), getNormalization(),
                                 getCustomInvNormFactor());
}

//===----------------------------------------------------------------------===//
// Pack / unpack
//===----------------------------------------------------------------------===//

/// Checks that `packed` is `padded` with its [B, T] positions replaced by
/// the dim declared `packed(B, T)`.
static LogicalResult verifyPackPair(Operation *op, Value padded, Value packed) {
  FailureOr<DimContext> context = DimContext::get(op);
  if (failed(context))
    return failure();
  StringRef paddedRole = op->getOperand(0) == padded ? "input" : "result";
  StringRef packedRole = paddedRole == "input" ? "result" : "input";
  FailureOr<Positions> in =
      requirePaddedFrames(op, *context, padded, paddedRole);
  if (failed(in))
    return failure();
  FailureOr<Positions> out = context->positions(packed);
  if (failed(out))
    return failure();
  NNTensorType paddedType = tensorOf(padded), packedType = tensorOf(packed);
  if (out->kind != PositionKind::Packed)
    return op->emitOpError()
           << packedRole << " must be packed frames [N, ...], "
           << "got " << packedType;
  if (out->sequences.size() != 1)
    return op->emitOpError()
           << packedRole << " is over the grid-packed dim '" << out->packed
           << "'; nn.pack and nn.unpack pack one sequence dim (a joint's "
              "grid comes from nn.transducer_join)";
  if (out->batch != in->batch || out->sequences[0] != in->sequences[0]) {
    DimDeclAttr expected =
        context->getTable().findPacked(in->batch, in->sequences[0]);
    InFlightDiagnostic diag = op->emitOpError();
    diag << "packed dim '" << out->packed << "' packs (" << out->batch << ", "
         << out->sequences[0] << "), but the padded value is over ("
         << in->batch << ", " << in->sequences[0] << ")";
    if (expected)
      diag << " (did you mean '" << expected.getName().getValue() << "'?)";
    return diag;
  }
  if (paddedType.getDims().drop_front(2) !=
          packedType.getDims().drop_front(1) ||
      paddedType.getElementType() != packedType.getElementType())
    return op->emitOpError()
           << "feature axes and element type of " << packedType
           << " must equal those of " << paddedType;
  return success();
}

OpFoldResult PackOp::fold(FoldAdaptor) {
  auto unpack = getInput().getDefiningOp<UnpackOp>();
  if (unpack && unpack.getInput().getType() == getType())
    return unpack.getInput();
  return nullptr;
}

OpFoldResult ZeroPaddingOp::fold(FoldAdaptor) {
  // Same type in and out: the producer's padded positions are this op's.
  if (Operation *producer = getInput().getDefiningOp();
      isa_and_nonnull<UnpackOp, BroadcastSeqOp, ZeroPaddingOp>(producer))
    return getInput();
  return nullptr;
}

LogicalResult PackOp::verify() {
  return verifyPackPair(*this, getInput(), getResult());
}

LogicalResult UnpackOp::verify() {
  return verifyPackPair(*this, getResult(), getInput());
}

LogicalResult BroadcastSeqOp::verify() {
  FailureOr<DimContext> context = DimContext::get(*this);
  if (failed(context))
    return failure();
  FailureOr<Positions> in = context->positions(getInput());
  if (failed(in))
    return failure();
  if (in->kind != PositionKind::Batch)
    return emitOpError() << "input must be one value per sequence [batch, "
                            "...], got "
                         << getInput().getType();
  FailureOr<Positions> out =
      requirePaddedFrames(*this, *context, getResult(), "result");
  if (failed(out))
    return failure();
  if (out->batch != in->batch)
    return emitOpError() << "result frames are sequences of '" << out->batch
                         << "', but the input is over '" << in->batch << "'";
  NNTensorType inType = tensorOf(getInput()), outType = tensorOf(getResult());
  if (inType.getDims().drop_front(1) != outType.getDims().drop_front(2) ||
      inType.getElementType() != outType.getElementType())
    return emitOpError() << "feature axes and element type of " << outType
                         << " must equal those of " << inType;
  return success();
}

//===----------------------------------------------------------------------===//
// Parameter initialization (ParameterInitOpInterface)
//===----------------------------------------------------------------------===//

// The usual schemes: Glorot/Xavier uniform for linear and conv weights
// (fans counted PyTorch's way), PyTorch's uniform(1/sqrt(H)) for LSTM
// weights, N(0, 1) for embedding tables, zero biases, unit layer-norm
// scales.

ParameterInit LinearOp::getParameterInit(OpOperand &operand) {
  if (operand.get() == getWeight()) {
    NNTensorType weight = tensorOf(getWeight());
    return ParameterInit::glorot(weight.getStaticSize(1),
                                 weight.getStaticSize(0));
  }
  return operand.get() == getBias() ? ParameterInit::zeros() : ParameterInit();
}

/// A fused loss tail's weight and bias, initialized as the linear's.
static ParameterInit lossTailParameterInit(OpOperand &operand, Value weight,
                                           Value bias) {
  if (operand.get() == weight) {
    NNTensorType type = tensorOf(weight);
    return ParameterInit::glorot(type.getStaticSize(1), type.getStaticSize(0));
  }
  return operand.get() == bias ? ParameterInit::zeros() : ParameterInit();
}

ParameterInit LinearCrossEntropyOp::getParameterInit(OpOperand &operand) {
  return lossTailParameterInit(operand, getWeight(), getBias());
}

ParameterInit LinearCrossEntropyTrainOp::getParameterInit(OpOperand &operand) {
  return lossTailParameterInit(operand, getWeight(), getBias());
}

ParameterInit Conv1dOp::getParameterInit(OpOperand &operand) {
  if (operand.get() == getWeight()) {
    NNTensorType weight = tensorOf(getWeight()); // [Cout, K, Cin]
    int64_t kernel = weight.getStaticSize(1);
    return ParameterInit::glorot(kernel * weight.getStaticSize(2),
                                 kernel * weight.getStaticSize(0));
  }
  return operand.get() == getBias() ? ParameterInit::zeros() : ParameterInit();
}

/// An LSTM's weights and bias, with or without its tape.
static ParameterInit lstmParameterInit(OpOperand &operand, Value inputWeight,
                                       Value recurrentWeight, Value bias) {
  NNTensorType recurrent = tensorOf(recurrentWeight);
  int64_t hidden = recurrent.getStaticSize(recurrent.getRank() - 1);
  if (operand.get() == inputWeight || operand.get() == recurrentWeight)
    return ParameterInit::uniform(1.0 / std::sqrt((double)hidden));
  return operand.get() == bias ? ParameterInit::zeros() : ParameterInit();
}

ParameterInit LstmOp::getParameterInit(OpOperand &operand) {
  return lstmParameterInit(operand, getInputWeight(), getRecurrentWeight(),
                           getBias());
}

ParameterInit LstmWithTapeOp::getParameterInit(OpOperand &operand) {
  return lstmParameterInit(operand, getInputWeight(), getRecurrentWeight(),
                           getBias());
}

ParameterInit LayerNormOp::getParameterInit(OpOperand &operand) {
  if (operand.get() == getScale())
    return ParameterInit::ones();
  return operand.get() == getBias() ? ParameterInit::zeros() : ParameterInit();
}

ParameterInit EmbeddingOp::getParameterInit(OpOperand &operand) {
  return operand.get() == getTable() ? ParameterInit::normal(1.0)
                                     : ParameterInit();
}

//===----------------------------------------------------------------------===//
// Optimizer updates
//===----------------------------------------------------------------------===//

/// Optimizer ops act on parameters and their gradients: static shapes.
static LogicalResult requireStaticShape(Operation *op, Value value,
                                        StringRef role) {
  if (tensorOf(value).hasStaticShape())
    return success();
  return op->emitOpError() << role << " must have a static shape (a "
                           << "parameter or its gradient), got "
                           << value.getType();
}

LogicalResult GlobalNormOp::verify() {
  if (getInputs().empty())
    return emitOpError() << "needs at least one input";
  for (auto [i, input] : llvm::enumerate(getInputs()))
    if (failed(requireStaticShape(*this, input, "input " + std::to_string(i))))
      return failure();
  return success();
}

LogicalResult SgdUpdateOp::verify() {
  return requireStaticShape(*this, getParam(), "param");
}

LogicalResult MomentumUpdateOp::verify() {
  return requireStaticShape(*this, getParam(), "param");
}

LogicalResult AdamUpdateOp::verify() {
  return requireStaticShape(*this, getParam(), "param");
}

#define GET_OP_CLASSES
#include "dialects/nn/NNOps.cpp.inc"
