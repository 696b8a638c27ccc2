//===- CtcPatterns.cpp - CTC loss and its gradient, in log space ----------===//
//
// Both run per sequence (an scf.for over the batch) over the 2U + 1 states
// of its label sequence: even states are blanks, state 2u + 1 is label u.
// The log-probs are padded [B, T, V] or packed [N, V] (sequence b's frame
// t at row offset_b + t); nothing else differs.
// Each frame is one linalg.generic over the states (a kernel on the GPU).
// The loss is the forward recursion (alpha); its gradient adds the
// backward recursion (beta) and scatters each state's posterior onto the
// class it emits. Viterbi forced alignment (nn.viterbi_align) runs the
// same recursion per sequence (the sequences an scf.forall) with max for
// logaddexp over the CTC states or the RNA ones (U + 1: the labels
// emitted so far), records each frame's
// chosen moves and walks them back from the best final state.
//
//===----------------------------------------------------------------------===//

#include "lowering/conversion/Patterns.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Arith/Utils/Utils.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"

#include <limits>

using namespace mlir;
using namespace mlir::nn;

using utils::IteratorType;

namespace {

NNTensorType typeOf(Value v) { return cast<NNTensorType>(v.getType()); }

constexpr double kNegInf = -std::numeric_limits<double>::infinity();

/// The state graph of one sequence (`sequence` indexes the batch).
struct CtcStates {
  Value labels;   // [B, U] integer labels
  Value sequence; // index into the batch
  Value labelPad; // U, the padded label count
  int64_t classes;
  int64_t blank;
  /// Packed log-probs: the sequence's first row; null when padded.
  Value firstRow = nullptr;

  /// The indices of class `c` at frame t of the sequence in the
  /// log-probs (or a tensor of their shape).
  SmallVector<Value, 3> at(Scalar &q, Value t, Value c) const {
    if (firstRow)
      return {q.add(firstRow, t), c};
    return {sequence, t, c};
  }

