#!/usr/bin/env python3
"""Plots the curves of an nn-train run from its TensorBoard event files
(nn-train --tensorboard DIR) into a PNG: on the left the training losses
(averaged over each stretch of `--smooth` steps) and the dev losses, on
the right the dev error rates (the dev scores named by `--rates`), by
step.

  build/pytools/bin/python3 bench/plot-tensorboard.py DIR OUT.png [--title T]

scripts/python-tools.sh makes build/pytools (tensorboard, matplotlib).
"""
import argparse

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
from tensorboard.backend.event_processing.event_accumulator import (  # noqa: E402
    EventAccumulator,
)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("logdir")
    parser.add_argument("out")
    parser.add_argument("--title", default="")
    parser.add_argument("--smooth", type=int, default=50,
                        help="average training losses over this many steps")
    parser.add_argument("--rates", default="cer,wer,ler,fer",
                        help="dev scores plotted as error rates (in %%), by name")
    args = parser.parse_args()

    events = EventAccumulator(args.logdir, size_guidance={"scalars": 0})
    events.Reload()
    tags = events.Tags()["scalars"]
    losses = [t for t in tags if t.startswith("train/") and t not in
              ("train/lr", "train/grad_norm", "train/frames_per_second")]
    dev = [t for t in tags if t.startswith("dev/")]
    if not losses and not dev:
        raise SystemExit(f"no nn-train scalars in {args.logdir}")

    rates = [t for t in dev if t.split("/", 1)[1] in args.rates.split(",")]
    figure, (left, right) = plt.subplots(1, 2, figsize=(10, 3.8))
    for tag in losses:
        points = events.Scalars(tag)
        steps, values = [], []
        for start in range(0, len(points), args.smooth):
            chunk = points[start:start + args.smooth]
            steps.append(chunk[-1].step)
            values.append(sum(p.value for p in chunk) / len(chunk))
        left.plot(steps, values, label=f"{tag} (mean of {args.smooth} steps)")
    for tag in dev:
        points = events.Scalars(tag)
        steps = [p.step for p in points]
        if tag in rates:
            right.plot(steps, [100 * p.value for p in points], marker="o",
                       label=tag)
        else:
            left.plot(steps, [p.value for p in points], marker="o", label=tag)
    for axes, label in ((left, "loss"), (right, "error rate (%)")):
        axes.set_xlabel("step")
        axes.set_ylabel(label)
        axes.legend(fontsize=8)
        axes.grid(alpha=0.3)
    if args.title:
        figure.suptitle(args.title)
    figure.tight_layout()
    figure.savefig(args.out, dpi=100)


if __name__ == "__main__":
    main()
