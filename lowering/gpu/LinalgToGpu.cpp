//===- LinalgToGpu.cpp - bufferized linalg ops as GPU kernels -------------===//
//
// nn-linalg-to-gpu turns every linalg.generic on memrefs (named ops are
// generalized before) into one gpu.launch. The mapping follows the
// iterator types:
//
//  * No reduction: one thread per iteration point. The iteration space is
//    flattened with the innermost loop fastest and cut into blocks of 256,
//    so consecutive threads touch consecutive elements of row-major
//    operands (coalesced).
//  * Innermost loop a reduction, payload `combine(out, f(inputs))` (or its
//    masked form `select(m, combine(out, f), out)`) with an associative
//    combiner (addf, mulf, maximumf, minimumf, addi): one block
//    per output element. Its threads stride over the reduction space, each
//    keeping a partial, and gpu.all_reduce (warp shuffles, then shared
//    memory) combines the partials. Row reductions over a vocabulary and
//    loss sums take this path; a reduction to a scalar uses one block of
//    1024 threads.
//  * A reduction with a parallel innermost loop (a masked sum over time
//    with features innermost) and such a combiner: blocks of 32 x 8
//    threads, x over 32 consecutive output elements (coalesced), y over
//    interleaved slices of the reduction; the 8 partials per output meet
//    in workgroup memory and are combined after a barrier.
//  * Otherwise (no recognized combiner, several outputs, a short static
//    reduction): one thread per output element with the reduction as a
//    loop; consecutive threads still own consecutive output elements. An
//    output indexed by the reduction too (a fused map's) is read and
//    written in the loop, not carried.
//
// Launches are named `<function>_k<n>_<nn op>` through a NameLoc, which
// nn-name-gpu-kernels applies to the outlined kernels.
//
//===----------------------------------------------------------------------===//

#include "lowering/Passes.h"

#include "lowering/conversion/Origin.h"

#include "mlir/Dialect/Affine/IR/AffineOps.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Arith/Utils/Utils.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Linalg/Transforms/Transforms.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/IR/SymbolTable.h"
#include "llvm/ADT/TypeSwitch.h"

#include <limits>

namespace mlir::nn {
#define DEBUG_TYPE "nn-linalg-to-gpu"

#define GEN_PASS_DEF_NNLINALGTOGPU
#define GEN_PASS_DEF_NNNAMEGPUKERNELS
#include "lowering/Passes.h.inc"
} // namespace mlir::nn

using namespace mlir;

