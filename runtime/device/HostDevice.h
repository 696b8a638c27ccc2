//===- HostDevice.h - the host backend (internal) ---------------*- C++ -*-===//
//
// Target "cpu": one device, the host, whose memory the entry point reads as
// it is. CPU artifacts run their loops themselves and call their GEMMs
// (nn_cpu_sgemm) directly; the device's GEMM provider is the oneDNN one
// behind that entry point (OneDnnGemm.h).
//
//===----------------------------------------------------------------------===//

#ifndef NN_RUNTIME_DEVICE_HOSTDEVICE_H
#define NN_RUNTIME_DEVICE_HOSTDEVICE_H

#include "runtime/device/Device.h"

#include <memory>

namespace nn::runtime {

/// The backend of target "cpu" (no options: one device).
std::shared_ptr<const Backend> createHostBackend();

} // namespace nn::runtime

#endif // NN_RUNTIME_DEVICE_HOSTDEVICE_H
