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
    two = run(mpirun(2, *flags, "--save", tmp_path / "two"))
    assert two.returncode == 0, two.stderr
    one = run(single(*flags, "--save", tmp_path / "one"))
    assert one.returncode == 0, one.stderr
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
    straight = run(mpirun(2, *small_flags(tmp_path / "straight"),
                          "--steps", "40"))
    assert straight.returncode == 0, straight.stderr

    # The same run killed (every process, at once) once it has saved step
    # 10, then resumed from its newest checkpoint by the same command.
    launcher = subprocess.Popen(
        mpirun(2, *small_flags(tmp_path / "killed"), "--steps", "40"),
        env=MPI_ENV, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
        start_new_session=True)
    wait_for(tmp_path / "killed" / "step-00000010.npz", launcher)
    kill_all(launcher)
    saved = sorted(p.name for p in (tmp_path / "killed").glob("step-*.npz"))
    assert "step-00000040.npz" not in saved, "the run ended before the kill"
    resumed = run(mpirun(2, *small_flags(tmp_path / "killed"), "--steps", "40",
                         "--resume", tmp_path / "killed"))
    assert resumed.returncode == 0, resumed.stderr
    assert "resumed" not in resumed.stdout  # a plain run's JSON: steps only
    first = json_lines(resumed.stdout)[0]["step"]
    assert 10 <= first <= 40 and first - 1 == int(saved[-1][5:13])

    # Every rank restarts from rank 0's checkpoint and draws the same
    # parts: the result is the uninterrupted run's, bit for bit.
    a = checkpoint(tmp_path / "straight" / "step-00000040.npz")
    b = checkpoint(tmp_path / "killed" / "step-00000040.npz")
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
    # the stop flag's.
    assert re.search(r"nn-train: rank [01] of 2: (step \d+: )?"
                     r"(running @am: nn.all_reduce at \S+:\d+:\d+: )?"
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
