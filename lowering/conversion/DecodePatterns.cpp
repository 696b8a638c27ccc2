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
// With a language model (shallow fusion) the search runs frame by frame:
// the runtime keeps its state in a workspace the IR allocates
// (nn_search_ctc_begin_v1 / _step_v1 / _finish_v1), and between frames
// the IR runs the LM graph on all batch·beam slots, gathering each new
// slot's LM state and output from its parent slot.
//
//===----------------------------------------------------------------------===//

#include "lowering/conversion/Patterns.h"
#include "lowering/conversion/SearchSupport.h"

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
    if (op.getLmAttr()) {
      const GraphAbi *lm = state.getAbis().lookup(*op.getLm());
      if (!lm)
        return failure();
      searchWithLm(op, lb, *lm, module, origin, frames, buffers, batch,
                   capacity);
    } else {
      func::FuncOp site = createCallSite(
          b, module, "nn_ctc_prefix_search_site",
          ValueRange(buffers).getTypes(),
          [&](OpBuilder &fb, ValueRange args, StringRef name) {
            Location fl = module.getLoc();
            SmallVector<Value> arguments = searchArguments(
                fb, fl, op, frames, name, origin, args[0], args[1]);
            llvm::append_range(arguments,
                               nBestArguments(fb, fl, args.slice(2, 4)));
            StringRef callee = "nn_search_ctc_prefix_v1";
            declareRuntimeFunction(
                fb, module, callee,
                fb.getFunctionType(ValueRange(arguments).getTypes(), {}));
            fb.create<func::CallOp>(fl, callee, TypeRange{}, arguments);
          });
      b.create<func::CallOp>(loc, site, buffers);
    }
    auto filled = [&](Value buffer) -> Value {
      return b.create<bufferization::ToTensorOp>(loc, buffer,
                                                 /*restrict=*/true,
                                                 /*writable=*/true);
    };
    Value labels = filled(buffers[2]);
    Value labelLengths = filled(buffers[3]);
    Value hypothesisScores = filled(buffers[4]);
    return beamSearchResults(state, op, labelsType, lb, labels, labelLengths,
                             hypothesisScores, filled(buffers[5]), batch);
  }

