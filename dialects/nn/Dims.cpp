//===- Dims.cpp - named dims: declarations, positions, binding ------------===//

#include "dialects/nn/Dims.h"

#include "dialects/nn/NNOps.h"

using namespace mlir;
using namespace mlir::nn;

//===----------------------------------------------------------------------===//
// DimTable
//===----------------------------------------------------------------------===//

DimTable::DimTable(ArrayAttr dims) {
  if (!dims)
    return;
  for (Attribute attr : dims) {
    auto decl = dyn_cast<DimDeclAttr>(attr);
    if (!decl)
      continue;
    // The first declaration of a name wins; verify() reports duplicates.
    if (indexByName.try_emplace(decl.getName().getValue(), decls.size()).second)
      decls.push_back(decl);
  }
}

FailureOr<DimTable> DimTable::forOp(Operation *op) {
  for (Operation *scope = op; scope; scope = scope->getParentOp()) {
    if (auto graph = dyn_cast<GraphOp>(scope))
      return DimTable(graph.getDims());
    if (auto lowered =
            scope->getAttrOfType<ArrayAttr>(NNDialect::kLoweredDimsAttrName))
      return DimTable(lowered);
  }
  return op->emitOpError("must be inside an nn.graph, which declares its dims");
}

DimDeclAttr DimTable::lookup(StringRef name) const {
  auto it = indexByName.find(name);
  return it == indexByName.end() ? DimDeclAttr() : decls[it->second];
}

bool DimTable::isBatch(StringRef name) const {
  DimDeclAttr decl = lookup(name);
  return decl && decl.getKind() == DimKind::batch;
}

bool DimTable::isSequence(StringRef name) const {
  DimDeclAttr decl = lookup(name);
  return decl && decl.getKind() == DimKind::seq;
}

bool DimTable::isPacked(StringRef name) const {
  DimDeclAttr decl = lookup(name);
  return decl && decl.getKind() == DimKind::packed;
}

DimDeclAttr DimTable::findPacked(StringRef batch, StringRef sequence,
                                 StringRef inner) const {
  for (DimDeclAttr decl : decls)
    if (decl.getKind() == DimKind::packed &&
        decl.getBatch().getValue() == batch &&
        decl.getSource().getValue() == sequence &&
        (decl.getInner() ? decl.getInner().getValue() : StringRef()) == inner)
      return decl;
  return {};
}

DimDeclAttr DimTable::findDerived(StringRef source, int64_t factor,
                                  int64_t offset) const {
  for (DimDeclAttr decl : decls)
    if (decl.isDerived() && decl.getSource().getValue() == source &&
        decl.getFactor() == factor && decl.getOffset() == offset)
      return decl;
  return {};
}

SmallVector<StringRef, 2> DimTable::computedSources(StringRef name) const {
  SmallVector<StringRef, 2> sources;
  DimDeclAttr decl = lookup(name);
  if (!decl)
    return sources;
  if (decl.getComputed()) {
    sources.push_back(decl.getName().getValue());
    return sources;
  }
  // Declarations refer only to earlier ones (verify()), so this recursion
  // ends; a malformed table that does not verify yields nothing here.
  auto follow = [&](StringAttr ref) {
    if (!ref || ref.getValue() == name)
      return;
    for (StringRef source : computedSources(ref.getValue()))
      if (!llvm::is_contained(sources, source))
        sources.push_back(source);
  };
  if (decl.isDerived() || decl.isLift() || decl.getKind() == DimKind::packed)
    follow(decl.getSource());
  if (decl.isGridPacked() || decl.isFlatten())
    follow(decl.getInner());
  // The sequences of a flattened batch have as many entries as it has.
  if (decl.getKind() == DimKind::seq)
    follow(decl.getBatch());
  return sources;
}

DimDeclAttr DimTable::findFlatten(StringRef batch, StringRef sequence) const {
  for (DimDeclAttr decl : decls)
    if (decl.isFlatten() && decl.getSource().getValue() == batch &&
        decl.getInner().getValue() == sequence)
      return decl;
  return {};
}

