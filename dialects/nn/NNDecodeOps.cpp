//===- NNDecodeOps.cpp - decoding: label sequences from scores ------------===//
//
// Verifiers and interfaces of the decoding ops, whose label results run
// over `computed` sequence dims.
//
//===----------------------------------------------------------------------===//

#include "dialects/nn/NNOps.h"

#include "dialects/nn/NNOpsUtils.h"
#include "dialects/nn/TransducerPredictor.h"

#include <cmath>

using namespace mlir;
using namespace mlir::nn;
using namespace mlir::nn::detail;

/// Checks that `labels` is `[batch, Y]` i32 with Y a computed sequence dim
/// of `batch`; `what` names it in diagnostics.
static LogicalResult verifyHypotheses(Operation *op, const DimContext &context,
                                      Value labels, StringRef batch,
                                      StringRef what) {
  NNTensorType type = tensorOf(labels);
  FailureOr<Positions> positions = context.positions(labels);
  if (failed(positions))
    return failure();
  if (!type.getElementType().isSignlessInteger(32) ||
      positions->kind != PositionKind::Padded ||
      positions->sequences.size() != 1 || type.getRank() != 2 ||
      positions->batch != batch)
    return op->emitOpError()
           << what << " must be [" << batch
           << ", Y] i32 over a computed sequence dim Y, got " << type;
  StringRef dim = positions->sequences.front();
  if (!context.getTable().lookup(dim).getComputed())
    return op->emitOpError()
           << what << " runs over '" << dim
           << "', whose lengths the caller passes; the hypotheses' lengths "
              "are computed here: declare a new dim such as 'Y: seq("
           << batch << ") computed'";
  return success();
}

//===----------------------------------------------------------------------===//
// CtcGreedyDecodeOp
//===----------------------------------------------------------------------===//

/// Checks the N-best layout of a search's results: `labels`
/// `[batch, K, Y]` i32 with K a computed sequence dim of `batch` (the
/// hypotheses per sequence) and Y a computed sequence dim of
/// `flatten(batch, K)` (each hypothesis's length).
static LogicalResult verifyNBest(Operation *op, const DimContext &context,
                                 Value labels, StringRef batch) {
  NNTensorType type = tensorOf(labels);
  FailureOr<Positions> positions = context.positions(labels);
  if (failed(positions))
    return failure();
  if (!type.getElementType().isSignlessInteger(32) || !positions->isNested() ||
      positions->sequences.size() != 2 || type.getRank() != 3 ||
      positions->batch != batch)
    return op->emitOpError()
           << "labels must be [" << batch << ", Y] or the N-best layout ["
           << batch << ", K, Y] i32 (Y a sequence dim of flatten(" << batch
           << ", K)), got " << type;
  for (StringRef dim : positions->sequences)
    if (!context.getTable().lookup(dim).getComputed())
      return op->emitOpError()
             << "labels run over '" << dim
             << "', whose lengths the caller passes; the search computes the "
                "number of hypotheses and their lengths: declare 'K: seq("
             << batch << ") computed' and 'Y: seq(H) computed' with 'H: batch "
             << "= flatten(" << batch << ", K)'";
  return success();
}