namespace {

constexpr int64_t kThreadsPerBlock = 256;
constexpr int64_t kThreadsSingleBlock = 1024;
/// Static reductions shorter than this run as a loop per thread: a block
/// per output would leave most of its threads idle.
constexpr int64_t kMinBlockReduction = 64;
/// Reductions with a parallel innermost loop: 32 consecutive outputs x 8
/// slices of the reduction per block.
constexpr int64_t kSplitX = 32, kSplitY = 8;

/// `yield combine(out, value)` with an associative, commutative combine,
/// or its masked form `yield select(mask, combine(out, value), out)` (how
/// masked reductions over sequence axes lower), which combines
/// `select(mask, value, identity)` instead.
struct Combiner {
  Operation *op;
  BlockArgument accumulator;
  Value value;
  gpu::AllReduceOperation kind;
  TypedAttr identity;
  /// The masked form's select, or null.
  mutable arith::SelectOp mask;
};

std::optional<Combiner> matchCombiner(linalg::GenericOp op) {
  if (op.getNumDpsInits() != 1)
    return std::nullopt;
  Block &body = op.getRegion().front();
  BlockArgument acc = op.getMatchingBlockArgument(op.getDpsInitOperand(0));
  Value yielded = cast<linalg::YieldOp>(body.getTerminator()).getOperand(0);
  // The masked form: the select's false value is the accumulator.
  auto mask = yielded.getDefiningOp<arith::SelectOp>();
  if (mask && mask.getFalseValue() == acc && yielded.hasOneUse()) {
    yielded = mask.getTrueValue();
    if (std::distance(acc.use_begin(), acc.use_end()) != 2)
      return std::nullopt;
  } else {
    mask = nullptr;
    if (!acc.hasOneUse())
      return std::nullopt;
  }
  Operation *combine = yielded.getDefiningOp();
  if (!combine || combine->getBlock() != &body ||
      combine->getNumOperands() != 2 || combine->getNumResults() != 1 ||
      !combine->getResult(0).hasOneUse() ||
      (combine->getOperand(0) != acc && combine->getOperand(1) != acc))
    return std::nullopt;
  Value value = combine->getOperand(0) == acc ? combine->getOperand(1)
                                              : combine->getOperand(0);
  if (value == acc || (mask && mask.getCondition() == acc))
    return std::nullopt;
  Type type = acc.getType();
  Builder b(op.getContext());
  auto floatAttr = [&](double v) -> TypedAttr {
    return b.getFloatAttr(type, v);
  };
  double inf = std::numeric_limits<double>::infinity();
  std::optional<Combiner> result;
  auto make = [&](gpu::AllReduceOperation kind, TypedAttr identity) {
    result = Combiner{combine, acc, value, kind, identity, mask};
  };
  llvm::TypeSwitch<Operation *>(combine)
      .Case([&](arith::AddFOp) {
        make(gpu::AllReduceOperation::ADD, floatAttr(0.0));
      })
      .Case([&](arith::MulFOp) {
        make(gpu::AllReduceOperation::MUL, floatAttr(1.0));
      })
      .Case([&](arith::MaximumFOp) {
        make(gpu::AllReduceOperation::MAXIMUMF, floatAttr(-inf));
      })
      .Case([&](arith::MinimumFOp) {
        make(gpu::AllReduceOperation::MINIMUMF, floatAttr(inf));
      })
      .Case([&](arith::AddIOp) {
        if (type.isSignlessInteger())
          make(gpu::AllReduceOperation::ADD, b.getIntegerAttr(type, 0));
      });
  return result;
}

/// The combiner applied to `acc` and `value` (in its original operand order).
Value combine(OpBuilder &b, const Combiner &combiner, Value acc, Value value) {
  IRMapping map;
  map.map(combiner.accumulator, acc);
  map.map(combiner.value, value);
  return b.clone(*combiner.op, map)->getResult(0);
}

Value constantIndex(OpBuilder &b, Location loc, int64_t value) {
  return b.create<arith::ConstantIndexOp>(loc, value);
}

Value product(OpBuilder &b, Location loc, ArrayRef<Value> sizes) {
  Value result = constantIndex(b, loc, 1);
  for (Value size : sizes)
    result = b.create<arith::MulIOp>(loc, result, size);
  return result;
}

/// Splits `linear` into indices of `sizes`, the last fastest.
SmallVector<Value> delinearize(OpBuilder &b, Location loc, Value linear,
                               ArrayRef<Value> sizes) {
  SmallVector<Value> indices(sizes.size());
  for (size_t i = sizes.size(); i-- > 0;) {
    if (i == 0) {
      indices[0] = linear;
      break;
    }
    indices[i] = b.create<arith::RemUIOp>(loc, linear, sizes[i]);
    linear = b.create<arith::DivUIOp>(loc, linear, sizes[i]);
  }
  return indices;
}

/// The position `map` gives at iteration point `ivs`.
SmallVector<Value> applyMap(OpBuilder &b, Location loc, AffineMap map,
                            ValueRange ivs) {
  SmallVector<Value> indices;
  for (AffineExpr expr : map.getResults()) {
    if (auto dim = dyn_cast<AffineDimExpr>(expr))
      indices.push_back(ivs[dim.getPosition()]);
    else if (auto constant = dyn_cast<AffineConstantExpr>(expr))
      indices.push_back(constantIndex(b, loc, constant.getValue()));
    else
      indices.push_back(b.create<affine::AffineApplyOp>(
          loc, AffineMap::get(map.getNumDims(), 0, expr), ivs));
  }
  return indices;
}

class KernelBuilder {
public:
  KernelBuilder(linalg::GenericOp op, StringRef name)
      : op(op), name(name), loc(op.getLoc()) {}

