//===- python/src/CompileRun.cpp - compile, load and run ------------------===//
//
// nn.compile / nn.compile_file -> Artifact -> Executable.run on numpy
// arrays -> Result (outputs, losses, gradients), and the manifest that says
// what an executable takes and returns.
//
//===----------------------------------------------------------------------===//

#include "python/src/Arrays.h"
#include "python/src/Bindings.h"

#include "nn/Compiler.h"
#include "nn/Runtime.h"
#include "nn/Train.h"

#include <pybind11/functional.h>
#include <pybind11/stl.h>

#include <cmath>
#include <memory>

namespace nn::python {

namespace {

/// A manifest tensor's axes as Python values: a dim's name, or a size.
py::list axesOf(const TensorInfo &tensor) {
  py::list axes;
  for (const Axis &axis : tensor.axes) {
    if (axis.isNamed())
      axes.append(axis.dim);
    else
      axes.append(axis.size);
  }
  return axes;
}

const char *kindName(DimInfo::Kind kind) {
  switch (kind) {
  case DimInfo::Kind::batch:
    return "batch";
  case DimInfo::Kind::seq:
    return "seq";
  case DimInfo::Kind::packed:
    return "packed";
  }
  return "?";
}

/// What Executable.run returns: arrays that own the runtime's buffers.
struct Result {
  py::dict outputs;
  std::vector<Loss> losses;
  py::dict gradients, inputGradients, lengths;
};

Result toResult(const Manifest &manifest, RunResult run) {
  Result result;
  static const std::string grad = "grad:", gradInput = "grad_input:",
                           lengths = lengthsOutputName("");
  for (auto &[name, tensor] : run.outputs) {
    py::object array = toArray(std::move(tensor));
    result.outputs[py::str(name)] = array;
    if (name.rfind(grad, 0) == 0)
      result.gradients[py::str(name.substr(grad.size()))] = array;
    else if (name.rfind(gradInput, 0) == 0)
      result.inputGradients[py::str(name.substr(gradInput.size()))] = array;
    else if (name.rfind(lengths, 0) == 0)
      result.lengths[py::str(name.substr(lengths.size()))] = array;
  }
  result.losses = toLosses(manifest, run.losses);
  return result;
}

/// `losses=`: names, or {name: scale}, each scale a finite number >= 0
/// (nn-train --losses).
std::vector<TrainedLoss> trainedLosses(const py::object &given) {
  std::vector<TrainedLoss> losses;
  auto add = [&](const py::handle &key, double scale) {
    if (!py::isinstance<py::str>(key))
      throw py::type_error("losses: names must be strings, got " +
                           py::repr(key).cast<std::string>());
    TrainedLoss loss{key.cast<std::string>(), scale};
    for (const TrainedLoss &other : losses)
      if (other.name == loss.name)
        throw py::value_error("losses: '" + loss.name + "' is named twice");
    losses.push_back(loss);
  };
  if (py::isinstance<py::dict>(given)) {
    for (auto [key, value] : py::reinterpret_borrow<py::dict>(given)) {
      double scale;
      if (!finiteNumber(value, scale) || scale < 0)
        throw py::value_error("losses: the scale of " +
                              py::repr(key).cast<std::string>() +
                              " must be a finite number >= 0, got " +
                              py::repr(value).cast<std::string>());
      add(key, scale);
    }
  } else if (py::isinstance<py::str>(given)) {
    throw py::type_error("losses: expected a list of names or a dict "
                         "{name: scale}, got a string");
  } else {
    for (py::handle name : given)
      add(name, std::numeric_limits<double>::quiet_NaN());
  }
  return losses;
}

} // namespace

std::optional<DType> dtypeIn(const std::vector<TensorInfo> &tensors,
                             const std::string &name) {
  for (const TensorInfo &tensor : tensors)
    if (tensor.name == name)
      return tensor.dtype;
  return std::nullopt;
}

std::vector<Loss> toLosses(const Manifest &manifest,
                           const std::vector<LossValue> &losses) {
  std::vector<Loss> values;
  for (const LossValue &loss : losses)
    values.push_back({loss, lossValue(manifest, loss)});
  return values;
}

CompileOptions takeCompileOptions(py::dict &kwargs) {
  CompileOptions options;
  takeKeyword(kwargs, "entry", options.entry, "a graph name");
  takeKeyword(kwargs, "target", options.target, "a target name");
  takeKeyword(kwargs, "grads", options.grads, "True or False");
  takeKeyword(kwargs, "training", options.training, "True or False");
  takeKeyword(kwargs, "train_step", options.trainStep, "True or False");
  takeKeyword(kwargs, "input_gradients", options.inputGradients,
              "a list of input names");
  takeKeyword(kwargs, "search_beam", options.searchBeam, "an integer");
  takeKeyword(kwargs, "artifact_path", options.artifactPath, "a path");
  takeKeyword(kwargs, "gpu_code_dir", options.gpuCodeDir, "a path");
  if (kwargs.contains("losses"))
    options.trainedLosses = trainedLosses(kwargs.attr("pop")("losses"));
  KeywordBinder binder(kwargs);
  options.optimize.bindOptions(binder);
  options.optimizer.bindOptions(binder);
  options.codegen.bindOptions(binder);
  options.cpu.bindOptions(binder);
  options.gpu.bindOptions(binder);
  return options;
}

void bindCompileRun(py::module_ &module) {
  py::class_<TensorInfo>(module, "TensorSpec",
                         "A tensor a graph takes or returns: its name, "
                         "dtype and axes (dim names and static sizes).")
      .def_readonly("name", &TensorInfo::name)
      .def_property_readonly(
          "dtype", [](const TensorInfo &t) { return toString(t.dtype); })
      .def_property_readonly("axes", &axesOf)
      .def_readonly("classes", &TensorInfo::classes)
      .def_readonly("init", &TensorInfo::init)
      .def("__repr__", [](const TensorInfo &t) {
        return "TensorSpec(" + t.name + ": " + toString(t.dtype) + " " +
               py::str(axesOf(t)).cast<std::string>() + ")";
      });

  py::class_<DimInfo>(module, "DimSpec",
                      "A dim of a graph: batch, seq (root, derived or "
                      "computed) or packed.")
      .def_readonly("name", &DimInfo::name)
      .def_property_readonly("kind",
                             [](const DimInfo &d) { return kindName(d.kind); })
      .def_readonly("batch", &DimInfo::batch)
      .def_readonly("source", &DimInfo::source)
      .def_readonly("factor", &DimInfo::factor)
      .def_readonly("offset", &DimInfo::offset)
      .def_readonly("sequence", &DimInfo::sequence)
      .def_readonly("inner", &DimInfo::inner)
      .def_readonly("computed", &DimInfo::computed)
      .def("__repr__", [](const DimInfo &d) {
        return "DimSpec(" + d.name + ": " + kindName(d.kind) + ")";
      });

  py::class_<LossInfo>(module, "LossSpec",
                       "A loss a graph marks (nn.mark_loss).")
      .def_readonly("name", &LossInfo::name)
      .def_readonly("normalization", &LossInfo::normalization)
      .def_readonly("scale", &LossInfo::scale)
      .def_readonly("use_normalized_loss", &LossInfo::useNormalizedLoss)
      .def_readonly("as_error", &LossInfo::asError)
      .def_readonly("packed", &LossInfo::packed);

  py::class_<Manifest, std::shared_ptr<Manifest>>(
      module, "Manifest",
      "What a compiled graph takes and returns (docs/runtime.md).")
      .def_readonly("graph", &Manifest::graph)
      .def_readonly("target", &Manifest::target)
      .def_readonly("dims", &Manifest::dims)
      .def_readonly("root_dims", &Manifest::rootDims)
      .def_readonly("inputs", &Manifest::inputs)
      .def_readonly("parameters", &Manifest::parameters)
      .def_readonly("outputs", &Manifest::outputs)
      .def_readonly("losses", &Manifest::losses)
      .def_property_readonly("text", &Manifest::serialize);

  py::class_<Loss>(module, "Loss", "A loss of one run.")
      .def_property_readonly("name", [](const Loss &l) { return l.loss.name; })
      .def_readonly("value", &Loss::value,
                    "The value training uses: normalized or summed as "
                    "marked.")
      .def_property_readonly("sum", [](const Loss &l) { return l.loss.sum; })
      .def_property_readonly("normalization",
                             [](const Loss &l) { return l.loss.normalization; })
      .def_property_readonly("normalized",
                             [](const Loss &l) { return l.loss.normalized; })
      .def_property_readonly("scale",
                             [](const Loss &l) { return l.loss.scale; })
      .def_property_readonly("as_error",
                             [](const Loss &l) { return l.loss.asError; })
      .def_property_readonly("packed",
                             [](const Loss &l) { return l.loss.packed; })
      .def_property_readonly(
          "frames_computed",
          [](const Loss &l) { return l.loss.framesComputed; })
      .def_property_readonly("frames_padded",
                             [](const Loss &l) { return l.loss.framesPadded; })
      .def("__repr__", [](const Loss &l) {
        return "Loss(" + l.loss.name + " = " + std::to_string(l.value) + ")";
      });

  py::class_<Result>(module, "Result",
                     "What a run returned: `outputs` by manifest name "
                     "(result0, ..., grad:<parameter>, lengths:<dim>), the "
                     "same gradients by parameter in `gradients`, computed "
                     "dims' lengths in `lengths`, and the `losses`.")
      .def_readonly("outputs", &Result::outputs)
      .def_readonly("gradients", &Result::gradients)
      .def_readonly("input_gradients", &Result::inputGradients)
      .def_readonly("lengths", &Result::lengths)
      .def_readonly("losses", &Result::losses)
      .def(
          "loss",
          [](const Result &r, const std::string &name) {
            for (const Loss &loss : r.losses)
              if (loss.loss.name == name)
                return loss;
            throw py::key_error("no loss named '" + name + "' (the run has " +
                                std::to_string(r.losses.size()) + ")");
          },
          py::arg("name"));

  py::class_<Executable, std::shared_ptr<Executable>>(
      module, "Executable",
      "A loaded artifact; the GIL is released while it runs. Inputs are "
      "read in place: do not change them from another thread during a "
      "run.")
      .def_property_readonly(
          "manifest",
          [](const Executable &e) -> const Manifest & { return e.manifest(); },
          py::return_value_policy::reference_internal)
      .def_property_readonly("device", &Executable::deviceName)
      .def_property_readonly("runs_on_host", &Executable::runsOnHost)
      .def(
          "run",
          [](const Executable &executable, py::object inputs,
             py::object lengths, py::object parameters) {
            const Manifest &manifest = executable.manifest();
            RunInputs run;
            run.inputs = toTensors(inputs, "input", [&](const std::string &n) {
              return dtypeIn(manifest.inputs, n);
            });
            run.parameters =
                toTensors(parameters, "parameter", [&](const std::string &n) {
                  return dtypeIn(manifest.parameters, n);
                });
            run.lengths = toLengths(lengths);
            RunResult result;
            absl::Status status;
            {
              py::gil_scoped_release release;
              status = executable.run(run, result);
            }
            check(status);
            return toResult(manifest, std::move(result));
          },
          py::arg("inputs") = py::none(), py::arg("lengths") = py::none(),
          py::arg("parameters") = py::none(),
          "Runs the graph on `inputs` (padded arrays by input name), "
          "`lengths` ({dim: lengths} for each root sequence dim) and "
          "`parameters` (arrays by name). Inputs are validated against the "
          "manifest first; nothing runs when one is wrong.");

  py::class_<Artifact, std::shared_ptr<Artifact>>(
      module, "Artifact",
      "A compiled artifact: a shared object and its manifest. A temporary "
      "one is removed when the Artifact goes away; executables loaded from "
      "it stay valid.")
      .def_property_readonly("path", &Artifact::path)
      .def_property_readonly(
          "manifest",
          [](const Artifact &a) -> const Manifest & { return a.manifest(); },
          py::return_value_policy::reference_internal);

  module.def(
      "load",
      [](const std::string &path) {
        auto executable = std::make_shared<Executable>();
        absl::Status status;
        {
          py::gil_scoped_release release;
          status = Executable::load(path, *executable);
        }
        check(status);
        return executable;
      },
      py::arg("path"), "Loads the artifact at `path`.");

  module.def(
      "compile",
      [](const std::string &source, const std::string &name,
         py::kwargs kwargs) {
        py::dict options = kwargs;
        CompileOptions compile = takeCompileOptions(options);
        rejectUnknownKeywords(options, "compile");
        absl::StatusOr<Artifact> artifact = [&] {
          py::gil_scoped_release release;
          return compileSource(source, name, compile);
        }();
        return std::make_shared<Artifact>(check(std::move(artifact)));
      },
      py::arg("source"), py::kw_only(), py::arg("name") = "<python>",
      "Compiles MLIR text of the nn dialect (`name` names it in "
      "diagnostics). Keywords: entry, target, grads, input_gradients, "
      "training, train_step, losses, search_beam, artifact_path, "
      "gpu_code_dir and the options of nn-opt's pipeline by their flag "
      "names with '_' (pack=False, optimizer='sgd', ...).");

  module.def(
      "compile_file",
      [](const std::string &path, py::kwargs kwargs) {
        py::dict options = kwargs;
        CompileOptions compile = takeCompileOptions(options);
        rejectUnknownKeywords(options, "compile_file");
        absl::StatusOr<Artifact> artifact = [&] {
          py::gil_scoped_release release;
          return compileFile(path, compile);
        }();
        return std::make_shared<Artifact>(check(std::move(artifact)));
      },
      py::arg("path"),
      "Compiles the MLIR file at `path`; keywords as "
      "compile's.");

  module.def("registered_targets", &registeredTargets,
             "The targets compile takes (\"cpu\", \"cuda\").");
  module.def("set_num_threads", &setNumThreads, py::arg("threads"),
             "Threads for generated loops and GEMMs together (0: each "
             "library's default).");
  module.def("num_threads", &numThreads);
}

} // namespace nn::python
