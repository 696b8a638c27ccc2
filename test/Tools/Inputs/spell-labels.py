"""Spells each utterance's labels of an imported dataset back as words
with a tokens.txt alone (pieces concatenated, "▁" starting a word, as
nn-decode --vocab does) and checks them against the Kaldi `text` file
(nn-data-bpe.mlir). Usage: spell-labels.py DATA.npz TOKENS TEXT"""
import sys

import numpy as np

data, tokens_path, text_path = sys.argv[1:4]
tokens = open(tokens_path, encoding="utf-8").read().split("\n")
if tokens[-1] == "":
    tokens.pop()
z = np.load(data)
labels, label_lengths = z["labels"], z["labels.lengths"]
ids, id_lengths = z["nn.id"], z["nn.id.lengths"]
text = {}
for line in open(text_path, encoding="utf-8"):
    key, _, rest = line.strip().partition(" ")
    text[key] = " ".join(rest.split())

at = id_at = 0
for n, id_n in zip(label_lengths, id_lengths):
    utterance = "".join(chr(c) for c in ids[id_at:id_at + id_n])
    pieces = [tokens[label] for label in labels[at:at + n]]
    assert all(label >= 2 for label in labels[at:at + n]), utterance
    spelled = " ".join("".join(pieces).replace("\u2581", " ").split())
    assert spelled == text[utterance], (utterance, spelled, text[utterance])
    at += n
    id_at += id_n
print("spelled %d utterances back" % len(label_lengths))