/// The checks the CTC decoders share: padded `[B, T, V]` or packed `[N, V]`
/// scores, a blank class, `[B, Y]` hypotheses over a computed dim and a
/// `[B]` score of the scores' element type; with `allowNBest`, also the
/// N-best layout `[B, K, Y]` with `[B, K]` scores.
static LogicalResult verifyCtcDecoder(Operation *op, Value scores,
                                      int64_t blank, Value labels, Value score,
                                      bool allowNBest = false) {
  FailureOr<DimContext> context = DimContext::get(op);
  if (failed(context))
    return failure();
  FailureOr<Positions> frames = context->positions(scores);
  if (failed(frames))
    return failure();
  if (frames->kind != PositionKind::Packed)
    frames = requirePaddedFrames(op, *context, scores, "scores");
  if (failed(frames) || failed(requireOneFeatureAxis(op, scores, "scores")))
    return failure();
  if (frames->kind == PositionKind::Packed && frames->sequences.size() != 1)
    return op->emitOpError()
           << "scores must pack one sequence dim, got " << scores.getType();
  int64_t classes = featureSize(tensorOf(scores));
  if (blank < 0 || blank >= classes)
    return op->emitOpError()
           << "blank " << blank << " is not a class in [0, " << classes << ")";
  bool nBest = allowNBest && tensorOf(labels).getRank() == 3;
  if (nBest ? failed(verifyNBest(op, *context, labels, frames->batch))
            : failed(verifyHypotheses(op, *context, labels, frames->batch,
                                      "labels")))
    return failure();
  auto want =
      NNTensorType::get(tensorOf(labels).getDims().take_front(nBest ? 2 : 1),
                        tensorOf(scores).getElementType());
  if (tensorOf(score) != want)
    return op->emitOpError()
           << "score must be " << want << ", got " << score.getType();
  return success();
}

//===----------------------------------------------------------------------===//
// CtcGreedyDecodeOp
//===----------------------------------------------------------------------===//

LogicalResult CtcGreedyDecodeOp::verify() {
  return verifyCtcDecoder(*this, getScores(), static_cast<int64_t>(getBlank()),
                          getLabels(), getScore());
}

SmallVector<StringRef, 1> CtcGreedyDecodeOp::getProducedDims() {
  return {tensorOf(getLabels()).getDimName(1)};
}

//===----------------------------------------------------------------------===//
// CtcBeamSearchOp
//===----------------------------------------------------------------------===//

static FailureOr<StringRef> verifyRowCallee(Operation *op, GraphOp graph,
                                            StringRef role);

/// The language-model attributes: all of lm, its input kind, weight and
/// start, or none of them (nor end or length_bonus); classes of the op's
/// vocabulary; a finite weight >= 0 and a finite bonus.
static LogicalResult verifyLmAttributes(CtcBeamSearchOp op, int64_t classes) {
  bool hasLm = op.getLmAttr() != nullptr;
  if (!hasLm) {
    if (op.getLmInputAttr() || op.getLmWeightAttr() || op.getLmStartAttr() ||
        op.getLmEndAttr())
      return op.emitOpError()
             << "has language-model settings (from, weight, start, end) "
                "but no 'lm' graph";
    if (op.getLengthBonusAttr())
      return op.emitOpError() << "length_bonus needs a language model "
                                 "('lm @graph from ... weight ... start ...')";
    return success();
  }
  if (!op.getLmInputAttr() || !op.getLmWeightAttr() || !op.getLmStartAttr())
    return op.emitOpError()
           << "lm @" << op.getLmAttr().getValue()
           << " needs its output kind, weight and start symbol";
  double weight = op.getLmWeightAttr().getValueAsDouble();
  if (!(weight >= 0) || !std::isfinite(weight))
    return op.emitOpError()
           << "lm weight must be finite and at least 0, got " << weight;
  if (auto bonus = op.getLengthBonusAttr();
      bonus && !std::isfinite(bonus.getValueAsDouble()))
    return op.emitOpError()
           << "length_bonus must be finite, got " << bonus.getValueAsDouble();
  for (auto [name, value] :
       {std::pair{"start", op.getLmStartAttr()}, {"end", op.getLmEndAttr()}}) {
    if (!value)
      continue;
    int64_t symbol = value.getInt();
    if (symbol < 0 || symbol >= classes)
      return op.emitOpError() << "lm " << name << " symbol " << symbol
                              << " is not a class in [0, " << classes << ")";
  }
  return success();
}

