#!/usr/bin/env python3
"""Step time of data-parallel training at 1 and 2 ranks (docs/distributed.md).

Trains example 1 (BLSTM, CE + CTC, packed) on the synthetic segment task
with one thread per rank, once as a single process and once under
`mpirun -np 2`, on the same batches, and prints the median step time of
each (the first steps, which warm the caches, left out), the scaling
efficiency (speed-up / ranks) and the share of rank 0's step time spent in
the all-reduces (waiting for the other rank included), from nn-train's
closing line.

    python3 bench/data-parallel-scaling.py [--steps 60] [--batch-size 32]
"""

import argparse
import os
import pathlib
import re
import statistics
import subprocess

ROOT = pathlib.Path(__file__).resolve().parents[1]
BIN = pathlib.Path(os.environ.get("NN_BIN_DIR", ROOT / "build" / "bin"))
ENV = dict(os.environ, OMPI_ALLOW_RUN_AS_ROOT="1",
           OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1",
           OMPI_MCA_rmaps_base_oversubscribe="1")


def train(ranks, steps, batch):
    command = [str(BIN / "nn-train"), str(ROOT / "examples/blstm_ce_ctc.mlir"),
               "--synthetic", "segments", "--classes", "20", "--steps",
               str(steps), "--epoch-steps", str(steps), "--dev-batches", "1",
               "--batch-size", str(batch), "--seed", "1", "--num-threads", "1",
               "--verbose"]
    if ranks > 1:
        command = ["mpirun", "-np", str(ranks), "--bind-to", "core"] + command
    out = subprocess.run(command, env=ENV, capture_output=True, text=True,
                         check=True).stderr
    seconds = [float(m) for m in re.findall(r"\(([0-9.]+) s\)", out)]
    share = re.search(r"\(([0-9.]+)%\)\n", out)
    return seconds, float(share.group(1)) if share else 0.0


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=int, default=60)
    parser.add_argument("--batch-size", type=int, default=32)
    parser.add_argument("--warmup", type=int, default=5)
    args = parser.parse_args()
    results = {}
    for ranks in (1, 2):
        seconds, share = train(ranks, args.steps, args.batch_size)
        results[ranks] = statistics.median(seconds[args.warmup:]), share
    one, _ = results[1]
    two, share = results[2]
    print(f"example 1, batch {args.batch_size}, {args.steps} steps, "
          f"1 thread per rank")
    print(f"1 rank : {one * 1e3:7.1f} ms/step")
    print(f"2 ranks: {two * 1e3:7.1f} ms/step  speed-up {one / two:.2f}x  "
          f"efficiency {one / two / 2:.0%}  all-reduce share {share:.1f}%")


if __name__ == "__main__":
    main()
