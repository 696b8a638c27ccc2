"""Checks that nn-train's last dev `wer` (the word error rate the graph
computes, nn.edit_distance ... words) is the one nn-decode --vocab reports
for the same checkpoint (the host scorer over the vocabulary's words).

Usage: same-wer.py TRAIN_LOG DECODE_LOG
"""
import re
import sys

train_log, decode_log = sys.argv[1], sys.argv[2]
dev = re.findall(r"^dev after step \d+: .*\bwer ([0-9.]+)", open(train_log).read(), re.M)
if not dev:
    sys.exit("no dev wer in " + train_log)
decoded = re.search(r"word error rate [0-9.]+% \((\d+) errors / (\d+) words",
                    open(decode_log).read())
if not decoded:
    sys.exit("no word error rate in " + decode_log)
errors, words = int(decoded.group(1)), int(decoded.group(2))
in_graph = float(dev[-1])
# nn-train prints 4 decimals.
if abs(in_graph - errors / words) > 5e-5:
    sys.exit(f"nn-train dev wer {in_graph} differs from nn-decode's {errors}/{words}")
print(f"same word error rate: {errors}/{words}")
