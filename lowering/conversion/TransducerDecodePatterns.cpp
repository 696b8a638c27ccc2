//===- TransducerDecodePatterns.cpp - transducer decoding to scf ----------===//
//
// Transducer decoders run their callee graphs (the predictor and the
// joiner, SearchSupport.h's callOnRows) one step at a time on a row batch,
// in a loop over the padded frames that each sequence leaves at its own
// length. What a greedy step decides is computed by generics over the
// rows; a beam search step (expansion, merging, ranking) is the runtime's
// (nn_search_transducer_*_v1, runtime/search/SearchAbi.h), working on a
// workspace buffer the IR allocates, and the IR moves each slot's
// predictor output and state as the step reports.
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

/// Rows of `source` ([N, ...]) picked by `parents` ([P] i32): [P, ...].
Value gatherRows(LinalgBuilder &lb, Value parents, Value source) {
  OpBuilder &b = lb.getBuilder();
  Location loc = lb.getLoc();
  auto type = cast<RankedTensorType>(source.getType());
  unsigned rank = type.getRank();
  SmallVector<OpFoldResult> shape{
      b.createOrFold<tensor::DimOp>(loc, parents, 0)};
  for (unsigned i = 1; i < rank; ++i)
    shape.push_back(tensor::getMixedSize(b, loc, source, i));
  Value init = lb.empty(shape, type.getElementType());
  AffineMap id = b.getMultiDimIdentityMap(rank);
  AffineMap row = AffineMap::get(rank, 0, b.getAffineDimExpr(0));
  return lb.generic(
      init.getType(), {parents}, init, {row, id},
      SmallVector<IteratorType>(rank, IteratorType::parallel),
      [&](OpBuilder &nested, Location l, ValueRange args) {
        Scalar q{nested, l};
        SmallVector<Value> at{q.toIndex(args[0])};
        for (unsigned i = 1; i < rank; ++i)
          at.push_back(q.index(i));
        nested.create<linalg::YieldOp>(
            l, nested.create<tensor::ExtractOp>(l, source, at).getResult());
      });
}

