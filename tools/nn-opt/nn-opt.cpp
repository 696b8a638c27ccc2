//===- nn-opt.cpp - pass runner for the nn dialect ------------------------===//
//
// mlir-opt with the nn dialect and the upstream dialects and passes that the
// lowering pipelines use. The only translation unit that includes the
// InitAll* headers (they are slow to compile).
//
//===----------------------------------------------------------------------===//

#include "dialects/nn/NNOps.h"
#include "lowering/Pipelines.h"
#include "lowering/Registration.h"
#include "passes/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Bufferization/IR/Bufferization.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/LLVMIR/NVVMDialect.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Dialect/Transform/IR/TransformDialect.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/IR/DialectRegistry.h"
#include "mlir/InitAllExtensions.h"
#include "mlir/InitAllPasses.h"
#include "mlir/Tools/mlir-opt/MlirOptMain.h"

int main(int argc, char **argv) {
  mlir::DialectRegistry registry;
  registry.insert<
      mlir::nn::NNDialect, mlir::arith::ArithDialect,
      mlir::bufferization::BufferizationDialect, mlir::func::FuncDialect,
      mlir::gpu::GPUDialect, mlir::LLVM::LLVMDialect, mlir::NVVM::NVVMDialect,
      mlir::linalg::LinalgDialect, mlir::math::MathDialect,
      mlir::memref::MemRefDialect, mlir::scf::SCFDialect,
      mlir::tensor::TensorDialect, mlir::transform::TransformDialect,
      mlir::vector::VectorDialect>();
  // Interface implementations (bufferization, tiling, ...) that the
  // lowering pipelines need live in dialect extensions.
  mlir::registerAllExtensions(registry);
  mlir::nn::registerPipelineDialects(registry);
  mlir::registerAllPasses();
  mlir::nn::registerNNPasses();
  mlir::nn::registerPipelines();
  return mlir::asMainReturnCode(
      mlir::MlirOptMain(argc, argv, "nn optimizer driver\n", registry));
}
