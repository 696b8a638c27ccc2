//===- ExecutionUtil.h - shared helpers of the execution tests --*- C++ -*-===//

#ifndef NN_UNITTESTS_EXECUTIONUTIL_H
#define NN_UNITTESTS_EXECUTIONUTIL_H

#include "nn/Compiler.h"
#include "reference/Reference.h"

#include "llvm/ADT/STLFunctionalExtras.h"

#include <gtest/gtest.h>

#include <cmath>
#include <random>
#include <string>
#include <vector>

namespace mlir {
class OpPassManager;
} // namespace mlir

namespace nn::testing {

/// How a test picks the lengths of each root sequence dim.
enum class LengthPattern {
  /// Random in [1, padded], with one sequence of length 1 and one full.
  Mixed,
  /// Every sequence has the padded length.
  AllEqual,
  /// Random in [0, padded]: empty sequences included.
  WithEmpty,
};

/// One shape a test runs a graph at: lengths pattern, batch, padded size.
struct ShapeRun {
  LengthPattern pattern;
  int64_t batch, padded;
};

/// Seeded inputs and parameters for a compiled graph (nn/Synthetic.h), with
/// lengths by pattern in [0, padded].
RunInputs makeInputs(const Manifest &manifest, uint32_t seed,
                     LengthPattern pattern, int64_t batch, int64_t padded,
                     double pad = 0.0);

/// |a - b| <= abs + rel * max(|a|, |b|); infinities must match.
inline bool close(double a, double b, double rel, double abs = 0.0) {
  if (std::isinf(a) || std::isinf(b))
    return a == b;
  return std::fabs(a - b) <= abs + rel * std::max(std::fabs(a), std::fabs(b));
}

/// Compiles for `target` or fails the test with the compiler's message.
Executable compileOrDie(const std::string &source, bool pack,
                        const std::string &entry = "",
                        const std::string &target = "cpu",
                        const LoadOptions &load = {});

/// Compiles with `options` or fails the test with the compiler's message.
Executable compileOrDie(const std::string &source,
                        const CompileOptions &options,
                        const LoadOptions &load = {});

/// Whether the CUDA toolkit that compiling for the GPU needs (libdevice) is
/// installed.
bool haveCudaToolkit();

/// Skips a test that compiles for the GPU where the toolkit is missing.
#define SKIP_WITHOUT_TOOLKIT()                                                 \
  do {                                                                         \
    if (!::nn::testing::haveCudaToolkit())                                     \
      GTEST_SKIP() << "no CUDA toolkit (libdevice) to compile for the GPU";    \
  } while (false)

/// A small graph around one op family (entry @g).
struct OpCase {
  const char *name;
  const char *source;
};
// GoogleTest looks this name up. NOLINTNEXTLINE(readability-identifier-naming)
inline void PrintTo(const OpCase &c, std::ostream *os) { *os << c.name; }
/// Every op family of the dialect (OpCases.cpp).
const std::vector<OpCase> &opCases();

/// `source` after the passes `build` adds to a pass manager, printed.
/// Empty when parsing or a pass fails (its diagnostics are printed).
std::string withPasses(const std::string &source,
                       llvm::function_ref<void(mlir::OpPassManager &)> build);

/// `source` after the nn-level passes a test asks for, in this order:
/// nn-dropout-training (`training`), nn-pack-before-loss (`pack`, at
/// `frontier`) and nn-autodiff of graph `graph` (`grads`; empty: the one
/// no graph calls) with the gradients of `inputGradients` too. Empty when
/// parsing or a pass fails (its diagnostics are printed).
std::string transform(const std::string &source, bool training, bool pack,
                      bool grads,
                      const std::vector<std::string> &inputGradients = {},
                      const std::string &graph = "",
                      PackFrontier frontier = OptimizeOptions().packFrontier);

/// The text of examples/<name>.
std::string readExample(const std::string &name);

/// Sizes and lengths of every dim of the manifest's graph for `inputs`.
DimValues dimValues(const Manifest &manifest, const RunInputs &inputs);

/// Adds the computed dims of a run (its `lengths:` outputs) and the dims
/// that follow from them to `dims`.
void addComputedDims(const Manifest &manifest, const RunResult &result,
                     DimValues &dims);

/// Expects the compiled outputs and losses to match the reference within
/// `rel` / `abs`, outputs compared on valid positions only (computed
/// lengths exactly, before the values they make valid). Both must name the
/// same losses: each loss only one side has is a failure naming it.
void expectMatchesReference(const std::string &source, const Executable &exe,
                            const RunInputs &inputs, const RunResult &result,
                            double rel, double abs);

/// Expects two runs (e.g. pack on and off) to give the same losses and
/// the same outputs on valid positions within `rel`.
void expectSameResults(const Manifest &manifest, const RunInputs &inputs,
                       const RunResult &a, const RunResult &b, double rel);

} // namespace nn::testing

#endif // NN_UNITTESTS_EXECUTIONUTIL_H
