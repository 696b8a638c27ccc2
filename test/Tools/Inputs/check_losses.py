"""Compares nn-run --json output with expected sums (relative 1e-5)."""
import json
import sys

got = {l["name"]: l for l in json.load(open(sys.argv[1]))["losses"]}
expected = json.load(open(sys.argv[2]))
for name, want in expected.items():
    loss = got[name]
    assert loss["normalization"] == want["normalization"], (name, loss, want)
    assert abs(loss["sum"] - want["sum"]) <= 1e-5 * abs(want["sum"]), (name, loss, want)
    print(name, "ok", loss["sum"], want["sum"])
