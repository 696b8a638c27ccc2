//===- DecodePatterns.cpp - decoding ops to linalg and scf ----------------===//
//
// Greedy CTC decoding: one linalg.generic finds each frame's best class
// and its score (a kernel on the GPU), then a loop per sequence collapses
// repeats, drops blanks and counts the labels, which binds the computed
// dim of the hypotheses (ConversionState::bindComputed).
//
// The CTC prefix beam search keeps its data-dependent part (candidates,
// merging, pruning, the tie order) in the runtime: the pattern hands the
// log-probabilities and lengths to `nn_search_ctc_prefix_v1`
// (runtime/search/SearchAbi.h) as addresses of their buffers
// (bufferization.to_memref) and wraps the buffers it fills
// (memref.alloc, then bufferization.to_tensor restrict) as the results.
// Addresses travel as i64, as for the GEMM calls (nn-gemm-to-blas).
//
//===----------------------------------------------------------------------===//

#include "lowering/conversion/Patterns.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Bufferization/IR/Bufferization.h"
#include "mlir/Dialect/LLVMIR/FunctionCallUtils.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"

#include <limits>

using namespace mlir;
using namespace mlir::nn;

using utils::IteratorType;

namespace {

NNTensorType typeOf(Value v) { return cast<NNTensorType>(v.getType()); }

/// The best class of each row of `x` ([P..., V] -> [P...] i32) and its
/// value, in two reductions LLVM vectorizes: the largest value ignoring
/// NaN (maxnum), then the lowest index holding it (a min over indices).
/// Neither depends on the order a backend reduces in. A row without a
/// number above -inf gives -inf and some index; the caller reads class 0
/// there (the op's rule).
std::pair<Value, Value> rowArgMax(LinalgBuilder &lb, Value x) {
  auto type = cast<RankedTensorType>(x.getType());
  unsigned rank = type.getRank();
  Value best = lb.reduceLast(
      x, {}, type.getElementType(), -std::numeric_limits<double>::infinity(),
      [](Scalar &s, Value value, ValueRange, Value acc) -> Value {
        return s.b.create<arith::MaxNumFOp>(s.loc, acc, value);
      });
  Value index = lb.reduceLast(
      x, best, lb.getBuilder().getI32Type(),
      static_cast<double>(std::numeric_limits<int32_t>::max()),
      [&](Scalar &s, Value value, ValueRange best, Value acc) -> Value {
        Value c = s.b.create<arith::IndexCastOp>(s.loc, s.i32Type(),
                                                 s.index(rank - 1));
        return s.minI(acc,
                      s.select(s.feq(value, best[0]), c,
                               s.i32(std::numeric_limits<int32_t>::max())));
      });
  return {best, index};
}

/// Where the frames of CTC scores are: the batch and sequence dims, and
/// whether the scores are packed rows.
struct CtcFrames {
  bool packed;
  StringRef batch, sequence;
};

CtcFrames ctcFrames(LinalgBuilder &lb, NNTensorType scoresType) {
  CtcFrames frames{scoresType.getRank() == 2, scoresType.getDimName(0), {}};
  if (frames.packed) {
    DimDeclAttr decl = lb.getDims().getDecls().lookup(frames.batch);
    frames.batch = decl.getBatch().getValue();
    frames.sequence = decl.getSource().getValue();
  } else {
    frames.sequence = scoresType.getDimName(1);
  }
  return frames;
}

class CtcGreedyDecodeConversion
    : public NNConversionPattern<CtcGreedyDecodeOp> {
public:
  using NNConversionPattern::NNConversionPattern;

  FailureOr<SmallVector<Value>> build(CtcGreedyDecodeOp op, OpAdaptor adaptor,
                                      LinalgBuilder &lb) const override {
    OpBuilder &b = lb.getBuilder();
    Location loc = lb.getLoc();
    NNTensorType scoresType = typeOf(op.getScores());
    NNTensorType labelsType = typeOf(op.getLabels());
    Type element = scoresType.getElementType();
    Type i32 = b.getI32Type();
    Type f64 = b.getF64Type();
    Value scores = adaptor.getScores();
    auto [best, bestClass] = rowArgMax(lb, scores);
    // A frame's best log-probability: from logits, the best logit minus
    // the frame's log-sum-exp, which is -log(sum exp(x - best)); the loop
    // below takes the log of the few frames it reads.
    bool fromLogits = op.getInputKind() == LossInput::logits;
    Value frameScore = best;
    if (fromLogits)
      frameScore =
          lb.reduceLast(scores, best, element, 0.0,
                        [](Scalar &s, Value x, ValueRange best, Value acc) {
                          return s.addReassoc(acc, s.exp(s.sub(x, best[0])));
                        });

    // Packed scores [N, V]: sequence b's frames are rows offset_b + t.
    CtcFrames frames = ctcFrames(lb, scoresType);
    bool packed = frames.packed;
    Value frameLengths = lb.getDims().lengths(frames.sequence);
    Value batch = lb.getDims().size(frames.batch);
    Value time = lb.getDims().size(frames.sequence);
    auto blank = static_cast<int64_t>(op.getBlank());
    Scalar outer{b, loc};
    // At most one label per frame; at least one column (a computed dim's
    // padded size is at least 1, like every padded size the runtime binds).
    Value width = outer.maxI(time, outer.idx(1));
    Value labels = lb.filled({batch, width}, i32, 0.0);
    Value lengths = lb.empty({batch}, i32);
    Value sequenceScores = lb.empty({batch}, element);

    auto batchLoop = b.create<scf::ForOp>(
        loc, outer.idx(0), batch, outer.idx(1),
        ValueRange{labels, lengths, sequenceScores, outer.idx(1), outer.idx(0)},
        [&](OpBuilder &nb, Location l, Value bi, ValueRange perBatch) {
          Scalar s{nb, l};
          Value frames =
              s.toIndex(nb.create<tensor::ExtractOp>(l, frameLengths, bi));
          Value offset = perBatch[4];
          auto frameLoop = nb.create<scf::ForOp>(
              l, s.idx(0), frames, s.idx(1),
              ValueRange{perBatch[0], s.idx(0), s.i32(-1), s.f(f64, 0.0)},
              [&](OpBuilder &tb, Location tl, Value t, ValueRange carried) {
                Scalar q{tb, tl};
                SmallVector<Value> at =
                    packed ? SmallVector<Value>{q.add(offset, t)}
                           : SmallVector<Value>{bi, t};
                // No number above -inf in the frame: class 0.
                Value top = tb.create<tensor::ExtractOp>(tl, best, at);
                Value c = q.select(
                    q.feq(top, q.f(element,
                                   -std::numeric_limits<double>::infinity())),
                    q.i32(0), tb.create<tensor::ExtractOp>(tl, bestClass, at));
                Value lp = tb.create<tensor::ExtractOp>(tl, frameScore, at);
                if (fromLogits)
                  lp = q.neg(q.log(lp));
                Value count = carried[1];
                Value emit = q.andI(q.ne(c, q.i32(blank)), q.ne(c, carried[2]));
                auto written = tb.create<scf::IfOp>(
                    tl, emit,
                    [&](OpBuilder &ib, Location il) {
                      Value row = ib.create<tensor::InsertOp>(
                          il, c, carried[0], ValueRange{bi, count});
                      ib.create<scf::YieldOp>(il, row);
                    },
                    [&](OpBuilder &ib, Location il) {
                      ib.create<scf::YieldOp>(il, carried[0]);
                    });
                Value next = q.add(count, tb.create<arith::IndexCastOp>(
                                              tl, tb.getIndexType(),
                                              tb.create<arith::ExtUIOp>(
                                                  tl, tb.getI32Type(), emit)));
                tb.create<scf::YieldOp>(
                    tl, ValueRange{written.getResult(0), next, c,
                                   q.add(carried[3], q.toF64(lp))});
              });
          Value count = frameLoop.getResult(1);
          Value newLengths = nb.create<tensor::InsertOp>(
              l, nb.create<arith::IndexCastOp>(l, i32, count), perBatch[1], bi);
          Value score = frameLoop.getResult(3);
          if (element != f64)
            score = nb.create<arith::TruncFOp>(l, element, score);
          Value newScores =
              nb.create<tensor::InsertOp>(l, score, perBatch[2], bi);
          nb.create<scf::YieldOp>(
              l, ValueRange{frameLoop.getResult(0), newLengths, newScores,
                            s.maxI(perBatch[3], count), s.add(offset, frames)});
        });
    Value longest = batchLoop.getResult(3);
    Value hypotheses = b.create<tensor::ExtractSliceOp>(
        loc, batchLoop.getResult(0),
        ArrayRef<OpFoldResult>{b.getIndexAttr(0), b.getIndexAttr(0)},
        ArrayRef<OpFoldResult>{batch, longest},
        ArrayRef<OpFoldResult>{b.getIndexAttr(1), b.getIndexAttr(1)});
    state.bindComputed(op, labelsType.getDimName(1),
                       DimValue{longest, batchLoop.getResult(1)}, lb);
    return SmallVector<Value>{hypotheses, batchLoop.getResult(2)};
  }
};

/// `tensor`'s buffer, viewed with a fully dynamic strided layout.
Value bufferOf(OpBuilder &b, Location loc, Value tensor) {
  auto type = cast<RankedTensorType>(tensor.getType());
  SmallVector<int64_t> dynamic(type.getRank(), ShapedType::kDynamic);
  auto layout =
      StridedLayoutAttr::get(b.getContext(), ShapedType::kDynamic, dynamic);
  return b.create<bufferization::ToMemrefOp>(
      loc, MemRefType::get(type.getShape(), type.getElementType(), layout),
      tensor, /*read_only=*/true);
}

/// A fresh buffer of `shape` for the runtime to fill.
Value outputBuffer(OpBuilder &b, Location loc, ArrayRef<Value> shape,
                   Type element) {
  SmallVector<int64_t> sizes(shape.size(), ShapedType::kDynamic);
  return b.create<memref::AllocOp>(loc, MemRefType::get(sizes, element), shape);
}

/// The address of `memref`'s first element (as i64) and its strides.
std::pair<Value, SmallVector<Value>> addressOf(OpBuilder &b, Location loc,
                                               Value memref) {
  auto metadata = b.create<memref::ExtractStridedMetadataOp>(loc, memref);
  Value base = b.create<memref::ExtractAlignedPointerAsIndexOp>(loc, memref);
  Scalar s{b, loc};
  int64_t bytes =
      cast<MemRefType>(memref.getType()).getElementTypeBitWidth() / 8;
  Value address = s.add(base, s.mul(metadata.getOffset(), s.idx(bytes)));
  Type i64 = b.getI64Type();
  SmallVector<Value> strides;
  for (Value stride : metadata.getStrides())
    strides.push_back(b.create<arith::IndexCastOp>(loc, i64, stride));
  return {b.create<arith::IndexCastOp>(loc, i64, address), strides};
}

/// A private function of `module` named `prefix` + a number not taken
/// yet, with memref arguments of `types`, whose body `body` builds (given
/// the function's name; the return is added after). Searches call the runtime
/// through such a function rather than inline: the call's memref operands keep
/// the buffers alive (deallocation places frees after the call), while the
/// runtime's entry point takes bare addresses.
func::FuncOp createCallSite(
    OpBuilder &b, ModuleOp module, StringRef prefix, TypeRange types,
    function_ref<void(OpBuilder &, ValueRange, StringRef name)> body) {
  OpBuilder::InsertionGuard guard(b);
  unsigned site = 0;
  std::string name;
  do
    name = (prefix + Twine(site++)).str();
  while (module.lookupSymbol(name));
  b.setInsertionPointToEnd(module.getBody());
  auto function = b.create<func::FuncOp>(module.getLoc(), name,
                                         b.getFunctionType(types, {}));
  function.setPrivate();
  Block *entry = function.addEntryBlock();
  b.setInsertionPointToStart(entry);
  body(b, entry->getArguments(), name);
  b.create<func::ReturnOp>(module.getLoc());
  return function;
}

/// The private declaration of runtime entry point `name`, added once per
/// module.
void declareRuntimeFunction(OpBuilder &b, ModuleOp module, StringRef name,
                            FunctionType type) {
  if (module.lookupSymbol(name))
    return;
  OpBuilder::InsertionGuard guard(b);
  b.setInsertionPointToStart(module.getBody());
  b.create<func::FuncOp>(module.getLoc(), name, type).setPrivate();
}

class CtcBeamSearchConversion : public NNConversionPattern<CtcBeamSearchOp> {
public:
  using NNConversionPattern::NNConversionPattern;