private:
  /// The arguments nn_search_ctc_prefix_v1 and the step entries share, in
  /// their order (origin, then the scores and search settings), built in
  /// call-site function `name` from its log-probability and length
  /// buffers.
  static SmallVector<Value>
  searchArguments(OpBuilder &fb, Location fl, CtcBeamSearchOp op,
                  const CtcFrames &frames, StringRef name,
                  const std::string &origin, Value logProbs, Value lengths) {
    NNTensorType scoresType = typeOf(op.getScores());
    Type element = scoresType.getElementType();
    Scalar q{fb, fl};
    Type i64 = fb.getI64Type();
    auto constI32 = [&](int64_t v) -> Value {
      return fb.create<arith::ConstantIntOp>(fl, v, 32);
    };
    auto dim = [&](Value memref, int64_t axis) -> Value {
      return fb.create<arith::IndexCastOp>(
          fl, i64, fb.create<memref::DimOp>(fl, memref, axis));
    };
    auto [scores, strides] = addressOf(fb, fl, logProbs);
    Value zero = fb.create<arith::ConstantIntOp>(fl, 0, 64);
    double inf = std::numeric_limits<double>::infinity();
    auto threshold = [&](std::optional<APFloat> value) {
      return q.f(fb.getF64Type(), value ? value->convertToDouble() : inf);
    };
    // The runtime reads the origin as a C string: the global holds its
    // NUL (createGlobalString stores exactly the bytes given).
    return SmallVector<Value>{
        LLVM::createGlobalString(fl, fb, (name + "_origin").str(),
                                 origin + std::string(1, '\0'),
                                 LLVM::Linkage::Internal),
        scores,
        constI32(element.getIntOrFloatBitWidth()),
        dim(lengths, 0),
        dim(logProbs, frames.packed ? 0 : 1),
        dim(logProbs, scoresType.getRank() - 1),
        addressOf(fb, fl, lengths).first,
        constI32(frames.packed ? 1 : 0),
        frames.packed ? zero : strides[0],
        strides[frames.packed ? 0 : 1],
        strides[frames.packed ? 1 : 2],
        constI32(static_cast<int64_t>(op.getBlank())),
        constI32(static_cast<int64_t>(op.getBeam())),
        constI32(op.getMerge() == CtcMerge::max ? 1 : 0),
        constI32(op.getTokenBeam() ? static_cast<int64_t>(*op.getTokenBeam())
                                   : 0),
        threshold(op.getTokenThreshold()),
        threshold(op.getScoreBeam())};
  }

  /// The N-best arguments (labels, capacity, lengths, scores, counts and no
  /// extents) from the four output buffers.
  static SmallVector<Value> nBestArguments(OpBuilder &fb, Location fl,
                                           ValueRange outputs) {
    Value capacity = fb.create<arith::IndexCastOp>(
        fl, fb.getI64Type(), fb.create<memref::DimOp>(fl, outputs[0], 2));
    return SmallVector<Value>{addressOf(fb, fl, outputs[0]).first,
                              capacity,
                              addressOf(fb, fl, outputs[1]).first,
                              addressOf(fb, fl, outputs[2]).first,
                              addressOf(fb, fl, outputs[3]).first,
                              fb.create<arith::ConstantIntOp>(fl, 0, 64)};
  }

  /// The language model's arguments of a step entry: length bonus, the
  /// rows' address, bits and strides, and the weight.
  static SmallVector<Value> lmArguments(OpBuilder &fb, Location fl,
                                        CtcBeamSearchOp op, Value rows) {
    Scalar q{fb, fl};
    auto [address, strides] = addressOf(fb, fl, rows);
    Type element = cast<MemRefType>(rows.getType()).getElementType();
    double bonus =
        op.getLengthBonus() ? op.getLengthBonus()->convertToDouble() : 0.0;
    return SmallVector<Value>{
        q.f(fb.getF64Type(), bonus),
        address,
        fb.create<arith::ConstantIntOp>(fl, element.getIntOrFloatBitWidth(),
                                        32),
        strides[0],
        strides[1],
        q.f(fb.getF64Type(), op.getLmWeight()->convertToDouble())};
  }

  /// Declares runtime entry `callee` for `arguments` and calls it.
  static void callRuntime(OpBuilder &fb, Location fl, ModuleOp module,
                          StringRef callee, ValueRange arguments) {
    declareRuntimeFunction(
        fb, module, callee,
        fb.getFunctionType(ValueRange(arguments).getTypes(), {}));
    fb.create<func::CallOp>(fl, callee, TypeRange{}, arguments);
  }

  /// Row s of every tensor of `values` ([B·beam, ...]) replaced by row
  /// (s / beam)·beam + parents[s]: each slot takes its parent slot's.
  static SmallVector<Value> gatherByParent(LinalgBuilder &lb, ValueRange values,
                                           Value parents, int64_t beam) {
    OpBuilder &b = lb.getBuilder();
    SmallVector<Value> gathered;
    for (Value value : values) {
      auto type = cast<RankedTensorType>(value.getType());
      unsigned rank = type.getRank();
      Value init = lb.empty(tensor::getMixedSizes(b, lb.getLoc(), value),
                            type.getElementType());
      gathered.push_back(lb.generic(
          init.getType(), {}, init, {b.getMultiDimIdentityMap(rank)},
          SmallVector<IteratorType>(rank, IteratorType::parallel),
          [&](OpBuilder &nested, Location l, ValueRange) {
            Scalar q{nested, l};
            Value row = q.index(0);
            Value parent =
                q.toIndex(nested.create<tensor::ExtractOp>(l, parents, row));
            Value first =
                q.mul(nested.create<arith::DivUIOp>(l, row, q.idx(beam)),
                      q.idx(beam));
            SmallVector<Value> at{q.add(first, parent)};
            for (unsigned i = 1; i < rank; ++i)
              at.push_back(q.index(i));
            nested.create<linalg::YieldOp>(
                l, nested.create<tensor::ExtractOp>(l, value, at).getResult());
          }));
    }
    return gathered;
  }

  /// The search with shallow fusion: the workspace, the LM's first step
  /// (the start symbol on zero states, on all B·beam slots), then per
  /// padded frame a step of the runtime's search and, if any slot appended
  /// a label, one LM call on all slots whose results the appending slots
  /// take; then the N-best lists into `buffers[2..5]`.
  void searchWithLm(CtcBeamSearchOp op, LinalgBuilder &lb, const GraphAbi &lm,
                    ModuleOp module, const std::string &origin,
                    const CtcFrames &frames, ArrayRef<Value> buffers,
                    Value batch, Value capacity) const {
    OpBuilder &b = lb.getBuilder();
    Location loc = lb.getLoc();
    Scalar s{b, loc};
    Type i32 = b.getI32Type(), i64 = b.getI64Type();
    auto beam = static_cast<int64_t>(op.getBeam());
    auto start = static_cast<int64_t>(op.getLmStart().value_or(0));
    bool fromLogits = op.getLmInput() == LossInput::logits;
    Value rows = s.mul(batch, s.idx(beam));
    Value time = lb.getDims().size(frames.sequence);

    // The workspace, sized by the runtime (-1 when out of range: then
    // nn_search_ctc_begin_v1 ends the run with a message).
    SmallVector<Value> sizeArguments{
        b.create<arith::IndexCastOp>(loc, i64, batch),
        b.create<arith::ConstantIntOp>(loc, beam, 32),
        b.create<arith::IndexCastOp>(loc, i64, capacity)};
    StringRef sizeCallee = "nn_search_ctc_workspace_bytes_v1";
    declareRuntimeFunction(
        b, module, sizeCallee,
        b.getFunctionType(ValueRange(sizeArguments).getTypes(), {i64}));
    Value bytes =
        b.create<func::CallOp>(loc, sizeCallee, TypeRange{i64}, sizeArguments)
            .getResult(0);
    Value words = b.create<arith::DivSIOp>(
        loc,
        b.create<arith::AddIOp>(loc, bytes,
                                b.create<arith::ConstantIntOp>(loc, 7, 64)),
        b.create<arith::ConstantIntOp>(loc, 8, 64));
    Value workspace = b.create<memref::AllocOp>(
        loc, MemRefType::get({ShapedType::kDynamic}, i64),
        ValueRange{
            s.maxI(b.create<arith::IndexCastOp>(loc, b.getIndexType(), words),
                   s.idx(0))});
    auto workspaceBytes = [](OpBuilder &fb, Location fl, Value memref) {
      Value size = fb.create<arith::IndexCastOp>(
          fl, fb.getI64Type(), fb.create<memref::DimOp>(fl, memref, 0));
      return fb.create<arith::MulIOp>(
          fl, size, fb.create<arith::ConstantIntOp>(fl, 8, 64));
    };

    func::FuncOp beginSite = createCallSite(
        b, module, "nn_ctc_step_begin_site",
        TypeRange{workspace.getType(), b.getIndexType(), b.getIndexType()},
        [&](OpBuilder &fb, ValueRange args, StringRef name) {
          Location fl = module.getLoc();
          Value address = addressOf(fb, fl, args[0]).first;
          callRuntime(
              fb, fl, module, "nn_search_ctc_begin_v1",
              {LLVM::createGlobalString(fl, fb, (name + "_origin").str(),
                                        origin + std::string(1, '\0'),
                                        LLVM::Linkage::Internal),
               address, workspaceBytes(fb, fl, args[0]),
               fb.create<arith::IndexCastOp>(fl, fb.getI64Type(), args[1]),
               fb.create<arith::ConstantIntOp>(fl, beam, 32),
               fb.create<arith::IndexCastOp>(fl, fb.getI64Type(), args[2])});
        });
    b.create<func::CallOp>(loc, beginSite,
                           ValueRange{workspace, batch, capacity});

    // The LM's first step, and its log-probabilities per slot.
    auto logProbsOf = [&](LinalgBuilder &xb, Value out) {
      return fromLogits ? xb.logSoftmax(out) : out;
    };
    SmallVector<Value> inputs{lb.filled({rows}, i32, (double)start)};
    for (Type type : lm.graph.getArgumentTypes().drop_front()) {
      auto stateType = cast<NNTensorType>(type);
      SmallVector<OpFoldResult> shape{rows};
      for (unsigned i = 1; i < stateType.getRank(); ++i)
        shape.push_back(b.getIndexAttr(stateType.getStaticSize(i)));
      inputs.push_back(lb.filled(shape, stateType.getElementType(), 0.0));
    }
    SmallVector<Value> first = callOnRows(lb, lm, rows, inputs);
    first[0] = logProbsOf(lb, first[0]);

    // One call site per entry; the step's buffers are made per frame.
    // The type bufferOf gives the LM's rows.
    auto rowsType = cast<RankedTensorType>(first[0].getType());
    Type lmRowsType = MemRefType::get(
        rowsType.getShape(), rowsType.getElementType(),
        StridedLayoutAttr::get(b.getContext(), ShapedType::kDynamic,
                               {ShapedType::kDynamic, ShapedType::kDynamic}));
    SmallVector<Type> stepTypes{buffers[0].getType(), buffers[1].getType(),
                                workspace.getType(), lmRowsType};
    Type rowBuffer = MemRefType::get({ShapedType::kDynamic}, i32);
    stepTypes.append({rowBuffer, rowBuffer, rowBuffer, b.getIndexType()});
    func::FuncOp stepSite = createCallSite(
        b, module, "nn_ctc_step_site", stepTypes,
        [&](OpBuilder &fb, ValueRange args, StringRef name) {
          Location fl = module.getLoc();
          SmallVector<Value> arguments = searchArguments(
              fb, fl, op, frames, name, origin, args[0], args[1]);
          arguments.insert(arguments.begin() + 1,
                           {addressOf(fb, fl, args[2]).first,
                            workspaceBytes(fb, fl, args[2])});
          llvm::append_range(arguments, lmArguments(fb, fl, op, args[3]));
          arguments.push_back(
              fb.create<arith::IndexCastOp>(fl, fb.getI64Type(), args[7]));
          for (unsigned i = 4; i < 7; ++i)
            arguments.push_back(addressOf(fb, fl, args[i]).first);
          callRuntime(fb, fl, module, "nn_search_ctc_step_v1", arguments);
        });

    SmallVector<Value> carried = forLoop(
        s, s.idx(0), time, first, [&](Scalar &ts, Value t, ValueRange lmNow) {
          OpBuilder &tb = ts.b;
          Location tl = ts.loc;
          LinalgBuilder flb(tb, tl, lb.getDims());
          Value parents = outputBuffer(tb, tl, {rows}, i32);
          Value appended = outputBuffer(tb, tl, {rows}, i32);
          Value count = outputBuffer(tb, tl, {ts.idx(1)}, i32);
          tb.create<func::CallOp>(tl, stepSite,
                                  ValueRange{buffers[0], buffers[1], workspace,
                                             bufferOf(tb, tl, lmNow[0]),
                                             parents, appended, count, t});
          auto filled = [&](Value buffer) -> Value {
            return tb.create<bufferization::ToTensorOp>(tl, buffer,
                                                        /*restrict=*/true,
                                                        /*writable=*/true);
          };
          Value parentRows = filled(parents);
          Value appendedRows = filled(appended);
          Value appendedCount =
              tb.create<tensor::ExtractOp>(tl, filled(count), ts.idx(0));
          SmallVector<Value> kept =
              gatherByParent(flb, lmNow, parentRows, beam);
          auto step = tb.create<scf::IfOp>(
              tl, ts.ne(appendedCount, ts.i32(0)),
              [&](OpBuilder &ib, Location il) {
                LinalgBuilder ilb(ib, il, lb.getDims());
                // The appended label, or the start symbol where the row's
                // result is not taken.
                Value labels = ilb.generic(
                    appendedRows.getType(), {appendedRows},
                    ilb.empty({rows}, i32),
                    {ib.getMultiDimIdentityMap(1),
                     ib.getMultiDimIdentityMap(1)},
                    {IteratorType::parallel},
                    [&](OpBuilder &nested, Location l, ValueRange args) {
                      Scalar q{nested, l};
                      nested.create<linalg::YieldOp>(
                          l, q.select(q.ge(args[0], q.i32(0)), args[0],
                                      q.i32(start)));
                    });
                Value mask = ilb.generic(
                    appendedRows.getType(), {appendedRows},
                    ilb.empty({rows}, i32),
                    {ib.getMultiDimIdentityMap(1),
                     ib.getMultiDimIdentityMap(1)},
                    {IteratorType::parallel},
                    [&](OpBuilder &nested, Location l, ValueRange args) {
                      Scalar q{nested, l};
                      nested.create<linalg::YieldOp>(
                          l, q.select(q.ge(args[0], q.i32(0)), q.i32(1),
                                      q.i32(0)));
                    });
                SmallVector<Value> operands{labels};
                llvm::append_range(operands,
                                   ArrayRef<Value>(kept).drop_front());
                SmallVector<Value> fresh = callOnRows(ilb, lm, rows, operands);
                fresh[0] = logProbsOf(ilb, fresh[0]);
                SmallVector<Value> merged;
                for (auto [f, old] : llvm::zip(fresh, kept))
                  merged.push_back(selectRows(ilb, mask, f, old));
                ib.create<scf::YieldOp>(il, merged);
              },
              [&](OpBuilder &ib, Location il) {
                ib.create<scf::YieldOp>(il, kept);
              });
          return SmallVector<Value>(step.getResults());
        });

    SmallVector<Type> finishTypes{buffers[0].getType(), buffers[1].getType(),
                                  workspace.getType(), lmRowsType};
    for (Value buffer : buffers.drop_front(2))
      finishTypes.push_back(buffer.getType());
    func::FuncOp finishSite = createCallSite(
        b, module, "nn_ctc_step_finish_site", finishTypes,
        [&](OpBuilder &fb, ValueRange args, StringRef name) {
          Location fl = module.getLoc();
          SmallVector<Value> arguments = searchArguments(
              fb, fl, op, frames, name, origin, args[0], args[1]);
          arguments.insert(arguments.begin() + 1,
                           {addressOf(fb, fl, args[2]).first,
                            workspaceBytes(fb, fl, args[2])});
          llvm::append_range(arguments, lmArguments(fb, fl, op, args[3]));
          arguments.push_back(fb.create<arith::ConstantIntOp>(
              fl, op.getLmEnd() ? static_cast<int64_t>(*op.getLmEnd()) : -1,
              32));
          llvm::append_range(arguments,
                             nBestArguments(fb, fl, args.slice(4, 4)));
          callRuntime(fb, fl, module, "nn_search_ctc_finish_v1", arguments);
        });
    SmallVector<Value> finishArguments{buffers[0], buffers[1], workspace,
                                       bufferOf(b, loc, carried[0])};
    llvm::append_range(finishArguments, buffers.drop_front(2));
    b.create<func::CallOp>(loc, finishSite, finishArguments);
  }
};

} // namespace

void mlir::nn::populateDecodeConversionPatterns(const TypeConverter &converter,
                                                ConversionState &state,
                                                RewritePatternSet &patterns) {
  patterns.add<CtcGreedyDecodeConversion, CtcBeamSearchConversion>(converter,
                                                                   state);
}