LogicalResult CtcBeamSearchOp::verify() {
  if (failed(verifyCtcDecoder(*this, getScores(),
                              static_cast<int64_t>(getBlank()), getLabels(),
                              getScore(), /*allowNBest=*/true)))
    return failure();
  int64_t classes = featureSize(tensorOf(getScores()));
  if (std::optional<uint64_t> tokens = getTokenBeam();
      tokens && static_cast<int64_t>(*tokens) > classes)
    return emitOpError() << "token_beam " << *tokens << " exceeds the "
                         << classes << " classes";
  for (auto [name, value] : {std::pair{"token_threshold", getTokenThreshold()},
                             std::pair{"score_beam", getScoreBeam()}})
    if (value && !(value->convertToDouble() >= 0))
      return emitOpError() << name << " must be at least 0, got "
                           << value->convertToDouble();
  return verifyLmAttributes(*this, classes);
}

LogicalResult
CtcBeamSearchOp::verifySymbolUses(SymbolTableCollection &symbolTable) {
  if (!getLmAttr())
    return success();
  auto lm = symbolTable.lookupNearestSymbolFrom<GraphOp>(*this, getLmAttr());
  if (!lm)
    return emitOpError() << "lm '" << getLmAttr().getValue()
                         << "' does not name an nn.graph";
  FailureOr<StringRef> rows = verifyRowCallee(*this, lm, "lm");
  if (failed(rows))
    return failure();
  ArrayRef<Type> in = lm.getArgumentTypes();
  ArrayRef<Type> out = lm.getResultTypes();
  SmallVector<StringRef> names{*rows};
  SmallVector<int64_t> sizes{-1};
  auto labelsIn = NNTensorType::get(getContext(), names, sizes,
                                    IntegerType::get(getContext(), 32));
  if (in.empty() || in[0] != labelsIn)
    return emitOpError() << "lm @" << lm.getSymName()
                         << " must take the row labels " << labelsIn
                         << " first";
  int64_t classes = featureSize(tensorOf(getScores()));
  auto output = out.empty() ? NNTensorType() : cast<NNTensorType>(out[0]);
  if (!output || output.getRank() != 2 || output.isNamedDim(1) ||
      output.getStaticSize(1) != classes ||
      !isa<FloatType>(output.getElementType()))
    return emitOpError() << "lm @" << lm.getSymName() << " must return its "
                         << "scores [" << *rows << ", " << classes
                         << "] float first (one per class of the scores)";
  if (in.size() != out.size())
    return emitOpError() << "lm @" << lm.getSymName() << " takes "
                         << in.size() - 1 << " state tensors and returns "
                         << out.size() - 1
                         << "; each state comes back with its type";
  for (unsigned i = 1; i < in.size(); ++i) {
    auto state = cast<NNTensorType>(in[i]);
    if (in[i] != out[i] || !isa<FloatType>(state.getElementType()))
      return emitOpError() << "lm @" << lm.getSymName() << " state " << i - 1
                           << " must be a float [" << *rows
                           << ", ...] tensor returned with the same type, got "
                           << in[i] << " -> " << out[i];
  }
  return success();
}

SmallVector<FlatSymbolRefAttr, 2> CtcBeamSearchOp::getCalleeGraphs() {
  if (FlatSymbolRefAttr lm = getLmAttr())
    return {lm};
  return {};
}

SmallVector<StringRef, 1> CtcBeamSearchOp::getProducedDims() {
  NNTensorType labels = tensorOf(getLabels());
  if (labels.getRank() == 3)
    return {labels.getDimName(1), labels.getDimName(2)};
  return {labels.getDimName(1)};
}

//===----------------------------------------------------------------------===//
// TransducerGreedyDecodeOp
//===----------------------------------------------------------------------===//

