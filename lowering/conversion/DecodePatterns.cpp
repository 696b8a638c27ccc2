//===- DecodePatterns.cpp - decoding ops to linalg and scf ----------------===//
//
// Greedy CTC decoding: one linalg.generic finds each frame's best class
// and its score (a kernel on the GPU), then a loop per sequence collapses
// repeats, drops blanks and counts the labels, which binds the computed
// dim of the hypotheses (ConversionState::bindComputed).
//
//===----------------------------------------------------------------------===//

#include "lowering/conversion/Patterns.h"

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

/// The best class of each row of `x` ([P..., V] -> [P...] i32) and its
/// value: the largest value, the lowest index among equal ones. The
/// combine orders (value, -index) totally, so the result does not depend
/// on the order a backend reduces in; NaN never compares greater, and a
/// row of only NaN or -inf keeps class 0 and -inf.
std::pair<Value, Value> rowArgMax(LinalgBuilder &lb, Value x) {
  OpBuilder &b = lb.getBuilder();
  Location loc = lb.getLoc();
  auto type = cast<RankedTensorType>(x.getType());
  unsigned rank = type.getRank();
  Type element = type.getElementType();
  SmallVector<OpFoldResult> rows;
  for (unsigned i = 0; i + 1 < rank; ++i)
    rows.push_back(type.isDynamicDim(i)
                       ? OpFoldResult(b.create<tensor::DimOp>(loc, x, i))
                       : OpFoldResult(b.getIndexAttr(type.getDimSize(i))));
  Value best =
      lb.filled(rows, element, -std::numeric_limits<double>::infinity());
  Value index = lb.filled(rows, b.getI32Type(), 0.0);
  AffineMap all = b.getMultiDimIdentityMap(rank);
  AffineMap row = all.dropResult(rank - 1);
  SmallVector<IteratorType> iterators(rank - 1, IteratorType::parallel);
  iterators.push_back(IteratorType::reduction);
  auto generic = b.create<linalg::GenericOp>(
      loc, TypeRange{best.getType(), index.getType()}, ValueRange{x},
      ValueRange{best, index}, ArrayRef<AffineMap>{all, row, row}, iterators,
      [&](OpBuilder &gb, Location gl, ValueRange args) {
        Scalar s{gb, gl};
        Value value = args[0], bestValue = args[1], bestIndex = args[2];
        Value c = gb.create<arith::IndexCastOp>(gl, gb.getI32Type(),
                                                s.index(rank - 1));
        Value greater = gb.create<arith::CmpFOp>(gl, arith::CmpFPredicate::OGT,
                                                 value, bestValue);
        Value earlierTie =
            s.andI(s.feq(value, bestValue),
                   gb.create<arith::CmpIOp>(gl, arith::CmpIPredicate::slt, c,
                                            bestIndex));
        Value take = gb.create<arith::OrIOp>(gl, greater, earlierTie);
        gb.create<linalg::YieldOp>(gl,
                                   ValueRange{s.select(take, value, bestValue),
                                              s.select(take, c, bestIndex)});
      });
  return {generic.getResult(0), generic.getResult(1)};
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
    bool packed = scoresType.getRank() == 2;
    StringRef batchName = scoresType.getDimName(0), sequenceName;
    if (packed) {
      DimDeclAttr decl = lb.getDims().getDecls().lookup(batchName);
      batchName = decl.getBatch().getValue();
      sequenceName = decl.getSource().getValue();
    } else {
      sequenceName = scoresType.getDimName(1);
    }
    Value frameLengths = lb.getDims().lengths(sequenceName);
    Value batch = lb.getDims().size(batchName);
    Value time = lb.getDims().size(sequenceName);
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
        [&](OpBuilder &nb, Location l, Value bi, ValueRange state) {
          Scalar s{nb, l};
          Value frames =
              s.toIndex(nb.create<tensor::ExtractOp>(l, frameLengths, bi));
          Value offset = state[4];
          auto frameLoop = nb.create<scf::ForOp>(
              l, s.idx(0), frames, s.idx(1),
              ValueRange{state[0], s.idx(0), s.i32(-1), s.f(f64, 0.0)},
              [&](OpBuilder &tb, Location tl, Value t, ValueRange carried) {
                Scalar q{tb, tl};
                SmallVector<Value> at =
                    packed ? SmallVector<Value>{q.add(offset, t)}
                           : SmallVector<Value>{bi, t};
                Value c = tb.create<tensor::ExtractOp>(tl, bestClass, at);
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
              l, nb.create<arith::IndexCastOp>(l, i32, count), state[1], bi);
          Value score = frameLoop.getResult(3);
          if (element != f64)
            score = nb.create<arith::TruncFOp>(l, element, score);
          Value newScores = nb.create<tensor::InsertOp>(l, score, state[2], bi);
          nb.create<scf::YieldOp>(
              l, ValueRange{frameLoop.getResult(0), newLengths, newScores,
                            s.maxI(state[3], count), s.add(offset, frames)});
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

} // namespace

void mlir::nn::populateDecodeConversionPatterns(const TypeConverter &converter,
                                                ConversionState &state,
                                                RewritePatternSet &patterns) {
  patterns.add<CtcGreedyDecodeConversion>(converter, state);
}
