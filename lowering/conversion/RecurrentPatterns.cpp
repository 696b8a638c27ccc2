//===- RecurrentPatterns.cpp - recurrent layers to scf loops --------------===//
//
// A recurrence becomes an scf.for over time: one GEMM projects every
// frame's input at once, and each step updates only the sequences still
// running (t < len). The backward direction runs on each sequence reversed
// within its own length, so padding never enters the state.
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

/// y[b, t] = x[b, len(b) - 1 - t] for t < len(b), else 0.
Value reverseWithinLengths(LinalgBuilder &lb, Value x, Value lengths) {
  OpBuilder &b = lb.getBuilder();
  Location loc = lb.getLoc();
  auto type = cast<RankedTensorType>(x.getType());
  unsigned rank = type.getRank();
  Value init =
      lb.empty(tensor::getMixedSizes(b, loc, x), type.getElementType());
  AffineMap identity = b.getMultiDimIdentityMap(rank);
  AffineMap batch = AffineMap::get(rank, 0, b.getAffineDimExpr(0));
  return lb.generic(type, lengths, init, {batch, identity},
                    SmallVector<IteratorType>(rank, IteratorType::parallel),
                    [&](OpBuilder &nested, Location l, ValueRange args) {
                      Scalar s{nested, l};
                      Value length = s.toIndex(args[0]);
                      Value t = s.index(1);
                      Value valid = s.lt(t, length);
                      Value source = s.sub(s.sub(length, s.idx(1)), t);
                      source = s.select(valid, source, s.idx(0));
                      SmallVector<Value> indices{s.index(0), source};
                      for (unsigned i = 2; i < rank; ++i)
                        indices.push_back(s.index(i));
                      Value v = nested.create<tensor::ExtractOp>(l, x, indices);
                      Value zero = s.f(type.getElementType(), 0.0);
                      nested.create<linalg::YieldOp>(l,
                                                     s.select(valid, v, zero));
                    });
}

/// Frame t of x [B, T, K] as [B, K]; with `width`, features
/// [offset, offset + width) of it.
Value extractFrame(LinalgBuilder &lb, Value x, OpFoldResult t,
                   int64_t offset = 0, int64_t width = -1) {
  OpBuilder &b = lb.getBuilder();
  auto type = cast<RankedTensorType>(x.getType());
  if (width < 0)
    width = type.getDimSize(2);
  auto frameType = RankedTensorType::get({ShapedType::kDynamic, width},
                                         type.getElementType());
  return b.create<tensor::ExtractSliceOp>(
      lb.getLoc(), frameType, x,
      ArrayRef<OpFoldResult>{b.getIndexAttr(0), t, b.getIndexAttr(offset)},
      ArrayRef<OpFoldResult>{tensor::getMixedSize(b, lb.getLoc(), x, 0),
                             b.getIndexAttr(1), b.getIndexAttr(width)},
      ArrayRef<OpFoldResult>{b.getIndexAttr(1), b.getIndexAttr(1),
                             b.getIndexAttr(1)});
}

/// `frame` [B, K] written into frame t of `into` [B, T, W] at feature
/// `offset`.
Value insertFrame(LinalgBuilder &lb, Value frame, Value into, OpFoldResult t,
                  int64_t offset = 0) {
  OpBuilder &b = lb.getBuilder();
  int64_t width = cast<RankedTensorType>(frame.getType()).getDimSize(1);
  return b.create<tensor::InsertSliceOp>(
      lb.getLoc(), frame, into,
      ArrayRef<OpFoldResult>{b.getIndexAttr(0), t, b.getIndexAttr(offset)},
      ArrayRef<OpFoldResult>{tensor::getMixedSize(b, lb.getLoc(), into, 0),
                             b.getIndexAttr(1), b.getIndexAttr(width)},
      ArrayRef<OpFoldResult>{b.getIndexAttr(1), b.getIndexAttr(1),
                             b.getIndexAttr(1)});
}

/// What the backward of a forward LSTM reads from its forward, per frame:
/// six blocks of H features from `offset` on in a [B, T, W] tensor, zero
/// on padded frames: the cell state, the four gate activations (i, f, g,
/// o) and the output h (nn.lstm_with_tape's tape, docs/autodiff.md).
struct LstmTape {
  Value frames;
  int64_t offset = 0;
  static constexpr int64_t kBlocks = 6, kCells = 0, kGates = 1, kOutput = 5;
};

