//===- OneDnnGemm.h - the host's GEMM provider (internal) -------*- C++ -*-===//
//
// f32 GEMMs on host memory with oneDNN's dnnl_sgemm, loaded on first use.
// CPU artifacts reach it through nn_cpu_sgemm (OneDnnGemm.cpp); the host
// device carries it as its GEMM provider.
//
//===----------------------------------------------------------------------===//

#ifndef NN_RUNTIME_DEVICE_ONEDNNGEMM_H
#define NN_RUNTIME_DEVICE_ONEDNNGEMM_H

#include "runtime/device/Gemm.h"

#include <memory>

namespace nn::runtime {

/// The one oneDNN provider of the process.
const std::shared_ptr<GemmProvider> &oneDnnGemm();

} // namespace nn::runtime

#endif // NN_RUNTIME_DEVICE_ONEDNNGEMM_H
