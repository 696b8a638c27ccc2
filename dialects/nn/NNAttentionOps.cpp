//===- NNAttentionOps.cpp - attention over sequence dims ------------------===//
//
// Verifiers, result type inference and interfaces of nn.attention,
// nn.attention_with_stats and nn.attention_grad, which share their checks,
// and of the position
// embeddings of attention: nn.rotary, and nn.relative_positions (with its
// gradient), the table of relative positions.
//
//===----------------------------------------------------------------------===//

#include "dialects/nn/NNOps.h"

#include "dialects/nn/NNOpsUtils.h"

#include <cmath>

using namespace mlir;
using namespace mlir::nn;
using namespace mlir::nn::detail;

namespace {

/// The attributes both ops carry, read from either.
struct AttentionAttributes {
  int64_t heads;
  bool causal;
  std::optional<uint64_t> leftContext, rightContext, chunkSize, leftChunks;

  /// The relative positions' operands: none, or the position queries
  /// and the table.
  ValueRange relative;
  /// The dropout seed (training mode) or null, whether a dropout rate is
  /// given, and the dropout key.
  Value seed;
  bool dropout;
  int64_t dropoutKey;

  template <typename OpTy> static AttentionAttributes of(OpTy op) {
    return {static_cast<int64_t>(op.getHeads()),
            op.getCausal(),
            op.getLeftContext(),
            op.getRightContext(),
            op.getChunkSize(),
            op.getLeftChunks(),
            op.getRelative(),
            op.getSeed(),
            op.getDropout().has_value(),
            static_cast<int64_t>(op.getDropoutKey())};
  }

  bool hasMask() const {
    return causal || leftContext || rightContext || chunkSize;
  }
};

} // namespace

/// The relative positions' operands, if any: position queries of the
/// query's type and a table `[2c + 1, H * Dk]` without position axes, for
/// self-attention.
static LogicalResult verifyRelativePositions(Operation *op, Value query,
                                             ValueRange relative) {
  if (relative.empty())
    return success();
  if (relative.size() != 2)
    return op->emitOpError() << "relative takes two operands (the position "
                                "queries and the table), got "
                             << relative.size();
  if (relative[0].getType() != query.getType())
    return op->emitOpError()
           << "position queries must have the query's type " << query.getType()
           << ", got " << relative[0].getType();
  NNTensorType table = tensorOf(relative[1]);
  int64_t width = featureSize(tensorOf(query));
  if (!table.hasStaticShape() || table.getRank() != 2 ||
      table.getNumPositionDims() != 0 || table.getStaticSize(0) % 2 != 1 ||
      table.getStaticSize(1) != width ||
      table.getElementType() != tensorOf(query).getElementType())
    return op->emitOpError()
           << "positions must be a static [2c + 1, " << width << "] table of "
           << tensorOf(query).getElementType() << ", got "
           << relative[1].getType();
  return success();
}

