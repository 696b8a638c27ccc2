#!/usr/bin/env python3
"""Writes the audio fixtures of unittests/AudioTest.cpp and their reference
log-mel features.

Made-up signals (seeded): WAV files are written with Python's `wave`
module from numpy int16 arrays, FLAC files with the `soundfile` package;
each file's samples are also saved as .npy (int32 values of the
int16 samples), which the reader tests
compare against. The reference features come from kaldi-native-fbank
(version checked below), which reproduces Kaldi's compute-fbank-feats; it is
fed the int16 values as floats, as Kaldi reads them. The C++ test lists
the same cases (name, file, options) as CASES here.

    python3 -m venv /tmp/fbank-venv
    /tmp/fbank-venv/bin/pip install numpy kaldi-native-fbank==1.23.0 soundfile
    /tmp/fbank-venv/bin/python unittests/data/audio/make_reference.py
"""

import os
import wave

import kaldi_native_fbank as knf
import numpy as np
import soundfile

REFERENCE = "kaldi-native-fbank"
REFERENCE_VERSION = "1.23.0"
HERE = os.path.dirname(os.path.abspath(__file__))


def write_wav(name, rate, samples):
    """samples: int16 [frames] or [frames, channels]."""
    channels = 1 if samples.ndim == 1 else samples.shape[1]
    with wave.open(os.path.join(HERE, name), "wb") as out:
        out.setnchannels(channels)
        out.setsampwidth(2)
        out.setframerate(rate)
        out.writeframes(samples.astype("<i2").tobytes())


def write_flac(name, rate, samples):
    soundfile.write(os.path.join(HERE, name), samples, rate, subtype="PCM_16",
                    format="FLAC")


def signals():
    rng = np.random.default_rng(31)
    t16 = np.arange(4000) / 16000.0  # 0.25 s
    tones = 6000 * np.sin(2 * np.pi * 440 * t16) + \
        3000 * np.sin(2 * np.pi * 1875 * t16) + 300 * rng.standard_normal(4000)
    t8 = np.arange(2400) / 8000.0  # 0.3 s
    chirp = 8000 * np.sin(2 * np.pi * (200 + 1500 * t8) * t8) + \
        800 * rng.standard_normal(2400)
    clipped = np.clip(60000 * np.sin(2 * np.pi * 300 * t16[:3200]), -32768,
                      32767)
    short = 2000 * rng.standard_normal(399)  # one sample short of a frame
    stereo = np.stack([tones[:1600], -0.5 * tones[:1600]], axis=1)
    as16 = lambda x: np.round(x).clip(-32768, 32767).astype(np.int16)
    return {
        "tones16k.wav": (16000, as16(tones), write_wav),
        "chirp8k.flac": (8000, as16(chirp), write_flac),
        "clipped16k.flac": (16000, as16(clipped), write_flac),
        "silence16k.wav": (16000, np.zeros(1600, np.int16), write_wav),
        "short16k.wav": (16000, as16(short), write_wav),
        "stereo16k.wav": (16000, as16(stereo), write_wav),
    }


# name, file, options that differ from compute-fbank-feats' defaults
# (dither is always 0).
CASES = [
    ("tones16k-default", "tones16k.wav", {}),
    ("tones16k-80bins-hamming", "tones16k.wav",
     {"num_bins": 80, "window_type": "hamming"}),
    ("tones16k-40bins-hanning-energy", "tones16k.wav",
     {"num_bins": 40, "window_type": "hanning", "use_energy": True}),
    ("tones16k-rectangular-magnitude", "tones16k.wav",
     {"window_type": "rectangular", "use_power": False,
      "round_to_power_of_two": False, "low_freq": 64, "high_freq": -400}),
    ("chirp8k-default", "chirp8k.flac", {"samp_freq": 8000}),
    ("chirp8k-no-snip-edges", "chirp8k.flac",
     {"samp_freq": 8000, "snip_edges": False}),
    ("clipped16k-default", "clipped16k.flac", {}),
    ("silence16k-default", "silence16k.wav", {}),
    ("short16k-default", "short16k.wav", {}),
    ("short16k-no-snip-edges", "short16k.wav", {"snip_edges": False}),
]

FRAME_OPTIONS = {"samp_freq", "window_type", "snip_edges",
                 "round_to_power_of_two"}
MEL_OPTIONS = {"num_bins", "low_freq", "high_freq"}


def reference_fbank(samples, rate, overrides):
    opts = knf.FbankOptions()
    opts.frame_opts.dither = 0.0
    for key, value in overrides.items():
        if key in FRAME_OPTIONS:
            setattr(opts.frame_opts, key, value)
        elif key in MEL_OPTIONS:
            setattr(opts.mel_opts, key, value)
        else:
            setattr(opts, key, value)
    assert opts.frame_opts.samp_freq == rate
    fbank = knf.OnlineFbank(opts)
    fbank.accept_waveform(rate, samples.astype(np.float32).tolist())
    fbank.input_finished()
    frames = [fbank.get_frame(i) for i in range(fbank.num_frames_ready)]
    return np.array(frames, np.float32).reshape(len(frames), fbank.dim)


def main():
    assert knf.__version__ == REFERENCE_VERSION, knf.__version__
    files = signals()
    for name, (rate, samples, writer) in files.items():
        writer(name, rate, samples)
        # int32: the runtime's .npy reader takes f4, f8, i4 and i8.
        np.save(os.path.join(HERE, os.path.splitext(name)[0] + "-samples.npy"),
                samples.astype(np.int32))
    for case, name, overrides in CASES:
        rate, samples, _ = files[name]
        frames = reference_fbank(samples, rate, overrides)
        np.save(os.path.join(HERE, "fbank-" + case + ".npy"), frames)
        print(case, frames.shape)
    print("reference:", REFERENCE, knf.__version__)


if __name__ == "__main__":
    main()
