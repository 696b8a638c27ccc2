"""Checks nn-run --grads and --outputs against numpy (float64).

The batch and parameters are make_npz.py's (NaN in padded frames of x):
linear + bias, cross entropy from logits with label smoothing 0.1 (RETURNN:
eps / (V - 1) on the other classes), normalized per frame. The gradient of
the mean loss is (softmax(z) - q) x^T / frames summed over real frames.
"""
import sys

import numpy as np

batch, params, grads, outputs = (np.load(p) for p in sys.argv[1:5])
x, y, lengths = batch["x"], batch["y"], batch["lengths.T"]
w = params["out.w"].astype(np.float64)
bias = params["out.b"].astype(np.float64)
B, T, F = x.shape
V = w.shape[0]
eps = 0.1
dw, db, frames = np.zeros_like(w), np.zeros_like(bias), int(lengths.sum())
for b in range(B):
    for t in range(lengths[b]):
        z = x[b, t].astype(np.float64) @ w.T + bias
        p = np.exp(z - z.max())
        p /= p.sum()
        q = np.full(V, eps / (V - 1))
        q[y[b, t]] = 1 - eps
        dw += np.outer(p - q, x[b, t]) / frames
        db += (p - q) / frames

ok = True
for name, want in (("out.w", dw), ("out.b", db)):
    got = grads[name]
    if got.dtype != np.float32 or got.shape != want.shape:
        print(f"{name}: {got.dtype} {got.shape}, expected float32 {want.shape}")
        ok = False
    elif not np.allclose(got, want, rtol=1e-4, atol=1e-6):
        print(f"{name}: {got} != {want}")
        ok = False

# --outputs: the logits (output0) on real frames, and the lengths of T.
logits = outputs["output0"]
if logits.shape != (B, T, V) or not np.array_equal(outputs["lengths.T"], lengths):
    print("outputs: shape", logits.shape, "lengths", outputs.get("lengths.T"))
    ok = False
for b in range(B):
    want = x[b, :lengths[b]].astype(np.float64) @ w.T + bias
    if not np.allclose(logits[b, :lengths[b]], want, rtol=1e-5, atol=1e-5):
        print(f"output0[{b}] differs from numpy")
        ok = False
sys.exit(0 if ok else 1)
