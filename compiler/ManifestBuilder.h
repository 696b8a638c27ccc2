//===- ManifestBuilder.h - the manifest of an entry graph -------*- C++ -*-===//
//
// What the runtime needs to know about an artifact (nn/Manifest.h), read
// from the nn-level module before it is lowered: the entry graph's dims,
// inputs (with the class bounds of integer inputs, asked of
// ClassIndexOpInterface), parameters, outputs and losses, all from the
// graph ABI (lowering/conversion/Abi.h) so that manifest and code agree;
// and, from the lowered module, the GPU kernels and their nn ops.
//
//===----------------------------------------------------------------------===//

#ifndef NN_COMPILER_MANIFESTBUILDER_H
#define NN_COMPILER_MANIFESTBUILDER_H

#include "lowering/conversion/Abi.h"
#include "nn/Manifest.h"

#include "absl/status/status.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/SymbolTable.h"

#include <string>

namespace nn::compiler {

/// The manifest of the graph `abi` describes (target cpu, no kernels).
Manifest buildManifest(const mlir::nn::GraphAbi &abi,
                       mlir::SymbolTable &symbols);

/// Adds the kernels of a lowered GPU module to `manifest`; writes each
/// kernel image to `directory` when one is given.
absl::Status collectKernels(mlir::ModuleOp module, const std::string &directory,
                            Manifest &manifest);

} // namespace nn::compiler

#endif // NN_COMPILER_MANIFESTBUILDER_H