DimDeclAttr DimTable::findLift(StringRef batch, StringRef source) const {
  for (DimDeclAttr decl : decls)
    if (decl.isLift() && decl.getBatch().getValue() == batch &&
        decl.getSource().getValue() == source)
      return decl;
  return {};
}

SmallVector<DimDeclAttr> DimTable::getComputedDims() const {
  SmallVector<DimDeclAttr> computed;
  for (DimDeclAttr decl : decls)
    if (decl.getComputed())
      computed.push_back(decl);
  return computed;
}

LogicalResult DimTable::verify(EmitErrorFn emitError) const {
  llvm::StringMap<unsigned> seen;
  for (auto [index, decl] : llvm::enumerate(decls)) {
    StringRef name = decl.getName().getValue();
    seen[name] = index;
    // A copy: lambdas may not capture structured bindings before C++20.
    unsigned position = index;
    auto declaredBefore = [&](StringAttr ref) {
      auto it = seen.find(ref.getValue());
      return it != seen.end() && it->second < position;
    };
    if (decl.getComputed() &&
        (decl.getKind() != DimKind::seq || decl.getSource()))
      return emitError() << "dim '" << name
                         << "': only a sequence dim that is not derived can "
                            "be computed";
    switch (decl.getKind()) {
    case DimKind::batch: {
      if (!decl.isFlatten())
        break;
      StringAttr batch = decl.getSource();
      if (!declaredBefore(batch) || !isBatch(batch.getValue()) ||
          lookup(batch.getValue()).isFlatten())
        return emitError() << "dim '" << name << "': '" << batch.getValue()
                           << "' is not a batch dim declared before it (one "
                              "that is not itself flattened)";
      StringAttr inner = decl.getInner();
      if (!declaredBefore(inner) || !isSequence(inner.getValue()) ||
          lookup(inner.getValue()).getBatch() != batch)
        return emitError() << "dim '" << name << "': '" << inner.getValue()
                           << "' is not a sequence dim of '" << batch.getValue()
                           << "' declared before it";
      DimDeclAttr first = findFlatten(batch.getValue(), inner.getValue());
      if (first != decl)
        return emitError() << "dims '" << first.getName().getValue()
                           << "' and '" << name << "' both flatten ("
                           << batch.getValue() << ", " << inner.getValue()
                           << ")";
      break;
    }
    case DimKind::seq: {
      StringAttr batch = decl.getBatch();
      if (!declaredBefore(batch) || !isBatch(batch.getValue()))
        return emitError() << "dim '" << name << "': '" << batch.getValue()
                           << "' is not a batch dim declared before it";
      DimDeclAttr batchDecl = lookup(batch.getValue());
      if (decl.isLift()) {
        StringAttr source = decl.getSource();
        if (!batchDecl.isFlatten())
          return emitError() << "dim '" << name << "': '" << batch.getValue()
                             << "' is not a flattened batch, so '"
                             << source.getValue() << "' cannot be lifted onto "
                             << "it";
        StringAttr outer = batchDecl.getSource();
        if (!declaredBefore(source) || !isSequence(source.getValue()) ||
            lookup(source.getValue()).getBatch() != outer ||
            source == batchDecl.getInner())
          return emitError()
                 << "dim '" << name << "': '" << source.getValue()
                 << "' is not a sequence dim of '" << outer.getValue()
                 << "' (other than '" << batchDecl.getInner().getValue()
                 << "') declared before it";
        if (findLift(batch.getValue(), source.getValue()) != decl)
          return emitError()
                 << "dim '" << name << "': '" << source.getValue()
                 << "' is lifted onto '" << batch.getValue() << "' twice";
        break;
      }
      // The entries of a flattened batch exist only once its inner lengths
      // are known: their own sequences are computed, lifted or derived.
      if (batchDecl.isFlatten() && !decl.getComputed() && !decl.isDerived())
        return emitError() << "dim '" << name << "': a sequence dim of the "
                           << "flattened batch '" << batch.getValue()
                           << "' must be computed, lifted ('= SOURCE') or "
                              "derived";
      if (!decl.isDerived())
        break;
      StringAttr source = decl.getSource();
      if (!declaredBefore(source) || !isSequence(source.getValue()))
        return emitError() << "dim '" << name << "': '" << source.getValue()
                           << "' is not a sequence dim declared before it";
      if (lookup(source.getValue()).getBatch() != batch)
        return emitError() << "dim '" << name << "': its source '"
                           << source.getValue() << "' is a sequence of "
                           << "another batch than '" << batch.getValue() << "'";
      if (decl.getOffset() == 0 && decl.getFactor() < 2)
        return emitError() << "dim '" << name
                           << "': ceildiv factor must be at least 2, got "
                           << decl.getFactor();
      if (decl.getOffset() != 0 &&
          (decl.getFactor() != 1 || decl.getOffset() < 1))
        return emitError() << "dim '" << name
                           << "': an offset must be at least 1, got "
                           << decl.getOffset();
      break;
    }
    case DimKind::packed: {
      StringAttr batch = decl.getBatch();
      StringAttr source = decl.getSource();
      if (!declaredBefore(batch) || !isBatch(batch.getValue()))
        return emitError() << "dim '" << name << "': '" << batch.getValue()
                           << "' is not a batch dim declared before it";
      if (!declaredBefore(source) || !isSequence(source.getValue()) ||
          lookup(source.getValue()).getBatch() != batch)
        return emitError() << "dim '" << name << "': '" << source.getValue()
                           << "' is not a sequence dim of '" << batch.getValue()
                           << "' declared before it";
      StringRef inner = decl.getInner() ? decl.getInner().getValue() : "";
      if (decl.getInner() &&
          (!declaredBefore(decl.getInner()) || !isSequence(inner) ||
           lookup(inner).getBatch() != batch || inner == source.getValue()))
        return emitError() << "dim '" << name << "': '" << inner
                           << "' is not a second sequence dim of '"
                           << batch.getValue() << "' declared before it";
      DimDeclAttr first =
          findPacked(batch.getValue(), source.getValue(), inner);
      if (first != decl)
        return emitError() << "dims '" << first.getName().getValue()
                           << "' and '" << name << "' both pack ("
                           << batch.getValue() << ", " << source.getValue()
                           << (inner.empty() ? "" : ", ") << inner << ")";
      break;
    }
    }
  }
  return success();
}

