//===- Gemm.cpp - what every GEMM provider shares -------------------------===//

#include "runtime/device/Gemm.h"

using namespace nn::runtime;

GemmProvider::~GemmProvider() = default;

std::string nn::runtime::describeGemm(const GemmCall &call) {
  return std::string("the GEMM of ") +
         (call.origin ? call.origin : "an nn op") + " (" +
         std::to_string(call.m) + " x " + std::to_string(call.n) + " x " +
         std::to_string(call.k) + ")";
}
