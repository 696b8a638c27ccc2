//===- NNInterfaces.cpp - op interfaces of the nn dialect -----------------===//

#include "dialects/nn/NNInterfaces.h"

#include "dialects/nn/NNInterfaces.cpp.inc"