//===----------------------------------------------------------------------===//
// Positions
//===----------------------------------------------------------------------===//

unsigned Positions::getNumAxes() const {
  switch (kind) {
  case PositionKind::None:
    return 0;
  case PositionKind::Batch:
    return 1;
  case PositionKind::Padded:
    return 1 + sequences.size();
  case PositionKind::Packed:
    return 1;
  }
  llvm_unreachable("unknown position kind");
}

FailureOr<Positions> mlir::nn::classifyPositions(NNTensorType type,
                                                 const DimTable &table,
                                                 EmitErrorFn emitError) {
  unsigned numNamed = type.getNumPositionDims();
  for (unsigned i = numNamed, e = type.getRank(); i < e; ++i)
    if (type.isNamedDim(i))
      return emitError() << "type " << type << " names dim '"
                         << type.getDimName(i)
                         << "' after a static size; named (position) axes "
                            "must come first";
  for (unsigned i = 0; i < numNamed; ++i)
    if (!table.lookup(type.getDimName(i)))
      return emitError() << "type " << type << " names dim '"
                         << type.getDimName(i)
                         << "', which the enclosing graph does not declare";

  Positions positions;
  if (numNamed == 0)
    return positions;
  DimDeclAttr first = table.lookup(type.getDimName(0));
  if (first.getKind() == DimKind::packed) {
    if (numNamed != 1)
      return emitError() << "type " << type << ": packed dim '"
                         << type.getDimName(0)
                         << "' must be the only position axis";
    positions.kind = PositionKind::Packed;
    positions.packed = first.getName().getValue();
    positions.batch = first.getBatch().getValue();
    positions.sequences.push_back(first.getSource().getValue());
    if (first.isGridPacked())
      positions.sequences.push_back(first.getInner().getValue());
    return positions;
  }
  if (first.getKind() != DimKind::batch)
    return emitError() << "type " << type << ": the first axis '"
                       << type.getDimName(0)
                       << "' must be a batch or packed dim";
  positions.batch = first.getName().getValue();
  positions.kind = numNamed == 1 ? PositionKind::Batch : PositionKind::Padded;
  for (unsigned i = 1; i < numNamed; ++i) {
    DimDeclAttr decl = table.lookup(type.getDimName(i));
    // `[B, K, Y...]`: after exactly one sequence K of B, sequence dims of
    // flatten(B, K) make the N-best layout.
    DimDeclAttr flat =
        decl.getKind() == DimKind::seq && positions.sequences.size() >= 1
            ? table.findFlatten(positions.batch, positions.sequences.front())
            : DimDeclAttr();
    bool nested = flat && decl.getBatch() == flat.getName() &&
                  (positions.isNested() || positions.sequences.size() == 1);
    if (nested) {
      positions.flat = flat.getName().getValue();
    } else if (decl.getKind() != DimKind::seq ||
               decl.getBatch().getValue() != positions.batch ||
               positions.isNested()) {
      auto diag = emitError() << "type " << type << ": axis " << i << " ('"
                              << type.getDimName(i) << "') must be a sequence "
                              << "dim of '";
      if (positions.isNested())
        return diag << positions.flat << "' (the N-best layout [B, K, Y...])";
      return diag << positions.batch << "'";
    }
    if (llvm::is_contained(positions.sequences, type.getDimName(i)))
      return emitError() << "type " << type << " names sequence dim '"
                         << type.getDimName(i) << "' twice";
    positions.sequences.push_back(type.getDimName(i));
  }
  return positions;
}

