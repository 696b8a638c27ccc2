#!/usr/bin/env python3
"""How far two ranks drift from one process on the same batches
(docs/distributed.md, "Equal to one process").

Trains example 1 for 20 steps on the synthetic segment task under
`mpirun -np 2` and as one process, with SGD or Adam and with oneDNN or
generated GEMM loops, and prints the largest difference of any parameter
after the last step and of any loss at any step (relative).

    python3 bench/data-parallel-agreement.py
"""

import json
import os
import pathlib
import subprocess
import tempfile

import numpy as np

ROOT = pathlib.Path(__file__).resolve().parents[1]
BIN = pathlib.Path(os.environ.get("NN_BIN_DIR", ROOT / "build" / "bin"))
ENV = dict(os.environ, OMPI_ALLOW_RUN_AS_ROOT="1",
           OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1",
           OMPI_MCA_rmaps_base_oversubscribe="1")
SETTINGS = {
    "SGD, generated loops": ["--optimizer", "sgd", "--lr",
                             "constant:peak=0.05", "--no-blas"],
    "SGD, oneDNN": ["--optimizer", "sgd", "--lr", "constant:peak=0.05"],
    "Adam (lr 1e-3), oneDNN": [],
}


def train(ranks, flags, save):
    command = [str(BIN / "nn-train"), str(ROOT / "examples/blstm_ce_ctc.mlir"),
               "--synthetic", "segments", "--classes", "20", "--steps", "20",
               "--epoch-steps", "50", "--dev-batches", "2", "--seed", "1",
               "--json", "--save", str(save), *flags]
    if ranks > 1:
        command = ["mpirun", "-np", str(ranks)] + command
    out = subprocess.run(command, env=ENV, capture_output=True, text=True,
                         check=True).stdout
    losses = [json.loads(line)["losses"] for line in out.splitlines()
              if line.startswith("{")]
    with np.load(pathlib.Path(save) / "step-00000020.npz") as archive:
        return losses, {k: archive[k] for k in archive.files
                        if not k.startswith("nn.")}


def main():
    with tempfile.TemporaryDirectory() as tmp:
        for name, flags in SETTINGS.items():
            two = train(2, flags, pathlib.Path(tmp) / f"{len(name)}-two")
            one = train(1, flags, pathlib.Path(tmp) / f"{len(name)}-one")
            parameters = max(float(np.max(np.abs(two[1][k] - one[1][k])))
                             for k in one[1])
            losses = max(abs(a[k] - b[k]) / abs(b[k])
                         for a, b in zip(two[0], one[0]) for k in b)
            print(f"{name:24s} parameters within {parameters:.1e}, "
                  f"losses within {losses:.1e} (relative)")


if __name__ == "__main__":
    main()
