//===- python/src/Bindings.h - the parts of nn._nn -------------*- C++ -*-===//
//
// nn._nn is defined in parts, one per file: compiling and running
// (CompileRun.cpp), training, checkpoints and datasets (Training.cpp).
//
//===----------------------------------------------------------------------===//

#ifndef NN_PYTHON_BINDINGS_H
#define NN_PYTHON_BINDINGS_H

#include "nn/Compiler.h"
#include "nn/Runtime.h"

#include <pybind11/pybind11.h>

#include <optional>
#include <string>
#include <vector>

namespace nn::python {

namespace py = pybind11;

/// Defines compile, load, Executable, Result and the manifest's types.
void bindCompileRun(py::module_ &module);
/// Defines init_parameters, TrainState, train_step, checkpoints, Dataset
/// and Trainer.
void bindTraining(py::module_ &module);

/// The compile options spelled by `kwargs`, which loses the keywords it
/// reads: entry, target, grads, input_gradients, training, train_step,
/// losses (names, or {name: scale}), search_beam, artifact_path,
/// gpu_code_dir, and every option of nn/Options.h by its flag name with
/// '_' for '-' (pack, pack_frontier, optimizer, weight_decay, threads,
/// gemm_library, gpu_chip, ...).
CompileOptions takeCompileOptions(py::dict &kwargs);

/// A loss of a run (nn.Loss), with the value training uses: normalized or
/// summed as the manifest marks it.
struct Loss {
  LossValue loss;
  double value = 0;
};
std::vector<Loss> toLosses(const Manifest &manifest,
                           const std::vector<LossValue> &losses);

/// The dtype of the tensor named `name` among `tensors` (a manifest's
/// inputs or parameters), if there is one: what lists given for it become.
std::optional<DType> dtypeIn(const std::vector<TensorInfo> &tensors,
                             const std::string &name);

} // namespace nn::python

#endif // NN_PYTHON_BINDINGS_H