/// A forward LSTM over x [B, T, I]; outputs on padded frames are zero.
/// With a `tape`, the per-frame cells, gates and outputs are written into
/// its blocks, and `tape->frames` becomes the written tensor.
Value lstmForward(LinalgBuilder &lb, Value x, Value lengths, Value wi, Value wh,
                  Value bias, int64_t hidden, LstmTape *tape = nullptr) {
  OpBuilder &b = lb.getBuilder();
  Location loc = lb.getLoc();
  auto xType = cast<RankedTensorType>(x.getType());
  Type element = xType.getElementType();
  OpFoldResult batch = tensor::getMixedSize(b, loc, x, 0);
  OpFoldResult time = tensor::getMixedSize(b, loc, x, 1);
  // The input projection of all frames at once: one GEMM.
  Value projected = lb.linear(x, wi, bias); // [B, T, 4H]
  Value h0 = lb.filled({batch, b.getIndexAttr(hidden)}, element, 0.0);
  Value y0 = lb.filled({batch, time, b.getIndexAttr(hidden)}, element, 0.0);
  Value zero = b.create<arith::ConstantIndexOp>(loc, 0);
  Value one = b.create<arith::ConstantIndexOp>(loc, 1);
  Value steps = getValueOrCreateConstantIndexOp(b, loc, time);
  auto stateType = cast<RankedTensorType>(h0.getType());
  // Loop-carried: h, c, y, then the tape.
  SmallVector<Value> carried{h0, h0, y0};
  if (tape)
    carried.push_back(tape->frames);

  auto loop = b.create<scf::ForOp>(
      loc, zero, steps, one, carried,
      [&](OpBuilder &nested, Location l, Value t, ValueRange state) {
        OpBuilder::InsertionGuard guard(b);
        b.setInsertionPoint(nested.getInsertionBlock(),
                            nested.getInsertionPoint());
        Value h = state[0], c = state[1];
        Value gates = extractFrame(lb, projected, t);
        Value recurrent = lb.matmulTransposeB(h, wh); // [B, 4H]
        // Loop bounds come from the first operand that indexes a loop
        // plainly, so the [B, H] state goes first: gate k of unit j is
        // column k * H + j of the [B, 4H] gate tensors.
        AffineMap identity = b.getMultiDimIdentityMap(2);
        AffineMap batchOnly = AffineMap::get(2, 0, b.getAffineDimExpr(0));
        SmallVector<AffineMap> maps{identity, identity, batchOnly};
        SmallVector<Value> inputs{c, h, lengths};
        for (Value source : {gates, recurrent})
          for (int k = 0; k < 4; ++k) {
            inputs.push_back(source);
            maps.push_back(AffineMap::get(
                2, 0,
                {b.getAffineDimExpr(0), b.getAffineDimExpr(1) + k * hidden},
                b.getContext()));
          }
        unsigned outputs = tape ? 8 : 3;
        maps.append(outputs, identity);
        Value init = lb.empty({batch, b.getIndexAttr(hidden)}, element);
        auto step = b.create<linalg::GenericOp>(
            l, SmallVector<Type>(outputs, stateType), inputs,
            SmallVector<Value>(outputs, init), maps,
            SmallVector<IteratorType>(2, IteratorType::parallel),
            [&](OpBuilder &body, Location bl, ValueRange args) {
              Scalar s{body, bl};
              Value cPrev = args[0], hPrev = args[1];
              Value running = s.lt(t, s.toIndex(args[2]));
              ValueRange gate = args.slice(3, 4), rec = args.slice(7, 4);
              Value i = s.sigmoid(s.add(gate[0], rec[0]));
              Value f = s.sigmoid(s.add(gate[1], rec[1]));
              Value g = s.tanh(s.add(gate[2], rec[2]));
              Value o = s.sigmoid(s.add(gate[3], rec[3]));
              Value cNext = s.add(s.mul(f, cPrev), s.mul(i, g));
              Value hNext = s.mul(o, s.tanh(cNext));
              Value zeroF = s.f(cNext.getType(), 0.0);
              SmallVector<Value> results{s.select(running, hNext, hPrev),
                                         s.select(running, cNext, cPrev),
                                         s.select(running, hNext, zeroF)};
              if (tape)
                for (Value v : {cNext, i, f, g, o})
                  results.push_back(s.select(running, v, zeroF));
              body.create<linalg::YieldOp>(bl, results);
            });
        SmallVector<Value> next{
            step.getResult(0), step.getResult(1),
            insertFrame(lb, step.getResult(2), state[2], t)};
        if (tape) {
          // Blocks: cells and the four gates (results 3..7), then h.
          Value frames = state[3];
          for (int64_t k = 0; k < 5; ++k)
            frames = insertFrame(lb, step.getResult(3 + k), frames, t,
                                 tape->offset + k * hidden);
          frames = insertFrame(lb, step.getResult(2), frames, t,
                               tape->offset + LstmTape::kOutput * hidden);
          next.push_back(frames);
        }
        b.create<scf::YieldOp>(l, next);
      });
  if (tape)
    tape->frames = loop.getResult(3);
  return loop.getResult(2);
}

