//===- RecurrentPatterns.cpp - recurrent layers to scf loops --------------===//
//
// An LSTM runs on real frames only, in the order of PyTorch's packed
// sequences and cuDNN's packed layout (StepOrder below): the sequences
// sorted by length, longest first, each time step's frames contiguous rows
// of only the sequences still running. One GEMM projects the input of every
// real frame; each step's recurrent GEMM and gate update cover the running
// sequences alone; the backward direction starts each sequence at its own
// last frame. Padded frames are never read, and outputs there are zero.
// Packed input [N, I] differs only in where a frame's row is: the gather
// and scatter index it, nothing else changes.
//
//===----------------------------------------------------------------------===//

#include "lowering/conversion/Patterns.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Arith/Utils/Utils.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"

using namespace mlir;
using namespace mlir::nn;

using utils::IteratorType;

namespace {

/// Rows [start, start + count) and features [offset, offset + width) of a
/// 2-D tensor.
Value sliceRows(LinalgBuilder &lb, Value x, OpFoldResult start,
                OpFoldResult count, int64_t offset, int64_t width) {
  OpBuilder &b = lb.getBuilder();
  auto type = RankedTensorType::get(
      {ShapedType::kDynamic, width},
      cast<RankedTensorType>(x.getType()).getElementType());
  return b.create<tensor::ExtractSliceOp>(
      lb.getLoc(), type, x,
      ArrayRef<OpFoldResult>{start, b.getIndexAttr(offset)},
      ArrayRef<OpFoldResult>{count, b.getIndexAttr(width)},
      ArrayRef<OpFoldResult>{b.getIndexAttr(1), b.getIndexAttr(1)});
}

/// `part` [R, W] written into the 2-D `into` from row `start` and feature
/// `offset` on.
Value insertRows(LinalgBuilder &lb, Value part, Value into, OpFoldResult start,
                 int64_t offset = 0) {
  OpBuilder &b = lb.getBuilder();
  Location loc = lb.getLoc();
  int64_t width = cast<RankedTensorType>(part.getType()).getDimSize(1);
  return b.create<tensor::InsertSliceOp>(
      loc, part, into, ArrayRef<OpFoldResult>{start, b.getIndexAttr(offset)},
      ArrayRef<OpFoldResult>{tensor::getMixedSize(b, loc, part, 0),
                             b.getIndexAttr(width)},
      ArrayRef<OpFoldResult>{b.getIndexAttr(1), b.getIndexAttr(1)});
}

Value toI32(Scalar &s, Value index) {
  return s.b.create<arith::IndexCastOp>(s.loc, s.b.getI32Type(), index);
}

/// The order in which an LSTM visits the frames of a batch: that of
/// PyTorch's PackedSequence and cuDNN's packed layout. The sequences are
/// sorted by length, longest first (ties in batch order); step s holds
/// the A(s) sequences longer than s, as rows [start(s), start(s) + A(s))
/// of an [N, ...] tensor in that sorted order, N being the real frames.
/// A direction's step s of a sequence of length L is its frame s (forward)
/// or L - 1 - s (backward, so each sequence starts at its own end). As A(s)
/// never grows, the sequences running at step s are the first A(s) of the
/// sorted order: the recurrent state is a [B, H] tensor whose leading A(s)
/// rows a step reads and writes, and a step's input, output and tape rows
/// are contiguous.
///
/// The frames outside the step order are padded [B, T, ...] or, with
/// `packedOffsets` (each sequence's first row, tensor<?xi32> over B),
/// packed [N, ...]: frame t of sequence b is then row offset(b) + t.
class StepOrder {
public:
  StepOrder(LinalgBuilder &lb, Value lengths, OpFoldResult batch,
            OpFoldResult time, Value packedOffsets);

  OpFoldResult getBatch() const { return batch; }
  /// The number of steps (the longest length) and of rows (N), as index.
  Value getSteps() const { return steps; }
  Value getRows() const { return rows; }
  /// The first row of `step`, an index in [0, T] (start(T) = N).
  Value stepStart(Scalar &s, Value step) const {
    return s.toIndex(s.b.create<tensor::ExtractOp>(s.loc, starts, step));
  }

  /// Features [offset, offset + width) of x [B, T, F] (or packed [N, F])
  /// as [N, width] rows in a direction's order; padded frames are not
  /// read.
  Value gather(LinalgBuilder &lb, Value x, bool reversed, int64_t offset,
               int64_t width);

  /// One direction's rows [N, W] for `scatter`, landing at features
  /// [offset, offset + W) of the padded result.
  struct Part {
    Value rows;
    bool reversed;
    int64_t offset;
  };
  /// A padded [B, T, F] (zero on padded frames) or packed [N, F] from rows
  /// in step order: the parts side by side (`sum` false: in increasing offset
  /// order, without gaps) or added up (`sum` true; every part then spans all F
  /// features).
  Value scatter(LinalgBuilder &lb, ArrayRef<Part> parts, int64_t features,
                bool sum) const;

