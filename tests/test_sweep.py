"""edm sweep: grid expansion, resume without recomputation, failures, corruption."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from edm.sweep import ResultStore, SweepError, load_sweep, point_key, run_sweep

TESTS = Path(__file__).resolve().parent


def write_sweep(tmp_path: Path, xs: list[int], sleep: float = 0.0, fail_on: list[int] | None = None) -> Path:
    log = tmp_path / "calls.log"
    f = tmp_path / "sweep.toml"
    f.write_text(
        f"""
[sweep]
name = "t"
runner = "sweep_runners:square"
out = "out"
[base]
log = "{log}"
sleep = {sleep}
fail_on = {fail_on or []}
[grid]
x = {xs}
"""
    )
    return f


def calls(tmp_path: Path) -> list[int]:
    log = tmp_path / "calls.log"
    return [int(x) for x in log.read_text().split()] if log.exists() else []


@pytest.fixture(autouse=True)
def runners_importable(monkeypatch):
    monkeypatch.syspath_prepend(str(TESTS))


def test_grid_expands_over_base(tmp_path):
    s = load_sweep(write_sweep(tmp_path, [1, 2, 3]))
    assert [p["x"] for p in s.points()] == [1, 2, 3]
    assert all(p["sleep"] == 0.0 for p in s.points())
    assert s.out == tmp_path / "out"


def test_second_run_reuses_every_point(tmp_path):
    s = load_sweep(write_sweep(tmp_path, [1, 2, 3, 4]))
    r1 = run_sweep(s, processes=False, workers=2, progress=False)
    assert (r1.computed, r1.reused, r1.failed) == (4, 0, [])
    r2 = run_sweep(s, processes=False, workers=2, progress=False)
    assert (r2.computed, r2.reused) == (0, 4)
    assert sorted(calls(tmp_path)) == [1, 2, 3, 4]
    results = sorted(d["result"]["square"] for d in ResultStore(s.out).all_results())
    assert results == [1, 4, 9, 16]


def test_failed_point_is_reported_and_others_kept(tmp_path):
    s = load_sweep(write_sweep(tmp_path, [1, 2, 3], fail_on=[2]))
    r = run_sweep(s, processes=False, workers=2, progress=False)
    assert r.computed == 2 and len(r.failed) == 1
    assert "x=2 is set to fail" in r.failed[0][1]
    failed_file = s.out / "failed" / f"{point_key(s.runner, r.failed[0][0])}.json"
    assert "RuntimeError" in json.loads(failed_file.read_text())["error"]
    # Retried next time, the others are not recomputed.
    r2 = run_sweep(s, processes=False, workers=2, progress=False)
    assert r2.reused == 2 and len(r2.failed) == 1
    assert sorted(calls(tmp_path)) == [1, 2, 2, 3]


def test_corrupted_result_is_detected_and_recomputed(tmp_path):
    s = load_sweep(write_sweep(tmp_path, [5, 6]))
    run_sweep(s, processes=False, workers=1, progress=False)
    victim = s.out / "points" / f"{point_key(s.runner, s.points()[0])}.json"
    doc = json.loads(victim.read_text())
    doc["result"]["square"] = 26  # a silent bit flip in a stored number
    victim.write_text(json.dumps(doc))
    truncated = s.out / "points" / f"{point_key(s.runner, s.points()[1])}.json"
    truncated.write_text(truncated.read_text()[:40])
    r = run_sweep(s, processes=False, workers=1, progress=False)
    assert r.computed == 2 and len(r.corrupted) == 2
    assert sorted(d["result"]["square"] for d in ResultStore(s.out).all_results()) == [25, 36]


def test_bad_sweep_file_names_file_and_field(tmp_path):
    f = tmp_path / "bad.toml"
    f.write_text('[sweep]\nname = "x"\nrunner = "sweep_runners:square"\n[grid]\nx = 3\n')
    with pytest.raises(SweepError, match=r"bad.toml: \[grid\] x must be a non-empty list"):
        load_sweep(f)


def test_killed_sweep_resumes_without_recomputing_finished_points(tmp_path):
    xs = list(range(12))
    f = write_sweep(tmp_path, xs, sleep=0.3)
    env = {**os.environ, "PYTHONPATH": f"{TESTS}{os.pathsep}{os.environ.get('PYTHONPATH', '')}"}
    cmd = [sys.executable, "-m", "edm.cli", "sweep", str(f), "--workers", "1", "--quiet"]
    proc = subprocess.Popen(cmd, env=env, start_new_session=True)
    points = tmp_path / "out" / "points"
    deadline = time.time() + 120
    while time.time() < deadline and len(list(points.glob("*.json"))) < 3:
        time.sleep(0.05)
    os.killpg(proc.pid, signal.SIGKILL)
    proc.wait()
    finished = {json.loads(p.read_text())["config"]["x"] for p in points.glob("*.json")}
    assert 3 <= len(finished) < len(xs), "the kill must land mid-sweep"
    calls_before = len(calls(tmp_path))
    done = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    recomputed = calls(tmp_path)[calls_before:]
    assert not finished & set(recomputed), f"recomputed finished points {finished & set(recomputed)}"
    assert sorted(set(recomputed) | finished) == xs
    assert f"{len(finished)} reused" in done.stdout


def test_plot_from_stored_results_averages_seeds(tmp_path):
    from edm.plot import aggregate, build_report

    f = tmp_path / "sweep.toml"
    f.write_text(
        f"""
[sweep]
name = "p"
runner = "sweep_runners:square"
out = "out"
[base]
log = "{tmp_path / 'calls.log'}"
[grid]
x = [1, 2]
seed = [1, 2, 3]
"""
    )
    s = load_sweep(f)
    run_sweep(s, processes=False, workers=2, progress=False)
    series = aggregate(ResultStore(s.out).all_results(), "x", "square", None)
    assert series[None] == [(1, 1.0, 0.0, 3), (2, 4.0, 0.0, 3)]
    md, html = build_report(s.out, "x", "square", None)
    assert "| 2 | 4 | 0 | 3 |" in md.read_text() and html.exists()
