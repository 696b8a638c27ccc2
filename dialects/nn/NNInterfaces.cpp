//===- NNInterfaces.cpp - op interfaces of the nn dialect -----------------===//

#include "dialects/nn/NNInterfaces.h"

#include "dialects/nn/NNInterfaces.cpp.inc"

#include <cmath>

using namespace mlir::nn;

ParameterInit ParameterInit::glorot(int64_t fanIn, int64_t fanOut) {
  return uniform(std::sqrt(6.0 / static_cast<double>(fanIn + fanOut)));
}