/// Transducer beam search, batched: B · beam slot rows carry the predictor
/// output and state of each hypothesis. Per frame (and, for rnnt, per
/// round) the joiner runs on all rows, log_softmax gives the
/// log-probabilities, and `nn_search_transducer_step_v1` extends, merges
/// and ranks the hypotheses in the workspace, reporting per new slot its
/// parent row and appended label; the rows are gathered by parent and the
/// predictor runs (when any row appended a label) with the new labels,
/// whose rows take its output. rnnt stashes the rows of each round: the
/// frame's result set (hypotheses that ended it with the blank) refers to
/// them, and `nn_search_transducer_end_frame_v1` picks the next frame's
/// slots from it. `nn_search_transducer_finish_v1` writes the N-best lists,
/// which become the results as nn.ctc_beam_search's do.
class TransducerBeamSearchConversion
    : public NNConversionPattern<TransducerBeamSearchOp> {
public:
  using NNConversionPattern::NNConversionPattern;

  FailureOr<SmallVector<Value>> build(TransducerBeamSearchOp op,
                                      OpAdaptor adaptor,
                                      LinalgBuilder &lb) const override {
    const GraphAbi *predictor = state.getAbis().lookup(op.getPredictor());
    const GraphAbi *joiner = state.getAbis().lookup(op.getJoiner());
    if (!predictor || !joiner)
      return failure();
    OpBuilder &b = lb.getBuilder();
    Location loc = lb.getLoc();
    auto module = op->getParentOfType<ModuleOp>();
    NNTensorType encoderType = typeOf(op.getEncoder());
    NNTensorType labelsType = typeOf(op.getLabels());
    Type element = encoderType.getElementType();
    Type i32 = b.getI32Type(), i64 = b.getI64Type();
    Value encoder = adaptor.getEncoder();
    Value batch = lb.getDims().size(encoderType.getDimName(0));
    Value time = lb.getDims().size(encoderType.getDimName(1));
    Value frameLengths = lb.getDims().lengths(encoderType.getDimName(1));
    auto beam = static_cast<int64_t>(op.getBeam());
    auto start = static_cast<int64_t>(op.getStart());
    bool rnnt = op.getTopology() == TransducerTopology::rnnt;
    int64_t maxSymbols =
        rnnt ? static_cast<int64_t>(op.getMaxSymbols().value_or(1)) : 1;
    int64_t rounds = op.getRoundsPerFrame();
    Scalar s = lb.scalar();
    Value rows = s.mul(batch, s.idx(beam));
    // A hypothesis holds at most maxSymbols labels per frame.
    Value capacity = s.maxI(s.mul(time, s.idx(maxSymbols)), s.idx(1));
    std::string origin = describeOrigin(loc);
    auto constI32 = [](OpBuilder &fb, Location fl, int64_t v) -> Value {
      return fb.create<arith::ConstantIntOp>(fl, v, 32);
    };
    auto toI64 = [](OpBuilder &fb, Location fl, Value index) -> Value {
      return fb.create<arith::IndexCastOp>(fl, fb.getI64Type(), index);
    };
    auto dim = [&](OpBuilder &fb, Location fl, Value memref, int64_t axis) {
      return toI64(fb, fl, fb.create<memref::DimOp>(fl, memref, axis));
    };
    auto originString = [&](OpBuilder &fb, Location fl, StringRef name) {
      // The runtime reads a C string: the global holds its NUL.
      return LLVM::createGlobalString(fl, fb, (name + "_origin").str(),
                                      origin + std::string(1, '\0'),
                                      LLVM::Linkage::Internal);
    };
    auto callRuntime = [&](OpBuilder &fb, Location fl, StringRef callee,
                           ArrayRef<Value> arguments, TypeRange results = {}) {
      declareRuntimeFunction(
          fb, module, callee,
          fb.getFunctionType(ValueRange(arguments).getTypes(), results));
      return fb.create<func::CallOp>(fl, callee, results, arguments);
    };

    // The workspace: the whole search state between calls.
    Value topology = constI32(b, loc, rnnt ? 1 : 0);
    Value bytes = callRuntime(b, loc, "nn_search_transducer_workspace_bytes_v1",
                              {toI64(b, loc, batch), constI32(b, loc, beam),
                               toI64(b, loc, capacity), topology,
                               constI32(b, loc, maxSymbols)},
                              {i64})
                      .getResult(0);
    Value workspace = outputBuffer(
        b, loc, {b.create<arith::IndexCastOp>(loc, b.getIndexType(), bytes)},
        b.getI8Type());
    Value lengths = bufferOf(b, loc, frameLengths);
    Type index = b.getIndexType();
    func::FuncOp startSite = createCallSite(
        b, module, "nn_transducer_beam_start_site",
        TypeRange{workspace.getType(), index, index},
        [&](OpBuilder &fb, ValueRange args, StringRef name) {
          Location fl = module.getLoc();
          callRuntime(
              fb, fl, "nn_search_transducer_start_v1",
              {originString(fb, fl, name), addressOf(fb, fl, args[0]).first,
               dim(fb, fl, args[0], 0), toI64(fb, fl, args[1]),
               constI32(fb, fl, beam), toI64(fb, fl, args[2]),
               constI32(fb, fl, rnnt ? 1 : 0), constI32(fb, fl, maxSymbols)});
        });
    b.create<func::CallOp>(loc, startSite,
                           ValueRange{workspace, batch, capacity});

    // The predictor's first step on every row: the start symbol on zero
    // states.
    SmallVector<Value> stepInputs{lb.filled({rows}, i32, (double)start)};
    for (Type type : predictor->graph.getArgumentTypes().drop_front()) {
      auto stateType = cast<NNTensorType>(type);
      SmallVector<OpFoldResult> shape{rows};
      for (unsigned i = 1; i < stateType.getRank(); ++i)
        shape.push_back(b.getIndexAttr(stateType.getStaticSize(i)));
      stepInputs.push_back(lb.filled(shape, stateType.getElementType(), 0.0));
    }
    SmallVector<Value> slots = callOnRows(lb, *predictor, rows, stepInputs);
    size_t numSlotValues = slots.size();

    func::FuncOp stepSite, endSite;
    // One round at frame t: the joiner on every row, the runtime's step,
    // the rows gathered by parent and advanced by the predictor where a
    // label was appended. Returns the new slot values, then whether any
    // row appended a label (i1).
    auto roundAt = [&](Scalar &rs, Value t, Value round,
                       ValueRange carried) -> SmallVector<Value> {
      OpBuilder &rb = rs.b;
      Location rl = rs.loc;
      LinalgBuilder rlb(rb, rl, lb.getDims());
      Value output = carried[0];
      auto outputType = cast<RankedTensorType>(output.getType());
      Value init = rlb.empty(tensor::getMixedSizes(rb, rl, output),
                             outputType.getElementType());
      AffineMap id = rb.getMultiDimIdentityMap(2);
      // Rows of sequences past their frames read no frame (padding may
      // hold NaN); the step never reads their scores.
      Value joined = rlb.generic(
          init.getType(), {output}, init, {id, id},
          {IteratorType::parallel, IteratorType::parallel},
          [&](OpBuilder &nested, Location l, ValueRange args) {
            Scalar q{nested, l};
            Value sequence =
                nested.create<arith::DivUIOp>(l, q.index(0), q.idx(beam));
            Value length =
                nested.create<tensor::ExtractOp>(l, frameLengths, sequence);
            Value valid = q.lt(t, q.toIndex(length));
            Value at = q.select(valid, t, q.idx(0));
            Value frame = nested.create<tensor::ExtractOp>(
                l, encoder, ValueRange{sequence, at, q.index(1)});
            nested.create<linalg::YieldOp>(
                l, q.select(valid, q.add(frame, args[0]), args[0]));
          });
      Value logits = callOnRows(rlb, *joiner, rows, {joined})[0];
      Value logProbs = rlb.logSoftmax(logits);
      Value scoresBuffer = bufferOf(rb, rl, logProbs);
      Value parents = outputBuffer(rb, rl, {rows}, i32);
      Value appended = outputBuffer(rb, rl, {rows}, i32);
      Value any = outputBuffer(rb, rl, {rs.idx(1)}, i32);
      if (!stepSite) {
        Type logitType =
            cast<RankedTensorType>(logProbs.getType()).getElementType();
        stepSite = createCallSite(
            rb, module, "nn_transducer_beam_step_site",
            TypeRange{workspace.getType(), scoresBuffer.getType(),
                      lengths.getType(), parents.getType(), appended.getType(),
                      any.getType(), index, index},
            [&](OpBuilder &fb, ValueRange args, StringRef name) {
              Location fl = module.getLoc();
              auto [scores, strides] = addressOf(fb, fl, args[1]);
              callRuntime(
                  fb, fl, "nn_search_transducer_step_v1",
                  {originString(fb, fl, name), addressOf(fb, fl, args[0]).first,
                   dim(fb, fl, args[0], 0), scores,
                   constI32(fb, fl, logitType.getIntOrFloatBitWidth()),
                   dim(fb, fl, args[1], 1), strides[0], strides[1],
                   constI32(fb, fl, static_cast<int64_t>(op.getBlank())),
                   addressOf(fb, fl, args[2]).first, toI64(fb, fl, args[6]),
                   fb.create<arith::IndexCastOp>(fl, fb.getI32Type(), args[7]),
                   addressOf(fb, fl, args[3]).first,
                   addressOf(fb, fl, args[4]).first,
                   addressOf(fb, fl, args[5]).first});
            });
      }
      rb.create<func::CallOp>(rl, stepSite,
                              ValueRange{workspace, scoresBuffer, lengths,
                                         parents, appended, any, t, round});
      Value parentRows = filled(rb, rl, parents);
      Value labels = filled(rb, rl, appended);
      Value anyLabel = rs.ne(
          rb.create<tensor::ExtractOp>(rl, filled(rb, rl, any), rs.idx(0)),
          rs.i32(0));
      SmallVector<Value> gathered;
      for (Value v : carried)
        gathered.push_back(gatherRows(rlb, parentRows, v));
      auto advance = rb.create<scf::IfOp>(
          rl, anyLabel,
          [&](OpBuilder &ib, Location il) {
            LinalgBuilder ilb(ib, il, lb.getDims());
            // Rows without a label run the predictor on the start symbol
            // and keep their values.
            Value mask = ilb.generic(
                labels.getType(), {labels}, ilb.empty({rows}, i32),
                {ib.getMultiDimIdentityMap(1), ib.getMultiDimIdentityMap(1)},
                {IteratorType::parallel},
                [&](OpBuilder &nested, Location l, ValueRange args) {
                  Scalar m{nested, l};
                  nested.create<linalg::YieldOp>(
                      l, m.select(m.ge(args[0], m.i32(0)), m.i32(1), m.i32(0)));
                });
            Value input = ilb.generic(
                labels.getType(), {labels}, ilb.empty({rows}, i32),
                {ib.getMultiDimIdentityMap(1), ib.getMultiDimIdentityMap(1)},
                {IteratorType::parallel},
                [&](OpBuilder &nested, Location l, ValueRange args) {
                  Scalar m{nested, l};
                  nested.create<linalg::YieldOp>(
                      l,
                      m.select(m.ge(args[0], m.i32(0)), args[0], m.i32(start)));
                });
            SmallVector<Value> operands{input};
            llvm::append_range(operands, ArrayRef(gathered).drop_front());
            SmallVector<Value> fresh =
                callOnRows(ilb, *predictor, rows, operands);
            SmallVector<Value> merged;
            for (auto [f, old] : llvm::zip(fresh, gathered))
              merged.push_back(selectRows(ilb, mask, f, old));
            ib.create<scf::YieldOp>(il, merged);
          },
          [&](OpBuilder &ib, Location il) {
            ib.create<scf::YieldOp>(il, gathered);
          });
      SmallVector<Value> result(advance.getResults());
      result.push_back(anyLabel);
      return result;
    };

    // The loop's results (the last slot rows) are not needed: the search
    // state is the workspace's, and the loop stays for its calls.
    (void)forLoop(
        s, s.idx(0), time, slots, [&](Scalar &ts, Value t, ValueRange frame) {
          if (!rnnt) {
            SmallVector<Value> next = roundAt(ts, t, ts.idx(0), frame);
            next.pop_back();
            return next;
          }
          // rnnt: rounds while some row appended a label; each round's
          // rows stashed at rows [round · rows, (round + 1) · rows).
          LinalgBuilder tlb(ts.b, ts.loc, lb.getDims());
          Value stashRows = ts.mul(ts.idx(rounds), rows);
          SmallVector<Value> init(frame);
          for (Value v : frame) {
            SmallVector<OpFoldResult> shape =
                tensor::getMixedSizes(ts.b, ts.loc, v);
            shape[0] = stashRows;
            init.push_back(tlb.filled(
                shape, cast<RankedTensorType>(v.getType()).getElementType(),
                0.0));
          }
          init.push_back(ts.b.create<arith::ConstantIntOp>(ts.loc, 1, 1));
          SmallVector<Value> after = forLoop(
              ts, ts.idx(0), ts.idx(rounds), init,
              [&](Scalar &rs, Value round, ValueRange carried) {
                auto run = rs.b.create<scf::IfOp>(
                    rs.loc, carried.back(),
                    [&](OpBuilder &ib, Location il) {
                      Scalar is{ib, il};
                      ValueRange current = carried.take_front(numSlotValues);
                      SmallVector<Value> stashed;
                      for (auto [v, stash] :
                           llvm::zip(current, carried.slice(numSlotValues,
                                                            numSlotValues))) {
                        auto type = cast<RankedTensorType>(v.getType());
                        SmallVector<OpFoldResult> offsets(type.getRank(),
                                                          ib.getIndexAttr(0));
                        offsets[0] = is.mul(round, rows);
                        SmallVector<OpFoldResult> strides(type.getRank(),
                                                          ib.getIndexAttr(1));
                        stashed.push_back(ib.create<tensor::InsertSliceOp>(
                            il, v, stash, offsets,
                            tensor::getMixedSizes(ib, il, v), strides));
                      }
                      SmallVector<Value> next = roundAt(is, t, round, current);
                      Value any = next.pop_back_val();
                      llvm::append_range(next, stashed);
                      next.push_back(any);
                      ib.create<scf::YieldOp>(il, next);
                    },
                    [&](OpBuilder &ib, Location il) {
                      ib.create<scf::YieldOp>(il, carried);
                    });
                return SmallVector<Value>(run.getResults());
              });
          // The next frame's slots: the best of the frame's result set.
          Value parents = outputBuffer(ts.b, ts.loc, {rows}, i32);
          if (!endSite)
            endSite = createCallSite(
                ts.b, module, "nn_transducer_beam_end_frame_site",
                TypeRange{workspace.getType(), lengths.getType(),
                          parents.getType(), index},
                [&](OpBuilder &fb, ValueRange args, StringRef name) {
                  Location fl = module.getLoc();
                  callRuntime(fb, fl, "nn_search_transducer_end_frame_v1",
                              {originString(fb, fl, name),
                               addressOf(fb, fl, args[0]).first,
                               dim(fb, fl, args[0], 0),
                               addressOf(fb, fl, args[1]).first,
                               toI64(fb, fl, args[3]),
                               addressOf(fb, fl, args[2]).first});
                });
          ts.b.create<func::CallOp>(ts.loc, endSite,
                                    ValueRange{workspace, lengths, parents, t});
          Value parentRows = filled(ts.b, ts.loc, parents);
          SmallVector<Value> next;
          for (Value stash :
               ArrayRef(after).slice(numSlotValues, numSlotValues))
            next.push_back(gatherRows(tlb, parentRows, stash));
          return next;
        });

    // The N-best lists.
    Value beamSize = s.idx(beam);
    SmallVector<Value> buffers{
        workspace, outputBuffer(b, loc, {batch, beamSize, capacity}, i32),
        outputBuffer(b, loc, {batch, beamSize}, i32),
        outputBuffer(b, loc, {batch, beamSize}, element),
        outputBuffer(b, loc, {batch}, i32)};
    func::FuncOp finishSite = createCallSite(
        b, module, "nn_transducer_beam_finish_site",
        ValueRange(buffers).getTypes(),
        [&](OpBuilder &fb, ValueRange args, StringRef name) {
          Location fl = module.getLoc();
          callRuntime(
              fb, fl, "nn_search_transducer_finish_v1",
              {originString(fb, fl, name), addressOf(fb, fl, args[0]).first,
               dim(fb, fl, args[0], 0),
               constI32(fb, fl, element.getIntOrFloatBitWidth()),
               addressOf(fb, fl, args[1]).first, dim(fb, fl, args[1], 2),
               addressOf(fb, fl, args[2]).first,
               addressOf(fb, fl, args[3]).first,
               addressOf(fb, fl, args[4]).first});
        });
    b.create<func::CallOp>(loc, finishSite, buffers);
    Value labels = filled(b, loc, buffers[1]);
    Value labelLengths = filled(b, loc, buffers[2]);
    Value scores = filled(b, loc, buffers[3]);
    return beamSearchResults(state, op, labelsType, lb, labels, labelLengths,
                             scores, filled(b, loc, buffers[4]), batch);
  }

private:
  /// A filled output buffer as a tensor.
  static Value filled(OpBuilder &b, Location loc, Value buffer) {
    return b.create<bufferization::ToTensorOp>(loc, buffer, /*restrict=*/true,
                                               /*writable=*/true);
  }
};
} // namespace

void mlir::nn::populateTransducerDecodeConversionPatterns(
    const TypeConverter &converter, ConversionState &state,
    RewritePatternSet &patterns) {
  patterns
      .add<TransducerGreedyDecodeConversion, TransducerBeamSearchConversion>(
          converter, state);
}
