"""Checks that a training run learned: its last dev evaluation's character
and word error rates (`cer`, `wer` in nn-train's plain log) are below the
given bounds, and below its first evaluation's.

Usage: learned.py TRAIN_LOG MAX_CER MAX_WER
"""
import re
import sys

log, max_cer, max_wer = sys.argv[1], float(sys.argv[2]), float(sys.argv[3])
dev = re.findall(r"^dev after step (\d+): .*\bcer ([0-9.]+) wer ([0-9.]+)",
                 open(log).read(), re.M)
if len(dev) < 2:
    sys.exit("fewer than two dev evaluations in " + log)
first, last = dev[0], dev[-1]
cer, wer = float(last[1]), float(last[2])
if not cer < float(first[1]) or not wer <= float(first[2]):
    sys.exit(f"dev did not improve: cer {first[1]} -> {cer}, wer {first[2]} -> {wer}")
if cer > max_cer or wer > max_wer:
    sys.exit(f"dev after step {last[0]}: cer {cer} (at most {max_cer}), wer {wer} (at most {max_wer})")
print(f"dev after step {last[0]}: cer {cer} <= {max_cer}, wer {wer} <= {max_wer}")
