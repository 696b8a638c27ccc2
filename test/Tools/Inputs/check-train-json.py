"""Checks nn-train --json output: one object per step with the contract's
keys (step, lr, grad_norm, losses by name), steps numbered first..last,
and dev evaluations as objects with "eval"."""
import json
import sys

path, first, last, names = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), sys.argv[4].split(",")
steps, evals = [], []
for line in open(path):
    record = json.loads(line, parse_constant=lambda c: sys.exit("bare " + c))
    (evals if "eval" in record else steps).append(record)
for record in steps:
    missing = {"step", "lr", "grad_norm", "losses"} - record.keys()
    if missing:
        sys.exit("step object without %s: %s" % (sorted(missing), record))
    if sorted(record["losses"]) != sorted(names):
        sys.exit("losses %s, expected %s" % (sorted(record["losses"]), names))
numbers = [record["step"] for record in steps]
if numbers != list(range(first, last + 1)):
    sys.exit("steps %s, expected %d..%d" % (numbers, first, last))
for record in evals:
    if record["eval"] != "dev" or sorted(record["losses"]) != sorted(names):
        sys.exit("bad dev record %s" % record)
print("steps %d..%d, %d dev evaluations" % (first, last, len(evals)))
