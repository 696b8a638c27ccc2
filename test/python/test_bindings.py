"""The Python bindings (python/, the package `nn`): compiling, running on
numpy arrays, gradients, train steps, checkpoints, datasets and errors,
each checked against a plain float64 numpy reference or against what the
C++ tools do with the same files."""

import os
import pathlib
import subprocess
import sys
import threading
import time

import numpy as np
import pytest

import nn

ROOT = pathlib.Path(__file__).resolve().parents[2]
BIN = pathlib.Path(os.environ.get("NN_BIN_DIR", ROOT / "build" / "bin"))
SMALL_MODEL = ROOT / "test" / "Tools" / "Inputs" / "segments-small.mlir"

# tanh(x W^T + b), its squared error against y per frame, normalized by the
# frames.
TANH_MSE = """
nn.parameter @"w" : !nn.tensor<[3, 4], f32>
nn.parameter @"b" : !nn.tensor<[3], f32>
nn.graph @model(%x: !nn.tensor<[B, T, 4], f32>, %y: !nn.tensor<[B, T, 3], f32>)
    -> !nn.tensor<[B, T, 3], f32> dims [B: batch, T: seq(B)] {
  %w = nn.param_ref @"w" : !nn.tensor<[3, 4], f32>
  %b = nn.param_ref @"b" : !nn.tensor<[3], f32>
  %h = nn.linear %x, %w, %b : !nn.tensor<[B, T, 4], f32>,
      !nn.tensor<[3, 4], f32>, !nn.tensor<[3], f32>
  %r = nn.tanh %h : !nn.tensor<[B, T, 3], f32>
  %l = nn.mse %r, %y : !nn.tensor<[B, T, 3], f32>, !nn.tensor<[B, T, 3], f32>
  nn.mark_loss %l as "mse" normalize per_frame : !nn.tensor<[B, T], f32>
  nn.return %r : !nn.tensor<[B, T, 3], f32>
}
"""

# Every dtype the runtime runs, in and out unchanged.
PASS_THROUGH = """
nn.graph @pass(%a: !nn.tensor<[B, T, 2], f32>, %b: !nn.tensor<[B, T, 2], f64>,
               %c: !nn.tensor<[B, T], i32>, %d: !nn.tensor<[B, T], i64>)
    -> (!nn.tensor<[B, T, 2], f32>, !nn.tensor<[B, T, 2], f64>,
        !nn.tensor<[B, T], i32>, !nn.tensor<[B, T], i64>)
    dims [B: batch, T: seq(B)] {
  nn.return %a, %b, %c, %d : !nn.tensor<[B, T, 2], f32>,
      !nn.tensor<[B, T, 2], f64>, !nn.tensor<[B, T], i32>,
      !nn.tensor<[B, T], i64>
}
"""


def tanh_mse_batch(rng, lengths):
    """A padded batch with NaN in the padding (it must not leak)."""
    b, t = len(lengths), max(lengths)
    x = rng.standard_normal((b, t, 4)).astype(np.float32)
    y = rng.standard_normal((b, t, 3)).astype(np.float32)
    for i, n in enumerate(lengths):
        x[i, n:] = np.nan
        y[i, n:] = np.nan
    return x, y


def tanh_mse_reference(params, x, y, lengths):
    """Outputs at the real frames, the loss and its gradients, in float64."""
    w = params["w"].astype(np.float64)
    b = params["b"].astype(np.float64)
    frames = [(i, j) for i, n in enumerate(lengths) for j in range(n)]
    xs = np.array([x[i, j] for i, j in frames], dtype=np.float64)
    ys = np.array([y[i, j] for i, j in frames], dtype=np.float64)
    r = np.tanh(xs @ w.T + b)
    loss = ((r - ys) ** 2).sum() / len(frames)
    g = 2 * (r - ys) * (1 - r**2) / len(frames)
    return frames, r, loss, g.T @ xs, g.sum(axis=0)


