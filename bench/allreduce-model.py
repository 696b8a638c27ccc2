#!/usr/bin/env python3
"""The all-reduce cost of a data-parallel step at 8-64 ranks, modelled
(docs/distributed.md, "Past one machine").

A ring all-reduce of S bytes over p ranks sends 2 (p - 1) / p * S bytes
through each rank's link and takes 2 (p - 1) latency-bound hops:

    t(p) = 2 (p - 1) / p * S / bandwidth + 2 (p - 1) * latency

(the bandwidth term is what NCCL and Open MPI reach for large buffers; a
tree all-reduce trades the latency term for log p hops). With the compute
of a step fixed per rank (each rank keeps its share of the batch as ranks
are added: weak scaling) and no overlap of the sum with the backward, the
efficiency is compute / (compute + t(p)).

Inputs: the gradient bytes and the compute time per step are nn's own
(example 1, one thread per rank, bench/data-parallel-scaling.py); the link
bandwidths and latencies are the nominal figures of the link kinds, not
measurements, and are arguments.

    python3 bench/allreduce-model.py [--gradient-mb 12.14] [--compute-ms 171]
"""

import argparse

# Nominal per-direction bandwidth (GB/s) and per-hop latency (us) of common
# links: the line rates of the standards; real all-reduce bus bandwidth is
# lower (often 70-90% of the line rate).
LINKS = {
    "10GbE (TCP)": (1.25, 30.0),
    "25GbE (TCP)": (3.1, 25.0),
    "100Gb/s InfiniBand EDR": (12.5, 2.0),
    "200Gb/s InfiniBand HDR": (25.0, 2.0),
}


def allreduce_seconds(ranks, nbytes, bandwidth_gbs, latency_us):
    if ranks < 2:
        return 0.0
    return (2 * (ranks - 1) / ranks * nbytes / (bandwidth_gbs * 1e9) +
            2 * (ranks - 1) * latency_us * 1e-6)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--gradient-mb", type=float, default=12.14,
                        help="gradient bytes per step, in MB (example 1)")
    parser.add_argument("--compute-ms", type=float, default=171.0,
                        help="compute per step and rank, in ms")
    args = parser.parse_args()
    nbytes = args.gradient_mb * 1e6
    compute = args.compute_ms * 1e-3
    ranks = [8, 16, 32, 64]
    print(f"gradients {args.gradient_mb:.2f} MB per step, compute "
          f"{args.compute_ms:.0f} ms per step and rank, no overlap")
    print(f"{'link':24s}" + "".join(f"{p:>16d}" for p in ranks))
    for name, (bandwidth, latency) in LINKS.items():
        cells = []
        for p in ranks:
            t = allreduce_seconds(p, nbytes, bandwidth, latency)
            cells.append(f"{t * 1e3:6.1f} ms {compute / (compute + t):4.0%}")
        print(f"{name:24s}" + "".join(f"{c:>16s}" for c in cells))


if __name__ == "__main__":
    main()