/// The checks nn.attention and nn.attention_grad share; returns the type
/// of the attention's result (`[Tq positions..., H * Dv]`).
static FailureOr<NNTensorType>
verifyAttentionOperands(Operation *op, Value query, Value key, Value value,
                        const AttentionAttributes &attributes) {
  FailureOr<DimContext> context = DimContext::get(op);
  if (failed(context))
    return failure();
  // One diagnostic: each operand is checked only after the ones before it
  // passed.
  FailureOr<Positions> q, k, v;
  for (auto [positions, operand, what] :
       {std::make_tuple(&q, query, "query"), std::make_tuple(&k, key, "key"),
        std::make_tuple(&v, value, "value")}) {
    *positions = requireSequenceFrames(op, *context, operand, what);
    if (failed(*positions) || failed(requireOneFeatureAxis(op, operand, what)))
      return failure();
  }
  for (auto [positions, what, operand] :
       {std::make_tuple(*k, "key", key), std::make_tuple(*v, "value", value)}) {
    if (positions.kind != q->kind)
      return op->emitOpError()
             << what << " must be "
             << (q->kind == PositionKind::Packed ? "packed" : "padded")
             << " like the query, got " << operand.getType();
    if (positions.batch != q->batch)
      return op->emitOpError()
             << what << " batch '" << positions.batch
             << "' differs from the query's '" << q->batch << "'";
  }
  if (v->sequences[0] != k->sequences[0])
    return op->emitOpError() << "value must be over the key's sequence dim '"
                             << k->sequences[0] << "', got " << value.getType();
  Type element = tensorOf(query).getElementType();
  if (tensorOf(key).getElementType() != element ||
      tensorOf(value).getElementType() != element)
    return op->emitOpError()
           << "query, key and value must have one element type, got "
           << query.getType() << ", " << key.getType() << ", "
           << value.getType();
  int64_t heads = attributes.heads;
  int64_t queryWidth = featureSize(tensorOf(query));
  int64_t valueWidth = featureSize(tensorOf(value));
  if (featureSize(tensorOf(key)) != queryWidth)
    return op->emitOpError() << "key must have the query's " << queryWidth
                             << " features, got " << key.getType();
  if (queryWidth % heads != 0 || valueWidth % heads != 0 ||
      queryWidth < heads || valueWidth < heads)
    return op->emitOpError()
           << heads << " heads must divide the query's " << queryWidth
           << " and the value's " << valueWidth << " features";
  if (attributes.hasMask() && k->sequences[0] != q->sequences[0])
    return op->emitOpError()
           << "a mask needs self-attention: key over the query's sequence dim '"
           << q->sequences[0] << "', got " << key.getType();
  if (!attributes.relative.empty() && k->sequences[0] != q->sequences[0])
    return op->emitOpError() << "relative positions need self-attention: key "
                                "over the query's sequence dim '"
                             << q->sequences[0] << "', got " << key.getType();
  if (failed(verifyRelativePositions(op, query, attributes.relative)))
    return failure();
  if (attributes.seed) {
    if (failed(requireMaskSeed(op, attributes.seed)))
      return failure();
    if (!attributes.dropout)
      return op->emitOpError() << "a seed needs dropout";
  }
  if (attributes.dropoutKey != 0 && !attributes.dropout)
    return op->emitOpError() << "dropout_key needs dropout";
  if (attributes.causal && attributes.rightContext)
    return op->emitOpError() << "causal and right_context exclude each other "
                                "(causal is right_context 0)";
  if (attributes.leftChunks && !attributes.chunkSize)
    return op->emitOpError() << "left_chunks needs chunk_size";
  // Frame indices are at most 2^31 - 1 (sizes are 32-bit): larger
  // contexts mean nothing more, and the index arithmetic of the mask must
  // not overflow.
  for (auto [value, name] :
       {std::make_pair(attributes.leftContext, "left_context"),
        std::make_pair(attributes.rightContext, "right_context"),
        std::make_pair(attributes.chunkSize, "chunk_size"),
        std::make_pair(attributes.leftChunks, "left_chunks")})
    if (value && *value > static_cast<uint64_t>(NNTensorType::kMaxStaticSize))
      return op->emitOpError()
             << name << " must be at most " << NNTensorType::kMaxStaticSize
             << ", got " << *value;
  return inferredType(op->getContext(), tensorOf(query).getDims(), true,
                      valueWidth, element);
}

/// 1 / sqrt(Dk) unless the op says otherwise.
static double scaleOf(std::optional<APFloat> scale, Value query,
                      int64_t heads) {
  if (scale)
    return scale->convertToDouble();
  return 1.0 /
         std::sqrt(static_cast<double>(featureSize(tensorOf(query)) / heads));
}

/// Whether `forward` (nn.attention or nn.attention_with_stats) computes
/// the attention whose gradient `grad` is. The scale is compared by value:
/// one op may state the default scale the other leaves out.
template <typename Forward>
static bool computesAttentionOf(Forward forward, AttentionGradOp grad) {
  return forward.getQuery() == grad.getQuery() &&
         forward.getKey() == grad.getKey() &&
         forward.getValue() == grad.getValue() &&
         forward.getRelative() == grad.getRelative() &&
         forward.getSeed() == grad.getSeed() &&
         forward.getHeads() == grad.getHeads() &&
         forward.getScaleOrDefault() == grad.getScaleOrDefault() &&
         forward.getCausal() == grad.getCausal() &&
         forward.getLeftContext() == grad.getLeftContext() &&
         forward.getRightContext() == grad.getRightContext() &&
         forward.getChunkSize() == grad.getChunkSize() &&
         forward.getLeftChunks() == grad.getLeftChunks() &&
         forward.getDropoutAttr() == grad.getDropoutAttr() &&
         forward.getDropoutKey() == grad.getDropoutKey();
}

//===----------------------------------------------------------------------===//
// AttentionOp
//===----------------------------------------------------------------------===//

