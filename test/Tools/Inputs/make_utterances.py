"""Writes a folder of per-utterance .npy files, <utt>.<array>.npy, as an
ASR user has them: features [T, 12] f32, frame_labels [T] and labels [U]
i32 (classes 1..5, 0 being silence / the CTC blank). With --drop NAME the
last utterance lacks that array."""
import os
import sys

import numpy as np

out = sys.argv[1]
drop = sys.argv[3] if len(sys.argv) > 3 and sys.argv[2] == "--drop" else None
os.makedirs(out, exist_ok=True)
rng = np.random.default_rng(1)
for u in range(6):
    frames, count = 5 + 3 * u, 1 + u % 3
    arrays = {
        "features": rng.standard_normal((frames, 12)).astype(np.float32),
        "frame_labels": rng.integers(0, 6, frames).astype(np.int32),
        "labels": rng.integers(1, 6, count).astype(np.int32),
    }
    for name, value in arrays.items():
        if u == 5 and name == drop:
            continue
        np.save(os.path.join(out, "utt%02d.%s.npy" % (u, name)), value)
