"""nn-train --tensorboard: the event file is read by the tensorboard
package's own reader (EventAccumulator), holds the scalars the run printed
as JSON lines (same steps, same values to f32 precision), and its TFRecord
framing carries correct masked CRC-32C checksums (checked here with a
plain bitwise CRC, independent of the writer's table).

Run through ctest (pytest/tensorboard) with NN_BIN_DIR set to the build's
bin directory.
"""
import glob
import json
import os
import struct
import subprocess

import pytest
from tensorboard.backend.event_processing.event_accumulator import EventAccumulator

MODEL = """
nn.parameter @"out.w" : !nn.tensor<[4, 3], f32>
nn.graph @g(%features: !nn.tensor<[B, T, 3], f32>, %frame_labels: !nn.tensor<[B, T], i32>)
    dims [B: batch, T: seq(B)] {
  %w = nn.param_ref @"out.w" : !nn.tensor<[4, 3], f32>
  %l = nn.linear %features, %w : !nn.tensor<[B, T, 3], f32>, !nn.tensor<[4, 3], f32>
  %ce = nn.cross_entropy %l, %frame_labels from logits : !nn.tensor<[B, T, 4], f32>, !nn.tensor<[B, T], i32>
  nn.mark_loss %ce as "ce" normalize per_frame : !nn.tensor<[B, T], f32>
  %fe = nn.frame_error %l, %frame_labels : !nn.tensor<[B, T, 4], f32>, !nn.tensor<[B, T], i32>
  nn.mark_loss %fe as "fer" normalize per_frame as_error : !nn.tensor<[B, T], f32>
  nn.return
}
"""


def nn_train(*args):
    binary = os.path.join(os.environ["NN_BIN_DIR"], "nn-train")
    return subprocess.run([binary, *args], check=True, capture_output=True, text=True)


def crc32c(data):
    crc = 0xFFFFFFFF
    for byte in data:
        crc ^= byte
        for _ in range(8):
            crc = (crc >> 1) ^ 0x82F63B78 if crc & 1 else crc >> 1
    return crc ^ 0xFFFFFFFF


def masked(crc):
    return (((crc >> 15) | (crc << 17)) + 0xA282EAD8) & 0xFFFFFFFF


@pytest.fixture(scope="module")
def run(tmp_path_factory):
    work = tmp_path_factory.mktemp("tb")
    model = work / "model.mlir"
    model.write_text(MODEL)
    out = nn_train(str(model), "--synthetic", "segments", "--steps", "6",
                   "--epoch-steps", "3", "--dev-batches", "1", "--batch-size", "2",
                   "--seed", "3", "--json", "--tensorboard", str(work / "tb"))
    lines = [json.loads(line) for line in out.stdout.splitlines()]
    files = glob.glob(str(work / "tb" / "events.out.tfevents.*"))
    return lines, files


def test_crc32c_reference_value():
    assert crc32c(b"123456789") == 0xE3069283


def test_one_event_file_with_valid_framing(run):
    _, files = run
    assert len(files) == 1
    data = open(files[0], "rb").read()
    records = 0
    at = 0
    while at < len(data):
        header = data[at:at + 8]
        (length,) = struct.unpack("<Q", header)
        (length_crc,) = struct.unpack("<I", data[at + 8:at + 12])
        assert length_crc == masked(crc32c(header))
        payload = data[at + 12:at + 12 + length]
        (payload_crc,) = struct.unpack("<I", data[at + 12 + length:at + 16 + length])
        assert payload_crc == masked(crc32c(payload))
        at += 16 + length
        records += 1
    assert at == len(data)
    # The file version, 6 steps, 2 dev evaluations.
    assert records == 1 + 6 + 2


def test_tensorboard_reads_the_json_lines_values(run):
    lines, files = run
    accumulator = EventAccumulator(os.path.dirname(files[0]))
    accumulator.Reload()
    tags = set(accumulator.Tags()["scalars"])
    assert tags == {"train/ce", "train/fer", "train/lr", "train/grad_norm",
                    "train/frames_per_second", "dev/ce", "dev/fer"}

    def series(tag):
        return [(e.step, e.value) for e in accumulator.Scalars(tag)]

    steps = [line for line in lines if "eval" not in line]
    devs = [line for line in lines if line.get("eval") == "dev"]
    assert [s for s, _ in series("train/ce")] == [line["step"] for line in steps]
    for tag, key in (("train/lr", "lr"), ("train/grad_norm", "grad_norm")):
        for (step, value), line in zip(series(tag), steps):
            assert value == pytest.approx(line[key], rel=1e-6)
    for name in ("ce", "fer"):
        for (step, value), line in zip(series("train/" + name), steps):
            assert value == pytest.approx(line["losses"][name], rel=1e-6)
        got = series("dev/" + name)
        assert [s for s, _ in got] == [line["step"] for line in devs] == [3, 6]
        for (step, value), line in zip(got, devs):
            assert value == pytest.approx(line["losses"][name], rel=1e-6)
    assert all(value > 0 for _, value in series("train/frames_per_second"))


def test_unwritable_directory_is_an_error(tmp_path):
    blocker = tmp_path / "file"
    blocker.write_text("")
    model = tmp_path / "model.mlir"
    model.write_text(MODEL)
    binary = os.path.join(os.environ["NN_BIN_DIR"], "nn-train")
    result = subprocess.run([binary, str(model), "--synthetic", "segments", "--steps", "1",
                             "--batch-size", "2", "--tensorboard", str(blocker / "tb")],
                            capture_output=True, text=True)
    assert result.returncode != 0
    assert "--tensorboard: cannot create" in result.stderr
    assert str(blocker / "tb") in result.stderr


def test_stage_runs_write_one_tensorboard_run_per_train_stage(tmp_path):
    # The stage file of test/Tools/nn-train-stages.mlir: train 'ctc', align,
    # train 'ce' on the alignments, decode.
    inputs = os.path.join(os.path.dirname(__file__), "..", "Tools", "Inputs", "stages")
    for name in os.listdir(inputs):
        (tmp_path / name).write_bytes(open(os.path.join(inputs, name), "rb").read())
    nn_train("--stages", str(tmp_path / "stages.json"), "--tensorboard", str(tmp_path / "tb"))
    assert sorted(os.listdir(tmp_path / "tb")) == ["ce", "ctc"]
    expected = {"ctc": {"train/ctc", "dev/ctc"}, "ce": {"train/ce", "dev/ce", "dev/fer"}}
    for stage, losses in expected.items():
        accumulator = EventAccumulator(str(tmp_path / "tb" / stage))
        accumulator.Reload()
        tags = set(accumulator.Tags()["scalars"])
        assert losses | {"train/lr", "train/grad_norm", "train/frames_per_second"} <= tags, stage
        assert accumulator.Scalars("train/" + stage)[0].step == 1