/// The checks the transducer decoders share: padded `[B, T, D]` encoder
/// frames, the hypotheses (`[B, Y]`, or with `allowNBest` the N-best
/// layout `[B, K, Y]`) with scores of the encoder's element type, blank and
/// start classes, and max_symbols for rnnt only.
static LogicalResult verifyTransducerDecoder(Operation *op, Value encoder,
                                             Value labels, Value score,
                                             int64_t blank, int64_t start,
                                             TransducerTopology topology,
                                             std::optional<uint64_t> maxSymbols,
                                             bool allowNBest = false) {
  FailureOr<DimContext> context = DimContext::get(op);
  if (failed(context))
    return failure();
  FailureOr<Positions> frames =
      requirePaddedFrames(op, *context, encoder, "encoder");
  if (failed(frames) || failed(requireOneFeatureAxis(op, encoder, "encoder")))
    return failure();
  bool nBest = allowNBest && tensorOf(labels).getRank() == 3;
  if (nBest ? failed(verifyNBest(op, *context, labels, frames->batch))
            : failed(verifyHypotheses(op, *context, labels, frames->batch,
                                      "labels")))
    return failure();
  auto want =
      NNTensorType::get(tensorOf(labels).getDims().take_front(nBest ? 2 : 1),
                        tensorOf(encoder).getElementType());
  if (tensorOf(score) != want)
    return op->emitOpError()
           << "score must be " << want << ", got " << score.getType();
  if (blank < 0 || start < 0)
    return op->emitOpError()
           << "blank and start must be classes (at least 0), got " << blank
           << " and " << start;
  bool rnnt = topology == TransducerTopology::rnnt;
  if (rnnt && !maxSymbols)
    return op->emitOpError() << "topology rnnt needs max_symbols (the labels "
                                "a frame may emit at most)";
  if (!rnnt && maxSymbols)
    return op->emitOpError() << "topology rna emits at most one label per "
                                "frame; max_symbols is for rnnt";
  return success();
}

LogicalResult TransducerGreedyDecodeOp::verify() {
  return verifyTransducerDecoder(*this, getEncoder(), getLabels(), getScore(),
                                 static_cast<int64_t>(getBlank()),
                                 static_cast<int64_t>(getStart()),
                                 getTopology(), getMaxSymbols());
}

/// The row batch of callee `graph`, whose role `role` names in
/// diagnostics: its only dim, a batch over which it declares no sequence
/// dim, named by axis 0 of every argument and result. The callee marks no
/// loss.
static FailureOr<StringRef> verifyRowCallee(Operation *op, GraphOp graph,
                                            StringRef role) {
  auto fail = [&]() {
    return op->emitOpError() << role << " @" << graph.getSymName();
  };
  DimTable table(graph.getDims());
  if (table.getDecls().size() != 1 ||
      table.getDecls().front().getKind() != DimKind::batch ||
      table.getDecls().front().isFlatten())
    return fail() << " must declare exactly one dim, a row batch such as "
                     "'S: batch' (it runs on rows, one step at a time)",
           failure();
  StringRef rows = table.getDecls().front().getName().getValue();
  auto overRows = [&](Type type) {
    auto tensor = dyn_cast<NNTensorType>(type);
    return tensor && tensor.getRank() >= 1 && tensor.isNamedDim(0) &&
           tensor.getDimName(0) == rows && tensor.getNumPositionDims() == 1;
  };
  for (auto [index, type] : llvm::enumerate(graph.getArgumentTypes()))
    if (!overRows(type))
      return fail() << " argument " << index << " must run over the rows ["
                    << rows << ", ...], got " << type,
             failure();
  for (auto [index, type] : llvm::enumerate(graph.getResultTypes()))
    if (!overRows(type))
      return fail() << " result " << index << " must run over the rows ["
                    << rows << ", ...], got " << type,
             failure();
  WalkResult marks =
      graph.walk([](MarkLossOp) { return WalkResult::interrupt(); });
  if (marks.wasInterrupted())
    return fail() << " marks a loss; a decoder's callee computes scores only",
           failure();
  return rows;
}

