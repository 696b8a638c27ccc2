//===- Patterns.h - nn -> linalg conversion patterns, by family -*- C++ -*-===//
//
// The nn-to-linalg conversion is a set of OpConversionPatterns, one file
// per op family, each with a populate function. They share:
//   * NNTypeConverter: `!nn.tensor` to builtin tensors, named axes dynamic;
//   * BoundDims: the run-time values of a lowered graph's dims (sizes and
//     sequence lengths), bound by the graph pattern at function entry and
//     read by every pattern inside it;
//   * NNConversionPattern: finds the BoundDims of the op's function and
//     gives the op's lowering a LinalgBuilder at the op's location.
// Losses reach the patterns already exposed as values (nn-expose-losses),
// so each pattern rewrites one op and nothing else.
//
//===----------------------------------------------------------------------===//

#ifndef NN_LOWERING_CONVERSION_PATTERNS_H
#define NN_LOWERING_CONVERSION_PATTERNS_H

#include "dialects/nn/Dims.h"
#include "dialects/nn/NNOps.h"
#include "lowering/conversion/Abi.h"
#include "lowering/conversion/LinalgBuilder.h"
#include "lowering/conversion/Origin.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Transforms/DialectConversion.h"

#include <memory>

namespace mlir::nn {

/// `!nn.tensor` values become builtin tensors (GraphAbi::loweredType);
/// every other type stays. Values crossing between converted and
/// unconverted ops (partial conversion) meet in unrealized casts.
class NNTypeConverter : public TypeConverter {
public:
  NNTypeConverter();
};

/// The graphs being lowered: each function's bound dims, and each graph's
/// ABI by name (calls need the callee's even after it is converted).
class ConversionState {
public:
  ConversionState(MLIRContext *context, const ModuleAbi &abis)
      : context(context), abis(abis) {}

  MLIRContext *getContext() const { return context; }
  const ModuleAbi &getAbis() const { return abis; }
  /// A new table for the function that graph `graph` lowers to.
  BoundDims &bindFunction(func::FuncOp function, GraphOp graph);
  /// The table of the function that encloses `op`, or null.
  const BoundDims *lookup(Operation *op) const;
  /// Binds computed dim `dim` of the function that encloses producer `op`
  /// (a DimProducerOpInterface, converted before every op that names the
  /// dim: the conversion visits a graph's ops in order), then derives the
  /// dims that follow from it at `b`'s insertion point.
  void bindComputed(Operation *op, StringRef dim, DimValue value,
                    LinalgBuilder &b);
  /// After the conversion: gives each function that still holds nn ops
  /// its graph's dims (NNDialect::kLoweredDimsAttrName).
  void markPartlyLowered() const;

private:
  MLIRContext *context;
  const ModuleAbi &abis;
  llvm::DenseMap<Operation *, std::unique_ptr<BoundDims>> byFunction;
};

/// Base of the patterns for ops inside a graph: `build` gets the op, its
/// converted operands and a builder that knows the function's dims, and
/// returns the op's replacement values (failure after a diagnostic).
template <typename OpTy>
class NNConversionPattern : public OpConversionPattern<OpTy> {
public:
  using OpAdaptor = typename OpConversionPattern<OpTy>::OpAdaptor;

  NNConversionPattern(const TypeConverter &converter, ConversionState &state)
      : OpConversionPattern<OpTy>(converter, state.getContext()), state(state) {
  }

