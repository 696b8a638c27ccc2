#!/usr/bin/env python3
"""PyTorch's scaled_dot_product_attention on the batch of nn-bench's
benchAttention, for comparison (docs/performance.md, "Attention").

The batch: 32 LibriSpeech utterances (bench/data, sampled as nn-bench
samples them; their lengths are listed below), d_model 256 in 4 heads,
float32, no mask but each sequence's own keys, under an MSE loss over the
real frames whose backward gives the gradients of queries, keys and
values, as benchAttention measures. Variants:

  padded   one SDPA call on the padded batch [B, H, T_max, D] with a
           boolean key-padding mask (what a padded framework runs);
  varlen   one SDPA call per sequence on its own frames (what packed,
           cu_seqlens-style attention computes; PyTorch's CPU has no
           varlen kernel).

Prints the median of `--repeats` timed runs after a warm-up, per variant,
forward and forward+backward.

  python3 bench/attention-torch.py --threads 1
"""
import argparse
import statistics
import time

import torch
import torch.nn.functional as F

# The lengths nn-bench draws from bench/data (its loadLengths, seed 2024).
LENGTHS = [443, 318, 309, 331, 375, 390, 291, 420, 273, 106, 308, 342, 386,
           436, 343, 67, 443, 339, 78, 304, 178, 387, 399, 368, 405, 156, 321,
           214, 92, 71, 217, 96]
MODEL, HEADS = 256, 4


def padded_step(q, k, v, target, mask, valid, backward):
    """One padded SDPA over the batch; the loss counts real frames only."""
    y = F.scaled_dot_product_attention(q, k, v, attn_mask=mask)
    if backward:
        loss = (((y - target) ** 2) * valid).sum()
        loss.backward()
    return y


def varlen_step(qs, ks, vs, targets, backward):
    """One SDPA per sequence on its own frames."""
    loss = 0.0
    for q, k, v, target in zip(qs, ks, vs, targets):
        y = F.scaled_dot_product_attention(q, k, v)
        if backward:
            loss = loss + ((y - target) ** 2).sum()
    if backward:
        loss.backward()


def timed(fn, repeats):
    fn()  # warm-up
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return statistics.median(times) * 1e3


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--threads", type=int, default=1)
    parser.add_argument("--repeats", type=int, default=5)
    args = parser.parse_args()
    torch.set_num_threads(args.threads)
    torch.manual_seed(0)
    batch, longest = len(LENGTHS), max(LENGTHS)
    head = MODEL // HEADS
    lengths = torch.tensor(LENGTHS)
    frames = torch.arange(longest)
    real = frames[None, :] < lengths[:, None]  # [B, T]
    # Keys a query may see: its own sequence's real frames.
    mask = real[:, None, None, :].expand(batch, 1, longest, longest)
    valid = real[:, None, :, None].float()

    def tensor(grad):
        return torch.randn(batch, HEADS, longest, head, requires_grad=grad)

    print(f"torch {torch.__version__}, {args.threads} thread(s), B = {batch}, "
          f"T_max = {longest}, N = {sum(LENGTHS)}, d_model {MODEL}, "
          f"{HEADS} heads")
    for backward in (False, True):
        q, k, v = tensor(backward), tensor(backward), tensor(backward)
        target = torch.randn(batch, HEADS, longest, head)
        split = [(q[b, :, :t].detach().clone().requires_grad_(backward),
                  k[b, :, :t].detach().clone().requires_grad_(backward),
                  v[b, :, :t].detach().clone().requires_grad_(backward),
                  target[b, :, :t]) for b, t in enumerate(LENGTHS)]
        qs, ks, vs, targets = map(list, zip(*split))
        context = torch.enable_grad if backward else torch.no_grad
        with context():
            padded = timed(lambda: padded_step(q, k, v, target, mask, valid,
                                               backward), args.repeats)
            varlen = timed(lambda: varlen_step(qs, ks, vs, targets, backward),
                           args.repeats)
        what = "forward+backward" if backward else "forward"
        print(f"{what}, padded (key-padding mask): {padded:.1f} ms")
        print(f"{what}, varlen (one call per sequence): {varlen:.1f} ms")


if __name__ == "__main__":
    main()