/// The checks of an attention's operands and of its result `result`.
template <typename OpTy>
static LogicalResult verifyAttention(OpTy op, Value result) {
  FailureOr<NNTensorType> type =
      verifyAttentionOperands(op, op.getQuery(), op.getKey(), op.getValue(),
                              AttentionAttributes::of(op));
  if (failed(type))
    return failure();
  if (tensorOf(result) != *type)
    return op.emitOpError()
           << "result must be " << *type << ", got " << result.getType();
  return success();
}

LogicalResult AttentionOp::verify() {
  return verifyAttention(*this, getResult());
}

LogicalResult AttentionOp::inferReturnTypes(
    MLIRContext *context, std::optional<Location> location, ValueRange operands,
    DictionaryAttr attributes, OpaqueProperties properties, RegionRange regions,
    SmallVectorImpl<Type> &inferred) {
  FailureOr<NNTensorType> query =
      inferenceOperand(location, operands, 0, "query");
  FailureOr<NNTensorType> value =
      inferenceOperand(location, operands, 2, "value");
  if (failed(query) || failed(value))
    return failure();
  FailureOr<int64_t> width = inferenceStaticSize(
      location, *value, -1, "value must have a static feature axis");
  if (failed(width))
    return failure();
  inferred.push_back(inferredType(context, query->getDims(), true, *width,
                                  query->getElementType()));
  return success();
}

double AttentionOp::getScaleOrDefault() {
  return scaleOf(getScale(), getQuery(), getHeads());
}

bool AttentionOp::isForwardOf(AttentionGradOp grad) {
  return computesAttentionOf(*this, grad);
}

bool AttentionOp::hasPackedForm() { return true; }

/// The padded form writes every padded query frame's output (zero); its
/// scores and GEMMs already run on each sequence's own frames only.
double AttentionOp::getPaddedFrameWork() {
  return featureSize(tensorOf(getResult()));
}

//===----------------------------------------------------------------------===//
// AttentionWithStatsOp
//===----------------------------------------------------------------------===//

NNTensorType AttentionWithStatsOp::getStatsType(NNTensorType query,
                                                int64_t heads) {
  return inferredType(query.getContext(), query.getDims(), true, heads,
                      query.getElementType());
}

LogicalResult AttentionWithStatsOp::verify() {
  if (failed(verifyAttention(*this, getResult())))
    return failure();
  NNTensorType stats = getStatsType(tensorOf(getQuery()), getHeads());
  if (tensorOf(getStats()) != stats)
    return emitOpError() << "stats must be " << stats << ", got "
                         << getStats().getType();
  return success();
}

double AttentionWithStatsOp::getScaleOrDefault() {
  return scaleOf(getScale(), getQuery(), getHeads());
}

bool AttentionWithStatsOp::isForwardOf(AttentionGradOp grad) {
  return computesAttentionOf(*this, grad);
}

/// Unused stats (their gradient folded away) are not computed.
LogicalResult AttentionWithStatsOp::canonicalize(AttentionWithStatsOp op,
                                                 PatternRewriter &rewriter) {
  if (!op.getStats().use_empty())
    return failure();
  rewriter.replaceOpWithNewOp<AttentionOp>(
      op, op.getResult().getType(), op.getQuery(), op.getKey(), op.getValue(),
      op.getRelative(), op.getSeed(), op.getHeadsAttr(), op.getScaleAttr(),
      op.getCausalAttr(), op.getLeftContextAttr(), op.getRightContextAttr(),
      op.getChunkSizeAttr(), op.getLeftChunksAttr(), op.getDropoutAttr(),
      op.getDropoutKeyAttr());
  // The stats had no use: only the result is replaced.
  return success();
}

//===----------------------------------------------------------------------===//
// RotaryOp
//===----------------------------------------------------------------------===//

LogicalResult RotaryOp::verify() {
  FailureOr<DimContext> context = DimContext::get(*this);
  if (failed(context) ||
      failed(requireSequenceFrames(*this, *context, getInput(), "input")) ||
      failed(requireOneFeatureAxis(*this, getInput(), "input")))
    return failure();
  int64_t features = featureSize(tensorOf(getInput()));
  auto heads = static_cast<int64_t>(getHeads());
  if (features % heads != 0 || (features / heads) % 2 != 0 || features == 0)
    return emitOpError() << heads << " heads must divide the input's "
                         << features << " features into heads of an even size";
  return success();
}