/// y shifted one frame later: result[b, t] = y[b, t - 1], 0 at t = 0 (the
/// state each step of a forward LSTM starts from).
Value previousFrames(LinalgBuilder &lb, Value y) {
  OpBuilder &b = lb.getBuilder();
  auto type = cast<RankedTensorType>(y.getType());
  Value init =
      lb.empty(tensor::getMixedSizes(b, lb.getLoc(), y), type.getElementType());
  return lb.generic(
      type, ValueRange{}, init, {b.getMultiDimIdentityMap(3)},
      SmallVector<IteratorType>(3, IteratorType::parallel),
      [&](OpBuilder &nested, Location l, ValueRange) {
        Scalar s{nested, l};
        Value t = s.index(1);
        Value first = s.lt(t, s.idx(1));
        Value source = s.select(first, s.idx(0), s.sub(t, s.idx(1)));
        Value v = nested.create<tensor::ExtractOp>(
            l, y, ValueRange{s.index(0), source, s.index(2)});
        nested.create<linalg::YieldOp>(
            l, s.select(first, s.f(type.getElementType(), 0.0), v));
      });
}

/// The gradients of one LSTM direction's input and weights.
struct LstmGrads {
  Value input, inputWeight, recurrentWeight, bias;
};

/// Backpropagation through time of a forward LSTM over x [B, T, I], given
/// dy [B, T, H]. It reads the forward's `tape` (nn.lstm_with_tape's) or,
/// without one, runs the forward again to record it (docs/autodiff.md);
/// then a loop from the last frame down carries
/// the recurrent gradients dh and dc, each sequence starting at its own
/// last real frame (padded frames are selected away, so dy there is never
/// read). The per-frame gate gradients [B, T, 4H] are zero on padded
/// frames and feed three GEMMs and a sum, as a linear's backward would.
LstmGrads lstmBackward(LinalgBuilder &lb, Value x, Value dy, Value lengths,
                       Value wi, Value wh, Value bias, int64_t hidden,
                       bool inputGradient, LstmTape tape = {}) {
  OpBuilder &b = lb.getBuilder();
  Location loc = lb.getLoc();
  auto xType = cast<RankedTensorType>(x.getType());
  Type element = xType.getElementType();
  OpFoldResult batch = tensor::getMixedSize(b, loc, x, 0);
  OpFoldResult time = tensor::getMixedSize(b, loc, x, 1);
  if (!tape.frames) {
    // A tape of this direction alone, whatever offset the caller's
    // two-direction layout would have given it.
    tape.offset = 0;
    tape.frames = lb.empty(
        {batch, time, b.getIndexAttr(LstmTape::kBlocks * hidden)}, element);
    lstmForward(lb, x, lengths, wi, wh, bias, hidden, &tape);
  }
  auto block = [&](int64_t k) { return tape.offset + k * hidden; };
  Value y = lb.sliceFeatures(tape.frames, block(LstmTape::kOutput), hidden);

  Value state0 = lb.filled({batch, b.getIndexAttr(hidden)}, element, 0.0);
  Value gates0 =
      lb.filled({batch, time, b.getIndexAttr(4 * hidden)}, element, 0.0);
  Value zero = b.create<arith::ConstantIndexOp>(loc, 0);
  Value one = b.create<arith::ConstantIndexOp>(loc, 1);
  Value steps = getValueOrCreateConstantIndexOp(b, loc, time);
  auto stateType = cast<RankedTensorType>(state0.getType());

  auto loop = b.create<scf::ForOp>(
      loc, zero, steps, one, ValueRange{state0, state0, gates0},
      [&](OpBuilder &nested, Location l, Value step, ValueRange state) {
        OpBuilder::InsertionGuard guard(b);
        b.setInsertionPoint(nested.getInsertionBlock(),
                            nested.getInsertionPoint());
        Scalar s{b, l};
        // Frame t = T - 1 - step; the cell before it is frame t - 1's
        // (zero at t = 0, selected in the body).
        Value t = s.sub(s.sub(steps, one), step);
        Value before = s.maxI(s.sub(t, one), zero);
        Value dhRecurrent = state[0], dcNext = state[1];
        Value cells = tape.frames;
        int64_t cellsAt = block(LstmTape::kCells);
        SmallVector<Value> inputs{
            dhRecurrent,
            dcNext,
            lengths,
            extractFrame(lb, dy, t),
            extractFrame(lb, cells, t, cellsAt, hidden),
            extractFrame(lb, cells, before, cellsAt, hidden)};
        for (int64_t k = 0; k < 4; ++k)
          inputs.push_back(extractFrame(lb, tape.frames, t,
                                        block(LstmTape::kGates + k), hidden));
        AffineMap identity = b.getMultiDimIdentityMap(2);
        AffineMap batchOnly = AffineMap::get(2, 0, b.getAffineDimExpr(0));
        SmallVector<AffineMap> maps(inputs.size() + 5, identity);
        maps[2] = batchOnly;
        Value init = lb.empty({batch, b.getIndexAttr(hidden)}, element);
        auto frame = b.create<linalg::GenericOp>(
            l, SmallVector<Type>(5, stateType), inputs,
            SmallVector<Value>(5, init), maps,
            SmallVector<IteratorType>(2, IteratorType::parallel),
            [&](OpBuilder &body, Location bl, ValueRange args) {
              Scalar s{body, bl};
              Value running = s.lt(t, s.toIndex(args[2]));
              Value first = s.lt(t, s.idx(1));
              Type f32 = args[0].getType();
              Value zeroF = s.f(f32, 0.0), oneF = s.f(f32, 1.0);
              Value dh = s.add(args[3], args[0]);
              Value c = args[4];
              Value cPrev = s.select(first, zeroF, args[5]);
              Value i = args[6], f = args[7], g = args[8], o = args[9];
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
              SmallVector<Value> results;
              for (Value v : {s.mul(dc, f), di, df, dg, dO})
                results.push_back(s.select(running, v, zeroF));
              body.create<linalg::YieldOp>(bl, results);
            });
        Value gates = state[2];
        for (int k = 0; k < 4; ++k)
          gates = insertFrame(lb, frame.getResult(1 + k), gates, t, k * hidden);
        // The recurrent gradient for frame t - 1: dgates(t) Wh.
        Value dhNext = lb.linearGradInput(extractFrame(lb, gates, t), wh);
        b.create<scf::YieldOp>(l,
                               ValueRange{dhNext, frame.getResult(0), gates});
      });
  Value dGates = loop.getResult(2);
  SmallVector<Value> masks{lengths};
  return {lb.linearGradInput(dGates, wi), lb.linearGradWeight(dGates, x, masks),
          lb.linearGradWeight(dGates, previousFrames(lb, y), masks),
          lb.sumValidPositions(dGates, 2, masks)};
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

/// nn.lstm's result; with `tape` (a [B, T, D * 6H] tensor to write), also
/// its tape, the forward direction's blocks first.
Value lowerLstm(LinalgBuilder &b, LstmDirection direction,
                NNTensorType inputType, Value x, Value wi, Value wh, Value bias,
                Value *tape) {
  Value lengths = b.getDims().lengths(inputType.getDimName(1));
  auto whType = cast<RankedTensorType>(wh.getType());
  int64_t hidden = whType.getDimSize(whType.getRank() - 1);
  LstmTape record;
  if (tape)
    record.frames = *tape;
  auto run = [&](Value input, Value wiD, Value whD, Value biasD,
                 int64_t tapeBlock) {
    record.offset = tapeBlock * LstmTape::kBlocks * hidden;
    return lstmForward(b, input, lengths, wiD, whD, biasD, hidden,
                       tape ? &record : nullptr);
  };
  auto backward = [&](Value wiD, Value whD, Value biasD, int64_t tapeBlock) {
    Value reversed = reverseWithinLengths(b, x, lengths);
    Value y = run(reversed, wiD, whD, biasD, tapeBlock);
    return reverseWithinLengths(b, y, lengths);
  };
  Value result;
  switch (direction) {
  case LstmDirection::forward:
    result = run(x, wi, wh, bias, 0);
    break;
  case LstmDirection::backward:
    result = backward(wi, wh, bias, 0);
    break;
  case LstmDirection::bidirectional: {
    Value forward = run(x, sliceDirection(b, wi, 0), sliceDirection(b, wh, 0),
                        sliceDirection(b, bias, 0), 0);
    Value back = backward(sliceDirection(b, wi, 1), sliceDirection(b, wh, 1),
                          sliceDirection(b, bias, 1), 1);
    SmallVector<OpFoldResult> positions = b.sizes(inputType);
    positions.pop_back();
    result = b.concatFeatures({forward, back}, positions, {hidden, hidden},
                              inputType.getElementType());
    break;
  }
  }
  if (tape)
    *tape = record.frames;
  return result;
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
    // Every frame of every block is written (zero where padded).
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
    Value x = adaptor.getInput(), dy = adaptor.getGrad();
    Value lengths = b.getDims().lengths(inputType.getDimName(1));
    Value wi = adaptor.getInputWeight();
    Value wh = adaptor.getRecurrentWeight();
    Value bias = adaptor.getBias();
    auto whType = cast<RankedTensorType>(wh.getType());
    int64_t hidden = whType.getDimSize(whType.getRank() - 1);
    // The input gradient of a first layer has no use: not computed (an
    // empty tensor stands for it).
    bool inputGradient = !op.getInputGrad().use_empty();
    // The backward direction is a forward LSTM over each sequence reversed
    // within its length; so is its backpropagation, with dy reversed the
    // same way and the input gradient reversed back.
    // The forward's tape, if it kept one: direction d's blocks start at
    // d * 6H.
    auto tapeOf = [&](int64_t direction) {
      LstmTape tape;
      tape.frames = adaptor.getTape();
      tape.offset = direction * LstmTape::kBlocks * hidden;
      return tape;
    };
    auto backward = [&](Value dyD, Value wiD, Value whD, Value biasD,
                        int64_t tapeBlock) {
      LstmGrads grads =
          lstmBackward(b, reverseWithinLengths(b, x, lengths),
                       reverseWithinLengths(b, dyD, lengths), lengths, wiD, whD,
                       biasD, hidden, inputGradient, tapeOf(tapeBlock));
      if (inputGradient)
        grads.input = reverseWithinLengths(b, grads.input, lengths);
      return grads;
    };
    Value unusedInput = b.empty(b.sizes(inputType), inputType.getElementType());
    auto results = [&](const LstmGrads &g) {
      return SmallVector<Value>{inputGradient ? g.input : unusedInput,
                                g.inputWeight, g.recurrentWeight, g.bias};
    };
    switch (op.getDirection()) {
    case LstmDirection::forward:
      return results(lstmBackward(b, x, dy, lengths, wi, wh, bias, hidden,
                                  inputGradient, tapeOf(0)));
    case LstmDirection::backward:
      return results(backward(dy, wi, wh, bias, 0));
    case LstmDirection::bidirectional: {
      LstmGrads forward = lstmBackward(
          b, x, b.sliceFeatures(dy, 0, hidden), lengths,
          sliceDirection(b, wi, 0), sliceDirection(b, wh, 0),
          sliceDirection(b, bias, 0), hidden, inputGradient, tapeOf(0));
      LstmGrads back = backward(
          b.sliceFeatures(dy, hidden, hidden), sliceDirection(b, wi, 1),
          sliceDirection(b, wh, 1), sliceDirection(b, bias, 1), 1);
      return SmallVector<Value>{
          inputGradient
              ? b.map(inputType, {forward.input, back.input},
                      [](Scalar &s, ValueRange a) { return s.add(a[0], a[1]); })
              : unusedInput,
          stackDirections(b, forward.inputWeight, back.inputWeight),
          stackDirections(b, forward.recurrentWeight, back.recurrentWeight),
          stackDirections(b, forward.bias, back.bias)};
    }
    }
    llvm_unreachable("every LSTM direction is handled");
  }
};

} // namespace

void mlir::nn::populateRecurrentConversionPatterns(
    const TypeConverter &converter, ConversionState &state,
    RewritePatternSet &patterns) {
  patterns.add<LstmConversion, LstmWithTapeConversion, LstmGradConversion>(
      converter, state);
}