  /// Features [offset, offset + width) of `rows` [N, ...] one step earlier
  /// of the same sequence: zero at its step 0.
  Value previousStep(LinalgBuilder &lb, Value rows, int64_t offset,
                     int64_t width) const;

  bool isPacked() const { return packedOffsets != nullptr; }

private:
  /// [N] i32: the row of the collapsed padded [B * T, ...] tensor (or of
  /// the packed one) that each row of a direction's order holds; built
  /// once per direction.
  Value sourceRows(LinalgBuilder &lb, bool reversed);

  OpFoldResult batch, time;
  /// [B] i32: the lengths; each sequence's place in the sorted order; the
  /// sequence at each place; packed frames: each sequence's first row.
  Value lengths, place, sequenceAt, packedOffsets;
  /// Packed frames: [N] i32, the sequence of each packed row.
  Value packedSequence;
  /// [T + 1] i32: start(s), start(T) = N.
  Value starts;
  /// [N] i32: the step of each row.
  Value rowStep;
  /// The longest length and N, as index.
  Value steps, rows;
  /// sourceRows per direction (forward, reversed), built on first use.
  Value sources[2];
};

StepOrder::StepOrder(LinalgBuilder &lb, Value lengths, OpFoldResult batch,
                     OpFoldResult time, Value packedOffsets)
    : batch(batch), time(time), lengths(lengths), packedOffsets(packedOffsets) {
  OpBuilder &b = lb.getBuilder();
  Location loc = lb.getLoc();
  Type i32 = b.getI32Type();
  AffineExpr d0 = b.getAffineDimExpr(0), d1 = b.getAffineDimExpr(1);
  AffineMap first = AffineMap::get(2, 0, d0), second = AffineMap::get(2, 0, d1);
  SmallVector<IteratorType> reduceSecond{IteratorType::parallel,
                                         IteratorType::reduction};
  // place[b] = #{b' : L[b'] > L[b], or L[b'] = L[b] and b' < b}: B^2
  // comparisons, far less than one step's GEMM at any realistic batch.
  Value zeros = lb.filled({batch}, i32, 0.0);
  place = lb.generic(
      zeros.getType(), {lengths, lengths}, zeros, {first, second, first},
      reduceSecond, [&](OpBuilder &nested, Location l, ValueRange args) {
        Scalar s{nested, l};
        Value own = args[0], other = args[1];
        Value longer = nested.create<arith::CmpIOp>(
            l, arith::CmpIPredicate::sgt, other, own);
        Value tie = s.andI(nested.create<arith::CmpIOp>(
                               l, arith::CmpIPredicate::eq, other, own),
                           s.lt(s.index(1), s.index(0)));
        Value before = nested.create<arith::OrIOp>(l, longer, tie);
        Value one = nested.create<arith::ExtUIOp>(l, i32, before);
        nested.create<linalg::YieldOp>(l, s.add(args[2], one));
      });
  // sequenceAt[k] = the b whose place is k.
  sequenceAt = lb.generic(
      zeros.getType(), place, zeros, {second, first}, reduceSecond,
      [&](OpBuilder &nested, Location l, ValueRange args) {
        Scalar s{nested, l};
        Value here = nested.create<arith::CmpIOp>(
            l, arith::CmpIPredicate::eq, args[0], toI32(s, s.index(0)));
        Value sequence = toI32(s, s.index(1));
        nested.create<linalg::YieldOp>(
            l, s.add(args[1], s.select(here, sequence, s.i32(0))));
      });
  // start(s) = sum over b of min(L[b], s), for s in [0, T].
  Value timeValue = getValueOrCreateConstantIndexOp(b, loc, time);
  Value one = b.create<arith::ConstantIndexOp>(loc, 1);
  Value startCount = b.create<arith::AddIOp>(loc, timeValue, one);
  Value startInit = lb.filled({startCount}, i32, 0.0);
  starts = lb.generic(
      startInit.getType(), lengths, startInit, {second, first}, reduceSecond,
      [&](OpBuilder &nested, Location l, ValueRange args) {
        Scalar s{nested, l};
        Value before = s.minI(args[0], toI32(s, s.index(0)));
        nested.create<linalg::YieldOp>(l, s.add(args[1], before));
      });
  Scalar s{b, loc};
  rows = stepStart(s, timeValue);
  // The longest length: the number of steps.
  Value longestInit = lb.filled({}, i32, 0.0);
  Value longest = lb.generic(
      longestInit.getType(), lengths, longestInit,
      {b.getMultiDimIdentityMap(1), AffineMap::get(1, 0, {}, b.getContext())},
      {IteratorType::reduction},
      [&](OpBuilder &nested, Location l, ValueRange args) {
        Scalar s{nested, l};
        nested.create<linalg::YieldOp>(l, s.maxI(args[0], args[1]));
      });
  steps = s.toIndex(b.create<tensor::ExtractOp>(loc, longest, ValueRange{}));
  // The step of row r: the last s with start(s) <= r, among start's T
  // entries before start(T) = N.
  rowStep = ownerOfRows(lb, starts, timeValue, rows);
  if (packedOffsets)
    packedSequence =
        ownerOfRows(lb, packedOffsets,
                    getValueOrCreateConstantIndexOp(b, loc, batch), rows);
}

Value StepOrder::sourceRows(LinalgBuilder &lb, bool reversed) {
  if (Value cached = sources[reversed])
    return cached;
  OpBuilder &b = lb.getBuilder();
  Value timeValue = getValueOrCreateConstantIndexOp(b, lb.getLoc(), time);
  Value init = lb.empty({rows}, b.getI32Type());
  AffineMap identity = b.getMultiDimIdentityMap(1);
  sources[reversed] = lb.generic(
      init.getType(), rowStep, init, {identity, identity},
      {IteratorType::parallel},
      [&](OpBuilder &nested, Location l, ValueRange args) {
        Scalar s{nested, l};
        Value step = s.toIndex(args[0]);
        Value k = s.sub(s.index(0), stepStart(s, step));
        Value sequence =
            s.toIndex(nested.create<tensor::ExtractOp>(l, sequenceAt, k));
        Value frame = step;
        if (reversed) {
          Value length =
              s.toIndex(nested.create<tensor::ExtractOp>(l, lengths, sequence));
          frame = s.sub(s.sub(length, s.idx(1)), step);
        }
        Value first = packedOffsets
                          ? s.toIndex(nested.create<tensor::ExtractOp>(
                                l, packedOffsets, sequence))
                          : s.mul(sequence, timeValue);
        nested.create<linalg::YieldOp>(l, toI32(s, s.add(first, frame)));
      });
  return sources[reversed];
}

Value StepOrder::gather(LinalgBuilder &lb, Value x, bool reversed,
                        int64_t offset, int64_t width) {
  OpBuilder &b = lb.getBuilder();
  Value source = sourceRows(lb, reversed);
  Value frames = toRows(b, lb.getLoc(), x, isPacked() ? 1 : 2);
  Type element = cast<RankedTensorType>(x.getType()).getElementType();
  Value init = lb.empty({rows, b.getIndexAttr(width)}, element);
  return lb.generic(init.getType(), source, init,
                    {AffineMap::get(2, 0, b.getAffineDimExpr(0)),
                     b.getMultiDimIdentityMap(2)},
                    {IteratorType::parallel, IteratorType::parallel},
                    [&](OpBuilder &nested, Location l, ValueRange args) {
                      Scalar s{nested, l};
                      Value feature = s.add(s.index(1), s.idx(offset));
                      Value v = nested.create<tensor::ExtractOp>(
                          l, frames, ValueRange{s.toIndex(args[0]), feature});
                      nested.create<linalg::YieldOp>(l, v);
                    });
}

Value StepOrder::scatter(LinalgBuilder &lb, ArrayRef<Part> parts,
                         int64_t features, bool sum) const {
  OpBuilder &b = lb.getBuilder();
  Type element =
      cast<RankedTensorType>(parts.front().rows.getType()).getElementType();
  // Feature `feature` of real frame `frame` of the sequence of length
  // `length` at `sortedPlace` in the sorted order, read from the parts.
  auto frameValue = [&](Scalar &s, Value length, Value sortedPlace, Value frame,
                        Value feature) {
    Value result;
    for (const Part &part : parts) {
      Value step =
          part.reversed ? s.sub(s.sub(length, s.idx(1)), frame) : frame;
      Value row = s.add(stepStart(s, step), sortedPlace);
      int64_t width = cast<RankedTensorType>(part.rows.getType()).getDimSize(1);
      Value own = s.sub(feature, s.idx(part.offset));
      Value column = s.maxI(s.minI(own, s.idx(width - 1)), s.idx(0));
      Value v = s.b.create<tensor::ExtractOp>(s.loc, part.rows,
                                              ValueRange{row, column});
      if (!result) {
        result = v;
      } else if (sum) {
        result = s.add(result, v);
      } else {
        Value inPart = s.ge(feature, s.idx(part.offset));
        result = s.select(inPart, v, result);
      }
    }
    return result;
  };
  if (isPacked()) {
    // Every packed row is a real frame: no branch.
    Value init = lb.empty({rows, b.getIndexAttr(features)}, element);
    return lb.generic(
        init.getType(), packedSequence, init,
        {AffineMap::get(2, 0, b.getAffineDimExpr(0)),
         b.getMultiDimIdentityMap(2)},
        {IteratorType::parallel, IteratorType::parallel},
        [&](OpBuilder &nested, Location l, ValueRange args) {
          Scalar s{nested, l};
          Value sequence = s.toIndex(args[0]);
          auto at = [&](Value table) {
            return s.toIndex(
                nested.create<tensor::ExtractOp>(l, table, sequence));
          };
          Value frame = s.sub(s.index(0), at(packedOffsets));
          nested.create<linalg::YieldOp>(
              l, frameValue(s, at(lengths), at(place), frame, s.index(1)));
        });
  }
  Value init = lb.empty({batch, time, b.getIndexAttr(features)}, element);
  AffineMap perSequence = AffineMap::get(3, 0, b.getAffineDimExpr(0));
  return lb.generic(init.getType(), {lengths, place}, init,
                    {perSequence, perSequence, b.getMultiDimIdentityMap(3)},
                    SmallVector<IteratorType>(3, IteratorType::parallel),
                    [&](OpBuilder &nested, Location l, ValueRange args) {
                      Scalar s{nested, l};
                      Value length = s.toIndex(args[0]);
                      Value frame = s.index(1), feature = s.index(2);
                      Value zero = s.f(element, 0.0);
                      // Padded frames have no row; the scf.if keeps them from
                      // being read (there may be no rows at all).
                      auto branch = nested.create<scf::IfOp>(
                          l, s.lt(frame, length),
                          [&](OpBuilder &then, Location tl) {
                            Scalar s{then, tl};
                            then.create<scf::YieldOp>(
                                tl, frameValue(s, length, s.toIndex(args[1]),
                                               frame, feature));
                          },
                          [&](OpBuilder &otherwise, Location el) {
                            otherwise.create<scf::YieldOp>(el, zero);
                          });
                      nested.create<linalg::YieldOp>(l, branch.getResult(0));
                    });
}

Value StepOrder::previousStep(LinalgBuilder &lb, Value rowValues,
                              int64_t offset, int64_t width) const {
  OpBuilder &b = lb.getBuilder();
  Type element = cast<RankedTensorType>(rowValues.getType()).getElementType();
  Value init = lb.empty({rows, b.getIndexAttr(width)}, element);
  return lb.generic(init.getType(), rowStep, init,
                    {AffineMap::get(2, 0, b.getAffineDimExpr(0)),
                     b.getMultiDimIdentityMap(2)},
                    {IteratorType::parallel, IteratorType::parallel},
                    [&](OpBuilder &nested, Location l, ValueRange args) {
                      Scalar s{nested, l};
                      Value step = s.toIndex(args[0]);
                      Value k = s.sub(s.index(0), stepStart(s, step));
                      // At step 0 the row read is the sequence's own (k < A(0)
                      // <= N) and selected away.
                      Value first = s.lt(step, s.idx(1));
                      Value before = s.maxI(s.sub(step, s.idx(1)), s.idx(0));
                      Value row = s.add(stepStart(s, before), k);
                      Value v = nested.create<tensor::ExtractOp>(
                          l, rowValues,
                          ValueRange{row, s.add(s.index(1), s.idx(offset))});
                      nested.create<linalg::YieldOp>(
                          l, s.select(first, s.f(element, 0.0), v));
                    });
}

/// Where a direction's blocks lie in an LSTM's tape: rows in step order,
/// per direction six blocks of H features from `offset` on: the cell
/// state, the four gate activations (i, f, g, o) and the output h
/// (nn.lstm_with_tape's tape, docs/autodiff.md).
struct LstmTape {
  Value rows;
  int64_t offset = 0;
  static constexpr int64_t kBlocks = 6, kCells = 0, kGates = 1, kOutput = 5;
};

/// A loop over [0, `count`) steps whose body builds with `lb` (the
/// LinalgBuilder's builder is pointed into it) and yields the carried
/// values.
SmallVector<Value>
stepLoop(LinalgBuilder &lb, Value count, ValueRange init,
         function_ref<SmallVector<Value>(Value step, ValueRange)> body) {
  OpBuilder &b = lb.getBuilder();
  Location loc = lb.getLoc();
  Value zero = b.create<arith::ConstantIndexOp>(loc, 0);
  Value one = b.create<arith::ConstantIndexOp>(loc, 1);
  auto loop = b.create<scf::ForOp>(
      loc, zero, count, one, init,
      [&](OpBuilder &nested, Location l, Value step, ValueRange carried) {
        OpBuilder::InsertionGuard guard(b);
        b.setInsertionPoint(nested.getInsertionBlock(),
                            nested.getInsertionPoint());
        b.create<scf::YieldOp>(l, body(step, carried));
      });
  return SmallVector<Value>(loop.getResults());
}

/// One direction of an LSTM over its input rows x [N, I] in step order
/// (StepOrder::gather); returns its outputs [N, H] in that order. With a
/// `tape`, every row's blocks are written into it too.
Value lstmSteps(LinalgBuilder &lb, const StepOrder &order, Value x, Value wi,
                Value wh, Value bias, int64_t hidden,
                LstmTape *tape = nullptr) {
  OpBuilder &b = lb.getBuilder();
  Type element = cast<RankedTensorType>(x.getType()).getElementType();
  OpFoldResult width = b.getIndexAttr(hidden);
  // The input projection of every real frame at once: one GEMM.
  Value projected = lb.linear(x, wi, bias); // [N, 4H]
  Value state0 = lb.filled({order.getBatch(), width}, element, 0.0);
  // Every row is written by exactly one step.
  Value y0 = lb.empty({order.getRows(), width}, element);
  SmallVector<Value> init{state0, state0, y0};
  if (tape)
    init.push_back(tape->rows);
  SmallVector<Value> results = stepLoop(
      lb, order.getSteps(), init,
      [&](Value step, ValueRange state) -> SmallVector<Value> {
        Scalar s = lb.scalar();
        Value start = order.stepStart(s, step);
        Value running = s.sub(order.stepStart(s, s.add(step, s.idx(1))), start);
        Value h = sliceRows(lb, state[0], s.idx(0), running, 0, hidden);
        Value c = sliceRows(lb, state[1], s.idx(0), running, 0, hidden);
        Value gates = sliceRows(lb, projected, start, running, 0, 4 * hidden);
        Value recurrent = lb.matmulTransposeB(h, wh); // [A, 4H]
        // Loop bounds come from the first operand that indexes a loop
        // plainly, so the [A, H] state goes first: gate k of unit j is
        // column k * H + j of the [A, 4H] gate tensors.
        AffineMap identity = b.getMultiDimIdentityMap(2);
        SmallVector<AffineMap> maps{identity};
        SmallVector<Value> inputs{c};
        for (Value source : {gates, recurrent})
          for (int k = 0; k < 4; ++k) {
            inputs.push_back(source);
            maps.push_back(AffineMap::get(
                2, 0,
                {b.getAffineDimExpr(0), b.getAffineDimExpr(1) + k * hidden},
                b.getContext()));
          }
        unsigned outputs = tape ? 7 : 2;
        maps.append(outputs, identity);
        Value out = lb.empty({running, width}, element);
        auto update = b.create<linalg::GenericOp>(
            lb.getLoc(), SmallVector<Type>(outputs, out.getType()), inputs,
            SmallVector<Value>(outputs, out), maps,
            SmallVector<IteratorType>(2, IteratorType::parallel),
            [&](OpBuilder &body, Location bl, ValueRange args) {
              Scalar s{body, bl};
              Value cPrev = args[0];
              ValueRange gate = args.slice(1, 4), rec = args.slice(5, 4);
              Value i = s.sigmoid(s.add(gate[0], rec[0]));
              Value f = s.sigmoid(s.add(gate[1], rec[1]));
              Value g = s.tanh(s.add(gate[2], rec[2]));
              Value o = s.sigmoid(s.add(gate[3], rec[3]));
              Value cNext = s.add(s.mul(f, cPrev), s.mul(i, g));
              SmallVector<Value> results{s.mul(o, s.tanh(cNext)), cNext};
              if (tape)
                results.append({cNext, i, f, g, o});
              body.create<linalg::YieldOp>(bl, results);
            });
        Value hNext = update.getResult(0);
        SmallVector<Value> next{
            insertRows(lb, hNext, state[0], s.idx(0)),
            insertRows(lb, update.getResult(1), state[1], s.idx(0)),
            insertRows(lb, hNext, state[2], start)};
        if (tape) {
          // Blocks: the cells and the four gates (results 2..6), then h.
          Value rows = state[3];
          for (int64_t k = 0; k < 5; ++k)
            rows = insertRows(lb, update.getResult(2 + k), rows, start,
                              tape->offset + k * hidden);
          next.push_back(insertRows(lb, hNext, rows, start,
                                    tape->offset + LstmTape::kOutput * hidden));
        }
        return next;
      });
  if (tape)
    tape->rows = results[3];
  return results[2];
}

/// The gradients of one LSTM direction's input rows and weights.
struct LstmGrads {
  Value input, inputWeight, recurrentWeight, bias;
};

/// Backpropagation through time of one direction over its input rows
/// x [N, I] given its output gradient rows dy [N, H], both in step order.
/// It reads the forward's `tape` or, without one, runs the forward again
/// to record it (docs/autodiff.md); then a loop from the last step down
/// carries the recurrent gradients dh and dc of the running sequences
/// (a sequence joins at its own last frame with zero). The gate gradients
/// [N, 4H] feed three GEMMs and a sum, as a linear's backward would.
LstmGrads lstmBackwardSteps(LinalgBuilder &lb, const StepOrder &order, Value x,
                            Value dy, Value wi, Value wh, Value bias,
                            int64_t hidden, bool inputGradient,
                            LstmTape tape = {}) {
  OpBuilder &b = lb.getBuilder();
  Type element = cast<RankedTensorType>(x.getType()).getElementType();
  OpFoldResult width = b.getIndexAttr(hidden);
  if (!tape.rows) {
    // A tape of this direction alone, whatever offset the caller's
    // two-direction layout would have given it.
    tape.offset = 0;
    tape.rows = lb.empty(
        {order.getRows(), b.getIndexAttr(LstmTape::kBlocks * hidden)}, element);
    lstmSteps(lb, order, x, wi, wh, bias, hidden, &tape);
  }
  auto block = [&](int64_t k) { return tape.offset + k * hidden; };
  // A sequence's dh and dc are zero until its last frame: rows of the
  // state past the running ones are never written before they run.
  Value state0 = lb.filled({order.getBatch(), width}, element, 0.0);
  Value gates0 =
      lb.empty({order.getRows(), b.getIndexAttr(4 * hidden)}, element);
  Value steps = order.getSteps();
  SmallVector<Value> results = stepLoop(
      lb, steps, {state0, state0, gates0},
      [&](Value iteration, ValueRange state) -> SmallVector<Value> {
        Scalar s = lb.scalar();
        Value step = s.sub(s.sub(steps, s.idx(1)), iteration);
        Value start = order.stepStart(s, step);
        Value running = s.sub(order.stepStart(s, s.add(step, s.idx(1))), start);
        // The cell before step 0 is zero (selected in the body); the rows
        // read for it there are the step's own.
        Value before =
            order.stepStart(s, s.maxI(s.sub(step, s.idx(1)), s.idx(0)));
        Value first = s.lt(step, s.idx(1));
        auto rowsOf = [&](Value from, int64_t k) {
          return sliceRows(lb, tape.rows, from, running, block(k), hidden);
        };
        SmallVector<Value> inputs{
            sliceRows(lb, state[0], s.idx(0), running, 0, hidden),
            sliceRows(lb, state[1], s.idx(0), running, 0, hidden),
            sliceRows(lb, dy, start, running, 0, hidden),
            rowsOf(start, LstmTape::kCells), rowsOf(before, LstmTape::kCells)};
        for (int64_t k = 0; k < 4; ++k)
          inputs.push_back(rowsOf(start, LstmTape::kGates + k));
        AffineMap identity = b.getMultiDimIdentityMap(2);
        SmallVector<AffineMap> maps(inputs.size() + 5, identity);
        Value out = lb.empty({running, width}, element);
        auto frame = b.create<linalg::GenericOp>(
            lb.getLoc(), SmallVector<Type>(5, out.getType()), inputs,
            SmallVector<Value>(5, out), maps,
            SmallVector<IteratorType>(2, IteratorType::parallel),
            [&](OpBuilder &body, Location bl, ValueRange args) {
              Scalar s{body, bl};
              Type f32 = args[0].getType();
              Value zeroF = s.f(f32, 0.0), oneF = s.f(f32, 1.0);
              Value dh = s.add(args[2], args[0]);
              Value c = args[3];
              Value cPrev = s.select(first, zeroF, args[4]);
              Value i = args[5], f = args[6], g = args[7], o = args[8];
              Value tc = s.tanh(c);
              Value dc = s.add(args[1],
                               s.mul(s.mul(dh, o), s.sub(oneF, s.mul(tc, tc))));
              // d(sigmoid) = y (1 - y), d(tanh) = 1 - y^2, at the
              // activations y the tape holds.
              auto dSigmoid = [&](Value v) { return s.mul(v, s.sub(oneF, v)); };
              Value di = s.mul(s.mul(dc, g), dSigmoid(i));
              Value df = s.mul(s.mul(dc, cPrev), dSigmoid(f));
              Value dg = s.mul(s.mul(dc, i), s.sub(oneF, s.mul(g, g)));
              Value dO = s.mul(s.mul(dh, tc), dSigmoid(o));
              body.create<linalg::YieldOp>(
                  bl, ValueRange{s.mul(dc, f), di, df, dg, dO});
            });
        Value gates = state[2];
        for (int k = 0; k < 4; ++k)
          gates =
              insertRows(lb, frame.getResult(1 + k), gates, start, k * hidden);
        // The recurrent gradient for the step before: dgates Wh.
        Value dhBefore = lb.linearGradInput(
            sliceRows(lb, gates, start, running, 0, 4 * hidden), wh);
        return {insertRows(lb, dhBefore, state[0], s.idx(0)),
                insertRows(lb, frame.getResult(0), state[1], s.idx(0)), gates};
      });
  Value dGates = results[2];
  Value hBefore =
      order.previousStep(lb, tape.rows, block(LstmTape::kOutput), hidden);
  return {inputGradient ? lb.linearGradInput(dGates, wi) : Value(),
          lb.linearGradWeight(dGates, x, {}),
          lb.linearGradWeight(dGates, hBefore, {}),
          lb.sumValidPositions(dGates, 1, {})};
}

/// weights[direction] of a bidirectional layer's stacked weights.
Value sliceDirection(LinalgBuilder &lb, Value weights, int64_t direction) {
  OpBuilder &b = lb.getBuilder();
  Location loc = lb.getLoc();
  auto type = cast<RankedTensorType>(weights.getType());
  unsigned rank = type.getRank();
  SmallVector<OpFoldResult> offsets(rank, b.getIndexAttr(0));
  offsets[0] = b.getIndexAttr(direction);
  SmallVector<OpFoldResult> sliceSizes{b.getIndexAttr(1)};
  for (unsigned i = 1; i < rank; ++i)
    sliceSizes.push_back(b.getIndexAttr(type.getDimSize(i)));
  SmallVector<OpFoldResult> strides(rank, b.getIndexAttr(1));
  auto resultType = RankedTensorType::get(type.getShape().drop_front(),
                                          type.getElementType());
  return b.create<tensor::ExtractSliceOp>(loc, resultType, weights, offsets,
                                          sliceSizes, strides);
}

/// Whether direction `d` (0 or 1) of an LSTM runs over each sequence
/// reversed.
bool isReversed(LstmDirection direction, int64_t d) {
  return direction == LstmDirection::backward ||
         (direction == LstmDirection::bidirectional && d == 1);
}

/// A direction's weights: the stacked ones' slice when bidirectional.
struct DirectionWeights {
  Value input, recurrent, bias;
};
DirectionWeights weightsOf(LinalgBuilder &b, LstmDirection direction, int64_t d,
                           Value wi, Value wh, Value bias) {
  if (direction != LstmDirection::bidirectional)
    return {wi, wh, bias};
  return {sliceDirection(b, wi, d), sliceDirection(b, wh, d),
          sliceDirection(b, bias, d)};
}

/// The step order of an LSTM's input of `inputType`, padded [B, T, I] or
/// packed [N, I].
StepOrder stepOrderOf(LinalgBuilder &b, NNTensorType inputType) {
  const BoundDims &dims = b.getDims();
  if (inputType.getNumPositionDims() == 2) {
    SmallVector<OpFoldResult> sizes = b.sizes(inputType);
    return StepOrder(b, dims.lengths(inputType.getDimName(1)), sizes[0],
                     sizes[1], /*packedOffsets=*/nullptr);
  }
  DimDeclAttr packed = dims.getDecls().lookup(inputType.getDimName(0));
  Value batch = dims.size(packed.getBatch().getValue());
  Value lengths = dims.lengths(packed.getSource().getValue());
  Value offsets = exclusivePrefixSum(b, batch, lengths).first;
  return StepOrder(b, lengths, batch, dims.size(packed.getSource().getValue()),
                   offsets);
}

/// nn.lstm's result; with `tape` (a [B, T, D * 6H] or [N, D * 6H] tensor
/// to write), also its tape: rows in step order, its first N rows, the
/// forward direction's blocks first.
Value lowerLstm(LinalgBuilder &b, LstmDirection direction,
                NNTensorType inputType, Value x, Value wi, Value wh, Value bias,
                Value *tape) {
  auto whType = cast<RankedTensorType>(wh.getType());
  int64_t hidden = whType.getDimSize(whType.getRank() - 1);
  int64_t inputs = inputType.getStaticSize(inputType.getRank() - 1);
  StepOrder order = stepOrderOf(b, inputType);
  unsigned positions = inputType.getNumPositionDims();
  LstmTape record;
  if (tape)
    record.rows = toRows(b.getBuilder(), b.getLoc(), *tape, positions);
  int64_t directions = direction == LstmDirection::bidirectional ? 2 : 1;
  SmallVector<StepOrder::Part> parts;
  for (int64_t d = 0; d < directions; ++d) {
    bool reversed = isReversed(direction, d);
    DirectionWeights w = weightsOf(b, direction, d, wi, wh, bias);
    record.offset = d * LstmTape::kBlocks * hidden;
    Value rows =
        lstmSteps(b, order, order.gather(b, x, reversed, 0, inputs), w.input,
                  w.recurrent, w.bias, hidden, tape ? &record : nullptr);
    parts.push_back({rows, reversed, d * hidden});
  }
  if (tape)
    *tape = fromRows(b.getBuilder(), b.getLoc(), record.rows, positions,
                     tensor::getMixedSizes(b.getBuilder(), b.getLoc(), *tape));
  return order.scatter(b, parts, directions * hidden, /*sum=*/false);
}

class LstmConversion : public NNConversionPattern<LstmOp> {
public:
  using NNConversionPattern::NNConversionPattern;