//===----------------------------------------------------------------------===//
// DimBinding
//===----------------------------------------------------------------------===//

StringRef DimBinding::lookup(StringRef calleeDim) const {
  auto it = binding.find(calleeDim);
  return it == binding.end() ? StringRef() : StringRef(it->second);
}

LogicalResult DimBinding::bind(StringRef calleeDim, StringRef callerDim,
                               StringRef what, EmitErrorFn emitError) {
  auto [it, inserted] = binding.try_emplace(calleeDim, callerDim.str());
  if (inserted) {
    order.push_back(calleeDim.str());
    return success();
  }
  if (it->second == callerDim)
    return success();
  return emitError() << what << ": callee dim '" << calleeDim
                     << "' is bound to both '" << it->second << "' and '"
                     << callerDim << "'";
}

LogicalResult DimBinding::unify(NNTensorType calleeType,
                                NNTensorType callerType, StringRef what,
                                EmitErrorFn emitError) {
  if (calleeType.getElementType() != callerType.getElementType() ||
      calleeType.getRank() != callerType.getRank())
    return emitError() << what << ": type " << callerType
                       << " does not match the callee's " << calleeType;
  for (unsigned i = 0, e = calleeType.getRank(); i < e; ++i) {
    if (calleeType.isNamedDim(i) != callerType.isNamedDim(i) ||
        (!calleeType.isNamedDim(i) &&
         calleeType.getStaticSize(i) != callerType.getStaticSize(i)))
      return emitError() << what << ": axis " << i << " of " << callerType
                         << " does not match the callee's " << calleeType;
    if (calleeType.isNamedDim(i) &&
        failed(bind(calleeType.getDimName(i), callerType.getDimName(i), what,
                    emitError)))
      return failure();
  }
  return success();
}

LogicalResult DimBinding::unifyCall(TypeRange calleeArguments,
                                    TypeRange operands, TypeRange calleeResults,
                                    TypeRange results, EmitErrorFn emitError) {
  for (auto [what, callee, caller] :
       {std::tuple{"operand ", calleeArguments, operands},
        std::tuple{"result ", calleeResults, results}})
    for (auto [index, pair] : llvm::enumerate(llvm::zip(callee, caller)))
      if (failed(unify(cast<NNTensorType>(std::get<0>(pair)),
                       cast<NNTensorType>(std::get<1>(pair)),
                       what + std::to_string(index), emitError)))
        return failure();
  return success();
}

