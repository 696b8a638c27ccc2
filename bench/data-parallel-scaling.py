#!/usr/bin/env python3
"""Step time of data-parallel training at 1 and 2 ranks (docs/distributed.md).

Trains example 1 (BLSTM, CE + CTC, packed) on the synthetic segment task
with one thread per rank, once as a single process and once under
`mpirun -np 2`, on the same batches, and prints the median step time of
each (the first steps, which warm the caches, left out), the scaling
efficiency (speed-up / ranks) and the share of rank 0's step time spent in
the all-reduces (waiting for the other rank included), from nn-train's
closing line. Two ranks run with the sums after the backward
(`--no-all-reduce-overlap`) and overlapping it in buckets of each size
`--buckets` lists (MiB; `--all-reduce-bucket-mb`); the share then counts
only what rank 0 waited, and the time the sums ran beside the backward is
printed beside it.

    python3 bench/data-parallel-scaling.py [--steps 60] [--batch-size 32]
        [--buckets 25,4,1] [--repeat 1]
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


def train(ranks, steps, batch, extra=()):
    command = [str(BIN / "nn-train"), str(ROOT / "examples/blstm_ce_ctc.mlir"),
               "--synthetic", "segments", "--classes", "20", "--steps",
               str(steps), "--epoch-steps", str(steps), "--dev-batches", "1",
               "--batch-size", str(batch), "--seed", "1", "--num-threads", "1",
               "--verbose", *extra]
    if ranks > 1:
        command = ["mpirun", "-np", str(ranks), "--bind-to", "core"] + command
    out = subprocess.run(command, env=ENV, capture_output=True, text=True,
                         check=True).stderr
    seconds = [float(m) for m in re.findall(r"\(([0-9.]+) s\)", out)]
    share = re.search(r"\(([0-9.]+)%\)\n", out)
    beside = re.search(r"ran ([0-9.]+) s more beside the steps", out)
    return (seconds, float(share.group(1)) if share else 0.0,
            float(beside.group(1)) if beside else 0.0)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=int, default=60)
    parser.add_argument("--batch-size", type=int, default=32)
    parser.add_argument("--warmup", type=int, default=5)
    parser.add_argument("--buckets", default="25,4,1")
    parser.add_argument("--repeat", type=int, default=1,
                        help="rounds over every configuration, in turn; "
                        "each figure is the median over the rounds")
    args = parser.parse_args()
    runs = [("1 rank", 1, []),
            ("sums after the backward", 2, ["--no-all-reduce-overlap"])]
    runs += [(f"overlapped, buckets of {mb} MiB", 2,
              ["--all-reduce-bucket-mb", mb])
             for mb in args.buckets.split(",")]
    # Rounds in turn, so that a slow spell of the machine falls on every
    # configuration alike.
    figures = {name: [] for name, _, _ in runs}
    for _ in range(args.repeat):
        for name, ranks, extra in runs:
            seconds, share, beside = train(ranks, args.steps,
                                           args.batch_size, extra)
            figures[name].append((statistics.median(seconds[args.warmup:]),
                                  share, beside))

    def median(name, field):
        return statistics.median(run[field] for run in figures[name])

    one = median("1 rank", 0)
    print(f"example 1, batch {args.batch_size}, {args.steps} steps, "
          f"1 thread per rank, median of {args.repeat} round(s)")
    print(f"1 rank : {one * 1e3:7.1f} ms/step")
    for name, ranks, _ in runs[1:]:
        two = median(name, 0)
        print(f"2 ranks: {two * 1e3:7.1f} ms/step  speed-up {one / two:.2f}x  "
              f"efficiency {one / two / 2:.0%}  all-reduce share "
              f"{median(name, 1):4.1f}%  beside the steps "
              f"{median(name, 2):5.2f} s  ({name})")


if __name__ == "__main__":
    main()