  FailureOr<SmallVector<Value>> build(LstmOp op, OpAdaptor adaptor,
                                      LinalgBuilder &b) const override {
    return SmallVector<Value>{lowerLstm(
        b, op.getDirection(), cast<NNTensorType>(op.getInput().getType()),
        adaptor.getInput(), adaptor.getInputWeight(),
        adaptor.getRecurrentWeight(), adaptor.getBias(), nullptr)};
  }
};

class LstmWithTapeConversion : public NNConversionPattern<LstmWithTapeOp> {
public:
  using NNConversionPattern::NNConversionPattern;

  FailureOr<SmallVector<Value>> build(LstmWithTapeOp op, OpAdaptor adaptor,
                                      LinalgBuilder &b) const override {
    auto tapeType = cast<NNTensorType>(op.getTape().getType());
    // The first N rows are written; the backward reads no others.
    Value tape = b.empty(b.sizes(tapeType), tapeType.getElementType());
    Value result = lowerLstm(
        b, op.getDirection(), cast<NNTensorType>(op.getInput().getType()),
        adaptor.getInput(), adaptor.getInputWeight(),
        adaptor.getRecurrentWeight(), adaptor.getBias(), &tape);
    return SmallVector<Value>{result, tape};
  }
};

/// The two directions' weight gradients stacked on a leading axis of 2.
Value stackDirections(LinalgBuilder &lb, Value forward, Value backward) {
  OpBuilder &b = lb.getBuilder();
  auto type = cast<RankedTensorType>(forward.getType());
  SmallVector<int64_t> shape{2};
  llvm::append_range(shape, type.getShape());
  SmallVector<OpFoldResult> sizes;
  for (int64_t size : shape)
    sizes.push_back(b.getIndexAttr(size));
  Value stacked = lb.empty(sizes, type.getElementType());
  sizes[0] = b.getIndexAttr(1);
  SmallVector<OpFoldResult> strides(shape.size(), b.getIndexAttr(1));
  std::array<Value, 2> parts{forward, backward};
  for (auto [direction, part] : llvm::enumerate(parts)) {
    SmallVector<OpFoldResult> offsets(shape.size(), b.getIndexAttr(0));
    offsets[0] = b.getIndexAttr(direction);
    stacked = b.create<tensor::InsertSliceOp>(lb.getLoc(), part, stacked,
                                              offsets, sizes, strides);
  }
  return stacked;
}

class LstmGradConversion : public NNConversionPattern<LstmGradOp> {
public:
  using NNConversionPattern::NNConversionPattern;