  LogicalResult
  matchAndRewrite(OpTy op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const final {
    const BoundDims *dims = state.lookup(op);
    if (!dims)
      return rewriter.notifyMatchFailure(op, "not inside a lowered graph");
    Location loc = originLoc(op);
    LinalgBuilder b(rewriter, loc, *dims);
    FailureOr<SmallVector<Value>> results = build(op, adaptor, b);
    if (failed(results))
      return failure();
    rewriter.replaceOp(op, *results);
    return success();
  }

protected:
  virtual FailureOr<SmallVector<Value>> build(OpTy op, OpAdaptor adaptor,
                                              LinalgBuilder &b) const = 0;

  ConversionState &state;
};

/// nn.graph, nn.return, nn.call, nn.param_ref and nn.parameter.
void populateGraphConversionPatterns(const TypeConverter &converter,
                                     ConversionState &state,
                                     RewritePatternSet &patterns);
/// Ops on each position alone: linear, elementwise, activations, softmax,
/// dropout, layer_norm, embedding, concat; and their gradient ops.
void populateFrameWiseConversionPatterns(const TypeConverter &converter,
                                         ConversionState &state,
                                         RewritePatternSet &patterns);
/// Recurrent layers: lstm, lstm_with_tape (the forward that keeps its
/// gates for the backward) and lstm_grad.
void populateRecurrentConversionPatterns(const TypeConverter &converter,
                                         ConversionState &state,
                                         RewritePatternSet &patterns);
/// Attention within each sequence: attention, attention_grad and rotary.
void populateAttentionConversionPatterns(const TypeConverter &converter,
                                         ConversionState &state,
                                         RewritePatternSet &patterns);
/// Windows and reductions over a sequence axis: conv1d, pool, reduce and
/// their gradients (conv1d_grad, pool_grad, reduce_grad).
void populateConvPoolReduceConversionPatterns(const TypeConverter &converter,
                                              ConversionState &state,
                                              RewritePatternSet &patterns);
/// Losses: cross_entropy, mse, frame_error (reporting only), loss_terms;
/// loss_seed and the losses' gradient ops.
void populateLossConversionPatterns(const TypeConverter &converter,
                                    ConversionState &state,
                                    RewritePatternSet &patterns);
/// The fused loss tail: linear_cross_entropy, its gradient, and both in
/// one sweep (linear_cross_entropy_train).
void populateLossTailConversionPatterns(const TypeConverter &converter,
                                        ConversionState &state,
                                        RewritePatternSet &patterns);
/// The inverse normalization factor of a loss on `positions` (a rank-0
/// f64 tensor): 1, the batch size, or the number of valid frames. A
/// custom factor is the caller's to sum.
Value inverseNormalization(LinalgBuilder &lb, const Positions &positions,
                           LossNormalization normalization);
/// The CTC loss and its gradient (forward-backward over label states), and
/// Viterbi forced alignment on frame scores (viterbi_align).
void populateCtcConversionPatterns(const TypeConverter &converter,
                                   ConversionState &state,
                                   RewritePatternSet &patterns);
/// Scoring recognized label sequences: edit_distance (per-sequence
/// Levenshtein counts), expected_risk and its gradient.
void populateErrorConversionPatterns(const TypeConverter &converter,
                                     ConversionState &state,
                                     RewritePatternSet &patterns);
/// Transducers: prepend_start, transducer_join, transducer_loss,
/// gather_states and their gradients, and the best RNA path over a joint
/// (transducer_align).
void populateTransducerConversionPatterns(const TypeConverter &converter,
                                          ConversionState &state,
                                          RewritePatternSet &patterns);
/// CTC decoding: ctc_greedy_decode and ctc_beam_search, whose hypotheses
/// run over computed dims they bind.
void populateDecodeConversionPatterns(const TypeConverter &converter,
                                      ConversionState &state,
                                      RewritePatternSet &patterns);
/// Transducer decoding through callee graphs: transducer_greedy_decode.
void populateTransducerDecodeConversionPatterns(const TypeConverter &converter,
                                                ConversionState &state,
                                                RewritePatternSet &patterns);
/// Layouts of sequence data: pack, unpack, broadcast_seq.
void populatePackConversionPatterns(const TypeConverter &converter,
                                    ConversionState &state,
                                    RewritePatternSet &patterns);
/// Train-step ops: global_norm, clip_factor and the optimizer updates.
void populateOptimizerConversionPatterns(const TypeConverter &converter,
                                         ConversionState &state,
                                         RewritePatternSet &patterns);
/// Data-parallel sums over the processes of a run: all_reduce.
void populateCollectiveConversionPatterns(const TypeConverter &converter,
                                          ConversionState &state,
                                          RewritePatternSet &patterns);
/// All of the above.
void populateNNToLinalgConversionPatterns(const TypeConverter &converter,
                                          ConversionState &state,
                                          RewritePatternSet &patterns);

} // namespace mlir::nn

#endif // NN_LOWERING_CONVERSION_PATTERNS_H