/// The checks of a sequence-form predictor (TransducerPredictor.h) whose
/// signature matched `dims`: one result `[S, U, width]` of `element`, no
/// loss, and a step rule for every op (the search runs it one label at a
/// time).
static LogicalResult verifySequencePredictor(Operation *op, GraphOp predictor,
                                             SequencePredictorDims dims,
                                             int64_t width, Type element) {
  auto fail = [&]() {
    return op->emitOpError() << "predictor @" << predictor.getSymName();
  };
  NNTensorType output = NNTensorType::get(
      op->getContext(), {dims.batch, dims.labels, StringRef()}, {-1, -1, width},
      element);
  if (predictor.getNumResults() != 1 || predictor.getResultTypes()[0] != output)
    return fail() << " (a sequence-form predictor over the labels ["
                  << dims.batch << ", " << dims.labels << "]) must return one "
                  << output << " (the encoder's width and element type)";
  for (Operation &inner : predictor.getBody().front()) {
    if (getPredictorStepRule(&inner))
      continue;
    InFlightDiagnostic diag = fail() << " cannot run one label at a time: '"
                                     << inner.getName().getStringRef() << "' ";
    if (isa<MarkLossOp>(inner) || isa<LossOpInterface>(inner))
      diag << "is a loss; a decoder's callee computes scores only";
    else if (isa<SequenceMixingOpInterface>(inner))
      diag << "reads later labels (a sequence-form predictor may use "
              "frame-wise ops and forward LSTMs only)";
    else
      diag << "has no step form (a sequence-form predictor may use "
              "frame-wise ops and forward LSTMs only)";
    diag.attachNote(inner.getLoc()) << "this op";
    return diag;
  }
  return success();
}

/// The callee checks of the transducer decoders: `predictor` and `joiner`
/// name row-batch graphs of the conventions transducer_greedy_decode
/// documents, for frames of `encoder` and class `blank`.
static LogicalResult verifyTransducerCallees(Operation *op,
                                             SymbolTableCollection &symbolTable,
                                             FlatSymbolRefAttr predictorAttr,
                                             FlatSymbolRefAttr joinerAttr,
                                             Value encoderValue,
                                             int64_t blank) {
  auto emitOpError = [&]() { return op->emitOpError(); };
  MLIRContext *context = op->getContext();
  auto predictor =
      symbolTable.lookupNearestSymbolFrom<GraphOp>(op, predictorAttr);
  if (!predictor)
    return emitOpError() << "predictor '" << predictorAttr.getValue()
                         << "' does not name an nn.graph";
  auto joiner = symbolTable.lookupNearestSymbolFrom<GraphOp>(op, joinerAttr);
  if (!joiner)
    return emitOpError() << "joiner '" << joinerAttr.getValue()
                         << "' does not name an nn.graph";
  NNTensorType encoder = tensorOf(encoderValue);
  Type element = encoder.getElementType();
  int64_t width = featureSize(encoder);

  // The joiner: [S, D] -> [S, V], V covering the blank.
  FailureOr<StringRef> rows = verifyRowCallee(op, joiner, "joiner");
  if (failed(rows))
    return failure();
  auto rowType = [&](StringRef s, ArrayRef<int64_t> features, Type type) {
    SmallVector<StringRef> names{s};
    SmallVector<int64_t> sizes{-1};
    names.append(features.size(), StringRef());
    llvm::append_range(sizes, features);
    return NNTensorType::get(context, names, sizes, type);
  };
  NNTensorType joinerIn = rowType(*rows, {width}, element);
  if (joiner.getNumArguments() != 1 || joiner.getArgumentTypes()[0] != joinerIn)
    return emitOpError() << "joiner @" << joiner.getSymName()
                         << " must take one argument " << joinerIn
                         << " (the encoder frame plus the predictor output)";
  auto logits = joiner.getNumResults() == 1
                    ? dyn_cast<NNTensorType>(joiner.getResultTypes()[0])
                    : NNTensorType();
  if (!logits || logits.getRank() != 2 ||
      !isa<FloatType>(logits.getElementType()))
    return emitOpError() << "joiner @" << joiner.getSymName()
                         << " must return one [" << *rows
                         << ", V] float tensor of logits";
  int64_t classes = featureSize(logits);
  if (blank >= classes)
    return emitOpError() << "blank " << blank << " is not a class in [0, "
                         << classes << ") of joiner @" << joiner.getSymName();

  // The predictor, in its sequence form: (y [S, U] i32) -> [S, U, D],
  // every op with a step rule.
  if (std::optional<SequencePredictorDims> dims =
          matchSequencePredictor(predictor))
    return verifySequencePredictor(op, predictor, *dims, width, element);

  // The predictor in its step form: (y [S] i32, states...) -> ([S, D],
  // states...).
  rows = verifyRowCallee(op, predictor, "predictor");
  if (failed(rows))
    return failure();
  ArrayRef<Type> in = predictor.getArgumentTypes();
  ArrayRef<Type> out = predictor.getResultTypes();
  NNTensorType labelsIn = rowType(*rows, {}, IntegerType::get(context, 32));
  if (in.empty() || in[0] != labelsIn)
    return emitOpError() << "predictor @" << predictor.getSymName()
                         << " must take the row labels " << labelsIn
                         << " first";
  NNTensorType predOut = rowType(*rows, {width}, element);
  if (out.empty() || out[0] != predOut)
    return emitOpError() << "predictor @" << predictor.getSymName()
                         << " must return its output " << predOut
                         << " first (the encoder's width and element type)";
  if (in.size() != out.size())
    return emitOpError() << "predictor @" << predictor.getSymName() << " takes "
                         << in.size() - 1 << " state tensors and returns "
                         << out.size() - 1
                         << "; each state comes back with its type";
  for (unsigned i = 1; i < in.size(); ++i) {
    auto state = cast<NNTensorType>(in[i]);
    if (in[i] != out[i] || !isa<FloatType>(state.getElementType()))
      return emitOpError() << "predictor @" << predictor.getSymName()
                           << " state " << i - 1 << " must be a float ["
                           << *rows
                           << ", ...] tensor returned with the same type, "
                              "got "
                           << in[i] << " -> " << out[i];
  }
  return success();
}

