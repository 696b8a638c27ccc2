"""Writes the .npz/.npy fixtures the reader tests load (ReaderTest.cpp).

Run once with each numpy major version; the file names carry the version
that wrote them (numpy<major>-...). Committed fixtures: numpy 1.26.4 and
numpy 2.4.6, from PyPI wheels in throwaway virtual environments.
"""
import io
import sys

import numpy as np


class Unseekable(io.RawIOBase):
    """A write-only stream without seek: zipfile then writes each member's
    sizes and CRC in a data descriptor after its data (flag bit 3)."""

    def __init__(self, path):
        self.file = open(path, "wb")

    def writable(self):
        return True

    def write(self, data):
        return self.file.write(data)

    def close(self):
        self.file.close()
        super().close()


major = np.__version__.split(".")[0]
arrays = {
    "x": (np.arange(6, dtype=np.float32) * 0.5 - 1).reshape(2, 3),
    "d": np.array([0.25, -3.5], dtype=np.float64),
    "labels": np.array([[1, 2], [3, -1]], dtype=np.int32),
    "lengths.T": np.array([3, 1], dtype=np.int64),
    "scalar": np.array(7, dtype=np.int64),
}
prefix = f"numpy{major}-"
np.savez(prefix + "savez.npz", **arrays)
np.savez_compressed(prefix + "savez_compressed.npz", **arrays)
np.save(prefix + "x.npy", arrays["x"])
with Unseekable(prefix + "savez_streamed.npz") as stream:
    np.savez(stream, **arrays)
print("wrote fixtures with numpy", np.__version__, file=sys.stderr)
