"""Writes a batch, parameters and the expected loss (computed with numpy)."""
import json
import os
import sys

import numpy as np

out = sys.argv[1]
os.makedirs(out, exist_ok=True)
rng = np.random.default_rng(7)
B, T, F, V = 3, 5, 3, 4
lengths = np.array([5, 2, 4], dtype=np.int32)
x = rng.standard_normal((B, T, F)).astype(np.float32)
y = rng.integers(0, V, size=(B, T)).astype(np.int32)
for b in range(B):
    x[b, lengths[b]:] = np.nan  # padding must not matter
    y[b, lengths[b]:] = -1
w = rng.standard_normal((V, F)).astype(np.float32)
bias = rng.standard_normal(V).astype(np.float32)
np.savez(os.path.join(out, "batch.npz"), x=x, y=y, **{"lengths.T": lengths})
np.savez(os.path.join(out, "params.npz"), **{"out.w": w, "out.b": bias})
for name, array in {"x": x, "y": y, "len": lengths, "w": w, "b": bias}.items():
    np.save(os.path.join(out, name + ".npy"), array)
np.savez_compressed(os.path.join(out, "compressed.npz"), x=x, y=y,
                    **{"lengths.T": lengths})
# Lengths beyond int32 (numpy's default integer is int64).
np.save(os.path.join(out, "biglen.npy"),
        np.array([4294967296, 2, 4], dtype=np.int64))
np.savez(os.path.join(out, "wrong.npz"), x=x.astype(np.float64), y=y,
         **{"lengths.T": lengths})

# Cross entropy with label smoothing 0.1 (RETURNN: eps / (V - 1) elsewhere).
eps, total, frames = 0.1, 0.0, 0
for b in range(B):
    for t in range(lengths[b]):
        z = x[b, t].astype(np.float64) @ w.T.astype(np.float64) + bias
        lp = z - z.max() - np.log(np.exp(z - z.max()).sum())
        q = np.full(V, eps / (V - 1))
        q[y[b, t]] = 1 - eps
        total += -(q * lp).sum()
        frames += 1
with open(os.path.join(out, "expected.json"), "w") as f:
    json.dump({"ce": {"sum": total, "normalization": frames}}, f)