def test_run_and_gradients_match_a_float64_reference():
    exe = nn.compile(TANH_MSE, grads=True).load()
    assert [i.name for i in exe.manifest.inputs] == ["x", "y"]
    assert exe.manifest.inputs[0].axes == ["B", "T", 4]
    assert exe.manifest.inputs[0].dtype == "f32"
    assert [p.name for p in exe.manifest.parameters] == ["w", "b"]
    assert exe.runs_on_host and exe.device == "cpu"
    params = nn.init_parameters(exe.manifest, seed=3)
    params["b"] = np.array([0.1, -0.2, 0.3], dtype=np.float32)
    lengths = [5, 1, 3]
    x, y = tanh_mse_batch(np.random.default_rng(0), lengths)
    for pack in (True, False):
        exe = nn.compile(TANH_MSE, grads=True, pack=pack).load()
        result = exe.run({"x": x, "y": y}, {"T": lengths}, params)
        frames, r, loss, dw, db = tanh_mse_reference(params, x, y, lengths)
        out = result.outputs["result0"]
        assert out.shape == (3, 5, 3) and out.dtype == np.float32
        got = np.array([out[i, j] for i, j in frames])
        np.testing.assert_allclose(got, r, rtol=1e-5, atol=1e-6)
        mse = result.loss("mse")
        assert mse.value == pytest.approx(loss, rel=1e-5)
        assert mse.normalization == len(frames)
        np.testing.assert_allclose(result.gradients["w"], dw, rtol=1e-4, atol=1e-6)
        np.testing.assert_allclose(result.gradients["b"], db, rtol=1e-4, atol=1e-6)
        assert result.outputs["grad:w"] is result.gradients["w"]


def test_every_dtype_in_and_out():
    exe = nn.compile(PASS_THROUGH).load()
    inputs = {
        "a": np.arange(12, dtype=np.float32).reshape(2, 3, 2) / 7,
        "b": np.arange(12, dtype=np.float64).reshape(2, 3, 2) / 3,
        "c": np.arange(6, dtype=np.int32).reshape(2, 3) - 3,
        "d": np.arange(6, dtype=np.int64).reshape(2, 3) + 2**40,
    }
    result = exe.run(inputs, {"T": [3, 3]})
    for i, name in enumerate("abcd"):
        out = result.outputs[f"result{i}"]
        assert out.dtype == inputs[name].dtype
        np.testing.assert_array_equal(out, inputs[name])
        assert out.flags.writeable and out.flags.c_contiguous


def test_non_contiguous_arrays_are_copied_and_give_the_same_result():
    exe = nn.compile(PASS_THROUGH).load()
    big = np.arange(48, dtype=np.float32).reshape(2, 6, 4)
    a = big[:, ::2, ::2]  # strided view
    b = np.asfortranarray(np.arange(12, dtype=np.float64).reshape(2, 3, 2))
    c = np.arange(6, dtype=">i4").reshape(2, 3)  # big-endian
    d = np.arange(6, dtype=np.int64).reshape(3, 2).T  # transposed
    result = exe.run({"a": a, "b": b, "c": c, "d": d}, {"T": [3, 2]})
    for i, given in enumerate((a, b, c, d)):
        np.testing.assert_array_equal(result.outputs[f"result{i}"][:, :2],
                                      np.asarray(given)[:, :2])
    # Lists become arrays of the manifest's dtype.
    listed = exe.run({"a": a.tolist(), "b": b.tolist(), "c": [[0, 1, 2], [3, 4, 5]],
                      "d": [[0, 1, 2], [3, 4, 5]]}, {"T": np.array([3, 2])})
    assert listed.outputs["result2"].dtype == np.int32


def test_outputs_outlive_the_run_and_the_executable():
    exe = nn.compile(TANH_MSE, grads=True).load()
    params = nn.init_parameters(exe.manifest, seed=1)
    x, y = tanh_mse_batch(np.random.default_rng(1), [2, 2])
    result = exe.run({"x": x, "y": y}, {"T": [2, 2]}, params)
    grad = result.gradients["w"]
    expected = grad.copy()
    del result, exe
    import gc

    gc.collect()
    np.testing.assert_array_equal(grad, expected)
    grad += 1  # writable, owned by the array now
    np.testing.assert_array_equal(grad, expected + 1)


