//===- TargetArtifact.cpp - the smallest artifact, for a chosen target ----===//
//
// A graph with no arguments and no results whose manifest names the target
// NN_ARTIFACT_TARGET (a compile definition). DeviceRegistryTest loads one
// for a target a test backend runs and one for a target nothing runs; the
// compiler would refuse to write either.
//
//===----------------------------------------------------------------------===//

#include "nn/Manifest.h"

#include <cstdint>

// NOLINTBEGIN(readability-identifier-naming): the names the runtime loads.
// Version 4: kManifestVersion (a new version fails the tests loudly).
// `extern` gives the constant external linkage.
extern "C" const char nn_manifest[] =
    "nn-artifact 5\ngraph g\ntarget " NN_ARTIFACT_TARGET "\nend\n";
extern "C" uint64_t nn_manifest_hash() {
  return nn::Manifest::hash(nn_manifest);
}
extern "C" int64_t nn_entry_arity() { return 0; }
extern "C" void nn_entry(void **) {}
// NOLINTEND(readability-identifier-naming)
