//===- NNTypes.cpp - the named-dim tensor type and dim declarations -------===//

#include "dialects/nn/NNDialect.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/DialectImplementation.h"
#include "llvm/ADT/TypeSwitch.h"

using namespace mlir;
using namespace mlir::nn;

#define GET_TYPEDEF_CLASSES
#include "dialects/nn/NNTypes.cpp.inc"

#define GET_ATTRDEF_CLASSES
#include "dialects/nn/NNAttrs.cpp.inc"

void NNDialect::registerTypes() {
  addTypes<
#define GET_TYPEDEF_LIST
#include "dialects/nn/NNTypes.cpp.inc"
      >();
}

void NNDialect::registerAttributes() {
  addAttributes<
#define GET_ATTRDEF_LIST
#include "dialects/nn/NNAttrs.cpp.inc"
      >();
}

//===----------------------------------------------------------------------===//
// NNTensorType
//===----------------------------------------------------------------------===//

NNTensorType NNTensorType::get(MLIRContext *context, ArrayRef<StringRef> names,
                               ArrayRef<int64_t> sizes, Type elementType) {
  assert(names.size() == sizes.size() && "one name or size per axis");
  Builder builder(context);
  SmallVector<Attribute> dims;
  for (auto [name, size] : llvm::zip(names, sizes))
    dims.push_back(name.empty() ? Attribute(builder.getI64IntegerAttr(size))
                                : Attribute(builder.getStringAttr(name)));
  return Base::get(context, dims, elementType);
}

NNTensorType NNTensorType::withDims(ArrayRef<Attribute> dims) const {
  return Base::get(getContext(), dims, getElementType());
}

StringRef NNTensorType::getDimName(unsigned i) const {
  auto name = llvm::dyn_cast<StringAttr>(getDims()[i]);
  return name ? name.getValue() : StringRef();
}

int64_t NNTensorType::getStaticSize(unsigned i) const {
  auto size = llvm::dyn_cast<IntegerAttr>(getDims()[i]);
  return size ? size.getInt() : -1;
}

unsigned NNTensorType::getNumPositionDims() const {
  unsigned count = 0;
  while (count < getDims().size() && isNamedDim(count))
    ++count;
  return count;
}

LogicalResult NNTensorType::verify(function_ref<InFlightDiagnostic()> emitError,
                                   ArrayRef<Attribute> dims, Type elementType) {
  // The static part of a type, in bytes; an element is at least a byte.
  uint64_t staticBytes =
      llvm::isa<FloatType, IntegerType>(elementType)
          ? std::max<uint64_t>(1, (elementType.getIntOrFloatBitWidth() + 7) / 8)
          : 1;
  for (Attribute dim : dims) {
    if (auto size = llvm::dyn_cast<IntegerAttr>(dim)) {
      if (size.getInt() < 0)
        return emitError() << "static size must be non-negative, got "
                           << size.getInt();
      // BLAS and cuBLAS take 32-bit sizes, CUDA grids 32-bit counts.
      if (size.getInt() > kMaxStaticSize)
        return emitError() << "static size " << size.getInt()
                           << " exceeds the largest supported size "
                           << kMaxStaticSize << " (2^31 - 1)";
      if (__builtin_mul_overflow(staticBytes, (uint64_t)size.getInt(),
                                 &staticBytes) ||
          staticBytes > kMaxStaticBytes)
        return emitError() << "static sizes need more than 2^40 bytes per "
                              "position (beyond any device's memory)";
      continue;
    }
    auto name = llvm::dyn_cast<StringAttr>(dim);
    if (!name || name.getValue().empty())
      return emitError() << "each axis must be a dim name or a static size";
  }
  if (!llvm::isa<FloatType, IntegerType>(elementType))
    return emitError() << "element type must be a float or an integer, got "
                       << elementType;
  return success();
}

// `<[B, T, 80], f32>`
Type NNTensorType::parse(AsmParser &parser) {
  Builder &builder = parser.getBuilder();
  SmallVector<Attribute> dims;
  Type elementType;
  auto parseDim = [&]() -> ParseResult {
    int64_t size = 0;
    OptionalParseResult sizeResult = parser.parseOptionalInteger(size);
    if (sizeResult.has_value()) {
      if (failed(*sizeResult))
        return failure();
      dims.push_back(builder.getI64IntegerAttr(size));
      return success();
    }
    std::string name;
    if (parser.parseKeywordOrString(&name))
      return failure();
    dims.push_back(builder.getStringAttr(name));
    return success();
  };
  SMLoc loc = parser.getCurrentLocation();
  if (parser.parseLess() ||
      parser.parseCommaSeparatedList(AsmParser::Delimiter::Square, parseDim,
                                     " in an nn tensor's dims") ||
      parser.parseComma() || parser.parseType(elementType) ||
      parser.parseGreater())
    return {};
  return parser.getChecked<NNTensorType>(loc, parser.getContext(), dims,
                                         elementType);
}