bool RotaryOp::hasPackedForm() { return true; }

/// The padded form rotates every padded frame too (a sine, a cosine and
/// four multiply-adds per pair).
double RotaryOp::getPaddedFrameWork() {
  return 4.0 * featureSize(tensorOf(getResult()));
}

//===----------------------------------------------------------------------===//
// AttentionGradOp
//===----------------------------------------------------------------------===//

LogicalResult AttentionGradOp::verify() {
  FailureOr<NNTensorType> result = verifyAttentionOperands(
      *this, getQuery(), getKey(), getValue(), AttentionAttributes::of(*this));
  if (failed(result))
    return failure();
  if (tensorOf(getGrad()) != *result)
    return emitOpError() << "grad must be the attention's result type "
                         << *result << ", got " << getGrad().getType();
  if (!getSavedOutput() != !getSavedStats())
    return emitOpError() << "saved takes the forward's result and its stats";
  if (!getSavedOutput())
    return success();
  if (tensorOf(getSavedOutput()) != *result)
    return emitOpError() << "the saved output must be the attention's result "
                            "type "
                         << *result << ", got " << getSavedOutput().getType();
  NNTensorType stats =
      AttentionWithStatsOp::getStatsType(tensorOf(getQuery()), getHeads());
  if (tensorOf(getSavedStats()) != stats)
    return emitOpError() << "the saved stats must be " << stats << ", got "
                         << getSavedStats().getType();
  // The lowering trusts them: output and stats of this very attention.
  auto forward = getSavedOutput().getDefiningOp<AttentionWithStatsOp>();
  if (!forward || forward.getResult() != getSavedOutput() ||
      forward.getStats() != getSavedStats() || !forward.isForwardOf(*this))
    return emitOpError() << "saved takes the result and the stats of one "
                            "nn.attention_with_stats of the same operands "
                            "and attributes";
  return success();
}

/// Each gradient has its operand's type (the relative ones included; the
/// seed has none).
LogicalResult AttentionGradOp::inferReturnTypes(
    MLIRContext *, std::optional<Location> location, ValueRange operands,
    DictionaryAttr attributes, OpaqueProperties properties, RegionRange regions,
    SmallVectorImpl<Type> &inferred) {
  Adaptor adaptor(operands, attributes, properties, regions);
  if (operands.size() < 4)
    return emitOptionalError(location, "attention_grad takes grad, query, key "
                                       "and value");
  for (Value operand :
       {adaptor.getQuery(), adaptor.getKey(), adaptor.getValue()})
    inferred.push_back(operand.getType());
  llvm::append_range(inferred, adaptor.getRelative().getTypes());
  return success();
}

double AttentionGradOp::getScaleOrDefault() {
  return scaleOf(getScale(), getQuery(), getHeads());
}

//===----------------------------------------------------------------------===//
// RelativePositionsOp
//===----------------------------------------------------------------------===//

/// A static matrix without position axes: `[rows, cols]`.
static bool isStaticMatrix(NNTensorType type) {
  return type.hasStaticShape() && type.getRank() == 2 &&
         type.getNumPositionDims() == 0;
}

/// `weight` `[O, E]` (E even) and the table `[2c + 1, O]` it gives.
static LogicalResult verifyPositionTable(Operation *op, Value weight,
                                         Value table, StringRef what) {
  NNTensorType w = tensorOf(weight), t = tensorOf(table);
  if (!isStaticMatrix(w) || w.getStaticSize(1) % 2 != 0 ||
      w.getStaticSize(1) == 0)
    return op->emitOpError()
           << "weight must be a static [out, embedding] matrix with an even, "
              "nonzero embedding size, got "
           << weight.getType();
  if (!isStaticMatrix(t) || t.getStaticSize(0) % 2 != 1 ||
      t.getStaticSize(1) != w.getStaticSize(0) ||
      t.getElementType() != w.getElementType())
    return op->emitOpError()
           << what << " must be a static [2c + 1, " << w.getStaticSize(0)
           << "] table of " << w.getElementType() << ", got "
           << table.getType();
  return success();
}

LogicalResult RelativePositionsOp::verify() {
  return verifyPositionTable(*this, getWeight(), getResult(), "result");
}

LogicalResult RelativePositionsGradOp::verify() {
  return verifyPositionTable(*this, getWeight(), getGrad(), "grad");
}
