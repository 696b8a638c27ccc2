//===- Target.cpp - the target registry -----------------------------------===//

#include "compiler/Target.h"

#include "absl/status/statusor.h"

#include <map>
#include <mutex>

using namespace nn;
using namespace nn::compiler;

Target::~Target() = default;

absl::Status Target::checkOptions(const CompileOptions &) const {
  return absl::OkStatus();
}

absl::Status Target::finishManifest(mlir::ModuleOp, const std::string &,
                                    const CompileOptions &,
                                    Manifest &manifest) const {
  manifest.target = name();
  return absl::OkStatus();
}

namespace {

struct Registry {
  std::mutex mutex;
  std::map<std::string, std::shared_ptr<const Target>> targets;

  Registry() {
    for (std::shared_ptr<const Target> target :
         {createCpuTarget(), createCudaTarget()})
      targets[target->name()] = std::move(target);
  }
};

Registry &registry() {
  static Registry *instance = new Registry;
  return *instance;
}

} // namespace

void nn::compiler::registerTarget(std::shared_ptr<const Target> target) {
  Registry &r = registry();
  std::lock_guard<std::mutex> lock(r.mutex);
  r.targets[target->name()] = std::move(target);
}

absl::StatusOr<std::shared_ptr<const Target>>
nn::compiler::lookupTarget(const std::string &name) {
  Registry &r = registry();
  std::lock_guard<std::mutex> lock(r.mutex);
  if (auto found = r.targets.find(name); found != r.targets.end())
    return found->second;
  std::string known;
  for (const auto &entry : r.targets)
    known += (known.empty() ? "" : ", ") + entry.first;
  return absl::InvalidArgumentError("unknown target '" + name +
                                    "' (registered: " + known + ")");
}

std::vector<std::string> nn::compiler::registeredTargets() {
  Registry &r = registry();
  std::lock_guard<std::mutex> lock(r.mutex);
  std::vector<std::string> names;
  for (const auto &entry : r.targets)
    names.push_back(entry.first);
  return names;
}