  LogicalResult build();

private:
  /// Loads what the payload reads at `ivs`, binds the outputs' block
  /// arguments to `outs` (null: unused) and clones the payload. Without
  /// `combiner` it returns the yielded values; with it, the combiner is
  /// left out and the value it would combine is returned.
  SmallVector<Value> emitPayload(OpBuilder &b, ValueRange ivs, ValueRange outs,
                                 const Combiner *combiner = nullptr);
  Value loadOutput(OpBuilder &b, unsigned index, ValueRange ivs);
  void storeOutput(OpBuilder &b, unsigned index, Value value, ValueRange ivs);
  gpu::LaunchOp launch(OpBuilder &b, Value blocks, int64_t threads,
                       int64_t threadsY = 1, TypeRange workgroup = {});
  /// A launch with one thread per element of a `total`-element space, in
  /// blocks of kThreadsPerBlock: a builder inside the bounds check and the
  /// thread's linear index.
  std::pair<OpBuilder, Value> launchPerElement(OpBuilder &b, Value total);
  /// This thread's partial: the combiner folded, from the identity, over
  /// the flattened reduction space from `begin` in steps of `step`, at the
  /// parallel indices `parallel`.
  Value foldStrided(OpBuilder &b, const Combiner &combiner, ValueRange parallel,
                    Value begin, int64_t step);
  /// Iteration point from parallel and reduction indices.
  SmallVector<Value> merge(ValueRange parallel, ValueRange reduction);

  void buildElementwise(OpBuilder &b);
  void buildBlockReduction(OpBuilder &b, const Combiner &combiner);
  void buildSplitReduction(OpBuilder &b, const Combiner &combiner);
  void buildThreadReduction(OpBuilder &b);

