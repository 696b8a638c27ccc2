"""nn from Python: compile models of the nn dialect, run them on numpy
arrays, train them and read the results.

The compiler, the runtime and the training loop are nn's C++ libraries
(include/nn/); this package binds them (the extension nn._nn) and adds what
is easier to write in Python. Errors of the compiler and runtime are raised
as nn.Error, whose `code` names the status ("INVALID_ARGUMENT", ...).

    import nn
    artifact = nn.compile_file("examples/blstm_ce_ctc.mlir", grads=True)
    exe = artifact.load()
    params = nn.init_parameters(exe.manifest, seed=0)
    result = exe.run({"features": x, "frame_labels": y, "labels": z},
                     lengths={"T": t, "U": u}, parameters=params)
    result.loss("ce").value, result.gradients["out.w"]

docs/python.md describes the package.
"""

from nn._nn import (
    Artifact,
    Dataset,
    DimSpec,
    Error,
    Executable,
    Loss,
    LossSpec,
    Manifest,
    Result,
    StepReport,
    TensorSpec,
    Trainer,
    TrainState,
    compile,
    compile_file,
    init_parameters,
    load,
    load_checkpoint,
    num_threads,
    registered_targets,
    save_checkpoint,
    set_num_threads,
    train_step,
)


def _load_artifact(artifact):
    """Loads the artifact (see nn.load)."""
    return load(artifact.path)


Artifact.load = _load_artifact

__all__ = [
    "Artifact",
    "Dataset",
    "DimSpec",
    "Error",
    "Executable",
    "Loss",
    "LossSpec",
    "Manifest",
    "Result",
    "StepReport",
    "TensorSpec",
    "Trainer",
    "TrainState",
    "compile",
    "compile_file",
    "init_parameters",
    "load",
    "load_checkpoint",
    "num_threads",
    "registered_targets",
    "save_checkpoint",
    "set_num_threads",
    "train_step",
]
