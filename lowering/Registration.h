//===- Registration.h - what the nn pipelines need registered ---*- C++ -*-===//

#ifndef NN_LOWERING_REGISTRATION_H
#define NN_LOWERING_REGISTRATION_H

#include "mlir/IR/DialectRegistry.h"

namespace mlir::nn {

/// Inserts the dialects the nn pipelines produce and the external interface
/// models their passes rely on (bufferization, deallocation, value bounds,
/// LLVM IR translation). Tools that run the pipelines call this instead of
/// the slow-to-compile InitAll* headers.
void registerPipelineDialects(DialectRegistry &registry);

} // namespace mlir::nn

#endif // NN_LOWERING_REGISTRATION_H
