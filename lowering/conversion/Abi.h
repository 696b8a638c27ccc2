//===- Abi.h - how a lowered graph takes and returns its values -*- C++ -*-===//
//
// One description of a graph's calling convention, used by the lowering
// (to build each func.func signature and every call) and by the compiler
// (to write the manifest that the runtime reads). Keeping both on this one
// struct is what keeps the artifact and its manifest in agreement.
//
// A graph @g lowers to `func.func @g` with arguments, in order:
//   1. for each root dim, in declaration order:
//        batch dim        -> index (its size)
//        sequence dim     -> index (its padded size), tensor<?xi32> (lengths)
//      (derived and packed dims are computed from these inside the graph);
//   2. the graph's own arguments, as builtin tensors (named axes dynamic);
//   3. the parameters it reads, itself or through calls, in module order;
// and results, in order: the graph's results, then for each computed dim
// (`seq(B) computed`, in declaration order) its lengths as tensor<?xi32>
// (their longest is the padded size the results have), then for each loss
// it marks (its own in body order, a callee's at its call) the f64 sum over
// valid positions and the f64 inverse normalization factor.
//
//===----------------------------------------------------------------------===//

#ifndef NN_LOWERING_CONVERSION_ABI_H
#define NN_LOWERING_CONVERSION_ABI_H

#include "dialects/nn/NNOps.h"
#include "mlir/IR/BuiltinOps.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/StringMap.h"

#include <string>
#include <vector>

namespace mlir::nn {

/// One marked loss as the caller of a lowered graph sees it.
struct LossAbi {
  std::string name;
  LossNormalization normalization;
  double scale = 1.0;
  bool useNormalizedLoss = true;
  bool asError = false;
  /// Where the loss values live: packed frames of (batch, sequence), or
  /// padded positions over `batch` and `sequences` (empty for per-sequence).
  bool packed = false;
  std::string batch;
  SmallVector<std::string, 2> sequences;
};

struct GraphAbi {
  /// Op handles are value types whose accessors are not const.
  mutable GraphOp graph;
  /// Batch dims and non-derived sequence dims whose lengths the caller
  /// passes, in declaration order.
  SmallVector<DimDeclAttr> rootDims;
  /// Sequence dims whose lengths an op of the graph computes, in
  /// declaration order; the lowered function returns their lengths.
  SmallVector<DimDeclAttr> computedDims;
  /// The graph's own results (before nn-expose-losses adds loss terms).
  unsigned numResults = 0;
  /// Parameters read by the graph or its callees, in module order.
  SmallVector<ParameterOp> parameters;
  SmallVector<LossAbi> losses;

  /// The builtin tensor type a value of `type` lowers to.
  static RankedTensorType loweredType(NNTensorType type);
  /// The type a computed dim's lengths are returned as: tensor<?xi32>.
  static RankedTensorType lengthsType(MLIRContext *context);
};

/// The ABIs of all graphs of a module, computed once; fails with an error
/// on recursive calls, on loss names that collide through calls and on
/// element types the backends do not support.
class ModuleAbi {
public:
  static FailureOr<ModuleAbi> compute(ModuleOp module);
  const GraphAbi &lookup(GraphOp graph) const {
    return abis[indexByGraph.lookup(graph)];
  }
  /// The ABI of the graph named `name`, or null.
  const GraphAbi *lookup(StringRef name) const {
    auto it = indexByName.find(name);
    return it == indexByName.end() ? nullptr : &abis[it->second];
  }
  ArrayRef<GraphAbi> getGraphs() const { return abis; }

private:
  std::vector<GraphAbi> abis;
  llvm::DenseMap<GraphOp, unsigned> indexByGraph;
  llvm::StringMap<unsigned> indexByName;
};

} // namespace mlir::nn

#endif // NN_LOWERING_CONVERSION_ABI_H