  FailureOr<SmallVector<Value>> build(CtcBeamSearchOp op, OpAdaptor adaptor,
                                      LinalgBuilder &lb) const override {
    OpBuilder &b = lb.getBuilder();
    Location loc = lb.getLoc();
    NNTensorType scoresType = typeOf(op.getScores());
    NNTensorType labelsType = typeOf(op.getLabels());
    Type element = scoresType.getElementType();
    Type i32 = b.getI32Type();
    Value logProbs = adaptor.getScores();
    if (op.getInputKind() == LossInput::logits)
      logProbs = lb.logSoftmax(logProbs);
    CtcFrames frames = ctcFrames(lb, scoresType);
    Value batch = lb.getDims().size(frames.batch);
    Value time = lb.getDims().size(frames.sequence);
    Scalar s{b, loc};
    auto beam = static_cast<int64_t>(op.getBeam());
    // At most one label per frame; at least one column, as every padded
    // size is.
    Value capacity = s.maxI(time, s.idx(1));
    Value beamSize = s.idx(beam);

    // The search's buffers: the log-probabilities and frame lengths it
    // reads, the N-best lists it writes (labels [B, beam, capacity],
    // lengths and scores [B, beam], counts [B]).
    SmallVector<Value> buffers{
        bufferOf(b, loc, logProbs),
        bufferOf(b, loc, lb.getDims().lengths(frames.sequence)),
        outputBuffer(b, loc, {batch, beamSize, capacity}, i32),
        outputBuffer(b, loc, {batch, beamSize}, i32),
        outputBuffer(b, loc, {batch, beamSize}, element),
        outputBuffer(b, loc, {batch}, i32)};
    auto module = op->getParentOfType<ModuleOp>();
    std::string origin = describeOrigin(loc);
    func::FuncOp site = createCallSite(
        b, module, "nn_ctc_prefix_search_site", ValueRange(buffers).getTypes(),
        [&](OpBuilder &fb, ValueRange args, StringRef name) {
          Location fl = module.getLoc();
          Scalar q{fb, fl};
          Type i64 = fb.getI64Type();
          auto constI32 = [&](int64_t v) -> Value {
            return fb.create<arith::ConstantIntOp>(fl, v, 32);
          };
          auto dim = [&](Value memref, int64_t axis) -> Value {
            return fb.create<arith::IndexCastOp>(
                fl, i64, fb.create<memref::DimOp>(fl, memref, axis));
          };
          auto [scores, strides] = addressOf(fb, fl, args[0]);
          Value zero = fb.create<arith::ConstantIntOp>(fl, 0, 64);
          double inf = std::numeric_limits<double>::infinity();
          auto threshold = [&](std::optional<APFloat> value) {
            return q.f(fb.getF64Type(), value ? value->convertToDouble() : inf);
          };
          // The runtime reads the origin as a C string: the global holds
          // its NUL (createGlobalString stores exactly the bytes given).
          SmallVector<Value> arguments{
              LLVM::createGlobalString(fl, fb, (name + "_origin").str(),
                                       origin + std::string(1, '\0'),
                                       LLVM::Linkage::Internal),
              scores,
              constI32(element.getIntOrFloatBitWidth()),
              dim(args[1], 0),
              dim(args[0], frames.packed ? 0 : 1),
              dim(args[0], scoresType.getRank() - 1),
              addressOf(fb, fl, args[1]).first,
              constI32(frames.packed ? 1 : 0),
              frames.packed ? zero : strides[0],
              strides[frames.packed ? 0 : 1],
              strides[frames.packed ? 1 : 2],
              constI32(static_cast<int64_t>(op.getBlank())),
              constI32(beam),
              constI32(op.getMerge() == CtcMerge::max ? 1 : 0),
              constI32(op.getTokenBeam()
                           ? static_cast<int64_t>(*op.getTokenBeam())
                           : 0),
              threshold(op.getTokenThreshold()),
              threshold(op.getScoreBeam()),
              addressOf(fb, fl, args[2]).first,
              dim(args[2], 2),
              addressOf(fb, fl, args[3]).first,
              addressOf(fb, fl, args[4]).first,
              addressOf(fb, fl, args[5]).first,
              zero};
          StringRef callee = "nn_search_ctc_prefix_v1";
          declareRuntimeFunction(
              fb, module, callee,
              fb.getFunctionType(ValueRange(arguments).getTypes(), {}));
          fb.create<func::CallOp>(fl, callee, TypeRange{}, arguments);
        });
    b.create<func::CallOp>(loc, site, buffers);
    auto filled = [&](Value buffer) -> Value {
      return b.create<bufferization::ToTensorOp>(loc, buffer,
                                                 /*restrict=*/true,
                                                 /*writable=*/true);
    };
    Value labels = filled(buffers[2]);
    Value labelLengths = filled(buffers[3]);
    Value hypothesisScores = filled(buffers[4]);
    if (labelsType.getRank() == 3)
      return nBest(op, lb, labels, labelLengths, hypothesisScores,
                   filled(buffers[5]), batch);

    // The best hypothesis of each sequence: row 0 of its N-best (length 0
    // and score -inf when it has none). Its padded size is the longest.
    auto longestLoop = b.create<scf::ForOp>(
        loc, s.idx(0), batch, s.idx(1), ValueRange{s.idx(1)},
        [&](OpBuilder &nb, Location l, Value bi, ValueRange acc) {
          Scalar q{nb, l};
          Value length = q.toIndex(nb.create<tensor::ExtractOp>(
              l, labelLengths, ValueRange{bi, q.idx(0)}));
          nb.create<scf::YieldOp>(l, q.maxI(acc[0], length));
        });
    Value longest = longestLoop.getResult(0);
    OpFoldResult zeroAttr = b.getIndexAttr(0), oneAttr = b.getIndexAttr(1);
    auto bestType = RankedTensorType::get(
        {ShapedType::kDynamic, ShapedType::kDynamic}, i32);
    Value best = b.create<tensor::ExtractSliceOp>(
        loc, bestType, labels,
        ArrayRef<OpFoldResult>{zeroAttr, zeroAttr, zeroAttr},
        ArrayRef<OpFoldResult>{batch, oneAttr, longest},
        ArrayRef<OpFoldResult>{oneAttr, oneAttr, oneAttr});
    auto column = [&](Value matrix, Type t) -> Value {
      return b.create<tensor::ExtractSliceOp>(
          loc, RankedTensorType::get({ShapedType::kDynamic}, t), matrix,
          ArrayRef<OpFoldResult>{zeroAttr, zeroAttr},
          ArrayRef<OpFoldResult>{batch, oneAttr},
          ArrayRef<OpFoldResult>{oneAttr, oneAttr});
    };
    state.bindComputed(op, labelsType.getDimName(1),
                       DimValue{longest, column(labelLengths, i32)}, lb);
    return SmallVector<Value>{best, column(hypothesisScores, element)};
  }

private:
  /// The N-best results: K's lengths are the runtime's counts, H =
  /// flatten(B, K) follows, and Y's lengths are the hypotheses' lengths in
  /// H's order; labels [B, beam, cap] and scores [B, beam] are sliced to
  /// the longest list and the longest hypothesis (each at least 1).
  SmallVector<Value> nBest(CtcBeamSearchOp op, LinalgBuilder &lb, Value labels,
                           Value labelLengths, Value scores, Value counts,
                           Value batch) const {
    OpBuilder &b = lb.getBuilder();
    Location loc = lb.getLoc();
    Scalar s{b, loc};
    NNTensorType labelsType = typeOf(op.getLabels());
    Type i32 = b.getI32Type();
    auto longestOf = [&](Value lengths, Value size) {
      return forLoop(s, s.idx(0), size, {s.idx(1)},
                     [&](Scalar &q, Value i, ValueRange acc) {
                       Value length = q.toIndex(
                           q.b.create<tensor::ExtractOp>(q.loc, lengths, i));
                       return SmallVector<Value>{q.maxI(acc[0], length)};
                     })[0];
    };
    StringRef beamDim = labelsType.getDimName(1);
    StringRef labelDim = labelsType.getDimName(2);
    Value listSize = longestOf(counts, batch);
    state.bindComputed(op, beamDim, DimValue{listSize, counts}, lb);

    // Entry h of H is hypothesis h - offset(owner(h)) of sequence owner(h).
    StringRef flatName = lb.getDims().getDecls().lookup(labelDim).getBatch();
    DimValue flat = lb.getDims().lookup(flatName);
    Value offsets = flat.offsets;
    Value lengths =
        lb.map(NNTensorType::get(b.getContext(), {flatName}, {0}, i32),
               flat.owner, [&](Scalar &q, ValueRange args) -> Value {
                 Value owner = q.toIndex(args[0]);
                 Value first = q.toIndex(
                     q.b.create<tensor::ExtractOp>(q.loc, offsets, owner));
                 Value k = q.sub(q.index(0), first);
                 return q.b.create<tensor::ExtractOp>(q.loc, labelLengths,
                                                      ValueRange{owner, k});
               });
    Value longest = longestOf(lengths, flat.size);
    state.bindComputed(op, labelDim, DimValue{longest, lengths}, lb);

    OpFoldResult zero = b.getIndexAttr(0), one = b.getIndexAttr(1);
    Value nBestLabels = b.create<tensor::ExtractSliceOp>(
        loc,
        RankedTensorType::get(SmallVector<int64_t>(3, ShapedType::kDynamic),
                              i32),
        labels, ArrayRef<OpFoldResult>{zero, zero, zero},
        ArrayRef<OpFoldResult>{batch, listSize, longest},
        ArrayRef<OpFoldResult>{one, one, one});
    Value nBestScores = b.create<tensor::ExtractSliceOp>(
        loc,
        RankedTensorType::get(
            SmallVector<int64_t>(2, ShapedType::kDynamic),
            cast<RankedTensorType>(scores.getType()).getElementType()),
        scores, ArrayRef<OpFoldResult>{zero, zero},
        ArrayRef<OpFoldResult>{batch, listSize},
        ArrayRef<OpFoldResult>{one, one});
    return {nBestLabels, nBestScores};
  }
};

/// Rows of `fresh` where `mask` [B] i32 is non-zero, rows of `old`
/// elsewhere (both [B, ...], of one type).
Value selectRows(LinalgBuilder &lb, Value mask, Value fresh, Value old) {
  OpBuilder &b = lb.getBuilder();
  auto type = cast<RankedTensorType>(old.getType());
  unsigned rank = type.getRank();
  Value init = lb.empty(tensor::getMixedSizes(b, lb.getLoc(), old),
                        type.getElementType());
  AffineMap id = b.getMultiDimIdentityMap(rank);
  AffineMap row = AffineMap::get(rank, 0, b.getAffineDimExpr(0));
  return lb.generic(init.getType(), {mask, fresh, old}, init, {row, id, id, id},
                    SmallVector<IteratorType>(rank, IteratorType::parallel),
                    [&](OpBuilder &nested, Location l, ValueRange args) {
                      Scalar q{nested, l};
                      nested.create<linalg::YieldOp>(
                          l,
                          q.select(q.ne(args[0], q.i32(0)), args[1], args[2]));
                    });
}

/// A call of the function row-batch callee `callee` lowers to, on `rows`
/// rows: its one root dim (the row batch), `operands`, then the
/// parameters it reads (the caller's ABI includes them, AbiBuilder).
SmallVector<Value> callOnRows(LinalgBuilder &lb, const GraphAbi &callee,
                              Value rows, ValueRange operands) {
  SmallVector<Value> arguments{rows};
  llvm::append_range(arguments, operands);
  for (ParameterOp parameter : callee.parameters)
    arguments.push_back(
        lb.getDims().lookupParameter(parameter.getSymNameAttr()));
  SmallVector<Type> results;
  for (Type type : callee.graph.getResultTypes())
    results.push_back(GraphAbi::loweredType(cast<NNTensorType>(type)));
  auto call = lb.getBuilder().create<func::CallOp>(
      lb.getLoc(), callee.graph.getSymName(), results, arguments);
  return SmallVector<Value>(call.getResults());
}

/// Greedy transducer decoding, batched: a loop over the padded frames and,
/// per frame, over the decision rounds (max_symbols for rnnt, one for
/// rna). A round forms encoder[b, t] + pred[b] for the rows still deciding
/// at t, calls the joiner on all B rows, takes each row's best class
/// (rowArgMax, as greedy CTC) and, in a scalar loop over the rows, scores
/// it and emits a label; if any row emitted, the predictor runs on all
/// rows and only the emitting rows take its output and state. Rounds stop
/// once no row emitted, so a frame where every row chose the blank costs
/// one joiner call.
class TransducerGreedyDecodeConversion
    : public NNConversionPattern<TransducerGreedyDecodeOp> {
public:
  using NNConversionPattern::NNConversionPattern;

  FailureOr<SmallVector<Value>> build(TransducerGreedyDecodeOp op,
                                      OpAdaptor adaptor,
                                      LinalgBuilder &lb) const override {
    const GraphAbi *predictor = state.getAbis().lookup(op.getPredictor());
    const GraphAbi *joiner = state.getAbis().lookup(op.getJoiner());
    if (!predictor || !joiner)
      return failure();
    OpBuilder &b = lb.getBuilder();
    Location loc = lb.getLoc();
    NNTensorType encoderType = typeOf(op.getEncoder());
    NNTensorType labelsType = typeOf(op.getLabels());
    Type element = encoderType.getElementType();
    Type i32 = b.getI32Type(), f64 = b.getF64Type();
    Value encoder = adaptor.getEncoder();
    Value batch = lb.getDims().size(encoderType.getDimName(0));
    Value time = lb.getDims().size(encoderType.getDimName(1));
    Value frameLengths = lb.getDims().lengths(encoderType.getDimName(1));
    auto blank = static_cast<int64_t>(op.getBlank());
    auto start = static_cast<int64_t>(op.getStart());
    int64_t rounds = op.getRoundsPerFrame();
    Scalar s = lb.scalar();

    // At most `rounds` labels per frame; at least one column.
    Value width = s.maxI(s.mul(time, s.idx(rounds)), s.idx(1));
    Value labels = lb.filled({batch, width}, i32, 0.0);
    Value counts = lb.filled({batch}, i32, 0.0);
    Value scores = lb.filled({batch}, f64, 0.0);
    // The predictor's first step: the start symbol on zero states.
    SmallVector<Value> stepInputs{lb.filled({batch}, i32, (double)start)};
    for (Type type : predictor->graph.getArgumentTypes().drop_front()) {
      auto stateType = cast<NNTensorType>(type);
      SmallVector<OpFoldResult> shape{batch};
      for (unsigned i = 1; i < stateType.getRank(); ++i)
        shape.push_back(b.getIndexAttr(stateType.getStaticSize(i)));
      stepInputs.push_back(lb.filled(shape, stateType.getElementType(), 0.0));
    }
    SmallVector<Value> predicted =
        callOnRows(lb, *predictor, batch, stepInputs);
    unsigned numStates = predicted.size() - 1;

    // Carried over frames: labels, counts, scores, longest, the predictor's
    // output and states.
    SmallVector<Value> init{labels, counts, scores, s.idx(1)};
    llvm::append_range(init, predicted);
    SmallVector<Value> decoded = forLoop(
        s, s.idx(0), time, init, [&](Scalar &ts, Value t, ValueRange frame) {
          LinalgBuilder tb(ts.b, ts.loc, lb.getDims());
          // Rows deciding at t: those with frames left.
          Value going = tb.generic(
              counts.getType(), {}, tb.empty({batch}, i32),
              {ts.b.getMultiDimIdentityMap(1)}, {IteratorType::parallel},
              [&](OpBuilder &nested, Location l, ValueRange) {
                Scalar q{nested, l};
                Value length = nested.create<tensor::ExtractOp>(l, frameLengths,
                                                                q.index(0));
                nested.create<linalg::YieldOp>(
                    l,
                    q.select(q.lt(t, q.toIndex(length)), q.i32(1), q.i32(0)));
              });
          SmallVector<Value> roundInit(frame);
          roundInit.push_back(going);
          roundInit.push_back(ts.b.create<arith::ConstantIntOp>(ts.loc, 1, 1));
          SmallVector<Value> after =
              forLoop(ts, ts.idx(0), ts.idx(rounds), roundInit,
                      [&](Scalar &rs, Value, ValueRange carried) {
                        auto decide = rs.b.create<scf::IfOp>(
                            rs.loc, carried.back(),
                            [&](OpBuilder &ib, Location il) {
                              Scalar is{ib, il};
                              ib.create<scf::YieldOp>(
                                  il, round(is, lb.getDims(), t, carried, batch,
                                            encoder, *predictor, *joiner, blank,
                                            start, numStates));
                            },
                            [&](OpBuilder &ib, Location il) {
                              ib.create<scf::YieldOp>(il, carried);
                            });
                        return SmallVector<Value>(decide.getResults());
                      });
          after.resize(after.size() - 2);
          return after;
        });

    Value longest = decoded[3];
    Value hypotheses = b.create<tensor::ExtractSliceOp>(
        loc, decoded[0],
        ArrayRef<OpFoldResult>{b.getIndexAttr(0), b.getIndexAttr(0)},
        ArrayRef<OpFoldResult>{batch, longest},
        ArrayRef<OpFoldResult>{b.getIndexAttr(1), b.getIndexAttr(1)});
    Value score = decoded[2];
    if (element != f64)
      score = lb.generic(
          RankedTensorType::get({ShapedType::kDynamic}, element), score,
          lb.empty({batch}, element),
          {b.getMultiDimIdentityMap(1), b.getMultiDimIdentityMap(1)},
          {IteratorType::parallel},
          [&](OpBuilder &nested, Location l, ValueRange args) {
            nested.create<linalg::YieldOp>(
                l, nested.create<arith::TruncFOp>(l, element, args[0])
                       .getResult());
          });
    state.bindComputed(op, labelsType.getDimName(1),
                       DimValue{longest, decoded[1]}, lb);
    return SmallVector<Value>{hypotheses, score};
  }

private:
  /// One decision round at frame `t`. `carried` holds labels, counts,
  /// scores, longest, the predictor's output, its states, the rows still
  /// deciding ([B] i32) and whether any is; returns them updated.
  static SmallVector<Value> round(Scalar &s, const BoundDims &dims, Value t,
                                  ValueRange carried, Value batch,
                                  Value encoder, const GraphAbi &predictor,
                                  const GraphAbi &joiner, int64_t blank,
                                  int64_t start, unsigned numStates) {
    OpBuilder &b = s.b;
    Location loc = s.loc;
    Value labels = carried[0], counts = carried[1], scores = carried[2],
          longest = carried[3], output = carried[4];
    ValueRange states = carried.slice(5, numStates);
    Value going = carried[5 + numStates];
    LinalgBuilder lb(b, loc, dims);

    // The joiner's input: encoder frame t plus the predictor output, for
    // the rows deciding at t (the others read no frame: padding may hold
    // NaN); then each row's best class and its log-probability.
    auto outputType = cast<RankedTensorType>(output.getType());
    Value init = lb.empty(tensor::getMixedSizes(b, loc, output),
                          outputType.getElementType());
    AffineMap id = b.getMultiDimIdentityMap(2);
    Value joined = lb.generic(
        init.getType(), {output}, init, {id, id},
        {IteratorType::parallel, IteratorType::parallel},
        [&](OpBuilder &nested, Location l, ValueRange args) {
          Scalar q{nested, l};
          Value row = q.index(0);
          Value deciding =
              q.ne(nested.create<tensor::ExtractOp>(l, going, row), q.i32(0));
          Value frame = nested.create<tensor::ExtractOp>(
              l, encoder, ValueRange{row, t, q.index(1)});
          nested.create<linalg::YieldOp>(
              l, q.select(deciding, q.add(frame, args[0]), args[0]));
        });
    Value logits = callOnRows(lb, joiner, batch, {joined})[0];
    Type logitType = cast<RankedTensorType>(logits.getType()).getElementType();
    auto [best, bestClass] = rowArgMax(lb, logits);
    Value sumExp =
        lb.reduceLast(logits, best, logitType, 0.0,
                      [](Scalar &q, Value x, ValueRange best, Value acc) {
                        return q.addReassoc(acc, q.exp(q.sub(x, best[0])));
                      });

    // Per row: score the decision, emit a label. `going` becomes the rows
    // that emitted (they decide again at t under rnnt), `next` the
    // predictor's input (the label, or start where it is not used).
    Value next = lb.empty({batch}, b.getI32Type());
    Value falseValue = b.create<arith::ConstantIntOp>(loc, 0, 1);
    SmallVector<Value> rows = forLoop(
        s, s.idx(0), batch,
        {labels, counts, scores, going, next, longest, falseValue},
        [&](Scalar &q, Value bi, ValueRange acc) {
          OpBuilder &rb = q.b;
          Location rl = q.loc;
          Value deciding =
              q.ne(rb.create<tensor::ExtractOp>(rl, acc[3], bi), q.i32(0));
          Value top = rb.create<tensor::ExtractOp>(rl, best, bi);
          Value c = q.select(
              q.feq(top,
                    q.f(logitType, -std::numeric_limits<double>::infinity())),
              q.i32(0), rb.create<tensor::ExtractOp>(rl, bestClass, bi));
          Value logProb = q.neg(
              q.toF64(q.log(rb.create<tensor::ExtractOp>(rl, sumExp, bi))));
          Value score = rb.create<tensor::ExtractOp>(rl, acc[2], bi);
          Value newScores = rb.create<tensor::InsertOp>(
              rl, q.select(deciding, q.add(score, logProb), score), acc[2], bi);
          Value emit = q.andI(deciding, q.ne(c, q.i32(blank)));
          Value count = q.toIndex(rb.create<tensor::ExtractOp>(rl, acc[1], bi));
          auto written = rb.create<scf::IfOp>(
              rl, emit,
              [&](OpBuilder &ib, Location il) {
                ib.create<scf::YieldOp>(
                    il, ib.create<tensor::InsertOp>(il, c, acc[0],
                                                    ValueRange{bi, count})
                            .getResult());
              },
              [&](OpBuilder &ib, Location il) {
                ib.create<scf::YieldOp>(il, acc[0]);
              });
          Value emitted = rb.create<arith::ExtUIOp>(rl, q.i32Type(), emit);
          Value newCount = q.add(count, q.toIndex(emitted));
          Value newCounts = rb.create<tensor::InsertOp>(
              rl, rb.create<arith::IndexCastOp>(rl, q.i32Type(), newCount),
              acc[1], bi);
          Value newGoing = rb.create<tensor::InsertOp>(rl, emitted, acc[3], bi);
          Value newNext = rb.create<tensor::InsertOp>(
              rl, q.select(emit, c, q.i32(start)), acc[4], bi);
          return SmallVector<Value>{written.getResult(0),
                                    newCounts,
                                    newScores,
                                    newGoing,
                                    newNext,
                                    q.maxI(acc[5], newCount),
                                    rb.create<arith::OrIOp>(rl, acc[6], emit)};
        });
    Value anyEmitted = rows[6];
    going = rows[3];

    // The emitting rows advance the predictor; the others keep theirs.
    SmallVector<Value> kept{output};
    llvm::append_range(kept, states);
    auto step = b.create<scf::IfOp>(
        loc, anyEmitted,
        [&](OpBuilder &ib, Location il) {
          LinalgBuilder ilb(ib, il, dims);
          SmallVector<Value> operands{rows[4]};
          llvm::append_range(operands, states);
          SmallVector<Value> fresh =
              callOnRows(ilb, predictor, batch, operands);
          SmallVector<Value> merged;
          for (auto [f, old] : llvm::zip(fresh, kept))
            merged.push_back(selectRows(ilb, going, f, old));
          ib.create<scf::YieldOp>(il, merged);
        },
        [&](OpBuilder &ib, Location il) { ib.create<scf::YieldOp>(il, kept); });
    SmallVector<Value> result{rows[0], rows[1], rows[2], rows[5]};
    llvm::append_range(result, step.getResults());
    result.push_back(going);
    result.push_back(anyEmitted);
    return result;
  }
};
} // namespace

void mlir::nn::populateDecodeConversionPatterns(const TypeConverter &converter,
                                                ConversionState &state,
                                                RewritePatternSet &patterns) {
  patterns.add<CtcGreedyDecodeConversion, CtcBeamSearchConversion>(converter,
                                                                   state);
  patterns.add<TransducerGreedyDecodeConversion>(converter, state);
}
