"""Checks an alignment overlay an align stage wrote next to a dataset: one
shard per data shard, named alike; per utterance an alignment as long as
its features, classes in [0, classes), and a finite best-path score."""
import os
import sys

import numpy as np

data, overlay, classes = sys.argv[1], sys.argv[2], int(sys.argv[3])
shards = sorted(f for f in os.listdir(data) if f.endswith(".npz"))
if sorted(f for f in os.listdir(overlay) if f.endswith(".npz")) != shards:
    sys.exit("overlay shards %s, data shards %s" % (os.listdir(overlay), shards))
utterances = frames = 0
for shard in shards:
    d, o = np.load(os.path.join(data, shard)), np.load(os.path.join(overlay, shard))
    if sorted(o.files) != ["alignment", "alignment.lengths", "alignment.score"]:
        sys.exit("overlay arrays %s" % o.files)
    if not np.array_equal(o["alignment.lengths"], d["features.lengths"]):
        sys.exit("alignment lengths differ from the features'")
    a = o["alignment"]
    if a.dtype != np.int32 or a.min() < 0 or a.max() >= classes:
        sys.exit("alignment classes outside [0, %d)" % classes)
    if not np.all(np.isfinite(o["alignment.score"])):
        sys.exit("a best-path score is not finite")
    utterances += len(o["alignment.lengths"])
    frames += len(a)
print("%d shards, %d utterances, %d frames aligned" % (len(shards), utterances, frames))
