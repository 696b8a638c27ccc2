//===- python/src/Module.cpp - the extension module nn._nn ----------------===//
//
// The binding of nn's public C++ API that the package `nn` (python/nn/)
// wraps. Compiled code runs with the GIL released: other Python threads
// go on while a graph, a train step or a compile runs.
//
//===----------------------------------------------------------------------===//

#include "python/src/Arrays.h"
#include "python/src/Bindings.h"

PYBIND11_MODULE(_nn, module) {
  module.doc() = "nn's compiler, runtime and training library (the C++ "
                 "API of include/nn/), bound for the package `nn`.";
  nn::python::defineError(module);
  nn::python::defineArrays(module);
  nn::python::bindCompileRun(module);
  nn::python::bindTraining(module);
}
