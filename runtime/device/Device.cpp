//===- Device.cpp - device options and the registry of backends -----------===//

#include "runtime/device/Device.h"

#include "runtime/cuda/CudaBackend.h"
#include "runtime/device/HostDevice.h"

#include "absl/container/flat_hash_map.h"

#include <algorithm>
#include <mutex>
#include <utility>

using namespace nn;
using namespace nn::runtime;

BackendOptions::~BackendOptions() = default;
DeviceSession::~DeviceSession() = default;
Device::~Device() = default;
Backend::~Backend() = default;

//===----------------------------------------------------------------------===//
// Options
//===----------------------------------------------------------------------===//

DeviceOptions &
DeviceOptions::set(std::shared_ptr<const BackendOptions> options) {
  if (options)
    byTarget[options->target()] = std::move(options);
  return *this;
}

const BackendOptions *DeviceOptions::find(const std::string &target) const {
  auto found = byTarget.find(target);
  return found == byTarget.end() ? nullptr : found->second.get();
}

//===----------------------------------------------------------------------===//
// The registry
//===----------------------------------------------------------------------===//

namespace {

struct Registry {
  std::mutex mutex;
  absl::flat_hash_map<std::string, std::shared_ptr<const Backend>> backends;
  /// Devices by target and their backend's key; never destroyed (artifacts
  /// may hold their memory until exit).
  absl::flat_hash_map<std::pair<std::string, std::string>,
                      std::shared_ptr<Device>>
      devices;

  Registry() {
    for (std::shared_ptr<const Backend> backend :
         {createHostBackend(), cuda::createCudaBackend()})
      backends[backend->target()] = std::move(backend);
  }

  std::vector<std::string> targets() const {
    std::vector<std::string> names;
    for (const auto &[target, backend] : backends)
      names.push_back(target);
    std::sort(names.begin(), names.end());
    return names;
  }
};

Registry &registry() {
  static Registry *instance = new Registry;
  return *instance;
}

} // namespace

void runtime::registerBackend(std::shared_ptr<const Backend> backend) {
  Registry &r = registry();
  std::lock_guard<std::mutex> lock(r.mutex);
  std::string target = backend->target();
  r.backends[target] = std::move(backend);
}

std::vector<std::string> runtime::registeredTargets() {
  Registry &r = registry();
  std::lock_guard<std::mutex> lock(r.mutex);
  return r.targets();
}

absl::StatusOr<std::shared_ptr<Device>>
runtime::getDevice(const std::string &target, const DeviceOptions &options) {
  Registry &r = registry();
  std::lock_guard<std::mutex> lock(r.mutex);
  auto found = r.backends.find(target);
  if (found == r.backends.end()) {
    std::string known;
    for (const std::string &name : r.targets())
      known += (known.empty() ? "" : ", ") + name;
    return absl::InvalidArgumentError("no device runs target '" + target +
                                      "' (known: " + known + ")");
  }
  const Backend &backend = *found->second;
  absl::StatusOr<std::shared_ptr<const BackendOptions>> filled =
      backend.fillDefaults(options.find(target));
  if (!filled.ok())
    return filled.status();
  std::pair<std::string, std::string> key{target, backend.deviceKey(**filled)};
  if (auto cached = r.devices.find(key); cached != r.devices.end())
    return cached->second;
  std::shared_ptr<Device> device = backend.createDevice(**filled);
  r.devices[key] = device;
  return device;
}