void NNTensorType::print(AsmPrinter &printer) const {
  printer << "<[";
  llvm::interleaveComma(getDims(), printer, [&](Attribute dim) {
    if (auto size = llvm::dyn_cast<IntegerAttr>(dim))
      printer << size.getInt();
    else
      printer.printKeywordOrString(llvm::cast<StringAttr>(dim).getValue());
  });
  printer << "], " << getElementType() << ">";
}

//===----------------------------------------------------------------------===//
// DimDeclAttr
//===----------------------------------------------------------------------===//

// NAME `:` (`batch` | `seq` `(` B `)` (`=` `ceildiv` `(` T `,` K `)`)?
//           | `packed` `(` B `,` T `)`)
DimDeclAttr DimDeclAttr::parseBody(AsmParser &parser) {
  MLIRContext *context = parser.getContext();
  auto parseName = [&](StringAttr &out) -> ParseResult {
    std::string name;
    if (parser.parseKeywordOrString(&name))
      return failure();
    out = StringAttr::get(context, name);
    return success();
  };
  StringAttr name, batch, source, inner;
  int64_t factor = 0, offset = 0;
  bool computed = false;
  StringRef kindName;
  SMLoc kindLoc, offsetLoc;
  if (parseName(name) || parser.parseColon())
    return {};
  kindLoc = parser.getCurrentLocation();
  if (parser.parseKeyword(&kindName))
    return {};
  std::optional<DimKind> kind = symbolizeDimKind(kindName);
  if (!kind) {
    parser.emitError(kindLoc, "expected dim kind 'batch', 'seq' or 'packed', "
                              "got '")
        << kindName << "'";
    return {};
  }
  switch (*kind) {
  case DimKind::batch:
    // `= flatten(B, K)`.
    if (failed(parser.parseOptionalEqual()))
      break;
    if (parser.parseKeyword("flatten") || parser.parseLParen() ||
        parseName(source) || parser.parseComma() || parseName(inner) ||
        parser.parseRParen())
      return {};
    break;
  case DimKind::seq:
    if (parser.parseLParen() || parseName(batch) || parser.parseRParen())
      return {};
    if (succeeded(parser.parseOptionalKeyword("computed"))) {
      computed = true;
      break;
    }
    if (failed(parser.parseOptionalEqual()))
      break;
    // `ceildiv(S, k)` or `S + c`.
    if (succeeded(parser.parseOptionalKeyword("ceildiv"))) {
      SMLoc factorLoc;
      if (parser.parseLParen() || parseName(source) || parser.parseComma() ||
          (factorLoc = parser.getCurrentLocation(), false) ||
          parser.parseInteger(factor) || parser.parseRParen())
        return {};
      // `ceildiv(T, 1)` would read as the lift `T`; say what is wrong.
      if (factor < 2) {
        parser.emitError(factorLoc)
            << "dim '" << name.getValue()
            << "': ceildiv factor must be at least 2, got " << factor;
        return {};
      }
      break;
    }
    // `S + c`, or `S` alone: a lift onto a flattened batch.
    factor = 1;
    if (parseName(source))
      return {};
    if (failed(parser.parseOptionalPlus()))
      break;
    offsetLoc = parser.getCurrentLocation();
    if (parser.parseInteger(offset))
      return {};
    // `U + 0` would read as the lift `U`; say what is wrong with it.
    if (offset == 0) {
      parser.emitError(offsetLoc) << "dim '" << name.getValue()
                                  << "': an offset must be at least 1, got 0";
      return {};
    }
    break;
  case DimKind::packed:
    if (parser.parseLParen() || parseName(batch) || parser.parseComma() ||
        parseName(source))
      return {};
    if (succeeded(parser.parseOptionalComma()) && parseName(inner))
      return {};
    if (parser.parseRParen())
      return {};
    break;
  }
  return DimDeclAttr::get(context, name, *kind, batch, source, factor, offset,
                          inner, computed);
}

void DimDeclAttr::printBody(raw_ostream &os) const {
  os << getName().getValue() << ": " << stringifyDimKind(getKind());
  switch (getKind()) {
  case DimKind::batch:
    if (isFlatten())
      os << " = flatten(" << getSource().getValue() << ", "
         << getInner().getValue() << ")";
    break;
  case DimKind::seq:
    os << "(" << getBatch().getValue() << ")";
    if (getComputed())
      os << " computed";
    else if (isLift())
      os << " = " << getSource().getValue();
    else if (isDerived() && getOffset() == 0)
      os << " = ceildiv(" << getSource().getValue() << ", " << getFactor()
         << ")";
    else if (isDerived())
      os << " = " << getSource().getValue() << " + " << getOffset();
    break;
  case DimKind::packed:
    os << "(" << getBatch().getValue() << ", " << getSource().getValue();
    if (isGridPacked())
      os << ", " << getInner().getValue();
    os << ")";
    break;
  }
}

Attribute DimDeclAttr::parse(AsmParser &parser, Type) {
  if (parser.parseLess())
    return {};
  DimDeclAttr decl = parseBody(parser);
  if (!decl || parser.parseGreater())
    return {};
  return decl;
}

void DimDeclAttr::print(AsmPrinter &printer) const {
  printer << "<";
  printBody(printer.getStream());
  printer << ">";
}
