//===- GemmToBlas.cpp - the GEMMs of nn layers as BLAS calls --------------===//
//
// The call passes pointers as i64 and CBLAS ints as i32: on x86-64 SysV a
// pointer and an i64 travel in the same integer registers, which keeps the
// declaration in builtin types (memref arguments would expand into
// descriptors). Debian's OpenBLAS uses 32-bit ints (LP64).
//
// With runtime=onednn (the CPU default) f32 GEMMs call the runtime's
// `nn_cpu_sgemm` (oneDNN's sgemm, on the same OpenMP threads as the
// generated loops) and f64 GEMMs OpenBLAS's `cblas_dgemm` (oneDNN has no
// f64 GEMM). With runtime=cuda the callee is the runtime's `nn_cuda_sgemm` /
// `nn_cuda_dgemm` (cuBLAS on device pointers). The runtime's entry points
// take the CBLAS arguments after a leading pointer to a string naming the
// nn op, for their error messages.
//
//===----------------------------------------------------------------------===//

#include "lowering/Passes.h"

#include "lowering/conversion/Origin.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/IR/SymbolTable.h"

namespace mlir::nn {
#define DEBUG_TYPE "nn-gemm-to-blas"

#define GEN_PASS_DEF_NNGEMMTOBLAS
#include "lowering/Passes.h.inc"
} // namespace mlir::nn

using namespace mlir;

