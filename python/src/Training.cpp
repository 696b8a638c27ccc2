//===- python/src/Training.cpp - train steps, checkpoints, datasets -------===//
//
// The training API of nn/Train.h and nn/Dataset.h (fresh parameters, one
// train step at a time with its state, checkpoints, datasets and their
// batches) and the training loop behind nn-train (training/Trainer.h),
// taking nn-train's settings as keywords.
//
//===----------------------------------------------------------------------===//

#include "python/src/Arrays.h"
#include "python/src/Bindings.h"

#include "nn/Dataset.h"
#include "nn/LearningRate.h"
#include "nn/Train.h"
#include "training/Ranks.h"
#include "training/Trainer.h"

#include <csignal>
#include <cstdio>
#include <unistd.h>

namespace nn::python {

namespace {

/// A dataset and the manifest it was checked against (batches give the
/// inputs of that graph).
struct PyDataset {
  std::shared_ptr<Dataset> dataset;

  /// An IndexError unless `u` is one of the dataset's utterances.
  void checkUtterance(int64_t u) const {
    if (u < 0 || u >= dataset->size())
      throw py::index_error("utterance " + std::to_string(u) + " of " +
                            std::to_string(dataset->size()));
  }
};

std::vector<std::string> pathList(const py::object &given, const char *what) {
  py::object fspath = py::module_::import("os").attr("fspath");
  try {
    if (py::isinstance<py::str>(given) || py::hasattr(given, "__fspath__"))
      return {fspath(given).cast<std::string>()};
    std::vector<std::string> paths;
    for (py::handle path : given)
      paths.push_back(fspath(path).cast<std::string>());
    return paths;
  } catch (const py::error_already_set &) {
    throw py::type_error(std::string(what) +
                         ": expected a path or a list of paths, got " +
                         py::repr(given).cast<std::string>());
  }
}

/// `batch` as Python values: ({input: array}, {dim: lengths array}).
py::tuple toPython(RunInputs batch) {
  py::dict inputs, lengths;
  for (auto &[name, tensor] : batch.inputs)
    inputs[py::str(name)] = toArray(std::move(tensor));
  for (auto &[dim, values] : batch.lengths) {
    Tensor tensor(DType::i32, {(int64_t)values.size()});
    std::copy(values.begin(), values.end(), tensor.data<int32_t>());
    lengths[py::str(dim)] = toArray(std::move(tensor));
  }
  return py::make_tuple(inputs, lengths);
}

/// nn-train's settings from `kwargs` (its flags' names with '_' for '-',
/// `bucket`/`shuffle` for --no-bucket/--no-shuffle), which loses them.
training::TrainOptions takeTrainOptions(const std::string &model,
                                        py::dict &kwargs) {
  training::TrainOptions options;
  options.modelPath = model;
  // The trainer compiles twice (a train step and an evaluation graph) and
  // sets these itself.
  for (const char *own :
       {"grads", "training", "train_step", "input_gradients", "artifact_path"})
    if (kwargs.contains(own))
      throw py::type_error(std::string("Trainer() sets '") + own +
                           "' itself (emit_artifacts keeps both artifacts)");
  options.compile = takeCompileOptions(kwargs);
  takeKeyword(kwargs, "emit_artifacts", options.emitArtifacts, "a directory");
  training::DataOptions &data = options.data;
  if (kwargs.contains("data"))
    data.train = pathList(kwargs.attr("pop")("data"), "data");
  if (kwargs.contains("dev"))
    data.dev = pathList(kwargs.attr("pop")("dev"), "dev");
  takeKeyword(kwargs, "synthetic", data.synthetic, "\"segments\"");
  takeKeyword(kwargs, "noise", data.noise, "a number");
  takeKeyword(kwargs, "classes", data.classes, "an integer >= 0");
  takeKeyword(kwargs, "dev_batches", data.devBatches, "an integer >= 0");
  takeKeyword(kwargs, "epoch_steps", data.epochSteps, "an integer >= 0");
  takeKeyword(kwargs, "batch_size", data.batchSize, "an integer >= 0");
  takeKeyword(kwargs, "max_frames", data.maxFrames, "an integer >= 0");
  takeKeyword(kwargs, "bucket", data.bucket, "True or False");
  takeKeyword(kwargs, "shuffle", data.shuffle, "True or False");
  std::string chunking;
  takeKeyword(kwargs, "chunking", chunking, "SIZE:STEP[,...]");
  absl::StatusOr<ChunkingOptions> chunks = parseChunking(chunking);
  if (!chunks.ok())
    raise(withContext(chunks.status(), "chunking: "));
  data.chunking = *chunks;
  takeKeyword(kwargs, "steps", options.steps, "an integer");
  takeKeyword(kwargs, "epochs", options.epochs, "an integer");
  takeKeyword(kwargs, "seed", options.seed, "an integer >= 0");
  if (kwargs.contains("lr")) {
    // A number is a constant rate; a string a schedule as --lr spells it.
    py::object given = kwargs.attr("pop")("lr");
    std::string schedule;
    if (!py::isinstance<py::bool_>(given) &&
        (py::isinstance<py::int_>(given) || py::isinstance<py::float_>(given)))
      schedule =
          "constant:peak=" + py::repr(py::float_(given)).cast<std::string>();
    else if (py::isinstance<py::str>(given))
      schedule = given.cast<std::string>();
    else
      throw py::type_error("lr: expected a rate or a schedule "
                           "(\"cosine:peak=1e-3,warmup=100,total=2000\"), "
                           "got " +
                           py::repr(given).cast<std::string>());
    absl::StatusOr<LearningRateSchedule> parsed =
        LearningRateSchedule::parse(schedule);
    if (!parsed.ok())
      raise(withContext(parsed.status(), "lr: "));
    options.schedule = *parsed;
  }
  takeKeyword(kwargs, "on_nonfinite", options.onNonFinite,
              "\"stop\" or \"skip\"");
  takeKeyword(kwargs, "save", options.saveDir, "a directory");
  takeKeyword(kwargs, "save_every", options.saveEvery, "an integer >= 0");
  takeKeyword(kwargs, "keep", options.keep, "an integer >= 1");
  takeKeyword(kwargs, "resume", options.resume, "a checkpoint or directory");
  takeKeyword(kwargs, "init_from", options.initFrom, "an .npz file");
  if (kwargs.contains("initial_parameters"))
    options.initialParameters =
        toTensors(kwargs.attr("pop")("initial_parameters"), "parameter",
                  anyDtype, /*share=*/false);
  takeKeyword(kwargs, "tensorboard", options.tensorboardDir, "a directory");
  training::OutputOptions &output = options.output;
  takeKeyword(kwargs, "json", output.json, "True or False");
  takeKeyword(kwargs, "verbose", output.verbose, "True or False");
  takeKeyword(kwargs, "log_every", output.logEvery, "an integer >= 1");
  output.bar = !output.json && !output.verbose && isatty(STDERR_FILENO);
  takeKeyword(kwargs, "bar", output.bar, "True or False");
  return options;
}

/// The ranks of the process when a launcher started it as one of several
/// (mpirun python3 train.py): joined by the first Trainer that needs them
/// (or nn.ranks()), kept until the interpreter exits, as nn-train keeps
/// them for its run.
training::RunRanks &processRanks() {
  static training::RunRanks *ranks = new training::RunRanks;
  return *ranks;
}

/// Raises `status` as nn.Error, except on one rank of several: there it
/// ends every rank, as nn-train does (the others would wait for this one
/// in their next collective), after printing which rank failed and why.
void checkOnEveryRank(const absl::Status &status) {
  Communicator *host = processRanks().host.get();
  if (!status.ok() && host && host->size() > 1) {
    std::string rank = host->describe() + ": ";
    std::string message(status.message());
    if (message.rfind(rank, 0) == 0)
      message.erase(0, rank.size());
    std::string line = "nn: " + rank + message + "\n";
    std::fwrite(line.data(), 1, line.size(), stderr);
    std::fflush(stderr);
    host->abort(1);
  }
  check(status);
}

/// Joins what the process's ranks lack, for a Trainer of `target`
/// (NCCL for GPUs), with `timeout` (collective_timeout; when not given,
/// the one set before, or 600 s) from now on.
void joinProcessRanks(std::optional<double> timeout,
                      const std::string &target) {
  training::RunRanks &ranks = processRanks();
  bool had = ranks.host != nullptr;
  CommunicatorOptions options;
  if (timeout)
    options.timeoutSeconds = *timeout;
  else if (had)
    options.timeoutSeconds = ranks.host->timeout();
  absl::Status joined = training::joinRanks(ranks, options, target);
  if (!had && ranks.host)
    // Finalize MPI (NCCL first) while the interpreter still runs, not at
    // static destruction.
    py::module_::import("atexit").attr("register")(
        py::cpp_function([] { processRanks() = training::RunRanks(); }));
  checkOnEveryRank(joined);
}

} // namespace

void bindTraining(py::module_ &module) {
  module.def(
      "ranks",
      [](std::optional<double> timeout) {
        joinProcessRanks(timeout, "cpu");
        Communicator *host = processRanks().host.get();
        return py::make_tuple(host ? host->rank() : 0, host ? host->size() : 1);
      },
      py::arg("collective_timeout") = py::none(),
      "(rank, number of ranks) of this process: (0, 1) alone, the MPI "
      "ranks when mpirun started it (a Trainer then trains data-parallel, "
      "rank 0 reporting and saving). Every rank calls it at the same "
      "point; collective_timeout (seconds, default 600 or as set before) "
      "applies from then on.");
  module.def(
      "init_parameters",
      [](const Manifest &manifest, uint64_t seed) {
        std::map<std::string, Tensor> parameters;
        check(initializeParameters(manifest, seed, parameters));
        py::dict arrays;
        for (auto &[name, tensor] : parameters)
          arrays[py::str(name)] = toArray(std::move(tensor));
        return arrays;
      },
      py::arg("manifest"), py::arg("seed") = 0,
      "Fresh values of every parameter of `manifest`, as nn-train draws "
      "them for `seed`.");

  py::class_<TrainState, std::shared_ptr<TrainState>>(
      module, "TrainState",
      "What training carries from step to step: the parameters (model and "
      "optimizer state) by name, the updates applied (`step`) and the "
      "batches drawn (`batches`).")
      .def(py::init([](py::object parameters) {
             auto state = std::make_shared<TrainState>();
             state->parameters =
                 toTensors(parameters, "parameter", anyDtype, /*share=*/false);
             return state;
           }),
           py::arg("parameters") = py::none())
      .def_property(
          "parameters",
          [](TrainState &state) {
            check(syncToHost(state));
            return toArrays(state.parameters);
          },
          [](TrainState &state, py::object parameters) {
            state.parameters =
                toTensors(parameters, "parameter", anyDtype, /*share=*/false);
            state.resident.reset();
          },
          "Copies of the current values; assigning replaces them all.")
      .def_readwrite("step", &TrainState::step)
      .def_readwrite("batches", &TrainState::batches);

  py::class_<StepReport>(module, "StepReport", "What one train step did.")
      .def_readonly("step", &StepReport::step)
      .def_readonly("learning_rate", &StepReport::learningRate)
      .def_readonly("grad_norm", &StepReport::gradNorm)
      .def_readonly("updated_norm", &StepReport::updatedNorm)
      .def_readonly("objective", &StepReport::objective)
      .def_readonly("applied", &StepReport::applied)
      .def_property_readonly("raw_losses", [](const StepReport &r) {
        py::list names;
        for (const LossValue &loss : r.losses)
          names.append(py::make_tuple(loss.name, loss.sum, loss.normalized));
        return names;
      });

  module.def(
      "train_step",
      [](const Executable &executable, py::object inputs, py::object lengths,
         double learningRate, uint32_t dropoutSeed, TrainState &state) {
        const Manifest &manifest = executable.manifest();
        RunInputs batch;
        batch.inputs = toTensors(inputs, "input", [&](const std::string &n) {
          return dtypeIn(manifest.inputs, n);
        });
        batch.lengths = toLengths(lengths);
        StepReport report;
        absl::Status status;
        {
          py::gil_scoped_release release;
          status = runTrainStep(executable, std::move(batch), learningRate,
                                dropoutSeed, state, report);
        }
        check(status);
        return py::make_tuple(report, toLosses(manifest, report.losses));
      },
      py::arg("executable"), py::arg("inputs"), py::arg("lengths"),
      py::arg("learning_rate"), py::arg("dropout_seed"), py::arg("state"),
      "Runs one train step (an executable compiled with train_step=True) on "
      "a batch and applies its update to `state` when the objective and "
      "norms are finite. Returns (StepReport, [Loss]).");

  module.def(
      "save_checkpoint",
      [](const std::string &path, TrainState &state) {
        py::gil_scoped_release release;
        absl::Status status = saveCheckpoint(path, state);
        py::gil_scoped_acquire gil;
        check(status);
      },
      py::arg("path"), py::arg("state"),
      "Writes `state` as nn-train does (an .npz numpy reads).");
  module.def(
      "load_checkpoint",
      [](const std::string &path) {
        auto state = std::make_shared<TrainState>();
        check(loadCheckpoint(path, *state));
        return state;
      },
      py::arg("path"), "Reads a checkpoint nn-train or save_checkpoint wrote.");

  py::class_<PyDataset>(
      module, "Dataset",
      "Utterances checked against a graph's inputs (nn/Dataset.h): batches "
      "of them are that graph's padded inputs and lengths.")
      .def_static(
          "load",
          [](py::object paths, const Manifest &manifest) {
            std::vector<std::string> files = pathList(paths, "paths");
            absl::StatusOr<Dataset> dataset = [&] {
              py::gil_scoped_release release;
              return Dataset::load(files, manifest);
            }();
            return PyDataset{
                std::make_shared<Dataset>(check(std::move(dataset)))};
          },
          py::arg("paths"), py::arg("manifest"),
          "Reads a dataset (an .npz shard or a directory of them, then any "
          "overlays) for the inputs of `manifest`.")
      .def_static(
          "from_shards",
          [](py::list shards, const Manifest &manifest,
             const std::string &name) {
            Dataset dataset = check(Dataset::forModel(manifest));
            for (size_t i = 0; i < shards.size(); ++i) {
              std::string file = name + "[" + std::to_string(i) + "]";
              std::map<std::string, Tensor> arrays =
                  toTensors(shards[i], "array of " + file, anyDtype,
                            /*share=*/false);
              check(dataset.addShard({{file, std::move(arrays)}}, manifest));
            }
            check(dataset.finish(name));
            return PyDataset{std::make_shared<Dataset>(std::move(dataset))};
          },
          py::arg("shards"), py::arg("manifest"), py::arg("name") = "<python>",
          "A dataset from shards in memory: each a dict of arrays as an "
          ".npz shard holds them (docs/training.md, \"Data\"); `name` "
          "names them in "
          "errors.")
      .def("__len__", [](const PyDataset &d) { return d.dataset->size(); })
      .def(
          "length",
          [](const PyDataset &d, int64_t u) {
            d.checkUtterance(u);
            return d.dataset->length(u);
          },
          py::arg("utterance"))
      .def(
          "utterance_id",
          [](const PyDataset &d, int64_t u) {
            d.checkUtterance(u);
            return d.dataset->utteranceId(u);
          },
          py::arg("utterance"))
      .def_property_readonly(
          "length_dim",
          [](const PyDataset &d) { return d.dataset->lengthDim(); })
      .def(
          "batch",
          [](const PyDataset &d, std::vector<int64_t> members) {
            if (members.empty())
              throw py::value_error("batch: no utterances");
            for (int64_t u : members)
              d.checkUtterance(u);
            return toPython(d.dataset->batch(members));
          },
          py::arg("utterances"),
          "The padded batch of `utterances`: ({input: array}, {dim: "
          "lengths}).");

  py::class_<training::Trainer>(
      module, "Trainer",
      "nn-train's training loop: `Trainer(model_path, **settings)` takes "
      "nn-train's flags as keywords (batch_size=16, epochs=2, lr=\"const:"
      "1e-3\", save=\"ckpt\", ...), compile() then run().")
      .def(py::init([](const std::string &model, py::kwargs kwargs) {
             py::dict settings = kwargs;
             std::optional<double> timeout;
             if (settings.contains("collective_timeout")) {
               double seconds = 0;
               takeKeyword(settings, "collective_timeout", seconds,
                           "a number of seconds");
               timeout = seconds;
             }
             training::TrainOptions options = takeTrainOptions(model, settings);
             rejectUnknownKeywords(settings, "Trainer");
             // Under mpirun: data-parallel, as nn-train.
             joinProcessRanks(timeout, options.compile.target);
             options.communicator = processRanks().host.get();
             options.stepCommunicator = processRanks().gpu.get();
             return std::make_unique<training::Trainer>(std::move(options));
           }),
           py::arg("model"))
      .def("compile",
           [](training::Trainer &trainer) {
             absl::Status status;
             {
               py::gil_scoped_release release;
               status = trainer.compile();
             }
             checkOnEveryRank(status);
           })
      .def(
          "run",
          [](training::Trainer &trainer) {
            // Ctrl-C while compiled code runs cannot reach Python's
            // handler (it runs only between bytecodes); nn-train's handler
            // finishes the step and saves a checkpoint, then Python's is
            // put back.
            struct sigaction python;
            sigaction(SIGINT, nullptr, &python);
            training::installInterruptHandler();
            bool finished = false;
            absl::Status status;
            {
              py::gil_scoped_release release;
              status = trainer.run(finished);
            }
            sigaction(SIGINT, &python, nullptr);
            checkOnEveryRank(status);
            return finished;
          },
          "Trains; False when Ctrl-C stopped the run after a step (its "
          "checkpoint saved).")
      .def(
          "_set_data",
          [](training::Trainer &trainer, py::object train, py::object dev) {
            training::DataOptions &data = trainer.mutableOptions().data;
            if (!train.is_none())
              data.train = pathList(train, "data");
            if (!dev.is_none())
              data.dev = pathList(dev, "dev");
          },
          py::arg("data"), py::arg("dev"),
          "Replaces the dataset paths after compile() (nn.Trainer writes "
          "utterances given in memory as shards).")
      // Copies: compile() again replaces the executables they belong to.
      .def_property_readonly("train_manifest",
                             [](const training::Trainer &trainer) {
                               return std::make_shared<Manifest>(
                                   trainer.trainManifest());
                             })
      .def_property_readonly("eval_manifest",
                             [](const training::Trainer &trainer) {
                               return std::make_shared<Manifest>(
                                   trainer.evalManifest());
                             })
      .def_property_readonly(
          "state",
          [](const training::Trainer &trainer) {
            return std::make_shared<TrainState>(trainer.state());
          },
          "A copy of the state after run().")
      .def_property_readonly("dev_at_start",
                             [](const training::Trainer &trainer) {
                               return toLosses(trainer.evalManifest(),
                                               trainer.devAtStart());
                             })
      .def_property_readonly("dev_at_end",
                             [](const training::Trainer &trainer) {
                               return toLosses(trainer.evalManifest(),
                                               trainer.devAtEnd());
                             })
      .def_property_readonly("skipped_batches",
                             &training::Trainer::skippedBatches);
}

} // namespace nn::python