def test_bad_inputs_raise_errors_naming_what_is_wrong():
    exe = nn.compile(TANH_MSE).load()
    params = nn.init_parameters(exe.manifest, seed=1)
    x, y = tanh_mse_batch(np.random.default_rng(2), [2, 1])
    with pytest.raises(nn.Error) as error:
        exe.run({"x": x.astype(np.float64), "y": y}, {"T": [2, 1]}, params)
    assert error.value.code == "INVALID_ARGUMENT"
    assert "'x'" in error.value.message and "f64" in error.value.message
    with pytest.raises(TypeError, match="input 'y': numpy dtype float16"):
        exe.run({"x": x, "y": y.astype(np.float16)}, {"T": [2, 1]}, params)
    with pytest.raises(nn.Error, match="'b'"):
        exe.run({"x": x, "y": y}, {"T": [2, 1]}, {"w": params["w"]})
    with pytest.raises(nn.Error, match="'T'"):
        exe.run({"x": x, "y": y}, {"T": [3, 1]}, params)
    with pytest.raises(ValueError, match="lengths of 'T': entry 1 is -1"):
        exe.run({"x": x, "y": y}, {"T": [2, -1]}, params)
    with pytest.raises(TypeError, match="lengths of 'T'"):
        exe.run({"x": x, "y": y}, {"T": [[2, 1]]}, params)
    ints = nn.compile(PASS_THROUGH).load()
    with pytest.raises(TypeError, match="input 'c': floats given for a i32 input"):
        ints.run({"a": np.zeros((1, 1, 2), np.float32),
                  "b": np.zeros((1, 1, 2)), "c": [[1.5]], "d": [[1]]}, {"T": [1]})


def test_compile_errors_carry_the_location_and_the_code():
    broken = TANH_MSE.replace("nn.tanh %h", "nn.tanh %missing")
    with pytest.raises(nn.Error) as error:
        nn.compile(broken, name="model.mlir")
    assert error.value.code == "INVALID_ARGUMENT"
    assert "model.mlir:10:" in str(error.value)
    assert "missing" in str(error.value)
    with pytest.raises(nn.Error) as error:
        nn.compile_file(str(ROOT / "no-such-model.mlir"))
    assert error.value.code == "NOT_FOUND"
    with pytest.raises(nn.Error) as error:
        nn.load(str(ROOT / "no-such-artifact.so"))
    assert "no-such-artifact.so" in str(error.value)


def test_options_are_keywords_checked_like_flags():
    with pytest.raises(ValueError, match="unknown optimizer 'lion' "
                       r"\(expected sgd, adam or adamw\)"):
        nn.compile(TANH_MSE, grads=True, train_step=True, optimizer="lion")
    with pytest.raises(TypeError, match="pack: expected True or False"):
        nn.compile(TANH_MSE, pack=1)
    with pytest.raises(TypeError, match="unknown keyword argument 'packing'"):
        nn.compile(TANH_MSE, packing=False)
    with pytest.raises(ValueError, match="losses: the scale of 'mse'"):
        nn.compile(TANH_MSE, grads=True, losses={"mse": -1})
    with pytest.raises(nn.Error, match="nope"):
        nn.compile(TANH_MSE, grads=True, losses=["nope"])
    artifact = nn.compile(TANH_MSE, entry="model", target="cpu", threads=False,
                          gemm_library="openblas", pack_frontier="earliest")
    assert artifact.manifest.graph == "model"


def test_the_gil_is_released_while_compiled_code_runs():
    exe = nn.compile_file(str(SMALL_MODEL), grads=True).load()
    params = nn.init_parameters(exe.manifest, seed=0)
    rng = np.random.default_rng(0)
    b, t, u = 16, 400, 40
    inputs = {
        "features": rng.standard_normal((b, t, 12)).astype(np.float32),
        "frame_labels": rng.integers(0, 6, (b, t)).astype(np.int32),
        "labels": rng.integers(1, 6, (b, u)).astype(np.int32),
    }
    lengths = {"T": [t] * b, "U": [u] * b}
    ticks = []
    stop = threading.Event()

    def tick():
        while not stop.is_set():
            ticks.append(time.perf_counter())
            time.sleep(0.001)

    previous = sys.getswitchinterval()
    sys.setswitchinterval(0.001)
    thread = threading.Thread(target=tick)
    thread.start()
    try:
        for _ in range(3):
            start = time.perf_counter()
            exe.run(inputs, lengths, params)
            end = time.perf_counter()
            if end - start > 0.05:
                break
    finally:
        stop.set()
        thread.join()
        sys.setswitchinterval(previous)
    assert end - start > 0.05, "the run is too short to tell"
    inside = [tick for tick in ticks if start < tick < end]
    # A run holding the GIL would let the other thread tick at most at
    # its two ends.
    assert len(inside) > 5, (len(inside), end - start)


