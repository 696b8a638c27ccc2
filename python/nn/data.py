"""Data from Python: utterances as dicts of numpy arrays, turned into the
shards nn's datasets read (docs/training.md, "Data").

An utterance is a dict with an array for each input of the graph (the
train step's own scalars aside): a sequence input `[B, T, ...]` takes the
utterance's `[T, ...]` frames, a per-utterance input `[B, ...]` its
`[...]` value; an optional "id" (a string) names it in errors and
decodings.
"""

import os

import numpy as np

# The inputs a train step fills in itself (nn::runTrainStep,
# nn::Dataset::batch), never read from data.
STEP_INPUTS = ("learning_rate", "step", "dropout_seed", "chunk_weights")

_DTYPES = {"f32": np.float32, "f64": np.float64, "i32": np.int32, "i64": np.int64}


def _column(utterance, index, spec):
    if spec.name not in utterance:
        raise ValueError(f"utterance {index}: no array '{spec.name}' (an input "
                         f"of the graph: {spec.dtype} {spec.axes})")
    value = np.asarray(utterance[spec.name])
    target = np.dtype(_DTYPES[spec.dtype])
    if value.dtype.kind not in ("f" if target.kind == "f" else "iu"):
        raise TypeError(f"utterance {index}: '{spec.name}' is {value.dtype}, the "
                        f"input is {spec.dtype}")
    if target.kind == "i" and value.size:
        info = np.iinfo(target)
        if value.min() < info.min or value.max() > info.max:
            raise ValueError(f"utterance {index}: '{spec.name}' holds values "
                             f"outside {spec.dtype}")
    return value.astype(target, copy=False)


def shard_arrays(utterances, manifest):
    """The arrays of one shard (a dict, what nn.Dataset.from_shards and
    numpy.savez take) holding `utterances` for the inputs of `manifest`."""
    sequence_dims = {d.name for d in manifest.dims if d.kind == "seq"}
    inputs = [t for t in manifest.inputs if t.name not in STEP_INPUTS]
    columns = {t.name: [] for t in inputs}
    ids = []
    for index, utterance in enumerate(utterances):
        if not isinstance(utterance, dict):
            raise TypeError(f"utterance {index}: expected a dict of arrays, got "
                            f"{type(utterance).__name__}")
        for spec in inputs:
            columns[spec.name].append(_column(utterance, index, spec))
        ids.append(utterance.get("id"))
    if not ids:
        raise ValueError("no utterances")
    arrays = {}
    for spec in inputs:
        values = columns[spec.name]
        if len(spec.axes) > 1 and spec.axes[1] in sequence_dims:
            for index, value in enumerate(values):
                if value.ndim != len(spec.axes) - 1:
                    raise ValueError(f"utterance {index}: '{spec.name}' has "
                                     f"shape {value.shape}, expected "
                                     f"{spec.axes[1:]} without the batch")
            arrays[spec.name] = np.concatenate(values, axis=0)
            arrays[spec.name + ".lengths"] = np.array(
                [len(v) for v in values], dtype=np.int32)
        else:
            arrays[spec.name] = np.stack(values)
    if any(i is not None for i in ids):
        codes = [np.array([ord(c) for c in str(i if i is not None else n)],
                          dtype=np.int64) for n, i in enumerate(ids)]
        arrays["nn.id"] = np.concatenate(codes)
        arrays["nn.id.lengths"] = np.array([len(c) for c in codes], dtype=np.int32)
    return arrays


def write_shards(directory, utterances, manifest, per_shard=1000):
    """Writes `utterances` as shards of at most `per_shard` utterances
    (shard-00000.npz, ...) into `directory`, a dataset nn-train --data
    reads; returns the directory."""
    os.makedirs(directory, exist_ok=True)
    # A dataset directory's shards are all its .npz files: old ones would
    # be read with the new.
    old = [f for f in os.listdir(directory) if f.endswith(".npz")]
    if old:
        raise FileExistsError(f"{directory} holds shards already ({old[0]}); "
                              "write into an empty directory")
    batch, count = [], 0

    def flush():
        nonlocal batch, count
        np.savez(os.path.join(directory, f"shard-{count:05d}.npz"),
                 **shard_arrays(batch, manifest))
        batch, count = [], count + 1

    for utterance in utterances:
        batch.append(utterance)
        if len(batch) == per_shard:
            flush()
    if batch:
        flush()
    if count == 0:
        raise ValueError("no utterances")
    return directory
