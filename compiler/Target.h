//===- Target.h - what the compiler compiles for ----------------*- C++ -*-===//
//
// A target is everything the compiler decides per kind of device: the
// options it needs checked before anything compiles, the tail of the
// pipeline from bufferized linalg to the LLVM dialect (its GEMM provider
// and its kernels' binary format included), and what the lowered module
// adds to the manifest (the target the runtime looks a device up by, the
// kernel images, the buffers host code reads). The compiler driver asks
// the target chosen by name (CompileOptions::target) and compares no
// target names itself.
//
// Targets live in one registry: "cpu" and "cuda" are built in; a new one
// (a backend, or a test's fake) is one registerTarget() call and its own
// files. The runtime's device registry (runtime/device/Device.h) is the
// other half: a device backend for the same name runs the artifacts.
//
//===----------------------------------------------------------------------===//

#ifndef NN_COMPILER_TARGET_H
#define NN_COMPILER_TARGET_H

#include "nn/Compiler.h"
#include "nn/Manifest.h"

#include "absl/status/status.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/Pass/PassManager.h"

#include <memory>
#include <string>
#include <vector>

namespace nn::compiler {

class Target {
public:
  virtual ~Target();

  /// The name CompileOptions::target chooses it by, and the target the
  /// manifest records for the runtime ("cpu", "cuda").
  virtual std::string name() const = 0;
  /// One line for --help: what it compiles for.
  virtual std::string description() const = 0;

  /// Checks the options before anything compiles (a chip the code
  /// generator cannot compile for, a missing toolkit).
  virtual absl::Status checkOptions(const CompileOptions &options) const;

  /// Whether a data-parallel step's gradient sums may run beside the rest
  /// of its backward here (OptimizerOptions::allReduceOverlap): its
  /// runtime's communicator starts a sum and returns before it is done.
  virtual bool overlapsSums() const { return true; }

  /// Bufferized linalg on memrefs (nn-to-buffers' output) to the LLVM
  /// dialect, with any device code as binaries in the module.
  virtual void buildCodegenPipeline(mlir::OpPassManager &pm,
                                    const CompileOptions &options) const = 0;

  /// What the lowered module tells the runtime, added to `manifest`: at
  /// least its target (name()); kernels and host-visible arguments where
  /// the target has them. `graph` is the entry graph's name.
  virtual absl::Status finishManifest(mlir::ModuleOp module,
                                      const std::string &graph,
                                      const CompileOptions &options,
                                      Manifest &manifest) const;
};

/// Adds `target` to the registry under its name, replacing one registered
/// before under the same name.
void registerTarget(std::shared_ptr<const Target> target);

/// The target registered as `name`; InvalidArgument naming the registered
/// ones otherwise ("unknown target 'tpu' (registered: cpu, cuda)").
absl::StatusOr<std::shared_ptr<const Target>>
lookupTarget(const std::string &name);

/// The names of the registered targets, sorted.
std::vector<std::string> registeredTargets();

/// The built-in targets (Target.cpp registers them).
std::shared_ptr<const Target> createCpuTarget();
std::shared_ptr<const Target> createCudaTarget();

} // namespace nn::compiler

#endif // NN_COMPILER_TARGET_H
