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

#include <map>
#include <string>

namespace nn::compiler {

/// How each parameter `module` reads is drawn when fresh, by name: as the
/// first op in module order that reads it says (ParameterInitOpInterface),
/// else by its shape (docs/training.md). The compiler takes them from the
/// whole module before it erases the graphs the entry does not run, so a
/// file's parameters start alike whichever of its graphs is compiled.
std::map<std::string, mlir::nn::ParameterInit>
parameterInits(mlir::ModuleOp module);

/// The manifest of the graph `abi` describes (target cpu, no kernels);
/// its parameters' inits from `inits` (parameters it lacks, such as the
/// optimizer state a train step adds, as the module now reads them).
Manifest
buildManifest(const mlir::nn::GraphAbi &abi, mlir::SymbolTable &symbols,
              const std::map<std::string, mlir::nn::ParameterInit> &inits);

/// Adds the kernels of a lowered GPU module to `manifest`; writes each
/// kernel image to `directory` when one is given.
absl::Status collectKernels(mlir::ModuleOp module, const std::string &directory,
                            Manifest &manifest);

} // namespace nn::compiler

#endif // NN_COMPILER_MANIFESTBUILDER_H
