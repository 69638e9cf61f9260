"""A stored sweep point is reused only when everything that determines it is
unchanged: its configuration, the code, and the bytes of every file it reads."""

from __future__ import annotations

from pathlib import Path

import pytest

from edm import sweep as sweep_mod
from edm.sweep import ResultStore, load_sweep, run_sweep

TRACE = "0 1 0 1 16 64 0\n1 3 1 0 64 -1 10\n2 1 0 1 16 256 20\n"


def _sweep(tmp_path: Path, workload: str, grid: str = "seed = [1]") -> Path:
    f = tmp_path / "s.toml"
    f.write_text(f'[sweep]\nname = "id"\nrunner = "edm.sim:run_point"\nout = "out"\n'
                 f'[base]\nnodes = 4\nworkload = "{workload}"\n[grid]\n{grid}\n')
    return f


def _run(f: Path):
    s = load_sweep(f)
    report = run_sweep(s, processes=False, workers=1, progress=False)
    assert not report.failed, report.failed
    return report, ResultStore(s.out).all_results()


def test_changed_trace_contents_are_recomputed(tmp_path):
    trace = tmp_path / "t.trace"
    trace.write_text(TRACE)
    f = _sweep(tmp_path, str(trace))  # absolute: the same path before and after
    first, docs = _run(f)
    assert (first.computed, first.reused) == (1, 0)
    bytes_before = docs[0]["result"]["delivered_bytes"]
    # The same path, sizes x8: the stored point must not be reused.
    trace.write_text(TRACE.replace(" 64 ", " 512 ").replace(" 256 ", " 2048 "))
    second, docs = _run(f)
    assert (second.computed, second.reused) == (1, 0)
    assert sorted(d["result"]["delivered_bytes"] for d in docs) == [bytes_before, 8 * bytes_before]
    # Unchanged again: reused.
    third, _ = _run(f)
    assert (third.computed, third.reused) == (0, 1)


def test_trace_path_is_relative_to_the_sweep_file(tmp_path, monkeypatch):
    (tmp_path / "t.trace").write_text(TRACE)
    f = _sweep(tmp_path, "t.trace")
    monkeypatch.chdir("/")
    s = load_sweep(f)
    assert s.points()[0]["workload"] == str(tmp_path / "t.trace")


def test_changed_config_is_recomputed(tmp_path):
    (tmp_path / "t.trace").write_text(TRACE)
    first, _ = _run(_sweep(tmp_path, "t.trace", "seed = [1]"))
    second, _ = _run(_sweep(tmp_path, "t.trace", "seed = [1, 2]"))
    assert (second.computed, second.reused) == (1, 1)


def test_changed_code_is_recomputed(tmp_path, monkeypatch):
    (tmp_path / "t.trace").write_text(TRACE)
    f = _sweep(tmp_path, "t.trace")
    _run(f)
    monkeypatch.setattr(sweep_mod, "_FINGERPRINT", "another-build")
    second, _ = _run(f)
    assert (second.computed, second.reused) == (1, 0)


@pytest.mark.parametrize("kind", ["trace", "cdf"])
def test_every_input_kind_is_in_the_key(tmp_path, kind):
    from edm.sim import input_files

    name = "w.trace" if kind == "trace" else "CDF_w.txt"
    path = tmp_path / name
    path.write_text(TRACE if kind == "trace" else "1 1 0.0\n2 1 1.0\n")
    assert input_files({"workload": str(path)}) == {"workload": str(path)}
    key = sweep_mod.point_key("edm.sim:run_point", {"workload": str(path)})
    path.write_text(path.read_text() + "\n")
    assert sweep_mod.point_key("edm.sim:run_point", {"workload": str(path)}) != key
    assert input_files({"workload": "hadoop"}) == {}


def test_a_runner_outside_the_simulator_has_its_own_code_in_the_key(tmp_path, monkeypatch):
    mod = tmp_path / "my_runner.py"
    mod.write_text("def run(config):\n    return {'y': config['x']}\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    key = sweep_mod.point_key("my_runner:run", {"x": 1})
    mod.write_text("def run(config):\n    return {'y': 2 * config['x']}\n")
    assert sweep_mod.point_key("my_runner:run", {"x": 1}) != key
    # edm.sim's runner is covered by the code fingerprint, not hashed again.
    assert sweep_mod.runner_code("edm.sim:run_point") is None