  linalg::GenericOp op;
  std::string name;
  Location loc;
  SmallVector<Value> sizes, parallelSizes, reductionSizes;
  SmallVector<unsigned> parallelDims, reductionDims;
};

SmallVector<Value> KernelBuilder::merge(ValueRange parallel,
                                        ValueRange reduction) {
  SmallVector<Value> ivs(sizes.size());
  for (auto [dim, value] : llvm::zip(parallelDims, parallel))
    ivs[dim] = value;
  for (auto [dim, value] : llvm::zip(reductionDims, reduction))
    ivs[dim] = value;
  return ivs;
}

SmallVector<Value> KernelBuilder::emitPayload(OpBuilder &b, ValueRange ivs,
                                              ValueRange outs,
                                              const Combiner *combiner) {
  IRMapping map;
  for (OpOperand *input : op.getDpsInputOperands()) {
    BlockArgument arg = op.getMatchingBlockArgument(input);
    if (arg.use_empty())
      continue;
    Value source = input->get();
    if (!isa<MemRefType>(source.getType())) {
      map.map(arg, source);
      continue;
    }
    map.map(arg, b.create<memref::LoadOp>(
                     loc, source,
                     applyMap(b, loc, op.getMatchingIndexingMap(input), ivs)));
  }
  for (auto [index, init] : llvm::enumerate(op.getDpsInitsMutable())) {
    BlockArgument arg = op.getMatchingBlockArgument(&init);
    if (!arg.use_empty() && outs[index])
      map.map(arg, outs[index]);
  }
  Block &body = op.getRegion().front();
  for (Operation &inner : body.without_terminator()) {
    if (combiner &&
        (&inner == combiner->op || &inner == combiner->mask.getOperation()))
      continue;
    if (auto index = dyn_cast<linalg::IndexOp>(inner)) {
      map.map(index.getResult(), ivs[index.getDim()]);
      continue;
    }
    b.clone(inner, map);
  }
  if (combiner && combiner->mask)
    return {b.create<arith::SelectOp>(
        loc, map.lookupOrDefault(combiner->mask.getCondition()),
        map.lookupOrDefault(combiner->value),
        b.create<arith::ConstantOp>(loc, combiner->identity))};
  if (combiner)
    return {map.lookupOrDefault(combiner->value)};
  SmallVector<Value> yielded;
  for (Value value : body.getTerminator()->getOperands())
    yielded.push_back(map.lookupOrDefault(value));
  return yielded;
}

Value KernelBuilder::loadOutput(OpBuilder &b, unsigned index, ValueRange ivs) {
  OpOperand *init = op.getDpsInitOperand(index);
  return b.create<memref::LoadOp>(
      loc, init->get(), applyMap(b, loc, op.getMatchingIndexingMap(init), ivs));
}

void KernelBuilder::storeOutput(OpBuilder &b, unsigned index, Value value,
                                ValueRange ivs) {
  OpOperand *init = op.getDpsInitOperand(index);
  b.create<memref::StoreOp>(
      loc, value, init->get(),
      applyMap(b, loc, op.getMatchingIndexingMap(init), ivs));
}

gpu::LaunchOp KernelBuilder::launch(OpBuilder &b, Value blocks, int64_t threads,
                                    int64_t threadsY, TypeRange workgroup) {
  Value one = constantIndex(b, loc, 1);
  Location named = NameLoc::get(b.getStringAttr(name), loc);
  auto launch = b.create<gpu::LaunchOp>(
      named, blocks, one, one, constantIndex(b, loc, threads),
      constantIndex(b, loc, threadsY), one, /*dynamicSharedMemorySize=*/nullptr,
      /*asyncTokenType=*/nullptr, /*asyncDependencies=*/ValueRange(),
      workgroup);
  OpBuilder::InsertionGuard guard(b);
  b.setInsertionPointToEnd(&launch.getBody().front());
  b.create<gpu::TerminatorOp>(loc);
  return launch;
}

std::pair<OpBuilder, Value> KernelBuilder::launchPerElement(OpBuilder &b,
                                                            Value total) {
  Value blocks = b.create<arith::MaxUIOp>(
      loc, constantIndex(b, loc, 1),
      b.create<arith::CeilDivUIOp>(loc, total,
                                   constantIndex(b, loc, kThreadsPerBlock)));
  gpu::LaunchOp kernel = launch(b, blocks, kThreadsPerBlock);
  OpBuilder k = OpBuilder::atBlockBegin(&kernel.getBody().front());
  Value linear = k.create<arith::AddIOp>(
      loc,
      k.create<arith::MulIOp>(loc, kernel.getBlockIds().x,
                              constantIndex(k, loc, kThreadsPerBlock)),
      kernel.getThreadIds().x);
  Value inRange =
      k.create<arith::CmpIOp>(loc, arith::CmpIPredicate::ult, linear, total);
  auto guard = k.create<scf::IfOp>(loc, inRange, /*withElseRegion=*/false);
  return {guard.getThenBodyBuilder(), linear};
}

void KernelBuilder::buildElementwise(OpBuilder &b) {
  auto [t, linear] = launchPerElement(b, product(b, loc, sizes));
  SmallVector<Value> ivs = delinearize(t, loc, linear, sizes);
  SmallVector<Value> outs;
  for (OpOperand &init : op.getDpsInitsMutable())
    outs.push_back(
        op.getMatchingBlockArgument(&init).use_empty()
            ? Value()
            : loadOutput(t, init.getOperandNumber() - op.getNumDpsInputs(),
                         ivs));
  SmallVector<Value> values = emitPayload(t, ivs, outs);
  for (auto [index, value] : llvm::enumerate(values))
    storeOutput(t, index, value, ivs);
}

Value KernelBuilder::foldStrided(OpBuilder &b, const Combiner &combiner,
                                 ValueRange parallel, Value begin,
                                 int64_t step) {
  Value identity = b.create<arith::ConstantOp>(loc, combiner.identity);
  return b
      .create<scf::ForOp>(
          loc, begin, product(b, loc, reductionSizes),
          constantIndex(b, loc, step), ValueRange{identity},
          [&](OpBuilder &body, Location, Value r, ValueRange partial) {
            SmallVector<Value> ivs =
                merge(parallel, delinearize(body, loc, r, reductionSizes));
            Value value = emitPayload(body, ivs, {Value()}, &combiner).front();
            body.create<scf::YieldOp>(
                loc, combine(body, combiner, partial.front(), value));
          })
      .getResult(0);
}

void KernelBuilder::buildBlockReduction(OpBuilder &b,
                                        const Combiner &combiner) {
  Value outputs = product(b, loc, parallelSizes);
  int64_t threads =
      parallelDims.empty() ? kThreadsSingleBlock : kThreadsPerBlock;
  Value blocks =
      b.create<arith::MaxUIOp>(loc, constantIndex(b, loc, 1), outputs);
  gpu::LaunchOp kernel = launch(b, blocks, threads);
  OpBuilder k = OpBuilder::atBlockBegin(&kernel.getBody().front());
  Value block = kernel.getBlockIds().x;
  Value thread = kernel.getThreadIds().x;
  // Uniform per block: every thread of a block reaches the all_reduce.
  Value inRange =
      k.create<arith::CmpIOp>(loc, arith::CmpIPredicate::ult, block, outputs);
  auto guard = k.create<scf::IfOp>(loc, inRange, /*withElseRegion=*/false);
  OpBuilder t = guard.getThenBodyBuilder();
  SmallVector<Value> parallel = delinearize(t, loc, block, parallelSizes);
  Value partial = foldStrided(t, combiner, parallel, thread, threads);
  Value total = t.create<gpu::AllReduceOp>(loc, partial,
                                           gpu::AllReduceOperationAttr::get(
                                               t.getContext(), combiner.kind),
                                           /*uniform=*/true)
                    .getResult();
  Value first = t.create<arith::CmpIOp>(loc, arith::CmpIPredicate::eq, thread,
                                        constantIndex(t, loc, 0));
  auto write = t.create<scf::IfOp>(loc, first, /*withElseRegion=*/false);
  OpBuilder w = write.getThenBodyBuilder();
  Value zero = constantIndex(w, loc, 0);
  SmallVector<Value> ivs =
      merge(parallel, SmallVector<Value>(reductionDims.size(), zero));
  storeOutput(w, 0, combine(w, combiner, loadOutput(w, 0, ivs), total), ivs);
}

/// Blocks of kSplitX x kSplitY threads: x over kSplitX consecutive output
/// elements (the innermost loop: coalesced), y over interleaved slices of
/// the reduction. Partials meet in workgroup memory; after a barrier the
/// y = 0 row combines them with the output.
void KernelBuilder::buildSplitReduction(OpBuilder &b,
                                        const Combiner &combiner) {
  Value outputs = product(b, loc, parallelSizes);
  Value blocks = b.create<arith::MaxUIOp>(
      loc, constantIndex(b, loc, 1),
      b.create<arith::CeilDivUIOp>(loc, outputs,
                                   constantIndex(b, loc, kSplitX)));
  Type element = combiner.accumulator.getType();
  auto partialsType = MemRefType::get(
      {kSplitY, kSplitX}, element, AffineMap(),
      gpu::AddressSpaceAttr::get(b.getContext(), gpu::AddressSpace::Workgroup));
  gpu::LaunchOp kernel =
      launch(b, blocks, kSplitX, kSplitY, TypeRange{partialsType});
  Value partials = kernel.getWorkgroupAttributions().front();
  OpBuilder k = OpBuilder::atBlockBegin(&kernel.getBody().front());
  Value x = kernel.getThreadIds().x, y = kernel.getThreadIds().y;
  Value linear = k.create<arith::AddIOp>(
      loc,
      k.create<arith::MulIOp>(loc, kernel.getBlockIds().x,
                              constantIndex(k, loc, kSplitX)),
      x);
  Value inRange =
      k.create<arith::CmpIOp>(loc, arith::CmpIPredicate::ult, linear, outputs);
  Value identity = k.create<arith::ConstantOp>(loc, combiner.identity);
  // Threads past the end keep the identity but still reach the barrier.
  auto partial = k.create<scf::IfOp>(
      loc, inRange,
      [&](OpBuilder &t, Location) {
        SmallVector<Value> parallel =
            delinearize(t, loc, linear, parallelSizes);
        t.create<scf::YieldOp>(loc,
                               foldStrided(t, combiner, parallel, y, kSplitY));
      },
      [&](OpBuilder &e, Location) { e.create<scf::YieldOp>(loc, identity); });
  k.create<memref::StoreOp>(loc, partial.getResult(0), partials,
                            ValueRange{y, x});
  k.create<gpu::BarrierOp>(loc);
  Value first = k.create<arith::CmpIOp>(loc, arith::CmpIPredicate::eq, y,
                                        constantIndex(k, loc, 0));
  auto write = k.create<scf::IfOp>(
      loc, k.create<arith::AndIOp>(loc, first, inRange), false);
  OpBuilder w = write.getThenBodyBuilder();
  Value zero = constantIndex(w, loc, 0);
  SmallVector<Value> ivs =
      merge(delinearize(w, loc, linear, parallelSizes),
            SmallVector<Value>(reductionDims.size(), zero));
  Value result = loadOutput(w, 0, ivs);
  for (int64_t slice = 0; slice < kSplitY; ++slice)
    result = combine(
        w, combiner, result,
        w.create<memref::LoadOp>(loc, partials,
                                 ValueRange{constantIndex(w, loc, slice), x}));
  storeOutput(w, 0, result, ivs);
}

void KernelBuilder::buildThreadReduction(OpBuilder &b) {
  auto [t, linear] = launchPerElement(b, product(b, loc, parallelSizes));
  SmallVector<Value> parallel = delinearize(t, loc, linear, parallelSizes);
  Value zero = constantIndex(t, loc, 0);
  SmallVector<Value> outputIvs =
      merge(parallel, SmallVector<Value>(reductionDims.size(), zero));
  // The accumulators the loop carries: the outputs indexed by parallel
  // dims only. An output indexed by a reduction dim too (a map fused with
  // the reduction, as attention's scores with their row maximum) has an
  // element per iteration: read and written in the loop.
  SmallVector<bool> perIteration;
  SmallVector<Value> initial;
  for (unsigned i = 0, e = op.getNumDpsInits(); i < e; ++i) {
    AffineMap map = op.getMatchingIndexingMap(op.getDpsInitOperand(i));
    perIteration.push_back(llvm::any_of(
        reductionDims, [&](unsigned dim) { return map.isFunctionOfDim(dim); }));
    if (!perIteration.back())
      initial.push_back(loadOutput(t, i, outputIvs));
  }
  SmallVector<Value> lower(reductionDims.size(), zero);
  SmallVector<Value> steps(reductionDims.size(), constantIndex(t, loc, 1));
  scf::LoopNest nest = scf::buildLoopNest(
      t, loc, lower, reductionSizes, steps, initial,
      [&](OpBuilder &body, Location, ValueRange reduction,
          ValueRange accumulators) -> scf::ValueVector {
        SmallVector<Value> ivs = merge(parallel, reduction);
        SmallVector<Value> outs;
        auto accumulator = accumulators.begin();
        for (auto [index, elementwise] : llvm::enumerate(perIteration))
          outs.push_back(elementwise ? loadOutput(body, index, ivs)
                                     : *accumulator++);
        SmallVector<Value> values = emitPayload(body, ivs, outs);
        scf::ValueVector carried;
        for (auto [index, value] : llvm::enumerate(values)) {
          if (perIteration[index])
            storeOutput(body, index, value, ivs);
          else
            carried.push_back(value);
        }
        return carried;
      });
  auto result = nest.results.begin();
  for (auto [index, elementwise] : llvm::enumerate(perIteration))
    if (!elementwise)
      storeOutput(t, index, *result++, outputIvs);
}

LogicalResult KernelBuilder::build() {
  OpBuilder b(op);
  auto linalgOp = cast<linalg::LinalgOp>(op.getOperation());
  for (Range range : linalgOp.createLoopRanges(b, loc))
    sizes.push_back(getValueOrCreateConstantIndexOp(b, loc, range.size));
  for (auto [dim, iterator] : llvm::enumerate(op.getIteratorTypesArray())) {
    if (iterator == utils::IteratorType::reduction) {
      reductionDims.push_back(dim);
      reductionSizes.push_back(sizes[dim]);
    } else {
      parallelDims.push_back(dim);
      parallelSizes.push_back(sizes[dim]);
    }
  }
  if (reductionDims.empty()) {
    buildElementwise(b);
  } else {
    std::optional<Combiner> combiner = matchCombiner(op);
    int64_t staticReduction = 1;
    for (unsigned dim : reductionDims) {
      int64_t size = op.getStaticLoopRanges()[dim];
      staticReduction = ShapedType::isDynamic(size) || staticReduction < 0
                            ? -1
                            : staticReduction * size;
    }
    bool innermost = reductionDims.back() == sizes.size() - 1;
    bool longEnough =
        staticReduction < 0 || staticReduction >= kMinBlockReduction;
    if (combiner && innermost && longEnough)
      buildBlockReduction(b, *combiner);
    else if (combiner && !innermost && longEnough)
      buildSplitReduction(b, *combiner);
    else
      buildThreadReduction(b);
  }
  op.erase();
  return success();
}

/// Constants that bufferization placed in memref.global live in host
/// memory, which kernels cannot read. Each function gets a device buffer
/// per splat global it reads, filled at entry (the fill becomes a kernel)
/// and freed before it returns.
LogicalResult moveConstantsToDevice(ModuleOp module) {
  SymbolTable symbols(module);
  SmallVector<memref::GetGlobalOp> reads;
  module.walk([&](memref::GetGlobalOp read) { reads.push_back(read); });
  for (memref::GetGlobalOp read : reads) {
    auto global = symbols.lookup<memref::GlobalOp>(read.getName());
    auto value =
        global
            ? dyn_cast_or_null<SplatElementsAttr>(global.getInitialValueAttr())
            : SplatElementsAttr();
    auto type = dyn_cast<MemRefType>(read.getType());
    auto function = read->getParentOfType<func::FuncOp>();
    if (!value || !type || !type.hasStaticShape() ||
        !type.getLayout().isIdentity() || !function)
      return read.emitError("the GPU target supports only splat constants "
                            "(this one would stay in host memory)");
    OpBuilder b = OpBuilder::atBlockBegin(&function.getBody().front());
    Location loc = read.getLoc();
    Value buffer = b.create<memref::AllocOp>(loc, type);
    Value element =
        b.create<arith::ConstantOp>(loc, value.getSplatValue<TypedAttr>());
    // Generic, like every op this pass maps (named ops were generalized
    // before it runs).
    auto fill = b.create<linalg::FillOp>(loc, element, buffer);
    IRRewriter rewriter(fill);
    if (failed(linalg::generalizeNamedOp(rewriter, fill)))
      return fill.emitError("cannot generalize the constant's fill");
    function.walk([&](func::ReturnOp ret) {
      OpBuilder(ret).create<memref::DeallocOp>(loc, buffer);
    });
    read.replaceAllUsesWith(buffer);
    read.erase();
  }
  for (auto global :
       llvm::make_early_inc_range(module.getOps<memref::GlobalOp>()))
    if (SymbolTable::symbolKnownUseEmpty(global, module))
      global.erase();
  return success();
}

struct LinalgToGpuPass
    : public mlir::nn::impl::NNLinalgToGpuBase<LinalgToGpuPass> {
  void runOnOperation() override {
    ModuleOp module = getOperation();
    if (failed(moveConstantsToDevice(module)))
      return signalPassFailure();
    SmallVector<linalg::GenericOp> generics;
    bool unsupported = false;
    module.walk([&](linalg::LinalgOp op) {
      auto generic = dyn_cast<linalg::GenericOp>(op.getOperation());
      if (!generic || !generic.hasPureBufferSemantics()) {
        op->emitError("nn-linalg-to-gpu expects linalg.generic on memrefs "
                      "(run linalg-generalize-named-ops and bufferize first)");
        unsupported = true;
        return;
      }
      generics.push_back(generic);
    });
    if (unsupported)
      return signalPassFailure();
    unsigned counter = 0;
    for (linalg::GenericOp op : generics) {
      auto function = op->getParentOfType<FunctionOpInterface>();
      std::string name = (function ? function.getName().str() : "kernel") +
                         "_k" + std::to_string(counter++) + "_" +
                         mlir::nn::originOpName(op.getLoc(), "linalg");
      // A PTX identifier is letters, digits, '_' and '$'; graph names may
      // hold more (`@"enc.layer1"`, a derived `@"predictor.step"`).
      for (char &c : name)
        if (!llvm::isAlnum(c) && c != '_' && c != '$')
          c = '_';
      if (failed(KernelBuilder(op, name).build()))
        return signalPassFailure();
    }
  }
};

/// After gpu-kernel-outlining: gives each outlined kernel (and its
/// gpu.module) the name its launch carries in a NameLoc.
struct NameGpuKernelsPass
    : public mlir::nn::impl::NNNameGpuKernelsBase<NameGpuKernelsPass> {
  void runOnOperation() override {
    ModuleOp module = getOperation();
    SymbolTable symbols(module);
    // A kernel module launched more than once keeps its name: renaming it
    // and its kernel for one launch would leave the others pointing at a
    // kernel that is gone. (Outlining makes a module per launch.)
    DenseMap<StringAttr, unsigned> launches;
    module.walk([&](gpu::LaunchFuncOp launch) {
      ++launches[launch.getKernelModuleName()];
    });
    DenseSet<StringAttr> used;
    module.walk([&](gpu::LaunchFuncOp launch) {
      auto name = dyn_cast<NameLoc>(launch.getLoc());
      if (!name || launches[launch.getKernelModuleName()] != 1)
        return;
      auto kernelModule =
          symbols.lookup<gpu::GPUModuleOp>(launch.getKernelModuleName());
      if (!kernelModule)
        return;
      Operation *kernel =
          SymbolTable::lookupSymbolIn(kernelModule, launch.getKernelName());
      StringAttr target = name.getName();
      if (!kernel || !used.insert(target).second ||
          (symbols.lookup(target) && symbols.lookup(target) != kernelModule))
        return;
      if (failed(symbols.rename(kernelModule, target)))
        return signalPassFailure();
      SymbolTable(kernelModule).setSymbolName(kernel, target);
      launch.setKernelAttr(
          SymbolRefAttr::get(target, {FlatSymbolRefAttr::get(target)}));
    });
  }
};

} // namespace
