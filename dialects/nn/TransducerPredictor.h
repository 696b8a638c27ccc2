//===- TransducerPredictor.h - a prediction network's two forms -*- C++ -*-===//
//
// A transducer decoder (nn.transducer_greedy_decode,
// nn.transducer_beam_search) names its prediction network by symbol, in
// one of two forms:
//
//  * the step form, one label at a time with explicit states:
//    (y [S] i32, states...) -> ([S, D], states...);
//  * the sequence form, the network exactly as training runs it on the
//    labels after nn.prepend_start: (y [S, U] i32) -> [S, U, D].
//
// The sequence form is what lets a model write its predictor once: the
// training graph calls it (nn.call) and the search drives it. The
// verifier accepts a sequence-form graph only when every op of it has a
// step rule below; nn-derive-step-graphs (passes/) then writes the step
// form from it, and the reference evaluator runs it on whole prefixes.
//
//===----------------------------------------------------------------------===//

#ifndef NN_DIALECTS_NN_TRANSDUCERPREDICTOR_H
#define NN_DIALECTS_NN_TRANSDUCERPREDICTOR_H

#include "dialects/nn/NNOps.h"

#include <optional>

namespace mlir::nn {

/// The dims of a sequence-form predictor: its batch S and the label
/// sequence dim U of S.
struct SequencePredictorDims {
  StringRef batch;
  StringRef labels;
};

/// The dims of `graph` when its signature is the sequence form's: exactly
/// two dims, a batch S and a plain sequence dim U of S (not derived, not
/// computed), and one argument `[S, U]` of i32. The result is checked by
/// the decoders, which know the encoder's width.
std::optional<SequencePredictorDims> matchSequencePredictor(GraphOp graph);

/// How an op of a sequence-form predictor runs for one label, given its
/// row of the labels and the states before it.
enum class PredictorStepRule {
  /// nn.param_ref: the same value.
  Shared,
  /// A frame-wise op: the same op on the label's row (its U axis gone).
  PerLabel,
  /// nn.dropout: its input (a search is not training).
  Identity,
  /// nn.lstm forward: one cell step from the state before the label,
  /// which the step form takes and returns (h, then c).
  Recurrent,
  /// nn.return.
  Return,
};

/// The step rule of `op`, or nullopt when it has none: it reads later
/// labels (a backward or bidirectional LSTM, a convolution, pooling or a
/// reduction over U) or is not an op the derivation handles (a call, a
/// loss).
std::optional<PredictorStepRule> getPredictorStepRule(Operation *op);

} // namespace mlir::nn

#endif // NN_DIALECTS_NN_TRANSDUCERPREDICTOR_H
