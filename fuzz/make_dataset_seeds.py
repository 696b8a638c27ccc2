#!/usr/bin/env python3
"""Writes the seed corpus of nn-fuzz-dataset (fuzz/DatasetFuzzer.cpp says
the format): a valid two-shard dataset with an alignment overlay, one with
nn.keep leaving utterances out, and one with utterances without frames or
labels. Run from the repository root: python3 fuzz/make_dataset_seeds.py"""
import os
import struct

NAMES = ["features", "features.lengths", "frame_labels", "frame_labels.lengths",
         "labels", "labels.lengths", "weight", "half_labels",
         "half_labels.lengths", "nn.keep", "alignment", "alignment.lengths"]
F32, F64, I32, I64 = 0, 1, 2, 3
FORMAT = {F32: "<f", F64: "<d", I32: "<i", I64: "<q"}


def array(source, shard, name, dtype, shape, values):
    head = source | (shard << 2) | (NAMES.index(name) << 3)
    out = bytes([head, dtype | (len(shape) << 2)]) + bytes(shape)
    return out + b"".join(struct.pack(FORMAT[dtype], v) for v in values)


def shard(shard_index, frames, labels, keep=None, overlay=True):
    n, b = sum(frames), len(frames)
    half = [(t + 1) // 2 for t in frames]
    out = array(0, shard_index, "features", F32, [n, 3],
                [float(i % 7) for i in range(3 * n)])
    out += array(0, shard_index, "features.lengths", I32, [b], frames)
    out += array(0, shard_index, "frame_labels", I32, [n], [i % 5 for i in range(n)])
    out += array(0, shard_index, "frame_labels.lengths", I32, [b], frames)
    out += array(0, shard_index, "labels", I32, [sum(labels)],
                 [1 + i % 4 for i in range(sum(labels))])
    out += array(0, shard_index, "labels.lengths", I64, [b], labels)
    out += array(0, shard_index, "weight", F32, [b], [1.0] * b)
    out += array(0, shard_index, "half_labels", I32, [sum(half)], [0] * sum(half))
    out += array(0, shard_index, "half_labels.lengths", I32, [b], half)
    if overlay:
        out += array(1, shard_index, "alignment", I32, [n], [i % 5 for i in range(n)])
        out += array(1, shard_index, "alignment.lengths", I32, [b], frames)
    if keep is not None:
        out += array(1, shard_index, "nn.keep", I32, [b], keep)
    return out


def main():
    directory = os.path.join(os.path.dirname(__file__), "corpus", "dataset")
    os.makedirs(directory, exist_ok=True)
    seeds = {
        "two-shards-overlay": shard(0, [4, 2, 5], [2, 1, 3]) + shard(1, [3, 6], [1, 2]),
        "keep": shard(0, [4, 2, 5, 3], [2, 1, 3, 1], keep=[1, 0, 1, 0]),
        "empty-utterances": shard(0, [4, 0, 3, 0], [2, 1, 0, 0]),
    }
    for name, data in seeds.items():
        with open(os.path.join(directory, name + ".bin"), "wb") as f:
            f.write(data)


if __name__ == "__main__":
    main()
