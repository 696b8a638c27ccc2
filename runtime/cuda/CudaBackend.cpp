//===- CudaBackend.cpp - the backend of target "cuda" and nn/Cuda.h -------===//

#include "runtime/cuda/CudaBackend.h"

#include "runtime/cuda/CublasGemm.h"
#include "runtime/cuda/CudaDevice.h"

#include <cstdlib>

using namespace nn;
using namespace nn::cuda;

std::string CudaOptions::target() const { return "cuda"; }

namespace {

class CudaBackend : public runtime::BackendWith<CudaOptions> {
protected:
  CudaOptions withDefaults(CudaOptions options) const override {
    auto fromEnvironment = [](const char *name) -> const char * {
      const char *value = std::getenv(name);
      return value && *value ? value : nullptr;
    };
    if (options.ordinal < 0) {
      const char *chosen = fromEnvironment("NN_CUDA_DEVICE");
      options.ordinal = chosen ? std::atoi(chosen) : 0;
    }
    if (options.driver.empty()) {
      const char *driver = fromEnvironment("NN_CUDA_DRIVER");
      options.driver = driver ? driver : "libcuda.so.1";
    }
    // Empty stays empty: CublasGemm tries the versions it knows.
    if (options.cublasLibrary.empty())
      if (const char *blas = fromEnvironment("NN_CUBLAS_LIBRARY"))
        options.cublasLibrary = blas;
    return options;
  }

  std::string keyOf(const CudaOptions &filled) const override {
    return std::to_string(filled.ordinal) + "|" + filled.driver + "|" +
           filled.cublasLibrary;
  }

  std::shared_ptr<runtime::Device>
  create(const CudaOptions &filled) const override {
    auto device = std::make_shared<CudaDevice>(filled);
    if (!device->availability().ok())
      return device;
    absl::StatusOr<std::shared_ptr<CublasGemm>> blas =
        CublasGemm::create(*device, filled);
    if (blas.ok())
      device->setGemm(*std::move(blas));
    else
      device->markUnavailable(blas.status());
    return device;
  }
};

} // namespace

absl::StatusOr<std::shared_ptr<CudaDevice>>
cuda::cudaDevice(const CudaOptions &options) {
  absl::StatusOr<std::shared_ptr<runtime::Device>> device =
      runtime::getDevice("cuda", DeviceOptions().set(options));
  if (!device.ok())
    return device.status();
  if (absl::Status ready = (*device)->availability(); !ready.ok())
    return ready;
  // Another backend may have been registered for "cuda" (tests do).
  auto cuda = std::dynamic_pointer_cast<CudaDevice>(*std::move(device));
  if (!cuda)
    return absl::FailedPreconditionError(
        "the device of target 'cuda' is not the runtime's CUDA device");
  return cuda;
}

std::shared_ptr<const runtime::Backend> cuda::createCudaBackend() {
  return std::make_shared<CudaBackend>();
}

bool nn::cudaAvailable(std::string *why, const CudaOptions &options) {
  absl::Status status = cudaDevice(options).status();
  if (why)
    *why = std::string(status.message());
  return status.ok();
}

absl::Status nn::cudaDeviceInfo(CudaDeviceInfo &info,
                                const CudaOptions &options) {
  absl::StatusOr<std::shared_ptr<CudaDevice>> device = cudaDevice(options);
  if (device.ok())
    info = (*device)->getInfo();
  return device.status();
}

void nn::cudaSetProfiling(bool enabled, const CudaOptions &options) {
  if (absl::StatusOr<std::shared_ptr<CudaDevice>> device = cudaDevice(options);
      device.ok())
    (*device)->setProfiling(enabled);
}

std::vector<KernelTime> nn::cudaTakeProfile(const CudaOptions &options) {
  absl::StatusOr<std::shared_ptr<CudaDevice>> device = cudaDevice(options);
  return device.ok() ? (*device)->takeProfile() : std::vector<KernelTime>{};
}
