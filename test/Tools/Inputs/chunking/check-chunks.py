"""Checks a chunked nn-train run (--json, one epoch, --batch-size N) on a
dataset: as many steps as batches of N chunks, the chunks counted as
docs/training.md states the rule (starts 0, STEP, 2 STEP, ... until a
chunk reaches the end), written here from that statement; and the dev
evaluation over whole utterances. Prints the counts."""
import json
import sys

import numpy as np

data, log, size, step, batch = sys.argv[1], sys.argv[2], *map(int, sys.argv[3:6])
lengths = np.load(data)["features.lengths"]
chunks = 0
for length in lengths:
    start = 0
    while True:
        chunks += 1
        if start + size >= length:
            break
        start += step
steps, evals = [], []
for line in open(log):
    record = json.loads(line)
    (evals if "eval" in record else steps).append(record)
expected = -(-chunks // batch)
if len(steps) != expected:
    sys.exit("%d steps, expected %d (%d chunks of %d utterances)" %
             (len(steps), expected, chunks, len(lengths)))
print("%d utterances, %d chunks, %d steps, %d dev evaluations" %
      (len(lengths), chunks, len(steps), len(evals)))