LogicalResult
TransducerGreedyDecodeOp::verifySymbolUses(SymbolTableCollection &symbolTable) {
  return verifyTransducerCallees(*this, symbolTable, getPredictorAttr(),
                                 getJoinerAttr(), getEncoder(),
                                 static_cast<int64_t>(getBlank()));
}

SmallVector<StringRef, 1> TransducerGreedyDecodeOp::getProducedDims() {
  return {tensorOf(getLabels()).getDimName(1)};
}

SmallVector<FlatSymbolRefAttr, 2> TransducerGreedyDecodeOp::getCalleeGraphs() {
  return {getPredictorAttr(), getJoinerAttr()};
}

//===----------------------------------------------------------------------===//
// TransducerBeamSearchOp
//===----------------------------------------------------------------------===//

LogicalResult TransducerBeamSearchOp::verify() {
  return verifyTransducerDecoder(
      *this, getEncoder(), getLabels(), getScore(),
      static_cast<int64_t>(getBlank()), static_cast<int64_t>(getStart()),
      getTopology(), getMaxSymbols(), /*allowNBest=*/true);
}

LogicalResult
TransducerBeamSearchOp::verifySymbolUses(SymbolTableCollection &symbolTable) {
  return verifyTransducerCallees(*this, symbolTable, getPredictorAttr(),
                                 getJoinerAttr(), getEncoder(),
                                 static_cast<int64_t>(getBlank()));
}

SmallVector<StringRef, 1> TransducerBeamSearchOp::getProducedDims() {
  NNTensorType labels = tensorOf(getLabels());
  if (labels.getRank() == 3)
    return {labels.getDimName(1), labels.getDimName(2)};
  return {labels.getDimName(1)};
}

SmallVector<FlatSymbolRefAttr, 2> TransducerBeamSearchOp::getCalleeGraphs() {
  return {getPredictorAttr(), getJoinerAttr()};
}