  /// Odd states are labels.
  Value isLabel(Scalar &q, Value state) const {
    return q.b.create<arith::CmpIOp>(
        q.loc, arith::CmpIPredicate::eq,
        q.b.create<arith::RemUIOp>(q.loc, state, q.idx(2)), q.idx(1));
  }
  /// The class a state emits, clamped: labels past U (padding) only feed
  /// states past 2U, which nothing reads.
  Value classOf(Scalar &q, Value state) const {
    Value u = q.b.create<arith::DivUIOp>(q.loc, state, q.idx(2));
    u = q.minI(u, q.maxI(q.sub(labelPad, q.idx(1)), q.idx(0)));
    Value label =
        q.b.create<tensor::ExtractOp>(q.loc, labels, ValueRange{sequence, u});
    return q.select(isLabel(q, state), q.clampIndex(label, q.idx(classes)),
                    q.idx(blank));
  }
  /// Whether a path may skip the blank before (after) label state `state`
  /// coming from (going to) label state `other`, two states away: the two
  /// labels differ.
  Value canSkip(Scalar &q, Value state, Value other) const {
    return q.ne(classOf(q, state), classOf(q, other));
  }
};

/// A [states] vector computed by `fn(q, state)`, one generic.
Value stateVector(OpBuilder &b, Location loc, Value states, Type element,
                  function_ref<Value(Scalar &, Value state)> fn) {
  auto type = RankedTensorType::get({ShapedType::kDynamic}, element);
  Value init = b.create<tensor::EmptyOp>(
      loc, ArrayRef<int64_t>{ShapedType::kDynamic}, element, states);
  AffineMap identity = b.getMultiDimIdentityMap(1);
  return b
      .create<linalg::GenericOp>(
          loc, TypeRange{type}, ValueRange{}, ValueRange{init},
          ArrayRef<AffineMap>{identity},
          ArrayRef<IteratorType>{IteratorType::parallel},
          [&](OpBuilder &gb, Location gl, ValueRange) {
            Scalar q{gb, gl};
            gb.create<linalg::YieldOp>(gl, fn(q, q.index(0)));
          })
      .getResult(0);
}

/// v[i] when 0 <= i < size, else -inf (read at a clamped index).
Value readOrNegInf(Scalar &q, Value v, Value i, Value inside, Type element) {
  Value safe = q.select(inside, i, q.idx(0));
  Value x = q.b.create<tensor::ExtractOp>(q.loc, v, safe);
  return q.select(inside, x, q.f(element, kNegInf));
}

/// log p(labels) from the last alpha: logaddexp(alpha[2U], alpha[2U - 1]).
Value logLikelihood(Scalar &s, Value alpha, Value labelCount, Type element) {
  Value last = s.mul(labelCount, s.idx(2));
  Value atLast = s.b.create<tensor::ExtractOp>(s.loc, alpha, last);
  Value before = readOrNegInf(s, alpha, s.sub(last, s.idx(1)),
                              s.ge(last, s.idx(1)), element);
  return s.logAddExp(atLast, before);
}

/// The forward recursion of sequence `states.sequence` over its `frames`
/// frames. alpha before frame 0 is a virtual start with log-prob 0 in
/// state 0, so one recurrence covers every frame; `perFrame`, when given,
/// is called with each frame's alpha and the values it carries.
struct AlphaLoop {
  Value last;                 // alpha after the last frame
  SmallVector<Value> carried; // the final values of `extra`
};
AlphaLoop
alphaRecursion(OpBuilder &b, Location loc, const CtcStates &graph,
               Value logProbs, Value frames, Value states, Type element,
               ValueRange extra = {},
               function_ref<SmallVector<Value>(OpBuilder &, Location, Value t,
                                               Value alpha, ValueRange carried)>
                   perFrame = nullptr) {
  Scalar s{b, loc};
  Value start = stateVector(b, loc, states, element, [&](Scalar &q, Value st) {
    return q.select(q.b.create<arith::CmpIOp>(q.loc, arith::CmpIPredicate::eq,
                                              st, q.idx(0)),
                    q.f(element, 0.0), q.f(element, kNegInf));
  });
  SmallVector<Value> init{start};
  init.append(extra.begin(), extra.end());
  auto loop = b.create<scf::ForOp>(
      loc, s.idx(0), frames, s.idx(1), init,
      [&](OpBuilder &tb, Location tl, Value t, ValueRange state) {
        Value prev = state[0];
        Value alpha =
            stateVector(tb, tl, states, element, [&](Scalar &q, Value st) {
              Value stay = q.b.create<tensor::ExtractOp>(q.loc, prev, st);
              Value fromPrev = readOrNegInf(q, prev, q.sub(st, q.idx(1)),
                                            q.ge(st, q.idx(1)), element);
              Value hasSkip = q.andI(graph.isLabel(q, st), q.ge(st, q.idx(2)));
              Value skipState =
                  q.select(hasSkip, q.sub(st, q.idx(2)), q.idx(0));
              hasSkip = q.andI(hasSkip, graph.canSkip(q, st, skipState));
              Value fromSkip =
                  readOrNegInf(q, prev, skipState, hasSkip, element);
              Value emit = q.b.create<tensor::ExtractOp>(
                  q.loc, logProbs, graph.at(q, t, graph.classOf(q, st)));
              return q.add(q.logAddExp(q.logAddExp(stay, fromPrev), fromSkip),
                           emit);
            });
        SmallVector<Value> next{alpha};
        if (perFrame)
          llvm::append_range(next,
                             perFrame(tb, tl, t, alpha, state.drop_front()));
        tb.create<scf::YieldOp>(tl, next);
      });
  AlphaLoop result;
  result.last = loop.getResult(0);
  llvm::append_range(result.carried, loop.getResults().drop_front());
  return result;
}

/// What both patterns read: log-probabilities, labels, lengths, sizes,
/// and the number of states, 2 U + 1 for the padded label count U; packed
/// log-probs: each sequence's first row.
struct CtcInputs {
  Value logProbs, labels, frameLengths, labelLengths, batch, labelPad, states;
  /// The padded size of the frames' sequence dim.
  Value time;
  Value offsets;
  int64_t classes;

  /// The state graph of sequence `bi`.
  CtcStates graphOf(Scalar &s, Value bi, int64_t blank) const {
    CtcStates graph{labels, bi, labelPad, classes, blank};
    if (offsets)
      graph.firstRow =
          s.toIndex(s.b.create<tensor::ExtractOp>(s.loc, offsets, bi));
    return graph;
  }
};

template <typename OpTy, typename Adaptor>
CtcInputs ctcInputs(OpTy op, Adaptor adaptor, LinalgBuilder &lb) {
  NNTensorType logitsType = typeOf(op.getLogits());
  NNTensorType labelsType = typeOf(op.getLabels());
  CtcInputs in;
  in.logProbs = adaptor.getLogits();
  if (op.getInputKind() == LossInput::logits)
    in.logProbs = lb.logSoftmax(in.logProbs);
  in.labels = adaptor.getLabels();
  const BoundDims &dims = lb.getDims();
  StringRef sequence = logitsType.getNumPositionDims() == 2
                           ? logitsType.getDimName(1)
                           : dims.getDecls()
                                 .lookup(logitsType.getDimName(0))
                                 .getSource()
                                 .getValue();
  in.frameLengths = dims.lengths(sequence);
  in.time = dims.size(sequence);
  in.labelLengths = dims.lengths(labelsType.getDimName(1));
  in.batch = dims.size(labelsType.getDimName(0));
  in.labelPad = dims.size(labelsType.getDimName(1));
  in.classes = logitsType.getStaticSize(logitsType.getRank() - 1);
  if (logitsType.getNumPositionDims() == 1)
    in.offsets = exclusivePrefixSum(lb, in.batch, in.frameLengths).first;
  Scalar s = lb.scalar();
  in.states = s.add(s.mul(in.labelPad, s.idx(2)), s.idx(1));
  return in;
}

class CtcLossConversion : public NNConversionPattern<CtcLossOp> {
public:
  using NNConversionPattern::NNConversionPattern;

