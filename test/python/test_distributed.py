"""Data-parallel training under mpirun (docs/distributed.md): two ranks
against one process on the same batches, resuming a killed multi-rank run,
and a failing, lost or stuck rank ending every rank with a message that
names it. Each run is nn-train itself, as a user starts it."""

import json
import os
import pathlib
import re
import shutil
import signal
import subprocess
import sys
import time

import numpy as np
import pytest

import nn

ROOT = pathlib.Path(__file__).resolve().parents[2]
BIN = pathlib.Path(os.environ.get("NN_BIN_DIR", ROOT / "build" / "bin"))
EXAMPLE = ROOT / "examples" / "blstm_ce_ctc.mlir"
SMALL_MODEL = ROOT / "test" / "Tools" / "Inputs" / "segments-small.mlir"

# mpirun refuses root without these (CI runs as root); oversubscribe: two
# ranks on however many cores the machine has.
MPI_ENV = dict(os.environ, OMPI_ALLOW_RUN_AS_ROOT="1",
               OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1",
               OMPI_MCA_rmaps_base_oversubscribe="1")


def mpirun(ranks, *args):
    assert shutil.which("mpirun"), \
        "mpirun is missing (scripts/install-deps.sh installs openmpi-bin)"
    return ["mpirun", "-np", str(ranks), str(BIN / "nn-train"), *map(str, args)]


def single(*args):
    return [str(BIN / "nn-train"), *map(str, args)]


def run(command, timeout=240):
    return subprocess.run(command, env=MPI_ENV, capture_output=True,
                          text=True, timeout=timeout)


def json_lines(text):
    return [json.loads(line) for line in text.splitlines()
            if line.startswith("{")]


def checkpoint(path):
    with np.load(path) as archive:
        return {name: archive[name] for name in archive.files}


def test_two_ranks_equal_one_process_on_the_whole_batches(tmp_path):
    # The small BLSTM has dropout and packs before its losses. Each rank
    # trains on its part of every batch; the step sums gradients and the
    # losses' frames and sequences over the ranks, and the masks are the
    # whole batch's. Plain SGD and generated GEMM loops: a sequence's
    # values do not depend on which rows share its GEMM, so what differs
    # is the order of the sums over sequences (f32 gradients, f64 losses).
    flags = [SMALL_MODEL, "--synthetic", "segments", "--batch-size", "16",
             "--steps", "20", "--epoch-steps", "10", "--dev-batches", "2",
             "--seed", "3", "--optimizer", "sgd", "--lr",
             "constant:peak=0.1", "--no-blas", "--save-every", "10", "--json"]
    # Buckets of 16 KiB: the step's gradients are summed in several
    # buckets, each started as the backward finishes it and running while
    # the rest of the backward does.
    two = run(mpirun(2, *flags, "--all-reduce-bucket-mb", "0.015625",
                     "--save", tmp_path / "two"))
    assert two.returncode == 0, two.stderr
    one = run(single(*flags, "--save", tmp_path / "one"))
    assert one.returncode == 0, one.stderr
    # The same sums after the whole backward: overlapping changes when
    # they run, not what they add.
    after = run(mpirun(2, *flags, "--all-reduce-bucket-mb", "0.015625",
                       "--no-all-reduce-overlap", "--save", tmp_path / "after"))
    assert after.returncode == 0, after.stderr
    assert json_lines(after.stdout) == json_lines(two.stdout)
    final_after = checkpoint(tmp_path / "after" / "step-00000020.npz")
    for name, value in checkpoint(tmp_path / "two" /
                                  "step-00000020.npz").items():
        np.testing.assert_array_equal(final_after[name], value, err_msg=name)
    # Rank 0 alone reports: the same lines, steps and evaluations alike.
    lines_two, lines_one = json_lines(two.stdout), json_lines(one.stdout)
    assert len(lines_two) == len(lines_one) == 22
    # The first step runs on the same parameters: one forward and
    # backward split over the ranks, summed.
    assert lines_two[0]["grad_norm"] == pytest.approx(
        lines_one[0]["grad_norm"], rel=1e-7)
    for a, b in zip(lines_two, lines_one):
        assert a["step"] == b["step"]
        assert a.get("frames") == b.get("frames")
        assert a.get("applied") == b.get("applied")
        assert a["losses"].keys() == b["losses"].keys()
        for name, value in b["losses"].items():
            assert a["losses"][name] == pytest.approx(value, rel=1e-6), \
                (a["step"], name)
    final_two = checkpoint(tmp_path / "two" / "step-00000020.npz")
    final_one = checkpoint(tmp_path / "one" / "step-00000020.npz")
    assert final_two.keys() == final_one.keys()
    for name, value in final_one.items():
        np.testing.assert_allclose(final_two[name], value, rtol=0, atol=1e-6,
                                   err_msg=name)
    # The parameters moved: the comparison is not of two resting models.
    halfway = checkpoint(tmp_path / "one" / "step-00000010.npz")
    assert np.max(np.abs(final_one["out.w"] - halfway["out.w"])) > 1e-2


