#!/usr/bin/env python3
"""Times kaldi-native-fbank on the samples nn-fbank-bench uses (the fixture
unittests/data/audio/tones16k.wav repeated 40 times: 10 s at 16 kHz), with
compute-fbank-feats' defaults (dither 0) and 23 and 80 mel bins, on one
thread. Prints seconds of audio per second of wall time (best of --repeats),
to compare with nn-fbank-bench's audio_s_per_s (docs/audio.md).

    /tmp/fbank-venv/bin/python bench/fbank-knf-timing.py
"""

import argparse
import os
import time

import kaldi_native_fbank as knf
import numpy as np
import soundfile

HERE = os.path.dirname(os.path.abspath(__file__))


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--repeats", type=int, default=20)
    args = parser.parse_args()
    path = os.path.join(HERE, "..", "unittests", "data", "audio",
                        "tones16k.wav")
    samples, rate = soundfile.read(path, dtype="int16")
    # Kaldi's units: 16-bit integer values as floats.
    samples = np.tile(samples.astype(np.float32), 40)
    seconds = len(samples) / rate
    print("kaldi-native-fbank", knf.__version__)
    for bins in (23, 80):
        opts = knf.FbankOptions()
        opts.frame_opts.dither = 0.0
        opts.mel_opts.num_bins = bins
        best = float("inf")
        for _ in range(args.repeats):
            start = time.perf_counter()
            # OnlineFbank computes the frames as the samples arrive.
            fbank = knf.OnlineFbank(opts)
            fbank.accept_waveform(rate, samples)
            fbank.input_finished()
            best = min(best, time.perf_counter() - start)
        assert fbank.num_frames_ready == 998, fbank.num_frames_ready
        print(f"bins={bins}: {best * 1e3:.3f} ms for {seconds:.1f} s, "
              f"audio_s_per_s {seconds / best:.0f}")


if __name__ == "__main__":
    main()