namespace {

constexpr int kRowMajor = 101, kNoTrans = 111, kTrans = 112;

/// C[M, N] += op(A) * op(B) with leading dimensions: A[M, K] (or [K, M]
/// transposed), B[N, K] transposed (or [K, N]). The forward of a linear is
/// A B^T; its input gradient A B; its weight gradient A^T B.
struct Gemm {
  Value a, b, c;
  /// Number of leading axes of `a` and `c` that form the rows (A B^T and
  /// A B); A^T B has one.
  unsigned rowAxes = 1;
  bool transA = false, transB = true;
  /// A^T B: the number of leading axes of `a` and `b` that are contracted
  /// (rows of a padded [B, T, ...] value, flattened).
  unsigned contractAxes = 1;
};

bool hasUnitInnerStride(Value v) {
  auto type = cast<MemRefType>(v.getType());
  SmallVector<int64_t> strides;
  int64_t offset;
  return succeeded(getStridesAndOffset(type, strides, offset)) &&
         !strides.empty() && strides.back() == 1;
}

bool isContiguous(Value v) {
  return cast<MemRefType>(v.getType()).getLayout().isIdentity();
}

/// A view BLAS can take with a leading dimension: contiguous, or a matrix
/// whose rows are strided and whose elements are not (a block of rows of
/// a larger matrix, as the fused loss tail's sweep reads and writes).
bool isMatrixView(Value v) {
  return isContiguous(v) || (cast<MemRefType>(v.getType()).getRank() == 2 &&
                             hasUnitInnerStride(v));
}

/// Matches `yield(out + in0 * in1)` (either operand order).
bool isMultiplyAccumulate(linalg::GenericOp op) {
  Block &body = op.getRegion().front();
  auto yield = cast<linalg::YieldOp>(body.getTerminator());
  auto add = yield.getOperand(0).getDefiningOp<arith::AddFOp>();
  if (!add)
    return false;
  Value out = body.getArgument(2);
  Value product = add.getLhs() == out ? add.getRhs() : add.getLhs();
  if (add.getLhs() != out && add.getRhs() != out)
    return false;
  auto mul = product.getDefiningOp<arith::MulFOp>();
  if (!mul || body.getOperations().size() != 3)
    return false;
  Value x = body.getArgument(0), w = body.getArgument(1);
  return (mul.getLhs() == x && mul.getRhs() == w) ||
         (mul.getLhs() == w && mul.getRhs() == x);
}

/// The maps of a contraction over `loops` loops, built from dim lists.
SmallVector<AffineMap> contractionMaps(MLIRContext *context, unsigned loops,
                                       ArrayRef<ArrayRef<unsigned>> operands) {
  SmallVector<AffineMap> maps;
  for (ArrayRef<unsigned> dims : operands) {
    SmallVector<AffineExpr> exprs;
    for (unsigned d : dims)
      exprs.push_back(getAffineDimExpr(d, context));
    maps.push_back(AffineMap::get(loops, 0, exprs, context));
  }
  return maps;
}

std::optional<Gemm> match(Operation *op) {
  if (auto matmul = dyn_cast<linalg::MatmulTransposeBOp>(op)) {
    if (!matmul.hasPureBufferSemantics())
      return std::nullopt;
    Gemm gemm{matmul.getInputs()[0], matmul.getInputs()[1],
              matmul.getOutputs()[0]};
    return gemm;
  }
  if (auto matmul = dyn_cast<linalg::MatmulOp>(op)) {
    if (!matmul.hasPureBufferSemantics())
      return std::nullopt;
    Gemm gemm{matmul.getInputs()[0], matmul.getInputs()[1],
              matmul.getOutputs()[0]};
    gemm.transB = false;
    return gemm;
  }
  auto generic = dyn_cast<linalg::GenericOp>(op);
  if (!generic || !generic.hasPureBufferSemantics() ||
      generic.getNumDpsInputs() != 2 || generic.getNumDpsInits() != 1 ||
      !isMultiplyAccumulate(generic))
    return std::nullopt;
  unsigned loops = generic.getNumLoops();
  if (loops < 3)
    return std::nullopt;
  MLIRContext *context = op->getContext();
  SmallVector<AffineMap> maps = generic.getIndexingMapsArray();
  SmallVector<unsigned> rows;
  for (unsigned i = 0; i + 2 < loops; ++i)
    rows.push_back(i);
  auto with = [&](ArrayRef<unsigned> prefix, unsigned last) {
    SmallVector<unsigned> dims(prefix);
    dims.push_back(last);
    return dims;
  };
  unsigned second = loops - 2, last = loops - 1;
  Gemm gemm{generic.getDpsInputs()[0], generic.getDpsInputs()[1],
            generic.getDpsInits()[0], loops - 2};
  // A linear's forward, loops (p..., o, k): x(p..., k), w(o, k), y(p..., o).
  if (maps ==
      contractionMaps(context, loops,
                      {with(rows, last), {second, last}, with(rows, second)})) {
    // As is.
  } else if (maps ==
             contractionMaps(
                 context, loops,
                 {with(rows, last), {last, second}, with(rows, second)})) {
    // Its input gradient, loops (p..., i, o): dy(p..., o), w(o, i),
    // dx(p..., i).
    gemm.transB = false;
  } else if (maps ==
             contractionMaps(
                 context, loops,
                 {with(rows, second), with(rows, last), {second, last}})) {
    // Its weight gradient over unmasked rows, loops (p..., o, i):
    // dy(p..., o), x(p..., i), dw(o, i); the rows p... are contracted.
    gemm.rowAxes = 1;
    gemm.contractAxes = loops - 2;
    gemm.transA = true;
    gemm.transB = false;
    if (!isMatrixView(gemm.b))
      return std::nullopt;
  } else {
    return std::nullopt;
  }
  if (!isMatrixView(gemm.a) || !isMatrixView(gemm.c))
    return std::nullopt;
  return gemm;
}

struct GemmToBlasPass
    : public mlir::nn::impl::NNGemmToBlasBase<GemmToBlasPass> {
  void runOnOperation() override {
    ModuleOp module = getOperation();
    SmallVector<std::pair<Operation *, Gemm>> gemms;
    module.walk([&](Operation *op) {
      if (std::optional<Gemm> gemm = match(op)) {
        Type element = cast<MemRefType>(gemm->c.getType()).getElementType();
        if ((element.isF32() || element.isF64()) &&
            hasUnitInnerStride(gemm->a) && hasUnitInnerStride(gemm->b) &&
            hasUnitInnerStride(gemm->c))
          gemms.emplace_back(op, *gemm);
      }
    });
    for (auto &[op, gemm] : gemms)
      rewrite(op, gemm);
  }

  using NNGemmToBlasBase::NNGemmToBlasBase;

  /// Whether GEMMs of `element` call one of the runtime's entry points
  /// (which take the op's origin first) rather than CBLAS.
  bool callsRuntime(Type element) const {
    return runtime == mlir::nn::GemmRuntime::cuda ||
           (runtime == mlir::nn::GemmRuntime::onednn && element.isF32());
  }

  func::FuncOp declare(ModuleOp module, Type element) {
    std::string prefix = "cblas_";
    if (callsRuntime(element))
      prefix = runtime == mlir::nn::GemmRuntime::cuda ? "nn_cuda_" : "nn_cpu_";
    std::string name = prefix + (element.isF32() ? "sgemm" : "dgemm");
    if (auto existing = module.lookupSymbol<func::FuncOp>(name))
      return existing;
    OpBuilder builder = OpBuilder::atBlockBegin(module.getBody());
    Type i32 = builder.getI32Type(), i64 = builder.getI64Type();
    SmallVector<Type> arguments{i32, i32, i32, i32, i32,     i32, element,
                                i64, i32, i64, i32, element, i64, i32};
    if (callsRuntime(element))
      arguments.insert(arguments.begin(),
                       LLVM::LLVMPointerType::get(builder.getContext()));
    auto type = builder.getFunctionType(arguments, {});
    auto func = builder.create<func::FuncOp>(module.getLoc(), name, type);
    func.setPrivate();
    return func;
  }

  void rewrite(Operation *op, const Gemm &gemm) {
    Operation *previous = op->getPrevNode();
    OpBuilder b(op);
    Location loc = op->getLoc();
    auto cType = cast<MemRefType>(gemm.c.getType());
    Type element = cType.getElementType();
    func::FuncOp cblas = declare(getOperation(), element);
    Type i32 = b.getI32Type(), i64 = b.getI64Type();
    int64_t bytes = element.getIntOrFloatBitWidth() / 8;

    auto toI32 = [&](Value index) -> Value {
      return b.create<arith::IndexCastOp>(loc, i32, index);
    };
    auto constI32 = [&](int64_t v) -> Value {
      return b.create<arith::ConstantIntOp>(loc, v, 32);
    };
    // Address of the first element and the row stride of a matrix view
    // whose leading `rowAxes` axes are rows.
    auto matrix = [&](Value v) {
      auto metadata = b.create<memref::ExtractStridedMetadataOp>(loc, v);
      Value base = b.create<memref::ExtractAlignedPointerAsIndexOp>(loc, v);
      Value offset =
          b.create<arith::MulIOp>(loc, metadata.getOffset(),
                                  b.create<arith::ConstantIndexOp>(loc, bytes));
      Value address = b.create<arith::AddIOp>(loc, base, offset);
      unsigned rank = cast<MemRefType>(v.getType()).getRank();
      Value leading = metadata.getStrides()[rank - 2];
      return std::make_pair(
          Value(b.create<arith::IndexCastOp>(loc, i64, address)), leading);
    };
    auto [aPtr, lda] = matrix(gemm.a);
    auto [bPtr, ldb] = matrix(gemm.b);
    auto [cPtr, ldc] = matrix(gemm.c);
    // Rows: the product of the leading axes of C.
    Value rows = b.create<memref::DimOp>(loc, gemm.c, 0);
    for (unsigned i = 1; i < gemm.rowAxes; ++i)
      rows = b.create<arith::MulIOp>(loc, rows,
                                     b.create<memref::DimOp>(loc, gemm.c, i));
    unsigned cRank = cType.getRank();
    Value columns = b.create<memref::DimOp>(loc, gemm.c, cRank - 1);
    // The contracted size: B's last axis (B transposed), else its first
    // (A^T B: its leading `contractAxes` axes, also A's).
    Value depth;
    if (gemm.transB) {
      depth = b.create<memref::DimOp>(
          loc, gemm.b, cast<MemRefType>(gemm.b.getType()).getRank() - 1);
    } else {
      depth = b.create<memref::DimOp>(loc, gemm.b, 0);
      for (unsigned i = 1; i < (gemm.transA ? gemm.contractAxes : 1); ++i)
        depth = b.create<arith::MulIOp>(
            loc, depth, b.create<memref::DimOp>(loc, gemm.b, i));
    }
    Value one = b.create<arith::ConstantOp>(loc, b.getFloatAttr(element, 1.0));
    // C zero-filled right before: skip the fill and let the GEMM overwrite
    // (beta = 0) instead of reading zeros back.
    Value beta = one;
    if (auto fill = dyn_cast_or_null<linalg::FillOp>(previous)) {
      auto zero = fill.getInputs()[0].getDefiningOp<arith::ConstantOp>();
      auto value = zero ? dyn_cast<FloatAttr>(zero.getValue()) : FloatAttr();
      if (value && value.getValue().isZero() &&
          fill.getOutputs()[0] == gemm.c) {
        fill.erase();
        beta = b.create<arith::ConstantOp>(loc, b.getFloatAttr(element, 0.0));
      }
    }
    SmallVector<Value> arguments{constI32(kRowMajor),
                                 constI32(gemm.transA ? kTrans : kNoTrans),
                                 constI32(gemm.transB ? kTrans : kNoTrans),
                                 toI32(rows),
                                 toI32(columns),
                                 toI32(depth),
                                 one,
                                 aPtr,
                                 toI32(lda),
                                 bPtr,
                                 toI32(ldb),
                                 beta,
                                 cPtr,
                                 toI32(ldc)};
    // The runtime reads the origin as a C string: the global holds its NUL
    // (createGlobalString stores exactly the bytes it is given).
    if (callsRuntime(element))
      arguments.insert(arguments.begin(),
                       LLVM::createGlobalString(
                           loc, b, "nn_gemm_origin_" + std::to_string(sites++),
                           mlir::nn::describeOrigin(loc) + std::string(1, '\0'),
                           LLVM::Linkage::Internal));
    b.create<func::CallOp>(loc, cblas, arguments);
    op->erase();
  }

  unsigned sites = 0;
};

} // namespace
