#!/usr/bin/env python3
"""The per-step overhead of a Python training loop (nn.train_step on
batches of an nn.Dataset) against nn-train on the same batches, for
example 1 (examples/blstm_ce_ctc.mlir) at B = 32 (docs/python.md).

Usage: PYTHONPATH=build/python build/pytools/bin/python3 \
           bench/python-step-overhead.py [--steps 8] [--batch 32]

Both train the same dataset of random utterances (40-160 frames, a
quarter as many labels), in order, one batch of `--batch` consecutive
utterances per step, with the same seed, so they run the same batches and
the same updates. nn-train's per-step time is its --verbose report (the
train step only); the Python loop's is the wall time of the whole loop
body (making the batch, converting it, the step), so the overhead counts
everything Python adds. The first step of each is left out (warm-up).
Two processes differ by a few percent from run to run on a shared
machine, so the bench also times making a batch in Python apart: the
part of the loop body that is not the train step.
"""

import argparse
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

import numpy as np

import nn

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
MODEL = os.path.join(ROOT, "examples", "blstm_ce_ctc.mlir")
BIN = os.environ.get("NN_BIN_DIR", os.path.join(ROOT, "build", "bin"))


def utterances(rng, count):
    for i in range(count):
        frames = int(rng.integers(40, 161))
        yield {
            "features": rng.standard_normal((frames, 80)).astype(np.float32),
            "frame_labels": rng.integers(0, 1000, frames),
            "labels": rng.integers(0, 500, max(1, frames // 4)),
            "id": f"utt{i}",
        }


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--steps", type=int, default=8)
    parser.add_argument("--batch", type=int, default=32)
    args = parser.parse_args()
    count = args.steps * args.batch
    work = tempfile.mkdtemp(prefix="nn-overhead-")

    step = nn.compile_file(MODEL, train_step=True, grads=True).load()
    data_dir = nn.write_shards(os.path.join(work, "data"),
                               utterances(np.random.default_rng(0), count),
                               step.manifest)
    data = nn.Dataset.load(data_dir, step.manifest)

    # nn-train on the same batches: in order, consecutive utterances.
    run = subprocess.run(
        [os.path.join(BIN, "nn-train"), MODEL, "--data", data_dir,
         "--batch-size", str(args.batch), "--no-shuffle", "--no-bucket",
         "--steps", str(args.steps), "--seed", "1", "--verbose"],
        capture_output=True, text=True, check=True)
    cli = [float(s) for s in re.findall(r"\(([0-9.]+) s\)", run.stderr)]
    if len(cli) != args.steps:
        sys.exit(f"expected {args.steps} step lines from nn-train, got:\n"
                 f"{run.stderr}")

    state = nn.TrainState(nn.init_parameters(step.manifest, seed=1))
    python = []
    for n in range(args.steps):
        start = time.perf_counter()
        inputs, lengths = data.batch(list(range(n * args.batch,
                                                (n + 1) * args.batch)))
        report, losses = nn.train_step(step, inputs, lengths, 1e-3,
                                       dropout_seed=n, state=state)
        python.append(time.perf_counter() - start)
        assert report.applied

    # Making and handing over a batch, timed apart (nn-train makes its
    # batches with the same Dataset::batch, outside its timer).
    batching = []
    for n in range(args.steps):
        start = time.perf_counter()
        data.batch(list(range(n * args.batch, (n + 1) * args.batch)))
        batching.append(time.perf_counter() - start)

    shutil.rmtree(work)
    cli_median = statistics.median(cli[1:])
    py_median = statistics.median(python[1:])
    print(f"example 1, B = {args.batch}, {args.steps - 1} steps after warm-up")
    print(f"nn-train train step (median): {cli_median:.4f} s")
    print(f"Python loop step (median):    {py_median:.4f} s")
    print(f"Python / nn-train:            {py_median / cli_median:.4f} "
          f"({100 * (py_median / cli_median - 1):+.2f}%)")
    batch_median = statistics.median(batching[1:])
    print(f"Dataset.batch (median):       {batch_median:.4f} s "
          f"({100 * batch_median / py_median:.2f}% of the Python step)")


if __name__ == "__main__":
    main()
