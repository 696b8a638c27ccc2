//===- NNDialect.cpp - the nn dialect -------------------------------------===//

#include "dialects/nn/NNDialect.h"

#include "dialects/nn/NNOps.h"

using namespace mlir;
using namespace mlir::nn;

#include "dialects/nn/NNDialect.cpp.inc"
#include "dialects/nn/NNEnums.cpp.inc"

void NNDialect::initialize() {
  registerTypes();
  registerAttributes();
  addOperations<
#define GET_OP_LIST
#include "dialects/nn/NNOps.cpp.inc"
      >();
}