def small_flags(save):
    return [SMALL_MODEL, "--synthetic", "segments", "--batch-size", "8",
            "--epoch-steps", "1000", "--dev-batches", "1", "--seed", "5",
            "--save", save, "--save-every", "5", "--keep", "100", "--json"]


def rank_pids(launcher):
    """The nn-train processes mpirun started."""
    pids = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            stat = pathlib.Path(f"/proc/{entry}/stat").read_text()
            command = pathlib.Path(f"/proc/{entry}/cmdline").read_bytes()
        except OSError:
            continue
        parent = int(stat.rsplit(")", 1)[1].split()[1])
        if parent == launcher.pid and b"nn-train" in command:
            pids.append(int(entry))
    return sorted(pids)


def start(tmp_path, *extra):
    """A long two-rank run in the background, its stderr captured."""
    return subprocess.Popen(
        mpirun(2, *small_flags(tmp_path / "run"), "--steps", "100000", *extra),
        env=MPI_ENV, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
        text=True, start_new_session=True)


def kill_all(launcher):
    """The ranks first (mpirun puts them in sessions of their own), then
    mpirun."""
    for pid in rank_pids(launcher):
        os.kill(pid, signal.SIGKILL)
    os.killpg(launcher.pid, signal.SIGKILL)
    launcher.wait(timeout=60)


def wait_for(path, launcher, seconds=120):
    deadline = time.monotonic() + seconds
    while not path.exists():
        assert launcher.poll() is None, launcher.communicate()
        assert time.monotonic() < deadline, f"no {path.name} in {seconds} s"
        time.sleep(0.01)


def test_resume_after_a_kill_continues_the_multi_rank_run(tmp_path):
    # Far more steps than the kill needs: a step of the small model takes
    # milliseconds, and a loaded machine may let the run go on for dozens
    # of steps between its saving step 10 and the kill.
    steps = 400
    straight = run(mpirun(2, *small_flags(tmp_path / "straight"),
                          "--steps", str(steps)))
    assert straight.returncode == 0, straight.stderr

    # The same run killed (every process, at once) once it has saved step
    # 10, then resumed from its newest checkpoint by the same command.
    launcher = subprocess.Popen(
        mpirun(2, *small_flags(tmp_path / "killed"), "--steps", str(steps)),
        env=MPI_ENV, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
        start_new_session=True)
    wait_for(tmp_path / "killed" / "step-00000010.npz", launcher)
    kill_all(launcher)
    saved = sorted(p.name for p in (tmp_path / "killed").glob("step-*.npz"))
    last = f"step-{steps:08d}.npz"
    assert last not in saved, "the run ended before the kill"
    resumed = run(mpirun(2, *small_flags(tmp_path / "killed"), "--steps",
                         str(steps), "--resume", tmp_path / "killed"))
    assert resumed.returncode == 0, resumed.stderr
    assert "resumed" not in resumed.stdout  # a plain run's JSON: steps only
    first = json_lines(resumed.stdout)[0]["step"]
    assert 10 <= first <= steps and first - 1 == int(saved[-1][5:13])

    # Every rank restarts from rank 0's checkpoint and draws the same
    # parts: the result is the uninterrupted run's, bit for bit.
    a = checkpoint(tmp_path / "straight" / last)
    b = checkpoint(tmp_path / "killed" / last)
    assert a.keys() == b.keys()
    for name in a:
        np.testing.assert_array_equal(a[name], b[name], err_msg=name)


