"""Checks an nn-train --json run under --lr newbob against the rules of
RETURNN's newbob_multi_epoch, recomputed here from the run's own dev
scores: one "learning_rate" event per epoch, before its first step, with
the rate and decision the rules give; every step trains at its epoch's
rate. Then, with a second file (a run interrupted and resumed), the
events and steps must be the same as the straight run's.

  check-newbob.py RUN.json SCORE INITIAL DECAY THRESHOLD EPOCHS MIN_EPOCHS [RESUMED.json]

SCORE is the dev loss the run scores with; the run uses interval 1,
growth 1, relative-lr 1 and min 0 (what the RUN lines pass)."""
import json
import math
import sys

path, score = sys.argv[1], sys.argv[2]
initial, decay, threshold = map(float, sys.argv[3:6])
window, hold = int(sys.argv[6]), int(sys.argv[7])


def load(name):
    return [json.loads(line) for line in open(name)]


records = load(path)
rates, scores, decisions = [], [], []
for record in records:
    if record.get("event") == "learning_rate":
        if record["epoch"] != len(rates) + 1:
            sys.exit("event for epoch %d after %d epochs" % (record["epoch"], len(rates)))
        # The rules, from the epochs before this one.
        expected, kind = (initial, "initial") if not rates else (rates[-1], "kept")
        held = hold > 1 and rates and (len(set(rates[-hold:])) > 1 or len(rates) < hold)
        last = list(zip(rates, scores))[-(window + 1):]
        if rates and not held and len(last) >= 2:
            relative = [(new - old) / abs(new) / (rate / initial)
                        for (_, old), (rate, new) in zip(last, last[1:])]
            mean = sum(relative) / len(relative)
            if mean > threshold:
                expected, kind = max(rates[-1] * decay, 0.0), "decayed"
            if "mean_relative_error" not in record or not math.isclose(record["mean_relative_error"], mean, rel_tol=1e-6):
                sys.exit("epoch %d: mean relative error %s, expected %s" % (record["epoch"], record.get("mean_relative_error"), mean))
        elif "mean_relative_error" in record:
            sys.exit("epoch %d: a mean relative error where none was computed" % record["epoch"])
        if record["decision"] != kind or abs(record["lr"] - expected) > 1e-12 * expected:
            sys.exit("epoch %d: %s %s, expected %s %s" % (record["epoch"], record["decision"], record["lr"], kind, expected))
        rates.append(record["lr"])
        decisions.append(kind)
    elif "eval" in record:
        # The epoch's score is its last dev evaluation.
        del scores[len(rates) - 1:]
        scores.append(record["losses"][score])
    elif record["lr"] != rates[-1]:
        sys.exit("step %d at lr %s, its epoch's rate is %s" % (record["step"], record["lr"], rates[-1]))
if "decayed" not in decisions:
    sys.exit("no epoch decayed: the run does not exercise the rule")
print("%d epochs, decisions %s" % (len(rates), " ".join(decisions)))

if len(sys.argv) > 8:
    # The resumed run: the same events and steps (its first part's last dev
    # evaluation, inside an epoch, is extra).
    def comparable(rs):
        return [r for r in rs if "eval" not in r]
    straight, resumed = comparable(records), comparable(load(sys.argv[8]))
    for a, b in zip(straight, resumed):
        a.pop("frames_per_s", None), b.pop("frames_per_s", None)
    if straight != resumed:
        sys.exit("the resumed run differs from the straight one")
    print("resumed run equal")
