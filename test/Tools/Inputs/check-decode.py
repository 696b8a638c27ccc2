"""Checks nn-decode --json output against a dataset, computing everything
again in plain Python: each utterance's id (nn.id), its hypothesis (the
dataset array the graph returned), its reference, the Levenshtein
distance between them in labels or, with a vocabulary, in words, and the
corpus totals. Prints the summary line nn-decode prints on stderr (and a
decode stage after the dataset's name).

    check-decode.py DATA.npz OUT.jsonl HYP_ARRAY [VOCAB]
"""
import json
import os
import sys

import numpy as np

data_path, out_path, hyp_array = sys.argv[1:4]
vocab_path = sys.argv[4] if len(sys.argv) > 4 else None
data = np.load(data_path)
MARKER = "\u2581"


def ragged(name):
    values, lengths = data[name], data[name + ".lengths"]
    starts = np.concatenate([[0], np.cumsum(lengths)])
    return [list(map(int, values[starts[u]:starts[u + 1]])) for u in range(len(lengths))]


tokens = open(vocab_path, encoding="utf-8").read().split("\n") if vocab_path else None
if tokens and tokens[-1] == "":
    tokens.pop()


def units(labels):
    """Labels, or the words they spell: tokens joined, split at the marker
    when some token has one, else each token a word."""
    if tokens is None:
        return labels
    if any(MARKER in t for t in tokens):
        return [w for w in "".join(tokens[l] for l in labels).split(MARKER) if w]
    return [tokens[l] for l in labels]


def distance(a, b):
    row = list(range(len(b) + 1))
    for i in range(1, len(a) + 1):
        previous, row[0] = row[0], i
        for j in range(1, len(b) + 1):
            previous, row[j] = row[j], min(row[j] + 1, row[j - 1] + 1,
                                           previous + (a[i - 1] != b[j - 1]))
    return row[len(b)]


if "nn.id" in data.files:
    ids = ["".join(map(chr, cps)) for cps in ragged("nn.id")]
else:
    # Without nn.id, an utterance's id is its shard's name and position.
    stem = os.path.basename(data_path)[:-len(".npz")]
    ids = ["%s:%d" % (stem, u) for u in range(len(data["labels.lengths"]))]
hyps, refs = ragged(hyp_array), ragged("labels")
lines = [json.loads(l, parse_constant=lambda c: sys.exit("bare " + c))
         for l in open(out_path, encoding="utf-8")]
records, summary = lines[:-1], lines[-1]["summary"]
if len(records) != len(ids):
    sys.exit("%d records for %d utterances" % (len(records), len(ids)))
errors = length = 0
for record, uid, hyp, ref in zip(records, ids, hyps, refs):
    e, n = distance(units(hyp), units(ref)), len(units(ref))
    expected = {"utt": uid, "hyp": hyp, "ref": ref, "errors": e, "ref_len": n}
    if tokens is not None:
        expected["text"] = " ".join(map(str, units(hyp)))
        expected["ref_text"] = " ".join(map(str, units(ref)))
    for key, value in expected.items():
        if record.get(key) != value:
            sys.exit("%s: %s is %r, expected %r" % (uid, key, record.get(key), value))
    errors, length = errors + e, length + n
unit = "word" if tokens is not None else "label"
if (summary["utterances"], summary["errors"], summary["ref_len"], summary["unit"]) != (len(ids), errors, length, unit):
    sys.exit("summary %s, expected %d utterances, %d errors / %d" % (summary, len(ids), errors, length))
# Written with 9 significant digits.
if abs(summary["error_rate"] - errors / length) > 1e-8 * max(1, errors / length):
    sys.exit("error rate %s, expected %r" % (summary["error_rate"], errors / length))
print("%s error rate %.2f%% (%d errors / %d %ss, %d utterances)"
      % (unit, 100 * errors / length, errors, length, unit, len(ids)))