def test_a_train_step_applies_sgd_to_the_gradients():
    grads = nn.compile(TANH_MSE, grads=True).load()
    step = nn.compile(TANH_MSE, grads=True, train_step=True, optimizer="sgd").load()
    params = nn.init_parameters(grads.manifest, seed=5)
    x, y = tanh_mse_batch(np.random.default_rng(3), [4, 2])
    lengths = {"T": [4, 2]}
    expected = grads.run({"x": x, "y": y}, lengths, params)
    state = nn.TrainState(params)
    # The state holds copies: changing the caller's arrays changes nothing.
    kept = params["w"].copy()
    params["w"] += 1
    np.testing.assert_array_equal(state.parameters["w"], kept)
    params["w"] -= 1
    report, losses = nn.train_step(step, {"x": x, "y": y}, lengths,
                                   learning_rate=0.5, dropout_seed=0, state=state)
    assert report.applied and report.step == 1 and state.step == 1
    assert state.batches == 1
    assert losses[0].name == "mse"
    assert losses[0].value == pytest.approx(expected.loss("mse").value, rel=1e-6)
    norm = np.sqrt(sum((g.astype(np.float64) ** 2).sum()
                       for g in expected.gradients.values()))
    assert report.grad_norm == pytest.approx(norm, rel=1e-5)
    for name in ("w", "b"):
        np.testing.assert_allclose(state.parameters[name],
                                   params[name] - 0.5 * expected.gradients[name],
                                   rtol=1e-6, atol=1e-7)


def test_checkpoints_round_trip_through_numpy(tmp_path):
    step = nn.compile(TANH_MSE, grads=True, train_step=True).load()
    params = nn.init_parameters(step.manifest, seed=2)
    assert sorted(params) == ["b", "optimizer/adam_m/b", "optimizer/adam_m/w",
                              "optimizer/adam_v/b", "optimizer/adam_v/w", "w"]
    state = nn.TrainState(params)
    x, y = tanh_mse_batch(np.random.default_rng(4), [3, 3])
    for _ in range(2):
        nn.train_step(step, {"x": x, "y": y}, {"T": [3, 3]}, 1e-2, 0, state)
    path = str(tmp_path / "ckpt.npz")
    nn.save_checkpoint(path, state)
    with np.load(path) as saved:
        assert int(saved["nn.train.step"]) == 2
        np.testing.assert_array_equal(saved["w"], state.parameters["w"])
    loaded = nn.load_checkpoint(path)
    assert loaded.step == 2 and loaded.batches == 2
    for name, value in state.parameters.items():
        np.testing.assert_array_equal(loaded.parameters[name], value)
    state.parameters = dict(state.parameters, w=np.full((3, 4), np.nan, np.float32))
    with pytest.raises(nn.Error, match="'w'"):
        nn.save_checkpoint(str(tmp_path / "bad.npz"), state)


def test_datasets_batch_shards_given_in_memory():
    exe = nn.compile(TANH_MSE).load()
    rng = np.random.default_rng(5)
    lengths = np.array([3, 1, 2], dtype=np.int32)
    x = rng.standard_normal((6, 4)).astype(np.float32)
    y = rng.standard_normal((6, 3)).astype(np.float32)
    shard = {"x": x, "x.lengths": lengths, "y": y, "y.lengths": lengths}
    data = nn.Dataset.from_shards([shard], exe.manifest, name="mine")
    assert len(data) == 3 and data.length_dim == "T"
    assert [data.length(u) for u in range(3)] == [3, 1, 2]
    assert data.utterance_id(1) == "mine[0]:1"
    inputs, batch_lengths = data.batch([2, 0])
    assert batch_lengths["T"].tolist() == [2, 3]
    assert inputs["x"].shape == (2, 3, 4)
    np.testing.assert_array_equal(inputs["x"][0, :2], x[4:6])
    np.testing.assert_array_equal(inputs["x"][1], x[0:3])
    assert (inputs["x"][0, 2] == 0).all()
    with pytest.raises(IndexError, match="utterance 3 of 3"):
        data.batch([3])
    with pytest.raises(ValueError, match="no utterances"):
        data.batch([])
    bad = dict(shard, **{"y.lengths": np.array([3, 1, 1], dtype=np.int32)})
    with pytest.raises(nn.Error, match="mine"):
        nn.Dataset.from_shards([bad], exe.manifest, name="mine")


