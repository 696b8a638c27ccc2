//===- TransducerDecodePatterns.cpp - transducer decoding to scf ----------===//
//
// Transducer decoders run their callee graphs (the predictor and the
// joiner, SearchSupport.h's callOnRows) one step at a time on a row batch,
// in a loop over the padded frames that each sequence leaves at its own
// length; what a step decides is computed by generics over the rows.
//
//===----------------------------------------------------------------------===//

#include "lowering/conversion/Patterns.h"
#include "lowering/conversion/SearchSupport.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
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
} // namespace

void mlir::nn::populateTransducerDecodeConversionPatterns(
    const TypeConverter &converter, ConversionState &state,
    RewritePatternSet &patterns) {
  patterns.add<TransducerGreedyDecodeConversion>(converter, state);
}
