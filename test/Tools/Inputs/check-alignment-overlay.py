"""Checks an alignment overlay an align stage wrote next to a dataset: one
shard per data shard, named alike; per utterance kept (nn.keep 1) an
alignment as long as its features, classes in [0, classes), and a finite
best-path score; per utterance left out none. Prints the counts."""
import os
import sys

import numpy as np

data, overlay, classes = sys.argv[1], sys.argv[2], int(sys.argv[3])
shards = sorted(f for f in os.listdir(data) if f.endswith(".npz"))
if sorted(f for f in os.listdir(overlay) if f.endswith(".npz")) != shards:
    sys.exit("overlay shards %s, data shards %s" % (os.listdir(overlay), shards))
utterances = frames = left_out = 0
for shard in shards:
    d, o = np.load(os.path.join(data, shard)), np.load(os.path.join(overlay, shard))
    if sorted(o.files) != ["alignment", "alignment.lengths", "alignment.score", "nn.keep"]:
        sys.exit("overlay arrays %s" % o.files)
    keep = o["nn.keep"].astype(bool)
    lengths = o["alignment.lengths"]
    if not np.array_equal(lengths[keep], d["features.lengths"][keep]):
        sys.exit("alignment lengths differ from the features'")
    if np.any(lengths[~keep] != 0):
        sys.exit("an utterance left out has frames")
    a = o["alignment"]
    if a.dtype != np.int32 or (len(a) and (a.min() < 0 or a.max() >= classes)):
        sys.exit("alignment classes outside [0, %d)" % classes)
    if not np.all(np.isfinite(o["alignment.score"][keep])):
        sys.exit("a best-path score is not finite")
    utterances += int(keep.sum())
    left_out += int((~keep).sum())
    frames += len(a)
print("%d shards, %d utterances, %d frames aligned, %d left out"
      % (len(shards), utterances, frames, left_out))
