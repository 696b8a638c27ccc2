"""Checks nn-data import --cmvn against a plain numpy normalization of the
same import without it (nn-data-cmvn.mlir)."""
import glob
import os
import sys

import numpy as np

root = sys.argv[1]


def features(path):
    z = np.load(path)
    return z["features"].astype(np.float64)


raw = features(os.path.join(root, "raw.npz"))
mean, std = raw.mean(axis=0), raw.std(axis=0)
train = features(os.path.join(root, "train.npz"))
assert train.shape == raw.shape, (train.shape, raw.shape)
assert np.allclose(train.mean(axis=0), 0, atol=1e-4), train.mean(axis=0)
assert np.allclose(train.var(axis=0), 1, atol=1e-3), train.var(axis=0)
assert np.allclose(train, (raw - mean) / std, atol=1e-4)
stats = np.load(os.path.join(root, "train.cmvn.npz"))
assert int(stats["frames"][0]) == raw.shape[0]
assert np.allclose(stats["sum"], raw.sum(axis=0), rtol=1e-9)
print("train: mean 0 and variance 1 in each of %d features" % raw.shape[1])

# Dev: normalized with the training set's statistics, not its own.
dev = np.concatenate([features(p) for p in sorted(glob.glob(
    os.path.join(root, "dev", "shard-*.npz")))])
dev_raw = features(os.path.join(root, "dev-raw.npz"))
assert dev.shape == dev_raw.shape, (dev.shape, dev_raw.shape)
assert np.allclose(dev, (dev_raw - mean) / std, atol=1e-4)
assert not np.allclose(dev.mean(axis=0), 0, atol=1e-4)
print("dev: (raw - train mean) / train std")
