//===- NNInterfaces.h - op interfaces of the nn dialect ---------*- C++ -*-===//
//
// FrameWiseOpInterface, SequenceMixingOpInterface, LossOpInterface and the
// others of NNInterfaces.td, and ParameterInit.
//
//===----------------------------------------------------------------------===//

#ifndef NN_DIALECTS_NN_NNINTERFACES_H
#define NN_DIALECTS_NN_NNINTERFACES_H

#include "dialects/nn/NNDialect.h"
#include "mlir/IR/OpDefinition.h"

namespace mlir::nn {

/// How a fresh parameter is drawn: zeros, ones, uniform in [-scale, scale]
/// or normal with mean 0 and standard deviation `scale`.
struct ParameterInit {
  enum class Kind { none, zeros, ones, uniform, normal };
  Kind kind = Kind::none;
  double scale = 0;

  static ParameterInit zeros() { return {Kind::zeros, 0}; }
  static ParameterInit ones() { return {Kind::ones, 0}; }
  static ParameterInit uniform(double bound) { return {Kind::uniform, bound}; }
  static ParameterInit normal(double stddev) { return {Kind::normal, stddev}; }
  /// Glorot/Xavier uniform: bound sqrt(6 / (fanIn + fanOut)).
  static ParameterInit glorot(int64_t fanIn, int64_t fanOut);
};

} // namespace mlir::nn

#include "dialects/nn/NNInterfaces.h.inc"

#endif // NN_DIALECTS_NN_NNINTERFACES_H
