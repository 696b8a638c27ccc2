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

Models are built in Python too: modules own named parameters, ops check
dims, and a Program prints as the nn dialect (nn/graph.py):

    B = nn.batch_dim("B"); T = nn.seq_dim("T", B)
    class Model(nn.Module):
        def __init__(self):
            self.out = nn.Linear(80, 10)
        def forward(self, features, targets):
            ce = nn.cross_entropy(self.out(features), targets)
            nn.mark_loss(ce, "ce", normalize="per_frame")
    program = nn.Program(Model())
    program.graph("train", program.model, features=nn.Input([B, T, 80]),
                  targets=nn.Input([B, T], "i32"))
    exe = nn.compile(program, grads=True).load()

docs/python.md describes the package.
"""

import os
import tempfile

from nn import _nn

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
    TrainState,
    compile_file,
    init_parameters,
    load,
    load_checkpoint,
    num_threads,
    ranks,
    registered_targets,
    save_checkpoint,
    set_num_threads,
    train_step,
)
from nn.data import shard_arrays, write_shards
from nn.dims import Dim, DimError, batch_dim, computed_dim, seq_dim
from nn.graph import Input, Module, Parameter, Program, TensorType, Value
from nn.layers import LSTM, Conv1d, Embedding, LayerNorm, Linear
from nn.ops import (
    add,
    attention,
    broadcast_seq,
    concat,
    conv1d,
    cross_entropy,
    ctc_beam_search,
    ctc_greedy_decode,
    ctc_loss,
    dropout,
    edit_distance,
    embedding,
    expected_risk,
    flatten_beam,
    frame_error,
    gather_states,
    gelu,
    glu,
    layer_norm,
    linear,
    linear_cross_entropy,
    log_softmax,
    lstm,
    mark_loss,
    mse,
    mul,
    op,
    pack,
    param_norm,
    pool,
    prepend_start,
    reduce,
    relative_positions,
    relu,
    repeat_beam,
    rotary,
    scale,
    sigmoid,
    silu,
    softmax,
    spec_augment,
    sum_beam,
    tanh,
    transducer_align,
    transducer_beam_search,
    transducer_greedy_decode,
    transducer_join,
    transducer_loss,
    unflatten_beam,
    unpack,
    viterbi_align,
)


def compile(source, name=None, **options):
    """Compiles a Program or MLIR text of the nn dialect into an Artifact;
    `name` names the source in diagnostics. Keywords: entry, target, grads,
    input_gradients, training, train_step, losses, search_beam,
    artifact_path, gpu_code_dir and the pipeline's options by their flag
    names with '_' (pack=False, optimizer="sgd", ...)."""
    if isinstance(source, Program):
        source, name = source.mlir(), name or "<program>"
    return _nn.compile(source, name=name or "<python>", **options)


def _is_paths(value):
    if isinstance(value, (str, os.PathLike)):
        return True
    return (isinstance(value, (list, tuple)) and len(value) > 0 and
            all(isinstance(v, (str, os.PathLike)) for v in value))


class Trainer(_nn.Trainer):
    """nn-train's training loop: `Trainer(model, **settings)` with a model
    file or a Program, and nn-train's flags as keywords by their names with
    '_' (synthetic="segments", data=..., dev=..., batch_size=16, epochs=2,
    lr="cosine:peak=1e-3,warmup=100,total=2000" or a constant rate,
    save="ckpt", resume=..., json=True, ...; bucket=False and
    shuffle=False for --no-bucket and --no-shuffle); compile(), then
    run(), which returns False when interrupted. `data` and `dev` are
    dataset paths, or iterables of utterances (dicts of arrays, nn/data.py)
    written as shards at compile(). Checkpoints are nn-train's: either
    resumes the other's. Under mpirun (`mpirun -np 2 python3 train.py`)
    it trains data-parallel as nn-train does, rank 0 reporting and saving
    (collective_timeout: seconds, 600 unless set before; nn.ranks() says
    which rank runs)."""

    def __init__(self, model, data=None, dev=None, **settings):
        self._files = tempfile.TemporaryDirectory(prefix="nn-trainer-")
        if isinstance(model, Program):
            path = os.path.join(self._files.name, "model.mlir")
            with open(path, "w", encoding="utf-8") as file:
                file.write(model.mlir())
            model = path
        self._utterances = {}
        for key, value in (("data", data), ("dev", dev)):
            if value is None:
                continue
            if _is_paths(value):
                settings[key] = ([os.fspath(v) for v in value]
                                 if isinstance(value, (list, tuple))
                                 else os.fspath(value))
            else:
                self._utterances[key] = value
        super().__init__(os.fspath(model), **settings)

    def compile(self):
        """Compiles the train step and the evaluation graph (and writes the
        utterances given as data)."""
        super().compile()
        if self._utterances:
            paths = {}
            for key, utterances in self._utterances.items():
                manifest = self.train_manifest if key == "data" else self.eval_manifest
                paths[key] = [write_shards(os.path.join(self._files.name, key),
                                           utterances, manifest)]
            self._set_data(paths.get("data"), paths.get("dev"))
            self._utterances = {}


def _from_utterances(utterances, manifest, name="<python>"):
    """A dataset of `utterances` (dicts of arrays, nn/data.py) for the
    inputs of `manifest`."""
    return Dataset.from_shards([shard_arrays(utterances, manifest)], manifest,
                               name=name)


Dataset.from_utterances = staticmethod(_from_utterances)


def _load_artifact(artifact):
    """Loads the artifact (see nn.load)."""
    return load(artifact.path)


Artifact.load = _load_artifact

__all__ = [
    "shard_arrays",
    "write_shards",
    "Dim",
    "DimError",
    "Input",
    "LSTM",
    "Conv1d",
    "Embedding",
    "LayerNorm",
    "Linear",
    "Module",
    "Parameter",
    "Program",
    "TensorType",
    "Value",
    "add",
    "attention",
    "batch_dim",
    "broadcast_seq",
    "computed_dim",
    "concat",
    "conv1d",
    "cross_entropy",
    "ctc_greedy_decode",
    "ctc_loss",
    "dropout",
    "edit_distance",
    "embedding",
    "frame_error",
    "gelu",
    "glu",
    "layer_norm",
    "linear",
    "log_softmax",
    "lstm",
    "mark_loss",
    "mse",
    "mul",
    "op",
    "pool",
    "reduce",
    "relative_positions",
    "relu",
    "scale",
    "seq_dim",
    "sigmoid",
    "silu",
    "softmax",
    "spec_augment",
    "tanh",
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
    "compile_file",
    "init_parameters",
    "load",
    "load_checkpoint",
    "num_threads",
    "registered_targets",
    "save_checkpoint",
    "set_num_threads",
    "train_step",
    "gather_states",
    "linear_cross_entropy",
    "pack",
    "param_norm",
    "prepend_start",
    "rotary",
    "transducer_align",
    "transducer_beam_search",
    "transducer_greedy_decode",
    "transducer_join",
    "transducer_loss",
    "unpack",
    "viterbi_align",
    "ctc_beam_search",
    "expected_risk",
    "flatten_beam",
    "repeat_beam",
    "sum_beam",
    "unflatten_beam",
    "ranks",
]