LogicalResult DimBinding::verifyKinds(EmitErrorFn emitError) {
  // Binding a dim binds what it refers to; follow references until no new
  // pair appears (`order` grows while we walk it).
  for (size_t i = 0; i < order.size(); ++i) {
    std::string calleeName = order[i];
    std::string callerName = binding.lookup(calleeName);
    DimDeclAttr calleeDecl = callee.lookup(calleeName);
    DimDeclAttr callerDecl = caller.lookup(callerName);
    if (!calleeDecl || !callerDecl)
      return emitError() << "dim '" << (calleeDecl ? callerName : calleeName)
                         << "' is not declared";
    auto mismatch = [&]() {
      std::string calleeText, callerText;
      llvm::raw_string_ostream calleeOs(calleeText), callerOs(callerText);
      calleeDecl.printBody(calleeOs);
      callerDecl.printBody(callerOs);
      return emitError() << "callee dim '" << calleeOs.str()
                         << "' cannot bind caller dim '" << callerOs.str()
                         << "'";
    };
    // A row batch: a callee batch over which the callee declares no
    // sequence dim counts rows, so it may bind a caller's packed dim too
    // (the same step graph runs on a search's rows and on a joint's packed
    // rows in training). Nothing of the packed dim is followed: the callee
    // sees rows, not sequences.
    if (callerDecl.getKind() == DimKind::packed &&
        calleeDecl.getKind() == DimKind::batch && !calleeDecl.isFlatten() &&
        llvm::none_of(callee.getDecls(), [&](DimDeclAttr decl) {
          return decl.getBatch() && decl.getBatch().getValue() == calleeName;
        }))
      continue;
    if (calleeDecl.getKind() != callerDecl.getKind())
      return mismatch();
    if (calleeDecl.getComputed())
      return emitError() << "callee dim '" << calleeName
                         << "' is computed by the callee; calling a graph "
                            "whose results have computed lengths is not "
                            "supported yet (inline the producing op)";
    // An independent callee sequence accepts any caller sequence (its
    // lengths are whatever the caller's are); a derived one must be derived
    // the same way.
    if (calleeDecl.isDerived() &&
        (!callerDecl.isDerived() ||
         calleeDecl.getFactor() != callerDecl.getFactor() ||
         calleeDecl.getOffset() != callerDecl.getOffset()))
      return mismatch();
    // A plain callee batch sees the entries of a flattened batch as its
    // batch (an N-best list's hypotheses, one entry each, rescored by the
    // graph that training calls); a plain callee sequence takes any caller
    // sequence's lengths, a lift's included.
    bool plainBatch =
        calleeDecl.getKind() == DimKind::batch && !calleeDecl.isFlatten();
    bool plainSequence =
        calleeDecl.getKind() == DimKind::seq && !calleeDecl.getSource();
    if (calleeDecl.isGridPacked() != callerDecl.isGridPacked() ||
        (calleeDecl.isFlatten() != callerDecl.isFlatten() && !plainBatch) ||
        (calleeDecl.isLift() != callerDecl.isLift() && !plainSequence))
      return mismatch();
    if (calleeDecl.getBatch() && failed(bind(calleeDecl.getBatch().getValue(),
                                             callerDecl.getBatch().getValue(),
                                             "dim binding", emitError)))
      return failure();
    bool followSource = calleeDecl.getKind() == DimKind::packed ||
                        calleeDecl.isDerived() || calleeDecl.isLift() ||
                        calleeDecl.isFlatten();
    if (followSource && failed(bind(calleeDecl.getSource().getValue(),
                                    callerDecl.getSource().getValue(),
                                    "dim binding", emitError)))
      return failure();
    if ((calleeDecl.isGridPacked() || calleeDecl.isFlatten()) &&
        failed(bind(calleeDecl.getInner().getValue(),
                    callerDecl.getInner().getValue(), "dim binding",
                    emitError)))
      return failure();
  }
  return success();
}
