//===- StageFileFuzzer.cpp - libFuzzer target: stage files ----------------===//
//
// A stage file as nn-train --stages reads it, before anything compiles:
// the strict JSON pass, llvm::json, every key's type and range, the names
// stages read and write, and the directories they write. The graphs (and
// the vocabulary) the seeds name exist (empty) in a scratch directory, so
// that inputs get past the file checks. A crash, a sanitizer report, an error
// without a message, or an accepted file whose reads name nothing is a finding.
//
//===----------------------------------------------------------------------===//

#include "training/StageFile.h"

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <unistd.h>

namespace {

std::string scratchDir;

} // namespace

extern "C" int LLVMFuzzerInitialize(int *, char ***) {
  char pattern[] = "/tmp/nn-fuzz-stages-XXXXXX";
  if (!mkdtemp(pattern))
    std::abort();
  scratchDir = pattern;
  for (const char *graph : {"ctc.mlir", "align.mlir", "ce.mlir", "rna.mlir",
                            "decode.mlir", "tokens.txt"})
    if (FILE *file = std::fopen((scratchDir + "/" + graph).c_str(), "w"))
      std::fclose(file);
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  std::string text(reinterpret_cast<const char *>(data), size);
  absl::StatusOr<nn::training::StageFile> parsed =
      nn::training::StageFile::parse(text, scratchDir + "/stages.json",
                                     scratchDir + "/work");
  if (!parsed.ok()) {
    if (parsed.status().message().empty())
      __builtin_trap();
    // With NN_FUZZ_VERBOSE set, why (to check the seeds, and to read a
    // reproduced input).
    if (std::getenv("NN_FUZZ_VERBOSE"))
      std::fprintf(stderr, "refused: %s\n",
                   std::string(parsed.status().message()).c_str());
    return 0;
  }
  if (std::getenv("NN_FUZZ_VERBOSE"))
    std::fprintf(stderr, "accepted %zu stages\n", parsed->stages.size());
  // What an accepted file promises the stages that run it.
  auto known = [&](const std::string &name) {
    return name.empty() || parsed->entities.count(name) > 0;
  };
  for (const nn::training::StageSpec &stage : parsed->stages) {
    if (stage.name.empty() || stage.dir.empty())
      __builtin_trap();
    for (const std::string *name :
         {&stage.readTrain, &stage.readDev, &stage.readInit,
          &stage.readParameters, &stage.writeParameters})
      if (!known(*name))
        __builtin_trap();
    if (stage.readData.size() != stage.writeData.size())
      __builtin_trap();
    for (const std::string &name : stage.writeData)
      if (!known(name) || parsed->entities.at(name).paths.empty())
        __builtin_trap();
  }
  return 0;
}
