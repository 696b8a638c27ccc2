"""How an alignment overlay (an align stage's output) fits the segment
task's truth: the share of labels whose aligned frame (the first frame of
the label's run with the CTC topology's loop, --rna: the frame emitting
it) lies inside its true segment, and the alignment's frame error against
the true frame labels.

  python3 bench/alignment_stats.py WORK/data/dev.align/shard-00000.npz \\
      WORK/data/dev/shard-00000.npz [--rna]
"""
import sys

import numpy as np

overlay, data = np.load(sys.argv[1]), np.load(sys.argv[2])
rna = "--rna" in sys.argv[3:]
path, frames = overlay["alignment"], overlay["alignment.lengths"]
segments, counts = data["segments"], data["segments.lengths"]
row = segment = labels = inside = 0
for length, count in zip(frames, counts):
    classes = path[row:row + length]
    starts = [t for t in range(length)
              if classes[t] > 0 and (rna or t == 0 or classes[t - 1] != classes[t])]
    assert len(starts) == count, "one aligned frame per label"
    for t, (begin, end) in zip(starts, segments[segment:segment + count]):
        labels += 1
        inside += begin <= t < end
    row += length
    segment += count
truth = data["frame_labels"]
print("%d labels, %.3f inside their segment; frame error against the true "
      "frame labels %.3f; blank share %.3f (true %.3f)"
      % (labels, inside / labels, (path != truth).mean(), (path == 0).mean(),
         (truth == 0).mean()))
