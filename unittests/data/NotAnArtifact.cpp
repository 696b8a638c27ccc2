//===- NotAnArtifact.cpp - a complete shared object without nn exports ----===//
//
// Loaded by ArtifactTest: Executable::load must say it is not an nn
// artifact. (A copy of libNNRuntime itself would load the runtime twice,
// which the sanitizer build reports as duplicate globals.)
//
//===----------------------------------------------------------------------===//

extern "C" int nnNotAnArtifact() { return 42; }