def nn_train(*args):
    subprocess.run([str(BIN / "nn-train"), str(SMALL_MODEL), *args], check=True,
                   stdout=subprocess.DEVNULL)


SEGMENTS = dict(synthetic="segments", batch_size=2, epoch_steps=4, dev_batches=1,
                seed=7)
SEGMENT_FLAGS = ["--synthetic", "segments", "--batch-size", "2", "--epoch-steps",
                 "4", "--dev-batches", "1", "--seed", "7"]


def assert_same_checkpoints(a, b):
    with np.load(a) as left, np.load(b) as right:
        assert sorted(left.files) == sorted(right.files)
        for name in left.files:
            np.testing.assert_array_equal(left[name], right[name], err_msg=name)


def test_trainer_and_nn_train_resume_each_other_bit_identically(tmp_path):
    # 6 steps in one nn-train run ...
    nn_train(*SEGMENT_FLAGS, "--steps", "6", "--save", str(tmp_path / "whole"))
    whole = tmp_path / "whole" / "step-00000006.npz"
    # ... equal 3 from Python, resumed by nn-train ...
    trainer = nn.Trainer(str(SMALL_MODEL), steps=3, save=str(tmp_path / "py"),
                         bar=False, **SEGMENTS)
    trainer.compile()
    assert trainer.run()
    assert trainer.state.step == 3
    assert [l.name for l in trainer.dev_at_end] == ["ce", "fer", "ctc"]
    nn_train(*SEGMENT_FLAGS, "--steps", "6", "--resume", str(tmp_path / "py"),
             "--save", str(tmp_path / "py"))
    assert_same_checkpoints(whole, tmp_path / "py" / "step-00000006.npz")
    # ... and 3 from nn-train, resumed from Python.
    nn_train(*SEGMENT_FLAGS, "--steps", "3", "--save", str(tmp_path / "cli"))
    trainer = nn.Trainer(str(SMALL_MODEL), steps=6, resume=str(tmp_path / "cli"),
                         save=str(tmp_path / "cli"), bar=False, **SEGMENTS)
    trainer.compile()
    assert trainer.run()
    assert_same_checkpoints(whole, tmp_path / "cli" / "step-00000006.npz")


def test_trainer_settings_are_checked_like_nn_train_flags():
    with pytest.raises(TypeError, match="unknown keyword argument 'batchsize'"):
        nn.Trainer(str(SMALL_MODEL), batchsize=2)
    with pytest.raises(TypeError, match="batch_size: expected"):
        nn.Trainer(str(SMALL_MODEL), batch_size=-2)
    with pytest.raises(nn.Error, match="lr: learning-rate schedule 'sometimes'"):
        nn.Trainer(str(SMALL_MODEL), lr="sometimes")
    with pytest.raises(nn.Error, match="chunking: "):
        nn.Trainer(str(SMALL_MODEL), chunking="4:5")
    with pytest.raises(TypeError, match="Trainer\\(\\) sets 'artifact_path' itself"):
        nn.Trainer(str(SMALL_MODEL), artifact_path="x.so")
    with pytest.raises(TypeError, match="noise: expected"):
        nn.Trainer(str(SMALL_MODEL), noise=float("nan"))
    trainer = nn.Trainer(str(ROOT / "no-such.mlir"), synthetic="segments")
    with pytest.raises(nn.Error) as error:
        trainer.compile()
    assert error.value.code == "NOT_FOUND"


def segment_utterances(rng, count):
    """Utterances for SMALL_MODEL as dicts of arrays (integers as numpy
    makes them, int64)."""
    utterances = []
    for i in range(count):
        frames, labels = int(rng.integers(3, 9)), int(rng.integers(1, 3))
        utterances.append({
            "features": rng.standard_normal((frames, 12)).astype(np.float32),
            "frame_labels": rng.integers(0, 6, frames),
            "labels": rng.integers(1, 6, labels),
            "id": f"utt{i}",
        })
    return utterances


