"""edm sweep --scheduler tcp://...: a real Dask cluster on localhost (the `dask` CLI),
one of whose two workers is killed mid-sweep. Every point is stored once, with the
numbers a local run gives."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from edm.sweep import ResultStore, load_sweep, run_sweep

TESTS = Path(__file__).resolve().parent
DASK = Path(sys.executable).parent / "dask"
SEEDS = list(range(1, 9))


def _sweep_file(tmp_path: Path) -> Path:
    f = tmp_path / "sweep.toml"
    # Each point at least half a second, so the kill lands mid-sweep on any machine.
    f.write_text(f"""
[sweep]
name = "dist"
runner = "sweep_runners:simulate"
out = "out"
[base]
log = "{tmp_path / 'calls.log'}"
sleep = 0.5
protocol = "edm-paper"
nodes = 16
messages = 4000
load = 0.5
[grid]
seed = {SEEDS}
""")
    return f


def _wait_for(what: str, ready, procs: list[subprocess.Popen], timeout: float = 60.0):
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        value = ready()
        if value:
            return value
        for p in procs:
            if p.poll() is not None:
                raise AssertionError(f"{what}: {p.args[:3]} exited with {p.returncode}")
        time.sleep(0.1)
    raise AssertionError(f"{what}: not ready after {timeout} s")


def _stored(out: Path) -> list[Path]:
    return sorted((out / "points").glob("*.json")) if (out / "points").exists() else []


@pytest.mark.skipif(not DASK.exists(), reason="the dask CLI is not in this environment")
def test_a_sweep_on_a_dask_cluster_survives_a_lost_worker(tmp_path):
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(TESTS), os.environ.get("PYTHONPATH", "")])}
    sched_file = tmp_path / "scheduler.json"
    procs: list[subprocess.Popen] = []

    def start(*args: str, name: str) -> subprocess.Popen:
        log = open(tmp_path / f"{name}.log", "w")
        p = subprocess.Popen([str(DASK), *args], cwd=tmp_path, env=env, stdout=log, stderr=subprocess.STDOUT,
                             start_new_session=True)
        procs.append(p)
        return p

    try:
        # No fixed port anywhere: the scheduler picks one and writes it to its file.
        start("scheduler", "--host", "127.0.0.1", "--port", "0", "--no-dashboard", "--scheduler-file", str(sched_file), name="scheduler")
        address = _wait_for("scheduler", lambda: sched_file.exists() and json.loads(sched_file.read_text() or "{}")
                            .get("address"), procs)
        assert address.startswith("tcp://127.0.0.1:"), address
        workers = [start("worker", "--scheduler-file", str(sched_file), "--nthreads", "1", "--no-nanny", "--host", "127.0.0.1",
                         "--no-dashboard", "--name", f"w{i}", "--local-directory", str(tmp_path / f"w{i}"),
                         name=f"worker{i}") for i in range(2)]

        def both_joined() -> bool:
            return all("Registered to" in (tmp_path / f"worker{i}.log").read_text() for i in range(2))
        _wait_for("workers", both_joined, procs)

        out = tmp_path / "out"
        sweep = subprocess.Popen([sys.executable, "-m", "edm.cli", "sweep", str(_sweep_file(tmp_path)),
                                  "--scheduler", address, "--quiet"], cwd=tmp_path, env=env,
                                 stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, start_new_session=True)
        procs.append(sweep)
        # Mid-sweep: once the first point is stored, one worker dies without a word.
        _wait_for("first point", lambda: len(_stored(out)) >= 1, [sweep], timeout=120)
        os.killpg(workers[0].pid, signal.SIGKILL)
        stored_at_kill = len(_stored(out))
        stdout, stderr = sweep.communicate(timeout=120)
        assert sweep.returncode == 0, stderr
        assert stored_at_kill < len(SEEDS), "the worker was killed after the sweep had finished"
        assert f"dist: {len(SEEDS)} points, 0 reused, {len(SEEDS)} computed, 0 failed" in stdout, stdout
        # What the lost worker ran or held (results stay on a worker until fetched) was run again.
        runs = (tmp_path / "calls.log").read_text().split()
        assert len(runs) > len(SEEDS) and set(runs) == {str(s) for s in SEEDS}, runs
    finally:
        for p in reversed(procs):
            if p.poll() is None:
                os.killpg(p.pid, signal.SIGKILL)
            p.wait(timeout=30)

    # Every point stored once; the same numbers as a local run of the same sweep.
    s = load_sweep(_sweep_file(tmp_path))
    assert len(_stored(out)) == len(SEEDS)
    remote = ResultStore(out)
    local_dir = tmp_path / "local"
    s.out = local_dir
    report = run_sweep(s, processes=False, workers=2, progress=False)
    assert (report.computed, report.failed) == (len(SEEDS), [])
    local = ResultStore(local_dir)
    for config in s.points():
        got = remote.load(s.runner, config)
        assert got is not None, config["seed"]
        assert got["result"] == local.load(s.runner, config)["result"], config["seed"]
