"""Writes a Lhotse cut manifest (MonoCuts, one per utterance, the whole
recording) for a Kaldi data directory of mono WAV files, reading durations
with the wave module: nn-data-lhotse.mlir. Usage: make-cuts.py DIR OUT.jsonl"""
import json
import sys
import wave

directory, out = sys.argv[1:3]
paths = dict(line.split(maxsplit=1) for line in open(directory + "/wav.scp"))
with open(out, "w") as manifest:
    for line in open(directory + "/text"):
        utterance, text = line.rstrip("\n").split(" ", 1)
        path = paths[utterance].strip()
        with wave.open(path) as w:
            rate, frames = w.getframerate(), w.getnframes()
        duration = frames / rate
        cut = {
            "id": utterance, "start": 0.0, "duration": duration, "channel": 0,
            "supervisions": [{"id": utterance, "recording_id": utterance,
                              "start": 0.0, "duration": duration, "channel": 0,
                              "text": text}],
            "recording": {"id": utterance, "sampling_rate": rate,
                          "num_samples": frames, "duration": duration,
                          "channel_ids": [0],
                          "sources": [{"type": "file", "channels": [0],
                                       "source": path}]},
            "type": "MonoCut",
        }
        manifest.write(json.dumps(cut) + "\n")