  FailureOr<SmallVector<Value>> build(CtcLossOp op, OpAdaptor adaptor,
                                      LinalgBuilder &lb) const override {
    OpBuilder &b = lb.getBuilder();
    Location loc = lb.getLoc();
    NNTensorType type = typeOf(op.getResult());
    Type element = type.getElementType();
    CtcInputs in = ctcInputs(op, adaptor, lb);
    Scalar outer{b, loc};
    Value states = in.states;
    Value losses = lb.empty(lb.sizes(type), element);
    auto batchLoop = b.create<scf::ForOp>(
        loc, outer.idx(0), in.batch, outer.idx(1), ValueRange{losses},
        [&](OpBuilder &nb, Location l, Value bi, ValueRange bState) {
          Scalar s{nb, l};
          Value frames =
              s.toIndex(nb.create<tensor::ExtractOp>(l, in.frameLengths, bi));
          Value labelCount =
              s.toIndex(nb.create<tensor::ExtractOp>(l, in.labelLengths, bi));
          CtcStates graph =
              in.graphOf(s, bi, static_cast<int64_t>(op.getBlank()));
          AlphaLoop alpha = alphaRecursion(nb, l, graph, in.logProbs, frames,
                                           states, element);
          Value loss = s.neg(logLikelihood(s, alpha.last, labelCount, element));
          if (op.getZeroInfinity()) {
            Value inf = s.f(element, std::numeric_limits<double>::infinity());
            loss = s.select(s.feq(loss, inf), s.f(element, 0.0), loss);
          }
          nb.create<scf::YieldOp>(
              l,
              nb.create<tensor::InsertOp>(l, loss, bState[0], bi).getResult());
        });
    return SmallVector<Value>{batchLoop.getResult(0)};
  }
};

/// Per sequence: the forward recursion keeps every frame's alpha
/// ([frames, states]); the backward recursion runs from the last frame
/// down, beta[t] including frame t's emission, and adds each state's
/// posterior exp(alpha + beta - emit - log p) (0 where emit is -inf) to
/// the class it emits at frame t (a scalar loop over the 2U + 1 states: a
/// scatter). A final map turns posteriors into the gradient.
class CtcLossGradConversion : public NNConversionPattern<CtcLossGradOp> {
public:
  using NNConversionPattern::NNConversionPattern;