def test_a_rank_failing_on_bad_data_ends_every_rank(tmp_path):
    manifest = nn.compile_file(str(SMALL_MODEL)).manifest
    rng = np.random.default_rng(0)
    utterances = []
    for u in range(6):
        frames = 5 + u
        utterances.append({
            "features": rng.standard_normal((frames, 12)).astype(np.float32),
            "frame_labels": rng.integers(1, 6, frames).astype(np.int32),
            "labels": rng.integers(1, 6, 2).astype(np.int32),
        })
    utterances[4]["frame_labels"][2] = 9  # the model has 6 classes
    data = nn.write_shards(str(tmp_path / "data"), utterances, manifest)
    started = time.monotonic()
    failed = run(mpirun(2, SMALL_MODEL, "--data", data, "--steps", "2"),
                 timeout=120)
    assert failed.returncode != 0
    assert time.monotonic() - started < 100
    # The rank says who it is and what is wrong with which utterance.
    assert "rank 0 of 2" in failed.stderr or "rank 1 of 2" in failed.stderr
    assert "utterance 4: 'frame_labels' holds class 9" in failed.stderr


def signal_a_rank(tmp_path, signal_number, *extra):
    """Starts a long two-rank run, sends `signal_number` to one rank once
    step 5 is saved, and waits for the run to end: mpirun's exit status,
    its stderr, and the seconds from the signal to the end."""
    launcher = start(tmp_path, *extra)
    try:
        wait_for(tmp_path / "run" / "step-00000005.npz", launcher)
        pids = rank_pids(launcher)
        assert len(pids) == 2
        signalled = time.monotonic()
        os.kill(pids[1], signal_number)
        _, stderr = launcher.communicate(timeout=60)
        return launcher.returncode, stderr, time.monotonic() - signalled
    finally:
        if launcher.poll() is None:
            kill_all(launcher)


def test_a_lost_rank_ends_the_run(tmp_path):
    status, stderr, _ = signal_a_rank(tmp_path, signal.SIGKILL)
    assert status != 0
    assert "signal 9" in stderr or "Killed" in stderr, stderr


def test_a_stuck_rank_times_out_naming_the_collective(tmp_path):
    status, stderr, waited = signal_a_rank(tmp_path, signal.SIGSTOP,
                                           "--collective-timeout", "3")
    assert status != 0
    assert 3 <= waited < 50
    # The rank left waiting names itself and the collective: one of the
    # step's (with the op and its line in the model), the losses' sum or
    # the stop flag's. The step's sums overlap: where one started earlier
    # timed out first, the op being finished says it did not run and
    # quotes that one.
    assert re.search(r"nn-train: rank [01] of 2: (step \d+: )?"
                     r"(running @am: nn.all_reduce at \S+:\d+:\d+: )?"
                     r"(not run: an earlier sum of this rank failed \()?"
                     r"(rank [01] of 2: )?an all-reduce of \d+ f(32|64) "
                     r"waited 3 s for the other ranks", stderr), stderr


def test_an_interrupted_rank_stops_every_rank_after_the_same_step(tmp_path):
    # SIGINT to one rank (what Ctrl-C is to a single process): every rank
    # finishes the same step, rank 0 saves it, and the run says so.
    status, stderr, _ = signal_a_rank(tmp_path, signal.SIGINT)
    assert status != 0
    saved = re.findall(r"nn-train: interrupted after step (\d+); checkpoint "
                       r"in (\S+) ", stderr)
    assert len(saved) == 1, stderr  # rank 0 alone reports
    step, directory = saved[0]
    assert pathlib.Path(directory) == tmp_path / "run"
    assert (tmp_path / "run" / f"step-{int(step):08d}.npz").exists()


STAGES = ROOT / "test" / "Tools" / "Inputs" / "stages"


def stage_copy(directory):
    """The stage file of test/Tools/nn-train-stages.mlir with batches small
    enough that its align and decode stages share several among the ranks
    (11 train, 3 dev: uneven), plain SGD and generated GEMM loops (as in
    the first test: what differs is the order of sums)."""
    shutil.copytree(STAGES, directory)
    path = directory / "stages.json"
    recipe = json.loads(path.read_text())
    for stage in recipe["stages"]:
        stage["blas"] = False
        if stage["kind"] == "train":
            stage.setdefault("optimizer", {"kind": "sgd"})
        else:
            stage["batch_size"] = 3
    path.write_text(json.dumps(recipe))
    return path


