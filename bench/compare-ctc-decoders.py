#!/usr/bin/env python3
"""CTC prefix beam search throughput: nn against the CPU decoders a user
would pick, on the same log-probabilities, in one run (not part of the
tests; docs/performance.md records the figures).

    python3 -m venv venv && venv/bin/pip install numpy pyctcdecode flashlight-text
    venv/bin/python bench/compare-ctc-decoders.py [--nn-bench build/bin/nn-bench]

The batch: 32 utterance lengths drawn (numpy seed 2024) from the
LibriSpeech lengths of bench/data, V = 500 (blank 0), log-probabilities
peaked like a trained model's: per frame the blank (70%) or a random
label 8 nats above standard-normal noise, log-softmaxed.

The decoders, with their pruning matched to nn's defaults (every token,
no score threshold) as far as each allows:
  * flashlight-text's LexiconFreeDecoder (what torchaudio's ctc_decoder
    with lexicon=None runs), ZeroLM: log_add=False is nn's merge max,
    log_add=True its merge sum; one decode call per utterance, as
    torchaudio makes them, one thread;
  * pyctcdecode (no language model), beam_prune_logp and token_min_logp
    set to -1000 (off), one utterance per call, one thread; pure Python,
    so it runs on the first 4 utterances only and is reported per frame;
  * nn: nn-bench's benchCtcBeamSearch on this file (--ctc-scores), at
    --threads 1 and 2 (nn splits the batch's sequences between threads).
"""
import argparse
import json
import os
import subprocess
import sys
import tempfile
import time

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
VOCAB, BATCH, BLANK = 500, 32, 0


def make_batch():
    rng = np.random.default_rng(2024)
    rows = [line.split() for line in
            open(os.path.join(HERE, "data", "librispeech-train-clean-100-lengths.txt"))
            if line.strip() and not line.startswith("#")]
    lengths = np.array([int(rows[i][0]) for i in rng.choice(len(rows), BATCH, replace=False)],
                       np.int32)
    padded = int(lengths.max())
    x = rng.standard_normal((BATCH, padded, VOCAB)).astype(np.float64)
    peak = np.where(rng.random((BATCH, padded)) < 0.7, BLANK,
                    rng.integers(1, VOCAB, (BATCH, padded)))
    np.put_along_axis(x, peak[..., None], np.take_along_axis(x, peak[..., None], -1) + 8.0, -1)
    x -= np.log(np.exp(x).sum(-1, keepdims=True))
    return x.astype(np.float32), lengths


def time_flashlight(x, lengths, beam, log_add):
    from flashlight.lib.text.decoder import (CriterionType, LexiconFreeDecoder,
                                             LexiconFreeDecoderOptions, ZeroLM)
    options = LexiconFreeDecoderOptions(beam, VOCAB, 1e30, 0.0, 0.0, log_add, CriterionType.CTC)
    decoder = LexiconFreeDecoder(options, ZeroLM(), BLANK, BLANK, [])
    rows = [np.ascontiguousarray(x[b, :lengths[b]]) for b in range(len(lengths))]
    start = time.perf_counter()
    for row in rows:
        decoder.decode(row.ctypes.data, row.shape[0], VOCAB)
    return lengths.sum() / (time.perf_counter() - start)


def time_pyctcdecode(x, lengths, beam, utterances=4):
    from pyctcdecode import build_ctcdecoder
    labels = [""] + [chr(0x4E00 + i) for i in range(VOCAB - 1)]
    decoder = build_ctcdecoder(labels)
    start = time.perf_counter()
    for b in range(utterances):
        decoder.decode_beams(x[b, :lengths[b]], beam_width=beam, beam_prune_logp=-1000.0,
                             token_min_logp=-1000.0)
    return lengths[:utterances].sum() / (time.perf_counter() - start)


def time_nn(nn_bench, path, threads):
    out = subprocess.run([nn_bench, "--threads", str(threads), "--ctc-scores", path,
                          "--benchmark_filter=benchCtcBeamSearch/(4|16)/[01]/0/",
                          "--benchmark_format=json"],
                         check=True, capture_output=True, text=True).stdout
    report = json.loads(out[out.index("{"):])
    rates = {}
    for bench in report["benchmarks"]:
        _, beam, merge, _ = bench["name"].split("/")[:4]
        rates[(int(beam), int(merge))] = bench["frames_per_s"]
    return rates


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--nn-bench", default=os.path.join(HERE, "..", "build", "bin", "nn-bench"))
    args = parser.parse_args()
    x, lengths = make_batch()
    with tempfile.TemporaryDirectory() as work:
        path = os.path.join(work, "scores.npz")
        np.savez(path, **{"x": x, "lengths.T": lengths})
        nn1 = time_nn(args.nn_bench, path, 1)
        nn2 = time_nn(args.nn_bench, path, 2)
    print(f"B = {BATCH}, V = {VOCAB}, frames = {lengths.sum()}, T_max = {lengths.max()}")
    print(f"{'beam':>4} {'merge':>5} {'nn 1 thread':>14} {'nn 2 threads':>14} "
          f"{'flashlight':>14} {'pyctcdecode':>14}   (frames/s)")
    for beam in (4, 16):
        for merge in (1, 0):
            flashlight = time_flashlight(x, lengths, beam, log_add=(merge == 0))
            py = time_pyctcdecode(x, lengths, beam) if merge == 0 else float("nan")
            print(f"{beam:>4} {'max' if merge else 'sum':>5} {nn1[(beam, merge)]:>14.0f} "
                  f"{nn2[(beam, merge)]:>14.0f} {flashlight:>14.0f} {py:>14.0f}")
    print("pyctcdecode merges beams by log-sum-exp (merge sum's row); flashlight's "
          "log_add=True is merge sum, False merge max.")


if __name__ == "__main__":
    sys.exit(main())