  FailureOr<SmallVector<Value>> build(CtcLossGradOp op, OpAdaptor adaptor,
                                      LinalgBuilder &lb) const override {
    OpBuilder &b = lb.getBuilder();
    Location loc = lb.getLoc();
    NNTensorType logitsType = typeOf(op.getLogits());
    Type element = logitsType.getElementType();
    CtcInputs in = ctcInputs(op, adaptor, lb);
    Scalar outer{b, loc};
    Value states = in.states;
    Value time = in.time;
    Value posteriors = lb.filled(lb.sizes(logitsType), element, 0.0);
    Value logLikelihoods = lb.empty(lb.sizes(typeOf(op.getGrad())), element);

    auto batchLoop = b.create<scf::ForOp>(
        loc, outer.idx(0), in.batch, outer.idx(1),
        ValueRange{posteriors, logLikelihoods},
        [&](OpBuilder &nb, Location l, Value bi, ValueRange bState) {
          Scalar s{nb, l};
          Value frames =
              s.toIndex(nb.create<tensor::ExtractOp>(l, in.frameLengths, bi));
          Value labelCount =
              s.toIndex(nb.create<tensor::ExtractOp>(l, in.labelLengths, bi));
          Value lastState = s.mul(labelCount, s.idx(2));
          CtcStates graph =
              in.graphOf(s, bi, static_cast<int64_t>(op.getBlank()));
          Value alphas = nb.create<tensor::EmptyOp>(
              l, ArrayRef<int64_t>{ShapedType::kDynamic, ShapedType::kDynamic},
              element, ValueRange{time, states});
          AlphaLoop forward = alphaRecursion(
              nb, l, graph, in.logProbs, frames, states, element, {alphas},
              [&](OpBuilder &tb, Location tl, Value t, Value alpha,
                  ValueRange carried) {
                Value row = tb.create<tensor::InsertSliceOp>(
                    tl, alpha, carried[0],
                    ArrayRef<OpFoldResult>{t, tb.getIndexAttr(0)},
                    ArrayRef<OpFoldResult>{tb.getIndexAttr(1), states},
                    ArrayRef<OpFoldResult>{tb.getIndexAttr(1),
                                           tb.getIndexAttr(1)});
                return SmallVector<Value>{row};
              });
          Value alphaRows = forward.carried[0];
          Value logP = logLikelihood(s, forward.last, labelCount, element);
          Value feasible = nb.create<arith::CmpFOp>(
              l, arith::CmpFPredicate::OGT, logP, s.f(element, kNegInf));
          // No posterior to scatter for an infeasible sequence.
          Value scatterStates =
              s.select(feasible, s.add(lastState, s.idx(1)), s.idx(0));
          auto emitOf = [&](Scalar &q, Value t, Value state) {
            return q.b.create<tensor::ExtractOp>(
                q.loc, in.logProbs, graph.at(q, t, graph.classOf(q, state)));
          };
          // Beta "after" the last frame is unused: the last frame's beta
          // is its emission at the two final states, -inf elsewhere.
          Value unusedBeta =
              stateVector(nb, l, states, element, [&](Scalar &q, Value) {
                return q.f(element, kNegInf);
              });
          auto backward = nb.create<scf::ForOp>(
              l, s.idx(0), frames, s.idx(1), ValueRange{unusedBeta, bState[0]},
              [&](OpBuilder &tb, Location tl, Value step, ValueRange carried) {
                Scalar q{tb, tl};
                Value t = q.sub(q.sub(frames, q.idx(1)), step);
                Value isLast = q.b.create<arith::CmpIOp>(
                    tl, arith::CmpIPredicate::eq, step, q.idx(0));
                Value next = carried[0];
                Value beta = stateVector(
                    tb, tl, states, element, [&](Scalar &g, Value st) {
                      Value stay =
                          g.b.create<tensor::ExtractOp>(g.loc, next, st);
                      Value toNext = readOrNegInf(g, next, g.add(st, g.idx(1)),
                                                  g.lt(st, lastState), element);
                      Value skipState = g.add(st, g.idx(2));
                      Value hasSkip =
                          g.andI(graph.isLabel(g, st),
                                 g.lt(g.add(st, g.idx(1)), lastState));
                      Value safeSkip = g.select(hasSkip, skipState, st);
                      hasSkip = g.andI(hasSkip, graph.canSkip(g, st, safeSkip));
                      Value toSkip =
                          readOrNegInf(g, next, safeSkip, hasSkip, element);
                      Value onward =
                          g.logAddExp(g.logAddExp(stay, toNext), toSkip);
                      Value final = g.andI(
                          g.b.create<arith::CmpIOp>(
                              g.loc, arith::CmpIPredicate::sle, st, lastState),
                          g.ge(g.add(st, g.idx(1)), lastState));
                      Value atEnd = g.select(final, g.f(element, 0.0),
                                             g.f(element, kNegInf));
                      Value inside = g.b.create<arith::CmpIOp>(
                          g.loc, arith::CmpIPredicate::sle, st, lastState);
                      Value sum = g.select(isLast, atEnd, onward);
                      return g.select(inside, g.add(sum, emitOf(g, t, st)),
                                      g.f(element, kNegInf));
                    });
                // Scatter the posteriors of frame t onto their classes.
                auto scatter = tb.create<scf::ForOp>(
                    tl, q.idx(0), scatterStates, q.idx(1),
                    ValueRange{carried[1]},
                    [&](OpBuilder &sb, Location sl, Value st, ValueRange acc) {
                      Scalar g{sb, sl};
                      Value a = sb.create<tensor::ExtractOp>(sl, alphaRows,
                                                             ValueRange{t, st});
                      Value be = sb.create<tensor::ExtractOp>(sl, beta, st);
                      SmallVector<Value, 3> at =
                          graph.at(g, t, graph.classOf(g, st));
                      Value emit =
                          sb.create<tensor::ExtractOp>(sl, in.logProbs, at);
                      // alpha and beta both hold the emission: where it is
                      // -inf (a class the input rules out at t) they are
                      // -inf too and taking it back out gives NaN, but no
                      // path passes there, so the posterior is 0.
                      Value p = g.select(
                          g.feq(emit, g.f(element, kNegInf)), g.f(element, 0.0),
                          g.exp(g.sub(g.sub(g.add(a, be), emit), logP)));
                      Value old = sb.create<tensor::ExtractOp>(sl, acc[0], at);
                      sb.create<scf::YieldOp>(
                          sl, sb.create<tensor::InsertOp>(sl, g.add(old, p),
                                                          acc[0], at)
                                  .getResult());
                    });
                tb.create<scf::YieldOp>(tl,
                                        ValueRange{beta, scatter.getResult(0)});
              });
          Value updated = nb.create<tensor::InsertOp>(l, logP, bState[1], bi);
          nb.create<scf::YieldOp>(l,
                                  ValueRange{backward.getResult(1), updated});
        });
    Value gamma = batchLoop.getResult(0);
    Value logLik = batchLoop.getResult(1);

    // The gradient at valid frames; padded frames 0. Packed rows are all
    // valid and read their sequence's values through its index.
    bool packed = in.offsets != nullptr;
    unsigned rank = packed ? 2 : 3;
    AffineMap identity = b.getMultiDimIdentityMap(rank);
    AffineMap perSequence = AffineMap::get(rank, 0, b.getAffineDimExpr(0));
    Value init = lb.empty(lb.sizes(logitsType), element);
    bool fromLogits = op.getInputKind() == LossInput::logits;
    bool zeroInfinity = op.getZeroInfinity();
    SmallVector<Value> perSequenceInputs{adaptor.getGrad(), logLik,
                                         in.frameLengths};
    if (packed)
      perSequenceInputs = {ownerOfRows(
          lb, in.offsets, in.batch,
          getValueOrCreateConstantIndexOp(b, loc, lb.sizes(logitsType)[0]))};
    SmallVector<Value> inputs{gamma, in.logProbs};
    llvm::append_range(inputs, perSequenceInputs);
    SmallVector<AffineMap> maps{identity, identity};
    maps.append(perSequenceInputs.size(), perSequence);
    maps.push_back(identity);
    Value seed = adaptor.getGrad();
    Value grad = lb.generic(
        init.getType(), inputs, init, maps,
        SmallVector<IteratorType>(rank, IteratorType::parallel),
        [&](OpBuilder &nested, Location l, ValueRange a) {
          Scalar s{nested, l};
          Value g, logP;
          if (packed) {
            Value sequence = s.toIndex(a[2]);
            g = nested.create<tensor::ExtractOp>(l, seed, sequence);
            logP = nested.create<tensor::ExtractOp>(l, logLik, sequence);
          } else {
            g = a[2];
            logP = a[3];
          }
          Value v = fromLogits ? s.mul(g, s.sub(s.exp(a[1]), a[0]))
                               : s.neg(s.mul(g, a[0]));
          Value feasible = nested.create<arith::CmpFOp>(
              l, arith::CmpFPredicate::OGT, logP, s.f(element, kNegInf));
          Value infeasible = s.f(
              element,
              zeroInfinity ? 0.0 : std::numeric_limits<double>::quiet_NaN());
          v = s.select(feasible, v, infeasible);
          if (!packed) {
            Value valid = s.lt(s.index(1), s.toIndex(a[4]));
            v = s.select(valid, v, s.f(element, 0.0));
          }
          nested.create<linalg::YieldOp>(l, v);
        });
    return SmallVector<Value>{grad};
  }
};

/// nn.viterbi_align. Per sequence, frame t's generic computes for every
/// state the best score of a path ending there and the move that reached
/// it (0 stay, 1 from the state before, 2 the CTC skip), kept per frame in
/// a [T, states] table; ties keep the lower move (the predecessor with the
/// higher state index). A virtual start in state 0 before frame 0 makes
/// frame 0 the same recurrence. The backtrace writes each frame's class
/// from the last frame down; an infeasible sequence (best score -inf)
/// runs none and keeps -1 on every frame. Packed scores [N, V] (and
/// alignment [N]) hold sequence b's frames at rows offset_b + t, the
/// offsets an exclusive prefix sum of the lengths computed before the
/// loop over sequences (an scf.forall: each writes its own row and score). With
/// a prior, the search reads each class's log-probability minus its prior
/// value, and the backtrace adds the path's prior values back, so the score is
/// the path's log-probability.
class ViterbiAlignConversion : public NNConversionPattern<ViterbiAlignOp> {
public:
  using NNConversionPattern::NNConversionPattern;

