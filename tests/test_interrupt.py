"""Ctrl-C stops a long run within seconds, keeps what finished (marked
interrupted, never a finished sweep point), and says so in one line."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

TESTS = Path(__file__).resolve().parent


def _start(args: list[str], **kw) -> subprocess.Popen:
    # SIGINT as a terminal delivers it (a parent shell may have it ignored).
    return subprocess.Popen([sys.executable, "-m", "edm.cli", *args], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            text=True, preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL), **kw)


def test_ctrl_c_stops_a_long_simulate_and_keeps_what_finished(tmp_path):
    # About 30 s to the end on one core; interrupted once its run has begun
    # (its progress bar shows), as a user would.
    out = tmp_path / "o"
    proc = _start(["simulate", "--nodes", "16", "--workload", "hadoop", "--load", "0.5", "--messages", "20000",
                   "--out", str(out)])
    fd = proc.stderr.fileno()
    os.set_blocking(fd, False)
    seen, deadline = b"", time.monotonic() + 120
    while b"simulate:" not in seen and time.monotonic() < deadline and proc.poll() is None:
        try:
            seen += os.read(fd, 1 << 16)
        except BlockingIOError:
            time.sleep(0.05)
    time.sleep(1)  # into the engine's run
    proc.send_signal(signal.SIGINT)
    sent = time.monotonic()
    os.set_blocking(fd, True)
    stdout, rest = proc.communicate(timeout=60)
    seen = seen.decode()
    took = time.monotonic() - sent
    stderr = seen + rest
    assert proc.returncode == 130, (stdout, stderr)
    assert took < 10, f"stopped {took:.1f} s after Ctrl-C"
    # Besides the progress bar ("simulate: ..."), one line.
    lines = [ln for ln in stderr.replace("\r", "\n").splitlines() if ln.strip() and not ln.startswith("simulate:")]
    assert "Traceback" not in stderr and len(lines) == 1 and "interrupted" in lines[0], stderr
    summary = json.loads((out / "summary.json").read_text())
    assert summary["interrupted"] is True and summary["completed"] < summary["messages"]


def test_an_interrupted_run_is_never_a_stored_point():
    """A signal whose handler raises KeyboardInterrupt (as Ctrl-C's does),
    arriving mid-run: the engine stops at its next poll, sim.run raises
    Interrupted with the partial result, so run_point returns nothing to store."""
    import pytest

    from edm import sim

    def ctrl_c(*_):
        raise KeyboardInterrupt

    old = signal.signal(signal.SIGALRM, ctrl_c)
    signal.setitimer(signal.ITIMER_REAL, 0.2)
    try:
        with pytest.raises(sim.Interrupted) as stop:
            sim.run_point({"nodes": 16, "messages": 1_000_000, "load": 0.3})  # ~3 s to the end
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, old)
    s = stop.value.result.summary
    assert s["interrupted"] is True and 0 < s["completed"] < s["messages"]


def test_ctrl_c_stops_a_sweep_and_its_cluster_in_one_line(tmp_path):
    f = tmp_path / "sweep.toml"
    f.write_text(f'[sweep]\nname = "t"\nrunner = "sweep_runners:square"\nout = "out"\n'
                 f'[base]\nlog = "{tmp_path / "calls.log"}"\nsleep = 0.5\n[grid]\nx = {list(range(40))}\n')
    env = {**os.environ, "PYTHONPATH": f"{TESTS}{os.pathsep}{os.environ.get('PYTHONPATH', '')}"}
    proc = _start(["sweep", str(f), "--workers", "1", "--quiet"], env=env, start_new_session=True)
    points = tmp_path / "out" / "points"
    deadline = time.time() + 120
    while time.time() < deadline and len(list(points.glob("*.json"))) < 2:
        time.sleep(0.05)
    os.killpg(proc.pid, signal.SIGINT)  # the whole group, as a terminal's Ctrl-C
    sent = time.monotonic()
    stdout, stderr = proc.communicate(timeout=60)
    assert proc.returncode == 130, (stdout, stderr)
    assert time.monotonic() - sent < 15
    assert "Traceback" not in stderr and len(stderr.strip().splitlines()) == 1, stderr
    assert "interrupted" in stderr and "resumes" in stderr
    assert 2 <= len(list(points.glob("*.json"))) < 40


def test_ctrl_c_inside_the_progress_callback_stops_the_run_too(monkeypatch):
    """With a progress bar, Ctrl-C's KeyboardInterrupt may be raised inside its
    callback: the run stops there as well (it ran on to the end before)."""
    import pytest

    from edm import sim

    class Bar:
        def update_to(self, done, total):
            raise KeyboardInterrupt

        def close(self):
            pass

    monkeypatch.setattr(sim, "_progress_bar", lambda total: Bar())
    with pytest.raises(sim.Interrupted) as stop:
        sim.run({"nodes": 16, "messages": 1_000_000, "load": 0.3}, progress=True)
    s = stop.value.result.summary
    assert s["interrupted"] is True and s["completed"] < s["messages"]