def test_a_stage_file_under_mpirun_equals_one_process(tmp_path):
    # Full-sum training, alignment with a prior, frame-wise training from
    # the alignments, decoding: the same command as one process.
    one_file, two_file = stage_copy(tmp_path / "one"), stage_copy(
        tmp_path / "two")
    one = run(single("--stages", one_file, "--json"))
    assert one.returncode == 0, one.stderr
    two = run(mpirun(2, "--stages", two_file, "--json"))
    assert two.returncode == 0, two.stderr
    # Rank 0 alone reports: each stage starts and ends once.
    events = [(e["stage"], e["event"]) for e in json_lines(two.stdout)
              if "event" in e and e["event"] in ("start", "done")]
    assert events == [(s, e) for s in ("ctc", "align", "ce", "decode")
                      for e in ("start", "done")]
    one_work, two_work = tmp_path / "one" / "stages.work", \
        tmp_path / "two" / "stages.work"
    # The same files, rank 0's alone (the list of what nn-train wrote).
    assert (json.loads((two_work / ".nn-written.json").read_text()) ==
            json.loads((one_work / ".nn-written.json").read_text()))
    for name in ("ctc/parameters.npz", "ce/parameters.npz"):
        a, b = checkpoint(one_work / name), checkpoint(two_work / name)
        for key in a:
            np.testing.assert_allclose(b[key], a[key], rtol=0, atol=1e-6)
    # Paths and hypotheses: every rank's share, gathered in order.
    for name in ("data/train.align", "data/dev.align", "data/dev.decode"):
        a = checkpoint(one_work / name / "shard-00000.npz")
        b = checkpoint(two_work / name / "shard-00000.npz")
        assert sorted(a) == sorted(b)
        for key in a:
            if a[key].dtype.kind == "f":
                np.testing.assert_allclose(b[key], a[key], rtol=1e-5)
            else:
                np.testing.assert_array_equal(b[key], a[key], err_msg=key)
    one_lines = json_lines((one_work / "decode" / "dev.jsonl").read_text())
    two_lines = json_lines((two_work / "decode" / "dev.jsonl").read_text())
    assert len(two_lines) == len(one_lines) == 9  # 8 utterances, summary
    for a, b in zip(one_lines[:-1], two_lines[:-1]):
        assert (a["utt"], a["hyp"], a["errors"]) == \
            (b["utt"], b["hyp"], b["errors"])
        assert b["score"] == pytest.approx(a["score"], rel=1e-5)
    a, b = one_lines[-1]["summary"], two_lines[-1]["summary"]
    assert (a["errors"], a["ref_len"], a["utterances"]) == \
        (b["errors"], b["ref_len"], b["utterances"])
    assert b["losses"]["ctc"] == pytest.approx(a["losses"]["ctc"], rel=1e-6)

    # Run again: every stage is done, on every rank alike.
    again = run(mpirun(2, "--stages", two_file, "--json"))
    assert again.returncode == 0, again.stderr
    assert [e["event"] for e in json_lines(again.stdout)
            if "event" in e] == ["skipped"] * 4


def test_a_decode_stage_shares_utterances_without_frames_once(tmp_path):
    # Dev utterance 0 without frames (its references kept): decoded as
    # the empty hypothesis by one rank, at its place, counted once.
    runs = {}
    for name, ranks in (("one", 1), ("two", 2)):
        path = stage_copy(tmp_path / name)
        recipe = json.loads(path.read_text())
        recipe["stages"] = [s for s in recipe["stages"]
                            if s["name"] in ("ctc", "decode")]
        # Two steps on the training data alone: the dev set is the one
        # decoded.
        del recipe["stages"][0]["reads"]["dev"]
        recipe["data"]["dev"] = {"path": str(tmp_path / "frameless")}
        path.write_text(json.dumps(recipe))
        runs[name] = (path, ranks)
    # The synthesized dev set with utterance 0's frames dropped.
    dev = tmp_path / "frameless"
    dev.mkdir()
    synthesized = stage_copy(tmp_path / "synthesized")
    assert run(single("--stages", synthesized)).returncode == 0
    arrays = checkpoint(tmp_path / "synthesized" / "stages.work" / "data" /
                        "dev" / "shard-00000.npz")
    first = int(arrays["features.lengths"][0])
    for name in ("features", "frame_labels"):
        arrays[name] = arrays[name][first:]
        arrays[name + ".lengths"] = arrays[name + ".lengths"].copy()
        arrays[name + ".lengths"][0] = 0
    np.savez(dev / "shard-00000.npz", **arrays)

    lines = {}
    for name, (path, ranks) in runs.items():
        done = run(mpirun(ranks, "--stages", path) if ranks > 1
                   else single("--stages", path))
        assert done.returncode == 0, done.stderr
        lines[name] = json_lines(
            (tmp_path / name / "stages.work" / "decode" /
             "dev.jsonl").read_text())
    one, two = lines["one"], lines["two"]
    assert [l.get("utt") for l in two] == [l.get("utt") for l in one]
    assert two[0]["hyp"] == [] and two[0]["errors"] == two[0]["ref_len"]
    for a, b in zip(one[:-1], two[:-1]):
        assert (a["hyp"], a["errors"]) == (b["hyp"], b["errors"])
    a, b = one[-1]["summary"], two[-1]["summary"]
    assert b["without_frames"] == a["without_frames"] == 1
    assert (b["utterances"], b["errors"], b["ref_len"]) == \
        (a["utterances"], a["errors"], a["ref_len"])