  FailureOr<SmallVector<Value>> build(ViterbiAlignOp op, OpAdaptor adaptor,
                                      LinalgBuilder &lb) const override {
    OpBuilder &b = lb.getBuilder();
    Location loc = lb.getLoc();
    NNTensorType scoresType = typeOf(op.getScores());
    NNTensorType labelsType = typeOf(op.getLabels());
    Type element = scoresType.getElementType();
    Type i32 = b.getI32Type();
    // From logits, each sequence normalizes its own frames (below) rather
    // than the whole [B, T, V] tensor up front: padding is never read, and
    // no log-prob tensor is written to memory and read back.
    Value scoresIn = adaptor.getScores();
    bool fromLogits = op.getInputKind() == LossInput::logits;
    Value labels = adaptor.getLabels();
    Value prior = adaptor.getPrior();
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
    Value labelLengths = lb.getDims().lengths(labelsType.getDimName(1));
    Value batch = lb.getDims().size(batchName);
    Value time = lb.getDims().size(sequenceName);
    Value labelPad = lb.getDims().size(labelsType.getDimName(1));
    int64_t classes = scoresType.getStaticSize(scoresType.getRank() - 1);
    auto blank = static_cast<int64_t>(op.getBlank());
    bool rna = op.getTopology() == AlignTopology::rna;
    Scalar outer{b, loc};
    Value states =
        rna ? outer.add(labelPad, outer.idx(1))
            : outer.add(outer.mul(labelPad, outer.idx(2)), outer.idx(1));
    // Every sequence writes its whole row of the alignment and its score.
    Value alignment = lb.empty(lb.sizes(typeOf(op.getAlignment())), i32);
    Value bestScores = lb.empty(lb.sizes(typeOf(op.getScore())), element);
    // Packed scores: sequence b's frames start at row offset_b, the sum of
    // the lengths before it, known up front so that the sequences can run
    // in any order.
    Value offsets =
        packed ? exclusivePrefixSum(lb, batch, frameLengths).first : Value();
    auto vectorType = [&](Type t) {
      return RankedTensorType::get({ShapedType::kDynamic}, t);
    };

    // The sequences are independent: threads on the CPU.
    SmallVector<Value> results = forEachSequence(
        lb, batch, {alignment, bestScores},
        [&](Scalar &s, Value bi) -> SmallVector<SequenceSlice> {
          OpBuilder &nb = s.b;
          Location l = s.loc;
          Value frames =
              s.toIndex(nb.create<tensor::ExtractOp>(l, frameLengths, bi));
          Value offset =
              packed ? s.toIndex(nb.create<tensor::ExtractOp>(l, offsets, bi))
                     : Value();
          Value labelCount =
              s.toIndex(nb.create<tensor::ExtractOp>(l, labelLengths, bi));
          CtcStates graph{labels, bi, labelPad, classes, blank};
          // Label u of this sequence (clamped: padded labels only feed
          // states past the last one, which nothing reads).
          auto labelAt = [&](Scalar &q, Value u) {
            u = q.minI(q.maxI(u, q.idx(0)),
                       q.maxI(q.sub(labelPad, q.idx(1)), q.idx(0)));
            Value label =
                q.b.create<tensor::ExtractOp>(q.loc, labels, ValueRange{bi, u});
            return q.clampIndex(label, q.idx(classes));
          };
          // This sequence's frames of the scores, [frames, V].
          auto rowsType =
              RankedTensorType::get({ShapedType::kDynamic, classes}, element);
          OpFoldResult zero = nb.getIndexAttr(0), one = nb.getIndexAttr(1);
          Value rows = packed ? nb.create<tensor::ExtractSliceOp>(
                                    l, rowsType, scoresIn,
                                    ArrayRef<OpFoldResult>{offset, zero},
                                    ArrayRef<OpFoldResult>{
                                        frames, nb.getIndexAttr(classes)},
                                    ArrayRef<OpFoldResult>{one, one})
                              : nb.create<tensor::ExtractSliceOp>(
                                    l, rowsType, scoresIn,
                                    ArrayRef<OpFoldResult>{bi, zero, zero},
                                    ArrayRef<OpFoldResult>{
                                        one, frames, nb.getIndexAttr(classes)},
                                    ArrayRef<OpFoldResult>{one, one, one});
          // From logits: each frame's max and log of the sum of exp, so that
          // a class's log-probability is (x - max) - log(sum), as
          // log_softmax computes it.
          Value rowMax, rowLogSum;
          if (fromLogits) {
            Value rowSum;
            std::tie(rowMax, rowSum) = lb.rowMaxAndSumExp(rows);
            AffineMap identity = nb.getMultiDimIdentityMap(1);
            rowLogSum = lb.generic(
                rowSum.getType(), {rowSum},
                lb.empty(tensor::getMixedSizes(nb, l, rowSum), element),
                {identity, identity}, {IteratorType::parallel},
                [&](OpBuilder &gb, Location gl, ValueRange args) {
                  Scalar q{gb, gl};
                  gb.create<linalg::YieldOp>(gl, q.log(args[0]));
                });
          }
          // What does not change from frame to frame, once per sequence:
          // the class each state emits (CTC) or the label a move into it
          // emits (RNA; state 0 has none), and whether a CTC path may skip
          // into the state from two states back.
          Value stateClass =
              stateVector(nb, l, states, i32, [&](Scalar &q, Value st) {
                Value c = rna ? q.select(q.ge(st, q.idx(1)),
                                         labelAt(q, q.sub(st, q.idx(1))),
                                         q.idx(blank))
                              : graph.classOf(q, st);
                return q.b.create<arith::IndexCastOp>(q.loc, i32, c)
                    .getResult();
              });
          Value skips;
          if (!rna)
            skips = stateVector(
                nb, l, states, nb.getI1Type(), [&](Scalar &q, Value st) {
                  Value hasSkip =
                      q.andI(graph.isLabel(q, st), q.ge(st, q.idx(2)));
                  Value skipState =
                      q.select(hasSkip, q.sub(st, q.idx(2)), q.idx(0));
                  return q.andI(hasSkip, graph.canSkip(q, st, skipState));
                });
          Value start =
              stateVector(nb, l, states, element, [&](Scalar &q, Value st) {
                return q.select(
                    q.b.create<arith::CmpIOp>(q.loc, arith::CmpIPredicate::eq,
                                              st, q.idx(0)),
                    q.f(element, 0.0), q.f(element, kNegInf));
              });
          Value noMoves = nb.create<tensor::EmptyOp>(
              l, ArrayRef<int64_t>{ShapedType::kDynamic, ShapedType::kDynamic},
              i32, ValueRange{time, states});
          auto forward = nb.create<scf::ForOp>(
              l, s.idx(0), frames, s.idx(1), ValueRange{start, noMoves},
              [&](OpBuilder &tb, Location tl, Value t, ValueRange carried) {
                Value prev = carried[0];
                // The search's score of class c at this frame. Everything
                // it reads is read inside the generic (on a GPU, host code
                // reading a buffer would place it in managed memory); on
                // the CPU, LLVM hoists what does not depend on the state.
                auto emit = [&](Scalar &q, Value c) -> Value {
                  Value x = q.b.create<tensor::ExtractOp>(q.loc, rows,
                                                          ValueRange{t, c});
                  if (fromLogits)
                    x = q.sub(
                        q.sub(x,
                              q.b.create<tensor::ExtractOp>(q.loc, rowMax, t)),
                        q.b.create<tensor::ExtractOp>(q.loc, rowLogSum, t));
                  if (prior)
                    x = q.sub(x, q.b.create<tensor::ExtractOp>(q.loc, prior,
                                                               ValueRange{c}));
                  return x;
                };
                Value deltaInit = tb.create<tensor::EmptyOp>(
                    tl, ArrayRef<int64_t>{ShapedType::kDynamic}, element,
                    states);
                // The generic writes its moves into row t of the table.
                SmallVector<OpFoldResult> rowOffsets{t, tb.getIndexAttr(0)},
                    rowSizes{tb.getIndexAttr(1), states},
                    rowStrides{tb.getIndexAttr(1), tb.getIndexAttr(1)};
                Value moveRow = tb.create<tensor::ExtractSliceOp>(
                    tl, vectorType(i32), carried[1], rowOffsets, rowSizes,
                    rowStrides);
                AffineMap identity = tb.getMultiDimIdentityMap(1);
                auto step = tb.create<linalg::GenericOp>(
                    tl, TypeRange{vectorType(element), vectorType(i32)},
                    ValueRange{}, ValueRange{deltaInit, moveRow},
                    ArrayRef<AffineMap>{identity, identity},
                    ArrayRef<IteratorType>{IteratorType::parallel},
                    [&](OpBuilder &gb, Location gl, ValueRange) {
                      Scalar q{gb, gl};
                      Value st = q.index(0);
                      Value c = q.toIndex(
                          gb.create<tensor::ExtractOp>(gl, stateClass, st));
                      Value stay = gb.create<tensor::ExtractOp>(gl, prev, st);
                      Value fromPrev =
                          readOrNegInf(q, prev, q.sub(st, q.idx(1)),
                                       q.ge(st, q.idx(1)), element);
                      SmallVector<Value, 3> candidates;
                      if (rna) {
                        // Staying emits the blank, moving label st - 1.
                        candidates = {q.add(stay, emit(q, q.idx(blank))),
                                      q.add(fromPrev, emit(q, c))};
                      } else {
                        Value fromSkip = readOrNegInf(
                            q, prev, q.sub(st, q.idx(2)),
                            gb.create<tensor::ExtractOp>(gl, skips, st),
                            element);
                        Value e = emit(q, c);
                        candidates = {q.add(stay, e), q.add(fromPrev, e),
                                      q.add(fromSkip, e)};
                      }
                      Value best = candidates[0];
                      Value move = q.i32(0);
                      for (auto [k, candidate] :
                           llvm::enumerate(ArrayRef(candidates).drop_front())) {
                        Value better = gb.create<arith::CmpFOp>(
                            gl, arith::CmpFPredicate::OGT, candidate, best);
                        best = q.select(better, candidate, best);
                        move = q.select(better, q.i32(k + 1), move);
                      }
                      gb.create<linalg::YieldOp>(gl, ValueRange{best, move});
                    });
                Value moves = tb.create<tensor::InsertSliceOp>(
                    tl, step.getResult(1), carried[1], rowOffsets, rowSizes,
                    rowStrides);
                tb.create<scf::YieldOp>(tl,
                                        ValueRange{step.getResult(0), moves});
              });
          Value last = forward.getResult(0), moves = forward.getResult(1);
          // The best final state: RNA's state U; CTC's final blank, or the
          // last label when it scores strictly higher.
          Value finalState, score;
          if (rna) {
            finalState = labelCount;
            score = nb.create<tensor::ExtractOp>(l, last, labelCount);
          } else {
            Value lastBlank = s.mul(labelCount, s.idx(2));
            Value blankScore = nb.create<tensor::ExtractOp>(l, last, lastBlank);
            Value lastLabel = s.sub(lastBlank, s.idx(1));
            Value labelScore = readOrNegInf(s, last, lastLabel,
                                            s.ge(lastBlank, s.idx(1)), element);
            Value useLabel = nb.create<arith::CmpFOp>(
                l, arith::CmpFPredicate::OGT, labelScore, blankScore);
            finalState = s.select(useLabel, lastLabel, lastBlank);
            score = s.select(useLabel, labelScore, blankScore);
          }
          Value feasible = nb.create<arith::CmpFOp>(
              l, arith::CmpFPredicate::OGT, score, s.f(element, kNegInf));
          Value traced = s.select(feasible, frames, s.idx(0));
          // This sequence's row of the alignment: its frames (packed) or
          // the padded time, -1 where nothing is traced.
          Value rowLength = packed ? frames : time;
          Value row = lb.filled({rowLength}, i32, -1.0);
          auto backtrace = nb.create<scf::ForOp>(
              l, s.idx(0), traced, s.idx(1),
              ValueRange{finalState, row, s.f(element, 0.0)},
              [&](OpBuilder &tb, Location tl, Value step, ValueRange carried) {
                Scalar q{tb, tl};
                Value t = q.sub(q.sub(frames, q.idx(1)), step);
                Value st = carried[0];
                Value move = q.toIndex(
                    tb.create<tensor::ExtractOp>(tl, moves, ValueRange{t, st}));
                Value emitted;
                if (rna)
                  emitted = q.select(
                      tb.create<arith::CmpIOp>(tl, arith::CmpIPredicate::eq,
                                               move, q.idx(0)),
                      q.idx(blank), labelAt(q, q.sub(st, q.idx(1))));
                else
                  emitted = graph.classOf(q, st);
                Value label = tb.create<arith::IndexCastOp>(tl, i32, emitted);
                Value written =
                    tb.create<tensor::InsertOp>(tl, label, carried[1], t);
                Value priorSum = carried[2];
                if (prior)
                  priorSum =
                      q.add(priorSum, tb.create<tensor::ExtractOp>(
                                          tl, prior, ValueRange{emitted}));
                tb.create<scf::YieldOp>(
                    tl, ValueRange{q.sub(st, move), written, priorSum});
              });
          if (prior)
            score = s.add(score, backtrace.getResult(2));
          Value scoreRow = nb.create<tensor::FromElementsOp>(l, score);
          SequenceSlice rowSlice =
              packed ? SequenceSlice{backtrace.getResult(1), {offset}, {frames}}
                     : SequenceSlice{
                           backtrace.getResult(1), {bi, zero}, {one, time}};
          return {rowSlice, {scoreRow, {bi}, {one}}};
        });
    return results;
  }
};

} // namespace

void mlir::nn::populateCtcConversionPatterns(const TypeConverter &converter,
                                             ConversionState &state,
                                             RewritePatternSet &patterns) {
  patterns
      .add<CtcLossConversion, CtcLossGradConversion, ViterbiAlignConversion>(
          converter, state);
}