def test_trainer_on_python_utterances_equals_nn_train_on_their_shards(tmp_path):
    rng = np.random.default_rng(6)
    train, dev = segment_utterances(rng, 12), segment_utterances(rng, 4)
    trainer = nn.Trainer(str(SMALL_MODEL), data=(u for u in train), dev=dev,
                         steps=4, batch_size=3, seed=5, save=str(tmp_path / "py"),
                         bar=False)
    trainer.compile()
    assert trainer.run()
    nn.write_shards(str(tmp_path / "train"), train, trainer.train_manifest,
                    per_shard=5)
    nn.write_shards(str(tmp_path / "dev"), dev, trainer.eval_manifest)
    assert sorted(os.listdir(tmp_path / "train")) == [
        "shard-00000.npz", "shard-00001.npz", "shard-00002.npz"]
    with pytest.raises(FileExistsError, match="holds shards already"):
        nn.write_shards(str(tmp_path / "train"), train, trainer.train_manifest)
    subprocess.run([str(BIN / "nn-train"), str(SMALL_MODEL), "--data",
                    str(tmp_path / "train"), "--dev", str(tmp_path / "dev"),
                    "--steps", "4", "--batch-size", "3", "--seed", "5", "--save",
                    str(tmp_path / "cli")], check=True, stdout=subprocess.DEVNULL)
    assert_same_checkpoints(tmp_path / "py" / "step-00000004.npz",
                            tmp_path / "cli" / "step-00000004.npz")
    data = nn.Dataset.from_utterances(train, trainer.eval_manifest)
    assert len(data) == 12 and data.utterance_id(3) == "utt3"
    inputs, lengths = data.batch([1])
    np.testing.assert_array_equal(inputs["features"][0], train[1]["features"])
    assert lengths["T"].tolist() == [len(train[1]["features"])]
    with pytest.raises(ValueError, match="utterance 1: no array 'frame_labels'"):
        nn.shard_arrays([train[0], {"features": train[1]["features"]}],
                        trainer.eval_manifest)
    with pytest.raises(TypeError, match="utterance 0: 'labels' is float64"):
        nn.shard_arrays([dict(train[0], labels=np.ones(2))], trainer.eval_manifest)
    with pytest.raises(nn.Error, match="utterance 0"):
        nn.Dataset.from_utterances([dict(train[0], labels=np.array([9]))],
                                   trainer.eval_manifest)


def test_a_decoding_graph_returns_hypotheses_and_their_computed_lengths():
    B = nn.batch_dim("B")
    T = nn.seq_dim("T", B)
    program = nn.Program()
    program.graph("decode", lambda x: nn.ctc_greedy_decode(x, blank=0),
                  x=nn.Input([B, T, 4]))
    exe = nn.compile(program).load()
    rng = np.random.default_rng(8)
    lengths = [7, 3, 1]
    x = rng.standard_normal((3, 7, 4)).astype(np.float32)
    x[1, 3:] = np.nan
    x[2, 1:] = np.nan
    result = exe.run({"x": x}, {"T": lengths})
    hyp, score = result.outputs["result0"], result.outputs["result1"]
    for b, n in enumerate(lengths):
        best = x[b, :n].argmax(axis=1)
        labels = [int(c) for i, c in enumerate(best)
                  if c != 0 and (i == 0 or c != best[i - 1])]
        assert result.lengths["Y"][b] == len(labels)
        assert hyp[b, :len(labels)].tolist() == labels
        logp = x[b, :n].astype(np.float64)
        logp = logp - np.log(np.exp(logp).sum(axis=1, keepdims=True))
        assert score[b] == pytest.approx(logp.max(axis=1).sum(), rel=1e-5)


def test_ctrl_c_stops_a_trainer_after_a_step_with_a_checkpoint(tmp_path):
    import signal

    trainer = nn.Trainer(str(SMALL_MODEL), steps=1000000, save=str(tmp_path),
                         bar=False, **SEGMENTS)
    trainer.compile()
    timer = threading.Timer(1.0, os.kill, (os.getpid(), signal.SIGINT))
    timer.start()
    try:
        finished = trainer.run()
    finally:
        timer.cancel()
    assert not finished
    steps = trainer.state.batches
    assert 0 < steps < 1000000
    assert os.path.exists(tmp_path / f"step-{steps:08d}.npz")
    # Python's handler is back: Ctrl-C now interrupts Python.
    with pytest.raises(KeyboardInterrupt):
        os.kill(os.getpid(), signal.SIGINT)
        time.sleep(1)
    # The next run starts uninterrupted and resumes from the checkpoint.
    again = nn.Trainer(str(SMALL_MODEL), steps=steps + 2, resume=str(tmp_path),
                       save=str(tmp_path), bar=False, **SEGMENTS)
    again.compile()
    assert again.run() and again.state.batches == steps + 2