TRAIN_SCRIPT = """
import json, sys
import nn
model, save = sys.argv[1], sys.argv[2]
rank, size = nn.ranks()
trainer = nn.Trainer(model, synthetic="segments", batch_size=16, steps=6,
                     epoch_steps=6, seed=3, optimizer="sgd",
                     lr="constant:peak=0.1", blas=False, save=save,
                     json=True)
trainer.compile()
assert trainer.run()
print(json.dumps({"rank": rank, "ranks": size}), file=sys.stderr)
"""


def test_the_python_trainer_under_mpirun_trains_data_parallel(tmp_path):
    # `mpirun -np 2 python3 train.py` with nn.Trainer: the run nn-train
    # makes of the same flags on two ranks, bit for bit.
    script = tmp_path / "train.py"
    script.write_text(TRAIN_SCRIPT)
    python = run(["mpirun", "-np", "2", sys.executable, script, SMALL_MODEL,
                  tmp_path / "python"])
    assert python.returncode == 0, python.stderr
    ranks = sorted(json.loads(line)["rank"] for line in
                   python.stderr.splitlines() if line.startswith('{"rank"'))
    assert ranks == [0, 1], python.stderr
    assert '"ranks": 2' in python.stderr
    flags = [SMALL_MODEL, "--synthetic", "segments", "--batch-size", "16",
             "--steps", "6", "--epoch-steps", "6", "--seed", "3",
             "--optimizer", "sgd", "--lr", "constant:peak=0.1", "--no-blas",
             "--json"]
    tool = run(mpirun(2, *flags, "--save", tmp_path / "tool"))
    assert tool.returncode == 0, tool.stderr
    # Rank 0 alone reports: one line per step.
    steps_python = [l for l in json_lines(python.stdout) if "grad_norm" in l]
    steps_tool = [l for l in json_lines(tool.stdout) if "grad_norm" in l]
    assert len(steps_python) == len(steps_tool) == 6
    for a, b in zip(steps_python, steps_tool):
        assert (a["step"], a["losses"], a["grad_norm"]) == \
            (b["step"], b["losses"], b["grad_norm"])
    a = checkpoint(tmp_path / "tool" / "step-00000006.npz")
    b = checkpoint(tmp_path / "python" / "step-00000006.npz")
    assert sorted(a) == sorted(b)
    for key in a:
        np.testing.assert_array_equal(b[key], a[key], err_msg=key)


STUCK_SCRIPT = """
import sys, time
import nn
model, where = sys.argv[1], sys.argv[2]
if where == "trainer":
    # Joined with the default timeout first; the Trainer's applies.
    rank, size = nn.ranks()
    trainer = nn.Trainer(model, synthetic="segments", batch_size=16,
                         steps=4, collective_timeout=2)
else:
    # Set when joining; a Trainer without one keeps it.
    rank, size = nn.ranks(collective_timeout=2)
    trainer = nn.Trainer(model, synthetic="segments", batch_size=16,
                         steps=4)
trainer.compile()
if rank == 1:
    time.sleep(60)  # stuck: rank 0 waits for it in its first collective
trainer.run()
"""


@pytest.mark.parametrize("where", ["trainer", "ranks"])
def test_a_python_rank_left_waiting_ends_the_run_after_its_timeout(
        tmp_path, where):
    # The timeout given to the Trainer, or to nn.ranks() before it,
    # applies; the rank that times out ends every rank, naming itself.
    script = tmp_path / "stuck.py"
    script.write_text(STUCK_SCRIPT)
    start = time.monotonic()
    stuck = run(["mpirun", "-np", "2", sys.executable, script, SMALL_MODEL,
                 where])
    waited = time.monotonic() - start
    assert stuck.returncode != 0
    assert re.search(r"nn: rank 0 of 2: .*waited 2 s for the other ranks",
                     stuck.stderr), stuck.stderr
    assert waited < 50, stuck.stderr