  FailureOr<SmallVector<Value>> build(LstmGradOp op, OpAdaptor adaptor,
                                      LinalgBuilder &b) const override {
    auto inputType = cast<NNTensorType>(op.getInput().getType());
    LstmDirection direction = op.getDirection();
    Value x = adaptor.getInput(), dy = adaptor.getGrad();
    Value wi = adaptor.getInputWeight();
    Value wh = adaptor.getRecurrentWeight();
    Value bias = adaptor.getBias();
    auto whType = cast<RankedTensorType>(wh.getType());
    int64_t hidden = whType.getDimSize(whType.getRank() - 1);
    int64_t inputs = inputType.getStaticSize(inputType.getRank() - 1);
    StepOrder order = stepOrderOf(b, inputType);
    // The input gradient of a first layer has no use: not computed (an
    // empty tensor stands for it).
    bool inputGradient = !op.getInputGrad().use_empty();
    Value tapeRows;
    if (Value tape = adaptor.getTape())
      tapeRows = toRows(b.getBuilder(), b.getLoc(), tape,
                        inputType.getNumPositionDims());
    int64_t directions = direction == LstmDirection::bidirectional ? 2 : 1;
    SmallVector<LstmGrads> grads;
    SmallVector<StepOrder::Part> inputParts;
    for (int64_t d = 0; d < directions; ++d) {
      bool reversed = isReversed(direction, d);
      DirectionWeights w = weightsOf(b, direction, d, wi, wh, bias);
      // The forward's tape, if it kept one: direction d's blocks start at
      // d * 6H.
      LstmTape tape;
      tape.rows = tapeRows;
      tape.offset = d * LstmTape::kBlocks * hidden;
      grads.push_back(lstmBackwardSteps(
          b, order, order.gather(b, x, reversed, 0, inputs),
          order.gather(b, dy, reversed, d * hidden, hidden), w.input,
          w.recurrent, w.bias, hidden, inputGradient, tape));
      inputParts.push_back({grads.back().input, reversed, 0});
    }
    Value inputGrad =
        inputGradient ? order.scatter(b, inputParts, inputs, /*sum=*/true)
                      : b.empty(b.sizes(inputType), inputType.getElementType());
    if (directions == 1)
      return SmallVector<Value>{inputGrad, grads[0].inputWeight,
                                grads[0].recurrentWeight, grads[0].bias};
    return SmallVector<Value>{
        inputGrad,
        stackDirections(b, grads[0].inputWeight, grads[1].inputWeight),
        stackDirections(b, grads[0].recurrentWeight, grads[1].recurrentWeight),
        stackDirections(b, grads[0].bias, grads[1].bias)};
  }
};

} // namespace

void mlir::nn::populateRecurrentConversionPatterns(
    const TypeConverter &converter, ConversionState &state,
    RewritePatternSet &patterns) {
  patterns.add<LstmConversion, LstmWithTapeConversion, LstmGradConversion>(
      converter, state);
}
